"""Real browser at 1366x768: every main figure fits the screen with its axis titles, legends and titles apart;
slide export carries the title, data and settings; presentation mode hides the sidebar.

Geometry is read from Plotly's SVG (bounding boxes of ``.infolayer`` titles, the legend, the figure), so a
clipped axis title or a legend running over the figure's title fails here, whatever the JSON says.
"""
from __future__ import annotations

import pytest

from .conftest import ARTIFACTS, screenshot, wait_idle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

VIEW_W, VIEW_H = 1366, 768
#: Streamlit's header bar stays on top of the page when it scrolls (compact on short screens: 2.25rem).
HEADER = 40

_GEOMETRY = """(el) => {
  const box = e => { const b = e.getBoundingClientRect(); return {l: b.left, t: b.top, r: b.right, b: b.bottom}; };
  const texts = [...el.querySelectorAll('.infolayer text')].filter(t => /(^|\\s)[xy]\\d*title$/.test(t.getAttribute('class') || '') && t.textContent.trim());
  const legend = el.querySelector('.infolayer .legend');
  const title = el.querySelector('.infolayer .gtitle');
  return {fig: box(el), axes: texts.map(t => ({cls: t.getAttribute('class'), text: t.textContent, ...box(t)})),
          legend: legend ? box(legend) : null, title: title && title.textContent.trim() ? box(title) : null};
}"""


def _inside(inner, outer, slack=1.0) -> bool:
    return (inner["l"] >= outer["l"] - slack and inner["r"] <= outer["r"] + slack
            and inner["t"] >= outer["t"] - slack and inner["b"] <= outer["b"] + slack)


def _overlap(a, b) -> bool:
    return not (a["r"] <= b["l"] or b["r"] <= a["l"] or a["b"] <= b["t"] or b["b"] <= a["t"])


def _check_figures(page, where: str, count: int | None = None) -> int:
    """Scroll each figure under the header; assert it fits the screen and shows its axis titles, legend and title
    inside the figure and the viewport, the legend clear of the title. Returns the number of figures checked."""
    plots = page.locator(".js-plotly-plot")
    n = plots.count() if count is None else min(count, plots.count())
    assert n > 0, f"{where}: no figure"
    viewport = {"l": 0, "t": HEADER, "r": VIEW_W, "b": VIEW_H}   # below the header bar
    for i in range(n):
        plot = plots.nth(i)
        if not plot.is_visible():  # in a closed tab
            continue
        # figure's top just under the header bar; Streamlit scrolls its main block, not the window
        plot.evaluate("""el => { el.scrollIntoView({block: 'start'});
            let s = el.parentElement; while (s && !(s.scrollHeight > s.clientHeight + 1
                && ['auto', 'scroll'].includes(getComputedStyle(s).overflowY))) s = s.parentElement;
            (s || document.scrollingElement).scrollBy(0, -45); }""")
        page.wait_for_timeout(200)
        g = plot.evaluate(_GEOMETRY)
        fig = g["fig"]
        assert fig["b"] - fig["t"] <= VIEW_H - HEADER, f"{where} #{i}: {fig['b'] - fig['t']:.0f} px high"
        assert fig["r"] <= VIEW_W and fig["l"] >= 0, f"{where} #{i}: wider than the screen"
        # (a ranking's y axis is its category labels, without a title)
        assert g["axes"], f"{where} #{i}: no axis title"
        for a in g["axes"]:
            assert _inside(a, fig), f"{where} #{i}: axis title {a['text']!r} cut by the figure: {a} vs {fig}"
            assert _inside(a, viewport), f"{where} #{i}: axis title {a['text']!r} off screen: {a}"
        if g["legend"]:
            assert _inside(g["legend"], fig, slack=2), f"{where} #{i}: legend cut: {g['legend']} vs {fig}"
            assert _inside(g["legend"], viewport, slack=2), f"{where} #{i}: legend off screen: {g['legend']}"
            if g["title"]:
                assert not _overlap(g["legend"], g["title"]), f"{where} #{i}: legend over the title"
    return n


def _downloads(page) -> None:
    """Open the first figure's download popover."""
    opener = page.get_by_test_id("stPopover").first.get_by_role("button").first
    opener.scroll_into_view_if_needed()
    opener.click()
    page.get_by_role("button", name="HTML ·").first.wait_for(timeout=30_000)


def _open(page, server, path: str) -> None:
    page.goto(f"{server.url}{path}")
    wait_idle(page, 240_000)
    page.wait_for_selector(".js-plotly-plot", timeout=60_000)
    page.wait_for_timeout(500)


@pytest.mark.parametrize("path", [
    "/Reliability?data=hospital_readmission",
    "/Reliability?data=hospital_readmission&scheme=equal_mass&diagram=corp",
    "/Reliability?data=cifar10_resnet50",
    "/Test_based?data=hospital_readmission",
    "/Multiclass?data=cifar10_resnet50",
    "/Variables?data=hospital_readmission",
    "/Compare?data=loan_recalibration",
    "/Recalibrate?data=hospital_readmission",
])
def test_main_figures_fit_1366x768(server, page, path):
    _open(page, server, path)
    assert page.viewport_size == {"width": VIEW_W, "height": VIEW_H}
    n = _check_figures(page, path)
    screenshot(page, "layout_" + path.strip("/").replace("?", "_").replace("&", "_").replace("=", "-"))
    assert n >= 1


def test_reliability_diagram_x_axis_on_the_first_screen(server, page):
    """At first sight, without scrolling: the whole reliability diagram down to its x axis title."""
    _open(page, server, "/Reliability?data=hospital_readmission")
    g = page.locator(".js-plotly-plot").first.evaluate(_GEOMETRY)
    bottom = max(a["b"] for a in g["axes"])
    assert bottom <= VIEW_H, f"x axis title at {bottom:.0f} px, below the 768 px fold"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "layout_reliability_first_screen.png"))


def test_slide_png_and_svg_carry_title_data_and_settings(server, page):
    from calibviz.figures.export import png_metadata_text

    _open(page, server, "/Reliability?data=hospital_readmission&scheme=equal_mass&bins=12")
    _downloads(page)
    page.get_by_role("button", name="PNG / SVG for slides").first.click()
    png_button = page.get_by_role("button", name="PNG ·").first
    for _ in range(180):  # the first image starts kaleido's browser: seconds on a busy machine
        if png_button.is_visible():
            break
        if not page.get_by_role("button", name="HTML ·").first.is_visible():  # the popover closed on a rerun
            _downloads(page)
        page.wait_for_timeout(500)
    png_button.wait_for(timeout=10_000)
    label = png_button.inner_text()
    with page.expect_download() as dl:
        png_button.click()
    png = open(dl.value.path(), "rb").read()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert (width, height) == (3200, 1800)
    # the button said the file's size
    from calibviz.ui.blocks import file_size

    assert file_size(len(png)) in label
    text = png_metadata_text(png)
    assert text["Title"].startswith("Reliability diagram")
    assert "Hospital readmission" in text["Description"] and "equal mass, 12 bins" in text["Description"]
    with page.expect_download() as dl:
        page.get_by_role("button", name="SVG ·").first.click()
    svg = open(dl.value.path(), encoding="utf-8").read()
    # the SVG is drawn from the same slide layout as the PNG: its text is the image's text
    assert "Reliability diagram" in svg and "Hospital readmission" in svg and "equal mass, 12 bins" in svg
    assert 'width="1600"' in svg and 'height="900"' in svg


def test_html_and_json_downloads_say_their_size(server, page):
    import json

    from calibviz.ui.blocks import file_size

    _open(page, server, "/Reliability?data=hospital_readmission")
    _downloads(page)
    html_button = page.get_by_role("button", name="HTML ·").first
    json_button = page.get_by_role("button", name="JSON ·").first
    with page.expect_download() as dl:
        json_button.click()
    spec = open(dl.value.path(), "rb").read()
    assert file_size(len(spec)) in json_button.inner_text()
    fig = json.loads(spec)
    assert fig["data"] and fig["layout"]["meta"]["calibviz"]["title"] == "Reliability diagram"
    assert len(spec) < 1_000_000  # the light version: no plotly.js
    with page.expect_download() as dl:
        html_button.click()
    html = open(dl.value.path(), "rb").read()
    stated = html_button.inner_text().split("·")[1].strip()
    assert abs(float(stated.split()[0]) - len(html) / 1e6) <= 0.1 and stated.endswith("MB")


def test_presentation_mode_hides_the_sidebar_and_enlarges(server, page):
    _open(page, server, "/Reliability?data=hospital_readmission")
    normal = page.locator(".js-plotly-plot").first.bounding_box()
    assert page.get_by_test_id("stSidebar").is_visible()
    _open(page, server, "/Reliability?data=hospital_readmission&present=1")
    assert not page.get_by_test_id("stSidebar").is_visible()
    fig = page.locator(".js-plotly-plot").first
    box = fig.bounding_box()
    assert box["width"] > 1.5 * normal["width"]          # the figure takes the full width
    assert box["height"] <= VIEW_H - HEADER               # one figure per screen
    tick = fig.evaluate("el => parseFloat(el.querySelector('.ytick text').style.fontSize)")
    assert tick >= 18
    # the plain-language reading sits under the figure, not beside it
    reading = page.get_by_text("In plain words").first.bounding_box()
    assert reading["y"] > box["y"] + box["height"] - 5
    _check_figures(page, "presentation", count=1)
    screenshot(page, "layout_presentation")
    page.get_by_role("button", name="Leave presentation mode").click()
    wait_idle(page)
    assert page.get_by_test_id("stSidebar").is_visible()
    assert "present" not in page.url


def test_a_narrow_window_stacks_the_diagram_over_its_reading(server, page):
    """At 1024 px with the sidebar open the main area is ~640 px: the diagram beside "In plain words" got ~330 px
    and a legend a third of its height (a walk-through). There the columns stack: the diagram takes the width and
    the reading sits under it; at 1366 px they stay side by side."""
    page.set_viewport_size({"width": 1024, "height": 768})
    try:
        _open(page, server, "/Reliability?data=hospital_readmission")
        assert page.get_by_test_id("stSidebar").is_visible()
        fig = page.locator(".js-plotly-plot").first.bounding_box()
        main = page.get_by_test_id("stMainBlockContainer").bounding_box()
        assert fig["width"] >= 0.85 * (main["width"] - 2 * 48), (fig, main)
        reading = page.get_by_text("In plain words").first.bounding_box()
        assert reading["y"] > fig["y"] + fig["height"] - 5
        _check_figures(page, "1024 px", count=1)
        screenshot(page, "layout_reliability_1024")
    finally:
        page.set_viewport_size({"width": VIEW_W, "height": VIEW_H})
    _open(page, server, "/Reliability?data=hospital_readmission")
    fig = page.locator(".js-plotly-plot").first.bounding_box()
    reading = page.get_by_text("In plain words").first.bounding_box()
    assert reading["x"] > fig["x"] + fig["width"] - 5  # beside it
