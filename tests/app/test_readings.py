"""Readings that used to claim miscalibration that calibrated models show by chance (a review's simulations,
29 Nov 2026): the top-label pluses, the per-level diagrams, one Test-based view among many."""
from __future__ import annotations

import pytest

from calibviz.multiclass import TOP_LABEL_READING

from .helpers import app, assert_clean, shown

pytestmark = [pytest.mark.apptest, pytest.mark.usefixtures("clear_streamlit_caches")]


def _open(page: str, data: str):
    at = app()
    at.query_params["data"] = data
    at.run()
    at.switch_page(page).run()
    assert_clean(at)
    return at


def test_pluses_point_to_the_tested_top_label_ece():
    at = _open("pages/3_Multiclass.py", "cifar10_resnet50")
    captions = [shown(c) for c in at.caption]
    assert any(TOP_LABEL_READING in c for c in captions)
    assert not any("only because classes cancel out" in c for c in captions)


def test_test_based_page_says_a_verdict_is_about_one_view_of_many():
    at = _open("pages/2_Test_based.py", "cifar10_resnet50")
    notes = [shown(c) for c in at.caption if shown(c).startswith("The verdict is about this view alone")]
    # confidence, 10 one-vs-rest views and one per predicted class
    n_views = len(at.selectbox(key="w_view").options)
    assert notes and f"the {n_views} views" in notes[0] and n_views >= 11
    at = _open("pages/2_Test_based.py", "hospital_readmission")
    assert not [c for c in at.caption if shown(c).startswith("The verdict is about this view alone")]


def test_level_diagrams_do_not_call_a_level_miscalibrated_by_eye():
    at = _open("pages/4_Variables.py", "hospital_readmission")
    [sb for sb in at.selectbox if sb.label == "Variable"][0].set_value("ward").run()
    assert_clean(at)
    caption = [shown(c) for c in at.caption if shown(c).startswith("One reliability diagram per level")]
    assert caption and "by chance even for a calibrated model" in caption[0] and "95% interval" in caption[0]
    assert "is miscalibrated however good" not in caption[0]


def test_levels_are_judged_together_on_the_page():
    """The page's sentence on the levels of ward is level_test_sentence of subgroup_table (computed here with the
    page's defaults), and the table shows the adjusted p-values."""
    import calibviz as cv
    from calibviz.ui.settings import SETTINGS
    from calibviz.variables import level_test_sentence, subgroup_table

    d = cv.load_demo("hospital_readmission")
    t = subgroup_table(d.features["ward"], d.y, d.y_prob, kind="rate", n_resamples=SETTINGS["boot"].default,
                       random_state=SETTINGS["seed"].default)
    expected = level_test_sentence(t, SETTINGS["alpha"].default, "rate", strong=lambda s: f"**{s}**")
    at = _open("pages/4_Variables.py", "hospital_readmission")
    [sb for sb in at.selectbox if sb.label == "Variable"][0].set_value("ward").run()
    assert_clean(at)
    texts = [m.value for m in at.markdown]
    assert expected in texts or expected.replace("_", "\\_") in texts
    assert "p (levels judged together)" in at.dataframe[0].value.columns


def test_the_ranking_says_which_vece_is_beyond_a_calibrated_model():
    """vece_test_sentence of variable_ranking with the page's defaults (computed here) is on the page."""
    import calibviz as cv
    from calibviz.ui.settings import SETTINGS
    from calibviz.variables import variable_ranking, vece_test_sentence

    d = cv.load_demo("hospital_readmission")
    r = variable_ranking(d.features, d.y, d.y_prob, n_resamples=SETTINGS["boot"].default,
                         random_state=SETTINGS["seed"].default)
    expected = vece_test_sentence(r, SETTINGS["alpha"].default, strong=lambda s: f"**{s}**")
    assert expected.startswith("VECE beyond what a calibrated model shows (the 6 variables judged together")
    at = _open("pages/4_Variables.py", "hospital_readmission")
    texts = [m.value for m in at.markdown]
    assert expected in texts or expected.replace("_", "\\_") in texts


def test_tce_reads_one_verdict_on_every_page():
    """TCE's verdict is judged with the sidebar panel's other tests on the Data, Reliability and Test-based pages
    alike: the Test-based page judged it alone ("evidence (p = 0.05)") beside the Reliability page's "no evidence
    (p = 0.05 on its own, p = 0.35 adjusted)", and the Data page judged its three headline metrics among themselves
    (a walk-through)."""
    at = _open("pages/2_Test_based.py", "hospital_readmission")
    headline = shown(next(m for m in at.markdown if "rejected by the binomial test" in m.value))
    verdict = headline[headline.index("A perfectly calibrated model"):]
    assert "adjusted for the 7 tests judged together" in verdict, verdict
    at.switch_page("pages/1_Reliability.py").run()
    assert_clean(at)
    assert any(verdict in shown(m) for m in at.markdown if m.value.startswith("**TCE =")), verdict
    at.switch_page("app.py").run()
    assert_clean(at)
    assert any(verdict in shown(m) for m in at.markdown if m.value.startswith("**TCE =")), verdict
    assert any("7 tests in all, as on the Reliability page" in shown(c) for c in at.caption)
    # other bins than the panel's: this TCE is another statistic, judged on its own and said so
    at.switch_page("pages/2_Test_based.py")
    at.session_state["cv_settings"]["tce_scheme"] = "uniform"
    at.run()
    assert_clean(at)
    other = shown(next(m for m in at.markdown if "rejected by the binomial test" in m.value))
    assert "judged on its own" in other and "judged together" not in other, other


def test_error_curves_of_a_binary_model_say_what_over_confident_means_for_the_risk():
    """'over-confident for older patients' beside the demo's 'under-predicts their risk' read as a contradiction
    (a walk-through): on binary data the error curves say how the two vocabularies meet; rate curves need not."""
    from calibviz.variables import ERROR_CURVES_ON_BINARY

    at = _open("pages/4_Variables.py", "hospital_readmission")
    assert any(shown(c) == ERROR_CURVES_ON_BINARY for c in at.caption)
    at.radio(key="w_kind").set_value("rate").run()
    assert_clean(at)
    assert not any(shown(c) == ERROR_CURVES_ON_BINARY for c in at.caption)


def test_a_reference_that_waits_keeps_its_place_in_the_family():
    """CIFAR-10's Data page leaves class-wise ECE's reference to a button: its headline verdicts were judged among 3
    tests, among 4 once the Multiclass page had computed it (a walk-through). The waiting test now counts as one
    without evidence: 4 tests on both visits, and the caption names the Multiclass page's panel."""
    import streamlit as st

    st.cache_data.clear()  # this module's other tests computed class-wise ECE's reference on the Multiclass page
    st.cache_resource.clear()
    at = _open("app.py", "cifar10_resnet50")

    def confidence_sentence():
        return next(shown(m) for m in at.markdown if m.value.startswith("**Confidence ECE"))

    first = confidence_sentence()
    assert "adjusted for the 4 tests judged together" in first, first
    assert any("4 tests in all, as on the Multiclass page" in shown(c) and "counts as one without evidence"
               in shown(c) for c in at.caption)
    at.switch_page("pages/3_Multiclass.py").run()
    assert_clean(at)
    at.switch_page("app.py").run()
    assert_clean(at)
    assert "adjusted for the 4 tests judged together" in confidence_sentence()
