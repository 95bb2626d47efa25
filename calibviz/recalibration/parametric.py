"""Parametric recalibration maps: Platt scaling, beta calibration, temperature and vector scaling.

All are maximum-likelihood fits of a few parameters (binomial or multinomial
log loss, convex in every case here). Platt, beta and temperature scaling are
solved by Newton-type steps on the exact log-likelihood (temperature: Taylor
steps of order three from per-row cumulants), so their parameters are the
maximum-likelihood estimates to round-off rather than to an optimiser's
tolerance; vector scaling (2K parameters) by L-BFGS with the exact gradient.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..metrics.logistic import logistic_fit
from ._base import EPS, Recalibrator, _check_choice
from .._lazy import lazy

optimize, special = lazy("scipy.optimize"), lazy("scipy.special")

__all__ = ["Platt", "Beta", "Temperature", "logistic_fit"]


def _logit(p: np.ndarray) -> np.ndarray:
    q = np.clip(p, EPS, 1.0 - EPS)
    return np.log(q) - np.log1p(-q)


class Platt(Recalibrator):
    """Platt scaling: a logistic regression of the label on the logit of the prediction.

    The map is ``p' = sigmoid(a + b * logit(p))`` with (a, b) the
    maximum-likelihood estimates (Newton's method; equals statsmodels'
    ``Logit`` fit). This is also the calibration intercept/slope model of
    Cox (1958). Predictions are clipped to [eps, 1 - eps] (float64 machine
    epsilon) before the logit.

    Parameters
    ----------
    targets : {"labels", "platt"}, default "labels"
        ``"platt"`` replaces the labels by Platt's smoothed targets
        ``(N+ + 1) / (N+ + 2)`` for positives and ``1 / (N- + 2)`` for
        negatives (Platt 1999, Sec. 2.2; N+/N- are the weighted class
        totals), the maximum a posteriori fit that scikit-learn's
        ``CalibratedClassifierCV(method="sigmoid")`` uses (equal to it when
        that is fitted on the logit of the predictions).
    multiclass : {"top_label", "confidence", "classwise"}, default "top_label"
        M2B reduction for (n, K) inputs (see :mod:`calibviz.recalibration`).

    References
    ----------
    J. Platt (1999), "Probabilistic outputs for support vector machines and
    comparisons to regularized likelihood methods", Advances in Large Margin
    Classifiers, Eq. (1) and Sec. 2.2; D. R. Cox (1958), "Two further
    applications of a model for binary regression", Biometrika 45.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(0.05, 0.95, 2000)
    >>> y = rng.uniform(size=2000) < special.expit(2 * _logit(p))   # predictions too timid
    >>> m = Platt().fit(p, y)
    >>> round(m.state_["binary"]["slope"], 1)
    2.0
    """

    name = "platt"
    label = "Platt scaling"

    def __init__(self, *, targets: str = "labels", multiclass: str = "top_label"):
        _check_choice(targets, ("labels", "platt"), "targets")
        super().__init__(multiclass=multiclass, targets=targets)

    def _fit_binary(self, p, y, w):
        x = _logit(p)
        t = y
        if self.options["targets"] == "platt":
            pos = y > 0
            n_pos = float(pos.sum() if w is None else w[pos].sum())
            n_neg = float((~pos).sum() if w is None else w[~pos].sum())
            t = np.where(pos, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
        X = np.column_stack([np.ones_like(x), x])
        a, b = logistic_fit(X, t, w, start=(0.0, 1.0))
        return {"intercept": float(a), "slope": float(b)}

    def _predict_binary(self, state, p):
        return special.expit(state["intercept"] + state["slope"] * _logit(p))

    def describe(self) -> str:
        s = self.state_.get("binary") if self.state_ else None
        if s is None:
            return "Platt scaling: a logistic regression of the label on logit(p) (per M2B view)."
        return (f"Platt scaling: p' = sigmoid({s['intercept']:+.4f} + {s['slope']:.4f} · logit(p)); slope < 1 shrinks "
                "over-confident predictions.")


class Beta(Recalibrator):
    """Beta calibration (three parameters, the "abm" model).

    The map is ``p' = sigmoid(c + a ln p - b ln(1 - p))`` with ``a, b >= 0``,
    a logistic regression on the two features ``ln p`` and ``-ln(1 - p)``;
    when the unconstrained fit gives ``a < 0`` (``b < 0``), ``a`` (``b``) is
    fixed at 0 and the other two parameters are refitted, as the paper
    prescribes so that the map stays monotone. ``m``, the prediction mapped
    to 1/2, is reported too (``c = b ln(1 - m) - a ln m``). Predictions are clipped to
    [eps, 1 - eps] first. Includes the identity (a = b = 1, c = 0) and Platt
    scaling on logits (a = b).

    References
    ----------
    M. Kull, T. Silva Filho & P. Flach (2017), "Beta calibration: a
    well-founded and easily implemented improvement on logistic calibration
    for binary classifiers", AISTATS, Eq. (4)-(6) and Sec. 3.3 (fitting
    by logistic regression, negative parameters fixed at 0).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> p = rng.uniform(0.01, 0.99, 3000)
    >>> y = rng.uniform(size=3000) < p
    >>> s = Beta().fit(p, y).state_["binary"]
    >>> abs(s["a"] - 1) < 0.2 and abs(s["b"] - 1) < 0.2
    True
    """

    name = "beta"
    label = "Beta calibration"

    def __init__(self, *, multiclass: str = "top_label"):
        super().__init__(multiclass=multiclass)

    def _fit_binary(self, p, y, w):
        q = np.clip(p, EPS, 1.0 - EPS)
        la, lb = np.log(q), -np.log1p(-q)
        one = np.ones_like(q)
        c, a, b = logistic_fit(np.column_stack([one, la, lb]), y, w, start=(0.0, 1.0, 1.0))
        if a < 0:
            c, b = logistic_fit(np.column_stack([one, lb]), y, w, start=(0.0, 1.0))
            a = 0.0
        elif b < 0:
            c, a = logistic_fit(np.column_stack([one, la]), y, w, start=(0.0, 1.0))
            b = 0.0
        return {"a": float(a), "b": float(b), "c": float(c), "m": _midpoint(a, b, c)}

    def _predict_binary(self, state, p):
        q = np.clip(p, EPS, 1.0 - EPS)
        return special.expit(state["c"] + state["a"] * np.log(q) - state["b"] * np.log1p(-q))

    def describe(self) -> str:
        s = self.state_.get("binary") if self.state_ else None
        if s is None:
            return "Beta calibration: p' = sigmoid(c + a ln p - b ln(1 - p)) (per M2B view)."
        return f"Beta calibration: p' = sigmoid({s['c']:+.4f} + {s['a']:.4f} ln p - {s['b']:.4f} ln(1 - p))."


def _midpoint(a: float, b: float, c: float) -> float | None:
    """The prediction m mapped to 1/2: solves c = b ln(1 - m) - a ln m (None when there is none in (0, 1))."""
    f = lambda m: b * np.log1p(-m) - a * np.log(m) - c  # noqa: E731 - decreasing in m when a, b >= 0
    lo, hi = 1e-300, 1 - 1e-16
    if a == 0 and b == 0:
        return None
    try:
        if f(lo) * f(hi) > 0:
            return None
        return float(optimize.brentq(f, lo, hi, xtol=1e-15))
    except (ValueError, RuntimeError):
        return None


# ---------------------------------------------------------------------------- temperature / vector scaling


_CHUNK_ELEMENTS = 1 << 16  # entries per chunk of the softmax passes: (chunk, K) temporaries stay in cache
_WARM_ROWS = 50_000  # the temperature is first fitted on this many rows (every k-th), then refined on all


def _log_probs(P: np.ndarray) -> np.ndarray:
    z = np.maximum(P, EPS)
    return np.log(z, out=z)


def _mean_derivatives(z, zy, w, beta: float) -> np.ndarray:
    """The mean loss of softmax(beta z) and its first five derivatives in beta (one pass; see _row_cumulants)."""
    rows = _row_cumulants(z, zy, beta)
    return rows.mean(axis=0) if w is None else (w @ rows) / w.sum()


def _newton_inverse_temperature(z, zy, w, start: float, tol: float = 1e-9, max_iter: int = 100) -> float:
    """Damped Newton on the exact mean log loss in beta = 1/T, one data pass per iteration (the robust path).

    Once the Newton decrement is below ``tol`` (|beta - beta*| ~ 1e-5), the last step is the root of the
    gradient's cubic Taylor model at that point (:func:`_taylor_root`), whose error is of order 1e-20: the
    minimiser to round-off rather than to the Newton tolerance.
    """
    beta = float(start)
    sums = _mean_derivatives(z, zy, w, beta)
    for _ in range(max_iter):
        loss, g, h = sums[:3]
        if h <= 0:
            break
        step = g / h
        if step * g < tol:
            delta, _ = _taylor_root(sums)
            return beta + delta if np.isfinite(delta) else beta - step
        size = 1.0
        while size > 1e-12:
            cand = beta - size * step
            new = _mean_derivatives(z, zy, w, cand)
            if new[0] <= loss:
                break
            size *= 0.5
        else:
            return beta
        beta, sums = cand, new
        if abs(beta) > 1e6:
            break
    raise InputError("temperature scaling did not converge: the log loss has no minimum in the temperature "
                     "(the predicted class is always right or the predictions are constant). Use more "
                     "calibration rows.")


def _row_cumulants(d: np.ndarray, dy: np.ndarray, beta: float) -> np.ndarray:
    """Per row i at one beta: the loss l_i and its first five derivatives in beta.

    With q_i = softmax(beta d_i), l_i(beta) = log sum_j exp(beta d_ij) - beta d_iy is a log-partition
    function, so its derivatives are the mean of d_i under q_i minus d_iy, then the cumulants kappa_2..kappa_5
    of d_i under q_i (computed from central moments: no cancellation of large raw moments). One chunked pass:
    one exp per entry, the chunk's central powers while it is in cache.

    Returns
    -------
    ndarray of shape (n, 6)
        Columns l, l' = mean - d_iy, kappa_2, kappa_3, kappa_4, kappa_5.
    """
    n, K = d.shape
    chunk = max(1, _CHUNK_ELEMENTS // K)
    out = np.empty((n, 6))
    e = np.empty((chunk, K))
    c = np.empty((chunk, K))
    t = np.empty((chunk, K))
    for s in range(0, n, chunk):
        dc = d[s:s + chunk]
        m = dc.shape[0]
        ec, cc, tc = e[:m], c[:m], t[:m]
        np.multiply(dc, beta, out=ec)
        np.exp(ec, out=ec)
        s0 = ec.sum(axis=1)
        np.multiply(ec, dc, out=tc)
        mu = tc.sum(axis=1) / s0
        np.subtract(dc, mu[:, None], out=cc)
        np.multiply(ec, cc, out=tc)
        moments = []
        for _ in range(4):  # sums of e c^2, e c^3, e c^4, e c^5
            np.multiply(tc, cc, out=tc)
            moments.append(tc.sum(axis=1) / s0)
        m2, m3, m4, m5 = moments
        o = out[s:s + m]
        o[:, 0] = np.log(s0) - beta * dy[s:s + m]
        o[:, 1] = mu - dy[s:s + m]
        o[:, 2] = m2
        o[:, 3] = m3
        o[:, 4] = m4 - 3.0 * m2 * m2
        o[:, 5] = m5 - 10.0 * m3 * m2
    return out


def _taylor_root(sums: np.ndarray) -> tuple[float, float]:
    """(delta, error): the root of the gradient's cubic Taylor model around a centre, and how far the next term
    would move it.

    ``sums`` are the mean loss and its derivatives 1..5 at the centre (g, h, k3, k4, k5 for derivatives 1..5);
    the model is g + h delta + k3 delta^2 / 2 + k4 delta^3 / 6 and the error estimate |k5| delta^4 / 24 / h.
    delta is NaN when the model has no usable root (far from the optimum).
    """
    _, g, h, k3, k4, k5 = sums
    if not h > 0:
        return np.nan, np.inf
    delta = -g / h
    for _ in range(50):
        f = g + h * delta + k3 * delta ** 2 / 2 + k4 * delta ** 3 / 6
        df = h + k3 * delta + k4 * delta ** 2 / 2
        if not df > 0:
            return np.nan, np.inf
        step = f / df
        delta -= step
        if abs(step) <= 1e-16 * max(1.0, abs(delta)):
            break
    else:
        return np.nan, np.inf
    return delta, abs(k5) * delta ** 4 / 24 / h


_TAYLOR_TOL = 1e-12  # relative error in 1/T accepted from the Taylor model (else one more pass at a new centre)
_TAYLOR_RADIUS = 0.01  # ... and only within this relative distance of the centre (where the series converges fast)


def fit_inverse_temperatures(z: np.ndarray, y: np.ndarray, w=None, *, groups=None, n_groups: int = 0,
                             start: float | None = None) -> np.ndarray:
    """1/T minimising the mean log loss of softmax(z / T) on all rows and on all rows but each group, together.

    Parameters
    ----------
    z : ndarray of shape (n, K)
        Log-probabilities (or logits), float64.
    y : ndarray of int, shape (n,)
    w : ndarray of shape (n,), optional
    groups : ndarray of int, shape (n,), optional
        Group (fold) of each row, 0..n_groups-1.
    n_groups : int
    start : float, optional
        Starting 1/T; default: the fit on every k-th row (50,000 rows).

    Returns
    -------
    ndarray of shape (n_groups + 1,)
        ``out[g]``: 1/T fitted without the rows of group g (cross-fitting's fold maps); ``out[-1]``: on all rows.

    Notes
    -----
    Every objective is a weighted sum of per-row terms l_i(beta) (log-partition functions, convex), so one
    pass at a centre beta_c gives, for all objectives at once, the loss and four derivatives by summing the
    per-row cumulants (:func:`_row_cumulants`) per group. Each objective's minimiser is the root of its
    gradient's cubic Taylor model around beta_c, accepted when it lies within 1% of beta_c and the next
    (fifth-cumulant) term would move it by less than 1e-12 relative; otherwise the next pass is centred at
    the median of the roots not yet accepted, then at one such root at a time (a pass centred at an
    objective's own root settles it). At 10^6 rows the warm start lies within ~1e-3 of the minimum, so the
    full-data fit takes one pass and the five fold maps of cross-fitting one more (their roots lie within
    ~1/sqrt(n) of each other), instead of two passes per map. An objective whose model has no usable root
    (far from the optimum, or no minimum) takes damped Newton steps on its own rows.

    References
    ----------
    C. Guo et al. (2017), ICML, Sec. 4.2 (temperature scaling); cumulants as derivatives of the log-partition
    function: M. J. Wainwright & M. I. Jordan (2008), Graphical Models, Exponential Families, and Variational
    Inference, Prop. 3.1.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.normal(size=(4000, 3)); y = (Z + rng.gumbel(size=(4000, 3))).argmax(1)
    >>> b = fit_inverse_temperatures(2 * Z, y, groups=np.arange(4000) % 2, n_groups=2)
    >>> b.shape, bool(abs(b[-1] - 0.5) < 0.05)
    ((3,), True)
    """
    n = z.shape[0]
    zmax = z.max(axis=1)
    if np.any(zmax != 0):
        z = z - zmax[:, None]  # rows shifted to max 0 (a copy; the callers shift their own array in place)
    zy = z[np.arange(n), y]
    G = int(n_groups) if groups is not None else 0
    base = np.ones(n) if w is None else np.asarray(w, dtype=np.float64)
    if start is None:
        start = 1.0
        if n > 2 * _WARM_ROWS:
            step = n // _WARM_ROWS
            try:
                start = _newton_inverse_temperature(z[::step], zy[::step], None if w is None else base[::step], 1.0,
                                                    tol=1e-8)
            except InputError:
                start = 1.0
    W = np.bincount(groups, weights=base, minlength=G) if G else np.zeros(0)
    W = np.append(base.sum() - W, base.sum())  # total weight of each objective
    if np.any(W <= 0):
        raise InputError("every row of a fold's fitting rows has weight 0; nothing to fit temperature scaling on.")
    # the loss has a minimum iff some row's true class is below its top class (d_iy < 0): otherwise every term
    # log sum_j exp(beta (d_ij - d_iy)) falls for ever as T -> 0, and a finite T would only say where the gradient
    # fell below a tolerance
    wrong = (zy < 0) & (base > 0)
    n_wrong = np.append(wrong.sum() - np.bincount(groups[wrong], minlength=G), wrong.sum()) if G else [wrong.sum()]
    if np.min(n_wrong) == 0:
        raise InputError("temperature scaling has no optimum here: the true class is a top class on every "
                         "calibration row" + (" of a fold's fitting rows" if n_wrong[-1] > 0 else "") + ", so the "
                         "log loss keeps falling as the temperature goes to 0. Use more calibration rows, or a map "
                         "that needs no such rows (isotonic, histogram binning).")
    out = np.full(G + 1, np.nan)
    todo = list(range(G + 1))
    centre = float(start)
    for n_pass in range(G + 3):
        rows = _row_cumulants(z, zy, centre)
        if w is not None:
            rows *= base[:, None]
        total = rows.sum(axis=0)
        per = (np.stack([np.bincount(groups, weights=rows[:, j], minlength=G) for j in range(6)], axis=1) if G
               else np.zeros((0, 6)))
        roots = {}
        for j in todo:
            delta, err = _taylor_root(((total - per[j]) if j < G else total) / W[j])
            root = centre + delta
            if np.isfinite(delta) and abs(delta) <= _TAYLOR_RADIUS * abs(centre) and err <= _TAYLOR_TOL * abs(root):
                out[j] = root
            elif np.isfinite(delta):
                roots[j] = root
        todo = [j for j in todo if not np.isfinite(out[j])]
        if not todo or len(roots) < len(todo):  # settled, or a model without a root: the robust path
            break
        # next centre: the median root first (settles most fold maps at once), then one root at a time (a
        # pass centred at an objective's own root settles it: its Taylor step is then ~0)
        centre = float(np.median(list(roots.values()))) if n_pass == 0 else roots[todo[0]]
    for j in todo:  # the robust path, objective by objective
        wj = base if j == G else np.where(groups == j, 0.0, base)
        if (wj > 0).sum() < 2:
            raise InputError("need at least 2 rows of positive weight to fit temperature scaling.")
        out[j] = _newton_inverse_temperature(z, zy, None if (w is None and j == G) else wj,
                                             float(out[-1]) if np.isfinite(out[-1]) else float(start))
    return out


def fit_inverse_temperature(z: np.ndarray, y: np.ndarray, w=None, *, start: float | None = None) -> float:
    """beta = 1/T minimising the mean log loss of softmax(beta z) (convex in beta).

    Parameters
    ----------
    z : ndarray of shape (n, K)
        Log-probabilities (or logits) of the rows.
    y : ndarray of int, shape (n,)
    w : ndarray of shape (n,), optional
    start : float, optional
        Starting point; default the fit on every k-th row (50,000 rows).

    Returns
    -------
    float
        The inverse temperature (1/T): :func:`fit_inverse_temperatures` with one objective (two passes over
        the data from the warm start; the last is a Newton step from ~1e-9 away, exact to round-off).
    """
    return float(fit_inverse_temperatures(z, y, w, start=start)[-1])


def _softmax_rows(z: np.ndarray) -> np.ndarray:
    e = z - z.max(axis=1, keepdims=True)
    np.exp(e, out=e)
    e /= e.sum(axis=1, keepdims=True)
    return e


def _scaled_softmax(P: np.ndarray, weight, bias=None) -> np.ndarray:
    """softmax(weight * log p + bias) row by row, in cache-sized chunks."""
    n, K = P.shape
    out = np.empty_like(P, dtype=np.float64)
    chunk = max(1, _CHUNK_ELEMENTS // K)
    for s in range(0, n, chunk):
        e = out[s:s + chunk]
        np.maximum(P[s:s + chunk], EPS, out=e)
        np.log(e, out=e)
        e *= weight
        if bias is not None:
            e += bias
        e -= e.max(axis=1, keepdims=True)
        np.exp(e, out=e)
        e /= e.sum(axis=1, keepdims=True)
    return out


def _softmax_shifted(d: np.ndarray, beta: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """softmax(beta_i d_i) row by row in cache-sized chunks; ``d`` holds log-probabilities shifted to row max 0
    (so the shift needs no second pass: exp(beta d) <= 1 for beta > 0), ``beta`` one value per row.
    ``out`` may be ``d`` itself (in place)."""
    n, K = d.shape
    out = np.empty_like(d) if out is None else out
    chunk = max(1, _CHUNK_ELEMENTS // K)
    for s in range(0, n, chunk):
        e = out[s:s + chunk]
        np.multiply(d[s:s + chunk], beta[s:s + chunk, None], out=e)
        np.exp(e, out=e)
        e /= e.sum(axis=1, keepdims=True)
    return out


class Temperature(Recalibrator):
    """Temperature (or vector) scaling of the log-probabilities, fitted by minimising the log loss.

    Multiclass: ``p' = softmax(log p / T)`` with one temperature T for all
    classes (Guo et al. 2017, Sec. 4.2); ``scaling="vector"`` fits a weight
    and a bias per class, ``p' = softmax(w * log p + b)``. The predicted class
    never changes with one temperature (T > 0); vector scaling can change it.
    Binary: ``p' = sigmoid(logit(p) / T)`` (no intercept; "vector" adds
    one, which is Platt scaling). The log-probabilities stand in for the
    logits: softmax(log p) = p, and any per-row constant cancels.

    The temperature is fitted on 1/T (the mean log loss is convex in 1/T):
    a warm start on 50,000 rows, then Taylor steps of order three built from
    per-row cumulants (:func:`fit_inverse_temperatures`; one pass over the
    data at 10^6 x 100, exact to round-off), damped Newton steps when far
    from the optimum.

    Parameters
    ----------
    scaling : {"temperature", "vector"}, default "temperature"

    References
    ----------
    C. Guo, G. Pleiss, Y. Sun & K. Q. Weinberger (2017), "On calibration of
    modern neural networks", ICML, Sec. 4.2 (temperature and vector
    scaling); Kull et al. (2019), NeurIPS (vector scaling as a restricted
    Dirichlet calibration).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.normal(size=(3000, 4)) * 2
    >>> y = np.array([rng.choice(4, p=r) for r in _softmax_rows(Z)])
    >>> P = _softmax_rows(3 * Z)                   # over-confident: temperature about 3
    >>> round(Temperature().fit(P, y).temperature, 1)
    3.0
    """

    name = "temperature"
    label = "Temperature scaling"
    native_multiclass = True

    def __init__(self, *, scaling: str = "temperature"):
        _check_choice(scaling, ("temperature", "vector"), "scaling")
        super().__init__(scaling=scaling)

    @property
    def temperature(self) -> float:
        """The fitted temperature T (one-temperature scaling)."""
        self._require_fitted()
        s = self.state_.get("binary") or self.state_.get("multiclass")
        return float(s.get("temperature", np.nan))

    def _fit_binary(self, p, y, w):
        x = _logit(p)
        if self.options["scaling"] == "vector":
            a, b = logistic_fit(np.column_stack([np.ones_like(x), x]), y, w, start=(0.0, 1.0))
            return {"weight": float(b), "bias": float(a)}
        (b,) = logistic_fit(x[:, None], y, w, start=(1.0,))
        if b <= 0:
            raise InputError("temperature scaling found a non-positive inverse temperature: the predictions rank "
                             "the labels the wrong way round; check the positive class.")
        return {"temperature": float(1.0 / b)}

    def _predict_binary(self, state, p):
        x = _logit(p)
        if "temperature" in state:
            return special.expit(x / state["temperature"])
        return special.expit(state["bias"] + state["weight"] * x)

    def _fit_multiclass(self, P, y, w):
        z = _log_probs(P)
        if self.options["scaling"] == "temperature":
            z -= z.max(axis=1, keepdims=True)  # our own array: shift in place (no second copy)
            return self._temperature_state(z, y, w)
        return _fit_vector(z, y, w)

    @staticmethod
    def _temperature_state(d, y, w) -> dict:
        """{"temperature": T} from log-probabilities shifted to row max 0 (shared by the folds of cross_fit)."""
        return Temperature._temperature_from_beta(fit_inverse_temperature(d, y, w))

    @staticmethod
    def _temperature_from_beta(beta: float) -> dict:
        """{"temperature": 1 / beta}, or the error when the fit ranks the classes the wrong way round."""
        if beta <= 0:
            raise InputError("temperature scaling found a non-positive inverse temperature: the predicted "
                             "classes are worse than chance on the calibration rows.")
        return {"temperature": float(1.0 / beta)}

    def _predict_multiclass(self, state, P):
        if "temperature" in state:
            return _scaled_softmax(P, 1.0 / state["temperature"])
        return _scaled_softmax(P, np.asarray(state["weights"]), np.asarray(state["biases"]))

    def describe(self) -> str:
        if not self.state_:
            return self.label
        s = self.state_.get("binary") or self.state_.get("multiclass")
        if "temperature" in s:
            t = s["temperature"]
            return (f"Temperature scaling: T = {t:.4f} (" + ("softens over-confident" if t > 1 else
                                                             "sharpens under-confident") + " predictions).")
        return "Vector scaling: one weight and one bias per class on the log-probabilities."


def _fit_vector(z, y, w):
    """Vector scaling: softmax(w * z + b), multinomial log loss minimised by L-BFGS with the exact gradient."""
    n, K = z.shape
    Y = np.zeros((n, K))
    Y[np.arange(n), y] = 1.0
    ww = np.ones(n) if w is None else w
    W = ww.sum()

    def f(theta):
        a, b = theta[:K], theta[K:]
        s = z * a + b
        lse = special.logsumexp(s, axis=1)
        loss = float(ww @ (lse - (s * Y).sum(axis=1))) / W
        Pm = np.exp(s - lse[:, None])
        R = (Pm - Y) * ww[:, None] / W
        return loss, np.concatenate([(R * z).sum(axis=0), R.sum(axis=0)])

    theta0 = np.concatenate([np.ones(K), np.zeros(K)])
    res = optimize.minimize(f, theta0, jac=True, method="L-BFGS-B",
                            options={"maxiter": 1000, "gtol": 1e-10, "ftol": 1e-15})
    # the biases are defined up to a constant: centre them
    b = res.x[K:] - res.x[K:].mean()
    return {"weights": res.x[:K].tolist(), "biases": b.tolist(), "converged": bool(res.success)}
