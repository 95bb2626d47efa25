"""Checks of array arguments shared by every computation module.

Each check returns clean float64/int64 arrays or raises :class:`InputError`
whose message names the argument, the offending rows and the fix.
"""
from __future__ import annotations

import numpy as np

from .errors import InputError

__all__ = ["check_binary", "check_multiclass", "check_weights", "describe_rows", "drop_zero_weight", "probability_range",
           "row_positions"]


def probability_range(low: float, high: float) -> str:
    """``(min .., max ..)`` of scores outside [0, 1], each to 4 significant digits unless that would round a value
    outside [0, 1] onto 0 or 1 (then in full).

    >>> probability_range(-0.5, 1.2), probability_range(0.25, 1.000000000001)
    ('(min -0.5, max 1.2)', '(min 0.25, max 1.000000000001)')
    """
    def text(v):
        short = f"{v:.4g}"
        return repr(float(v)) if float(short) in (0.0, 1.0) and not 0.0 <= v <= 1.0 else short

    return f"(min {text(low)}, max {text(high)})"


def describe_rows(mask: np.ndarray, limit: int = 5) -> str:
    """'3 rows (0-based: 4, 17, 20)' for the True entries of ``mask``."""
    n = int(np.count_nonzero(mask))
    return f"{n} {'row' if n == 1 else 'rows'} ({row_positions(mask, limit)})"


def row_positions(mask: np.ndarray, limit: int = 5) -> str:
    """'0-based: 4, 17, 20' for the True entries of ``mask`` (the first ``limit``; '...' for more)."""
    idx = np.flatnonzero(mask)
    more = ", ..." if idx.size > limit else ""
    return "0-based: " + ", ".join(str(i) for i in idx[:limit]) + more


def _as_1d_float(values, name: str) -> np.ndarray:
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be numeric; could not convert it to numbers ({exc}).") from None
    if arr.ndim != 1:
        raise InputError(f"{name} must be one-dimensional, got shape {arr.shape}.")
    return arr


def row_sums(block: np.ndarray) -> np.ndarray:
    """Sums of the rows of a 2-D block, adding the columns left to right.

    Why not ``block.sum(axis=1)``: numpy sums 8 or more columns pairwise, in
    another order than the engines of a scan, which add the columns one after
    another (:mod:`calibviz.scan.aggregate`). The two can differ in the last
    bit, and a probability divided by its row's sum then moves across a bin
    edge (0.2 became 0.19999999999999996 for 8 classes given to 2 decimals).
    One order for both keeps the in-memory and scanned results equal.

    Examples
    --------
    >>> row = [0.16, 0.18, 0.03, 0.07, 0.09, 0.17, 0.2, 0.10000000000000009]
    >>> float(row_sums(np.array([row]))[0]) == ((((((0.16 + 0.18) + 0.03) + 0.07) + 0.09) + 0.17) + 0.2) + row[7]
    True
    """
    total = block[:, 0].astype(np.float64, copy=True)
    for k in range(1, block.shape[1]):  # over the columns (classes); each step is vectorised over the rows
        total += block[:, k]
    return total


def check_weights(sample_weight, n: int, *, what: str = "sample_weight") -> np.ndarray | None:
    """Validate ``sample_weight`` of length ``n``; ``None`` stays ``None``.

    ``what`` names the weights in messages (e.g. "weight column 'w'").
    """
    if sample_weight is None:
        return None
    w = _as_1d_float(sample_weight, what)
    if w.shape[0] != n:
        raise InputError(f"{what} has {w.shape[0]} entries but there are {n} predictions; pass one weight per row.")
    bad = ~np.isfinite(w)
    if bad.any():
        raise InputError(f"{what} is NaN or infinite in {describe_rows(bad)}; fill or drop those rows.")
    neg = w < 0
    if neg.any():
        raise InputError(f"{what} is negative in {describe_rows(neg)}; weights must be >= 0.")
    if not (w > 0).any():
        raise InputError(f"{what} is zero everywhere (it sums to zero); at least one row needs a positive weight.")
    with np.errstate(over="ignore"):
        check_weight_scale(float(w @ w), what, largest=float(w.max()))
    return w


def check_weight_scale(sum_of_squares: float, what: str = "sample_weight", *, largest: float | None = None) -> None:
    """Refuse weights whose squares overflow: intervals, effective sizes and tests sum w^2, and a weight of 1e300
    turned them into inf and NaN (Hosmer-Lemeshow then said every prediction was 0 or 1). Shared by the data in
    memory and the scans (which pass their sum of squared weights)."""
    if not np.isfinite(sum_of_squares):
        size = "" if largest is None else f" (up to {largest:.3g})"
        raise InputError(f"{what} holds weights{size} too large to square and sum in floating point; rescale them "
                         "(only the ratios of weights matter), e.g. divide them by their mean.")


def drop_zero_weight(w: np.ndarray | None, *arrays: np.ndarray):
    """``(*arrays, w)`` without the rows of weight 0: a row with weight 0 is an absent row (DESIGN.md §4).

    Every metric and table treats such a row as if it were deleted (bins, group
    sizes, counts and smoothing spans count rows, so zero weights alone would
    not make a row absent). Arrays are returned unchanged when no weight is 0.

    Examples
    --------
    >>> import numpy as np
    >>> drop_zero_weight(np.array([1.0, 0.0, 2.0]), np.array([0.1, 0.2, 0.3]))
    (array([0.1, 0.3]), array([1., 2.]))
    """
    if w is None or w.all():
        return (*arrays, w)
    keep = w > 0
    return (*(a[keep] for a in arrays), w[keep])


def _binary_labels_fast(y_arr: np.ndarray) -> np.ndarray | None:
    """float64 copy of bool or integer labels that are all 0/1, else None (use the full checks)."""
    if y_arr.dtype == np.bool_:
        return y_arr.astype(np.float64)
    if np.issubdtype(y_arr.dtype, np.integer) and y_arr.size and y_arr.min() >= 0 and y_arr.max() <= 1:
        return y_arr.astype(np.float64)
    return None


def check_binary(y_true, y_prob, sample_weight=None, *, min_samples: int = 1, drop_zero_weight: bool = True):
    """Validate a binary view.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Outcomes in {0, 1} (bool accepted).
    y_prob : array-like of shape (n,)
        Predicted probability of the outcome 1, in [0, 1].
    sample_weight : array-like of shape (n,), optional
        Non-negative finite weights.
    min_samples : int
        Smallest admissible n.
    drop_zero_weight : bool, default True
        Leave out the rows of weight 0 (absent rows, see
        :func:`drop_zero_weight`); False keeps every row, for callers that
        align the result with other per-row arrays.

    Returns
    -------
    y : ndarray of float64, shape (n,), values 0.0 / 1.0
    p : ndarray of float64, shape (n,)
    w : ndarray of float64 or None
    """
    p = _as_1d_float(y_prob, "y_prob")
    y_arr = np.asarray(y_true)
    if y_arr.ndim != 1:
        raise InputError(f"y_true must be one-dimensional, got shape {y_arr.shape}.")
    if y_arr.shape[0] != p.shape[0]:
        raise InputError(f"y_true has {y_arr.shape[0]} entries but y_prob has {p.shape[0]}; they must have the same length.")
    if p.shape[0] < min_samples:
        raise InputError(f"need at least {min_samples} predictions, got {p.shape[0]}.")
    y = _binary_labels_fast(y_arr)
    if y is not None and p.size and p.min() >= 0.0 and p.max() <= 1.0:
        # fast path: two reductions prove every check below (NaN fails both comparisons)
        return _rows(y, p, check_weights(sample_weight, p.shape[0]), drop_zero_weight)
    try:
        y = _as_1d_float(y_arr, "y_true")
    except InputError:
        if y_arr.dtype.kind not in "OUS":
            raise
        import pandas as pd

        numbers = pd.to_numeric(pd.Series(y_arr), errors="coerce").to_numpy()
        text = np.isnan(numbers)
        if text.mean() > 0.5:  # labels written as words
            values = ", ".join(repr(str(v)) for v in list(dict.fromkeys(y_arr.tolist()))[:4])
            raise InputError(f"y_true holds text labels ({values}); a binary view needs 0 and 1: map the positive "
                             "class to 1 first, e.g. y = (labels == 'yes').astype(int), or load the table with "
                             "calibviz.load_predictions, which maps labels (positive=...).") from None
        # a few entries that are no numbers among numeric labels: name them, not the whole column
        raise InputError(f"y_true holds entries that are not numbers in {describe_rows(text)} "
                         f"(e.g. {y_arr[np.flatnonzero(text)[0]]!r}); fill or drop those rows.") from None
    bad_y = ~((y == 0) | (y == 1))
    if bad_y.any():
        raise InputError(
            f"y_true must contain only 0 and 1 for a binary view; other values occur in {describe_rows(bad_y)} "
            f"(e.g. {y_arr[np.flatnonzero(bad_y)[0]]!r}). Map the positive class to 1 first."
        )
    bad_p = ~np.isfinite(p)
    if bad_p.any():
        raise InputError(f"y_prob is NaN or infinite in {describe_rows(bad_p)}; drop or fix those rows.")
    out = (p < 0) | (p > 1)
    if out.any():
        raise InputError(
            f"y_prob must lie in [0, 1]; it does not in {describe_rows(out)} {probability_range(p.min(), p.max())}. "
            "If these are logits or scores, convert them to probabilities first (e.g. logits=True when loading)."
        )
    return _rows(y, p, check_weights(sample_weight, p.shape[0]), drop_zero_weight)


def _rows(y, p, w, drop: bool):
    return drop_zero_weight(w, y, p) if drop else (y, p, w)


#: How far a row of class probabilities may sum from 1 for the metrics (float rounding of written probabilities);
#: the loaders keep such rows as written and divide the others (:func:`calibviz.io.loading`, scans alike).
ROW_SUM_ATOL = 1e-6


def check_multiclass(y_true, y_prob, sample_weight=None, *, atol: float = ROW_SUM_ATOL, drop_zero_weight: bool = True):
    """Validate a multiclass view.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Class indices 0..K-1.
    y_prob : array-like of shape (n, K)
        Probability vectors; each row must sum to 1 within ``atol``.
    sample_weight : array-like of shape (n,), optional
    drop_zero_weight : bool, default True
        As in :func:`check_binary`.

    Returns
    -------
    y : ndarray of int64, shape (n,)
    P : ndarray of float64, shape (n, K)
    w : ndarray of float64 or None
    """
    try:
        P = np.asarray(y_prob, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"y_prob must be a numeric matrix ({exc}).") from None
    if P.ndim != 2 or P.shape[1] < 2:
        raise InputError(f"y_prob must have shape (n, K) with K >= 2 classes, got shape {P.shape}.")
    y_raw = np.asarray(y_true)
    if y_raw.ndim != 1 or y_raw.shape[0] != P.shape[0]:
        raise InputError(f"y_true must have shape ({P.shape[0]},) to match y_prob, got {y_raw.shape}.")
    y_f = _as_1d_float(y_raw, "y_true")
    K = P.shape[1]
    bad_y = ~np.isfinite(y_f) | (y_f != np.round(y_f)) | (y_f < 0) | (y_f >= K)
    if bad_y.any():
        raise InputError(
            f"y_true must hold class indices 0..{K - 1}; it does not in {describe_rows(bad_y)}. "
            "Encode labels in the order of the probability columns."
        )
    # Fast path: two reductions decide validity (NaN fails both comparisons); the per-row masks that name the
    # offending rows are only computed when something is wrong (10^6 x 100 costs ~0.1 s instead of ~1 s).
    if not (P.size == 0 or (P.min() >= 0.0 and P.max() <= 1.0)):
        bad_p = ~np.isfinite(P).all(axis=1)
        if bad_p.any():
            raise InputError(f"y_prob is NaN or infinite in {describe_rows(bad_p)}; drop or fix those rows.")
        out = ((P < 0) | (P > 1)).any(axis=1)
        raise InputError(f"y_prob entries must lie in [0, 1]; some do not in {describe_rows(out)}.")
    sums = P.sum(axis=1)
    off = np.abs(sums - 1.0) > atol
    if off.any():
        # Dividing by the sums is right only for rounding-sized deviations (calibviz.io.loading.RENORMALIZE_ADVICE_MAX).
        fix = ("The sums are off by rounding: divide each row by its sum (renormalize=True when loading)."
               if np.max(np.abs(sums - 1.0)) <= 0.05 else
               f"Sums from {sums.min():.4g} to {sums.max():.4g} are no rounding: pass one column per class of one "
               "model (softmax probabilities).")
        raise InputError(
            f"each row of y_prob must sum to 1 (tolerance {atol:g}); rows do not in {describe_rows(off)}. {fix}"
        )
    return _rows(y_f.astype(np.int64), P, check_weights(sample_weight, P.shape[0]), drop_zero_weight)
