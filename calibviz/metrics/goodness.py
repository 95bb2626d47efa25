"""Goodness-of-fit tests and logistic recalibration for a binary view.

Spiegelhalter's Z test (no binning) and the calibration intercept / slope
(logistic recalibration, fitted by :func:`calibviz.metrics.logistic.logistic_fit`). A sample weight is the
weight of one observation (a sampling or importance weight), as everywhere in
calibviz (the calibrated-model references redraw each row's label once, the
bootstrap resamples rows): under calibration sum w y varies as
sum w^2 p (1 - p), so the tests' variances carry w^2. Unit weights give the
unweighted tests exactly and scaling every weight changes nothing. Reading a
weight as a count of identical rows (w instead of w^2) flagged 17%
(Spiegelhalter) of calibrated models with log-normal(0, 0.7) weights at the 5%
level; with counts the w^2 variances are conservative.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..errors import InputError
from ..validation import check_binary
from .logistic import logistic_fit
from .._lazy import lazy

special, stats = lazy("scipy.special"), lazy("scipy.stats")

__all__ = [
    "spiegelhalter_z",
    "SpiegelhalterResult",
    "calibration_intercept_slope",
    "InterceptSlopeResult",
    "LOGIT_CLIP",
]

#: Predictions are clipped to ``[LOGIT_CLIP, 1 - LOGIT_CLIP]`` before taking
#: logits in :func:`calibration_intercept_slope`, so scores of exactly 0 or 1
#: become logits of about -/+27.6 (finite, but far beyond any realistic score).
LOGIT_CLIP = 1e-12


class SpiegelhalterResult(NamedTuple):
    """Spiegelhalter's test; unpacks as ``(statistic, p_value)``."""

    statistic: float
    p_value: float


def spiegelhalter_z(y_true, y_prob, *, sample_weight=None) -> SpiegelhalterResult:
    """Spiegelhalter's Z test of calibration (two-sided).

    .. math::

        Z = \\frac{\\sum_i w_i (y_i - p_i)(1 - 2 p_i)}
                 {\\sqrt{\\sum_i w_i^2 (1 - 2 p_i)^2 p_i (1 - p_i)}}

    which is standard normal under the hypothesis that every ``y_i`` is
    Bernoulli(``p_i``) (the denominator is the exact standard deviation of the
    numerator then). The p-value is ``2 * (1 - Phi(|Z|))``.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Outcomes in {0, 1}.
    y_prob : array-like of shape (n,)
        Predicted probabilities of the outcome 1, in [0, 1].
    sample_weight : array-like of shape (n,), optional
        Non-negative weights of the rows (one observation each; hence ``w**2``
        in the variance, see the module's docstring).

    Returns
    -------
    SpiegelhalterResult
        ``(statistic, p_value)``; positive Z means the Brier score is larger
        than expected under calibration.

    Raises
    ------
    InputError
        If the null variance is zero (every prediction is 0, 0.5 or 1), where
        the statistic is undefined.

    References
    ----------
    D. J. Spiegelhalter, "Probabilistic prediction in patient management and
    clinical trials", Statistics in Medicine 5(5), 1986, pp. 421-433, Eq. (2)
    (the standardised Brier score).

    Examples
    --------
    >>> from calibviz.metrics import spiegelhalter_z
    >>> z, p_value = spiegelhalter_z([0, 1, 1, 0, 1], [0.2, 0.7, 0.9, 0.4, 0.6])
    >>> round(z, 4), round(p_value, 4)
    (-1.1711, 0.2416)
    """
    y, p, w = check_binary(y_true, y_prob, sample_weight)
    a = 1.0 - 2.0 * p
    num_terms = (y - p) * a
    var_terms = a * a * p * (1.0 - p)
    if w is None:
        num, var = num_terms.sum(), var_terms.sum()
    else:
        num, var = np.dot(num_terms, w), np.dot(var_terms, w * w)
    return _spiegelhalter_from_sums(num, var)


def _standard_errors(beta: np.ndarray, X: np.ndarray, w, offset=None) -> np.ndarray:
    """Standard errors of a weighted logistic fit whose rows are single observations carrying weights.

    The estimating equation sum w x (y - mu) = 0 has the covariance A^-1 B A^-1 with A = sum w mu (1 - mu) x x'
    and, under the model, B = sum w^2 mu (1 - mu) x x' (statsmodels' ``freq_weights`` covariance is A^-1, which
    reads a weight as a count of identical rows). Unweighted, B = A and this is the usual A^-1 (statsmodels'
    ``bse``).
    """
    mu = special.expit(X @ beta + (0.0 if offset is None else offset))
    v = mu * (1.0 - mu)
    A_inv = np.linalg.inv(X.T @ (X * (v if w is None else w * v)[:, None]))
    if w is None:
        return np.sqrt(np.diag(A_inv))
    B = X.T @ (X * (w * w * v)[:, None])
    return np.sqrt(np.diag(A_inv @ B @ A_inv))


def _spiegelhalter_from_sums(num: float, var: float) -> SpiegelhalterResult:
    """Z and its p-value from sum w (y - p)(1 - 2p) and sum w^2 (1 - 2p)^2 p (1 - p) (mergeable sums)."""
    if not var > 0:
        raise InputError(
            "Spiegelhalter's Z is undefined here: its null variance is zero because every prediction "
            "(with positive weight) is 0, 0.5 or 1. Use another calibration measure for such scores."
        )
    z = float(num / np.sqrt(var))
    return SpiegelhalterResult(z, float(2.0 * stats.norm.sf(abs(z))))


@dataclass(frozen=True)
class InterceptSlopeResult:
    """Logistic recalibration of a binary view; unpacks as ``(intercept, slope)``.

    Attributes
    ----------
    intercept, intercept_se, intercept_low, intercept_high, intercept_p_value
        Calibration-in-the-large: ``a`` in ``logit P(y=1) = a + logit(p)``
        (offset model); 0 when calibrated in the large. Wald interval and the
        Wald test of ``a = 0``.
    slope, slope_se, slope_low, slope_high, slope_p_value
        Calibration slope: ``b`` in ``logit P(y=1) = c + b * logit(p)``; 1 when
        calibrated, < 1 for over-confident (too extreme) predictions. Wald
        interval and the Wald test of ``b = 1``. NaN if ``logit(p)`` separates
        the outcomes (the maximum-likelihood slope is infinite).
    slope_model_intercept
        ``c`` of the slope model (not a calibration-in-the-large measure).
    confidence
        Level of the intervals.
    """

    intercept: float
    intercept_se: float
    intercept_low: float
    intercept_high: float
    intercept_p_value: float
    slope: float
    slope_se: float
    slope_low: float
    slope_high: float
    slope_p_value: float
    slope_model_intercept: float
    confidence: float

    def __iter__(self):
        return iter((self.intercept, self.slope))


def _offset_root(y: np.ndarray, offset: np.ndarray, w) -> float:
    """The intercept a solving sum w (y - expit(a + offset)) = 0, by bracketing (the sum falls from sum w y > 0 to
    -sum w (1 - y) < 0 as a grows, both classes present): IRLS from any start can run off where the offsets are
    far from 0 and the sum is flat (scores of exactly 0 or 1: offsets of -+27.6)."""
    from scipy.optimize import brentq

    weight = np.ones_like(offset) if w is None else w

    def score(a):
        return float(weight @ (y - special.expit(a + offset)))

    lo, hi = -1.0, 1.0
    s_lo, s_hi = score(lo), score(hi)
    while s_lo <= 0 and lo > -1e4:
        lo *= 2
        s_lo = score(lo)
    while s_hi >= 0 and hi < 1e4:
        hi *= 2
        s_hi = score(hi)
    return brentq(score, lo, hi, xtol=1e-12) if s_lo > 0 > s_hi else 0.0


def _separates(x: np.ndarray, y: np.ndarray) -> bool:
    """True if a threshold on x (quasi-)completely separates y (MLE slope infinite)."""
    x0, x1 = x[y == 0], x[y == 1]
    return bool(x0.max() <= x1.min() or x1.max() <= x0.min())


def calibration_intercept_slope(
    y_true, y_prob, *, sample_weight=None, confidence: float = 0.95
) -> InterceptSlopeResult:
    """Calibration intercept (calibration-in-the-large) and calibration slope.

    Two binomial GLMs with logit link (maximum likelihood by damped Newton steps,
    :func:`calibviz.metrics.logistic.logistic_fit`) on ``L = logit(p)``:

    * intercept: ``logit P(y=1) = a + L`` (``L`` as offset); ``a = 0`` iff the
      mean prediction matches the observed rate in the logistic sense;
    * slope: ``logit P(y=1) = c + b * L``; ``b = 1`` for calibrated scores,
      ``b < 1`` when predictions are too extreme (over-confident), ``b > 1``
      when too moderate.

    Predictions of exactly 0 or 1 are clipped to ``[1e-12, 1 - 1e-12]``
    (:data:`LOGIT_CLIP`) before the logit, which keeps them finite but very
    influential; drop such rows if they are artefacts.

    Degenerate inputs: if ``y_true`` has one class only, neither model has a
    finite fit and :class:`~calibviz.InputError` is raised. If the logits
    (quasi-)completely separate the outcomes (including constant
    predictions), the slope's maximum-likelihood estimate does not exist: the
    slope fields are NaN and a ``RuntimeWarning`` says so, while the
    intercept (always finite with both classes present) is still reported.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Outcomes in {0, 1}.
    y_prob : array-like of shape (n,)
        Predicted probabilities of the outcome 1, in [0, 1].
    sample_weight : array-like of shape (n,), optional
        Non-negative weights of the rows, one observation each: the fit
        weights the likelihood, and the standard errors are those of the
        weighted estimating equation, A^-1 B A^-1 with w^2 in B (see the
        module's docstring); unweighted they are the usual ones.
    confidence : float, default 0.95
        Level of the Wald intervals, in (0, 1).

    Returns
    -------
    InterceptSlopeResult
        Unpacks as ``(intercept, slope)``; standard errors, intervals and
        p-values are attributes.

    References
    ----------
    D. R. Cox, "Two further applications of a model for binary regression",
    Biometrika 45(3/4), 1958 (logistic recalibration, the slope);
    B. Van Calster et al., "A calibration hierarchy for risk models was
    defined: from utopia to empirical data", J. Clin. Epidemiol. 74, 2016,
    Sec. 2 (calibration-in-the-large as the offset model's intercept).

    Examples
    --------
    >>> import numpy as np
    >>> from calibviz.metrics import calibration_intercept_slope
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(0.05, 0.95, 20000)
    >>> y = rng.random(20000) < p
    >>> res = calibration_intercept_slope(y, p)
    >>> abs(res.intercept) < 0.05, abs(res.slope - 1) < 0.1
    (True, True)
    >>> # squashing the scores towards 0.5 makes them too moderate: slope > 1
    >>> intercept, slope = calibration_intercept_slope(y, 0.5 + 0.5 * (p - 0.5))
    >>> slope > 1.5
    True
    """

    if not (np.isfinite(confidence) and 0 < confidence < 1):
        raise InputError(f"confidence must lie strictly between 0 and 1, got {confidence!r}.")
    y, p, w = check_binary(y_true, y_prob, sample_weight, min_samples=2)
    if w is not None:
        # Zero-weight rows carry no information; dropping them keeps the
        # separation check and the fits' sums honest.
        keep = w > 0
        y, p, w = y[keep], p[keep], w[keep]
    if y.min() == y.max():
        raise InputError(
            f"y_true contains only {int(y[0])}s (among rows with positive weight); the calibration intercept "
            "and slope need both outcomes. Use a sample that contains positives and negatives."
        )
    logit = special.logit(np.clip(p, LOGIT_CLIP, 1.0 - LOGIT_CLIP))
    z = stats.norm.ppf(0.5 + confidence / 2.0)

    # damped Newton (calibviz.metrics.logistic: statsmodels' IRLS ran off on some inputs), the intercept from the
    # root of its score equation, the slope from the calibrated model's (0, 1)
    ones = np.ones((y.size, 1))
    try:
        beta_a = logistic_fit(ones, y, w, offset=logit, start=[_offset_root(y, logit, w)])
    except InputError:  # pragma: no cover - both classes present: the intercept's likelihood has a maximum
        raise InputError("the calibration intercept's fit did not converge; check the predictions for extreme "
                         "values (exactly 0 or 1 where the outcome is the other).") from None
    a, a_se = float(beta_a[0]), float(_standard_errors(beta_a, ones, w, logit)[0])

    if _separates(logit, y):
        warnings.warn(
            "calibration slope undefined: the predictions (quasi-)completely separate the outcomes "
            "(or are constant), so the logistic recalibration slope has no finite maximum-likelihood "
            "estimate; slope fields are NaN.",
            RuntimeWarning,
            stacklevel=2,
        )
        b = b_se = c = np.nan
    else:
        X = np.column_stack([np.ones_like(logit), logit])
        try:
            c, b = (float(v) for v in logistic_fit(X, y, w, start=[0.0, 1.0]))
            b_se = float(_standard_errors(np.array([c, b]), X, w)[1])
        except InputError:  # pragma: no cover - without separation the likelihood has a maximum
            warnings.warn("calibration slope: the logistic fit did not converge; slope fields are NaN.",
                          RuntimeWarning, stacklevel=2)
            b = b_se = c = np.nan

    return InterceptSlopeResult(
        intercept=a,
        intercept_se=a_se,
        intercept_low=a - z * a_se,
        intercept_high=a + z * a_se,
        intercept_p_value=float(2.0 * stats.norm.sf(abs(a / a_se))),
        slope=b,
        slope_se=b_se,
        slope_low=b - z * b_se,
        slope_high=b + z * b_se,
        slope_p_value=float(2.0 * stats.norm.sf(abs((b - 1.0) / b_se))),
        slope_model_intercept=c,
        confidence=float(confidence),
    )
