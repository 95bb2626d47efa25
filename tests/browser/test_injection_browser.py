"""Issue #16 part 5 in a real browser: names from the data and values from the address bar never become links or
images, and the page requests nothing from any host but the app's own (favicon included)."""
from __future__ import annotations

from urllib.parse import urlparse

import numpy as np
import pandas as pd
import pytest

from .conftest import screenshot, wait_idle

pytestmark = pytest.mark.browser

HOST = "198.51.100.7"  # TEST-NET-2: never routed; a request to it would show up in the log below
IMAGE = f"![t](http://{HOST}/x.png)"
LINK = f"[click](http://{HOST}/)"
ANCHOR = f'<a href="http://{HOST}/">a</a>'


def _record(page):
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    return requests


def _external(urls, server):
    own = urlparse(server.url).netloc
    return sorted({u for u in urls if urlparse(u).scheme in ("http", "https") and urlparse(u).netloc != own})


def _external_links(page):
    # HTML anchors and SVG ones (plotly draws <a> inside its SVG text)
    return page.eval_on_selector_all(
        "a", "els => els.map(e => e.getAttribute('href') || e.getAttribute('xlink:href') || '')"
             f".filter(h => h.includes('{HOST}') || h.startsWith('https://'))")


def test_url_values_and_uploaded_names_stay_text(server, page, tmp_path):
    requests = _record(page)
    page.goto(f"{server.url}/Reliability?bins={IMAGE}")
    wait_idle(page)
    assert page.get_by_text("Ignored link settings").count()
    assert _external_links(page) == []
    rng = np.random.default_rng(0)
    n = 400
    p = rng.uniform(0.05, 0.95, n)
    frame = pd.DataFrame({"label": (rng.random(n) < p).astype(int), "p": p, LINK: rng.normal(size=n),
                          ANCHOR: rng.normal(size=n),
                          "ward": np.where(np.arange(n) % 2, IMAGE, "www.example.org")})
    csv = tmp_path / "names.csv"
    frame.to_csv(csv, index=False)
    page.goto(server.url)
    wait_idle(page)
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(csv))
    page.wait_for_function(
        """() => [...document.querySelectorAll('[data-testid="stMetricValue"]')].some(e => e.innerText === '400')""",
        timeout=60_000)
    wait_idle(page)
    assert page.get_by_text("click", exact=False).count()  # the column name is shown as text
    page.get_by_test_id("stSidebar").get_by_role("link", name="Variables").click()
    wait_idle(page, 120_000)
    screenshot(page, "injection_variables")
    assert _external_links(page) == []
    assert _external(requests, server) == []  # no image fetched, no font or favicon from a CDN
