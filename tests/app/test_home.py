"""AppTest of the home page: demos, uploads, bad uploads keep the previous data."""
from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

import calibviz as cv
from tests.conftest import BAD, bad_catalogue

from .helpers import app, assert_clean, metric_values, upload, shown

pytestmark = [pytest.mark.apptest, pytest.mark.usefixtures("clear_streamlit_caches")]


def test_opens_on_the_default_demo_fully_populated():
    at = app().run()
    assert_clean(at)
    m = metric_values(at)
    assert m["Rows"] == "20,000" and m["Classes"] == "2"
    assert m["Prevalence of 1"] == "16.6%"
    assert not at.error


@pytest.mark.parametrize("name", cv.demo_datasets())
def test_every_demo(name):
    at = app().run()
    at.selectbox(key="cv_demo_pick").set_value(name).run()
    assert_clean(at)
    preds = next(iter(cv.load_demo_models(name).values()))
    assert metric_values(at)["Rows"] == f"{preds.n:,}"
    assert metric_values(at)["Classes"] == str(preds.n_classes)
    assert at.session_state["cv_source"]["demo"] == name


def test_upload_binary_csv_and_multiclass_parquet():
    at = app().run()
    rng = np.random.default_rng(0)
    p = rng.uniform(size=300)
    df = pd.DataFrame({"y": rng.binomial(1, p), "score": p, "age": rng.integers(18, 90, 300)})
    upload(at, "binary.csv", df.to_csv(index=False).encode())
    assert_clean(at)
    assert not at.error
    assert metric_values(at)["Rows"] == "300"
    P = rng.dirichlet(np.ones(4), 200)
    mdf = pd.DataFrame(P, columns=[f"p_{c}" for c in "wxyz"])
    mdf["label"] = np.array(list("wxyz"))[rng.integers(0, 4, 200)]
    buf = io.BytesIO()
    mdf.to_parquet(buf)
    upload(at, "multi.parquet", buf.getvalue(), "application/octet-stream")
    assert_clean(at)
    assert metric_values(at)["Classes"] == "4" and metric_values(at)["Rows"] == "200"


@pytest.mark.parametrize("name", sorted(bad_catalogue()))
def test_bad_upload_shows_error_and_keeps_previous_data(name):
    case = bad_catalogue()[name]
    if case["kwargs"]:
        pytest.skip("needs a library option (covered by the library tests)")
    at = app().run()
    before = metric_values(at)
    upload(at, name, (BAD / name).read_bytes())
    assert_clean(at)
    assert at.error, "the problem must be shown with st.error"
    with pytest.raises(cv.InputError) as lib:  # the dashboard shows the library's error in its own words
        cv.load_predictions((BAD / name).read_bytes(), name=name)
    assert case["expect"] in str(lib.value) and lib.value.ui_message in shown(at.error[0])
    assert "previously loaded data" in shown(at.error[0])
    assert metric_values(at) == before
    assert at.session_state["cv_source"]["demo"] == "hospital_readmission"


def test_unmappable_upload_can_be_fixed_in_the_mapping_form():
    at = app().run()
    df = pd.DataFrame({"readmitted": [0, 1] * 15, "risk_score": np.linspace(0.1, 0.9, 30)})
    upload(at, "needs_mapping.csv", df.to_csv(index=False).encode())
    assert at.error and "no label column" in shown(at.error[0])
    form_label = at.selectbox[[s.label for s in at.selectbox].index("Label column")]
    form_label.set_value("readmitted")
    at.multiselect[0].set_value(["risk_score"])
    at.button[0].click().run()
    assert_clean(at)
    assert not at.error
    assert metric_values(at)["Rows"] == "30"
    assert at.session_state["cv_source"]["name"] == "needs_mapping.csv"


def test_start_file_from_calibviz_app(monkeypatch, tmp_path):
    """`calibviz app FILE` passes the file through $CALIBVIZ_DATA; a bad one falls back to the demo, with its error."""
    rng = np.random.default_rng(3)
    p = rng.uniform(size=120)
    good = tmp_path / "start.csv"
    pd.DataFrame({"label": rng.binomial(1, p), "p": p}).to_csv(good, index=False)
    monkeypatch.setenv("CALIBVIZ_DATA", str(good))
    at = app().run()
    assert_clean(at)
    assert metric_values(at)["Rows"] == "120" and at.session_state["cv_source"]["name"] == "start.csv"
    monkeypatch.setenv("CALIBVIZ_DATA", str(BAD / "no_label_column.csv"))
    at = app().run()
    assert_clean(at)
    assert at.error and "no label column" in shown(at.error[0])
    assert metric_values(at)["Rows"] == "20,000"


def test_back_to_the_demo_after_an_upload():
    at = app().run()
    rng = np.random.default_rng(8)
    p = rng.uniform(size=50)
    upload(at, "mine.csv", pd.DataFrame({"label": rng.binomial(1, p), "p": p}).to_csv(index=False).encode())
    assert any("mine.csv" in shown(i) for i in at.info)
    at.button(key="cv_back_to_demo").click().run()
    assert_clean(at)
    assert metric_values(at)["Rows"] == "20,000" and at.session_state["cv_source"]["kind"] == "demo"


def test_a_gap_that_rounds_to_zero_reads_matches():
    """'under-predicts the rate of 1 by 0.0 percentage points' must read 'matches' (binary and multiclass)."""
    from calibviz.ui.home import mean_gap_reading

    assert "**matches**" in mean_gap_reading(0.16604, 0.1660, 1) and "0.0 percentage" not in \
        mean_gap_reading(0.16604, 0.1660, 1)
    assert "under-predicts" in mean_gap_reading(0.1650, 0.1660, 1, p_value=0.01)
    assert "**matches** its accuracy" in mean_gap_reading(0.9300, 0.93004)
    at = app().run()
    # 200 rows, prevalence 0.25, every prediction 0.2502: 0.02 percentage points apart
    df = pd.DataFrame({"y": [1] * 50 + [0] * 150, "score": [0.2502] * 200})
    upload(at, "flat.csv", df.to_csv(index=False).encode())
    assert_clean(at)
    text = " ".join(m.value for m in at.markdown)
    assert "On average the model **matches** the rate of *1* (within 0.05 percentage points" in text
    assert "-predicts**" not in text  # (the panel's readings are panel.py's; this is the summary sentence)


def test_a_gap_is_read_as_a_direction_only_beyond_chance():
    """A gap is never exactly 0: read by its sign alone it called 88-95% of calibrated models over- or
    under-predicting (binary and multiclass)."""
    from calibviz.ui.home import mean_gap_reading

    assert "**matches** the rate of *1* within chance" in mean_gap_reading(0.169, 0.166, 1, p_value=0.4)
    assert "**over-predicts**" in mean_gap_reading(0.169, 0.166, 1, p_value=0.04)
    assert "**over-predicts**" not in mean_gap_reading(0.169, 0.166, 1, p_value=0.04, alpha=0.01)
    assert "within chance" in mean_gap_reading(0.95, 0.93, p_value=0.2)
    assert "**matches**" in mean_gap_reading(0.169, 0.166, 1)  # no test: no direction claimed
    at = app().run()
    rng = np.random.default_rng(4)
    p = rng.beta(2, 5, 3000)
    df = pd.DataFrame({"y": (rng.uniform(size=3000) < p).astype(int), "score": p})  # calibrated
    upload(at, "calibrated.csv", df.to_csv(index=False).encode())
    assert_clean(at)
    text = " ".join(m.value for m in at.markdown)
    assert "within chance" in text and "against a calibrated model" in text and "-predicts**" not in text


def test_removing_a_failed_upload_clears_its_error_and_mapping():
    """A walk-through removed the files whose upload failed; the error and "Column mapping of ... (needs your
    input)" stayed on every page. Removing them clears both; the data shown before stay."""
    at = app().run()
    before = metric_values(at)
    upload(at, "bad.csv", b"y,p\n1,0.2\n0,nan\n1,0.7\n")
    assert at.error and any("not loaded: check the columns" in e.label for e in at.expander)
    at.file_uploader(key="cv_upload").set_value([]).run()
    assert_clean(at)
    assert not at.error and not any("not loaded: check the columns" in e.label for e in at.expander)
    assert metric_values(at) == before


def test_a_one_class_upload_is_analysed_with_a_note_and_the_reliability_page_shows_its_metrics():
    """Labels all 1 were refused ("only one class (1) occurs ..."), although a model that gave them 0.4-0.59 is
    plainly miscalibrated (a one-class log is still a calibration question). Now loaded: the mapping names both
    classes, the note says which occurs, and the Reliability page shows its metric table; its ROC tab says why
    there is no AUC instead of ending the page (its error stopped the page before the metric table)."""
    at = app().run()
    upload(at, "allones.csv", b"y,p\n" + b"".join(b"1,0.%d\n" % (40 + i) for i in range(20)))
    assert_clean(at)
    assert not at.error, [shown(e) for e in at.error]
    captions = " ".join(shown(c) for c in at.caption)
    assert "classes 0, 1 (only 1 occurs in the labels)" in captions, captions
    infos = " ".join(shown(i) for i in at.info)
    assert "only class 1 occurs in the labels (no row of class 0)" in infos, infos
    at.switch_page("pages/1_Reliability.py").run()
    assert_clean(at)
    assert not at.error, [shown(e) for e in at.error]
    assert any("ECE" in df.value.to_string() for df in at.dataframe), "no metric table"
    infos = " ".join(shown(i) for i in at.info)
    assert "the auc needs both outcomes" in infos.lower(), infos


def test_choosing_an_encoding_that_refuses_the_file_is_a_message():
    """The Encoding control offers utf-16: on a UTF-8 file its codec raised UnicodeError, a traceback on the page
    (a robustness review)."""
    at = app().run()
    upload(at, "ok.csv", b"y,p\n" + b"1,0.7\n0,0.2\n" * 10)
    before = metric_values(at)
    next(s for s in at.selectbox if s.label == "Encoding").set_value("utf-16").run()
    assert_clean(at)
    assert any("cannot be read as utf-16 text" in shown(w) for w in at.warning)
    assert metric_values(at) == before


def test_a_workbook_with_the_predictions_on_its_second_sheet_can_be_loaded():
    """The mapping panel had no sheet control: a workbook whose first sheet holds notes could not be loaded from
    the dashboard (its message said to choose the Label column among the first sheet's columns)."""
    buf = io.BytesIO()
    with pd.ExcelWriter(buf) as w:
        pd.DataFrame({"a": [1, 2]}).to_excel(w, sheet_name="notes", index=False)
        pd.DataFrame({"y": [0, 1] * 15, "p": [0.2, 0.7] * 15}).to_excel(w, sheet_name="data", index=False)
    at = app().run()
    upload(at, "book.xlsx", buf.getvalue(), "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")
    assert "choose the Sheet in the column mapping" in shown(at.error[0]) and "('data')" in shown(at.error[0])
    at.selectbox(key=next(s.key for s in at.selectbox if s.label == "Sheet")).set_value("data").run()
    assert_clean(at)
    at.button(key=next(b.key for b in at.button if b.label == "Apply mapping")).click().run()
    assert_clean(at)
    assert not at.error and metric_values(at)["Rows"] == "30"


def test_a_workbook_among_several_files_gets_its_sheet_control():
    """Added to a CSV already in the uploader, a workbook whose first sheet holds notes said "choose the Sheet in
    the column mapping" while the mapping showed only the CSV's reading options (a walk-through)."""
    buf = io.BytesIO()
    with pd.ExcelWriter(buf) as w:
        pd.DataFrame({"a": [1, 2]}).to_excel(w, sheet_name="notes", index=False)
        pd.DataFrame({"y": [0, 1] * 15, "p": [0.2, 0.7] * 15}).to_excel(w, sheet_name="data", index=False)
    csv = pd.DataFrame({"y": [0, 1] * 15, "p": [0.3, 0.6] * 15}).to_csv(index=False).encode()
    at = app().run()
    at.file_uploader(key="cv_upload").set_value([
        ("first.csv", csv, "text/csv"),
        ("book.xlsx", buf.getvalue(), "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")]).run()
    assert at.error and "choose the Sheet in the column mapping" in shown(at.error[0])
    at.selectbox(key=next(s.key for s in at.selectbox if s.label == "Sheet")).set_value("data").run()
    at.button(key=next(b.key for b in at.button if b.label == "Apply mapping")).click().run()
    assert_clean(at)
    assert not at.error, [shown(e) for e in at.error]
    assert at.session_state["cv_source"].get("files")


def test_a_tile_whose_value_lies_outside_its_interval_points_to_the_note():
    """A calibrated upload showed 'TCE 11.09%' over '95% interval 14.36% - 32.25%' with nothing beside it (a
    walk-through): the headline tiles now say where the interval lies and point to the note below, which says why;
    a value inside its interval gets no remark."""
    rng = np.random.default_rng(0)
    p = rng.beta(2, 5, 20_000)
    y = (rng.random(20_000) < p).astype(int)
    buf = io.StringIO()
    pd.DataFrame({"y": y, "p": p.round(6)}).to_csv(buf, index=False)
    at = upload(app().run(), "calibrated.csv", buf.getvalue().encode())
    assert_clean(at)
    captions = [c.value for c in at.caption if c.value.startswith("95% interval")]
    values = {m.label: m.value for m in at.metric if m.label in ("ECE", "TCE", "smECE")}
    assert len(captions) == len(values) == 3
    for (label, value), caption in zip(values.items(), captions):
        low, high = (float(v.rstrip("%")) for v in caption.split()[2:5:2])
        v = float(value.rstrip("%"))
        outside = not (low <= v <= high)
        assert ("see the note below" in caption) == outside, (label, value, caption)
        if outside:
            assert ("lies above the value" in caption) == (low > v)
    assert any("see the note below" in c for c in captions)
    notes = " ".join(shown(m) for m in at.markdown)
    assert "The value lies" in notes


def test_a_file_refused_for_its_values_names_its_columns_plainly():
    """A file with a probability of 1.3: the mapping panel read 'needs your input' (no mapping fixes a value) and
    'probabilities model: p' (the default model name); it now says the file is not loaded and names the column."""
    rng = np.random.default_rng(0)
    p = rng.uniform(size=200).round(3)
    p[5] = 1.3
    buf = io.StringIO()
    pd.DataFrame({"y": (rng.random(200) < p).astype(int), "p": p}).to_csv(buf, index=False)
    at = upload(app().run(), "bad13.csv", buf.getvalue().encode())
    assert_clean(at)
    assert "hold values outside it in 1 row" in shown(at.error[0])
    assert any("not loaded: check the columns" in e.label for e in at.expander)
    detected = [shown(c) for c in at.caption if shown(c).startswith("Detected:")]
    assert detected and "probabilities p, classes" in detected[0] and "model:" not in detected[0]
