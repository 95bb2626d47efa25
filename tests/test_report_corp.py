"""The report's CORP sections: per-model CORP diagram and decomposition, and the triptych of several models."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import calibviz as cv
from calibviz import metrics as M
from calibviz.panel import format_value
from calibviz.report import build_report, report_contents


def test_binary_models_get_corp_diagrams_and_the_triptych():
    models = cv.load_demo_models("loan_recalibration")
    html = build_report(models, n_resamples=10)
    for name, p in models.items():
        d = M.corp_decomposition(p.y, p.y_prob)
        assert (f"Brier score {format_value(d.score, 'score')} = MCB {format_value(d.mcb, 'score')}" in html), name
    assert html.count("CORP reliability diagram (positive class)") >= 2
    assert '<section id="triptych"><h2>Calibration vs discrimination (triptych)</h2>' in html
    t = M.decomposition_table({k: (v.y, v.y_prob) for k, v in models.items()}, n_resamples=10, confidence=0.9,
                              random_state=0)
    assert t.loc[1, "reading"].split(":")[0] in html  # 'recalibrated scores 0.0075 better than raw (...)'
    assert "Reference: <b>raw</b>" in html and "ROC curves" in html


def test_multiclass_report_has_the_confidence_corp_diagram():
    models = cv.load_demo_models("cifar10_resnet50")
    assert "CORP reliability diagram (confidence)" in report_contents(models)
    html = build_report(models, n_resamples=0)
    assert "CORP reliability diagram (confidence)" in html and "MCB" in html


def test_model_names_are_escaped_in_the_triptych():
    rng = np.random.default_rng(0)
    p = rng.uniform(0.05, 0.95, 800)
    y = (rng.uniform(size=800) < p).astype(int)
    df = pd.DataFrame({"label": y, "<b>x</b>__p": p, "plain__p": np.clip(1.3 * p - 0.1, 0.01, 0.99)})
    models = cv.load_models(df.to_csv(index=False).encode())
    html = build_report(models, n_resamples=0)
    section = html[html.index('<section id="triptych">'):]
    assert list(models) == ["<b>x</b>", "plain"]
    assert "<b>x</b>" not in section and "&lt;b&gt;x&lt;/b&gt;" in section
    assert "&amp;lt;" not in section  # escaped once, not twice
