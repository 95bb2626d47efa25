"""Which bootstrap interval each metric gets, chosen by a coverage study.

This module is the one place that records, for every metric of the panel
(keys of :data:`calibviz.panel.BINARY_METRICS` and
:data:`calibviz.panel.MULTICLASS_METRICS` that are bootstrapped), how
:func:`calibviz.metrics.bootstrap` should bound it. The choice comes from
``benchmarks/coverage_study.py``; its table, the models and the reasoning
are in ``docs/intervals.md``. Target: a nominal 95% interval contains the
population value of a miscalibrated model 93-97% of the time, and the value
shown with an interval lies inside it.

Summary of the choices (coverage of 95% intervals, miscalibrated models,
n = 500 / 5,000 / 50,000; see docs/intervals.md for every cell):

``"bias_corrected"`` (basic interval + bias-corrected estimate)
    ECE, ACE, RMSCE, Brier reliability, confidence / top-label / class-wise
    ECE, smECE, ICI. Every one is a sum of ``|noisy gap|`` (or a smoothed
    version), biased upward by about the noise of the gaps. The percentile
    interval inherits that bias twice (it never contained the population
    ECE of the mildly miscalibrated model at n = 500; top-label and
    class-wise ECE at n = 500: 0%), and BCa cannot move below the smallest
    resampled value. The basic interval removes the bias the bootstrap sees
    and is centred on the bias-corrected estimate, which is therefore the
    value to show with it (the plain estimate often lies above that
    interval). Coverage still falls short of 93% where the true gaps are as
    small as their noise (mild miscalibration at small n): the bootstrap
    then misjudges the bias (docs/intervals.md, "when no interval is
    right").
``"percentile"``
    Brier score and log loss (means of a per-row loss: every method covers
    93-97%; the percentile interval needs no jackknife and always contains
    the estimate); debiased ECE (Kumar et al.'s estimator is already
    unbiased for the squared error, so the basic interval would remove the
    bias a second time and under-cover); TCE and class-wise TCE (their
    estimand depends on n; the basic interval over-corrects).
``"percentile"``, one-sided upper bound (``alternative="less"``)
    MCE and top-label MCE. A maximum over bins is dominated by the emptiest
    bin: at these sizes its estimate is several times its population value
    and no two-sided interval covers it (0-60%); the one-sided bound is
    valid (it covers) but conservative. Show it as "at most", with the
    calibrated-model reference.

For a perfectly calibrated model every calibration error is 0, on the
boundary of its range, where no bootstrap interval can cover; the dashboard
shows the calibrated-model reference (:func:`calibviz.metrics.consistency_test`)
for that question.

Examples
--------
>>> from calibviz.metrics.intervals import interval_method, interval_options
>>> interval_method("ece"), interval_method("brier")
('bias_corrected', 'percentile')
>>> interval_options("mce")
{'method': 'percentile', 'alternative': 'less', 'bounds': (0.0, 1.0)}
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError

__all__ = ["IntervalChoice", "INTERVALS", "METHOD_BY_METRIC", "interval_method", "interval_options", "metric_bounds"]


@dataclass(frozen=True)
class IntervalChoice:
    """How one metric is bounded.

    Attributes
    ----------
    method : str
        ``method=`` of :func:`calibviz.metrics.bootstrap`.
    alternative : str
        ``"two-sided"`` or ``"less"`` (a one-sided upper bound).
    bounds : tuple
        The metric's range, passed as ``bounds=`` (clips the basic interval
        and the debiased estimate into it).
    reason : str
        One line: why, with the coverage the study measured.
    """

    method: str
    alternative: str = "two-sided"
    bounds: tuple = (0.0, 1.0)
    reason: str = ""


_BIAS = "biased upward by the noise of the bin gaps; the basic interval removes the bias, the shown value is the debiased one"

#: metric key -> :class:`IntervalChoice` (the one record of the choice; docs/intervals.md has the evidence).
INTERVALS: dict[str, IntervalChoice] = {
    "ece": IntervalChoice("bias_corrected", reason=_BIAS),
    "ace": IntervalChoice("bias_corrected", reason=_BIAS),
    "rmsce": IntervalChoice("bias_corrected", reason=_BIAS),
    "brier_reliability": IntervalChoice("bias_corrected", reason=_BIAS),
    "confidence_ece": IntervalChoice("bias_corrected", reason=_BIAS),
    "top_label_ece": IntervalChoice("bias_corrected", reason=_BIAS),
    "classwise_ece": IntervalChoice("bias_corrected", reason=_BIAS),
    "smooth_ece": IntervalChoice("bias_corrected", reason="smoothed |gap|: biased upward like ECE"),
    "ici": IntervalChoice("bias_corrected", reason="mean |LOESS gap|: biased upward like ECE"),
    "mce": IntervalChoice("percentile", "less", reason="a maximum over bins: no two-sided interval covers"),
    "top_label_mce": IntervalChoice("percentile", "less", reason="a maximum over bins: no two-sided interval covers"),
    "debiased_ece": IntervalChoice("percentile", reason="already debiased: the basic interval would correct twice"),
    "tce": IntervalChoice("percentile", bounds=(0.0, 100.0), reason="estimand depends on n; basic over-corrects"),
    "classwise_tce": IntervalChoice("percentile", bounds=(0.0, 100.0), reason="as TCE"),
    "brier": IntervalChoice("percentile", reason="mean of a per-row loss: every method covers"),
    "log_loss": IntervalChoice("percentile", bounds=(0.0, None), reason="mean of a per-row loss: every method covers"),
    "mcb": IntervalChoice("bias_corrected", reason="CORP miscalibration: the PAV fit follows the noise, as bins do"),
    "dsc": IntervalChoice("bias_corrected", reason="CORP discrimination: the PAV fit follows the noise"),
    "unc": IntervalChoice("percentile", reason="a smooth function of the prevalence: every method covers"),
    "accuracy": IntervalChoice("percentile", reason="a mean of 0/1 outcomes: every method covers"),
    "auc": IntervalChoice("percentile", reason="a U-statistic: every method covers"),
}

#: metric key -> bootstrap method name (a view of :data:`INTERVALS`).
METHOD_BY_METRIC: dict[str, str] = {k: v.method for k, v in INTERVALS.items()}


def _choice(key: str) -> IntervalChoice:
    try:
        return INTERVALS[key]
    except (KeyError, TypeError):
        raise InputError(
            f"no bootstrap interval is recorded for metric {key!r} (tests and the logistic fit have their own "
            f"p-values or Wald intervals); metrics with one: {', '.join(INTERVALS)}."
        ) from None


def interval_method(key: str) -> str:
    """The bootstrap method chosen for a metric of the panel.

    Parameters
    ----------
    key : str
        A key of :data:`calibviz.panel.BINARY_METRICS` or
        :data:`calibviz.panel.MULTICLASS_METRICS` that is bootstrapped.

    Returns
    -------
    str
        One of :data:`calibviz.metrics.INTERVAL_METHODS`.

    Raises
    ------
    InputError
        For a metric without a bootstrap interval (Hosmer-Lemeshow,
        Spiegelhalter Z, calibration slope and intercept) or an unknown key.

    References
    ----------
    docs/intervals.md (the coverage study); B. Efron and R. J. Tibshirani,
    *An Introduction to the Bootstrap*, 1993; A. C. Davison and D. V.
    Hinkley, *Bootstrap Methods and their Application*, 1997.

    Examples
    --------
    >>> interval_method("classwise_ece")
    'bias_corrected'
    """
    return _choice(key).method


def metric_bounds(key: str) -> tuple:
    """The range of a metric, as ``bounds=`` for :func:`calibviz.metrics.bootstrap`.

    Examples
    --------
    >>> metric_bounds("tce"), metric_bounds("log_loss")
    ((0.0, 100.0), (0.0, None))
    """
    return _choice(key).bounds


def interval_options(key: str) -> dict:
    """Keyword arguments for :func:`calibviz.metrics.bootstrap` that give a metric its chosen interval.

    Examples
    --------
    >>> import numpy as np
    >>> from calibviz.metrics import bootstrap, ece
    >>> rng = np.random.default_rng(0)
    >>> p = rng.beta(2, 5, 2000); y = (rng.random(2000) < p).astype(int)
    >>> res = bootstrap(ece, y, p, n_resamples=200, random_state=0, **interval_options("ece"))
    >>> res.method, bool(res.low <= res.point <= res.high), bool(res.point < res.estimate)
    ('bias_corrected', True, True)
    """
    c = _choice(key)
    return {"method": c.method, "alternative": c.alternative, "bounds": c.bounds}
