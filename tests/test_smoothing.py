"""calibviz.smoothing.loess against skmisc.loess (R/netlib loess) and a naive loop.

Tolerances (measured, then stated here):
- no pre-aggregation (at most ``max_support`` distinct x): fitted values,
  standard errors, tr L, delta1, delta2 and the residual scale agree with
  skmisc to 1e-9 relative (observed ~1e-13); band limits to 1e-6 relative
  (observed <= 3e-7: netlib's own t quantile is accurate to ~1e-7 only, we use
  scipy's).
- fine-bin pre-aggregation of the statistics (more distinct x than
  ``max_support``; here forced with max_support=1000 on 5000 distinct x):
  residual scale and trace within 1e-3 relative, fit exact (the curve still
  uses the distinct values), band limits within 1e-2 standard errors.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

from calibviz import InputError
from calibviz.smoothing import _sorted_quantiles, loess, loess_curve, loess_fit

skmisc_loess = pytest.importorskip("skmisc.loess").loess


def _dataset(name: str, n: int = 400, seed: int = 1):
    rng = np.random.default_rng(seed)
    if name == "sine":
        x = rng.uniform(0, 10, n)
        return x, np.sin(x) + rng.normal(0, 0.3, n), None
    if name == "skewed":
        x = rng.gamma(2.0, 10.0, n)
        return x, np.sin(x / 8) + rng.normal(0, 0.5, n), None
    if name == "ties_binary":  # an age-like variable with a 0/1 response
        x = np.round(rng.normal(50, 10, n))
        p = 1 / (1 + np.exp(-(x - 50) / 8))
        return x, (rng.uniform(size=n) < p).astype(float), None
    if name == "weighted":
        x = rng.uniform(-3, 3, n)
        return x, x ** 3 - x + rng.normal(0, 1, n), rng.uniform(0.2, 2.0, n)
    raise KeyError(name)


def _skmisc(x, y, w, span, degree, statistics, grid, alpha=0.05):
    model = skmisc_loess(x, y, weights=w, span=span, degree=degree, surface="direct",
                         statistics=statistics)
    model.fit()
    pred = model.predict(grid, stderror=True)
    ci = pred.confidence(alpha)
    return model.outputs, pred, ci


def _assert_close(ours, ref, rtol):
    ref = np.asarray(ref)
    # relative, with an absolute floor at rtol * the curve's scale for values near 0
    np.testing.assert_allclose(ours, ref, rtol=rtol, atol=rtol * np.max(np.abs(ref)))


@pytest.mark.golden
@pytest.mark.parametrize("name", ["sine", "skewed", "ties_binary", "weighted"])
@pytest.mark.parametrize("span", [0.3, 0.5, 0.75, 1.0])
@pytest.mark.parametrize("degree", [1, 2])
def test_matches_skmisc_direct_approximate(name, span, degree):
    x, y, w = _dataset(name)
    grid = np.linspace(np.quantile(x, 0.05), np.quantile(x, 0.95), 40)
    out, pred, ci = _skmisc(x, y, w, span, degree, "approximate", grid)
    fit = loess_fit(x, y, span=span, degree=degree, sample_weight=w)
    assert fit.exact and fit.exact_curve
    curve = fit.table(grid)
    _assert_close(curve["fit"], pred.values, 1e-9)
    _assert_close(curve["se"], pred.stderr, 1e-9)
    _assert_close(curve["lower"], ci.lower, 1e-6)
    _assert_close(curve["upper"], ci.upper, 1e-6)
    _assert_close(fit.fitted, out.fitted_values, 1e-9)
    for ours, ref in [(fit.trace_hat, out.trace_hat), (fit.one_delta, out.one_delta),
                      (fit.two_delta, out.two_delta), (fit.residual_scale, out.residual_scale)]:
        assert ours == pytest.approx(ref, rel=1e-9)
    assert fit.df == pytest.approx(pred.df, rel=1e-9)


@pytest.mark.golden
@pytest.mark.parametrize("name,span,degree", [("sine", 0.5, 2), ("skewed", 0.3, 1),
                                              ("ties_binary", 0.75, 2), ("weighted", 0.4, 2)])
def test_matches_skmisc_direct_exact_statistics(name, span, degree):
    x, y, w = _dataset(name, n=300, seed=7)
    grid = np.linspace(np.quantile(x, 0.05), np.quantile(x, 0.95), 25)
    out, pred, ci = _skmisc(x, y, w, span, degree, "exact", grid)
    fit = loess_fit(x, y, span=span, degree=degree, sample_weight=w, statistics="exact")
    assert fit.one_delta == pytest.approx(out.one_delta, rel=1e-9)
    assert fit.two_delta == pytest.approx(out.two_delta, rel=1e-9)
    assert fit.residual_scale == pytest.approx(out.residual_scale, rel=1e-9)
    curve = fit.table(grid)
    _assert_close(curve["lower"], ci.lower, 1e-6)
    _assert_close(curve["upper"], ci.upper, 1e-6)


@pytest.mark.golden
@pytest.mark.parametrize("span", [0.3, 0.75])
def test_pre_aggregation_tolerance_vs_skmisc(span):
    x, y, _ = _dataset("skewed", n=5000, seed=3)
    grid = np.linspace(np.quantile(x, 0.05), np.quantile(x, 0.95), 30)
    out, pred, ci = _skmisc(x, y, None, span, 2, "approximate", grid)
    fit = loess_fit(x, y, span=span, max_support=1000)
    assert not fit.exact and fit.exact_curve
    assert fit.residual_scale == pytest.approx(out.residual_scale, rel=1e-3)
    assert fit.trace_hat == pytest.approx(out.trace_hat, rel=1e-3)
    curve = fit.table(grid)
    _assert_close(curve["fit"], pred.values, 1e-9)
    assert np.max(np.abs(curve["lower"] - ci.lower) / pred.stderr) < 1e-2
    # defaults on the same data: everything from distinct values but the statistics
    default = loess(x, y, span=span, grid=grid)
    assert np.max(np.abs(default["upper"] - ci.upper) / pred.stderr) < 1e-4


def _naive(x, y, x0, span, degree, w=None):
    """Independent loop: R's rules written out point by point (O(n) per x0)."""
    n = x.size
    w = np.ones(n) if w is None else w
    q = min(n, int(np.floor(n * span + 1e-5)))
    fits, norms = [], []
    for v in x0:
        d = np.abs(x - v)
        h = np.sort(d)[q - 1] * np.sqrt(max(1.0, span))
        k = np.where(d < h, (1 - (d / h) ** 3) ** 3, 0.0) * w
        X = np.vander(x - v, degree + 1, increasing=True)
        beta_map = np.linalg.solve(X.T @ (k[:, None] * X), (k[:, None] * X).T)  # (p, n)
        fits.append(beta_map[0] @ y)
        norms.append(np.sqrt(np.sum((beta_map[0] / w) ** 2)))
    return np.array(fits), np.array(norms)


@pytest.mark.parametrize("span", [0.2, 0.6, 1.0, 1.5, 3.0])
@pytest.mark.parametrize("degree", [1, 2])
def test_matches_naive_loop_including_span_above_one(span, degree):
    x, y, w = _dataset("weighted", n=150, seed=11)
    x0 = np.array([-2.5, -1.0, 0.0, 0.7, 2.9])
    ref_fit, ref_norm = _naive(x, y, x0, span, degree, w)
    fit = loess_fit(x, y, span=span, degree=degree, sample_weight=w)
    got, se = fit.predict(x0, se=True)
    np.testing.assert_allclose(got, ref_fit, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(se, fit.residual_scale * ref_norm, rtol=1e-9)


def test_grid_int_spans_5_to_95_percent_quantiles_and_band_is_t_interval():
    x, y, _ = _dataset("sine")
    curve = loess(x, y, grid=11, alpha=0.1)
    assert len(curve) == 11
    assert curve["x"].iloc[0] == pytest.approx(np.quantile(x, 0.05))
    assert curve["x"].iloc[-1] == pytest.approx(np.quantile(x, 0.95))
    tq = stats.t.ppf(0.95, curve.attrs["df"])
    np.testing.assert_allclose(curve["upper"] - curve["fit"], tq * curve["se"], rtol=1e-12)
    assert curve.attrs["span"] == 0.75 and curve.attrs["degree"] == 2


@pytest.mark.parametrize("n", [1, 2, 3, 20, 21, 1001, 10 ** 5 + 7])
def test_sorted_quantiles_are_numpy_quantiles_bit_for_bit(n):
    rng = np.random.default_rng(n)
    qs = [0.0, 0.05, 0.3333, 0.5, 0.95, 1.0]
    for x in (rng.normal(0, 1e3, n), np.round(rng.normal(50, 10, n))):
        xs = np.sort(x)
        np.testing.assert_array_equal(_sorted_quantiles(xs, qs), np.quantile(x, qs))


def test_row_order_and_unit_weights_do_not_matter():
    x, y, _ = _dataset("ties_binary")
    perm = np.random.default_rng(0).permutation(x.size)
    a = loess(x, y, grid=20)
    b = loess(x[perm], y[perm], grid=20, sample_weight=np.ones(x.size))
    pd.testing.assert_frame_equal(a, b, check_exact=False, rtol=1e-12)


@pytest.mark.property
@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([1, 2]), st.floats(0.3, 1.0))
def test_polynomials_of_the_local_degree_are_reproduced(seed, degree, span):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-5, 5, 60)
    coef = rng.normal(size=degree + 1)
    y = np.polyval(coef, x)
    grid = np.linspace(-4, 4, 9)
    got = loess_fit(x, y, span=span, degree=degree).predict(grid)
    np.testing.assert_allclose(got, np.polyval(coef, grid), rtol=1e-7, atol=1e-7 * np.abs(y).max())


def test_large_input_is_pre_aggregated_and_close_to_exact():
    rng = np.random.default_rng(5)
    n = 60_000
    x = rng.normal(0, 1, n)
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-x))).astype(float)
    grid = np.linspace(-1.5, 1.5, 15)
    approx = loess_fit(x, y, max_grid_support=20_000).table(grid)
    exact_curve = loess_fit(x, y, max_grid_support=10 ** 6).table(grid)
    assert approx.attrs["exact"] is False and approx.attrs["exact_curve"] is False
    assert np.max(np.abs(approx["fit"] - exact_curve["fit"]) / exact_curve["se"]) < 1e-2


def test_curve_equals_fit_predict_with_fine_bins_and_weights():
    rng = np.random.default_rng(8)
    n = 30_000
    x = rng.gamma(2.0, 10.0, n)
    y = np.sin(x / 8) + rng.normal(0, 0.5, n)
    w = rng.uniform(0.2, 2.0, n)
    grid = np.linspace(5, 40, 25)
    perm = rng.permutation(n)
    gx, fx = loess_curve(x[perm], y[perm], sample_weight=w[perm], grid=grid, max_grid_support=4000)
    ref = loess_fit(x, y, sample_weight=w, max_grid_support=4000)
    assert not ref.exact_curve
    np.testing.assert_array_equal(gx, grid)
    np.testing.assert_allclose(fx, ref.predict(grid), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kwargs,match", [
    (dict(x=[1, 2, 3], y=[1, 2]), "same length"),
    (dict(x=[1, np.nan, 3, 4], y=[1, 2, 3, 4]), "NaN"),
    (dict(x=np.arange(10.0), y=np.arange(10.0), degree=3), "degree"),
    (dict(x=np.arange(10.0), y=np.arange(10.0), span=0.1), "span"),
    (dict(x=np.ones(10), y=np.arange(10.0)), "distinct"),
    (dict(x=np.arange(10.0), y=np.arange(10.0), grid=0), "grid"),
    (dict(x=np.arange(10.0), y=np.arange(10.0), alpha=1.5), "alpha"),
    (dict(x=np.arange(10.0), y=np.arange(10.0), sample_weight=-np.ones(10)), "negative"),
])
def test_bad_input_raises_input_error(kwargs, match):
    with pytest.raises(InputError, match=match):
        loess(**kwargs)
