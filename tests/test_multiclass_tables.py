"""Tables behind the multiclass diagrams: star/plus, per-class tables, ranking, bin zoom."""
from __future__ import annotations

import time

import numpy as np
import pytest

from calibviz import InputError
from calibviz.binning import EqualMass, Uniform
from calibviz.metrics import (
    bootstrap,
    classwise_ece,
    classwise_ece_per_class,
    confidence_ece,
    top_label_ece,
    top_label_ece_per_class,
    top_label_mce,
)
from calibviz.multiclass import bin_zoom, class_ranking, classwise_tables, per_class_top_label_tables, top_label_table

P_EX1 = np.array([[0.6, 0.2, 0.2]] * 5 + [[0.2, 0.6, 0.2]] * 5)
Y_EX1 = np.array([0, 2, 2, 2, 2, 1, 1, 1, 1, 1])


def random_data(seed, n=400, K=4, sharp=2.5, weights=False):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, K)) * sharp
    P = np.exp(z - z.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    y = rng.integers(0, K, n)
    return y, P, (rng.uniform(0.5, 2, n) if weights else None)


@pytest.mark.golden
def test_example_1_plus_marker():
    # digest §7: star (0.6, 0.6), Delta 0.4, acc == conf -> minus branch, plus at 0.2
    t = top_label_table(Y_EX1, P_EX1, binning=Uniform(10))
    assert len(t) == 1
    r = t.iloc[0]
    assert (r["mean_pred"], r["obs_rate"]) == pytest.approx((0.6, 0.6))
    assert r["deviation"] == pytest.approx(0.4) and r["plus"] == pytest.approx(0.2)
    assert r["n_classes"] == 2 and r["frac"] == 1.0 and not r["plus_outside"]


def bin_mix(classes):
    """Rows of one bin [0.1, 0.2) with (count, confidence, correct count) per predicted class."""
    P, y = [], []
    for lab, (n, conf, correct) in enumerate(classes):
        row = np.full(3, (1 - conf) / 2)
        row[lab] = conf
        P += [row] * n
        y += [lab] * correct + [(lab + 1) % 3] * (n - correct)
    return np.array(y), np.array(P)


@pytest.mark.golden
def test_plus_can_leave_the_unit_interval():
    # digest §3.2 construction: 10% class A (acc 1), 90% class B (acc 0), same confidence;
    # with confidence .45 (so that it is the argmax of 3 classes): acc_b .10 <= conf_b .45,
    # Delta_b = .1 * .55 + .9 * .45 = .46, plus = .45 - .46 = -0.01 (not clipped)
    y, P = bin_mix([(10, 0.45, 10), (90, 0.45, 0)])
    t = top_label_table(y, P, binning=Uniform(10))
    r = t.iloc[0]
    assert r["deviation"] == pytest.approx(0.1 * 0.55 + 0.9 * 0.45)
    assert r["plus"] == pytest.approx(0.45 - 0.46) and r["plus"] < 0 and r["plus_outside"]
    # y > 1: 10% class A (conf .9, acc .5), 90% class B (conf .9, acc 1) -> plus 1.03
    y, P = bin_mix([(10, 0.9, 5), (90, 0.9, 90)])
    r = top_label_table(y, P, binning=Uniform(10)).iloc[0]
    assert r["obs_rate"] == pytest.approx(0.95) and r["deviation"] == pytest.approx(0.13)
    assert r["plus"] == pytest.approx(1.03) and r["plus_outside"]


@pytest.mark.parametrize("weights", [False, True])
def test_top_label_table_against_metrics_and_identities(weights):
    y, P, w = random_data(1, weights=weights)
    t = top_label_table(y, P, binning=Uniform(10), sample_weight=w)
    assert t.attrs["confidence_ece"] == pytest.approx(confidence_ece(y, P, binning=Uniform(10), sample_weight=w), abs=1e-12)
    assert t.attrs["top_label_ece"] == pytest.approx(top_label_ece(y, P, binning=Uniform(10), sample_weight=w), abs=1e-12)
    assert t["deviation"].max() == pytest.approx(top_label_mce(y, P, binning=Uniform(10), sample_weight=w), abs=1e-12)
    assert t["frac"].sum() == pytest.approx(1.0)
    # the plus is never closer to the diagonal than the star, and on the same side
    gap = t["obs_rate"] - t["mean_pred"]
    assert (t["deviation"] >= gap.abs() - 1e-12).all()
    assert (np.sign(t["plus"] - t["mean_pred"])[gap.abs() > 1e-9] == np.sign(gap)[gap.abs() > 1e-9]).all()
    # naive Delta_b by a loop over bins and classes
    c, h = P.argmax(axis=1), P.max(axis=1)
    ww = np.ones(len(y)) if w is None else w
    b = np.minimum((h * 10).astype(int), 9)
    for r in t.itertuples():
        m = b == r.bin
        d = sum(
            ww[m & (c == k)].sum() / ww[m].sum()
            * abs(np.average(y[m & (c == k)] == k, weights=ww[m & (c == k)]) - np.average(h[m & (c == k)], weights=ww[m & (c == k)]))
            for k in np.unique(c[m])
        )
        assert r.deviation == pytest.approx(d, abs=1e-12)


def test_single_class_bins_plus_equals_star():
    # digest §7.3: if every point of a bin has the same predicted class, plus coincides with star
    P = np.array([[0.1, 0.75, 0.15]] * 8 + [[0.2, 0.25, 0.55]] * 6 + [[0.7, 0.2, 0.1]] * 4 + [[0.2, 0.72, 0.08]] * 4)
    y = np.array([1] * 5 + [0] * 3 + [2] * 2 + [1] * 4 + [1] * 4 + [1] * 4)  # bin 7: class 0 over-, class 1 underconfident
    t = top_label_table(y, P, binning=Uniform(10)).set_index("bin")
    assert t.loc[5, "n_classes"] == 1 and t.loc[7, "n_classes"] == 2
    assert t.loc[5, "plus"] == pytest.approx(t.loc[5, "obs_rate"], abs=1e-12)
    assert t.loc[7, "plus"] != pytest.approx(t.loc[7, "obs_rate"], abs=1e-6)


def test_per_class_top_label_tables():
    y, P, w = random_data(3, weights=True)
    tabs = per_class_top_label_tables(y, P, binning=Uniform(10), classes=["a", "b", "c", "d"], sample_weight=w)
    assert list(tabs) == ["a", "b", "c", "d"]
    ece_l = top_label_ece_per_class(y, P, binning=Uniform(10), sample_weight=w)
    c = P.argmax(axis=1)
    for k, (label, t) in enumerate(tabs.items()):
        assert t.attrs["label"] == label and t.attrs["name"] == f"predicted = {label}"
        assert t.attrs["ece"] == pytest.approx(ece_l[k], abs=1e-12)
        assert t.attrs["share"] == pytest.approx(w[c == k].sum() / w.sum())
        assert t["n"].sum() == (c == k).sum()
    assert sum(t.attrs["share"] * t.attrs["ece"] for t in tabs.values()) == pytest.approx(
        top_label_ece(y, P, binning=Uniform(10), sample_weight=w), abs=1e-12
    )
    tabs = per_class_top_label_tables(y, P, binning=EqualMass(3), test="binomial")
    assert all("rejected" in t for t in tabs.values())


def test_classwise_tables():
    y, P, _ = random_data(4)
    tabs = classwise_tables(y, P, binning=Uniform(15))
    assert list(tabs) == [0, 1, 2, 3]
    np.testing.assert_allclose([t.attrs["ece"] for t in tabs.values()], classwise_ece_per_class(y, P), atol=1e-12)
    assert np.mean([t.attrs["ece"] for t in tabs.values()]) == pytest.approx(classwise_ece(y, P), abs=1e-12)
    assert [t.attrs["prevalence"] for t in tabs.values()] == pytest.approx(np.bincount(y, minlength=4) / len(y))
    assert all(t["n"].sum() == len(y) for t in tabs.values())


@pytest.mark.parametrize("metric", ["classwise_ece", "top_label_ece"])
def test_class_ranking_values_shares_and_intervals(metric):
    y, P, w = random_data(5, n=600, weights=True)
    r = class_ranking(y, P, metric=metric, n_resamples=100, random_state=1, sample_weight=w)
    assert r["rank"].tolist() == [1, 2, 3, 4]
    assert (np.diff(r["value"]) <= 0).all()
    per = (classwise_ece_per_class if metric == "classwise_ece" else top_label_ece_per_class)(y, P, sample_weight=w)
    np.testing.assert_allclose(r.sort_values("class_index")["value"], per, atol=1e-12)
    assert r["share"].sum() == pytest.approx(1.0)
    overall = (classwise_ece if metric == "classwise_ece" else top_label_ece)(y, P, sample_weight=w)
    assert r.attrs["overall"] == pytest.approx(overall, abs=1e-12)
    assert r["contribution"].sum() == pytest.approx(overall, abs=1e-12)
    assert (r["low"] < r["high"]).all()
    assert r.attrs["overall_low"] < r.attrs["overall_high"]
    # same seed, same answer
    r2 = class_ranking(y, P, metric=metric, n_resamples=100, random_state=1, sample_weight=w)
    assert r.equals(r2)


def test_class_ranking_intervals_match_per_class_bootstrap():
    # the shared-resample shortcut gives the same interval as bootstrapping one class alone
    y, P, _ = random_data(6, n=300, K=3)
    r = class_ranking(y, P, n_resamples=60, random_state=7).set_index("class_index")
    for k in range(3):
        one = bootstrap(
            lambda yy, PP, sample_weight=None: classwise_ece_per_class(yy, PP, sample_weight=sample_weight)[k],
            y, P, n_resamples=60, random_state=7, resample="weights", method="bias_corrected", bounds=(0, 1),
        )
        assert (r.loc[k, "low"], r.loc[k, "high"]) == pytest.approx((one.low, one.high), abs=1e-12)
        # the basic interval removes the upward bias: it does not lie above the value, as the percentile one did
        assert r.loc[k, "low"] <= r.loc[k, "value"]


def test_class_ranking_with_rank_based_bins_resamples_rows():
    y, P, _ = random_data(7, n=300, K=3)
    calls = []
    r = class_ranking(y, P, metric="top_label_ece", binning=EqualMass(4), n_resamples=20,
                      progress=lambda done, total: calls.append((done, total)))
    np.testing.assert_allclose(
        r.sort_values("class_index")["value"], top_label_ece_per_class(y, P, binning=EqualMass(4)), atol=1e-12
    )
    assert calls[-1] == (20, 20)
    assert r["low"].notna().all()


def test_class_ranking_never_predicted_class_is_last():
    y, P, _ = random_data(8, n=200, K=3)
    P[:, 2] = 0.0
    P /= P.sum(axis=1, keepdims=True)
    r = class_ranking(y, P, metric="top_label_ece", n_resamples=10)
    assert r.iloc[-1]["class_index"] == 2 and np.isnan(r.iloc[-1]["value"]) and r.iloc[-1]["n"] == 0


@pytest.mark.slow
def test_class_ranking_is_interactive_with_100_classes():
    y, P, _ = random_data(9, n=10_000, K=100, sharp=4)
    t0 = time.perf_counter()
    r = class_ranking(y, P, n_resamples=200)
    t1 = time.perf_counter()
    r2 = class_ranking(y, P, metric="top_label_ece", n_resamples=200)
    t2 = time.perf_counter()
    assert len(r) == 100 and len(r2) == 100
    # generous bound (shared CI machines); the benchmark measures the real numbers
    assert t1 - t0 < 20 and t2 - t1 < 20


def test_bin_zoom():
    z = bin_zoom(Y_EX1, P_EX1, 6, binning=Uniform(10), classes=["a", "b", "c"])
    assert z["label"].tolist() == ["a", "b"] and z["n"].tolist() == [5, 5]
    assert z["share"].tolist() == [0.5, 0.5]
    assert z["gap"].tolist() == pytest.approx([-0.4, 0.4])
    assert z.attrs["deviation"] == pytest.approx(0.4) and z.attrs["plus"] == pytest.approx(0.2)
    assert (z.attrs["lower"], z.attrs["upper"]) == pytest.approx((0.6, 0.7))
    empty = bin_zoom(Y_EX1, P_EX1, 0, binning=Uniform(10))
    assert len(empty) == 0 and empty.attrs["n"] == 0
    with pytest.raises(InputError, match="bin_id"):
        bin_zoom(Y_EX1, P_EX1, 10, binning=Uniform(10))


def test_bin_zoom_agrees_with_top_label_table():
    y, P, w = random_data(10, weights=True)
    t = top_label_table(y, P, binning=Uniform(8), sample_weight=w)
    for r in t.itertuples():
        z = bin_zoom(y, P, r.bin, binning=Uniform(8), sample_weight=w)
        assert z["n"].sum() == r.n
        assert z.attrs["confidence"] == pytest.approx(r.mean_pred) and z.attrs["accuracy"] == pytest.approx(r.obs_rate)
        assert z.attrs["plus"] == pytest.approx(r.plus) and len(z) == r.n_classes
        assert np.dot(z["share"], z["gap"].abs()) == pytest.approx(r.deviation)


@pytest.mark.slow
def test_class_ranking_intervals_cover_each_classes_population_value():
    """Overconfident 3-class model (truth T ~ Dirichlet(1), P = T^1.4 renormalised; population one-vs-rest ECE
    0.0458 per class from 10^6 draws of T): the per-class basic intervals cover it. Measured (150 logs): 89-91% at
    500 rows, 91-93% at 5,000; the percentile intervals used before covered 4-8% and 83-89%. 80 logs of 500 rows
    here: at least 70% per class (a percentile interval's 8% fails it by far)."""
    K, power = 3, 1.4

    def model(n, seed):
        rng = np.random.default_rng(seed)
        T = rng.dirichlet(np.ones(K), n)
        y = (T.cumsum(axis=1) < rng.uniform(size=(n, 1))).sum(axis=1)
        P = T ** power
        return y, P / P.sum(axis=1, keepdims=True), T

    _, P, T = model(1_000_000, 99)
    bins = np.minimum((P * 15).astype(int), 14)
    population = np.array([np.abs(np.bincount(bins[:, k], weights=T[:, k] - P[:, k], minlength=15)).sum()
                           for k in range(K)]) / len(P)
    covered = np.zeros(K)
    for r in range(80):
        y, Q, _ = model(500, r)
        rk = class_ranking(y, Q, n_resamples=200, random_state=r).sort_values("class_index")
        covered += (rk["low"].to_numpy() <= population) & (population <= rk["high"].to_numpy())
    assert (covered / 80 >= 0.7).all(), covered / 80
