"""CORP terms, AUC and accuracy in the metric registry: panel values, intervals, references, readings, CLI."""
from __future__ import annotations

import json

import numpy as np
import pytest

import calibviz as cv
from calibviz import metrics as M
from calibviz.cli import main
from calibviz.panel import BINARY_METRICS, MULTICLASS_METRICS, interval_caption, metric_panel
from calibviz.report import metric_key, resolve_metrics


@pytest.fixture(scope="module")
def hospital():
    return cv.load_demo("hospital_readmission")


def test_panel_values_equal_the_library(hospital):
    y, p = hospital.y, hospital.y_prob
    t = metric_panel(y, p, metrics=("mcb", "dsc", "unc", "auc"), n_resamples=20, n_reference=20).set_index("metric")
    d = M.corp_decomposition(y, p)
    assert t.loc["mcb", "value"] == pytest.approx(d.mcb) and t.loc["dsc", "value"] == pytest.approx(d.dsc)
    assert t.loc["unc", "value"] == pytest.approx(d.unc)
    a = M.auc_delong(y, p)
    assert (t.loc["auc", "value"], t.loc["auc", "low"], t.loc["auc", "high"]) == pytest.approx((a.auc, a.low, a.high))
    assert t.loc["auc", "interval"] == "delong" and t.loc["mcb", "interval"] == "bias_corrected"
    # a calibrated-model reference for MCB (consistency resampling of a callable), none for DSC, UNC, AUC
    assert np.isfinite(t.loc["mcb", "null_high"]) and t.loc["mcb", "null_low"] <= t.loc["mcb", "null_high"]
    assert t.loc[["dsc", "unc", "auc"], "null_high"].isna().all() and (t.loc[["dsc", "unc", "auc"], "verdict"] == "").all()
    share = 100 * d.mcb / d.score
    assert t.loc["mcb", "reading"].startswith(f"Miscalibration costs {share:.1f}% of the Brier score")
    assert t.loc["dsc", "reading"].startswith("Ranking the cases removes")
    assert "AUC: DeLong's interval" in interval_caption(t.reset_index())
    assert BINARY_METRICS["mcb"].reference is not None and BINARY_METRICS["dsc"].reference is None
    assert not BINARY_METRICS["dsc"].lower_is_better and not BINARY_METRICS["auc"].lower_is_better


def test_mcb_reference_holds_its_size_on_calibrated_models():
    # a calibrated model's p-value against its own reference is uniform: few of 40 replications reject at 5%
    p_values = []
    for seed in range(40):
        rng = np.random.default_rng(1000 + seed)
        p = rng.uniform(0.05, 0.95, 500)
        y = (rng.uniform(size=500) < p).astype(int)
        p_values.append(metric_panel(y, p, metrics=("mcb",), n_resamples=0, n_reference=50,
                                     random_state=seed).iloc[0]["p_value"])
    assert np.mean(np.array(p_values) <= 0.05) <= 0.15
    assert np.mean(np.array(p_values) <= 0.5) >= 0.3


def test_multiclass_accuracy_and_auc():
    c = cv.load_demo("cifar10_resnet50")
    t = metric_panel(c.y, c.probs, metrics=("accuracy", "auc"), n_resamples=10, n_reference=0).set_index("metric")
    assert t.loc["accuracy", "value"] == pytest.approx(c.accuracy())
    assert t.loc["auc", "value"] == pytest.approx(M.ovr_auc(c.y, c.probs))
    assert set(MULTICLASS_METRICS) >= {"accuracy", "auc"}


def test_metric_names_resolve():
    assert resolve_metrics("mcb,dsc,unc,auc", True) == (("mcb", "dsc", "unc", "auc"), ())
    assert resolve_metrics("mcb,auc,accuracy", False) == (("auc", "accuracy"), ("mcb",))
    assert metric_key("AUC") == "auc" and metric_key("MCB (CORP miscalibration)") == "mcb"


def test_cli_metrics_mcb_dsc_unc_auc(capsys):
    code = main(["metrics", "hospital_readmission", "--metrics", "mcb,dsc,unc,auc", "--reference", "20",
                 "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and [r["metric"] for r in out] == ["mcb", "dsc", "unc", "auc"]
    rec = {r["metric"]: r for r in out}
    d = M.corp_decomposition(cv.load_demo("hospital_readmission").y, cv.load_demo("hospital_readmission").y_prob)
    assert rec["mcb"]["value"] - rec["dsc"]["value"] + rec["unc"]["value"] == pytest.approx(d.score)
    assert rec["auc"]["low"] < rec["auc"]["value"] < rec["auc"]["high"]
    assert rec["mcb"]["null_high"] is not None and rec["dsc"]["null_high"] is None
    code = main(["metrics", "hospital_readmission", "--metrics", "mcb,auc", "--reference", "0",
                 "--fail-above", "mcb=0.0001"])
    assert code == 1
