"""Parametric recalibration maps: Platt scaling, beta calibration, temperature and vector scaling.

All are maximum-likelihood fits of a few parameters (binomial or multinomial
log loss), solved by Newton's method on the exact log-likelihood (convex in
every case here), so the fitted parameters are the maximum-likelihood
estimates to machine precision rather than to an optimiser's tolerance.
"""
from __future__ import annotations

import numpy as np
from scipy import optimize, special

from ..errors import InputError
from ._base import EPS, Recalibrator, _check_choice

__all__ = ["Platt", "Beta", "Temperature", "logistic_fit"]


def _logit(p: np.ndarray) -> np.ndarray:
    q = np.clip(p, EPS, 1.0 - EPS)
    return np.log(q) - np.log1p(-q)


def logistic_fit(X: np.ndarray, t: np.ndarray, w: np.ndarray | None = None, *, start=None, max_iter: int = 100,
                 tol: float = 1e-12) -> np.ndarray:
    """Maximum-likelihood coefficients of ``P(y=1 | x) = sigmoid(X @ beta)`` by damped Newton steps.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Design matrix (include a column of ones for an intercept).
    t : ndarray of shape (n,)
        Targets in [0, 1] (0/1 labels, or Platt's smoothed targets).
    w : ndarray of shape (n,), optional
        Row weights.
    start : array-like of shape (d,), optional
    max_iter : int, default 100
    tol : float, default 1e-12
        When the Newton decrement (the predicted decrease of the mean log
        loss) falls below ``tol``, one last full Newton step is taken and
        returned (quadratic convergence: the coefficients are then exact to
        round-off).

    Returns
    -------
    ndarray of shape (d,)

    Raises
    ------
    InputError
        When the log-likelihood has no maximum (the predictions separate the
        labels perfectly, so a coefficient runs off to infinity).

    Notes
    -----
    Newton's method with a backtracking line search on the mean binomial log
    loss (convex): gradient ``X^T w (s - t) / W``, Hessian
    ``X^T diag(w s (1 - s)) X / W``. It converges quadratically, so the
    result is the maximum-likelihood estimate to machine precision, which is
    what statsmodels' ``Logit`` (Newton) finds as well.

    References
    ----------
    McCullagh & Nelder (1989), *Generalized Linear Models*, 2nd ed., Sec. 4.4
    (Fisher scoring = Newton for the canonical logit link).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.column_stack([np.ones(4), [0.0, 1.0, 2.0, 3.0]])
    >>> np.round(logistic_fit(X, np.array([0.0, 1.0, 0.0, 1.0])), 4).tolist()
    [-1.3623, 0.9082]
    """
    n, d = X.shape
    W = float(n if w is None else w.sum())
    beta = np.zeros(d) if start is None else np.asarray(start, dtype=np.float64).copy()

    def loss(b):
        z = X @ b
        # log(1 + e^z) - t z, stable (softplus as max(z, 0) + log1p(e^-|z|))
        v = np.log1p(np.exp(-np.abs(z))) + np.maximum(z, 0.0) - t * z
        return float((v.sum() if w is None else v @ w) / W)

    current = loss(beta)
    for _ in range(max_iter):
        z = X @ beta
        s = special.expit(z)
        r = s - t
        h = s * (1.0 - s)
        if w is not None:
            r = r * w
            h = h * w
        grad = X.T @ r / W
        hess = (X.T * h) @ X / W
        try:
            step = np.linalg.solve(hess, grad)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(hess, grad, rcond=None)[0]
        decrement = float(grad @ step)
        if not np.isfinite(decrement):
            break
        if decrement < tol:
            # in the quadratic region: one last full Newton step squares the remaining error (~1e-12 in the
            # coefficients -> round-off); fitted values all at their 0/1 labels mean no maximum exists (the loss
            # only approaches 0 as the coefficients run off)
            if np.max(np.abs(r if w is None else s - t)) < 1e-3 and np.all((t == 0) | (t == 1)):
                break
            return beta - step
        size = 1.0
        while size > 1e-10:
            cand = beta - size * step
            value = loss(cand)
            if value <= current - 1e-4 * size * decrement:
                break
            size *= 0.5
        else:
            return beta  # no further decrease possible: at the optimum up to round-off
        beta, current = cand, value
        if np.abs(beta).max() > 1e6:
            break
    raise InputError("the log-likelihood has no maximum: the predictions separate the labels perfectly (or "
                     "nearly), so the fitted slope grows without bound. Use more (or noisier) calibration rows, "
                     "Platt's smoothed targets (targets='platt'), or a non-parametric map (isotonic).")


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


def _temperature_moments(d, dy, w, beta):
    """Mean log loss of softmax(beta d) and its first two derivatives in beta (one chunked pass over d).

    ``d`` holds log-probabilities shifted so that every row's maximum is 0 (so exp(beta d) <= 1 never
    overflows for beta > 0); ``dy`` the shifted value of the true class.
    """
    n, K = d.shape
    chunk = max(1, _CHUNK_ELEMENTS // K)
    loss = g = h = 0.0
    e = np.empty((chunk, K))
    ed = np.empty((chunk, K))
    for s in range(0, n, chunk):
        dc = d[s:s + chunk]
        m = dc.shape[0]
        ec, edc = e[:m], ed[:m]
        np.multiply(dc, beta, out=ec)
        np.exp(ec, out=ec)
        s0 = ec.sum(axis=1)
        np.multiply(ec, dc, out=edc)
        s1 = edc.sum(axis=1)
        s2 = np.einsum("ij,ij->i", edc, dc)
        m1 = s1 / s0
        li = np.log(s0) - beta * dy[s:s + chunk]
        gi = m1 - dy[s:s + chunk]
        hi = s2 / s0 - m1 * m1
        if w is None:
            loss += li.sum(); g += gi.sum(); h += hi.sum()  # noqa: E702
        else:
            wc = w[s:s + chunk]
            loss += li @ wc; g += gi @ wc; h += hi @ wc  # noqa: E702
    W = float(n if w is None else w.sum())
    return loss / W, g / W, h / W


def fit_inverse_temperature(z: np.ndarray, y: np.ndarray, w=None, *, start: float = 1.0, tol: float = 1e-9,
                            max_iter: int = 100) -> float:
    """beta = 1/T minimising the mean log loss of softmax(beta z): Newton's method (convex in beta).

    Parameters
    ----------
    z : ndarray of shape (n, K)
        Log-probabilities (or logits) of the rows.
    y : ndarray of int, shape (n,)
    w : ndarray of shape (n,), optional
    start : float, default 1.0
    tol : float, default 1e-9
        When the Newton decrement falls below ``tol``, one last full Newton
        step is returned: Newton's quadratic convergence makes its error
        about the square of the current one (well below 1e-9 in 1/T).

    Returns
    -------
    float
        The inverse temperature (1/T).
    """
    n = z.shape[0]
    zmax = z.max(axis=1)
    if np.any(zmax != 0):
        z = z - zmax[:, None]  # rows shifted to max 0 (a copy; _fit_multiclass shifts its own array in place)
    if n > 2 * _WARM_ROWS and start == 1.0:
        # start Newton near the optimum: the fit on every k-th row (then one or two passes over all rows)
        step = n // _WARM_ROWS
        try:
            start = fit_inverse_temperature(z[::step], y[::step], None if w is None else w[::step], tol=1e-8)
        except InputError:
            start = 1.0
    zy = z[np.arange(n), y]
    beta = float(start)
    loss, g, h = _temperature_moments(z, zy, w, beta)
    for _ in range(max_iter):
        if h <= 0:
            break
        step = g / h
        if step * g < tol:
            return beta - step  # quadratic region: a last full Newton step
        size = 1.0
        while size > 1e-12:
            cand = beta - size * step
            new = _temperature_moments(z, zy, w, cand)
            if new[0] <= loss:
                break
            size *= 0.5
        else:
            return beta
        beta, (loss, g, h) = cand, new
        if abs(beta) > 1e6:
            break
    raise InputError("temperature scaling did not converge: the log loss has no minimum in the temperature "
                     "(the predicted class is always right or the predictions are constant). Use more "
                     "calibration rows.")


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


class Temperature(Recalibrator):
    """Temperature (or vector) scaling of the log-probabilities, fitted by minimising the log loss.

    Multiclass: ``p' = softmax(log p / T)`` with one temperature T for all
    classes (Guo et al. 2017, Sec. 4.2); ``scaling="vector"`` fits a weight
    and a bias per class, ``p' = softmax(w * log p + b)``. The predicted class
    never changes with one temperature (T > 0); vector scaling can change it.
    Binary: ``p' = sigmoid(logit(p) / T)`` (no intercept; "vector" adds
    one, which is Platt scaling). The log-probabilities stand in for the
    logits: softmax(log p) = p, and any per-row constant cancels.

    The temperature is fitted on 1/T by Newton's method on the exact mean
    log loss (convex in 1/T), one pass over the data per iteration.

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
        beta = fit_inverse_temperature(d, y, w)
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
