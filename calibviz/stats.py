"""Vectorised tests and intervals for the per-bin statistics.

* :func:`binom_test_pvalue`: the exact two-sided binomial p-value of
  ``scipy.stats.binomtest(k, n, p).pvalue`` for arrays of (k, n, p), bit for
  bit (same "minimum-likelihood" rule, same 1e-7 relative tolerance, same
  bisection, same scipy distribution calls).
* :func:`binom_reject`: the TCE decisions ``pvalue <= alpha`` for many
  predictions sharing a few (k, n) pairs, fast: most predictions are decided
  by certified monotone bounds computed once per pair; only the rest go
  through :func:`binom_test_pvalue`.
* :func:`ttest_pvalue`: the t-test variant of TCE with the correct standard
  deviation.
* :func:`proportion_interval`: Wilson / Clopper-Pearson / Jeffreys intervals
  (statsmodels).
* :func:`acceptance_band`: binomial quantiles of the count under "the bin is
  calibrated", as a rate.
* :func:`bernoulli_max_t`: simultaneous test of linear statistics of
  Bernoulli residuals (a LOESS curve along a variable, the levels of a
  column) against outcomes drawn from their probabilities (max-T).
* :func:`p_value_digits`, :func:`bound_digits`: the digits a p-value, or a
  bound on one, is printed with (tables and readings: :mod:`calibviz.panel`).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from .errors import InputError
from ._lazy import lazy

binom = lazy("scipy.stats", "binom")
student_t = lazy("scipy.stats", "t")

__all__ = [
    "binom_test_pvalue",
    "binom_reject",
    "ttest_pvalue",
    "proportion_interval",
    "acceptance_band",
    "holm_adjusted",
    "holm_adjusted_finite",
    "bernoulli_max_t",
    "bernoulli_abs_sum_p",
    "cumulant_abs_sum_p",
    "MaxT",
    "GAUSSIAN_MAX_SKEWNESS",
    "INTERVAL_METHODS",
]

_RERR = 1 + 1e-7  # scipy.stats.binomtest's relative tolerance for "equally likely"
_MARGIN = 1e-6  # safety margin of the certified screening bounds (float error is ~1e-13)
_TINY = 1e-250  # below this, subnormal/underflowed tails are not trusted by the screening


def _check_alpha(alpha) -> float:
    try:
        a = float(alpha)
    except (TypeError, ValueError):
        raise InputError(f"alpha must be a number in [0, 1], got {alpha!r}.") from None
    if not 0.0 <= a <= 1.0:
        raise InputError(f"alpha must lie in [0, 1], got {alpha!r}.")
    return a


def _check_kn(k, n):
    k = np.asarray(k)
    n = np.asarray(n)
    if not (np.issubdtype(k.dtype, np.integer) or np.all(np.mod(k, 1) == 0)):
        raise InputError("k (number of positives) must be integers.")
    if not (np.issubdtype(n.dtype, np.integer) or np.all(np.mod(n, 1) == 0)):
        raise InputError("n (number of trials) must be integers.")
    k = k.astype(np.int64)
    n = n.astype(np.int64)
    if np.any(n < 1) or np.any(k < 0) or np.any(k > n):
        raise InputError("binomial test needs 1 <= n and 0 <= k <= n.")
    return k, n


@functools.cache
def _boost_binom():
    """(pmf, cdf, sf): the Boost ufuncs behind scipy.stats.binom (same numbers, ~25x less overhead per call).

    Imported on first use: ``scipy.special`` costs ~0.2 s of the start of every command that never tests a
    bin. None on scipy layouts without them (then the public, slower path).
    """
    try:
        from scipy.special._ufuncs import _binom_cdf, _binom_pmf, _binom_sf
    except ImportError:  # pragma: no cover - other scipy layouts
        return None
    return _binom_pmf, _binom_cdf, _binom_sf


def _pmf(x, n, p):
    """``scipy.stats.binom.pmf(x, n, p)`` on float arrays (x integral, n >= 1, p in [0, 1]).

    Identical values: scipy clips the Boost result to [0, 1] and returns 0
    outside 0..n; this skips rv_discrete's argument handling.
    """
    boost = _boost_binom()
    if boost is None:  # pragma: no cover
        return binom.pmf(x, n, p)
    inside = (x >= 0) & (x <= n)
    # np.minimum/np.maximum: same values as np.clip, less call overhead on small arrays
    return np.where(inside, np.minimum(np.maximum(boost[0](np.minimum(np.maximum(x, 0), n), n, p), 0), 1), 0.0)


def _cdf(x, n, p):
    """``scipy.stats.binom.cdf(x, n, p)``, same conventions as :func:`_pmf` (1 for x >= n, 0 for x < 0)."""
    boost = _boost_binom()
    if boost is None:  # pragma: no cover
        return binom.cdf(x, n, p)
    inner = np.minimum(np.maximum(boost[1](np.minimum(np.maximum(np.floor(x), 0), n), n, p), 0), 1)
    return np.where(x >= n, 1.0, np.where(x < 0, 0.0, inner))


def _sf(x, n, p):
    """``scipy.stats.binom.sf(x, n, p)`` (1 for x < 0, 0 for x >= n)."""
    boost = _boost_binom()
    if boost is None:  # pragma: no cover
        return binom.sf(x, n, p)
    inner = np.minimum(np.maximum(boost[2](np.minimum(np.maximum(np.floor(x), 0), n), n, p), 0), 1)
    return np.where(x < 0, 1.0, np.where(x >= n, 0.0, inner))


def _bisect_index(a, target, lo, hi):
    """Vectorised replica of scipy's ``_binary_search_for_binom_tst``.

    ``a(mask, x)`` evaluates the searched function for the entries in
    ``mask`` at points ``x``; ``lo``/``hi`` are float arrays. Reproduces the
    exact sequence of probes, hence the exact result, of the scalar version.
    """
    lo = lo.copy()
    hi = hi.copy()
    result = np.full(lo.shape, np.nan)
    found = np.zeros(lo.shape, dtype=bool)
    active = lo < hi
    while active.any():
        ia = np.flatnonzero(active)
        mid = lo[ia] + (hi[ia] - lo[ia]) // 2
        val = a(ia, mid)
        d = target[ia]
        lt = val < d
        gt = val > d
        eq = ~(lt | gt)
        lo[ia[lt]] = mid[lt] + 1
        hi[ia[gt]] = mid[gt] - 1
        result[ia[eq]] = mid[eq]
        found[ia[eq]] = True
        active[ia] = (lo[ia] < hi[ia]) & ~found[ia]
    rest = np.flatnonzero(~found)
    if rest.size:
        ok = a(rest, lo[rest]) <= target[rest]
        result[rest] = np.where(ok, lo[rest], lo[rest] - 1)
    return result


def _far_end(k, n, p, right, d=None):
    """Boundary j0 of the far tail in scipy's two-sided binomtest (float arrays).

    ``right`` (bool, or a bool array with one entry per test): k < p*n, the
    far tail is {j >= j0} (j0 = n + 1 when empty); otherwise (k > p*n) it is
    {j <= j0} (j0 = -1 when empty). j0 is what scipy's bisection over the pmf
    returns, probe by probe; ``d`` is pmf(k). Both sides go through one
    bisection (on -pmf on the right, as scipy's search for the far tail on
    that side compares), which pays the per-probe overhead once.
    """
    right = np.broadcast_to(np.asarray(right, dtype=bool), np.shape(k))
    dr = (_pmf(k, n, p) if d is None else d) * _RERR
    pn = p * n
    sign = np.where(right, -1.0, 1.0)
    ix = _bisect_index(lambda i, x: sign[i] * _pmf(x, n[i], p[i]), sign * dr,
                       np.where(right, np.ceil(pn), 0.0), np.where(right, n, np.floor(pn)))
    # right: scipy's y = n - ix + [d*rerr == pmf(ix)] outcomes, far tail sf(n - y), so j0 = n - y + 1;
    # left: y = ix + 1 outcomes, far tail cdf(y - 1), so j0 = ix
    return np.where(right, ix - (dr == _pmf(ix, n, p)) + 1, ix)


def binom_test_pvalue(k, n, p):
    """Exact two-sided binomial test p-values, as ``scipy.stats.binomtest``.

    Parameters
    ----------
    k : array-like of int
        Number of successes.
    n : array-like of int
        Number of trials (>= 1).
    p : array-like of float
        Null success probabilities in [0, 1].

    Returns
    -------
    ndarray of float64
        Broadcast shape of (k, n, p); each entry equals
        ``scipy.stats.binomtest(k, n, p).pvalue`` exactly: the probability of
        all outcomes with ``pmf <= pmf(k) * (1 + 1e-7)`` ("minimum-likelihood"
        two-sided p-value), computed with scipy's own procedure.

    References
    ----------
    Matsubara et al. (2023), "TCE: A test-based approach to measuring
    calibration error", UAI, Section 3.2 (binomial test as the function R of
    eq. 7); scipy.stats.binomtest.

    Examples
    --------
    >>> round(float(binom_test_pvalue(3, 10, 0.5)), 6)
    0.34375
    >>> binom_test_pvalue([0, 1], 5, 0.0).tolist()
    [1.0, 0.0]
    """
    k, n = _check_kn(k, n)
    p = np.asarray(p, dtype=np.float64)
    if np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise InputError("p (null probability) must lie in [0, 1].")
    k, n, p = np.broadcast_arrays(k, n, p)
    return _pvalue(k.ravel(), n.ravel(), p.ravel()).reshape(k.shape)


def _pvalue(k, n, p, alpha=None):
    """scipy's two-sided binomtest p-value on flat validated arrays.

    With ``alpha`` given, p-values that a cheap geometric bound shows to be
    below ``alpha`` are returned as 0.0 instead of being computed: the tails
    cost two incomplete-beta evaluations each, the pmf probes are cheap.
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return _pvalue_impl(k, n, p, alpha)


def _pvalue_impl(k, n, p, alpha):
    out = np.ones(k.shape, dtype=np.float64)
    kf, nf = k.astype(np.float64), n.astype(np.float64)
    pn = p * nf
    d = _pmf(kf, nf, p)
    for right in (True, False):  # k below the mean: far tail on the right, and vice versa
        sel = np.flatnonzero(kf < pn) if right else np.flatnonzero(kf > pn)
        if not sel.size:
            continue
        ks, ns, ps, ds = kf[sel], nf[sel], p[sel], d[sel]
        j0 = _far_end(ks, ns, ps, right, ds)
        todo = np.arange(sel.size)
        if alpha is not None:
            # both tails decay at least geometrically away from the mode
            if right:
                step_far = (ns - j0) / (j0 + 1) * ps / (1 - ps)  # pmf(j+1)/pmf(j) at j0
                step_own = ks * (1 - ps) / ((ns - ks + 1) * ps)  # pmf(j-1)/pmf(j) at k
            else:
                step_far = j0 * (1 - ps) / ((ns - j0 + 1) * ps)
                step_own = (ns - ks) * ps / ((ks + 1) * (1 - ps))
            far_pmf = _pmf(j0, ns, ps)
            bound = ds / (1 - step_own) + far_pmf / (1 - step_far)
            ok = (step_own < 1) & ((step_far < 1) | (far_pmf == 0)) & np.isfinite(bound)
            sure = ok & (bound * (1 + _MARGIN) + _TINY <= alpha)
            out[sel[sure]] = 0.0
            todo = np.flatnonzero(~sure)
        if not todo.size:
            continue
        ks, ns, ps, j0 = ks[todo], ns[todo], ps[todo], j0[todo]
        if right:
            out[sel[todo]] = _cdf(ks, ns, ps) + _sf(j0 - 1, ns, ps)
        else:
            out[sel[todo]] = _cdf(j0, ns, ps) + _sf(ks - 1, ns, ps)
    np.minimum(out, 1.0, out=out)
    return out


def _bisect_threshold(pred, lo, hi, true_at_lo, iters: int = 24):
    """Vectorised bisection for the boundary of a monotone predicate on [lo, hi].

    Returns the last point known to satisfy ``pred`` (the side given by
    ``true_at_lo``, a bool or one per entry) after ``iters`` halvings.
    2**-24 is plenty: what the certified regions leave out goes to the cell
    refinement, not to exact p-values. Both ends move (the end on the
    predicate's false side to each failed midpoint): a search that kept it
    fixed stalled at its first failed midpoint and left the regions nearly
    empty, sending almost every prediction to the slower cell refinement
    (same decisions, several times the time).
    """
    lo = lo.copy()
    hi = hi.copy()
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        move_lo = pred(mid) == true_at_lo  # the midpoint is on lo's side of the boundary
        lo, hi = np.where(move_lo, mid, lo), np.where(move_lo, hi, mid)
        if np.all(hi - lo <= 1e-15):
            break
    return np.where(true_at_lo, lo, hi)


def _certified_regions(k, n, alpha):
    """Per (k, n): intervals of p whose decision is certain without a p-value.

    With m = k/n, returns arrays (m, acc_lo, acc_hi, rej_lo, rej_hi) such that
    p in [acc_lo, m) or (m, acc_hi] is accepted and p <= rej_lo or
    p >= rej_hi is rejected. They rest on monotonicity in p of the own tail
    (P(X <= k) decreases, P(X >= k) increases) and of pmf(k) on each side of
    m, with the bounds own tail <= pvalue <= own tail + n * pmf(k) * (1+1e-7)
    and a relative margin of 1e-6 against floating-point error.
    """
    kf, nf = k.astype(np.float64), n.astype(np.float64)
    m = kf / nf
    G = m.shape[0]
    # relative margin for rounding, absolute margin for underflow near alpha = 0
    hi_acc = alpha * (1 + _MARGIN) + _TINY
    hi_rej = alpha * (1 - _MARGIN) - _TINY
    one = np.ones_like(m)
    zero = np.zeros_like(m)
    # the four searches run as one bisection (one call of each special function per step), in blocks of G:
    # right of m (own tail cdf(k)) the accept end acc_hi, then the reject end rej_hi; left of m (own tail
    # sf(k - 1)) acc_lo, then rej_lo. Blocks 1 and 3 bound the p-value by own tail + n pmf(k)
    k2, n2 = np.tile(kf, 2), np.tile(nf, 2)

    def certain(x):
        own = np.concatenate((_cdf(k2, n2, x[:2 * G]), _sf(k2 - 1, n2, x[2 * G:])))
        out = own > hi_acc
        xb = np.concatenate((x[G:2 * G], x[3 * G:]))
        bound = np.concatenate((own[G:2 * G], own[3 * G:])) + n2 * _pmf(k2, n2, xb) * _RERR <= hi_rej
        out[G:2 * G], out[3 * G:] = bound[:G], bound[G:]
        return out

    has_rej = certain(np.concatenate((one, one, zero, zero)))  # blocks 1 and 3: is the far end rejected at all?
    ends = _bisect_threshold(certain, np.concatenate((m, m, zero, zero)), np.concatenate((one, one, m, m)),
                             np.repeat([True, False, False, True], G))
    acc_hi, acc_lo = ends[:G], ends[2 * G:3 * G]
    rej_hi = np.where(has_rej[G:2 * G], ends[G:2 * G], np.inf)
    rej_lo = np.where(has_rej[3 * G:], ends[3 * G:], -np.inf)
    return m, acc_lo, acc_hi, rej_lo, rej_hi


def _band_bounds(k, n, q1, q2, right):
    """Bounds (low, high) of scipy's p-value over all p in a cell [q1, q2] (float arrays).

    All p of a cell lie on one side of k/n (``right``: k < p*n). On that side
    the own tail is monotone in p (P(X <= k) decreases, P(X >= k) increases)
    and so is the far tail for a fixed boundary j. The boundary j0(p) itself
    is non-decreasing in p on both sides: for j on the far side,
    pmf(j)/pmf(k) is a power of p/(1-p) (right) or (1-p)/p (left), so the
    set {j : pmf(j) <= (1+1e-7) pmf(k)} shrinks (right) or grows (left) as p
    grows, and scipy's search limits ceil(p*n), floor(p*n) move the same way.
    Floating-point ties of that comparison can move scipy's j0 by one; the
    bounds allow two. Hence, with F the own and T the far tail:
    ``F(q2) + T_q1(j0(q2)+2) <= pvalue(p) <= F(q1) + T_q2(j0(q1)-2)`` (right;
    mirrored on the left).
    """
    # one bisection for the far ends at both ends of every cell, one cdf and one sf call for all the tails
    m = k.shape[0]
    j = _far_end(np.tile(k, 2), np.tile(n, 2), np.concatenate((q1, q2)), np.tile(right, 2))
    j1, j2 = j[:m], j[m:]
    # right of k/n: own tail P(X <= k) decreasing, far tail P(X >= j) increasing in p (sf(j - 1) = P(X >= j));
    # left: own tail P(X >= k) increasing, far tail P(X <= j) decreasing in p
    cdf_x = np.where(right, k, j1 - 2)  # low: right cdf(k) at q2, left cdf(j1 - 2) at q2
    cdf_x2 = np.where(right, k, np.minimum(j2 + 2, k - 1))  # high: right cdf(k) at q1, left at q1
    sf_x = np.where(right, j2 + 1, k - 1)  # low: right sf(j2 + 1) = P(X >= j2 + 2) at q1, left sf(k - 1) at q1
    sf_x2 = np.where(right, np.maximum(j1 - 2, k + 1) - 1, k - 1)  # high: right at q2, left sf(k - 1) at q2
    cdf = _cdf(np.concatenate((cdf_x, cdf_x2)), np.tile(n, 2), np.concatenate((q2, q1)))
    sf = _sf(np.concatenate((sf_x, sf_x2)), np.tile(n, 2), np.concatenate((q1, q2)))
    low = cdf[:m] + sf[:m]
    high = cdf[m:] + sf[m:]
    return np.minimum(low, 1.0), np.minimum(high, 1.0)


_CELLS = 16  # each undecided cell of the band is split into this many
_EXACT = 8  # cells with at most this many predictions get exact p-values
_LEVELS = 14  # refinement depth; cells stop shrinking at ~1e-15 anyway


def _decide_band(k, n, p, g, alpha, regions):
    """Decisions for predictions between the certified regions, by cell refinement.

    Each (group, side) band of p between the certified accept and reject
    regions is cut into ``_CELLS`` equal cells; a cell whose p-value bounds
    (:func:`_band_bounds`) lie on one side of alpha decides all its
    predictions at once. Undecided cells are split again; small or
    float-narrow ones get exact p-values (identical (group, p) pairs share
    one). Cost: a few passes over the predictions per level plus O(#cells)
    special functions; the exact remainder is the few predictions whose
    p-value is within the bounds' slack of alpha.
    """
    kf, nf = k.astype(np.float64), n.astype(np.float64)
    _, acc_lo, acc_hi, rej_lo, rej_hi = regions
    pn = p * nf[g]
    right, left = kf[g] < pn, kf[g] > pn
    out = np.zeros(p.shape, dtype=bool)
    out[~(right | left)] = alpha >= 1.0  # k == p*n: scipy's p-value is 1
    # segment 2*group + side (side 1: right of k/n): the band between the regions
    a = np.column_stack((np.maximum(rej_lo, 0.0), acc_hi)).ravel()
    b = np.column_stack((acc_lo, np.minimum(rej_hi, 1.0))).ravel()
    ids = np.flatnonzero(right | left)
    seg = 2 * g[ids] + right[ids]
    q = p[ids]
    outside = (q < a[seg]) | (q > b[seg]) | (b[seg] <= a[seg])  # float corner cases: exact
    exact = [ids[outside]]
    ids, seg, q = ids[~outside], seg[~outside], q[~outside]
    sk, sn = np.repeat(kf, 2), np.repeat(nf, 2)
    sright = np.tile([False, True], k.shape[0])
    for _ in range(_LEVELS):
        if not ids.size:
            break
        width = b - a
        scale = np.where(width > 0, _CELLS / np.where(width > 0, width, 1.0), 0.0)
        c = np.floor((q - a[seg]) * scale[seg])
        np.clip(c, 0, _CELLS - 1, out=c)
        cell = seg * _CELLS + c.astype(np.int64)
        cnt = np.bincount(cell, minlength=a.shape[0] * _CELLS)
        act = np.flatnonzero(cnt)
        s_act, j_act = act // _CELLS, act % _CELLS
        # cell edges widened by more than the round-off of the index computation,
        # so each cell surely contains its predictions (bounds hold on any interval)
        pad = width[s_act] * 1e-12 + 1e-15
        q1 = np.maximum(a[s_act] + width[s_act] * (j_act / _CELLS) - pad, a[s_act])
        q2 = np.minimum(a[s_act] + width[s_act] * ((j_act + 1) / _CELLS) + pad, b[s_act])
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            low, high = _band_bounds(sk[s_act], sn[s_act], q1, q2, sright[s_act])
        code = np.zeros(cnt.shape[0], dtype=np.int8)  # 0 refine, 1 accept, 2 reject, 3 exact
        code[act[low * (1 - _MARGIN) - _TINY > alpha]] = 1
        code[act[high * (1 + _MARGIN) + _TINY <= alpha]] = 2
        small = (cnt[act] <= _EXACT) | (q2 - q1 <= 1e-13)
        code[act[(code[act] == 0) & small]] = 3
        pc = code[cell]
        out[ids[pc == 2]] = True
        exact.append(ids[pc == 3])
        refine = act[code[act] == 0]
        keep = pc == 0
        new_id = np.zeros(cnt.shape[0], dtype=np.int64)
        new_id[refine] = np.arange(refine.shape[0])
        sel = np.searchsorted(act, refine)
        a, b = q1[sel], q2[sel]
        s_ref = s_act[sel]
        sk, sn, sright = sk[s_ref], sn[s_ref], sright[s_ref]
        ids, q, seg = ids[keep], q[keep], new_id[cell[keep]]
    exact = np.concatenate(exact + [ids])
    if exact.size:
        # identical (group, p) pairs share one exact p-value
        o = exact[np.lexsort((p[exact], g[exact]))]
        first = np.r_[True, (g[o][1:] != g[o][:-1]) | (p[o][1:] != p[o][:-1])]
        rep = o[first]
        dec = _pvalue(k[g[rep]], n[g[rep]], p[rep], alpha) <= alpha
        out[o] = dec[np.cumsum(first) - 1]
    return out


def binom_reject(k, n, p, alpha=0.05, *, group=None):
    """TCE decisions: is ``binomtest(k, n, p).pvalue <= alpha``? Vectorised.

    Parameters
    ----------
    k, n : array-like of int
        Positives and size. With ``group`` given, shape (G,): one pair per
        group (bin); otherwise broadcast with ``p``.
    p : array-like of float, shape (N,)
        Predictions to test (null probabilities).
    alpha : float, default 0.05
        Significance level; reject iff p-value <= alpha.
    group : array-like of int, shape (N,), optional
        Group (bin) id of each prediction, indexing ``k`` and ``n``.

    Returns
    -------
    ndarray of bool, shape (N,)
        Identical to ``scipy.stats.binomtest(k, n, p).pvalue <= alpha``
        element by element.

    Notes
    -----
    Three stages, all vectorised. (1) For each (k, n) pair, certified
    intervals of p that are surely accepted or surely rejected are found
    once by bisection (O(G) work); predictions inside them are classified by
    comparison, O(N). (2) The band between them is refined in cells whose
    p-value bounds, valid for every p in the cell, decide whole cells at
    once (see ``_band_bounds`` for the monotonicity argument). (3) Only the
    predictions whose p-value is within the bounds' slack of alpha get the
    exact scipy procedure.

    References
    ----------
    Matsubara et al. (2023), "TCE", UAI, Definition 2, eq. (7), Algorithm 1.

    Examples
    --------
    >>> binom_reject([5], [10], [0.1, 0.5, 0.9], 0.05, group=[0, 0, 0]).tolist()
    [True, False, True]
    """
    alpha = _check_alpha(alpha)
    p = np.asarray(p, dtype=np.float64)
    if group is None:
        k, n = _check_kn(k, n)
        k, n, p = np.broadcast_arrays(k, n, p)
        shape = p.shape
        pairs, group = np.unique(np.stack([k.ravel(), n.ravel()], axis=1), axis=0, return_inverse=True)
        group = group.ravel()
        return binom_reject(pairs[:, 0], pairs[:, 1], p.ravel(), alpha, group=group).reshape(shape)
    k, n = _check_kn(np.atleast_1d(k), np.atleast_1d(n))
    group = np.asarray(group, dtype=np.int64)
    if group.shape != p.shape:
        raise InputError("group must have one entry per prediction.")
    if p.size and not np.all((p >= 0) & (p <= 1)):  # NaN fails both comparisons
        raise InputError("p (null probability) must lie in [0, 1].")
    if alpha >= 1.0:  # every p-value is <= 1
        return np.ones(p.shape, dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        regions = _certified_regions(k, n, alpha)
    m, acc_lo, acc_hi, rej_lo, rej_hi = regions
    mg = m[group]
    accept = ((p > mg) & (p <= acc_hi[group])) | ((p < mg) & (p >= acc_lo[group]))
    reject = (p <= rej_lo[group]) | (p >= rej_hi[group])
    out = reject & ~accept
    todo = np.flatnonzero(~(accept | reject))
    if todo.size:
        out[todo] = _decide_band(k, n, p[todo], group[todo], alpha, regions)
    return out


def ttest_pvalue(k, n, p):
    """Two-sided one-sample t-test p-values of the TCE t-test variant.

    For a bin with k positives of n, mu = k/n and sd = sqrt(mu(1-mu));
    t = sqrt(n) |mu - p| / sd with n-1 degrees of freedom.

    Parameters
    ----------
    k, n : array-like of int
        Positives and bin size (broadcast with ``p``).
    p : array-like of float
        Predictions.

    Returns
    -------
    ndarray of float64
        p-values. When sd = 0 (mu is 0 or 1) or n = 1 the test is
        degenerate: p-value 1 if p == mu, else 0.

    Notes
    -----
    The TCE reference code uses the variance mu(1-mu) where the standard
    deviation belongs; that is a bug (TCE paper digest, errata 14), and its
    Table 11 numbers cannot be reproduced with the correct formula used here.
    The reference also rejects every prediction of a bin with sd = 0; we
    reject only predictions different from mu.

    References
    ----------
    Matsubara et al. (2023), "TCE", UAI, Appendix C.1, Table 11.

    Examples
    --------
    >>> round(float(ttest_pvalue(50, 100, 0.5)), 3)
    1.0
    """
    k, n = _check_kn(k, n)
    p = np.asarray(p, dtype=np.float64)
    k, n, p = np.broadcast_arrays(k, n, p)
    mu = k / n
    sd = np.sqrt(mu * (1 - mu))
    degenerate = (sd == 0) | (n < 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.sqrt(n) * np.abs(mu - p) / sd
        pv = 2 * student_t.sf(t, np.maximum(n - 1, 1))
    return np.where(degenerate, np.where(p == mu, 1.0, 0.0), pv)


INTERVAL_METHODS = {
    "wilson": "wilson",
    "beta": "beta",
    "clopper-pearson": "beta",
    "clopper_pearson": "beta",
    "jeffreys": "jeffreys",
}


def proportion_interval(count, nobs, alpha=0.05, method="wilson"):
    """Confidence interval for a binomial proportion (observed rate of a bin).

    Parameters
    ----------
    count : array-like of float, shape (B,)
        Positives (may be non-integer for weighted, effective counts).
    nobs : array-like of float, shape (B,)
        Trials (> 0).
    alpha : float, default 0.05
        1 - confidence level.
    method : {"wilson", "beta" / "clopper-pearson", "jeffreys"}

    Returns
    -------
    (low, high) : tuple of ndarray of float64, shape (B,)

    References
    ----------
    Wilson (1927); Clopper & Pearson (1934); Brown, Cai & DasGupta (2001),
    "Interval estimation for a binomial proportion", Statistical Science.
    Computed with ``statsmodels.stats.proportion.proportion_confint``.

    Examples
    --------
    >>> lo, hi = proportion_interval([5], [10])
    >>> round(float(lo[0]), 4), round(float(hi[0]), 4)
    (0.2366, 0.7634)
    """
    from statsmodels.stats.proportion import proportion_confint

    key = str(method).lower()
    if key not in INTERVAL_METHODS:
        raise InputError(f"unknown interval {method!r}; choose one of wilson, beta (clopper-pearson), jeffreys.")
    alpha = _check_alpha(alpha)
    count = np.asarray(count, dtype=np.float64)
    nobs = np.asarray(nobs, dtype=np.float64)
    lo, hi = proportion_confint(count, nobs, alpha=alpha, method=INTERVAL_METHODS[key])
    return np.clip(np.asarray(lo, dtype=np.float64), 0, 1), np.clip(np.asarray(hi, dtype=np.float64), 0, 1)


def acceptance_band(n, p, alpha=0.05):
    """Range of observed rates consistent with a calibrated bin.

    If a bin of n samples were calibrated at probability p, its positive
    count would be Binomial(n, p); the band is its alpha/2 and 1-alpha/2
    quantiles divided by n (as drawn by ml_insights' reliability diagrams).

    Parameters
    ----------
    n : array-like of int, shape (B,)
        Bin sizes.
    p : array-like of float, shape (B,)
        Mean prediction of each bin.
    alpha : float, default 0.05

    Returns
    -------
    (low, high) : tuple of ndarray of float64, shape (B,)

    References
    ----------
    ml_insights (Lucena), ``plot_reliability_diagram(show_null_interval=True)``;
    Brocker & Smith (2007), "Increasing the reliability of reliability diagrams".

    Examples
    --------
    >>> lo, hi = acceptance_band([100], [0.5])
    >>> float(lo[0]), float(hi[0])
    (0.4, 0.6)
    """
    alpha = _check_alpha(alpha)
    n = np.asarray(n, dtype=np.float64)
    p = np.asarray(p, dtype=np.float64)
    lo = binom.ppf(alpha / 2, n, p) / n
    hi = binom.ppf(1 - alpha / 2, n, p) / n
    return np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)


def joint_acceptance_band(n, p, alpha=0.05):
    """Range of observed rates that every bin of a calibrated model stays in together, with probability >= 1 - alpha.

    :func:`acceptance_band` holds for one bin on its own: with 15 bins a
    calibrated model has some bin outside its band far more often than alpha
    (measured: 29% of calibrated logs of 2,000 rows with 10 bins, 43% of
    20,000 rows). Given the predictions, the bins' counts are independent, so
    each bin's band at level ``1 - (1 - alpha)^(1/B)`` (Sidak) keeps all B
    bins inside with probability at least ``1 - alpha``: exactly for
    binomial counts, and more for the Poisson-binomial count of a bin with
    varied predictions, whose tails are lighter (Hoeffding 1956).

    Parameters
    ----------
    n, p, alpha
        As :func:`acceptance_band`, for the B non-empty bins shown.

    Returns
    -------
    (low, high) : tuple of ndarray of float64, shape (B,)

    References
    ----------
    Z. Sidak, "Rectangular confidence regions for the means of multivariate
    normal distributions", JASA 62, 1967; W. Hoeffding, "On the distribution
    of the number of successes in independent trials", Ann. Math. Stat. 27,
    1956.

    Examples
    --------
    >>> lo, hi = joint_acceptance_band([100] * 10, [0.5] * 10)
    >>> float(lo[0]), float(hi[0])  # one bin alone: 0.40-0.60
    (0.36, 0.64)
    """
    alpha = _check_alpha(alpha)
    k = max(int(np.size(n)), 1)
    return acceptance_band(n, p, -np.expm1(np.log1p(-alpha) / k))


def holm_adjusted(p_values) -> np.ndarray:
    """Holm's step-down adjusted p-values of a family of tests (family-wise error control).

    Sorted ascending, the i-th smallest of m p-values is multiplied by
    ``m - i + 1`` (i = 1, ..., m), made non-decreasing, and capped at 1;
    rejecting the tests whose adjusted p-value is at most ``alpha`` keeps the
    chance of any false rejection at most ``alpha`` whatever the dependence
    between the tests. The metric panel's tests all read the same labels and
    are strongly dependent, so Holm is conservative there; it needs no joint
    redraws, holds for tests of their own (Wald, normal, chi-square) beside
    Monte Carlo ones, and never adjusts a lone test.

    Parameters
    ----------
    p_values : array-like of shape (m,)
        Finite p-values in [0, 1].

    Returns
    -------
    ndarray of shape (m,)
        Adjusted p-values, in the input's order.

    References
    ----------
    S. Holm, "A simple sequentially rejective multiple test procedure",
    Scandinavian Journal of Statistics 6(2), 1979, 65-70.

    Examples
    --------
    >>> holm_adjusted([0.01, 0.04, 0.03]).round(3).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1 or not np.isfinite(p).all() or ((p < 0) | (p > 1)).any():
        raise InputError("holm_adjusted needs a one-dimensional array of p-values in [0, 1].")
    order = np.argsort(p, kind="stable")
    m = p.shape[0]
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(np.maximum.accumulate(p[order] * (m - np.arange(m))), 1.0)
    return adjusted


def holm_adjusted_finite(p_values) -> np.ndarray:
    """:func:`holm_adjusted` over the finite entries of ``p_values`` (any shape); NaN entries are no tests and stay
    NaN.

    >>> holm_adjusted_finite([0.01, np.nan, 0.03]).round(3).tolist()
    [0.02, nan, 0.03]
    """
    p = np.asarray(p_values, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    tested = np.isfinite(p)
    if tested.any():
        out[tested] = holm_adjusted(p[tested])
    return out


@dataclass(frozen=True)
class MaxT:
    """Result of :func:`bernoulli_max_t` (arrays of shape (k,), one entry per statistic)."""

    sd: np.ndarray          # each statistic's standard deviation under the null
    z: np.ndarray           # statistic / sd; 0 where both are 0, +-inf where only the statistic is not
    p_adjusted: np.ndarray  # single-step max-|z| adjusted p-value of each statistic
    p_value: float          # min(p_adjusted): the test that every statistic is 0
    n_draws: int
    method: str             # "gaussian" or "redraws"
    skewness: float         # the largest |skewness| of a statistic's null distribution


#: Gaussian null draws are used while no statistic's null distribution is more skewed than this. Measured
#: (benchmarks/README.md, "Ranges along a variable"): calibrated logs of 300 rows, Beta(2, 5) scores, skewness up to
#: 0.30, were flagged at 5.0% with Gaussian curves; rare-event logs (p = 10^U(-4, -1.5), skewness 3-6) at 9-12%.
GAUSSIAN_MAX_SKEWNESS = 0.3
# A statistic of residuals in [-1, 1] whose null sd is 0 is "0" up to this round-off (rows with variance 0).
_ZERO_TOL = 1e-12
# Rows x redraws per chunk of outcome redraws (32 MB of uniforms), and the most rows x redraws a test draws.
_REDRAW_CHUNK = 1 << 22
_REDRAW_BUDGET = 1 << 27
# Up to this many rows x redraws the outcomes are always redrawn (exact, and affordable: ~0.3 s): small data is
# where a sum of few Bernoullis is discrete (one level of 30 rows: Gaussian p 0.044 against the exact 0.070).
_REDRAW_ALWAYS = 1 << 23
# The fewest redraws when the budget caps them (1 / 201 = 0.005, below alpha = 0.05 with room).
_MIN_REDRAWS = 200
# Statistics equal up to round-off (sums in another order) count as reaching each other.
_TIE_RTOL = 1e-9


def _reach(null: np.ndarray, observed) -> np.ndarray:
    """(1 + #{null >= observed}) / (len(null) + 1) with ties up to round-off counted; ``null`` sorted."""
    observed = np.asarray(observed, dtype=np.float64)
    k = null.size - np.searchsorted(null, observed * (1 - _TIE_RTOL) - 1e-12, side="left")
    return (1.0 + k) / (null.size + 1.0)


def _use_redraws(method: str, skewness: float, n_rows: int, n_draws: int) -> str:
    if method != "auto":
        return method
    if skewness > GAUSSIAN_MAX_SKEWNESS or n_rows * n_draws <= _REDRAW_ALWAYS:
        return "redraws"
    return "gaussian"


def _redraw_count(n_draws: int, n_rows: int) -> int:
    return int(min(n_draws, max(_MIN_REDRAWS, _REDRAW_BUDGET // max(n_rows, 1))))


def _redrawn_residuals(rng, q, weight, n_draws):
    """Chunks of (draws, rows) residuals w (o* - q) of outcomes o* ~ Bernoulli(q) redrawn, n_draws rows in all."""
    chunk = max(1, _REDRAW_CHUNK // max(q.size, 1))
    for start in range(0, n_draws, chunk):
        r = (rng.random((min(chunk, n_draws - start), q.size)) < q) - q
        yield r if weight is None else r * weight


def _group_cumulants(q, weight, starts):
    """Per group, under the null: the variance and third cumulant of ``sum w (o - q)`` (``sum w^2 q(1-q)``,
    ``sum w^3 q(1-q)(1-2q)``) and the variance of the sandwich sum ``sum w^2 (o - q)^2`` (``(o - q)^2`` is
    ``(1-q)^2`` or ``q^2``: variance ``q(1-q)(1-2q)^2``, times ``w^4``)."""
    v = q * (1.0 - q)
    skew = v * (1.0 - 2.0 * q)
    if weight is None:
        return (np.add.reduceat(v, starts), np.add.reduceat(skew, starts),
                np.add.reduceat(skew * (1.0 - 2.0 * q), starts))
    w2 = weight * weight
    return (np.add.reduceat(w2 * v, starts), np.add.reduceat(w2 * weight * skew, starts),
            np.add.reduceat(w2 * w2 * skew * (1.0 - 2.0 * q), starts))


def _robust_sd(model_sd, sandwich_var, sandwich_se):
    """The calibrated-model sd, or the sandwich sd where its variance exceeds the model's by > 3 null s.e."""
    if sandwich_var is None:
        return model_sd
    over = sandwich_var > model_sd ** 2 + 3.0 * sandwich_se
    return np.where(over, np.sqrt(np.clip(sandwich_var, 0.0, None)), model_sd)


def bernoulli_max_t(coef, starts, probability, weight, statistic, *, residual_square=None, n_draws: int = 4000,
                    method: str = "auto", random_state=0) -> MaxT:
    """Simultaneous test of k linear statistics of Bernoulli residuals, single-step max-T (Westfall & Young).

    The rows are in groups (consecutive runs starting at ``starts``); group j's sum is
    ``S_j = sum_i w_i (o_i - q_i)`` and the statistics are ``T = coef @ S``. Under the null the outcomes ``o_i``
    are independent Bernoulli(q_i), so ``T`` has mean 0, covariance ``coef diag(sum w^2 q(1-q)) coef^T`` and exact
    third cumulants. Each statistic is standardised by its null sd and the largest |z| is referred to its null
    distribution: the outcomes redrawn from q (exact) on small data (rows x draws up to 2^23) or where some
    statistic's null skewness exceeds :data:`GAUSSIAN_MAX_SKEWNESS` (capped at 2^27 rows x redraws, at least 200
    redraws), else Gaussian draws with that covariance. A statistic's adjusted p-value is the share of null maxima
    reaching its |z| (ties up to round-off included), ``(1 + #) / (n_draws + 1)``; on null data any
    ``p_adjusted <= a`` happens with probability at most ``a``.

    Parameters
    ----------
    coef : array of shape (k, m)
    starts : int array of shape (m,)
        First row of each group (rows sorted by group).
    probability : array of shape (n,)
        q of each row, in group order.
    weight : array of shape (n,) or None
    statistic : array of shape (k,)
        The observed ``coef @ S``.
    residual_square : array of shape (m,), optional
        Per group ``sum w^2 (o - q)^2``: where this sandwich variance of a statistic exceeds the calibrated
        model's by more than 3 null standard errors, its z divides by the sandwich sd (the same rule for redrawn
        outcomes; see the code's comment).
    n_draws : int, default 4000
    method : {"auto", "gaussian", "redraws"}
    random_state : int or numpy Generator, default 0

    References
    ----------
    Westfall, P. H. & Young, S. S. (1993). Resampling-Based Multiple Testing, Wiley, Sec. 2.6 (single-step max-T).

    Examples
    --------
    >>> q = np.full(400, 0.5); starts = np.array([0, 200])
    >>> o = np.r_[np.tile([0.0, 1.0], 100), np.ones(120), np.zeros(80)]    # group 2: 120 of 200 against 100
    >>> S = np.add.reduceat(o - q, starts)
    >>> t = bernoulli_max_t(np.eye(2), starts, q, None, S)
    >>> t.z.round(2).tolist(), bool(t.p_adjusted[1] < 0.05), t.method
    ([0.0, 2.83], True, 'redraws')
    """
    if method not in ("auto", "gaussian", "redraws"):
        raise InputError(f"method must be 'auto', 'gaussian' or 'redraws', got {method!r}.")
    if not (isinstance(n_draws, (int, np.integer)) and n_draws >= 1):
        raise InputError(f"n_draws must be a positive integer, got {n_draws!r}.")
    coef = np.asarray(coef, dtype=np.float64)
    q = np.asarray(probability, dtype=np.float64)
    statistic = np.asarray(statistic, dtype=np.float64)
    var_group, k3_group, var4_group = _group_cumulants(q, weight, starts)
    coef2 = coef * coef
    sd = np.sqrt(np.clip(coef2 @ var_group, 0.0, None))  # the covariance's diagonal; the whole of it is for Gaussians
    live = sd > 0
    safe_sd = np.where(live, sd, 1.0)
    # The readings claim a direction (over- or under-confident at these x), i.e. E[o - q] != 0 there, not merely
    # "not calibrated": a model that is off in a way that cancels along x (outcomes of rate 0.5 against
    # predictions of 0.1 and 0.9) has residuals of mean 0 but a larger variance than q (1 - q), and its z would be
    # inflated. So where the residuals' own (sandwich) variance exceeds the calibrated model's by more than 3 of
    # its null standard errors, z divides by the sandwich sd instead (_robust_sd). Redrawn outcomes get the same
    # statistic (exact under the null); Gaussian null draws keep the calibrated-model sd, so there the rule costs
    # at most the rare switch under the null (taking the larger of the two sds at every point instead flagged
    # 1.7% of calibrated logs where 5% is allowed and cut power from 38% to 26%).
    sandwich_se = np.sqrt(np.clip((coef2 * coef2) @ var4_group, 0.0, None))
    used_sd = _robust_sd(safe_sd, coef2 @ residual_square if residual_square is not None else None, sandwich_se)
    used_sd = np.where(live, used_sd, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(live, statistic / used_sd,
                     np.where(np.abs(statistic) > _ZERO_TOL, np.copysign(np.inf, statistic), 0.0))
    skewness = float(np.max(np.abs(np.where(live, (coef ** 3 @ k3_group) / safe_sd ** 3, 0.0)), initial=0.0))
    method = _use_redraws(method, skewness, q.size, n_draws)
    rng = np.random.default_rng(random_state)
    if not live.any():
        maxima = np.zeros(n_draws)
    elif method == "gaussian":
        scaled = coef[live] * np.sqrt(var_group)[None, :]
        corr = (scaled @ scaled.T) / np.outer(sd[live], sd[live])  # numpy's symmetric product (one operand .T)
        vals, vecs = np.linalg.eigh(corr)
        root = vecs * np.sqrt(np.clip(vals, 0.0, None))[None, :]
        chunk = max(1, _REDRAW_CHUNK // max(root.shape[1], 1))
        maxima = np.concatenate([np.abs(rng.standard_normal((min(chunk, n_draws - s), root.shape[1])) @ root.T)
                                 .max(axis=1) for s in range(0, n_draws, chunk)])
    else:
        # the redrawn statistic is computed as the observed one (its sandwich sd included): exact under the null
        n_draws = _redraw_count(n_draws, q.size)
        coef_live, sd_live, se_live = coef[live], sd[live], sandwich_se[live]
        square_live = (coef_live * coef_live).T
        parts = []
        for r in _redrawn_residuals(rng, q, weight, n_draws):
            curves = np.add.reduceat(r, starts, axis=1) @ coef_live.T
            if residual_square is not None:
                curves /= _robust_sd(sd_live, np.add.reduceat(r * r, starts, axis=1) @ square_live, se_live)
            else:
                curves /= sd_live
            parts.append(np.abs(curves).max(axis=1))
        maxima = np.concatenate(parts)
    p_adjusted = _reach(np.sort(maxima), np.abs(z))
    return MaxT(sd=used_sd * live, z=z, p_adjusted=p_adjusted,
                p_value=float(p_adjusted.min()) if p_adjusted.size else float("nan"), n_draws=int(n_draws),
                method=method, skewness=skewness)


def bernoulli_abs_sum_p(starts, probability, weight, observed: float, *, n_draws: int = 2000,
                        random_state=0, given=None) -> tuple[float, str, int]:
    """P-value of ``sum_j |S_j| >= observed`` for group sums ``S_j = sum_i w_i (o_i - q_i)`` of Bernoulli residuals.

    The null hypothesis is that the outcomes are independent Bernoulli(q) (a calibrated model); the statistic is
    Kelly & Smyth's VECE times the total weight when the groups are a variable's bins. With ``given`` (shape (n,)
    or (n, k): rows g_i), q comes from a logistic fit to these outcomes whose score equations are
    ``C = sum_i g_i w_i (o_i - q_i) = 0`` (VECE's test beyond the score's miscalibration,
    :func:`calibviz.variables.variable_ranking`; without this the test held 2-3% at a nominal 5%): each draw is
    what the groups' sums become when the fit is redone on the drawn outcomes, to first order
    ``S_j - A_j^T M^-1 C`` with ``A_j = sum_{i in j} w_i v_i g_i``, ``M = sum_i w_i v_i g_i g_i^T`` and
    v = q (1 - q) (the fitted values move by v g^T M^-1 C; without weights this is the Gaussian law of S given
    C = 0), C drawn with the S_j. The groups' sums are
    independent: from outcomes redrawn from q (exact) on small data or where a group's null skewness exceeds
    :data:`GAUSSIAN_MAX_SKEWNESS` (the rule and caps of :func:`bernoulli_max_t`), else Gaussian with their exact
    variances ``sum w^2 q (1 - q)``. Returns ``((1 + #{draws >= observed}) / (n_draws + 1), method, draws)``
    (draws: those made, fewer than ``n_draws`` where redraws are capped).

    Examples
    --------
    >>> q = np.full(1000, 0.3); starts = np.arange(0, 1000, 100)
    >>> p, how, draws = bernoulli_abs_sum_p(starts, q, None, 5.0)      # far below what chance gives
    >>> bool(p > 0.9), how, draws
    (True, 'redraws', 2000)
    >>> bool(bernoulli_abs_sum_p(starts, q, None, 150.0)[0] < 0.001)
    True
    """
    if not (isinstance(n_draws, (int, np.integer)) and n_draws >= 1):
        raise InputError(f"n_draws must be a positive integer, got {n_draws!r}.")
    q = np.asarray(probability, dtype=np.float64)
    var_group, k3_group, _ = _group_cumulants(q, weight, starts)
    live = var_group > 0
    skew = np.abs(k3_group[live]) / var_group[live] ** 1.5
    fit = None
    if given is not None:
        g = np.asarray(given, dtype=np.float64).reshape(q.size, -1)
        fit = _refit_sums(g, q * (1.0 - q), weight, starts)
    rng = np.random.default_rng(random_state)
    if not live.any():
        sums = np.zeros(n_draws)
        method = "gaussian"
    elif _use_redraws("auto", float(skew.max()), q.size, n_draws) == "gaussian":
        method = "gaussian"
        sums = _abs_sum_draws(rng, var_group[live], None, n_draws, None if fit is None else _live(fit, live))
    else:
        method = "redraws"
        n_draws = _redraw_count(n_draws, q.size)
        parts = []
        for r in _redrawn_residuals(rng, q, weight, n_draws):
            z = np.add.reduceat(r, starts, axis=1)
            if fit is not None:
                z -= (r @ g) @ np.linalg.pinv(fit[3]) @ fit[2].T
            parts.append(np.abs(z).sum(axis=1))
        sums = np.concatenate(parts)
    return float(_reach(np.sort(sums), observed)), method, int(n_draws)


def _abs_sum_draws(rng, var_group, k3_group, n_draws: int, given=None) -> np.ndarray:
    """``n_draws`` draws of ``sum_j |S_j|`` for independent group sums S_j of mean 0, variances ``var_group`` (all
    > 0) and third cumulants ``k3_group`` (None: Gaussian groups); with ``given = (cov, var_c, a, m)`` (each
    group's covariances with k sums C of the same residuals, shape (groups, k), and C's covariance, (k, k); the
    refit's ``A_j`` and ``M`` of :func:`bernoulli_abs_sum_p`), of ``S_j - A_j^T M^-1 C``, C drawn with the S_j
    (its part beyond them Gaussian). A group with a third cumulant is a shifted gamma with its three cumulants
    (Pearson type III: shape 4 / skewness^2, mirrored where the skewness is negative); a symmetric one is
    Gaussian."""
    sd = np.sqrt(var_group)
    gamma = None
    if k3_group is not None:
        skew = k3_group / var_group / sd  # not var ** 1.5: it underflows first
        gamma = np.flatnonzero(np.abs(skew) > 1e-9)
        shape = 4.0 / skew[gamma] ** 2
        scale, sign = sd[gamma] / np.sqrt(shape), np.sign(skew[gamma])
    if given is not None:
        cov, var_c, a, m = (np.asarray(x, dtype=np.float64) for x in given)
        cov = cov.reshape(var_group.size, -1)
        k = cov.shape[1]
        beta = cov / var_group[:, None]  # C = sum_j beta_j S_j + a rest independent of them
        rest = _psd_root(var_c.reshape(k, k) - cov.T @ beta)
        project = np.linalg.pinv(m.reshape(k, k)) @ a.reshape(var_group.size, k).T
    chunk = max(1, _REDRAW_CHUNK // sd.size)
    out = []
    for start in range(0, n_draws, chunk):
        z = rng.standard_normal((min(chunk, n_draws - start), sd.size)) * sd
        if gamma is not None and gamma.size:
            z[:, gamma] = sign * (rng.standard_gamma(shape, size=(z.shape[0], gamma.size)) - shape) * scale
        if given is not None:
            c = z @ beta + rng.standard_normal((z.shape[0], rest.shape[0])) @ rest.T
            z -= c @ project
        out.append(np.abs(z).sum(axis=1))
    return np.concatenate(out)


def _refit_sums(g, v, weight, starts) -> tuple:
    """Per group and overall, the sums of :func:`bernoulli_abs_sum_p`'s refit: (cov, var_c, A, M) = (sum w^2 v g,
    sum w^2 v g g^T, sum w v g, sum w v g g^T)."""
    w1 = v if weight is None else weight * v
    w2 = v if weight is None else weight * w1
    return (np.add.reduceat(g * w2[:, None], starts), (g * w2[:, None]).T @ g,
            np.add.reduceat(g * w1[:, None], starts), (g * w1[:, None]).T @ g)


def _live(fit: tuple, live: np.ndarray) -> tuple:
    """:func:`_refit_sums` of the groups with variance."""
    return fit[0][live], fit[1], fit[2][live], fit[3]


def _psd_root(matrix: np.ndarray) -> np.ndarray:
    """A square root R (R R^T = matrix) of a symmetric positive semi-definite matrix, negative round-off clipped."""
    values, vectors = np.linalg.eigh((matrix + matrix.T) / 2.0)
    return vectors * np.sqrt(np.clip(values, 0.0, None))


def cumulant_abs_sum_p(var_group, k3_group, observed: float, *, n_draws: int = 2000,
                       random_state=0, refit=None) -> tuple[float, str, int]:
    """:func:`bernoulli_abs_sum_p` from each group's null variance and third cumulant, without the rows.

    For sums ``S_j = sum_i w_i (o_i - q_i)`` of outcomes ``o_i ~ Bernoulli(q_i)`` the groups' cumulants are
    ``sum w^2 q (1 - q)`` and ``sum w^3 q (1 - q) (1 - 2q)`` (sums a scan aggregates). Where no group's skewness
    exceeds :data:`GAUSSIAN_MAX_SKEWNESS` the groups are Gaussian, the law and the random numbers of
    :func:`bernoulli_abs_sum_p`'s Gaussian path (the same seed gives the same p-value); otherwise every group is a
    shifted gamma with its three cumulants (Pearson type III), the rows' redraws being out of reach. ``refit``:
    ``(cov, var_c, A, M)``, per group (groups, k) and overall (k, k) ``sum w^2 v g``, ``sum w^2 v g g^T``, ``sum
    w v g`` and ``sum w v g g^T`` (v = q (1 - q)), the draws of a fit redone on them as with
    :func:`bernoulli_abs_sum_p`'s ``given``. Returns ``(p-value, method, draws)`` as :func:`bernoulli_abs_sum_p` does.

    Examples
    --------
    >>> var, k3 = np.full(10, 100 * 0.21), np.full(10, 100 * 0.21 * 0.4)     # 10 groups of 100 rows at q = 0.3
    >>> p, how, draws = cumulant_abs_sum_p(var, k3, 150.0)
    >>> bool(p < 0.001), how, draws
    (True, 'gaussian', 2000)
    >>> cumulant_abs_sum_p(np.full(10, 0.99), np.full(10, 0.97), 5.0)[1]     # rare events: skewed groups
    'gamma (3 cumulants)'
    """
    if not (isinstance(n_draws, (int, np.integer)) and n_draws >= 1):
        raise InputError(f"n_draws must be a positive integer, got {n_draws!r}.")
    var_group = np.asarray(var_group, dtype=np.float64)
    k3_group = np.asarray(k3_group, dtype=np.float64)
    live = var_group > 0
    rng = np.random.default_rng(random_state)
    if not live.any():
        return float(_reach(np.zeros(n_draws), observed)), "gaussian", int(n_draws)
    var, k3 = var_group[live], k3_group[live]
    skewed = float((np.abs(k3) / var / np.sqrt(var)).max()) > GAUSSIAN_MAX_SKEWNESS
    given = None
    if refit is not None:
        cov, var_c, a, m = (np.asarray(x, dtype=np.float64) for x in refit)
        given = _live((cov.reshape(live.size, -1), var_c, a.reshape(live.size, -1), m), live)
    sums = _abs_sum_draws(rng, var, k3 if skewed else None, n_draws, given)
    return float(_reach(np.sort(sums), observed)), "gamma (3 cumulants)" if skewed else "gaussian", int(n_draws)


def p_value_digits(p: float) -> str:
    """``p`` to two significant digits, or to as many more as it takes not to print a one-digit value that ``p``
    is not: the levels α are one-digit values (0.1, 0.05, 0.01), so "p = 0.1" beside α = 0.1 and the verdict
    "no evidence" (p was 0.104) read as a contradiction, and "p = 0.05" could be either side of the default
    level. 0.104 prints as "0.104", 0.0496 as "0.0496", 0.05 as "0.05"."""
    for digits in range(2, 8):
        text = f"{p:.{digits}g}"
        if float(text) == p or len(text.replace(".", "").lstrip("0")) >= 2:
            return text
    return text


def bound_digits(bound: float) -> str:
    """An upper bound on a p-value to two significant digits, rounded up so that it stays a bound (2/2401 =
    0.000833 prints as "0.00084", not "0.00083"); exact values print as they are ("0.005" for 1/200). A bound
    of 0 or less (none of the callers' p-values) prints as it is."""
    if not bound > 0:
        return f"{bound:.2g}"
    unit = 10.0 ** (math.floor(math.log10(bound)) - 1)
    return f"{math.ceil(bound / unit - 1e-9) * unit:.2g}"
