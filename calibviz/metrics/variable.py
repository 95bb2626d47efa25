"""Variable-based calibration error (Kelly & Smyth 2023).

A model can have near-zero ECE and still be over-confident for some values of
a feature and under-confident for others. These metrics measure calibration
*as a function of a variable* x: VECE (binned, Eq. 7) and the worst-case VCE
(the largest gap between LOESS curves of actual and predicted error, Sec. 6.1).

Following the paper (Sec. 3), the model's prediction is its top label and the
score is the top-label confidence, for binary models too: with ``y_prob`` of
shape (n,) = P(y = 1), the predicted label is 1 iff ``p > 0.5`` (argmax of
``(1 - p, p)``, ties to class 0) and the confidence is ``max(p, 1 - p)``. The
error of a row is ``predicted label != y``, its predicted error
``1 - confidence``.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..errors import InputError
from ..smoothing import loess_curve
from ..validation import check_binary, check_multiclass, describe_rows, drop_zero_weight

__all__ = ["vece", "max_vce", "MaxVCE", "variable_bins"]


def top_label_errors(y_true, y_prob, sample_weight=None, *, scores: bool = False):
    """Per-row actual error and predicted error of the top label.

    Returns
    -------
    error : ndarray of float64, shape (n,)
        1.0 where the predicted label is wrong.
    predicted_error : ndarray of float64, shape (n,)
        ``1 - confidence``.
    w : ndarray of float64 or None
    score, target : ndarray of float64, shape (n,), with ``scores=True``
        What :func:`score_recalibrated_errors` recalibrates: a binary model's P(y = 1)
        and its outcome, a multiclass model's confidence and whether its top
        label is right.
    """
    arr = np.asarray(y_prob)
    if arr.ndim == 2:
        y, P, w = check_multiclass(y_true, arr, sample_weight, drop_zero_weight=False)
        pred = np.argmax(P, axis=1)
        conf = P[np.arange(P.shape[0]), pred]
        correct = pred == y
        score, target = conf, correct
    else:
        y, p, w = check_binary(y_true, arr, sample_weight, drop_zero_weight=False)
        pred = p > 0.5
        conf = np.where(pred, p, 1.0 - p)
        correct = pred == (y == 1.0)
        score, target = p, y == 1.0
    out = (~correct).astype(np.float64), 1.0 - conf, w
    return (*out, np.asarray(score, dtype=np.float64), target.astype(np.float64)) if scores else out


def score_recalibrated_errors(score, target, sample_weight=None, *, binary: bool):
    """Each row's top-label error probability under the model recalibrated on its own score, and the rows of that
    fit's score equations.

    The recalibrated model is Cox's logistic recalibration ``logit q = a + b
    logit(score)`` (maximum likelihood, :func:`calibviz.metrics.logistic.logistic_fit`):
    a multiclass model's confidence against whether its top label is right; a
    binary model's P(y = 1) with an intercept and a slope of its own on each
    side of 0.5 (its two predicted classes, as top-label recalibration per
    predicted class does). It keeps every miscalibration that recalibrating
    the score fixes, the model's overall gap among it, and nothing that varies
    along a variable beyond it: VECE's reference "beyond the score's
    miscalibration" (:func:`calibviz.variables.variable_ranking`).

    Why these maps: VECE sums top-label errors, so the fit must leave their
    total gap at 0 (its equations include that sum), or a leftover gap sits in
    every bin of every variable and names pure noise ever more often as n
    grows (a review: one map on a binary P(y = 1) kinked at 0.5 named noise on
    23% of logs of 20,000 rows). A multiclass model's intercept equation is
    that sum; a binary model's needs the side's own intercept. An intercept
    alone (calibration in the large) was tried first: on multiclass models
    over-confident by a temperature its error probabilities' variance fell 6%
    short and noise was named on 7-9% of logs at a nominal 5%, hence the
    slope. Scores of exactly 0 or 1 are clipped to ``[1e-12, 1 - 1e-12]``
    first, as the calibration intercept's fit does.

    Parameters
    ----------
    score, target : ndarray of shape (n,)
        From :func:`top_label_errors` with ``scores=True``.
    sample_weight : ndarray of shape (n,), optional
    binary : bool
        Whether ``score`` is a binary model's P(y = 1) (its top label is 1 iff
        ``score > 0.5``) rather than a confidence.

    Returns
    -------
    (errors, equations) or None
        ``errors`` of shape (n,): the error probabilities; ``equations`` of
        shape (n, k) (k = 4 binary, 2 multiclass): rows g_i with ``sum_i w_i
        g_i (error_i - errors_i) = 0`` at the fit (its score equations in
        terms of the errors). None where the fit has no maximum: ``target``
        all 0 or all 1, or the scores separate it.

    References
    ----------
    D. R. Cox, "Two further applications of a model for binary regression",
    Biometrika 45(3/4), 1958; Gupta & Ramdas (2022), "Top-label calibration
    and multiclass-to-binary reductions", ICLR (per predicted class).

    Examples
    --------
    >>> p = np.array([0.2, 0.4, 0.3, 0.1, 0.6, 0.8, 0.7, 0.9])
    >>> y = np.array([0.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0])
    >>> q, g = score_recalibrated_errors(p, y, binary=True)
    >>> [round(float(v), 3) for v in q]     # statsmodels' GLM on each side gives the same
    [0.519, 0.417, 0.462, 0.602, 0.217, 0.58, 0.364, 0.839]
    >>> g.shape
    (8, 4)
    """
    from scipy import special

    from ..errors import InputError
    from .goodness import LOGIT_CLIP
    from .logistic import logistic_fit

    w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    t = np.asarray(target, dtype=np.float64)
    hits, total = (t.sum(), t.size) if w is None else (w @ t, w.sum())
    if not 0 < hits < total:
        return None
    s = np.asarray(score, dtype=np.float64)
    design = recalibration_design(s, binary=binary)
    start = np.zeros(design.shape[1])
    start[1] = 1.0  # the identity map
    try:
        coef = logistic_fit(design, t, w, start=start)
    except InputError:  # the scores separate the outcomes: no finite slope
        return None
    q = special.expit(design @ coef)
    # t - q = +-(error - error probability): + where the top label is 0, - where it is 1 or is a confidence's hit
    sign = np.where(s > 0.5, -1.0, 1.0) if binary else np.full(s.size, -1.0)
    return (np.where(s > 0.5, 1.0 - q, q) if binary else 1.0 - q), design * sign[:, None]


def recalibration_design(score, *, binary: bool) -> np.ndarray:
    """The columns of :func:`score_recalibrated_errors`' logistic map: ``(1, l)`` with l the clipped logit of a
    confidence, or ``(1, l, side, side * l)`` with side = 1 where a binary P(y = 1) exceeds 0.5.

    >>> recalibration_design(np.array([0.5, 0.75]), binary=True).round(4).tolist()
    [[1.0, 0.0, 0.0, 0.0], [1.0, 1.0986, 1.0, 1.0986]]
    """
    from scipy import special

    from .goodness import LOGIT_CLIP

    s = np.asarray(score, dtype=np.float64)
    logit = special.logit(np.clip(s, LOGIT_CLIP, 1.0 - LOGIT_CLIP))
    if not binary:
        return np.column_stack([np.ones_like(logit), logit])
    side = (s > 0.5).astype(np.float64)
    return np.column_stack([np.ones_like(logit), logit, side, side * logit])


def _check_variable(x, n: int, name: str = "x") -> np.ndarray:
    try:
        v = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be numeric ({exc}); encode categories or use subgroup_table.") from None
    if v.ndim != 1 or v.shape[0] != n:
        raise InputError(f"{name} must have shape ({n},) to match the predictions, got {v.shape}.")
    bad = ~np.isfinite(v)
    if bad.any():
        raise InputError(f"{name} is NaN or infinite in {describe_rows(bad)}; drop or impute those rows first.")
    return v


def variable_bins(x, n_bins: int = 10, sample_weight=None) -> np.ndarray:
    """Equal-mass bin index (0..B'-1) of each row over a variable, ties kept together.

    The sorted x are split where the cumulative count (with weights: the
    cumulative weight) reaches ``j * n / B``, j = 1..B-1, i.e. at positions
    ``floor(j * n / B)`` without weights. A split that falls inside a run of
    equal x values moves to the nearer end of the run (to its start when
    equidistant), so equal values always share a bin; splits that coincide
    are merged, so there can be fewer than ``n_bins`` bins (a 0/1 variable
    gives at most 2). Weights of 1 give the same bins as no weights.

    Parameters
    ----------
    x : array-like of shape (n,)
    n_bins : int, default 10
    sample_weight : array-like of shape (n,), optional

    Returns
    -------
    ndarray of int64, shape (n,)
        Bin of each row; bins are numbered in increasing x and none is empty.

    References
    ----------
    Kelly, M. & Smyth, P. (2023). Variable-based calibration for machine
    learning classifiers, Eq. 7 and Sec. 7 (equal-support bins, B = 10).

    Examples
    --------
    >>> variable_bins([1, 1, 1, 2, 3, 4], n_bins=3).tolist()  # split at row 2 moves to 3
    [0, 0, 0, 1, 2, 2]
    """
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise InputError(f"n_bins must be a positive integer, got {n_bins!r}.")
    v = np.asarray(x, dtype=np.float64)
    n = v.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if sample_weight is None:
        target, kth, vals, a, b, before_a, before_b = _unsorted_splits(v, n_bins)
    else:
        w = np.asarray(sample_weight, dtype=np.float64)
        order = np.argsort(v, kind="stable")
        target, kth, vals, a, b, before_a, before_b = _sorted_splits(v[order], w[order], n_bins)
    cuts = _move_splits(target, kth, vals, a, b, before_a, before_b, n)
    index = np.searchsorted(cuts, v, side="right")
    # Renumber so that bins are consecutive and none is empty (rank of the used bins).
    used = np.bincount(index, minlength=cuts.size + 1) > 0
    if not used.all():
        index = (np.cumsum(used) - 1)[index]
    return index.astype(np.int64)


def _unsorted_splits(v, n_bins):
    """Split targets, positions, values and runs of unsorted, unweighted x."""
    n = v.shape[0]
    target = np.arange(1, n_bins) * n / n_bins
    kth = np.clip(np.floor(target).astype(np.int64), 0, n - 1)
    # Order statistics only: O(n) partition instead of a full sort.
    vals = np.partition(v, np.unique(kth))[kth]
    # Run [a, b) of each split value: a rows are smaller, b rows not larger.
    a = np.array([np.count_nonzero(v < t) for t in vals], dtype=np.float64)
    b = np.array([np.count_nonzero(v <= t) for t in vals], dtype=np.float64)
    return target, kth, vals, a, b, a, b


def _sorted_splits(xs, ws, n_bins):
    """The same for x sorted (``ws`` the weights in that order, None for counts)."""
    n = xs.shape[0]
    j = np.arange(1, n_bins)
    if ws is None:
        target = j * n / n_bins
        kth = np.clip(np.floor(target).astype(np.int64), 0, n - 1)
    else:
        cw = np.cumsum(ws)
        target = j * cw[-1] / n_bins
        kth = np.minimum(np.searchsorted(cw, target, side="right"), n - 1)
    vals = xs[kth]
    a = np.searchsorted(xs, vals, side="left")
    b = np.searchsorted(xs, vals, side="right")
    if ws is None:
        before_a, before_b = a.astype(np.float64), b.astype(np.float64)
    else:
        cw0 = np.concatenate([[0.0], cw])  # weight before position i
        before_a, before_b = cw0[a], cw0[b]
    return target, kth, vals, a.astype(np.float64), b.astype(np.float64), before_a, before_b


def _move_splits(target, kth, vals, a, b, before_a, before_b, n):
    """Cut values (bin k holds ``cuts[k-1] <= x < cuts[k]``) after moving ties.

    Each split moves to the nearer end of its run of equal x values; a split
    at the run's end means "x > value", i.e. x >= the next float up.
    """
    # a == kth: the split already sits at the start of its run (no tie across it).
    at_start = (a >= kth) | ((target - before_a) <= (before_b - target))
    cuts = np.where(at_start, vals, np.nextafter(vals, np.inf))
    pos = np.where(at_start, a, b)
    return np.unique(cuts[(pos > 0) & (pos < n)])


def _sorted_bin_starts(xs, n_bins: int, ws=None) -> np.ndarray:
    """First sorted row of each :func:`variable_bins` bin, for x already sorted.

    The same bins as ``variable_bins(x, n_bins, w)`` (bin k is
    ``xs[starts[k]:starts[k+1]]``) without a per-row index, so per-bin sums
    are ``np.add.reduceat(values_sorted, starts)``. Internal (not in
    ``__all__``): used by the variable ranking, which sorts each feature once.
    """
    target, kth, vals, a, b, before_a, before_b = _sorted_splits(xs, ws, n_bins)
    cuts = _move_splits(target, kth, vals, a, b, before_a, before_b, xs.shape[0])
    # Rows below each cut; distinct positions are the non-empty bins.
    return np.unique(np.concatenate([[0], np.searchsorted(xs, cuts, side="left")]))


def _vece_from_sums(per_bin_gap, total_weight) -> float:
    """Eq. 7 from per-bin sums of w * (predicted error - error) and the total weight."""
    return float(np.abs(per_bin_gap).sum() / total_weight)


def _vece_from_errors(x, error, predicted_error, w, n_bins, index=None) -> float:
    """VECE from per-row errors; ``index`` (from variable_bins) skips re-binning."""
    if index is None:
        index = variable_bins(x, n_bins, w)
    gap = predicted_error - error  # = confidence - correctness
    if w is None:
        return _vece_from_sums(np.bincount(index, gap), x.shape[0])
    return _vece_from_sums(np.bincount(index, w * gap), w.sum())


def vece(x, y_true, y_prob, *, n_bins: int = 10, sample_weight=None) -> float:
    """Variable-based expected calibration error (Kelly & Smyth, Eq. 7).

    ``VECE = sum_b (n_b / n) |acc(b) - conf(b)|`` over equal-mass bins b of the
    variable x, where ``acc(b)`` is the top-label accuracy and ``conf(b)`` the
    mean top-label confidence in the bin (equivalently, the gap between the
    error rate and the mean predicted error).

    Parameters
    ----------
    x : array-like of shape (n,)
        The variable (a feature or metadata column), numeric and finite.
    y_true : array-like of shape (n,)
        Binary outcomes in {0, 1} or class indices 0..K-1.
    y_prob : array-like of shape (n,) or (n, K)
        P(y = 1) for a binary model (treated as the 2-class model
        ``(1 - p, p)``) or the class probabilities.
    n_bins : int, default 10
        Number of equal-mass bins over x (ties in x are never split, see
        :func:`variable_bins`).
    sample_weight : array-like of shape (n,), optional
        Row weights: bins of equal weight, weighted means and shares.

    Returns
    -------
    float
        VECE in [0, 1].

    References
    ----------
    Kelly, M. & Smyth, P. (2023). Variable-based calibration for machine
    learning classifiers. Eq. 4-7 (VCE, VECE and its binned estimate).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([1, 2, 3, 4])
    >>> y = np.array([1, 1, 0, 0])
    >>> p = np.array([0.9, 0.9, 0.9, 0.9])  # right on x <= 2, wrong on x > 2
    >>> round(vece(x, y, p, n_bins=2), 4)   # bins: |1 - 0.9| and |0 - 0.9|
    0.5
    """
    error, predicted_error, w = top_label_errors(y_true, y_prob, sample_weight)
    v = _check_variable(x, error.shape[0])
    error, predicted_error, v, w = drop_zero_weight(w, error, predicted_error, v)
    return _vece_from_errors(v, error, predicted_error, w, n_bins)


class MaxVCE(NamedTuple):
    """Worst-case variable-based calibration error and where it occurs."""

    value: float
    x: float


def max_vce(x, y_true, y_prob, *, span: float = 0.75, degree: int = 2, grid=200,
            sample_weight=None) -> MaxVCE:
    """Largest |LOESS actual error - LOESS predicted error| over a grid of x.

    Both curves are local regressions on the same x with the same weights, so
    their difference is the LOESS of ``error - predicted_error``; its largest
    absolute value on the grid (by default 200 points between the 5% and 95%
    quantiles of x, where the curves are well supported) estimates
    ``max_v |VCE(v)|``.

    Parameters
    ----------
    x, y_true, y_prob, sample_weight : as in :func:`vece`
    span, degree, grid : as in :func:`calibviz.smoothing.loess`

    Returns
    -------
    MaxVCE
        ``value`` in [0, 1] (up to smoothing overshoot) and the grid ``x``
        where it is attained.

    References
    ----------
    Kelly, M. & Smyth, P. (2023). Variable-based calibration for machine
    learning classifiers, Sec. 6.1 (max VCE and v*, estimated with LOESS;
    Table 1).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.arange(200.0)
    >>> y = (x < 100).astype(int)
    >>> p = np.full(200, 0.8)          # 20% predicted error everywhere
    >>> res = max_vce(x, y, p, span=0.3, grid=[10.0, 190.0])
    >>> round(res.value, 3), res.x     # right for x < 100 (error 0), wrong above
    (0.8, 190.0)
    """
    error, predicted_error, w = top_label_errors(y_true, y_prob, sample_weight)
    v = _check_variable(x, error.shape[0])
    error, predicted_error, v, w = drop_zero_weight(w, error, predicted_error, v)
    return MaxVCE(*_max_vce_from_errors(v, error, predicted_error, w, span, degree, grid))


def _max_vce_from_errors(x, error, predicted_error, w, span, degree, grid, max_grid_support=50_000):
    gx, diff = loess_curve(x, error - predicted_error, span=span, degree=degree, grid=grid,
                           sample_weight=w, max_grid_support=max_grid_support)
    return _largest_gap(gx, diff)


def _largest_gap(gx, diff) -> tuple[float, float]:
    """max |LOESS(error - predicted error)| on the grid and the grid x where it occurs."""
    i = int(np.argmax(np.abs(diff)))
    return float(abs(diff[i])), float(gx[i])
