"""Multiclass-to-binary (M2B) reductions: every multiclass claim as binary views.

Gupta & Ramdas (2022) frame every multiclass calibration notion as a set of
binary calibration claims. A :class:`BinaryView` is one such claim: labels in
{0, 1}, a score in [0, 1], optional weights, a human-readable name and the
rows of the original data it covers. Views feed the binary machinery
unchanged (binning, :func:`calibviz.reliability_table`, binary metrics).

Conventions
-----------
* The predicted class is the argmax of the probability vector; **ties go to
  the first class** (lowest index), as ``numpy.argmax`` does.
* Top-K: the k-th predicted class ``c^(k)`` is the class with the k-th
  highest score, ties again broken towards the lower class index; ``h^(k)``
  is its score.
* Reductions never change the predicted class (the paper's Algorithms 1-2).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import InputError
from .validation import check_multiclass

__all__ = [
    "BinaryView",
    "predicted_class",
    "confidence",
    "top_label",
    "classwise",
    "binary",
    "top_k_confidence",
    "top_k_label",
    "views",
    "VIEW_KINDS",
]

VIEW_KINDS = ("confidence", "top_label", "classwise", "binary", "top_k_confidence", "top_k_label")


@dataclass(frozen=True, eq=False)
class BinaryView:
    """One binary calibration claim derived from multiclass predictions.

    Attributes
    ----------
    y : ndarray of float64, shape (m,)
        Binary outcome (1.0 = the claim's event happened, e.g. "top class correct").
    p : ndarray of float64, shape (m,)
        Predicted probability of that event.
    w : ndarray of float64, shape (m,), or None
        Sample weights of the rows.
    name : str
        What the view is, in words: "confidence", "predicted = cat",
        "cat vs rest", "P(yes)", "rank 2 confidence", "rank 2 = cat".
    rows : ndarray of int64, shape (m,), or None
        Indices of the view's rows in the original data (ascending), or
        None when the view covers all rows in their original order.
    kind : str
        One of :data:`VIEW_KINDS`.
    label : int or None
        Class index the view is about (top-label, class-wise, binary), else None.
    rank : int
        k of a top-K view (1 for the others).

    Examples
    --------
    >>> v = confidence([0, 1], [[0.7, 0.3], [0.4, 0.6]])
    >>> v.name, v.p.tolist(), v.y.tolist(), v.n
    ('confidence', [0.7, 0.6], [1.0, 1.0], 2)
    """

    y: np.ndarray
    p: np.ndarray
    w: np.ndarray | None
    name: str
    rows: np.ndarray | None = None
    kind: str = "confidence"
    label: int | None = None
    rank: int = 1

    @property
    def n(self) -> int:
        """Number of rows in the view."""
        return int(self.p.shape[0])

    @property
    def sample_weight(self) -> np.ndarray | None:
        """Alias of ``w`` in the metrics' argument name."""
        return self.w


# ----------------------------------------------------------------------------
# array-level helpers shared with calibviz.metrics.multiclass and calibviz.multiclass


def predicted_class(y_prob) -> np.ndarray:
    """Predicted class per row: argmax, ties to the first (lowest-index) class.

    Parameters
    ----------
    y_prob : array-like of shape (n, K)

    Returns
    -------
    ndarray of int64, shape (n,)

    Examples
    --------
    >>> predicted_class([[0.4, 0.4, 0.2], [0.1, 0.2, 0.7]]).tolist()
    [0, 2]
    """
    return np.argmax(np.asarray(y_prob, dtype=np.float64), axis=1).astype(np.int64)


def _top(P: np.ndarray):
    """(c, h): predicted class and its score (the top-label prediction)."""
    c = np.argmax(P, axis=1)
    h = np.take_along_axis(P, c[:, None], axis=1)[:, 0]
    return c.astype(np.int64), h


def _top_k(P: np.ndarray, k: int):
    """(classes (k, n), scores (k, n)) of ranks 1..k, ties to the lower class index.

    k passes of argmax over a masked copy: argmax breaks ties towards the first
    index, which a full argsort of -P would too, but at O(nK) per rank and with
    no sort of all K columns.
    """
    n, K = P.shape
    if not 1 <= k <= K:
        raise InputError(f"k must be between 1 and the number of classes ({K}), got {k!r}.")
    cs = np.empty((k, n), dtype=np.int64)
    hs = np.empty((k, n), dtype=np.float64)
    if k == 1:
        cs[0], hs[0] = _top(P)
        return cs, hs
    Q = P.copy()
    rows = np.arange(n)
    for j in range(k):  # loop over ranks; each pass is vectorised over rows
        c = np.argmax(Q, axis=1)
        cs[j] = c
        hs[j] = P[rows, c]
        Q[rows, c] = -np.inf
    return cs, hs


def _group_rows(c: np.ndarray, K: int):
    """(order, starts, counts): rows sorted by class (stable), so class l is order[starts[l]:starts[l]+counts[l]]."""
    order = np.argsort(c, kind="stable")
    counts = np.bincount(c, minlength=K)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    return order, starts, counts


def _class_names(classes, K: int) -> list[str]:
    if classes is None:
        return [f"class {i}" for i in range(K)]
    names = [str(c) for c in classes]
    if len(names) != K:
        raise InputError(f"classes has {len(names)} names but y_prob has {K} columns; pass one name per column.")
    return names


def _as_int(k, name: str) -> int:
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
        raise InputError(f"{name} must be an integer, got {k!r}.")
    return int(k)


# ----------------------------------------------------------------------------
# reductions


def confidence(y_true, y_prob, sample_weight=None) -> BinaryView:
    """Confidence reduction: top score vs "the top class is correct".

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Class indices 0..K-1.
    y_prob : array-like of shape (n, K)
        Probability vectors.
    sample_weight : array-like of shape (n,), optional

    Returns
    -------
    BinaryView
        ``p = max_l P[i, l]``, ``y = 1{y_i = argmax P_i}`` on all rows.

    References
    ----------
    Gupta & Ramdas (2022), "Top-label calibration and multiclass-to-binary
    reductions", ICLR, eq. (1) and Algorithm 1; Guo et al. (2017), ICML.

    Examples
    --------
    >>> v = confidence([0, 2], [[0.5, 0.3, 0.2], [0.6, 0.1, 0.3]])
    >>> v.p.tolist(), v.y.tolist()
    ([0.5, 0.6], [1.0, 0.0])
    """
    return _confidence(*check_multiclass(y_true, y_prob, sample_weight, drop_zero_weight=False))


def _confidence(y, P, w) -> BinaryView:
    c, h = _top(P)
    return BinaryView(y=(y == c).astype(np.float64), p=h, w=w, name="confidence", kind="confidence")


def top_label(y_true, y_prob, sample_weight=None, classes=None) -> list[BinaryView]:
    """Top-label reduction: one confidence view per predicted class.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Class indices 0..K-1.
    y_prob : array-like of shape (n, K)
    sample_weight : array-like of shape (n,), optional
    classes : sequence of K names, optional
        Class names for the view names (default "class 0", ...).

    Returns
    -------
    list of BinaryView
        For each class l predicted at least once (in class order): the rows
        with ``argmax P_i = l`` (ties to the first class), ``p`` = their top
        score, ``y = 1{y_i = l}``, named "predicted = <name>". Classes that
        are never predicted have no view.

    References
    ----------
    Gupta & Ramdas (2022), ICLR, eq. (2), Table 1 and Algorithm 2.

    Examples
    --------
    >>> vs = top_label([0, 1, 1], [[0.6, 0.4], [0.7, 0.3], [0.2, 0.8]], classes=["cat", "dog"])
    >>> [(v.name, v.rows.tolist(), v.y.tolist()) for v in vs]
    [('predicted = cat', [0, 1], [1.0, 0.0]), ('predicted = dog', [2], [1.0])]
    """
    return _top_label(*check_multiclass(y_true, y_prob, sample_weight, drop_zero_weight=False), classes)


def _top_label(y, P, w, classes) -> list[BinaryView]:
    names = _class_names(classes, P.shape[1])
    c, h = _top(P)
    z = (y == c).astype(np.float64)
    order, starts, counts = _group_rows(c, P.shape[1])
    out = []
    for lab in np.flatnonzero(counts):  # loop over classes; slices are vectorised
        rows = order[starts[lab] : starts[lab] + counts[lab]]
        out.append(
            BinaryView(
                y=z[rows], p=h[rows], w=None if w is None else w[rows], name=f"predicted = {names[lab]}",
                rows=rows, kind="top_label", label=int(lab),
            )
        )
    return out


def classwise(y_true, y_prob, sample_weight=None, classes=None, labels=None) -> list[BinaryView]:
    """Class-wise (one-vs-rest) reduction: one view per class, all rows.

    Parameters
    ----------
    y_true : array-like of shape (n,)
    y_prob : array-like of shape (n, K)
    sample_weight : array-like of shape (n,), optional
    classes : sequence of K names, optional
    labels : sequence of class indices, optional
        Only these classes' views (each view holds two arrays of n values:
        with K = 100 and n = 10^6 all of them take 1.6 GB).

    Returns
    -------
    list of BinaryView
        View l: ``p = P[:, l]``, ``y = 1{y_i = l}``, named "<name> vs rest".

    References
    ----------
    Gupta & Ramdas (2022), ICLR, eq. (5) and Algorithm 3; Kull et al. (2019),
    NeurIPS (class-wise calibration).

    Examples
    --------
    >>> vs = classwise([0, 1], [[0.6, 0.4], [0.3, 0.7]], classes=["cat", "dog"])
    >>> [(v.name, v.p.tolist(), v.y.tolist()) for v in vs]
    [('cat vs rest', [0.6, 0.3], [1.0, 0.0]), ('dog vs rest', [0.4, 0.7], [0.0, 1.0])]
    """
    return _classwise(*check_multiclass(y_true, y_prob, sample_weight, drop_zero_weight=False), classes, labels)


def _classwise(y, P, w, classes, labels=None) -> list[BinaryView]:
    names = _class_names(classes, P.shape[1])
    if labels is None:
        labels = range(P.shape[1])
    else:
        labels = [_as_int(lab, "labels") for lab in labels]
        bad = [lab for lab in labels if not 0 <= lab < P.shape[1]]
        if bad:
            raise InputError(f"labels {bad} are not class indices 0..{P.shape[1] - 1}.")
    return [
        BinaryView(
            y=(y == lab).astype(np.float64), p=np.ascontiguousarray(P[:, lab]), w=w, name=f"{names[lab]} vs rest",
            kind="classwise", label=lab,
        )
        for lab in labels
    ]


def binary(y_true, y_prob, sample_weight=None, classes=None, positive: int = 1) -> BinaryView:
    """Binary reduction of two-class predictions: P(positive class).

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Class indices 0/1.
    y_prob : array-like of shape (n, 2)
    sample_weight : array-like of shape (n,), optional
    classes : sequence of 2 names, optional
    positive : int, default 1
        Index of the positive class (``Predictions`` puts it at 1).

    Returns
    -------
    BinaryView
        ``p = P[:, positive]``, ``y = 1{y_i = positive}``, named "P(<name>)".

    References
    ----------
    Gupta & Ramdas (2022), ICLR, Section 1 (binary calibration).

    Examples
    --------
    >>> v = binary([0, 1], [[0.8, 0.2], [0.3, 0.7]], classes=["no", "yes"])
    >>> v.name, v.p.tolist(), v.y.tolist()
    ('P(yes)', [0.2, 0.7], [0.0, 1.0])
    """
    return _binary(*check_multiclass(y_true, y_prob, sample_weight, drop_zero_weight=False), classes, positive)


def _binary(y, P, w, classes, positive=1) -> BinaryView:
    if P.shape[1] != 2:
        raise InputError(
            f"the binary reduction needs exactly 2 probability columns, got {P.shape[1]}; "
            "use confidence, top_label or classwise for multiclass predictions."
        )
    positive = _as_int(positive, "positive")
    if positive not in (0, 1):
        raise InputError(f"positive must be 0 or 1, got {positive}.")
    names = _class_names(classes, 2)
    return BinaryView(
        y=(y == positive).astype(np.float64), p=np.ascontiguousarray(P[:, positive]), w=w,
        name=f"P({names[positive]})", kind="binary", label=positive,
    )


def top_k_confidence(y_true, y_prob, k: int = 2, sample_weight=None) -> list[BinaryView]:
    """Top-K-confidence reduction: for ranks j = 1..k, score h^(j) vs 1{y = c^(j)}.

    Parameters
    ----------
    y_true : array-like of shape (n,)
    y_prob : array-like of shape (n, K)
    k : int, default 2
        Number of ranks, 1 <= k <= K; rank 1 is the confidence view.
    sample_weight : array-like of shape (n,), optional

    Returns
    -------
    list of BinaryView
        k views on all rows, named "rank j confidence" ("confidence" for j=1).

    References
    ----------
    Gupta & Ramdas (2022), ICLR, eq. (6), Table 1 and Algorithm 7 (with the
    label ``1{Y_i = c^(k)(X_i)}``; the printed ``1{Y_i = l}`` is a typo).

    Examples
    --------
    >>> vs = top_k_confidence([1, 0], [[0.5, 0.3, 0.2], [0.1, 0.6, 0.3]], k=2)
    >>> [(v.name, v.p.tolist(), v.y.tolist()) for v in vs]
    [('confidence', [0.5, 0.6], [0.0, 0.0]), ('rank 2 confidence', [0.3, 0.3], [1.0, 0.0])]
    """
    return _top_k_confidence(*check_multiclass(y_true, y_prob, sample_weight, drop_zero_weight=False), k)


def _top_k_confidence(y, P, w, k) -> list[BinaryView]:
    cs, hs = _top_k(P, _as_int(k, "k"))
    return [
        BinaryView(
            y=(y == cs[j]).astype(np.float64), p=hs[j], w=w,
            name="confidence" if j == 0 else f"rank {j + 1} confidence", kind="top_k_confidence", rank=j + 1,
        )
        for j in range(cs.shape[0])
    ]


def top_k_label(y_true, y_prob, k: int = 2, sample_weight=None, classes=None) -> list[BinaryView]:
    """Top-K-label reduction: for each rank j <= k and class l, rows with c^(j) = l.

    Parameters
    ----------
    y_true : array-like of shape (n,)
    y_prob : array-like of shape (n, K)
    k : int, default 2
    sample_weight : array-like of shape (n,), optional
    classes : sequence of K names, optional

    Returns
    -------
    list of BinaryView
        Ordered by rank, then class; only non-empty (rank, class) pairs.
        Rank 1 views are the top-label views ("predicted = cat"); rank j > 1
        views are named "rank j = cat", with ``p = h^(j)``, ``y = 1{y_i = l}``.

    References
    ----------
    Gupta & Ramdas (2022), ICLR, eq. (7), Table 1 and Algorithm 6.

    Examples
    --------
    >>> vs = top_k_label([1, 0], [[0.5, 0.3, 0.2], [0.1, 0.6, 0.3]], k=2, classes="abc")
    >>> [(v.name, v.rows.tolist(), v.p.tolist(), v.y.tolist()) for v in vs]
    [('predicted = a', [0], [0.5], [0.0]), ('predicted = b', [1], [0.6], [0.0]), ('rank 2 = b', [0], [0.3], [1.0]), ('rank 2 = c', [1], [0.3], [0.0])]
    """
    return _top_k_label(*check_multiclass(y_true, y_prob, sample_weight, drop_zero_weight=False), k, classes)


def _top_k_label(y, P, w, k, classes) -> list[BinaryView]:
    K = P.shape[1]
    names = _class_names(classes, K)
    cs, hs = _top_k(P, _as_int(k, "k"))
    out = []
    for j in range(cs.shape[0]):  # loops over ranks and classes; slices are vectorised
        c, h = cs[j], hs[j]
        z = (y == c).astype(np.float64)
        order, starts, counts = _group_rows(c, K)
        for lab in np.flatnonzero(counts):
            rows = order[starts[lab] : starts[lab] + counts[lab]]
            name = f"predicted = {names[lab]}" if j == 0 else f"rank {j + 1} = {names[lab]}"
            out.append(
                BinaryView(
                    y=z[rows], p=h[rows], w=None if w is None else w[rows], name=name, rows=rows,
                    kind="top_label" if j == 0 else "top_k_label", label=int(lab), rank=j + 1,
                )
            )
    return out


def views(preds, kind: str = "confidence", *, k: int = 2):
    """The binary views of a :class:`calibviz.Predictions` for one reduction.

    Parameters
    ----------
    preds : calibviz.Predictions
    kind : {"confidence", "top_label", "classwise", "binary", "top_k_confidence", "top_k_label"}
    k : int, default 2
        Number of ranks for the top-K reductions.

    Returns
    -------
    list of BinaryView
        Always a list (one element for "confidence" and "binary"); view names
        use ``preds.classes``.

    References
    ----------
    Gupta & Ramdas (2022), ICLR, Table 1 (M2B notions).

    Examples
    --------
    >>> import numpy as np
    >>> from calibviz.io import Predictions
    >>> pr = Predictions(y=np.array([0, 2]), probs=np.array([[.7, .2, .1], [.2, .2, .6]]), classes=("a", "b", "c"))
    >>> [v.name for v in views(pr, "top_label")]
    ['predicted = a', 'predicted = c']
    """
    if kind not in VIEW_KINDS:
        raise InputError(f"kind must be one of {', '.join(VIEW_KINDS)}, got {kind!r}.")
    # Predictions are validated on construction (with its own row-sum tolerance): no second check
    y, P, w, cls = preds.y, preds.probs, preds.weights, preds.classes
    if kind == "confidence":
        return [_confidence(y, P, w)]
    if kind == "binary":
        return [_binary(y, P, w, cls)]
    if kind == "top_label":
        return _top_label(y, P, w, cls)
    if kind == "classwise":
        return _classwise(y, P, w, cls)
    if kind == "top_k_confidence":
        return _top_k_confidence(y, P, w, k)
    return _top_k_label(y, P, w, k, cls)
