"""calibviz.metrics.consistency_test: the calibrated-model reference by consistency resampling.

Checks: p-values uniform under calibration and small under miscalibration, null means against
independent exact computations (Poisson-binomial, enumeration, closed forms), the binomial-bucket
path against exact per-row draws, ties, multiclass draws, callables, reproducibility, bad input.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from calibviz import InputError
from calibviz import binning as B
from calibviz.metrics import (
    CONSISTENCY_METRICS,
    ConsistencyResult,
    ace,
    brier_decomposition,
    brier_score,
    calibration_index,
    classwise_ece,
    classwise_tce,
    confidence_ece,
    consistency_test,
    debiased_ece,
    ece,
    hosmer_lemeshow,
    log_loss,
    mce,
    smooth_ece,
    spiegelhalter_z,
    tce,
    top_label_ece,
    top_label_mce,
)
from calibviz import metrics as M
from calibviz.metrics.consistency import _categorical_draw

MULTICLASS = ("confidence_ece", "top_label_ece", "top_label_mce", "classwise_ece", "classwise_tce")


def _calibrated(n, seed, lo=0.05, hi=0.95):
    rng = np.random.default_rng(seed)
    p = rng.uniform(lo, hi, n)
    return (rng.random(n) < p).astype(int), p


def _multiclass(n, K, seed, sharpen=1.0):
    """Labels drawn from softmax(logits); predictions softmax(sharpen * logits) (1 = calibrated)."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(0, 1.5, (n, K))
    true = np.exp(logits)
    true /= true.sum(axis=1, keepdims=True)
    pred = np.exp(sharpen * logits)
    pred /= pred.sum(axis=1, keepdims=True)
    y = (np.cumsum(true, axis=1) <= rng.random(n)[:, None]).sum(axis=1)
    return np.minimum(y, K - 1), pred


def _ks_uniform(pvals, n_resamples, alpha=0.01, one_sided=False):
    """(KS distance to U(0,1), threshold): the KS critical value plus the p-value's grid step.

    A Monte Carlo p-value lives on the grid k / (R + 1); a discrete uniform on that grid is
    within 1 / (R + 1) of U(0, 1) in CDF, hence the added tolerance. ``one_sided`` only looks
    at P(p <= t) > t (anti-conservative), for metrics whose ties make p-values conservative.
    """
    x = np.sort(np.asarray(pvals))
    m = x.shape[0]
    above = np.max(np.arange(1, m + 1) / m - x)  # empirical CDF above the diagonal
    below = np.max(x - np.arange(m) / m)
    d = above if one_sided else max(above, below)
    crit = stats.ksone.ppf(1 - alpha, m) if one_sided else stats.kstwo.ppf(1 - alpha, m)
    return d, crit + 1.0 / (n_resamples + 1)


# ----------------------------------------------------------------------------
# calibrated data: p-values uniform; miscalibrated data: p-values small


def test_pvalues_are_uniform_for_calibrated_data_ece():
    R = 99
    pvals = []
    for seed in range(150):
        y, p = _calibrated(2000, seed)
        pvals.append(consistency_test(y, p, metric="ece", n_resamples=R, random_state=10_000 + seed).p_value)
    d, thr = _ks_uniform(pvals, R)
    assert d < thr, (d, thr)


def test_pvalues_are_uniform_for_calibrated_data_generic_path():
    """A metric without fixed bins (per-row draws, the metric called every time)."""
    R = 99
    pvals = []
    for seed in range(150):
        y, p = _calibrated(1000, seed)
        pvals.append(consistency_test(y, p, metric="spiegelhalter_z", n_resamples=R, random_state=seed).p_value)
    d, thr = _ks_uniform(pvals, R)
    assert d < thr, (d, thr)


@pytest.mark.parametrize("metric", ["brier", "log_loss"])
def test_two_sided_scores_have_uniform_pvalues_and_see_both_directions(metric):
    """The Brier score and log loss are tested two-sided (M.TWO_SIDED_METRICS): uniform p-values on calibrated
    data, including skewed scores (most p < 0.1); small ones when the model over-predicts (scores below a
    calibrated model's: one-sided p = 1) and when it is over-confident (scores above)."""
    R = 99
    pvals = []
    for seed in range(150):
        y, p = _calibrated(1000, seed)
        if seed % 2:  # skewed scores: the centre of a skewed null distribution
            p = p ** 3
            y = (np.random.default_rng(seed + 7).random(p.size) < p).astype(int)
        pvals.append(consistency_test(y, p, metric=metric, n_resamples=R, random_state=seed).p_value)
    d, thr = _ks_uniform(pvals, R)
    assert d < thr, (d, thr)
    rng = np.random.default_rng(3)
    p = rng.uniform(0.02, 0.45, 3000)
    under = (rng.random(3000) < p ** 1.5).astype(int)  # rarer than predicted: a lower score than calibrated
    res = consistency_test(under, p, metric=metric, n_resamples=R, random_state=4)
    assert res.statistic < res.null_low and res.p_value <= 1 / (R + 1), res
    sharp = np.clip(0.5 + 1.6 * (p - 0.25), 0.01, 0.99)  # over-confident: spread beyond the truth p
    over = (rng.random(3000) < p).astype(int)
    res = consistency_test(over, sharp, metric=metric, n_resamples=R, random_state=5)
    assert res.statistic > res.null_high and res.p_value <= 1 / (R + 1), res


def test_two_sided_range_is_centred_on_the_expected_score_and_stays_put():
    """The centre is a calibrated model's expected score, computed here by simulation apart from the library; the
    range does not move with the observed value (10 certain mistakes pulled a range centred on the mean of the
    redraws and the value past every redraw, a review) and its low end is not below 0 (-0.00035 on 60 skewed
    rows)."""
    rng = np.random.default_rng(8)
    p = rng.beta(2, 5, 1000)
    draws = (rng.random((4000, p.size)) < p).astype(float)
    simulated_brier = ((draws - p) ** 2).mean()
    q = np.clip(p, 1e-15, 1 - 1e-15)
    simulated_log_loss = (-(draws * np.log(q) + (1 - draws) * np.log(1 - q))).mean()
    assert M.calibrated_expectation("brier", p) == pytest.approx(simulated_brier, rel=2e-3)
    assert M.calibrated_expectation("log_loss", p, eps=1e-15) == pytest.approx(simulated_log_loss, rel=2e-3)
    y = (rng.random(p.size) < p).astype(int)
    wrong = y.copy()
    certain = np.argsort(p)[:10]
    p_certain = p.copy()
    p_certain[certain], wrong[certain] = 0.0, 1  # predicted impossible, happened
    a = consistency_test(y, p_certain, metric="log_loss", n_resamples=19, random_state=1)
    b = consistency_test(wrong, p_certain, metric="log_loss", n_resamples=19, random_state=1)
    assert b.statistic > a.statistic + 0.1 and (a.null_low, a.null_high) == (b.null_low, b.null_high)
    assert b.p_value == pytest.approx(1 / 20)
    lows = []
    for seed in range(40):
        r = np.random.default_rng(seed)
        p_small = r.beta(0.5, 20, 60)
        y_small = (r.random(60) < p_small).astype(int)
        lows.append(consistency_test(y_small, p_small, metric="brier", n_resamples=199, random_state=seed).null_low)
    assert min(lows) >= 0 and lows.count(0.0) > 0  # clipped where the centre's distance reached below 0


def test_pvalues_of_tce_are_not_anti_conservative():
    """TCE is discrete (ties with the statistic are common), so only P(p <= t) <= t is required."""
    R = 19
    pvals = []
    for seed in range(30):  # TCE costs ~5 ms per call whatever n: few resamples
        y, p = _calibrated(300, seed)
        pvals.append(consistency_test(y, p, metric="tce", n_resamples=R, random_state=seed).p_value)
    d, thr = _ks_uniform(pvals, R, one_sided=True)
    assert d < thr, (d, thr)


@pytest.mark.parametrize("metric", ["classwise_ece", "top_label_ece", "confidence_ece"])
def test_pvalues_are_uniform_for_calibrated_multiclass_data(metric):
    R = 49
    pvals = [
        consistency_test(*_multiclass(300, 3, seed), metric=metric, n_resamples=R, random_state=seed).p_value
        for seed in range(60)
    ]
    d, thr = _ks_uniform(pvals, R)
    assert d < thr, (metric, d, thr)


@pytest.mark.parametrize(
    "metric",
    ["ece", "ace", "mce", "rmsce", "debiased_ece", "tce", "smooth_ece", "hosmer_lemeshow", "brier_reliability", "ici"],
)
def test_pvalue_is_small_under_clear_miscalibration(metric):
    rng = np.random.default_rng(1)
    p = rng.uniform(0.05, 0.95, 2000)
    y = (rng.random(2000) < p**2).astype(int)  # true risk p^2: the model over-predicts
    R = 39 if metric in ("tce", "ici") else 199  # TCE and ICI cost ~5 ms and ~25 ms per call
    res = consistency_test(y, p, metric=metric, n_resamples=R, random_state=2)
    assert res.p_value <= 1 / (R + 1), res
    assert res.statistic > res.null_high


@pytest.mark.parametrize("metric", ["brier", "log_loss", "spiegelhalter_z"])
def test_proper_scores_detect_an_overconfident_model(metric):
    """Brier-type statistics mix calibration and sharpness: under the p^2 alternative above the expected
    Brier score equals the null's (2 E[p^2(1-p)] = E[p(1-p)] for p uniform on a symmetric range, and
    Spiegelhalter's Z has mean 0), so they get an over-confident model instead (true risk
    0.5 + 0.3 (p - 0.5)), whose expected score exceeds a calibrated one's."""
    rng = np.random.default_rng(1)
    p = rng.uniform(0.02, 0.98, 2000)
    y = (rng.random(2000) < 0.5 + 0.3 * (p - 0.5)).astype(int)
    res = consistency_test(y, p, metric=metric, n_resamples=199, random_state=2)
    assert res.p_value < 0.01 and res.statistic > res.null_high, res


@pytest.mark.parametrize("metric", MULTICLASS)
def test_multiclass_pvalue_is_small_for_an_overconfident_model(metric):
    y, P = _multiclass(1500, 4, seed=3, sharpen=2.5)
    # a max over 15 uniform bins is decided by a nearly empty low-confidence cell: equal-mass bins instead
    opts = {"binning": B.EqualMass(8)} if metric == "top_label_mce" else {}
    R = 49 if metric == "classwise_tce" else 199
    res = consistency_test(y, P, metric=metric, n_resamples=R, random_state=0, **opts)
    assert res.p_value <= 1 / (R + 1) and res.statistic > res.null_high, res


def test_tied_scores_give_a_large_pvalue():
    """y = [0, 1] * 50 at p = 0.5: perfectly calibrated; ties must never be split by the labels."""
    y, p = [0, 1] * 50, [0.5] * 100
    for metric in ("ece", "ace", "mce", "rmsce", "debiased_ece", "tce", "brier_reliability", "smooth_ece", "brier"):
        res = consistency_test(y, p, metric=metric, n_resamples=39, random_state=0)
        assert res.p_value > 0.2, (metric, res)
    for scheme in (B.EqualMass(15), B.EqualMass(2), B.MedianVariance(min_size=5), B.PAVABC()):
        res = consistency_test(y, p, metric="ece", binning=scheme, n_resamples=39, random_state=0)
        assert res.statistic == 0.0 and res.p_value == 1.0, (scheme, res)


# ----------------------------------------------------------------------------
# null distributions against independent exact computations


def _poisson_binomial_pmf(probs):
    pmf = np.array([1.0])
    for q in probs:
        pmf = np.convolve(pmf, [1.0 - q, q])
    return pmf


def _ece_uniform(Y, p, n_bins):
    """Plain ECE of every row of Y (label vectors) on Uniform(n_bins) bins, written out directly."""
    b = np.minimum(np.floor(p * n_bins).astype(int), n_bins - 1)
    total = np.zeros(Y.shape[0])
    for k in np.unique(b):
        rows = b == k
        total += rows.sum() / p.size * np.abs(Y[:, rows].mean(axis=1) - p[rows].mean())
    return total


@pytest.mark.parametrize("method", ["exact", "fast"])
def test_null_mean_of_ece_matches_the_poisson_binomial_expectation(method):
    """E[ECE*] = sum_b (n_b / n) E|S_b / n_b - pbar_b|, S_b Poisson-binomial: exact, by convolution."""
    rng = np.random.default_rng(4)
    n, n_bins = 60, 4
    p = rng.uniform(0.02, 0.98, n)
    y = (rng.random(n) < p).astype(int)
    b = np.minimum(np.floor(p * n_bins).astype(int), n_bins - 1)
    expected = 0.0
    for k in np.unique(b):
        pk = p[b == k]
        pmf = _poisson_binomial_pmf(pk)
        expected += pk.size / n * np.dot(pmf, np.abs(np.arange(pk.size + 1) / pk.size - pk.mean()))
    res = consistency_test(y, p, metric="ece", binning=B.Uniform(n_bins), n_resamples=4000, random_state=5,
                           method=method)
    assert res.method == ("buckets" if method == "fast" else "exact")
    se = res.distribution.std() / np.sqrt(res.distribution.size)
    assert abs(res.null_mean - expected) < 4 * se, (res.null_mean, expected, se)


def test_pvalue_matches_full_enumeration_of_the_null():
    """n = 12: all 2^12 label vectors with their probabilities give the exact null distribution."""
    rng = np.random.default_rng(6)
    n, n_bins = 12, 3
    p = rng.uniform(0.05, 0.95, n)
    y = (rng.random(n) < np.clip(p + 0.25, 0, 1)).astype(int)  # somewhat miscalibrated
    Y = (np.arange(2**n)[:, None] >> np.arange(n)) & 1
    prob = np.prod(np.where(Y == 1, p, 1 - p), axis=1)
    values = _ece_uniform(Y.astype(float), p, n_bins)
    stat = ece(y, p, binning=B.Uniform(n_bins))
    assert stat == pytest.approx(_ece_uniform(y[None, :].astype(float), p, n_bins)[0], abs=1e-12)
    exact_p = prob[values >= stat - 1e-12].sum()
    exact_mean = np.dot(prob, values)
    R = 4000
    for method in ("exact", "fast"):
        res = consistency_test(y, p, metric="ece", binning=B.Uniform(n_bins), n_resamples=R, random_state=7,
                               method=method)
        tol = 4 * np.sqrt(exact_p * (1 - exact_p) / R) + 2 / (R + 1)
        assert abs(res.p_value - exact_p) < tol, (method, res.p_value, exact_p)
        se = res.distribution.std() / np.sqrt(R)
        assert abs(res.null_mean - exact_mean) < 4 * se, (method, res.null_mean, exact_mean)


def test_null_means_of_scores_match_closed_forms():
    """Brier: E[(p - y*)^2] = p(1 - p); log loss: E = binary entropy of p; |Z|: E = sqrt(2/pi) (normal)."""
    y, p = _calibrated(3000, 8)
    R = 1000
    checks = {
        "brier": np.mean(p * (1 - p)),
        "log_loss": np.mean(-(p * np.log(p) + (1 - p) * np.log(1 - p))),
        "spiegelhalter_z": np.sqrt(2 / np.pi),
    }
    for metric, expected in checks.items():
        res = consistency_test(y, p, metric=metric, n_resamples=R, random_state=9)
        se = res.distribution.std() / np.sqrt(R)
        # |Z| is normal only asymptotically: allow a small extra margin
        margin = 4 * se + (0.02 if metric == "spiegelhalter_z" else 0)
        assert abs(res.null_mean - expected) < margin, (metric, res.null_mean, expected)


def test_binomial_buckets_match_exact_per_row_draws():
    """The fast path's null distribution against the exact one on the same data (KS and quantiles)."""
    rng = np.random.default_rng(10)
    n = 20_000
    p = rng.beta(2, 5, n)
    y = (rng.random(n) < p).astype(int)
    R = 2000
    fast = consistency_test(y, p, metric="ece", n_resamples=R, random_state=11, method="fast")
    exact = consistency_test(y, p, metric="ece", n_resamples=R, random_state=12, method="exact")
    assert (fast.method, exact.method) == ("buckets", "exact")
    assert stats.ks_2samp(fast.distribution, exact.distribution).pvalue > 0.001
    se = np.hypot(fast.distribution.std(), exact.distribution.std()) / np.sqrt(R)
    assert abs(fast.null_mean - exact.null_mean) < 4 * se
    qf = np.quantile(fast.distribution, [0.05, 0.25, 0.5, 0.75, 0.95])
    qe = np.quantile(exact.distribution, [0.05, 0.25, 0.5, 0.75, 0.95])
    np.testing.assert_allclose(qf, qe, rtol=0.06)


def test_binomial_buckets_keep_the_within_bin_spread_of_scores():
    """One bin holding scores 0.01 and 0.99: a per-bin binomial would have ~25x the variance.

    The exact sd of the bin's rate is sqrt(sum p(1 - p)) / n; the buckets must reproduce it.
    """
    n = 4000
    p = np.where(np.arange(n) % 2 == 0, 0.01, 0.99)
    y = (np.random.default_rng(13).random(n) < p).astype(int)
    exact_sd = np.sqrt(np.sum(p * (1 - p))) / n
    for method in ("fast", "exact"):
        res = consistency_test(y, p, metric="ece", binning=B.Uniform(1), n_resamples=1500, random_state=14,
                               method=method)
        # |S/n - pbar| with S ~ approx normal: E = sd * sqrt(2 / pi)
        assert res.null_mean == pytest.approx(exact_sd * np.sqrt(2 / np.pi), rel=0.08), method


def test_weighted_fixed_bins_agree_with_calling_the_metric():
    """Weighted ECE: the fixed-bin path against the generic path (a callable wrapping ece)."""
    rng = np.random.default_rng(15)
    n = 800
    p = rng.uniform(0, 1, n)
    y = (rng.random(n) < p).astype(int)
    w = rng.uniform(0.2, 3.0, n)

    def wrapped(y_true, y_prob, sample_weight=None):
        return ece(y_true, y_prob, sample_weight=sample_weight)

    a = consistency_test(y, p, sample_weight=w, n_resamples=1000, random_state=16)
    b = consistency_test(y, p, metric=wrapped, sample_weight=w, n_resamples=1000, random_state=17)
    assert a.method == "exact" and a.statistic == b.statistic == ece(y, p, sample_weight=w)
    assert stats.ks_2samp(a.distribution, b.distribution).pvalue > 0.001


def test_top_label_fixed_cells_agree_with_the_generic_draws():
    y, P = _multiclass(600, 3, seed=18)
    for metric, opts in (("top_label_ece", {"binning": B.EqualMass(5)}), ("top_label_mce", {})):
        fn = {"top_label_ece": top_label_ece, "top_label_mce": top_label_mce}[metric]

        def wrapped(y_true, y_prob, sample_weight=None, fn=fn, opts=opts):
            return fn(y_true, y_prob, **opts)

        a = consistency_test(y, P, metric=metric, n_resamples=800, random_state=19, **opts)
        b = consistency_test(y, P, metric=wrapped, n_resamples=800, random_state=20)  # joint categorical draws
        assert a.statistic == b.statistic
        assert stats.ks_2samp(a.distribution, b.distribution).pvalue > 0.001, metric


def test_categorical_draws_follow_the_rows():
    P = np.array([[0.2, 0.0, 0.8], [0.0, 1.0, 0.0], [0.5, 0.25, 0.25]])
    n = 30_000
    rows = np.repeat(np.arange(3), n)
    for cum in (None, np.cumsum(P[rows], axis=1)):
        draws = _categorical_draw(P[rows], cum, np.random.default_rng(21))
        for i in range(3):
            counts = np.bincount(draws[rows == i], minlength=3)
            assert counts[P[i] == 0].sum() == 0  # impossible classes never drawn
            keep = P[i] > 0
            if keep.sum() > 1:
                assert stats.chisquare(counts[keep], n * P[i][keep]).pvalue > 0.001


# ----------------------------------------------------------------------------
# API: fields, statistic, names, callables, seeds, options


def test_fields_and_formulas():
    y, p = _calibrated(1500, 22)
    res = consistency_test(y, p, n_resamples=300, random_state=0, level=0.9)
    assert isinstance(res, ConsistencyResult)
    assert res.metric == "ece" and res.n_resamples == 300 and res.n_failed == 0 and res.level == 0.9
    assert res.statistic == ece(y, p)
    d = res.distribution
    assert d.shape == (300,)
    assert res.null_mean == pytest.approx(d.mean())
    # the range's ends are the order statistics where each tail's test reaches 0.05: m = floor(0.05 x 301) - 1
    # = 14 null values beyond each end
    s = np.sort(d)
    assert (res.null_low, res.null_high) == (s[14], s[285])
    assert res.p_value == pytest.approx((1 + np.sum(d >= res.statistic)) / 301)
    assert "distribution" not in repr(res)
    with pytest.raises(Exception):
        res.statistic = 1.0  # frozen


@pytest.mark.parametrize(
    "metric, reference",
    [
        ("ece", lambda y, p: ece(y, p)),
        ("ace", lambda y, p: ace(y, p)),
        ("mce", lambda y, p: mce(y, p)),
        ("rmsce", lambda y, p: ece(y, p, norm="l2")),
        ("debiased_ece", lambda y, p: debiased_ece(y, p)),
        ("tce", lambda y, p: tce(y, p)),
        ("smooth_ece", lambda y, p: smooth_ece(y, p)),
        ("smece", lambda y, p: smooth_ece(y, p)),
        ("brier", lambda y, p: brier_score(y, p)),
        ("log_loss", lambda y, p: log_loss(y, p)),
        ("hosmer_lemeshow", lambda y, p: hosmer_lemeshow(y, p).statistic),
        ("spiegelhalter_z", lambda y, p: abs(spiegelhalter_z(y, p).statistic)),
        ("brier_reliability", lambda y, p: brier_decomposition(y, p).reliability),
        ("ici", lambda y, p: calibration_index(y, p).ici),
    ],
)
def test_statistic_is_the_named_metric(metric, reference):
    rng = np.random.default_rng(23)
    p = rng.uniform(0.05, 0.95, 600)
    y = (rng.random(600) < 0.3 + 0.4 * p).astype(int)  # under-confident: Z is negative here
    res = consistency_test(y, p, metric=metric, n_resamples=5, random_state=0)
    assert res.statistic == pytest.approx(reference(y, p), rel=1e-12, abs=1e-15)
    assert res.distribution.shape == (5,) and np.all(np.isfinite(res.distribution))


def test_every_name_is_covered_and_multiclass_statistics():
    assert set(CONSISTENCY_METRICS) == {
        "ece", "ace", "mce", "rmsce", "debiased_ece", "tce", "smooth_ece", "brier", "log_loss",
        "hosmer_lemeshow", "spiegelhalter_z", "brier_reliability", "ici", *MULTICLASS,
    }
    y, P = _multiclass(400, 4, seed=24)
    fns = {"confidence_ece": confidence_ece, "top_label_ece": top_label_ece, "top_label_mce": top_label_mce,
           "classwise_ece": classwise_ece, "classwise_tce": classwise_tce}
    for metric, fn in fns.items():
        res = consistency_test(y, P, metric=metric, n_resamples=10, random_state=0)
        assert res.statistic == pytest.approx(fn(y, P), rel=1e-12), metric
        assert res.distribution.shape == (10,)


def test_options_are_passed_through():
    y, p = _calibrated(1000, 25)
    cases = [
        ("ece", {"binning": B.Uniform(7), "norm": "max"}, lambda: ece(y, p, binning=B.Uniform(7), norm="max")),
        ("ece", {"binning": "quantile"}, lambda: ece(y, p, binning="quantile")),
        ("ace", {"n_bins": 5}, lambda: ace(y, p, n_bins=5)),
        ("tce", {"alpha": 0.01, "binning": B.Uniform(5)}, lambda: tce(y, p, alpha=0.01, binning=B.Uniform(5))),
        ("hosmer_lemeshow", {"n_groups": 5}, lambda: hosmer_lemeshow(y, p, n_groups=5).statistic),
        ("ece", {"binning": B.PAVA()}, lambda: ece(y, p, binning=B.PAVA())),  # label-dependent bins: generic
        ("brier_reliability", {"binning": B.Uniform(4)},
         lambda: brier_decomposition(y, p, binning=B.Uniform(4)).reliability),
    ]
    for metric, opts, ref in cases:
        res = consistency_test(y, p, metric=metric, n_resamples=20, random_state=0, **opts)
        assert res.statistic == pytest.approx(ref(), rel=1e-12), (metric, opts)


@pytest.mark.parametrize("n", [3000, 300_000])  # 300,000 > 2^18: the metrics sum EqualMass bins in one pass
def test_fixed_bins_are_the_metrics_own_bins(n):
    """The once-fitted bins and the metric's reduction give back its value (ties included; sums of
    3e5 rows in another order agree to ~1e-12 relative)."""
    from calibviz.metrics.consistency import _REGISTRY, _options
    from calibviz.validation import check_binary, check_multiclass

    rng = np.random.default_rng(37)
    p = np.round(rng.beta(2, 2, n), 2)  # heavy ties
    y = (rng.random(n) < p).astype(int)
    w = rng.uniform(0.5, 2, n)
    cases = [
        ("ece", {}, lambda **k: ece(y, p, **k)),
        ("ace", {"n_bins": 7}, lambda **k: ace(y, p, n_bins=7, **k)),
        ("mce", {"binning": B.MedianVariance(50)}, lambda **k: mce(y, p, binning=B.MedianVariance(50), **k)),
        ("rmsce", {"binning": B.EqualMass(10)}, lambda **k: ece(y, p, binning=B.EqualMass(10), norm="l2", **k)),
        ("brier_reliability", {"binning": B.EqualMass(10)},
         lambda **k: brier_decomposition(y, p, binning=B.EqualMass(10), **k).reliability),
    ]
    for weights in (None, w):
        yy, pp, ww = check_binary(y, p, weights)
        for name, opts, ref in cases:
            spec = _REGISTRY[name]
            plan = spec.plan(_options(name, spec, opts))(yy, pp, ww)
            assert plan is not None, name
            assert plan.reduce(plan.base) == pytest.approx(ref(sample_weight=weights), rel=1e-9, abs=1e-15), name
    yk, P = _multiclass(min(n, 20_000), 4, seed=38)
    P = np.round(P, 2)
    P /= P.sum(axis=1, keepdims=True)
    yk, P, _ = check_multiclass(yk, P)
    for name, opts, fn in [("confidence_ece", {"binning": B.EqualMass(6)}, confidence_ece),
                           ("top_label_ece", {"binning": B.EqualMass(6)}, top_label_ece),
                           ("top_label_ece", {"binning": B.EqualMass(6), "fit": "pooled"}, top_label_ece),
                           ("top_label_mce", {}, top_label_mce),
                           ("top_label_mce", {"reduce": "cell", "binning": B.Uniform(4)}, top_label_mce)]:
        spec = _REGISTRY[name]
        plan = spec.plan(_options(name, spec, opts))(yk, P, None)
        assert plan is not None, name
        assert plan.reduce(plan.base) == pytest.approx(fn(yk, P, **opts), rel=1e-12), (name, opts)


def test_fast_path_variants_agree_with_exact_draws():
    """Uniform / EqualMass / Custom bins, l2 and max norms, brier reliability: buckets vs exact draws."""
    rng = np.random.default_rng(26)
    n = 6000
    p = rng.beta(2, 3, n)
    y = (rng.random(n) < p).astype(int)
    cases = [
        ("ace", {"n_bins": 10}),
        ("mce", {"binning": B.Custom([0, 0.2, 0.5, 1])}),
        ("rmsce", {"binning": B.MedianVariance(min_size=300)}),
        ("brier_reliability", {}),
    ]
    for metric, opts in cases:
        f = consistency_test(y, p, metric=metric, n_resamples=600, random_state=1, method="fast", **opts)
        e = consistency_test(y, p, metric=metric, n_resamples=600, random_state=2, method="exact", **opts)
        assert f.method == "buckets" and e.method == "exact"
        assert f.statistic == e.statistic
        assert stats.ks_2samp(f.distribution, e.distribution).pvalue > 0.001, metric


def test_callable_metrics_binary_and_multiclass():
    y, p = _calibrated(800, 27)

    def mean_gap(y_true, y_prob):
        return abs(float(np.mean(y_true) - np.mean(y_prob)))

    res = consistency_test(y, p, metric=mean_gap, n_resamples=500, random_state=0)
    assert res.metric == "mean_gap" and res.statistic == mean_gap(y, p)
    # |mean(y*) - mean(p)|: approximately half-normal with sd sqrt(sum p(1-p)) / n
    sd = np.sqrt(np.sum(p * (1 - p))) / p.size
    assert res.null_mean == pytest.approx(sd * np.sqrt(2 / np.pi), rel=0.15)

    w = np.random.default_rng(0).uniform(0.5, 2, 800)
    seen = {}

    def weighted(y_true, y_prob, sample_weight=None):
        seen["w"] = sample_weight
        return float(np.average((y_prob - y_true) ** 2, weights=sample_weight))

    res_w = consistency_test(y, p, metric=weighted, sample_weight=w, n_resamples=20, random_state=0)
    assert res_w.statistic == pytest.approx(brier_score(y, p, sample_weight=w))
    np.testing.assert_array_equal(seen["w"], w)

    yk, P = _multiclass(500, 3, seed=28)

    def accuracy_gap(y_true, y_prob):
        assert y_prob.shape == (500, 3) and y_true.dtype.kind == "i"
        return abs(float(np.mean(y_prob.argmax(axis=1) == y_true) - np.mean(y_prob.max(axis=1))))

    res_k = consistency_test(yk, P, metric=accuracy_gap, n_resamples=200, random_state=0)
    assert res_k.statistic == accuracy_gap(yk, P) and res_k.p_value > 0.01


def test_same_seed_same_result_and_generators():
    y, p = _calibrated(3000, 29)
    for metric, method in (("ece", "exact"), ("ece", "fast"), ("brier", "auto")):
        a = consistency_test(y, p, metric=metric, n_resamples=50, random_state=3, method=method)
        b = consistency_test(y, p, metric=metric, n_resamples=50, random_state=3, method=method)
        c = consistency_test(y, p, metric=metric, n_resamples=50, random_state=4, method=method)
        assert a == b
        np.testing.assert_array_equal(a.distribution, b.distribution)
        assert not np.array_equal(a.distribution, c.distribution)
    g1, g2 = np.random.default_rng(5), np.random.default_rng(5)
    np.testing.assert_array_equal(
        consistency_test(y, p, n_resamples=20, random_state=g1).distribution,
        consistency_test(y, p, n_resamples=20, random_state=g2).distribution,
    )
    yk, P = _multiclass(300, 3, seed=30)
    a = consistency_test(yk, P, metric="classwise_ece", n_resamples=20, random_state=1)
    b = consistency_test(yk, P, metric="classwise_ece", n_resamples=20, random_state=1)
    np.testing.assert_array_equal(a.distribution, b.distribution)


def test_auto_uses_buckets_only_for_large_unweighted_problems():
    rng = np.random.default_rng(31)
    n = 200_000
    p = rng.random(n)
    y = (rng.random(n) < p).astype(np.int8)
    assert consistency_test(y, p, n_resamples=200, random_state=0).method == "buckets"
    assert consistency_test(y[:2000], p[:2000], n_resamples=200, random_state=0).method == "exact"
    w = np.ones(n)
    assert consistency_test(y, p, n_resamples=3, random_state=0, sample_weight=w, method="fast").method == "exact"


def test_zero_weight_rows_are_absent():
    y, p = _calibrated(500, 32)
    w = np.random.default_rng(1).uniform(0.5, 2, 500)
    w[::7] = 0.0
    keep = w > 0
    for metric in ("ece", "brier"):
        a = consistency_test(y, p, metric=metric, sample_weight=w, n_resamples=30, random_state=2)
        b = consistency_test(y[keep], p[keep], metric=metric, sample_weight=w[keep], n_resamples=30, random_state=2)
        assert a == b, metric


def test_failed_resamples_are_counted_and_left_out():
    y, p = _calibrated(300, 33)
    calls = {"n": 0}

    def flaky(y_true, y_prob):
        calls["n"] += 1
        if calls["n"] > 1 and calls["n"] % 4 == 0:
            return float("nan")
        if calls["n"] > 1 and calls["n"] % 4 == 1:
            raise InputError("degenerate resample")
        return float(np.mean(np.abs(y_true - y_prob)))

    with pytest.warns(RuntimeWarning, match="undefined"):
        res = consistency_test(y, p, metric=flaky, n_resamples=40, random_state=0)
    assert res.n_failed == 20 and res.distribution.shape == (20,)
    assert res.p_value == pytest.approx((1 + np.sum(res.distribution >= res.statistic)) / 21)


def test_an_infinite_statistic_is_larger_than_every_null_value():
    y, p = _calibrated(200, 36)

    def impossible(y_true, y_prob):  # e.g. a likelihood ratio of outcomes the model calls impossible
        return float("inf") if np.array_equal(y_true, y) else float(np.mean(y_true))

    res = consistency_test(y, p, metric=impossible, n_resamples=30, random_state=0)
    assert res.statistic == np.inf and res.p_value == 1 / 31 and res.n_failed == 0


def test_bad_inputs_raise_input_error():
    y, p = _calibrated(100, 34)
    yk, P = _multiclass(100, 3, seed=35)
    with pytest.raises(InputError, match="unknown metric 'nope'.*ece.*classwise_tce"):
        consistency_test(y, p, metric="nope")
    with pytest.raises(InputError, match=r"binary.*shape \(n,\).*y_prob\[:, 1\]"):
        consistency_test(yk, P, metric="ece")
    with pytest.raises(InputError, match=r"multiclass.*shape \(n, K\)"):
        consistency_test(y, p, metric="top_label_ece")
    with pytest.raises(InputError, match="does not take the option.*'n_bins'.*accepts: binning, norm"):
        consistency_test(y, p, metric="ece", n_bins=10)
    with pytest.raises(InputError, match="does not take.*'norm'"):
        consistency_test(y, p, metric="rmsce", norm="l1")
    for bad in (0, -3, 2.5, True, "100"):
        with pytest.raises(InputError, match="n_resamples"):
            consistency_test(y, p, n_resamples=bad)
    for bad in (0, 1, 1.5, -0.1, True):
        with pytest.raises(InputError, match="level"):
            consistency_test(y, p, level=bad)
    with pytest.raises(InputError, match="method"):
        consistency_test(y, p, method="bootstrap")
    with pytest.raises(InputError, match="random_state"):
        consistency_test(y, p, random_state="seed")
    with pytest.raises(InputError, match=r"shape \(n,\) .*or \(n, K\)"):
        consistency_test(y, p[:, None, None])
    with pytest.raises(InputError, match=r"y_prob must lie in \[0, 1\]"):
        consistency_test(y, p + 1)
    with pytest.raises(InputError, match="same length"):
        consistency_test(y[:50], p)
    with pytest.raises(InputError, match="norm"):
        consistency_test(y, p, norm="l3")
    with pytest.raises(InputError, match="one number"):
        consistency_test(y, p, metric=lambda a, b: (1.0, 2.0))
    with pytest.raises(InputError, match="no calibrated-model reference"):
        consistency_test(y, p, metric=lambda a, b: float("nan"))
    with pytest.raises(InputError, match="Spiegelhalter"):  # undefined on the data: the user's problem
        consistency_test([0, 1] * 5, [0.5] * 10, metric="spiegelhalter_z")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        consistency_test(y, p, metric="ece", n_resamples=5, random_state=0)  # no warning on clean data


def test_binomial_buckets_draw_the_same_from_means_summed_in_another_order():
    """Means of equal 3-decimal scores summed in another order (a scan's engines add files and threads in any
    order) differ in the last bits; the draws must not (a multi-file log read p = 0.31 or 0.33 run to run)."""
    from calibviz.metrics.consistency import bucket_binomial_draws

    rng = np.random.default_rng(3)
    scores = np.round(np.linspace(0.001, 0.999, 400), 3)
    size = rng.integers(50, 2000, scores.shape[0])
    sums = [np.array([np.sum(np.full(n, s)[order]) for n, s, order in
                      zip(size, scores, (rng.permutation(n) for n in size))]) for _ in range(2)]
    shifted = [np.nextafter(s / size, 1.0) for s in sums]  # and one ulp above: as a four-way sum can land
    means = [sums[0] / size, shifted[0], np.nextafter(sums[1] / size, 0.0)]
    assert any((m != means[0]).any() for m in means[1:])
    # numpy's own sampler draws other values from such means (the hazard this guards against)
    raw = [np.random.default_rng(0).binomial(size, m, size=(20, size.shape[0])) for m in means]
    assert any((r != raw[0]).any() for r in raw[1:])
    drawn = [np.concatenate(list(bucket_binomial_draws(size, m, 20, np.random.default_rng(0)))) for m in means]
    for d in drawn[1:]:
        np.testing.assert_array_equal(d, drawn[0])
