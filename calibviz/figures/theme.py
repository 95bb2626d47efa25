"""The one visual theme of every calibviz figure.

* Colour-blind-safe palette: Okabe & Ito (2008), "Color Universal Design".
  Models are coloured in :data:`PALETTE` order; the semantic colours
  (:data:`COLORS`) keep one meaning in every figure: vermillion = observed /
  rejected, grey = counts, blue = predictions.
* Fonts legible on a projector: 14 px tick labels, 16 px axis titles, 18 px
  figure titles.
* White background, light grid, consistent axis titles (:data:`AXIS`).
* Default size fits a Streamlit wide layout on a 1366x768 screen (the
  figure's width follows its container; height :data:`DEFAULT_HEIGHT`).
"""
from __future__ import annotations

import re

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

__all__ = ["PALETTE", "COLORS", "AXIS", "FONT", "DEFAULT_HEIGHT", "DEFAULT_WIDTH", "TEMPLATE_NAME",
           "apply_theme", "model_color", "with_alpha", "inert_links"]

#: Okabe-Ito palette, in the order models are coloured (black is kept for lines).
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")

#: Colours with one meaning across all figures.
COLORS = {
    "prediction": "#0072B2",   # blue: distributions of predictions, mean predictions
    "observed": "#D55E00",     # vermillion: observed rates, rejected predictions
    "count": "#8C8C8C",        # grey: bin sizes
    "band": "#009E73",         # bluish green: acceptance band of a calibrated model
    "positive": "#D55E00",     # outcome y = 1
    "negative": "#56B4E9",     # outcome y = 0
    "diagonal": "#555555",
    "flag": "#F0E442",         # flagged ranges (variable-based)
    "text": "#222222",
    "grid": "#E5E5E5",
}

#: Axis titles used consistently (probabilities are unitless, in [0, 1]).
AXIS = {
    "mean_pred": "Mean predicted probability",
    "pred": "Predicted probability",
    "observed": "Observed frequency",
    "count": "Count (rows)",
    "bin_id": "Bin ID",
}

FONT = {"family": "Arial, Helvetica, sans-serif", "size": 14, "axis_title": 16, "title": 18}
DEFAULT_HEIGHT = 560
DEFAULT_WIDTH = 900   # used for static images; interactive figures follow their container
TEMPLATE_NAME = "calibviz"


def _build_template() -> go.layout.Template:
    axis = dict(
        showgrid=True, gridcolor=COLORS["grid"], zeroline=False, showline=True, linecolor="#444444",
        ticks="outside", tickfont=dict(size=FONT["size"]), title=dict(font=dict(size=FONT["axis_title"])),
        automargin=True,
    )
    return go.layout.Template(layout=go.Layout(
        font=dict(family=FONT["family"], size=FONT["size"], color=COLORS["text"]),
        title=dict(font=dict(size=FONT["title"]), x=0.01, xanchor="left", y=0.98, yanchor="top"),
        paper_bgcolor="white", plot_bgcolor="white", colorway=list(PALETTE),
        xaxis=axis, yaxis=axis,
        legend=dict(font=dict(size=FONT["size"]), bgcolor="rgba(255,255,255,0.85)"),
        hoverlabel=dict(font=dict(size=FONT["size"]), align="left"),
        margin=dict(l=70, r=30, t=90, b=60),
    ))


pio.templates[TEMPLATE_NAME] = _build_template()


def model_color(i: int) -> str:
    """Colour of the i-th model (cycles through :data:`PALETTE`).

    Examples
    --------
    >>> model_color(0), model_color(8)
    ('#0072B2', '#0072B2')
    """
    return PALETTE[i % len(PALETTE)]


def with_alpha(hex_color: str, alpha: float) -> str:
    """``rgba(...)`` string of a ``#RRGGBB`` colour with opacity ``alpha``.

    Examples
    --------
    >>> with_alpha("#D55E00", 0.5)
    'rgba(213,94,0,0.5)'
    """
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha:g})"


def apply_theme(fig: go.Figure, *, title: str | None = None, height: int | None = None,
                legend: str = "top") -> go.Figure:
    """Apply the calibviz template, title, height and legend placement.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
    title : str, optional
    height : int, optional
        Pixels; default :data:`DEFAULT_HEIGHT`.
    legend : {"top", "right", "none"}
        "top": one horizontal row above the plot area (keeps the full width
        for the data in a wide layout).

    Returns
    -------
    plotly.graph_objects.Figure
        The same figure, for chaining.

    Examples
    --------
    >>> fig = apply_theme(go.Figure(), title="t")
    >>> fig.layout.template.layout.plot_bgcolor, fig.layout.height
    ('white', 560)
    """
    height = height or DEFAULT_HEIGHT
    fig.update_layout(template=TEMPLATE_NAME, height=height)
    if title:
        fig.update_layout(title_text=title)
    if legend == "top":
        # subplot titles sit just above the top panels: lift the legend above them (pixels -> paper units)
        lift = 34 if fig.layout.annotations else 0
        top = (110 if title else 70) + lift
        plot_height = max(height - top - 60, 100)
        fig.update_layout(legend=dict(orientation="h", x=0, xanchor="left", y=1.0 + lift / plot_height,
                                      yanchor="bottom"),
                          margin=dict(t=top, b=60))
    elif legend == "none":
        fig.update_layout(showlegend=False, margin=dict(t=60 if title else 30))
    fig.update_annotations(font_size=FONT["axis_title"])  # subplot titles
    return fig


_LINK_TAG = re.compile(r"<(?=\s*/?\s*a[\s>/])", flags=re.IGNORECASE)


def inert_links(fig: go.Figure) -> go.Figure:
    """``fig`` with every ``<a ...>`` tag shown as text instead of a clickable link.

    Plotly renders a small set of HTML tags in every text of a figure (titles, tick labels, legends, hover).
    calibviz's own texts use ``<b>``, ``<br>`` and ``<i>`` but never ``<a>``; an ``<a href=...>`` can only come
    from the data (a class label, a model or column name), so it is escaped wherever it appears.

    Examples
    --------
    >>> fig = inert_links(go.Figure(go.Bar(x=[1], y=['<a href="http://x">c</a>'], name="<b>m</b>")))
    >>> fig.data[0].y[0], fig.data[0].name
    ('&lt;a href="http://x">c&lt;/a>', '<b>m</b>')
    """
    found = [False]

    def walk(value):
        if isinstance(value, str):
            new = _LINK_TAG.sub("&lt;", value)
            found[0] |= new != value
            return new
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [walk(v) for v in value]
        if isinstance(value, np.ndarray) and value.dtype == object:
            return [walk(v) for v in value.tolist()]
        return value

    spec = walk(fig.to_plotly_json())
    return go.Figure(spec) if found[0] else fig
