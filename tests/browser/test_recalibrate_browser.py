"""Real browser: the Recalibrate page through the sidebar and by deep link, its figures and its map download."""
from __future__ import annotations

import json

import numpy as np
import pytest

import calibviz as cv
from calibviz.recalibration import from_dict

from .conftest import screenshot, wait_idle

pytestmark = pytest.mark.browser


def test_recalibrate_page_renders_and_exports_the_map(server, page, tmp_path):
    page.goto(f"{server.url}/?boot=0")
    wait_idle(page)
    page.get_by_test_id("stSidebar").get_by_role("link", name="Recalibrate").click()
    page.wait_for_url("**/Recalibrate**", timeout=60_000)
    wait_idle(page, timeout=120_000)
    assert page.get_by_test_id("stException").count() == 0
    page.wait_for_function("document.querySelectorAll('.js-plotly-plot').length >= 3", timeout=60_000)
    names = json.loads(page.evaluate(
        """() => JSON.stringify(Array.from(document.querySelectorAll('.js-plotly-plot'))
                 .map(el => (el.layout && el.layout.title && el.layout.title.text) || ''))"""))
    assert any("Fitted recalibration maps" in n for n in names), names
    assert page.get_by_text("Metrics before, after and the difference").count() == 1
    screenshot(page, "page_Recalibrate_hospital_readmission")
    with page.expect_download(timeout=60_000) as info:
        page.get_by_role("button", name="Map as JSON").click()
    path = tmp_path / "map.json"
    info.value.save_as(path)
    m = from_dict(json.loads(path.read_text()))
    d = cv.load_demo("hospital_readmission")
    np.testing.assert_allclose(m.predict(d.y_prob[:50]),
                               cv.recalibration.get_recalibrator("platt").fit(d.y_prob, d.y).predict(d.y_prob[:50]))


def test_recalibrate_deep_link_on_a_fresh_server(fresh_server, page):
    page.goto(f"{fresh_server.url}/Recalibrate?data=cifar10_resnet50&boot=0")
    wait_idle(page, timeout=120_000)
    assert page.get_by_test_id("stException").count() == 0
    page.wait_for_function("document.querySelectorAll('.js-plotly-plot').length >= 2", timeout=60_000)
    assert "Confidence" in page.inner_text("body") or "confidence" in page.inner_text("body")
    screenshot(page, "page_Recalibrate_cifar10_resnet50")
