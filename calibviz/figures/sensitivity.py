"""Binning sensitivity: a metric against the number of bins, per scheme, with intervals."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .. import sensitivity as _sensitivity
from ..errors import InputError
from ..panel import BINARY_METRICS, format_interval, format_value
from ._base import require_columns, round_list
from .theme import COLORS, apply_theme, model_color, with_alpha

__all__ = ["binning_sensitivity"]

_DASH = ("solid", "dash", "dot", "dashdot")
_SYMBOLS = ("circle", "diamond", "square", "triangle-up")


def _unit(metric: str) -> str:
    """The panel's unit of a metric (TCE: percent), so hovers read as the metric tables do."""
    spec = BINARY_METRICS.get(metric)
    return spec.unit if spec is not None else "probability"


def binning_sensitivity(y_true=None, y_prob=None, *, metrics=("ece",), schemes=("uniform", "equal_mass"),
                        n_bins=(5, 10, 15, 20, 25, 30), n_resamples: int = 200, confidence: float = 0.95,
                        sample_weight=None, alpha: float = 0.05, random_state=0, n_reference: int = 0,
                        table: pd.DataFrame | None = None,
                        title: str | None = "Sensitivity to the number of bins",
                        height: int | None = None) -> go.Figure:
    """Metric value against the number of bins, one line per scheme, with bootstrap bands.

    One panel per metric (ECE, TCE, ... have different scales).

    Parameters
    ----------
    y_true, y_prob : array-like of shape (n,)
        Outcomes in {0, 1} and predicted P(y = 1).
    metrics, schemes, n_bins, n_resamples, confidence, sample_weight, alpha, random_state, n_reference :
        As :func:`calibviz.sensitivity.binning_sensitivity`. With a
        reference, each scheme's calibrated-model range is drawn as a dotted
        band: a bootstrap interval of a binned error never contains 0, and a
        calibrated model's error grows with the number of bins too, so the
        value is read against that band, not against 0.
    table : DataFrame, optional
        Precomputed :func:`calibviz.sensitivity.binning_sensitivity` output.
    title : str, optional
    height : int, optional

    Returns
    -------
    plotly.graph_objects.Figure

    References
    ----------
    Gupta & Ramdas (2022), ICLR, Fig. 2 (ECE against the number of bins);
    Nixon et al. (2019), "Measuring calibration in deep learning".

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"metric": "ece", "label": "ECE", "scheme": ["uniform"] * 2,
    ...                   "scheme_label": "equal width", "n_bins": [5, 10], "value": [0.02, 0.03],
    ...                   "low": [0.01, 0.02], "high": [0.03, 0.04]})
    >>> fig = binning_sensitivity(table=t)
    >>> list(fig.data[1].x), list(fig.data[1].y)
    ([5, 10], [0.02, 0.03])
    """
    if table is None:
        if y_true is None or y_prob is None:
            raise InputError("pass y_true and y_prob (or table=calibviz.sensitivity.binning_sensitivity(...)).")
        table = _sensitivity.binning_sensitivity(y_true, y_prob, metrics=metrics, schemes=schemes, n_bins=n_bins,
                                                 n_resamples=n_resamples, confidence=confidence,
                                                 sample_weight=sample_weight, alpha=alpha, random_state=random_state,
                                                 n_reference=n_reference)
    require_columns(table, ("metric", "scheme", "n_bins", "value", "low", "high"), "the sensitivity table")
    metric_names = list(dict.fromkeys(table["metric"]))
    labels = {m: (table.loc[table["metric"] == m, "label"].iloc[0] if "label" in table else m) for m in metric_names}
    conf = table.attrs.get("confidence", confidence)
    fig = make_subplots(rows=1, cols=len(metric_names), subplot_titles=[labels[m] for m in metric_names],
                        horizontal_spacing=0.08)
    scheme_names = list(dict.fromkeys(table["scheme"]))
    for c, metric in enumerate(metric_names, start=1):
        for i, scheme in enumerate(scheme_names):
            g = table[(table["metric"] == metric) & (table["scheme"] == scheme)].sort_values("n_bins")
            if g.empty:
                continue
            color = model_color(i)
            slabel = g["scheme_label"].iloc[0] if "scheme_label" in g else scheme
            x = [int(v) for v in g["n_bins"]]
            if "reference_high" in g and np.isfinite(g["reference_high"]).any():
                fig.add_trace(go.Scatter(
                    x=x + x[::-1], y=round_list(g["reference_high"]) + round_list(g["reference_low"])[::-1],
                    # an outline in the scheme's colour, unfilled: the shaded band is the bootstrap's, and two
                    # schemes' references filled alike had swatches a walk-through could not tell apart
                    fill="toself", fillcolor="rgba(0,0,0,0)",
                    line=dict(width=1.5, color=with_alpha(color, 0.9), dash="dot"), mode="lines",
                    legendgroup=scheme, showlegend=c == 1, hoverinfo="name",
                    name=f"{slabel}: a calibrated model shows"), row=1, col=c)
            if np.isfinite(g["low"]).any():
                fig.add_trace(go.Scatter(x=x + x[::-1], y=round_list(g["high"]) + round_list(g["low"])[::-1],
                                         fill="toself", fillcolor=with_alpha(color, 0.18), line=dict(width=0),
                                         mode="lines", showlegend=c == 1, legendgroup=scheme, hoverinfo="skip",
                                         name=f"{slabel}: {100 * conf:g}% bootstrap interval"), row=1, col=c)
            unit = _unit(metric)
            # the smallest bin's rows: equal-width MCE jumps with a bin of one row (a browser review read the jump
            # as a glitch)
            few = g["min_rows"] if "min_rows" in g else [None] * len(g)
            hover = [f"{labels[metric]}, {slabel} bins, B = {b}: {format_value(v, unit)}"
                     + (f" ({100 * conf:g}% CI {format_interval(lo, hi, unit)})" if np.isfinite(lo) else "")
                     + (f"<br>smallest bin: {int(m):,} row{'s' if m != 1 else ''}" if m is not None and m == m else "")
                     for b, v, lo, hi, m in zip(x, g["value"], g["low"], g["high"], few)]
            fig.add_trace(go.Scatter(x=x, y=round_list(g["value"]), mode="lines+markers", name=f"{slabel} bins",
                                     line=dict(color=color, width=2.5, dash=_DASH[i % len(_DASH)]),
                                     # later schemes' markers smaller and of another shape: where two schemes
                                     # give the same values (tied scores) both stay visible
                                     marker=dict(size=max(9 - 3 * i, 5), color=color,
                                                 symbol=_SYMBOLS[i % len(_SYMBOLS)]),
                                     legendgroup=scheme, showlegend=c == 1,
                                     hovertext=hover, hovertemplate="%{hovertext}<extra></extra>"), row=1, col=c)
        fig.update_yaxes(rangemode="tozero", row=1, col=c)
        sub = table[table["metric"] == metric]
        shown = np.r_[sub["value"].to_numpy(float), sub["high"].to_numpy(float)]
        shown = shown[np.isfinite(shown)]
        band = sub["reference_high"].to_numpy(float) if "reference_high" in sub else np.zeros(0)
        band = band[np.isfinite(band)]
        if shown.size and band.size and band.max() > 1.5 * shown.max() > 0:
            # a calibrated model's range at a bin of one row reaches ~1 (equal-width MCE at 30 bins): drawn to its
            # top it flattened every line of the panel (a walk-through); the band leaves the plot there instead
            fig.update_yaxes(range=[0.0, 1.3 * float(shown.max())], row=1, col=c)
        fig.update_xaxes(title_text="Number of bins B", row=1, col=c)
    fig.update_yaxes(title_text="Metric value", row=1, col=1)
    return apply_theme(fig, title=title, height=height or 460)
