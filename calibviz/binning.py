"""Binning schemes: partitions of the predictions of a binary view into bins.

Every scheme is a small frozen dataclass with ``.fit(y_prob, y_true=None,
sample_weight=None) -> Bins``. A :class:`Bins` holds the bin edges, the bin id
of every sample and the bin sizes; it is what :mod:`calibviz.summary`
aggregates into per-bin sufficient statistics (DESIGN.md §2).

Two kinds of scheme exist:

* *edge-based* (:class:`Uniform`, :class:`Custom`): a sample's bin depends on
  its score only, bins are ``[e_b, e_{b+1})`` with the last bin closed;
* *rank-based* (:class:`EqualMass`, :class:`PAVA`, :class:`PAVABC`,
  :class:`MedianVariance`): bins are runs of the predictions sorted by score.
  The reported edges are midpoints between neighbouring sorted predictions
  (outer edges 0 and 1).

Tie rule of every scheme (DESIGN.md §4): rows with the same score always fall
in the same bin. A cut that would split a run of equal scores moves to an edge
of the run, so labels (and row order) never decide bin membership; with
heavy ties equal-mass bins hold as equal a mass as the ties allow.

Zero weights (DESIGN.md §4): a row with weight 0 is an absent row. Schemes are
fitted on the rows of positive weight; a zero-weight row gets the bin its score
falls in (so ``Bins.index`` covers every input row) but is not counted in
``Bins.counts``.
"""
from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

import numpy as np

from .errors import InputError
from .validation import check_binary
from ._lazy import lazy

isotonic_regression = lazy("scipy.optimize", "isotonic_regression")

__all__ = [
    "Bins",
    "Scheme",
    "Uniform",
    "EqualMass",
    "PAVA",
    "PAVABC",
    "pavabc_sizes",
    "MedianVariance",
    "Custom",
    "Auto",
    "auto",
    "get_scheme",
    "SCHEME_NAMES",
]


@dataclass(frozen=True, eq=False)
class Bins:
    """A fitted partition of n predictions into B bins.

    Attributes
    ----------
    edges : ndarray of float64, shape (B+1,)
        Non-decreasing bin boundaries; ``edges[0]`` and ``edges[-1]`` are the
        outer limits (0 and 1 unless a :class:`Custom` scheme says otherwise).
    index : ndarray of int64, shape (n,)
        Bin id (0..B-1) of every sample, in the order of the input rows.
    counts : ndarray of int64, shape (B,)
        Number of samples per bin (empty bins have 0).
    scheme : str
        Short description of the scheme that produced the bins.
    """

    edges: np.ndarray
    index: np.ndarray
    counts: np.ndarray
    scheme: str = ""

    @property
    def n_bins(self) -> int:
        """Number of bins B (including empty ones)."""
        return int(self.counts.shape[0])

    @property
    def lower(self) -> np.ndarray:
        """Lower edge of each bin, shape (B,)."""
        return self.edges[:-1]

    @property
    def upper(self) -> np.ndarray:
        """Upper edge of each bin, shape (B,)."""
        return self.edges[1:]


# ----------------------------------------------------------------------------
# shared helpers


def _validate(y_prob, y_true, sample_weight, *, need_y: bool = False):
    """Validated (p, y or None, w or None) through the shared checks."""
    if y_true is None:
        if need_y:
            raise InputError("this binning scheme needs y_true (the observed labels); pass fit(y_prob, y_true).")
        arr = np.asarray(y_prob)
        n = arr.shape[0] if arr.ndim >= 1 else 1
        _, p, w = check_binary(np.zeros(n), arr, sample_weight, drop_zero_weight=False)
        return p, None, w
    y, p, w = check_binary(y_true, y_prob, sample_weight, drop_zero_weight=False)
    return p, y, w


def _sort_order(p: np.ndarray) -> np.ndarray:
    """Permutation sorting the scores (stable: equal scores keep row order, which no result depends on)."""
    return np.argsort(p, kind="stable")


def _edges_from_starts(ps: np.ndarray, starts: np.ndarray, lo: float = 0.0, hi: float = 1.0) -> np.ndarray:
    """Edges [lo, midpoints at internal block starts, hi] for sorted scores ``ps``.

    ``starts`` are the sorted positions where bins 1..B-1 begin. A start at 0
    (empty leading bins) gives ``lo``; a start at n gives ``hi``.
    """
    n = ps.shape[0]
    starts = np.asarray(starts, dtype=np.int64)
    mid = np.empty(starts.shape[0], dtype=np.float64)
    inner = (starts > 0) & (starts < n)
    s = starts[inner]
    mid[inner] = 0.5 * (ps[s - 1] + ps[s])
    mid[starts <= 0] = lo
    mid[starts >= n] = hi
    return np.concatenate(([lo], mid, [hi]))


def _bins_from_sizes(order: np.ndarray, ps: np.ndarray, sizes, scheme: str) -> Bins:
    """Bins from consecutive block sizes of the sorted samples."""
    sizes = np.asarray(sizes, dtype=np.int64)
    n = order.shape[0]
    bin_of_sorted = np.repeat(np.arange(sizes.shape[0], dtype=np.int64), sizes)
    index = np.empty(n, dtype=np.int64)
    index[order] = bin_of_sorted
    starts = np.cumsum(sizes)[:-1]
    return Bins(edges=_edges_from_starts(ps, starts), index=index, counts=sizes, scheme=scheme)


def _check_int(value, name: str, minimum: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise InputError(f"{name} must be an integer >= {minimum}, got {value!r}.")
    return int(value)


class Scheme:
    """Base class: ``fit`` validates the inputs, ``_fit`` works on clean arrays."""

    needs_labels = False
    #: whether ``fit`` sorts the scores (a pass when they come sorted: bootstrap resamples listed by score)
    sorts_scores = False

    def fit(self, y_prob, y_true=None, sample_weight=None) -> Bins:
        """Fit the scheme on predictions (and labels where needed).

        Parameters
        ----------
        y_prob : array-like of shape (n,)
            Predicted probabilities of the positive class, in [0, 1].
        y_true : array-like of shape (n,), optional
            Labels in {0, 1}; required by PAVA and PAVA-BC.
        sample_weight : array-like of shape (n,), optional
            Non-negative weights.

        Returns
        -------
        Bins
        """
        p, y, w = _validate(y_prob, y_true, sample_weight, need_y=self.needs_labels)
        if w is None or w.all():
            return self._fit(p, y, w)
        # weight 0 = absent row: fit on the others, then give each absent row the bin its score falls in
        keep = w > 0
        bins = self._fit(p[keep], None if y is None else y[keep], w[keep])
        index = np.empty(p.shape[0], dtype=np.int64)
        index[keep] = bins.index
        index[~keep] = np.clip(np.searchsorted(bins.edges, p[~keep], side="right") - 1, 0, bins.n_bins - 1)
        return Bins(edges=bins.edges, index=index, counts=bins.counts, scheme=bins.scheme)

    def _fit(self, p, y, w) -> Bins:  # pragma: no cover - abstract
        raise NotImplementedError


# ----------------------------------------------------------------------------
# edge-based schemes


_CHUNK = 1 << 16  # rows per block of chunked passes: temporaries stay in cache


def _uniform_index(p: np.ndarray, n_bins: int):
    """(index, counts): min(floor(p*B), B-1), corrected so that p == k/B lands in bin k exactly.

    Works in chunks of ``_CHUNK`` rows so that the temporaries stay in cache.
    """
    idx = np.empty(p.shape[0], dtype=np.intp)
    counts = np.zeros(n_bins, dtype=np.int64)
    chunk = _uniform_chunker(n_bins)
    for s in range(0, p.shape[0], _CHUNK):
        i = chunk(p[s:s + _CHUNK], idx[s:s + _CHUNK])
        counts += np.bincount(i, minlength=n_bins)
    return idx, counts


def _uniform_chunker(n_bins: int):
    """Function writing the Uniform bin ids of one chunk of scores into ``out`` (and returning it).

    Float arithmetic throughout (vectorised; float->int64 casts and integer
    gathers are several times slower): f = floor(p*B) capped at B-1, then
    compared with the float edges. ``f / B`` is exactly the edge ``k/B`` of
    ``np.arange(B + 1) / B`` (same correctly rounded division of the same
    integer), so the round-off correction matches the edges bit for bit.
    """

    def index(pc: np.ndarray, out: np.ndarray) -> np.ndarray:
        f = pc * n_bins
        np.floor(f, out=f)
        np.minimum(f, n_bins - 1, out=f)
        # p*B can round across an integer; compare against the float edges k/B instead
        below = pc < f / n_bins
        if below.any():
            f -= below
        above = (pc >= (f + 1) / n_bins) & (f < n_bins - 1)
        if above.any():
            f += above
        np.copyto(out, f, casting="unsafe")
        return out

    return index


@dataclass(frozen=True)
class Uniform(Scheme):
    """Equal-width bins ``[k/B, (k+1)/B)``, the last bin closed at 1.

    Parameters
    ----------
    n_bins : int, default 15
        Number of bins B.

    Notes
    -----
    The bin of a score is ``min(floor(p*B), B-1)``, corrected for float
    round-off so that a score equal to the edge ``k/B`` (as computed in
    floating point) belongs to bin k, e.g. 0.3 with B = 10 is bin 3 and 1.0
    is in the last bin (DESIGN.md §4). Costs O(n), no sort.

    References
    ----------
    Naeini, Cooper & Hauskrecht (2015), "Obtaining well calibrated probabilities
    using Bayesian binning", AAAI, eq. for ECE with equal-width bins.

    Examples
    --------
    >>> Uniform(10).fit([0.0, 0.3, 0.99, 1.0]).index.tolist()
    [0, 3, 9, 9]
    """

    n_bins: int = 15

    def __post_init__(self):
        _check_int(self.n_bins, "n_bins", 1)

    def _fit(self, p, y, w) -> Bins:
        B = self.n_bins
        idx, counts = _uniform_index(p, B)
        edges = np.arange(B + 1, dtype=np.float64) / B
        return Bins(edges=edges, index=idx, counts=counts, scheme=f"uniform({B})")


@dataclass(frozen=True)
class Custom(Scheme):
    """User-given edges; bins ``[e_b, e_{b+1})`` with the last bin closed.

    Parameters
    ----------
    edges : array-like of shape (B+1,)
        Strictly increasing finite edges covering every score to be binned
        (usually starting at 0 and ending at 1).

    Examples
    --------
    >>> Custom([0, 0.5, 1]).fit([0.1, 0.5, 1.0]).index.tolist()
    [0, 1, 1]
    """

    edges: tuple = field(default=(0.0, 0.5, 1.0))

    def __post_init__(self):
        e = np.asarray(self.edges, dtype=np.float64)
        if e.ndim != 1 or e.shape[0] < 2:
            raise InputError("Custom edges must be a 1-D sequence of at least 2 numbers, e.g. [0, 0.5, 1].")
        if not np.isfinite(e).all() or not (np.diff(e) > 0).all():
            raise InputError(f"Custom edges must be finite and strictly increasing, got {e.tolist()}.")
        object.__setattr__(self, "edges", tuple(e.tolist()))

    def _fit(self, p, y, w) -> Bins:
        e = np.asarray(self.edges, dtype=np.float64)
        B = e.shape[0] - 1
        out = (p < e[0]) | (p > e[-1])
        if out.any():
            raise InputError(
                f"{int(out.sum())} predictions lie outside the custom edges [{e[0]:g}, {e[-1]:g}]; "
                "extend the first/last edge (e.g. to 0 and 1)."
            )
        idx = np.minimum(np.searchsorted(e, p, side="right") - 1, B - 1).astype(np.int64)
        counts = np.bincount(idx, minlength=B).astype(np.int64)
        return Bins(edges=e, index=idx, counts=counts, scheme=f"custom({B})")


# ----------------------------------------------------------------------------
# rank-based schemes


_HIST_BUCKETS = 1 << 16  # value buckets of the histogram selection
_HIST_MIN = 1 << 17  # below this many rows, np.partition / searchsorted are as fast


class _Histogram:
    """Bucket id ``min(floor(p * H), H - 1)`` of every score and the bucket counts.

    The bucket id is non-decreasing in p, so bucket order is value order:
    order statistics and ranks against a few values only need exact work
    inside the few buckets that hold those values.
    """

    def __init__(self, p: np.ndarray):
        H = _HIST_BUCKETS
        self.bucket = np.empty(p.shape[0], dtype=np.intp)
        self.counts = np.zeros(H, dtype=np.int64)
        for s in range(0, p.shape[0], _CHUNK):
            b = self.bucket[s:s + _CHUNK]
            self.of(p[s:s + _CHUNK], b)
            self.counts += np.bincount(b, minlength=H)

    @staticmethod
    def of(values: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Bucket ids of ``values`` (capped in float before the cast: faster, same result)."""
        f = np.minimum(values * _HIST_BUCKETS, _HIST_BUCKETS - 1)
        out = np.empty(values.shape[0], dtype=np.intp) if out is None else out
        np.copyto(out, f, casting="unsafe")  # truncation = floor for f >= 0
        return out


def _order_statistics(p: np.ndarray, kth: np.ndarray, hist: _Histogram | None) -> np.ndarray:
    """``np.sort(p)[kth]`` for sorted unique positions, without sorting p.

    With a histogram, only the scores of the buckets holding those ranks are
    sorted (O(N) overall); if they are too many (heavy ties), np.partition.
    """
    if hist is None:
        return np.partition(p, kth)[kth]
    kb = _rank_buckets(hist.counts, kth)
    if hist.counts[np.unique(kb)].sum() > p.shape[0] // 4:
        return np.partition(p, kth)[kth]
    need = np.zeros(hist.counts.shape[0], dtype=bool)
    need[kb] = True
    return _select_in_buckets(p[need[hist.bucket]], hist.counts, kth, kb)


def _rank_buckets(counts: np.ndarray, kth: np.ndarray) -> np.ndarray:
    """Bucket holding each sorted position ``kth``, from the bucket counts."""
    return np.searchsorted(np.cumsum(counts), kth, side="right")


def _select_in_buckets(values, counts, kth, kb) -> np.ndarray:
    """Sorted positions ``kth`` of all scores, given the scores of exactly the buckets ``kb``."""
    sub = np.sort(values)  # bucket order is value order
    buckets = np.unique(kb)
    offset = np.cumsum(counts[buckets]) - counts[buckets]  # start of each bucket in sub
    before = np.cumsum(counts)[kb] - counts[kb]  # ranks below each bucket
    return sub[offset[np.searchsorted(buckets, kb)] + (kth - before)]


def _count_below(v: np.ndarray, p: np.ndarray, hist: _Histogram | None):
    """(``np.searchsorted(v, p, "left")``, rows that may equal some v) for sorted v.

    With a histogram, a score in a bucket that holds no v has the same count
    as its whole bucket (a per-bucket table); only the others are searched.
    """
    if hist is None:
        return np.searchsorted(v, p, side="left"), np.arange(p.shape[0])
    bv = _Histogram.of(v)
    table = np.searchsorted(bv, np.arange(_HIST_BUCKETS), side="left")
    table[bv] = -1  # buckets holding a cut value: exact search below
    pos = np.empty(p.shape[0], dtype=np.intp)
    for s in range(0, p.shape[0], _CHUNK):  # chunked gather: the table stays in cache
        np.take(table, hist.bucket[s:s + _CHUNK], out=pos[s:s + _CHUNK])
    maybe = np.flatnonzero(pos < 0)
    pos[maybe] = np.searchsorted(v, p[maybe], side="left")
    return pos, maybe


def _equal_mass_cuts(N: int, B: int) -> np.ndarray:
    """First sorted position of bins 1..B-1: floor(j*N/B) (TCE reference convention)."""
    return (np.arange(1, B, dtype=np.int64) * N) // B


def _snap_to_runs(cuts: np.ndarray, run_start: np.ndarray, run_end: np.ndarray) -> np.ndarray:
    """Cut positions moved out of runs of equal scores (the tie rule, DESIGN.md §4).

    ``cuts[j]`` is a first sorted position of a bin; ``run_start[j]`` /
    ``run_end[j]`` delimit the run of scores equal to the score at that
    position. A cut strictly inside its run moves to the nearer end of the run
    (the lower end when both are as near), so bins stay as equal as the ties
    allow and never split a tie.
    """
    inside = (cuts > run_start) & (cuts < run_end)
    down = cuts - run_start <= run_end - cuts
    return np.where(inside, np.where(down, run_start, run_end), cuts)


def _equal_mass_ties(cuts: np.ndarray, v: np.ndarray, row_counts: np.ndarray, tied_pos: np.ndarray):
    """Tie-safe equal-mass cuts and the bins of the rows whose score equals a cut value.

    Parameters
    ----------
    cuts : (B-1,) first sorted positions of bins 1..B-1, ``floor(j N / B)``.
    v : (B-1,) the score at each cut position (non-decreasing).
    row_counts : (B,) number of rows with ``#{j: v_j < p} = b`` for each b.
    tied_pos : (m,) ``#{j: v_j < p}`` of the m rows whose score equals some v_j.

    Returns
    -------
    (new_cuts, tied_bins): cut positions after :func:`_snap_to_runs` and the
    bin of each tied row. A row whose score equals no cut value stays in bin
    ``#{j: v_j < p}``: moving a cut to an end of its run never crosses it.
    """
    run_end = np.cumsum(row_counts)[: v.shape[0]]  # rows with p <= v_j
    first = np.searchsorted(v, v, side="left")  # first cut holding the same value
    equal = np.bincount(tied_pos, minlength=v.shape[0])[first]  # rows with p == v_j
    run_start = run_end - equal
    new_cuts = _snap_to_runs(cuts, run_start, run_end)
    # a tied row sits at its run's start: it is in the bin of the cuts at or below that position
    return new_cuts, np.searchsorted(new_cuts, run_start[tied_pos], side="right")


@dataclass(frozen=True)
class EqualMass(Scheme):
    """Equal-count ("quantile", adaptive) bins on the sorted predictions.

    Sorted predictions are split at positions ``floor(j*N/B)``, j = 1..B-1
    (the TCE reference convention), so bin sizes differ by at most one.

    Parameters
    ----------
    n_bins : int, default 15
        Number of bins B. With fewer predictions than bins some bins are empty.

    Notes
    -----
    * Reported edges are midpoints between neighbouring sorted predictions at
      the cut positions, outer edges 0 and 1.
    * Tied scores never straddle a boundary: a cut that falls inside a run of
      equal scores moves to the nearer end of the run (the lower end when
      both are as near), so bins hold as equal a mass as the ties allow; with
      heavy ties some bins are larger and some empty (e.g. 100 equal scores
      in 2 bins give sizes 0 and 100). Labels never decide bin membership.
    * Sizes count rows (of positive weight), not weights.
    * O(N), no full sort: order statistics and ranks from a 65536-bucket
      histogram of the scores, exact work only inside the buckets holding a
      cut value (``np.partition`` on small inputs).

    References
    ----------
    Nixon et al. (2019), "Measuring calibration in deep learning" (adaptive
    calibration error); Matsubara et al. (2023), TCE paper, quantile bins.

    Examples
    --------
    >>> EqualMass(2).fit([0.9, 0.1, 0.4, 0.2]).counts.tolist()
    [2, 2]
    """

    n_bins: int = 15

    def __post_init__(self):
        _check_int(self.n_bins, "n_bins", 1)

    def _fit(self, p, y, w) -> Bins:
        B, N = self.n_bins, p.shape[0]
        name = f"equal_mass({B})"
        if B == 1:
            return Bins(np.array([0.0, 1.0]), np.zeros(N, np.int64), np.array([N], np.int64), name)
        cuts = _equal_mass_cuts(N, B)
        hist = _Histogram(p) if N >= _HIST_MIN else None

        def around(c):  # sorted positions c - 1 and c (clipped to the data) and the scores there
            kth = np.unique(np.clip(np.concatenate((c - 1, c)), 0, N - 1))
            return kth, _order_statistics(p, kth, hist)

        kth, vals = around(cuts)
        v = vals[np.searchsorted(kth, cuts)]  # score at each cut position (non-decreasing)
        # A score that differs from every cut value is in bin #{v_j < p}.
        idx, maybe = _count_below(v, p, hist)
        t = maybe[v[np.minimum(idx[maybe], B - 2)] == p[maybe]]  # rows whose score equals a cut value
        if t.size:
            snapped, idx[t] = _equal_mass_ties(cuts, v, np.bincount(idx, minlength=B), idx[t])
            if not np.array_equal(snapped, cuts):
                cuts = snapped
                kth, vals = around(cuts)
        at = vals[np.searchsorted(kth, np.clip(cuts, 0, N - 1))]
        before = vals[np.searchsorted(kth, np.clip(cuts - 1, 0, N - 1))]
        mid = np.where(cuts <= 0, 0.0, np.where(cuts >= N, 1.0, 0.5 * (before + at)))
        edges = np.concatenate(([0.0], mid, [1.0]))
        counts = np.diff(np.r_[0, cuts, N]).astype(np.int64)  # bin b = sorted positions cuts[b-1]..cuts[b]-1
        return Bins(edges=edges, index=idx, counts=counts, scheme=name)


def _group_sorted(ps: np.ndarray):
    """Start positions and sizes of runs of equal values in sorted ``ps``."""
    n = ps.shape[0]
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    starts = np.flatnonzero(np.r_[True, ps[1:] != ps[:-1]])
    sizes = np.diff(np.r_[starts, n])
    return starts, sizes


@dataclass(frozen=True)
class PAVA(Scheme):
    """Isotonic-regression blocks: the optimal monotone bins (TCE paper, Prop. 1).

    Labels sorted by prediction are fitted by weighted least-squares isotonic
    regression (pool-adjacent-violators); each constant block of the fit is a
    bin. Among all partitions into consecutive runs whose observed rates are
    non-decreasing, these bins minimise the total within-bin variance
    ``sum_b (N_b/N) Var(y in b)`` (eq. 8-9 of the paper).

    Notes
    -----
    Equal scores are never split: the regression runs on groups of equal
    scores (one observation per distinct score, weighted by its total weight),
    via :func:`scipy.optimize.isotonic_regression`. Adjacent blocks with equal
    means are pooled, so observed rates are strictly increasing across bins.
    Needs ``y_true``. O(N log N) for the sort plus O(G) for G distinct scores.

    References
    ----------
    Matsubara, Tax, Mudd & Guy (2023), "TCE: A test-based approach to measuring
    calibration error", UAI, Definition 3, eq. (8)-(11), Proposition 1;
    Dimitriadis, Gneiting & Jordan (2021), CORP reliability diagrams.

    Examples
    --------
    >>> b = PAVA().fit([0.1, 0.2, 0.3, 0.4], [0, 1, 0, 1])
    >>> b.counts.tolist(), b.edges.tolist()
    ([1, 2, 1], [0.0, 0.15000000000000002, 0.35, 1.0])
    """

    needs_labels = True
    sorts_scores = True

    def _fit(self, p, y, w) -> Bins:
        order = _sort_order(p)
        ps = p[order]
        ww = np.ones_like(ps) if w is None else w[order]
        g_start, g_size = _group_sorted(ps)
        g_w = np.add.reduceat(ww, g_start)
        g_wy = np.add.reduceat(ww * y[order], g_start)
        starts = g_start[pava_block_starts(g_w, g_wy)]
        sizes = np.diff(np.r_[starts, ps.shape[0]])
        return _bins_from_sizes(order, ps, sizes, "pava")


def pava_block_starts(group_weight: np.ndarray, group_label_sum: np.ndarray) -> np.ndarray:
    """First group of each PAVA block, for groups of equal scores sorted by score (shape (G,) -> (B,)).

    Weighted least-squares isotonic regression of the groups' rates; adjacent
    blocks with equal fitted means are pooled, and zero-weight groups (no
    information) join the block on their left (leading ones the first block).
    Shared by :class:`PAVA` (groups of rows) and the scans (groups of fine
    buckets, :func:`calibviz.scan.refine.pava_bins`).
    """
    pos = group_weight > 0
    gw = group_weight[pos]
    fit = isotonic_regression(group_label_sum[pos] / gw, weights=gw)
    val = fit.x[fit.blocks[:-1]]
    keep = np.r_[True, val[1:] != val[:-1]]
    first = np.flatnonzero(pos)[fit.blocks[:-1][keep]]
    first[0] = 0
    return first


def _pavabc_sizes(ys, ws, cs, n_min: int, n_max: int, tail_rule: str):
    """Block sizes (rows) of PAVA-BC (Algorithm 2) on groups of equal scores sorted by score.

    ``ys`` are the groups' (weighted) label sums, ``ws`` their weight sums and
    ``cs`` their row counts (Python lists for speed; all ones when no score is
    tied, which is the paper's row-by-row algorithm). A group is pushed whole,
    so tied scores never straddle a block boundary. Sizes and the N_min/N_max
    constraints count rows. The tail is the shortest run of last groups
    holding at least ``n_min`` rows. Blocks are kept on a stack; each group is
    pushed once and each merge pops one block, so the loop is O(G) amortised.

    TIE_RULE: the paper pools the top block with the next row while both fit
    under N_min, i.e. while the top holds fewer than N_min rows. On groups the
    rule is the latter: a top of fewer than N_min rows takes the next group
    whole if both fit under N_max, so every block left behind holds at least
    N_min rows unless a group too large to join it under N_max follows it.
    (Pooling only while both fit under N_min left blocks of 159-226 rows with
    N_min = 250 on scores rounded to 2 decimals, a walk-through: a group that
    did not fit beside a 230-row top started a block of its own. Pooling
    whatever N_max made one block of 1,100 rows of 200 rows and a tie of 900
    with N_max = 1,000, a review: N_max holds first, as the paper's rule
    never exceeds it.) On untied rows the rules are the paper's.
    """
    tail, stop = 0, len(cs)
    while stop and tail < n_min:
        stop -= 1
        tail += cs[stop]
    S, W, C = [], [], []  # label sums, weight sums, row counts of the blocks below the top
    if stop:
        # the top block lives in locals (ts, tw, tc): most groups only touch it, which halves the loop's cost
        ts, tw, tc = ys[0], ws[0], cs[0]
        for s, w, c in zip(ys[1:stop], ws[1:stop], cs[1:stop]):
            tot = tc + c
            # the group merges into the top if both fit under n_max and the top holds fewer than n_min rows
            # (TIE_RULE) or the top's mean is >= the group's (a violation or a tie); otherwise it becomes the new top
            if tot > n_max or (tc >= n_min and ts * w < s * tw):
                S.append(ts)
                W.append(tw)
                C.append(tc)
                ts, tw, tc = s, w, c
                continue
            ts, tw, tc = ts + s, tw + w, tot
            while C:  # the grown top merges down by the same rule
                tot = C[-1] + tc
                if tot > n_min and (tot > n_max or S[-1] * tw < ts * W[-1]):
                    break
                ts, tw, tc = ts + S.pop(), tw + W.pop(), tot
                C.pop()
        S.append(ts)
        W.append(tw)
        C.append(tc)
    return _attach_tail(C, tail, n_min, n_max, tail_rule)


def _attach_tail(C, tail: int, n_min: int, n_max: int, tail_rule: str):
    """Algorithm 2's last step: the final ``n_min`` rows join the last block or form one."""
    if n_min > 0:
        if C and ((C[-1] + tail <= n_max) if tail_rule == "paper" else (2 * n_min <= n_max)):
            C[-1] += tail
        else:
            C.append(tail)
    return C


class _PrefixSums:
    """Prefix sums of non-negative floats whose differences (the sums of runs) are accurate to the last bits of
    each run's own sum, not of the total: a plain cumsum's differences are off by up to ~G 2^-53 of the total
    (a group of weight 1e-8 after weights of 1e9 vanished, and a run of positive rows lost N = 0).

    Each value splits into a multiple of u (a power of two, ~2^-52 of the total; those multiples sum exactly
    in int64) and a remainder below u / 2 (summed in float64, its error ~G^2 2^-105 of the total). ``exact``:
    no remainder (integers, or multiples of u): then ``H`` alone holds the sums, in units of u.
    """

    def __init__(self, x: np.ndarray):
        total = float(np.sum(x))
        self.u = math.ldexp(1.0, math.frexp(total)[1] - 52) if total > 0 else 1.0
        hi = np.rint(x / self.u)
        self.H = np.zeros(x.shape[0] + 1, dtype=np.int64)
        np.cumsum(hi.astype(np.int64), out=self.H[1:])
        rest = x - hi * self.u
        self.exact = not rest.any()
        self.F = self.H * self.u  # exact: multiples of u below 2^53 u, and so are their differences
        self.L = None
        if not self.exact:
            self.L = np.zeros(x.shape[0] + 1)
            np.cumsum(rest, out=self.L[1:])

    def diff(self, a, b):
        """Sum of the values [a, b) (indices or index arrays b)."""
        if self.L is None:
            return self.F[b] - self.F[a]
        return (self.F[b] - self.F[a]) + (self.L[b] - self.L[a])


def _pavabc_sizes_grouped(s, neg, c, n_min: int, n_max: int, tail_rule: str):
    """Same blocks as :func:`_pavabc_sizes` on any groups (weights, tied scores), by runs instead of group by group.

    ``s``, ``neg``: weight of the positive and of the negative rows of each
    group (float64; every group weighs more than 0), ``c``: their rows
    (int64). Block means compare as S_A N_B >= S_B N_A (S, N: the blocks'
    positive and negative weights, each a difference of prefix sums), which
    decides the ties the data make exactly: a run of positive rows has N = 0
    and a run of negative rows S = 0 whatever the rounding of the prefix
    sums. Integral weights (unweighted rows, tied rows, bootstrap
    multiplicities, integer weights) compare exactly in integers, as the
    stack loop does. Other weights give each block's S and N to the last
    bits of its own sums (:class:`_PrefixSums`), so only two block means
    equal to ~1e-16 may be ordered differently from the loop's running
    sums, which round too (a review's search found the loop, not the runs,
    off the exact rational answer there, e.g. with a weight of
    2.0000000000000018 beside 2).

    The stack loop's rule ("merge adjacent blocks A, B iff |A| + |B| <= n_min,
    or |A| + |B| <= n_max and mean(A) >= mean(B)") is followed in runs:

    * A frozen block's neighbour on the right always contains the group whose
      arrival froze it, so their rows exceed n_min: merges with frozen blocks
      are never forced, only decided by size and means.
    * While the top T = [t, e) holds fewer than n_min rows, groups that fit
      with it under n_max join unconditionally (TIE_RULE of
      :func:`_pavabc_sizes`; one that does not ends T); the first that lets T
      merge into the block below is found with one vectorised test per run.
    * Otherwise group j joins iff mean(T + j) <= mean(T), and a group that
      does not starts an excursion E that joins groups unconditionally while
      it holds fewer than n_min rows and merges back when mean(T + E) <=
      mean(T) (an excursion of more rows is taken as the top from its start,
      group by group: a check that errs only towards that exact path). Both
      are the records of the running minimum of mean([t, j]); T absorbs up
      to each record (if within n_max), checks its own merge below, and is
      frozen when an excursion outgrows n_min before the next record (E then
      continues as the top, by the same rules).

    Floating-point screens (candidates within 1e-9 of a record or a merge)
    are confirmed exactly one by one, so runs never decide a near-tie.
    """
    G = c.shape[0]
    Cc = np.zeros(G + 1, dtype=np.int64)
    np.cumsum(c, out=Cc[1:])
    P, Q = _PrefixSums(s), _PrefixSums(neg)
    exact = P.exact and Q.exact

    stop = int(np.searchsorted(Cc, Cc[G] - n_min, side="right")) - 1 if n_min > 0 else G
    stop = max(stop, 0)  # the tail: the shortest run of last groups holding at least n_min rows

    def seg(a, b):  # (rows, positive weight, negative weight) of groups [a, b)
        rows = int(Cc[b]) - int(Cc[a])
        if exact:  # multiples of each grid unit: the units cancel from S_A N_B >= S_B N_A, integers compare exactly
            return rows, int(P.H[b]) - int(P.H[a]), int(Q.H[b]) - int(Q.H[a])
        return rows, float(P.diff(a, b)), float(Q.diff(a, b))

    def mean_ge(a, m, b):  # mean of [a, m) >= mean of [m, b), as S_A N_B >= S_B N_A
        _, sa, na = seg(a, m)
        _, sb, nb = seg(m, b)
        return sa * nb >= sb * na

    def merges(a, m, b):  # the rule for adjacent blocks [a, m) and [m, b)
        tot = int(Cc[b]) - int(Cc[a])
        return tot <= n_min or (tot <= n_max and mean_ge(a, m, b))

    starts = []  # frozen blocks: [starts[k], starts[k + 1]), the last one ending at the top's start

    def merge_down(t, e):
        while starts and merges(starts[-1], t, e):
            t = starts.pop()
        return t

    def first_merge_below(t, lo, hi):
        """First j in [lo, hi) such that the top [t, j + 1) merges into the frozen block below, else None."""
        if not starts:
            return None
        b = starts[-1]
        rf = int(Cc[t]) - int(Cc[b])
        j = np.arange(lo, hi)
        rows = Cc[j + 1] - Cc[t]
        lhs, rhs = P.diff(b, t) * Q.diff(t, j + 1), P.diff(t, j + 1) * Q.diff(b, t)
        near = (rows + rf <= n_max) & (lhs - rhs >= -1e-9 * (np.abs(lhs) + np.abs(rhs)))
        for k in np.flatnonzero(near):
            if merges(b, t, int(j[k]) + 1):
                return int(j[k])
        return None

    if stop == 0:
        return _attach_tail([], int(Cc[G]), n_min, n_max, tail_rule)
    t, e = 0, 1
    while e < stop:
        if Cc[e] - Cc[t] < n_min:  # forced joins up to f (TIE_RULE): groups [e, f) find the top under n_min rows
            f = min(int(np.searchsorted(Cc, Cc[t] + n_min, side="left")), stop)
            # ... and fit under n_max with it: a group that does not ends the top, under n_min as it is
            cap = max(int(np.searchsorted(Cc, Cc[t] + n_max, side="right")) - 1, e)
            blocked = cap < f
            f = min(f, cap)
            lo, step, j = e, 1024, None
            while lo < f:
                hi = min(f, lo + step)
                j = first_merge_below(t, lo, hi)
                if j is not None:
                    break
                lo, step = hi, 2 * step
            if j is not None and lo < f:
                e = j + 1
                t = merge_down(t, e)
            else:
                e = f
                if blocked and e < stop:
                    starts.append(t)
                    t, e = e, e + 1
            continue
        # records of the running minimum of mean([t, j]) from group e on
        prev = e - 1  # the top ends after prev; a pending excursion starts at prev + 1
        cur, step = e, 1024
        s_top = P.diff(t, e)
        q_min = s_top / (s_top + Q.diff(t, e))
        restart = None
        while restart is None and cur < stop:
            hi = min(stop, cur + step)
            j = np.arange(cur, hi)
            st = P.diff(t, j + 1)
            q = st / (st + Q.diff(t, j + 1))
            run = np.fmin.accumulate(np.r_[q_min, q])  # a NaN (a run whose weights vanished) carries no minimum
            q_min = run[-1]
            for k in np.flatnonzero(q <= run[:-1] * (1 + 1e-9)):
                jj, a = int(j[k]), prev + 1
                if jj > a and Cc[jj + 1] - Cc[a] > n_min:
                    restart = a  # the excursion outgrew n_min before this record: the top is final
                    break
                if not mean_ge(t, a, jj + 1):  # the excursion [a, jj] merges back: mean(top) >= its mean
                    continue
                if Cc[jj + 1] - Cc[t] > n_max:
                    restart = a
                    break
                prev = jj
                if starts and merges(starts[-1], t, jj + 1):
                    t = merge_down(t, jj + 1)
                    restart = -1  # the top grew below: start over from jj + 1 with its new start
                    break
            if restart is None:
                a = prev + 1
                if a < hi and Cc[hi] - Cc[a] > n_min:
                    restart = a  # the pending excursion left the forced phase without a record
                cur, step = hi, 2 * step
        if restart == -1:  # the top merged into the block below at prev: go on from prev + 1
            e = prev + 1
            continue
        if restart is None:  # the end of the groups: a pending excursion (one forced block) is the last top
            if prev + 1 < stop:
                starts.append(t)
                t = prev + 1
            e = stop
            continue
        starts.append(t)  # the top is final; the excursion from `restart` on is the new top
        t, e = restart, restart + 1
    bounds = np.array(starts + [t, stop], dtype=np.int64)
    C = np.diff(Cc[bounds]).tolist()
    return _attach_tail(C, int(Cc[G] - Cc[stop]), n_min, n_max, tail_rule)


_VECTOR_MIN = 256  # below this n_min the event loop below has too many events; use the stack loop
_GROUPED_MIN = 1 << 15  # fewer groups: the stack loop is as fast as the runs of _pavabc_sizes_grouped


def _pavabc_sizes_unweighted(y, n_min: int, n_max: int, tail_rule: str):
    """Same blocks as :func:`_pavabc_sizes` for unweighted 0/1 labels, in chunks.

    Invariant of the stack loop: every block below the top has at least
    max(n_min, 1) rows (a new block is only pushed when the top is that
    large), so a merge with it is decided by size <= n_max and the means.
    The top block T = [t, e) then evolves in two phases:

    * small (|T| < n_min): rows join unconditionally; after each join T
      merges into the block below iff size and means allow (first such row
      found with one vectorised test);
    * large (|T| >= n_min): a row with y <= mean(T) joins; otherwise an
      excursion E starts, grows unconditionally while |E| <= n_min, and
      merges back at the first row where mean(E) <= mean(T), i.e. where the
      running mean of [t, j] reaches a new (weak) minimum. So T absorbs rows
      exactly up to the successive running-minimum records of the mean of
      [t, j], as long as records are at most n_min apart and |T| <= n_max;
      at each record T may merge with the block below. Otherwise E escapes
      and becomes the new top.

    Each event (merge, escape) costs one vectorised pass over at most
    ``2*n_min + 4096`` rows; there are O(N / n_min) events. Means are
    compared exactly: integer cross-products for merges, and correctly
    rounded quotients of integers below 2**26 for records (equal fractions
    give equal floats, different ones different floats).
    """
    N = y.shape[0]
    P = np.zeros(N + 1, dtype=np.int64)
    np.cumsum(y, out=P[1:])
    stop = N - n_min
    gap = max(n_min, 1)
    chunk = 2 * gap + 4096
    starts, C, S = [], [], []  # frozen blocks below the top: start row, rows, positives

    def merge_down(t, e):
        """Merge the top [t, e) into the blocks below while allowed; new start of the top."""
        c, s = e - t, int(P[e] - P[t])
        while C and C[-1] + c <= n_max and S[-1] * c >= s * C[-1]:
            t = starts.pop()
            c += C.pop()
            s += S.pop()
        return t

    def first_merge(rows, t):
        """First row r (of the sorted candidates) where the top [t, r] may merge below, else None."""
        if not C or not rows.size:
            return None
        size = rows + 1 - t
        ok = (C[-1] + size <= n_max) & (S[-1] * size >= (P[rows + 1] - P[t]) * C[-1])
        i = int(np.argmax(ok))
        return int(rows[i]) if ok[i] else None

    t = e = 0
    while e < stop:
        if e - t < gap:  # small phase
            hi = min(t + gap, stop)
            r = first_merge(np.arange(e, hi), t)
            if r is None:
                e = hi
            else:
                e = r + 1
                t = merge_down(t, e)
            continue
        hi = min(t + n_max, stop, e + chunk)
        rows = np.arange(e, hi)
        mean = (P[e + 1:hi + 1] - P[t]) / (rows + 1 - t)
        run_min = np.minimum.accumulate(np.r_[(P[e] - P[t]) / (e - t), mean])
        rec = rows[mean <= run_min[:-1]]
        bad = np.flatnonzero(np.diff(np.r_[e - 1, rec]) > gap)
        rec = rec[: bad[0]] if bad.size else rec
        r = first_merge(rec, t)
        if r is not None:
            e = r + 1
            t = merge_down(t, e)
            continue
        last = int(rec[-1]) if rec.size else e - 1
        e = last + 1
        if last + gap <= hi - 1 or hi == t + n_max or hi == stop:
            # the pending excursion never merges back: T is final until something merges into it
            starts.append(t)
            C.append(e - t)
            S.append(int(P[e] - P[t]))
            t = e
    if e > t:
        C.append(e - t)
    return _attach_tail(C, N - stop, n_min, n_max, tail_rule)


def pavabc_sizes(n: int, n_min: int | None = None, n_max: int | None = None) -> tuple[int, int]:
    """PAVA-BC's (n_min, n_max) for n samples with the TCE paper's defaults filled in (N/20, N/5), unchecked
    (:meth:`PAVABC.constraints` checks them).

    >>> pavabc_sizes(4000), pavabc_sizes(4000, n_max=10)
    ((200, 800), (200, 10))
    """
    return (n // 20 if n_min is None else n_min, max(n // 5, 1) if n_max is None else n_max)


@dataclass(frozen=True)
class PAVABC(Scheme):
    """PAVA with block-size constraints (TCE paper, Algorithm 2 and 3).

    Parameters
    ----------
    n_min, n_max : int or None
        Minimum / maximum bin size in rows. None gives ``N // 20`` and
        ``N // 5`` (at least 1), which yields 5 to 20 bins, as the paper
        recommends.
    tail_rule : {"paper", "reference"}, default "paper"
        How the last ``n_min`` samples are attached. "paper" (Algorithm 2)
        merges them into the last block iff ``W_B + n_min <= n_max``;
        "reference" reproduces the authors' code, which tests
        ``2 * n_min <= n_max`` and can exceed ``n_max``. They agree on the
        paper's GDA data but not in general: the paper's rule refuses the
        merge when the last block is already large, the reference rule
        merges whenever ``2 * n_min <= n_max`` (true for the defaults N/20,
        N/5), so the last bin can hold up to ``n_max + n_min`` rows. On
        random data with the default constraints they give different bins
        in about 5% of datasets (e.g. TCE 8.4 vs 9.2).

    Notes
    -----
    Labels sorted by prediction are pushed one at a time; adjacent blocks are
    pooled if their combined size is <= n_min, or if it is <= n_max and the
    earlier block's mean is >= the later one's. The block means need not be
    monotone (the paper allows mild violations). Tied scores are pushed as
    one group (the paper's data have no ties, where this is its algorithm
    exactly), so a tie never straddles a boundary and labels never decide bin
    membership; a group larger than ``n_max`` is a block of its own. The tail
    is the shortest run of last groups holding at least ``n_min`` rows.
    With weights, block means are weighted; sizes still count rows.
    If N <= n_min there is a single bin. O(N log N) sort + O(N) stack.

    References
    ----------
    Matsubara, Tax, Mudd & Guy (2023), "TCE: A test-based approach to measuring
    calibration error", UAI, Algorithms 2-3, Section 3.3.

    Examples
    --------
    >>> b = PAVABC(2, 4).fit([.1, .2, .3, .4, .5, .6, .7, .8], [1, 0, 0, 1, 0, 1, 1, 1])
    >>> b.counts.tolist(), b.edges.tolist()
    ([3, 2, 3], [0.0, 0.35, 0.55, 1.0])
    """

    n_min: int | None = None
    n_max: int | None = None
    tail_rule: str = "paper"
    needs_labels = True
    sorts_scores = True

    def __post_init__(self):
        if self.n_min is not None:
            _check_int(self.n_min, "n_min", 0)
        if self.n_max is not None:
            _check_int(self.n_max, "n_max", 1)
        if self.n_min is not None and self.n_max is not None and self.n_max < self.n_min:
            raise InputError(f"PAVABC needs n_min <= n_max, got n_min={self.n_min}, n_max={self.n_max}.",
                             ui_message=f"Largest bin {self.n_max:,} is below Smallest bin {self.n_min:,}: PAVA-BC "
                                        f"cannot form bins. Raise Largest bin to at least {self.n_min:,} or lower "
                                        "Smallest bin (0 for both: rows / 20 and rows / 5) in the sidebar where "
                                        "Binning is PAVA-BC (the Test-based page's default).")
        if self.tail_rule not in ("paper", "reference"):
            raise InputError(f"tail_rule must be 'paper' or 'reference', got {self.tail_rule!r}.")

    def constraints(self, n: int) -> tuple[int, int]:
        """(n_min, n_max) used for n samples."""
        n_min, n_max = pavabc_sizes(n, self.n_min, self.n_max)
        if n_max < n_min:
            given = "n_min" if self.n_min is not None else "n_min (by default rows / 20)"
            raise InputError(f"PAVA-BC on {n:,} rows: the largest bin size n_max = {n_max:,} is below the smallest "
                             f"bin size {given} = {n_min:,}; raise n_max to at least {n_min:,} or lower n_min.")
        return n_min, n_max

    def _fit(self, p, y, w) -> Bins:
        N = p.shape[0]
        n_min, n_max = self.constraints(N)
        name = f"pavabc({n_min},{n_max})"
        order = _sort_order(p)
        ps = p[order]
        if N <= n_min:
            return _bins_from_sizes(order, ps, [N], name)
        ys = y[order]
        g_start, g_size = _group_sorted(ps)
        if w is None:
            sizes = pavabc_group_sizes(np.add.reduceat(ys, g_start), g_size, n_min, n_max, self.tail_rule)
        else:
            ws = w[order]
            sizes = pavabc_group_sizes(np.add.reduceat(ys * ws, g_start), g_size, n_min, n_max, self.tail_rule,
                                       group_weight=np.add.reduceat(ws, g_start))
        return _bins_from_sizes(order, ps, sizes, name)


def pavabc_group_sizes(group_label_sum, group_rows, n_min: int, n_max: int, tail_rule: str = "paper", *,
                       group_weight=None) -> list:
    """Block sizes (rows) of PAVA-BC (Algorithm 2) on groups of tied scores sorted by score.

    Parameters
    ----------
    group_label_sum : array of shape (G,)
        Label sum of each group (weighted: sum of w y).
    group_rows : int array of shape (G,)
        Rows of each group; sizes and the N_min/N_max constraints count rows.
    n_min, n_max : int
    tail_rule : {"paper", "reference"}
    group_weight : array of shape (G,) or None
        Weight sum of each group; None for unweighted rows (block means then
        compare exactly, in integers).

    Shared by :class:`PAVABC` (groups of tied rows) and the scans (groups of a
    fine bucket or of one exact score, :func:`calibviz.scan.refine.pavabc_bins`),
    so both fit the same blocks on the same groups: unweighted groups of one row
    each go through the vectorised event loop, other groups (tied rows, weights,
    score buckets) through its runs over groups (:func:`_pavabc_sizes_grouped`,
    2-4x faster than the stack loop from 10^5 rows on at the default
    constraints), few groups, ``n_min`` below 256 or N / 64, zero weights or
    weights more than 2^40 apart through the stack loop.
    """
    rows = np.asarray(group_rows, dtype=np.int64)
    N, G = int(rows.sum()), rows.shape[0]
    # runs pay per block and per record: with blocks of a few groups (n_min far below N / 64, e.g. 256 rows on 10^6
    # in groups of 100) they were up to 70x slower than the loop (a review's timings); the default N / 20 is fine
    runs = n_min >= _VECTOR_MIN and 64 * n_min >= N and G >= _GROUPED_MIN
    if group_weight is None:
        ys = np.rint(np.asarray(group_label_sum, dtype=np.float64)).astype(np.int64)
        if G == N and n_min >= _VECTOR_MIN and N < 2**26:
            return _pavabc_sizes_unweighted(ys.astype(np.int8), n_min, n_max, tail_rule)
        if runs:
            return _pavabc_sizes_grouped(ys.astype(np.float64), (rows - ys).astype(np.float64), rows, n_min, n_max,
                                         tail_rule)
        # integer arithmetic: exact comparisons of block means
        return _pavabc_sizes(ys.tolist(), rows.tolist(), rows.tolist(), n_min, n_max, tail_rule)
    s = np.asarray(group_label_sum, dtype=np.float64)
    w = np.asarray(group_weight, dtype=np.float64)
    # weights more than 2^40 apart could fall below the prefix sums' resolution (_PrefixSums): the loop then
    if runs and (w > 0).all() and w.max() <= 2.0**40 * w.min():
        return _pavabc_sizes_grouped(s, w - s, rows, n_min, n_max, tail_rule)
    return _pavabc_sizes(s.tolist(), w.tolist(), rows.tolist(), n_min, n_max, tail_rule)


@dataclass(frozen=True)
class MedianVariance(Scheme):
    """Recursive median splits of the highest-variance bin (CalibrationErrors.jl).

    Starting from one bin, repeatedly take the bin whose predictions have the
    largest (unbiased) variance and split it at the median: the lower part is
    the first half of its sorted predictions, or, if the middle value is tied,
    the predictions strictly below the value at position ``n//2``. A bin is
    final when it has fewer than ``2*min_size`` samples or a split would leave
    a part with fewer than ``min_size``; splitting stops at ``max_bins`` bins.

    Parameters
    ----------
    min_size : int, default 10
        Minimum number of samples per bin.
    max_bins : int or None
        Maximum number of bins (None = unlimited).

    Notes
    -----
    1-D (binary) case of ``MedianVarianceBinning``. With fewer than
    ``2*min_size`` samples there is a single bin (CalibrationErrors.jl raises
    an error when there are fewer than ``min_size``; we return one bin).
    Bins are consecutive runs of the sorted predictions, ties never split.

    References
    ----------
    Widmann, Lindsten & Zachariah, CalibrationErrors.jl documentation,
    "MedianVarianceBinning"; Vaicenavicius et al. (2019), AISTATS.

    Examples
    --------
    >>> MedianVariance(min_size=2).fit([0.1, 0.2, 0.3, 0.7, 0.8, 0.9]).counts.tolist()
    [3, 3]
    """

    min_size: int = 10
    max_bins: int | None = None
    sorts_scores = True

    def __post_init__(self):
        _check_int(self.min_size, "min_size", 1)
        if self.max_bins is not None:
            _check_int(self.max_bins, "max_bins", 1)

    def _fit(self, p, y, w) -> Bins:
        N = p.shape[0]
        order = _sort_order(p)
        ps = p[order]
        c1 = np.r_[0.0, np.cumsum(ps)]
        c2 = np.r_[0.0, np.cumsum(ps * ps)]

        def cut_at(a, h):  # the run of ps[h] starts the upper part (at a at the earliest)
            return h if ps[h - 1] < ps[h] else int(np.searchsorted(ps[a:h], ps[h], side="left")) + a

        sizes = median_variance_sizes(N, self.min_size, self.max_bins, lambda a, b: (c1[b] - c1[a], c2[b] - c2[a]),
                                      cut_at)
        return _bins_from_sizes(order, ps, sizes, f"median_variance({self.min_size})")


def median_variance_sizes(N: int, min_size: int, max_bins: int | None, sums, cut_at) -> list:
    """Bin sizes (in sorted order) of :class:`MedianVariance` on ``N`` sorted scores.

    The split loop alone, for the rows in memory and for a scan's atoms
    (:func:`calibviz.scan.refine.median_variance_bins`): ``sums(a, b)`` gives
    the sum and the sum of squares of the sorted scores ``a:b``;
    ``cut_at(a, h)`` the position where the upper part of a bin starting at
    ``a`` begins when its median position is ``h`` (``h`` itself, or the start
    of the run of scores tied with the score at ``h``, at ``a`` the earliest).
    The bin of largest unbiased variance is split first. Variances are
    compared in units of 1e-9 of the scores' mean square and ties go to the
    lower bin: the cancellation error of ``sum p^2 - (sum p)^2 / n``, which
    differs between the rows' prefix sums and a scan's group sums (~1e-13 of
    the mean square), then does not decide the order of equal bins.
    """
    m, max_bins = min_size, max_bins or N + 1

    total = sums(0, N)[1] if N else 0.0
    quantum = 1e-9 * total / N if total > 0 else 1.0

    def var(a, b):  # unbiased variance of the sorted scores a:b in units of 1e-9 of their mean square (an integer)
        n = b - a
        s, ss = sums(a, b)
        return max(round((ss - s * s / n) / (n - 1) / quantum), 0)

    done = []
    if N < 2 * m or max_bins == 1:
        done.append((0, N))
        heap = []
    else:
        heap = [(-var(0, N), 0, N)]
    nbins = 1
    while nbins < max_bins and heap:
        _, a, b = heapq.heappop(heap)
        cut = cut_at(a, a + (b - a) // 2)
        if cut - a < m or b - cut < m:
            done.append((a, b))
            continue
        for lo, hi in ((a, cut), (cut, b)):
            if hi - lo < 2 * m:
                done.append((lo, hi))
            else:
                heapq.heappush(heap, (-var(lo, hi), lo, hi))
        nbins += 1
    done.extend((a, b) for _, a, b in heap)
    done.sort()
    return [b - a for a, b in done]


@dataclass(frozen=True)
class Auto(Scheme):
    """Automatic choice: PAVA-BC(N//20, N//5) with labels, else EqualMass(15).

    The TCE paper recommends PAVA-BC with size constraints N/20 and N/5
    (5 to 20 bins): near-optimal bins (Prop. 1) that are neither tiny nor
    huge. Without labels PAVA cannot run, so equal-mass bins are used.

    Examples
    --------
    >>> Auto().fit([0.1] * 40 + [0.9] * 60, [0] * 40 + [1] * 60).scheme
    'pavabc(5,20)'
    """

    n_bins: int = 15

    def _fit(self, p, y, w) -> Bins:
        if y is None:
            return EqualMass(self.n_bins)._fit(p, y, w)
        return PAVABC()._fit(p, y, w)


def auto() -> Auto:
    """The automatic binning choice (see :class:`Auto`).

    Examples
    --------
    >>> auto()
    Auto(n_bins=15)
    """
    return Auto()


SCHEME_NAMES = ("uniform", "equal_mass", "quantile", "pava", "pavabc", "median_variance", "auto")


def get_scheme(spec="uniform", n_bins: int = 15, **options) -> Scheme:
    """Map a name (UI / CLI), edges or a scheme object to a binning scheme.

    Parameters
    ----------
    spec : str, Scheme or array-like of edges
        One of ``SCHEME_NAMES`` ("equal_mass" and "quantile" are synonyms),
        a scheme instance (returned unchanged) or a sequence of edges
        (-> :class:`Custom`).
    n_bins : int, default 15
        Number of bins for "uniform", "equal_mass" and "auto" (without labels).
    **options
        Passed to the scheme, e.g. ``n_min``, ``n_max`` for "pavabc" or
        ``min_size`` for "median_variance".

    Returns
    -------
    Scheme

    Examples
    --------
    >>> get_scheme("quantile", n_bins=10)
    EqualMass(n_bins=10)
    >>> get_scheme("pavabc", n_min=300, n_max=1200)
    PAVABC(n_min=300, n_max=1200, tail_rule='paper')
    """
    if isinstance(spec, Scheme):
        return spec
    if isinstance(spec, str):
        key = spec.strip().lower().replace("-", "_").replace(" ", "_")
        makers = {
            "uniform": lambda: Uniform(n_bins, **options),
            "equal_mass": lambda: EqualMass(n_bins, **options),
            "quantile": lambda: EqualMass(n_bins, **options),
            "pava": lambda: PAVA(**options),
            "pavabc": lambda: PAVABC(**options),
            "pava_bc": lambda: PAVABC(**options),
            "median_variance": lambda: MedianVariance(**options),
            "auto": lambda: Auto(n_bins, **options),
        }
        if key not in makers:
            raise InputError(f"unknown binning {spec!r}; choose one of {', '.join(SCHEME_NAMES)}.")
        try:
            return makers[key]()
        except TypeError as exc:
            raise InputError(f"bad option for binning {spec!r}: {exc}.") from None
    try:
        return Custom(tuple(np.asarray(spec, dtype=np.float64).ravel().tolist()))
    except (TypeError, ValueError):
        raise InputError(f"binning must be a scheme name, a scheme object or a list of edges, got {spec!r}.") from None
