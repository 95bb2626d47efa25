
import numpy as np
import pytest
from scipy.optimize import isotonic_regression

from calibviz import InputError
from calibviz import binning as bn


def test_uniform_edges_and_roundoff():
    b = bn.Uniform(10).fit([0.0, 0.3, 0.7, 0.29999999999999993, 1.0, 0.05])
    assert b.index.tolist() == [0, 3, 7, 2, 9, 0]
    for B in (3, 7, 10, 15):
        e = np.arange(B + 1) / B
        idx = bn.Uniform(B).fit(e).index
        assert idx.tolist() == list(range(B)) + [B - 1]
        below = np.nextafter(e[1:-1], 0)
        assert bn.Uniform(B).fit(below).index.tolist() == list(range(B - 1))


def test_uniform_index_at_every_float_edge():
    # index == largest k with float edge k/B <= p (capped at B-1), for scores on, just
    # above and just below every edge, many B, and more rows than one chunk
    rng = np.random.default_rng(12)
    for B in list(range(1, 130)) + [1000, 4096, 65537]:
        e = np.arange(B + 1) / B
        p = np.clip(np.r_[rng.random(3 * bn._CHUNK // 2), e, np.nextafter(e, 2), np.nextafter(e, -1)], 0, 1)
        ref = np.minimum(np.searchsorted(e, p, side="right") - 1, B - 1)
        np.testing.assert_array_equal(bn.Uniform(B).fit(p).index, ref)


def test_uniform_matches_sklearn_calibration_curve():
    from sklearn.calibration import calibration_curve

    rng = np.random.default_rng(0)
    p = rng.random(5000)
    y = (rng.random(5000) < p).astype(int)
    b = bn.Uniform(10).fit(p)
    counts = b.counts
    prob_true, prob_pred = calibration_curve(y, p, n_bins=10, strategy="uniform")
    keep = counts > 0
    np.testing.assert_allclose(np.bincount(b.index, weights=y, minlength=10)[keep] / counts[keep], prob_true)
    np.testing.assert_allclose(np.bincount(b.index, weights=p, minlength=10)[keep] / counts[keep], prob_pred)


def _equal_mass_cuts_reference(p, B):
    """Tie rule, written plainly: a cut inside a run of equal scores moves to the nearer end (lower on a draw)."""
    ps = np.sort(p)
    n = len(p)
    cuts = []
    runs = {}  # score -> (first, one past last) sorted position of its run: each run is walked once, not per cut
    for j in range(1, B):
        c = (j * n) // B
        if 0 < c < n and ps[c - 1] == ps[c]:
            if ps[c] not in runs:
                start = c
                while start > 0 and ps[start - 1] == ps[c]:
                    start -= 1
                end = c
                while end < n and ps[end] == ps[c]:
                    end += 1
                runs[ps[c]] = (start, end)
            start, end = runs[ps[c]]
            c = start if c - start <= end - c else end
        cuts.append(c)
    return ps, np.array(cuts, dtype=int)


def _equal_mass_reference(p, y, B):
    """Bin of each row under the tie rule; labels (y) play no part."""
    ps, cuts = _equal_mass_cuts_reference(p, B)
    # a row's bin is the number of cuts at or below the first sorted position of its score
    first = np.searchsorted(ps, p, side="left")
    return np.searchsorted(cuts, first, side="right")


def test_equal_mass_positions_and_ties():
    rng = np.random.default_rng(1)
    for _ in range(300):
        n, B = int(rng.integers(1, 40)), int(rng.integers(1, 12))
        p = rng.integers(0, 5, n) / 4.0
        y = rng.integers(0, 2, n)
        np.testing.assert_array_equal(bn.EqualMass(B).fit(p, y).index, _equal_mass_reference(p, y, B))


@pytest.mark.parametrize("kind", ["continuous", "ties", "concentrated", "constant"])
def test_equal_mass_histogram_path_matches_sorting(kind):
    # above _HIST_MIN rows the cut values and ranks come from a bucket histogram
    rng = np.random.default_rng(9)
    n = bn._HIST_MIN + 12345
    p = {
        "continuous": rng.random(n),
        "ties": np.round(rng.beta(0.4, 0.4, n), 3),
        "concentrated": np.clip(rng.normal(0.5, 1e-5, n), 0, 1),
        "constant": np.full(n, 0.3),
    }[kind]
    y = rng.integers(0, 2, n)
    for B in (2, 15, 1000):
        b = bn.EqualMass(B).fit(p, y)
        np.testing.assert_array_equal(b.index, _equal_mass_reference(p, y, B))
        ps, cuts = _equal_mass_cuts_reference(p, B)
        inner = (cuts > 0) & (cuts < n)
        np.testing.assert_array_equal(b.edges[1:-1][inner], 0.5 * (ps[cuts[inner] - 1] + ps[cuts[inner]]))
        np.testing.assert_array_equal(b.counts, np.diff(np.r_[0, cuts, n]))


def test_equal_mass_continuous_matches_sklearn_quantile():
    from sklearn.calibration import calibration_curve

    rng = np.random.default_rng(2)
    p = rng.random(1000)
    y = (rng.random(1000) < p).astype(int)
    b = bn.EqualMass(10).fit(p)
    assert set(b.counts.tolist()) == {100}
    prob_true, _ = calibration_curve(y, p, n_bins=10, strategy="quantile")
    np.testing.assert_allclose(np.bincount(b.index, weights=y) / b.counts, prob_true)


def test_fewer_points_than_bins_and_all_equal():
    b = bn.EqualMass(10).fit([0.2, 0.4, 0.6])
    assert b.counts.sum() == 3 and b.n_bins == 10 and np.all(np.diff(b.edges) >= 0)
    b = bn.EqualMass(4).fit([0.5] * 9, [0, 1] * 4 + [0])
    # a tie is never split: cuts 2, 4, 6 move to the nearer end of the run [0, 9): 0, 0, 9
    assert b.counts.tolist() == [0, 0, 9, 0]
    for scheme in (bn.PAVA(), bn.PAVABC(), bn.PAVABC(2, 4), bn.MedianVariance(2)):
        b = scheme.fit([0.5] * 9, [0, 1] * 4 + [0])
        assert b.counts.sum() == 9
    assert bn.PAVA().fit([0.5] * 9, [0, 1] * 4 + [0]).n_bins == 1


def _pava_reference_blocks(p, y):
    """Independent: isotonic fit on the unique-score means, blocks where the fit changes."""
    u, inv = np.unique(p, return_inverse=True)
    sums = np.bincount(inv, weights=y)
    cnt = np.bincount(inv)
    fit = isotonic_regression(sums / cnt, weights=cnt.astype(float)).x
    return fit[inv]


def test_pava_blocks_are_isotonic_fit_and_never_split_ties():
    rng = np.random.default_rng(4)
    for _ in range(200):
        n = int(rng.integers(1, 60))
        p = rng.integers(0, 12, n) / 11.0
        y = rng.integers(0, 2, n).astype(float)
        b = bn.PAVA().fit(p, y)
        rate = (np.bincount(b.index, weights=y) / b.counts)[b.index]
        np.testing.assert_allclose(rate, _pava_reference_blocks(p, y))
        # equal scores share a bin
        for v in np.unique(p):
            assert len(np.unique(b.index[p == v])) == 1
        assert np.all(np.diff(np.bincount(b.index, weights=y) / b.counts) > 0)


def test_pava_matches_sklearn_isotonic():
    from sklearn.isotonic import IsotonicRegression

    rng = np.random.default_rng(5)
    p = rng.random(500)
    y = (rng.random(500) < p).astype(float)
    b = bn.PAVA().fit(p, y)
    rate = (np.bincount(b.index, weights=y) / b.counts)[b.index]
    np.testing.assert_allclose(rate, IsotonicRegression().fit(p, y).predict(p), atol=1e-12)


def _pavabc_naive(y, n_min, n_max, rule):
    """Literal transcription of Algorithm 2 with explicit arrays (independent of ours)."""
    N = len(y)
    Y, Wt = [0.0] * (N + 2), [0] * (N + 2)
    B = 0
    for i in range(N - n_min):
        B += 1
        Y[B], Wt[B] = y[i], 1
        while B > 1:
            if Wt[B - 1] + Wt[B] > n_min:
                if Wt[B - 1] + Wt[B] > n_max:
                    break
                if Y[B - 1] / Wt[B - 1] < Y[B] / Wt[B]:
                    break
            Y[B - 1] += Y[B]
            Wt[B - 1] += Wt[B]
            B -= 1
    if n_min > 0:
        tail = sum(y[N - n_min:])
        cond = (Wt[B] + n_min <= n_max) if rule == "paper" else (2 * n_min <= n_max)
        if B >= 1 and cond:
            Y[B] += tail
            Wt[B] += n_min
        else:
            B += 1
            Y[B], Wt[B] = tail, n_min
    return Wt[1:B + 1]


@pytest.mark.parametrize("rule", ["paper", "reference"])
def test_pavabc_matches_algorithm_2(rule):
    rng = np.random.default_rng(6)
    for _ in range(300):
        n = int(rng.integers(2, 80))
        n_min = int(rng.integers(0, n // 2 + 1))
        n_max = int(rng.integers(max(n_min, 1), n + 1))
        p = np.sort(rng.random(n))
        y = (rng.random(n) < p).astype(float)
        b = bn.PAVABC(n_min, n_max, tail_rule=rule).fit(p, y)
        assert b.counts.tolist() == _pavabc_naive(list(y), n_min, n_max, rule)


@pytest.mark.parametrize("rule", ["paper", "reference"])
def test_pavabc_chunked_path_matches_algorithm_2(rule):
    # the vectorised event loop (unweighted, n_min >= 256 in fit) against the literal
    # Algorithm 2, on data shaped like real scores: calibrated, shifted, reversed, constant
    rng = np.random.default_rng(8)
    for i in range(40):
        n = int(rng.choice([600, 3000, 12000]))
        n_min = int(rng.choice([0, 1, 3, 40, 256, n // 20, n // 7]))
        n_max = max(n_min, 1) * int(rng.choice([1, 2, 4])) + int(rng.integers(0, 3))
        p = np.sort(rng.random(n))
        y = (rng.random(n) < np.clip(p + rng.choice([0.0, -0.2, 0.2]), 0, 1)).astype(np.int64)
        y = y[::-1].copy() if i % 5 == 0 else (np.zeros(n, np.int64) if i % 11 == 0 else y)
        ref = _pavabc_naive(list(y), n_min, n_max, rule)
        assert bn._pavabc_sizes_unweighted(y, n_min, n_max, rule) == ref
        if n_min >= bn._VECTOR_MIN:
            assert bn.PAVABC(n_min, n_max, tail_rule=rule).fit(p, y).counts.tolist() == ref


@pytest.mark.parametrize("seed", [0, 1])
def test_pavabc_runs_over_groups_match_the_stack_loop(seed):
    # _pavabc_sizes_grouped (weights, tied rows, bootstrap multiplicities, score buckets) against the stack loop,
    # which follows Algorithm 2 group by group: the same blocks, including the ties that runs of all-positive or
    # all-negative rows make with float weights, integer weights, a group larger than n_min or n_max, and
    # constraints from 0 to beyond N
    rng = np.random.default_rng(seed)
    for i in range(250):
        G = int(rng.choice([3, 40, 400, 3000]))
        kind = i % 5
        c = np.ones(G, np.int64) if kind < 2 else rng.integers(1, int(rng.integers(2, 40)), G)
        if kind == 4:
            c[rng.integers(0, G)] = rng.integers(1, 40 * G)
        p = np.sort(rng.random(G) if i % 3 else rng.beta(0.3, 0.3, G))
        if kind == 0:  # unweighted rows
            s, w = (rng.random(G) < p).astype(float), c.astype(float)
        elif kind == 1:  # weighted rows: every group's mean is exactly 0 or 1
            w = rng.lognormal(size=G)
            s = (rng.random(G) < p) * w
        elif kind == 2:  # tied rows
            s, w = rng.binomial(c, p).astype(float), c.astype(float)
        else:  # tied rows with integer weights
            wi = rng.integers(1, 4, G).astype(float)
            s, w = rng.binomial(c, p) * wi, c * wi
        N = int(c.sum())
        n_min = int(rng.choice([0, 1, N // 20, N // 7, int(rng.integers(0, N + 1))]))
        n_max = max(n_min, int(rng.choice([max(N // 5, 1), 2 * n_min, int(rng.integers(1, N + 2))])))
        rule = ("paper", "reference")[i % 2]
        ref = bn._pavabc_sizes(s.tolist(), w.tolist(), c.tolist(), n_min, n_max, rule)
        assert bn._pavabc_sizes_grouped(s, w - s, c, n_min, n_max, rule) == ref, (i, kind, G, n_min, n_max)
    # found by a review: positive rows after heavy negative ones; a mean computed as S / ((S + Q_j) - Q_t) lost
    # N = 0 to the rounding of the prefix sums, and two all-positive rows did not tie
    s = np.array([0.0, 0.0, 0.0003737897308751396, 1.1985920192852284])
    neg = np.array([6086.78071165377, 6028.335916537868, 0.0, 0.0])
    assert bn._pavabc_sizes_grouped(s, neg, np.ones(4, np.int64), 0, 2, "reference") == [2, 2]
    # and weights 17 orders of magnitude apart: a plain cumsum's differences lost the small ones (_PrefixSums)
    for s, neg, c, n_max, want in (([1e-4, 0.0, 0.0], [1857312618.18039, 8.07e-08, 1.40e-06], [2, 1, 1], 2, [2, 2]),
                                   ([0.0, 21013624.26, 0.0, 2.99e-07], [1337550501.3, 0.0, 6.23e-08, 0.0],
                                    [1, 1, 1, 1], 3, [1, 2, 1]),
                                   ([1487283705.42, 0.0, 1.57e-08], [0.0, 0.371, 0.0], [1, 1, 1], 3, [2, 1])):
        s, neg, c = np.array(s), np.array(neg), np.array(c, np.int64)
        assert bn._pavabc_sizes(s.tolist(), (s + neg).tolist(), c.tolist(), 0, n_max, "paper") == want
        assert bn._pavabc_sizes_grouped(s, neg, c, 0, n_max, "paper") == want


def test_pavabc_rules_differ_and_paper_respects_n_max():
    # the reference tail rule can exceed n_max; the paper rule cannot
    y = [0] * 11
    p = np.linspace(0.01, 0.99, 11)
    paper = bn.PAVABC(2, 5, tail_rule="paper").fit(p, y)
    ref = bn.PAVABC(2, 5, tail_rule="reference").fit(p, y)
    assert paper.counts.tolist() == [5, 4, 2]
    assert ref.counts.tolist() == [5, 6]
    rng = np.random.default_rng(7)
    for _ in range(100):
        n = int(rng.integers(20, 200))
        n_min, n_max = n // 20, n // 5
        p = rng.random(n)
        y = (rng.random(n) < p).astype(float)
        c = bn.PAVABC(n_min, n_max).fit(p, y).counts
        assert c.max() <= n_max and (n_min == 0 or c.min() >= n_min)


def test_pavabc_defaults_and_degenerate():
    assert bn.PAVABC().constraints(6000) == (300, 1200)
    b = bn.PAVABC(5, 10).fit([0.1, 0.2, 0.3], [0, 1, 1])
    assert b.counts.tolist() == [3]
    with pytest.raises(InputError):
        bn.PAVABC(10, 5)
    with pytest.raises(InputError):
        bn.PAVABC().fit([0.1, 0.2])  # needs labels


def test_median_variance():
    p = np.r_[np.linspace(0, 0.1, 40), np.linspace(0.8, 1, 40)]
    b = bn.MedianVariance(10).fit(p)
    assert b.counts.min() >= 10 and b.counts.sum() == 80
    assert bn.MedianVariance(10, max_bins=2).fit(p).counts.tolist() == [40, 40]
    assert bn.MedianVariance(10).fit(p[:15]).n_bins == 1
    # tied median: the lower part holds the values strictly below it
    assert bn.MedianVariance(2).fit([0.1, 0.2, 0.5, 0.5, 0.5, 0.9]).counts.tolist() == [2, 4]


def test_custom_and_get_scheme():
    b = bn.Custom([0, 0.25, 1]).fit([0.0, 0.25, 1.0])
    assert b.index.tolist() == [0, 1, 1]
    with pytest.raises(InputError):
        bn.Custom([0, 0.5, 0.4])
    with pytest.raises(InputError):
        bn.Custom([0.2, 1]).fit([0.1])
    assert isinstance(bn.get_scheme("quantile"), bn.EqualMass)
    assert isinstance(bn.get_scheme("PAVA-BC"), bn.PAVABC)
    assert bn.get_scheme([0, 0.5, 1]) == bn.Custom((0.0, 0.5, 1.0))
    assert isinstance(bn.get_scheme("median_variance", min_size=3), bn.MedianVariance)
    with pytest.raises(InputError):
        bn.get_scheme("nope")
    with pytest.raises(InputError):
        bn.Uniform(0)
    assert bn.Auto().fit(np.linspace(0, 1, 100)).scheme == "equal_mass(15)"


def test_weights_shape_checked():
    with pytest.raises(InputError):
        bn.Uniform(3).fit([0.1, 0.2], sample_weight=[1.0])


def _pavabc_naive_groups(s, w, c, n_min, n_max, rule):
    """Algorithm 2 on groups of tied rows pushed whole, transcribed with explicit arrays (independent of ours): two
    blocks that fit under n_max pool when the first holds fewer than n_min rows (the paper's forced pooling; for
    single rows the same as 'both fit under n_min') or when its mean is >= the second's."""
    G = len(c)
    stop, tail = G, 0
    while stop and tail < n_min:
        stop -= 1
        tail += c[stop]
    Y, Wt, Cn = [], [], []
    for i in range(stop):
        Y.append(s[i])
        Wt.append(w[i])
        Cn.append(c[i])
        while len(Cn) > 1:
            if Cn[-2] + Cn[-1] > n_max:
                break
            if Cn[-2] >= n_min and Y[-2] * Wt[-1] < Y[-1] * Wt[-2]:
                break
            for arr in (Y, Wt, Cn):
                top = arr.pop()
                arr[-1] += top
    if n_min > 0:
        if Cn and ((Cn[-1] + tail <= n_max) if rule == "paper" else (2 * n_min <= n_max)):
            Cn[-1] += tail
        else:
            Cn.append(tail)
    return Cn


def test_pavabc_on_tied_scores_keeps_every_bin_but_the_last_at_n_min():
    """Scores rounded to 2 decimals, N_min = N / 20: a walk-through found PAVA-BC bins of 159-226 rows where
    N_min = 250 (a run of ties that did not fit beside a 230-row block started its own). A block of fewer than
    N_min rows now takes the next run of ties whole; the stack loop, the runs over groups and an independent
    transcription agree, and untied rows give the paper's blocks (tests above)."""
    rng = np.random.default_rng(11)
    for i in range(200):
        n = int(rng.choice([300, 2_000, 5_000]))
        p = np.round(rng.beta(2, 5, n), int(rng.choice([1, 2, 3])))
        y = (rng.random(n) < p).astype(float)
        n_min, n_max = bn.pavabc_sizes(n) if i % 2 else (int(rng.integers(1, n // 4)), int(rng.integers(n // 4, n)))
        n_max = max(n_max, n_min)
        u, inv = np.unique(p, return_inverse=True)
        c = np.bincount(inv)
        s = np.bincount(inv, weights=y)
        rule = ("paper", "reference")[i % 2]
        want = _pavabc_naive_groups(s.tolist(), c.astype(float).tolist(), c.tolist(), n_min, n_max, rule)
        assert bn._pavabc_sizes(s.tolist(), c.astype(float).tolist(), c.tolist(), n_min, n_max, rule) == want
        assert bn._pavabc_sizes_grouped(s, c - s, c, n_min, n_max, rule) == want, (i, n, n_min, n_max)
        counts = bn.PAVABC(n_min, n_max, tail_rule=rule).fit(p, y).counts
        assert counts.tolist() == want
        if i % 2 and c.max() <= n_max - n_min:  # N/20, N/5, no tie group too large to join a small block under
            # n_max: every bin but the last holds n_min rows (other constraints may end in a tail that cannot join
            # the top, as the paper's)
            assert counts[:-1].min(initial=n_min) >= n_min
    # N_max holds first (a review): 200 untied rows, then 900 tied rows; N_min 250, N_max 1,000
    p = np.r_[np.linspace(0.01, 0.2, 200), np.full(900, 0.25)]
    y = (np.random.default_rng(2).random(p.size) < p).astype(int)
    assert bn.PAVABC(250, 1000).fit(p, y).counts.max() <= 1000
    d = np.round(np.random.default_rng(0).beta(2, 5, 5_000), 2)
    yy = (np.random.default_rng(1).random(5_000) < d).astype(int)
    assert bn.PAVABC().fit(d, yy).counts[:-1].min() >= 250
