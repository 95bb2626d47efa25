"""The dashboard's tables from scans (calibviz.scan.tables, Scan.confidence_view) equal the in-memory functions."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import calibviz as cv
from calibviz import multiclass as mc
from calibviz.binning import EqualMass, Uniform
from calibviz.panel import PanelConfig
from calibviz.scan import tables as T
from calibviz.sensitivity import binning_sensitivity

CLASSES = ["a", "b", "c"]


@pytest.fixture(scope="module")
def multi():
    rng = np.random.default_rng(3)
    n = 6000
    P = rng.dirichlet([2, 1, 1], n)
    y = (rng.random(n)[:, None] > P.cumsum(1)).sum(1).clip(0, 2)
    y = np.where(rng.random(n) < 0.1, (y + 1) % 3, y)  # some miscalibration
    df = pd.DataFrame({"y": np.array(CLASSES)[y], "p_a": P[:, 0], "p_b": P[:, 1], "p_c": P[:, 2]})
    return cv.scan(df), y, P


@pytest.mark.parametrize("scheme", [Uniform(10), EqualMass(8)])
def test_top_label_table_equals_memory(multi, scheme):
    s, y, P = multi
    got, want = T.top_label_table(s, scheme), mc.top_label_table(y, P, binning=scheme)
    cols = ["bin", "n", "mean_pred", "obs_rate", "frac", "deviation", "plus", "n_classes"]
    np.testing.assert_allclose(got[cols].to_numpy(float), want[cols].to_numpy(float), rtol=1e-9, atol=1e-12)
    for k in ("confidence_ece", "top_label_ece"):
        assert got.attrs[k] == pytest.approx(want.attrs[k], rel=1e-9)


def test_bin_zoom_equals_memory(multi):
    s, y, P = multi
    for b in (4, 9):
        got = T.bin_zoom(s, b, Uniform(10))
        want = mc.bin_zoom(y, P, b, binning=Uniform(10), classes=CLASSES)
        assert got["label"].tolist() == want["label"].tolist()
        cols = ["class_index", "n", "weight", "share", "confidence", "accuracy", "gap"]
        np.testing.assert_allclose(got[cols].to_numpy(float), want[cols].to_numpy(float), rtol=1e-9, atol=1e-12)
        for k in ("lower", "upper", "n", "confidence", "accuracy", "deviation", "plus"):
            assert got.attrs[k] == pytest.approx(want.attrs[k], rel=1e-9)
    with pytest.raises(cv.InputError, match="bin_id"):
        T.bin_zoom(s, 10, Uniform(10))


def test_per_class_and_classwise_tables_equal_memory(multi):
    s, y, P = multi
    got = T.per_class_top_label_tables(s, Uniform(10))
    want = mc.per_class_top_label_tables(y, P, binning=Uniform(10), classes=CLASSES)
    assert list(got) == list(want)
    for k in want:
        np.testing.assert_allclose(got[k]["obs_rate"], want[k]["obs_rate"], rtol=1e-9)
        for a in ("share", "ece"):
            assert got[k].attrs[a] == pytest.approx(want[k].attrs[a], rel=1e-9)
        assert got[k].attrs["name"] == want[k].attrs["name"]
    got = T.classwise_tables(s, Uniform(10))
    want = mc.classwise_tables(y, P, binning=Uniform(10), classes=CLASSES)
    for k in want:
        np.testing.assert_allclose(got[k]["mean_pred"], want[k]["mean_pred"], rtol=1e-9)
        for a in ("prevalence", "ece"):
            assert got[k].attrs[a] == pytest.approx(want[k].attrs[a], rel=1e-9)
    rank = T.class_ranking(s, Uniform(10), tables=got)
    ref = mc.class_ranking(y, P, binning=Uniform(10), classes=CLASSES, n_resamples=0)
    assert rank["label"].tolist() == [str(v) for v in ref["label"]]
    np.testing.assert_allclose(rank[["rank", "value", "share", "n", "contribution"]].to_numpy(float),
                               ref[["rank", "value", "share", "n", "contribution"]].to_numpy(float), rtol=1e-9)
    assert rank.attrs["overall"] == pytest.approx(ref.attrs["overall"], rel=1e-9)
    assert rank[["low", "high"]].isna().all().all()  # no bootstrap on a scan: said, not faked


def test_confidence_view_is_the_binary_confidence(multi):
    s, y, P = multi
    v = s.confidence_view()
    conf, correct = P.max(1), (P.argmax(1) == y).astype(int)
    panel = v.metrics(["ece", "brier", "log_loss"])
    assert panel["value"].tolist() == pytest.approx(
        [cv.metrics.ece(correct, conf), np.mean((conf - correct) ** 2), cv.metrics.log_loss(correct, conf)], rel=1e-9)
    assert v is s.confidence_view() and v.n == s.n  # one shared aggregation
    with pytest.raises(cv.InputError, match="multiclass"):
        v.confidence_view()


def test_binning_sensitivity_and_comparison():
    rng = np.random.default_rng(5)
    n = 4000
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p ** 1.3).astype(int)
    q = np.clip(0.1 + 0.8 * p, 0, 1)
    df = pd.DataFrame({"y": np.r_[y, y], "p": np.r_[p, q], "model": ["raw"] * n + ["shrunk"] * n})
    s = cv.scan(df)
    got = T.binning_sensitivity(s, metrics=("ece", "mce"), n_bins=(5, 12))
    want = binning_sensitivity(y, p, metrics=("ece", "mce"), n_bins=(5, 12), n_resamples=0)
    np.testing.assert_allclose(got["value"], want["value"], rtol=1e-9)
    assert got[["metric", "scheme", "scheme_label", "n_bins"]].equals(want[["metric", "scheme", "scheme_label",
                                                                            "n_bins"]])
    cmp = T.compare_scans(s.models, ["ece", "brier"], PanelConfig(), reference="shrunk")
    raw = cmp[(cmp.model == "raw") & (cmp.metric == "ece")].iloc[0]
    assert raw["value"] == pytest.approx(cv.metrics.ece(y, p), rel=1e-9)
    assert raw["diff"] == pytest.approx(cv.metrics.ece(y, p) - cv.metrics.ece(y, q), rel=1e-9)
    assert raw["verdict"] == "" and np.isnan(raw["diff_low"])  # no paired bootstrap on scans
    boot = T.compare_scans(s.models, ["ece", "brier"], PanelConfig(), reference="shrunk", n_resamples=20,
                           random_state=1)
    own = s.models["raw"].metrics(["ece", "brier"], config=PanelConfig(), n_resamples=20, random_state=1)
    got = boot[boot.model == "raw"]
    np.testing.assert_allclose(got[["low", "high"]].to_numpy(float), own[["low", "high"]].to_numpy(float))
    assert np.isfinite(got["high"]).all() and np.isnan(got["diff_low"]).all()
    with pytest.raises(cv.InputError, match="reference"):
        T.compare_scans(s.models, ["ece"], reference="nope")
