"""calibviz.panel: the registry computes what calibviz.metrics computes, with honest intervals."""
from __future__ import annotations

import numpy as np
import pytest

import calibviz as cv
from calibviz import metrics as M
from calibviz.binning import PAVABC, EqualMass, Uniform
from calibviz.panel import BINARY_METRICS, PanelConfig, metric_panel, metric_value


@pytest.fixture(scope="module")
def demo():
    return cv.load_demo("hospital_readmission")


def test_values_equal_the_metric_functions(demo):
    y, p = demo.y, demo.y_prob
    cfg = PanelConfig(binning="uniform", n_bins=10, alpha=0.01)
    t = metric_panel(y, p, metrics=list(BINARY_METRICS), config=cfg, n_resamples=0).set_index("metric")
    assert t.loc["ece", "value"] == M.ece(y, p, binning=Uniform(10))
    assert t.loc["ace", "value"] == M.ace(y, p, n_bins=10)
    assert t.loc["mce", "value"] == M.mce(y, p, binning=Uniform(10))
    assert t.loc["tce", "value"] == M.tce(y, p, binning=PAVABC(), alpha=0.01)
    assert t.loc["debiased_ece", "value"] == M.debiased_ece(y, p, binning=EqualMass(10))
    assert t.loc["brier", "value"] == M.brier_score(y, p)
    assert t.loc["hosmer_lemeshow", "p_value"] == M.hosmer_lemeshow(y, p).p_value
    assert t["reading"].str.len().min() > 10


def test_intervals_bracket_the_estimate_and_are_seeded(demo):
    y, p = demo.y[:4000], demo.y_prob[:4000]
    a = metric_panel(y, p, metrics=("ece", "brier"), n_resamples=50, random_state=3)
    b = metric_panel(y, p, metrics=("ece", "brier"), n_resamples=50, random_state=3)
    assert a[["low", "high"]].equals(b[["low", "high"]])
    assert (a["low"] <= a["value"]).all() and (a["value"] <= a["high"]).all()
    slope = metric_panel(y, p, metrics=("calibration_slope",), n_resamples=10).iloc[0]
    assert slope["low"] < slope["value"] < slope["high"]


def test_progress_reaches_the_total(demo):
    seen = []
    metric_panel(demo.y[:2000], demo.y_prob[:2000], metrics=("ece", "ace", "hosmer_lemeshow"), n_resamples=20,
                 progress=lambda d, t: seen.append((d, t)))
    assert seen[-1] == (40, 40)


def test_tce_reading_is_plain_language():
    t = metric_panel([0] * 100, [0.9] * 100, metrics=("tce",), n_resamples=0)
    assert "100% of predictions deviate significantly" in t.loc[0, "reading"]


def test_unknown_metric_is_an_input_error():
    with pytest.raises(cv.InputError, match="unknown metric"):
        metric_value("nope", [0, 1], [0.2, 0.8])


def test_compare_models_paired_differences():
    from calibviz.panel import compare_models

    m = cv.load_demo_models("loan_recalibration")
    t = compare_models({k: (v.y, v.y_prob) for k, v in m.items()}, metrics=("ece", "brier"), n_resamples=40)
    assert t["paired"].all()
    ref = t[t["model"] == "raw"]
    assert (ref["diff"] == 0).all()
    cal = t[(t["model"] == "recalibrated") & (t["metric"] == "ece")].iloc[0]
    assert cal["diff"] == pytest.approx(M.ece(m["recalibrated"].y, m["recalibrated"].y_prob)
                                        - M.ece(m["raw"].y, m["raw"].y_prob))
    assert cal["diff_low"] <= cal["diff"] <= cal["diff_high"] < 0


def test_compare_models_unpaired_when_rows_differ():
    from calibviz.panel import compare_models

    rng = np.random.default_rng(0)
    a = (rng.integers(0, 2, 500), rng.uniform(size=500))
    b = (rng.integers(0, 2, 300), rng.uniform(size=300))
    t = compare_models({"a": a, "b": b}, metrics=("ece",), n_resamples=30)
    assert not t.loc[1, "paired"] and np.isfinite(t.loc[1, "diff_low"])
