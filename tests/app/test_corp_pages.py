"""AppTest of the CORP mode of the Reliability page and the triptych of the Compare page."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import calibviz as cv

from .helpers import app, assert_clean, figures

pytestmark = [pytest.mark.apptest, pytest.mark.usefixtures("clear_streamlit_caches")]


def _open(page: str, demo: str | None = None, **query):
    """``page`` opened by a link (``data=demo`` and ``query``), the first script of a new session: the Data page's
    renders of the default demo and of the picked one (~10 s of CPU each) are no part of these tests."""
    at = app()
    at.switch_page(page)
    for k, v in {**({"data": demo} if demo else {}), **query}.items():
        at.query_params[k] = v
    at.run()
    assert_clean(at)
    return at


def _names(fig):
    return [t.get("name") for t in fig["data"]]


def test_reliability_corp_mode_on_the_hospital_demo():
    at = _open("pages/1_Reliability.py")
    at.radio(key="w_diagram").set_value("corp").run()
    assert_clean(at)
    assert not at.error, [e.value for e in at.error]
    fig = figures(at)[0]
    assert "CORP curve (PAV)" in _names(fig)
    assert any(n and n.startswith("Consistency band") for n in _names(fig))
    d = cv.metrics.corp_decomposition(*(lambda p: (p.y, p.y_prob))(cv.load_demo("hospital_readmission")))
    assert f"MCB {d.mcb:.4f}" in fig["layout"]["annotations"][0]["text"]
    text = " ".join(m.value for m in at.markdown)
    assert "Miscalibration costs" in text and "Ranking the cases removes" in text
    assert "mean prediction (x) against the observed rate" not in " ".join(c.value for c in at.caption)
    table = next(df.value for df in at.dataframe if "Metric" in df.value.columns)
    assert {"MCB (CORP miscalibration)", "DSC (CORP discrimination)", "UNC (uncertainty)", "AUC", "ECE"} <= set(
        table["Metric"])
    auc_row = table[table["Metric"] == "AUC"].iloc[0]
    assert auc_row["95% interval"] and auc_row["Verdict"] == ""  # DeLong interval, no calibration verdict
    # the caption of the two panels joined says how their intervals were made (pandas dropped the attributes
    # of the concatenation, and the caption said the intervals were turned off beside a table showing them)
    captions = " ".join(c.value for c in at.caption)
    assert "turned off" not in captions and "Intervals: bootstrap, " in captions
    # the confidence band is one click away, and the URL carries the mode
    at.checkbox(key="w_corp_conf").check().run()
    assert_clean(at)
    names = _names(figures(at)[0])
    # the consistency band at the page's level (for the whole curve: the caption says so); the spread of the curve
    # only pointwise; legend entries short enough for two columns at 470 px
    assert "Consistency band (95%)" in names and "Spread (95% pointwise)" in names
    assert "whole curve" in " ".join(c.value for c in at.caption)
    assert at.query_params["diagram"] == ["corp"] or at.query_params["diagram"] == "corp"


@pytest.mark.parametrize("view", ["confidence", "classwise:3", "top_label:0"])
def test_corp_mode_on_every_binary_view_of_multiclass_data(view):
    at = _open("pages/1_Reliability.py", "cifar10_resnet50", diagram="corp", view=view)
    assert not at.error, [e.value for e in at.error]
    fig = figures(at)[0]
    assert "CORP curve (PAV)" in _names(fig)


def test_compare_triptych_on_the_loan_demo():
    at = _open("pages/5_Compare.py", "loan_recalibration")
    assert not at.error, [e.value for e in at.error]
    figs = figures(at)
    mcb_dsc = next(f for f in figs if any(t.get("mode") == "markers" and t.get("name") == "recalibrated" for t in f["data"]))
    assert {t["name"] for t in mcb_dsc["data"] if t.get("mode") == "markers"} == {"raw", "recalibrated"}
    roc = next(f for f in figs if (f["layout"].get("title") or {}).get("text") == "ROC curves")
    assert any((t.get("name") or "").startswith("raw: AUC") for t in roc["data"])
    assert any((f["layout"].get("title") or {}).get("text") == "CORP reliability diagrams" for f in figs)
    text = " ".join(m.value for m in at.markdown)
    assert "recalibrated scores" in text and "better than raw" in text and "gains mainly on calibration" in text
    # another reference: the sentence turns round; the Murphy diagram on request
    at.selectbox(key="w_ref").set_value("recalibrated").run()
    at.checkbox(key="w_murphy").check().run()
    assert_clean(at)
    text = " ".join(m.value for m in at.markdown)
    assert "raw scores" in text and "worse than recalibrated" in text and "loses mainly on calibration" in text
    assert any((f["layout"].get("title") or {}).get("text", "").startswith("Murphy diagram") for f in figures(at))
    # the log loss instead of the Brier score
    at.radio(key="w_tscore").set_value("log").run()
    assert_clean(at)
    text = " ".join(m.value for m in at.markdown)
    assert "(log loss " in text and "Log loss = MCB" in " ".join(c.value for c in at.caption)


def test_compare_triptych_on_uploaded_models():
    rng = np.random.default_rng(0)
    n = 3000
    p = rng.uniform(0.02, 0.98, n)
    y = (rng.uniform(size=n) < p).astype(int)
    df = pd.DataFrame({"label": y, "good__p": p, "sharp__p": np.clip(1.6 * p - 0.3, 0.001, 0.999),
                       "blurry__p": 0.4 * p + 0.3})
    at = app()
    at.run()
    at.file_uploader(key="cv_upload").set_value(("three.csv", df.to_csv(index=False).encode(), "text/csv"))
    at.run()
    at.switch_page("pages/5_Compare.py").run()
    assert_clean(at)
    assert not at.error, [e.value for e in at.error]
    text = " ".join(m.value for m in at.markdown)
    assert "sharp scores" in text and "blurry scores" in text


def test_discrimination_tab_binary_and_multiclass():
    at = _open("pages/1_Reliability.py")
    d = cv.load_demo("hospital_readmission")
    a = cv.metrics.auc_delong(d.y, d.y_prob)
    values = {m.label: m.value for m in at.metric}
    assert values["AUC"] == f"{a.auc:.3f}"
    assert any(c.value.startswith(f"95% interval {a.low:.3f}") for c in at.caption)
    roc = [f for f in figures(at) if any((t.get("name") or "").startswith("P(1): AUC") for t in f["data"])]
    assert roc
    at = _open("pages/1_Reliability.py", "cifar10_resnet50")
    c = cv.load_demo("cifar10_resnet50")
    text = " ".join(m.value for m in at.markdown)
    assert f"accuracy {100 * c.accuracy():.1f}%" in text
    per_class = next(df.value for df in at.dataframe if "one-vs-rest AUC" in df.value.columns)
    assert len(per_class) == 10


def test_corp_mode_survives_a_change_of_alpha():
    """Metrics without a test (DSC, UNC) are cached apart from alpha; the page judged them with the others and
    raised "panels at different levels" when alpha moved from 0.05 to 0.1 (a browser review)."""
    at = _open("pages/1_Reliability.py", boot="0")
    at.radio(key="w_diagram").set_value("corp").run()
    assert_clean(at)
    slider = next(s for s in at.sidebar.select_slider if s.label == "Significance level α")
    slider.set_value(0.1).run()
    assert_clean(at)
    assert not at.exception and not at.error, [e.value for e in at.error]
    table = at.dataframe[0].value.set_index("Metric")
    assert "p adj." in table.columns



def test_the_corp_metric_table_is_shown_whole(monkeypatch):
    """Eleven metrics in CORP mode: Streamlit's table shows ten rows, and log loss hid behind a scroll bar (a browser
    review). Short tables get the height of all their rows; the metric's name stays pinned while the table scrolls
    sideways in a narrow column."""
    import streamlit as st

    from calibviz.ui import blocks

    at = _open("pages/1_Reliability.py")
    at.radio(key="w_diagram").set_value("corp").run()
    assert_clean(at)
    table = next(d for d in at.dataframe if "Calibrated model would show" in d.value.columns)
    rows = len(table.value)
    assert rows > 10 and '"pinned":true' in table.proto.columns.replace(" ", "")
    seen = {}
    monkeypatch.setattr(st, "dataframe", lambda data, **kw: seen.update(rows=len(data), **kw))
    blocks.show_dataframe(table.value)
    assert seen["rows"] == rows and seen["height"] == 35 * (rows + 1) + 3
    seen.clear()
    blocks.show_dataframe(pd.DataFrame({"a": range(40)}))  # a long table keeps Streamlit's scrolling height
    assert seen["rows"] == 40 and "height" not in seen
