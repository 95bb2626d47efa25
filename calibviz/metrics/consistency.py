"""The calibrated-model reference of a metric: consistency resampling.

Every calibration metric has a value that a perfectly calibrated model with
the same predictions would reach, and that value depends on n, on the bins
and on the predictions themselves (a binned ECE of a calibrated model is
never 0). Consistency resampling (Bröcker & Smith 2007) draws labels from the
predictions, ``y* ~ Bernoulli(p)`` (multiclass: ``y* ~ Categorical(row of
probabilities)``), recomputes the metric with the same predictions, weights
and options, and reads the observed value against that null distribution
(DESIGN.md §2, §4: "every metric shown to a user has its calibrated-model
reference beside it").

Three ways to draw the null values, chosen per metric:

* *generic*: draw ``y*`` for every row and call the metric (any metric, any
  callable; label-dependent bins such as PAVA-BC are refitted every time);
* *fixed cells, exact*: for binned metrics whose bins do not depend on the
  labels (Uniform, Custom, EqualMass, MedianVariance) the bins are fitted
  once; each resample draws ``y*`` per row and only the per-bin sums of
  ``y*`` are recomputed (one pass over the rows sorted by bin), then reduced
  by the very function the metric uses
  (:func:`calibviz.metrics.binned._norm_of_gaps`, ...);
* *fixed cells, binomial buckets* (unweighted data, many rows): the rows of
  each bin are grouped by a fine bucket of the score, and each resample
  draws one ``Binomial(n_bucket, mean score of the bucket)`` per bucket
  instead of one Bernoulli per row (an approximation with a proven bound,
  see :func:`consistency_test`).
"""
from __future__ import annotations

import inspect
import math
import numbers
import warnings
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from ..binning import Custom, EqualMass, MedianVariance, Uniform, get_scheme
from ..errors import InputError
from ..reduce import _top
from ..summary import BinStatistics, _fit_and_sum
from ..validation import check_binary, check_multiclass
from .binned import (
    _decomposition,
    _norm_of_gaps,
    ace,
    brier_decomposition,
    debiased_ece,
    ece,
    hosmer_lemeshow,
    mce,
    tce,
)
from .goodness import spiegelhalter_z
from .multiclass import (
    _bin_deviation,
    _top_label_cells,
    classwise_ece,
    classwise_tce,
    confidence_ece,
    top_label_ece,
    top_label_mce,
)
from .resampling import _call, _values
from .scores import LOG_LOSS_EPS, brier_score, log_loss
from .smooth import calibration_index, smooth_ece

__all__ = ["consistency_test", "ConsistencyResult", "CONSISTENCY_METRICS", "TWO_SIDED_METRICS", "null_summary",
           "calibrated_expectation", "reference_level"]

#: Buckets per unit interval of the binomial-bucket path (bucket width h = 2^-12).
_BUCKETS = 1 << 12
#: ``method="auto"`` draws per row while n * n_resamples is at most this (~0.2 s of per-row draws).
_EXACT_MAX = 1 << 25
#: Rows per chunk of the exact per-row draws (the uniforms stay in cache).
_CHUNK = 1 << 16
#: Upper bound on the entries of one block of binomial draws or of one chunk of the inverse CDF.
_BLOCK = 1 << 22
_BATCH_ROWS = 1 << 21  # rows of the label redraws handed at once to a metric's batched form
#: Bins whose membership depends on the score alone (never on the labels).
_LABEL_FREE = (Uniform, Custom, EqualMass, MedianVariance)
#: Of those, the rank-based ones: bins are runs of the sorted scores.
_RANK_BASED = (EqualMass, MedianVariance)
#: Relative tolerance of "null value >= statistic": the observed value and the resampled ones may be
#: summed in a different order, so values equal in exact arithmetic can differ in the last bits.
_TIE_RTOL = 1e-10
_METHODS = ("auto", "exact", "fast")
#: Proper scores that miscalibration moves either way: their reference is two-sided (:func:`null_summary`).
#: A score below a calibrated model's is evidence too: an over-predicting model (y ~ Bernoulli(p^1.5)) scored a
#: Brier score of 0.139 against a calibrated model's 0.177 to 0.180 and read "no evidence (p = 1)" one-sided
#: (a walk-through); Spiegelhalter's Z, the Brier score's own calibration test, is two-sided for that reason.
TWO_SIDED_METRICS = frozenset({"brier", "log_loss"})


@dataclass(frozen=True)
class ConsistencyResult:
    """Result of :func:`consistency_test`: the observed metric against a calibrated model's.

    Attributes
    ----------
    statistic : float
        The metric on the data (for ``spiegelhalter_z``: ``|Z|``).
    null_mean : float
        Mean of the metric over the resamples: what a perfectly calibrated
        model with these predictions would show on average.
    null_low, null_high : float
        Central ``level`` range of the null distribution: the order
        statistics at which the Monte Carlo tests of each tail reach
        ``(1 - level) / 2``, so that ``statistic > null_high`` exactly when
        ``p_value <= (1 - level) / 2`` (:func:`null_summary`). For the
        two-sided metrics (:data:`TWO_SIDED_METRICS`: "brier", "log_loss")
        the range is centred on the metric's expectation under calibration
        (:func:`calibrated_expectation`) with both ends at the test's
        critical distance (the low end clipped at 0), so that the statistic
        lies outside it exactly when ``p_value <= (1 - level) / 2``.
    p_value : float
        ``(1 + #{null >= statistic}) / (1 + number of null values)``: small
        when the observed value is larger than a calibrated model's; for the
        two-sided metrics, when it is further from the metric's expectation
        under calibration than theirs, on either side.
    level : float
        Coverage of ``[null_low, null_high]``, e.g. 0.95.
    n_resamples : int
        Number of resamples drawn.
    metric : str
        Name of the metric (a callable's ``__name__``).
    method : str
        How the null values were drawn: ``"exact"`` (a Bernoulli or
        categorical label per row) or ``"buckets"`` (binomial buckets, see
        :func:`consistency_test`).
    distribution : ndarray of shape (n_resamples - n_failed,)
        The null values, in drawing order.
    n_failed : int
        Resamples on which the metric returned NaN or raised
        :class:`~calibviz.InputError`; they are left out of the null
        distribution (as in :func:`calibviz.metrics.bootstrap`). Infinite
        values are kept (larger than every finite one); an infinite
        statistic (outcomes the model calls impossible) gets the smallest
        p-value, ``1 / (1 + number of null values)``.

    Examples
    --------
    >>> import numpy as np
    >>> from calibviz.metrics import consistency_test
    >>> p = np.linspace(0.05, 0.95, 400); y = (np.arange(400) % 3 == 0).astype(int)
    >>> r = consistency_test(y, p, n_resamples=99, random_state=0)
    >>> type(r).__name__, r.n_resamples, r.metric, r.null_low <= r.null_mean <= r.null_high
    ('ConsistencyResult', 99, 'ece', True)
    """

    statistic: float
    null_mean: float
    null_low: float
    null_high: float
    p_value: float
    level: float
    n_resamples: int
    metric: str
    method: str
    distribution: np.ndarray = field(repr=False, compare=False)
    n_failed: int = 0
    centre: float | None = None  #: the two-sided metrics' expectation under calibration (:func:`null_summary`)

    def range_at(self, level: float) -> tuple[float, float]:
        """``(null_low, null_high)`` at another coverage from the same null values (:func:`null_summary`): a
        dashboard that changes only its significance level moves the range without redrawing.

        >>> import numpy as np
        >>> r = ConsistencyResult(5.0, 10.0, 1.0, 19.0, 0.5, 0.9, 19, "x", "exact", np.arange(1.0, 20.0))
        >>> r.range_at(0.9), r.range_at(0.8)
        ((1.0, 19.0), (2.0, 18.0))
        """
        return null_summary(self.statistic, self.distribution, level, centre=self.centre)[1:3]


# ----------------------------------------------------------------------------
# fixed cells: bins fitted once, only the per-cell sums of y* change


@dataclass(frozen=True, eq=False)
class _Plan:
    """Rows in fixed cells, each with a Bernoulli(q) outcome, and the metric as a function of the cell sums."""

    cell: np.ndarray  # cell id of every row, shape (n,)
    q: np.ndarray  # success probability of every row's outcome (the score), shape (n,)
    w: np.ndarray | None  # row weights
    base: BinStatistics  # observed sums; count, weight, sum_pred (and second moments) stay fixed
    reduce: Callable[[BinStatistics], float]  # the metric's own reduction of the sums
    moments: bool  # whether the reduction needs sum_pred_true (second moments)

    def stats(self, positives, sum_true, sum_pred_true) -> BinStatistics:
        """The resample's statistics: the observed ones with the drawn sums of y*."""
        return replace(
            self.base,
            positives=positives,
            sum_true=sum_true,
            sum_pred_true=sum_pred_true if self.moments else self.base.sum_pred_true,
        )


def _splits_ties(q: np.ndarray, key: np.ndarray, n_bins: int, grouped: bool) -> bool:
    """Does a score occur in two adjacent bins (of the same group)?

    For rank-based bins (runs of the sorted scores within each group, cell =
    group * n_bins + bin), the max score of a bin is <= the min score of the
    next non-empty bin; equality means a run of tied scores straddles the
    boundary, whose split could then depend on the labels.
    """
    size = int(key.max()) + 1 if key.size else 0
    lo = np.full(size, np.inf)
    hi = np.full(size, -np.inf)
    np.minimum.at(lo, key, q)
    np.maximum.at(hi, key, q)
    used = np.flatnonzero(lo <= hi)
    adjacent = np.ones(max(used.shape[0] - 1, 0), dtype=bool)
    if grouped:
        adjacent = used[1:] // n_bins == used[:-1] // n_bins
    return bool(np.any(adjacent & (hi[used[:-1]] >= lo[used[1:]])))


def _label_free(binning):
    """The scheme if its bins never depend on the labels, else None."""
    scheme = get_scheme(binning)
    return scheme if type(scheme) in _LABEL_FREE else None


def _binary_plan(binning, reduce, moments=False):
    """Plan builder for a binary metric that is ``reduce(per-bin sums on binning)``."""

    def build(y, p, w):
        scheme = _label_free(binning)
        if scheme is None:
            return None
        bins, s = _fit_and_sum(y, p, w, scheme, moments)
        if isinstance(scheme, _RANK_BASED) and _splits_ties(p, bins.index, bins.n_bins, False):
            return None
        return _Plan(bins.index, p, w, s, reduce, moments)

    return build


def _confidence_plan(binning, norm):
    """Plan builder for the confidence ECE: the binary ECE of (top score, "top class correct")."""

    def build(y, P, w):
        scheme = _label_free(binning)
        if scheme is None:
            return None
        c, h = _top(P)
        bins, s = _fit_and_sum((y == c).astype(np.float64), h, w, scheme, False)
        if isinstance(scheme, _RANK_BASED) and _splits_ties(h, bins.index, bins.n_bins, False):
            return None
        return _Plan(bins.index, h, w, s, lambda st: _norm_of_gaps(st, norm), False)

    return build


def _top_label_plan(binning, fit, reduce):
    """Plan builder for a top-label metric ``reduce(cells, per-cell sums)`` (cell = predicted class x bin)."""

    def build(y, P, w):
        scheme = _label_free(binning)
        if scheme is None:
            return None
        cells = _top_label_cells(y, P, w, scheme, fit)
        if isinstance(scheme, _RANK_BASED):
            if cells.bins is not None:  # one pooled fit
                split = _splits_ties(cells.h, cells.bins.index, cells.bins.n_bins, False)
            else:  # one fit per predicted class
                split = _splits_ties(cells.h, cells.index, cells.n_bins, True)
            if split:
                return None
        return _Plan(cells.index, cells.h, w, cells.stats, lambda st: reduce(cells, st), False)

    return build


def _tl_bin_max(cells, s) -> float:
    """Top-label MCE, reduce="bin": the largest class-weighted deviation of a bin (as top_label_mce)."""
    dev, weight = _bin_deviation(replace(cells, stats=s))
    return float(np.max(dev[weight > 0]))


def _bucket_groups(plan: _Plan):
    """Groups of rows sharing a cell and a score bucket of width 1/_BUCKETS.

    Returns (size, mean score, cells holding groups, start of each such cell's groups).
    """
    bucket = np.minimum(plan.q * _BUCKETS, _BUCKETS - 1).astype(np.int64)
    _, gcell, size, mean, starts = cell_bucket_groups(plan.cell, bucket, plan.base.count.shape[0], score=plan.q)
    return size, mean, gcell[starts], starts


def cell_bucket_groups(cell, bucket, n_cells: int, *, score, count=None, weight=None):
    """Groups of items sharing a cell and a score bucket of width 1/_BUCKETS, in the order of cell * H + bucket.

    The groups of the binomial buckets: items are rows (``count`` None: one row each, ``score`` their scores)
    or a scan's atoms (:mod:`calibviz.scan.reference`: ``count`` their rows, ``score`` their sums of w p,
    ``weight`` their sums of w, so that the mean is the weighted mean). Sums run in item order (bincount), so
    rows and the atoms holding them give the same groups. Returns (group of each item, cell of each group,
    rows per group, mean score per group, start of each cell's groups); groups of one cell are consecutive.
    """
    H = _BUCKETS
    key = np.asarray(cell).astype(np.int64) * H + bucket
    if n_cells * H <= _BLOCK:
        g = np.flatnonzero(np.bincount(key, minlength=n_cells * H))
        inverse = np.searchsorted(g, key)
    else:
        g, inverse = np.unique(key, return_inverse=True)
        inverse = inverse.reshape(-1)
    size = np.bincount(inverse) if count is None else np.rint(np.bincount(inverse, weights=count)).astype(np.int64)
    total = np.bincount(inverse, weights=score)
    mean = np.clip(total / (size if weight is None else np.bincount(inverse, weights=weight)), 0.0, 1.0)
    gcell = g // H
    starts = np.flatnonzero(np.r_[True, gcell[1:] != gcell[:-1]])
    return inverse, gcell, size, mean, starts


def _null_fixed(plan: _Plan, n_resamples: int, rng: np.random.Generator, buckets) -> np.ndarray:
    """Null values of a fixed-cell plan: exact per-row draws, or binomial draws per bucket."""
    return np.fromiter(map(plan.reduce, _null_statistics(plan, n_resamples, rng, buckets)), np.float64,
                       count=n_resamples)


#: Decimals a group's mean score is rounded to for its binomial draw (:func:`drawn_probability`).
DRAW_DECIMALS = 12


def drawn_probability(mean: np.ndarray) -> np.ndarray:
    """The success probability a group's binomial draw uses: its mean score rounded to :data:`DRAW_DECIMALS`.

    Sums of the same scores in another order (a scan's engines add files and threads in any order) differ in
    the last bits, and numpy's binomial sampler branches on the probability (its mode floor((n + 1) p), its choice
    of algorithm), so a mean of 0.1 summed as 0.09999999999999998 or as 0.10000000000000026 drew other labels
    from the same seed and, the stream shifted, every later group too: a log of 3-decimal scores in four files
    read p = 0.31 or 0.33 run to run (a review). Rounded, equal scores draw the same in any order. The draw's
    probability moves by at most 5e-13, nothing next to the binomial buckets' own bound.

    >>> drawn_probability(np.array([0.09999999999999998, 0.10000000000000026, 0.1234567890123456, 1 + 1e-16]))
    array([0.1       , 0.1       , 0.12345679, 1.        ])
    """
    return np.clip(np.round(mean, DRAW_DECIMALS), 0.0, 1.0)


def bucket_binomial_draws(size: np.ndarray, mean: np.ndarray, n_resamples: int, rng: np.random.Generator):
    """Redrawn positives of every bucket, ``k ~ Binomial(size, mean)`` (the mean as :func:`drawn_probability`
    rounds it), as arrays of shape (c, n_buckets) holding ``c`` redraws each (about ``_BLOCK`` draws per array),
    ``n_resamples`` redraws in all. A generator: a caller that draws more per chunk (the weights of a weighted
    scan's positives) keeps one stream for any chunking of its own."""
    chunk = max(1, _BLOCK // max(size.shape[0], 1))
    p = drawn_probability(mean)
    for done in range(0, n_resamples, chunk):
        yield rng.binomial(size, p, size=(min(chunk, n_resamples - done), size.shape[0]))


def _null_statistics(plan: _Plan, n_resamples: int, rng: np.random.Generator, buckets):
    """The ``n_resamples`` redrawn cell statistics of a fixed-cell plan (a generator), for :func:`_null_fixed`
    and for callers that reduce one draw several ways (:mod:`calibviz.scan.reference`)."""
    n_cells = plan.base.count.shape[0]
    if buckets is not None:
        size, mean, cells, starts = buckets
        pos = spt = None
        for k in bucket_binomial_draws(size, mean, n_resamples, rng):
            c = k.shape[0]
            if pos is None:  # the first chunk is the largest
                pos = np.zeros((c, n_cells), dtype=np.int64)
                spt = np.zeros(pos.shape) if plan.moments else None
            pos[:c, cells] = np.add.reduceat(k, starts, axis=1)
            if plan.moments:  # sum of p * y* over a bucket ~ mean score x successes
                spt[:c, cells] = np.add.reduceat(k * mean, starts, axis=1)
            for j in range(c):
                yield plan.stats(pos[j].copy(), pos[j].astype(np.float64), None if spt is None else spt[j].copy())
        return
    # exact: rows sorted by cell once, so each cell's sums are one reduceat over a contiguous run
    order = np.argsort(plan.cell, kind="stable")
    cs = plan.cell[order]
    starts = np.flatnonzero(np.r_[True, cs[1:] != cs[:-1]])
    cells = cs[starts]
    q = plan.q[order]
    w = None if plan.w is None else plan.w[order]
    wp = None if not plan.moments else (q if w is None else w * q)
    n = q.shape[0]
    u = np.empty(min(n, _CHUNK))
    z = np.empty(n, dtype=bool)
    positives = np.zeros(n_cells, dtype=np.int64)
    sum_true = np.zeros(n_cells)
    spt = np.zeros(n_cells) if plan.moments else None
    for r in range(n_resamples):
        for s in range(0, n, _CHUNK):  # chunks: the uniforms stay in cache; same stream as one call
            m = min(_CHUNK, n - s)
            rng.random(out=u[:m])
            np.less(u[:m], q[s:s + m], out=z[s:s + m])
        positives[cells] = np.add.reduceat(z, starts, dtype=np.int64)
        sum_true[cells] = positives[cells] if w is None else np.add.reduceat(w * z, starts)
        if spt is not None:
            spt[cells] = np.add.reduceat(wp * z, starts)
        yield plan.stats(positives.copy(), sum_true.copy(), None if spt is None else spt.copy())


# ----------------------------------------------------------------------------
# generic: draw labels for every row and call the metric


def _categorical_draw(P: np.ndarray, cum: np.ndarray | None, rng: np.random.Generator) -> np.ndarray:
    """One class per row, ``y* ~ Categorical(P[i])``, by inverse CDF with one uniform per row.

    y* = #{k : cumsum(P[i])_k <= u * rowsum}; rows are processed in chunks
    (the cumulative sums are recomputed per chunk unless ``cum`` is given).
    """
    n, K = P.shape
    u = rng.random(n)
    out = np.empty(n, dtype=np.int64)
    step = max(1, _BLOCK // K)
    for s in range(0, n, step):
        cs = cum[s:s + step] if cum is not None else np.cumsum(P[s:s + step], axis=1)
        thr = u[s:s + step] * cs[:, -1]
        out[s:s + step] = np.count_nonzero(cs <= thr[:, None], axis=1)
    np.minimum(out, K - 1, out=out)  # round-off guard (u * total rounding up to the total)
    return out


def _null_generic(func, kind, draw, y_prob, w, options, n_resamples, rng, named: bool) -> np.ndarray:
    """Null values by drawing labels for every row and calling the metric (named metrics or a callable)."""
    values = np.empty(n_resamples)
    n = y_prob.shape[0]
    if kind == "binary":
        if named:
            # calibviz's metrics do not depend on the row order: sorted scores make every refit's sort
            # (PAVA-BC, EqualMass, ...) a pass over presorted data
            order = np.argsort(y_prob, kind="stable")
            y_prob = y_prob[order]
            w = None if w is None else w[order]
        # a metric with a batched form (TCE: resampling._values) gets its redraws in batches of ~2^21 rows (the
        # same uniforms, in the same order, as one redraw at a time); the others one redraw at a time
        step = max(1, _BATCH_ROWS // max(n, 1)) if hasattr(func, "many") else 1
        for r0 in range(0, n_resamples, step):
            ystar = rng.random((min(step, n_resamples - r0), n)) < y_prob
            values[r0:r0 + ystar.shape[0]] = _values(
                func, [([ys if named else ys.astype(np.float64), y_prob], w) for ys in ystar], options)
        return values
    K = y_prob.shape[1]
    if draw == "top":
        # the metric only sees whether y* is the predicted class: y* = c with probability max(P[i])
        c, h = _top(y_prob)
        other = (c + 1) % K
        for r in range(n_resamples):
            ystar = np.where(rng.random(n) < h, c, other)
            values[r] = _call(func, [ystar, y_prob], w, options)
        return values
    cum = np.cumsum(y_prob, axis=1) if y_prob.size <= _BLOCK * 4 else None
    for r in range(n_resamples):
        values[r] = _call(func, [_categorical_draw(y_prob, cum, rng), y_prob], w, options)
    return values


# ----------------------------------------------------------------------------
# the metrics by name


@dataclass(frozen=True)
class _Metric:
    func: Callable  # (y, p, sample_weight=None, **options) -> float
    base: Callable  # the calibviz function whose keyword options are accepted
    kind: str  # "binary" | "multiclass"
    draw: str = "joint"  # multiclass generic draws: "top" (only y* == argmax matters) or "joint"
    plan: Callable | None = None  # options -> plan builder (y, p, w) -> _Plan | None
    fixed: tuple = ()  # options set by the name (rmsce: norm)


def _rmsce(y_true, y_prob, *, sample_weight=None, **options):
    return ece(y_true, y_prob, norm="l2", sample_weight=sample_weight, **options)


def _hl_statistic(y_true, y_prob, *, sample_weight=None, **options):
    # the statistic only: its p-value's redraws are these
    return hosmer_lemeshow(y_true, y_prob, sample_weight=sample_weight, reference="chi2", **options).statistic


def _abs_spiegelhalter(y_true, y_prob, *, sample_weight=None, **options):
    return abs(spiegelhalter_z(y_true, y_prob, sample_weight=sample_weight, **options).statistic)


def _brier_reliability(y_true, y_prob, *, sample_weight=None, **options):
    return brier_decomposition(y_true, y_prob, sample_weight=sample_weight, **options).reliability


def _ici(y_true, y_prob, *, sample_weight=None, **options):
    return calibration_index(y_true, y_prob, sample_weight=sample_weight, **options).ici


def _ece_plan(o, norm=None):
    return _binary_plan(o["binning"], lambda s, nm=norm or o["norm"]: _norm_of_gaps(s, nm))


_REGISTRY = {
    "ece": _Metric(ece, ece, "binary", plan=_ece_plan),
    "ace": _Metric(ace, ace, "binary",
                   plan=lambda o: _binary_plan(EqualMass(o["n_bins"]), lambda s, nm=o["norm"]: _norm_of_gaps(s, nm))),
    "mce": _Metric(mce, mce, "binary", plan=lambda o: _ece_plan(o, "max")),
    "rmsce": _Metric(_rmsce, ece, "binary", plan=lambda o: _ece_plan(o, "l2"), fixed=("norm",)),
    "debiased_ece": _Metric(debiased_ece, debiased_ece, "binary"),
    "tce": _Metric(tce, tce, "binary"),
    "smooth_ece": _Metric(smooth_ece, smooth_ece, "binary", fixed=("return_bandwidth",)),
    "brier": _Metric(brier_score, brier_score, "binary"),
    "log_loss": _Metric(log_loss, log_loss, "binary"),
    "hosmer_lemeshow": _Metric(_hl_statistic, hosmer_lemeshow, "binary"),
    "spiegelhalter_z": _Metric(_abs_spiegelhalter, spiegelhalter_z, "binary"),
    "brier_reliability": _Metric(
        _brier_reliability, brier_decomposition, "binary",
        plan=lambda o: _binary_plan(o["binning"], lambda s: _decomposition(s).reliability, moments=True),
    ),
    "ici": _Metric(_ici, calibration_index, "binary"),
    "confidence_ece": _Metric(confidence_ece, confidence_ece, "multiclass", draw="top",
                              plan=lambda o: _confidence_plan(o["binning"], o["norm"])),
    "top_label_ece": _Metric(
        top_label_ece, top_label_ece, "multiclass", draw="top",
        plan=lambda o: _top_label_plan(o["binning"], o["fit"], lambda cells, s, nm=o["norm"]: _norm_of_gaps(s, nm)),
    ),
    "top_label_mce": _Metric(
        top_label_mce, top_label_mce, "multiclass", draw="top",
        plan=lambda o: _top_label_plan(
            o["binning"], o["fit"],
            _tl_bin_max if o["reduce"] == "bin" else (lambda cells, s: _norm_of_gaps(s, "max")),
        ),
    ),
    "classwise_ece": _Metric(classwise_ece, classwise_ece, "multiclass"),
    "classwise_tce": _Metric(classwise_tce, classwise_tce, "multiclass"),
}
_ALIASES = {"smece": "smooth_ece", "brier_score": "brier"}

#: Metric names :func:`consistency_test` accepts (plus the aliases "smece" and "brier_score").
CONSISTENCY_METRICS = tuple(_REGISTRY)


def _resolve(metric):
    """(name, _Metric or None for a callable)."""
    if callable(metric):
        return getattr(metric, "__name__", type(metric).__name__), None
    if isinstance(metric, str):
        key = metric.strip().lower().replace("-", "_")
        key = _ALIASES.get(key, key)
        if key in _REGISTRY:
            return key, _REGISTRY[key]
    raise InputError(
        f"unknown metric {metric!r}; pass a callable (y_true, y_prob, sample_weight=None) -> float "
        f"or one of: {', '.join(CONSISTENCY_METRICS)} (aliases: smece, brier_score)."
    )


def _options(name: str, spec: _Metric, options: dict) -> dict:
    """Options with the metric's defaults filled in; unknown names are an InputError."""
    params = inspect.signature(spec.base).parameters
    allowed = [
        k for k, prm in params.items()
        if prm.kind is inspect.Parameter.KEYWORD_ONLY and k != "sample_weight" and k not in spec.fixed
    ]
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        accepted = ", ".join(allowed) if allowed else "none"
        raise InputError(
            f"metric {name!r} does not take the option(s) {', '.join(map(repr, unknown))}; "
            f"it accepts: {accepted}."
        )
    return {**{k: params[k].default for k in allowed}, **options}


def _check_kind(name: str, spec: _Metric | None, ndim: int, shape) -> str:
    if ndim not in (1, 2):
        raise InputError(
            f"y_prob must have shape (n,) (binary: P(y = 1)) or (n, K) (multiclass), got shape {shape}."
        )
    kind = "binary" if ndim == 1 else "multiclass"
    if spec is None or spec.kind == kind:
        return kind
    if spec.kind == "binary":
        raise InputError(
            f"metric {name!r} is binary and needs y_prob of shape (n,) with P(y = 1), got shape {shape}. "
            "For two classes pass y_prob[:, 1]; for K classes use a multiclass metric "
            "(confidence_ece, top_label_ece, top_label_mce, classwise_ece, classwise_tce)."
        )
    raise InputError(
        f"metric {name!r} is multiclass and needs y_prob of shape (n, K), got shape {shape}. "
        "For a binary view use a binary metric (e.g. 'ece'), or pass np.column_stack([1 - p, p])."
    )


def reference_level(alpha: float) -> float:
    """Coverage of the calibrated-model range shown beside a verdict at level ``alpha``: ``1 - 2 alpha``.

    The verdict is one-sided for calibration errors (a value larger than a calibrated model's is evidence of
    miscalibration, p <=
    alpha), so the range's upper end must be the test's critical value: with ``alpha`` in each tail a value
    lies above the range exactly when the verdict says "evidence" (:func:`null_summary`). A central 95% range
    beside a 5% one-sided test let a value inside the range read "evidence of miscalibration" (p = 0.04 for an
    MCE at the range's displayed end).

    >>> reference_level(0.05)
    0.9
    """
    return 1.0 - 2.0 * alpha


def null_summary(statistic: float, values: np.ndarray, level: float, *,
                 centre: float | None = None, atol: float = 0.0) -> tuple[float, float, float, float]:
    """(null_mean, null_low, null_high, p_value) of an observed metric against its null values.

    ``p_value = (1 + #{null >= statistic}) / (1 + B)`` over the B non-NaN null
    values (ties within a relative 1e-10 count as reached, so a statistic
    within that of ``null_high`` is not above the range either); NaN for a
    NaN statistic. The range's ends
    are order statistics chosen so that the range agrees with the tests of
    each tail at ``a = (1 - level) / 2``: with ``m = floor(a (B + 1)) - 1``
    null values allowed beyond each end, ``null_high`` is the (m + 1)-th
    largest and ``null_low`` the (m + 1)-th smallest null value, so
    ``statistic > null_high`` iff ``p_value <= a`` (and symmetrically below).
    Too few values for ``a`` (``a (B + 1) < 1``: no p-value can reach it) give
    the whole null range. NaN everywhere without null values. ``atol``: ties
    within this absolute distance count as reached too (a value known only to
    that precision, e.g. a scan's log loss from bucket moments).

    ``centre`` (the two-sided metrics, :data:`TWO_SIDED_METRICS`: scores that
    miscalibration moves either way) tests the distance from it, the metric's
    expectation under a calibrated model (a function of the predictions alone,
    so that the p-value stays exactly valid and the range does not move with
    the observed value): ``p_value = (1 + #{|null - centre| >= |statistic -
    centre|}) / (1 + B)``, and the range is ``centre -+ d`` with ``d`` the
    (m + 1)-th largest ``|null - centre|``, so that the statistic lies outside
    it iff ``p_value <= a``; both ends are the test's critical values, and the
    low end is clipped at 0 (both metrics are non-negative: nothing lies below
    0, and a skewed small sample put it at -0.00035).

    Examples
    --------
    >>> null = np.arange(1.0, 20.0)  # 19 null values 1..19
    >>> null_summary(19.5, null, 0.9)  # above them all: p = 1/20 = 0.05, above the range
    (10.0, 1.0, 19.0, 0.05)
    >>> null_summary(19.0, null, 0.9)[3]  # reached by one: p = 0.1, and not above the range
    0.1
    >>> null_summary(0.5, null, 0.9)[3], null_summary(0.5, null, 0.9, centre=10.0)  # below them all
    (1.0, (10.0, 1.0, 19.0, 0.05))
    """
    dist = np.sort(np.asarray(values, dtype=np.float64)[~np.isnan(values)])
    b = dist.shape[0]
    if not b:
        return math.nan, math.nan, math.nan, math.nan
    m = min(max(math.floor((1 - level) / 2 * (b + 1) + 1e-9) - 1, 0), (b - 1) // 2)
    if centre is not None and math.isfinite(statistic):
        dev = np.sort(np.abs(dist - centre))
        seen = abs(statistic - centre)
        p_value = (1.0 + np.count_nonzero(dev >= seen - max(_TIE_RTOL * max(abs(statistic), seen), atol))) / (1.0 + b)
        d = float(dev[b - 1 - m])
        return float(dist.mean()), max(float(centre - d), 0.0), float(centre + d), float(p_value)
    tol = max(_TIE_RTOL * abs(statistic), atol) if math.isfinite(statistic) else 0.0
    p_value = (1.0 + np.count_nonzero(dist >= statistic - tol)) / (1.0 + b) if not math.isnan(statistic) else math.nan
    return float(dist.mean()), float(dist[m]), float(dist[b - 1 - m]), float(p_value)


def calibrated_expectation(metric: str, y_prob, sample_weight=None, *, eps: float = LOG_LOSS_EPS) -> float:
    """The expectation of a two-sided metric (:data:`TWO_SIDED_METRICS`) when ``y ~ Bernoulli(p)``: the centre of
    its calibrated-model reference (:func:`null_summary`).

    Brier score: ``sum w p (1 - p) / sum w``; log loss: ``sum w H(p) / sum w`` with the entropy of the clipped
    probabilities ``-p log(q) - (1 - p) log(1 - q)``, ``q = clip(p, eps, 1 - eps)``, as :func:`log_loss` clips
    (Spiegelhalter 1986 centres the Brier score's test on the same expectation).

    >>> calibrated_expectation("brier", [0.5, 0.1]), round(calibrated_expectation("log_loss", [0.5]), 6)
    (0.17, 0.693147)
    """
    p = np.asarray(y_prob, dtype=np.float64)
    if metric == "brier":
        v = p * (1.0 - p)
    elif metric == "log_loss":
        q = np.clip(p, eps, 1.0 - eps)
        v = -(p * np.log(q) + (1.0 - p) * np.log1p(-q))
    else:
        raise InputError(f"calibrated_expectation covers {sorted(TWO_SIDED_METRICS)}, not {metric!r}.")
    return float(np.average(v, weights=sample_weight)) if sample_weight is not None else float(v.mean())


def redraws_needed(level: float) -> int:
    """The fewest label redraws whose Monte Carlo p-value, at least 1 / (redraws + 1), can reach ``level``.

    >>> redraws_needed(0.05), redraws_needed(0.001)
    (19, 999)
    """
    return math.ceil(1 / level - 1 - 1e-9)


def consistency_test(
    y_true,
    y_prob,
    *,
    metric="ece",
    n_resamples: int = 1000,
    random_state=None,
    sample_weight=None,
    level: float = 0.95,
    method: str = "auto",
    **options,
) -> ConsistencyResult:
    """Compare a metric with its value under a perfectly calibrated model (consistency resampling).

    Labels are redrawn from the predictions themselves, ``y* ~ Bernoulli(p)``
    (multiclass: ``y* ~ Categorical(P[i])``), ``n_resamples`` times; the
    metric is recomputed on ``(y*, y_prob)`` with the same weights and
    options. The null values show the range a calibrated model with exactly
    these predictions would reach, and the p-value says how unusual the
    observed value is against it.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary labels in {0, 1}, or class indices 0..K-1 with a (n, K) ``y_prob``.
    y_prob : array-like of shape (n,) or (n, K)
        P(y = 1) for a binary metric; probability vectors (rows sum to 1) for
        a multiclass metric.
    metric : str or callable, default "ece"
        One of ``CONSISTENCY_METRICS``: binary "ece", "ace", "mce", "rmsce"
        (= ``ece(norm="l2")``), "debiased_ece", "tce", "smooth_ece" (or
        "smece"), "brier" (:func:`brier_score`), "log_loss",
        "hosmer_lemeshow" (its statistic), "spiegelhalter_z" (``|Z|``, so
        that larger is worse, as for every other metric),
        "brier_reliability" (the reliability term of
        :func:`brier_decomposition`), "ici" (:func:`calibration_index`'s
        ICI); multiclass "confidence_ece", "top_label_ece",
        "top_label_mce", "classwise_ece", "classwise_tce". Or a callable
        ``metric(y_true, y_prob, sample_weight=None, **options) -> float``
        (larger = worse calibrated); it receives validated arrays (labels as
        float64 0/1, or int64 class indices for a (n, K) ``y_prob``) and
        ``sample_weight=`` only when weights are given.
    n_resamples : int, default 1000
        Number of label draws, >= 1.
    random_state : None, int or numpy.random.Generator
        Seed of the draws; the same seed gives the same result.
    sample_weight : array-like of shape (n,), optional
        Passed to the metric as ``sample_weight`` for the statistic and every
        resample. Rows of weight 0 are absent rows (dropped by the input
        checks).
    level : float, default 0.95
        Coverage of ``[null_low, null_high]``, in (0, 1).
    method : {"auto", "exact", "fast"}, default "auto"
        "exact": one Bernoulli (categorical) draw per row and resample.
        "fast": binomial buckets (see Notes) wherever they apply (unweighted
        data, metrics on label-free bins), exact draws elsewhere. "auto":
        buckets when they apply, ``n * n_resamples > 2**25`` and the buckets
        hold at least 8 rows on average; exact otherwise. The result's
        ``method`` says which draws were used.
    **options
        Passed to the metric, e.g. ``binning=Uniform(10)``, ``n_bins=10``
        ("ace"), ``alpha=0.01`` ("tce"), ``norm="l2"``, ``n_groups=`` ...

    Returns
    -------
    ConsistencyResult
        ``statistic``, ``null_mean``, ``null_low``, ``null_high``,
        ``p_value``, ``level``, ``n_resamples``, ``metric``, ``method``,
        ``distribution`` (the null values) and ``n_failed``.

    Raises
    ------
    InputError
        For bad arrays, an unknown metric name (the message lists them), an
        option the metric does not take, a binary metric with a (n, K)
        ``y_prob`` or a multiclass one with a (n,) ``y_prob``, bad
        ``n_resamples``, ``level``, ``method`` or ``random_state``, or a
        metric that is undefined (NaN, InputError) on the data themselves.

    Warns
    -----
    RuntimeWarning
        When the metric was undefined (NaN or InputError) on some
        resamples: they are counted in ``n_failed`` and left out.

    Notes
    -----
    *p-value.* ``(1 + #{null >= statistic}) / (1 + m)`` with m the number of
    finite null values (``n_resamples`` unless some failed), the Monte Carlo
    p-value that is exactly valid (super-uniform) for any m. Null values
    within a relative 1e-10 of the statistic count as ties (>=): the observed
    value and the resampled ones may be summed in a different order.
    "brier" and "log_loss" are tested two-sided (:func:`null_summary`), by
    their distance from their expectation under calibration
    (:func:`calibrated_expectation`): a proper score below a calibrated
    model's (outcomes less uncertain than the predictions say) is evidence of
    miscalibration as much as one above.

    *How the null values are drawn.* Binned metrics whose bins depend on the
    scores alone (Uniform, Custom, EqualMass, MedianVariance bins of "ece",
    "ace", "mce", "rmsce", "brier_reliability", "confidence_ece",
    "top_label_ece", "top_label_mce") fit their bins once; each resample only
    changes the per-bin sums of y*, which the metric's own reduction turns
    into its value. (Rank-based bins are fitted once only when no run of tied
    scores straddles a bin boundary; otherwise, and for label-dependent bins
    such as PAVA-BC, every resample calls the metric.) All other metrics
    draw y* for every row and call the metric; named binary metrics get the
    rows sorted by score (they do not depend on row order, and a refit's
    sort is then a pass over presorted data). "confidence_ece" and the
    top-label metrics only see whether y* is the predicted class (argmax,
    first on ties), which is Bernoulli(max P[i]): that is what is drawn.
    Class-wise metrics and callables with a (n, K) ``y_prob`` get the joint
    categorical draw (inverse CDF, one uniform per row).

    *Binomial buckets (approximation).* Without weights, the rows of each
    bin are grouped by score buckets ``[j h, (j+1) h)`` of width
    ``h = 2**-12``, and a resample draws ``Binomial(n_g, pbar_g)`` for each
    bucket g (n_g rows of mean score pbar_g) instead of n_g Bernoulli(p_i).
    Both have the same mean; the exact sum's variance
    ``sum_i p_i (1 - p_i) = n_g pbar_g (1 - pbar_g) - sum_i (p_i - pbar_g)^2``
    is smaller than the binomial's by ``sum_i (p_i - pbar_g)^2``, which is
    at most ``n_g (pbar_g - a)(a + h - pbar_g) <= n_g h^2 / 4`` for the
    bucket ``[a, a + h)`` (Bhatia-Davis) and at most a fraction
    ``h / max(pbar_g, 1 - pbar_g) <= 2 h = 2**-11`` (0.05%) of the binomial
    variance, so each bin's standard deviation is overstated by at most
    0.025%. The binomial is also the more spread of the two in convex order
    (Hoeffding 1956), so the approximation can only make the null values
    very slightly larger, i.e. the p-value very slightly conservative. With
    "brier_reliability", ``sum p y*`` of a bucket is taken as
    ``pbar_g x successes`` (the reliability term does not use it). Weighted
    data are always drawn row by row (exact), without re-binning where the
    bins are label-free.

    References
    ----------
    J. Bröcker and L. A. Smith, "Increasing the reliability of reliability
    diagrams", Weather and Forecasting 22(3), 2007 (consistency resampling);
    T. Dimitriadis, T. Gneiting and A. I. Jordan, "Stable reliability
    diagrams for probabilistic classifiers", PNAS 118(8), 2021
    (consistency bands of CORP reliability diagrams); W. Hoeffding, "On
    the distribution of the number of successes in independent trials",
    Ann. Math. Statist. 27(3), 1956 (Poisson-binomial vs binomial);
    A. C. Davison and D. V. Hinkley, *Bootstrap Methods and their
    Application*, 1997, Sec. 4.2 (Monte Carlo p-value (1 + #) / (1 + m)).

    Examples
    --------
    >>> import numpy as np
    >>> from calibviz.metrics import consistency_test
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(0.05, 0.95, 2000)
    >>> y = (rng.random(2000) < p).astype(int)          # a calibrated model
    >>> r = consistency_test(y, p, metric="ece", n_resamples=200, random_state=1)
    >>> r.null_low < r.null_mean < r.null_high, r.p_value > 0.05
    (True, True)
    >>> y_bad = (rng.random(2000) < p ** 2).astype(int)  # true risk p^2: over-predicts
    >>> consistency_test(y_bad, p, metric="tce", n_resamples=50, random_state=1).p_value < 0.05
    True
    >>> P = rng.dirichlet([1, 1, 1], 500); yk = np.array([rng.choice(3, p=row) for row in P])
    >>> round(consistency_test(yk, P, metric="classwise_ece", n_resamples=50, random_state=0).p_value, 2) > 0.01
    True
    """
    name, spec = _resolve(metric)
    if isinstance(n_resamples, (bool, np.bool_)) or not isinstance(n_resamples, numbers.Integral) or n_resamples < 1:
        raise InputError(f"n_resamples must be an integer >= 1, got {n_resamples!r}.")
    n_resamples = int(n_resamples)
    if isinstance(level, (bool, np.bool_)) or not (isinstance(level, numbers.Real) and 0 < level < 1):
        raise InputError(f"level must lie strictly between 0 and 1 (e.g. 0.95), got {level!r}.")
    if method not in _METHODS:
        raise InputError(f"method must be one of {', '.join(map(repr, _METHODS))}, got {method!r}.")
    try:
        rng = np.random.default_rng(random_state)
    except (TypeError, ValueError) as exc:
        raise InputError(f"random_state must be None, an int or a numpy Generator ({exc}).") from None
    try:
        shape = np.shape(y_prob)
    except ValueError:
        raise InputError("y_prob must be a numeric array of shape (n,) or (n, K) (rows of equal length).") from None
    kind = _check_kind(name, spec, len(shape), shape)

    if kind == "binary":
        y, prob, w = check_binary(y_true, y_prob, sample_weight)
    else:
        y, prob, w = check_multiclass(y_true, y_prob, sample_weight)
    if spec is None:
        func, opts = metric, dict(options)
    else:
        func, opts = spec.func, _options(name, spec, options)

    statistic = _call(func, [y, prob], w, options, strict=True)
    if math.isnan(statistic):
        raise InputError(f"metric {name!r} is NaN on these data; it has no calibrated-model reference.")

    plan = None
    if spec is not None and spec.plan is not None:
        plan = spec.plan(opts)(y, prob, w)
    buckets = None
    if plan is not None and w is None and method != "exact":
        groups = _bucket_groups(plan)
        n = prob.shape[0]
        if method == "fast" or (n * n_resamples > _EXACT_MAX and 8 * groups[0].shape[0] <= n):
            buckets = groups
    if plan is not None:
        values = _null_fixed(plan, n_resamples, rng, buckets)
    else:
        draw = "joint" if spec is None else spec.draw
        values = _null_generic(func, kind, draw, prob, w, options, n_resamples, rng, spec is not None)

    dist = values[~np.isnan(values)]  # an infinite value is a (very large) value, NaN a failure
    n_failed = int(n_resamples - dist.shape[0])
    if n_failed:
        warnings.warn(
            f"consistency_test: the metric {name!r} was undefined (NaN or InputError) on {n_failed} of "
            f"{n_resamples} resamples; they were left out of the null distribution (see n_failed).",
            RuntimeWarning,
            stacklevel=2,
        )
    centre = (calibrated_expectation(name, prob, w, eps=options.get("eps", LOG_LOSS_EPS))
              if spec is not None and name in TWO_SIDED_METRICS else None)
    null_mean, low, high, p_value = null_summary(statistic, dist, level, centre=centre)
    return ConsistencyResult(
        statistic=float(statistic),
        null_mean=null_mean,
        null_low=low,
        null_high=high,
        p_value=float(p_value),
        level=float(level),
        n_resamples=n_resamples,
        metric=name,
        method="buckets" if buckets is not None else "exact",
        distribution=dist,
        n_failed=n_failed,
        centre=centre,
    )
