"""Which bootstrap interval each metric gets, chosen by a coverage study.

This module is the one place that records, for every bootstrapped metric of
the panel (keys of :data:`calibviz.panel.BINARY_METRICS` and
:data:`calibviz.panel.MULTICLASS_METRICS`), how
:func:`calibviz.metrics.bootstrap` should bound it. The evidence is
``benchmarks/coverage_study.py``, whose tables, models and reasoning are in
``docs/intervals.md``. Target: a nominal 95% interval contains the population
value of a miscalibrated model 93-97% of the time, and the value shown with
an interval lies inside it.

Summary (coverage in percent of 95% intervals, ranges over the models whose
population value is not on the boundary, n = 500 / 5,000 / 50,000, B = 200):

``"bias_corrected"`` (basic interval, shown with the bias-corrected estimate)
    ECE (82-89 / 91-94 / 91-95), ACE, RMSCE, Brier reliability, smECE, ICI,
    CORP MCB and DSC, confidence / top-label / class-wise ECE. Each adds up
    absolute (or squared, or smoothed, or isotonic-fitted) gaps of noisy
    rates, so the plug-in value is biased upward by about the noise. The
    percentile interval carries that bias twice (ECE 0-62 / 70-89 / 88-96;
    top-label and class-wise ECE at n = 500: 0) and BCa cannot reach below
    the smallest resampled value. The basic interval removes the bias the
    bootstrap sees and is centred on the bias-corrected estimate
    (``BootstrapResult.debiased``), which it always contained in the study;
    the plain estimate often lies above it, and is then shown with a
    sentence saying why. From n = 5,000 the coverage is 89-96 (within
    about two Monte Carlo standard errors of the target; smECE 85-95, MCB
    76-94); at n = 500 it is 76-94: with about 30 rows per bin a single
    bootstrap misjudges the bias.
``"percentile"``
    Brier score, log loss, UNC, accuracy, AUC (means and U-statistics: every
    method covers 89-98); debiased ECE (Kumar et al.'s estimator is already
    unbiased for the squared error: percentile 76-84 / 85-91 / 92-99, while
    the basic interval removes the bias a second time, 51-74 at n = 500);
    TCE and class-wise TCE (estimand depends on n; a resample repeats rows,
    which makes its binomial tests reject more, so the bootstrap "bias" is
    an artefact and the basic interval fails, 40-70 at n = 500; percentile
    90-100 / 93-95 / 100).
``"percentile"`` one-sided upper bound (``alternative="less"``)
    MCE and top-label MCE. A maximum over bins is ruled by the emptiest bin:
    its estimate is 2-10 times its population value at these sizes and no
    two-sided interval covers it (at best 49-90); the upper bound covers
    (100) but is conservative. Show it as "at most".

For a perfectly calibrated model every calibration error is 0, on the
boundary of its range, where no bootstrap interval can cover; the
calibrated-model reference (:func:`calibviz.metrics.consistency_test`)
answers that question.

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


_GAPS = "sum of noisy gaps, biased upward; percentile"

#: metric key -> :class:`IntervalChoice` (the one record of the choice; docs/intervals.md has the evidence).
#: A reason says why, with the coverage (percent, n = 500 / 5,000 / 50,000) of the best alternative.
INTERVALS: dict[str, IntervalChoice] = {
    "ece": IntervalChoice("bias_corrected", reason=f"{_GAPS} 0-62 / 70-89 / 88-96"),
    "ace": IntervalChoice("bias_corrected", reason=f"{_GAPS} 0-33 / 48-90 / 89-94"),
    "rmsce": IntervalChoice("bias_corrected", reason=f"{_GAPS} 0-24 / 20-79 / 79-96"),
    "brier_reliability": IntervalChoice("bias_corrected",
                                        reason=f"{_GAPS} 0-24 / 20-79 / 79-96"),
    "smooth_ece": IntervalChoice("bias_corrected",
                                 reason="smoothed gaps, biased upward; percentile 0-89 / 80-96 / 88-98"),
    "ici": IntervalChoice("bias_corrected",
                          reason="smoothed gaps, as smECE; percentile 55-92 / 90 (20-40 replications per cell: "
                          "thin evidence)"),
    "mcb": IntervalChoice("bias_corrected",
                          reason="the PAV fit follows the noise (n <= 5,000 studied); percentile 0 / 0-28"),
    "dsc": IntervalChoice("bias_corrected",
                          reason="the PAV fit follows the noise (n <= 5,000 studied); percentile 41-62 / 64-68"),
    "confidence_ece": IntervalChoice("bias_corrected", reason=f"{_GAPS} 84 / 93 / 98"),
    "top_label_ece": IntervalChoice("bias_corrected", reason=f"{_GAPS} 0 / 82 / 95 (K x 15 cells)"),
    "classwise_ece": IntervalChoice("bias_corrected", reason=f"{_GAPS} 0 / 74 / 98"),
    "mce": IntervalChoice("percentile", "less",
                          reason="a max over bins, ruled by the emptiest bin: no two-sided interval covers "
                          "(best: basic 49-64 / 54-82 / 71-90); the bound is conservative"),
    "top_label_mce": IntervalChoice("percentile", "less",
                                    reason="as MCE; two-sided at best 57 / 66 / 48"),
    "debiased_ece": IntervalChoice("percentile",
                                   reason="already debiased: basic corrects twice, 51-74 / 68-92 / 86-98"),
    "tce": IntervalChoice("percentile", bounds=(0.0, 100.0),
                          reason="repeated rows inflate a resample's TCE, so the bootstrap bias is an artefact: "
                          "basic 40-70 / 53-82 / 85"),
    "classwise_tce": IntervalChoice("percentile", bounds=(0.0, 100.0),
                                    reason="as TCE (one cell studied, 20 replications: basic 70, BCa 80, all +- 10)"),
    "brier": IntervalChoice("percentile", reason="a mean: every method covers, percentile needs no jackknife"),
    "log_loss": IntervalChoice("percentile", bounds=(0.0, None),
                               reason="a mean: every method covers, percentile needs no jackknife"),
    "unc": IntervalChoice("percentile", reason="a smooth function of the prevalence: every method covers"),
    "accuracy": IntervalChoice("percentile", reason="a mean: every method covers"),
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
