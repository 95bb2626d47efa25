"""Real browser: the home page opens on the demo, accepts an uploaded CSV, rejects a bad one."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from .conftest import screenshot, wait_idle

pytestmark = pytest.mark.browser


def _metric(page, label: str) -> str:
    return page.get_by_test_id("stMetric").filter(has_text=label).get_by_test_id("stMetricValue").inner_text()


def test_upload_csv_is_accepted(server, page, tmp_path):
    page.goto(server.url)
    wait_idle(page)
    assert _metric(page, "Rows") == "20,000"
    screenshot(page, "home_demo")
    rng = np.random.default_rng(1)
    p = rng.uniform(size=500)
    csv = tmp_path / "my_model.csv"
    pd.DataFrame({"label": rng.binomial(1, p), "p": p, "income": rng.normal(size=500)}).to_csv(csv, index=False)
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(csv))
    page.wait_for_function(
        """() => [...document.querySelectorAll('[data-testid="stMetricValue"]')].some(e => e.innerText === '500')""",
        timeout=60_000)
    wait_idle(page)
    assert _metric(page, "Rows") == "500"
    assert page.get_by_test_id("stAlertContentError").count() == 0
    screenshot(page, "home_uploaded")


def test_bad_upload_shows_error_and_keeps_data(server, page, tmp_path):
    page.goto(server.url)
    wait_idle(page)
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(bad))
    page.get_by_test_id("stAlertContentError").wait_for(timeout=60_000)
    wait_idle(page)
    assert "no label column" in page.get_by_test_id("stAlertContentError").inner_text()
    assert _metric(page, "Rows") == "20,000"
    screenshot(page, "home_bad_upload")
