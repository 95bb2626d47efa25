"""Issue #16 part 5: text from data or the address bar is shown, never rendered as Markdown links/images."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from calibviz.cli import main

from .helpers import app, assert_clean, upload

pytestmark = [pytest.mark.apptest, pytest.mark.usefixtures("clear_streamlit_caches")]

IMAGE = "![t](http://127.0.0.1:9/x.png)"
LINK = "[click](http://127.0.0.1:9/)"


def _frame(n=400):
    rng = np.random.default_rng(0)
    p = rng.uniform(0.05, 0.95, n)
    return pd.DataFrame({"label": (rng.random(n) < p).astype(int), "p": p,
                         LINK: rng.normal(size=n), "ward": np.where(np.arange(n) % 2, IMAGE, "=1+2")})


def _rendered_text(at) -> list[str]:
    elements = [*at.markdown, *at.caption, *at.info, *at.warning, *at.error, *at.success]
    return [e.value for e in elements]


def _assert_inert(texts):
    for t in texts:
        assert "](http" not in t, t  # an unescaped ](http would be a link or an image


def test_names_and_levels_are_inert_on_the_pages():
    at = app().run()
    upload(at, f"{LINK}.csv", _frame().to_csv(index=False).encode())
    assert_clean(at)
    _assert_inert(_rendered_text(at))
    assert any(r"\[click\]\(http\:" in t for t in _rendered_text(at))  # the name is shown, escaped
    at.switch_page("pages/4_Variables.py").run()
    assert_clean(at)
    _assert_inert(_rendered_text(at))
    at.selectbox[0].set_value("ward").run()
    assert_clean(at)
    _assert_inert(_rendered_text(at))


def test_url_values_are_inert_in_the_warning():
    at = app()
    at.query_params["bins"] = IMAGE
    at.run()
    assert_clean(at)
    assert at.warning
    _assert_inert(_rendered_text(at))


def test_csv_output_is_spreadsheet_safe(tmp_path, capsys):
    rng = np.random.default_rng(1)
    n = 200
    frame = pd.DataFrame({"y": rng.integers(0, 2, 2 * n), "p": rng.random(2 * n),
                          "model": ["=HYPERLINK(\"http://127.0.0.1:9\")"] * n + ["@b"] * n})
    path = tmp_path / "m.csv"
    frame.to_csv(path, index=False)
    assert main(["metrics", str(path), "--metrics", "ece", "--reference", "0", "--format", "csv"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()[1:]
    assert lines and all(line.startswith(("\"'=HYPERLINK", "'@b")) for line in lines), lines
