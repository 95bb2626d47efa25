"""VECE and max-VCE (Kelly & Smyth 2023): hand-computed fixtures, a naive loop,
Theorem 3 (ECE == VECE under one-sided miscalibration) and a Theorem-1 case."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from calibviz import InputError
from calibviz.metrics import max_vce, vece, variable_bins
from calibviz.metrics.variable import _sorted_bin_starts

skmisc_loess = pytest.importorskip("skmisc.loess").loess


def test_hand_computed_binary():
    # x sorted, 2 bins of 3 rows. Top label: p > 0.5 -> 1, confidence max(p, 1 - p).
    x = np.array([1, 2, 3, 4, 5, 6])
    p = np.array([0.9, 0.2, 0.6, 0.7, 0.3, 0.8])
    y = np.array([1, 0, 0, 0, 0, 1])
    # bin 1: conf .9 .8 .6 (mean .7667), correct 1 1 0 (acc .6667) -> gap .1
    # bin 2: conf .7 .7 .8 (mean .7333), correct 0 1 1 (acc .6667) -> gap .0667
    expected = 0.5 * (0.9 + 0.8 + 0.6 - 2) / 3 + 0.5 * (0.7 + 0.7 + 0.8 - 2) / 3
    assert vece(x, y, p, n_bins=2) == pytest.approx(expected, abs=1e-12)
    assert vece(x, y, p, n_bins=2) == pytest.approx(0.25 / 3, abs=1e-12)


def test_hand_computed_multiclass_and_two_column_binary_agree():
    x = np.array([0.1, 0.2, 0.3, 0.4])
    P = np.array([[0.7, 0.2, 0.1], [0.1, 0.6, 0.3], [0.5, 0.25, 0.25], [0.2, 0.2, 0.6]])
    y = np.array([0, 2, 0, 2])
    # bins {0.1, 0.2}: conf .7 .6, correct 1 0 -> |.65 - .5| = .15
    # bins {0.3, 0.4}: conf .5 .6, correct 1 1 -> |.55 - 1| = .45
    assert vece(x, y, P, n_bins=2) == pytest.approx(0.5 * 0.15 + 0.5 * 0.45)
    p = np.array([0.8, 0.3, 0.55, 0.1])
    yb = np.array([1, 1, 0, 0])
    assert vece(x, yb, p, n_bins=2) == pytest.approx(vece(x, yb, np.column_stack([1 - p, p]), n_bins=2))


def _naive_vece(x, y, p, n_bins):
    order = np.argsort(x)
    conf = np.maximum(p, 1 - p)[order]
    correct = ((p > 0.5).astype(int) == y)[order]
    n = x.size
    cuts = [(j * n) // n_bins for j in range(n_bins + 1)]
    total = 0.0
    for a, b in zip(cuts[:-1], cuts[1:]):
        if b > a:
            total += (b - a) / n * abs(conf[a:b].mean() - correct[a:b].mean())
    return total


@pytest.mark.property
@settings(max_examples=50, deadline=None)
@given(st.integers(0, 10 ** 6), st.integers(1, 300), st.integers(1, 15))
def test_matches_naive_loop_without_ties(seed, n, n_bins):
    rng = np.random.default_rng(seed)
    x = rng.permutation(n).astype(float)  # distinct values: the tie rule is not involved
    p = rng.uniform(size=n)
    y = rng.integers(0, 2, n)
    assert vece(x, y, p, n_bins=n_bins) == pytest.approx(_naive_vece(x, y, p, n_bins), abs=1e-12)


def test_ties_are_never_split_and_weights_of_one_change_nothing():
    rng = np.random.default_rng(0)
    x = rng.integers(18, 90, 5000).astype(float)
    idx = variable_bins(x, 10)
    for v in np.unique(x):
        assert np.unique(idx[x == v]).size == 1
    assert np.all(np.diff(idx[np.argsort(x, kind="stable")]) >= 0)  # bins follow x
    np.testing.assert_array_equal(idx, variable_bins(x, 10, np.ones(x.size)))
    p = rng.uniform(size=x.size)
    y = rng.integers(0, 2, x.size)
    assert vece(x, y, p) == pytest.approx(vece(x, y, p, sample_weight=np.ones(x.size)), abs=1e-14)
    assert variable_bins(np.r_[np.zeros(30), np.ones(70)], 10).max() == 1  # 0/1 variable: 2 bins


def test_split_moves_can_leave_an_empty_bin_which_is_dropped():
    # Two splits: one inside the run of 1.0 moves to its end (x >= next float
    # up), the next sits at the start of the run of v2 = two floats up; no
    # value lies between them, so the bin [next float up, v2) is empty.
    v2 = np.nextafter(np.nextafter(1.0, 2.0), 2.0)
    x = np.array([1.0, 1.0, v2, v2])
    assert variable_bins(x, 3).tolist() == [0, 0, 1, 1]
    assert variable_bins(x[::-1], 3, np.ones(4)).tolist() == [1, 1, 0, 0]
    np.testing.assert_array_equal(_sorted_bin_starts(x, 3), [0, 2])


@pytest.mark.property
@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10 ** 6), st.integers(2, 400), st.integers(1, 15), st.integers(1, 40),
       st.booleans())
def test_sorted_bin_starts_are_the_variable_bins(seed, n, n_bins, n_values, weighted):
    """The ranking's bins (run starts of the sorted x) equal variable_bins' per-row index."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, n_values, n).astype(float)  # many ties
    w = rng.uniform(0, 3, n) * (rng.uniform(size=n) < 0.8) if weighted else None
    if w is not None and not (w > 0).any():
        w[0] = 1.0
    idx = variable_bins(x, n_bins, w)
    order = np.argsort(x, kind="stable")
    starts = _sorted_bin_starts(x[order], n_bins, None if w is None else w[order])
    expected = np.repeat(np.arange(starts.size), np.diff(np.append(starts, n)))
    np.testing.assert_array_equal(idx[order], expected)


def test_integer_weights_equal_repeated_rows():
    rng = np.random.default_rng(3)
    n = 400
    x = rng.normal(size=n)
    p = rng.uniform(size=n)
    y = rng.integers(0, 2, n)
    k = rng.integers(1, 4, n)
    rep = np.repeat(np.arange(n), k)
    assert vece(x, y, p, sample_weight=k) == pytest.approx(vece(x[rep], y[rep], p[rep]), abs=1e-12)


def _equal_mass_ece(conf, correct, n_bins):
    """Score-based ECE (paper Eq. 3) on equal-mass bins of the confidence, written out."""
    return _naive_from(conf, conf, correct, n_bins)


def _naive_from(key, conf, correct, n_bins):
    order = np.argsort(key, kind="stable")
    n = key.size
    cuts = [(j * n) // n_bins for j in range(n_bins + 1)]
    return sum((b - a) / n * abs(conf[order][a:b].mean() - correct[order][a:b].mean())
               for a, b in zip(cuts[:-1], cuts[1:]) if b > a)


def _one_sided(key, conf, correct, n_bins):
    order = np.argsort(key, kind="stable")
    n = key.size
    cuts = [(j * n) // n_bins for j in range(n_bins + 1)]
    gaps = np.array([conf[order][a:b].mean() - correct[order][a:b].mean()
                     for a, b in zip(cuts[:-1], cuts[1:]) if b > a])
    return bool(np.all(gaps >= 0) or np.all(gaps <= 0))


@pytest.mark.property
@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10 ** 6), st.integers(200, 2000), st.integers(2, 10),
       st.floats(0.05, 0.4), st.booleans())
def test_theorem3_ece_equals_vece_when_one_sided(seed, n, n_bins, shift, over):
    """Kelly & Smyth Theorem 3: consistent over- (or under-) confidence with
    respect to both the score and the variable gives ECE == VECE."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)  # continuous: no ties
    conf = rng.uniform(0.55, 0.95, n) + 1e-9 * np.arange(n)  # distinct confidences
    acc = np.clip(conf - shift if over else conf + shift, 0, 1)
    correct = rng.uniform(size=n) < acc
    assume(_one_sided(conf, conf, correct, n_bins) and _one_sided(x, conf, correct, n_bins))
    label = rng.integers(0, 2, n)
    p = np.where(label == 1, conf, 1 - conf)
    y = np.where(correct, label, 1 - label)
    ece = _equal_mass_ece(conf, correct.astype(float), n_bins)
    assert vece(x, y, p, n_bins=n_bins) == pytest.approx(ece, abs=1e-12)
    assert ece == pytest.approx(abs(conf.mean() - correct.mean()), abs=1e-12)


def theorem1_case(n=20_000, delta=0.2, seed=0):
    """Kelly & Smyth Theorem 1 construction: scores independent of x, accuracy
    conf + delta below the median of x and conf - delta above it."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(20, 80, n)
    conf = rng.uniform(0.6, 0.8, n)
    acc = np.where(x < 50, conf + delta, conf - delta)
    correct = rng.uniform(size=n) < acc
    label = rng.integers(0, 2, n)
    p = np.where(label == 1, conf, 1 - conf)
    y = np.where(correct, label, 1 - label)
    return x, y, p, conf, correct.astype(float)


def test_theorem1_construction_small_ece_large_vece():
    x, y, p, conf, correct = theorem1_case()
    assert _equal_mass_ece(conf, correct, 10) < 0.02
    assert vece(x, y, p) == pytest.approx(0.2, abs=0.02)
    res = max_vce(x, y, p)
    assert res.value == pytest.approx(0.2, abs=0.05)


def test_max_vce_is_the_gap_between_two_skmisc_loess_curves():
    rng = np.random.default_rng(4)
    n = 800
    x = rng.uniform(0, 10, n)
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < np.clip(p + 0.2 * np.sin(x), 0, 1)).astype(int)
    conf = np.maximum(p, 1 - p)
    err = ((p > 0.5).astype(int) != y).astype(float)
    grid = np.linspace(np.quantile(x, 0.05), np.quantile(x, 0.95), 200)
    curves = []
    for resp in (err, 1 - conf):
        m = skmisc_loess(x, resp, span=0.75, degree=2, surface="direct")
        m.fit()
        curves.append(m.predict(grid).values)
    gap = np.abs(curves[0] - curves[1])
    res = max_vce(x, y, p)
    assert res.value == pytest.approx(gap.max(), rel=1e-9)
    assert res.x == pytest.approx(grid[np.argmax(gap)])


@pytest.mark.parametrize("kwargs,match", [
    (dict(x=[1, 2], y_true=[0, 1, 1], y_prob=[0.1, 0.2, 0.3]), "shape"),
    (dict(x=[1, np.nan, 3], y_true=[0, 1, 1], y_prob=[0.1, 0.2, 0.3]), "NaN"),
    (dict(x=["a", "b", "c"], y_true=[0, 1, 1], y_prob=[0.1, 0.2, 0.3]), "numeric"),
    (dict(x=[1, 2, 3], y_true=[0, 1, 1], y_prob=[0.1, 0.2, 0.3], n_bins=0), "n_bins"),
    (dict(x=[1, 2, 3], y_true=[0, 1, 2], y_prob=[0.1, 0.2, 0.3]), "0 and 1"),
])
def test_bad_input(kwargs, match):
    with pytest.raises(InputError, match=match):
        vece(**kwargs)
