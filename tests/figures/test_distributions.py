"""calibviz.distributions against scipy/numpy computed independently (and properties)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from scipy.stats import gaussian_kde

from calibviz.distributions import bin_distributions, histogram
from calibviz.errors import InputError


def test_density_equals_scipy_kde_on_the_whole_bin():
    rng = np.random.default_rng(0)
    p = rng.uniform(size=600)
    idx = (p * 3).astype(np.int64)
    d = bin_distributions(p, idx, grid_size=20, max_points=10_000)
    for b in range(3):
        pts = p[idx == b]
        kde = gaussian_kde(pts, bw_method=pts.size ** (-0.2))
        grid = np.linspace(pts.min(), pts.max(), 20)
        got = d.densities[d.densities["bin"] == b]
        np.testing.assert_allclose(got["value"], grid, rtol=0, atol=1e-15)
        np.testing.assert_allclose(got["density"], kde(grid), rtol=1e-12)


def test_subsample_is_the_inverted_cdf_quantiles():
    rng = np.random.default_rng(1)
    p = rng.beta(2, 5, 5000)
    idx = np.zeros(5000, np.int64)
    d = bin_distributions(p, idx, grid_size=30, max_points=100)
    levels = (np.arange(100) + 0.5) / 100
    sub = np.quantile(p, levels, method="inverted_cdf")
    kde = gaussian_kde(sub, bw_method=5000 ** (-0.2))
    grid = np.linspace(p.min(), p.max(), 30)
    np.testing.assert_allclose(d.densities["density"], kde(grid), rtol=1e-12)
    s = d.summary.iloc[0]
    assert s["n_points"] == 100
    np.testing.assert_allclose([s["q25"], s["median"], s["q75"]],
                               np.quantile(p, [0.25, 0.5, 0.75], method="inverted_cdf"))


def test_summary_matches_pandas_groupby():
    rng = np.random.default_rng(2)
    p = rng.uniform(size=2000)
    idx = rng.integers(0, 7, 2000) * 2   # ids with gaps (empty bins)
    s = bin_distributions(p, idx).summary
    g = pd.DataFrame({"b": idx, "p": p}).groupby("b")["p"]
    assert s["bin"].tolist() == sorted(set(idx.tolist()))
    np.testing.assert_allclose(s["min"], g.min().to_numpy())
    np.testing.assert_allclose(s["max"], g.max().to_numpy())
    np.testing.assert_allclose(s["mean"], g.mean().to_numpy())
    assert s["n"].tolist() == g.size().tolist()


def test_point_mass_bin_is_one_row_with_nan_density():
    d = bin_distributions([0.3, 0.3, 0.3, 0.6, 0.7], [0, 0, 0, 1, 1], grid_size=8)
    first = d.densities[d.densities["bin"] == 0]
    assert len(first) == 1 and np.isnan(first["density"].iloc[0]) and first["value"].iloc[0] == 0.3
    assert d.summary["bandwidth"].iloc[0] == 0


def test_integer_weights_equal_repeated_rows():
    rng = np.random.default_rng(4)
    p = rng.uniform(size=300)
    idx = (p * 2).astype(np.int64)
    w = rng.integers(1, 4, 300)
    a = bin_distributions(p, idx, sample_weight=w.astype(float), max_points=50)
    b = bin_distributions(np.repeat(p, w), np.repeat(idx, w), max_points=50)
    for col in ("min", "q25", "median", "q75", "max", "mean", "weight"):
        np.testing.assert_allclose(a.summary[col], b.summary[col], err_msg=col)
    np.testing.assert_allclose(a.densities["value"], b.densities["value"])


@pytest.mark.property
@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=2, max_size=80), st.randoms(use_true_random=False))
def test_row_order_does_not_matter(values, rnd):
    p = np.asarray(values)
    idx = (p * 3).astype(np.int64).clip(0, 2)
    perm = np.arange(p.size); rnd.shuffle(perm)
    a = bin_distributions(p, idx, grid_size=5, max_points=10)
    b = bin_distributions(p[perm], idx[perm], grid_size=5, max_points=10)
    pd.testing.assert_frame_equal(a.summary, b.summary)
    pd.testing.assert_frame_equal(a.densities, b.densities)


def test_histogram_matches_numpy_and_splits_by_outcome():
    rng = np.random.default_rng(5)
    p = rng.uniform(size=1000); y = (rng.uniform(size=1000) < p).astype(int)
    h = histogram(p, bins=12, range=(0, 1), y_true=y)
    ref, edges = np.histogram(p, bins=12, range=(0, 1))
    np.testing.assert_array_equal(h["count"], ref)
    np.testing.assert_array_equal(h["lower"], edges[:-1])
    np.testing.assert_array_equal(h["count_pos"], np.histogram(p[y == 1], bins=edges)[0])
    np.testing.assert_array_equal(h["count_pos"] + h["count_neg"], h["count"])


@pytest.mark.parametrize("call, fragment", [
    (lambda: bin_distributions([0.1, 0.2], [0]), "one bin id per prediction"),
    (lambda: bin_distributions([0.1, 0.2], [0.5, 1.0]), "integer bin ids"),
    (lambda: bin_distributions([0.1, 1.2], [0, 0]), "y_prob"),
    (lambda: histogram([0.1, np.nan]), "NaN"),
    (lambda: histogram([0.1, 0.2], bins=-1), "bins"),
])
def test_bad_input_raises_input_error(call, fragment):
    with pytest.raises(InputError, match=fragment):
        call()


def test_round_off_spread_is_a_point_mass():
    # found by hypothesis: gaussian_kde's covariance underflows for a denormal spread
    d = bin_distributions([0.0, 1.3e-270], [0, 0])
    assert len(d.densities) == 1 and np.isnan(d.densities["density"].iloc[0])
