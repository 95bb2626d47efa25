"""Real browser: the CORP mode of the Reliability page and the triptych of the Compare page."""
from __future__ import annotations

import json

import pytest

from .conftest import screenshot, wait_idle

pytestmark = pytest.mark.browser


def _trace_names(page) -> list[list[str]]:
    return json.loads(page.evaluate(
        """() => JSON.stringify(Array.from(document.querySelectorAll('.js-plotly-plot')).map(
                p => p.data.map(t => t.name || '')))"""))


def test_corp_mode_by_click_and_by_link(server, page):
    page.goto(f"{server.url}/Reliability?data=hospital_readmission")
    wait_idle(page)
    page.get_by_test_id("stRadio").get_by_text("CORP (isotonic, no bins)").click()
    page.wait_for_function("() => Array.from(document.querySelectorAll('.js-plotly-plot')).some("
                           "p => p.data.some(t => t.name === 'CORP curve (PAV)'))", timeout=60_000)
    wait_idle(page)
    assert page.get_by_test_id("stException").count() == 0
    names = _trace_names(page)[0]
    assert "CORP curve (PAV)" in names and any(n.startswith("Consistency band") for n in names)
    assert "diagram=corp" in page.url
    assert "Miscalibration costs" in page.inner_text("body")
    screenshot(page, "corp_reliability_hospital")
    # the shared link opens the same view in a new page
    other = page.context.new_page()
    other.goto(f"{server.url}/Reliability?data=cifar10_resnet50&diagram=corp&corp_conf=true")
    wait_idle(other)
    names = _trace_names(other)[0]
    assert "CORP curve (PAV)" in names and any(n.startswith("Spread (") for n in names)
    screenshot(other, "corp_reliability_cifar_confidence")
    other.close()


def test_compare_triptych(server, page):
    page.goto(f"{server.url}/Compare?data=loan_recalibration&murphy=true")
    wait_idle(page)
    assert page.get_by_test_id("stException").count() == 0
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length >= 4", timeout=60_000)
    names = [n for fig in _trace_names(page) for n in fig]
    assert "raw" in names and "recalibrated" in names
    assert any(n.startswith("raw: AUC") for n in names)
    body = page.inner_text("body")
    assert "gains mainly on calibration" in body
    page.get_by_text("Calibration vs discrimination: which model is better, and why").scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    page.screenshot(path=str(screenshot(page, "compare_triptych_loan").with_name("compare_triptych_loan_view.png")))
