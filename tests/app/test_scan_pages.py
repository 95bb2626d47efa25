"""AppTest of the binned pages on an opened file (calibviz.ui.source, calibviz.ui.scan_pages): once a Parquet file
is opened on the Large data page and made the data of every page, Reliability, Test-based, Multiclass, Compare and
Variables show the scan's library values; what needs rows says so in one line; the sidebar leads back."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import calibviz as cv
from calibviz.binning import PAVA, PAVABC, EqualMass, Uniform
from calibviz.panel import PanelConfig, format_interval, format_value
from calibviz.scan import tables as T
from calibviz.multiclass import class_reference_draws, class_test_sentence
from calibviz.variables import vece_floor_caption, vece_test_sentence
from tests.app.helpers import app, assert_clean, figures, metric_values, shown, upload

pytestmark = pytest.mark.apptest

NEEDS_ROWS = "not available for an opened file"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A binary file with two models and a feature, a multiclass file, and a file outside the allowed root."""
    root = tmp_path_factory.mktemp("scan_pages") / "logs"
    root.mkdir()
    rng = np.random.default_rng(11)
    n = 4000
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p ** 1.4).astype(int)
    age = rng.uniform(20, 80, n)
    q = np.clip(0.1 + 0.8 * p, 0, 1)
    pd.DataFrame({"y": np.r_[y, y], "p": np.r_[p, q], "model": ["raw"] * n + ["shrunk"] * n,
                  "age": np.r_[age, age]}).to_parquet(root / "two_models.parquet")
    P = rng.dirichlet([2, 1, 1], n)
    k = (rng.random(n)[:, None] > P.cumsum(1)).sum(1).clip(0, 2)
    pd.DataFrame({"y": np.array(["cat", "dog", "owl"])[k], "p_cat": P[:, 0], "p_dog": P[:, 1],
                  "p_owl": P[:, 2]}).to_parquet(root / "animals.parquet")
    (root.parent / "secret.parquet").write_bytes((root / "animals.parquet").read_bytes())
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CALIBVIZ_SCAN_ROOTS", str(root))
        yield root


def _opened(path, page: str, **settings):
    """An AppTest whose session analyses ``path`` on every page (opened as the Large data page opens it), with
    ``settings`` changed (as the sidebar would)."""
    from calibviz.ui.scan import open_scan, scan_identity

    at = app().run()  # the demo in memory first (loading data in memory leaves an opened file's analysis)
    at.session_state["cv_scan"] = open_scan(str(path))
    at.session_state["cv_scan_id"] = scan_identity(str(path), "duckdb", {})
    at.session_state["cv_scan_active"] = True
    at.session_state["cv_settings"].update(settings)
    return at.switch_page(page).run() if page != "app.py" else at.run()


def json_numbers(fig: dict) -> set:
    """Every number of a figure's traces (x and y), rounded as the figure JSON rounds them."""
    return {round(float(v), 6) for t in fig["data"] for k in ("x", "y") for v in (t.get(k) or [])
            if isinstance(v, (int, float))}


def _infos(at) -> list[str]:
    return [i.value for i in at.info]


def test_open_by_path_analyse_on_every_page_and_back(files):
    """The whole path a user takes: open a file by path, 'Analyse on every page', Reliability shows the scan's
    diagram, metric panel (with the calibrated-model reference) and per-bin table; pages without a scan version
    say so; the sidebar leads back to the data in memory."""
    at = app().run()
    at.switch_page("pages/8_Large_data.py").run()
    at.text_input(key="w_scan_path").set_value(str(files / "two_models.parquet"))
    at.button[0].click()
    at.run()
    assert not at.error, [e.value for e in at.error]
    at.button(key="scan_use").click()
    at.run()
    # a binary log of two models: no Multiclass page, a Compare page
    assert at.success and "(Reliability, Test-based, Variables and Compare) analyse this file" in at.success[0].value
    at.switch_page("pages/1_Reliability.py").run()
    assert_clean(at)
    assert not at.error, [e.value for e in at.error]
    assert any("Data (opened file)" in c.value and "two\\_models" in c.value for c in at.sidebar.caption)
    scan = cv.scan(str(files / "two_models.parquet")).models["raw"]
    table = scan.reliability_table(Uniform(15), 0.05, test=None)
    fig = figures(at)[0]
    observed = next(t for t in fig["data"] if t.get("mode") == "lines+markers")
    np.testing.assert_allclose(observed["y"], table["obs_rate"], rtol=0, atol=5e-7)  # figure JSON: 6 decimals
    np.testing.assert_allclose(at.dataframe[1].value["obs_rate"], table["obs_rate"], rtol=1e-12)
    # the values and the calibrated-model reference at once; the bootstrap intervals on request
    metrics = at.dataframe[0].value
    assert set(metrics["95% interval"]) == {""}
    at.button(key="scan_boot_raw").click()
    at.run()
    # the scan's bootstrap draws depend on which buckets earlier results refined to exact scores: replay the
    # Large data page's results (its table and default panel) and the Reliability page's (values, sensitivity)
    scan.reliability_table(Uniform(15), 0.05)
    scan.metrics(config=PanelConfig())
    T.binning_sensitivity(scan, metrics=("ece", "mce"))
    want = pd.concat([scan.metrics([k], config=PanelConfig(), n_reference=200, random_state=0, n_resamples=100)
                      for k in cv.panel.DEFAULT_BINARY_METRICS], ignore_index=True)
    metrics = at.dataframe[0].value
    assert metrics["Value"].tolist() == [format_value(v, u) for v, u in zip(want["value"], want["unit"])]
    # the bootstrap intervals of the score buckets (the sidebar's 100 resamples), as the library gives them
    assert metrics["95% interval"].tolist() == [format_interval(lo, hi, u) for lo, hi, u in
                                                zip(want["low"], want["high"], want["unit"])]
    assert np.isfinite(want["high"]).sum() >= 5
    ece = want.set_index("metric").loc["ece"]
    assert np.isfinite(ece["null_low"])  # the calibrated-model reference is there
    assert metrics.set_index("Metric").loc["ECE", "Verdict"] == ece["verdict"]
    assert any(f"ECE = {format_value(ece['value'], 'probability')}" in shown(m) for m in at.markdown)
    assert any("ROC curve" in i and NEEDS_ROWS in i for i in _infos(at))
    # a page without a scan version says which data it shows
    at.switch_page("pages/6_Report.py").run()
    assert any("works on data in memory" in i for i in _infos(at))
    # back to the data in memory
    at.switch_page("pages/1_Reliability.py").run()
    at.sidebar.button(key="scan_leave").click()
    at.run()
    assert_clean(at)
    assert not any("opened file" in c.value for c in at.sidebar.caption)
    assert any(c.value.startswith("**Data:**") for c in at.sidebar.caption)
    assert at.title[0].value == "Reliability" and not any(NEEDS_ROWS in i for i in _infos(at))


def test_test_based_page_shows_the_scan_tce(files):
    at = _opened(files / "two_models.parquet", "pages/2_Test_based.py")
    assert_clean(at)
    assert not at.error, [e.value for e in at.error]
    scan = cv.scan(str(files / "two_models.parquet"))
    table = scan.reliability_table(PAVABC(), 0.05)
    assert metric_values(at)["TCE"] == format_value(scan.tce(PAVABC(), 0.05), "percent")
    assert metric_values(at)["Rejected predictions"] == f"{int(table['rejected'].sum()):,} of {scan.n:,}"
    assert at.dataframe[0].value["rejected"].tolist() == table["rejected"].tolist()
    headline = next(m.value for m in at.markdown if "rejected by the binomial test" in m.value)
    assert "A perfectly calibrated model with these predictions would show" in headline, headline
    assert not [b for b in at.button if b.label.startswith("Compute 95% intervals")]  # it shows no interval
    bars = next(t for t in figures(at)[0]["data"] if str(t.get("name", "")).startswith("Rejected"))
    assert bars["y"] == table["rejected"].tolist()
    infos = _infos(at)
    assert any("violins" in i and NEEDS_ROWS in i for i in infos)
    cmp = figures(at)[1]  # the binning comparison: rows per bin of PAVA, PAVA-BC and 10-quantile bins
    sizes = [t["y"] for t in cmp["data"] if t.get("name") == "Rows per bin"]
    assert sizes == [scan.reliability_table(s, test=None)["weight"].round(6).tolist()
                     for s in (PAVA(), PAVABC(), EqualMass(10))]


def test_tce_reference_is_computed_once_for_reliability_and_test_based(files, monkeypatch):
    """TCE's calibrated-model reference (label redraws, PAVA-BC refitted on each) is the slowest number of an opened
    file; the Test-based page reads the Reliability panel's row instead of redrawing again, and shows the same
    reference."""
    import streamlit as st

    from calibviz.scan import reference

    st.cache_resource.clear()  # the results store is shared by the sessions of this process (earlier tests)
    calls = []
    original = reference._tce_null
    monkeypatch.setattr(reference, "_tce_null", lambda *a, **k: calls.append(1) or original(*a, **k))
    at = _opened(files / "two_models.parquet", "pages/1_Reliability.py")  # the default panel holds TCE
    assert not at.error, [e.value for e in at.error]
    assert len(calls) == 1
    reliability = next(m.value for m in at.markdown if m.value.startswith("**TCE ="))
    at.switch_page("pages/2_Test_based.py").run()
    assert not at.error, [e.value for e in at.error]
    assert len(calls) == 1, "the Test-based page redrew TCE's reference"
    headline = next(m.value for m in at.markdown if "rejected by the binomial test" in m.value)
    assert "A perfectly calibrated model with these predictions would show" in headline, headline
    # the same verdict, judged with the panel's tests, word for word (it was judged alone there, a walk-through)
    verdict = headline[headline.index("A perfectly calibrated model"):]
    assert verdict in reliability and "judged together" in verdict, (verdict, reliability)


def test_multiclass_page_and_views_of_a_multiclass_file(files):
    path = files / "animals.parquet"
    at = _opened(path, "pages/3_Multiclass.py")
    assert_clean(at)
    assert not at.error, [e.value for e in at.error]
    scan = cv.scan(str(path))
    want = T.top_label_table(scan, Uniform(15))
    tl, zoom, small, grid = figures(at)
    plus = next(t for t in tl["data"] if str(t.get("name", "")).startswith("Top-label"))
    np.testing.assert_allclose(plus["y"], want["plus"], rtol=0, atol=5e-7)
    panel = scan.metrics(["confidence_ece", "top_label_ece", "top_label_mce", "classwise_ece"])
    assert at.dataframe[0].value["Value"].tolist() == [format_value(v, u) for v, u in zip(panel["value"],
                                                                                          panel["unit"])]
    ranking = T.class_ranking(scan, Uniform(15))
    assert b"NaN" not in at.dataframe[1].proto.arrow_data.data  # its attrs (overall_low NaN) would break the browser's JSON
    assert at.dataframe[1].value["Class"].tolist() == ranking["label"].tolist()  # headers for people
    np.testing.assert_allclose(at.dataframe[1].value["Calibration error"], ranking["value"], rtol=1e-12)
    assert len(small["layout"]["annotations"]) >= 3
    # the calibrated-model reference: confidence, top-label and class-wise metrics have one
    assert "class-wise ECE redraws the labels jointly per tuple" in " ".join(c.value for c in at.caption)
    assert np.isfinite(panel.loc[panel["metric"] == "classwise_ece", "value"]).all()
    # the classes are tested one by one, as on an uploaded file (the page's default seed 0, alpha 0.05)
    tested = T.class_ranking(scan, Uniform(15), n_reference=class_reference_draws(len(ranking)), random_state=0)
    shown_panel = at.dataframe[0].value  # the page's own verdict gates the ranking (its redraws, not this panel's)
    gate = pd.DataFrame({"metric": ["classwise_ece"], "label": ["Class-wise ECE"],
                         "verdict": shown_panel.loc[shown_panel["Metric"] == "Class-wise ECE", "Verdict"].tolist()})
    verdict = class_test_sentence(tested, 0.05, panel=gate, strong=lambda t: f"**{t}**")
    assert verdict is not None and any(shown(m) == verdict for m in at.markdown)
    busiest = int(want.loc[(want["deviation"] * want["frac"]).idxmax(), "bin"])  # the bin adding most to TL-ECE
    assert at.selectbox(key="w_zoom_bin").value == busiest
    assert json_numbers(zoom) >= set(np.round(T.bin_zoom(scan, busiest, Uniform(15))["accuracy"], 6))
    # the Reliability page's class-wise view of the same file
    at.session_state["cv_settings"]["view"] = "classwise:1"
    at.switch_page("pages/1_Reliability.py").run()
    assert_clean(at)
    dog = scan.class_view("dog").reliability_table(Uniform(15), test=None)
    np.testing.assert_allclose(at.dataframe[1].value["obs_rate"], dog["obs_rate"], rtol=1e-12)
    assert at.selectbox(key="w_view").value == "classwise:1"
    captions = " ".join(c.value for c in at.caption)  # a one-vs-rest view is binary: the binary caption
    assert "redraws of the labels per score bucket" in captions and "class-wise ECE" not in captions
    at.switch_page("pages/8_Large_data.py").run()
    assert_clean(at)
    assert any("accuracy (the predicted class is right)" in m.value for m in at.markdown)


def test_compare_page_reads_the_models_of_the_file(files):
    path = files / "two_models.parquet"
    at = _opened(path, "pages/5_Compare.py", metrics=("ece", "brier"))  # two metrics: each model bootstrapped
    assert_clean(at)
    assert at.dataframe[0].value["95% low"].isna().all()  # the intervals wait for the button
    at.button(key="scan_compare_boot").click()
    at.run()
    assert not at.error, [e.value for e in at.error]
    scan = cv.scan(str(path))
    want = T.compare_scans(scan.models, ["ece", "brier"], PanelConfig(), "raw", n_resamples=100, random_state=0)
    ece = at.dataframe[0].value  # the first metric's tab
    np.testing.assert_allclose(ece["Value"], want.loc[want.metric == "ece", "value"], rtol=1e-12)
    np.testing.assert_allclose(ece[["95% low", "95% high"]].to_numpy(float),
                               want.loc[want.metric == "ece", ["low", "high"]].to_numpy(float), rtol=1e-12)
    assert at.tabs[0].label == "ECE" and at.tabs[1].label == "Brier score"
    np.testing.assert_allclose(ece["Difference"].iloc[1], want.loc[(want.metric == "ece") & ~want.is_reference,
                                                                    "diff"].iloc[0], rtol=1e-12)
    overlay = figures(at)[0]
    assert {t["name"] for t in overlay["data"] if t.get("mode") == "lines+markers"} == {"raw", "shrunk"}
    infos = _infos(at)
    assert any("paired bootstrap" in i and NEEDS_ROWS in i for i in infos)
    assert any("triptych" in i and NEEDS_ROWS in i for i in infos)


def test_variables_page_on_an_opened_file(files):
    at = _opened(files / "two_models.parquet", "pages/4_Variables.py")
    assert_clean(at)
    assert not at.error, [e.value for e in at.error]
    scan = cv.scan(str(files / "two_models.parquet"))
    want = scan.variable_ranking(["age"], n_resamples=100, random_state=0)
    # the top bar is named as the largest only when it is beyond chance
    named = any(f"VECE = {format_value(want['vece'].iloc[0], 'probability')}" in shown(m) for m in at.markdown)
    assert named == bool(want["p_adjusted"].iloc[0] <= 0.05)
    # the ranking is read against a calibrated model (drawn from the scan's sums), as on the in-memory page
    verdict = vece_test_sentence(want, 0.05)
    assert verdict is not None and any(shown(m) == verdict for m in at.markdown)
    floor = vece_floor_caption(want)  # VECE's floor, the overall gap, as on the in-memory page (when reached)
    shown_floor = [shown(c) for c in at.caption if shown(c).startswith("No variable's VECE can fall below")]
    assert shown_floor == ([floor] if floor else [])
    assert any("LOESS curves" in i and NEEDS_ROWS in i for i in _infos(at))


def test_a_refused_path_keeps_the_file_being_analysed(files):
    """Opening a path outside the allowed root is refused on the Large data page, and the pages go on analysing
    the file opened before (the previous data are kept); an upload then becomes the data of the pages."""
    at = _opened(files / "animals.parquet", "app.py")
    at.switch_page("pages/8_Large_data.py").run()
    at.text_input(key="w_scan_path").set_value(str(files / ".." / "secret.parquet"))
    at.button[0].click()
    at.run()
    assert at.error and "outside the directories" in at.error[0].value
    assert at.session_state["cv_scan"].source == str(files / "animals.parquet")
    assert any("animals" in c.value for c in at.sidebar.caption)
    # an upload is new data in memory: the pages analyse it from then on
    at.switch_page("app.py").run()
    rng = np.random.default_rng(0)
    p = rng.uniform(size=300)
    upload(at, "fresh.csv", pd.DataFrame({"label": (rng.uniform(size=300) < p).astype(int), "p": p})
           .to_csv(index=False).encode())
    assert_clean(at)
    assert "cv_scan_active" not in at.session_state
    assert any(c.value.startswith("**Data:**") and "fresh" in c.value for c in at.sidebar.caption)


def test_median_variance_bins_on_an_opened_file(files):
    """Median-variance splits (the sidebar's 'Median-variance splits') on an opened file: the Reliability page
    draws the scan's bins, which are the in-memory bins of the same rows."""
    at = _opened(files / "two_models.parquet", "pages/1_Reliability.py", scheme="median_variance",
                 metrics=("ece", "brier"))
    assert_clean(at)
    assert not at.error, [e.value for e in at.error]
    df = pd.read_parquet(files / "two_models.parquet").query("model == 'raw'")
    want = cv.reliability_table(df.y, df.p, binning="median_variance", test=None)
    bars = [t for f in figures(at) for t in f["data"] if t.get("type") == "bar" or t.get("mode") == "markers"]
    assert bars, "no diagram"
    assert any(len(t.get("x") or []) == len(want) for t in bars), (len(want), [len(t.get("x") or []) for t in bars])


def test_a_model_with_bad_rows_picked_later_keeps_the_previous_one(files):
    """Opening a file checks its first model; a browser walk-through picked a second model whose scores lie outside
    [0, 1] and got Streamlit's redacted error on every page until a reload. Now the sidebar says why, and the pages
    keep analysing the previous model; the Large data page's own picker says so too."""
    rng = np.random.default_rng(2)
    p = rng.uniform(size=300)
    y = (rng.uniform(size=300) < p).astype(int)
    bad = p.copy()
    bad[:10] = 1.7
    path = files / "one_bad_model.parquet"
    pd.DataFrame({"y": np.r_[y, y], "p": np.r_[p, bad], "model": ["good"] * 300 + ["zbad"] * 300}).to_parquet(path)
    at = _opened(path, "pages/1_Reliability.py")
    assert_clean(at)
    at.sidebar.selectbox(key="w_scan_pick").set_value("zbad")
    at.run()
    assert not at.exception
    warnings = [e.value for e in at.sidebar.warning]  # a warning: the pages go on with the good model
    assert any("Model zbad cannot be analysed" in e and "outside" in e for e in warnings), warnings
    assert not at.sidebar.error
    assert at.sidebar.selectbox(key="w_scan_pick").value == "good"
    assert at.session_state["cv_scan_model"] == "good"
    assert not at.main.error and figures(at)  # the page still shows the good model's diagram
    at.sidebar.button(key="scan_leave").click()
    at.run()
    assert "cv_scan_pick_error" not in at.session_state  # back to memory: the message goes with the file's view
    at.switch_page("pages/8_Large_data.py").run()
    at.selectbox(key="w_scan_model").set_value("zbad")
    at.run()
    assert not at.exception
    assert any("This model cannot be analysed" in e.value for e in at.error)


@pytest.mark.parametrize("page", ["pages/1_Reliability.py", "pages/5_Compare.py"])
def test_conflicting_pavabc_sizes_cost_only_tce_on_an_opened_file(files, page):
    """Sizes set on the Test-based page (smallest 50,000 above largest 1,000) blanked Reliability and Compare of
    an opened file, which bin uniformly; only TCE needs PAVA-BC."""
    at = _opened(files / "two_models.parquet", page, scheme="uniform", n_min=50000, n_max=1000)
    assert not at.exception
    assert not at.main.error, [e.value for e in at.main.error]
    assert figures(at)
    if page.endswith("Compare.py"):  # TCE left out with a word, as in memory (its tab was all dashes)
        assert any("TCE is left out of the comparison" in w.value for w in at.main.warning)


def test_the_reliability_diagram_of_an_opened_file_says_what_its_band_says(files):
    """The in-memory page's caption says how many bins lie outside the green band; the opened file's page did not
    (a bin outside the band beside MCE's "evidence" was said nowhere, a browser walk-through)."""
    from calibviz.ui.blocks import band_reading

    at = _opened(files / "two_models.parquet", "pages/1_Reliability.py")
    assert_clean(at)
    table = cv.scan(str(files / "two_models.parquet")).models["raw"].reliability_table()
    captions = " ".join(c.value for c in at.caption)
    assert band_reading(table) in captions, captions


def test_the_report_page_names_the_data_its_button_reports_on_while_a_file_is_opened(files):
    """The Report page works on the data in memory; with a file opened for the other pages its primary button
    read "Build the report" and built the demo's (a walk-through expected the file's). It names the data now,
    beside the notice that the page shows the data in memory."""
    at = _opened(files / "two_models.parquet", "pages/6_Report.py")
    assert_clean(at)
    label = at.button(key="build_report").label
    assert label.startswith("Build the report of ") and "Hospital" in label, label
    assert any("not the opened file" in i.value for i in at.info), [i.value for i in at.info]
