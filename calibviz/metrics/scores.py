"""Proper scoring rules for a binary view: Brier score and log loss.

Both are (weighted) means of a per-row loss, so they need no binning and are
defined for sample weights (a weight acts like a repetition count).
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..validation import check_binary

__all__ = ["brier_score", "log_loss"]

#: Default clipping for :func:`log_loss`: the float64 machine epsilon
#: (2.22e-16). It is the smallest clip for which ``1 - eps`` is still a float64
#: below 1, so ``log(1 - p)`` stays finite, and it matches scikit-learn >= 1.5
#: (which clips at ``np.finfo(dtype).eps``); a confidently wrong prediction
#: then costs ``-log(eps) = 36.04`` nats instead of infinity.
LOG_LOSS_EPS = float(np.finfo(np.float64).eps)


def _weighted_mean(values: np.ndarray, w: np.ndarray | None) -> float:
    if w is None:
        return float(values.mean())
    return float(np.dot(values, w) / w.sum())


def brier_score(y_true, y_prob, *, sample_weight=None) -> float:
    """Brier score: the (weighted) mean squared difference between prediction and outcome.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Outcomes in {0, 1}.
    y_prob : array-like of shape (n,)
        Predicted probabilities of the outcome 1, in [0, 1].
    sample_weight : array-like of shape (n,), optional
        Non-negative weights; the score is ``sum(w * (p - y)**2) / sum(w)``.

    Returns
    -------
    float
        The Brier score, in [0, 1]; 0 is perfect.

    References
    ----------
    G. W. Brier, "Verification of forecasts expressed in terms of probability",
    Monthly Weather Review 78(1), 1950, Eq. (1) (two-category form halved, i.e.
    the usual binary Brier score).

    Examples
    --------
    >>> from calibviz.metrics import brier_score
    >>> round(brier_score([0, 1, 1], [0.1, 0.8, 0.6]), 4)
    0.07
    """
    y, p, w = check_binary(y_true, y_prob, sample_weight)
    return _weighted_mean((p - y) ** 2, w)


def log_loss(y_true, y_prob, *, eps: float = LOG_LOSS_EPS, sample_weight=None) -> float:
    """Log loss (binary cross-entropy, negative mean log-likelihood) in nats.

    Probabilities are clipped to ``[eps, 1 - eps]`` before taking logarithms,
    so a prediction of exactly 0 or 1 that turns out wrong costs ``-log(eps)``
    (36.04 for the default) instead of infinity.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Outcomes in {0, 1}.
    y_prob : array-like of shape (n,)
        Predicted probabilities of the outcome 1, in [0, 1].
    eps : float, default 2.220446e-16
        Clipping constant, ``0 < eps < 0.5``. The default is the float64 machine
        epsilon, the value scikit-learn >= 1.5 uses; pass ``eps=1e-15`` to
        reproduce scikit-learn's historical default.
    sample_weight : array-like of shape (n,), optional
        Non-negative weights; the loss is ``sum(w * l_i) / sum(w)``.

    Returns
    -------
    float
        ``-mean(y * log(p) + (1 - y) * log(1 - p))``; 0 is perfect.

    References
    ----------
    I. J. Good, "Rational decisions", Journal of the Royal Statistical Society B
    14(1), 1952 (the logarithmic scoring rule); clipping as in
    ``sklearn.metrics.log_loss``.

    Examples
    --------
    >>> from calibviz.metrics import log_loss
    >>> round(log_loss([0, 1, 1], [0.1, 0.8, 0.6]), 4)
    0.2798
    >>> round(log_loss([0], [1.0]), 2)  # clipped, not infinite
    36.04
    """
    if not (np.isfinite(eps) and 0 < eps < 0.5):
        raise InputError(f"eps must lie strictly between 0 and 0.5, got {eps!r}; the default is {LOG_LOSS_EPS:.3g}.")
    y, p, w = check_binary(y_true, y_prob, sample_weight)
    p = np.clip(p, eps, 1.0 - eps)
    # Only the log of the probability given to the observed outcome enters.
    losses = -np.log(np.where(y == 1.0, p, 1.0 - p))
    return _weighted_mean(losses, w)
