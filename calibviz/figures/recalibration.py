"""The fitted recalibration maps: prediction in, recalibrated prediction out, with their spread across folds."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..errors import InputError
from ._base import require_columns, round_list
from .theme import apply_theme, model_color, with_alpha

__all__ = ["recalibration_maps"]

_LABELS = {"platt": "Platt", "isotonic": "Isotonic", "beta": "Beta", "temperature": "Temperature",
           "histogram_binning": "Histogram binning", "venn_abers": "Venn-Abers"}


def recalibration_maps(curves: pd.DataFrame, *, title: str | None = "Fitted recalibration maps",
                       height: int | None = None) -> go.Figure:
    """The maps of :func:`calibviz.recalibration.map_curves`: one line per method, the band of its fold maps.

    Parameters
    ----------
    curves : pandas.DataFrame
        From :func:`calibviz.recalibration.map_curves` (columns ``method, x,
        y, fold_low, fold_high`` and, for Venn-Abers, ``p0, p1``).
    title : str, optional
    height : int, optional

    Returns
    -------
    plotly.graph_objects.Figure
        The diagonal (no change), per method the map fitted on all
        calibration rows (line) and the range of the maps fitted with one
        fold left out (shaded: a wide band means the map depends on which
        rows it saw), Venn-Abers' p0 and p1 dotted. Hover: prediction in,
        out, and the fold range.

    References
    ----------
    Platt (1999); Zadrozny & Elkan (2002); Kull et al. (2017); Guo et al.
    (2017); Gupta & Ramdas (2022); Vovk & Petej (2014): the maps drawn.

    Examples
    --------
    >>> import numpy as np
    >>> from calibviz.recalibration import cross_fit, map_curves
    >>> rng = np.random.default_rng(0); p = rng.uniform(size=800); y = rng.uniform(size=800) < p ** 2
    >>> fig = recalibration_maps(map_curves(p, {m: cross_fit(m, y, p) for m in ("platt", "isotonic")}))
    >>> [t.name for t in fig.data if t.showlegend is not False]
    ['no change', 'Platt', 'Isotonic']
    """
    if not isinstance(curves, pd.DataFrame):
        raise InputError("recalibration_maps draws a map_curves table; pass map_curves(y_prob, results).")
    require_columns(curves, ("method", "x", "y", "fold_low", "fold_high"), "map_curves table")
    kind = curves.attrs.get("kind", "binary")
    x_title = "Prediction before recalibration" if kind == "binary" else "Confidence before recalibration"
    y_title = "After recalibration" if kind == "binary" else "Recalibrated probability of the predicted class"
    fig = go.Figure()
    lo, hi = float(curves["x"].min()), float(curves["x"].max())
    fig.add_trace(go.Scatter(x=[lo, hi], y=[lo, hi], mode="lines", name="no change",
                             line=dict(color="#999999", dash="dash", width=1.5), hoverinfo="skip"))
    for i, (method, t) in enumerate(curves.groupby("method", sort=False)):
        color = model_color(i)
        label = _LABELS.get(method, str(method))
        x = round_list(t["x"])
        n_folds = int(t["n_folds"].iloc[0]) if "n_folds" in t else 0
        fig.add_trace(go.Scatter(x=x + x[::-1], y=round_list(t["fold_high"]) + round_list(t["fold_low"])[::-1],
                                 fill="toself", fillcolor=with_alpha(color, 0.18), line=dict(width=0),
                                 mode="lines", name=f"{label}: range over {n_folds} fold maps", legendgroup=label,
                                 showlegend=False, hoverinfo="skip"))
        hover = [f"{label}<br>in {a:.4f} → out {b:.4f}<br>fold maps {c:.4f} – {d:.4f}"
                 for a, b, c, d in zip(t["x"], t["y"], t["fold_low"], t["fold_high"])]
        shape = "hv" if method in ("histogram_binning", "venn_abers") and kind == "binary" else "linear"
        fig.add_trace(go.Scatter(x=x, y=round_list(t["y"]), mode="lines", name=label, legendgroup=label,
                                 line=dict(color=color, width=2.5, shape=shape), hovertext=hover, hoverinfo="text"))
        if "p0" in t and t["p0"].notna().any():
            for col, what in (("p0", "p0 (new row labelled 0)"), ("p1", "p1 (new row labelled 1)")):
                fig.add_trace(go.Scatter(x=x, y=round_list(t[col]), mode="lines", name=f"{label} {what}",
                                         legendgroup=label, showlegend=False,
                                         line=dict(color=color, width=1.2, dash="dot", shape="hv"),
                                         hovertext=[f"{label} {col} = {v:.4f}" for v in t[col]], hoverinfo="text"))
    fig.update_xaxes(title_text=x_title, range=[lo - 0.01, hi + 0.01])
    fig.update_yaxes(title_text=y_title, range=[min(0.0, float(np.nanmin(curves["fold_low"]))) - 0.01,
                                                max(1.0, float(np.nanmax(curves["fold_high"]))) + 0.01])
    apply_theme(fig, title=title, height=height)
    return fig
