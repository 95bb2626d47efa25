"""Bootstrap intervals and the calibrated-model reference of class-wise ECE on a multiclass scan, from one table of
cell tuples (a joint Poisson bootstrap; joint label redraws, :func:`classwise_reference`).

Class-wise ECE (:func:`calibviz.metrics.classwise_ece`) is the mean over the
K classes of the one-vs-rest ECE of ``P_k`` against ``1{label = k}``. The
scan computes each one-vs-rest ECE from its own bucket table
(:meth:`calibviz.scan.Scan.class_view`), but those K tables cannot be
resampled one by one: every row sits in all K of them, so a row drawn twice
must count twice in every class at once. This module draws them jointly.

**The cell tuple.** With bins of fixed edges (:class:`~calibviz.binning.Uniform`,
:class:`~calibviz.binning.Custom`; the panel's default is 15 uniform bins) a
row's whole contribution to class-wise ECE is fixed by its *cell tuple*
``(bin of P_1, ..., bin of P_K, label)``: in class k it adds its weight to
cell (k, bin of P_k), its weighted ``P_k`` to that cell's predicted sum, and
its weight to the cell's positives iff the label is k. One extra
aggregation (:func:`cell_table`, only when intervals are asked for; written
once with Narwhals as :mod:`calibviz.scan.aggregate`, so it runs on DuckDB,
Polars and Spark) groups the valid rows by that tuple and sums, per group:
the rows, and per class k the sums of ``P_k`` and ``P_k^2`` (weighted
scans: ``w``, ``w^2``, ``w P_k``, ``w P_k^2``). ``P_k`` is the class column
divided by the row's sum, the expression of the scan's own class views, and
each bin is computed in the engine with the library's rule (Uniform: the
float-corrected ``floor(p B)`` of :func:`calibviz.binning._uniform_chunker`,
exact in every engine because it is a handful of correctly rounded IEEE
operations; Custom: the number of interior edges ``<= p``, i.e.
``searchsorted(edges, p, "right") - 1``). The groups are sorted on the driver
so that a seed gives the same draws on every engine.

**The draw** (Poisson bootstrap: every row weighted by an independent
Poisson(1) count; Hanley & MacGibbon 2006; Chamandy, Muralidharan, Najmi &
Naidu 2012), per group g and resample:

* rows ``n* ~ Poisson(n_g)``, **exact** (a sum of independent Poisson
  counts), one draw per group *shared by all K classes*: this is what makes
  the K one-vs-rest views move together, as they do when rows are
  resampled;
* weights (weighted scans) ``sw*``: the scaled Gamma of
  :func:`calibviz.scan.resample.poisson_draw` (exact mean and variance from
  the group's ``sum w`` and ``sum w^2``), the same code;
* positives of class k: ``sw*`` if the group's label is k, else 0 (exact:
  the label is part of the tuple);
* predicted sum of class k: ``sw* mean_k + sqrt(n* c v_k) Z_{g,k}``,
  ``mean_k`` and ``v_k`` the group's (weighted) mean and variance of
  ``P_k``, ``c = sum w^2 / n`` (1 unweighted), ``Z`` standard normal. Given
  n*, the sum of n* rows drawn from the group has mean ``n* mean_k`` and
  variance ``n* v_k``, so the first two moments of the resampled sum are the
  row bootstrap's (mean ``S_k``, variance ``sum P_k^2``). With weights the
  variance term treats ``w`` and ``P_k`` as unrelated inside a group (the
  product of their moments; exact when they are).

  The spread term is drawn, unlike inside the 2^-16 buckets of
  :mod:`calibviz.scan.resample` (whose spread is below 6e-11): a bin is
  1/15 wide, so ``v_k`` reaches ~1/2700. It matters little all the same,
  because the labels dominate the variance of a bin's gap ``S_true -
  S_pred``: a row adds ``(y - P_k)^2`` to it, the spread at most ``v_k``;
  the worst case is the lowest (or highest) bin, where ``(y - P_k)^2``
  averages ``P_k (1 - P_k)`` ~ 0.03 for a calibrated column and ``v_k`` ~
  4e-4, about 1% of that bin's variance. Measured, the spread's share of
  the variance of all K x 15 gaps was 1.5e-3 (K = 3, 2·10^4 rows), 1.7e-3
  (K = 5, 10^5), 6e-5 (K = 10, 5·10^4; most tuples hold one row, which has
  no spread) and 8.6e-4 (K = 5, weighted): within Monte Carlo error of 2,000
  resamples, drawing it or not gives the same standard deviation. It is
  drawn anyway, since it keeps the first two moments exact at the cost of
  one normal per (tuple, class) of tuples of several rows (with 6·10^5
  tuples near the worst case, K = 10, it doubles the time of the draw); the
  ``spread=False`` switch of :func:`classwise_distribution` turns it off.
  The K classes' spreads are drawn independently; the rows' ``P_k`` are
  negatively correlated across k (they sum to 1), which would need
  K(K+1)/2 cross sums per tuple, for a second-order part of this small
  term.

Per-cell sums (class x bin) of each resample are segment sums over groups
(``bincount``, all resamples of a chunk at once) and the resample's
class-wise ECE is :func:`calibviz.metrics.intervals.ece_from_sums`, the
reduction the in-memory double bootstrap of class-wise ECE uses (the sum of
|S_true - S_pred| over the K x B cells over K times the total weight: the mean
of the K ECEs). The point value of the table (no resampling) is the scan's
class-wise ECE (tested to 1e-9 relative). The distribution is read by
:func:`calibviz.scan.resample.scan_intervals` with the interval the coverage
study chose for ``"classwise_ece"`` (:mod:`calibviz.metrics.intervals`:
``bias_corrected``), exactly as the scan's other metrics; below
:data:`~calibviz.metrics.intervals.DOUBLE_ROWS_PER_BIN` rows per bin (a scan
of at most 1,500 rows with 15 bins) the rows themselves are read
(:func:`class_rows`) and bootstrapped in memory with the panel's double
bootstrap, as ECE's small scans are.

**No interval, and a note saying why** (never a silent fallback):

* bins that are not fixed edges (equal-mass, PAVA, PAVA-BC, median-variance): each class's
  bins would have to be refitted on every resample, which needs the rows'
  order within each class's column, not a cell tuple;
* more than :data:`MAX_GROUPS` distinct cell tuples (many classes: the
  tuples multiply): the driver-side draw would hold resamples x groups x K
  numbers. The engine still aggregates every row before the cap is checked
  (DuckDB and Spark spill a large aggregation to disk; Polars' streaming
  engine too).

Accuracy against the in-memory row bootstrap (the library's vectorised row
bootstrap of class-wise ECE, 2,000 resamples each; seeds fixed): K = 3,
2·10^4 rows: means 0.04651 / 0.04638 (scan / rows, +2.1 Monte Carlo
errors), standard deviations 1.892e-3 / 1.904e-3 (ratio 0.994); K = 5,
10^5 rows: 0.027462 / 0.027452 (+0.6), sd ratio 1.005; K = 10, 5·10^4
rows: 0.011871 / 0.011875 (-0.3), sd ratio 0.986; K = 5 weighted (Gamma(2)
weights), 2·10^4 rows: 0.03752 / 0.03756 (-0.9), sd ratio 0.978 (Monte
Carlo error of a ratio: about 0.022). tests/test_scan_classwise.py checks
the same at 300-400 resamples, and metric_panel's interval endpoints within
0.35 of the interval's width. Coverage of the 95% interval of an
overconfident model (K = 4, population class-wise ECE 0.03 from 2·10^6
draws of the true probabilities) at n = 5,000, 200 resamples: 35 of 40
replications (87.5%, Monte Carlo error 5.2; the in-memory bias-corrected
interval covered 92.5% in the coverage study at this size);
``benchmarks/bench_scan_classwise.py`` with 200 other replications: 181 of
200 (90.5%, Monte Carlo error 2.1; 13 intervals below the value, 6 above).

References
----------
J. A. Hanley and B. J. MacGibbon, "Creating non-parametric bootstrap samples
using Poisson frequencies", Comput. Methods Programs Biomed. 83(1), 2006.
N. Chamandy, O. Muralidharan, A. Najmi and S. Naidu, "Estimating uncertainty
for massive data streams", Google technical report, 2012.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import narwhals as nw
import numpy as np

from ..binning import Custom, Uniform, get_scheme
from ..metrics.intervals import ece_from_sums
from . import aggregate as _agg
from .source import IN_MEMORY

__all__ = ["MAX_GROUPS", "CellTable", "NoInterval", "cell_table", "class_null", "class_rows", "classwise_distribution",
           "no_interval_reason"]

#: Most distinct cell tuples (bin of every class, label) a scan draws from; above, no interval and a note.
MAX_GROUPS = 1 << 20
_CHUNK_ELEMENTS = 1 << 22  # resamples x groups per chunk of the draw (32 MB per float array)


class NoInterval(Exception):
    """Class-wise ECE of this scan gets no bootstrap interval; ``str(err)`` is the note shown, with what to do."""


@dataclass(frozen=True)
class CellTable:
    """Sums of a multiclass scan's valid rows per cell tuple (bins of every class, label), sorted by tuple.

    Attributes
    ----------
    bins : ndarray of int64, shape (G, K)
        Bin of ``P_k`` of the group's rows, per class.
    label : ndarray of int64, shape (G,)
        Class index of the group's label.
    n, sw, sww : ndarray of float64, shape (G,)
        Rows, sum of weights, sum of squared weights (unweighted: all ``n``).
    swp, swpp : ndarray of float64, shape (G, K)
        Weighted sums of ``P_k`` and ``P_k^2``.
    n_bins : int
    weighted : bool
    swwv : ndarray of float64, shape (G, K), or None
        Sums of ``w^2 P_k (1 - P_k)``: the variance of the weight of class k's
        redrawn positives (weighted tables; unweighted, ``swp - swpp``).
    """

    bins: np.ndarray
    label: np.ndarray
    n: np.ndarray
    sw: np.ndarray
    sww: np.ndarray
    swp: np.ndarray
    swpp: np.ndarray
    n_bins: int
    weighted: bool
    swwv: np.ndarray | None = None

    @property
    def n_groups(self) -> int:
        return int(self.n.shape[0])

    @property
    def n_classes(self) -> int:
        return int(self.bins.shape[1])

    def value(self) -> float:
        """Class-wise ECE of the table itself (no resampling): the scan's class-wise ECE."""
        return float(ece_from_sums(self.cell_sums(self.sw[None, :]))[0])

    @property
    def cells(self) -> int:
        """Cells class x bin: cell ``k * n_bins + b`` is class k's bin b (the layout of
        :func:`calibviz.metrics.intervals.bin_sums`)."""
        return self.n_classes * self.n_bins

    def cell_of(self) -> np.ndarray:
        """The cell of every (group, class): shape (G, K)."""
        return self.bins + (np.arange(self.n_classes) * self.n_bins)[None, :]

    def _design(self):
        """Sparse (3 cells, G): a group's resampled weight sw* times column g gives its part of every cell's
        weight (1 in its K cells), positives (1 in the cell of its label's class) and predicted sum (its mean
        of P_k in class k's cell). A product with it is the segment sums of all resamples at once, with no
        resamples x groups x classes array."""
        if "_design_cache" not in self.__dict__:
            from scipy import sparse

            G, K, cells = self.n_groups, self.n_classes, self.cells
            cell = self.cell_of()
            own = cell[np.arange(G), self.label]
            groups = np.arange(G)
            rows = np.concatenate([cell.ravel(), cells + own, 2 * cells + cell.ravel()])
            cols = np.concatenate([np.repeat(groups, K), groups, np.repeat(groups, K)])
            vals = np.concatenate([np.ones(G * K), np.ones(G), (self.swp / self.sw[:, None]).ravel()])
            object.__setattr__(self, "_design_cache",
                               sparse.csr_matrix((vals, (rows, cols)), shape=(3 * cells, G)))
        return self.__dict__["_design_cache"]

    def cell_sums(self, sw: np.ndarray, spread: np.ndarray | None = None) -> np.ndarray:
        """Per-cell (weight, positives, predicted sum) of m resamples, shape (m, 3, cells).

        ``sw`` (m, G) is each group's resampled weight; every row of a group is in the same cell of each
        class, so the group's resampled predicted sum of class k is ``sw* mean_k`` plus ``spread`` (m, cells),
        the within-group deviations already summed per cell.
        """
        m = sw.shape[0]
        out = np.ascontiguousarray((self._design() @ sw.T).T).reshape(m, 3, self.cells)
        if spread is not None:
            out[:, 2] += spread
        return out


# -- the aggregation -------------------------------------------------------------------------------------------


def _fixed(scheme) -> bool:
    return type(scheme) in (Uniform, Custom)


def _bin_expr(q, scheme):
    """The bin of score expression ``q`` under fixed edges, by the library's rule, as an engine expression."""
    if type(scheme) is Uniform:  # binning._uniform_chunker: min(floor(pB), B-1), corrected against the float edges k/B
        B = float(scheme.n_bins)
        f = nw.min_horizontal((q * B).floor(), nw.lit(B - 1.0))
        f = nw.when(q < f / B).then(f - 1.0).otherwise(f)
        return nw.when((q >= (f + 1.0) / B) & (f < B - 1.0)).then(f + 1.0).otherwise(f).cast(nw.Int64)
    edges = np.asarray(scheme.edges, dtype=np.float64)  # Custom: searchsorted(edges, p, "right") - 1, capped
    out = nw.lit(0)
    for e in edges[1:-1]:
        out = out + nw.when(q >= float(e)).then(nw.lit(1)).otherwise(nw.lit(0))
    return out.cast(nw.Int64)


def _valid_rows(scan):
    """The valid rows of a multiclass scan with ``_q0..`` (renormalised class columns), ``_l`` (class index), ``_w``.

    Validity is the first pass's (:func:`calibviz.scan.aggregate._prepared` of a class view: finite, in [0, 1],
    rows summing to 1, a known label, a positive weight); the rows it rejects were reported by that pass.
    """
    frame, roles = _agg._one_model(scan._frame, scan._roles)
    K = len(roles.classes)
    carried = {f"_c{k}": c for k, c in enumerate(roles.probs)}
    carried["_lab"] = roles.label
    rows = _agg._prepared(frame, replace(roles, view="class", target=0), carried)
    rows = rows.filter((nw.col("_b") >= 0) & (nw.col("_y") >= 0))
    # renormalised exactly as the class views' score (aggregate._confidence: cast, left-to-right sum)
    cols = [nw.col(f"_c{k}").cast(nw.Float64) for k in range(K)]
    total = _agg.row_total(cols)
    label = nw.col("_lab")
    lab = nw.when(label == nw.lit(roles.classes[0])).then(nw.lit(0))
    for k, cls in enumerate(roles.classes[1:], start=1):
        lab = lab.when(label == nw.lit(cls)).then(nw.lit(k))
    return rows.select("_w", _l=lab.otherwise(nw.lit(-1)).cast(nw.Int64),
                       **{f"_q{k}": q for k, q in enumerate(_agg.renormalised(cols, total))}), K


def cell_table(scan, binning, *, max_groups: int | None = None) -> CellTable:
    """Sums per cell tuple of a multiclass scan (one aggregation; cached on the scan per scheme).

    Parameters
    ----------
    scan : calibviz.scan.Scan
        A multiclass scan (K >= 3 class columns).
    binning : Uniform, Custom or a name
        Bins with fixed edges.
    max_groups : int, optional
        Default :data:`MAX_GROUPS` (read at the call).

    Returns
    -------
    CellTable

    Raises
    ------
    NoInterval
        Bins without fixed edges, or more than ``max_groups`` tuples (the message is the note to show).

    Examples
    --------
    >>> import calibviz as cv, pandas as pd
    >>> df = pd.DataFrame({"y": ["a", "b", "c"] * 4, "p_a": [.6, .2, .2] * 4, "p_b": [.2, .6, .2] * 4,
    ...                    "p_c": [.2, .2, .6] * 4})
    >>> t = cell_table(cv.scan(df), "uniform")
    >>> t.n_groups, t.bins[0].tolist(), round(t.value(), 6)
    (3, [9, 3, 3], 0.266667)
    """
    scheme = get_scheme(binning)
    if not _fixed(scheme):
        raise NoInterval("No bootstrap interval for class-wise ECE on a scan with these bins: its resamples are drawn "
                         "per cell (the bin of every class and the label), which needs bins with fixed edges (uniform "
                         "or custom); equal-mass, PAVA, PAVA-BC and median-variance bins would be refitted per class "
                         f"on every resample. Choose uniform bins, or analyse {IN_MEMORY}.")
    max_groups = MAX_GROUPS if max_groups is None else int(max_groups)
    cache = scan.__dict__.setdefault("_cell_tables", {})
    key = (repr(scheme), int(max_groups))
    if key not in cache:
        try:
            cache[key] = _cell_table(scan, scheme, max_groups)
        except NoInterval as err:
            cache[key] = err
    hit = cache[key]
    if isinstance(hit, NoInterval):
        raise hit
    return hit


def _cell_table(scan, scheme, max_groups: int) -> CellTable:
    rows, K = _valid_rows(scan)
    weighted = scan._roles.weight is not None
    n_bins = scheme.n_bins if type(scheme) is Uniform else len(scheme.edges) - 1
    keys = [f"_k{k}" for k in range(K)]
    rows = rows.with_columns(**{keys[k]: _bin_expr(nw.col(f"_q{k}"), scheme) for k in range(K)})
    w = nw.col("_w")
    aggs = [nw.len().alias("n")]
    if weighted:
        aggs += [w.sum().alias("sw"), (w * w).sum().alias("sww")]
    for k in range(K):
        q = nw.col(f"_q{k}")
        wq = w * q if weighted else q
        aggs += [wq.sum().alias(f"s{k}"), (wq * q).sum().alias(f"ss{k}")]
        if weighted:  # the exact variance of class k's redrawn weight of positives (classwise_reference)
            aggs.append((w * w * q * (1.0 - q)).sum().alias(f"sv{k}"))
    out = _agg.collect(rows.group_by(*keys, "_l").agg(*aggs).head(max_groups + 1))
    if len(out) > max_groups:
        raise NoInterval(f"No bootstrap interval for class-wise ECE on this scan: its rows fall into more than "
                         f"{max_groups:,} distinct cells (the bin of each of the {K} classes' probabilities and "
                         "the label), too many to resample on the driver (many classes multiply the cells). Use fewer "
                         f"bins, or analyse {IN_MEMORY}; a sample will do.")
    bins = out[keys].to_numpy(np.int64).reshape(len(out), K)
    label = out["_l"].to_numpy(np.int64)
    order = np.lexsort((*bins.T[::-1], label))  # canonical order: the same draws from every engine
    bins, label = bins[order], label[order]
    n = out["n"].to_numpy(np.float64)[order]
    sw = out["sw"].to_numpy(np.float64)[order] if weighted else n
    sww = out["sww"].to_numpy(np.float64)[order] if weighted else n
    swp = out[[f"s{k}" for k in range(K)]].to_numpy(np.float64)[order]
    swpp = out[[f"ss{k}" for k in range(K)]].to_numpy(np.float64)[order]
    if int(n.sum()) != scan.n or (label < 0).any():  # the same valid rows as the first pass, or a bug
        raise RuntimeError(f"calibviz bug: the class-wise cell pass counted {int(n.sum())} valid rows, the first "
                           f"pass {scan.n}; please report it.")
    swwv = out[[f"sv{k}" for k in range(K)]].to_numpy(np.float64)[order] if weighted else swp - swpp
    return CellTable(bins=bins, label=label, n=n, sw=sw, sww=sww, swp=swp, swpp=swpp, n_bins=n_bins,
                     weighted=weighted, swwv=swwv)


# -- the draw --------------------------------------------------------------------------------------------------


def classwise_distribution(table: CellTable, n_resamples: int, random_state=None, *, spread: bool = True):
    """Class-wise ECE of ``n_resamples`` joint Poisson-bootstrap resamples of a :class:`CellTable`: shape (B,).

    ``spread=False`` leaves out the within-group spread of the predicted sums (for measuring it; see the
    module docstring). NaN where a resample has no weight.

    Examples
    --------
    >>> import calibviz as cv, pandas as pd, numpy as np
    >>> df = pd.DataFrame({"y": ["a", "b", "c"] * 40, "p_a": [.6, .2, .2] * 40, "p_b": [.2, .6, .2] * 40,
    ...                    "p_c": [.2, .2, .6] * 40})
    >>> d = classwise_distribution(cell_table(cv.scan(df), "uniform"), 500, random_state=0)
    >>> d.shape, bool(abs(d.mean() - 0.2667) < 0.01)
    ((500,), True)
    """
    from types import SimpleNamespace

    from .resample import poisson_draw

    rng = np.random.default_rng(random_state)
    G, K = table.n_groups, table.n_classes
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = table.swp / table.sw[:, None]  # (G, K) weighted mean of P_k per group
        var = np.maximum(table.swpp / table.sw[:, None] - mean * mean, 0.0)
    # variance of the sum of n* rows' w P_k around n* times its mean: n* (sum w^2 / n) var_k; only groups whose
    # rows differ in P_k have any (with many classes most groups hold one row: no draw for them)
    scale = (var * (table.sww / table.n)[:, None]).ravel()
    spread_at = np.flatnonzero(scale > 0) if spread else np.zeros(0, np.int64)
    group_of = spread_at // K
    if spread_at.size:
        from scipy import sparse

        # (cells, S): a deviation drawn for (group, class) j adds to that class's cell of the group
        to_cells = sparse.csr_matrix((np.sqrt(scale[spread_at]), (table.cell_of().ravel()[spread_at],
                                                                   np.arange(spread_at.size))),
                                     shape=(table.cells, spread_at.size))
    # the rows' and weights' draw of resample.poisson_draw (Poisson counts; the scaled Gamma of the weights)
    groups = SimpleNamespace(n=table.n, sw=table.sw, sww=table.sww, swp=table.sw, swpp=table.sw, sll=table.sw)
    out = np.empty(n_resamples)
    chunk = max(1, min(n_resamples, _CHUNK_ELEMENTS // max(G + spread_at.size, 1)))
    done = 0
    while done < n_resamples:
        m = min(chunk, n_resamples - done)
        d = poisson_draw(groups, m, rng, table.weighted)
        dev = None
        if spread_at.size:
            z = rng.standard_normal((m, spread_at.size))
            z *= np.sqrt(d["n"][:, group_of])
            dev = np.ascontiguousarray((to_cells @ z.T).T)
        out[done:done + m] = ece_from_sums(table.cell_sums(d["sw"], dev))
        done += m
    return out


def classwise_reference(table: CellTable, n_resamples: int, random_state=None, level: float = 0.95):
    """(null_mean, null_low, null_high, p_value) of class-wise ECE against a calibrated model with these predictions.

    The in-memory reference (:func:`calibviz.metrics.consistency_test`,
    ``metric="classwise_ece"``) redraws every row's label from its predicted
    distribution, ``y* ~ Categorical(P_i)``, and recomputes class-wise ECE on
    the same bins. A scan has per cell tuple the rows and their sums of
    ``P_k``; each tuple redraws its labels jointly, ``Multinomial(n_g, mean
    P_g)`` (a group of one row: its own ``Categorical(P_i)``, exactly), and
    the redrawn positives of class k fall in class k's cell of the tuple.
    Labels of one row stay exclusive across classes, as in memory. Within a
    tuple the rows' ``P_k`` differ by at most a bin width; the multinomial
    then overstates each class's variance of positives by
    ``sum_i (P_ik - mean)^2`` (as :func:`~calibviz.metrics.consistency_test`'s
    binomial buckets do, with wider buckets here): the null is at most
    slightly wider, so p-values err towards no alarm (measured against the
    per-row reference in tests/test_scan_classwise.py).

    Weighted scans: the per-row draw gives class k of a group the weight of
    its positives ``T_k = sum_i w_i 1{y*_i = k}``, mean ``W m_k`` (``W`` the
    group's weight, ``m`` its weighted mean of ``P``) and variance
    ``V_k = sum_i w_i^2 P_ik (1 - P_ik)`` (summed by the cell pass). The scan
    draws ``T = (W / r) Multinomial(r, m)``: the same mean, variance
    ``W^2 m_k (1 - m_k) E[1 / r]``. ``r`` is
    ``floor(n_e)`` or ``floor(n_e) + 1`` at random with ``E[1 / r] = 1 / n_e``,
    and ``n_e = min_k W^2 m_k (1 - m_k) / V_k`` (clipped to [1, rows]): every
    class's variance is at least the per-row draw's, so the null is at most
    wider and p-values err towards no alarm. Equal weights give ``r`` = the
    rows, the unweighted draw; a group of one row its own weighted
    ``Categorical(P_i)``, exactly (:func:`_effective_rows`).
    Reduced by the same :func:`~calibviz.metrics.intervals.ece_from_sums` as
    the intervals; read as :func:`calibviz.scan.reference.reference` reads its
    null values.
    """
    from ..metrics.consistency import null_summary

    nan = float("nan")
    if not n_resamples:
        return nan, nan, nan, nan
    null = np.concatenate([ece_from_sums(sums) for sums in _redrawn_cell_sums(table, n_resamples, random_state)])
    return null_summary(table.value(), null, level)


def class_null(table: CellTable, n_resamples: int, random_state=None) -> np.ndarray:
    """Each class's one-vs-rest ECE on ``n_resamples`` label redraws of a calibrated model, shape (R, K): the
    redraws of :func:`classwise_reference` read class by class (the classes of one redraw move together, as the
    in-memory per-class test's do), for :func:`calibviz.scan.tables.class_ranking`'s per-class test."""
    K, B = table.n_classes, table.n_bins
    total = table.sw.sum()
    return np.concatenate([np.abs(sums[:, 1] - sums[:, 2]).reshape(-1, K, B).sum(axis=2) / total
                           for sums in _redrawn_cell_sums(table, n_resamples, random_state)])


def _redrawn_cell_sums(table: CellTable, n_resamples: int, random_state):
    """Chunks (m, 3, cells) of per-cell (weight, positives, predicted sum) with every group's labels redrawn from
    its mean prediction (:func:`classwise_reference`); weights and predicted sums stay."""
    from scipy import sparse

    rng = np.random.default_rng(random_state)
    G, K, cells = table.n_groups, table.n_classes, table.cells
    base = table.cell_sums(table.sw[None, :])  # (1, 3, cells)
    mean = np.clip(table.swp / table.sw[:, None], 0.0, 1.0)
    mean /= mean.sum(axis=1, keepdims=True)
    draw = (_weighted_draw if table.weighted else _unweighted_draw)(table, mean, rng)
    # (cells, G K): the redrawn positives of class k in group g add to the cell of class k's bin in g
    to_cells = sparse.csr_matrix((np.ones(G * K), (table.cell_of().ravel(), np.arange(G * K))), shape=(cells, G * K))
    chunk = max(1, min(int(n_resamples), _CHUNK_ELEMENTS // max(G * K, 1)))
    done = 0
    while done < n_resamples:
        m = min(chunk, int(n_resamples) - done)
        sums = np.repeat(base, m, axis=0)
        sums[:, 1] = (to_cells @ draw(m).reshape(m, G * K).T).T
        yield sums
        done += m


def _unweighted_draw(table: CellTable, mean: np.ndarray, rng):
    """``draw(m)``: positives (m, G, K) of m redraws, Multinomial(rows, mean) per group (one row: Categorical)."""
    G, K = table.n_groups, table.n_classes
    n = np.rint(table.n).astype(np.int64)
    one, many = np.flatnonzero(n == 1), np.flatnonzero(n > 1)
    cum = np.cumsum(mean[one], axis=1)
    cum[:, -1] = 1.0

    def draw(m):
        counts = np.zeros((m, G, K))
        if one.size:  # Categorical(P_i) by inversion: the class whose cumulative probability first exceeds u
            u = rng.random((m, one.size, 1))
            label = np.minimum((u >= cum[None, :, :]).sum(axis=2), K - 1)
            counts[:, one, :] = (label[:, :, None] == np.arange(K)).astype(np.float64)
        if many.size:
            counts[:, many, :] = rng.multinomial(n[many], mean[many], size=(m, many.size))
        return counts

    return draw


def _effective_rows(table: CellTable, mean: np.ndarray) -> np.ndarray:
    """Per group, ``n_e = min_k W^2 m_k (1 - m_k) / V_k`` clipped to [1, rows] (see :func:`classwise_reference`):
    ``(W / n_e)``-scaled multinomial draws of ``n_e`` rows have in every class at least the variance ``V_k`` of the
    group's per-row weighted draw. Classes with ``V_k = 0`` (no row can draw them, or every row surely does) do
    not bound it.

    Examples
    --------
    >>> import numpy as np
    >>> t = CellTable(bins=np.zeros((2, 3), np.int64), label=np.zeros(2, np.int64), n=np.array([4.0, 3.0]),
    ...               sw=np.array([8.0, 6.0]), sww=np.array([16.0, 14.0]), swp=np.zeros((2, 3)), swpp=np.zeros((2, 3)),
    ...               n_bins=1, weighted=True, swwv=np.array([[4.0, 4.0, 0.0], [3.5, 3.5, 0.0]]))
    >>> m = np.array([[.5, .5, 0.0], [.5, .5, 0.0]])  # every row P = (.5, .5, 0)
    >>> # 4 rows of weight 2 (V = 4 x 4 x .25 = 4): the 4 rows; weights 1, 2, 3 (V = 14 x .25): 36 x .25 / 3.5 rows
    >>> np.round(_effective_rows(t, m), 4).tolist()
    [4.0, 2.5714]
    """
    W = table.sw[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(table.swwv > 0, W * W * mean * (1.0 - mean) / table.swwv, np.inf)
    return np.clip(ratio.min(axis=1), 1.0, table.n)


def _weighted_draw(table: CellTable, mean: np.ndarray, rng):
    """``draw(m)``: weight of each class's positives (m, G, K) of m weighted redraws, ``(W / r) Multinomial(r,
    mean)`` per group with ``E[1 / r] = 1 / n_e`` (:func:`classwise_reference`)."""
    G = table.n_groups
    n_e = _effective_rows(table, mean)
    low = np.floor(n_e)
    # P(r = low) with E[1 / r] = 1 / n_e; 1 where n_e is a whole number (r = n_e)
    at_low = np.where(low == n_e, 1.0, (1.0 / n_e - 1.0 / (low + 1.0)) * low * (low + 1.0))

    def draw(m):
        r = (low + (rng.random((m, G)) >= at_low)).astype(np.int64)
        counts = rng.multinomial(r, mean)  # (m, G, K): r broadcast against each group's mean
        return counts * (table.sw / r)[:, :, None]

    return draw


def no_interval_reason(scan, config) -> str:
    """The note of a class-wise ECE without an interval (the reason :func:`cell_table` gave), or ``""``."""
    try:
        cell_table(scan, config.scheme())
    except NoInterval as err:
        return str(err)
    return ""


# -- a small scan's rows (the double bootstrap) ----------------------------------------------------------------


def class_rows(scan):
    """(labels as class indices, renormalised probabilities (n, K), weights or None) of a small scan's valid rows.

    For the in-memory double bootstrap below :data:`~calibviz.metrics.intervals.DOUBLE_ROWS_PER_BIN` rows per bin
    (at most a few thousand rows); the rows are the ones the cell pass groups.
    """
    rows, K = _valid_rows(scan)
    df = _agg.collect(rows)
    P = df[[f"_q{k}" for k in range(K)]].to_numpy(np.float64)
    w = df["_w"].to_numpy(np.float64) if scan._roles.weight is not None else None
    return df["_l"].to_numpy(np.int64), P, w
