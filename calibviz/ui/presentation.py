"""How pages sit on a screen: a compact header on short screens (1366x768 laptops and projectors) and the
presentation mode.

Presentation mode (``present=1`` in the address, or the sidebar's toggle): for
a projector in a review meeting. The sidebar is hidden, text and figure fonts
are larger, side-by-side columns stack so each figure takes the full width and
about one screen of height, with its plain-language reading under it. A button
at the top of the page leaves the mode (the sidebar is hidden, so its toggle
is not reachable there).

:func:`screen_layout` is called once per page run by
:func:`calibviz.ui.sidebar.page_setup`; :func:`present_figure` is applied by
:func:`calibviz.ui.blocks.show_figure` to every figure.
"""
from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from ..figures.theme import scale_fonts
from .settings import set_setting, settings

__all__ = ["screen_layout", "presenting", "present_figure", "PRESENT_FONT_FACTOR", "PRESENT_HEIGHT"]

#: Figure fonts in presentation mode: 1.3x (14 -> 18 px ticks, 16 -> 21 px axis titles).
PRESENT_FONT_FACTOR = 1.3
#: Figure height in presentation mode: a 768 px projector minus the page's top bar and the figure's heading.
PRESENT_HEIGHT = 640

# Short screens (<= 820 px high, e.g. 1366x768): a lower header band and a smaller page title, so that a page's
# main figure starts higher and its x axis is on the first screen. Taller screens keep Streamlit's layout.
# Narrow windows (<= 1200 px wide) stack a figure's columns, as the presentation mode does.
_COMPACT_CSS = """
<style>
@media (max-height: 820px) {
  [data-testid="stHeader"] { height: 2.25rem; min-height: 2.25rem; }
  [data-testid="stMainBlockContainer"] { padding-top: 1.4rem !important; }
  [data-testid="stMainBlockContainer"] h1 { font-size: 1.9rem; padding: 0.1rem 0 0.4rem 0; }
  [data-testid="stMainBlockContainer"] h3 { font-size: 1.3rem; padding: 0.2rem 0 0.3rem 0; }
}
/* Narrow windows (a 1024 px laptop or projector with the sidebar open leaves ~640 px): a figure beside text got
   ~330 px, its legend a third of its height (a walk-through); such columns stack, the figure over its reading. */
@media (max-width: 1200px) {
  [data-testid="stMainBlockContainer"] [data-testid="stHorizontalBlock"]:has([data-testid="stPlotlyChart"]) {
    flex-direction: column; }
  [data-testid="stMainBlockContainer"] [data-testid="stHorizontalBlock"]:has([data-testid="stPlotlyChart"])
    > [data-testid="stColumn"] { width: 100% !important; flex: 1 1 100% !important; }
}
</style>
"""

_PRESENT_CSS = """
<style>
section[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"],
[data-testid="stExpandSidebarButton"], [data-testid="stSidebarCollapseButton"] { display: none !important; }
[data-testid="stMainBlockContainer"] { max-width: 100% !important; padding-left: 2.5rem !important;
  padding-right: 2.5rem !important; }
[data-testid="stMainBlockContainer"] p, [data-testid="stMainBlockContainer"] li { font-size: 1.3rem; }
[data-testid="stMainBlockContainer"] [data-testid="stCaptionContainer"] p { font-size: 1.1rem; }
/* columns stack: one figure per screen width, its plain-language reading under it */
[data-testid="stMainBlockContainer"] [data-testid="stHorizontalBlock"]:has([data-testid="stPlotlyChart"]) {
  flex-direction: column; }
[data-testid="stMainBlockContainer"] [data-testid="stHorizontalBlock"]:has([data-testid="stPlotlyChart"])
  > [data-testid="stColumn"] { width: 100% !important; flex: 1 1 100% !important; }
[data-testid="stPlotlyChart"] { scroll-margin-top: 2.5rem; }
html { scroll-snap-type: y proximity; }
[data-testid="stPlotlyChart"] { scroll-snap-align: start; }
</style>
"""


def presenting() -> bool:
    """Whether the presentation mode is on (the ``present`` setting, from the URL or the toggle)."""
    return bool(settings().get("present"))


def _leave() -> None:
    set_setting("present", False)


def _toggle() -> None:
    set_setting("present", bool(st.session_state.get("w_present")))


def screen_layout() -> bool:
    """The page's screen layout: compact header on short screens, the presentation toggle in the sidebar and,
    when presenting, the presentation styles and a button to leave. Returns whether the mode is on."""
    st.markdown(_COMPACT_CSS, unsafe_allow_html=True)
    on = presenting()
    if on:
        st.markdown(_PRESENT_CSS, unsafe_allow_html=True)
        st.button("Leave presentation mode", on_click=_leave, key="cv_leave_present", icon=":material/close:",
                  type="tertiary", help="Back to the sidebar and the normal layout (present=1 in the address "
                                        "turns the mode on).")
    else:
        with st.sidebar:
            st.divider()
            st.session_state["w_present"] = False
            st.toggle("Presentation mode", key="w_present", on_change=_toggle,
                      help="For a projector: no sidebar, larger fonts, one figure per screen with its reading "
                           "under it. The address gets present=1, so a link opens in this mode.")
    return on


def present_figure(fig: go.Figure, *, height: int = PRESENT_HEIGHT) -> go.Figure:
    """A copy of ``fig`` for the projector: fonts :data:`PRESENT_FONT_FACTOR` times larger, ``height`` pixels
    high (never lower than the figure was: a tall grid stays tall).

    Examples
    --------
    >>> from calibviz.figures.theme import apply_theme
    >>> f = present_figure(apply_theme(go.Figure(go.Scatter(x=[0], y=[0])), height=500))
    >>> f.layout.height, f.layout.xaxis.tickfont.size
    (640, 18.2)
    """
    out = go.Figure(fig)
    old = out.layout.height or height
    out.update_layout(height=max(height, old))
    if out.layout.legend and out.layout.legend.yref == "container" and out.layout.legend.y is not None:
        # the legend sits a fixed number of pixels under the title: keep those pixels at the new height
        out.update_layout(legend_y=1.0 - (1.0 - out.layout.legend.y) * old / out.layout.height)
    return scale_fonts(out, PRESENT_FONT_FACTOR)
