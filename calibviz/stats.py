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
"""
from __future__ import annotations

import numpy as np
from scipy.stats import binom
from scipy.stats import t as student_t

from .errors import InputError

__all__ = [
    "binom_test_pvalue",
    "binom_reject",
    "ttest_pvalue",
    "proportion_interval",
    "acceptance_band",
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
    pn = p * n
    d = binom.pmf(k, n, p)
    dr = d * _RERR
    for side in ("low", "high"):
        sel = np.flatnonzero(k < pn) if side == "low" else np.flatnonzero(k > pn)
        if not sel.size:
            continue
        ks, ns, ps = k[sel], n[sel], p[sel]
        nf = ns.astype(np.float64)
        if side == "low":  # k below the mean: far tail on the right, j >= j0
            ix = _bisect_index(lambda i, x: -binom.pmf(x, ns[i], ps[i]), -dr[sel], np.ceil(pn[sel]), nf)
            y = ns - ix + (dr[sel] == binom.pmf(ix, ns, ps)).astype(np.float64)
            j0 = ns - y + 1  # first outcome of the far tail
            step_far = (ns - j0) / (j0 + 1) * ps / (1 - ps)  # pmf(j+1)/pmf(j) at j0
            step_own = ks * (1 - ps) / ((ns - ks + 1) * ps)  # pmf(j-1)/pmf(j) at k
        else:  # k above the mean: far tail on the left, j <= j0
            ix = _bisect_index(lambda i, x: binom.pmf(x, ns[i], ps[i]), dr[sel], np.zeros(sel.size), np.floor(pn[sel]))
            y = ix + 1
            j0 = y - 1
            step_far = j0 * (1 - ps) / ((ns - j0 + 1) * ps)
            step_own = (ns - ks) * ps / ((ks + 1) * (1 - ps))
        todo = np.arange(sel.size)
        if alpha is not None:
            # both tails decay at least geometrically away from the mode
            far_pmf = np.where((j0 >= 0) & (j0 <= ns), binom.pmf(j0, ns, ps), 0.0)
            bound = d[sel] / (1 - step_own) + far_pmf / (1 - step_far)
            ok = (step_own < 1) & ((step_far < 1) | (far_pmf == 0)) & np.isfinite(bound)
            sure = ok & (bound * (1 + _MARGIN) + _TINY <= alpha)
            out[sel[sure]] = 0.0
            todo = np.flatnonzero(~sure)
        if not todo.size:
            continue
        ks, ns, ps, y = ks[todo], ns[todo], ps[todo], y[todo]
        if side == "low":
            out[sel[todo]] = binom.cdf(ks, ns, ps) + binom.sf(ns - y, ns, ps)
        else:
            out[sel[todo]] = binom.cdf(y - 1, ns, ps) + binom.sf(ks - 1, ns, ps)
    np.minimum(out, 1.0, out=out)
    return out


def _bisect_threshold(pred, lo, hi, true_at_lo: bool, iters: int = 64):
    """Vectorised bisection for the boundary of a monotone predicate on [lo, hi].

    Returns the last point known to satisfy ``pred`` (the side given by
    ``true_at_lo``) after ``iters`` halvings.
    """
    lo = lo.copy()
    hi = hi.copy()
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        ok = pred(mid)
        if true_at_lo:
            lo = np.where(ok, mid, lo)
        else:
            hi = np.where(ok, mid, hi)
        if np.all(hi - lo <= 1e-15):
            break
    return lo if true_at_lo else hi


def _certified_regions(k, n, alpha):
    """Per (k, n): intervals of p whose decision is certain without a p-value.

    With m = k/n, returns arrays (acc_lo, acc_hi, rej_lo, rej_hi) such that
    p in [acc_lo, m) or (m, acc_hi] is accepted and p <= rej_lo or
    p >= rej_hi is rejected. They rest on monotonicity in p of the own tail
    (P(X <= k) decreases, P(X >= k) increases) and of pmf(k) on each side of
    m, with the bounds own tail <= pvalue <= own tail + n * pmf(k) * (1+1e-7)
    and a relative margin of 1e-6 against floating-point error.
    """
    kf, nf = k.astype(np.float64), n.astype(np.float64)
    m = kf / nf
    # relative margin for rounding, absolute margin for underflow near alpha = 0
    hi_acc = alpha * (1 + _MARGIN) + _TINY
    hi_rej = alpha * (1 - _MARGIN) - _TINY
    one = np.ones_like(m)
    zero = np.zeros_like(m)

    # right side, p > m: own tail cdf(k)
    acc_hi = _bisect_threshold(lambda x: binom.cdf(kf, nf, x) > hi_acc, m, one, True)
    right_bound = lambda x: binom.cdf(kf, nf, x) + nf * binom.pmf(kf, nf, x) * _RERR <= hi_rej  # noqa: E731
    has_rej = right_bound(one)
    rej_hi = np.where(has_rej, _bisect_threshold(right_bound, m, one, False), np.inf)

    # left side, p < m: own tail sf(k-1)
    acc_lo = _bisect_threshold(lambda x: binom.sf(kf - 1, nf, x) > hi_acc, zero, m, False)
    left_bound = lambda x: binom.sf(kf - 1, nf, x) + nf * binom.pmf(kf, nf, x) * _RERR <= hi_rej  # noqa: E731
    has_rej = left_bound(zero)
    rej_lo = np.where(has_rej, _bisect_threshold(left_bound, zero, m, True), -np.inf)
    return m, acc_lo, acc_hi, rej_lo, rej_hi


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
    For each (k, n) pair, certified intervals of p that are surely accepted
    or surely rejected are found once by vectorised bisection (O(G) work);
    predictions inside them are classified by comparison. The remaining
    predictions (near the decision boundary) get exact p-values from
    :func:`binom_test_pvalue`. Cost O(N) plus the boundary cases.

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
    if p.size and (np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1))):
        raise InputError("p (null probability) must lie in [0, 1].")
    m, acc_lo, acc_hi, rej_lo, rej_hi = _certified_regions(k, n, alpha)
    mg = m[group]
    accept = ((p > mg) & (p <= acc_hi[group])) | ((p < mg) & (p >= acc_lo[group]))
    reject = (p <= rej_lo[group]) | (p >= rej_hi[group])
    out = reject & ~accept
    todo = np.flatnonzero(~(accept | reject))
    if todo.size:
        g = group[todo]
        out[todo] = _pvalue(k[g], n[g], p[todo], alpha) <= alpha
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
