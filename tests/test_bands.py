"""Bands read at first sight: ranges that a calibrated model stays in as a whole, not one bin or one score at a time.

The binned diagram's band (Šidák over the bins shown) is checked against exact binomial probabilities computed
here with scipy; the CORP consistency band (split-conformal, :func:`calibviz.metrics.band_limits`) by the share of
calibrated logs whose curve leaves it, at modest replication (full size: benchmarks/bench_bands.py).
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

import calibviz as cv
from calibviz.binning import Uniform
from calibviz.errors import InputError
from calibviz.metrics import band_limits, band_resamples, corp_table
from calibviz.stats import acceptance_band, joint_acceptance_band


def _share(reps: int, seed: int, one_log) -> float:
    """Share of ``reps`` simulated logs on which ``one_log(rng)`` is True (one generator for all)."""
    rng = np.random.default_rng(seed)
    return sum(bool(one_log(rng)) for _ in range(reps)) / reps


def _at_most_alpha(share: float, reps: int, alpha: float = 0.05) -> bool:
    return share <= alpha + 3 * np.sqrt(alpha * (1 - alpha) / reps)


def _inside_probability(n, p, lo, hi):
    """Exact P(every bin's Binomial(n, p) count / n lies in [lo, hi]), bins independent."""
    n, p = np.asarray(n), np.asarray(p)
    k_lo, k_hi = np.rint(np.asarray(lo) * n), np.rint(np.asarray(hi) * n)
    return float(np.prod(binom.cdf(k_hi, n, p) - binom.cdf(k_lo - 1, n, p)))


@pytest.mark.parametrize("alpha", [0.05, 0.01])
def test_joint_band_holds_for_all_bins_where_each_bins_band_does_not(alpha):
    n = np.array([40, 120, 300, 800, 500, 260, 90, 33, 15, 7, 250, 60, 1000, 75, 20])
    p = np.linspace(0.03, 0.97, n.size)
    lo, hi = joint_acceptance_band(n, p, alpha)
    # the Šidák level of each bin, from scipy's quantiles directly
    a = 1.0 - (1.0 - alpha) ** (1.0 / n.size)
    np.testing.assert_array_equal(lo, binom.ppf(a / 2, n, p) / n)
    np.testing.assert_array_equal(hi, binom.ppf(1 - a / 2, n, p) / n)
    assert _inside_probability(n, p, lo, hi) >= 1.0 - alpha
    # each bin's own band: some bin of a calibrated model falls outside far more often than alpha
    lo1, hi1 = acceptance_band(n, p, alpha)
    assert _inside_probability(n, p, lo1, hi1) < 1.0 - 3 * alpha


def test_joint_band_of_one_bin_is_the_bins_band_and_the_table_carries_it():
    lo, hi = joint_acceptance_band([200], [0.3], 0.05)
    lo1, hi1 = acceptance_band([200], [0.3], 0.05)
    assert (lo, hi) == (lo1, hi1)
    rng = np.random.default_rng(0)
    p = rng.beta(2, 5, 3000)
    y = (rng.uniform(size=3000) < p).astype(int)
    t = cv.reliability_table(y, p, binning=Uniform(10))
    lo, hi = joint_acceptance_band(t["n"], t["mean_pred"], 0.05)
    np.testing.assert_array_equal(t["band_low"], lo)
    np.testing.assert_array_equal(t["band_high"], hi)
    assert (t["band_low"] <= t["accept_low"]).all() and (t["band_high"] >= t["accept_high"]).all()


@pytest.mark.slow
def test_weighted_calibrated_logs_leave_the_joint_band_about_alpha_of_the_time():
    # the weighted observed rate against a band at Kish's effective size: with the unweighted count as the
    # band's size, 51-56% of these logs (lognormal weights, sigma 1) were outside
    def one_log(rng):
        p = rng.beta(2, 5, 2000)
        y = (rng.uniform(size=2000) < p).astype(int)
        t = cv.reliability_table(y, p, binning=Uniform(15), sample_weight=rng.lognormal(0, 1, 2000), test=None)
        return ((t.obs_rate < t.band_low) | (t.obs_rate > t.band_high)).any()

    assert _at_most_alpha(_share(300, 6, one_log), 300)


@pytest.mark.slow
def test_calibrated_logs_leave_the_joint_band_at_most_alpha_of_the_time():
    rng = np.random.default_rng(3)
    reps, outside, outside_each = 300, 0, 0
    for _ in range(reps):
        p = rng.beta(2, 5, 2000)
        y = (rng.uniform(size=2000) < p).astype(int)
        t = cv.reliability_table(y, p, binning=Uniform(15), test=None)
        outside += bool(((t.obs_rate < t.band_low) | (t.obs_rate > t.band_high)).any())
        outside_each += bool(((t.obs_rate < t.accept_low) | (t.obs_rate > t.accept_high)).any())
    se = np.sqrt(0.05 * 0.95 / reps)
    assert outside / reps <= 0.05 + 3 * se
    assert outside_each / reps > 0.15  # what the per-bin band showed on calibrated models


def test_simultaneous_band_is_conformal_on_exchangeable_curves():
    # any positive units keep the finite-sample guarantee: skewed, discrete curves with flat points
    rng = np.random.default_rng(1)
    reps, B, M, level = 1500, 40, 60, 0.9
    outside = 0
    for _ in range(reps):
        curves = rng.binomial(12, np.linspace(0.02, 0.5, M), size=(B + 1, M)) / 12.0
        curves[:, :3] = 0.0  # no spread at all there
        lo, hi = band_limits(curves[:B], level, "simultaneous")
        new = curves[B]
        outside += bool(((new < lo) | (new > hi)).any())
    rate, held = outside / reps, B // 2
    se = np.sqrt(0.1 * 0.9 / reps)
    assert rate <= 1 - level + 3 * se
    assert rate >= 1 - level - 1.0 / (held + 1) - 3 * se  # not wastefully wide either


def test_band_limits_pointwise_and_too_few_draws_and_bad_input():
    rng = np.random.default_rng(2)
    d = rng.normal(0.5, 0.1, size=(200, 5))
    lo, hi = band_limits(d, 0.8)
    np.testing.assert_allclose(lo, np.quantile(d, 0.1, axis=0))
    np.testing.assert_allclose(hi, np.quantile(d, 0.9, axis=0))
    lo, hi = band_limits(d[:20], 0.95, "simultaneous")  # 10 held-out curves cannot resolve 95%
    assert (lo == 0).all() and (hi == 1).all()
    assert band_resamples(0.95) == 200 and band_resamples(0.99, 100) == 198 and band_resamples(0.95, 500) == 500
    lo, hi = band_limits(d[:band_resamples(0.99, 2)], 0.99, "simultaneous")
    assert (hi < 1).all()
    with pytest.raises(InputError, match="coverage must be"):
        band_limits(d, 0.9, "global")
    with pytest.raises(InputError, match="coverage must be"):
        corp_table([0, 1, 1], [0.2, 0.5, 0.7], coverage="everywhere")
    with pytest.raises(InputError, match="fixed predictions"):
        corp_table([0, 1, 1], [0.2, 0.5, 0.7], coverage="simultaneous", resample_predictions=True)


def test_simultaneous_consistency_band_flags_a_miscalibrated_model():
    rng = np.random.default_rng(10)
    p = rng.uniform(0.05, 0.95, 4000)
    y = (rng.uniform(size=4000) < p ** 2).astype(float)  # over-predicts
    t = corp_table(y, p, n_resamples=100, level=0.95, coverage="simultaneous", random_state=3)
    assert t.attrs["coverage"] == "simultaneous" and t.attrs["resample_predictions"] == {"consistency": False}
    assert (t["cep"] < t["consistency_low"]).mean() > 0.5
    pointwise = corp_table(y, p, n_resamples=100, level=0.95, random_state=3)
    wider = (t["consistency_high"] - t["consistency_low"]) >= (pointwise["consistency_high"]
                                                               - pointwise["consistency_low"]) - 1e-12
    assert wider.mean() > 0.9


@pytest.mark.slow
@pytest.mark.parametrize("scores", ["beta", "rare", "ties"])
def test_calibrated_curves_leave_the_simultaneous_band_at_most_alpha_of_the_time(scores):
    rng = np.random.default_rng(7)
    reps, outside, outside_pointwise = 150, 0, 0
    for r in range(reps):
        p = {"beta": lambda: rng.beta(2, 5, 1500), "rare": lambda: 10 ** rng.uniform(-4, -1.5, 1500),
             "ties": lambda: np.round(rng.beta(2, 5, 1500), 2)}[scores]()
        y = (rng.uniform(size=p.size) < p).astype(int)
        t = corp_table(y, p, n_resamples=100, level=0.95, coverage="simultaneous", random_state=r)
        outside += bool(((t.cep < t.consistency_low) | (t.cep > t.consistency_high)).any())
        if r < 20:
            tp = corp_table(y, p, n_resamples=100, level=0.95, random_state=r)
            outside_pointwise += bool(((tp.cep < tp.consistency_low) | (tp.cep > tp.consistency_high)).any())
    se = np.sqrt(0.05 * 0.95 / reps)
    assert outside / reps <= 0.05 + 3 * se
    if scores != "rare":  # rare events: most scores share one PAV block at 0, the pointwise band holds more often
        assert outside_pointwise / 20 > 0.5


# ----------------------------------------------------------------------------
# calibration in the large (the Data page's sentence): the engine's test against scipy's binomial


@pytest.mark.parametrize("k", [41, 52, 60, 75])
def test_mean_gap_test_is_the_exact_binomial_test_for_equal_predictions(k):
    from calibviz.overview import mean_gap_test

    n, q = 200, 0.25   # 200 x 4000 redraws: exact redraws; |K - 50| >= |k - 50| by scipy
    o = np.r_[np.ones(k), np.zeros(n - k)]
    t = mean_gap_test(o, np.full(n, q), random_state=1)
    d = abs(k - n * q)
    exact = binom.cdf(n * q - d, n, q) + binom.sf(n * q + d - 1, n, q)
    assert t.method == "redraws"
    assert abs(t.p_value - min(1.0, exact)) < 4 * np.sqrt(exact * (1 - exact) / t.n_draws) + 1e-3
    assert np.sign(t.z[0]) == np.sign(k - n * q)


@pytest.mark.slow
def test_calibrated_models_read_as_off_on_average_at_most_alpha():
    from calibviz.overview import mean_gap_test

    def one_log(rng):
        p = rng.beta(2, 5, 1500)
        return mean_gap_test(rng.uniform(size=1500) < p, p, random_state=int(rng.integers(1 << 31))).p_value <= 0.05

    assert _at_most_alpha(_share(300, 8, one_log), 300)


# ----------------------------------------------------------------------------
# binning sensitivity: each point against what a calibrated model shows at that binning


def test_sensitivity_reads_each_binning_against_a_calibrated_model():
    from calibviz.sensitivity import binning_sensitivity
    from calibviz import figures

    rng = np.random.default_rng(12)
    p = rng.beta(2, 5, 6000)
    y = (rng.uniform(size=6000) < p).astype(int)
    calibrated = binning_sensitivity(y, p, metrics=("ece",), n_resamples=0, n_reference=200, random_state=1)
    # a calibrated model's ECE is above 0 and grows with the bins, as its reference does
    assert (calibrated["value"] > 0).all()
    assert calibrated["reference_high"].iloc[-1] > calibrated["reference_high"].iloc[0]
    inside = (calibrated["value"] <= calibrated["reference_high"]).mean()
    assert inside >= 0.8
    y_off = (rng.uniform(size=6000) < np.clip(1.25 * p, 0, 1)).astype(int)   # under-predicts
    off = binning_sensitivity(y_off, p, metrics=("ece",), n_resamples=0, n_reference=200, random_state=1)
    assert (off["value"] > off["reference_high"]).all()
    plain = binning_sensitivity(y, p, metrics=("ece",), n_resamples=0)
    assert plain["reference_high"].isna().all() and plain.attrs["n_reference"] == 0
    fig = figures.binning_sensitivity(table=calibrated)
    assert any((t.name or "").endswith("a calibrated model shows") for t in fig.data)
    with pytest.raises(InputError, match="n_reference"):
        binning_sensitivity(y, p, n_reference=-1)
