"""Test-based figures (Matsubara et al. 2023): TCE diagram, violins per bin, binning comparison."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..binning import PAVA, PAVABC, EqualMass, Uniform, get_scheme
from ..distributions import bin_distributions, histogram
from ..errors import InputError
from ..panel import format_value
from ..summary import reliability_table
from ._base import (FittedBins, binary_inputs, bin_label, count_text, level_label, require_columns,
                    record_about, round_list, round_list_obj, segments, table_about)
from .reliability import band_trace, reliability_hover
from .theme import AXIS, COLORS, apply_theme, with_alpha

__all__ = ["tce_diagram", "violin_per_bin", "binning_comparison", "TCE_BARS_READING", "TCE_BARS_READING_NO_RANGE",
           "VIOLIN_READING"]

#: How to read the TCE diagram's bars: a calibrated model's predictions are rejected too.
TCE_BARS_READING = ("The coloured part of each bin's bar counts the predictions the binomial test rejects there. A "
                    "calibrated model's predictions are rejected too, more so in large bins (its TCE's range is in the "
                    "sentence above): a bar is no verdict on its own bin; the TCE against that range is the test.")
#: :data:`TCE_BARS_READING` where the TCE has no calibrated-model range (an opened file's uniform or equal-mass
#: bins): the sentence above says there is none, and the caption pointed to it (a walk-through).
TCE_BARS_READING_NO_RANGE = ("The coloured part of each bin's bar counts the predictions the binomial test rejects "
                             "there. A calibrated model's predictions are rejected too, more so in large bins: a bar "
                             "is no verdict on its own bin.")
#: How to read the violins: the observed rate against the band for all bins, not a violin against the diagonal.
VIOLIN_READING = ("Each violin is the spread of a bin's predictions, drawn at the bin's observed rate. A bin is "
                  "beyond chance where its observed rate (the marker) lies outside the green band, which all bins "
                  "of a calibrated model stay in together with probability 1 - α; a narrow violin off the diagonal "
                  "but inside the band is within chance.")


def _single(y_true, y_prob, sample_weight, table, what):
    models = binary_inputs(y_true, y_prob, sample_weight, table)
    if len(models) != 1:
        raise InputError(f"{what} draws one model; call it once per model (got {len(models)}).")
    return models[0]


def _table_and_distributions(m, binning, alpha, test, interval, grid_size, max_points):
    """Fit the scheme once; the table and the violins share the bins."""
    bins = get_scheme(binning).fit(m.p, m.y, m.w)
    table = reliability_table(m.y, m.p, binning=FittedBins(bins), alpha=alpha, interval=interval,
                              sample_weight=m.w, test=test)
    table.attrs["scheme"] = bins.scheme
    dists = bin_distributions(m.p, bins.index, sample_weight=m.w, grid_size=grid_size, max_points=max_points)
    return table, dists


def _violin_paths(densities: pd.DataFrame, center: dict, halfwidth: dict, base: dict | None = None):
    """One None-separated polygon per bin.

    Vertical (``base`` None): x = center +- scaled density, y = value.
    Horizontal (``base`` = {bin: y}): x = value, y = base +- scaled density.
    Each violin is scaled to its own maximum density (as matplotlib's
    violinplot); a point mass is drawn as a line across the full width.
    """
    xs, ys = [], []
    for b, g in densities.groupby("bin", sort=True):
        v = g["value"].to_numpy()
        d = g["density"].to_numpy()
        hw = halfwidth[b]
        if not np.isfinite(d).all():  # point mass
            a, s = np.array([v[0], v[0]]), np.array([-hw, hw])
            along, across = a, s
        else:
            s = d / d.max() * hw
            along = np.r_[v, v[::-1], v[0]]
            across = np.r_[s, -s[::-1], s[0]]
        if base is None:
            xs.append(center[b] + across); ys.append(along)
        else:
            xs.append(along); ys.append(base[b] + across)
        xs.append([None]); ys.append([None])
    return _join(xs), _join(ys)


def _join(parts) -> list:
    out = []
    for p in parts:
        out.extend(None if v is None else round(float(v), 6) for v in p)
    return out[:-1] if out and out[-1] is None else out


def _tce_percent(table: pd.DataFrame) -> float:
    """TCE of the whole table: the weighted share of rejected predictions, in percent."""
    return float(100 * (table["rejected_rate"] * table["weight"]).sum() / table["weight"].sum())


def tce_diagram(y_true=None, y_prob=None, *, binning=PAVABC(), alpha: float = 0.05, test: str = "binomial",
                sample_weight=None, table: pd.DataFrame | None = None, distributions=None,
                x_axis: str = "bin", ymax: float | None = None, hist_bins: int = 30, grid_size: int = 64,
                max_points: int = 2000, title: str | None = None, height: int | None = None) -> go.Figure:
    """Test-based reliability diagram (TCE paper, Fig. 1 left).

    Main panel: per bin a violin of the bin's predictions and a red segment
    at the bin's empirical probability (observed rate). Bottom: grey bars of
    bin size and red bars of predictions rejected by the test (their ratio is
    the bin's TCE). Right: histogram of all predictions.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Outcomes in {0, 1} (or a binary ``cv.Predictions``).
    y_prob : array-like of shape (n,)
        Predicted P(y = 1).
    binning : Scheme, str or edges, default PAVABC()
        As :func:`calibviz.metrics.tce`.
    alpha : float, default 0.05
        Significance level of the per-prediction test.
    test : {"binomial", "ttest"}, default "binomial"
    sample_weight : array-like of shape (n,), optional
    table : DataFrame, optional
        Precomputed :func:`calibviz.summary.reliability_table` with TCE
        columns; pass ``distributions`` too to draw violins (without them the
        bins show their mean prediction only).
    distributions : BinDistributions, optional
        :func:`calibviz.distributions.bin_distributions` of the same bins.
    x_axis : {"bin", "probability"}, default "bin"
        "bin": bins at equally spaced positions labelled by bin ID (as the
        paper; the table's 0-based ``bin``, so that the diagram, the per-bin
        table and its CSV name a bin alike); "probability": each bin over its
        own extent on [0, 1].
    ymax : float, optional
        Upper limit of the probability axis; default the paper's rule
        (1 if the largest value is >= 0.7, else 1.25 times it), taking the
        largest prediction into account so that no violin is cut.
    hist_bins : int, default 30
    grid_size, max_points : int
        Violin resolution and subsample size (see
        :func:`calibviz.distributions.bin_distributions`); the figure's size
        does not grow with n.
    title : str, optional
        Default "Test-based reliability diagram (TCE = x.x%)".
    height : int, optional

    Returns
    -------
    plotly.graph_objects.Figure

    References
    ----------
    Matsubara, Tax, Mudd & Guy (2023), "TCE: A test-based approach to
    measuring calibration error", UAI, Fig. 1 and Sec. 5.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> p = rng.beta(2, 5, 4000); y = (rng.uniform(size=4000) < p).astype(int)
    >>> fig = tce_diagram(y, p)
    >>> [t.name for t in fig.data][:2]
    ['Predictions in the bin (density)', 'Empirical probability (observed rate)']
    """
    if x_axis not in ("bin", "probability"):
        raise InputError(f"x_axis must be 'bin' or 'probability', got {x_axis!r}.")
    m = _single(y_true, y_prob, sample_weight, table, "tce_diagram")
    if m.scan is not None:  # a scan: the table from its bucket sums, no per-row violins
        table = m.reliability_table(binning=binning, alpha=alpha, test=test)
    elif m.table is None:
        table, distributions = _table_and_distributions(m, binning, alpha, test, "wilson", grid_size, max_points)
    else:
        table = m.table
    require_columns(table, ("bin", "lower", "upper", "n", "weight", "mean_pred", "obs_rate", "rejected",
                            "rejected_rate"), "the table (build it with reliability_table(..., test='binomial'))")
    ids = table["bin"].to_numpy()
    k = np.arange(1, len(table) + 1, dtype=float)
    if x_axis == "bin":
        center = dict(zip(ids, k)); halfwidth = dict.fromkeys(ids, 0.4)
        bar_x, bar_w, xrange = k, np.full(len(table), 0.8), [0.4, len(table) + 0.6]
    else:
        lo, up = table["lower"].to_numpy(float), table["upper"].to_numpy(float)
        center = dict(zip(ids, (lo + up) / 2)); halfwidth = dict(zip(ids, 0.4 * (up - lo)))
        bar_x, bar_w, xrange = (lo + up) / 2, 0.9 * (up - lo), [0, 1]
    top = float(np.nanmax(np.r_[table["obs_rate"], table["mean_pred"]]))
    if distributions is not None:
        top = max(top, float(distributions.summary["max"].max()))
    if ymax is None:
        ymax = 1.0 if top >= 0.7 else min(1.0, 1.25 * top)
    level = level_label(table.attrs.get("alpha", alpha))
    tce_value = _tce_percent(table)

    fig = make_subplots(rows=2, cols=2, specs=[[{}, {}], [{}, None]], shared_xaxes="columns",
                        shared_yaxes="rows", row_heights=[0.76, 0.24], column_widths=[0.8, 0.2],
                        horizontal_spacing=0.025, vertical_spacing=0.05)
    blue = COLORS["prediction"]
    if distributions is not None:
        vx, vy = _violin_paths(distributions.densities, center, halfwidth)
        fig.add_trace(go.Scatter(x=vx, y=vy, mode="lines", fill="toself", fillcolor=with_alpha(blue, 0.35),
                                 line=dict(color=blue, width=1), name="Predictions in the bin (density)",
                                 hoverinfo="skip"), row=1, col=1)
    sx, sy = segments([center[b] - halfwidth[b] for b in ids], [center[b] + halfwidth[b] for b in ids],
                      table["obs_rate"], table["obs_rate"])
    fig.add_trace(go.Scatter(x=round_list_obj(sx), y=round_list_obj(sy), mode="lines", line=dict(color=COLORS["observed"], width=3),
                             name="Empirical probability (observed rate)", hoverinfo="skip"), row=1, col=1)
    # hover anchors: one marker per bin at its mean prediction, with every number of the bin
    last = np.zeros(len(table), bool); last[-1:] = table["upper"].iloc[-1:] >= 1.0
    labels = bin_label(table["lower"], table["upper"], last)
    summ = None
    if distributions is not None:
        summ = distributions.summary.set_index("bin").reindex(ids)
    hover = []
    for i, r in enumerate(table.itertuples(index=False)):
        text = (f"bin {int(r.bin)} {labels[i]}: {r.n:,} predictions, mean {r.mean_pred:.3f}"
                + (f", range {summ['min'].iloc[i]:.3f}-{summ['max'].iloc[i]:.3f}" if summ is not None else "")
                + f"<br>empirical probability {r.positives:,}/{r.n:,} = {r.obs_rate:.3f}"
                + f"<br>rejected (binomial test, alpha = {table.attrs.get('alpha', alpha):g}): {r.rejected:,}"
                + f" = TCE of the bin {format_value(100 * r.rejected_rate, 'percent')}")
        hover.append(text)
    fig.add_trace(go.Scatter(x=[center[b] for b in ids], y=round_list(table["mean_pred"]), mode="markers",
                             marker=dict(symbol="line-ew", size=14, color=COLORS["text"], line=dict(width=2, color=COLORS["text"])),
                             name="Mean prediction of the bin", hovertext=hover,
                             hovertemplate="%{hovertext}<extra></extra>"), row=1, col=1)
    fig.add_trace(go.Bar(x=round_list(bar_x), width=round_list(bar_w), y=table["n"].tolist(),
                         marker=dict(color=with_alpha(COLORS["count"], 0.6), line_width=0), name="Predictions in bin",
                         hovertext=hover, hovertemplate="%{hovertext}<extra></extra>", showlegend=False), row=2, col=1)
    fig.add_trace(go.Bar(x=round_list(bar_x), width=round_list(bar_w), y=table["rejected"].tolist(),
                         marker=dict(color=with_alpha(COLORS["observed"], 0.7), line_width=0),
                         name=f"Rejected predictions (binomial test, {level} level)",
                         hovertext=hover, hovertemplate="%{hovertext}<extra></extra>"), row=2, col=1)
    if m.p is not None:
        h = histogram(m.p, bins=hist_bins, range=(0, ymax), sample_weight=m.w)
        fig.add_trace(go.Bar(y=round_list((h["lower"] + h["upper"]) / 2), x=round_list(h["count"]), orientation="h",
                             width=float(h["upper"].iloc[0] - h["lower"].iloc[0]),
                             marker=dict(color=with_alpha(blue, 0.55), line_width=0),
                             name="All predictions (side histogram)", showlegend=True,
                             hovertext=[f"predictions in [{a:.3f}, {b:.3f}): {c}" for a, b, c in
                                        zip(h["lower"], h["upper"], count_text(h["count"]))],
                             hovertemplate="%{hovertext}<extra></extra>"), row=1, col=2)
        fig.update_xaxes(title_text="Rows", rangemode="tozero", nticks=3, tickformat="~s", row=1, col=2)
        fig.update_yaxes(showticklabels=False, row=1, col=2)
    fig.update_layout(barmode="overlay", bargap=0)
    # not "P(y = 1 | x)": a view of multiclass data (confidence, top-label) plots its own probability here; the
    # axis holds the predictions (violins, bin means) and the observed rates alike (a browser check read
    # "Predicted probability" beside the legend's "Empirical probability" as a contradiction)
    fig.update_yaxes(range=[0, ymax], title_text="Probability (predicted and observed)", row=1, col=1)
    fig.update_xaxes(range=xrange, row=1, col=1)
    if x_axis == "bin":
        step = max(1, int(np.ceil(len(table) / 25)))  # at most ~25 tick labels: never overlapping
        fig.update_xaxes(tickmode="array", tickvals=k[::step].tolist(),
                         ticktext=[str(int(b)) for b in ids[::step]], title_text=AXIS["bin_id"], row=2, col=1)
    else:
        fig.update_xaxes(title_text=AXIS["pred"] + " (bins)", row=2, col=1)
    fig.update_yaxes(title_text="Count", rangemode="tozero", nticks=4, tickformat="~s", row=2, col=1)
    if title is None:
        binning = table_about(table, interval=False).get("binning", f"{len(table)} bins")
        title = f"Test-based reliability diagram (TCE = {format_value(tce_value, 'percent')}, {binning})"
    record_about(fig, "Test-based reliability diagram",
                 {"TCE": format_value(tce_value, "percent"), **table_about(table, interval=False, alpha=True),
                  "test": "exact binomial, two-sided"})
    return apply_theme(fig, title=title, height=height or 540)




def violin_per_bin(y_true=None, y_prob=None, *, binning=Uniform(10), alpha: float = 0.05,
                   interval: str = "wilson", sample_weight=None, table: pd.DataFrame | None = None,
                   distributions=None, show_ci: bool = True, violin_height: float = 0.035,
                   grid_size: int = 64, max_points: int = 2000, title: str | None = "Predictions per bin",
                   height: int | None = None) -> go.Figure:
    """Violin-per-bin plot on the probability axis.

    Each bin's predictions are drawn as a horizontal violin along the
    predicted-probability axis, placed at the height of the bin's observed
    rate; a marker at (mean prediction, observed rate) carries the interval
    of the observed rate, and the green band is the range all bins of a
    calibrated model stay in together (the table's ``band_low``,
    ``band_high``). A violin wholly off the diagonal is not evidence on its
    own: on calibrated logs of 2,000-20,000 rows some PAVA-BC bin's violin
    missed the diagonal on 89-99% of them (narrow bins, noisy rates); a
    marker outside the band is (:data:`VIOLIN_READING`).

    Parameters
    ----------
    y_true, y_prob : array-like of shape (n,)
        Outcomes in {0, 1} and predicted P(y = 1) (or a binary ``cv.Predictions``).
    binning : Scheme, str or edges, default Uniform(10)
    alpha : float, default 0.05
    interval : {"wilson", "beta", "jeffreys"}
    sample_weight : array-like of shape (n,), optional
    table, distributions : optional
        Precomputed :func:`calibviz.summary.reliability_table` and
        :func:`calibviz.distributions.bin_distributions` of the same bins.
    show_ci : bool, default True
    violin_height : float, default 0.035
        Half-height of the widest point of each violin (y units).
    grid_size, max_points : int
        See :func:`calibviz.distributions.bin_distributions`.
    title : str, optional
    height : int, optional

    Returns
    -------
    plotly.graph_objects.Figure

    References
    ----------
    Matsubara et al. (2023), Fig. 1 (violins of the predictions per bin);
    Brocker & Smith (2007) (observed rate with its uncertainty).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> p = rng.uniform(size=2000); y = (rng.uniform(size=2000) < p).astype(int)
    >>> fig = violin_per_bin(y, p)
    >>> fig.data[1].name, fig.data[2].fill
    ('Calibrated band (95%)', 'toself')
    """
    m = _single(y_true, y_prob, sample_weight, table, "violin_per_bin")
    if m.table is None:
        table, distributions = _table_and_distributions(m, binning, alpha, None, interval, grid_size, max_points)
    else:
        table = m.table
        if distributions is None:
            raise InputError("violin_per_bin needs distributions=bin_distributions(...) with a precomputed table.")
    require_columns(table, ("bin", "lower", "upper", "n", "weight", "positives", "mean_pred", "obs_rate",
                            "ci_low", "ci_high"), "the reliability table")
    ids = table["bin"].to_numpy()
    base = dict(zip(ids, table["obs_rate"].to_numpy(float)))
    vx, vy = _violin_paths(distributions.densities, {}, dict.fromkeys(ids, violin_height), base=base)
    level = level_label(table.attrs.get("alpha", alpha))
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="Perfect calibration",
                             line=dict(color=COLORS["diagonal"], dash="dash", width=1.5), hoverinfo="skip"))
    if "band_low" in table.columns:
        fig.add_trace(band_trace(table, f"Calibrated band ({level})"))
    blue = COLORS["prediction"]
    fig.add_trace(go.Scatter(x=vx, y=vy, mode="lines", fill="toself", fillcolor=with_alpha(blue, 0.35),
                             line=dict(color=blue, width=1), name="Predictions in the bin (density)",
                             hoverinfo="skip"))
    edges = np.unique(np.r_[table["lower"], table["upper"]])
    ex, ey = segments(edges, edges, np.zeros_like(edges), np.ones_like(edges))
    fig.add_trace(go.Scatter(x=round_list_obj(ex), y=round_list_obj(ey), mode="lines", name="Bin edges",
                             line=dict(color="#BBBBBB", width=1, dash="dot"), hoverinfo="skip"))
    err = None
    if show_ci:
        err = dict(type="data", symmetric=False, array=round_list(table["ci_high"] - table["obs_rate"]),
                   arrayminus=round_list(table["obs_rate"] - table["ci_low"]), color=COLORS["observed"],
                   thickness=1.5, width=5)
    fig.add_trace(go.Scatter(x=round_list(table["mean_pred"]), y=round_list(table["obs_rate"]), mode="markers",
                             marker=dict(color=COLORS["observed"], size=9, line=dict(color="white", width=1)),
                             error_y=err, name=f"Observed rate at the mean prediction ({level} CI)",
                             hovertext=reliability_hover(table), hovertemplate="%{hovertext}<extra></extra>"))
    fig.update_xaxes(range=[-0.01, 1.01], title_text=AXIS["pred"])
    fig.update_yaxes(range=[-0.03, 1.03], title_text=AXIS["observed"])
    return apply_theme(fig, title=title, height=height or 600)


_DEFAULT_SCHEMES = {"PAVA": PAVA(), "PAVA-BC": PAVABC(), "10-quantile": EqualMass(10)}


def _data_range(tables: dict) -> list:
    """[0, 1], or the part of it the bins' inner edges and mean predictions occupy (padded by a tenth) when that
    is less than half of it: the first and last bins reach 0 and 1 by definition, so rare events (predictions
    below 0.05) drew one bar across the figure with the real bins squashed against 0."""
    inner = [np.r_[t["lower"].to_numpy(float)[1:], t["mean_pred"].to_numpy(float)] for t in tables.values()]
    values = np.concatenate(inner) if inner else np.zeros(0)
    values = values[np.isfinite(values)]
    if not values.size:
        return [0.0, 1.0]
    lo, hi = float(values.min()), float(values.max())
    if hi - lo >= 0.5:
        return [0.0, 1.0]
    pad = max(0.1 * (hi - lo), 1e-3)
    return [max(0.0, lo - pad), min(1.0, hi + pad)]


def binning_comparison(y_true=None, y_prob=None, *, schemes: dict | None = None, sample_weight=None,
                       tables: dict | None = None, xlim=None, title: str | None = "Bins of three schemes",
                       height: int | None = None) -> go.Figure:
    """Bin sizes and empirical probabilities of several binning schemes (TCE paper, Figs. 2-4).

    One row per scheme. Left: the size of each bin as a bar spanning the
    bin on the probability axis. Right: the empirical probability of each
    bin as a step function. Bin edges are marked by dashed lines.

    Parameters
    ----------
    y_true, y_prob : array-like of shape (n,)
        Outcomes in {0, 1} and predicted P(y = 1).
    schemes : dict {label: Scheme or name}, optional
        Default ``{"PAVA": PAVA(), "PAVA-BC": PAVABC(), "10-quantile": EqualMass(10)}``.
    sample_weight : array-like of shape (n,), optional
    tables : dict {label: reliability table}, optional
        Precomputed tables instead of predictions.
    xlim : (float, float), optional
        Probability range shown (e.g. (0, 0.1) as the paper's Fig. 4); by
        default [0, 1], or the range the bins' inner edges and mean
        predictions occupy when that is under half of it (rare events).
    title : str, optional
    height : int, optional
        Default 220 px per scheme plus margins.

    Returns
    -------
    plotly.graph_objects.Figure

    References
    ----------
    Matsubara et al. (2023), "TCE", UAI, Figs. 2-4 (PAVA, PAVA-BC, quantile bins).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(2)
    >>> p = rng.beta(2, 5, 3000); y = (rng.uniform(size=3000) < p).astype(int)
    >>> fig = binning_comparison(y, p)
    >>> len(fig.layout.annotations)   # one title per panel
    6
    """
    if tables is None:
        m = _single(y_true, y_prob, sample_weight, None, "binning_comparison")
        schemes = _DEFAULT_SCHEMES if schemes is None else schemes
        tables = {name: reliability_table(m.y, m.p, binning=s, sample_weight=m.w, test=None)
                  for name, s in schemes.items()}
    elif y_true is not None or y_prob is not None:
        raise InputError("pass either predictions (y_true, y_prob) or tables=..., not both.")
    if not tables:
        raise InputError("no schemes to compare; pass at least one scheme or table.")
    names = list(tables)
    titles = []
    for name in names:  # short: two panels share a 570 px figure at 1024 px (longer titles overlapped there)
        titles += [f"{name}: rows ({len(tables[name])} bins)", f"{name}: observed rate"]
    fig = make_subplots(rows=len(names), cols=2, shared_xaxes=True, subplot_titles=titles,
                        horizontal_spacing=0.12, vertical_spacing=0.12 if len(names) <= 3 else 0.06)
    for r, name in enumerate(names, start=1):
        t = tables[name]
        require_columns(t, ("lower", "upper", "n", "weight", "obs_rate"), f"table {name!r}")
        lo, up = t["lower"].to_numpy(float), t["upper"].to_numpy(float)
        last = np.zeros(len(t), bool); last[-1:] = up[-1:] >= 1.0
        labels = bin_label(lo, up, last)
        hover = [f"bin {lab}: {c} rows, observed rate {o:.3f}" for lab, c, o in
                 zip(labels, count_text(t["weight"]), t["obs_rate"])]
        fig.add_trace(go.Bar(x=round_list(lo), width=round_list(up - lo), offset=0, y=round_list(t["weight"]),
                             marker=dict(color="#555555", line_width=0), name="Rows per bin", showlegend=r == 1,
                             legendgroup="size", hovertext=hover, hovertemplate="%{hovertext}<extra></extra>"),
                      row=r, col=1)
        rate = t["obs_rate"].to_numpy(float)
        fig.add_trace(go.Scatter(x=round_list(np.r_[lo, up[-1]]), y=round_list(np.r_[rate, rate[-1]]),
                                 mode="lines", line=dict(color=COLORS["observed"], width=2.5, shape="hv"),
                                 name="Empirical probability", showlegend=r == 1, legendgroup="rate",
                                 hoverinfo="skip"), row=r, col=2)
        fig.add_trace(go.Scatter(x=round_list((lo + up) / 2), y=round_list(rate), mode="markers",
                                 marker=dict(size=6, color=COLORS["observed"], opacity=0), showlegend=False,
                                 hovertext=hover, hovertemplate="%{hovertext}<extra></extra>"), row=r, col=2)
        # the edges under the bars, whose neighbours touch (bargap 0); the rates' steps show their own edges, and
        # PAVA's 40-odd dotted lines across both panels read as clutter (a browser review)
        edges = np.unique(np.r_[lo, up])
        ex, ey = segments(edges, edges, np.zeros_like(edges), np.full_like(edges, float(t["weight"].max()) * 1.05))
        fig.add_trace(go.Scatter(x=round_list_obj(ex), y=round_list_obj(ey), mode="lines",
                                 line=dict(color="#999999", width=0.6, dash="dot"), name="Bin edge",
                                 showlegend=r == 1, legendgroup="edge", hoverinfo="skip"), row=r, col=1)
        fig.update_yaxes(title_text="Rows", rangemode="tozero", row=r, col=1)
        fig.update_yaxes(title_text="Obs. rate", rangemode="tozero", row=r, col=2)
    fig.update_layout(bargap=0)
    fig.update_xaxes(range=list(xlim) if xlim is not None else _data_range(tables))
    fig.update_xaxes(title_text="Predicted probability", row=len(names))
    return apply_theme(fig, title=title, height=height or 140 + 180 * len(names))  # 3 schemes: 680 px
