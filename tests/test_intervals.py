"""Interval methods of calibviz.metrics.bootstrap and the per-metric choice (calibviz.metrics.intervals).

The formulas are checked against independent numpy computations on the same
resamples; small coverage studies check that the intervals do what they
claim (they fail, for example, if the basic interval used the quantiles the
wrong way round). The full coverage study is benchmarks/coverage_study.py.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special, stats

from calibviz import InputError
from calibviz.metrics import (
    INTERVAL_METHODS,
    BootstrapResult,
    bootstrap,
    brier_score,
    ece,
    interval_from_distribution,
)
from calibviz.metrics.intervals import INTERVALS, interval_method, interval_options, metric_bounds


def _sample(n=300, seed=0):
    return np.random.default_rng(seed).exponential(size=n)


# ----------------------------------------------------------------------------
# formulas against hand computations on the same resamples


def test_basic_interval_is_twice_the_estimate_minus_the_percentile_quantiles():
    x = _sample()
    pct = bootstrap(np.mean, x, n_resamples=500, random_state=3, confidence=0.9)
    basic = bootstrap(np.mean, x, n_resamples=500, random_state=3, confidence=0.9, method="basic")
    np.testing.assert_array_equal(pct.distribution, basic.distribution)  # same seed, same resamples
    q05, q95 = np.quantile(basic.distribution, [0.05, 0.95])
    theta = x.mean()
    assert basic.estimate == theta
    assert basic.low == pytest.approx(2 * theta - q95, rel=1e-14)
    assert basic.high == pytest.approx(2 * theta - q05, rel=1e-14)
    assert (pct.low, pct.high) == pytest.approx((q05, q95), rel=1e-14)
    assert basic.method == "basic" and basic.debiased is None and basic.point == theta
    assert basic.bias == pytest.approx(basic.distribution.mean() - theta, rel=1e-12)


def test_basic_agrees_with_scipy_basic():
    # a small exponential sample: the mean's bootstrap distribution is right-skewed, so the basic
    # limits sit about 0.25 standard errors left of the percentile limits (a reversed reflection
    # would not match scipy); Monte Carlo noise of each limit at B = 20000: ~0.02 standard errors
    x = _sample(60, seed=1)
    se = x.std() / math.sqrt(x.size)
    ours = bootstrap(np.mean, x, n_resamples=20000, method="basic", random_state=1)
    ref = stats.bootstrap((x,), np.mean, method="basic", n_resamples=20000, random_state=2).confidence_interval
    assert ours.low == pytest.approx(ref.low, abs=0.1 * se)
    assert ours.high == pytest.approx(ref.high, abs=0.1 * se)
    pct = interval_from_distribution(ours.distribution, ours.estimate, method="percentile")
    assert pct.low - ours.low > 0.15 * se and pct.high - ours.high > 0.15 * se


def test_bias_corrected_is_the_basic_interval_around_the_debiased_estimate():
    x = _sample(60, seed=2)
    basic = bootstrap(np.var, x, n_resamples=400, random_state=5, method="basic")
    bc = bootstrap(np.var, x, n_resamples=400, random_state=5, method="bias-corrected")  # alias accepted
    assert bc.method == "bias_corrected"
    assert (bc.low, bc.high) == (basic.low, basic.high)
    theta = np.var(x)
    assert bc.debiased == pytest.approx(2 * theta - bc.distribution.mean(), rel=1e-12)
    assert bc.point == bc.debiased
    assert bc.low <= bc.debiased <= bc.high


def test_one_sided_limits_equal_the_two_sided_limits_at_twice_alpha():
    x = _sample(200, seed=3)
    for method in ("percentile", "basic", "bca", "bias_corrected"):
        two = bootstrap(np.mean, x, n_resamples=300, random_state=9, method=method, confidence=0.9)
        less = bootstrap(np.mean, x, n_resamples=300, random_state=9, method=method, confidence=0.95,
                         alternative="less")
        greater = bootstrap(np.mean, x, n_resamples=300, random_state=9, method=method, confidence=0.95,
                            alternative="greater")
        assert less.low == -math.inf and greater.high == math.inf
        assert less.high == pytest.approx(two.high, rel=1e-13), method
        assert greater.low == pytest.approx(two.low, rel=1e-13), method
        assert less.alternative == "less"
    # percentile upper bound by hand
    less = bootstrap(np.mean, x, n_resamples=300, random_state=9, alternative="less", bounds=(0, None))
    assert less.low == 0.0 and less.high == pytest.approx(np.quantile(less.distribution, 0.95), rel=1e-14)


def test_bounds_clip_the_limits_and_the_debiased_estimate():
    # |mean| of a sample centred at 0: biased upward, the basic interval reaches below 0
    x = np.random.default_rng(4).normal(size=40)
    raw = bootstrap(lambda a: abs(a.mean()), x, n_resamples=400, random_state=0, method="bias_corrected")
    clipped = bootstrap(lambda a: abs(a.mean()), x, n_resamples=400, random_state=0, method="bias_corrected",
                        bounds=(0, 1))
    assert raw.low < 0 and clipped.low == 0.0
    assert clipped.high == min(raw.high, 1.0)
    assert clipped.debiased == max(raw.debiased, 0.0)


def test_interval_from_distribution_matches_bootstrap():
    y = (np.random.default_rng(0).random(800) < 0.3).astype(float)
    p = np.clip(np.random.default_rng(1).beta(2, 5, 800), 0, 1)
    for method in ("percentile", "basic", "bias_corrected"):
        res = bootstrap(brier_score, y, p, n_resamples=100, random_state=2, method=method)
        again = interval_from_distribution(res.distribution, res.estimate, method=method)
        assert isinstance(again, BootstrapResult)
        assert (again.low, again.high, again.debiased) == (res.low, res.high, res.debiased)
    with pytest.raises(InputError, match="method"):
        interval_from_distribution([1.0, 2.0], 1.5, method="studentized")
    assert set(INTERVAL_METHODS) == {"percentile", "basic", "bca", "bias_corrected"}


def test_empty_distribution_gives_nan():
    res = interval_from_distribution([np.nan, np.inf], 1.0, method="bias_corrected")
    assert math.isnan(res.low) and math.isnan(res.high) and math.isnan(res.debiased) and math.isnan(res.bias)


# ----------------------------------------------------------------------------
# small coverage studies that can fail


def _coverage(method, statistic, draw, truth, reps=300, n_resamples=200):
    hits = 0
    for r in range(reps):
        x = draw(np.random.default_rng(1000 + r))
        res = bootstrap(statistic, x, n_resamples=n_resamples, random_state=r, method=method)
        hits += res.low <= truth <= res.high
    return hits / reps


@pytest.mark.parametrize("method", ["percentile", "basic"])
def test_coverage_of_the_mean_of_a_normal_sample(method):
    cov = _coverage(method, np.mean, lambda g: g.normal(3.0, 2.0, 60), truth=3.0)
    mcse = math.sqrt(0.95 * 0.05 / 300)  # 1.3 points
    # bootstrap intervals of a mean are a little short at n = 60 (z instead of t, sd with ddof=0): ~94%
    assert abs(cov - 0.95) < 3.5 * mcse, cov


def _overconfident(n, rng):
    p = rng.beta(2.0, 5.0, n)
    q = special.expit(0.6 * special.logit(p))  # true rates pulled toward 0.5
    return p, q


def test_basic_interval_covers_the_population_ece_far_more_often_than_the_percentile_interval():
    """ECE is biased upward; the percentile interval sits about two biases above the population
    value, the basic interval removes the bias the bootstrap sees (benchmarks/coverage_study.py:
    at n = 500 about 70% vs 88%)."""
    p, q = _overconfident(10**6, np.random.default_rng(0))
    idx = np.minimum((p * 15).astype(int), 14)
    w = np.bincount(idx, minlength=15)
    population = float(np.sum(np.abs(np.bincount(idx, q, 15) - np.bincount(idx, p, 15))) / w.sum())
    hits = {"percentile": 0, "basic": 0}
    reps = 150
    for r in range(reps):
        rng = np.random.default_rng(500 + r)
        p, q = _overconfident(500, rng)
        y = (rng.random(500) < q).astype(float)
        pct = bootstrap(ece, y, p, n_resamples=100, random_state=r)
        basic = interval_from_distribution(pct.distribution, pct.estimate, method="basic")
        hits["percentile"] += pct.low <= population <= pct.high
        hits["basic"] += basic.low <= population <= basic.high
    cov = {k: v / reps for k, v in hits.items()}
    assert cov["basic"] > cov["percentile"] + 0.08, cov
    assert cov["percentile"] < 0.85, cov


def test_bias_corrected_estimate_of_a_known_biased_statistic_moves_toward_the_truth():
    # mean(x)^2 estimates mu^2 = 0 with bias sigma^2 / n; the bootstrap bias is sigma_hat^2 / n,
    # so the debiased estimate is nearly unbiased (E = sigma^2 / n^2).
    n, reps = 30, 200
    plain, debiased = [], []
    for r in range(reps):
        x = np.random.default_rng(r).normal(0.0, 1.0, n)
        res = bootstrap(lambda a: a.mean() ** 2, x, n_resamples=200, random_state=r, method="bias_corrected")
        plain.append(res.estimate)
        debiased.append(res.debiased)
    bias_plain, bias_debiased = np.mean(plain), np.mean(debiased)
    assert bias_plain == pytest.approx(1 / n, rel=0.3)  # the known bias, within Monte Carlo error
    assert abs(bias_debiased) < 0.3 * bias_plain


# ----------------------------------------------------------------------------
# the per-metric choice


def _registry_keys():
    from calibviz.panel import BINARY_METRICS, MULTICLASS_METRICS

    specs = {**BINARY_METRICS, **MULTICLASS_METRICS}
    return {k for k, s in specs.items() if s.bootstrap}, {k for k, s in specs.items() if not s.bootstrap}


def test_every_bootstrapped_registry_metric_has_an_interval_method():
    boot, no_boot = _registry_keys()
    assert set(INTERVALS) == boot
    for key in boot:
        assert interval_method(key) in INTERVAL_METHODS
        opts = interval_options(key)
        assert opts["method"] == interval_method(key)
        assert opts["alternative"] in ("two-sided", "less")
        assert opts["bounds"] == metric_bounds(key)
    for key in no_boot:  # tests and Wald intervals: no bootstrap interval
        with pytest.raises(InputError, match="no bootstrap interval"):
            interval_method(key)
    with pytest.raises(InputError):
        interval_method("nonsense")


def test_interval_options_give_a_shown_value_inside_its_interval():
    from calibviz.panel import BINARY_METRICS, PanelConfig

    rng = np.random.default_rng(0)
    p = rng.beta(2, 5, 3000)
    y = (rng.random(3000) < np.clip(1.3 * p, 0, 1)).astype(float)  # under-predicts
    cfg = PanelConfig()
    for key in ("ece", "ace", "rmsce", "smooth_ece", "brier", "brier_reliability", "log_loss", "debiased_ece"):
        spec = BINARY_METRICS[key]
        res = bootstrap(lambda yy, pp, _s=spec: _s.compute(yy, pp, None, cfg), y, p, n_resamples=100,
                        random_state=1, **interval_options(key))
        assert res.low <= res.point <= res.high, key


def test_panel_ece_with_the_chosen_method():
    rng = np.random.default_rng(5)
    p = rng.beta(2, 5, 2000)
    y = (rng.random(2000) < p).astype(float)  # calibrated: the percentile interval lies above the estimate
    res = bootstrap(ece, y, p, n_resamples=200, random_state=0, **interval_options("ece"))
    assert res.low <= res.point <= res.high
