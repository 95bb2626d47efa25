"""Inductive Venn-Abers predictors: a calibrated probability with its (p0, p1) interval.

For a test score s, p0 (p1) is the value at s of the isotonic regression of
the calibration rows together with the test row labelled 0 (1). The pair is
the Venn-Abers multiprobability prediction (one of the two is well calibrated
whichever the true label); ``p = p1 / (1 - p0 + p1)`` is the single
probability that minimises the worst-case log loss against the two.

Computation (all scores at once, exact): p1 depends only on the position of s
among the k distinct calibration scores (k + 1 gaps; a score tied with a
calibration score behaves as the gap below it for p1 and above it for p0).
With the cumulative sum diagram P_0 = (0, 0), P_j = (W_j, Y_j) of the groups
of equal scores sorted by score, inserting a row (weight 1, label 1) after
group i gives

    p1(i) = max_{a <= i} min_{b >= i} (Y_b - Y_a + 1) / (W_b - W_a + 1)
          = max_{a <= i} G(a),   G(a) = min_{b >= a} slope(P_a - (1, 1), P_b),

(the min-max formula of isotonic regression; the second line because the
maximising a is the last point left of the new row that lies below the
greatest convex minorant, Vovk, Petej & Fedorova 2015, Sec. 4). G(a) is the
tangent from P_a - (1, 1) to the lower convex hull of {P_b : b >= a}.

The suffix hulls (Vovk et al.'s stack, built right to left) are found without
a loop over the rows: a point where the diagram does not turn strictly left
lies on or above the segment joining its neighbours, so it is no vertex of
any suffix hull that holds both neighbours. Every suffix hull's vertices
after its second point are therefore among the strict left turns S, whose
own suffix hulls (over S alone) are the true ones: the same reduction
applies to S, level after level (at n = 10^6 in the benchmark the first
level keeps 13% of the points, each further one about half; levels under
1,024 points, or that keep over 75%, as convex diagrams do, run the stack
loop). Each level's pointers, and the
tangents G(a), come from vectorised walks along the next level's hulls
(a few vertices on real data; binary lifting after 32 steps, O(log k) for
any input). p0 is the mirror image (labels flipped, order reversed). Rows of
weight w count as w rows; the test row has weight 1.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..validation import check_binary
from ._base import Recalibrator, _multiclass_input
from .nonparametric import _groups

__all__ = ["VennAbers", "venn_abers_values"]

_WALK_STEPS = 32  # hull steps walked before the remaining tangent queries switch to binary lifting
_LOOP_SIZE = 1024  # levels of the hull hierarchy this small run the stack loop
_REDUCTION = 0.75  # a level that keeps more of its points than this share runs the stack loop instead


def _suffix_hull_next(X: list, Y: list) -> np.ndarray:
    """nxt[a]: the vertex after P_a on the lower convex hull of {P_a, ..., P_k} (nxt[k] = k).

    Andrew's monotone chain from the right: a stack of hull vertices, each
    point pushed once and popped at most once (O(k); one Python loop, the
    only one of the fit).
    """
    k = len(X) - 1
    nxt = [k] * (k + 1)
    stack = [k]
    top, under = k, -1
    for a in range(k - 1, -1, -1):
        xa, ya = X[a], Y[a]
        while under >= 0:
            xt, yt = X[top], Y[top]
            # keep top iff slope(a, top) < slope(top, under): the chain turns left at top
            if (xt - xa) * (Y[under] - yt) > (yt - ya) * (X[under] - xt):
                break
            stack.pop()
            top = under
            under = stack[-2] if len(stack) > 1 else -1
        nxt[a] = top
        stack.append(a)
        under, top = top, a
    return np.asarray(nxt, dtype=np.int64)


def _left_turns(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Indices b (1..m-2) where the polyline P_0..P_{m-1} turns strictly left at P_b, and m - 1.

    A point where the polyline does not turn strictly left lies on or above
    the segment joining its neighbours, so it is no vertex (or only a
    collinear one) of the lower hull of any suffix that holds both
    neighbours: for a suffix starting at a, the hull's vertices after
    P_{a+1} are all among these points.
    """
    dx, dy = np.diff(X), np.diff(Y)
    turn = np.flatnonzero(dy[:-1] * dx[1:] < dy[1:] * dx[:-1]) + 1
    return np.append(turn, X.shape[0] - 1)


def _chains(X: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(S, nS): points S (sorted, with the last) that hold every suffix hull's vertices after its second point,
    and nS[j], the position in S of the vertex after S[j] on the lower hull of {P_S[j], ..., P_{m-1}}.

    Hierarchical: S are the strict left turns of the polyline, whose own suffix hulls (over S alone) are the
    true ones, found by the same reduction one level up; small or barely reducible levels (convex data) run
    the stack loop. At 10^6 rows the first level keeps ~13% of the points and each further one about half, so
    the levels together cost a fraction of one pass over the data instead of a Python loop over every point.
    """
    m = X.shape[0]
    if m > _LOOP_SIZE:
        S = _left_turns(X, Y)
        if S.shape[0] <= _REDUCTION * m:
            return S, _hull_next(X[S], Y[S])
    return np.arange(m), _suffix_hull_next(X.tolist(), Y.tolist())


def _hull_next(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """nxt[a]: the vertex after P_a on the lower convex hull of {P_a, ..., P_{m-1}} (farthest of collinear ones).

    The hull from a has its vertices after P_{a+1} among the left turns S (:func:`_left_turns`), so nxt[a] is
    P_{a+1} or the tangent point from P_a onto the hull chain that starts at the first point of S after a.
    """
    S, nS = _chains(X, Y)
    m = X.shape[0]
    if S.shape[0] == m:
        return nS
    c = S[_tangents(X[S], Y[S], nS, X[:-1], Y[:-1], _first_after(S, m))]
    x0, y0 = X[:-1], Y[:-1]
    far = (Y[c] - y0) * (X[1:] - x0) <= (Y[1:] - y0) * (X[c] - x0)  # slope to c <= slope to a + 1
    return np.append(np.where(far, c, np.arange(1, m)), m - 1)


def _first_after(S: np.ndarray, m: int) -> np.ndarray:
    """For a = 0..m-2, the position in S (sorted, ending with m - 1) of its first element > a."""
    member = np.zeros(m, dtype=np.int64)
    member[S] = 1
    return np.cumsum(member[:-1])


def _tangents(X, Y, nxt, qx, qy, start) -> np.ndarray:
    """For each query point Q left of the chain, the vertex of the convex chain start -> nxt[start] -> ...
    where the slope from Q is smallest (the tangent point; the farthest of equal ones).

    Along a convex chain the slope from a point on its left falls, then rises: walk while it does not rise.
    On real data the tangent is a few vertices away, so a short vectorised walk with a shrinking active set is
    cheapest; queries still walking after ``_WALK_STEPS`` steps finish by binary lifting (O(log m) each for
    any input).
    """
    tangent = np.asarray(start, dtype=np.int64).copy()
    n2 = nxt[tangent]  # the first step on whole arrays (every query moves or stops here)
    ok = ((Y[n2] - qy) * (X[tangent] - qx) <= (Y[tangent] - qy) * (X[n2] - qx)) & (n2 != tangent)
    q = np.flatnonzero(ok)
    cur = n2[q]
    for _ in range(_WALK_STEPS):
        if not q.size:
            return tangent
        n2 = nxt[cur]
        ok = ((Y[n2] - qy[q]) * (X[cur] - qx[q]) <= (Y[cur] - qy[q]) * (X[n2] - qx[q])) & (n2 != cur)
        tangent[q[~ok]] = cur[~ok]
        q, cur = q[ok], n2[ok]
    # binary lifting for the rest: ok(v) (moving on from v does not raise the slope) holds on a prefix of the
    # chain, so jump by 2^j while the vertex reached still satisfies it; cur satisfies ok(cur) on entry
    levels = [nxt]
    while (1 << len(levels)) <= nxt.shape[0]:
        levels.append(levels[-1][levels[-1]])
    qxq, qyq = qx[q], qy[q]

    def moves(v):
        n2 = nxt[v]
        return ((Y[n2] - qyq) * (X[v] - qxq) <= (Y[v] - qyq) * (X[n2] - qxq)) & (n2 != v)

    cur = cur.copy()
    back = np.flatnonzero(~moves(cur))  # cannot happen (cur was reached by a move); kept exact regardless
    for up in reversed(levels):
        w = up[cur]
        ok = moves(w)
        cur[ok] = w[ok]
    done = moves(cur)
    tangent[q] = np.where(done, nxt[cur], cur)
    if back.size:
        tangent[q[back]] = cur[back]
    return tangent


def _p1_values(gw: np.ndarray, gy: np.ndarray) -> np.ndarray:
    """p1 for a test row (label 1, weight 1) inserted after group i, i = 0..k.

    p1(i) = max_{a <= i} G(a), G(a) = min over b >= a of the slope from Q_a = P_a - (1, 1) to P_b: b = a
    (slope 1), b = a + 1, or the tangent point from Q_a onto the suffix hull that starts at the first left
    turn after a (:func:`_chains`).
    """
    X = np.concatenate(([0.0], np.cumsum(gw)))
    Y = np.concatenate(([0.0], np.cumsum(gy)))
    k = X.shape[0] - 1
    S, nS = _chains(X, Y)
    qx, qy = X[:-1] - 1.0, Y[:-1] - 1.0
    t = S[_tangents(X[S], Y[S], nS, qx, qy, _first_after(S, k + 1))]
    G = np.ones(k + 1)
    G[:-1] = np.minimum(np.minimum((Y[t] - qy) / (X[t] - qx), (Y[1:] - qy) / (X[1:] - qx)), 1.0)
    return np.maximum.accumulate(G)


def venn_abers_values(p, y, w=None):
    """(scores, p0 at each gap, p1 at each gap) of the inductive Venn-Abers predictor fitted on (p, y).

    Parameters
    ----------
    p, y : ndarray of shape (n,)
        Calibration scores and labels in {0, 1}.
    w : ndarray of shape (n,), optional
        Weights (a weight w counts as w rows; the test row has weight 1).

    Returns
    -------
    (c, P0, P1)
        ``c``: the k distinct scores, sorted; ``P0[i]`` (``P1[i]``), i = 0..k:
        p0 (p1) of a test score with i distinct calibration scores at or
        below it (strictly below it), i.e. ``p0(s) = P0[searchsorted(c, s,
        "right")]`` and ``p1(s) = P1[searchsorted(c, s, "left")]``.

    References
    ----------
    V. Vovk & I. Petej (2014), "Venn-Abers predictors", UAI, Sec. 3-4
    (inductive Venn-Abers predictors); V. Vovk, I. Petej & V. Fedorova
    (2015), "Large-scale probabilistic predictors with and without
    guarantees of validity", NeurIPS, Sec. 4 (the greatest convex minorant
    computation) and Eq. (11) (the merged probability).

    Examples
    --------
    >>> import numpy as np
    >>> c, P0, P1 = venn_abers_values(np.array([0.2, 0.4, 0.6, 0.8]), np.array([0.0, 1.0, 0.0, 1.0]))
    >>> np.round(P0, 3).tolist(), np.round(P1, 3).tolist()
    ([0.0, 0.0, 0.333, 0.333, 0.5], [0.5, 0.667, 0.667, 1.0, 1.0])
    """
    c, gw, gy = _groups(p, y, w)
    P1 = _p1_values(gw, gy)
    P0 = 1.0 - _p1_values(gw[::-1], (gw - gy)[::-1])[::-1]
    return c, np.clip(P0, 0.0, 1.0), np.clip(P1, 0.0, 1.0)


def _steps(c: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Compress a gap-indexed step function: (thresholds, values) with value[j] for thresholds[j-1] < index."""
    change = np.flatnonzero(values[1:] != values[:-1]) + 1  # gap indices where the value changes
    return c[change - 1], np.concatenate((values[:1], values[change]))


def _pair_score(P: np.ndarray, i: int, j: int) -> np.ndarray:
    """P(class j | class i or j) from a model's probability rows: P_j / (P_i + P_j) (1/2 where both are 0)."""
    a, b = P[:, i], P[:, j]
    total = a + b
    return np.divide(b, total, out=np.full(P.shape[0], 0.5), where=total > 0)


class VennAbers(Recalibrator):
    """Inductive Venn-Abers calibration: p = p1 / (1 - p0 + p1) with the (p0, p1) interval.

    :meth:`predict` returns the merged probability; :meth:`predict_interval`
    returns (p0, p1), whose width says how much the calibration rows leave
    the probability undetermined (wide where calibration data are few). The
    map is two monotone step functions (p0 and p1) of the score, stored as
    thresholds and values in the JSON map.

    Multiclass data go through the M2B reductions (``multiclass=``, as every
    binary method) or ``multiclass="pairwise"``: Manokhin's (2017) one-vs-one
    scheme, one predictor per pair of classes fitted on the rows of those two
    classes with the score P_j / (P_i + P_j), coupled into class
    probabilities by ``p_c = 1 / (sum_{k != c} 1 / p_{c|ck} - (K - 2))``
    (Price et al. 1995) and normalised (the venn-abers package's default
    multiclass calibrator; K(K-1)/2 maps, no single interval per row).

    References
    ----------
    V. Vovk & I. Petej (2014), "Venn-Abers predictors", UAI; V. Vovk,
    I. Petej & V. Fedorova (2015), NeurIPS, Eq. (11) for the merged
    probability p1 / (1 - p0 + p1); V. Manokhin (2017), "Multi-class
    probabilistic classification using inductive and cross Venn-Abers
    predictors", COPA, PMLR 60 (pairwise); D. Price, S. Knerr, L. Personnaz &
    G. Dreyfus (1995), "Pairwise neural network classifiers with
    probabilistic outputs", NIPS 7 (the coupling).

    Examples
    --------
    >>> import numpy as np
    >>> m = VennAbers().fit(np.array([0.2, 0.4, 0.6, 0.8]), np.array([0, 1, 0, 1]))
    >>> p0, p1 = m.predict_interval([0.5])
    >>> round(float(p0[0]), 4), round(float(p1[0]), 4), round(float(m.predict([0.5])[0]), 4)
    (0.3333, 0.6667, 0.5)
    """

    name = "venn_abers"
    label = "Venn-Abers"

    def __init__(self, *, multiclass: str = "top_label"):
        if multiclass == "pairwise":  # Venn-Abers' own multiclass scheme (Manokhin 2017), besides the M2B ones
            super().__init__()
            self.multiclass = "pairwise"
        else:
            super().__init__(multiclass=multiclass)

    def _fit_m2b(self, P, y, w) -> list:
        if self.multiclass != "pairwise":
            return super()._fit_m2b(P, y, w)
        maps = []
        K = P.shape[1]
        for i in range(K - 1):
            for j in range(i + 1, K):
                rows = (y == i) | (y == j)
                s = _pair_score(P[rows], i, j)
                maps.append({"pair": [i, j], "map": self._fit_view(s, (y[rows] == j).astype(np.float64),
                                                                   None if w is None else w[rows])})
        return maps

    def _predict_m2b(self, maps, P) -> np.ndarray:
        if self.multiclass != "pairwise":
            return super()._predict_m2b(maps, P)
        n, K = P.shape
        inv = np.zeros((n, K))  # sum over the other classes k of 1 / P(c | c or k)
        with np.errstate(divide="ignore"):
            for m in maps:
                i, j = m["pair"]
                s = _pair_score(P, i, j)
                pj = s if m["map"] is None else self._predict_binary(m["map"], s)
                inv[:, i] += 1.0 / (1.0 - pj)
                inv[:, j] += 1.0 / pj
            Q = 1.0 / (inv - (K - 2))  # pairwise coupling (Price et al. 1995), as Manokhin (2017)
        Q[~np.isfinite(Q) | (Q < 0)] = 0.0
        total = Q.sum(axis=1)
        Q[total > 0] /= total[total > 0, None]
        Q[total <= 0] = 1.0 / K
        return Q

    def _fit_binary(self, p, y, w):
        c, P0, P1 = venn_abers_values(p, y, w)
        t0, v0 = _steps(c, P0)
        t1, v1 = _steps(c, P1)
        return {"p0": {"thresholds": t0, "values": v0}, "p1": {"thresholds": t1, "values": v1}}

    @staticmethod
    def _interval(state, p):
        t0 = np.asarray(state["p0"]["thresholds"], dtype=np.float64)
        t1 = np.asarray(state["p1"]["thresholds"], dtype=np.float64)
        p0 = np.asarray(state["p0"]["values"], dtype=np.float64)[np.searchsorted(t0, p, side="right")]
        p1 = np.asarray(state["p1"]["values"], dtype=np.float64)[np.searchsorted(t1, p, side="left")]
        return p0, p1

    def _predict_binary(self, state, p):
        p0, p1 = self._interval(state, p)
        return p1 / (1.0 - p0 + p1)

    def predict_interval(self, y_prob) -> tuple[np.ndarray, np.ndarray]:
        """The Venn-Abers interval (p0, p1) of each prediction.

        Parameters
        ----------
        y_prob : array-like of shape (n,) or (n, K)
            Of the kind the map was fitted on.

        Returns
        -------
        (p0, p1)
            Binary: ndarrays of shape (n,), around P(y = 1). Multiclass, per
            M2B reduction: ``"top_label"`` and ``"confidence"``: shape (n,),
            the interval of the predicted class's probability (the map of the
            view that row falls in; NaN for a predicted class that never
            occurred among the calibration rows, whose rows are left as they
            are); ``"classwise"``: shape (n, K), each class's one-vs-rest
            interval, as the venn-abers package's one-vs-rest multiclass
            calibrator (Manokhin 2017) reports it. ``predict`` lies inside
            the interval except for class-wise after normalisation (the rows
            are rescaled to sum to 1, the intervals are not).

        References
        ----------
        V. Manokhin (2017), "Multi-class probabilistic classification using
        inductive and cross Venn-Abers predictors", COPA, PMLR 60 (one-vs-rest
        with normalisation); Gupta & Ramdas (2022) for the top-label view.
        """
        self._require_fitted()
        if self.kind_ == "multiclass" and self.multiclass == "pairwise":
            raise InputError("a pairwise (one-vs-one) Venn-Abers map has an interval per pair of classes, none per "
                             "row; fit with multiclass='classwise' or 'top_label' for intervals.")
        if self.kind_ == "binary":
            if np.ndim(y_prob) != 1:
                raise InputError(f"this map was fitted on binary predictions (shape (n,)); got shape "
                                 f"{np.shape(y_prob)}. Pass P(y = 1) as one column.")
            p = check_binary(np.zeros(np.shape(y_prob)[0]), y_prob)[1]
            return self._interval(self.state_["binary"], p)
        P = _multiclass_input(y_prob)
        if P.shape[1] != self.n_classes_:
            raise InputError(f"this map was fitted on {self.n_classes_} classes; y_prob has {P.shape[1]} columns.")
        maps = self.state_["maps"]
        n = P.shape[0]
        if self.multiclass == "classwise":
            p0, p1 = np.full(P.shape, np.nan), np.full(P.shape, np.nan)
            for m in maps:
                if m["map"] is not None:
                    p0[:, m["label"]], p1[:, m["label"]] = self._interval(m["map"],
                                                                          np.ascontiguousarray(P[:, m["label"]]))
            return p0, p1
        c = np.argmax(P, axis=1)
        h = P[np.arange(n), c]
        if self.multiclass == "confidence":
            return self._interval(maps[0]["map"], h)
        p0, p1 = np.full(n, np.nan), np.full(n, np.nan)
        for m in maps:
            sel = c == m["label"]
            if m["map"] is not None and sel.any():
                p0[sel], p1[sel] = self._interval(m["map"], h[sel])
        return p0, p1

    def describe(self) -> str:
        return ("Venn-Abers: isotonic fits with the new row labelled 0 and 1 give an interval (p0, p1); the "
                "prediction is p1 / (1 - p0 + p1).")
