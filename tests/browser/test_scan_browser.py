"""Real browser: a file opened by path on the Large data page (CALIBVIZ_SCAN_ROOTS set on the server) becomes the
data of every page; the Reliability page then draws the file's reliability diagram."""
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


def test_open_a_file_by_path_and_see_its_reliability_diagram(scan_server, page):
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
    page.wait_for_function("document.querySelectorAll('.js-plotly-plot').length > 0", timeout=60_000)
    traces = json.loads(page.evaluate(
        """() => JSON.stringify(document.querySelectorAll('.js-plotly-plot')[0].data.map(
                t => ({mode: t.mode, y: t.y ? Array.from(t.y) : null})))"""))
    observed = next(t for t in traces if t["mode"] == "lines+markers")
    want = cv.scan(str(path)).reliability_table(Uniform(15), test=None)["obs_rate"]
    np.testing.assert_allclose(observed["y"], want, rtol=0, atol=5e-7)  # figure JSON: 6 decimals
    screenshot(page, "scan_reliability")
