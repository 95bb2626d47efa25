"""Real browser: a file opened by path on the Large data page (CALIBVIZ_SCAN_ROOTS set on the server) becomes the
data of every page; the Reliability page then draws the file's reliability diagram, and its address, opened in
another browser, draws the same diagram from the same file."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import calibviz as cv
from calibviz.binning import Uniform

from .conftest import StreamlitServer, screenshot, wait_idle

pytestmark = pytest.mark.browser


@pytest.fixture
def scan_server(tmp_path):
    """A server of its own that may read one directory (and nothing else) by path."""
    root = tmp_path / "logs"
    root.mkdir()
    rng = np.random.default_rng(4)
    p = rng.uniform(size=5000)
    pd.DataFrame({"y": (rng.uniform(size=5000) < p ** 2).astype(int), "p": p}).to_parquet(root / "preds.parquet")
    s = StreamlitServer(env={"CALIBVIZ_SCAN_ROOTS": str(root)})
    yield s, root
    s.stop()


def _first_traces(page) -> list[dict]:
    page.wait_for_function("document.querySelectorAll('.js-plotly-plot').length > 0", timeout=60_000)
    return json.loads(page.evaluate(
        """() => JSON.stringify(document.querySelectorAll('.js-plotly-plot')[0].data.map(
                t => ({mode: t.mode, y: t.y ? Array.from(t.y) : null})))"""))


def test_open_a_file_by_path_and_see_its_reliability_diagram(scan_server, page, browser):
    server, root = scan_server
    path = root / "preds.parquet"
    page.goto(f"{server.url}/Large_data")
    wait_idle(page)
    page.get_by_role("textbox", name="Path, glob or directory").fill(str(path))
    page.get_by_test_id("stBaseButton-secondaryFormSubmit").click()  # the form's Open
    page.get_by_role("button", name="Analyse on every page").click(timeout=60_000)
    wait_idle(page)
    page.get_by_test_id("stSidebar").get_by_role("link", name="Reliability").click()
    page.wait_for_url("**/Reliability**", timeout=60_000)
    wait_idle(page)
    assert page.get_by_test_id("stException").count() == 0
    sidebar = page.get_by_test_id("stSidebar").inner_text()
    assert "opened file" in sidebar and "preds.parquet" in sidebar.replace("\u200b", "")
    traces = _first_traces(page)
    observed = next(t for t in traces if t["mode"] == "lines+markers")
    want = cv.scan(str(path)).reliability_table(Uniform(15), test=None)["obs_rate"]
    np.testing.assert_allclose(observed["y"], want, rtol=0, atol=5e-7)  # figure JSON: 6 decimals
    screenshot(page, "scan_reliability")
    # the address is a link to this view: another browser opens the file again and draws the same diagram
    page.wait_for_url("**open=*", timeout=30_000)
    assert "analyse=1" in page.url
    other = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    try:
        other.goto(page.url)
        wait_idle(other)
        assert other.get_by_test_id("stException").count() == 0
        assert "opened file" in other.get_by_test_id("stSidebar").inner_text()
        assert _first_traces(other) == traces
        screenshot(other, "scan_reliability_link")
    finally:
        other.context.close()
