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

    python benchmarks/bench_dashboard.py --compare [--compare-rows 100000]

The Compare page with 5 models of 10^5 rows, in Streamlit's AppTest (the
page's script run, no browser): a CSV with one probability column per model
(``<model>__p``) uploaded on the Data page, then the Compare page's first run,
then one step of the "Number of bins" slider (15 -> 14). Targets (DESIGN.md
§7): first view < 5 s, a control change < 2 s.
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


def compare_frame(n: int, seed: int = 0) -> pd.DataFrame:
    """Five models of one binary task on the same rows, as a review meeting would have them.

    The true probability is ``sigmoid(z)``; the models see ``z`` with a little noise and are: calibrated
    (``logreg``), overconfident (``naive_bayes``, logit x 2.2), underconfident (``forest``, logit x 0.5),
    shifted (``boosting``, logit + 0.3) and coarse (``svc``, a calibrated score rounded to 0.05).
    """
    rng = np.random.default_rng(seed)
    z = rng.normal(-0.8, 1.6, n)
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-z))).astype(int)
    sig = lambda t: 1 / (1 + np.exp(-t))  # noqa: E731
    seen = z + rng.normal(0, 0.3, n)
    return pd.DataFrame({
        "y_true": y, "logreg__p": sig(seen).round(6), "naive_bayes__p": sig(2.2 * seen).round(6),
        "forest__p": sig(0.5 * seen).round(6), "boosting__p": sig(seen + 0.3).round(6),
        "svc__p": np.clip(np.round(sig(seen) / 0.05) * 0.05, 0.001, 0.999),
    })


def compare_timings(n: int) -> list[tuple[str, float, float, str]]:
    """Compare page at ``n`` rows x 5 models in AppTest: first view, and one step of the bins slider.

    Returns (step, wall seconds, CPU seconds of this process, target): on a shared machine the CPU time is
    the steadier number (AppTest runs the page in this process).
    """
    from streamlit.testing.v1 import AppTest

    def timed(run):
        w, c = time.perf_counter(), time.process_time()
        run()
        return time.perf_counter() - w, time.process_time() - c

    def check(at):
        problems = [e.value for e in list(at.exception) + list(at.error)]
        assert not problems, problems

    data = compare_frame(n).to_csv(index=False).encode()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=1800)
    at.run()
    at.file_uploader(key="cv_upload").set_value(("five_models.csv", data, "text/csv"))
    t_data = timed(at.run)
    check(at)
    t_first = timed(lambda: at.switch_page("pages/5_Compare.py").run())
    check(at)
    t_change = timed(lambda: at.slider(key="w_bins").set_value(14).run())
    check(at)
    rows = f"{n:,} rows x 5 models"
    return [(f"Compare, {rows}: upload -> Data page complete", *t_data, ""),
            (f"Compare, {rows}: first view (AppTest run)", *t_first, "< 5 s"),
            (f"Compare, {rows}: bins 15 -> 14 (AppTest run)", *t_change, "< 2 s")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--compare", action="store_true", help="time the Compare page (AppTest) instead")
    ap.add_argument("--compare-rows", type=int, default=100_000)
    args = ap.parse_args()
    if args.compare:
        print("| dashboard step | seconds (wall) | CPU seconds | target |\n|---|---|---|---|")
        for name, sec, cpu, target in compare_timings(args.compare_rows):
            print(f"| {name} | {sec:.2f} | {cpu:.2f} | {target} |")
        return
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
