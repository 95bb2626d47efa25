"""Dashboard computations show a spinner while they run; intervals computed on one page are reused on the others;
the demo dropdown names no demo while an uploaded file is shown."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

import calibviz.ui.blocks as blocks

from .helpers import TIMEOUT, app, assert_clean, shown, upload

pytestmark = [pytest.mark.apptest]


@pytest.fixture(autouse=True)
def _fresh_caches():
    # these tests count computations: every test starts (and ends) with empty caches
    st.cache_data.clear()
    st.cache_resource.clear()
    yield
    st.cache_data.clear()
    st.cache_resource.clear()


@pytest.fixture
def spinners(monkeypatch):
    seen = []
    original = st.spinner

    def recording(text="In progress...", *, show_time=False, **kw):
        seen.append((text, show_time))
        return original(text, show_time=show_time, **kw)

    monkeypatch.setattr(st, "spinner", recording)
    return seen


def _slow_script():
    import time

    import streamlit as st

    from calibviz.ui.compute import cached

    st.write(f"value {cached(('ranking', 'fp', 1), lambda: (time.sleep(0.8), 7)[1])}")
    st.write(f"again {cached(('ranking', 'fp', 1), lambda: 8)}")


def test_a_computation_runs_under_a_spinner_once(spinners):
    at = AppTest.from_function(_slow_script, default_timeout=TIMEOUT).run()
    assert_clean(at)
    assert [m.value for m in at.markdown] == ["value 7", "again 7"]  # the spinner adds no element
    assert spinners == [("Ranking the variables…", True)]  # the cache hit shows none
    at.run()
    assert spinners == [("Ranking the variables…", True)]


@pytest.fixture
def panel_calls(monkeypatch):
    calls = Counter()
    original = blocks.metric_panel

    def counting(*args, metrics=(), n_resamples=0, **kw):
        calls[(metrics[0], n_resamples)] += 1
        return original(*args, metrics=metrics, n_resamples=n_resamples, **kw)

    monkeypatch.setattr(blocks, "metric_panel", counting)
    return calls


def _headline_keys():
    return ("ece", "tce", "smooth_ece")


def _data_page():
    at = app()
    at.query_params["data"] = "hospital_readmission"
    at.query_params["boot"] = "50"  # a lighter bootstrap: these tests count computations, they do not time them
    at.query_params["metrics"] = "ece,tce,smooth_ece,ace,brier"
    return at.run(timeout=300)


def test_reliability_reuses_the_data_pages_intervals(panel_calls):
    at = _data_page()
    assert_clean(at)
    # the headlines with their intervals; the sidebar panel's other metrics for their verdicts' family only
    assert {k for k, n in panel_calls if n} == set(_headline_keys())
    assert {k for k, n in panel_calls if not n} == {"ace", "brier"}
    at.switch_page("pages/1_Reliability.py").run(timeout=300)
    assert_clean(at)
    for key in _headline_keys():  # computed once, on the Data page
        assert sum(c for (k, _), c in panel_calls.items() if k == key) == 1, panel_calls
    assert panel_calls[("ace", max(n for _, n in panel_calls))] == 1  # the others once, on Reliability


def test_intervals_asked_for_on_the_data_page_are_shown_on_reliability(panel_calls, monkeypatch):
    monkeypatch.setattr(blocks, "BOOTSTRAP_ROW_BUDGET", 1000)  # the demo counts as large data: intervals on request
    at = _data_page()
    assert all(n == 0 for _, n in panel_calls)
    at.switch_page("pages/1_Reliability.py").run(timeout=300)  # the caption says the intervals wait, not "off"
    captions = " ".join(c.value for c in at.caption)
    assert "press 'Compute 95% intervals'" in captions and "turned off" not in captions
    at.switch_page("app.py").run(timeout=300)
    [b for b in at.button if b.label.startswith("Compute 95% intervals")][0].click().run(timeout=300)
    assert_clean(at)
    n_boot = max(n for _, n in panel_calls)
    assert n_boot > 0 and {k for k, n in panel_calls if n} == set(_headline_keys())
    at.switch_page("pages/1_Reliability.py").run(timeout=300)
    assert_clean(at)
    booted = {k for k, n in panel_calls if n}
    assert booted == set(_headline_keys())  # no bootstrap started by itself on Reliability
    assert all(panel_calls[(k, n_boot)] == 1 for k in _headline_keys())  # and none repeated
    metrics = at.dataframe[0].value.set_index("Metric")
    assert metrics.loc["ECE", "95% interval"] != "" and metrics.loc["ACE", "95% interval"] == ""
    labels = [b.label for b in at.button if b.label.startswith("Compute 95% intervals")]
    assert labels and "of the other 2 metrics" in labels[0]


def test_demo_dropdown_names_no_demo_while_a_file_is_shown():
    at = app()
    at.query_params["boot"] = "0"
    at.run(timeout=300)
    assert at.selectbox(key="cv_demo_pick").value == "hospital_readmission"
    rng = np.random.default_rng(0)
    p = rng.uniform(0.05, 0.95, 300)
    frame = pd.DataFrame({"label": (rng.random(300) < p).astype(int), "p": p})
    upload(at, "mine.csv", frame.to_csv(index=False).encode())
    assert_clean(at)
    box = at.selectbox(key="cv_demo_pick")
    assert box.value is None and "Your file is shown" in box.placeholder
    assert any("mine.csv" in shown(i) for i in at.info)
    box.set_value("loan_recalibration").run(timeout=300)  # picking a demo still switches to it
    assert_clean(at)
    assert at.selectbox(key="cv_demo_pick").value == "loan_recalibration"
    assert not any("Showing your file" in i.value for i in at.info)


def test_large_data_gets_fewer_redraws_only_where_each_costs_time_per_row(monkeypatch):
    """On data above the row budget only TCE's reference (a PAVA-BC refit per redraw) drops to the large-data
    number of redraws; ECE, smECE, ACE and the Brier score redraw bin sums and keep theirs, as an opened file's
    pages give them (the same file read both ways showed different verdicts, 50 redraws against 200)."""
    monkeypatch.setattr(blocks, "BOOTSTRAP_ROW_BUDGET", 1000)
    redraws = {}
    original = blocks.metric_panel

    def recording(*args, metrics=(), n_reference=0, **kw):
        redraws[metrics[0]] = n_reference
        return original(*args, metrics=metrics, n_reference=n_reference, **kw)

    monkeypatch.setattr(blocks, "metric_panel", recording)
    at = _data_page()
    at.switch_page("pages/1_Reliability.py").run(timeout=300)
    assert_clean(at)
    # TCE gets what the 5 tests, with the CORP panel's MCB (one number for every page), need together: p <= 0.05
    # / 6 takes 119 redraws (50 could never reach it)
    together = blocks.redraws_needed(0.05 / 6)
    assert together == 119 > blocks.REFERENCE_RESAMPLES_LARGE
    assert redraws == {"ece": blocks.REFERENCE_RESAMPLES, "tce": together,
                       "smooth_ece": blocks.REFERENCE_RESAMPLES, "ace": blocks.REFERENCE_RESAMPLES,
                       "brier": blocks.REFERENCE_RESAMPLES}
    captions = " ".join(c.value for c in at.caption)
    assert f"{blocks.REFERENCE_RESAMPLES} redraws of the labels" in captions
    assert f"TCE: {together}" in captions


def test_test_based_page_reads_tce_against_the_reliability_pages_reference(monkeypatch):
    """With the same bins and α, the Test-based page's TCE headline shows the Reliability page's calibrated-model
    range: the same redraws and seed (on 50,000 rows it drew 50 redraws against the panel's 159: two ranges, two
    p-values for one TCE; a walk-through)."""
    monkeypatch.setattr(blocks, "BOOTSTRAP_ROW_BUDGET", 1000)
    at = _data_page()
    at.switch_page("pages/1_Reliability.py").run(timeout=300)
    assert_clean(at)
    table = next(d.value for d in at.dataframe if "Calibrated model would show" in d.value.columns)
    tce_range = table.set_index("Metric").loc["TCE", "Calibrated model would show"]
    at.switch_page("pages/2_Test_based.py").run(timeout=300)
    assert_clean(at)
    headline = next(m.value for m in at.markdown if "rejected by the binomial test" in m.value)
    low, high = tce_range.split(" – ") if " – " in tce_range else tce_range.split(" - ")
    assert f"would show {low.strip()} to {high.strip()}" in headline, (tce_range, headline)


def test_data_page_on_large_data_asks_before_tces_reference(monkeypatch):
    """TCE's reference refits PAVA-BC on every redraw (~14 s for 159 redraws of 10^6 rows): on large data the Data
    page's headlines show it on request, so an upload's first diagram stays within seconds; the Reliability page
    computes it (a benchmark: upload -> first diagram went from 5.5 to 18 s when the redraws followed the family)."""
    monkeypatch.setattr(blocks, "BOOTSTRAP_ROW_BUDGET", 1000)
    redraws = {}
    original = blocks.metric_panel

    def recording(*args, metrics=(), n_reference=0, **kw):
        redraws.setdefault(metrics[0], []).append(n_reference)
        return original(*args, metrics=metrics, n_reference=n_reference, **kw)

    monkeypatch.setattr(blocks, "metric_panel", recording)
    at = _data_page()
    assert_clean(at)
    assert redraws["tce"] == [0] and redraws["ece"] == [blocks.REFERENCE_RESAMPLES]
    button = [b for b in at.button if b.label.startswith("Compare TCE with a calibrated model")]
    assert button, [b.label for b in at.button]
    tce_reading = next(m.value for m in at.markdown if m.value.startswith("**TCE"))
    assert "calibrated model would show" not in tce_reading
    button[0].click().run(timeout=300)
    assert_clean(at)
    assert redraws["tce"][-1] == blocks.redraws_needed(0.05 / 6)  # the pages' family: 5 metrics and MCB
    tce_reading = next(m.value for m in at.markdown if m.value.startswith("**TCE"))
    assert "A perfectly calibrated model with these predictions would show" in tce_reading


def test_the_metrics_csv_writes_a_one_sided_end_empty(monkeypatch):
    """MCE's interval is an upper bound (low = -inf in the table): the dashboard's CSV writes that end empty, as
    the command line's CSV and JSON do ("-inf" opened in a spreadsheet as a formula error)."""
    saved = {}
    original = blocks.download_table

    def recording(df, name, *args, **kwargs):
        saved[name] = df
        return original(df, name, *args, **kwargs)

    monkeypatch.setattr(blocks, "download_table", recording)
    at = app()
    at.query_params.update(data="hospital_readmission", boot="50", metrics="ece,mce")
    at.run(timeout=300)
    at.switch_page("pages/1_Reliability.py").run(timeout=300)
    assert_clean(at)
    table = next(df for name, df in saved.items() if name.startswith("metrics_"))
    numbers = table.select_dtypes("number")
    assert not np.isinf(numbers.to_numpy(dtype=float)).any()
    mce = table.set_index("metric").loc["mce"]
    assert "upper bound" in mce["interval"] and pd.isna(mce["low"]) and np.isfinite(mce["high"])
