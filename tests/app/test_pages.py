"""AppTest of every dashboard page on every demo dataset and on uploaded files."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import calibviz as cv

from .helpers import ROOT, app, assert_clean, figures, metric_values, upload, shown

pytestmark = [pytest.mark.apptest, pytest.mark.usefixtures("clear_streamlit_caches")]

PAGES = ["pages/1_Reliability.py", "pages/2_Test_based.py", "pages/3_Multiclass.py", "pages/4_Variables.py",
         "pages/5_Compare.py", "pages/6_Report.py"]
EXISTING = [p for p in PAGES if (ROOT / p).exists()]


def _open(page: str, demo: str | None = None, **query):
    at = app()
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    if demo:
        at.selectbox(key="cv_demo_pick").set_value(demo).run()
    at.switch_page(page).run()
    assert_clean(at)
    return at


@pytest.mark.parametrize("demo", cv.demo_datasets())
@pytest.mark.parametrize("page", EXISTING)
def test_page_runs_on_every_demo(page, demo):
    at = _open(page, demo)
    assert not at.error, [e.value for e in at.error]
    info = " ".join(i.value for i in at.info)
    figs = figures(at)
    if "does not apply" in info or "only for" in info:
        return  # the page says plainly why it has nothing to show
    if page != "pages/6_Report.py":
        assert figs, "every analysis page shows at least one figure"
        for f in figs:
            assert f["data"], "figure without traces"


@pytest.mark.parametrize("page", EXISTING)
def test_page_runs_on_uploaded_binary_and_multiclass(page):
    rng = np.random.default_rng(5)
    at = app().run()
    p = rng.uniform(size=400)
    df = pd.DataFrame({"label": rng.binomial(1, p), "p": p, "x": rng.normal(size=400), "grp": rng.choice(list("ab"), 400)})
    upload(at, "up.csv", df.to_csv(index=False).encode())
    at.switch_page(page).run()
    assert_clean(at)
    P = rng.dirichlet(np.ones(3), 300)
    mdf = pd.DataFrame(P, columns=["p_r", "p_g", "p_b"])
    mdf["label"] = np.array(list("rgb"))[rng.integers(0, 3, 300)]
    at.switch_page("app.py").run()
    upload(at, "multi.csv", mdf.to_csv(index=False).encode())
    at.switch_page(page).run()
    assert_clean(at)


def test_tce_page_reacts_to_alpha_and_reads_the_url():
    at = _open("pages/2_Test_based.py")
    before = metric_values(at)["TCE"]
    assert before == f"{cv.metrics.tce(*_binary_demo()):.2f}%"
    # the headline reads TCE against a calibrated model with these predictions (issue #11 section 5)
    from calibviz.binning import PAVABC
    from calibviz.panel import format_value
    from calibviz.ui.blocks import reference_redraws

    y, p = _binary_demo()
    n_ref = reference_redraws(len(y), 0.05)
    ref = cv.metrics.consistency_test(y, p, metric="tce", n_resamples=n_ref, binning=PAVABC(), alpha=0.05,
                                      random_state=int(at.session_state["cv_settings"]["seed"]),
                                      level=cv.metrics.reference_level(0.05))
    headline = next(m.value for m in at.markdown if "rejected by the binomial test" in m.value)
    assert (f"would show {format_value(ref.null_low, 'percent')} to {format_value(ref.null_high, 'percent')}"
            in headline), headline
    at.sidebar.select_slider[0].set_value(0.001).run()
    assert_clean(at)
    assert metric_values(at)["TCE"] != before
    assert at.query_params["alpha"] == ["0.001"] or at.query_params["alpha"] == "0.001"
    fresh = _open("pages/2_Test_based.py", alpha="0.01")
    y, p = _binary_demo()
    assert metric_values(fresh)["TCE"] == f"{cv.metrics.tce(y, p, alpha=0.01):.2f}%"


def test_metric_ranges_and_verdicts_follow_alpha_within_a_session():
    """The calibrated-model range is the central 1 - 2 alpha of the redraws and the verdict is at alpha: moving
    the slider shows what a fresh session at that alpha shows (the rows were cached without alpha, and kept the
    old range and verdict)."""
    def ece(at):
        table = next(d.value for d in at.dataframe if "Calibrated model would show" in d.value.columns)
        return table.set_index("Metric").loc["ECE", ["Calibrated model would show", "Verdict"]].tolist()

    at = _open("pages/1_Reliability.py")
    before = ece(at)
    at.select_slider(key="w_alpha").set_value(0.1).run()
    assert_clean(at)
    fresh = _open("pages/1_Reliability.py", alpha="0.1")
    assert ece(at) == ece(fresh) != before
    # the whole table: since the rows are cached without alpha (their ranges follow it from the same redraws), every
    # range, p-value, verdict and reading is the fresh session's
    moved, new = (next(d.value for d in a.dataframe if "Calibrated model would show" in d.value.columns)
                  for a in (at, fresh))
    pd.testing.assert_frame_equal(moved.reset_index(drop=True), new.reset_index(drop=True))


def test_every_reading_of_the_metric_table_is_shown_whole():
    """The table cuts its "What it means" column after a few words; the expander beneath shows each metric's
    whole sentence, its value first."""
    at = _open("pages/1_Reliability.py")
    table = next(d.value for d in at.dataframe if "What it means" in d.value.columns)
    box = next(e for e in at.expander if e.label == "What each value means")
    said = [m.value for m in box.markdown]
    assert len(said) == len(table) > 5
    assert table.set_index("Metric").loc["ECE", "p-value"] == "≤ 0.005"  # none of 200 redraws: a bound
    for (_, row), text in zip(table.iterrows(), said):
        assert text.startswith(f"**{row['Metric']} = {row['Value']}.**") and row["What it means"] in text.replace("*", "")


def test_invalid_url_setting_is_reported_not_fatal():
    at = app()
    at.query_params["alpha"] = "banana"
    at.query_params["bins"] = "12"
    at.run()
    assert_clean(at)
    assert any("alpha=banana" in shown(w) for w in at.warning)
    assert at.session_state["cv_settings"]["bins"] == 12 and at.session_state["cv_settings"]["alpha"] == 0.05


def _binary_demo():
    d = cv.load_demo("hospital_readmission")
    return d.y, d.y_prob


@pytest.mark.parametrize("page", EXISTING)
def test_pages_without_bootstrap(page):
    at = _open(page, boot="0", scheme="pavabc")
    assert not at.error, [e.value for e in at.error]


@pytest.mark.parametrize("view", ["classwise:3", "top_label:2", "confidence"])
def test_multiclass_binary_views_on_the_reliability_page(view):
    at = _open("pages/1_Reliability.py", "cifar10_resnet50")
    at.selectbox(key="w_view").set_value(view).run()
    assert_clean(at)
    assert at.session_state["cv_settings"]["view"] == view
    names = {"classwise:3": "cat vs rest", "top_label:2": "predicted = bird", "confidence": "confidence"}
    assert any(names[view] in shown(m) for m in at.subheader)


@pytest.mark.parametrize("page", EXISTING)
def test_inconsistent_pavabc_sizes_are_a_message(page):
    at = _open(page, scheme="pavabc", n_min="5000", n_max="100")
    assert not at.exception
    if page in ("pages/1_Reliability.py", "pages/2_Test_based.py"):  # they bin the binary demo with PAVA-BC
        assert at.error and "Largest bin 100 is below Smallest bin 5,000" in shown(at.error[0])


@pytest.mark.parametrize("page", ["pages/1_Reliability.py", "pages/5_Compare.py"])
def test_inconsistent_pavabc_sizes_cost_only_tce_on_pages_of_other_bins(page):
    """A walk-through set the Test-based page's sizes to 50,000 and 1,000 and found Reliability and Compare
    replaced by the error, although they bin uniformly: only TCE needs PAVA-BC, and only TCE is lost."""
    at = _open(page, "loan_recalibration", scheme="uniform", n_min="50000", n_max="1000")
    assert not at.exception
    assert not at.main.error, [shown(e) for e in at.main.error]
    assert figures(at)
    assert "Largest bin 1,000 is below Smallest bin 50,000" in " ".join(shown(e) for e in at.sidebar.error)


def test_a_largest_bin_below_the_default_smallest_stays_in_view_until_fixed():
    """A walk-through set Largest bin to 10 on the Test-based page, then picked uniform bins there: the controls
    vanished while TCE read n/a on every page. They stay in view, with the fix, until the sizes agree."""
    at = _open("pages/2_Test_based.py", tce_scheme="uniform", n_max="10")
    assert at.number_input(key="w_n_max").value == 10  # shown although the page bins uniformly
    message = " ".join(shown(e) for e in at.sidebar.error)
    assert "Largest bin 10 is below Smallest bin" in message and "(rows / 20)" in message, message
    at.number_input(key="w_n_max").set_value(0).run()
    assert_clean(at)
    assert not at.sidebar.error
    assert not [w for w in at.sidebar.number_input if w.key in ("w_n_min", "w_n_max")]  # uniform: hidden again


def test_out_of_range_url_values_are_ignored():
    at = app()
    at.query_params["bins"] = "80"
    at.query_params["span"] = "0.2"
    at.run()
    at.switch_page("pages/1_Reliability.py").run()
    assert_clean(at)
    assert at.session_state["cv_settings"]["bins"] == 15 and at.session_state["cv_settings"]["span"] == 0.75


@pytest.mark.parametrize("demo", ["hospital_readmission", "loan_recalibration"])
def test_tce_reads_the_same_on_the_data_page_and_the_test_based_page(demo):
    """One number format per unit: the TCE headline of the Data page and the Test-based page's TCE are the
    same string (percent with 2 decimals, calibviz.panel.format_value), and so is the page's sentence."""
    from calibviz.panel import format_value

    at = app().run()
    at.selectbox(key="cv_demo_pick").set_value(demo).run()
    assert_clean(at)
    home = metric_values(at)["TCE"]
    at.switch_page("pages/2_Test_based.py").run()
    assert_clean(at)
    page = metric_values(at)["TCE"]
    assert home == page and home.endswith("%") and len(home.split(".")[1]) == 3  # "4.82%"
    d = next(iter(cv.load_demo_models(demo).values()))
    assert page == format_value(cv.metrics.tce(d.y, d.y_prob), "percent")
    assert any(m.value.startswith(f"**{page} of predictions are rejected") for m in at.markdown)


def test_the_vece_chart_says_what_its_whiskers_are():
    """A walk-through met a whisker wholly above its bar (VECE 0.0093, whisker 0.011-0.026) with no legend."""
    from calibviz.variables import VECE_WHISKERS

    at = _open("pages/4_Variables.py")
    assert any(VECE_WHISKERS in shown(c) for c in at.caption)


def test_the_test_based_pages_bins_are_its_own():
    """The Test-based page's Number of bins (uniform or equal-mass TCE) was the other pages' setting: 10 there moved
    the Reliability page's ECE, although the page says it keeps its own binning (a browser walk-through)."""
    at = _open("pages/2_Test_based.py", tce_scheme="uniform")
    at.slider(key="w_tce_bins").set_value(10).run()
    assert_clean(at)
    assert at.session_state["cv_settings"]["tce_bins"] == 10 and at.session_state["cv_settings"]["bins"] == 15
    assert at.query_params["tce_bins"] in ("10", ["10"]) and "bins" not in at.query_params
    at.switch_page("pages/1_Reliability.py").run()
    assert "tce_bins" not in at.query_params  # a setting of the Test-based page only
    assert at.slider(key="w_bins").value == 15


def test_pava_bc_sizes_set_elsewhere_are_named_where_tce_uses_them():
    """Sizes set on the Test-based page changed the Reliability page's TCE (67.36% -> 60.72%) with their controls
    hidden there and nothing saying why (a walk-through); with sizes that cannot form bins the Data page's TCE read
    "PAVABC needs n_min <= n_max, got n_min=500, n_max=300", the library's argument names."""
    at = _open("pages/1_Reliability.py", scheme="uniform", n_min="500", n_max="2000")
    captions = " ".join(c.value for c in at.sidebar.caption)
    assert "TCE bins by PAVA-BC with Smallest bin 500 and Largest bin 2,000" in captions, captions
    at = _open("app.py", n_min="500", n_max="300")
    text = " ".join(m.value for m in at.markdown)
    assert "n_min" not in text and "Largest bin 300 is below Smallest bin 500" in text
    at = _open("pages/2_Test_based.py", n_min="500", n_max="300")  # once, in the main area (below the fold before)
    assert len(at.error) == 1 and not at.sidebar.error
    assert "Largest bin 300 is below Smallest bin 500" in shown(at.main.error[0])


def test_the_reliability_diagram_says_what_its_band_says():
    """A bin outside the green band beside a metric table of "no evidence" read as mixed signals, the band's own
    result said nowhere (a browser walk-through): the caption under the diagram says it."""
    from calibviz.summary import reliability_table
    from calibviz.ui.blocks import band_reading

    at = _open("pages/1_Reliability.py")
    preds = cv.load_demo("hospital_readmission")
    table = reliability_table(preds.y, preds.y_prob, test=None)
    outside = int(((table["obs_rate"] < table["band_low"]) | (table["obs_rate"] > table["band_high"])).sum())
    captions = " ".join(c.value for c in at.caption)
    assert band_reading(table) in captions
    assert (f"{outside} of {len(table)} bins lie outside the green band" if outside else
            "bins lie inside the green band") in captions
    rows = pd.DataFrame({"obs_rate": [0.1, 0.5], "band_low": [0.05, 0.2], "band_high": [0.15, 0.4]})
    assert band_reading(rows).startswith("1 of 2 bins lie outside the green band: evidence of miscalibration")
    assert band_reading(rows.iloc[:1]) == "The bin lies inside the green band: no evidence of miscalibration by the " \
                                          "band's test."
