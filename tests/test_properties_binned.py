import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calibviz import binning as bn
from calibviz import metrics as M

pytestmark = pytest.mark.property


@st.composite
def views(draw, min_size=1, max_size=60):
    n = draw(st.integers(min_size, max_size))
    grid = draw(st.sampled_from([4, 10, 1000]))  # coarse grids give ties
    p = np.array(draw(st.lists(st.integers(0, grid), min_size=n, max_size=n))) / grid
    y = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    return y, p


SCHEMES = [bn.Uniform(5), bn.EqualMass(4), bn.PAVA(), bn.PAVABC(), bn.PAVABC(2, 6), bn.MedianVariance(3)]


@settings(max_examples=60, deadline=None)
@given(views(), st.integers(0, 2**31 - 1))
def test_row_order_invariance(data, seed):
    y, p = data
    perm = np.random.default_rng(seed).permutation(y.size)
    for s in SCHEMES:
        assert M.ece(y, p, binning=s) == pytest.approx(M.ece(y[perm], p[perm], binning=s), abs=1e-12)
        assert M.tce(y, p, binning=s) == pytest.approx(M.tce(y[perm], p[perm], binning=s), abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(views())
def test_bounds_and_mce_ge_ece(data):
    y, p = data
    for s in SCHEMES:
        e = M.ece(y, p, binning=s)
        assert 0 <= e <= 1
        assert M.mce(y, p, binning=s) >= e - 1e-12
        assert 0 <= M.tce(y, p, binning=s) <= 100


@settings(max_examples=40, deadline=None)
@given(views(min_size=2), st.floats(0, 1), st.floats(0, 1))
def test_tce_monotone_in_alpha(data, a1, a2):
    y, p = data
    lo, hi = sorted((a1, a2))
    assert M.tce(y, p, binning=bn.EqualMass(3), alpha=lo) <= M.tce(y, p, binning=bn.EqualMass(3), alpha=hi)


@settings(max_examples=40, deadline=None)
@given(views())
def test_unit_weights_equal_no_weights(data):
    y, p = data
    w = np.ones(y.size)
    for s in SCHEMES:
        assert M.ece(y, p, binning=s, sample_weight=w) == pytest.approx(M.ece(y, p, binning=s), abs=1e-12)
        assert M.tce(y, p, binning=s, sample_weight=w) == pytest.approx(M.tce(y, p, binning=s), abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 8), st.integers(0, 8)), min_size=1, max_size=5))
def test_zero_error_when_bins_exactly_calibrated(groups):
    # each group: n samples predicted k/n with exactly k positives, one Custom bin per distinct score
    p, y = [], []
    for n, k in groups:
        k = min(k, n)
        p += [k / n] * n
        y += [1] * k + [0] * (n - k)
    p, y = np.array(p), np.array(y)
    edges = np.r_[-1e-9, (np.unique(p)[1:] + np.unique(p)[:-1]) / 2, 1 + 1e-9]
    s = bn.Custom(edges)
    assert M.ece(y, p, binning=s) == pytest.approx(0, abs=1e-12)
    assert M.tce(y, p, binning=s) == 0.0


def _within_var(y, sizes):
    out, start = 0.0, 0
    for n in sizes:
        seg = y[start:start + n]
        out += n * seg.var()
        start += n
    return out / y.size


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 1), min_size=1, max_size=11))
def test_pava_minimises_within_bin_variance(labels):
    y = np.array(labels, dtype=float)
    p = np.linspace(0.05, 0.95, y.size)  # distinct scores
    best = _within_var(y, bn.PAVA().fit(p, y).counts)
    n = y.size
    for r in range(n):
        for cuts in itertools.combinations(range(1, n), r):
            bounds = (0,) + cuts + (n,)
            rates = [y[a:b].mean() for a, b in zip(bounds[:-1], bounds[1:])]
            if all(r1 <= r2 for r1, r2 in zip(rates[:-1], rates[1:])):
                assert best <= _within_var(y, np.diff(bounds)) + 1e-12


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 12), min_size=1, max_size=400), st.integers(-1, 13),
       st.sampled_from([0.005, 0.01, 0.025, 0.05, 0.1, 0.2]))
def test_the_calibrated_range_agrees_with_the_verdict(null, observed, alpha):
    """A value lies above the range shown beside a verdict at alpha exactly when its p-value is at most alpha
    (and below it exactly when the lower tail's is), for any null values (ties included) and redraw count, once
    the redraws can reach alpha at all (M.null_summary, M.reference_level)."""
    values = np.array(null, dtype=float) / 4
    statistic = observed / 4
    mean, low, high, p_value = M.null_summary(statistic, values, M.reference_level(alpha))
    b = values.size
    assert low <= high and mean == pytest.approx(values.mean())
    if alpha * (b + 1) >= 1:
        assert (statistic > high) == (p_value <= alpha)
        lower_p = (1 + np.count_nonzero(values <= statistic)) / (1 + b)
        assert (statistic < low) == (lower_p <= alpha)
    else:  # too few redraws for this alpha: no p-value reaches it, the range is the whole null range
        assert p_value > alpha and (low, high) == (values.min(), values.max())



@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 12), min_size=1, max_size=400), st.integers(0, 20), st.integers(0, 12),
       st.sampled_from([0.005, 0.01, 0.025, 0.05, 0.1, 0.2]))
def test_the_two_sided_range_agrees_with_the_verdict(null, observed, centre, alpha):
    """Two-sided (the Brier score, log loss; distance from a fixed centre): a value lies outside the range, on
    either side, exactly when its p-value is at most alpha, for any null values and redraw count (ties with the
    critical distance aside: there the value sits on the range's end); the range does not move with the value
    and its low end is not below 0."""
    values, statistic, centre = np.array(null, dtype=float) / 4, observed / 4, centre / 4
    mean, low, high, p_value = M.null_summary(statistic, values, M.reference_level(alpha), centre=centre)
    b = values.size
    assert mean == pytest.approx(values.mean()) and 0 <= low <= centre <= high
    assert (low, high) == M.null_summary(statistic + 1.75, values, M.reference_level(alpha), centre=centre)[1:3]
    expected_p = (1 + np.count_nonzero(np.abs(values - centre) >= abs(statistic - centre) - 1e-9)) / (1 + b)
    assert p_value == pytest.approx(expected_p)
    if alpha * (b + 1) < 1:  # too few redraws for this alpha: no p-value reaches it, the range spans every value
        assert p_value > alpha and high == pytest.approx(centre + np.abs(values - centre).max())
    elif abs(abs(statistic - centre) - (high - centre)) > 1e-9:
        assert ((statistic < low) or (statistic > high)) == (p_value <= alpha)
