import numpy as np
import pytest

from calibviz import InputError
from calibviz import binning as bn
from calibviz.summary import bin_statistics, reliability_table, sufficient_statistics


def _data(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.random(n)
    y = (rng.random(n) < p).astype(int)
    return y, p


def test_table_columns_and_naive_loop():
    y, p = _data()
    t = reliability_table(y, p, binning=bn.Uniform(10))
    for col in ["bin", "lower", "upper", "n", "weight", "positives", "mean_pred", "obs_rate", "gap",
                "ci_low", "ci_high", "accept_low", "accept_high", "rejected", "rejected_rate"]:
        assert col in t.columns
    for _, r in t.iterrows():
        b = int(r["bin"])
        m = (p >= b / 10) & ((p < (b + 1) / 10) | (b == 9))
        assert r["n"] == m.sum() and r["positives"] == y[m].sum()
        assert r["mean_pred"] == pytest.approx(p[m].mean())
        assert r["gap"] == pytest.approx(y[m].mean() - p[m].mean())
        assert r["ci_low"] <= r["obs_rate"] <= r["ci_high"]
        assert r["accept_low"] <= r["mean_pred"] + 0.05 and r["accept_high"] >= r["mean_pred"] - 0.05
    assert t.attrs["n"] == 3000 and t.attrs["scheme"] == "uniform(10)"


def test_empty_bins_are_dropped():
    t = reliability_table([0, 1, 1], [0.05, 0.95, 0.9], binning=bn.Uniform(10))
    assert t["bin"].tolist() == [0, 9]


def test_rejections_match_scipy_loop():
    from scipy.stats import binomtest

    y, p = _data(600, 3)
    t = reliability_table(y, p, binning=bn.EqualMass(5))
    b = bn.EqualMass(5).fit(p, y)
    for _, r in t.iterrows():
        m = b.index == r["bin"]
        k, n = int(y[m].sum()), int(m.sum())
        expected = sum(binomtest(k, n, float(q)).pvalue <= 0.05 for q in p[m])
        assert r["rejected"] == expected


def test_statistics_are_mergeable():
    y, p = _data()
    _, whole = bin_statistics(y, p, binning=bn.Uniform(12))
    _, a = bin_statistics(y[:1000], p[:1000], binning=bn.Uniform(12))
    _, b = bin_statistics(y[1000:], p[1000:], binning=bn.Uniform(12))
    merged = a + b
    np.testing.assert_array_equal(merged.count, whole.count)
    np.testing.assert_allclose(merged.sum_pred, whole.sum_pred)
    np.testing.assert_allclose(merged.sum_pred_sq, whole.sum_pred_sq)


def test_weighted_statistics():
    y, p = _data(500)
    w = np.random.default_rng(1).random(500)
    s = sufficient_statistics(y.astype(float), p, bn.Uniform(5).fit(p).index, 5, w)
    idx = bn.Uniform(5).fit(p).index
    np.testing.assert_allclose(s.weight, np.bincount(idx, weights=w))
    np.testing.assert_allclose(s.obs_rate, np.bincount(idx, weights=w * y) / np.bincount(idx, weights=w))
    t = reliability_table(y, p, binning=bn.Uniform(5), sample_weight=w)
    np.testing.assert_allclose(t["weight"], np.bincount(idx, weights=w))


@pytest.mark.parametrize("interval", ["wilson", "beta", "jeffreys"])
def test_interval_choice(interval):
    y, p = _data(400)
    t = reliability_table(y, p, binning=bn.Uniform(4), interval=interval, test=None)
    assert "rejected" not in t.columns
    assert (t["ci_low"] <= t["ci_high"]).all()


def test_bad_options():
    with pytest.raises(InputError):
        reliability_table([0, 1], [0.2, 0.8], interval="nope")
    with pytest.raises(InputError):
        reliability_table([0, 1], [0.2, 0.8], test="z")
    with pytest.raises(InputError):
        reliability_table([0, 2], [0.2, 0.8])


@pytest.mark.parametrize("kind", ["continuous", "ties", "concentrated", "masses"])
def test_panel_statistics_equal_direct_binning(kind):
    # binned_metrics' one-pass path (fine histogram, exact rows at boundaries) against
    # fitting Uniform and EqualMass and summing per row
    from dataclasses import fields

    from calibviz import binning as bn
    from calibviz.summary import _fit_and_sum, _panel_statistics

    rng = np.random.default_rng(10)
    n = 300_001
    p = {
        "continuous": rng.random(n),
        "ties": np.round(rng.random(n), 3),
        "concentrated": np.clip(rng.normal(0.5, 1e-4, n), 0, 1),
        "masses": np.r_[np.zeros(n // 2), np.full(n // 4, 1 / 3), rng.random(n - n // 2 - n // 4)],
    }[kind]
    y = (rng.random(n) < p).astype(float)
    for w, bu, be, moments in [(None, 15, 10, True), (rng.random(n), 7, 1, False), (None, None, 100, False)]:
        got = _panel_statistics(y, p, w, bu, be, moments)
        if got is None:  # heavy ties: the caller bins directly
            assert kind == "masses"
            continue
        for a, scheme in zip(got, (bu and bn.Uniform(bu), bn.EqualMass(be))):
            if scheme is None:
                assert a is None
                continue
            ref = _fit_and_sum(y, p, w, scheme, moments)[1]
            for f in fields(ref):
                x, z = getattr(a, f.name), getattr(ref, f.name)
                if z is None:
                    assert x is None
                elif f.name in ("count", "positives"):
                    np.testing.assert_array_equal(x, z)
                else:
                    np.testing.assert_allclose(x, z, rtol=1e-10, atol=1e-9)
