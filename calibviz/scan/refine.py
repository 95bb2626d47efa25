"""Bins from bucket sums, refined where buckets cannot decide.

The first pass (:func:`calibviz.scan.aggregate.fine_table`) gives sums per
fine bucket of the score with the bucket's smallest and largest score, or
with its bounds where the pass left the range out (``Atoms.ranged``; every
rule below holds with bounds, they only refine more). An
*atom* is a group of rows that provably share a bin: a whole bucket, or, in a
refined bucket, the rows of one exact score (second pass,
:func:`calibviz.scan.aggregate.exact_atoms`). Binning works on atoms:

* edge schemes (:class:`~calibviz.binning.Uniform`, :class:`~calibviz.binning.Custom`):
  a bucket whose smallest and largest scores fall in the same bin (by the
  scheme's own index function) goes there whole; the others are refined;
* :class:`~calibviz.binning.EqualMass`: cut positions ``floor(j N / B)`` are
  ranks in the bucket counts; a bucket holding a cut strictly inside and more
  than one score (or a range not summed) is refined, with the buckets beside
  each cut whose range is not summed (a table's edges are midpoints of the
  scores there); then the tie rule of
  :func:`calibviz.binning._snap_to_runs` moves cuts inside a run of equal
  scores to its nearer end, as the in-memory scheme does;
* :class:`~calibviz.binning.MedianVariance`: the in-memory split loop on
  the atoms; a median inside a bucket of several scores refines it
  (:func:`median_variance_bins`);
* TCE decisions: a bucket whose smallest and largest score get the same
  decision is taken whole (the acceptance set of the exact binomial test is an
  interval of p for the bucket widths used here, 2^-16; see
  :func:`rejections`), the others are refined;
* PAVA and PAVA-BC on views too large for exact scores
  (:data:`EXACT_BLOCK_ROWS`): blocks of whole groups, a bucket or, in a full
  bucket, a cell down to 2^-22 wide (:func:`full_bucket_levels`, from a third
  pass, :func:`calibviz.scan.aggregate.cell_table`); cells are atoms with
  their exact score range, so the rules above hold on them too.

So bins, sums and decisions equal the in-memory ones; sums differ only by
float rounding of the order of summation.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..binning import (PAVA, PAVABC, Bins, Custom, EqualMass, MedianVariance, Uniform, _equal_mass_cuts, _snap_to_runs,
                       median_variance_sizes, pava_block_starts, pavabc_group_sizes)
from ..errors import InputError
from ..summary import BinStatistics, rejections as _rejections, rejections_many as _rejections_many
from .aggregate import CELL_BITS, FINE_BUCKETS
from .source import IN_MEMORY

__all__ = ["Atoms", "Refine", "atoms_of", "fine_atoms", "cell_atoms", "cell_of", "full_bucket_levels", "edge_bins",
           "equal_mass_bins", "pava_bins", "pavabc_bins",
           "bin_statistics", "bin_totals", "rejected",
           "refit_blocks", "redrawn_tce", "redrawn_tces", "smece_residual_nodes", "residual_nodes", "top_label_values",
           "median_variance_bins", "block_bins"]

#: Views of at most this many rows get PAVA and PAVA-BC bins fitted on their exact scores, as in memory: every bucket
#: holding two distinct scores is refined (its rows stay in memory as atoms, ~100 bytes each) and the refits of the
#: calibrated-model reference and of bootstrap resamples run on the rows, as costly as in memory (10^6 rows, default
#: CLI panel with its 200 redraws: 41 s and 0.8 GB against 46 s and 0.38 GB in memory; 15 s and 0.31 GB on the grid).
#: Larger views fit them on whole 2^-16 buckets and the cells of full ones (:func:`full_bucket_levels`,
#: :func:`pavabc_bins`), ~0.1 s per refit, at a distance from the exact blocks' TCE that depends on how full the
#: fullest group is (:data:`calibviz.scan.GRID_DISTANCES`). The limit covers the 10^6 rows up to which views are
#: tested equal to the in-memory values.
EXACT_BLOCK_ROWS = 1 << 20

SCAN_SCHEMES = ("uniform", "equal_mass", "custom", "pava", "pavabc", "median_variance")
#: Schemes whose bins are blocks of the sorted atoms fitted on them (:func:`block_bins`).
BLOCK_KINDS = ("pava", "pavabc", "median_variance")


class Refine(Exception):
    """Raised by a binning step that needs the exact scores of some buckets (``.buckets``)."""

    def __init__(self, buckets):
        super().__init__(f"refine {len(buckets)} buckets")
        self.buckets = np.unique(np.asarray(buckets, dtype=np.int64))


@dataclass(frozen=True)
class Atoms:
    """Groups of rows that share a bin, sorted by score (bucket, then exact score).

    ``value`` is the exact score of a refined atom (NaN for a whole bucket or a cell);
    ``cell`` the cell of a full bucket split for PAVA and PAVA-BC on views too
    large for exact scores (:func:`cell_atoms`; ``level * 64 + first 2^-22
    cell``, so one number names the cell and how fine the bucket's cells are;
    -1 in the other buckets);
    ``lo``/``hi`` its smallest / largest score where ``ranged``, otherwise
    bounds of its bucket (the plain first pass sums no range): ``lo <= p <=
    hi`` for every row either way, so decisions that hold at both ends hold
    for the rows, and results that read the range itself (edges at
    midpoints, ties) refine the bucket; ``y`` the label (0/1); the other
    arrays are the sums of :data:`calibviz.scan.aggregate.SUMS`.
    """

    bucket: np.ndarray
    value: np.ndarray
    cell: np.ndarray
    y: np.ndarray
    n: np.ndarray
    sw: np.ndarray
    swp: np.ndarray
    swpp: np.ndarray
    sww: np.ndarray
    swwv: np.ndarray
    sll: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    ranged: np.ndarray

    @property
    def exact(self) -> np.ndarray:
        return ~np.isnan(self.value)

    @property
    def size(self) -> int:
        return int(self.n.shape[0])


#: Atoms fields and the table columns they come from.
_FIELDS = {"bucket": ("_b", np.int64), "value": ("_p", np.float64), "cell": ("_c", np.int64), "y": ("_y", np.int64),
           "n": ("n", np.int64),
           **{c: (c, np.float64) for c in ("sw", "swp", "swpp", "sww", "swwv", "sll")},
           "lo": ("pmin", np.float64), "hi": ("pmax", np.float64), "ranged": ("ranged", bool)}


def _column(table: pd.DataFrame, order: np.ndarray, field: str) -> np.ndarray:
    """Atoms field ``field`` from its table column, rows in ``order``."""
    col, dtype = _FIELDS[field]
    if col == "_p" and col not in table:  # a bucket of the first pass: no exact score
        return np.full(order.shape[0], np.nan)
    if col == "_c" and col not in table:  # no cells
        return np.full(order.shape[0], -1, np.int64)
    return np.asarray(table[col].to_numpy(), dtype=dtype)[order]


def fine_atoms(fine: pd.DataFrame) -> Atoms:
    """Atoms of the first-pass table alone (whole buckets), sorted by bucket, then label."""
    key = fine["_b"].to_numpy(np.int64) * 2 + fine["_y"].to_numpy(np.int64)  # one group per (bucket, label 0/1)
    order = np.argsort(key, kind="stable")
    return Atoms(**{f: _column(fine, order, f) for f in _FIELDS})


def atoms_of(fine, exact: pd.DataFrame | None) -> Atoms:
    """Atoms from the valid rows of the fine table (or its :func:`fine_atoms`, cells spliced in or not), with the
    refined buckets replaced by their exact rows (score order: bucket, then exact score, then label).

    The first pass is sorted once; each refinement splices the few exact rows in (no sort of the 2^17 groups).
    An exact row of a bucket split into cells keeps its cell (:func:`cell_of`), so blocks of whole cells do not
    depend on which buckets were refined.
    """
    base = fine if isinstance(fine, Atoms) else fine_atoms(fine)
    if exact is None or not len(exact):
        return base
    b, p, y = (exact[c].to_numpy() for c in ("_b", "_p", "_y"))
    order = np.lexsort((y, p, b))
    if (base.cell >= 0).any():
        exact = exact.assign(_c=cell_of(base, np.asarray(b, np.int64), np.asarray(p, np.float64)))
    return _splice(base, exact, order)


def _splice(base: Atoms, table: pd.DataFrame, order: np.ndarray) -> Atoms:
    """``base`` with the atoms of every bucket of ``table`` replaced by its rows (taken in ``order``, score order)."""
    # each replaced bucket is a run of the sorted base: the table's rows replace it. Kept base atoms and new rows
    # never share a bucket, so each one's place is its rank plus the other side's atoms before it
    new_bucket = table["_b"].to_numpy(np.int64)[order]
    keep = ~np.isin(base.bucket, new_bucket)
    kept_bucket = base.bucket[keep]
    at_kept = np.arange(kept_bucket.size) + np.searchsorted(new_bucket, kept_bucket)
    at_new = np.arange(new_bucket.size) + np.searchsorted(kept_bucket, new_bucket)

    def spliced(field):
        # one field at a time: a small view refines every row, and 13 sorted copies at once were 0.1 GB at 10^6
        new = _column(table, order, field)
        old = getattr(base, field)
        out = np.empty(at_kept.size + at_new.size, dtype=np.result_type(old, new))
        out[at_kept], out[at_new] = old[keep], new
        return out

    return Atoms(**{f: spliced(f) for f in _FIELDS})


#: A bucket is split into cells for PAVA and PAVA-BC blocks on views of more than :data:`EXACT_BLOCK_ROWS` rows
#: when it holds more than this share of the rows (twice an average bucket's) and several scores
#: (:func:`full_bucket_levels`).
CELL_SHARE = 2.0 ** -15


def full_bucket_levels(atoms: Atoms) -> np.ndarray:
    """Cell level per fine bucket (shape (2^16,), 0: left whole): how finely PAVA and PAVA-BC see its scores.

    A bucket of ``n > T = N 2^-15`` rows (N the view's rows) holding several
    scores, from ``lo`` to ``hi``, is split into 2^l cells,
    ``l = clip(ceil(log2(n / (T f))), 1, 6)`` with ``f = (hi - lo) 2^16``
    the share of the bucket's width they span: cells of about T rows where
    its scores spread evenly, 2^-22 wide at the finest. Blocks on whole
    2^-16 buckets moved TCE by up to 9.7 percentage points where one bucket
    held a few percent of PAVA-BC's minimum bin size; T keeps the fullest
    group near 0.1% of the default one (N/20) while adding at most
    ~2 N / T = 2^16 groups (PAVA-BC's refits cost in proportion to the
    groups); the distance measured since is in
    :data:`calibviz.scan.GRID_DISTANCES`. Needs every bucket's score range
    (``ranged``).
    """
    level = np.zeros(FINE_BUCKETS, np.int8)
    if not atoms.size:
        return level
    starts = np.flatnonzero(np.r_[True, atoms.bucket[1:] != atoms.bucket[:-1]])
    n = np.add.reduceat(atoms.n, starts)
    lo, hi = np.minimum.reduceat(atoms.lo, starts), np.maximum.reduceat(atoms.hi, starts)
    t = float(n.sum()) * CELL_SHARE
    full = (lo < hi) & (n > t)
    if full.any():
        spread = (hi[full] - lo[full]) * FINE_BUCKETS  # in (0, 1]: a bucket's scores may fill part of it
        level[atoms.bucket[starts[full]]] = np.clip(np.ceil(np.log2(n[full] / (t * spread))), 1, CELL_BITS)
    return level


def cell_atoms(base: Atoms, cells: pd.DataFrame, level: np.ndarray) -> Atoms:
    """``base`` (whole buckets) with each bucket of ``level > 0`` replaced by its cells at that level: the sums of
    the 2^-22 cells of :func:`calibviz.scan.aggregate.cell_table` merged 2^(6 - level) at a time."""
    if not len(cells):
        return base
    b = cells["_b"].to_numpy(np.int64)
    lvl = level[b].astype(np.int64)
    shift = CELL_BITS - lvl
    start = (cells["_c"].to_numpy(np.int64) >> shift) << shift
    how = {c: {"pmin": "min", "pmax": "max"}.get(c, "sum") for c in ("n", "sw", "swp", "swpp", "sww", "swwv", "sll",
                                                                       "pmin", "pmax")}
    merged = (cells.assign(_c=lvl * (1 << CELL_BITS) + start).groupby(["_b", "_c", "_y"], as_index=False, sort=True)
              .agg(how).assign(ranged=True))
    return _splice(base, merged, np.arange(len(merged)))


def cell_of(atoms: Atoms, bucket: np.ndarray, p: np.ndarray) -> np.ndarray:
    """The ``cell`` of exact rows (``bucket``, score ``p``) among ``atoms``' cells: -1 in a bucket left whole."""
    first = np.minimum(np.searchsorted(atoms.bucket, bucket), atoms.size - 1)  # its first atom gives its level
    code = np.where(atoms.bucket[first] == bucket, atoms.cell[first], -1)
    lvl = np.where(code >= 0, code >> CELL_BITS, 0)
    finest = np.minimum(np.floor(p * float(FINE_BUCKETS << CELL_BITS)), float((FINE_BUCKETS << CELL_BITS) - 1))
    shift = CELL_BITS - lvl
    start = ((finest.astype(np.int64) - (bucket << CELL_BITS)) >> shift) << shift
    return np.where(code >= 0, lvl * (1 << CELL_BITS) + start, -1)


def reads_ranges(scheme) -> bool:
    """Whether bins of ``scheme`` read the score range of every bucket: PAVA, PAVA-BC and median-variance bins
    are fitted on groups of tied scores and refitted on resamples (a scan gives them every bucket's range,
    :meth:`calibviz.scan.Scan._ensure_ranges`); edge and equal-mass bins refine the few buckets they read."""
    try:
        return scheme_kind(scheme) in BLOCK_KINDS
    except InputError:
        return False


def unranged_edge_buckets(atoms: Atoms, index: np.ndarray) -> np.ndarray:
    """Buckets without their exact score range on either side of a bin boundary: the edges of equal-mass, PAVA,
    PAVA-BC and median-variance bins are midpoints of the scores there, so a table of those bins refines them."""
    change = np.flatnonzero(index[1:] != index[:-1])
    near = np.union1d(change, change + 1)
    return np.unique(atoms.bucket[near[~atoms.ranged[near]]])


def _index(scheme, values: np.ndarray) -> np.ndarray:
    return scheme._fit(values, None, None).index


def edge_bins(scheme, atoms: Atoms) -> tuple[np.ndarray, np.ndarray]:
    """(edges, bin of each atom) of a Uniform or Custom scheme; raises :class:`Refine` for split buckets."""
    lo, hi = _index(scheme, atoms.lo), _index(scheme, atoms.hi)
    split = lo != hi
    if split.any():
        raise Refine(atoms.bucket[split])
    edges = scheme._fit(atoms.lo[:1], None, None).edges
    return edges, lo


def _groups(atoms: Atoms):
    """Rank groups (labels merged): start index of each group in the atoms, row counts, whole-bucket flag."""
    if not atoms.size:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    key_change = np.r_[True, (atoms.bucket[1:] != atoms.bucket[:-1]) | (atoms.cell[1:] != atoms.cell[:-1])
                       | ((atoms.value[1:] != atoms.value[:-1]) & atoms.exact[1:])]
    starts = np.flatnonzero(key_change)
    return starts, np.add.reduceat(atoms.n, starts)


def equal_mass_bins(scheme: EqualMass, atoms: Atoms) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(edges, bin of each atom, counts per bin) of EqualMass, exactly as ``EqualMass().fit`` on the rows."""
    B = scheme.n_bins
    starts, counts = _groups(atoms)
    group_of_atom = np.repeat(np.arange(starts.shape[0]), np.diff(np.r_[starts, atoms.size]))
    N = int(counts.sum())
    if B == 1:
        return np.array([0.0, 1.0]), np.zeros(atoms.size, np.int64), np.array([N], np.int64)
    if not N:  # an empty view (a class never predicted as top label): B empty bins
        return np.r_[np.zeros(B), 1.0], np.zeros(atoms.size, np.int64), np.zeros(B, np.int64)
    first = np.r_[0, np.cumsum(counts)[:-1]]  # sorted position of each group's first row
    end = first + counts
    lo = np.minimum.reduceat(atoms.lo, starts)
    hi = np.maximum.reduceat(atoms.hi, starts)
    cuts = _equal_mass_cuts(N, B)
    g = np.searchsorted(end, cuts, side="right")  # group holding sorted position cut
    g = np.minimum(g, starts.shape[0] - 1)
    inside = (cuts > first[g]) & (cuts < end[g])
    split = inside & (lo[g] < hi[g])  # a whole bucket of several scores holds the cut: refine it
    if split.any():
        # with the buckets beside it, and beside the cuts at a group boundary, where their range is unknown: a
        # table's edges are midpoints of the scores beside each cut (a refined cut may end up at a bucket
        # boundary, moved to the end of a run of one score), so one pass fetches them all
        at = ~inside & (cuts > 0) & (cuts < N)
        near = np.concatenate([g[split] - 1, g[split] + 1, g[at] - 1, g[at]])
        near = np.unique(np.clip(near, 0, starts.shape[0] - 1))
        near = near[~np.logical_and.reduceat(atoms.ranged, starts)[near]]
        raise Refine(atoms.bucket[starts[np.concatenate([g[split], near])]])
    # a cut strictly inside a run of one score: the tie rule moves it to the nearer end of the run
    cuts = _snap_to_runs(cuts, np.where(inside, first[g], cuts), np.where(inside, end[g], cuts))
    group_bin = np.searchsorted(cuts, first, side="right")
    # edges: midpoints between the scores at sorted positions cut - 1 and cut
    at_g = np.minimum(np.searchsorted(end, cuts, side="right"), starts.shape[0] - 1)
    before_g = np.minimum(np.searchsorted(end, cuts - 1, side="right"), starts.shape[0] - 1)
    mid = np.where(cuts <= 0, 0.0, np.where(cuts >= N, 1.0, 0.5 * (hi[before_g] + lo[at_g])))
    edges = np.concatenate(([0.0], mid, [1.0]))
    sizes = np.diff(np.r_[0, cuts, N]).astype(np.int64)
    return edges, group_bin[group_of_atom], sizes


def _bucket_groups(atoms: Atoms):
    """Whole fine buckets, or their cells where split (:func:`cell_atoms`), as groups (refined or not, so that bins
    do not depend on which buckets were refined): start of each group in the atoms, rows per group, group of each
    atom, score range of each group."""
    starts = (np.flatnonzero(np.r_[True, (atoms.bucket[1:] != atoms.bucket[:-1]) | (atoms.cell[1:] != atoms.cell[:-1])])
              if atoms.size else np.zeros(0, int))
    return _with_ranges(atoms, starts, np.add.reduceat(atoms.n, starts))


def _with_ranges(atoms: Atoms, starts: np.ndarray, counts: np.ndarray):
    group_of_atom = np.repeat(np.arange(starts.shape[0]), np.diff(np.r_[starts, atoms.size]))
    return starts, counts, group_of_atom, np.minimum.reduceat(atoms.lo, starts), np.maximum.reduceat(atoms.hi, starts)


def _block_groups(atoms: Atoms, exact: bool, refit: bool):
    """The groups that PAVA and PAVA-BC push whole, as :func:`_bucket_groups` returns them.

    ``exact`` (a view of at most :data:`EXACT_BLOCK_ROWS` rows): runs of one
    exact score, the groups of the in-memory schemes; a whole bucket of
    several scores raises :class:`Refine` for all such buckets at once. A
    refit (``refit``: a label redraw, a bootstrap resample) cannot refine: its
    caller refines its atoms for these bins first (``Scan._atoms_for``), and
    an unrefined bucket left there is a bug, raised as such rather than
    fitted silently on the grid. Otherwise whole fine buckets, or the cells
    of full ones where the atoms hold them (:func:`cell_atoms`).
    """
    if not exact:
        return _bucket_groups(atoms)
    out = _with_ranges(atoms, *_groups(atoms))
    starts, _, _, lo, hi = out
    several = lo < hi
    if several.any():
        if refit:
            raise RuntimeError("calibviz bug: a refit of exact PAVA/PAVA-BC blocks met a bucket of several scores "
                               "that was never refined; please report it.")
        raise Refine(atoms.bucket[starts[several]])
    return out


def _blocks(sizes: np.ndarray, counts: np.ndarray, lo: np.ndarray, hi: np.ndarray):
    """(edges, block of each group) of consecutive blocks of whole groups with ``sizes`` rows."""
    first = np.r_[0, np.cumsum(counts)[:-1]]  # sorted position of each group's first row
    ends = np.cumsum(sizes)
    group_bin = np.searchsorted(ends, first, side="right")
    g = np.searchsorted(first, ends[:-1])  # the group starting each block after the first
    edges = np.concatenate(([0.0], 0.5 * (hi[g - 1] + lo[g]), [1.0]))
    return edges, group_bin


def pava_bins(atoms: Atoms, *, exact: bool = False, refit: bool = False):
    """(edges, bin of each atom, rows per bin, name) of PAVA on the groups of :func:`_block_groups`.

    The in-memory scheme (:class:`calibviz.binning.PAVA`) fits the isotonic
    regression on groups of equal scores, and so does a view of at most
    :data:`EXACT_BLOCK_ROWS` rows (``exact``), with the same code
    (:func:`calibviz.binning.pava_block_starts`): the in-memory bins. On a
    larger view the groups are whole fine buckets (2^-16 wide) and the cells
    of full ones: the bins are PAVA's bins of the scores rounded down to their
    group, identical to the in-memory bins when no group holds two distinct
    scores (tested), otherwise a block boundary can only sit at a group
    boundary, as for :func:`pavabc_bins`. Edges are midpoints of the
    neighbouring scores.
    """
    starts, counts, group_of_atom, lo, hi = _block_groups(atoms, exact, refit)
    if not counts.size:  # an empty view (a class never predicted as top label): one empty bin, as PAVA-BC's
        sizes = np.zeros(1, np.int64)
    else:
        first_group = pava_block_starts(np.add.reduceat(atoms.sw, starts),
                                        np.add.reduceat(atoms.sw * atoms.y, starts))
        first_row = np.r_[0, np.cumsum(counts)[:-1]][first_group]
        sizes = np.diff(np.r_[first_row, int(counts.sum())]).astype(np.int64)
    edges, group_bin = _blocks(sizes, counts, lo, hi)
    return edges, group_bin[group_of_atom], sizes, "pava"


def pavabc_bins(scheme: PAVABC, atoms: Atoms, weighted: bool, *, exact: bool = False, refit: bool = False):
    """(edges, bin of each atom, rows per bin, name) of PAVA-BC on the groups of :func:`_block_groups`.

    The in-memory scheme (:class:`calibviz.binning.PAVABC`) pushes a run of
    tied scores as one group, with its row count and (weighted) label sum;
    the scan uses the same code (:func:`calibviz.binning.pavabc_group_sizes`).
    On a view of at most :data:`EXACT_BLOCK_ROWS` rows (``exact``) the groups
    are the runs of one exact score, so the bins are the in-memory bins. On a
    larger view a group is a whole fine bucket (2^-16 wide) or, in a full
    bucket, a cell down to 2^-22 wide (:func:`full_bucket_levels`): the bins
    are PAVA-BC's bins of the scores rounded down to their group (tested
    against that in-memory computation), identical to the in-memory bins when
    no group holds two distinct scores (e.g. scores with at most 4 decimals,
    tested), otherwise a block boundary can only sit at a group boundary. The
    edges are exact midpoints of the neighbouring scores. The TCE decisions
    made in these bins are exact per row (:func:`rejected`).
    """
    starts, counts, group_of_atom, lo, hi = _block_groups(atoms, exact, refit)
    N = int(counts.sum())
    n_min, n_max = scheme.constraints(N)
    name = f"pavabc({n_min},{n_max})"
    if N <= n_min:
        sizes = np.array([N], np.int64)
    elif weighted:
        sizes = np.asarray(pavabc_group_sizes(np.add.reduceat(atoms.sw * atoms.y, starts), counts, n_min, n_max,
                                              scheme.tail_rule, group_weight=np.add.reduceat(atoms.sw, starts)),
                           np.int64)
    else:
        sizes = np.asarray(pavabc_group_sizes(np.add.reduceat(atoms.n * atoms.y, starts), counts, n_min, n_max,
                                              scheme.tail_rule), np.int64)
    edges, group_bin = _blocks(sizes, counts, lo, hi)
    return edges, group_bin[group_of_atom], sizes, name


#: Rows whose exact scores median-variance splits may fetch (the refined atoms stay in memory: ~100 bytes each).
MEDIAN_VARIANCE_ROWS = 1 << 21


def median_variance_bins(scheme: MedianVariance, atoms: Atoms, weighted: bool, *, snap: bool = False):
    """(edges, bin of each atom, rows per bin, name) of MedianVariance, exactly as ``MedianVariance().fit`` on the rows.

    The split loop is the in-memory one (:func:`calibviz.binning.median_variance_sizes`)
    on the rank groups of the atoms (a whole bucket, or one exact score). A
    bin's variance is exact when its ends are group boundaries (sums of whole
    groups). A median position inside a group of one score moves to the start
    of its run (the in-memory tie rule); inside a bucket of several scores the
    bucket is refined. To find in one pass the buckets that the later splits
    need, the loop goes on as if the cut were at the median position, with
    the bucket's sums split in proportion to its rows; the buckets so found
    are refined together and the loop runs again, until no split falls in an
    unrefined bucket: the result then uses exact sums and cuts only.

    The scheme ignores weights in memory (bins of the sorted scores); a
    weighted scan has only weighted sums per bucket, so it is refused, as is a
    split that would need the exact scores of more than
    :data:`MEDIAN_VARIANCE_ROWS` rows (small ``min_size`` without ``max_bins``
    on a large scan: bins of a few rows each, every bucket split).

    ``snap=True`` (a bootstrap resample's refit, :func:`refit_blocks`, which
    cannot refine) moves a cut inside a bucket of several scores to the
    nearer end of the bucket instead, at most one bucket's rows (scores
    2^-16 apart at most) from the median position; the later splits follow
    from that cut. A resample's atoms are those refined for the data's own
    bins, so the cuts near the data's cuts stay exact (on its unresampled
    atoms the refit gives the data's bins, tested); snapping concerns only
    cuts that a resample moves into a bucket never refined.
    """
    if weighted:
        raise InputError("median-variance splits use the unweighted scores, which a weighted scan does not sum; "
                         f"choose another binning, or analyse {IN_MEMORY}.")
    starts, counts = _groups(atoms)
    group_of_atom = np.repeat(np.arange(starts.shape[0]), np.diff(np.r_[starts, atoms.size]))
    N = int(counts.sum())
    first = np.r_[0, np.cumsum(counts)[:-1]]
    end = first + counts
    lo, hi = np.minimum.reduceat(atoms.lo, starts), np.maximum.reduceat(atoms.hi, starts)
    c1 = np.r_[0.0, np.cumsum(np.add.reduceat(atoms.swp, starts))]
    c2 = np.r_[0.0, np.cumsum(np.add.reduceat(atoms.swpp, starts))]
    need = set()
    # rows whose exact scores the refinement would fetch: refused as soon as they pass the limit (the split loop of
    # bins of a few rows on 10^8 rows would otherwise run for minutes before saying so)
    fetched = int(atoms.n[atoms.exact].sum())

    def group_of(x):
        return min(int(np.searchsorted(end, x, side="right")), starts.shape[0] - 1)

    def prefix(c, x):  # sum of the sorted scores before position x (in proportion to rows inside a group)
        if x >= N:
            return c[-1]
        g = group_of(x)
        return c[g] + (x - first[g]) / counts[g] * (c[g + 1] - c[g])  # exactly c[g] at a group's start

    def sums(a, b):
        return prefix(c1, b) - prefix(c1, a), prefix(c2, b) - prefix(c2, a)

    def cut_at(a, h):
        nonlocal fetched
        g = group_of(h)
        if h == first[g]:  # consecutive groups hold strictly increasing scores
            return h
        if lo[g] == hi[g]:
            return max(a, int(first[g]))
        if snap:
            return int(first[g]) if h - first[g] <= end[g] - h else int(end[g])
        if g not in need:
            need.add(g)
            fetched += int(counts[g])
            if fetched > MEDIAN_VARIANCE_ROWS:
                raise InputError(
                    f"median-variance splits (min_size={scheme.min_size}, max_bins={scheme.max_bins}) of {N:,} rows cut "
                    f"inside score buckets holding more rows than a scan fetches exactly ({MEDIAN_VARIANCE_ROWS:,}); "
                    "give max_bins or a larger min_size (in Python: "
                    f"MedianVariance(min_size={scheme.min_size}, max_bins=64)), choose another binning, or analyse "
                    f"{IN_MEMORY}.")
        return h

    sizes = median_variance_sizes(N, scheme.min_size, scheme.max_bins, sums, cut_at)
    if need:
        raise Refine(atoms.bucket[starts[np.fromiter(need, np.int64)]])
    edges, group_bin = _blocks(np.asarray(sizes, np.int64), counts, lo, hi)
    return edges, group_bin[group_of_atom], np.asarray(sizes, np.int64), f"median_variance({scheme.min_size})"


def bin_totals(index: np.ndarray, n_bins: int, *values: np.ndarray) -> list[np.ndarray]:
    """Sums of each of ``values`` per bin (``index``: bin of each atom, 0 <= index < n_bins).

    Atoms are in score order and every scheme's bins are score intervals, so
    the bins are runs of the atoms: one ``add.reduceat`` per array then sums
    them (~15x faster than a weighted ``bincount`` over the 2^17 atoms of a
    first pass). Any other index (unsorted, or outside the bins) falls back
    to ``bincount``, which extends or refuses it.
    """
    if index.size and index[0] >= 0 and index[-1] < n_bins and (index[1:] >= index[:-1]).all():
        starts = np.searchsorted(index, np.arange(n_bins))
        filled = np.r_[starts[1:], index.size] > starts  # reduceat would give an empty run its next element
        out = []
        for v in values:
            total = np.zeros(n_bins)
            total[filled] = np.add.reduceat(np.asarray(v, np.float64), starts[filled])
            out.append(total)
        return out
    return [np.bincount(index, weights=v, minlength=n_bins) for v in values]


def bin_statistics(atoms: Atoms, index: np.ndarray, n_bins: int) -> BinStatistics:
    """Per-bin sums of the atoms (the same :class:`~calibviz.summary.BinStatistics` the in-memory path builds)."""
    y = atoms.y.astype(np.float64)
    count, positives, weight, sum_pred, sum_true, sum_pred_sq, sum_pred_true, sum_weight_sq, null_var = bin_totals(
        index, n_bins, atoms.n, atoms.n * y, atoms.sw, atoms.swp, atoms.sw * y, atoms.swpp, atoms.swp * y,
        atoms.sww, atoms.swwv)
    return BinStatistics(count=count.round().astype(np.int64), positives=positives.round().astype(np.int64),
                         weight=weight, sum_pred=sum_pred, sum_true=sum_true, sum_pred_sq=sum_pred_sq,
                         sum_pred_true=sum_pred_true, sum_weight_sq=sum_weight_sq, null_var=null_var)


def top_label_values(stats: list) -> dict:
    """Top-label ECE and MCE (``reduce="bin"``) from the bin statistics of each top-label view.

    TL-ECE = sum over (predicted class l, bin b) of |S_true - S_pred| / W;
    TL-MCE = max over bins b of sum_l |S_true - S_pred|_{l,b} / sum_l W_{l,b}
    (:func:`calibviz.metrics.top_label_ece`, ``top_label_mce``).
    """
    B = max(st.weight.shape[0] for st in stats)
    absdiff, weight = np.zeros(B), np.zeros(B)
    for st in stats:
        k = st.weight.shape[0]
        absdiff[:k] += np.abs(st.sum_true - st.sum_pred)
        weight[:k] += st.weight
    keep = weight > 0
    return {"top_label_ece": float(absdiff.sum() / weight.sum()),
            "top_label_mce": float(np.max(absdiff[keep] / weight[keep]))}


def rejected(atoms: Atoms, index: np.ndarray, stats: BinStatistics, *, alpha, test):
    """(rejected rows, rejected weight) per bin: TCE decisions of every atom; raises :class:`Refine`.

    A whole bucket is decided by its smallest and largest score; where they
    differ it is refined. Inside a bucket (width 2^-16) the decision could
    only change twice if the acceptance set of p had a hole narrower than the
    bucket, which the tests of ``calibviz.stats.binom_reject`` on this grid
    never show.
    """
    n_bins = stats.count.shape[0]
    bins = Bins(edges=np.zeros(n_bins + 1), index=index, counts=stats.count)
    at_lo = _rejections(atoms.lo, bins, stats, alpha=alpha, test=test)
    at_hi = _rejections(atoms.hi, bins, stats, alpha=alpha, test=test)
    split = at_lo != at_hi
    if split.any():
        raise Refine(atoms.bucket[split])
    n_rej, w_rej = bin_totals(index, n_bins, atoms.n * at_lo, atoms.sw * at_lo)
    return n_rej, w_rej


def block_bins(scheme, atoms: Atoms, weighted: bool, *, exact: bool = False, snap: bool = False):
    """(edges, bin of each atom, rows per bin, name) of the schemes whose bins are blocks of the sorted atoms
    fitted on them: PAVA, PAVA-BC (``exact``: on the exact scores, see :func:`_block_groups`), median-variance
    (always exact). ``snap``: a refit that cannot refine (see :func:`median_variance_bins`)."""
    kind = scheme_kind(scheme)
    if kind == "pava":
        return pava_bins(atoms, exact=exact, refit=snap)
    if kind == "median_variance":
        return median_variance_bins(scheme, atoms, weighted, snap=snap)
    return pavabc_bins(scheme, atoms, weighted, exact=exact, refit=snap)


def refit_blocks(atoms: Atoms, scheme, weighted: bool, *, exact: bool = False) -> tuple[Atoms, np.ndarray,
                                                                                          BinStatistics]:
    """(atoms with rows, bin of each, BinStatistics) of PAVA-BC, PAVA or median-variance bins refitted on an atom
    table whose counts were redrawn (a bootstrap resample, a label redraw): atoms left without rows are no group.
    ``exact``: the view's blocks are fitted on exact scores (:data:`EXACT_BLOCK_ROWS`)."""
    keep = atoms.n > 0
    a = atoms if keep.all() else Atoms(**{f: getattr(atoms, f)[keep] for f in atoms.__dataclass_fields__})
    if not a.size:  # a resample that drew no row (a tiny view): no bins, no statistic
        return a, np.zeros(0, np.int64), bin_statistics(a, np.zeros(0, np.int64), 1)
    _, index, _, _ = block_bins(scheme, a, weighted, exact=exact, snap=True)
    return a, index, bin_statistics(a, index, int(index.max()) + 1 if index.size else 1)


def redrawn_tce(atoms: Atoms, scheme: PAVABC, *, alpha, test="binomial", weighted: bool = False,
                score: np.ndarray | None = None, exact: bool = False) -> float:
    """TCE (percent) of a redrawn atom table (a bootstrap resample, a label redraw of the calibrated reference).

    PAVA-BC refitted on the atoms (:func:`refit_blocks`) and each atom tested
    against its bin at ``score`` (shape (atoms,)), by default its score: exact
    for an atom of one score, a whole bucket's mean otherwise (a redraw cannot
    refine the buckets whose rows the tests would split, as :func:`rejected`
    does for the data's own TCE).
    """
    return float(redrawn_tces([(atoms, score)], scheme, alpha=alpha, test=test, weighted=weighted, exact=exact)[0])


def redrawn_tces(tables, scheme: PAVABC, *, alpha, test="binomial", weighted: bool = False,
                 exact: bool = False) -> np.ndarray:
    """:func:`redrawn_tce` of several ``(atoms, score or None)`` tables, their binomial decisions taken in one
    call (:func:`calibviz.summary.rejections_many`: its fixed cost once, not once per redraw). NaN for a table
    without rows, or whose refit fails with a floating-point error (as the bootstrap counts a failed resample).
    ``tables`` may be a generator: each table is released once its bins are fitted."""
    out, parts, rest = [], [], []
    for i, (atoms, score) in enumerate(tables):
        out.append(np.nan)
        if score is not None:
            score = score[atoms.n > 0]  # the atoms refit_blocks keeps
        try:
            a, index, stats = refit_blocks(atoms, scheme, weighted, exact=exact)
        except (ValueError, ZeroDivisionError, FloatingPointError):
            continue
        if not a.size:
            continue
        if score is None:
            score = np.where(a.lo == a.hi, a.lo, np.clip(a.swp / a.sw, 0.0, 1.0))
        # atoms in score order: neighbours with one bin and one score (the labels of a group) share one test
        first = np.r_[True, (index[1:] != index[:-1]) | (score[1:] != score[:-1])]
        bins = Bins(edges=np.zeros(stats.count.shape[0] + 1), index=index[first], counts=stats.count)
        parts.append((score[first], bins, stats))
        rest.append((i, np.cumsum(first) - 1, a.sw if weighted else a.n.astype(np.float64)))
    for (i, expand, mass), rejected_ in zip(rest, _rejections_many(parts, alpha=alpha, test=test)):
        total = float(np.sum(mass))
        if total > 0:
            out[i] = 100.0 * float(np.sum(mass * rejected_[expand])) / total
    return np.array(out, dtype=np.float64)


def smece_residual_nodes(atoms: Atoms, k: int) -> np.ndarray:
    """Linearly binned residual mass sum w (y - p) on the k + 1 nodes of [0, 1] (k divides 2^16).

    Row i adds r_i (1 - f_i) to node j and r_i f_i to node j + 1, with
    j = min(floor(p_i k), k - 1) and f_i = p_i k - j (as
    ``calibviz.metrics.smooth._bin_chunk``); per interval, sum r f = k sum r p - j sum r.
    """
    y = atoms.y.astype(np.float64)
    # sum w (y - p) and sum w (y - p) p of each atom
    return residual_nodes(atoms.bucket, atoms.sw * y - atoms.swp, atoms.swp * y - atoms.swpp, k)


def residual_nodes(bucket: np.ndarray, r: np.ndarray, rp: np.ndarray, k: int) -> np.ndarray:
    """:func:`smece_residual_nodes` from groups of fine buckets ``bucket`` with residual sums ``r`` = sum w (y - p)
    and ``rp`` = sum w (y - p) p (the calibrated-model reference passes redrawn ones)."""
    if FINE_BUCKETS % k:
        raise InputError(f"smECE grid {k} does not divide the scan's {FINE_BUCKETS} buckets.")
    j = bucket // (FINE_BUCKETS // k)
    R = np.bincount(j, weights=r, minlength=k)
    RP = np.bincount(j, weights=rp, minlength=k)
    right = k * RP - np.arange(k) * R
    nodes = np.zeros(k + 1)
    nodes[:k] += R - right
    nodes[1:] += right
    return nodes


def scheme_kind(scheme) -> str:
    """'edges' or 'equal_mass' for the schemes a scan bins exactly; InputError for the others."""
    if type(scheme) in (Uniform, Custom):
        return "edges"
    if type(scheme) is EqualMass:
        return "equal_mass"
    if type(scheme) is PAVABC:
        return "pavabc"
    if type(scheme) is PAVA:
        return "pava"
    if type(scheme) is MedianVariance:
        return "median_variance"
    raise InputError(f"scans bin with uniform, equal_mass, pava, pavabc, median_variance or custom edges, not "
                     f"{scheme!r}; analyse {IN_MEMORY}, or choose another scheme.")
