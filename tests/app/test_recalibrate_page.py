"""AppTest of the Recalibrate page: honest before/after, maps, variables, per-group maps, exports, Compare."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import calibviz as cv
from calibviz.recalibration import cross_fit
from calibviz.ui.text import md

from .helpers import app, assert_clean, figures, shown, upload

pytestmark = [pytest.mark.apptest, pytest.mark.usefixtures("clear_streamlit_caches")]

PAGE = "pages/7_Recalibrate.py"


def _open(demo: str | None = None, **query):
    at = app()
    at.query_params["boot"] = "0"  # bootstrap off: the reference and the values are what these tests read
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    if demo:
        at.selectbox(key="cv_demo_pick").set_value(demo).run()
    at.switch_page(PAGE).run()
    assert_clean(at)
    assert not at.error, [e.value for e in at.error]
    return at


def _table(at) -> pd.DataFrame:
    frames = [d.value for d in at.dataframe]
    return next(f for f in frames if "Before − after" in f.columns)


def test_hospital_before_after_maps_variables_and_exports():
    at = _open()
    figs = figures(at)
    titles = [f["layout"].get("title", {}).get("text", "") for f in figs]
    assert any("Reliability before and after" in c.value for c in at.caption)
    assert any({"before", "Platt scaling", "Isotonic regression"} <= {t.get("name") for t in f["data"]} for f in figs)
    assert any("Fitted recalibration maps" in t for t in titles)
    assert any("error along age" in t for t in titles)
    maps = next(f for f in figs if "Fitted recalibration maps" in f["layout"].get("title", {}).get("text", ""))
    assert {t["name"] for t in maps["data"]} >= {"no change", "Platt", "Isotonic"}
    table = _table(at)
    assert set(table["Method"]) == {"Platt scaling", "Isotonic regression"}
    assert set(table["Metric"]) == {"ECE", "Brier score", "Log loss"}
    # the page's "after" is the out-of-fold ECE (cross-fitting, 5 folds, seed 0)
    d = cv.load_demo("hospital_readmission")
    oof = cross_fit("isotonic", d.y, d.y_prob).y_prob
    row = table[(table["Method"] == "Isotonic regression") & (table["Metric"] == "ECE")].iloc[0]
    assert row["After (95% interval)"].startswith(f"{cv.metrics.ece(d.y, oof):.4f}")
    assert row["Before"] == f"{cv.metrics.ece(d.y, d.y_prob):.4f}"
    assert row["After: calibrated model would show"]  # every after carries its reference
    assert any("VECE along" in m.value for m in at.markdown)
    code = " ".join(c.value for c in at.code)
    assert "from_dict" in code and "predict" in code


def test_methods_and_multiclass_demo():
    at = _open("cifar10_resnet50")
    # multiclass predictions open with temperature scaling (binary ones with Platt and isotonic)
    assert at.multiselect(key="w_recal_methods").value == ["temperature"]
    assert set(_table(at)["Method"]) == {"Temperature scaling"}
    at.multiselect(key="w_recal_methods").set_value(["temperature", "histogram_binning"]).run()
    assert_clean(at)
    table = _table(at)
    assert set(table["Method"]) == {"Temperature scaling", "Histogram binning"}
    assert "Top-label ECE" in set(table["Metric"])
    temp = table[(table["Method"] == "Temperature scaling") & (table["Metric"] == "Log loss")].iloc[0]
    assert not temp["Before − after"].startswith("-")  # temperature scaling lowers the out-of-fold log loss
    figs = figures(at)
    assert any("Confidence before recalibration" in json.dumps(f["layout"]) for f in figs)


def test_user_split_and_one_map_per_level_with_small_level_warning():
    rng = np.random.default_rng(3)
    n = 1500
    p = rng.uniform(0.02, 0.98, n)
    grp = np.where(np.arange(n) < 40, "*tiny*", np.where(np.arange(n) % 2 == 0, "a", "b"))  # Markdown in a level
    y = (rng.uniform(size=n) < np.where(grp == "a", p ** 2, p)).astype(int)
    split = np.where(rng.uniform(size=n) < 0.6, "calibration", "test")
    df = pd.DataFrame({"label": y, "p": p, "grp": grp, "split": split, "x": rng.normal(size=n)})
    at = app()
    at.query_params["boot"] = "0"
    at.run()
    upload(at, "groups.csv", df.to_csv(index=False).encode())
    at.switch_page(PAGE).run()
    assert_clean(at)
    at.selectbox(key="w_recal_split").set_value("split").run()
    assert_clean(at)
    table = _table(at)
    n_test = int((split == "test").sum())
    assert any(f"{n_test:,} test rows" in c.value for c in at.caption)
    at.selectbox(key="w_recal_by").set_value("grp").run()
    assert_clean(at)
    warnings = " ".join(w.value for w in at.warning)
    assert "tiny" in warnings and "too few" in warnings
    assert md("grp = *tiny*: only 40 rows") in warnings  # the level's name is shown as written, not in italics
    assert len(_table(at)) == len(table)


def test_loan_demo_two_models():
    at = _open("loan_recalibration")
    assert figures(at) and len(_table(at))


def test_open_recalibrated_predictions_in_compare():
    at = _open()
    at.button(key="recal_open").click().run()
    assert_clean(at)
    # the button opens the Compare page (its label promises it), which says what was added
    assert any(t.value == "Compare models" for t in at.title)
    assert any("Added the recalibrated predictions as models" in s.value for s in at.success)
    models = at.session_state["cv_models"]
    assert "hospital_readmission · Platt scaling" in models and len(models) == 3
    assert figures(at)


def _params(at) -> dict:
    return {k: v[0] if isinstance(v, list) else v for k, v in at.query_params.items()}


def test_links_carry_the_recalibration_choices_and_the_models_added():
    """Neither was in a link: a Compare page of recalibrated models opened elsewhere read "does not apply to a
    single model", and the Recalibrate page opened on its default methods (a browser walk-through)."""
    at = _open()
    at.multiselect(key="w_recal_methods").set_value(["isotonic", "venn_abers"]).run()
    at.select_slider(key="w_recal_folds").set_value(3).run()
    page = _params(at)
    assert json.loads(page["recal"]) == {"bin_methods": ["isotonic", "venn_abers"], "folds": 3}
    report = app()  # the Report page's recalibration section reads these choices: its link keeps them
    report.query_params["recal"] = page["recal"]
    report.run()
    report.switch_page("pages/6_Report.py").run()
    assert report.checkbox(key="report_recal").label.startswith("Include recalibration: Isotonic regression, "
                                                                "Venn-Abers")
    assert json.loads(_params(report)["recal"]) == json.loads(page["recal"])
    at.button(key="recal_open").click().run()
    assert_clean(at)
    added = _params(at)["added"]
    assert json.loads(added) == [{"model": "hospital_readmission", "methods": ["isotonic", "venn_abers"], "split": "",
                                  "folds": 3, "by": "", "multiclass": "top_label", "seed": 0}]
    assert "recal" not in _params(at)  # the page's own choices stay on its page
    want = at.session_state["cv_models"]
    fresh = app()  # another browser: the link of the Compare page, picking a recalibrated model
    for k, v in {**_params(at), "model": "hospital_readmission · Venn-Abers"}.items():
        fresh.query_params[k] = v
    fresh.run()
    fresh.switch_page("pages/5_Compare.py").run()
    assert_clean(fresh)
    assert not fresh.warning, [w.value for w in fresh.warning]
    got = fresh.session_state["cv_models"]
    assert list(got) == list(want) and fresh.session_state["cv_model"] == "hospital_readmission · Venn-Abers"
    for name in want:
        np.testing.assert_array_equal(got[name].probs, want[name].probs)  # the same fits: same choices and seed
    assert not any("does not apply" in i.value for i in fresh.info)
    fresh = app()
    fresh.query_params["recal"] = json.dumps({"folds": 3, "colour": "red"})
    fresh.query_params["added"] = "[{\"model\": \"nobody\"}]"
    fresh.run()
    warning = " ".join(shown(w) for w in fresh.warning)  # on the page the link opens
    assert "Ignored link settings" in warning and "recal.colour=red" in warning and "nobody" in warning
    fresh.switch_page(PAGE).run()
    assert fresh.select_slider(key="w_recal_folds").value == 3


def test_report_page_offers_the_recalibration_section():
    at = _open()
    at.switch_page("pages/6_Report.py").run()
    assert_clean(at)
    box = at.checkbox(key="report_recal")
    assert box.value and "Platt" in box.label or "platt" in box.label
    assert any("Recalibration (out-of-fold before/after)" in m.value for m in at.markdown)


def test_an_after_value_outside_its_interval_is_explained():
    """A walk-through met 'Isotonic ... 0.0071 (0.0000 – 0.0034)' (tied, calibrated scores): the row's reading
    carries the note of why the value lies outside its interval."""
    import re

    rng = np.random.default_rng(4)
    p = rng.integers(1, 13, 3000) / 13
    csv = pd.DataFrame({"y": (rng.random(3000) < p).astype(int), "p": p}).to_csv(index=False).encode()
    at = app()
    at.query_params["boot"] = "50"
    at.run()
    upload(at, "tied.csv", csv)
    at.switch_page(PAGE).run()
    assert_clean(at)
    table = _table(at)
    outside = []
    for i, text in enumerate(table["After (95% interval)"]):
        m = re.fullmatch(r"(\S+) \((\S+) – (\S+)\)", str(text))
        if m and not float(m[2]) <= float(m[1]) <= float(m[3]):
            outside.append(i)
    assert outside, "the data no longer give a value outside its interval: pick others"
    rows = [m.value for m in at.markdown if m.value.startswith("**") and ":** " in m.value]
    rows = rows[-len(table):]  # the expander's one line per row, in the table's order
    # the note names the interval it speaks of (the sentence shows only the difference's)
    assert all(re.search(r"After recalibration \(its interval \S+ – \S+\): the value lies", rows[i])
               for i in outside), rows


def test_before_shows_the_reference_of_the_reliability_page():
    """The hospital demo's 'Before: calibrated model would show' read ECE 0.0031-0.0075 on this page and
    0.0031-0.0079 on Reliability (100 redraws here, 200 there; a walk-through). Both draw what every page draws
    for the metric now (ui.blocks.page_redraws), so one metric has one reference."""
    at = _open()
    before = _table(at).drop_duplicates("Metric").set_index("Metric")["Before: calibrated model would show"]
    caption = " ".join(c.value for c in at.caption)
    assert "as on the other pages" in caption
    at.switch_page("pages/1_Reliability.py").run()
    assert_clean(at)
    reliability = next(d.value for d in at.dataframe if "Calibrated model would show" in d.value.columns)
    reliability = reliability.set_index("Metric")["Calibrated model would show"]
    shared = [m for m in before.index if m in reliability.index]
    assert {"ECE", "Brier score", "Log loss"} <= set(shared)
    for m in shared:
        assert before[m] == reliability[m], (m, before[m], reliability[m])


def test_no_metric_selected_shows_the_default_metrics():
    """A review: with every metric deselected the page said "n_reference has no redraws for ece, ace, tce,
    smooth_ece" (the table fell back to its defaults, the redraws did not). Both use the defaults now."""
    at = _open()
    at.multiselect(key="w_recal_metrics").set_value([]).run()
    assert_clean(at)
    assert not at.error, [e.value for e in at.error]
    assert {"ECE", "ACE"} <= set(_table(at)["Metric"])


def test_a_session_file_keeps_the_recalibrated_models_added():
    """The session file keeps the view as the link does: the recalibrated models added are fitted again."""
    from calibviz.io.session import DataRef, dump_session
    from calibviz.ui.settings import SETTINGS, _url_value

    at = _open()
    at.button(key="recal_open").click().run()
    want = at.session_state["cv_models"]
    src = at.session_state["cv_source"]
    values = {k: _url_value(v) for k, v in at.session_state["cv_settings"].items() if k in SETTINGS}
    values["added"] = _params(at)["added"]  # what the sidebar's Save session adds (ui.session)
    ref = DataRef(kind=src["kind"], name=src["name"], sha256=None, demo=src.get("demo"), options=dict(src["options"]),
                  models=dict(src["fingerprints"]), rows=None, model="hospital_readmission · Isotonic regression")
    raw = dump_session(page="Compare", settings=values, data=ref, payload=None)
    fresh = app().run()
    fresh.toggle(key="cv_session_show").set_value(True).run()
    fresh.file_uploader(key="cv_session_file").set_value(("view.calibviz.json", raw, "application/json")).run()
    assert_clean(fresh)
    assert not fresh.warning, [shown(w) for w in fresh.warning]
    assert list(fresh.session_state["cv_models"]) == list(want)
    assert fresh.session_state["cv_model"] == "hospital_readmission · Isotonic regression"


def test_intervals_on_large_data_wait_for_a_button(monkeypatch):
    """Above the bootstrap budget the page left the intervals, and the better / worse calls, out and pointed to the
    command line (a walk-through); they now wait for a button, as on the other pages."""
    import calibviz.ui.recalibrate as R

    monkeypatch.setattr(R, "BOOTSTRAP_ROW_BUDGET", 1000)
    at = _open(boot="50")
    table = _table(at)
    assert table["95% interval of the difference"].eq("").all() or table["95% interval of the difference"].isna().all()
    button = at.button(key="recal_boot")
    assert button.label.startswith("Compute 95% intervals and the better / worse calls (50 paired bootstrap")
    assert "wait for the button above" in " ".join(c.value for c in at.caption)
    button.click().run()
    assert_clean(at)
    assert not [b for b in at.button if b.key == "recal_boot"]
    assert _table(at)["95% interval of the difference"].str.contains("–|to").all()
    # the call in a word beside the metric (after the calibrated ranges it was off-screen at 1024 px)
    change = _table(at)["Change"]
    assert set(change) <= {"better", "worse", "no clear change"} and len(change)
    assert list(_table(at).columns[:4]) == ["Method", "Metric", "Change", "Before"]


@pytest.mark.parametrize("added", [
    '[{"model": ["x"]}]',  # an unhashable model name failed the page with TypeError (a review)
    "[" * 5000 + "]" * 5000,  # a RecursionError escaped the JSON reading
    '[{"model": "hospital_readmission", "methods": ["platt"], "split": "", "folds": 5, "by": "bmi", '
    '"multiclass": "top_label", "seed": 0}]',  # one map per value of a continuous column: 16 s of fits
    '[{"model": "hospital_readmission", "methods": ["platt"], "split": "age", "folds": 5, "by": "", '
    '"multiclass": "top_label", "seed": 0}]',  # a split column of many values made cross_fit fail the page
    '[{"model": "hospital_readmission", "methods": ["platt"], "split": "", "folds": 5, "by": "", '
    '"multiclass": "top_label", "seed": true}]',
])
def test_a_crafted_added_link_is_ignored_with_a_warning(added):
    at = app()
    at.query_params["added"] = added
    at.run()
    assert_clean(at)
    assert not at.error, [shown(e) for e in at.error]
    assert "Ignored link settings" in " ".join(shown(w) for w in at.warning)
    assert list(at.session_state["cv_models"]) == ["hospital_readmission"]
