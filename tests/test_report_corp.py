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


@pytest.mark.parametrize("multiclass", [False, True])
def test_mcb_of_the_corp_section_is_judged_with_the_models_panel(multiclass):
    """The report shows the metric panel and the CORP section's MCB test in one model section, as the Reliability
    page with the CORP diagram does; read alone, MCB flagged a calibrated model (p = 0.03) where the page, judging
    the 8 tests together, did not. The MCB sentence carries the joint family's verdict and the panel's readings
    count MCB among their tests."""
    from calibviz.panel import (DEFAULT_BINARY_METRICS, DEFAULT_MULTICLASS_METRICS, family_size, judged_together,
                                metric_panel, redraws_for)
    from calibviz.reduce import views

    rng = np.random.default_rng(3)
    if multiclass:
        probs = rng.dirichlet([2, 2, 2], 1500)
        y = (rng.random(1500)[:, None] > np.cumsum(probs, 1)).sum(1)
        df = pd.DataFrame({"y": y, **{f"p_{k}": probs[:, k] for k in range(3)}})
        keys = DEFAULT_MULTICLASS_METRICS
    else:
        p = rng.integers(1, 12, 1500) / 12  # tied scores, as the walk-through's upload
        df = pd.DataFrame({"y": (rng.random(1500) < p).astype(int), "p": p})
        keys = DEFAULT_BINARY_METRICS
    preds = cv.load_predictions(df.to_csv(index=False).encode())
    html = build_report(preds, n_resamples=0, random_state=5)
    n_tests = family_size(keys) + 1
    n_ref = redraws_for(list(keys) + ["mcb"], 0.05)
    view = views(preds, "confidence" if multiclass else "binary")[0]
    panel = metric_panel(preds.y, preds.probs if multiclass else preds.y_prob, metrics=keys, n_resamples=0,
                         random_state=5, n_reference=n_ref)
    expected = judged_together(panel, metric_panel(view.y, view.p, metrics=("mcb",), sample_weight=view.w,
                                                   n_resamples=0, random_state=5, n_reference=n_ref))
    corp = html.split("CORP decomposition: ")[1].split("<")[0].replace("&#x27;", "'")
    assert f"the {n_tests} tests judged together" in corp, corp
    assert expected["reading"].iloc[-1] in corp
    assert f"the {n_tests} tests judged together" in expected["reading"].iloc[0]
    assert expected["reading"].iloc[0].replace("'", "&#x27;") in html  # the panel's readings count MCB too
    assert f"together with the MCB test of the CORP section below ({n_tests} tests in all" in html
