"""Real browser: every page renders its figures, controls change them, shared links and downloads work."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import calibviz as cv

from .conftest import screenshot, wait_idle

pytestmark = pytest.mark.browser

PAGES = [("Reliability", "/Reliability"), ("Test-based (TCE)", "/Test_based"), ("Multiclass", "/Multiclass"),
         ("Variables", "/Variables"), ("Compare", "/Compare")]


def _plot_data(page, index: int = 0) -> list:
    """Traces of the index-th Plotly chart as the browser holds them."""
    page.wait_for_function(f"document.querySelectorAll('.js-plotly-plot').length > {index}", timeout=60_000)
    return json.loads(page.evaluate(
        f"""() => JSON.stringify(document.querySelectorAll('.js-plotly-plot')[{index}].data.map(
                t => ({{type: t.type, name: t.name, x: t.x ? Array.from(t.x).slice(0, 200) : null}})))"""))


def _no_horizontal_scroll(page) -> bool:
    return page.evaluate("""() => { const m = document.querySelector('[data-testid="stMain"]') || document.body;
                                    return m.scrollWidth <= m.clientWidth + 2; }""")


@pytest.mark.parametrize("demo", ["hospital_readmission", "cifar10_resnet50", "loan_recalibration"])
def test_every_page_through_the_sidebar(server, page, demo):
    page.goto(f"{server.url}/?data={demo}")
    wait_idle(page)
    for label, path in PAGES:
        page.get_by_test_id("stSidebarNav").get_by_text(label, exact=True).click() \
            if page.get_by_test_id("stSidebarNav").count() else \
            page.get_by_test_id("stSidebar").get_by_role("link", name=label).click()
        page.wait_for_url(f"**{path}**", timeout=60_000)
        wait_idle(page)
        assert page.get_by_test_id("stException").count() == 0, f"{label} raised on {demo}"
        charts = page.locator(".js-plotly-plot").count()
        info = page.get_by_test_id("stAlertContentInfo").all_inner_texts()
        assert charts > 0 or any("does not apply" in t for t in info), f"{label} shows nothing on {demo}"
        assert _no_horizontal_scroll(page), f"{label} scrolls horizontally at 1366x768 on {demo}"
        screenshot(page, f"page_{path.strip('/')}_{demo}")


def test_upload_then_reliability_uses_the_upload(server, page, tmp_path):
    page.goto(server.url)
    wait_idle(page)
    rng = np.random.default_rng(2)
    p = rng.uniform(size=800)
    csv = tmp_path / "uploaded.csv"
    pd.DataFrame({"label": rng.binomial(1, p), "p": p}).to_csv(csv, index=False)
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(csv))
    page.wait_for_function("() => document.body.innerText.includes('uploaded.csv')", timeout=60_000)
    wait_idle(page)
    page.get_by_test_id("stSidebar").get_by_role("link", name="Reliability").click()
    page.wait_for_url("**/Reliability**")
    wait_idle(page)
    assert "800 rows" in page.get_by_test_id("stSidebar").inner_text()
    assert page.locator(".js-plotly-plot").count() >= 1


def test_changing_a_control_changes_the_figure(server, page):
    page.goto(f"{server.url}/Reliability?data=hospital_readmission&bins=15")
    wait_idle(page)
    before = _plot_data(page)
    slider = page.get_by_test_id("stSidebar").get_by_role("slider").first
    slider.focus()
    for _ in range(5):
        slider.press("ArrowLeft")
    # Key presses that land during a rerun can be dropped: any new bin count will do.
    page.wait_for_function("() => /bins=(?!15\\b)\\d+/.test(window.location.search)", timeout=60_000)
    wait_idle(page)
    after = _plot_data(page)
    assert before != after
    screenshot(page, "reliability_bins_changed")


def test_shared_link_on_a_fresh_server(fresh_server, page):
    page.goto(f"{fresh_server.url}/Test_based?data=cifar10_resnet50&alpha=0.01")
    wait_idle(page)
    d = cv.load_demo("cifar10_resnet50")
    v = cv.reduce.confidence(d.y, d.probs)
    expected = f"{cv.metrics.tce(v.y, v.p, alpha=0.01):.2f}%"  # calibviz.panel.format_value, percent
    metric = page.get_by_test_id("stMetric").filter(has_text="TCE").get_by_test_id("stMetricValue").inner_text()
    assert metric == expected
    assert "alpha=0.01" in page.url and "data=cifar10_resnet50" in page.url
    screenshot(page, "shared_link_test_based")


def test_download_per_bin_csv(server, page):
    page.goto(f"{server.url}/Reliability?data=hospital_readmission")
    wait_idle(page)
    page.get_by_role("tab", name="Per-bin table").click()
    with page.expect_download(timeout=60_000) as info:
        page.get_by_role("button", name="Table as CSV").click()
    path = info.value.path()
    table = pd.read_csv(path)
    d = cv.load_demo("hospital_readmission")
    expected = cv.reliability_table(d.y, d.y_prob, test=None)  # the Reliability page leaves TCE to its page
    assert list(table.columns) == list(expected.columns)
    np.testing.assert_allclose(table["obs_rate"], expected["obs_rate"], rtol=1e-9)
