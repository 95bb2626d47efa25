"""Dashboard timings in a real browser: a 10^6-row CSV upload to its first diagram, and a control change.

    python benchmarks/bench_dashboard.py [--rows 1000000]

Starts ``streamlit run app.py`` on 127.0.0.1 and drives Debian's chromium with
Playwright (as the browser tests do). Measured:

- upload -> first diagram: from handing the file to the uploader until the
  Reliability page shows its Plotly chart (upload, parse, validation,
  navigation, reliability table, figure);
- control change: from a keypress on the "Number of bins" slider until the
  re-rendered chart differs from the previous one (cached data, new bins).

Targets (DESIGN.md §7): < 10 s and < 1 s.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser.conftest import CHROMIUM_ARGS, StreamlitServer, _chromium, wait_idle  # noqa: E402


def _chart_signature(page) -> str:
    return page.evaluate("""() => { const p = document.querySelector('.js-plotly-plot');
                                    return p ? JSON.stringify(p.data.map(t => t.x ? Array.from(t.x).length : 0))
                                             + JSON.stringify(p.data.map(t => t.y ? Array.from(t.y).slice(0, 5) : 0))
                                             : ''; }""")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    rng = np.random.default_rng(0)
    n = args.rows
    p = rng.beta(2, 5, n)
    frame = pd.DataFrame({"label": rng.binomial(1, np.clip(p * 1.1, 0, 1)), "p": p.round(6),
                          "age": rng.integers(18, 95, n), "income": rng.lognormal(10, 0.5, n).round(0)})
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "big.csv"
        frame.to_csv(csv, index=False)
        size_mb = csv.stat().st_size / 1e6
        server = StreamlitServer()
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=_chromium(), args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1366, "height": 768})
                page.goto(server.url)
                wait_idle(page)
                t0 = time.perf_counter()
                page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(csv))
                page.wait_for_function(f"() => document.body.innerText.includes('{n:,} rows')", timeout=300_000)
                wait_idle(page, timeout=300_000)
                t_loaded = time.perf_counter() - t0
                t_nav = time.perf_counter()
                page.get_by_test_id("stSidebar").get_by_role("link", name="Reliability").click()
                page.wait_for_selector(".js-plotly-plot", timeout=300_000)
                t_first = time.perf_counter() - t0
                t_nav = time.perf_counter() - t_nav
                wait_idle(page, timeout=600_000)
                t_page = time.perf_counter() - t0
                before = _chart_signature(page)
                slider = page.get_by_test_id("stSidebar").get_by_role("slider").first
                slider.focus()
                t1 = time.perf_counter()
                slider.press("ArrowLeft")
                page.wait_for_function(f"() => {{ const p = document.querySelector('.js-plotly-plot'); return p && "
                                       f"JSON.stringify(p.data.map(t => t.x ? Array.from(t.x).length : 0)) + "
                                       f"JSON.stringify(p.data.map(t => t.y ? Array.from(t.y).slice(0, 5) : 0)) "
                                       f"!== {json.dumps(before)}; }}", timeout=120_000)
                t_change = time.perf_counter() - t1
                wait_idle(page, timeout=600_000)
                t_change_idle = time.perf_counter() - t1
                browser.close()
        finally:
            server.stop()
    rows = [
        ("upload of a %.0f MB CSV (%s rows) -> data loaded" % (size_mb, f"{n:,}"), t_loaded, ""),
        ("click on Reliability -> first diagram", t_nav, ""),
        ("upload -> first diagram on the Reliability page", t_first, "< 10 s"),
        ("upload -> Reliability page complete (metric values, tables)", t_page, ""),
        ("control change (bins 15 -> 14) -> diagram re-rendered", t_change, "< 1 s"),
        ("control change -> page idle", t_change_idle, ""),
    ]
    print("| dashboard step | seconds | target |\n|---|---|---|")
    for name, sec, target in rows:
        print(f"| {name} | {sec:.2f} | {target} |")


if __name__ == "__main__":
    main()
