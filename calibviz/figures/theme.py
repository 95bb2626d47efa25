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
           "apply_theme", "legend_rows", "model_color", "with_alpha", "inert_links", "scale_fonts"]

#: Okabe-Ito palette, in the order models are coloured (black is kept for lines); its yellow (#F0E442) is darkened
#: to goldenrod for lines and markers: on white it barely showed (the seventh model, e.g. Venn-Abers among six
#: recalibration methods: a walk-through). The flagged ranges keep the yellow as a fill.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#A6761D", "#000000")

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

FONT = {"family": "Arial, Helvetica, sans-serif", "size": 14, "axis_title": 16, "title": 18, "legend": 13}
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


def category_colors(n: int) -> list:
    """``n`` distinct colours for categories shown together (classes of a zoomed bin): :data:`PALETTE` up to its 8,
    else Plotly's Dark24, whose 24 stay distinct (cycling the 8 drew airplane and ship, automobile and truck of
    CIFAR-10 alike, a walk-through); beyond 24 they cycle.

    Examples
    --------
    >>> category_colors(2), len(set(category_colors(10))), len(set(category_colors(30)))
    (['#0072B2', '#E69F00'], 10, 24)
    """
    if n <= len(PALETTE):
        return list(PALETTE[:n])
    from plotly.colors import qualitative

    return [qualitative.Dark24[i % len(qualitative.Dark24)] for i in range(n)]


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


#: Pixels of one legend row (13 px text) and of the figure title's band at the top.
LEGEND_ROW_PX = 22
TITLE_PX = 40
#: The band of Plotly's toolbar at the top right (shown on hover): a legend at the top of an untitled figure starts
#: below it, else the toolbar covers the legend's right-hand entries.
MODEBAR_PX = 30
#: The narrowest width a figure is shown at (the 3:2 column of Streamlit's wide layout at 1280 px, measured in a
#: browser; below ~1000 px the columns stack): the legend's rows are estimated at this width where a margin or
#: the height must be fixed in advance.
NARROW_WIDTH = 470


def _text_px(text: str, size: float) -> float:
    """Rough rendered width of a text in Arial (mean glyph width 0.5 em, measured 0.47; tags removed)."""
    return 0.5 * size * len(re.sub(r"<[^>]+>", "", text or ""))


def legend_rows(fig: go.Figure, width: float = NARROW_WIDTH) -> int:
    """Rows a horizontal legend of ``fig`` needs at a figure width of ``width`` pixels (an estimate from the
    entries' text). Plotly wraps a horizontal legend at the plot area's width (about 80% of the figure's) into
    columns as wide as its widest entry (rendered with Kaleido: five entries of up to 32 characters took five rows
    at 470 px and three at 560).

    Examples
    --------
    >>> legend_rows(go.Figure([go.Scatter(name="a"), go.Scatter(name="b")]))
    1
    >>> legend_rows(go.Figure([go.Scatter(name="x" * 60, showlegend=True) for _ in range(3)]), width=500)
    3
    """
    shown = [t for t in fig.data if not (t.showlegend is False or (t.showlegend is None and len(fig.data) < 2))]
    if not shown:
        return 1
    widest = max(40 + _text_px(t.name, FONT["legend"]) for t in shown)
    columns = max(1, int(0.8 * width // widest))
    return -(-len(shown) // columns)


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
        "top": horizontal rows under the title, as wide as the plot area
        (a side column of ~130 px would take a quarter of a 1366x768
        column away from the data). The legend is anchored to the figure
        (``yref="container"``), so Plotly pushes the plot area down by the
        legend's real height at any width: legend, title and plot never
        overlap. With subplot titles (which sit above the panels) the legend is
        lifted above them and the top margin is sized from an estimate of the
        legend's rows at :data:`NARROW_WIDTH`.

    Returns
    -------
    plotly.graph_objects.Figure
        The same figure, for chaining.

    Examples
    --------
    >>> fig = apply_theme(go.Figure(), title="t")
    >>> fig.layout.template.layout.plot_bgcolor, fig.layout.height
    ('white', 560)
    >>> fig.layout.legend.orientation, fig.layout.legend.yref
    ('h', 'container')
    """
    height = height or DEFAULT_HEIGHT
    fig.update_layout(template=TEMPLATE_NAME, height=height)
    title_px = MODEBAR_PX  # an untitled figure's legend starts below the toolbar
    if title:
        lines = title.count("<br>") + 1
        title_px = TITLE_PX + 22 * (lines - 1)
        fig.update_layout(title=dict(text=title, yref="container", y=1.0, yanchor="top", pad=dict(t=10)))
    # make_subplots' titles: paper-anchored above each panel (other annotations, e.g. a text in a corner, are not)
    subplot_titles = any(a.yref == "paper" and a.yanchor == "bottom" for a in fig.layout.annotations)
    if legend == "top" and subplot_titles:
        # subplot titles sit just above the top panels: the legend goes above them (pixels -> paper units)
        lift = 34
        rows = legend_rows(fig)
        top = title_px + 10 + rows * LEGEND_ROW_PX + lift
        plot_height = max(height - top - 60, 100)
        fig.update_layout(legend=dict(orientation="h", x=0, xanchor="left", y=1.0 + lift / plot_height,
                                      yanchor="bottom", font=dict(size=FONT["legend"]), traceorder="normal"),
                          margin=dict(t=top, b=60, l=60, r=20))
    elif legend == "top":
        fig.update_layout(legend=dict(orientation="h", x=0, xanchor="left",
                                      yref="container", y=1.0 - (title_px + 2) / height, yanchor="top",
                                      font=dict(size=FONT["legend"]), traceorder="normal"),
                          margin=dict(t=title_px + 14, b=50, l=60, r=20))
    elif legend == "none":
        fig.update_layout(showlegend=False, margin=dict(t=title_px + 14 if title else 20, l=60, r=20))
    fig.for_each_annotation(lambda a: a.update(font_size=FONT["axis_title"]),
                            selector=lambda a: a.yref == "paper" and a.yanchor == "bottom")  # subplot titles
    return fig


def scale_fonts(fig: go.Figure, factor: float) -> go.Figure:
    """``fig`` with every font of the theme (ticks, axis titles, legend, title, annotations, hover) ``factor``
    times larger: the presentation mode's projector sizes. Modifies and returns ``fig``.

    Examples
    --------
    >>> fig = scale_fonts(apply_theme(go.Figure(go.Scatter(x=[0], y=[0])), title="t"), 1.5)
    >>> fig.layout.xaxis.tickfont.size, fig.layout.title.font.size, fig.layout.legend.font.size
    (21.0, 27.0, 19.5)
    """
    tmpl = pio.templates[TEMPLATE_NAME].layout

    def size(own, default):
        return float(own if own is not None else default) * factor

    fig.update_layout(font_size=size(fig.layout.font.size, tmpl.font.size),
                      title_font_size=size(fig.layout.title.font.size, tmpl.title.font.size),
                      legend_font_size=size(fig.layout.legend.font.size, tmpl.legend.font.size),
                      hoverlabel_font_size=size(fig.layout.hoverlabel.font.size, tmpl.hoverlabel.font.size))
    fig.for_each_xaxis(lambda a: a.update(tickfont_size=size(a.tickfont.size, tmpl.xaxis.tickfont.size),
                                          title_font_size=size(a.title.font.size, tmpl.xaxis.title.font.size)))
    fig.for_each_yaxis(lambda a: a.update(tickfont_size=size(a.tickfont.size, tmpl.yaxis.tickfont.size),
                                          title_font_size=size(a.title.font.size, tmpl.yaxis.title.font.size)))
    fig.for_each_annotation(lambda a: a.update(font_size=size(a.font.size, FONT["axis_title"])))
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
