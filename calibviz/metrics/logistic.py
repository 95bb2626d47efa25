"""Maximum-likelihood logistic regression by damped Newton steps, for the calibration slope and intercept
(:mod:`calibviz.metrics.goodness`) and the parametric recalibration maps (:mod:`calibviz.recalibration.parametric`).

Written here rather than taken from statsmodels: its IRLS has no step control and, from a start whose fitted
probabilities are all but 0 or 1, ran off while reporting convergence (an overconfident model's calibration
slope came out as 5.7e13 instead of 0.35; scores of exactly 0 or 1 gave an intercept of -1.8e15). Newton's
method with a backtracking line search on the convex log loss cannot run off, and converges quadratically to
the same maximum-likelihood estimate (tested against statsmodels and scikit-learn where they converge).
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from .._lazy import lazy

special = lazy("scipy.special")

__all__ = ["logistic_fit"]


def logistic_fit(X: np.ndarray, t: np.ndarray, w: np.ndarray | None = None, *, offset: np.ndarray | None = None,
                 start=None, max_iter: int = 100, tol: float = 1e-12) -> np.ndarray:
    """Maximum-likelihood coefficients of ``P(y=1 | x) = sigmoid(X @ beta + offset)`` by damped Newton steps.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Design matrix (include a column of ones for an intercept).
    t : ndarray of shape (n,)
        Targets in [0, 1] (0/1 labels, or Platt's smoothed targets).
    w : ndarray of shape (n,), optional
        Row weights.
    offset : ndarray of shape (n,), optional
        A known term of the linear predictor (the calibration intercept's
        model: the logit of the prediction).
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

    base = 0.0 if offset is None else np.asarray(offset, dtype=np.float64)

    def loss(b):
        z = X @ b + base
        # log(1 + e^z) - t z, stable (softplus as max(z, 0) + log1p(e^-|z|))
        v = np.log1p(np.exp(-np.abs(z))) + np.maximum(z, 0.0) - t * z
        return float((v.sum() if w is None else v @ w) / W)

    current = loss(beta)
    restarted = start is None
    for _ in range(max_iter):
        z = X @ beta + base
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
            # only approaches 0 as the coefficients run off), unless an offset put them there: confident, right
            # predictions in the calibration intercept's model, whose maximum exists with both classes present
            if (offset is None and np.max(np.abs(r if w is None else s - t)) < 1e-3
                    and np.all((t == 0) | (t == 1))):
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
            if not restarted and np.abs(grad).max() > 1e-8:
                # no decrease along a Newton step that is not at the optimum: from a start whose fitted values are
                # all but 0 or 1 (scores of exactly 0 and 1 at the identity map) the Hessian vanishes and the step
                # overshoots at every length; the fit returned the start, an identity map, as "optimal". Zeros
                # (fitted values 1/2) are a start Newton always gets on from
                beta, current, restarted = np.zeros(d), loss(np.zeros(d)), True
                continue
            return beta  # no further decrease possible: at the optimum up to round-off
        beta, current = cand, value
        if np.abs(beta).max() > 1e6:
            break
    what = ("the log-likelihood has no maximum: the predictions separate the labels perfectly (or nearly), so the "
            "fitted slope grows without bound. Use more (or noisier) calibration rows, ")
    raise InputError(what + "Platt's smoothed targets (targets='platt'; command line: --option targets=platt), or "
                     "a non-parametric map (isotonic).",
                     ui_message=what + "or a non-parametric map (isotonic regression).")
