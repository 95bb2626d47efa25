"""Bootstrap confidence intervals for any metric (DESIGN.md §2, "numbers with uncertainty").

The rows of the inputs are resampled jointly; the metric is any callable that
returns a number. Resample indices are drawn in chunks from one seeded numpy
``Generator`` so the same ``random_state`` always gives the same result.
"""
from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from scipy import stats

from ..errors import InputError
from ..validation import check_weights

__all__ = ["bootstrap", "BootstrapResult"]

# Upper bound on the number of indices drawn at once (chunk rows * n): 2^23
# int64 indices = 64 MB, large enough to amortise the generator call.
_MAX_CHUNK_ELEMENTS = 1 << 23
# Progress is reported at least this many times over a run.
_MIN_PROGRESS_UPDATES = 20


@dataclass(frozen=True)
class BootstrapResult:
    """Result of :func:`bootstrap`.

    Attributes
    ----------
    estimate : float
        The metric on the full data.
    low, high : float
        Interval limits at level ``confidence``.
    confidence : float
        Requested coverage, e.g. 0.95.
    method : str
        ``"percentile"`` or ``"bca"``.
    n_resamples : int
        Number of resamples drawn.
    distribution : ndarray of shape (n_resamples - n_failed,)
        The finite metric values on the resamples, in drawing order.
    n_failed : int
        Resamples on which the metric returned NaN/inf or raised
        :class:`~calibviz.InputError` (e.g. a resample with one class only);
        they are left out of ``distribution`` and the interval.
    """

    estimate: float
    low: float
    high: float
    confidence: float
    method: str
    n_resamples: int
    distribution: np.ndarray = field(repr=False, compare=False)
    n_failed: int = 0


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


def _bca_levels(dist, estimate, jack, alpha) -> tuple[float, float]:
    z0 = stats.norm.ppf(_percentile_of_score(dist, estimate))
    d = jack.mean() - jack
    denom = 6.0 * (d @ d) ** 1.5
    accel = float((d**3).sum() / denom) if denom > 0 else 0.0
    z = stats.norm.ppf([alpha / 2.0, 1.0 - alpha / 2.0])
    levels = stats.norm.cdf(z0 + (z0 + z) / (1.0 - accel * (z0 + z)))
    return float(levels[0]), float(levels[1])


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
    **metric_kwargs,
) -> BootstrapResult:
    """Bootstrap confidence interval for any metric of row-aligned data.

    Rows are resampled with replacement jointly across ``arrays`` (2-D arrays
    along axis 0) and ``sample_weight``; ``metric(*resampled_arrays,
    [sample_weight=...,] **metric_kwargs)`` is evaluated on each resample.

    Parameters
    ----------
    metric : callable
        Returns one number, e.g. :func:`calibviz.metrics.ece` or
        ``lambda y, p: ...``. It receives ``sample_weight=`` only when
        ``sample_weight`` is given (or ``resample="weights"``).
    *arrays : array-like, each of shape (n, ...)
        Row-aligned data, e.g. ``y_true, y_prob`` or ``x, y_true, y_prob``.
    sample_weight : array-like of shape (n,), optional
        Row weights, resampled with the rows and passed to the metric.
    n_resamples : int, default 1000
        Number of bootstrap resamples, >= 1.
    confidence : float, default 0.95
        Interval level, in (0, 1).
    method : {"percentile", "bca"}, default "percentile"
        ``"percentile"``: quantiles ``(1 -/+ confidence) / 2`` of the
        resampled values (linear interpolation). ``"bca"``: bias-corrected and
        accelerated percentiles; the acceleration comes from a jackknife that
        is leave-one-out for ``n <= n_jackknife`` and otherwise leaves out
        each of ``n_jackknife`` random groups of about ``n / n_jackknife``
        rows (delete-d / grouped jackknife), costing ``n_jackknife`` extra
        metric calls instead of ``n``.
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
    **metric_kwargs
        Forwarded to ``metric`` (e.g. ``binning=Uniform(10)``). The names
        above are reserved by ``bootstrap``.

    Returns
    -------
    BootstrapResult
        ``estimate`` (metric on the full data), ``low``, ``high``, the
        resampled ``distribution`` and ``n_failed``.

    Raises
    ------
    InputError
        For arrays of different lengths, ``n_resamples < 1``, ``confidence``
        outside (0, 1), an unknown ``method``/``resample``, or a metric that
        does not return a number.

    Warns
    -----
    RuntimeWarning
        When resamples were dropped because the metric returned NaN/inf (or
        raised InputError) on them, and when the BCa correction is undefined
        because the estimate lies outside the resampled values (the interval
        is then NaN; use ``method="percentile"``).

    Notes
    -----
    Degenerate resamples are dropped, never silently: ``n_failed`` counts them
    and a warning is raised. If every resample fails, ``low`` and ``high`` are
    NaN.

    References
    ----------
    B. Efron and R. J. Tibshirani, *An Introduction to the Bootstrap*,
    Chapman & Hall, 1993: Ch. 13 (percentile interval, Eq. 13.5) and Ch. 14
    (BCa, Eqs. 14.9-14.15; the jackknife acceleration is Eq. 14.15);
    delete-d jackknife: J. Shao and C. F. J. Wu, "A general theory for
    jackknife variance estimation", Ann. Statist. 17(3), 1989.

    Examples
    --------
    >>> import numpy as np
    >>> from calibviz.metrics import bootstrap, brier_score
    >>> rng = np.random.default_rng(0)
    >>> p = rng.random(2000)
    >>> y = (rng.random(2000) < p).astype(int)
    >>> res = bootstrap(brier_score, y, p, n_resamples=200, random_state=1)
    >>> res.low < res.estimate < res.high
    True
    >>> res == bootstrap(brier_score, y, p, n_resamples=200, random_state=1)
    True
    """
    if not callable(metric):
        raise InputError(f"metric must be a callable returning a number, got {type(metric).__name__}.")
    data, n = _as_rows(arrays)
    w = check_weights(sample_weight, n)
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, numbers.Integral) or n_resamples < 1:
        raise InputError(f"n_resamples must be an integer >= 1, got {n_resamples!r}.")
    n_resamples = int(n_resamples)
    if not (isinstance(confidence, numbers.Real) and 0 < confidence < 1):
        raise InputError(f"confidence must lie strictly between 0 and 1 (e.g. 0.95), got {confidence!r}.")
    if method not in ("percentile", "bca"):
        raise InputError(f"method must be 'percentile' or 'bca', got {method!r}.")
    if resample not in ("rows", "weights"):
        raise InputError(f"resample must be 'rows' or 'weights', got {resample!r}.")
    if isinstance(n_jackknife, bool) or not isinstance(n_jackknife, numbers.Integral) or n_jackknife < 2:
        raise InputError(f"n_jackknife must be an integer >= 2, got {n_jackknife!r}.")
    try:
        rng = np.random.default_rng(random_state)
    except (TypeError, ValueError) as exc:
        raise InputError(f"random_state must be None, an int, a SeedSequence or a numpy Generator ({exc}).") from None

    estimate = _call(metric, data, w, metric_kwargs, strict=True)

    chunk = max(1, min(_MAX_CHUNK_ELEMENTS // n, math.ceil(n_resamples / _MIN_PROGRESS_UPDATES)))
    values = np.empty(n_resamples)
    done = 0
    while done < n_resamples:
        c = min(chunk, n_resamples - done)
        idx = rng.integers(0, n, size=(c, n))
        if resample == "weights":
            # Row counts of each resample, all c at once via offset bincount.
            counts = np.bincount((idx + (np.arange(c) * n)[:, None]).ravel(), minlength=c * n).reshape(c, n)
            for j in range(c):
                cw = counts[j].astype(np.float64)
                values[done + j] = _call(metric, data, cw if w is None else cw * w, metric_kwargs)
        else:
            for j in range(c):
                rows = idx[j]
                values[done + j] = _call(metric, [a[rows] for a in data], None if w is None else w[rows], metric_kwargs)
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

    alpha = 1.0 - confidence
    low = high = math.nan
    if dist.size and method == "percentile":
        low, high = (float(v) for v in np.quantile(dist, [alpha / 2.0, 1.0 - alpha / 2.0]))
    elif dist.size and np.isfinite(estimate):
        jack = _jackknife(metric, data, w, metric_kwargs, int(n_jackknife), rng)
        lo_level, hi_level = _bca_levels(dist, estimate, jack, alpha)
        if np.isfinite(lo_level) and np.isfinite(hi_level) and 0 < lo_level < 1 and 0 < hi_level < 1:
            low, high = (float(v) for v in np.quantile(dist, [lo_level, hi_level]))
        else:
            warnings.warn(
                "bootstrap: the BCa interval is undefined because the estimate lies outside the resampled "
                "values (bias correction infinite); low/high are NaN. Use method='percentile'.",
                RuntimeWarning,
                stacklevel=2,
            )
    return BootstrapResult(
        estimate=float(estimate),
        low=low,
        high=high,
        confidence=float(confidence),
        method=method,
        n_resamples=n_resamples,
        distribution=dist,
        n_failed=n_failed,
    )
