"""AppTest of the layouts people export (#14 part 3) and the mapping panel's reading options (#16)."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import calibviz as cv
from tests.conftest import BAD, bad_catalogue

from .helpers import app, assert_clean, metric_values, shown, upload

pytestmark = [pytest.mark.apptest, pytest.mark.usefixtures("clear_streamlit_caches")]

PYTHON_SYNTAX = re.compile(r"\w+=|[{}]|\[['\"]")


@pytest.fixture(autouse=True)
def _store(tmp_path, monkeypatch):
    monkeypatch.setenv("CALIBVIZ_STORE_DIR", str(tmp_path / "store"))


def _export(n=240, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.02, 0.98, n)
    y = rng.binomial(1, p)
    q = np.clip(p + rng.normal(0, 0.15, n), 0, 1)
    return pd.DataFrame({"x0": rng.normal(size=n), "y_true": y, "logreg_proba": p, "rf_proba": q})


def _csv(df) -> bytes:
    return df.to_csv(index=False).encode()


def _widget(at, kind, label):
    return next(w for w in getattr(at, kind) if w.label == label)


def test_one_probability_column_per_model_is_two_models():
    at = app().run()
    df = _export()
    upload(at, "export.csv", _csv(df))
    assert_clean(at)
    assert not at.error
    models = at.session_state["cv_models"]
    assert list(models) == ["logreg", "rf"]
    np.testing.assert_array_equal(models["rf"].y_prob, df["rf_proba"].to_numpy())
    # the panel shows the detection: label y_true (not x0), both columns, one model each
    assert _widget(at, "selectbox", "Label column").value == "y_true"
    assert _widget(at, "multiselect", "Probability columns").value == ["logreg_proba", "rf_proba"]
    assert _widget(at, "radio", "The probability columns hold").value == "one model each"


def test_several_files_are_several_models_matched_by_id():
    at = app().run()
    df = _export().assign(id=np.arange(240) + 1000)
    a = df[["id", "y_true", "x0", "logreg_proba"]].rename(columns={"logreg_proba": "proba"})
    b = df[["id", "y_true", "rf_proba"]].rename(columns={"rf_proba": "proba"}).sample(frac=1, random_state=3)
    at.file_uploader(key="cv_upload").set_value([("logreg.csv", _csv(a), "text/csv"),
                                                 ("rf.csv", _csv(b), "text/csv")])
    at.run()
    assert_clean(at)
    assert not at.error, [e.value for e in at.error]
    models = at.session_state["cv_models"]
    assert list(models) == ["logreg", "rf"]
    np.testing.assert_array_equal(models["rf"].y_prob, df["rf_proba"].to_numpy())
    np.testing.assert_array_equal(models["rf"].y, df["y_true"].to_numpy())
    assert at.session_state["cv_source"]["files"] == ["logreg.csv", "rf.csv"]
    assert metric_values(at)["Rows"] == "240"
    # a missing id: a clear message in the dashboard's words, the two models stay
    upload_two = [("logreg.csv", _csv(a), "text/csv"), ("rf.csv", _csv(b[b["id"] != 1005]), "text/csv")]
    at.file_uploader(key="cv_upload").set_value(upload_two)
    at.run()
    assert_clean(at)
    assert at.error and "rf.csv lacks 1 id(s) of logreg.csv (1005)" in shown(at.error[0])
    assert list(at.session_state["cv_models"]) == ["logreg", "rf"]


def test_several_files_without_ids_must_list_the_same_labels():
    at = app().run()
    df = _export()
    a, b = df[["y_true", "logreg_proba"]], df[["y_true", "rf_proba"]].iloc[::-1]
    at.file_uploader(key="cv_upload").set_value([("lr.csv", _csv(a), "text/csv"), ("rf.csv", _csv(b), "text/csv")])
    at.run()
    assert_clean(at)
    assert at.error and "different labels" in shown(at.error[0]) and "add an id column" in shown(at.error[0])
    assert at.session_state["cv_source"]["demo"] == "hospital_readmission"


def test_positive_class_is_chosen_among_the_labels():
    at = app().run()
    rng = np.random.default_rng(5)
    p = rng.uniform(size=200)
    lab = np.where(rng.uniform(size=200) < p, "malignant", "benign")
    df = pd.DataFrame({"diagnosis": lab, "p_benign": 1 - p, "p_malignant": p, "age": rng.integers(30, 80, 200)})
    upload(at, "tumours.csv", _csv(df))
    assert_clean(at)
    pred = next(iter(at.session_state["cv_models"].values()))
    first = pred.classes[1]
    positive = _widget(at, "selectbox", "Positive class")
    assert positive.options == ["(auto-detect)", "benign", "malignant"]
    other = "benign" if first == "malignant" else "malignant"
    positive.set_value(other)
    _widget(at, "multiselect", "Probability columns").set_value(["p_benign", "p_malignant"])
    at.run()
    _widget(at, "radio", "The probability columns hold").set_value("one class each")
    at.button(key=next(b.key for b in at.button if b.label == "Apply mapping")).click().run()
    assert_clean(at)
    assert not at.error, [e.value for e in at.error]
    pred = next(iter(at.session_state["cv_models"].values()))
    assert pred.classes[1] == other
    np.testing.assert_allclose(pred.y_prob, p if other == "malignant" else 1 - p)
    assert list(pred.features.columns) == ["age"]
    # only one of the two columns: the other never becomes a feature
    _widget(at, "multiselect", "Probability columns").set_value(["p_malignant"])
    at.run()
    at.button(key=next(b.key for b in at.button if b.label == "Apply mapping")).click().run()
    assert_clean(at)
    pred = next(iter(at.session_state["cv_models"].values()))
    assert list(pred.features.columns) == ["age"] and pred.classes[1] == other
    np.testing.assert_allclose(pred.y_prob, p if other == "malignant" else 1 - p)


def test_ambiguous_layout_is_fixed_in_the_panel():
    at = app().run()
    df = _export().rename(columns={"logreg_proba": "p_1"})
    upload(at, "ambiguous.csv", _csv(df))
    assert_clean(at)
    msg = shown(at.error[0])
    assert "ambiguous" in msg and "one model per column" in msg and not PYTHON_SYNTAX.search(msg)
    # the hint preselects reading (b): both columns, one model each
    assert _widget(at, "multiselect", "Probability columns").value == ["p_1", "rf_proba"]
    assert _widget(at, "radio", "The probability columns hold").value == "one model each"
    at.button(key=next(b.key for b in at.button if b.label == "Apply mapping")).click().run()
    assert_clean(at)
    assert not at.error and list(at.session_state["cv_models"]) == ["p_1", "rf"]


def test_encoding_and_decimal_comma_chosen_in_the_panel():
    at = app().run()
    rng = np.random.default_rng(6)
    p = rng.uniform(size=60).round(3)
    text = "Größe;label;p\n" + "".join(f"{g};{y};{str(v).replace('.', ',')}\n"
                                        for g, y, v in zip(rng.integers(150, 200, 60), rng.binomial(1, p), p))
    upload(at, "excel_export.csv", text.encode("cp1252"))
    assert_clean(at)
    assert at.error and "Encoding" in shown(at.error[0]) and "encoding=" not in shown(at.error[0])
    encoding = _widget(at, "selectbox", "Encoding")
    assert encoding.value == "cp1252"  # preselected by the error's hint
    assert _widget(at, "selectbox", "Decimal").value is None  # auto-detect finds the comma
    at.button(key=next(b.key for b in at.button if b.label == "Apply mapping")).click().run()
    assert_clean(at)
    assert not at.error, [e.value for e in at.error]
    pred = next(iter(at.session_state["cv_models"].values()))
    np.testing.assert_allclose(pred.y_prob, p)
    assert list(pred.features.columns) == ["Größe"]
    assert at.session_state["cv_source"]["options"]["encoding"] == "cp1252"


@pytest.mark.parametrize("name", sorted(n for n, c in bad_catalogue().items() if not c["kwargs"]))
def test_dashboard_errors_have_no_python_syntax(name):
    """Every bad file of the catalogue: the dashboard's message names controls, not keyword arguments."""
    with pytest.raises(cv.InputError) as err:
        cv.load_predictions((BAD / name).read_bytes(), name=name)
    assert not PYTHON_SYNTAX.search(err.value.ui_message), err.value.ui_message


def test_weighted_rows_are_said_in_the_data_summary():
    """A file with a weight column is analysed weighted everywhere, which no page said (a browser review)."""
    rng = np.random.default_rng(8)
    p = rng.uniform(size=300)
    w = rng.lognormal(0, 1, 300)
    frame = pd.DataFrame({"label": (rng.random(300) < p).astype(int), "p": p, "weight": w})
    at = app().run()
    upload(at, "weighted.csv", frame.to_csv(index=False).encode())
    assert_clean(at)
    kish = w.sum() ** 2 / (w @ w)
    assert any(c.value.startswith("Weighted rows:") and f"{kish:,.0f} of 300 rows" in c.value for c in at.caption)
    upload(at, "plain.csv", frame.drop(columns="weight").to_csv(index=False).encode())
    assert not any(c.value.startswith("Weighted rows:") for c in at.caption)


def test_the_band_caption_says_it_is_approximate_with_weights():
    """With case weights the all-bins band is binomial at Kish's effective size, which an audit found left by
    5.7-12% of calibrated logs with rare events: the Reliability page says so on weighted data only."""
    from calibviz.summary import WEIGHTED_BAND_NOTE

    rng = np.random.default_rng(9)
    p = rng.uniform(size=300)
    frame = pd.DataFrame({"label": (rng.random(300) < p).astype(int), "p": p, "weight": rng.lognormal(0, 1, 300)})
    at = app().run()
    upload(at, "weighted.csv", frame.to_csv(index=False).encode())
    at.switch_page("pages/1_Reliability.py").run()
    assert_clean(at)
    assert any(WEIGHTED_BAND_NOTE in c.value for c in at.caption)
    at.switch_page("app.py").run()
    upload(at, "plain.csv", frame.drop(columns="weight").to_csv(index=False).encode())
    at.switch_page("pages/1_Reliability.py").run()
    assert_clean(at)
    assert not any(WEIGHTED_BAND_NOTE in c.value for c in at.caption)


def test_the_roc_tab_notes_few_events_under_delongs_interval():
    """With 8 events of 500 rows DeLong's interval covered 69-91% in an audit's simulation: the ROC tab says so
    under its interval, as the metric table's AUC row does (a walk-through found it on the command line only)."""
    rng = np.random.default_rng(10)
    p = rng.beta(0.5, 30, 500)
    y = np.zeros(500, dtype=int)
    y[np.argsort(p)[-8:]] = 1
    at = app().run()
    upload(at, "few.csv", pd.DataFrame({"label": y, "p": p}).to_csv(index=False).encode())
    at.switch_page("pages/1_Reliability.py").run()
    assert_clean(at)
    roc = [c.value for c in at.caption if "(DeLong)" in c.value]
    assert roc and "Approximate interval: only 8 events (label 1)" in roc[0], roc


def test_a_bad_file_among_several_is_named_once_and_the_way_to_replace_it_is_said():
    at = app().run()
    df = _export()
    good = df[["y_true", "logreg_proba"]]
    bad = df[["y_true", "rf_proba"]].astype({"rf_proba": object})
    bad.iloc[5, 1] = "high"
    at.file_uploader(key="cv_upload").set_value([("good.csv", _csv(good), "text/csv"),
                                                 ("broken.csv", _csv(bad), "text/csv")])
    at.run()
    assert_clean(at)
    text = shown(at.error[0])
    assert "non-numeric" in text and "high" in text
    assert text.count("broken.csv") == 1, text  # not "good.csv + broken.csv: broken.csv: ..."
    assert "remove the other one from the uploader" in text
    assert at.session_state["cv_source"]["demo"] == "hospital_readmission"  # the previous data stay
