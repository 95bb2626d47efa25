"""Variable-based calibration figures (Kelly & Smyth 2023): LOESS curves along a variable, VECE ranking."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .. import variables as _variables
from ..distributions import histogram
from ..errors import InputError
from ..panel import format_interval, format_value
from ._base import count_text, level_label, record_about, require_columns, round_list
from .theme import COLORS, PALETTE, apply_theme, with_alpha

__all__ = ["variable_curves", "vece_ranking", "level_reliability"]

_CURVE_STYLE = {  # observed quantity solid vermillion, model's own expectation dashed blue
    "actual error": (COLORS["observed"], "solid"), "observed rate": (COLORS["observed"], "solid"),
    "predicted error": (COLORS["prediction"], "dash"), "predicted rate": (COLORS["prediction"], "dash"),
}


def variable_curves(x=None, y_true=None, y_prob=None, *, kind: str = "error", span: float = 0.75,
                    degree: int = 2, grid=200, alpha: float = 0.05, scale: str = "probability",
                    sample_weight=None, curves: pd.DataFrame | None = None, ranges: pd.DataFrame | None = None,
                    show_ranges: bool = True, hist_bins: int = 40, name: str | None = None,
                    title: str | None = None, height: int | None = None) -> go.Figure:
    """LOESS curves of actual vs predicted error (or observed vs predicted rate) along a variable.

    Top: the two curves with their pointwise bands; x ranges where the
    curves differ beyond what a calibrated model shows, tested along the
    whole curve (:func:`calibviz.variables.disagreement_ranges`), are shaded
    and named in the hover. Bottom: the
    distribution of the variable (rows per histogram bin), so a reader sees
    where the curves rest on few rows.

    Curves and bands never leave [0, 1] ([0, 100]%): where the local fit
    crossed a bound they are truncated to it (the ``truncated`` column of
    :func:`calibviz.variables.variable_curves`, which says why); a dotted
    line along the bound marks those x, with a legend entry, and the hover
    of each truncated point says so.

    Parameters
    ----------
    x : array-like of shape (n,)
        The variable (a pandas Series gives the axis title its name).
    y_true : array-like of shape (n,)
        Outcomes in {0, 1} or class indices.
    y_prob : array-like of shape (n,) or (n, K)
        P(y = 1) or class probabilities.
    kind, span, degree, grid, alpha, scale, sample_weight :
        As :func:`calibviz.variables.variable_curves`.
    curves : DataFrame, optional
        Precomputed :func:`calibviz.variables.variable_curves` output (then
        pass ``x`` only for the distribution panel, or omit it).
    ranges : DataFrame, optional
        Precomputed :func:`calibviz.variables.disagreement_ranges`; default
        computed from ``curves``.
    show_ranges : bool, default True
    hist_bins : int, default 40
    name : str, optional
        Name of the variable for the axis title.
    title : str, optional
    height : int, optional

    Returns
    -------
    plotly.graph_objects.Figure

    References
    ----------
    Kelly, M. & Smyth, P. (2023). Variable-based calibration for machine
    learning classifiers, AAAI, Sec. 6.1 and Fig. 1.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x = rng.uniform(20, 80, 800); p = np.full(800, 0.8)
    >>> y = (rng.uniform(size=800) < np.where(x < 50, 0.95, 0.65)).astype(int)
    >>> fig = variable_curves(x, y, p, grid=50, name="age")
    >>> [t.name for t in fig.data if t.type == "scatter" and t.fill is None]  # the 5% error band reaches 0
    ['actual error', 'predicted error', 'Truncated at 0 (LOESS crosses the bound)']
    """
    if name is None:
        name = getattr(x, "name", None) or "x"
    if curves is None:
        if x is None or y_true is None or y_prob is None:
            raise InputError("pass x, y_true and y_prob (or curves=variable_curves(...)).")
        curves = _variables.variable_curves(x, y_true, y_prob, kind=kind, span=span, degree=degree, grid=grid,
                                            alpha=alpha, scale=scale, sample_weight=sample_weight)
    require_columns(curves, ("curve", "x", "fit", "lower", "upper"), "curves")
    if ranges is None and show_ranges:
        ranges = _variables.disagreement_ranges(curves)
    alpha = curves.attrs.get("alpha", alpha)
    level = level_label(alpha)
    with_hist = x is not None
    fig = make_subplots(rows=2 if with_hist else 1, cols=1, shared_xaxes=True,
                        row_heights=[0.75, 0.25] if with_hist else None, vertical_spacing=0.05)
    top = float(np.nanmax(curves["upper"]))
    percent = curves.attrs.get("scale", scale) == "percent"
    bound = 100.0 if percent else 1.0
    unit = "%" if percent else ""
    if show_ranges and ranges is not None and len(ranges):
        # one filled trace for all flagged ranges: hover names which curve is higher
        xs, ys, texts = [], [], []
        for _, r in ranges.iterrows():
            xs += [r["x_start"], r["x_end"], r["x_end"], r["x_start"], r["x_start"], None]
            ys += [0, 0, top * 1.05, top * 1.05, 0, None]
            texts.append(_variables.range_sentence(name, r, percent=percent))
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", fill="toself", fillcolor=with_alpha(COLORS["flag"], 0.25),
                                 line=dict(width=0), name="Flagged: beyond a calibrated model", hoveron="fills",
                                 text="<br>".join(texts), hoverinfo="text"), row=1, col=1)
    for i, (cname, g) in enumerate(curves.groupby("curve", sort=False)):
        color, dash = _CURVE_STYLE.get(cname, (PALETTE[i % len(PALETTE)], "solid"))
        gx = round_list(g["x"])
        fig.add_trace(go.Scatter(x=gx + gx[::-1], y=round_list(g["upper"]) + round_list(g["lower"])[::-1],
                                 fill="toself", fillcolor=with_alpha(color, 0.18), line=dict(width=0),
                                 mode="lines", name=f"{cname}: {level} band", showlegend=False,
                                 legendgroup=cname, hoverinfo="skip"), row=1, col=1)
        cut = g["truncated"] if "truncated" in g else pd.Series(False, index=g.index)
        hover = [f"{name} = {a:.4g}: {cname} {f:.3f} ({level} band {lo:.3f}-{hi:.3f})"
                 + (f"<br>truncated at {_bound_text(lo, hi, bound, unit)}: the local fit crosses the bound "
                    "where rows are few" if t else "")
                 for a, f, lo, hi, t in zip(g["x"], g["fit"], g["lower"], g["upper"], cut)]
        fig.add_trace(go.Scatter(x=gx, y=round_list(g["fit"]), mode="lines", name=cname, legendgroup=cname,
                                 line=dict(color=color, width=2.5, dash=dash), hovertext=hover,
                                 hovertemplate="%{hovertext}<extra></extra>"), row=1, col=1)
    if "truncated" in curves and curves["truncated"].any():
        _add_truncation_marks(fig, curves, bound, unit)
    kind = curves.attrs.get("kind", kind)
    ytitle = ("Error rate" if kind == "error" else "Probability of y = 1") + (" (%)" if percent else "")
    fig.update_yaxes(title_text=ytitle, rangemode="tozero", row=1, col=1)
    if with_hist:
        xv = np.asarray(x, dtype=np.float64)
        xv = xv[np.isfinite(xv)]
        h = histogram(xv, bins=hist_bins, sample_weight=None)
        fig.add_trace(go.Bar(x=round_list((h["lower"] + h["upper"]) / 2), y=round_list(h["count"]),
                             width=float(h["upper"].iloc[0] - h["lower"].iloc[0]),
                             marker=dict(color=with_alpha(COLORS["count"], 0.7), line=dict(color="white", width=0.5)),
                             name=f"Rows by {name}", showlegend=False,
                             hovertext=[f"{name} in [{a:.4g}, {b:.4g}): {c} rows" for a, b, c in
                                        zip(h["lower"], h["upper"], count_text(h["count"]))],
                             hovertemplate="%{hovertext}<extra></extra>"), row=2, col=1)
        fig.update_yaxes(title_text="Rows", rangemode="tozero", row=2, col=1)
        fig.update_xaxes(title_text=name, row=2, col=1)
        lo, hi = float(curves["x"].min()), float(curves["x"].max())
        pad = 0.02 * (hi - lo or 1)
        fig.update_xaxes(range=[lo - pad, hi + pad])  # the curves' grid (5%-95% quantiles) sets the view
    else:
        fig.update_xaxes(title_text=name, row=1, col=1)
    fig.update_layout(bargap=0)
    if title is None:
        title = f"Calibration along {name}: " + ("actual vs predicted error" if kind == "error"
                                                 else "observed vs predicted rate")
    record_about(fig, f"Calibration along {name}", {"variable": name, "LOESS span": curves.attrs.get("span"),
                                                     "band": level})
    return apply_theme(fig, title=title, height=height or 500)


def _bound_text(lo: float, hi: float, bound: float, unit: str) -> str:
    """Which bound(s) a truncated point touches, e.g. "0%" or "0% and 100%"."""
    hit = [f"{v:g}{unit}" for v, touches in ((0.0, lo <= 0.0), (bound, hi >= bound)) if touches]
    return " and ".join(hit) or f"0{unit}"


def _add_truncation_marks(fig, curves: pd.DataFrame, bound: float, unit: str) -> None:
    """A dotted line along 0 (and the top bound) over the x where a curve or band was truncated."""
    cut = curves[curves["truncated"]]
    for value, touches in ((0.0, cut["lower"] <= 0.0), (bound, cut["upper"] >= bound)):
        xs = np.unique(cut.loc[touches, "x"].to_numpy(float))
        if not xs.size:
            continue
        grid = np.unique(curves["x"].to_numpy(float))
        pos = np.searchsorted(grid, xs)
        # runs of consecutive grid points; a lone point gets a short segment to its neighbours' midpoints
        breaks = np.flatnonzero(np.diff(pos) > 1) + 1
        seg_x: list = []
        for run in np.split(pos, breaks):
            a, b = run[0], run[-1]
            left = (grid[a] + grid[a - 1]) / 2 if a > 0 else grid[a]
            right = (grid[b] + grid[b + 1]) / 2 if b + 1 < grid.size else grid[b]
            seg_x += [float(left), float(right), None]
        text = (f"truncated at {value:g}{unit}: the local linear smoother (LOESS) crosses the bound where "
                "rows are few; curve and band are drawn on the admissible range")
        fig.add_trace(go.Scatter(x=seg_x, y=[value if v is not None else None for v in seg_x], mode="lines",
                                 line=dict(color=COLORS["text"], width=3, dash="dot"),
                                 name=f"Truncated at {value:g}{unit} (LOESS crosses the bound)",
                                 hovertext=text, hoverinfo="text"), row=1, col=1)


def vece_ranking(features=None, y_true=None, y_prob=None, *, n_bins: int = 10, n_resamples: int = 200,
                 confidence: float = 0.95, random_state=0, sample_weight=None, ranking: pd.DataFrame | None = None,
                 top_n: int | None = 20, title: str | None = "Variables ranked by VECE",
                 height: int | None = None) -> go.Figure:
    """Horizontal bar chart of VECE per variable with bootstrap intervals, highest first.

    Parameters
    ----------
    features : DataFrame of shape (n, f)
        Candidate variables (numeric columns are ranked).
    y_true, y_prob, n_bins, n_resamples, confidence, random_state, sample_weight :
        As :func:`calibviz.variables.variable_ranking`.
    ranking : DataFrame, optional
        Precomputed :func:`calibviz.variables.variable_ranking` output.
    top_n : int or None, default 20
        Show the first ``top_n`` variables (None: all).
    title : str, optional
    height : int, optional
        Default grows with the number of bars.

    Returns
    -------
    plotly.graph_objects.Figure

    References
    ----------
    Kelly, M. & Smyth, P. (2023), Eq. 7 (VECE) and Table 1.

    Examples
    --------
    >>> import pandas as pd
    >>> r = pd.DataFrame({"feature": ["age", "bmi"], "vece": [0.12, 0.02], "vece_low": [0.09, 0.01],
    ...                   "vece_high": [0.15, 0.04], "max_vce": [0.2, 0.05], "n": [100, 100]})
    >>> fig = vece_ranking(ranking=r)
    >>> list(fig.data[0].y), list(fig.data[0].x)
    (['bmi', 'age'], [0.02, 0.12])
    """
    if ranking is None:
        if features is None or y_true is None or y_prob is None:
            raise InputError("pass features, y_true and y_prob (or ranking=variable_ranking(...)).")
        ranking = _variables.variable_ranking(features, y_true, y_prob, n_bins=n_bins, n_resamples=n_resamples,
                                              confidence=confidence, random_state=random_state,
                                              sample_weight=sample_weight)
    require_columns(ranking, ("feature", "vece", "vece_low", "vece_high"), "ranking")
    # the ranking's own order: equal VECEs by their largest local gap, as the pages' sentence names the first
    r = _variables.ranked(ranking) if "max_vce" in ranking else ranking.sort_values("vece", ascending=False,
                                                                                    kind="stable")
    if top_n is not None:
        r = r.head(int(top_n))
    r = r.iloc[::-1]  # highest at the top of a horizontal bar chart
    level = f"{100 * confidence:g}% CI"
    hover = []
    for row in r.itertuples(index=False):
        ci = format_interval(row.vece_low, row.vece_high, "probability")
        text = f"{row.feature}: VECE {format_value(row.vece, 'probability')}" + (f" ({level} {ci})" if ci else "")
        at_level = getattr(row, "level_at_max_vce", None)
        if getattr(row, "type", "numeric") == "categorical":
            text += " over its levels"
            if hasattr(row, "max_vce") and np.isfinite(row.max_vce):
                text += f"<br>largest level gap {format_value(row.max_vce, 'probability')}" + (
                    f" in level {at_level}" if at_level is not None and not pd.isna(at_level) else "")
        elif hasattr(row, "max_vce") and np.isfinite(row.max_vce):
            text += f"<br>max-VCE {format_value(row.max_vce, 'probability')}" + (
                f" at {_variables.x_words(row.x_at_max_vce)}" if hasattr(row, "x_at_max_vce") else "")
        if hasattr(row, "n"):
            text += f"<br>{int(row.n):,} rows"
        hover.append(text)
    fig = go.Figure(go.Bar(
        y=[str(f) for f in r["feature"]], x=round_list(r["vece"]), orientation="h",
        marker=dict(color=with_alpha(COLORS["prediction"], 0.75), line_width=0),
        error_x=dict(type="data", symmetric=False, array=round_list(r["vece_high"] - r["vece"]),
                     arrayminus=round_list(r["vece"] - r["vece_low"]), color=COLORS["text"], thickness=1.5, width=5),
        name="VECE with bootstrap CI", hovertext=hover, hovertemplate="%{hovertext}<extra></extra>"))
    # plain decimals: Plotly's SI default read small VECEs as "100µ ... 600µ" (a walk-through)
    fig.update_xaxes(title_text="VECE (mean |error - predicted error| over bins or levels)",  # fits 570 px
                     rangemode="tozero", tickformat="~g")
    fig.update_yaxes(title_text=None, automargin=True)
    fig.update_layout(showlegend=False)
    return apply_theme(fig, title=title, height=height or max(320, 140 + 34 * len(r)), legend="none")


def level_reliability(column=None, y_true=None, y_prob=None, *, binning=None, alpha: float = 0.05,
                      sample_weight=None, tables: dict | None = None, name: str | None = None,
                      top_n: int | None = 12, cols: int = 4, title: str | None = None,
                      height: int | None = None) -> go.Figure:
    """A reliability diagram per level of a categorical column, as small multiples.

    Panel l uses the rows of level l only (binary: observed rate against
    P(y = 1); multiclass: accuracy against confidence), with the per-bin
    intervals; its title gives the level's share of the rows and its ECE.
    Drawn by the same small-multiples builder as the per-class top-label
    diagrams (:func:`calibviz.figures.top_label_small_multiples`).

    Parameters
    ----------
    column : array-like of shape (n,)
        The categorical variable (a pandas Series gives the title its name).
    y_true, y_prob, sample_weight, binning, alpha :
        As :func:`calibviz.variables.level_tables`.
    tables : dict {level: DataFrame}, optional
        Precomputed :func:`calibviz.variables.level_tables`.
    name : str, optional
        Name of the variable for the title.
    top_n : int or None, default 12
        Panels drawn (largest levels first; None: all).
    cols : int, default 4
    title, height : optional

    Returns
    -------
    plotly.graph_objects.Figure

    References
    ----------
    Kelly, M. & Smyth, P. (2023), Sec. 2 (disaggregated evaluation over
    categorical subgroups).

    Examples
    --------
    >>> import numpy as np
    >>> g = np.array(["north"] * 60 + ["south"] * 40)
    >>> p = np.r_[np.full(60, 0.3), np.full(40, 0.7)]
    >>> y = np.r_[np.ones(18), np.zeros(42), np.ones(28), np.zeros(12)].astype(int)
    >>> fig = level_reliability(g, y, p, name="region")
    >>> [a.text.split("<br>")[0] for a in fig.layout.annotations]
    ['north', 'south']
    """
    from .multiclass import _grid

    if name is None:
        name = getattr(column, "name", None) or "variable"
    if tables is None:
        if column is None or y_true is None or y_prob is None:
            raise InputError("pass column, y_true and y_prob (or tables=level_tables(...)).")
        tables = _variables.level_tables(column, y_true, y_prob, binning=binning, alpha=alpha,
                                         sample_weight=sample_weight)
    if not tables:
        raise InputError("no level to draw.")
    order = list(tables)[:None if top_n is None else int(top_n)]
    titles = {}
    for k in order:
        a = tables[k].attrs
        titles[k] = (f"{k}<br>" + (f"{100 * a['share']:.1f}% of rows" if "share" in a else "")
                     + (f", ECE {format_value(a['ece'], 'probability')}" if np.isfinite(a.get("ece", np.nan))
                        else ""))
    if title is None:
        title = f"Reliability per level of {name}"
        if len(tables) > len(order):
            title += f" (the {len(order)} largest of {len(tables)} levels)"
    return _grid(tables, titles, order, cols, title, height, alpha)
