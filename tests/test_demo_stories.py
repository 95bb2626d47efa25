"""Each demo dataset tells the story its description promises (checked end to end in the library)."""
from __future__ import annotations

import numpy as np

import calibviz as cv
from calibviz import metrics as M
from calibviz.variables import variable_ranking


def test_hospital_age_miscalibration_that_ece_hides():
    d = cv.load_demo("hospital_readmission")
    ece = M.ece(d.y, d.y_prob)
    age = d.features["age"].to_numpy(dtype=float)
    vece_age = M.vece(age, d.y, d.y_prob)
    assert ece < 0.04
    assert vece_age > 2 * ece  # Kelly & Smyth: the variable reveals what the score bins average out
    ranking = variable_ranking(d.features, d.y, d.y_prob, n_resamples=50, random_state=0)
    assert ranking.iloc[0]["feature"] == "age"
    old, young = age >= 75, age < 45
    assert d.y[old].mean() > d.y_prob[old].mean() + 0.1  # risk under-predicted for older patients
    assert d.y[young].mean() < d.y_prob[young].mean() - 0.05  # over-predicted for younger ones
    top = d.y_prob >= 0.5
    assert d.y_prob[top].mean() > d.y[top].mean() + 0.1  # overconfident at the top


def test_loan_recalibration_improves_calibration():
    models = cv.load_demo_models("loan_recalibration")
    raw, cal = models["raw"], models["recalibrated"]
    np.testing.assert_array_equal(raw.y, cal.y)
    assert M.ece(cal.y, cal.y_prob) < M.ece(raw.y, raw.y_prob) / 2
    assert M.calibration_intercept_slope(raw.y, raw.y_prob).slope < 0.8  # raw score too extreme


def test_cifar_resnet50_is_overconfident_and_accurate():
    d = cv.load_demo("cifar10_resnet50")
    acc = d.accuracy()
    assert 0.94 < acc < 0.96
    assert d.probs.max(axis=1).mean() > acc
