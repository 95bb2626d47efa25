"""Multiclass metrics: paper fixtures, naive loops, canonical ECE by hand, properties."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calibviz import InputError
from calibviz.binning import PAVABC, EqualMass, MedianVariance, PAVA, Uniform
from calibviz.metrics import (
    canonical_ece,
    classwise_ece,
    classwise_ece_per_class,
    classwise_tce,
    confidence_ece,
    ece,
    tce,
    top_label_ece,
    top_label_ece_per_class,
    top_label_mce,
)

# ----------------------------------------------------------------------------
# Example 1 of Gupta & Ramdas (digest §7): conf-calibrated, top-label miscalibrated

P_EX1 = np.array([[0.6, 0.2, 0.2]] * 5 + [[0.2, 0.6, 0.2]] * 5)
Y_EX1 = np.array([0, 2, 2, 2, 2, 1, 1, 1, 1, 1])


@pytest.mark.golden
@pytest.mark.parametrize("B", [10, 15])
def test_example_1(B):
    assert confidence_ece(Y_EX1, P_EX1, binning=Uniform(B)) == pytest.approx(0.0, abs=1e-15)
    assert top_label_ece(Y_EX1, P_EX1, binning=Uniform(B)) == pytest.approx(0.4, abs=1e-15)
    assert top_label_mce(Y_EX1, P_EX1, binning=Uniform(B), reduce="bin") == pytest.approx(0.4, abs=1e-15)
    assert top_label_mce(Y_EX1, P_EX1, binning=Uniform(B), reduce="cell") == pytest.approx(0.4, abs=1e-15)
    assert classwise_ece(Y_EX1, P_EX1, binning=Uniform(B)) == pytest.approx(0.266667, abs=5e-7)
    np.testing.assert_allclose(classwise_ece_per_class(Y_EX1, P_EX1, binning=Uniform(B)), [0.3, 0.3, 0.2], atol=1e-15)


# ----------------------------------------------------------------------------
# naive references: plain loops over classes, bins and rows


def naive_bin(p, B):
    return min(int(np.floor(p * B)), B - 1)


def naive_cells(y, P, B, w):
    """{(class, bin): [sum w, sum w*h, sum w*1{y=c}]} by a loop over rows."""
    cells = {}
    for i in range(len(y)):
        c = int(np.argmax(P[i]))
        h = P[i, c]
        s = cells.setdefault((c, naive_bin(h, B)), [0.0, 0.0, 0.0])
        s[0] += w[i]
        s[1] += w[i] * h
        s[2] += w[i] * (y[i] == c)
    return cells


def naive_tl(y, P, B, w):
    cells = naive_cells(y, P, B, w)
    W = sum(w)
    tl = sum(abs(s[2] / s[0] - s[1] / s[0]) * s[0] / W for s in cells.values() if s[0] > 0)
    cell_max = max(abs(s[2] / s[0] - s[1] / s[0]) for s in cells.values() if s[0] > 0)
    bin_max = 0.0
    for b in range(B):
        inb = [s for (c, bb), s in cells.items() if bb == b and s[0] > 0]
        if inb:
            Wb = sum(s[0] for s in inb)
            bin_max = max(bin_max, sum(s[0] / Wb * abs(s[2] / s[0] - s[1] / s[0]) for s in inb))
    return tl, bin_max, cell_max


def naive_conf(y, P, B, w):
    acc = {}
    for i in range(len(y)):
        c = int(np.argmax(P[i]))
        s = acc.setdefault(naive_bin(P[i, c], B), [0.0, 0.0, 0.0])
        s[0] += w[i]
        s[1] += w[i] * P[i, c]
        s[2] += w[i] * (y[i] == c)
    W = sum(w)
    return sum(abs(s[2] - s[1]) / W for s in acc.values())


def naive_cw(y, P, B, w):
    K = P.shape[1]
    total = 0.0
    for lab in range(K):
        acc = {}
        for i in range(len(y)):
            s = acc.setdefault(naive_bin(P[i, lab], B), [0.0, 0.0, 0.0])
            s[0] += w[i]
            s[1] += w[i] * P[i, lab]
            s[2] += w[i] * (y[i] == lab)
        total += sum(abs(s[2] - s[1]) for s in acc.values()) / sum(w)
    return total / K


def random_data(seed, n=300, K=4, sharp=3.0, weights=False):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, K)) * sharp
    P = np.exp(logits - logits.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    y = rng.integers(0, K, size=n)
    w = rng.uniform(0.1, 3.0, size=n) if weights else None
    return y, P, w


@pytest.mark.parametrize("weights", [False, True])
@pytest.mark.parametrize("B", [5, 15])
def test_against_naive_loops(B, weights):
    y, P, w = random_data(B + 10 * weights, weights=weights)
    ww = np.ones(len(y)) if w is None else w
    tl, bin_max, cell_max = naive_tl(y, P, B, ww)
    assert top_label_ece(y, P, binning=Uniform(B), sample_weight=w) == pytest.approx(tl, abs=1e-12)
    assert top_label_mce(y, P, binning=Uniform(B), reduce="bin", sample_weight=w) == pytest.approx(bin_max, abs=1e-12)
    assert top_label_mce(y, P, binning=Uniform(B), reduce="cell", sample_weight=w) == pytest.approx(cell_max, abs=1e-12)
    assert top_label_ece(y, P, binning=Uniform(B), norm="max", sample_weight=w) == pytest.approx(cell_max, abs=1e-12)
    assert confidence_ece(y, P, binning=Uniform(B), sample_weight=w) == pytest.approx(naive_conf(y, P, B, ww), abs=1e-12)
    assert classwise_ece(y, P, binning=Uniform(B), sample_weight=w) == pytest.approx(naive_cw(y, P, B, ww), abs=1e-12)


@pytest.mark.parametrize("scheme", [EqualMass(5), PAVA(), MedianVariance(min_size=10)])
def test_per_class_fit_equals_binary_ece_of_each_top_label_view(scheme):
    # the paper's protocol: bins are fitted inside each predicted class
    y, P, _ = random_data(3, n=600)
    c, h = P.argmax(axis=1), P.max(axis=1)
    expected = 0.0
    per_class = np.full(P.shape[1], np.nan)
    for lab in range(P.shape[1]):
        m = c == lab
        if m.any():
            per_class[lab] = ece((y[m] == lab).astype(float), h[m], binning=scheme)
            expected += m.mean() * per_class[lab]
    assert top_label_ece(y, P, binning=scheme) == pytest.approx(expected, abs=1e-12)
    np.testing.assert_allclose(top_label_ece_per_class(y, P, binning=scheme), per_class, atol=1e-12)


def test_pooled_fit_uses_one_binning_of_all_confidences():
    y, P, _ = random_data(4, n=500)
    c, h = P.argmax(axis=1), P.max(axis=1)
    bins = EqualMass(7).fit(h)
    expected = 0.0
    for lab in range(P.shape[1]):
        for b in range(bins.n_bins):
            m = (c == lab) & (bins.index == b)
            if m.any():
                expected += m.mean() * abs((y[m] == lab).mean() - h[m].mean())
    assert top_label_ece(y, P, binning=EqualMass(7), fit="pooled") == pytest.approx(expected, abs=1e-12)
    assert confidence_ece(y, P, binning=EqualMass(7)) <= top_label_ece(y, P, binning=EqualMass(7), fit="pooled") + 1e-12


def test_uniform_per_class_and_pooled_agree():
    y, P, w = random_data(5, weights=True)
    a = top_label_ece(y, P, binning=Uniform(10), fit="per_class", sample_weight=w)
    b = top_label_ece(y, P, binning=Uniform(10), fit="pooled", sample_weight=w)
    assert a == b


def test_argmax_ties_go_to_first_class():
    P = np.array([[0.4, 0.4, 0.2], [0.4, 0.4, 0.2]])
    # predicted class 0 for both rows: one right (y=0), one wrong (y=1)
    assert top_label_ece_per_class([0, 1], P, binning=Uniform(10)).tolist()[:2] == pytest.approx([0.1, np.nan], nan_ok=True)


def test_classwise_tce_is_mean_of_binary_tce():
    y, P, w = random_data(6, n=400, K=3, weights=True)
    for scheme in (PAVABC(), Uniform(10)):
        expected = np.mean([tce((y == k).astype(float), P[:, k], binning=scheme, sample_weight=w) for k in range(3)])
        assert classwise_tce(y, P, binning=scheme, sample_weight=w) == pytest.approx(expected, abs=1e-12)
    assert 0 <= classwise_tce(y, P) <= 100


def test_weights_of_one_equal_no_weights():
    y, P, _ = random_data(7)
    ones = np.ones(len(y))
    for f in (confidence_ece, top_label_ece, classwise_ece):
        assert f(y, P, sample_weight=ones) == pytest.approx(f(y, P), abs=1e-15)
    assert top_label_mce(y, P, sample_weight=ones) == pytest.approx(top_label_mce(y, P), abs=1e-15)


def test_integer_weights_equal_repeated_rows():
    y, P, _ = random_data(8, n=100)
    k = np.random.default_rng(0).integers(1, 4, size=100)
    rep = np.repeat(np.arange(100), k)
    for f in (confidence_ece, top_label_ece, classwise_ece, top_label_mce):
        assert f(y, P, sample_weight=k) == pytest.approx(f(y[rep], P[rep]), abs=1e-12)


@pytest.mark.parametrize(
    "call, fragment",
    [
        (lambda: top_label_ece([0, 3], [[0.5, 0.5], [0.5, 0.5]]), "class indices"),
        (lambda: top_label_ece([0, 1], [[0.5, 0.6], [0.5, 0.5]]), "sum to 1"),
        (lambda: top_label_ece([0, 1], [0.5, 0.5]), "shape (n, K)"),
        (lambda: top_label_mce(Y_EX1, P_EX1, reduce="bins"), "reduce"),
        (lambda: top_label_ece(Y_EX1, P_EX1, fit="shared"), "fit"),
        (lambda: top_label_ece(Y_EX1, P_EX1, norm="l3"), "norm"),
        (lambda: classwise_ece(Y_EX1, P_EX1, binning="nope"), "unknown binning"),
        (lambda: canonical_ece(Y_EX1, P_EX1, distance="euclid"), "distance"),
        (lambda: canonical_ece(Y_EX1, P_EX1, binning="quantile"), "binning"),
        (lambda: canonical_ece(Y_EX1, P_EX1, binning="median_variance", min_size=11), "at least min_size"),
        (lambda: canonical_ece(Y_EX1, P_EX1, n_bins=0), "n_bins"),
    ],
)
def test_bad_input_raises_input_error(call, fragment):
    with pytest.raises(InputError, match=None) as exc:
        call()
    assert fragment in str(exc.value)


# ----------------------------------------------------------------------------
# canonical ECE (CalibrationErrors.jl), hand-computed fixtures

P_CAN = np.array([[0.7, 0.2, 0.1], [0.6, 0.3, 0.1], [0.2, 0.2, 0.6], [0.1, 0.3, 0.6]])
Y_CAN = np.array([0, 1, 2, 2])
# bins {0, 1}: Pbar (.65, .25, .1) vs Ybar (.5, .5, 0): |diff| = (.15, .25, .1)
# bins {2, 3}: Pbar (.15, .25, .6) vs Ybar (0, 0, 1):   |diff| = (.15, .25, .4)


@pytest.mark.golden
@pytest.mark.parametrize(
    "distance, expected", [("tv", (0.25 + 0.4) / 2), ("cityblock", (0.5 + 0.8) / 2), ("sqeuclidean", (0.095 + 0.245) / 2)]
)
def test_canonical_hand_fixture(distance, expected):
    # uniform with 2 bins per component: rows 0,1 -> (2,1,1); rows 2,3 -> (1,1,2)
    assert canonical_ece(Y_CAN, P_CAN, binning="uniform", n_bins=2, distance=distance) == pytest.approx(expected, abs=1e-12)
    # median-variance, min_size 2: component 0 has the largest variance (0.0867 vs 0.0833 for
    # component 2); the median split of component 0 gives the same two bins
    got = canonical_ece(Y_CAN, P_CAN, binning="median_variance", min_size=2, distance=distance)
    assert got == pytest.approx(expected, abs=1e-12)


@pytest.mark.golden
def test_canonical_uniform_edges_follow_julia_ceil():
    # ceil(B * p): p = 0.5 with B = 2 is in bin 1 (right-closed), p = 0 in bin 1 too
    P = np.array([[0.5, 0.5], [0.0, 1.0], [0.51, 0.49]])
    y = np.array([0, 1, 0])
    # rows 0 and 1 share component-0 bin 1 but differ in component 1? p1: 0.5 -> 1, 1.0 -> 2: separate bins
    # row 0: (1,1) alone: d = 0.5*(|.5-1|+|.5-0|) = 0.5; row 1: (1,2) alone: 0; row 2: (2,1) alone: 0.49
    assert canonical_ece(y, P, n_bins=2) == pytest.approx((0.5 + 0.0 + 0.49) / 3, abs=1e-12)
    # right-closed bins and p = 0 in bin 1: (0.3, 0.3, 0.4, 0) and (0.25, 0.3, 0.4, 0.05) share the
    # bin (3, 3, 4, 1) with B = 10 (left-closed bins would separate 0.3 from 0.25)
    P = np.array([[0.3, 0.3, 0.4, 0.0], [0.25, 0.3, 0.4, 0.05]])
    one_bin = 0.5 * (abs(0.275 - 0.5) + abs(0.3 - 0.5) + 0.4 + 0.025)
    assert canonical_ece([0, 1], P, n_bins=10) == pytest.approx(one_bin, abs=1e-12)


@pytest.mark.golden
def test_canonical_bin_weights_size_matches_running_mean():
    # the package's code: running mean over bins weighted by their sizes
    P = np.array([[0.8, 0.1, 0.1], [0.8, 0.1, 0.1], [0.1, 0.1, 0.8]])
    y = np.array([0, 1, 2])
    d = [0.4, 0.2]
    sizes = [2, 1]
    est, n = d[0], sizes[0]
    for x, m in zip(d[1:], sizes[1:]):
        n += m
        est += (m / n) * (x - est)
    assert canonical_ece(y, P, bin_weights="size") == pytest.approx(est, abs=1e-12)
    assert canonical_ece(y, P) == pytest.approx(np.mean(d), abs=1e-12)


@pytest.mark.golden
def test_canonical_median_ties_stay_together():
    # component 0 has the largest variance; its median value 0.5 is tied, so the rows below the
    # median element are only {0.1}: a part smaller than min_size=2 -> no split, one bin
    P = np.array([[0.1, 0.9], [0.5, 0.5], [0.5, 0.5], [0.5, 0.5], [0.9, 0.1], [0.9, 0.1]])
    y = np.array([1, 0, 1, 0, 0, 0])
    one_bin = 0.5 * (abs(P[:, 0].mean() - 4 / 6) + abs(P[:, 1].mean() - 2 / 6))
    assert canonical_ece(y, P, binning="median_variance", min_size=2) == pytest.approx(one_bin, abs=1e-12)
    # min_size=1: {0.1} | rest; the rest (.5, .5, .5, .9, .9) has its median element tied with the
    # one before it and nothing below it, so it stays one bin
    d = [0.5 * (0.1 + 0.1), 0.5 * (abs(0.66 - 0.8) + abs(0.34 - 0.2))]
    assert canonical_ece(y, P, binning="median_variance", min_size=1) == pytest.approx(np.mean(d), abs=1e-12)
    assert canonical_ece(y, P, binning=MedianVariance(min_size=1, max_bins=1)) == pytest.approx(one_bin, abs=1e-12)


def naive_canonical_uniform(y, P, B):
    groups = {}
    for i in range(len(y)):
        key = tuple(1 if p == 0 else int(np.ceil(B * p)) for p in P[i])
        groups.setdefault(key, []).append(i)
    ds = []
    for rows in groups.values():
        pbar = P[rows].mean(axis=0)
        ybar = np.bincount(y[rows], minlength=P.shape[1]) / len(rows)
        ds.append(0.5 * np.abs(pbar - ybar).sum())
    return np.mean(ds)


def naive_canonical_median_variance(y, P, m):
    """Recursive reference with a plain queue (unlimited bins: the split order does not matter)."""
    todo, done = [np.arange(len(y))], []
    while todo:
        idx = todo.pop()
        if len(idx) < 2 * m:
            done.append(idx)
            continue
        var = P[idx].var(axis=0, ddof=1)
        d = int(np.argmax(var))
        vals = np.sort(P[idx, d])
        med = vals[len(idx) // 2]
        below, above = idx[P[idx, d] < med], idx[P[idx, d] >= med]
        if len(below) < m or len(above) < m:
            done.append(idx)
        else:
            todo += [below, above]
    ds = []
    for rows in done:
        ybar = np.bincount(y[rows], minlength=P.shape[1]) / len(rows)
        ds.append(0.5 * np.abs(P[rows].mean(axis=0) - ybar).sum())
    return np.mean(ds)


@pytest.mark.parametrize("seed", range(3))
def test_canonical_against_naive(seed):
    y, P, _ = random_data(seed, n=400, K=3, sharp=1.5)
    assert canonical_ece(y, P, n_bins=4) == pytest.approx(naive_canonical_uniform(y, P, 4), abs=1e-12)
    assert canonical_ece(y, P, binning="median_variance", min_size=15) == pytest.approx(
        naive_canonical_median_variance(y, P, 15), abs=1e-12
    )


def test_canonical_many_classes_packs_bin_ids():
    # K = 40 components with 10 bins each does not fit one int64: ids are renumbered on the way
    y, P, _ = random_data(9, n=300, K=40, sharp=0.5)
    assert canonical_ece(y, P, n_bins=10) == pytest.approx(naive_canonical_uniform(y, P, 10), abs=1e-12)


# ----------------------------------------------------------------------------
# properties


def seeded(draw_n=(20, 300), draw_k=(2, 6)):
    return st.tuples(st.integers(0, 2**32 - 1), st.integers(*draw_n), st.integers(*draw_k), st.floats(0.2, 6.0))


PROP = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.property
@PROP
@given(seeded(), st.integers(1, 25))
def test_conf_ece_le_tl_ece_with_shared_bins(params, B):
    seed, n, K, sharp = params
    y, P, _ = random_data(seed, n, K, sharp)
    assert confidence_ece(y, P, binning=Uniform(B)) <= top_label_ece(y, P, binning=Uniform(B)) + 1e-12
    assert confidence_ece(y, P, binning=Uniform(B), norm="max") <= top_label_mce(y, P, binning=Uniform(B)) + 1e-12
    assert top_label_mce(y, P, binning=Uniform(B), reduce="bin") <= top_label_mce(y, P, binning=Uniform(B), reduce="cell") + 1e-12
    assert confidence_ece(y, P, binning=EqualMass(B)) <= top_label_ece(y, P, binning=EqualMass(B), fit="pooled") + 1e-12


@pytest.mark.property
@PROP
@given(seeded(draw_k=(2, 2)), st.integers(1, 20))
def test_k2_classwise_class_1_is_the_binary_metric(params, B):
    seed, n, _, sharp = params
    y, P, w = random_data(seed, n, 2, sharp, weights=True)
    got = classwise_ece_per_class(y, P, binning=Uniform(B), sample_weight=w)[1]
    assert got == pytest.approx(ece(y, P[:, 1], binning=Uniform(B), sample_weight=w), abs=1e-15)
    # and the class-wise reduction of class 0 is the mirrored binary problem
    assert classwise_ece_per_class(y, P, binning=Uniform(B))[0] <= 1


@pytest.mark.property
@PROP
@given(seeded(), st.integers(1, 20))
def test_class_order_and_row_order_do_not_matter(params, B):
    seed, n, K, sharp = params
    y, P, w = random_data(seed, n, K, sharp, weights=True)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(K)  # new column j holds old class perm[j]
    inv = np.argsort(perm)
    y2, P2 = inv[y], P[:, perm]
    rows = rng.permutation(n)
    for f, kw in (
        (confidence_ece, {}), (top_label_ece, {}), (classwise_ece, {}),
        (top_label_mce, {"reduce": "bin"}), (top_label_mce, {"reduce": "cell"}),
    ):
        a = f(y, P, binning=Uniform(B), sample_weight=w, **kw)
        assert f(y2, P2, binning=Uniform(B), sample_weight=w, **kw) == pytest.approx(a, abs=1e-12)
        assert f(y[rows], P[rows], binning=Uniform(B), sample_weight=w[rows], **kw) == pytest.approx(a, abs=1e-12)
    a = canonical_ece(y, P, n_bins=B)
    assert canonical_ece(y2, P2, n_bins=B) == pytest.approx(a, abs=1e-12)
    assert canonical_ece(y[rows], P[rows], n_bins=B) == pytest.approx(a, abs=1e-12)


@pytest.mark.property
@PROP
@given(seeded(), st.integers(1, 20))
def test_bounds(params, B):
    seed, n, K, sharp = params
    y, P, _ = random_data(seed, n, K, sharp)
    for v in (
        confidence_ece(y, P, binning=Uniform(B)), top_label_ece(y, P, binning=Uniform(B)),
        classwise_ece(y, P, binning=Uniform(B)), top_label_mce(y, P, binning=Uniform(B)),
        canonical_ece(y, P, n_bins=B),
    ):
        assert 0 <= v <= 1


@pytest.mark.property
@PROP
@given(st.integers(0, 2**32 - 1), st.integers(2, 6), st.integers(1, 20))
def test_perfectly_calibrated_cells_give_zero(seed, K, B):
    # every row of a cell has the same scores and the cell's accuracy equals its score
    P = np.full((10, K), 0.0)
    P[:, 0] = 0.6
    P[:, 1:] = 0.4 / (K - 1)
    y = np.array([0] * 6 + [1] * 4)
    assert top_label_ece(y, P, binning=Uniform(B)) == pytest.approx(0.0, abs=1e-12)
    assert confidence_ece(y, P, binning=Uniform(B)) == pytest.approx(0.0, abs=1e-12)
