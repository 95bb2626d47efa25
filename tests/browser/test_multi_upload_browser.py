"""Several files at once in a real browser (#14 part 3): one model per file, named after it."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from .conftest import StreamlitServer, screenshot, wait_idle

pytestmark = pytest.mark.browser


@pytest.fixture
def store_server(tmp_path_factory):
    s = StreamlitServer(env={"CALIBVIZ_STORE_DIR": str(tmp_path_factory.mktemp("store"))})
    yield s
    s.stop()


def _metric(page, label: str) -> str:
    box = page.get_by_test_id("stMetric").filter(has_text=label).first
    return box.get_by_test_id("stMetricValue").inner_text()


def test_two_files_are_two_models(store_server, page, tmp_path):
    rng = np.random.default_rng(4)
    n = 400
    p = rng.uniform(0.02, 0.98, n)
    y = rng.binomial(1, p)
    ids = np.arange(n) + 10
    lr, rf = tmp_path / "logreg.csv", tmp_path / "forest.csv"
    pd.DataFrame({"id": ids, "y_true": y, "proba": p}).to_csv(lr, index=False)
    order = rng.permutation(n)  # the second file in another order: rows are matched by id
    pd.DataFrame({"id": ids[order], "y_true": y[order], "proba": np.clip(p + 0.1, 0, 1)[order]}).to_csv(rf, index=False)
    page.goto(store_server.url)
    wait_idle(page)
    uploader = page.get_by_test_id("stFileUploader").filter(has_text="Or upload predictions")
    uploader.get_by_test_id("stFileUploaderDropzoneInput").set_input_files([str(lr), str(rf)])
    page.wait_for_function(
        """() => [...document.querySelectorAll('[data-testid="stMetricValue"]')].some(e => e.innerText === '400')""",
        timeout=90_000)
    wait_idle(page)
    assert page.get_by_test_id("stAlertContentError").count() == 0
    assert _metric(page, "Rows") == "400"
    body = page.get_by_test_id("stApp").inner_text()
    assert "logreg.csv + forest.csv" in body
    assert "Compare the 2 models" in body
    screenshot(page, "home_two_files")
    # the sidebar's model picker offers both files' models
    sidebar = page.get_by_test_id("stSidebar").inner_text()
    assert "logreg" in sidebar
