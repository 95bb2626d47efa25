"""Figures that say what they are, for slides and files: title and metadata inside the image, static export.

A figure pasted into a slide is read without the dashboard around it, so the
image itself carries the title, the data and model names and the settings
(binning, level, ...). Three ways out, from the lightest:

* :func:`figure_json` -- the Plotly figure as JSON (tens of kB): reopen it
  with ``plotly.io.read_json`` or any ``Plotly.newPlot``; no plotly.js inside.
* :func:`figure_html` -- a self-contained HTML file (plotly.js embedded,
  about 4.8 MB, opens offline). A "CDN" variant would be light but would
  need the internet to open, so calibviz does not offer it.
* :func:`to_image` -- PNG (slide resolution: 1600x900 at scale 2) or SVG,
  rendered by kaleido with a Chrome/Chromium on the server
  (:func:`static_export_available` says whether one is there; nothing is
  downloaded at run time).
"""
from __future__ import annotations

import copy
import shutil
from functools import lru_cache

import plotly.graph_objects as go
import plotly.io as pio

from .theme import FONT, apply_theme, inert_links, scale_fonts

__all__ = ["SLIDE_WIDTH", "SLIDE_HEIGHT", "SLIDE_SCALE", "describe", "with_caption", "slide_figure",
           "figure_json", "figure_html", "html_size", "static_export_available", "to_image", "slide_png",
           "slide_svg", "with_png_text", "png_metadata_text"]

#: Slide export: 16:9, rendered at twice the pixels (3200x1800 PNG), fonts 1.2x the screen's.
SLIDE_WIDTH, SLIDE_HEIGHT, SLIDE_SCALE = 1600, 900, 2
SLIDE_FONT_FACTOR = 1.2
#: The caption line of a figure on screen: small and grey, one line above the legend.
CAPTION_SIZE = 12
CAPTION_COLOR = "#555555"


def describe(title: str | None, about: dict | None = None) -> str:
    """The one-line identification of a figure: its title, then ``key: value`` pairs of ``about``.

    Parameters
    ----------
    title : str or None
    about : dict, optional
        What defines the figure, in order, e.g. ``{"data": "Hospital readmission", "model": "raw",
        "binning": "uniform, 15 bins", "α": 0.05}``; empty values are left out.

    Examples
    --------
    >>> describe("Reliability diagram", {"data": "hospital", "model": "", "binning": "uniform, 15 bins"})
    'Reliability diagram · data: hospital · binning: uniform, 15 bins'
    """
    parts = [title] if title else []
    parts += [f"{k}: {v}" for k, v in (about or {}).items() if v not in (None, "")]
    return " · ".join(str(p) for p in parts)


def with_caption(fig: go.Figure, caption: str) -> go.Figure:
    """A copy of ``fig`` whose title is ``caption`` in small grey type (one line at the top).

    On screen the page's heading names the figure; this line makes the figure
    say what it is when it leaves the page (the toolbar's PNG, a screenshot).
    The legend and plot move down by the caption's height (see
    :func:`calibviz.figures.theme.apply_theme`).

    Examples
    --------
    >>> fig = with_caption(apply_theme(go.Figure(go.Scatter(x=[0], y=[0]))), "Reliability diagram · data: x")
    >>> fig.layout.title.text, fig.layout.title.font.size
    ('Reliability diagram · data: x', 12)
    """
    out = go.Figure(fig)
    height = out.layout.height or 560
    legend_style = _legend_style(out)
    apply_theme(out, title=caption, height=height, legend=legend_style)
    out.update_layout(title=dict(font=dict(size=CAPTION_SIZE, color=CAPTION_COLOR), pad=dict(t=6)))
    if legend_style == "top" and not out.layout.annotations:
        # a 12 px line needs ~22 px, not the 40 px of a full title
        out.update_layout(legend_y=1.0 - 24 / height, margin_t=34)
    return out


def _legend_style(fig: go.Figure) -> str:
    if fig.layout.showlegend is False:
        return "none"
    return "top"


def slide_figure(fig: go.Figure, *, title: str | None, about: dict | None = None,
                 width: int = SLIDE_WIDTH, height: int = SLIDE_HEIGHT) -> go.Figure:
    """A copy of ``fig`` laid out for a 16:9 slide: the title on top, the metadata line under it.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
        A calibviz figure.
    title : str or None
        The figure's title (on screen it is often the page's heading instead).
    about : dict, optional
        Data, model and settings (see :func:`describe`); drawn as the subtitle.
    width, height : int
        Layout size in pixels (the PNG has ``scale`` times more).

    Returns
    -------
    plotly.graph_objects.Figure

    Examples
    --------
    >>> f = slide_figure(apply_theme(go.Figure(go.Scatter(x=[0], y=[0]))), title="ROC",
    ...                  about={"data": "loan", "model": "raw"})
    >>> f.layout.title.text, f.layout.title.subtitle.text, f.layout.width, f.layout.height
    ('ROC', 'data: loan · model: raw', 1600, 900)
    """
    out = go.Figure(copy.deepcopy(fig.to_dict()))
    out = inert_links(out)
    legend_style = _legend_style(out)
    head = title or (out.layout.title.text if out.layout.title and out.layout.title.text else "calibviz figure")
    apply_theme(out, title=head + "<br>", height=height, legend=legend_style)  # "<br>": room for the subtitle
    out.update_layout(width=width, title=dict(text=head, subtitle=dict(text=describe(None, about),
                                                                       font=dict(size=FONT["size"],
                                                                                 color=CAPTION_COLOR))))
    return scale_fonts(out, SLIDE_FONT_FACTOR)


def figure_json(fig: go.Figure) -> str:
    """The figure as Plotly JSON (``plotly.io.read_json`` reads it back): the light download."""
    return pio.to_json(inert_links(fig), validate=False, pretty=False)


def figure_html(fig: go.Figure) -> str:
    """A self-contained interactive HTML file (plotly.js embedded, opens offline)."""
    return inert_links(fig).to_html(include_plotlyjs=True, full_html=True)


@lru_cache(maxsize=1)
def _plotlyjs_size() -> int:
    from plotly.offline import get_plotlyjs

    return len(get_plotlyjs().encode("utf-8"))


def html_size(fig_json: str) -> int:
    """Bytes of :func:`figure_html` without building it: plotly.js plus the figure's JSON plus the page (~1 kB).

    Examples
    --------
    >>> fig = go.Figure(go.Scatter(x=[0, 1], y=[0, 1]))
    >>> abs(html_size(figure_json(fig)) - len(figure_html(fig).encode())) < 2_000
    True
    """
    return _plotlyjs_size() + len(fig_json.encode("utf-8")) + 1_000


def _chromium() -> str | None:
    return (shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
            or shutil.which("chrome"))


def static_export_available() -> bool:
    """Whether PNG/SVG can be rendered here: kaleido installed and a Chrome/Chromium on the PATH."""
    try:
        import kaleido  # noqa: F401
    except ImportError:
        return False
    return _chromium() is not None


_SERVER = {"started": False}


def to_image(fig: go.Figure, fmt: str = "png", *, width: int = SLIDE_WIDTH, height: int = SLIDE_HEIGHT,
             scale: float = SLIDE_SCALE) -> bytes:
    """PNG or SVG bytes of ``fig`` at ``width`` x ``height`` (times ``scale`` for PNG), through kaleido.

    The first call starts kaleido's browser (about 4 s); later calls take
    about 0.5 s. Raises :class:`calibviz.errors.InputError` when no renderer
    is installed (see :func:`static_export_available`).
    """
    from ..errors import InputError

    if fmt not in ("png", "svg"):
        raise InputError(f"image format must be 'png' or 'svg', got {fmt!r}.")
    if not static_export_available():
        raise InputError("static image export needs the kaleido package and a Chrome/Chromium (Debian: "
                         "apt-get install chromium); use the figure's toolbar or the HTML download instead.")
    import kaleido

    if not _SERVER["started"]:
        try:
            kaleido.start_sync_server(silence_warnings=True)
        except RuntimeError:  # already running (started elsewhere in this process)
            pass
        _SERVER["started"] = True
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "kopts ignored if using a server"
        return pio.to_image(fig, format=fmt, width=width, height=height, scale=scale if fmt == "png" else 1,
                            validate=False)


def png_metadata_text(png: bytes) -> dict:
    """The text chunks (tEXt and uncompressed iTXt) of a PNG, keyword -> text.

    Examples
    --------
    >>> png_metadata_text(with_png_text(_tiny_png(), {"Title": "ROC · α = 0.05"}))
    {'Title': 'ROC · α = 0.05'}
    """
    import struct

    out, pos = {}, 8
    while pos + 8 <= len(png):
        length, kind = struct.unpack(">I4s", png[pos:pos + 8])
        data = png[pos + 8:pos + 8 + length]
        if kind == b"tEXt":
            key, _, text = data.partition(b"\0")
            out[key.decode("latin-1")] = text.decode("latin-1")
        elif kind == b"iTXt":
            key, _, rest = data.partition(b"\0")
            if rest[:1] == b"\0":  # uncompressed
                _lang, _, rest = rest[2:].partition(b"\0")
                _translated, _, text = rest.partition(b"\0")
                out[key.decode("latin-1")] = text.decode("utf-8")
        pos += 12 + length
    return out


def with_png_text(png: bytes, texts: dict) -> bytes:
    """``png`` with UTF-8 text chunks (iTXt: e.g. Title, Description, Software) after the header chunk.

    Image viewers, slide tools and file managers show them; tests read them
    back with :func:`png_metadata_text`.
    """
    import struct
    import zlib

    if png[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    ihdr_end = 8 + 12 + struct.unpack(">I", png[8:12])[0]
    chunks = b""
    for key, text in texts.items():
        data = (key.encode("latin-1", "replace")[:79] + b"\0" + b"\0\0" + b"\0" + b"\0"
                + str(text).encode("utf-8"))
        chunks += struct.pack(">I", len(data)) + b"iTXt" + data + struct.pack(">I", zlib.crc32(b"iTXt" + data))
    return png[:ihdr_end] + chunks + png[ihdr_end:]


def _tiny_png() -> bytes:
    """A valid 1x1 PNG (for the doctest)."""
    import struct
    import zlib

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\0\0")) + chunk(b"IEND", b""))


def slide_png(fig: go.Figure, *, title: str | None, about: dict | None = None) -> bytes:
    """The slide PNG of ``fig``: :func:`slide_figure` rendered at 3200x1800, title and metadata also in tEXt."""
    png = to_image(slide_figure(fig, title=title, about=about), "png")
    return with_png_text(png, {"Title": title or "", "Description": describe(title, about),
                               "Software": "calibviz"})


def slide_svg(fig: go.Figure, *, title: str | None, about: dict | None = None) -> bytes:
    """The slide SVG of ``fig`` (vector; title and metadata as text in the drawing)."""
    return to_image(slide_figure(fig, title=title, about=about), "svg")
