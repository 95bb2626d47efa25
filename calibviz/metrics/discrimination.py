"""Discrimination: ROC curve, AUC with DeLong's interval and paired test, sharpness, multiclass AUC and accuracy.

Calibration says whether the probabilities can be taken at face value;
discrimination says whether they rank the events above the non-events. The
CORP decomposition (:mod:`calibviz.metrics.corp`) puts the two on one scale;
this module gives the classical discrimination numbers.

Everything is computed from *groups of equal scores* after one sort: a tie
between a positive and a negative counts one half (the Mann-Whitney
convention, as :func:`sklearn.metrics.roc_auc_score`), and DeLong's
placement values of all rows in a group are equal, so the variance costs
O(G) after the O(n log n) sort.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import InputError
from ..validation import check_binary, check_multiclass, drop_zero_weight
from .._lazy import lazy

stats = lazy("scipy.stats")

__all__ = [
    "roc_curve",
    "roc_auc",
    "auc_delong",
    "AUCResult",
    "delong_test",
    "DeLongComparison",
    "ovr_auc",
    "accuracy",
    "sharpness",
]


def _vdot(a, b) -> float:
    """sum(a * b) of two vectors. Not np.dot: OpenBLAS's threaded dot is ~100x slower than this on a busy
    2-core machine (thread contention), and these vectors are too short to gain from BLAS."""
    return float(np.sum(np.multiply(a, b)))


@dataclass(frozen=True, eq=False)
class _Placements:
    """Per group of equal scores: weighted positives/negatives and DeLong's placement values."""

    x: np.ndarray  # distinct scores, increasing
    pos: np.ndarray  # weighted positives per group
    neg: np.ndarray  # weighted negatives per group
    v10: np.ndarray  # placement of a positive in the group: share of negatives below (+ half the tied)
    v01: np.ndarray  # placement of a negative: share of positives above (+ half the tied)
    gid: np.ndarray  # group of every row (input order)
    P: float  # total positive weight
    N: float  # total negative weight
    auc: float


def _placements(y: np.ndarray, p: np.ndarray, w: np.ndarray | None) -> _Placements:
    order = np.argsort(p)  # unstable is 4x faster; only group sums matter
    ps = p[order]
    n = ps.shape[0]
    starts = np.flatnonzero(np.r_[True, ps[1:] != ps[:-1]])
    ww = np.ones(n) if w is None else w[order]
    ys = y[order]
    pos = np.add.reduceat(ww * ys, starts)
    neg = np.add.reduceat(ww * (1.0 - ys), starts)
    P, N = float(pos.sum()), float(neg.sum())
    if P <= 0 or N <= 0:
        which = "positive (y = 1)" if P <= 0 else "negative (y = 0)"
        raise InputError(f"the AUC needs both outcomes, but there is no {which} row; "
                         "it is undefined on data with one class only.")
    v10 = (np.cumsum(neg) - 0.5 * neg) / N
    v01 = (P - np.cumsum(pos) + 0.5 * pos) / P
    auc = float(_vdot(pos, v10) / P)
    gid = np.empty(n, dtype=np.int64)
    gid[order] = np.repeat(np.arange(starts.shape[0]), np.diff(np.r_[starts, n]))
    return _Placements(ps[starts], pos, neg, v10, v01, gid, P, N, auc)


def _effective(weights: np.ndarray | None, total: float) -> tuple[float, float]:
    """(denominator of the unbiased weighted variance, effective sample size) of weights with sum ``total``.

    ``weights`` None means unit weights (``total`` rows). Kish's size is computed on weights divided by
    their largest, so that tiny weights (1e-250, whose squares underflow to 0) give the same answer as
    the same weights scaled up.
    """
    if weights is None:
        return total - 1.0, total
    u = weights / weights.max()
    n_eff = float(u.sum()) ** 2 / float(_vdot(u, u))
    return total * (1.0 - 1.0 / n_eff), n_eff


def _variance_terms(pl: _Placements, y: np.ndarray, w: np.ndarray | None):
    """(S10 / m_eff, S01 / n_eff): DeLong's two variance components (weights as reliability weights)."""
    is_pos = y == 1
    d_pos, m_eff = _effective(None if w is None else w[is_pos], pl.P)
    d_neg, n_eff = _effective(None if w is None else w[~is_pos], pl.N)
    s10 = float(_vdot(pl.pos, (pl.v10 - pl.auc) ** 2)) / d_pos if d_pos > 0 else math.nan
    s01 = float(_vdot(pl.neg, (pl.v01 - pl.auc) ** 2)) / d_neg if d_neg > 0 else math.nan
    return s10 / m_eff, s01 / n_eff


def roc_auc(y_true, y_prob, *, sample_weight=None) -> float:
    """Area under the ROC curve: the probability that a random positive scores above a random negative.

    Ties between a positive and a negative count one half, so the value
    equals the Mann-Whitney U statistic divided by (positives x negatives)
    and :func:`sklearn.metrics.roc_auc_score` (with weights too).

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Outcomes in {0, 1}; both must occur.
    y_prob : array-like of shape (n,)
        Scores in [0, 1] (any monotone transform gives the same AUC).
    sample_weight : array-like of shape (n,), optional
        A pair (i, j) counts with weight w_i w_j.

    Returns
    -------
    float
        In [0, 1]; 0.5 is no discrimination, 1 perfect ranking.

    References
    ----------
    J. A. Hanley and B. J. McNeil, "The meaning and use of the area under a
    receiver operating characteristic (ROC) curve", Radiology 143(1), 1982,
    eq. (1) (AUC = Wilcoxon-Mann-Whitney statistic).

    Examples
    --------
    >>> from calibviz.metrics import roc_auc
    >>> roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    >>> roc_auc([0, 1], [0.5, 0.5])      # a tie counts one half
    0.5
    """
    y, p, w = check_binary(y_true, y_prob, sample_weight)
    return _placements(y, p, w).auc


@dataclass(frozen=True)
class AUCResult:
    """AUC with DeLong's standard error and interval (:func:`auc_delong`).

    Attributes
    ----------
    auc : float
    se : float
        DeLong's standard error (NaN with fewer than two rows of an outcome).
    low, high : float
        ``auc -/+ z * se`` at level ``confidence``, truncated to [0, 1] (as pROC's ``ci.auc``).
    confidence : float
    n_pos, n_neg : int
        Rows with y = 1 and y = 0.
    """

    auc: float
    se: float
    low: float
    high: float
    confidence: float
    n_pos: int
    n_neg: int

    def __float__(self) -> float:
        return float(self.auc)


def _check_confidence(confidence) -> float:
    if isinstance(confidence, bool) or not (isinstance(confidence, numbers.Real) and 0 < confidence < 1):
        raise InputError(f"confidence must lie strictly between 0 and 1 (e.g. 0.95), got {confidence!r}.")
    return float(confidence)


def auc_delong(y_true, y_prob, *, confidence: float = 0.95, sample_weight=None) -> AUCResult:
    """AUC with DeLong's (1988) nonparametric standard error and confidence interval.

    With the placement values ``V10(x_i)`` = share of negatives scoring
    below positive i (ties one half) and ``V01(y_j)`` = share of positives
    scoring above negative j, ``AUC = mean V10 = mean V01`` and::

        Var(AUC) = S10 / m + S01 / n,   S10 = sum_i (V10_i - AUC)^2 / (m - 1),
                                        S01 = sum_j (V01_j - AUC)^2 / (n - 1)

    for m positives and n negatives. The interval is ``AUC -/+ z se``
    truncated to [0, 1].

    Parameters
    ----------
    y_true, y_prob : array-like of shape (n,)
    confidence : float, default 0.95
    sample_weight : array-like of shape (n,), optional
        An extension of DeLong's formula: placements and AUC are weighted,
        S10 and S01 are the unbiased weighted variances (reliability weights,
        denominator ``W - sum w^2 / W``) and m, n are Kish's effective sizes
        ``W^2 / sum w^2``; unit weights give the unweighted formula exactly.

    Returns
    -------
    AUCResult
        ``auc``, ``se``, ``low``, ``high``, ``confidence``, ``n_pos``, ``n_neg``.

    Notes
    -----
    Placement values are equal within a group of equal scores, so after one
    sort the variance costs O(G) for G distinct scores (the midrank
    formulation of Sun & Xu 2014 without their second and third sorts).

    References
    ----------
    E. R. DeLong, D. M. DeLong and D. L. Clarke-Pearson, "Comparing the
    areas under two or more correlated receiver operating characteristic
    curves: a nonparametric approach", Biometrics 44(3), 1988, eq. (2)-(4);
    X. Sun and W. Xu, "Fast implementation of DeLong's algorithm for
    comparing the areas under correlated receiver operating characteristic
    curves", IEEE Signal Processing Letters 21(11), 2014.

    Examples
    --------
    >>> from calibviz.metrics import auc_delong
    >>> r = auc_delong([0, 0, 0, 1, 1, 1], [0.1, 0.3, 0.6, 0.4, 0.7, 0.9])
    >>> round(r.auc, 4), round(r.se, 4), round(r.low, 4), r.high
    (0.8889, 0.1571, 0.5809, 1.0)
    """
    confidence = _check_confidence(confidence)
    y, p, w = check_binary(y_true, y_prob, sample_weight)
    pl = _placements(y, p, w)
    a, b = _variance_terms(pl, y, w)
    se = math.sqrt(a + b) if np.isfinite(a + b) else math.nan
    z = float(stats.norm.ppf(0.5 + confidence / 2.0))
    low, high = (max(0.0, pl.auc - z * se), min(1.0, pl.auc + z * se)) if np.isfinite(se) else (math.nan, math.nan)
    n_pos = int(np.count_nonzero(y == 1))
    return AUCResult(pl.auc, se, low, high, confidence, n_pos, int(y.shape[0] - n_pos))


@dataclass(frozen=True)
class DeLongComparison:
    """DeLong's paired comparison of two AUCs on the same rows (:func:`delong_test`).

    Attributes
    ----------
    auc_a, auc_b : float
    difference : float
        ``auc_b - auc_a``.
    se : float
        Standard error of the difference (accounts for the correlation of the two).
    low, high : float
        Interval of the difference at level ``confidence``.
    z, p_value : float
        Test of equal AUCs (two-sided).
    confidence : float
    """

    auc_a: float
    auc_b: float
    difference: float
    se: float
    low: float
    high: float
    z: float
    p_value: float
    confidence: float


def delong_test(y_true, y_prob_a, y_prob_b, *, confidence: float = 0.95, sample_weight=None) -> DeLongComparison:
    """Paired DeLong test: do two models scored on the same rows have the same AUC?

    With per-row placement values of both models, the covariance matrices
    ``S10``, ``S01`` (2 x 2) give ``Var(AUC_b - AUC_a) = (S10_aa + S10_bb -
    2 S10_ab) / m + (S01_aa + S01_bb - 2 S01_ab) / n`` and
    ``z = (AUC_b - AUC_a) / se``.

    Parameters
    ----------
    y_true : array-like of shape (n,)
    y_prob_a, y_prob_b : array-like of shape (n,)
        Scores of the two models for the same rows.
    confidence : float, default 0.95
    sample_weight : array-like of shape (n,), optional
        As :func:`auc_delong`.

    Returns
    -------
    DeLongComparison

    References
    ----------
    DeLong, DeLong & Clarke-Pearson (1988), Biometrics 44(3), Sec. 3,
    eq. (5)-(6) (contrast L = (-1, 1)).

    Examples
    --------
    >>> import numpy as np
    >>> from calibviz.metrics import delong_test
    >>> rng = np.random.default_rng(0); y = rng.integers(0, 2, 400)
    >>> a = np.clip(0.5 + 0.3 * (y - 0.5) + rng.normal(0, 0.2, 400), 0, 1)
    >>> b = np.clip(0.5 + 0.05 * (y - 0.5) + rng.normal(0, 0.2, 400), 0, 1)
    >>> r = delong_test(y, a, b)
    >>> bool(r.difference < 0), bool(r.p_value < 0.001)
    (True, True)
    """
    confidence = _check_confidence(confidence)
    y, pa, w = check_binary(y_true, y_prob_a, sample_weight, drop_zero_weight=False)
    _, pb, _ = check_binary(y_true, y_prob_b, sample_weight, drop_zero_weight=False)
    y, pa, pb, w = drop_zero_weight(w, y, pa, pb)
    A, B = _placements(y, pa, w), _placements(y, pb, w)
    ww = np.ones_like(y) if w is None else w
    is_pos = y == 1
    wp, wn = ww[is_pos], ww[~is_pos]
    d_pos, m_eff = _effective(None if w is None else wp, A.P)
    d_neg, n_eff = _effective(None if w is None else wn, A.N)
    # per-row placements, centred
    ra, rb = A.v10[A.gid[is_pos]] - A.auc, B.v10[B.gid[is_pos]] - B.auc
    qa, qb = A.v01[A.gid[~is_pos]] - A.auc, B.v01[B.gid[~is_pos]] - B.auc
    diff_pos = rb - ra
    diff_neg = qb - qa
    var = math.nan
    if d_pos > 0 and d_neg > 0:
        var = float(_vdot(wp, diff_pos * diff_pos)) / d_pos / m_eff + float(_vdot(wn, diff_neg * diff_neg)) / d_neg / n_eff
    d = B.auc - A.auc
    se = math.sqrt(var) if np.isfinite(var) else math.nan
    zq = float(stats.norm.ppf(0.5 + confidence / 2.0))
    if np.isfinite(se) and se > 0:
        z = d / se
        p_value = float(2.0 * stats.norm.sf(abs(z)))
    else:
        z = math.nan if not np.isfinite(se) else (0.0 if d == 0 else math.copysign(math.inf, d))
        p_value = math.nan if not np.isfinite(se) else (1.0 if d == 0 else 0.0)
    return DeLongComparison(A.auc, B.auc, d, se, d - zq * se, d + zq * se, z, p_value, confidence)


def roc_curve(y_true, y_prob, *, sample_weight=None, max_points: int | None = None) -> pd.DataFrame:
    """The ROC curve: true and false positive rates of "predict 1 when p >= threshold", all thresholds.

    Parameters
    ----------
    y_true, y_prob : array-like of shape (n,)
    sample_weight : array-like of shape (n,), optional
    max_points : int, optional
        Keep at most about this many points (for drawing curves of millions
        of distinct scores): points are kept at evenly spaced steps of
        ``fpr + tpr`` along the curve, always including the first and last;
        the kept points lie exactly on the curve. None keeps every point.

    Returns
    -------
    pandas.DataFrame
        ``threshold`` (decreasing; the first is ``inf``: nothing predicted
        positive), ``fpr``, ``tpr``; the same points as
        ``sklearn.metrics.roc_curve(..., drop_intermediate=False)``.
        ``attrs``: ``auc``, ``n_pos``, ``n_neg``.

    References
    ----------
    T. Fawcett, "An introduction to ROC analysis", Pattern Recognition
    Letters 27(8), 2006, Algorithm 1 (one point per distinct score).

    Examples
    --------
    >>> from calibviz.metrics import roc_curve
    >>> t = roc_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    >>> t[["fpr", "tpr"]].to_dict("list")
    {'fpr': [0.0, 0.0, 0.5, 0.5, 1.0], 'tpr': [0.0, 0.5, 0.5, 1.0, 1.0]}
    """
    y, p, w = check_binary(y_true, y_prob, sample_weight)
    pl = _placements(y, p, w)
    tp = np.cumsum(pl.pos[::-1])
    fp = np.cumsum(pl.neg[::-1])
    thr = np.r_[np.inf, pl.x[::-1]]
    tpr = np.r_[0.0, tp / pl.P]
    fpr = np.r_[0.0, fp / pl.N]
    tpr[-1] = fpr[-1] = 1.0  # exact at the end despite the cumulative sum's rounding
    if max_points is not None:
        if isinstance(max_points, bool) or not isinstance(max_points, numbers.Integral) or max_points < 2:
            raise InputError(f"max_points must be an integer >= 2 or None, got {max_points!r}.")
        if tpr.shape[0] > max_points:
            s = fpr + tpr
            keep = np.unique(np.r_[0, np.searchsorted(s, np.linspace(0.0, 2.0, max_points)), tpr.shape[0] - 1])
            keep = keep[keep < tpr.shape[0]]
            thr, fpr, tpr = thr[keep], fpr[keep], tpr[keep]
    table = pd.DataFrame({"threshold": thr, "fpr": fpr, "tpr": tpr})
    n_pos = int(np.count_nonzero(y == 1))
    table.attrs.update(auc=pl.auc, n_pos=n_pos, n_neg=int(y.shape[0] - n_pos))
    return table


def ovr_auc(y_true, y_prob, *, sample_weight=None, average: str | None = "macro"):
    """One-vs-rest AUC of each class of multiclass predictions, or their macro average.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Class indices 0..K-1.
    y_prob : array-like of shape (n, K)
        Probability vectors.
    sample_weight : array-like of shape (n,), optional
    average : {"macro", None}, default "macro"
        "macro": the unweighted mean over the classes that occur and do not
        make up every row (as ``sklearn.metrics.roc_auc_score(...,
        multi_class="ovr", average="macro")`` when every class occurs);
        None: one AUC per class (NaN for a class that never or always occurs).

    Returns
    -------
    float or ndarray of shape (K,)

    References
    ----------
    F. Provost and P. Domingos, "Well-trained PETs: improving probability
    estimation trees", CeDER working paper, 2000 (one-vs-rest AUC); D. J.
    Hand and R. J. Till, Machine Learning 45, 2001 (multiclass AUC).

    Examples
    --------
    >>> from calibviz.metrics import ovr_auc
    >>> P = [[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.3, 0.6], [0.4, 0.4, 0.2], [0.3, 0.3, 0.4]]
    >>> ovr_auc([0, 1, 2, 1, 0], P, average=None).round(4).tolist(), round(ovr_auc([0, 1, 2, 1, 0], P), 4)
    ([0.8333, 1.0, 1.0], 0.9444)
    """
    if average not in ("macro", None):
        raise InputError(f"average must be 'macro' or None, got {average!r}.")
    y, P, w = check_multiclass(y_true, y_prob, sample_weight)
    K = P.shape[1]
    out = np.full(K, np.nan)
    for k in range(K):  # K passes of one sort each; K is small next to n
        yk = (y == k).astype(np.float64)
        if 0 < yk.sum() < yk.shape[0] and (w is None or (0 < _vdot(w, yk) < w.sum())):
            out[k] = _placements(yk, P[:, k], w).auc
    if average is None:
        return out
    if np.isnan(out).all():
        raise InputError("no class both occurs and is absent from some row; the one-vs-rest AUC is undefined.")
    return float(np.nanmean(out))


def accuracy(y_true, y_prob, *, sample_weight=None) -> float:
    """Share of rows whose predicted class (argmax, ties to the first class) is the true class.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Class indices 0..K-1 (binary: 0/1).
    y_prob : array-like of shape (n, K) or (n,)
        Probability vectors, or P(y = 1) of a binary view (class 1 predicted
        when p > 0.5, as the argmax of (1 - p, p)).
    sample_weight : array-like of shape (n,), optional

    Returns
    -------
    float

    Examples
    --------
    >>> from calibviz.metrics import accuracy
    >>> accuracy([0, 1, 2], [[0.6, 0.3, 0.1], [0.5, 0.4, 0.1], [0.2, 0.2, 0.6]])
    0.6666666666666666
    >>> accuracy([0, 1], [0.5, 0.7])
    1.0
    """
    if np.ndim(y_prob) == 1:
        y, p, w = check_binary(y_true, y_prob, sample_weight)
        hit = (p > 0.5) == (y == 1)
    else:
        y, P, w = check_multiclass(y_true, y_prob, sample_weight)
        hit = np.argmax(P, axis=1) == y
    return float(hit.mean()) if w is None else float(_vdot(w, hit) / w.sum())


def sharpness(y_prob, *, sample_weight=None) -> float:
    """Spread of the predictions: their (weighted) variance.

    Sharpness is a property of the predictions alone (Gneiting, Balabdaoui
    & Raftery's "maximise sharpness subject to calibration"). For a
    calibrated model it equals the discrimination (resolution) term of the
    Brier decomposition, so comparing it with
    :func:`~calibviz.metrics.corp_decomposition`'s DSC shows how much of the
    spread is real.

    Parameters
    ----------
    y_prob : array-like of shape (n,)
        Predicted probabilities.
    sample_weight : array-like of shape (n,), optional

    Returns
    -------
    float
        ``sum w (p - mean p)^2 / sum w``, in [0, 0.25].

    References
    ----------
    T. Gneiting, F. Balabdaoui and A. E. Raftery, "Probabilistic forecasts,
    calibration and sharpness", JRSS B 69(2), 2007; A. H. Murphy and R. L.
    Winkler, "A general framework for forecast verification", Monthly
    Weather Review 115, 1987.

    Examples
    --------
    >>> from calibviz.metrics import sharpness
    >>> round(sharpness([0.1, 0.9]), 4), sharpness([0.5, 0.5])
    (0.16, 0.0)
    """
    p = np.asarray(y_prob)
    _, p, w = check_binary(np.zeros(np.shape(p)[0] if np.ndim(p) else 1), y_prob, sample_weight)
    if w is None:
        return float(np.var(p))
    m = float(_vdot(w, p) / w.sum())
    return float(_vdot(w, (p - m) ** 2) / w.sum())
