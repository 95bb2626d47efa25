"""Real browser: every demo's report opens from file:// (offline), renders its figures, runs no user script."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import calibviz as cv
from calibviz.cli import main as cli_main

from .conftest import screenshot

pytestmark = pytest.mark.browser

SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
# A report opened from disk has no web fonts to fetch; chromium may log that, nothing else is allowed.
FONT_NOISE = ("font", "woff", "ERR_FILE_NOT_FOUND", "ERR_INTERNET_DISCONNECTED")


def _open(browser, path, name):
    # offline: every request that is not the file itself fails, as on a laptop without network
    context = browser.new_context(viewport={"width": 1366, "height": 900}, offline=True)
    page = context.new_page()
    errors, dialogs = [], []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(path.as_uri())
    page.wait_for_function("() => window.Plotly && document.querySelectorAll('.js-plotly-plot .main-svg').length "
                           "> 0", timeout=60_000)
    page.wait_for_timeout(1500)  # let every figure draw
    shot = screenshot(page, name)
    return context, page, errors, dialogs, shot


def _real_errors(errors):
    return [e for e in errors if not any(n in e for n in FONT_NOISE)]


@pytest.mark.parametrize("demo", cv.demo_datasets())
def test_demo_report_renders_offline(browser, demo, tmp_path):
    out = tmp_path / f"{demo}.html"
    assert cli_main(["report", demo, "-o", str(out), "--ci", "20"]) == 0
    context, page, errors, dialogs, _ = _open(browser, out, f"report_{demo}")
    try:
        n_divs = page.locator(".plotly-graph-div").count()
        assert n_divs >= 4
        # every figure div was drawn by plotly.js (it adds .js-plotly-plot and the SVG layers)
        assert page.locator(".js-plotly-plot").count() == n_divs
        assert page.locator(".js-plotly-plot .main-svg").count() >= 2 * n_divs
        assert page.locator("table.cv-table").count() >= 3
        assert page.get_by_text("Reproducibility", exact=True).count() >= 1
        assert not _real_errors(errors), errors
        assert not dialogs
    finally:
        context.close()


def test_hostile_names_show_as_text(browser, tmp_path):
    rng = np.random.default_rng(0)
    n = 400
    p = rng.uniform(0.05, 0.95, n)
    y = rng.binomial(1, p)
    src = tmp_path / f"{IMG}.csv"
    pd.DataFrame({SCRIPT: np.where(y == 1, IMG, "neg"), "p": p, "model": np.where(np.arange(n) % 2, SCRIPT, IMG),
                  IMG: rng.normal(size=n)}).to_csv(src, index=False)
    out = tmp_path / "hostile.html"
    assert cli_main(["report", str(src), "-o", str(out), "--label", SCRIPT, "--positive", IMG, "--probs", "p",
                     "--model-column", "model", "--ci", "5", "--title", SCRIPT]) == 0
    context, page, errors, dialogs, _ = _open(browser, out, "report_hostile_names")
    try:
        assert not dialogs, dialogs
        assert page.locator("img").count() == 0  # no element was created from the names
        assert page.title() == SCRIPT
        assert page.locator("h1").inner_text() == SCRIPT
        assert page.locator("h2", has_text=f"Model: {IMG}").count() == 1
        # inside the figures the names are text too (legend entries of the comparison)
        legend = " ".join(page.locator(".legendtext").evaluate_all("els => els.map(e => e.textContent)"))
        assert SCRIPT in legend and IMG in legend
        assert not _real_errors(errors), errors
        assert page.evaluate("() => window.__xss === undefined")
    finally:
        context.close()
