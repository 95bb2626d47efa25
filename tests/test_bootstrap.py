"""calibviz.metrics.bootstrap: reproducibility, interval formulas, failures, validation."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from calibviz import InputError
from calibviz.metrics import BootstrapResult, bootstrap, brier_score, log_loss, smooth_ece


def _binary(n=1000, seed=0, squash=1.0):
    rng = np.random.default_rng(seed)
    p_true = rng.random(n)
    y = (rng.random(n) < p_true).astype(int)
    return y, 0.5 + squash * (p_true - 0.5)


def test_same_seed_same_result_and_different_seed_differs():
    y, p = _binary()
    a = bootstrap(brier_score, y, p, n_resamples=100, random_state=7)
    b = bootstrap(brier_score, y, p, n_resamples=100, random_state=7)
    c = bootstrap(brier_score, y, p, n_resamples=100, random_state=8)
    assert isinstance(a, BootstrapResult)
    np.testing.assert_array_equal(a.distribution, b.distribution)
    assert (a.low, a.high) == (b.low, b.high)
    assert not np.array_equal(a.distribution, c.distribution)
    # a Generator is used as given (and advanced)
    g1, g2 = np.random.default_rng(3), np.random.default_rng(3)
    np.testing.assert_array_equal(
        bootstrap(brier_score, y, p, n_resamples=30, random_state=g1).distribution,
        bootstrap(brier_score, y, p, n_resamples=30, random_state=g2).distribution,
    )


def test_estimate_is_the_full_data_metric_and_fields():
    y, p = _binary()
    res = bootstrap(log_loss, y, p, n_resamples=50, confidence=0.9, random_state=0)
    assert res.estimate == log_loss(y, p)
    assert res.n_resamples == 50 and res.distribution.shape == (50,) and res.n_failed == 0
    assert res.method == "percentile" and res.confidence == 0.9
    assert res.low == pytest.approx(np.quantile(res.distribution, 0.05))
    assert res.high == pytest.approx(np.quantile(res.distribution, 0.95))


def test_resamples_are_joint_rows_by_checking_against_naive_loop():
    """Each resample must pair y_true[i] with y_prob[i]: reproduce one by hand."""
    y, p = _binary(50, seed=1)
    seen = []
    bootstrap(lambda yy, pp: seen.append((yy.copy(), pp.copy())) or 0.0, y, p, n_resamples=3, random_state=0)
    for yy, pp in seen[1:]:  # seen[0] is the full-data call
        # every resampled pair is an original row
        rows = {(int(a), float(b)) for a, b in zip(y, p)}
        assert all((int(a), float(b)) in rows for a, b in zip(yy, pp))
        assert yy.shape == y.shape


def test_two_dimensional_arrays_are_resampled_along_rows():
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(3), 200)
    y = rng.integers(0, 3, 200)

    def acc(y_true, probs):
        assert probs.shape == (200, 3)
        return float(np.mean(probs.argmax(axis=1) == y_true))

    res = bootstrap(acc, y, P, n_resamples=50, random_state=0)
    assert res.low <= res.estimate <= res.high


def test_rows_and_weights_modes_agree_for_weight_exact_metrics():
    y, p = _binary(400, seed=2, squash=0.7)
    w = np.random.default_rng(0).uniform(0.5, 2, 400)
    for metric in (brier_score, smooth_ece):
        a = bootstrap(metric, y, p, sample_weight=w, n_resamples=40, random_state=5)
        b = bootstrap(metric, y, p, sample_weight=w, n_resamples=40, random_state=5, resample="weights")
        np.testing.assert_allclose(a.distribution, b.distribution, rtol=1e-9, atol=1e-12)


def test_metric_kwargs_are_forwarded():
    y, p = _binary(500, seed=3)
    res = bootstrap(smooth_ece, y, p, n_resamples=20, random_state=0, bandwidth=0.2)
    assert res.estimate == smooth_ece(y, p, bandwidth=0.2)


def test_percentile_interval_agrees_with_scipy_for_the_mean():
    x = np.random.default_rng(0).exponential(size=400)
    ours = bootstrap(np.mean, x, n_resamples=20000, random_state=1)
    ref = stats.bootstrap((x,), np.mean, method="percentile", n_resamples=20000, random_state=2).confidence_interval
    se = x.std() / math.sqrt(x.size)
    assert ours.low == pytest.approx(ref.low, abs=0.05 * se)
    assert ours.high == pytest.approx(ref.high, abs=0.05 * se)


def _naive_bca(dist, estimate, x, statistic, confidence):
    """Efron & Tibshirani (1993) Eqs. 14.9-14.15 with a leave-one-out loop."""
    jack = np.array([statistic(np.delete(x, i)) for i in range(x.size)])
    d = jack.mean() - jack
    a = (d**3).sum() / (6 * ((d**2).sum()) ** 1.5)
    z0 = stats.norm.ppf((np.sum(dist < estimate) + np.sum(dist <= estimate)) / (2 * dist.size))
    out = []
    for q in ((1 - confidence) / 2, (1 + confidence) / 2):
        zq = stats.norm.ppf(q)
        out.append(np.quantile(dist, stats.norm.cdf(z0 + (z0 + zq) / (1 - a * (z0 + zq)))))
    return out


def test_bca_matches_textbook_formula_with_full_jackknife():
    x = np.random.default_rng(4).exponential(size=150)
    res = bootstrap(np.mean, x, n_resamples=3000, method="bca", random_state=0, confidence=0.9)
    lo, hi = _naive_bca(res.distribution, res.estimate, x, np.mean, 0.9)
    assert (res.low, res.high) == pytest.approx((lo, hi), rel=1e-12)


def test_bca_agrees_with_scipy_and_grouped_jackknife_is_close():
    x = np.random.default_rng(5).exponential(size=600)
    se = x.std() / math.sqrt(x.size)
    ref = stats.bootstrap((x,), np.mean, method="BCa", n_resamples=20000, random_state=0).confidence_interval
    full = bootstrap(np.mean, x, n_resamples=20000, method="bca", random_state=1, n_jackknife=600)
    grouped = bootstrap(np.mean, x, n_resamples=20000, method="bca", random_state=1, n_jackknife=50)
    for res in (full, grouped):
        assert res.low == pytest.approx(ref.low, abs=0.08 * se)
        assert res.high == pytest.approx(ref.high, abs=0.08 * se)


def test_nan_resamples_are_dropped_counted_and_warned():
    y, p = _binary(30, seed=6)

    def fragile(yy, pp):
        return float("nan") if yy.sum() > y.sum() else float(np.mean(pp))

    with pytest.warns(RuntimeWarning, match="undefined"):
        res = bootstrap(fragile, y, p, n_resamples=200, random_state=0)
    assert 0 < res.n_failed < 200
    assert res.distribution.size == 200 - res.n_failed
    assert np.isfinite(res.distribution).all()


def test_input_error_on_a_resample_counts_as_failure():
    y = np.array([0] * 3 + [1] * 3)
    p = np.linspace(0.2, 0.8, 6)

    def needs_both_classes(yy, pp):
        if yy.min() == yy.max():
            raise InputError("one class")
        return float(np.mean(yy))

    with pytest.warns(RuntimeWarning):
        res = bootstrap(needs_both_classes, y, p, n_resamples=500, random_state=0)
    assert res.n_failed > 0


def test_all_resamples_failing_gives_nan_interval():
    with pytest.warns(RuntimeWarning):
        res = bootstrap(lambda a: 1.0 if a.size == 0 else float("nan"), np.arange(5), n_resamples=10, random_state=0)
    assert res.n_failed == 10 and math.isnan(res.low) and math.isnan(res.high)


def test_progress_callback():
    y, p = _binary(200)
    calls = []
    bootstrap(brier_score, y, p, n_resamples=250, random_state=0, progress=lambda d, t: calls.append((d, t)))
    assert len(calls) >= 20
    assert calls[-1] == (250, 250)
    done = [d for d, _ in calls]
    assert done == sorted(done) and all(t == 250 for _, t in calls)


def test_sample_weight_is_resampled_and_passed():
    y, p = _binary(300, seed=8)
    w = np.random.default_rng(1).uniform(0, 2, 300)
    res = bootstrap(brier_score, y, p, sample_weight=w, n_resamples=20, random_state=0)
    assert res.estimate == brier_score(y, p, sample_weight=w)


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"n_resamples": 0}, "n_resamples"),
        ({"n_resamples": 2.5}, "n_resamples"),
        ({"confidence": 1.0}, "confidence"),
        ({"confidence": 0}, "confidence"),
        ({"method": "studentized"}, "method"),  # "basic" became a valid method
        ({"alternative": "both"}, "alternative"),
        ({"bounds": (1, 0)}, "bounds"),
        ({"resample": "blocks"}, "resample"),
        ({"n_jackknife": 1}, "n_jackknife"),
        ({"random_state": "seed"}, "random_state"),
        ({"sample_weight": [1.0, 2.0]}, "one weight per row"),
    ],
)
def test_bad_arguments_raise_input_error(kwargs, fragment):
    y, p = _binary(20)
    with pytest.raises(InputError) as info:
        bootstrap(brier_score, y, p, **kwargs)
    assert fragment in str(info.value)


def test_bad_arrays_and_metric():
    with pytest.raises(InputError, match="row-aligned"):
        bootstrap(brier_score, [0, 1, 1], [0.2, 0.3])
    with pytest.raises(InputError, match="at least one data array"):
        bootstrap(brier_score)
    with pytest.raises(InputError, match="callable"):
        bootstrap("ece", [0, 1], [0.2, 0.3])
    with pytest.raises(InputError, match="one number"):
        bootstrap(lambda y, p: (1.0, 2.0), [0, 1], [0.2, 0.3], n_resamples=2)
    with pytest.raises(InputError, match="only 0 and 1"):  # the metric's own validation propagates
        bootstrap(brier_score, [0, 2], [0.2, 0.3], n_resamples=2)


@pytest.mark.property
@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([0.6, 1.0, 1.3]))
def test_interval_contains_estimate_for_smooth_metrics(seed, squash):
    y, p = _binary(1500, seed, squash=squash)
    p = np.clip(p, 0, 1)
    for metric in (brier_score, log_loss):
        res = bootstrap(metric, y, p, n_resamples=200, random_state=seed)
        assert res.low <= res.estimate <= res.high
        assert res == bootstrap(metric, y, p, n_resamples=200, random_state=seed)


@pytest.mark.property
@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000))
def test_smooth_ece_interval_contains_estimate_when_miscalibrated(seed):
    # For a clearly miscalibrated model the smECE is far from its floor of 0, so
    # the bootstrap distribution straddles the estimate.
    y, p = _binary(3000, seed, squash=0.6)
    res = bootstrap(smooth_ece, y, p, n_resamples=100, random_state=seed)
    assert res.low <= res.estimate <= res.high


def test_bootstrap_of_binned_ece_with_forwarded_binning():
    from calibviz.binning import Uniform
    from calibviz.metrics import ece

    y, p = _binary(2000, seed=9, squash=0.7)
    res = bootstrap(ece, y, p, n_resamples=60, random_state=0, binning=Uniform(10))
    assert res.estimate == ece(y, p, binning=Uniform(10))
    assert res.low <= res.estimate <= res.high
    # fixed-edge bins treat integer weights as repetitions: both resampling modes agree
    res_w = bootstrap(ece, y, p, n_resamples=60, random_state=0, binning=Uniform(10), resample="weights")
    np.testing.assert_allclose(res.distribution, res_w.distribution, rtol=1e-9, atol=1e-12)


def test_row_order_lists_the_same_resamples_in_that_order():
    # same random numbers, same multisets of rows; each resample's rows come in row_order
    rng = np.random.default_rng(4)
    x = rng.random(300)
    y = (rng.random(300) < x).astype(int)
    order = np.argsort(x, kind="stable")
    seen = []

    def record(y, p):
        seen.append((np.sort(p), bool(np.all(np.diff(p) >= 0))))
        return float(np.sum(p * y))

    plain = bootstrap(record, y, x, n_resamples=30, random_state=9)
    unordered = [s for s, _ in seen[1:]]  # seen[0]: the full data
    seen.clear()
    ordered = bootstrap(record, y, x, n_resamples=30, random_state=9, row_order=order)
    assert len(seen) == 31 and all(is_sorted for _, is_sorted in seen[1:])
    assert all(np.array_equal(a, b) for a, (b, _) in zip(unordered, seen[1:]))
    np.testing.assert_allclose(ordered.distribution, plain.distribution, rtol=1e-13)
    assert (ordered.low, ordered.high) == pytest.approx((plain.low, plain.high), rel=1e-13)


def test_row_order_keeps_tce_values_and_pava_bc_bins():
    from calibviz.metrics import tce

    rng = np.random.default_rng(11)
    p = np.round(rng.beta(2, 5, 2_000), 2)  # ties: PAVA-BC groups them in any row order
    y = (rng.random(2_000) < p).astype(int)
    plain = bootstrap(tce, y, p, n_resamples=25, random_state=3)
    ordered = bootstrap(tce, y, p, n_resamples=25, random_state=3, row_order=np.argsort(p, kind="stable"))
    np.testing.assert_array_equal(ordered.distribution, plain.distribution)


@pytest.mark.parametrize("row_order", [[0, 1, 1], [0, 1], [0, 1, 3], [2.0, 1.0, 0.0], [[0, 1, 2]]])
def test_row_order_must_be_a_permutation(row_order):
    with pytest.raises(InputError, match="row_order must be a permutation of the 3 row indices"):
        bootstrap(lambda y, p: 0.0, [0, 1, 0], [0.1, 0.5, 0.9], n_resamples=2, row_order=row_order)
