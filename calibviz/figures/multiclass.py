"""Multiclass figures (Gupta & Ramdas 2022): confidence vs top-label diagram, small multiples, class-wise grid, bin zoom."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .. import multiclass as _mc
from ..binning import Uniform
from ..errors import InputError
from ..panel import format_value
from ._base import bin_label, count_text, level_label, record_about, require_columns, round_list, table_about
from .reliability import band_trace, reliability_hover
from .theme import AXIS, COLORS, apply_theme, category_colors, with_alpha

__all__ = ["top_label_diagram", "top_label_small_multiples", "classwise_grid", "bin_zoom"]


def _need(y_true, y_prob, what):
    if y_true is None or y_prob is None:
        raise InputError(f"pass y_true and y_prob (shape (n, K)) or a precomputed {what}.")


def _last_flags(table):
    last = np.zeros(len(table), bool)
    last[-1:] = table["upper"].iloc[-1:] >= 1.0
    return last


def top_label_diagram(y_true=None, y_prob=None, *, binning=Uniform(15), classes=None, sample_weight=None,
                      alpha: float = 0.05, table: pd.DataFrame | None = None, show_bars: bool = True,
                      title: str | None = None, height: int | None = None) -> go.Figure:
    """Confidence (star) and top-label (plus) reliability diagram (Gupta & Ramdas, Fig. 1a).

    Stars are ``(conf_b, acc_b)`` of each confidence bin; pluses are
    ``(conf_b, conf_b +- Delta_b)`` with ``Delta_b`` the class-weighted
    deviation, on the same side of the diagonal as the star and never
    closer to it. A plus is a deviation drawn from the confidence, not an
    accuracy, and it can leave [0, 1] (when classes in a bin deviate in
    opposite directions, see :func:`calibviz.multiclass.top_label_table`):
    the y axis says what each marker is, its ticks stop at 1, a plus
    outside [0, 1] is kept (not clipped or dropped) in a grey region
    labelled "not an accuracy", and its hover gives the sum and why.
    Grey bars give the share of rows in each bin on the same axis.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Class indices 0..K-1.
    y_prob : array-like of shape (n, K)
        Class probabilities.
    binning : Scheme, str or edges, default Uniform(15)
        The paper's Fig. 1 uses ``Uniform(10)``.
    classes : sequence of K labels, optional
    sample_weight : array-like of shape (n,), optional
    alpha : float, default 0.05
    table : DataFrame, optional
        Precomputed :func:`calibviz.multiclass.top_label_table`.
    show_bars : bool, default True
    title : str, optional
        Default names conf-ECE and TL-ECE of these bins.
    height : int, optional

    Returns
    -------
    plotly.graph_objects.Figure

    References
    ----------
    Gupta, C. & Ramdas, A. (2022). Top-label calibration and
    multiclass-to-binary reductions. ICLR, Sec. 2.1 and Fig. 1a.

    Examples
    --------
    >>> P = [[0.6, 0.2, 0.2]] * 5 + [[0.2, 0.6, 0.2]] * 5
    >>> y = [0, 2, 2, 2, 2, 1, 1, 1, 1, 1]
    >>> fig = top_label_diagram(y, P, binning=Uniform(10))
    >>> [(t.name, list(t.y)) for t in fig.data if t.type == "scatter" and t.mode == "markers"]
    [('Confidence (pooled over classes)', [0.6]), ('Top-label: confidence ± class-weighted deviation', [0.2])]
    """
    if table is None:
        _need(y_true, y_prob, "table (top_label_table)")
        table = _mc.top_label_table(y_true, y_prob, binning=binning, classes=classes,
                                    sample_weight=sample_weight, alpha=alpha)
    require_columns(table, ("lower", "upper", "n", "frac", "mean_pred", "obs_rate", "deviation", "plus"),
                    "the table (build it with calibviz.multiclass.top_label_table)")
    labels = bin_label(table["lower"], table["upper"], _last_flags(table))
    outside = (table["plus"] < 0) | (table["plus"] > 1)
    fig = go.Figure()
    if show_bars:
        fig.add_trace(go.Bar(x=round_list(table["lower"]), width=round_list(table["upper"] - table["lower"]), offset=0,
                             y=round_list(table["frac"]), name="Share of rows in the bin",
                             marker=dict(color=with_alpha("#000000", 0.22), line=dict(color="white", width=0.5)),
                             hovertext=[f"bin {lab}: {c} rows = {100 * f:.1f}% of all" for lab, c, f in
                                        zip(labels, count_text(table["weight"]), table["frac"])],
                             hovertemplate="%{hovertext}<extra></extra>"))
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="Perfect calibration",
                             line=dict(color=COLORS["diagonal"], dash="dash", width=1.5), hoverinfo="skip"))
    star_hover = [f"bin {lab}: confidence {c:.3f}, accuracy {a:.3f} ({k:,}/{n:,} correct)"
                  for lab, c, a, k, n in zip(labels, table["mean_pred"], table["obs_rate"], table["positives"],
                                             table["n"])]
    fig.add_trace(go.Scatter(x=round_list(table["mean_pred"]), y=round_list(table["obs_rate"]), mode="markers",
                             name="Confidence (pooled over classes)",
                             marker=dict(symbol="star", size=15, color=COLORS["prediction"],
                                         line=dict(color="white", width=1)),
                             hovertext=star_hover, hovertemplate="%{hovertext}<extra>star</extra>"))
    plus_hover = [f"bin {lab}: confidence {c:.3f} {'+' if p > c else '-'} class-weighted top-label deviation "
                  f"{d:.3f} = {p:.3f} (a deviation drawn from the confidence, not an accuracy)"
                  + (f"<br>{'above 1' if p > 1 else 'below 0'}: predicted classes in this bin are off in "
                     "opposite directions, so their mean |accuracy - confidence| exceeds the room "
                     f"{'above' if p > 1 else 'below'} the confidence" if o else "")
                  + f"<br>{int(k)} predicted classes in the bin"
                  for lab, c, d, p, o, k in zip(labels, table["mean_pred"], table["deviation"], table["plus"], outside,
                                                table.get("n_classes", pd.Series([0] * len(table))))]
    fig.add_trace(go.Scatter(x=round_list(table["mean_pred"]), y=round_list(table["plus"]), mode="markers",
                             name="Top-label: confidence ± class-weighted deviation",
                             marker=dict(symbol="cross-thin", size=14, color=COLORS["observed"],
                                         line=dict(color=COLORS["observed"], width=3)),
                             hovertext=plus_hover, hovertemplate="%{hovertext}<extra>plus</extra>"))
    lo = min(0.0, float(table["plus"].min())) if len(table) else 0.0
    hi = max(1.0, float(table["plus"].max())) if len(table) else 1.0
    pad = 0.03
    shaded = []
    if outside.any():  # shade the region outside [0, 1] so readers see why the axis is wider
        for a, b in ((lo - pad, 0.0), (1.0, hi + pad)):
            if b - a > pad:
                fig.add_hrect(y0=a, y1=b, fillcolor="#EEEEEE", line_width=0, layer="below")
                shaded.append((a, b))
    fig.update_xaxes(range=[-0.01, 1.01], title_text="Confidence (top predicted probability)")
    # ticks stop at 1: nothing above it reads as an accuracy
    fig.update_yaxes(range=[lo - pad, hi + pad], tickvals=[0, 0.2, 0.4, 0.6, 0.8, 1.0],
                     title_text="Accuracy (★) · confidence ± deviation (+)")
    fig.update_layout(bargap=0)
    if title is None:
        a = table.attrs
        title = "Confidence vs top-label reliability"
        if "confidence_ece" in a and "top_label_ece" in a:
            title += (f" (conf-ECE {format_value(a['confidence_ece'], 'probability')}, "
                      f"TL-ECE {format_value(a['top_label_ece'], 'probability')})")
    record_about(fig, "Confidence vs top-label reliability", table_about(table, interval=False))
    fig = apply_theme(fig, title=title, height=height or 520)
    for a, b in shaded:  # after the theme: a subplot-title annotation would lift the legend
        fig.add_annotation(x=0.0, xref="x", xanchor="left", y=(a + b) / 2, yref="y", yanchor="middle",
                           text="outside [0, 1]: + only (confidence ± deviation, not an accuracy)",
                           showarrow=False, font=dict(size=12, color=COLORS["text"]))
    return fig


def _page(items: list, top_n, offset) -> list:
    offset = int(offset or 0)
    if offset < 0:
        raise InputError(f"offset must be >= 0, got {offset}.")
    end = None if top_n is None else offset + int(top_n)
    page = items[offset:end]
    if not page:
        raise InputError(f"offset {offset} is past the last of {len(items)} classes; use a smaller offset.")
    return page


def _grid(tables: dict, titles: dict, order: list, cols: int, title, height, level_alpha):
    """Small multiples of reliability diagrams (one per table in ``order``)."""
    cols = max(1, min(int(cols), len(order)))
    rows = math.ceil(len(order) / cols)
    height = height or 170 + 250 * rows
    # two-line panel titles need ~70 px between rows, whatever the number of rows
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[titles[k] for k in order],
                        shared_xaxes=True, shared_yaxes=True, horizontal_spacing=0.04,
                        vertical_spacing=min(0.3, 70 / max(height - 200, 100)) if rows > 1 else 0.1)
    for i, key in enumerate(order):
        r, c = divmod(i, cols)
        t = tables[key]
        first = i == 0
        fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", line=dict(color=COLORS["diagonal"], dash="dash",
                                 width=1), name="Perfect calibration", showlegend=first, legendgroup="diag",
                                 hoverinfo="skip"), row=r + 1, col=c + 1)
        if len(t) and "band_low" in t.columns:
            fig.add_trace(band_trace(t, f"Calibrated band ({level_label(level_alpha)}, all panels)",
                                     hoverinfo="skip", showlegend=first, legendgroup="band"), row=r + 1, col=c + 1)
        if len(t):
            fig.add_trace(go.Scatter(
                x=round_list(t["mean_pred"]), y=round_list(t["obs_rate"]), mode="lines+markers",
                line=dict(color=COLORS["prediction"], width=1.5), marker=dict(size=6, color=COLORS["prediction"]),
                error_y=dict(type="data", symmetric=False, array=round_list(t["ci_high"] - t["obs_rate"]),
                             arrayminus=round_list(t["obs_rate"] - t["ci_low"]), thickness=1, width=2,
                             color=COLORS["prediction"]),
                name=f"Observed frequency per bin ({level_label(level_alpha)} CI)", showlegend=first,
                legendgroup="obs", hovertext=[f"{key}<br>{h}" for h in reliability_hover(t)],
                hovertemplate="%{hovertext}<extra></extra>"), row=r + 1, col=c + 1)
    fig.update_xaxes(range=[-0.02, 1.02], tickvals=[0, 0.5, 1], showgrid=True)
    fig.update_yaxes(range=[-0.02, 1.02], tickvals=[0, 0.5, 1], showgrid=True)
    for c in range(cols):  # the lowest panel of each column carries the x ticks (the last row may be short)
        last_row = rows if (rows - 1) * cols + c < len(order) else rows - 1
        fig.update_xaxes(showticklabels=True, title_text="Predicted", row=last_row, col=c + 1)
    fig.update_yaxes(title_text="Observed", col=1)
    fig = apply_theme(fig, title=title, height=height)
    fig.update_annotations(font_size=14)  # subplot titles: two short lines that stay within their panel
    return fig


def top_label_small_multiples(y_true=None, y_prob=None, *, binning=Uniform(15), classes=None, sample_weight=None,
                              alpha: float = 0.05, tables: dict | None = None, top_n: int | None = 20,
                              offset: int = 0, cols: int = 4, title: str | None = None,
                              height: int | None = None) -> go.Figure:
    """Top-label reliability diagram of each predicted class, as small multiples.

    Panel l uses only the rows predicted as class l: x = mean top score in a
    bin, y = share of those rows whose true class is l, with its interval.
    Panel titles give the share of rows predicted as l (the figure's title says so) and its TL-ECE_l.
    Panels are ordered by class (as the classes are given); with many
    classes, ``top_n`` and ``offset`` page through them.

    Parameters
    ----------
    y_true : array-like of shape (n,)
    y_prob : array-like of shape (n, K)
    binning, classes, sample_weight, alpha :
        As :func:`calibviz.multiclass.per_class_top_label_tables`.
    tables : dict {label: DataFrame}, optional
        Precomputed :func:`calibviz.multiclass.per_class_top_label_tables`.
    top_n : int or None, default 20
        Panels per page (None: all).
    offset : int, default 0
        First class shown (page = offset // top_n).
    cols : int, default 4
    title : str, optional
    height : int, optional

    Returns
    -------
    plotly.graph_objects.Figure

    References
    ----------
    Gupta & Ramdas (2022), ICLR, Sec. 3.4, Fig. 4 and 9 (per-class top-label diagrams).

    Examples
    --------
    >>> P = [[0.6, 0.2, 0.2]] * 5 + [[0.2, 0.6, 0.2]] * 5
    >>> y = [0, 2, 2, 2, 2, 1, 1, 1, 1, 1]
    >>> fig = top_label_small_multiples(y, P, binning=Uniform(10), classes=["a", "b", "c"])
    >>> [a.text.split("<br>")[0] for a in fig.layout.annotations]
    ['a (50%)', 'b (50%)']
    """
    if tables is None:
        _need(y_true, y_prob, "tables (per_class_top_label_tables)")
        tables = _mc.per_class_top_label_tables(y_true, y_prob, binning=binning, classes=classes,
                                                sample_weight=sample_weight, alpha=alpha)
    if not tables:
        raise InputError("no predicted class to draw.")
    order = _page(list(tables), top_n, offset)
    titles = {}
    for k in order:
        a = tables[k].attrs
        # two short lines: four panels share a 570 px figure at 1024 px (a browser review: longer titles overlapped)
        titles[k] = (f"{k}" + (f" ({100 * a['share']:.0f}%)" if "share" in a else "") + "<br>"
                     + (f"TL-ECE {format_value(a['ece'], 'probability')}" if "ece" in a else ""))
    if title is None:
        # which share the panels give: the class-wise grid's is another one, and "b (33%)" beside "b (34%)" read as
        # a contradiction (a walk-through)
        title = "Top-label reliability per predicted class (% = rows predicted)"
        if top_n is not None and len(tables) > len(order):
            title += f" (classes {offset + 1}-{offset + len(order)} of {len(tables)})"
    return _grid(tables, titles, order, cols, title, height, alpha)


def classwise_grid(y_true=None, y_prob=None, *, binning=Uniform(15), classes=None, sample_weight=None,
                   alpha: float = 0.05, tables: dict | None = None, ranking: pd.DataFrame | None = None,
                   n_resamples: int = 200, random_state=0, top_n: int | None = 12, offset: int = 0, cols: int = 4,
                   title: str | None = None, height: int | None = None) -> go.Figure:
    """Class-wise (one-vs-rest) reliability diagrams ranked by calibration error, largest first.

    Each panel is the reliability diagram of "class l vs rest" on all rows;
    panel titles give the rank, the class's ECE with its bootstrap interval
    and the class prevalence. With 100 classes, show ``top_n`` panels and
    move through the ranking with ``offset``.

    Parameters
    ----------
    y_true : array-like of shape (n,)
    y_prob : array-like of shape (n, K)
    binning, classes, sample_weight, alpha :
        As :func:`calibviz.multiclass.classwise_tables`.
    tables : dict {label: DataFrame}, optional
        Precomputed :func:`calibviz.multiclass.classwise_tables`.
    ranking : DataFrame, optional
        Precomputed :func:`calibviz.multiclass.class_ranking` (metric
        "classwise_ece"); default computed with ``n_resamples``.
    n_resamples : int, default 200
        Bootstrap resamples of the ranking (0: no intervals).
    random_state : int, default 0
    top_n : int or None, default 12
    offset : int, default 0
        Rank of the first panel minus one (offset=12 shows ranks 13-24).
    cols : int, default 4
    title : str, optional
    height : int, optional

    Returns
    -------
    plotly.graph_objects.Figure

    References
    ----------
    Gupta & Ramdas (2022), ICLR, eq. (5) (class-wise calibration, CW-ECE);
    Kull et al. (2019), "Beyond temperature scaling", NeurIPS.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> P = rng.dirichlet([1, 1, 1], 600); y = (rng.random(600)[:, None] > P.cumsum(1)).sum(1)
    >>> fig = classwise_grid(y, P, classes=["a", "b", "c"], n_resamples=20, top_n=2)
    >>> len(fig.layout.annotations)
    2
    """
    if tables is None or ranking is None:
        _need(y_true, y_prob, "tables and ranking")
    if tables is None:
        tables = _mc.classwise_tables(y_true, y_prob, binning=binning, classes=classes,
                                      sample_weight=sample_weight, alpha=alpha)
    if ranking is None:
        ranking = _mc.class_ranking(y_true, y_prob, metric="classwise_ece", binning=binning,
                                    n_resamples=n_resamples, random_state=random_state, classes=classes,
                                    sample_weight=sample_weight)
    require_columns(ranking, ("rank", "label", "value", "low", "high"), "ranking")
    by_label = {str(k): k for k in tables}
    ranked = [by_label[str(lab)] for lab in ranking["label"] if str(lab) in by_label]
    order = _page(ranked, top_n, offset)
    info = ranking.set_index(ranking["label"].astype(str))
    titles = {}
    for k in order:
        r = info.loc[str(k)]
        # two short lines (the ECE's interval is in the class ranking's table): four panels share a 570 px figure
        # at 1024 px, where longer titles overlapped (a browser review)
        share = f" ({100 * r['share']:.0f}%)" if "share" in r and np.isfinite(r["share"]) else ""
        titles[k] = f"#{int(r['rank'])} {k}{share}<br>ECE {format_value(r['value'], 'probability')}"
    if title is None:
        title = "Class-wise reliability, largest ECE first (% = share of labels)"
        overall = ranking.attrs.get("overall")
        if overall is not None:
            title += f" (CW-ECE {format_value(overall, 'probability')})"
        if top_n is not None and len(ranked) > len(order):
            title += f": ranks {offset + 1}-{offset + len(order)} of {len(ranked)}"
    return _grid(tables, titles, order, cols, title, height, alpha)


#: Where a label may sit beside its point, in order of preference, and the offset (in axis spans) of each.
_LABEL_SPOTS = (("middle right", (1, 0)), ("middle left", (-1, 0)), ("top center", (0, 1)), ("bottom center", (0, -1)))


def _label_layout(x, y, span: float, labels, low: float | None = None) -> tuple[list[str], list[bool]]:
    """A text position per point so that labels of nearby points do not print on top of each other, and whether
    each label found a spot clear of the others: each point (in drawing order) takes the first spot whose label box
    (13 px text, ~7 px a character, on a panel of about 300 px) overlaps none placed before. A label without a clear
    spot goes unprinted (its colour, the bars' and its hover name it): a cluster of ten classes at one confidence
    printed its labels over each other at 570 px (a browser review); an earlier rule kept label anchors apart, which
    let long labels overlap. ``low``: the axes' lower end (both axes share [low, low + span]); a box must stay
    within them ("automobile" ran past the panel onto the next one's tick labels at 1024 px).

    >>> _label_layout([0.50, 0.505, 0.9], [0.50, 0.50, 0.9], 1.0, labels=["dog", "owl", "cat"])[0]
    ['middle right', 'middle left', 'middle right']
    >>> y = [0.5, 0.501, 0.502, 0.503, 0.504]   # five classes at one point: right, left, above, below, none
    >>> _label_layout([0.5] * 5, y, 0.1, labels=["automobile", "truck", "ship", "dog", "cat"])[1]
    [True, True, True, True, False]
    """
    scale = 300.0 / span  # pixels per unit of the axes, both axes sharing one range
    boxes, out, clear = [], [], []
    for xi, yi, text in zip(np.asarray(x, float) * scale, np.asarray(y, float) * scale, labels):
        w, h = 7.0 * len(str(text)), 16.0

        def box(offset):
            dx, dy = offset
            x0 = xi + 12 if dx > 0 else xi - 12 - w if dx < 0 else xi - w / 2
            y0 = yi - h / 2 if dy == 0 else yi + 12 if dy > 0 else yi - 12 - h
            return x0, y0, x0 + w, y0 + h

        def free(b):
            inside = low is None or (low * scale <= b[0] and b[2] <= (low + span) * scale)
            return inside and all(b[2] <= o[0] or o[2] <= b[0] or b[3] <= o[1] or o[3] <= b[1] for o in boxes)

        spot = next(((name, box(off)) for name, off in _LABEL_SPOTS if free(box(off))), None)
        out.append(spot[0] if spot else _LABEL_SPOTS[0][0])
        clear.append(spot is not None)
        if spot:
            boxes.append(spot[1])
    return out, clear


def bin_zoom(y_true=None, y_prob=None, bin_id: int | None = None, *, binning=Uniform(15), classes=None,
             sample_weight=None, table: pd.DataFrame | None = None, title: str | None = None,
             height: int | None = None) -> go.Figure:
    """Zoom into one confidence bin: confidence and accuracy per predicted class (Gupta & Ramdas, Fig. 1b).

    Left: the bin's star (pooled confidence, accuracy) and one point per
    predicted class at (confidence, accuracy) of the rows predicted as that
    class, on a zoomed range around the diagonal; marker area grows with the
    class's rows. Right: rows per predicted class in the bin.

    Parameters
    ----------
    y_true : array-like of shape (n,)
    y_prob : array-like of shape (n, K)
    bin_id : int
        0-based bin of the scheme (the ``bin`` column of the top-label table).
    binning, classes, sample_weight :
        As :func:`calibviz.multiclass.bin_zoom`.
    table : DataFrame, optional
        Precomputed :func:`calibviz.multiclass.bin_zoom`.
    title : str, optional
    height : int, optional

    Returns
    -------
    plotly.graph_objects.Figure

    References
    ----------
    Gupta & Ramdas (2022), ICLR, Fig. 1b.

    Examples
    --------
    >>> P = [[0.6, 0.2, 0.2]] * 5 + [[0.2, 0.6, 0.2]] * 5
    >>> y = [0, 2, 2, 2, 2, 1, 1, 1, 1, 1]
    >>> fig = bin_zoom(y, P, 6, binning=Uniform(10), classes="abc")
    >>> list(fig.data[-1].x), list(fig.data[-1].y)
    ([5.0, 5.0], ['a', 'b'])
    """
    if table is None:
        _need(y_true, y_prob, "table (bin_zoom)")
        if bin_id is None:
            raise InputError("pass bin_id, the 0-based bin to zoom into (the 'bin' column of top_label_table).")
        table = _mc.bin_zoom(y_true, y_prob, bin_id, binning=binning, classes=classes, sample_weight=sample_weight)
    require_columns(table, ("label", "n", "weight", "share", "confidence", "accuracy"), "the zoom table")
    a = table.attrs
    fig = make_subplots(rows=1, cols=2, column_widths=[0.62, 0.38], horizontal_spacing=0.12,
                        subplot_titles=["Confidence vs accuracy by predicted class", "Rows per predicted class"])
    xs = np.r_[table["confidence"], a.get("confidence", np.nan)]
    ys = np.r_[table["accuracy"], a.get("accuracy", np.nan)]
    with_ci = {"accuracy_low", "accuracy_high"} <= set(table.columns)  # how far chance moves each class's accuracy
    if with_ci:  # the axes hold the accuracies' whiskers
        ys = np.r_[ys, table["accuracy_low"], table["accuracy_high"]]
    lo = float(np.nanmin(np.r_[xs, ys])); hi = float(np.nanmax(np.r_[xs, ys]))
    pad = max(0.02, 0.08 * (hi - lo))
    rng = [max(lo - pad, 0.0), min(hi + pad, 1.0)]  # probabilities: never an axis below 0 or above 1
    fig.add_trace(go.Scatter(x=rng, y=rng, mode="lines", name="Perfect calibration",
                             line=dict(color=COLORS["diagonal"], dash="dash", width=1.5), hoverinfo="skip"),
                  row=1, col=1)
    if "lower" in a and "upper" in a:
        fig.add_vrect(x0=max(a["lower"], rng[0]), x1=min(a["upper"], rng[1]), fillcolor="#F2F2F2", line_width=0,
                      layer="below", row=1, col=1)
    colors = category_colors(len(table))
    size = 8 + 22 * np.sqrt(table["share"].to_numpy(float) / max(table["share"].max(), 1e-12))
    hover = [f"predicted {lab}: {c} rows ({100 * s:.1f}% of the bin), confidence {cf:.3f}, accuracy {ac:.3f}, "
             f"gap {ac - cf:+.3f}" for lab, c, s, cf, ac in
             zip(table["label"], count_text(table["weight"]), table["share"], table["confidence"], table["accuracy"])]
    # the largest bubbles first, so that a small class is drawn over them, not hidden; labels placed apart
    order = np.argsort(-table["share"].to_numpy(float), kind="stable")
    cx, cy = table["confidence"].to_numpy(float)[order], table["accuracy"].to_numpy(float)[order]
    err = None
    if with_ci:
        lo_, hi_ = table["accuracy_low"].to_numpy(float)[order], table["accuracy_high"].to_numpy(float)[order]
        err = dict(type="data", symmetric=False, array=round_list(hi_ - cy), arrayminus=round_list(cy - lo_),
                   color=COLORS["text"], thickness=1, width=3)
        hover = [h + f", 95% interval {a:.3f}–{b:.3f}" for h, a, b in
                 zip(hover, table["accuracy_low"], table["accuracy_high"])]
    positions, clear = _label_layout(cx, cy, rng[1] - rng[0], [str(table["label"].iloc[i]) for i in order], rng[0])
    fig.add_trace(go.Scatter(x=round_list(cx), y=round_list(cy), mode="markers+text", error_y=err,
                             text=[str(table["label"].iloc[i]) if c else "" for i, c in zip(order, clear)],
                             textposition=positions,
                             cliponaxis=False,  # a class at accuracy 1 or 0 sits on the axis edge, whole
                             textfont=dict(size=13), marker=dict(size=round_list(size[order], 2),
                                                                 color=[colors[i] for i in order],
                                                                 line=dict(color="white", width=1), opacity=0.85),
                             name="Predicted class (area ~ rows" + ("; bar: 95% interval of its accuracy)"
                                                                    if err else ")"),
                             hovertext=[hover[i] for i in order],
                             hovertemplate="%{hovertext}<extra></extra>"), row=1, col=1)
    if "confidence" in a:
        fig.add_trace(go.Scatter(x=[round(a["confidence"], 6)], y=[round(a["accuracy"], 6)], mode="markers",
                                 marker=dict(symbol="star", size=18, color=COLORS["prediction"],
                                             line=dict(color="white", width=1)), name="Whole bin (star)",
                                 cliponaxis=False,
                                 hovertext=[f"whole bin: {a.get('n', 0):,} rows, confidence {a['confidence']:.3f}, "
                                            f"accuracy {a['accuracy']:.3f}"],
                                 hovertemplate="%{hovertext}<extra></extra>"), row=1, col=1)
    fig.add_trace(go.Bar(x=round_list(table["weight"]), y=[str(v) for v in table["label"]], orientation="h",
                         marker=dict(color=colors, line_width=0), showlegend=False, name="Rows",
                         hovertext=hover, hovertemplate="%{hovertext}<extra></extra>"), row=1, col=2)
    fig.update_xaxes(range=rng, title_text="Confidence", row=1, col=1)
    fig.update_yaxes(range=rng, title_text="Accuracy", scaleanchor="x", scaleratio=1, row=1, col=1)
    fig.update_xaxes(title_text=AXIS["count"], rangemode="tozero", row=1, col=2,
                     **({"dtick": 1} if float(table["weight"].max()) < 8 else {}))  # no 0.5-row ticks
    fig.update_yaxes(autorange="reversed", row=1, col=2)
    if title is None:
        title = "Inside one confidence bin"
        if "lower" in a:
            last = a["upper"] >= 1.0
            title += f" {bin_label([a['lower']], [a['upper']], [last])[0]} ({a.get('n', 0):,} rows)"
    return apply_theme(fig, title=title, height=height or 520)
