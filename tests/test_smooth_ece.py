"""calibviz.metrics.smooth: smECE against relplot and a direct evaluation of the definition."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calibviz import InputError
from calibviz.metrics import smooth_ece, smooth_reliability_curve

relplot = pytest.importorskip("relplot")


def _dataset(kind: str, n: int, seed: int):
    rng = np.random.default_rng(seed)
    p = rng.random(n)
    if kind == "calibrated":
        q = p
    elif kind == "overconfident":  # true rates less extreme than the predictions
        q = 0.5 + 0.5 * (p - 0.5)
    elif kind == "underconfident":  # true rates more extreme than the predictions
        q = p**3 / (p**3 + (1 - p) ** 3)
    elif kind == "skewed":  # most predictions near 0, under-predicting
        p = rng.beta(0.5, 3, n)
        q = np.clip(1.2 * p, 0, 1)
    elif kind == "wiggle":
        q = np.clip(p + 0.2 * np.sin(2 * np.pi * p), 0, 1)
    else:
        raise ValueError(kind)
    return (rng.random(n) < q).astype(float), p


KINDS = ["calibrated", "overconfident", "underconfident", "skewed", "wiggle"]


def _direct_smece(y, p, sigma, w=None, n_t=8001):
    """The paper's definition evaluated densely: reflected Gaussian summed over images, trapezoid in t."""
    w = np.ones_like(p) if w is None else w
    t = np.linspace(0, 1, n_t)
    phi = lambda d: np.exp(-0.5 * (d / sigma) ** 2) / (sigma * np.sqrt(2 * np.pi))  # noqa: E731
    # images of p under the folding map: +-p + 2m
    reach = int(np.ceil(3 * sigma)) + 2
    K = sum(phi(t[:, None] - p - 2 * m) + phi(t[:, None] + p - 2 * m) for m in range(-reach, reach + 1))
    return np.trapezoid(np.abs(K @ (w * (y - p)) / w.sum()), t)


@pytest.mark.golden
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", [100, 300, 2000, 100_000])
def test_agrees_with_relplot(kind, n):
    y, p = _dataset(kind, n, seed=n)
    ours = smooth_ece(y, p)
    theirs = relplot.smECE(p, y)
    # relplot bisects the bandwidth to 1e-3 and discretises its kernel; the
    # observed differences are <= 7e-4 for n >= 100.
    assert ours == pytest.approx(theirs, abs=1e-3)


@pytest.mark.golden
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", [20, 50])
def test_tiny_samples_match_definition_and_roughly_relplot(kind, n):
    # For n <= 50 relplot's discretised kernel drifts from the definition by up
    # to ~1e-2 (measured with relplot 1.0.3); the dense evaluation of the
    # definition is the reference here.
    y, p = _dataset(kind, n, seed=n + 1)
    value, sigma = smooth_ece(y, p, return_bandwidth=True)
    assert value == pytest.approx(_direct_smece(y, p, sigma), abs=1e-6)
    assert value == pytest.approx(relplot.smECE(p, y), abs=1.5e-2)


@pytest.mark.parametrize("sigma", [0.01, 0.05, 0.2, 0.5, 1.0, 3.0])
def test_fixed_bandwidth_matches_direct_definition(sigma):
    y, p = _dataset("wiggle", 250, seed=3)
    w = np.random.default_rng(0).uniform(0, 2, 250)
    assert smooth_ece(y, p, bandwidth=sigma) == pytest.approx(_direct_smece(y, p, sigma), abs=2e-6)
    assert smooth_ece(y, p, bandwidth=sigma, sample_weight=w) == pytest.approx(
        _direct_smece(y, p, sigma, w), abs=2e-6
    )


def test_predictions_exactly_at_zero_and_one_count_fully():
    # At the end points both images of the reflection coincide (kernel doubles there).
    y, p = _dataset("overconfident", 200, seed=4)
    p[:30], p[30:60] = 0.0, 1.0
    for sigma in (0.02, 0.1, 0.4):
        assert smooth_ece(y, p, bandwidth=sigma) == pytest.approx(_direct_smece(y, p, sigma), abs=2e-6)
    value, sigma = smooth_ece(y, p, return_bandwidth=True)
    assert value == pytest.approx(_direct_smece(y, p, sigma), abs=2e-6)
    # relplot 1.0.3 differs here (0.181 vs 0.201): its reflected kernel for a
    # prediction of exactly 0 or 1 keeps only half of the Gaussian's mass.
    t = np.linspace(0, 1, 10001)
    half = np.trapezoid(relplot.kernels.ReflectedGaussianKernel(0.1).kde(np.array([0.0]), t), t)
    assert half == pytest.approx(0.5, abs=1e-3)


@pytest.mark.parametrize("kind", KINDS)
def test_bandwidth_is_the_fixed_point(kind):
    y, p = _dataset(kind, 5000, seed=1)
    value, sigma = smooth_ece(y, p, return_bandwidth=True)
    assert value == pytest.approx(sigma, abs=1e-6)
    assert smooth_ece(y, p, bandwidth=sigma) == pytest.approx(value, abs=1e-9)
    # smECE_sigma is non-increasing, so the fixed point is unique
    assert smooth_ece(y, p, bandwidth=sigma * 0.8) > sigma * 0.8
    assert smooth_ece(y, p, bandwidth=sigma * 1.2) < sigma * 1.2


def test_large_calibrated_sample_uses_small_bandwidth():
    y, p = _dataset("calibrated", 1_000_000, seed=0)
    value, sigma = smooth_ece(y, p, return_bandwidth=True)
    assert 1e-3 < sigma < 1e-2
    assert value == pytest.approx(relplot.smECE(p, y), abs=1e-3)


def test_curve_encodes_the_metric():
    y, p = _dataset("overconfident", 20000, seed=2)
    curve = smooth_reliability_curve(y, p, n_points=2001)
    assert list(curve.columns) == ["x", "obs_rate", "mean_pred", "gap", "density"]
    x = curve["x"].to_numpy()
    # smECE = integral of |gap| * density; the density integrates to 1
    assert np.trapezoid(np.abs(curve["gap"]) * curve["density"], x) == pytest.approx(
        curve.attrs["smooth_ece"], rel=1e-3
    )
    assert np.trapezoid(curve["density"], x) == pytest.approx(1.0, abs=1e-6)
    assert curve.attrs["smooth_ece"] == pytest.approx(smooth_ece(y, p), abs=1e-9)
    obs = curve["obs_rate"].to_numpy()
    assert ((obs >= -1e-9) & (obs <= 1 + 1e-9)).all()
    # over-confident: observed rate is flatter than the diagonal
    mid = (x > 0.1) & (x < 0.4)
    assert (curve["gap"][mid] > 0).all()
    # mean_pred follows x in the interior and is pulled inwards at the edges
    inner = (x > 0.3) & (x < 0.7)
    assert np.abs(curve["mean_pred"][inner] - x[inner]).max() < 1e-3
    assert curve["mean_pred"].iloc[0] > 0


def test_curve_nadaraya_watson_by_hand():
    y, p = _dataset("wiggle", 300, seed=9)
    sigma = 0.08
    curve = smooth_reliability_curve(y, p, bandwidth=sigma, n_points=11)
    t = curve["x"].to_numpy()
    phi = lambda d: np.exp(-0.5 * (d / sigma) ** 2)  # noqa: E731
    K = sum(phi(t[:, None] - p - 2 * m) + phi(t[:, None] + p - 2 * m) for m in range(-3, 4))
    np.testing.assert_allclose(curve["obs_rate"], K @ y / K.sum(1), atol=2e-4)
    np.testing.assert_allclose(curve["mean_pred"], K @ p / K.sum(1), atol=2e-4)


def test_edges_and_degenerate_inputs():
    assert smooth_ece([1], [1.0]) == 0.0
    assert smooth_ece([0, 1], [0.0, 1.0]) == pytest.approx(0.0, abs=1e-12)
    v = smooth_ece([1, 1, 1, 1], [0.0, 0.0, 0.0, 0.0])  # maximally wrong
    assert 0.5 < v <= 1.0
    y = np.array([0, 1] * 500, dtype=float)
    assert smooth_ece(y, np.full(1000, 0.5)) == pytest.approx(0.0, abs=1e-12)  # constant and calibrated
    # constant prediction 0.8, observed rate 0.5: smECE_sigma = 0.3 for every sigma
    value, sigma = smooth_ece(y, np.full(1000, 0.8), return_bandwidth=True)
    assert value == pytest.approx(0.3, abs=1e-6) and sigma == pytest.approx(0.3, abs=1e-6)


def test_bad_inputs():
    with pytest.raises(InputError, match="bandwidth"):
        smooth_ece([0, 1], [0.2, 0.8], bandwidth=0.0)
    with pytest.raises(InputError, match="bandwidth"):
        smooth_ece([0, 1], [0.2, 0.8], bandwidth=1e-7)
    with pytest.raises(InputError, match="only 0 and 1"):
        smooth_ece([0, 3], [0.2, 0.8])
    with pytest.raises(InputError, match=r"\[0, 1\]"):
        smooth_reliability_curve([0, 1], [0.2, 1.8])
    with pytest.raises(InputError, match="n_points"):
        smooth_reliability_curve([0, 1], [0.2, 0.8], n_points=1)


@pytest.mark.property
@settings(max_examples=50, deadline=None)
@given(
    st.integers(2, 80).flatmap(
        lambda n: st.tuples(
            st.lists(st.integers(0, 1), min_size=n, max_size=n),
            st.lists(st.floats(0, 1), min_size=n, max_size=n),
            st.lists(st.integers(1, 3), min_size=n, max_size=n),
            st.randoms(use_true_random=False),
        )
    )
)
def test_properties(data):
    y, p, counts, rnd = data
    y, p, counts = np.array(y, float), np.array(p), np.array(counts)
    v = smooth_ece(y, p)
    assert 0 <= v <= 1
    assert v <= np.mean(np.abs(y - p)) + 1e-9  # smoothing cannot increase the mean |residual|
    perm = np.array(rnd.sample(range(y.size), y.size))
    assert smooth_ece(y[perm], p[perm]) == pytest.approx(v, abs=1e-9)
    assert smooth_ece(y, p, sample_weight=np.ones(y.size)) == pytest.approx(v, abs=1e-12)
    rep = np.repeat(np.arange(y.size), counts)
    assert smooth_ece(y, p, sample_weight=counts) == pytest.approx(smooth_ece(y[rep], p[rep]), abs=1e-9)


# --- Austin & Steyerberg's ICI / E50 / E90 / Emax ---------------------------


def _skmisc_indices(y, p, span=0.75, degree=2, w=None):
    """Independent reference: R's loess (via skmisc) evaluated at every observation."""
    skl = pytest.importorskip("skmisc.loess")
    model = skl.loess(p, y, weights=w, span=span, degree=degree, surface="direct")
    model.fit()
    diff = np.abs(p - model.predict(p).values)
    return diff.mean(), np.quantile(diff, 0.5), np.quantile(diff, 0.9), diff.max()


@pytest.mark.golden
@pytest.mark.parametrize("kind", ["calibrated", "overconfident", "underconfident", "skewed"])
@pytest.mark.parametrize("span, degree", [(0.75, 2), (0.5, 1)])
def test_calibration_index_matches_r_loess(kind, span, degree):
    from calibviz.metrics import calibration_index

    y, p = _dataset(kind, 800, seed=12)
    res = calibration_index(y, p, span=span, degree=degree, n_grid=5000)  # exact: every distinct p
    ref = _skmisc_indices(y, p, span, degree)
    assert tuple(res) == pytest.approx(ref, abs=1e-7)


@pytest.mark.slow
def test_calibration_index_grid_interpolation_tolerance():
    from calibviz.metrics import calibration_index

    y, p = _dataset("underconfident", 6000, seed=13)
    exact = calibration_index(y, p, n_grid=10_000)
    approx = calibration_index(y, p)  # 1000-point grid, interpolated
    ref = _skmisc_indices(y, p)
    assert tuple(exact) == pytest.approx(ref, abs=1e-7)
    assert tuple(approx) == pytest.approx(ref, abs=1e-5)


def test_calibration_index_weights_and_validation():
    from calibviz.metrics import calibration_index

    y, p = _dataset("overconfident", 500, seed=14)
    a = calibration_index(y, p)
    assert tuple(calibration_index(y, p, sample_weight=np.ones(500))) == pytest.approx(tuple(a), abs=1e-12)
    w = np.random.default_rng(0).uniform(0.5, 2, 500)
    b = calibration_index(y, p, sample_weight=w, n_grid=5000)

    def naive_fit(x0):
        # weighted local quadratic with tricube weights on the q = floor(0.75 n) nearest
        # (skmisc's `weights` disagrees with this textbook fit, so it is not used here)
        d = np.abs(p - x0)
        h = np.sort(d)[int(np.floor(0.75 * p.size)) - 1]
        k = (1 - np.clip(d / h, 0, 1) ** 3) ** 3 * w
        X = np.column_stack([np.ones_like(p), p - x0, (p - x0) ** 2]) * np.sqrt(k)[:, None]
        return np.linalg.lstsq(X, y * np.sqrt(k), rcond=None)[0][0]

    diff = np.abs(p - np.array([naive_fit(v) for v in p]))
    assert b.ici == pytest.approx(np.dot(diff, w) / w.sum(), abs=1e-7)
    assert b.emax == pytest.approx(diff.max(), abs=1e-7)
    order = np.argsort(diff)
    cum = np.cumsum(w[order])
    assert b.e90 == pytest.approx(diff[order][np.argmax(cum >= 0.9 * cum[-1])], abs=1e-7)
    assert a.e50 <= a.e90 <= a.emax
    with pytest.raises(InputError, match="n_grid"):
        calibration_index(y, p, n_grid=1)
    with pytest.raises(InputError, match="only 0 and 1"):
        calibration_index([0, 2, 1], [0.1, 0.2, 0.3])


def test_calibration_index_on_too_few_distinct_scores_says_why():
    from calibviz.metrics import calibration_index

    y = np.r_[np.zeros(40), np.ones(60)]
    p = np.r_[np.full(60, 0.2), np.full(40, 0.7)]
    with pytest.raises(InputError, match=r"needs at least 3 distinct predictions; these take 2 values \(0.2, 0.7\)"):
        calibration_index(y, p)
    # a score carried only by zero-weight rows does not count; degree 1 needs two
    w = np.r_[np.ones(99), 0.0]
    p3 = np.r_[p[:99], 0.5]
    with pytest.raises(InputError, match="take 2 values"):
        calibration_index(y, p3, sample_weight=w)
    assert np.isfinite(calibration_index(y, p, degree=1).ici)


def test_no_residual_mass_stops_at_the_coarsest_grid():
    """Predictions of exactly 0 and 1 that are all right: smECE is 0 at every bandwidth. The fixed-point search
    used to refine to the 2^20 grid (0.15 s a call; a panel of 200 such rows took 51 s); it stops at the first
    grid with the value and bandwidth the finest grid gives."""
    from calibviz.metrics import smooth as S

    y = np.tile([0, 1, 1, 0, 1], 40)
    grids = []

    def masses_for(k):
        grids.append(k)
        return S._grid_masses(y, y.astype(float), None, k)

    assert S._solve_fixed_point(masses_for)[:2] == (S._STEPS_PER_SIGMA / S._GRID_SIZES[-1], 0.0)
    assert grids == [S._GRID_SIZES[0]]
    assert smooth_ece(y, y.astype(float), return_bandwidth=True) == (0.0, S._STEPS_PER_SIGMA / S._GRID_SIZES[-1])
    # one wrong row: the search runs as before
    p = y.astype(float)
    p[0] = 1.0
    grids.clear()
    S._solve_fixed_point(lambda k: grids.append(k) or S._grid_masses(y, p, None, k))
    assert smooth_ece(y, p) > 0
