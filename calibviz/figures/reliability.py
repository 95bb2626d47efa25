"""The standard reliability diagram (mean prediction vs observed rate per bin)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..binning import Uniform
from ..distributions import histogram
from ._base import (binary_inputs, bin_label, count_text, histogram_outline, level_label, rectangles, require_columns,
                    record_about, round_list, round_list_obj, segments, table_about)
from .theme import AXIS, COLORS, apply_theme, model_color, with_alpha

__all__ = ["reliability_diagram", "reliability_hover", "BAND_READING"]

#: How to read the diagram's band (pages and report): it holds for all bins at once, so a point outside is evidence.
BAND_READING = ("The green band is the range of rates that all bins of a calibrated model stay in together with "
                "probability 1 - α: a point outside it is evidence of miscalibration at level α; a point inside "
                "but off the diagonal is within chance. Error bars are each bin's own interval.")

_TABLE_COLUMNS = ("lower", "upper", "n", "weight", "positives", "mean_pred", "obs_rate", "ci_low", "ci_high")


def reliability_hover(table: pd.DataFrame) -> list[str]:
    """Hover text of each bin: the numbers behind the mark.

    Parameters
    ----------
    table : DataFrame
        A :func:`calibviz.summary.reliability_table`.

    Returns
    -------
    list of str, one per row.

    Examples
    --------
    >>> t = pd.DataFrame({"lower": [0.4], "upper": [0.5], "n": [200], "weight": [200.0],
    ...                   "positives": [48], "mean_pred": [0.452], "obs_rate": [0.24],
    ...                   "ci_low": [0.184], "ci_high": [0.305]})
    >>> reliability_hover(t)[0]
    'bin [0.40, 0.50): observed 48/200 = 0.240<br>mean prediction 0.452, 95% CI 0.184-0.305'
    """
    level = level_label(table.attrs.get("alpha", 0.05))
    last = np.zeros(len(table), bool)
    if len(table):
        last[-1] = table["upper"].iloc[-1] >= table.attrs.get("upper_limit", 1.0)
    labels = bin_label(table["lower"], table["upper"], last)
    weighted = not np.allclose(table["weight"], table["n"])
    out = []
    for lab, r in zip(labels, table.itertuples(index=False)):
        if weighted:
            obs = f"observed rate {r.obs_rate:.3f} (weighted; {r.positives:,}/{r.n:,} rows positive)"
        else:
            obs = f"observed {r.positives:,}/{r.n:,} = {r.obs_rate:.3f}"
        # one fact per line: a single line ran past both edges of a half-width diagram's hover box
        text = f"bin {lab}: {obs}<br>mean prediction {r.mean_pred:.3f}, {level} CI {r.ci_low:.3f}-{r.ci_high:.3f}"
        if "band_low" in table.columns:
            text += (f"<br>a calibrated model: {r.band_low:.3f}-{r.band_high:.3f} (all bins at once, {level})"
                     f"<br>this bin alone: {r.accept_low:.3f}-{r.accept_high:.3f}")
        out.append(text)
    return out


def band_trace(table: pd.DataFrame, name: str, color: str = COLORS["band"], **trace) -> go.Scatter:
    """The all-bins band of a reliability table (``band_low``, ``band_high``) as one filled trace of rectangles
    over the bins' extents; ``trace``: further Scatter options (legend group, hover)."""
    bx, by = rectangles(table["lower"], table["upper"], table["band_low"], table["band_high"])
    trace = {"hoveron": "fills", "hoverinfo": "name", **trace}
    return go.Scatter(x=bx, y=by, mode="lines", fill="toself", line=dict(width=0.5, color=with_alpha(color, 0.6)),
                      fillcolor=with_alpha(color, 0.18), name=name, **trace)


def reliability_diagram(y_true=None, y_prob=None, *, binning=Uniform(15), alpha: float = 0.05,
                        interval: str = "wilson", sample_weight=None, table=None,
                        show_ci: bool = True, show_band: bool = False, show_gaps: bool = False,
                        show_counts: bool = True, show_histogram: bool = True, hist_bins: int = 30,
                        band_alpha: float | None = None,
                        outcome_labels: tuple[str, str] = ("y = 0", "y = 1"),
                        title: str | None = "Reliability diagram", height: int | None = None) -> go.Figure:
    """Standard reliability diagram: (mean prediction, observed rate) per bin, one or several models.

    Parameters
    ----------
    y_true : array-like of shape (n,), cv.Scan, or dict
        Outcomes in {0, 1}; a :func:`calibviz.scan` of a large source (drawn
        from its bucket sums, no histogram); or ``{name: (y_true, y_prob[, sample_weight])}``,
        ``{name: cv.Predictions}`` (binary), ``{name: cv.Scan}`` or ``{name: reliability table}``
        to overlay several models.
    y_prob : array-like of shape (n,), optional
        Predicted P(y = 1) (omit with a dict or ``table``).
    binning : Scheme, str or edges, default Uniform(15)
        As :func:`calibviz.metrics.ece`.
    alpha : float, default 0.05
        Level of the observed-rate interval and the acceptance band.
    interval : {"wilson", "beta", "jeffreys"}
        Interval for the observed rate.
    sample_weight : array-like of shape (n,), optional
    table : DataFrame or dict of DataFrames, optional
        Precomputed :func:`calibviz.summary.reliability_table` (instead of
        predictions); no prediction histogram is drawn then.
    show_ci : bool, default True
        Error bars: the (1 - alpha) confidence interval of the observed rate.
    show_band : bool, default False
        The binomial acceptance band: per bin, the range of observed rates a
        *calibrated* model would show at this bin's mean prediction and size
        (drawn around the diagonal over the bin's extent), wide enough that
        all bins of a calibrated model stay inside together with probability
        1 - alpha (the table's ``band_low``, ``band_high``): a point outside
        it is read right at first sight. Each bin's band on its own (TCE's
        test, ``accept_low``, ``accept_high``) is left by some bin of a
        calibrated model far more often (27-45% of calibrated logs with 10-15
        bins), so the hover shows it as "this bin alone".
    band_alpha : float, optional
        Level of the band (default ``alpha``): several diagrams read
        together pass ``alpha / diagrams`` (the Compare page's side by
        side), as :func:`calibviz.summary.reliability_table`.
    show_gaps : bool, default False
        Bars from the diagonal to the observed rate (the gap of each bin).
    show_counts : bool, default True
        Panel below with the rows per bin: one needle per bin at the bin's
        mean prediction (right under its point), on alternately shaded bin
        extents. Bars spanning whole bins would merge into one grey block
        with equal-mass bins (equal heights, no gaps); needles keep every
        bin's count readable with any scheme, line up with the points above
        and leave the bin widths visible in the shading.
    show_histogram : bool, default True
        Panel at the side with the histogram of predictions (split by
        outcome for one model).
    hist_bins : int, default 30
    outcome_labels : (str, str), default ("y = 0", "y = 1")
        What the outcomes 0 and 1 of the binary view mean, in the side
        histogram's legend: ``("wrong", "correct")`` for a confidence or
        top-label view (see :func:`calibviz.figures.outcome_labels`).
    title : str, optional
    height : int, optional

    Returns
    -------
    plotly.graph_objects.Figure

    References
    ----------
    DeGroot & Fienberg (1983), "The comparison and evaluation of forecasters"
    (reliability diagram); Niculescu-Mizil & Caruana (2005); Brocker & Smith
    (2007), "Increasing the reliability of reliability diagrams" (consistency
    band); Matsubara et al. (2023), Fig. 1 right (count panel and histogram).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=1000); y = (rng.uniform(size=1000) < p).astype(int)
    >>> fig = reliability_diagram(y, p, binning=Uniform(10), show_band=True)
    >>> [t.name for t in fig.data][:3]
    ['Perfect calibration', 'Calibrated band (95%)', 'Observed rate (95% CI)']
    """
    models = binary_inputs(y_true, y_prob, sample_weight, table)
    for m in models:
        if m.table is None:
            m.table = m.reliability_table(binning=binning, alpha=alpha, interval=interval, test=None,
                                          band_alpha=band_alpha)
        require_columns(m.table, _TABLE_COLUMNS, f"reliability table of {m.name!r}")
    with_hist = show_histogram and any(m.p is not None for m in models)
    rows = 2 if show_counts else 1
    cols = 2 if with_hist else 1
    specs = [[{}] * cols for _ in range(rows)]
    if rows == 2 and cols == 2:
        specs[1][1] = None
    fig = make_subplots(rows=rows, cols=cols, specs=specs, shared_xaxes="columns", shared_yaxes="rows",
                        row_heights=[0.75, 0.25] if rows == 2 else None,
                        column_widths=[0.84, 0.16] if cols == 2 else None,
                        horizontal_spacing=0.02, vertical_spacing=0.045)
    single = len(models) == 1
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="Perfect calibration",
                             line=dict(color=COLORS["diagonal"], dash="dash", width=1.5), hoverinfo="skip"),
                  row=1, col=1)
    for i, m in enumerate(models):
        t = m.table
        color = model_color(i)
        level = level_label(t.attrs.get("alpha", alpha))
        hover = reliability_hover(t)
        if show_band:
            require_columns(t, ("band_low", "band_high"), f"reliability table of {m.name!r}")
            fig.add_trace(band_trace(t, f"Calibrated band ({level})" if single else
                                     f"{m.name}: calibrated range", COLORS["band"] if single else color,
                                     legendgroup=m.name), row=1, col=1)
        if show_gaps:
            width = np.asarray(t["upper"] - t["lower"], float) * 0.8
            fig.add_trace(go.Bar(
                x=round_list(t["mean_pred"]), y=round_list(t["obs_rate"] - t["mean_pred"]),
                base=round_list(t["mean_pred"]), width=round_list(width),
                marker=dict(color=with_alpha(COLORS["observed"] if single else color, 0.35), line_width=0),
                name="Gap (observed - predicted)" + ("" if single else f": {m.name}"), hoverinfo="skip",
                legendgroup=m.name), row=1, col=1)
        err = None
        if show_ci:
            err = dict(type="data", symmetric=False, array=round_list(t["ci_high"] - t["obs_rate"]),
                       arrayminus=round_list(t["obs_rate"] - t["ci_low"]), color=color, thickness=1.5, width=4)
        name = m.name if not single else (m.name if m.name != "model" else "Observed rate")
        if show_ci and single:
            name += f" ({level} CI)"
        fig.add_trace(go.Scatter(
            x=round_list(t["mean_pred"]), y=round_list(t["obs_rate"]), mode="lines+markers", name=name,
            line=dict(color=color, width=2), marker=dict(color=color, size=9, symbol="circle",
                                                          line=dict(color="white", width=1)),
            error_y=err, hovertext=hover, hovertemplate="%{hovertext}<extra>" + m.name + "</extra>",
            legendgroup=m.name), row=1, col=1)
        if show_counts:
            _count_needles(fig, t, hover, COLORS["count"] if single else color, m.name, single)
        if with_hist and m.p is not None:
            _side_histogram(fig, m, hist_bins, color, single, outcome_labels)
    fig.update_layout(barmode="overlay", bargap=0)
    fig.update_xaxes(range=[-0.01, 1.01], row=1, col=1)
    fig.update_yaxes(range=[-0.02, 1.02], title_text=AXIS["observed"], row=1, col=1)
    fig.update_xaxes(title_text=AXIS["mean_pred"] if rows == 1 else None, row=1, col=1)
    if show_counts:
        # the shading's key inside the panel: in the axis title ("... (shading: bins)") a third-width column cut it
        fig.update_xaxes(title_text=AXIS["mean_pred"], range=[-0.01, 1.01], row=2, col=1)
        if single:  # the shading is drawn for one model only (several models' bins differ): no key without it
            fig.add_annotation(text="shaded: bins", xref="x domain", yref="y domain", x=1.0, y=1.0,
                               xanchor="right", yanchor="bottom", showarrow=False, font=dict(size=10, color="#666666"),
                               row=2, col=1)
        fig.update_yaxes(title_text="Rows", rangemode="tozero", nticks=4, tickformat="~s", row=2, col=1)
    if with_hist:
        # the side panel's y is the *predicted* probability (shared scale with the main panel); the legend says
        # which colour is which outcome, so the axis title stays one short word that fits the narrow panel
        fig.update_xaxes(title_text="Rows", rangemode="tozero", nticks=3, tickformat="~s", row=1, col=2)
        # its own axis title on its right: beside "Observed frequency" alone, the histogram read as one of observed
        # rates (a walk-through)
        fig.update_yaxes(showticklabels=False, side="right", title_text="Predicted probability",
                         title_font=dict(size=12), title_standoff=4, row=1, col=2)
    about = table_about(models[0].table, interval=show_ci, alpha=show_band)
    if not single:
        about = {"models": ", ".join(m.name for m in models), **about}
    record_about(fig, "Reliability diagram" if single else "Reliability diagrams overlaid", about)
    return apply_theme(fig, title=title, height=height or (500 if show_counts else 440))


def _count_needles(fig, t, hover, color, name, single):
    """Rows per bin as needles at the bins' mean predictions, over alternately shaded bin extents."""
    if single and len(t):
        # every other bin shaded: the bins' extents (narrow where predictions are dense, for equal-mass bins)
        alt = t.iloc[::2]
        top = float(np.nanmax(t["weight"])) * 1.08 if len(t) else 1.0
        sx, sy = rectangles(alt["lower"], alt["upper"], np.zeros(len(alt)), np.full(len(alt), top))
        fig.add_trace(go.Scatter(x=sx, y=sy, mode="lines", fill="toself", line_width=0,
                                 fillcolor=with_alpha(COLORS["count"], 0.12), hoverinfo="skip", showlegend=False,
                                 name="Bins (alternately shaded)"), row=2, col=1)
    xs, ys = segments(t["mean_pred"], t["mean_pred"], np.zeros(len(t)), t["weight"])
    texts = [f"{h.split(':')[0]}: {c} rows" for h, c in zip(hover, count_text(t["weight"]))]
    fig.add_trace(go.Scatter(x=round_list(t["mean_pred"]), y=round_list(t["weight"]), mode="markers",
                             marker=dict(color=color, size=6), showlegend=False, legendgroup=name,
                             name="Rows per bin" + ("" if single else f": {name}"), hovertext=texts,
                             hovertemplate="%{hovertext}<extra></extra>"), row=2, col=1)
    fig.add_trace(go.Scatter(x=round_list_obj(xs), y=round_list_obj(ys), mode="lines",
                             line=dict(color=color, width=3), hoverinfo="skip", showlegend=False,
                             legendgroup=name, name="Needles: rows per bin" + ("" if single else f": {name}")),
                  row=2, col=1)



def _side_histogram(fig, m, hist_bins, color, single, outcome_labels=("y = 0", "y = 1")):
    """Horizontal histogram of predictions at the right of the main panel (y = predicted probability)."""
    if single:
        h = histogram(m.p, bins=hist_bins, range=(0, 1), y_true=m.y, sample_weight=m.w)
        series = [("count_neg", f"Predictions: {outcome_labels[0]}", COLORS["negative"]),
                  ("count_pos", f"Predictions: {outcome_labels[1]}", COLORS["positive"])]
    else:
        # several models: each histogram an outline in the model's colour that toggles with its curve; filled bars
        # overlaid were unreadable from the fourth model on (six recalibration methods: a walk-through) and took a
        # legend entry each
        h = histogram(m.p, bins=hist_bins, range=(0, 1), sample_weight=m.w)
        fig.add_trace(histogram_outline(h, color, f"Predictions: {m.name}", m.name, horizontal=True), row=1, col=2)
        return
    centers = round_list((h["lower"] + h["upper"]) / 2)
    for col, name, c in series:
        fig.add_trace(go.Bar(
            y=centers, x=round_list(h[col]), orientation="h", width=float(h["upper"].iloc[0] - h["lower"].iloc[0]),
            marker=dict(color=with_alpha(c, 0.55), line_width=0), name=name, legendgroup=m.name + "hist",
            hovertext=[f"predictions in [{a:.2f}, {b:.2f}): {v}" for a, b, v in
                       zip(h["lower"], h["upper"], count_text(h[col]))],
            hovertemplate="%{hovertext}<extra>" + name + "</extra>"), row=1, col=2)
