"""LOESS: local regression with tricube weights and pointwise confidence bands.

This reproduces R's ``loess(..., family = "gaussian", surface = "direct")`` for
one predictor (the netlib ``dloess`` code of Cleveland, Grosse & Shyu, which
``skmisc.loess`` wraps), evaluated only where the caller needs it.

Why not an existing package: ``statsmodels.nonparametric.lowess`` fits local
*linear* polynomials and returns no standard errors (and its exact mode is
O(n^2) in Python-level loops); ``skmisc.loess`` is the reference but fits at
every observation (O(n^2), ~16 s at n = 2*10^4 with ``surface="direct"``) and
segfaults on large inputs. So we write the local fit ourselves and keep it
linear in n.

Method (R's rules, checked against ``skmisc.loess`` in tests/test_smoothing.py):

* neighbourhood size ``q = floor(n * span + 1e-5)`` observations (capped at n);
  the radius ``h(x0)`` is the distance from ``x0`` to its q-th nearest
  observation, times ``sqrt(span)`` when ``span > 1`` (netlib multiplies the
  *squared* distance by ``span``);
* weights ``w_j * (1 - (|x_j - x0| / h)^3)^3`` for ``|x_j - x0| < h``, no
  normalisation of the single predictor;
* weighted least squares of degree 1 or 2 in ``x_j - x0``; the fit is the
  intercept, a linear function ``sum_j l_j(x0) y_j`` of the responses;
* residual scale ``s = sqrt(sum_j w_j r_j^2 / delta1)`` with ``r_j`` the
  residuals of the fit at every observation, ``se(x0) = s * ||l(x0)||`` and a
  t quantile with the "lookup" degrees of freedom ``delta1^2 / delta2``, where
  ``delta1 = tr((I-L)^T (I-L))`` and ``delta2 = tr(((I-L)^T (I-L))^2)``.
  ``statistics="approximate"`` (R's default) computes ``tr L`` exactly and the
  deltas from it with Cleveland & Grosse's interpolation formula;
  ``statistics="exact"`` computes the traces exactly. With prior weights,
  netlib's ``||l(x0)||`` uses the coefficients per unit weight,
  ``l_j(x0) / w_j``, and so do we (the textbook variance for weights that are
  inverse variances would be ``s^2 sum_j l_j^2 / w_j``); without weights the
  two agree.

Speed: the observations are sorted by x once; they are aggregated onto their
distinct x values ("support points", with sums of w, w^2, w*y over runs of
the sorted rows) and all fits are computed from those sums, which is exact. Fits at every support point (needed for the residuals and
``tr L``) cost O(m^2) for m support points, so when x has more than
``max_support`` distinct values it is pre-aggregated onto ``max_support`` fine
bins (the union of equal-width and equal-count edges, each bin represented by
its weighted mean x) and the fits are interpolated to the observations; this
only touches the global scalars (residual scale, traces). The curve is
computed from the exact distinct values while there are at most
``max_grid_support`` of them, else from that many fine bins. The
neighbourhood radius always comes from the raw sorted x. Tolerances of the
pre-aggregation measured against skmisc are stated in the tests.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .errors import InputError
from .stats import bernoulli_max_t
from .validation import _as_1d_float, check_weights, describe_rows
from ._lazy import lazy

interpolate, stats = lazy("scipy.interpolate"), lazy("scipy.stats")

__all__ = ["loess", "loess_fit", "loess_curve", "LoessFit", "loess_bernoulli_test", "CurveTest"]

# Elements per dense (evaluation points x support points) block: 1 MB/array,
# small enough to stay in cache across the ~20 passes over it.
_BLOCK_ELEMENTS = 1 << 17

# Cleveland & Grosse (1991) interpolation formula for delta1, delta2 given tr L
# (netlib dloess ehg141/ehg176). _EHG141_C[3*(d-1+4*(deg-1)) + (0,1,2)] are
# (c1, c2, c3) for delta1; +24 for delta2. We only use d = 1.
_EHG141_C = np.array([
    .2971620, .3802660, .5886043, .4263766, .3346498, .6271053, .5241198, .3484836,
    .6687687, .6338795, .4076457, .7207693, .1611761, .3091323, .4401023, .2939609,
    .3580278, .5555741, .3972390, .4171278, .6293196, .4675173, .4699070, .6674802,
    .2848308, .2254512, .2914126, .5393624, .2517230, .3898970, .7603231, .2969113,
    .4740130, .9664956, .3629838, .5348889, .2075670, .2822574, .2369957, .3911566,
    .2981154, .3623232, .5508869, .3501989, .4371032, .7002667, .4291632, .4930370,
])
# ehg176: a cubic Hermite interpolant in z on these knots (value, slope); built on first use (scipy.interpolate
# is not imported by `import calibviz`).
@functools.cache
def _ehg176():
    return interpolate.CubicHermiteSpline(
        x=[-0.005, 0.1204, 0.2017, 0.2815, 0.3705, 0.4536, 0.5591, 0.7132, 0.8751, 1.005],
        y=[-9.0572e-2, 9.5807e-2, 2.6152e-2, -3.1926e-2, -5.3718e-2, -6.4170e-2,
           -5.8387e-2, -2.0636e-2, 4.0172e-2, -1.0856e-2],
        dydx=[4.4844, -0.7978, -0.7286, -0.4457, -0.3495, 3.2813e-2, 0.1611, 0.3350,
              -4.1032e-2, -0.7736],
    )


def _approximate_deltas(trace_hat: float, n: int, degree: int) -> tuple[float, float]:
    """delta1, delta2 from tr L by Cleveland & Grosse's formula (one predictor)."""
    k = degree + 1  # number of local parameters, tau in netlib
    corx = np.sqrt(k / n)
    z = (np.sqrt(k / trace_hat) - corx) / (1 - corx)
    z = min(1.0, max(0.0, z))
    c4 = np.exp(float(_ehg176()(z)))
    out = []
    for offset in (0, 24):
        c1, c2, c3 = _EHG141_C[offset + 3 * 4 * (degree - 1): offset + 3 * 4 * (degree - 1) + 3]
        out.append(n - trace_hat * np.exp(c1 * z ** c2 * (1 - z) ** c3 * c4))
    return out[0], out[1]


def _radius(xs: np.ndarray, x0: np.ndarray, q: int, span: float) -> np.ndarray:
    """Neighbourhood radius at each x0: distance to the q-th nearest of the sorted xs.

    The q nearest observations form a contiguous run xs[i:i+q] of the sorted
    data; the q-th distance is the smallest over runs of the larger end
    distance. A vectorised binary search finds the first run whose right end is
    at least as far as its left end; the answer is that run or the one before.
    """
    n = xs.size
    if q >= n:
        dq = np.maximum(np.abs(x0 - xs[0]), np.abs(xs[-1] - x0))
    else:
        last = n - q  # largest admissible run start
        lo = np.zeros(x0.shape, dtype=np.int64)
        hi = np.full(x0.shape, last + 1, dtype=np.int64)
        for _ in range(int(np.ceil(np.log2(last + 2))) + 1):
            active = lo < hi
            if not active.any():
                break
            mid = (lo + hi) // 2
            midc = np.minimum(mid, last)
            ok = xs[midc] + xs[midc + q - 1] >= 2 * x0
            hi = np.where(active & ok, mid, hi)
            lo = np.where(active & ~ok, mid + 1, lo)
        i1 = np.minimum(lo, last)
        d1 = np.maximum(np.abs(x0 - xs[i1]), np.abs(xs[i1 + q - 1] - x0))
        i0 = np.maximum(lo - 1, 0)
        d0 = np.maximum(np.abs(x0 - xs[i0]), np.abs(xs[i0 + q - 1] - x0))
        dq = np.minimum(d0, d1)
    return dq * np.sqrt(max(1.0, span))


@dataclass(frozen=True)
class _Support:
    """Observations aggregated onto support points s (sorted)."""

    s: np.ndarray    # (m,) support x values
    w: np.ndarray    # (m,) sum of prior weights
    w2: np.ndarray   # (m,) sum of squared prior weights
    wy: np.ndarray   # (m,) sum of w*y
    c: np.ndarray    # (m,) number of observations
    exact: bool      # True when s are the distinct x values themselves
    starts: np.ndarray  # (m,) first sorted observation of each support point


def _sort_obs(x, y, w):
    """x, y, w ordered by x, and the order: one sort shared by everything below.

    Every aggregation works on runs of the sorted observations (sums by
    ``np.add.reduceat``), which is sequential and O(n) once sorted, instead of
    locating each observation's bin by a binary search (cache-missing O(n log m)).
    """
    order = np.argsort(x)
    return order, x[order], y[order], None if w is None else w[order]


def _run_sums(xs, ys, ws, starts, exact: bool) -> _Support:
    """Support from the runs ``xs[starts[k]:starts[k+1]]`` (sorted, non-empty)."""
    c = np.diff(np.append(starts, xs.size)).astype(np.float64)
    if ws is None:  # unit weights: sums of 1 and 1^2 are the counts
        sw, sw2, swy = c, c, np.add.reduceat(ys, starts)
    else:
        sw, sw2, swy = (np.add.reduceat(ws, starts), np.add.reduceat(ws * ws, starts),
                        np.add.reduceat(ws * ys, starts))
    if exact:
        s = xs[starts]
    elif ws is None:
        s = np.add.reduceat(xs, starts) / c
    else:
        # Represent a bin by its weighted mean x (plain mean if its weights are all 0).
        with np.errstate(invalid="ignore", divide="ignore"):
            s = np.where(sw > 0, np.add.reduceat(ws * xs, starts) / sw, np.add.reduceat(xs, starts) / c)
    return _Support(s, sw, sw2, swy, c, exact, starts)


def _distinct_support(xs, ys, ws) -> _Support:
    """One support point per distinct x (exact)."""
    starts = np.flatnonzero(np.concatenate([[True], xs[1:] != xs[:-1]]))
    return _run_sums(xs, ys, ws, starts, True)


def _binned_support(xs, ys, ws, n_bins) -> _Support:
    """Fine-bin pre-aggregation: half equal-width, half equal-count edges.

    Bin i holds ``edges[i-1] <= x < edges[i]``, i.e. the sorted rows from
    ``#(x < edges[i-1])`` to ``#(x < edges[i])``; empty bins are dropped.
    """
    n = xs.size
    half = max(n_bins // 2, 1)
    width_edges = np.linspace(xs[0], xs[-1], half + 1)
    count_edges = xs[(np.arange(1, half) * n) // half]
    edges = np.unique(np.concatenate([width_edges[1:-1], count_edges]))
    starts = np.unique(np.concatenate([[0], np.searchsorted(xs, edges, side="left")]))
    return _run_sums(xs, ys, ws, starts[starts < n], False)


@dataclass(frozen=True)
class _LocalFits:
    fit: np.ndarray       # (k,) fitted value at each evaluation point
    hat0: np.ndarray      # (k,) [A^-1]_00: the smoother weight of a unit-weight point at x0
    norm2: np.ndarray | None  # (k,) sum_j g_j(x0)^2 over observations (see _local_fits)
    coef: np.ndarray | None = None  # (k, m) l(x0) per unit weight at each support point (exact stats)


def _local_fits(e: np.ndarray, h: np.ndarray, sup: _Support, degree: int, *,
                want_norm: bool, want_coef: bool = False) -> _LocalFits:
    """Local polynomial fits at points e with radii h from the support sums."""
    p = degree + 1
    k, m = e.size, sup.s.size
    fit = np.empty(k)
    hat0 = np.empty(k)
    norm2 = np.empty(k) if want_norm else None
    coef = np.empty((k, m)) if want_coef else None
    order = np.argsort(e, kind="stable")  # blocks of nearby points share a narrow column range
    rows = max(1, _BLOCK_ELEMENTS // max(m, 1))
    idx = np.add.outer(np.arange(p), np.arange(p))
    w_wy = np.column_stack([sup.w, sup.wy])
    for a in range(0, k, rows):
        r = order[a:a + rows]
        er, hr = e[r], h[r]
        # Only support points inside some neighbourhood of the block matter.
        c0 = 0 if want_coef else int(np.searchsorted(sup.s, np.min(er - hr), side="left"))
        c1 = m if want_coef else int(np.searchsorted(sup.s, np.max(er + hr), side="right"))
        s_blk = sup.s[c0:c1]
        # Scale distances by h: conditioning only, the intercept is unchanged.
        z = (s_blk[None, :] - er[:, None]) / hr[:, None]
        t = np.abs(z)
        t = 1.0 - t * t * t
        np.maximum(t, 0.0, out=t)
        t = t * t * t  # tricube; powers by multiplication (x**3 calls pow)
        powers = [t]
        for _ in range(2 * degree):
            powers.append(powers[-1] * z)
        mom = np.empty((r.size, 2 * degree + 1))
        rhs = np.empty((r.size, p))
        for j, pj in enumerate(powers):
            if j < p:
                both = pj @ w_wy[c0:c1]
                mom[:, j], rhs[:, j] = both[:, 0], both[:, 1]
            else:
                mom[:, j] = pj @ sup.w[c0:c1]
        Ainv = _pinv_spd(mom[:, idx])
        fit[r] = np.einsum("rj,rj->r", Ainv[:, 0, :], rhs)
        hat0[r] = Ainv[:, 0, 0]
        if want_norm or want_coef:
            # l_u per unit weight = t_u * sum_j Ainv[0, j] z_u^j
            g = Ainv[:, 0, 0][:, None] * powers[0]
            for j in range(1, p):
                g += Ainv[:, 0, j][:, None] * powers[j]
            if want_norm:
                # R/netlib: se uses the per-unit-weight coefficients g_j even
                # with prior weights (checked against skmisc).
                norm2[r] = (g * g) @ sup.c[c0:c1]
            if want_coef:
                coef[r] = g
    return _LocalFits(fit, hat0, norm2, coef)


def _pinv_spd(A: np.ndarray) -> np.ndarray:
    """Batched inverse of local normal matrices, pseudo-inverse when singular.

    netlib solves the equilibrated least-squares problem by SVD and drops
    singular values below 100*eps of the largest; on the normal matrix we
    equilibrate the same way and drop eigenvalues below 1e-12 of the largest
    (the square of that rule is beneath float resolution).
    """
    d = np.sqrt(np.einsum("rii->ri", A))
    d = np.where(d > 0, d, 1.0)
    Aeq = A / d[:, :, None] / d[:, None, :]
    vals, vecs = np.linalg.eigh(Aeq)
    keep = vals > 1e-12 * vals[:, -1:]
    inv_vals = np.where(keep, 1.0 / np.where(keep, vals, 1.0), 0.0)
    Ainv_eq = np.einsum("rij,rj,rkj->rik", vecs, inv_vals, vecs)
    return Ainv_eq / d[:, :, None] / d[:, None, :]


def _exact_deltas(sup: _Support, coef: np.ndarray, n: int) -> tuple[float, float]:
    """delta1 = tr M, delta2 = tr M^2 with M = (I-L)^T (I-L), on the support.

    With E the (n, m) indicator of each observation's support point and
    F = diag(w) E, the operator is L = E G F^T with G = coef (m, m). Writing
    M = I - N, N = U B U^T, U = [E F], B = [[0, G], [G^T, -G^T C G]] (C = E^T E),
    gives tr M = n - tr(B U^T U) and tr M^2 = n - 2 tr(B U^T U) + tr((B U^T U)^2),
    where U^T U = [[C, Cw], [Cw, C2]] is diagonal by block, so everything is
    O(m^3) instead of O(n^2). Exact when the support points are the distinct x.
    """
    G = coef
    C, Cw, C2 = sup.c, sup.w, sup.w2
    GtCG = G.T @ (C[:, None] * G)
    # P = B U^T U, blocks: [[G Cw, G C2], [G^T C - GtCG Cw, G^T Cw - GtCG C2]]
    P11 = G * Cw[None, :]
    P12 = G * C2[None, :]
    P21 = G.T * C[None, :] - GtCG * Cw[None, :]
    P22 = G.T * Cw[None, :] - GtCG * C2[None, :]
    tr_p = np.trace(P11) + np.trace(P22)
    # tr(P^2) = sum_ij P_ij P_ji over the 2x2 block structure
    tr_p2 = (np.sum(P11 * P11.T) + 2 * np.sum(P12 * P21.T) + np.sum(P22 * P22.T))
    return float(n - tr_p), float(n - 2 * tr_p + tr_p2)


@dataclass(frozen=True)
class LoessFit:
    """A fitted LOESS smoother (see :func:`loess_fit`).

    Attributes
    ----------
    span, degree, statistics : as passed
    n : int
        Number of observations.
    q : int
        Neighbourhood size in observations.
    fitted : ndarray of shape (n,)
        Fitted values at the observations.
    residual_scale : float
        ``s = sqrt(sum w r^2 / delta1)``.
    trace_hat, one_delta, two_delta : float
        ``tr L``, ``delta1``, ``delta2``.
    df : float
        Lookup degrees of freedom ``delta1^2 / delta2``.
    exact : bool
        False when x was pre-aggregated onto fine bins for the statistics
        (residual scale, traces).
    exact_curve : bool
        False when the curve itself is computed from fine bins.
    """

    span: float
    degree: int
    statistics: str
    n: int
    q: int
    fitted: np.ndarray = field(repr=False)
    residual_scale: float
    trace_hat: float
    one_delta: float
    two_delta: float
    df: float
    exact: bool
    exact_curve: bool
    _xs: np.ndarray = field(repr=False)
    _grid_support: _Support = field(repr=False)

    def predict(self, x_new, *, se: bool = False):
        """Fitted values (and standard errors if ``se``) at ``x_new`` of shape (k,)."""
        e = _as_finite_1d(x_new, "x_new")
        h = _radius(self._xs, e, self.q, self.span)
        res = _local_fits(e, h, self._grid_support, self.degree, want_norm=se)
        if not se:
            return res.fit
        return res.fit, self.residual_scale * np.sqrt(res.norm2)

    def table(self, grid=200, *, alpha: float = 0.05) -> pd.DataFrame:
        """DataFrame with columns x, fit, se, lower, upper on ``grid``.

        ``grid`` is an int (that many points evenly spaced between the 5% and
        95% quantiles of x) or an array of x values.
        """
        if not (0 < alpha < 1):
            raise InputError(f"alpha must lie strictly between 0 and 1, got {alpha!r}.")
        g = _grid_points(grid, self._xs)
        fit, se = self.predict(g, se=True)
        tq = stats.t.ppf(1 - alpha / 2, self.df)
        out = pd.DataFrame({"x": g, "fit": fit, "se": se, "lower": fit - tq * se, "upper": fit + tq * se})
        out.attrs.update(span=self.span, degree=self.degree, alpha=alpha, statistics=self.statistics,
                         n=self.n, q=self.q, residual_scale=self.residual_scale,
                         trace_hat=self.trace_hat, one_delta=self.one_delta,
                         two_delta=self.two_delta, df=self.df, exact=self.exact,
                         exact_curve=self.exact_curve)
        return out


def _as_finite_1d(values, name: str) -> np.ndarray:
    arr = _as_1d_float(values, name)
    bad = ~np.isfinite(arr)
    if bad.any():
        raise InputError(f"{name} is NaN or infinite in {describe_rows(bad)}; drop or fill those rows.")
    return arr


def _sorted_quantiles(xs_sorted: np.ndarray, qs) -> np.ndarray:
    """``np.quantile(xs_sorted, qs)`` (default "linear" method), same floats, no partition.

    np.quantile partitions a copy of its input (O(n), ~10 ms at 10^6) even when
    it is sorted; here the two neighbours are read directly and interpolated
    with numpy's own formula (which switches ends at t >= 0.5 for monotonicity).
    """
    n = xs_sorted.shape[0]
    v = (n - 1) * np.asarray(qs, dtype=np.float64)
    prev = np.floor(v)
    t = v - prev
    i = np.clip(prev.astype(np.intp), 0, n - 1)
    j = np.minimum(i + 1, n - 1)
    a, b = xs_sorted[i], xs_sorted[j]
    diff = b - a
    return np.where(t >= 0.5, b - diff * (1 - t), a + diff * t)


def _grid_points(grid, xs_sorted: np.ndarray) -> np.ndarray:
    if isinstance(grid, (int, np.integer)) and not isinstance(grid, bool):
        if grid < 1:
            raise InputError(f"grid must be a positive number of points or an array of x values, got {grid}.")
        lo, hi = _sorted_quantiles(xs_sorted, [0.05, 0.95])
        return np.linspace(lo, hi, int(grid))
    g = _as_finite_1d(grid, "grid")
    if g.size == 0:
        raise InputError("grid is empty; pass a positive number of points or a non-empty array of x values.")
    return g


def _prepare(x, y, sample_weight, span, degree):
    """Validate the inputs shared by loess_fit and loess_curve and sort them by x.

    Returns ``order, xs, ys, ws, q, n_distinct`` (``ws`` None without weights).
    """
    x = _as_finite_1d(x, "x")
    y = _as_finite_1d(y, "y")
    if x.size != y.size:
        raise InputError(f"x has {x.size} entries but y has {y.size}; they must have the same length.")
    w = check_weights(sample_weight, x.size)
    _neighbourhood_size(x.size, span, degree)  # cheap checks before the sort
    order, xs, ys, ws = _sort_obs(x, y, w)
    q, n_distinct = _sorted_settings(xs, span, degree)
    return order, xs, ys, ws, q, n_distinct


def _neighbourhood_size(n: int, span, degree) -> int:
    """Check degree and span; the neighbourhood size q in observations."""
    if degree not in (1, 2):
        raise InputError(f"degree must be 1 or 2, got {degree!r}.")
    if not (np.isfinite(span) and span > 0):
        raise InputError(f"span must be a positive number, got {span!r}.")
    q = min(n, int(np.floor(n * span + 1e-5)))
    if q < degree + 1:
        raise InputError(
            f"span={span} gives neighbourhoods of {q} observations out of {n}, fewer than the "
            f"{degree + 1} a degree-{degree} fit needs; increase span or supply more data.")
    return q


def _sorted_settings(xs, span, degree) -> tuple[int, int]:
    """q and the number of distinct values of the sorted xs, with the checks that need them."""
    q = _neighbourhood_size(xs.size, span, degree)
    n_distinct = 1 + int(np.count_nonzero(xs[1:] != xs[:-1]))
    if n_distinct < degree + 1:
        raise InputError(f"x has only {n_distinct} distinct values; a degree-{degree} fit needs at least {degree + 1}.")
    return q, n_distinct


def _check_radius(h, span, q):
    if np.any(h <= 0):
        raise InputError(f"span={span} is too small: more than {q} observations share one x value, "
                         "so some neighbourhoods have zero width; increase span.")


def loess_curve(x, y, *, span: float = 0.75, degree: int = 2, grid=200, sample_weight=None,
                max_grid_support: int = 50_000) -> tuple[np.ndarray, np.ndarray]:
    """LOESS fitted values on a grid, without standard errors (cheaper).

    Same fit as :func:`loess` (see there for the parameters) but skips the
    fits at every observation that the band needs.

    Returns
    -------
    grid_x, fit : ndarray of shape (k,)

    References
    ----------
    Cleveland, W. S. & Devlin, S. J. (1988). Locally weighted regression.
    JASA 83, 596-610.

    Examples
    --------
    >>> import numpy as np
    >>> gx, fx = loess_curve(np.arange(20.0), np.arange(20.0) ** 2, grid=[5.0, 10.0])
    >>> [round(float(v), 6) for v in fx]
    [25.0, 100.0]
    """
    _, xs, ys, ws, _, _ = _prepare(x, y, sample_weight, span, degree)
    return _sorted_curve(xs, ys, ws, span=span, degree=degree, grid=grid,
                         max_grid_support=max_grid_support)


def _sorted_curve(xs, ys, ws, *, span, degree, grid, max_grid_support):
    """loess_curve on observations already sorted by x and validated (``ws`` may be None)."""
    q, n_distinct = _sorted_settings(xs, span, degree)
    g = _grid_points(grid, xs)
    sup = (_distinct_support(xs, ys, ws) if n_distinct <= max_grid_support
           else _binned_support(xs, ys, ws, max_grid_support))
    h = _radius(xs, g, q, span)
    _check_radius(h, span, q)
    return g, _local_fits(g, h, sup, degree, want_norm=False).fit


def loess_fit(x, y, *, span: float = 0.75, degree: int = 2, sample_weight=None,
              statistics: str = "approximate", max_support: int = 3000,
              max_grid_support: int = 50_000) -> LoessFit:
    """Fit a LOESS smoother of y on x (R's ``loess`` with ``surface="direct"``).

    Parameters
    ----------
    x, y : array-like of shape (n,)
        Predictor and response, finite.
    span : float, default 0.75
        Fraction of the observations in each neighbourhood (``> 1``: all of
        them, with the radius enlarged by ``sqrt(span)`` as in netlib).
    degree : {1, 2}, default 2
        Degree of the local polynomial.
    sample_weight : array-like of shape (n,), optional
        Prior weights (R's ``weights``).
    statistics : {"approximate", "exact"}, default "approximate"
        How ``delta1``, ``delta2`` are computed (R's ``statistics``).
    max_support : int, default 3000
        Above this many distinct x values, residuals and traces are computed on
        ``max_support`` fine bins (O(max_support^2) work instead of O(n^2)).
    max_grid_support : int, default 50000
        Above this many distinct x values the curve itself is computed from
        ``max_grid_support`` fine bins.

    Returns
    -------
    LoessFit

    References
    ----------
    Cleveland, W. S. & Devlin, S. J. (1988). Locally weighted regression: an
    approach to regression analysis by local fitting. JASA 83, 596-610
    (local fit, Eqs. 2-4; variance, Sec. 3.3).
    Cleveland, W. S. & Grosse, E. (1991). Computational methods for local
    regression. Statistics and Computing 1, 47-62 (delta approximations).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.linspace(0, 1, 101)
    >>> f = loess_fit(x, 2 * x + 1, degree=1)
    >>> round(float(f.predict([0.5])[0]), 6)
    2.0
    """
    if statistics not in ("approximate", "exact"):
        raise InputError(f"statistics must be 'approximate' or 'exact', got {statistics!r}.")
    order, xs, ys, ws, q, n_distinct = _prepare(x, y, sample_weight, span, degree)
    n = xs.size
    exact = n_distinct <= max_support
    exact_curve = n_distinct <= max_grid_support
    distinct = _distinct_support(xs, ys, ws) if (exact or exact_curve) else None
    sup = distinct if exact else _binned_support(xs, ys, ws, max_support)
    grid_sup = distinct if exact_curve else _binned_support(xs, ys, ws, max_grid_support)

    h = _radius(xs, sup.s, q, span)
    _check_radius(h, span, q)
    at_support = _local_fits(sup.s, h, sup, degree, want_norm=False, want_coef=statistics == "exact")
    # Fits and hat diagonal at the sorted observations.
    if exact:
        counts = sup.c.astype(np.int64)
        fitted_s = np.repeat(at_support.fit, counts)
        hat_s = np.repeat(at_support.hat0, counts)
    else:
        # Smooth functions of x: interpolate the fine-bin fits to each observation.
        fitted_s = np.interp(xs, sup.s, at_support.fit)
        hat_s = np.interp(xs, sup.s, at_support.hat0)
    trace_hat = float(np.sum(hat_s if ws is None else ws * hat_s))
    if statistics == "exact":
        one_delta, two_delta = _exact_deltas(sup, at_support.coef, n)
    else:
        one_delta, two_delta = _approximate_deltas(trace_hat, n, degree)
    resid = ys - fitted_s
    rss = float(np.sum(resid * resid if ws is None else ws * resid * resid))
    residual_scale = float(np.sqrt(rss / one_delta))
    fitted = np.empty(n)
    fitted[order] = fitted_s
    return LoessFit(span=float(span), degree=int(degree), statistics=statistics, n=n, q=q,
                    fitted=fitted, residual_scale=residual_scale, trace_hat=trace_hat,
                    one_delta=float(one_delta), two_delta=float(two_delta),
                    df=float(one_delta ** 2 / two_delta), exact=exact, exact_curve=exact_curve,
                    _xs=xs, _grid_support=grid_sup)


def loess(x, y, *, span: float = 0.75, degree: int = 2, grid=200, alpha: float = 0.05,
          sample_weight=None, statistics: str = "approximate") -> pd.DataFrame:
    """LOESS curve with pointwise confidence band, evaluated on a grid.

    Parameters
    ----------
    x, y : array-like of shape (n,)
        Predictor and response (e.g. a feature and the per-row error).
    span : float, default 0.75
        Fraction of observations in each local neighbourhood.
    degree : {1, 2}, default 2
        Local polynomial degree.
    grid : int or array-like of shape (k,), default 200
        An int: that many points evenly spaced between the 5% and 95%
        quantiles of x; or the x values to evaluate at.
    alpha : float, default 0.05
        The band is the pointwise ``1 - alpha`` t-interval.
    sample_weight : array-like of shape (n,), optional
        Prior weights.
    statistics : {"approximate", "exact"}, default "approximate"
        R's ``statistics`` option for the degrees-of-freedom traces.

    Returns
    -------
    pandas.DataFrame
        Columns ``x, fit, se, lower, upper`` (one row per grid point);
        ``.attrs`` holds span, degree, residual_scale, trace_hat, one_delta,
        two_delta, df, n, q and ``exact`` (False when the statistics used the
        fine-bin pre-aggregation).

    Notes
    -----
    Matches R's ``predict(loess(y ~ x, span=, degree=, family="gaussian",
    surface="direct"), se=TRUE)`` and its ``qt(1 - alpha/2, df)`` intervals; see
    the module docstring for the method and the pre-aggregation used above
    3000 distinct x values.

    References
    ----------
    Cleveland, W. S. & Devlin, S. J. (1988). Locally weighted regression.
    JASA 83, 596-610. Cleveland, W. S. & Grosse, E. (1991). Computational
    methods for local regression. Statistics and Computing 1, 47-62.
    Kelly, M. & Smyth, P. (2023). Variable-based calibration for machine
    learning classifiers, Sec. 6.1 and App. B (LOESS calibration curves).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.linspace(0, 1, 200)
    >>> y = x ** 2 + 0.01 * np.cos(40 * x)
    >>> curve = loess(x, y, grid=[0.25, 0.5, 0.75])
    >>> list(curve.columns)
    ['x', 'fit', 'se', 'lower', 'upper']
    >>> [round(v, 2) for v in curve["fit"]]
    [0.06, 0.25, 0.56]
    >>> bool((curve["lower"] < curve["fit"]).all())
    True
    """
    fit = loess_fit(x, y, span=span, degree=degree, sample_weight=sample_weight, statistics=statistics)
    return fit.table(grid, alpha=alpha)


@dataclass(frozen=True)
class CurveTest:
    """Result of :func:`loess_bernoulli_test` (arrays of shape (k,), one entry per grid point).

    Attributes
    ----------
    x : grid points.
    curve : the LOESS curve of the residuals ``outcome - probability``.
    sd, z, p_adjusted, p_value, n_draws, method, skewness :
        As :class:`calibviz.stats.MaxT`: the null sd, ``curve / sd``, the
        single-step max-|z| adjusted p-values along the grid, the test of the
        whole curve (the smallest), and how the null curves were drawn.
    """

    x: np.ndarray
    curve: np.ndarray
    sd: np.ndarray
    z: np.ndarray
    p_adjusted: np.ndarray
    p_value: float
    n_draws: int
    method: str
    skewness: float


def loess_bernoulli_test(x, outcome, probability, *, span: float = 0.75, degree: int = 2, grid=200,
                         sample_weight=None, n_draws: int = 4000, method: str = "auto", random_state=0,
                         max_grid_support: int = 50_000) -> CurveTest:
    """Simultaneous test that 0/1 outcomes follow their probabilities all along x: the LOESS curve of
    ``outcome - probability`` is 0 everywhere on the grid.

    The null hypothesis is that the outcomes are independent Bernoulli(probability) given x (a calibrated model:
    ``y`` and ``p``, or the top-label error and ``1 - confidence``). The LOESS fit is linear in the responses,
    ``curve(x0) = sum_j l_j(x0) r_j``, so under the null the curve has mean 0 and the exact covariance
    ``C(x0, x1) = sum_j l_j(x0) l_j(x1) q_j (1 - q_j)``. Each grid point is standardised by its null sd and the
    largest |z| along the grid is referred to its null distribution (single-step max-T, Westfall & Young), so on
    calibrated data the probability that any grid point has ``p_adjusted <= a`` is ``a``, however many grid points
    there are and however they correlate. The outcomes are redrawn from the probabilities (exact) on small data and
    where some grid point's null distribution is skewed (above :data:`calibviz.stats.GAUSSIAN_MAX_SKEWNESS`, from
    the exact third cumulants: rare events); otherwise the null curves are Gaussian with covariance C
    (:func:`calibviz.stats.bernoulli_max_t`, which also says when z divides by the residuals' own sd).

    Parameters
    ----------
    x : array-like of shape (n,)
    outcome : array-like of shape (n,)
        0/1 outcomes.
    probability : array-like of shape (n,)
        Their probabilities under the null, in [0, 1].
    span, degree, grid, sample_weight, max_grid_support : as :func:`loess_fit` and :func:`loess`
        The curve is the one :func:`loess` draws on the same grid (same support points).
    n_draws : int, default 4000
        Null curves drawn; the smallest p-value is ``1 / (n_draws + 1)``. Redraws of the outcomes are capped at
        2^27 rows x redraws (at least 200 redraws).
    method : {"auto", "gaussian", "redraws"}, default "auto"
    random_state : int or numpy Generator, default 0
        Seed of the null curves (fixed: the same data give the same p-values).

    Returns
    -------
    CurveTest

    References
    ----------
    Cleveland, W. S. & Devlin, S. J. (1988), JASA 83 (LOESS as a linear smoother).
    Westfall, P. H. & Young, S. S. (1993). Resampling-Based Multiple Testing, Wiley (single-step max-T adjusted
    p-values). Kelly, M. & Smyth, P. (2023), Sec. 6.1 (the curves compared).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x, p = rng.uniform(0, 1, 2000), rng.uniform(0.1, 0.9, 2000)
    >>> y = (rng.uniform(size=2000) < p).astype(float)          # calibrated
    >>> t = loess_bernoulli_test(x, y, p, grid=50)
    >>> bool(t.p_value > 0.05), t.z.shape, t.method   # 2,000 rows x 4,000 draws: small enough to redraw
    (True, (50,), 'redraws')
    >>> y = (rng.uniform(size=2000) < np.where(x > 0.5, p + 0.1, p)).astype(float)   # off above x = 0.5
    >>> t = loess_bernoulli_test(x, y, p, grid=50)
    >>> bool(t.p_value < 0.001), bool(t.x[t.p_adjusted <= 0.05].min() > 0.4)
    (True, True)
    """
    q = _as_finite_1d(probability, "probability")
    o = _as_finite_1d(outcome, "outcome")
    if np.any((q < 0) | (q > 1)):
        raise InputError("probability must lie in [0, 1] for every row.")
    if not np.all((o == 0) | (o == 1)):
        raise InputError("outcome must be 0 or 1 for every row.")
    if q.size != o.size:
        raise InputError(f"probability has {q.size} entries but outcome has {o.size}; they must have the same length.")
    order, xs, rs, ws, span_q, n_distinct = _prepare(x, o - q, sample_weight, span, degree)
    sup = (_distinct_support(xs, rs, ws) if n_distinct <= max_grid_support
           else _binned_support(xs, rs, ws, max_grid_support))
    g = _grid_points(grid, xs)
    h = _radius(xs, g, span_q, span)
    _check_radius(h, span, span_q)
    fits = _local_fits(g, h, sup, degree, want_norm=False, want_coef=True)
    t = bernoulli_max_t(fits.coef, sup.starts, q[order], ws, fits.fit, n_draws=n_draws, method=method,
                        random_state=random_state,
                        residual_square=np.add.reduceat(rs * rs if ws is None else ws * ws * rs * rs, sup.starts))
    return CurveTest(x=g, curve=fits.fit, sd=t.sd, z=t.z, p_adjusted=t.p_adjusted, p_value=t.p_value,
                     n_draws=t.n_draws, method=t.method, skewness=t.skewness)
