"""CORP reliability diagram and the triptych for comparing models: MCB-DSC plot, ROC curves, Murphy diagram.

Every figure draws a table of :mod:`calibviz.metrics.corp` or
:mod:`calibviz.metrics.discrimination` (:func:`~calibviz.metrics.corp_table`,
:func:`~calibviz.metrics.decomposition_table`,
:func:`~calibviz.metrics.roc_curve`, :func:`~calibviz.metrics.murphy_table`);
the figures compute no statistics of their own.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..distributions import histogram
from ..errors import InputError
from ..metrics.corp import corp_table, decomposition_table, murphy_table
from ..metrics.discrimination import auc_delong, roc_curve
from ..panel import format_value
from ._base import binary_inputs, count_text, histogram_outline, record_about, require_columns, round_list
from .theme import AXIS, COLORS, apply_theme, model_color, with_alpha

__all__ = ["corp_diagram", "mcb_dsc_plot", "roc_curves", "murphy_diagram", "decomposition_text", "CORP_BAND_READING",
           "band_level_text"]

#: How to read the CORP diagram's consistency band as the dashboard and report draw it (simultaneous).
CORP_BAND_READING = ("The green band is where the whole curve of a calibrated model with these predictions stays "
                     "with probability 1 - α (labels redrawn from the predictions): a curve leaving it is evidence "
                     "of miscalibration at level α; wiggles inside it are within chance.")

_CORP_COLUMNS = ("x", "cep", "block_lower", "block_upper", "block_n", "block_weight", "block_positives")


def decomposition_text(d: dict) -> str:
    """'Brier 0.1626 = MCB 0.0081 − DSC 0.0944 + UNC 0.2488' from a decomposition dict.

    Examples
    --------
    >>> decomposition_text({"score": 0.16, "miscalibration": 0.01, "discrimination": 0.1,
    ...                     "uncertainty": 0.25, "score_name": "brier"})
    'Brier 0.1600 = MCB 0.0100 − DSC 0.1000 + UNC 0.2500'
    """
    name = "Brier" if d.get("score_name", "brier") == "brier" else "Log loss"
    f = lambda v: format_value(v, "probability")  # noqa: E731
    return (f"{name} {f(d['score'])} = MCB {f(d['miscalibration'])} − DSC {f(d['discrimination'])} "
            f"+ UNC {f(d['uncertainty'])}")


def _corp_hover(t: pd.DataFrame) -> list[str]:
    weighted = t.attrs.get("weighted", False)
    out = []
    for r in t.itertuples(index=False):
        if weighted:
            obs = f"weighted rate of y = 1 {r.cep:.3f} over {r.block_n:,} rows"
        else:
            obs = f"observed {r.block_positives:,.0f}/{r.block_n:,} = {r.cep:.3f}"
        out.append(f"prediction {r.x:.4f}: recalibrated (PAV) {r.cep:.3f}<br>PAV block [{r.block_lower:.4f}, "
                   f"{r.block_upper:.4f}]: {obs}")
    return out


def _band_trace(t, band, color, name, level_text, legendgroup):
    lo, hi = t[f"{band}_low"].to_numpy(), t[f"{band}_high"].to_numpy()
    x = t["x"].to_numpy()
    return go.Scatter(
        x=round_list(np.r_[x, x[::-1], x[:1]]), y=round_list(np.r_[lo, hi[::-1], lo[:1]]), mode="lines",
        fill="toself", fillcolor=with_alpha(color, 0.18), line=dict(width=0.5, color=with_alpha(color, 0.5)),
        hoveron="fills", hoverinfo="name", name=f"{name} ({level_text})", legendgroup=legendgroup)


def band_level_text(level: float, coverage: str, *, short: bool = False) -> str:
    """How a band's caption (and ``short``: its legend) states its coverage. The legend leaves the default, a band
    for the whole curve, to the caption: "Consistency band (95%, whole curve)" took one legend column at 470 px
    and with the other entries five rows above a plot of ~200 px (a browser review).

    >>> band_level_text(0.95, "simultaneous"), band_level_text(0.9, "pointwise")
    ('95%, whole curve', '90% at each point')
    >>> band_level_text(0.95, "simultaneous", short=True), band_level_text(0.9, "pointwise", short=True)
    ('95%', '90% pointwise')
    """
    if coverage == "simultaneous":
        return f"{100 * level:.0f}%" + ("" if short else ", whole curve")
    return f"{100 * level:.0f}%" + (" pointwise" if short else " at each point")


def corp_diagram(y_true=None, y_prob=None, *, sample_weight=None, bands=("consistency",), level: float = 0.9,
                 coverage: str = "simultaneous", n_resamples: int = 100, random_state=0, resample_predictions: bool | None = None, table=None,
                 show_histogram: bool = True, hist_bins: int = 40, show_decomposition: bool = True,
                 outcome_labels: tuple[str, str] = ("y = 0", "y = 1"),
                 title: str | None = "CORP reliability diagram", height: int | None = None) -> go.Figure:
    """CORP reliability diagram: the PAV recalibration curve with bands, and the prediction histogram under it.

    Parameters
    ----------
    y_true : array-like of shape (n,), or dict
        Outcomes in {0, 1}; or ``{name: (y_true, y_prob[, sample_weight])}``
        / ``{name: cv.Predictions}`` to overlay several models.
    y_prob : array-like of shape (n,), optional
        Predicted P(y = 1).
    sample_weight : array-like of shape (n,), optional
    bands : sequence of {"consistency", "confidence"} or None, default ("consistency",)
        As :func:`calibviz.metrics.corp_table`.
    level, n_resamples, random_state, resample_predictions
        As :func:`calibviz.metrics.corp_table`.
    coverage : {"simultaneous", "pointwise"}, default "simultaneous"
        As :func:`calibviz.metrics.corp_table`. The diagram's default is the
        band that a calibrated model's whole curve stays in with probability
        ``level``, so that a curve leaving it is read right at first sight;
        the paper's pointwise band is left by the curve of almost every
        calibrated model somewhere.
    table : DataFrame or dict of DataFrames, optional
        Precomputed :func:`calibviz.metrics.corp_table`: drawn as it is. With
        the predictions of the same model (``y_true``, ``y_prob``) the
        histogram is drawn from them; without, there is no histogram.
    show_histogram : bool, default True
        Panel under the diagram with the histogram of predictions (split by
        outcome for one model).
    hist_bins : int, default 40
    show_decomposition : bool, default True
        The Brier decomposition (score = MCB − DSC + UNC) in the corner.
    outcome_labels : (str, str), default ("y = 0", "y = 1")
        What outcomes 0 and 1 mean, in the histogram's legend (``("wrong", "correct")`` for a confidence view).
    title : str, optional
    height : int, optional

    Returns
    -------
    plotly.graph_objects.Figure

    References
    ----------
    Dimitriadis, Gneiting & Jordan (2021), "Stable reliability diagrams for
    probabilistic classifiers", PNAS 118(8), Fig. 1-2 (the CORP diagram
    with consistency band, histogram and decomposition).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0); p = rng.uniform(size=2000); y = (rng.uniform(size=2000) < p).astype(int)
    >>> fig = corp_diagram(y, p, n_resamples=50)
    >>> [t.name for t in fig.data][:3]
    ['Perfect calibration', 'Consistency band (90%)', 'CORP curve (PAV)']
    """
    if table is not None and y_true is not None:  # the curve from the table, the histogram from the predictions
        if not isinstance(table, pd.DataFrame):
            raise InputError("with predictions, table= must be one DataFrame from calibviz.metrics.corp_table.")
        m = binary_inputs(y_true, y_prob, sample_weight, None)
        if len(m) != 1:
            raise InputError("with table=, pass the predictions of one model.")
        models = [(m[0].name, table, m[0])]
    elif table is not None:
        items = table.items() if isinstance(table, dict) else [("model", table)]
        models = [(str(k), v, None) for k, v in items]
    else:
        models = [(m.name, corp_table(m.y, m.p, sample_weight=m.w, bands=bands, level=level, coverage=coverage,
                                      n_resamples=n_resamples, random_state=random_state,
                                      resample_predictions=resample_predictions), m)
                  for m in binary_inputs(y_true, y_prob, sample_weight, None)]
    for name, t, _ in models:
        if not isinstance(t, pd.DataFrame):
            raise InputError(f"table for {name!r} must be a DataFrame from calibviz.metrics.corp_table.")
        require_columns(t, _CORP_COLUMNS, f"CORP table of {name!r}")
    with_hist = show_histogram and any(m is not None for _, _, m in models)
    fig = make_subplots(rows=2 if with_hist else 1, cols=1, shared_xaxes=True, vertical_spacing=0.04,
                        row_heights=[0.76, 0.24] if with_hist else None)
    single = len(models) == 1
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="Perfect calibration",
                             line=dict(color=COLORS["diagonal"], dash="dash", width=1.5), hoverinfo="skip"),
                  row=1, col=1)
    for i, (name, t, m) in enumerate(models):
        color = model_color(i)
        lvl_level = t.attrs.get("level", level)
        if "consistency_low" in t.columns:
            band = _band_trace(t, "consistency", COLORS["band"] if single else color,
                               "Consistency band" if single else f"{name}: consistency band",
                               band_level_text(lvl_level, t.attrs.get("coverage", "pointwise"), short=True), name)
            if not single:  # one legend entry per model (its curve): the band toggles with it
                band.showlegend = False
            fig.add_trace(band, row=1, col=1)
        if "confidence_low" in t.columns:
            band = _band_trace(t, "confidence", COLORS["prediction"] if single else color,
                               "Spread" if single else f"{name}: spread of the curve",
                               band_level_text(lvl_level, "pointwise", short=True), name)
            band.showlegend = single
            fig.add_trace(band, row=1, col=1)
        # several models: each one's decomposition is its legend entry, above the plot; one box of their lines
        # inside the plot lay across the curves (a walk-through: three models' lines over their top steps)
        # (on a line of its own under the name: a half-width column's legend had no room for both on one line)
        legend_name = (f"{name}<br>{decomposition_text(t.attrs['decomposition']).replace(' − DSC', '<br>− DSC')}"
                       if show_decomposition and "decomposition" in t.attrs else name)
        fig.add_trace(go.Scatter(
            x=round_list(t["x"]), y=round_list(t["cep"]), mode="lines",
            name="CORP curve (PAV)" if single else legend_name,
            line=dict(color=COLORS["observed"] if single else color, width=2.5),
            hovertext=_corp_hover(t), hovertemplate="%{hovertext}<extra>" + name + "</extra>", legendgroup=name),
            row=1, col=1)
        if with_hist and m is not None:
            _histogram(fig, m, hist_bins, color, single, outcome_labels)
    if show_decomposition and single and "decomposition" in models[0][1].attrs:
        fig.add_annotation(xref="x domain", yref="y domain", x=0.01, y=0.99, xanchor="left", yanchor="top",
                           align="left", showarrow=False, text=decomposition_text(models[0][1].attrs["decomposition"]),
                           bgcolor="rgba(255,255,255,0.8)", font=dict(size=13))
    fig.update_layout(barmode="overlay", bargap=0)
    fig.update_xaxes(range=[-0.01, 1.01])
    fig.update_yaxes(range=[-0.02, 1.02], title_text="Event rate (PAV fit)", row=1, col=1)
    fig.update_xaxes(title_text=AXIS["pred"], row=2 if with_hist else 1, col=1)
    if with_hist:
        fig.update_yaxes(title_text="Rows", rangemode="tozero", row=2, col=1)
    first = models[0][1].attrs
    record_about(fig, "CORP reliability diagram", {
        "models": ", ".join(n for n, _, _ in models) if not single else None,
        "bands": f"{band_level_text(first.get('level', level), first.get('coverage', 'pointwise'))}, "
                 f"{first.get('n_resamples', n_resamples)} resamples"
        if any(c.endswith("_low") for c in models[0][1].columns) else None})
    return apply_theme(fig, title=title, height=height or (500 if with_hist else 440))


def _histogram(fig, m, hist_bins, color, single, outcome_labels=("y = 0", "y = 1")):
    if single:
        h = histogram(m.p, bins=hist_bins, range=(0, 1), y_true=m.y, sample_weight=m.w)
        series = [("count_neg", f"Predictions: {outcome_labels[0]}", COLORS["negative"]),
                  ("count_pos", f"Predictions: {outcome_labels[1]}", COLORS["positive"])]
    else:
        # several models: an outline in the model's colour that toggles with its curve (filled bars overlaid hide
        # each other; the reliability diagram draws its side histograms so too)
        h = histogram(m.p, bins=hist_bins, range=(0, 1), sample_weight=m.w)
        fig.add_trace(histogram_outline(h, color, f"Predictions: {m.name}", m.name), row=2, col=1)
        return
    width = float(h["upper"].iloc[0] - h["lower"].iloc[0])
    for col, name, c in series:
        fig.add_trace(go.Bar(
            x=round_list((h["lower"] + h["upper"]) / 2), y=round_list(h[col]), width=width,
            marker=dict(color=with_alpha(c, 0.6), line_width=0), name=name, legendgroup=m.name + "hist",
            showlegend=single,
            hovertext=[f"predictions in [{a:.3f}, {b:.3f}): {v}" for a, b, v in
                       zip(h["lower"], h["upper"], count_text(h[col]))],
            hovertemplate="%{hovertext}<extra>" + name + "</extra>"), row=2, col=1)


# ----------------------------------------------------------------------------- the triptych


def _model_dict(models, what: str) -> dict:
    """{name: (y, p, w)} from a dict of (y, p[, w]) tuples or binary Predictions."""
    if not isinstance(models, dict) or not models:
        raise InputError(f"{what} needs a non-empty dict {{name: (y_true, y_prob[, sample_weight])}} "
                         "or {name: cv.Predictions}.")
    return {m.name: (m.y, m.p, m.w) for m in binary_inputs(models, None, None, None)}


def _nice_step(span: float) -> float:
    raw = span / 6 if span > 0 else 0.01
    mag = 10 ** np.floor(np.log10(raw))
    return float(min((s * mag for s in (1, 2, 2.5, 5, 10) if s * mag >= raw), default=10 * mag))


def mcb_dsc_plot(models=None, *, table: pd.DataFrame | None = None, score: str = "brier", reference=None,
                 n_resamples: int = 200, confidence: float = 0.9, random_state=0, alpha: float = 0.05,
                 n_reference: int = 200, title: str | None = "Calibration vs discrimination (MCB-DSC)",
                 height: int | None = None) -> go.Figure:
    """MCB-DSC plot: one point per model, isolines of equal score; up and to the left is better.

    Parameters
    ----------
    models : dict, optional
        ``{name: (y_true, y_prob[, sample_weight])}`` or ``{name: cv.Predictions}`` (binary).
    table : DataFrame, optional
        A :func:`calibviz.metrics.decomposition_table` (instead of ``models``).
    score, reference, n_resamples, confidence, random_state, alpha, n_reference
        As :func:`calibviz.metrics.decomposition_table` (``alpha`` and
        ``n_reference`` decide the readings' "clear" shown on hover).
    title, height : optional

    Returns
    -------
    plotly.graph_objects.Figure
        x = miscalibration (MCB), y = discrimination (DSC), error bars = the
        bootstrap intervals; grey lines join the points of equal score
        ``S = MCB - DSC + UNC`` (slope 1), labelled with the score.

    References
    ----------
    Dimitriadis, Gneiting & Jordan (2021), PNAS 118(8), Fig. 4;
    Dimitriadis, Gneiting, Jordan & Vogel (2024), "Evaluating probabilistic
    classifiers: the triptych", Int. J. Forecasting 40(3).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0); p = rng.uniform(size=1000); y = (rng.uniform(size=1000) < p).astype(int)
    >>> fig = mcb_dsc_plot({"a": (y, p), "b": (y, p ** 2)}, n_resamples=20)
    >>> [t.name for t in fig.data if t.mode == "markers"]
    ['a', 'b']
    """
    if table is None:
        table = decomposition_table(_model_dict(models, "mcb_dsc_plot"), score=score, reference=reference,
                                    n_resamples=n_resamples, confidence=confidence, random_state=random_state,
                                    alpha=alpha, n_reference=n_reference)
    elif models is not None:
        raise InputError("pass either models or table=..., not both.")
    require_columns(table, ("model", "score", "miscalibration", "discrimination", "uncertainty", "reading"),
                    "decomposition table")
    key = table.attrs.get("score", score)
    label = "Brier score" if key == "brier" else "Log loss"
    mcb, dsc = table["miscalibration"].to_numpy(), table["discrimination"].to_numpy()
    has_ci = "mcb_low" in table.columns and np.isfinite(table["mcb_low"]).any()
    hi_x = np.nanmax(np.r_[mcb, table["mcb_high"]] if has_ci else mcb)
    lo_y = np.nanmin(np.r_[dsc, table["dsc_low"]] if has_ci else dsc)
    hi_y = np.nanmax(np.r_[dsc, table["dsc_high"]] if has_ci else dsc)
    x_max = max(hi_x * 1.15, 1e-3)
    # the window spans at least a tenth of DSC itself: models 1e-5 apart in DSC filled a window of 2.5e-4 and
    # read as far apart (a walk-through); a negligible difference should look negligible
    pad = max(0.15 * max(hi_y - lo_y, 1e-3), 0.05 * abs(hi_y))
    y_min, y_max = max(0.0, lo_y - pad), hi_y + pad
    unc = float(table["uncertainty"].iloc[0])
    fig = go.Figure()
    # isolines DSC = MCB + UNC - S over the visible window
    s_lo, s_hi = unc + 0.0 - y_max, unc + x_max - y_min
    step = _nice_step(s_hi - s_lo)
    for s in np.arange(np.ceil(s_lo / step) * step, s_hi, step):
        xs = np.array([0.0, x_max])
        ys = xs + unc - s
        fig.add_trace(go.Scatter(x=round_list(xs), y=round_list(ys), mode="lines", showlegend=False,
                                 line=dict(color="#BBBBBB", width=1), hoverinfo="skip"))
        x_top = y_max - (unc - s)  # where the line leaves the window: through the top, else the right edge
        x_lab, y_lab = (x_top, y_max) if 0 <= x_top <= x_max else (x_max, x_max + unc - s)
        # not at the left edge, where the label ran into the y axis's top tick (a walk-through at 1024 px)
        if y_min <= y_lab <= y_max and x_lab > 0.12 * x_max:
            fig.add_annotation(x=x_lab, y=y_lab, text=f"{s:.4g}", showarrow=False, xanchor="right", yanchor="top",
                               font=dict(size=11, color="#777777"))
    for i, r in table.reset_index(drop=True).iterrows():
        color = model_color(i)
        err_x = err_y = None
        if has_ci and np.isfinite(r["mcb_low"]):
            err_x = dict(type="data", symmetric=False, array=[max(r["mcb_high"] - r["miscalibration"], 0.0)],
                         arrayminus=[max(r["miscalibration"] - r["mcb_low"], 0.0)], color=color, width=4)
            err_y = dict(type="data", symmetric=False, array=[max(r["dsc_high"] - r["discrimination"], 0.0)],
                         arrayminus=[max(r["discrimination"] - r["dsc_low"], 0.0)], color=color, width=4)
        text = (f"{label} {format_value(r['score'], 'score')}: MCB {format_value(r['miscalibration'], 'probability')}, "
                f"DSC {format_value(r['discrimination'], 'probability')}, UNC {format_value(r['uncertainty'], 'probability')}")
        if has_ci and np.isfinite(r["mcb_low"]):
            lvl = f"{100 * table.attrs.get('confidence', confidence):.0f}%"
            text += (f"<br>{lvl} bootstrap: MCB {format_value(r['mcb_low'], 'probability')}–"
                     f"{format_value(r['mcb_high'], 'probability')}, DSC {format_value(r['dsc_low'], 'probability')}–"
                     f"{format_value(r['dsc_high'], 'probability')}")
        text += "<br>" + _wrap(r["reading"])
        fig.add_trace(go.Scatter(x=[r["miscalibration"]], y=[r["discrimination"]], mode="markers", name=str(r["model"]),
                                 marker=dict(color=color, size=13, line=dict(color="white", width=1.5)),
                                 error_x=err_x, error_y=err_y, hovertext=[text],
                                 hovertemplate="%{hovertext}<extra>" + str(r["model"]) + "</extra>"))
    # a little room left of MCB = 0: a calibrated model's marker sat half under the y axis
    fig.update_xaxes(range=[-0.03 * x_max, x_max], title_text="Miscalibration MCB (lower is better)")
    fig.update_yaxes(range=[y_min, y_max], title_text="Discrimination DSC (higher is better)")
    fig.add_annotation(xref="paper", yref="paper", x=1.0, y=0.0, xanchor="right", yanchor="bottom", showarrow=False,
                       # three short lines: one line was wider than a half-width column's plot (a walk-through)
                       text=f"grey lines: equal {label}<br>(UNC {format_value(unc, 'probability')})<br>"
                            "better = up and left",
                       font=dict(size=12, color="#555555"), bgcolor="rgba(255,255,255,0.85)", align="right")
    return apply_theme(fig, title=title, height=height or 560)


def _wrap(text: str, width: int = 90) -> str:
    words, lines, line = str(text).split(), [], ""
    for w in words:
        if len(line) + len(w) + 1 > width and line:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}".strip()
    lines.append(line)
    return "<br>".join(lines)


def roc_curves(y_true=None, y_prob=None, *, sample_weight=None, confidence: float = 0.95, max_points: int = 2000,
               title: str | None = "ROC curves", height: int | None = None) -> go.Figure:
    """ROC curves of one or several models, each with its AUC and DeLong interval in the legend.

    Parameters
    ----------
    y_true : array-like of shape (n,), or dict
        Outcomes in {0, 1}; or ``{name: (y_true, y_prob[, sample_weight])}`` / ``{name: cv.Predictions}``.
    y_prob : array-like of shape (n,), optional
    sample_weight : array-like, optional
    confidence : float, default 0.95
        Level of the DeLong intervals.
    max_points : int, default 2000
        Points per curve (:func:`calibviz.metrics.roc_curve`'s thinning).
    title, height : optional

    Returns
    -------
    plotly.graph_objects.Figure

    References
    ----------
    Fawcett (2006), Pattern Recognition Letters 27(8); DeLong, DeLong &
    Clarke-Pearson (1988), Biometrics 44(3).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0); p = rng.uniform(size=500); y = (rng.uniform(size=500) < p).astype(int)
    >>> fig = roc_curves(y, p)
    >>> fig.data[1].name.startswith("AUC 0.")
    True
    """
    models = binary_inputs(y_true, y_prob, sample_weight, None)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="No discrimination (AUC 0.5)",
                             line=dict(color=COLORS["diagonal"], dash="dash", width=1.5), hoverinfo="skip"))
    single = len(models) == 1
    for i, m in enumerate(models):
        t = roc_curve(m.y, m.p, sample_weight=m.w, max_points=max_points)
        a = auc_delong(m.y, m.p, sample_weight=m.w, confidence=confidence)
        ci = (f" [{100 * confidence:.0f}% CI {a.low:.3f}–{a.high:.3f}]" if np.isfinite(a.low) else "")
        # several models: the interval on a line of its own (a half-width column at 1024 px cut it off)
        name = (f"AUC {a.auc:.3f}{ci}" if single and m.name == "model" else f"{m.name}: AUC {a.auc:.3f}{ci}"
                if single else f"{m.name}: AUC {a.auc:.3f}<br>{ci.strip()}")
        thr = t["threshold"].to_numpy()
        hover = [f"predict 1 when p ≥ {th:.4f}: true positive rate {tp:.3f}, false positive rate {fp:.3f}"
                 if np.isfinite(th) else "nothing predicted positive" for th, tp, fp in zip(thr, t["tpr"], t["fpr"])]
        fig.add_trace(go.Scatter(x=round_list(t["fpr"]), y=round_list(t["tpr"]), mode="lines", name=name,
                                 line=dict(color=model_color(i), width=2.5), hovertext=hover,
                                 hovertemplate="%{hovertext}<extra>" + m.name + "</extra>"))
    fig.update_xaxes(range=[-0.01, 1.01], title_text="False positive rate", constrain="domain")
    fig.update_yaxes(range=[-0.01, 1.01], title_text="True positive rate (sensitivity)", scaleanchor="x",
                     scaleratio=1, constrain="domain")
    return apply_theme(fig, title=title, height=height or 560)


def murphy_diagram(y_true=None, y_prob=None, *, sample_weight=None, thresholds=None,
                   title: str | None = "Murphy diagram (elementary scores)", height: int | None = None) -> go.Figure:
    """Murphy diagram: each model's mean elementary score against the threshold theta (lower is better).

    Parameters
    ----------
    y_true : array-like of shape (n,), or dict
        As :func:`roc_curves`.
    y_prob : array-like of shape (n,), optional
    sample_weight : array-like, optional
    thresholds : array-like, optional
        As :func:`calibviz.metrics.murphy_table`.
    title, height : optional

    Returns
    -------
    plotly.graph_objects.Figure

    References
    ----------
    Ehm, Gneiting, Jordan & Krüger (2016), JRSS B 78(3), Sec. 3.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0); p = rng.uniform(size=500); y = (rng.uniform(size=500) < p).astype(int)
    >>> len(murphy_diagram({"a": (y, p), "b": (y, p ** 2)}).data)
    2
    """
    models = binary_inputs(y_true, y_prob, sample_weight, None)
    fig = go.Figure()
    for i, m in enumerate(models):
        t = murphy_table(m.y, m.p, thresholds=thresholds, sample_weight=m.w)
        hover = [f"threshold {th:.3f} (a false alarm costs {th:.3f}, a miss {1 - th:.3f}): mean cost {s:.4f} "
                 f"= false alarms {fa:.4f} + misses {mi:.4f}"
                 for th, s, fa, mi in zip(t["theta"], t["score"], t["false_alarms"], t["misses"])]
        fig.add_trace(go.Scatter(x=round_list(t["theta"]), y=round_list(t["score"]), mode="lines", name=m.name,
                                 line=dict(color=model_color(i), width=2.5), hovertext=hover,
                                 hovertemplate="%{hovertext}<extra>" + m.name + "</extra>"))
    fig.update_xaxes(range=[0, 1], title_text="Threshold θ (act when p > θ)")
    fig.update_yaxes(rangemode="tozero", title_text="Mean elementary score (lower is better)")
    return apply_theme(fig, title=title, height=height or 480)
