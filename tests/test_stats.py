import numpy as np
import pytest
from scipy.stats import binom, binomtest

from calibviz import InputError
from calibviz import stats as st


def _cases(seed, n_cases=150):
    rng = np.random.default_rng(seed)
    for _ in range(n_cases):
        n = int(rng.choice([1, 2, 3, 4, 7, 10, 31, 100, 512, 3000, 40000]))
        k = int(rng.choice([0, n, rng.integers(0, n + 1), n // 2]))
        sd = np.sqrt(max(k * (n - k), 1)) / n**1.5
        p = np.r_[rng.random(8), 0.0, 1.0, k / n, np.clip(rng.normal(k / n, 3 * sd, 25), 0, 1)]
        if n % 2 == 0:
            p = np.r_[p, 0.5]
        yield k, n, p


@pytest.mark.parametrize("seed", [0, 1])
def test_pvalue_identical_to_scipy(seed):
    for k, n, p in _cases(seed):
        ref = np.array([binomtest(k, n, float(q)).pvalue for q in p])
        np.testing.assert_array_equal(st.binom_test_pvalue(k, n, p), ref)


@pytest.mark.parametrize("alpha", [0.0, 1e-3, 0.05, 0.2, 0.5, 1.0])
def test_reject_decisions_match_scipy(alpha):
    for k, n, p in _cases(7, 80):
        ref = np.array([binomtest(k, n, float(q)).pvalue <= alpha for q in p])
        got = st.binom_reject([k], [n], p, alpha, group=np.zeros(p.size, dtype=np.int64))
        np.testing.assert_array_equal(got, ref)


def test_reject_many_groups_and_broadcast():
    rng = np.random.default_rng(3)
    k = np.array([0, 3, 50, 200])
    n = np.array([5, 10, 100, 200])
    g = rng.integers(0, 4, 3000)
    p = np.clip(k[g] / n[g] + rng.normal(0, 0.08, 3000), 0, 1)
    ref = np.array([binomtest(int(k[i]), int(n[i]), float(q)).pvalue <= 0.05 for i, q in zip(g, p)])
    np.testing.assert_array_equal(st.binom_reject(k, n, p, 0.05, group=g), ref)
    np.testing.assert_array_equal(st.binom_reject(k[g], n[g], p, 0.05), ref)


def test_edge_cases_exact():
    assert st.binom_test_pvalue(0, 10, 0.0) == 1.0
    assert st.binom_test_pvalue(1, 10, 0.0) == 0.0
    assert st.binom_test_pvalue(10, 10, 1.0) == 1.0
    assert st.binom_test_pvalue(9, 10, 1.0) == 0.0
    assert st.binom_test_pvalue(5, 10, 0.5) == 1.0  # k == n p
    assert st.binom_reject([1], [10], [0.0], 0.0, group=[0]).tolist() == [True]


def test_bad_inputs():
    with pytest.raises(InputError):
        st.binom_test_pvalue(3, 2, 0.5)
    with pytest.raises(InputError):
        st.binom_test_pvalue(1, 2, 1.5)
    with pytest.raises(InputError):
        st.binom_reject([1], [2], [0.5], alpha=2.0, group=[0])
    with pytest.raises(InputError):
        st.proportion_interval([1], [2], method="nope")


def test_ttest_uses_standard_deviation():
    from scipy.stats import ttest_1samp

    y = np.array([1] * 30 + [0] * 70, dtype=float)
    # population sd sqrt(mu(1-mu)) differs from the sample sd by sqrt(n/(n-1)); compare to the formula
    mu, n = y.mean(), y.size
    t = np.sqrt(n) * abs(mu - 0.4) / np.sqrt(mu * (1 - mu))
    from scipy.stats import t as tdist

    assert st.ttest_pvalue(30, 100, 0.4) == pytest.approx(2 * tdist.sf(t, n - 1), rel=1e-12)
    # close to scipy's one-sample t-test (which uses the ddof=1 sd)
    assert st.ttest_pvalue(30, 100, 0.4) == pytest.approx(ttest_1samp(y, 0.4).pvalue, rel=0.1)
    assert st.ttest_pvalue(0, 10, [0.0, 0.1]).tolist() == [1.0, 0.0]


def test_intervals_match_statsmodels():
    from statsmodels.stats.proportion import proportion_confint

    for method, sm in [("wilson", "wilson"), ("beta", "beta"), ("clopper-pearson", "beta"), ("jeffreys", "jeffreys")]:
        lo, hi = st.proportion_interval([3, 0, 10], [10, 5, 10], 0.1, method)
        rlo, rhi = proportion_confint(np.array([3, 0, 10]), np.array([10, 5, 10]), alpha=0.1, method=sm)
        np.testing.assert_allclose(lo, np.clip(rlo, 0, 1))
        np.testing.assert_allclose(hi, np.clip(rhi, 0, 1))


def test_acceptance_band_is_binomial_quantiles():
    lo, hi = st.acceptance_band([50, 7], [0.3, 0.9], 0.1)
    np.testing.assert_allclose(lo, [binom.ppf(0.05, 50, 0.3) / 50, binom.ppf(0.05, 7, 0.9) / 7])
    np.testing.assert_allclose(hi, [binom.ppf(0.95, 50, 0.3) / 50, binom.ppf(0.95, 7, 0.9) / 7])


def test_fast_binom_helpers_identical_to_scipy():
    rng = np.random.default_rng(11)
    n = rng.choice([1, 2, 7, 50, 1000, 40000], 4000).astype(float)
    x = np.floor(rng.uniform(-2, n + 2))
    p = np.r_[rng.random(3990), 0.0, 1.0, 0.5, 0.0, 1.0, 0.25, 0.75, 1e-300, 1 - 1e-16, 0.1]
    np.testing.assert_array_equal(st._pmf(x, n, p), binom.pmf(x, n, p))
    np.testing.assert_array_equal(st._cdf(x, n, p), binom.cdf(x, n, p))
    np.testing.assert_array_equal(st._sf(x, n, p), binom.sf(x, n, p))


@pytest.mark.parametrize("alpha", [1e-4, 0.01, 0.05, 0.3])
def test_band_refinement_matches_exact_pvalues_near_the_boundary(alpha):
    # predictions packed around both decision boundaries of many (k, n): the cells of
    # the band refinement must agree with the exact (scipy-identical) p-values everywhere
    rng = np.random.default_rng(int(alpha * 1e4))
    n = rng.choice([3, 20, 97, 500, 4000, 50000, 200000], 60)
    k = np.minimum(n, np.floor(rng.random(60) * (n + 1))).astype(np.int64)
    g = rng.integers(0, 60, 60000)
    m = k[g] / n[g]
    sd = np.sqrt(np.maximum(m * (1 - m), 1.0 / n[g]) / n[g])
    p = np.clip(m + rng.choice([-1, 1], g.size) * rng.uniform(1.0, 3.5, g.size) * sd, 0, 1)
    p[:500] = np.round(p[:500], 3)  # ties
    got = st.binom_reject(k, n, p, alpha, group=g)
    ref = st._pvalue(k[g], n[g], p) <= alpha
    np.testing.assert_array_equal(got, ref)
    sub = rng.choice(g.size, 300, replace=False)
    np.testing.assert_array_equal(got[sub], [binomtest(int(k[g[i]]), int(n[g[i]]), float(p[i])).pvalue <= alpha for i in sub])


def test_certified_regions_reach_the_own_tail_thresholds():
    # The certified accept region ends where the own tail crosses alpha, the reject region where the own tail
    # plus n pmf(k) does (root-found here with scipy); a bisection that kept one end fixed stalled at its first
    # failed midpoint and left both regions nearly empty (same decisions, several times slower).
    from scipy.optimize import brentq

    alpha = 0.05
    k, n = np.array([100, 300, 1000, 7]), np.array([1000, 1000, 4000, 50])
    m, acc_lo, acc_hi, rej_lo, rej_hi = st._certified_regions(k, n, alpha)
    for i in range(k.size):
        ki, ni, mi = int(k[i]), int(n[i]), k[i] / n[i]
        up = brentq(lambda q: binom.cdf(ki, ni, q) - alpha, mi, 1.0, xtol=1e-13)
        down = brentq(lambda q: binom.sf(ki - 1, ni, q) - alpha, 0.0, mi, xtol=1e-13)
        assert abs(acc_hi[i] - up) < 1e-6 and abs(acc_lo[i] - down) < 1e-6
        hi_bound = brentq(lambda q: binom.cdf(ki, ni, q) + ni * binom.pmf(ki, ni, q) - alpha, mi + 1e-9, 1.0)
        assert abs(rej_hi[i] - hi_bound) < 1e-6
        # and what they certify is what scipy decides
        for q in np.linspace(acc_lo[i], acc_hi[i], 41):
            assert binomtest(ki, ni, float(q)).pvalue > alpha
        for q in np.r_[np.linspace(rej_hi[i], 1.0, 11), np.linspace(max(rej_lo[i], 0.0), 0.0, 11)]:
            if q <= rej_lo[i] or q >= rej_hi[i]:
                assert binomtest(ki, ni, float(q)).pvalue <= alpha
