"""Bootstrap confidence intervals for any metric (DESIGN.md §2, "numbers with uncertainty").

The rows of the inputs are resampled jointly; the metric is any callable that
returns a number. Resample indices are drawn in chunks from one seeded numpy
``Generator`` so the same ``random_state`` always gives the same result.

Four interval methods are offered (percentile, basic, BCa, bias-corrected).
Which one the dashboard uses for which metric is decided by a coverage study
(``benchmarks/coverage_study.py``, results in ``docs/intervals.md``) and
recorded in :mod:`calibviz.metrics.intervals`.
"""
from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..errors import InputError
from ..validation import check_weights
from .._lazy import lazy

stats = lazy("scipy.stats")

__all__ = ["bootstrap", "BootstrapResult", "interval_from_distribution", "difference_interval", "INTERVAL_METHODS",
           "percentile_p_value", "quantile_level_at_most", "quantile_level_at_least", "beyond_resamples_p"]

#: The interval methods of :func:`bootstrap` (``"bias-corrected"`` is accepted
#: as a spelling of ``"bias_corrected"``).
INTERVAL_METHODS = ("percentile", "basic", "bca", "bias_corrected")
_METHOD_ALIASES = {"bias-corrected": "bias_corrected", "BCa": "bca"}
_ALTERNATIVES = ("two-sided", "less", "greater")

# Upper bound on the number of indices drawn at once (chunk rows * n): 2^23
# int64 indices = 64 MB, large enough to amortise the generator call.
_MAX_CHUNK_ELEMENTS = 1 << 23
# Progress is reported at least this many times over a run.
_MIN_PROGRESS_UPDATES = 20


@dataclass(frozen=True)
class BootstrapResult:
    """Result of :func:`bootstrap` (and of :func:`interval_from_distribution`).

    Attributes
    ----------
    estimate : float
        The metric on the full data (the plug-in estimate).
    low, high : float
        Interval limits at level ``confidence``. A one-sided interval has
        ``low = -inf`` (``alternative="less"``: an upper bound) or
        ``high = inf`` (``"greater"``), replaced by the ``bounds`` of
        :func:`bootstrap` when those are given.
    confidence : float
        Requested coverage, e.g. 0.95.
    method : str
        ``"percentile"``, ``"basic"``, ``"bca"`` or ``"bias_corrected"``.
    n_resamples : int
        Number of resamples drawn.
    distribution : ndarray of shape (n_resamples - n_failed,)
        The finite metric values on the resamples, in drawing order.
    n_failed : int
        Resamples on which the metric returned NaN/inf or raised
        :class:`~calibviz.InputError` (e.g. a resample with one class only);
        they are left out of ``distribution`` and the interval.
    alternative : str
        ``"two-sided"`` (default), ``"less"`` or ``"greater"``.
    bias : float
        Bootstrap estimate of the bias of ``estimate``: ``mean(distribution)
        - estimate`` (Efron & Tibshirani 1993, Eq. 10.2); NaN without
        resamples. Reported for every method.
    debiased : float or None
        The bias-corrected estimate ``estimate - bias`` (clipped to
        ``bounds``) for ``method="bias_corrected"``; None for the other
        methods, which report no debiased estimate.

    Examples
    --------
    >>> import numpy as np
    >>> from calibviz.metrics import bootstrap
    >>> x = np.random.default_rng(0).normal(size=200)
    >>> res = bootstrap(np.var, x, n_resamples=500, method="bias_corrected", random_state=0)
    >>> res.method, res.debiased == res.point, res.low <= res.point <= res.high
    ('bias_corrected', True, True)
    >>> bootstrap(np.var, x, n_resamples=50, random_state=0).debiased is None
    True
    """

    estimate: float
    low: float
    high: float
    confidence: float
    method: str
    n_resamples: int
    distribution: np.ndarray = field(repr=False, compare=False)
    n_failed: int = 0
    alternative: str = "two-sided"
    bias: float = math.nan
    debiased: float | None = None

    @property
    def point(self) -> float:
        """The value to show with the interval: ``debiased`` when reported, else ``estimate``."""
        return self.estimate if self.debiased is None else self.debiased


def _as_rows(arrays) -> tuple[list[np.ndarray], int]:
    if not arrays:
        raise InputError("bootstrap needs at least one data array after the metric, e.g. bootstrap(ece, y_true, y_prob).")
    out = []
    for i, a in enumerate(arrays):
        arr = np.asarray(a)
        if arr.ndim == 0:
            raise InputError(f"data array {i} is a scalar; pass row-aligned arrays (one entry or row per sample).")
        out.append(arr)
    lengths = [a.shape[0] for a in out]
    if len(set(lengths)) != 1:
        raise InputError(
            f"the data arrays must be row-aligned but have lengths {lengths}; pass arrays with one entry per sample."
        )
    if lengths[0] < 1:
        raise InputError("the data arrays are empty; the bootstrap needs at least one row.")
    return out, lengths[0]


def _call(metric, arrays, weight, kwargs, *, strict: bool = False) -> float:
    """Metric value as float; NaN for a degenerate (sub)sample that raised InputError.

    With ``strict`` (the full data), InputError propagates: it is the user's input.
    """
    try:
        value = metric(*arrays, **kwargs) if weight is None else metric(*arrays, sample_weight=weight, **kwargs)
    except InputError:
        if strict:
            raise
        return math.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        raise InputError(
            f"the metric must return one number, got {type(value).__name__}; wrap it, e.g. "
            "lambda y, p: metric(y, p).statistic."
        ) from None


def _values(metric, samples, kwargs) -> np.ndarray:
    """The metric on each sample ``(arrays, weight)``, as :func:`_call` gives it (NaN for a failed one).

    A metric that carries ``many(samples, **kwargs)`` (e.g. :func:`calibviz.metrics.tce`, whose
    :func:`~calibviz.metrics.tce_many` tests the bins of all samples in one call) gets the samples at once, as
    ``(*arrays, weight)`` tuples; it returns the same values as the calls, NaN where a call raises InputError.
    """
    many = getattr(metric, "many", None)
    if many is None:
        return np.array([_call(metric, arrays, weight, kwargs) for arrays, weight in samples], dtype=np.float64)
    return np.asarray(many([(*arrays, weight) for arrays, weight in samples], **kwargs), dtype=np.float64)


def _row_resamples(n: int, n_resamples: int, rng: np.random.Generator, row_order=None):
    """Yield the bootstrap's row resamples in chunks: int arrays of shape (c, n), c >= 1, n_resamples rows in all.

    The one place that draws them, so that :func:`bootstrap` and the paired resamples of
    :func:`calibviz.compare.compare_models` see the same rows for the same seed. Chunks hold at most
    ``_MAX_CHUNK_ELEMENTS`` indices and at most 1/20 of the resamples (progress is reported per chunk).
    With ``row_order`` (a permutation of the rows) each resample lists its rows in that order: the same
    multiset as without it, drawn from the same random numbers.
    """
    chunk = max(1, min(_MAX_CHUNK_ELEMENTS // max(n, 1), math.ceil(n_resamples / _MIN_PROGRESS_UPDATES)))
    rank = None
    if row_order is not None:
        rank = np.empty(n, dtype=np.int64)
        rank[row_order] = np.arange(n)
    done = 0
    while done < n_resamples:
        c = min(chunk, n_resamples - done)
        idx = rng.integers(0, n, size=(c, n))
        if rank is not None:
            # sorting ranks (integers, a fast sort) instead of the metric sorting each resample's scores
            idx = row_order[np.sort(rank[idx], axis=1)]
        yield idx
        done += c


def _check_row_order(row_order, n: int):
    """``row_order`` as an int64 permutation of range(n), or None."""
    if row_order is None:
        return None
    order = np.asarray(row_order)
    if order.shape != (n,) or order.dtype.kind not in "iu" or n and (
            order.min() < 0 or order.max() >= n or np.bincount(order, minlength=n).max() > 1):
        raise InputError(f"row_order must be a permutation of the {n} row indices (e.g. np.argsort(y_prob)).")
    return order.astype(np.int64, copy=False)


def _jackknife(metric, arrays, weight, kwargs, n_groups: int, rng: np.random.Generator) -> np.ndarray:
    """Leave-one-group-out estimates (leave-one-out when n <= n_groups)."""
    n = arrays[0].shape[0]
    if n <= n_groups:
        groups = np.arange(n)[:, None]
    else:
        # Delete-d jackknife: random, nearly equal groups; O(n_groups) metric calls
        # instead of O(n), which is what makes BCa affordable at n = 10^6.
        groups = np.array_split(rng.permutation(n), n_groups)
    values = np.empty(len(groups))
    keep = np.ones(n, dtype=bool)
    for g, rows in enumerate(groups):
        keep[rows] = False
        values[g] = _call(metric, [a[keep] for a in arrays], None if weight is None else weight[keep], kwargs)
        keep[rows] = True
    return values[np.isfinite(values)]


def _percentile_of_score(dist: np.ndarray, score: float) -> float:
    # Mid-rank for ties, so discrete metrics (many resamples equal to the
    # estimate) get bias correction 0 rather than a spurious shift.
    return ((dist < score).sum() + (dist <= score).sum()) / (2.0 * dist.size)


def _bca_levels(dist, estimate, jack, levels) -> list:
    """BCa-adjusted quantile levels (Efron & Tibshirani 1993, Eqs. 14.9-14.15); None stays None.

    ``jack`` None gives acceleration 0 (the bias-corrected percentile method).
    """
    z0 = stats.norm.ppf(_percentile_of_score(dist, estimate))
    accel = 0.0
    if jack is not None and jack.size:
        d = jack.mean() - jack
        denom = 6.0 * (d @ d) ** 1.5
        accel = float((d**3).sum() / denom) if denom > 0 else 0.0
    out = []
    for level in levels:
        if level is None:
            out.append(None)
            continue
        z = stats.norm.ppf(level)
        out.append(float(stats.norm.cdf(z0 + (z0 + z) / (1.0 - accel * (z0 + z)))))
    return out


def _check_interval_args(method, confidence, alternative, bounds):
    """Validated (method, confidence, alternative, (lower, upper)); raises InputError."""
    method = _METHOD_ALIASES.get(method, method) if isinstance(method, str) else method
    if method not in INTERVAL_METHODS:
        raise InputError(f"method must be one of {', '.join(map(repr, INTERVAL_METHODS))}, got {method!r}.")
    if not (isinstance(confidence, numbers.Real) and not isinstance(confidence, bool) and 0 < confidence < 1):
        raise InputError(f"confidence must lie strictly between 0 and 1 (e.g. 0.95), got {confidence!r}.")
    if alternative not in _ALTERNATIVES:
        raise InputError(f"alternative must be one of {', '.join(map(repr, _ALTERNATIVES))}, got {alternative!r}.")
    if bounds is None:
        bounds = (None, None)
    try:
        lower, upper = bounds
        lower = -math.inf if lower is None else float(lower)
        upper = math.inf if upper is None else float(upper)
    except (TypeError, ValueError):
        raise InputError(f"bounds must be a pair (lower, upper) of numbers or None, got {bounds!r}.") from None
    if math.isnan(lower) or math.isnan(upper) or lower > upper:
        raise InputError(f"bounds must be a pair (lower, upper) with lower <= upper, got {bounds!r}.")
    return method, float(confidence), alternative, (lower, upper)


def _clip(value: float, lower: float, upper: float) -> float:
    return value if math.isnan(value) else min(max(value, lower), upper)


def _interval(dist, estimate, method, confidence, alternative, jack, lower, upper, *, stacklevel, plugin=None):
    """(low, high, bias, debiased) of one method on finite resampled values ``dist``.

    ``plugin`` is t(F_hat), the estimand on the empirical distribution (default: ``estimate``).
    """
    alpha = 1.0 - confidence
    if alternative == "two-sided":
        levels = [alpha / 2.0, 1.0 - alpha / 2.0]
    elif alternative == "less":  # an upper bound: (-inf, high]
        levels = [None, confidence]
    else:  # "greater": a lower bound, [low, inf)
        levels = [alpha, None]
    low, high = -math.inf, math.inf
    bias = math.nan
    debiased = None
    if not dist.size or (method != "percentile" and not math.isfinite(estimate)):
        if method == "bias_corrected":
            debiased = math.nan
        return math.nan, math.nan, bias, debiased
    centre = estimate if plugin is None else float(plugin)
    if math.isfinite(estimate) and math.isfinite(centre):
        bias = float(dist.mean() - centre)
    if method == "percentile":
        q = [None if lv is None else float(np.quantile(dist, lv)) for lv in levels]
        low = low if q[0] is None else q[0]
        high = high if q[1] is None else q[1]
    elif method in ("basic", "bias_corrected"):
        # theta_hat - theta is approximated by theta* - t(F_hat) (= theta* - theta_hat for a plug-in
        # estimate): the limits are theta_hat + t(F_hat) minus the *opposite* quantiles (Davison &
        # Hinkley 1997, Sec. 5.2).
        if levels[0] is not None:
            low = estimate + centre - float(np.quantile(dist, 1.0 - levels[0]))
        if levels[1] is not None:
            high = estimate + centre - float(np.quantile(dist, 1.0 - levels[1]))
        if method == "bias_corrected":
            debiased = _clip(estimate - bias, lower, upper)
    else:  # bca
        adj = _bca_levels(dist, estimate, jack, levels)
        finite = [lv for lv in adj if lv is not None]
        if all(math.isfinite(lv) and 0 < lv < 1 for lv in finite):
            if adj[0] is not None:
                low = float(np.quantile(dist, adj[0]))
            if adj[1] is not None:
                high = float(np.quantile(dist, adj[1]))
        else:
            warnings.warn(
                "bootstrap: the BCa interval is undefined because the estimate lies outside the resampled "
                "values (bias correction infinite); low/high are NaN. Use method='basic' or 'percentile'.",
                RuntimeWarning,
                stacklevel=stacklevel,
            )
            return math.nan, math.nan, bias, debiased
    return _clip(low, lower, upper), _clip(high, lower, upper), bias, debiased


def quantile_level_at_most(sorted_values: np.ndarray, x: float) -> float:
    """The largest t in [0, 1] with Q(t) <= x, for the linear-interpolation quantile function Q of
    ``sorted_values`` (numpy's default, as :func:`interval_from_distribution` reads it); 0 when even Q(0) > x.

    With :func:`quantile_level_at_least` it inverts Q, so that the level at which an interval read from Q
    reaches a value is exact, not counted in whole resamples (p-values of differences:
    :func:`calibviz.compare.compare_models`, :func:`calibviz.metrics.decomposition_table`).

    >>> quantile_level_at_most(np.array([0.0, 1.0, 2.0]), 0.5), quantile_level_at_most(np.array([1.0, 2.0]), 0.0)
    (0.25, 0.0)
    """
    d = sorted_values
    if x < d[0]:
        return 0.0
    i = int(np.searchsorted(d, x, side="right")) - 1
    if i >= d.size - 1:
        return 1.0
    return float((i + (x - d[i]) / (d[i + 1] - d[i])) / (d.size - 1))


def quantile_level_at_least(sorted_values: np.ndarray, x: float) -> float:
    """The smallest t in [0, 1] with Q(t) >= x (see :func:`quantile_level_at_most`); 1 when even Q(1) < x.

    >>> quantile_level_at_least(np.array([0.0, 1.0, 2.0]), 0.5), quantile_level_at_least(np.array([1.0, 2.0]), 3.0)
    (0.25, 1.0)
    """
    d = sorted_values
    if x > d[-1]:
        return 1.0
    j = int(np.searchsorted(d, x, side="left"))
    if j == 0:
        return 0.0
    return float((j - 1 + (x - d[j - 1]) / (d[j] - d[j - 1])) / (d.size - 1))


def percentile_p_value(distribution) -> float:
    """Two-sided p-value of "the quantity is 0" from its resampled values: the smallest level ``a`` at which the
    percentile interval at ``1 - a`` (:func:`interval_from_distribution`) excludes 0, read exactly from the
    interpolated quantiles.

    Where every resample lies on one side of 0 the resamples cannot resolve it; then a normal reading of them
    (``2 * Phi(-|mean| / sd)``), capped at 1 / resamples, so that a family's adjustment (Holm) gets the small
    values it needs. NaN with fewer than two finite values.

    >>> round(percentile_p_value(np.linspace(-1, 3, 101)), 3)
    0.5
    """
    d = np.sort(np.asarray(distribution, dtype=np.float64))
    d = d[np.isfinite(d)]
    if d.size < 2:
        return math.nan
    p = min(2.0 * quantile_level_at_most(d, 0.0), 2.0 * (1.0 - quantile_level_at_least(d, 0.0)), 1.0)
    return float(p) if p > 0 else beyond_resamples_p(d, float(d.mean()))


def beyond_resamples_p(values: np.ndarray, distance: float) -> float:
    """The p-value of a quantity whose interval excludes 0 at every level its resamples can express: the normal
    reading ``2 * Phi(-|distance| / sd)`` of ``values``, capped at 1 / resamples (the resamples' resolution)."""
    s = float(np.std(values, ddof=1))
    from scipy import stats

    normal = 0.0 if s == 0 else float(2.0 * stats.norm.sf(abs(distance) / s))
    return min(normal, 1.0 / values.size)


def interval_from_distribution(
    distribution,
    estimate: float,
    *,
    method: str = "percentile",
    confidence: float = 0.95,
    alternative: str = "two-sided",
    jackknife=None,
    bounds=None,
    plugin=None,
) -> BootstrapResult:
    """Interval of any method from already computed bootstrap values.

    :func:`bootstrap` draws the resamples and calls this function; it is
    public so that one set of resamples can give every method's interval
    (the coverage study does this, so that methods differ only by their
    formula, not by resampling noise).

    Parameters
    ----------
    distribution : array-like of shape (B,)
        Metric values on the resamples; non-finite values are dropped.
    estimate : float
        The metric on the full data.
    method, confidence, alternative, bounds
        As in :func:`bootstrap`.
    jackknife : array-like, optional
        Leave-one(-group)-out values of the metric, for the BCa acceleration;
        without them ``method="bca"`` uses acceleration 0 (the
        bias-corrected percentile interval, Efron & Tibshirani 1993,
        Sec. 14.3).
    plugin : float, optional
        As in :func:`bootstrap`: the estimand on the empirical distribution
        when the estimator is not its plug-in value.

    Returns
    -------
    BootstrapResult
        With ``n_resamples`` = number of finite values and ``n_failed = 0``.

    References
    ----------
    B. Efron and R. J. Tibshirani, *An Introduction to the Bootstrap*,
    Chapman & Hall, 1993, Ch. 10, 13, 14; A. C. Davison and D. V. Hinkley,
    *Bootstrap Methods and their Application*, Cambridge University Press,
    1997, Sec. 5.2-5.3.

    Examples
    --------
    >>> import numpy as np
    >>> dist = np.array([0.11, 0.12, 0.13, 0.14, 0.15])
    >>> r = interval_from_distribution(dist, 0.10, method="basic", confidence=0.5)
    >>> round(r.low, 4), round(r.high, 4)    # 2 * 0.10 - (0.14, 0.12)
    (0.06, 0.08)
    >>> r = interval_from_distribution(dist, 0.10, method="bias_corrected", confidence=0.5)
    >>> round(r.bias, 4), round(r.debiased, 4)
    (0.03, 0.07)
    >>> r = interval_from_distribution(dist, 0.10, method="percentile", alternative="less", bounds=(0, 1))
    >>> r.low, round(r.high, 4)
    (0.0, 0.148)
    """
    method, confidence, alternative, (lower, upper) = _check_interval_args(method, confidence, alternative, bounds)
    dist = np.asarray(distribution, dtype=np.float64).ravel()
    dist = dist[np.isfinite(dist)]
    jack = None
    if jackknife is not None:
        jack = np.asarray(jackknife, dtype=np.float64).ravel()
        jack = jack[np.isfinite(jack)]
    estimate = float(estimate)
    if plugin is not None and not isinstance(plugin, numbers.Real):
        raise InputError(f"plugin must be a number (the estimand on the empirical distribution), got {plugin!r}.")
    low, high, bias, debiased = _interval(dist, estimate, method, confidence, alternative, jack, lower, upper,
                                          stacklevel=3, plugin=plugin)
    return BootstrapResult(estimate=estimate, low=low, high=high, confidence=confidence, method=method,
                           n_resamples=int(dist.size), distribution=dist, n_failed=0, alternative=alternative,
                           bias=bias, debiased=debiased)


def bootstrap(
    metric: Callable[..., float],
    *arrays,
    sample_weight=None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    method: str = "percentile",
    random_state=None,
    progress: Callable[[int, int], None] | None = None,
    resample: str = "rows",
    n_jackknife: int = 200,
    alternative: str = "two-sided",
    bounds=None,
    plugin=None,
    row_order=None,
    **metric_kwargs,
) -> BootstrapResult:
    """Bootstrap confidence interval for any metric of row-aligned data.

    Rows are resampled with replacement jointly across ``arrays`` (2-D arrays
    along axis 0) and ``sample_weight``; ``metric(*resampled_arrays,
    [sample_weight=...,] **metric_kwargs)`` is evaluated on each resample.
    Write ``theta_hat`` for the estimate, ``theta*`` for the resampled values
    and ``q(a)`` for their ``a``-quantile (linear interpolation).

    Parameters
    ----------
    metric : callable
        Returns one number, e.g. :func:`calibviz.metrics.ece` or
        ``lambda y, p: ...``. It receives ``sample_weight=`` only when
        ``sample_weight`` is given (or ``resample="weights"``). A metric
        with a ``many`` attribute, as :func:`calibviz.metrics.tce` has
        (:func:`~calibviz.metrics.tce_many`), gets a chunk of row resamples
        at once, ``many([(*arrays, weight), ...], **metric_kwargs)``, and
        must return the values the calls would.
    *arrays : array-like, each of shape (n, ...)
        Row-aligned data, e.g. ``y_true, y_prob`` or ``x, y_true, y_prob``.
    sample_weight : array-like of shape (n,), optional
        Row weights, resampled with the rows and passed to the metric.
    n_resamples : int, default 1000
        Number of bootstrap resamples, >= 1.
    confidence : float, default 0.95
        Interval level, in (0, 1).
    method : {"percentile", "basic", "bca", "bias_corrected"}, default "percentile"
        How the interval is read off the resampled values (two-sided limits
        shown; ``alpha = 1 - confidence``):

        ``"percentile"``: ``[q(alpha/2), q(1 - alpha/2)]`` (Efron &
        Tibshirani 1993, Eq. 13.5). Right when the estimator is unbiased on
        some monotone scale. A metric that is biased upward, as every binned
        calibration error is (each bin contributes ``|noisy gap|``), makes
        ``theta*`` overshoot ``theta_hat`` by about as much as ``theta_hat``
        overshoots the true value, so the interval sits about two biases
        above the truth and can lie entirely above ``theta_hat``.

        ``"basic"`` (reverse percentile): ``[2 theta_hat - q(1 - alpha/2),
        2 theta_hat - q(alpha/2)]`` (Davison & Hinkley 1997, Sec. 5.2), from
        the approximation "``theta_hat - theta`` is distributed like
        ``theta* - theta_hat``". Its centre is about ``theta_hat - bias``: it
        removes the bias the bootstrap sees. When that bias is large compared
        with the spread, ``theta_hat`` itself lies above the interval; use
        ``"bias_corrected"`` to show a value that lies inside it.

        ``"bias_corrected"``: the basic interval, reported together with the
        bias-corrected estimate ``debiased = theta_hat - bias = 2 theta_hat -
        mean(theta*)`` (Efron & Tibshirani 1993, Sec. 10.6). The two come
        from the same approximation: ``debiased`` is the mean and the basic
        interval the central ``confidence`` range of the bootstrap's
        approximation ``theta_hat - (theta* - theta_hat)`` of the
        distribution of the true value; so ``debiased`` lies inside the
        interval whenever ``mean(theta*)`` lies between ``q(alpha/2)`` and
        ``q(1 - alpha/2)`` (always, unless the resampled values are extremely
        skewed). Shifting a percentile interval by the bias instead would
        count the bias once too often. Bias correction trades bias for
        variance (the same section's caution); ``docs/intervals.md``
        measures both.

        ``"bca"``: bias-corrected and accelerated percentiles (Efron &
        Tibshirani 1993, Ch. 14); the acceleration comes from a jackknife
        that is leave-one-out for ``n <= n_jackknife`` and otherwise leaves
        out each of ``n_jackknife`` random groups of about ``n /
        n_jackknife`` rows (delete-d / grouped jackknife), costing
        ``n_jackknife`` extra metric calls instead of ``n``. Like the
        percentile interval it never leaves the range of the resampled
        values, so it cannot correct a bias larger than their spread.
    random_state : None, int, numpy.random.SeedSequence or numpy.random.Generator
        Seed for the resampling; the same seed gives the same result.
    progress : callable ``progress(done, total)``, optional
        Called after each chunk of resamples (at least about 20 times per
        run, and once with ``done == total``), e.g. to drive a progress bar.
    resample : {"rows", "weights"}, default "rows"
        ``"rows"`` gathers the resampled rows. ``"weights"`` passes the full
        arrays with ``sample_weight`` = (multinomial resample counts) x
        (original weights) instead; it draws the same resamples, and it is
        exact (gives identical values) whenever the metric treats an integer
        weight ``k`` like ``k`` copies of the row, as calibviz's Brier score,
        log loss, Spiegelhalter Z, smooth ECE and fixed-edge binned metrics
        (Uniform, Custom bins) do. It is not exact for schemes whose bins
        depend on row counts (EqualMass, PAVA-BC) unless they are documented
        as weight-aware.
    n_jackknife : int, default 200
        Number of jackknife groups for ``method="bca"``.
    alternative : {"two-sided", "less", "greater"}, default "two-sided"
        ``"less"`` gives a one-sided upper bound ``(-inf, high]`` at level
        ``confidence`` (e.g. "ECE <= high with 95% confidence"), ``"greater"``
        a lower bound ``[low, inf)``; as in :func:`scipy.stats.bootstrap`.
    bounds : (lower, upper), optional
        The range of the metric, e.g. ``(0, 1)`` for ECE or ``(0, 100)`` for
        TCE; either may be None. Interval limits (including the infinite
        limit of a one-sided interval) and ``debiased`` are clipped to it.
        Clipping never changes whether the interval contains a value of the
        range; it keeps the basic interval from reporting, e.g., a negative
        ECE.
    plugin : float or callable, optional
        ``t(F_hat)``: the estimand evaluated on the empirical distribution of
        the data, for an estimator that is *not* its own plug-in value (e.g.
        Kumar et al.'s debiased squared calibration error, whose plug-in
        counterpart is the binned squared error of the sample). In the
        bootstrap world the data play the population, so the "true value"
        the resamples scatter around is ``t(F_hat)``, not ``theta_hat``: the
        basic and bias-corrected methods approximate ``theta_hat - theta`` by
        ``theta* - t(F_hat)`` (limits ``theta_hat + t(F_hat) - q(1 - alpha/2)``
        and ``theta_hat + t(F_hat) - q(alpha/2)``) and the bias by
        ``mean(theta*) - t(F_hat)`` (Efron & Tibshirani 1993, Sec. 10.2;
        Davison & Hinkley 1997, Sec. 2.2). Using ``theta_hat`` there instead
        would remove an already removed bias a second time. A callable is
        called like the metric, on the full data. Default: ``theta_hat``.
    row_order : array-like of int, shape (n,), optional
        A permutation of the rows, e.g. ``np.argsort(y_prob, kind="stable")``,
        in which each resample lists its rows. The resamples are the same
        multisets, drawn from the same random numbers, so a metric that does
        not depend on the order of the rows gives the same values (up to the
        order of its float sums). Metrics that sort the scores (PAVA-BC,
        equal-mass bins) then sort presorted resamples, a pass instead of an
        O(n log n) sort: TCE's resamples of 10^6 rows take about half the time.
    **metric_kwargs
        Forwarded to ``metric`` (e.g. ``binning=Uniform(10)``). The names
        above are reserved by ``bootstrap``.

    Returns
    -------
    BootstrapResult
        ``estimate`` (metric on the full data), ``low``, ``high``, the
        resampled ``distribution``, ``n_failed``, ``method``, ``bias`` and,
        for ``"bias_corrected"``, ``debiased``; ``point`` is the value to
        show with the interval.

    Raises
    ------
    InputError
        For arrays of different lengths, ``n_resamples < 1``, ``confidence``
        outside (0, 1), an unknown ``method``/``resample``/``alternative``,
        bad ``bounds``, or a metric that does not return a number.

    Warns
    -----
    RuntimeWarning
        When resamples were dropped because the metric returned NaN/inf (or
        raised InputError) on them, and when the BCa correction is undefined
        because the estimate lies outside the resampled values (the interval
        is then NaN; use ``method="basic"`` or ``"percentile"``).

    Notes
    -----
    Degenerate resamples are dropped, never silently: ``n_failed`` counts them
    and a warning is raised. If every resample fails, ``low`` and ``high`` are
    NaN.

    No bootstrap interval can cover a true value that lies on the boundary of
    the metric's range, such as the calibration error 0 of a perfectly
    calibrated model: every resampled value is positive. The calibrated-model
    reference (consistency resampling) answers that question instead; see
    ``docs/intervals.md`` for the coverage of each method and metric.

    References
    ----------
    B. Efron and R. J. Tibshirani, *An Introduction to the Bootstrap*,
    Chapman & Hall, 1993: Ch. 10 (bootstrap estimate of bias, Eq. 10.2, and
    bias correction, Sec. 10.6), Ch. 13 (percentile interval, Eq. 13.5) and
    Ch. 14 (BCa, Eqs. 14.9-14.15; the jackknife acceleration is Eq. 14.15).
    A. C. Davison and D. V. Hinkley, *Bootstrap Methods and their
    Application*, Cambridge University Press, 1997: Sec. 2.2.1 (bias) and
    Sec. 5.2 (basic bootstrap interval). Delete-d jackknife: J. Shao and
    C. F. J. Wu, "A general theory for jackknife variance estimation", Ann.
    Statist. 17(3), 1989.

    Examples
    --------
    >>> import numpy as np
    >>> from calibviz.metrics import bootstrap, brier_score, ece
    >>> rng = np.random.default_rng(0)
    >>> p = rng.random(2000)
    >>> y = (rng.random(2000) < p).astype(int)
    >>> res = bootstrap(brier_score, y, p, n_resamples=200, random_state=1)
    >>> res.low < res.estimate < res.high
    True
    >>> res == bootstrap(brier_score, y, p, n_resamples=200, random_state=1)
    True

    The basic interval reflects the percentile quantiles about the estimate:

    >>> b = bootstrap(brier_score, y, p, n_resamples=200, random_state=1, method="basic")
    >>> bool(np.isclose(b.low, 2 * res.estimate - res.high)), bool(np.isclose(b.high, 2 * res.estimate - res.low))
    (True, True)

    A binned calibration error is biased upward; the bias-corrected method
    reports a debiased value inside its interval:

    >>> q = np.clip(p + 0.1 * (p - 0.5), 0, 1)        # a mildly overconfident model
    >>> bc = bootstrap(ece, y, q, n_resamples=200, random_state=1, method="bias_corrected", bounds=(0, 1))
    >>> bool(bc.bias > 0), bool(bc.debiased < bc.estimate), bool(bc.low <= bc.point <= bc.high)
    (True, True, True)
    """
    if not callable(metric):
        raise InputError(f"metric must be a callable returning a number, got {type(metric).__name__}.")
    data, n = _as_rows(arrays)
    w = check_weights(sample_weight, n)
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, numbers.Integral) or n_resamples < 1:
        raise InputError(f"n_resamples must be an integer >= 1, got {n_resamples!r}.")
    n_resamples = int(n_resamples)
    method, confidence, alternative, (lower, upper) = _check_interval_args(method, confidence, alternative, bounds)
    if resample not in ("rows", "weights"):
        raise InputError(f"resample must be 'rows' or 'weights', got {resample!r}.")
    if isinstance(n_jackknife, bool) or not isinstance(n_jackknife, numbers.Integral) or n_jackknife < 2:
        raise InputError(f"n_jackknife must be an integer >= 2, got {n_jackknife!r}.")
    row_order = _check_row_order(row_order, n)
    try:
        rng = np.random.default_rng(random_state)
    except (TypeError, ValueError) as exc:
        raise InputError(f"random_state must be None, an int, a SeedSequence or a numpy Generator ({exc}).") from None

    estimate = _call(metric, data, w, metric_kwargs, strict=True)
    if callable(plugin):
        plugin = _call(plugin, data, w, metric_kwargs, strict=True)
    elif plugin is not None and (isinstance(plugin, bool) or not isinstance(plugin, numbers.Real)):
        raise InputError(f"plugin must be a number or a callable like the metric, got {type(plugin).__name__}.")

    values = np.empty(n_resamples)
    done = 0
    for idx in _row_resamples(n, n_resamples, rng, row_order):
        c = idx.shape[0]
        if resample == "weights":
            # Row counts of each resample, all c at once via offset bincount.
            counts = np.bincount((idx + (np.arange(c) * n)[:, None]).ravel(), minlength=c * n).reshape(c, n)
            for j in range(c):
                cw = counts[j].astype(np.float64)
                values[done + j] = _call(metric, data, cw if w is None else cw * w, metric_kwargs)
        else:
            values[done:done + c] = _values(metric, [([a[rows] for a in data], None if w is None else w[rows])
                                                     for rows in idx], metric_kwargs)
        done += c
        if progress is not None:
            progress(done, n_resamples)

    finite = np.isfinite(values)
    n_failed = int(n_resamples - finite.sum())
    dist = values[finite]
    if n_failed:
        warnings.warn(
            f"bootstrap: the metric was undefined (NaN/inf or InputError) on {n_failed} of {n_resamples} "
            "resamples; they were dropped from the interval (see BootstrapResult.n_failed).",
            RuntimeWarning,
            stacklevel=2,
        )

    jack = None
    if method == "bca" and dist.size and np.isfinite(estimate):
        jack = _jackknife(metric, data, w, metric_kwargs, int(n_jackknife), rng)
    low, high, bias, debiased = _interval(dist, float(estimate), method, confidence, alternative, jack, lower, upper,
                                          stacklevel=3, plugin=plugin)
    return BootstrapResult(
        estimate=float(estimate),
        low=low,
        high=high,
        confidence=confidence,
        method=method,
        n_resamples=n_resamples,
        distribution=dist,
        n_failed=n_failed,
        alternative=alternative,
        bias=bias,
        debiased=debiased,
    )


def difference_interval(dist: np.ndarray, estimate: float, confidence: float,
                        span: float | None = None) -> tuple[float, float]:
    """Two-sided interval of a difference of two models' metrics from its resampled values (NaN when fewer than
    two are finite): the hull of its percentile and basic intervals. Used by :func:`calibviz.compare.compare_models`
    and by :func:`calibviz.recalibration.recalibration_table` (before minus after).

    A difference of two biased calibration errors: the basic interval removes each model's bootstrap bias
    (needed when the biases differ: a sharp and a coarse calibrated model), but when both models are near
    calibrated their noise-driven biases partly cancel and it over-rejects; the percentile interval errs the
    other way. The verdict needs both to exclude 0: the hull of the two (bench_compare_null.py). The two are
    mirror images about the observed difference, so the hull always contains it: TCE, whose resamples inflate
    a near-calibrated model's value far more than a miscalibrated one's, had percentile intervals of a
    difference that missed the difference shown beside them (-79.6 points with an interval of -76.9 to -44.3).
    For a nearly unbiased metric (Brier score, log loss) the two nearly coincide.
    """
    if np.isfinite(dist).sum() < 2 or not np.isfinite(estimate):
        return float("nan"), float("nan")
    pct = interval_from_distribution(dist, estimate, method="percentile", confidence=confidence)
    basic = interval_from_distribution(dist, estimate, method="basic", confidence=confidence)
    low, high = min(basic.low, pct.low), max(basic.high, pct.high)
    if span is not None:  # a difference of two values in [a, b] lies in [-(b - a), b - a] (TCE: -100 to 100 points)
        low, high = max(low, -span), min(high, span)
    return low, high
