"""The metric panel: named metrics with bootstrap intervals and plain-language readings.

One registry of metrics serves the dashboard, the HTML report and the CLI
(``--fail-above ECE=0.05``), so a metric is named, computed and explained in
one place. Every value comes from :mod:`calibviz.metrics`; this module only
chooses the options (binning, alpha) from one :class:`PanelConfig` and
attaches intervals and readings.
"""
from __future__ import annotations

import contextvars
import math
import re
import warnings
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np
import pandas as pd

from . import metrics as M
from .binning import PAVABC, Custom, EqualMass, Uniform, get_scheme
from .errors import InputError
from .metrics.consistency import redraws_needed  # noqa: F401 (re-exported: the panel's rule for its redraws)
from .metrics.binned import HL_MIN_EXPECTED  # the panel's rule for HL's chi-square (also read from here)
from .metrics.intervals import bootstrap_metric, coverage_note
from .metrics.scores import LOG_LOSS_EPS
from .stats import bound_digits, holm_adjusted, p_value_digits
from .validation import check_binary, check_multiclass

__all__ = ["PanelConfig", "MetricSpec", "at_alpha", "BINARY_METRICS", "DEFAULT_BINARY_METRICS", "MULTICLASS_METRICS",
           "DEFAULT_MULTICLASS_METRICS", "metric_panel", "metric_value", "compare_models", "config_key",
           "costly_reference", "format_value", "format_difference", "format_interval", "format_p_value",
           "interval_caption"]


@dataclass(frozen=True)
class PanelConfig:
    """Options shared by the metrics of a panel.

    Attributes
    ----------
    binning : str
        Scheme name for ECE / MCE / RMSCE / Brier decomposition (see
        :func:`calibviz.binning.get_scheme`).
    n_bins : int
        Bins for "uniform" / "equal_mass" schemes and for ACE.
    alpha : float
        Level of the TCE tests and of every verdict against a calibrated
        model, in (0, 0.5) (the verdict's range is the central ``1 - 2
        alpha`` of the redraws; intervals are at ``1 - alpha``).
    n_min, n_max : int or None
        PAVA-BC constraints of TCE; None gives N // 20 and N // 5.

    Examples
    --------
    >>> PanelConfig(alpha=0.6)
    Traceback (most recent call last):
    ...
    calibviz.errors.InputError: alpha = 0.6: a significance level must lie strictly between 0 and 0.5, e.g. 0.05.
    """

    binning: str = "uniform"
    n_bins: int = 15
    alpha: float = 0.05
    n_min: int | None = None
    n_max: int | None = None

    def __post_init__(self):
        if not 0 < self.alpha < 0.5:  # a one-sided test at 0.5 or more says "evidence" for a median value
            raise InputError(f"alpha = {self.alpha:g}: a significance level must lie strictly between 0 and 0.5, "
                             "e.g. 0.05.")

    def scheme(self):
        if self.binning in ("pavabc", "pava_bc"):
            return PAVABC(self.n_min, self.n_max)
        return get_scheme(self.binning, n_bins=self.n_bins)


def format_value(value: float, unit: str) -> str:
    """A metric value as shown in tables: percent with 2 decimals, probabilities with 4.

    Examples
    --------
    >>> format_value(0.01234, "probability"), format_value(3.14159, "percent"), format_value(float("nan"), "z")
    ('0.0123', '3.14%', 'n/a')
    >>> format_value(-4.673e-05, "score"), format_value(0.114, "score"), format_value(2e-9, "score")
    ('-0.00004673', '0.1140', '2e-09')
    """
    if value is None or not np.isfinite(value):
        return "n/a"
    if abs(value) < 1e-12:  # rounding noise of a zero (a statistic of 4.9e-29, an intercept of -1.4e-17)
        value = 0.0
    if unit == "percent":
        return f"{value:.2f}%"
    if unit == "probability":
        return f"{value:.4f}"
    if 1e-6 <= abs(value) < 1e-4:  # positional, as the values beside it ('-0.00004673', not '-4.673e-05')
        return np.format_float_positional(value, precision=4, unique=False, fractional=False, trim="-")
    if unit == "score" and 1e-4 <= abs(value) < 1e4:
        # four significant digits kept: 'Brier score 0.1140 vs 0.1215' (it read '0.114 vs 0.1215')
        return f"{value:#.4g}".rstrip(".")
    return f"{value:.4g}"


def format_difference(value: float, unit: str) -> str:
    """A difference of two values in the unit's format with an explicit sign; a difference of percentages (TCE)
    in percentage points, which is what it is (TCE 5% against 85% is 80 points apart, not 80% apart).

    Examples
    --------
    >>> format_difference(35.214, "percent"), format_difference(-0.0123, "probability"), format_difference(0, "z")
    ('+35.21 pp', '-0.0123', '0')

    A difference of scores (Brier score, log loss) below 0.001 keeps two significant digits: the four of a value
    read "+0.0009280, interval 0.0006552 to 0.001201" beside values of four decimals (a walk-through); from 0.001
    on it has the values' four decimals.

    >>> format_difference(0.000928, "score"), format_difference(-0.005253, "score"), format_difference(4.7e-5, "score")
    ('+0.00093', '-0.0053', '+0.000047')
    """
    if value is None or not np.isfinite(value):
        return "n/a"
    if abs(value) < 1e-12:
        value = 0.0
    if unit == "percent":
        return f"{value:+.2f} pp" if value else "0.00 pp"
    if unit == "score" and 1e-6 <= abs(value) < 1.0:
        if abs(value) >= 1e-3:
            return f"{value:+.4f}"
        return ("+" if value > 0 else "") + np.format_float_positional(value, precision=2, unique=False,
                                                                        fractional=False, trim="-")
    return ("+" if value > 0 else "") + format_value(value, unit)


def format_interval(low: float, high: float, unit: str, *, difference: bool = False) -> str:
    """An interval as ``low – high`` in the unit's format; a one-sided bound (the other end infinite) as
    ``at most high`` / ``at least low``; '' when there is none. ``difference``: the interval of a difference,
    its ends signed (:func:`format_difference`).

    Examples
    --------
    >>> format_interval(0.011, 0.02, "probability"), format_interval(float("nan"), 1.0, "percent")
    ('0.0110 – 0.0200', '')
    >>> format_interval(-np.inf, 0.2734, "probability")
    'at most 0.2734'
    >>> format_interval(-76.86, -44.34, "percent", difference=True)
    '-76.86 pp – -44.34 pp'
    """
    if low is None or high is None or np.isnan(low) or np.isnan(high):
        return ""
    fmt = format_difference if difference else format_value
    if np.isneginf(low) and np.isfinite(high):
        return f"at most {fmt(high, unit)}"
    if np.isposinf(high) and np.isfinite(low):
        return f"at least {fmt(low, unit)}"
    if not (np.isfinite(low) and np.isfinite(high)):
        return ""
    return f"{fmt(low, unit)} – {fmt(high, unit)}"


def _pct(v: float) -> str:
    """A probability gap in percentage points: one decimal from 1 point on, two significant digits below (an ECE
    of 0.0007 read 'off by 0.1 percentage points' beside a table's 0.0007, a walk-through), 'less than 0.005'
    below that.

    >>> _pct(0.0234), _pct(0.0007), _pct(0.00351), _pct(0.001), _pct(0.00002)
    ('2.3 percentage points', '0.070 percentage points', '0.35 percentage points', '0.10 percentage points', \
'less than 0.005 percentage points')
    """
    points = 100 * abs(v)
    if points < 0.005:
        return "less than 0.005 percentage points"
    return f"{100 * v:.1f} percentage points" if points >= 0.995 else f"{100 * v:#.2g} percentage points"


@dataclass(frozen=True)
class MetricSpec:
    """How to compute, bound and explain one metric."""

    key: str
    label: str
    compute: Callable  # (y, p, w, cfg) -> float
    description: str
    reading: Callable  # (value, context dict) -> str
    unit: str = "probability"
    lower_is_better: bool = True
    bootstrap: bool = True
    p_value: Callable | None = None  # (y, p, w, cfg) -> float: the p-value of a test's own reference
    depends: tuple = ()  # the PanelConfig fields the value depends on (for caching)
    # (cfg) -> (name, options) of calibviz.metrics.consistency_test: the calibrated-model reference; None
    # for metrics that are not "larger = worse calibrated" (slope, intercept: their Wald test is the reference)
    reference: Callable | None = None
    # (samples, cfg) -> values: the metric on many (y, p, w) samples at once where that is faster (TCE tests
    # the bins of all its bootstrap resamples together); identical to calling ``compute`` on each
    compute_many: Callable | None = None
    # (value) -> the direction a value names ("the predictions are too extreme"): said only with a verdict of
    # evidence (the sign of a calibrated model's slope or intercept is a coin toss: "too extreme" stood beside
    # "no evidence" on half of them, an audit)
    direction: Callable | None = None


#: The logistic recalibration fits of one :func:`metric_panel` call, keyed on its arrays and confidence: the
#: slope and intercept rows read one fit for value, Wald interval and test (six fits of ~1 s at 10^6 rows were two).
_PANEL_FITS: contextvars.ContextVar = contextvars.ContextVar("calibviz_panel_fits", default=None)


def _logistic_fit(y, p, w, confidence: float = 0.95):
    """:func:`calibviz.metrics.calibration_intercept_slope` without its warning that the slope is undefined:
    the panel's reading says so, once, where the warning came once per fit (value, interval, test)."""
    fits = _PANEL_FITS.get()
    key = (id(y), id(p), id(w), confidence)
    hit = None if fits is None else fits.get(key)
    if hit is not None and hit[0] is y and hit[1] is p and hit[2] is w:  # the memo holds the arrays: ids not reused
        return hit[3]
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="calibration slope undefined", category=RuntimeWarning)
        fit = M.calibration_intercept_slope(y, p, sample_weight=w, confidence=confidence)
    if fits is not None:
        fits[key] = (y, p, w, fit)
    return fit


def _worst_bin_reading(v: float, ctx: dict) -> str:
    """MCE's reading: the worst bin named with its size, so a gap from a handful of rows reads as such."""
    worst = ctx.get("worst_bin")
    if worst is None:
        return f"In the worst bin, predictions are off by {_pct(v)}."
    rows = int(worst["n"])
    size = f"{rows:,} row" + ("" if rows == 1 else "s")
    small = "; a small bin, whose gap is mostly noise" if rows < 30 else ""
    mean, rate = float(worst["mean_pred"]), float(worst["obs_rate"])
    # the digits that set the two apart ("mean prediction 0.63, observed rate 0.63 ... off by 0.8 percentage
    # points" read as a contradiction, a walk-through)
    digits = next((d for d in range(2 if abs(mean - rate) >= 0.05 else 3, 7) if f"{mean:.{d}f}" != f"{rate:.{d}f}"), 3)
    # a calibrated model's MCE is the largest gap of its noisiest bins: beside a large worst bin, a calibrated range
    # set by a bin of 16 rows read as if this bin's 9.6 points over 353,265 rows were nearly normal (a walk-through)
    smallest = int(worst.get("smallest", rows))
    noisy = (f" MCE is the largest gap over all bins, so bins of few rows widen what a calibrated model would show "
             f"(the smallest here holds {smallest:,} row{'' if smallest == 1 else 's'}): a gap over this many rows "
             "is weighed in the per-bin table and the diagram's band." if 10 * smallest <= rows and rows >= 30 else "")
    return (f"In the worst bin ({size}, mean prediction {mean:.{digits}f}, observed rate "
            f"{rate:.{digits}f}{small}), predictions are off by {_pct(v)}.{noisy}")


def _share(part: float, whole: float) -> str:
    """'3%' / '0.4%': a part of a whole in percent, one decimal below 10%.

    Examples
    --------
    >>> _share(0.004, 0.134), _share(0.05, 0.2)
    ('3.0%', '25%')
    """
    x = 100 * part / whole
    return f"{x:.1f}%" if abs(x) < 10 else f"{x:.0f}%"


def _mcb_reading(v: float, ctx: dict) -> str:
    """'Miscalibration costs 3.0% of the Brier score (0.134); ...' (shown after 'MCB = 0.004')."""
    d = ctx.get("corp")
    share = (f"Miscalibration costs {_share(v, d.score)} of the Brier score ({format_value(d.score, 'score')})"
             if d is not None and d.score > 0 else "Miscalibration's part of the Brier score")
    return f"{share}; isotonic recalibration would remove it without changing the ranking."


def _dsc_reading(v: float, ctx: dict) -> str:
    d = ctx.get("corp")
    if d is None or d.uncertainty <= 0:
        return "What ranking the cases is worth in Brier score; higher is better."
    return (f"Ranking the cases removes {_share(v, d.uncertainty)} of the "
            f"uncertainty ({format_value(d.uncertainty, 'score')}, the Brier score of always predicting the base "
            "rate); higher is better.")


def _tce_options(cfg) -> dict:
    """TCE's options in a panel: PAVA-BC with the panel's bin sizes, the panel's alpha."""
    return {"binning": PAVABC(cfg.n_min, cfg.n_max), "alpha": cfg.alpha}


def _tce(y, p, w, cfg):
    return M.tce(y, p, sample_weight=w, **_tce_options(cfg))


BINARY_METRICS: dict[str, MetricSpec] = {s.key: s for s in [
    MetricSpec(
        "ece", "ECE", lambda y, p, w, c: M.ece(y, p, binning=c.scheme(), sample_weight=w),
        "Expected calibration error: bin-weighted mean |observed rate - mean prediction| (Naeini et al. 2015).",
        lambda v, ctx: f"On average, predictions are off by {_pct(v)} from the observed rate in their bin.",
    ),
    MetricSpec(
        "ace", "ACE", lambda y, p, w, c: M.ace(y, p, n_bins=c.n_bins, sample_weight=w),
        "Adaptive ECE: ECE on equal-mass bins (Nixon et al. 2019).",
        lambda v, ctx: f"With equally filled bins, predictions are off by {_pct(v)} on average.",
    ),
    MetricSpec(
        "mce", "MCE", lambda y, p, w, c: M.mce(y, p, binning=c.scheme(), sample_weight=w),
        "Maximum calibration error: the largest |observed rate - mean prediction| over non-empty bins.",
        lambda v, ctx: _worst_bin_reading(v, ctx),
    ),
    MetricSpec(
        "rmsce", "RMSCE", lambda y, p, w, c: M.ece(y, p, binning=c.scheme(), norm="l2", sample_weight=w),
        "Root of the bin-weighted mean squared gap (ECE with the L2 norm).",
        lambda v, ctx: f"The root-mean-square gap between predictions and observed rates is {_pct(v)}.",
    ),
    MetricSpec(
        "debiased_ece", "Debiased ECE", lambda y, p, w, c: M.debiased_ece(y, p, binning=EqualMass(c.n_bins),
                                                                         sample_weight=w),
        "L2 calibration error with the binning bias removed (Kumar, Liang & Ma 2019), equal-mass bins.",
        lambda v, ctx: f"After removing the noise of finite bins, the L2 calibration error is {_pct(v)}.",
    ),
    MetricSpec(
        "tce", "TCE", _tce,
        "Test-based calibration error: percentage of predictions that a binomial test rejects against their "
        "PAVA-BC bin's observed rate (Matsubara et al. 2023).",
        lambda v, ctx: (f"{format_value(v, 'percent')} of predictions are rejected by the binomial test against "
                        "their bin's observed rate."),
        unit="percent",
        compute_many=lambda samples, c: M.tce_many(samples, **_tce_options(c)),
    ),
    MetricSpec(
        "smooth_ece", "smECE", lambda y, p, w, c: M.smooth_ece(y, p, sample_weight=w),
        "Smooth ECE with its automatic bandwidth (Blasiok & Nakkiran 2023): no bins to choose.",
        lambda v, ctx: f"Smoothing over predictions instead of binning, predictions are off by {_pct(v)}.",
    ),
    MetricSpec(
        "ici", "ICI", lambda y, p, w, c: M.calibration_index(y, p, sample_weight=w).ici,
        "Integrated calibration index: mean |p - LOESS estimate of P(y=1 | p)| over the predictions "
        "(Austin & Steyerberg 2019); E90 and Emax in the report.",
        lambda v, ctx: f"Against a smooth (LOESS) calibration curve, predictions are off by {_pct(v)} on average.",
    ),
    MetricSpec(
        "brier", "Brier score", lambda y, p, w, c: M.brier_score(y, p, sample_weight=w),
        "Mean squared difference between prediction and outcome (0 is perfect).",
        # the value is beside the reading in every table and headline ("Brier score = 0.1378. Brier score
        # 0.1378; ..." read twice, a walk-through): the reading gives what to compare it with
        lambda v, ctx: (f"Always predicting the prevalence would score {format_value(ctx['uncertainty'], 'score')}; "
                        "lower is better."),
        unit="score",
    ),
    MetricSpec(
        "brier_reliability", "Brier reliability",
        lambda y, p, w, c: M.brier_decomposition(y, p, binning=c.scheme(), sample_weight=w).reliability,
        "Reliability term of Murphy's Brier decomposition: the calibration part of the Brier score.",
        lambda v, ctx: f"Miscalibration contributes {format_value(v, 'score')} to the Brier score.",
        unit="score",
    ),
    MetricSpec(
        "log_loss", "Log loss", lambda y, p, w, c: M.log_loss(y, p, sample_weight=w),
        "Mean negative log-likelihood of the outcomes (probabilities clipped away from 0 and 1).",
        lambda v, ctx: ("Always predicting the prevalence would score "
                        f"{format_value(M.calibrated_expectation('log_loss', [ctx['prevalence']]), 'score')}; "
                        "lower is better." + _certain_mistakes(ctx)),
        unit="score",
    ),
    MetricSpec(
        "hosmer_lemeshow", "Hosmer-Lemeshow",
        lambda y, p, w, c: M.hosmer_lemeshow(y, p, sample_weight=w).statistic,
        "Chi-square statistic over 10 groups of predicted risk (Hosmer, Lemeshow & Sturdivant 2013); its reference "
        "for fixed (held-out) predictions is chi-square with G degrees of freedom, replaced by label redraws from "
        "the predictions where a group expects fewer than 10 events or non-events (the chi-square reference then "
        "rejects calibrated models too often).",
        lambda v, ctx: ("Infinite: a group of predictions that are all exactly 0 or 1 holds outcomes that contradict "
                        "them, which a calibrated model cannot produce." if not np.isfinite(v) else
                        _hl_reading(ctx)),
        unit="statistic", bootstrap=False,
        p_value=lambda y, p, w, c: M.hosmer_lemeshow(y, p, sample_weight=w, reference="chi2").p_value,
    ),
    MetricSpec(
        "spiegelhalter_z", "Spiegelhalter Z", lambda y, p, w, c: M.spiegelhalter_z(y, p, sample_weight=w).statistic,
        "Spiegelhalter's Z test of calibration (no bins); |Z| > 1.96 rejects at 5%.",
        lambda v, ctx: f"Spiegelhalter's Z = {format_value(v, 'z')} (two-sided {p_value_words(ctx['p_value'])}).",
        unit="z", bootstrap=False, lower_is_better=False,
        p_value=lambda y, p, w, c: M.spiegelhalter_z(y, p, sample_weight=w).p_value,
    ),
    MetricSpec(
        "calibration_slope", "Calibration slope",
        lambda y, p, w, c: _logistic_fit(y, p, w).slope,
        "Slope of the logistic recalibration of logit(p): 1 is ideal, < 1 means predictions are too extreme.",
        lambda v, ctx: ("The calibration slope is undefined: the predictions separate the outcomes completely "
                        "(or are constant, or all 0 or 1), so the logistic recalibration has no finite slope."
                        if not np.isfinite(v) else f"Calibration slope {format_value(v, 'slope')} (ideal 1)."),
        unit="slope", bootstrap=False, lower_is_better=False,
        direction=lambda v: ("the predictions rank the outcomes the wrong way round (a slope below 0: is the "
                             "positive class the right one?)" if v <= 0 else
                             "the predictions are too extreme (overconfident)" if v < 1 else
                             "the predictions are too timid (underconfident)"),
    ),
    MetricSpec(
        "calibration_intercept", "Calibration-in-the-large",
        lambda y, p, w, c: _logistic_fit(y, p, w).intercept,
        "Intercept of the offset model logit P(y=1) = a + logit(p): 0 is ideal; > 0 means under-prediction.",
        lambda v, ctx: "The calibration intercept is undefined for these predictions." if not np.isfinite(v) else
        f"Calibration intercept {'+' if v > 1e-12 else ''}{format_value(v, 'logit')} (ideal 0).",
        unit="logit", bootstrap=False, lower_is_better=False,
        direction=lambda v: ("the model under-predicts the outcome on average" if v > 0 else
                             "the model over-predicts the outcome on average"),
    ),
    MetricSpec(
        "mcb", "MCB (CORP miscalibration)", lambda y, p, w, c: M.corp_decomposition(y, p, sample_weight=w).mcb,
        "Miscalibration of the CORP Brier decomposition: Brier score minus the Brier score after isotonic (PAV) "
        "recalibration; no bins to choose (Dimitriadis, Gneiting & Jordan 2021).",
        lambda v, ctx: _mcb_reading(v, ctx), unit="score",
    ),
    MetricSpec(
        "dsc", "DSC (CORP discrimination)", lambda y, p, w, c: M.corp_decomposition(y, p, sample_weight=w).dsc,
        "Discrimination of the CORP Brier decomposition: Brier score of the base rate minus that of the "
        "PAV-recalibrated predictions (higher is better).",
        lambda v, ctx: _dsc_reading(v, ctx), unit="score", lower_is_better=False,
    ),
    MetricSpec(
        "unc", "UNC (uncertainty)", lambda y, p, w, c: M.corp_decomposition(y, p, sample_weight=w).unc,
        "Uncertainty of the CORP Brier decomposition: the Brier score of always predicting the base rate, "
        "prevalence x (1 - prevalence); Brier = MCB - DSC + UNC.",
        lambda v, ctx: (f"Always predicting the base rate ({100 * ctx['prevalence']:.1f}%) would score this; "
                        "the Brier score is MCB - DSC + UNC."),
        unit="score",
    ),
    MetricSpec(
        "auc", "AUC", lambda y, p, w, c: M.roc_auc(y, p, sample_weight=w),
        "Area under the ROC curve with DeLong's (1988) interval: how well the predictions rank events above "
        "non-events (0.5 = no better than chance, 1 = perfect); says nothing about calibration.",
        lambda v, ctx: (f"A random case with the outcome gets a higher prediction than a random case without it "
                        f"{100 * v:.1f}% of the time (ties count half; 50% = chance)."),
        unit="auc", bootstrap=False, lower_is_better=False,
    ),
]}

DEFAULT_BINARY_METRICS = ("ece", "ace", "mce", "tce", "smooth_ece", "brier", "log_loss")

_SCHEME_FIELDS = ("binning", "n_bins", "n_min", "n_max")
_DEPENDS = {
    "ece": _SCHEME_FIELDS, "mce": _SCHEME_FIELDS, "rmsce": _SCHEME_FIELDS, "brier_reliability": _SCHEME_FIELDS,
    "ace": ("n_bins",), "debiased_ece": ("n_bins",), "tce": ("alpha", "n_min", "n_max"),
    "confidence_ece": _SCHEME_FIELDS, "top_label_ece": _SCHEME_FIELDS, "top_label_mce": _SCHEME_FIELDS,
    "classwise_ece": _SCHEME_FIELDS, "classwise_tce": ("alpha", "n_min", "n_max"),
}

MULTICLASS_METRICS: dict[str, MetricSpec] = {s.key: s for s in [
    MetricSpec(
        "confidence_ece", "Confidence ECE",
        lambda y, P, w, c: M.confidence_ece(y, P, binning=c.scheme(), sample_weight=w),
        "ECE of the top-class probability against 'top class correct' (Guo et al. 2017).",
        lambda v, ctx: f"The confidence is off from the accuracy by {_pct(v)} on average.",
    ),
    MetricSpec(
        "top_label_ece", "Top-label ECE",
        lambda y, P, w, c: M.top_label_ece(y, P, binning=c.scheme(), sample_weight=w),
        "ECE of the top probability within each predicted class (Gupta & Ramdas 2022, Eq. 5).",
        lambda v, ctx: (f"Within each predicted class, the confidence is off by {_pct(v)} on average: the "
                        "claim 'P(this label) = confidence' is what a user reads."),
    ),
    MetricSpec(
        "top_label_mce", "Top-label MCE",
        lambda y, P, w, c: M.top_label_mce(y, P, binning=c.scheme(), reduce="bin", sample_weight=w),
        "Largest class-weighted top-label deviation over bins (as the paper's tables report it).",
        lambda v, ctx: f"In the worst confidence bin, top-label claims are off by {_pct(v)}.",
    ),
    MetricSpec(
        "classwise_ece", "Class-wise ECE",
        lambda y, P, w, c: M.classwise_ece(y, P, binning=c.scheme(), sample_weight=w),
        "Mean over classes of the ECE of 'class k vs rest' (Kull et al. 2019).",
        lambda v, ctx: f"Per class, predicted probabilities are off by {_pct(v)} on average.",
    ),
    MetricSpec(
        "classwise_tce", "Class-wise TCE",
        lambda y, P, w, c: M.classwise_tce(y, P, sample_weight=w, **_tce_options(c)),
        "TCE of each one-vs-rest view, averaged over classes (TCE paper, Remark 2).",
        lambda v, ctx: (f"{format_value(v, 'percent')} of class probabilities are rejected by the binomial test "
                        "against their bin's observed rate."),
        unit="percent",
    ),
    MetricSpec(
        "accuracy", "Accuracy", lambda y, P, w, c: M.accuracy(y, P, sample_weight=w),
        "Share of rows whose most probable class is the true class (ties to the first class).",
        lambda v, ctx: f"The most probable class is the true class for {100 * v:.1f}% of rows.",
        unit="share", lower_is_better=False,
    ),
    MetricSpec(
        "auc", "AUC (one-vs-rest, macro)", lambda y, P, w, c: M.ovr_auc(y, P, sample_weight=w),
        "Mean over classes of the AUC of 'class k vs rest' (Provost & Domingos 2000): how well each class's "
        "probability ranks its rows above the others.",
        lambda v, ctx: (f"On average over classes, a row of the class gets a higher probability for it than a row "
                        f"of another class {100 * v:.1f}% of the time (50% = chance)."),
        unit="auc", lower_is_better=False,
    ),
]}

DEFAULT_MULTICLASS_METRICS = ("confidence_ece", "top_label_ece", "top_label_mce", "classwise_ece")

def _scheme_only(name):
    return lambda c: (name, {"binning": c.scheme()})


def _tce_reference(name):
    return lambda c: (name, _tce_options(c))


# The calibrated-model reference of each metric: consistency_test's name and the options that make its
# value the panel's (same bins, same alpha), so its fast paths apply.
_REFERENCE = {
    "ece": _scheme_only("ece"), "mce": _scheme_only("mce"), "rmsce": _scheme_only("rmsce"),
    "brier_reliability": _scheme_only("brier_reliability"),
    "ace": lambda c: ("ace", {"n_bins": c.n_bins}),
    "debiased_ece": lambda c: ("debiased_ece", {"binning": EqualMass(c.n_bins)}),
    "tce": _tce_reference("tce"),
    "smooth_ece": lambda c: ("smooth_ece", {}), "ici": lambda c: ("ici", {}), "brier": lambda c: ("brier", {}),
    "log_loss": lambda c: ("log_loss", {}), "hosmer_lemeshow": lambda c: ("hosmer_lemeshow", {}),
    "spiegelhalter_z": lambda c: ("spiegelhalter_z", {}),
    "confidence_ece": _scheme_only("confidence_ece"), "top_label_ece": _scheme_only("top_label_ece"),
    "top_label_mce": lambda c: ("top_label_mce", {"binning": c.scheme(), "reduce": "bin"}),
    "classwise_ece": _scheme_only("classwise_ece"),
    "classwise_tce": _tce_reference("classwise_tce"),
    # a calibrated model's MCB under y* ~ Bernoulli(p); DSC, UNC, AUC and accuracy are no calibration errors
    "mcb": lambda c: (M.MiscalibrationStatistic(), {}),  # a callable that sorts the fixed predictions once
}

for _registry in (BINARY_METRICS, MULTICLASS_METRICS):
    for _key, _spec_ in list(_registry.items()):
        _registry[_key] = replace(_spec_, depends=_DEPENDS.get(_key, ()), reference=_REFERENCE.get(_key))


def config_key(metric: str, config: PanelConfig, *, verdict: bool = True) -> tuple:
    """The part of ``config`` that ``metric``'s panel row depends on (a cache key): the settings of its value and,
    for a metric with a verdict, ``alpha`` (the verdict's level, and its calibrated-model range's coverage).
    ``verdict=False``: without the verdict's alpha, for a cache whose rows move their range with :func:`at_alpha`
    and are judged at the current level (the dashboard: an alpha change redid every metric's redraws).

    Examples
    --------
    >>> config_key("tce", PanelConfig(n_bins=10))
    (('alpha', 0.05), ('n_min', None), ('n_max', None))
    >>> config_key("brier", PanelConfig()), config_key("auc", PanelConfig())
    ((('alpha', 0.05),), ())
    """
    spec = metric_spec(metric)
    if spec is None:
        raise InputError(f"unknown metric {metric!r}.")
    level = ("alpha",) if verdict and has_calibration_test(metric) else ()
    return tuple((f, getattr(config, f)) for f in dict.fromkeys(spec.depends + level))


def metric_value(key: str, y_true, y_prob, *, config: PanelConfig = PanelConfig(), sample_weight=None) -> float:
    """The value of one registered binary metric.

    Examples
    --------
    >>> round(metric_value("ece", [0, 1, 1, 0], [0.2, 0.8, 0.6, 0.4]), 3)
    0.3
    """
    spec = _spec(key)
    y, p, w = check_binary(y_true, y_prob, sample_weight)
    return float(spec.compute(y, p, w, config))


def undefined_row(spec: MetricSpec, exc: InputError) -> dict:
    """The panel's row of a metric that is undefined on these predictions (its function raised
    :class:`~calibviz.errors.InputError`: constant scores for Spiegelhalter's Z, two distinct scores for ICI's
    smooth curve, ...): value NaN and the reason as its reading, so one undefined metric does not take the
    panel's other metrics with it; ``ui_reading`` is the reason in the dashboard's words (its controls, not
    keyword arguments), which :func:`panel_frame` moves to the table's attrs."""
    nan = float("nan")
    return {"metric": spec.key, "label": spec.label, "value": nan, "low": nan, "high": nan, "interval": "",
            "null_mean": nan, "null_low": nan, "null_high": nan, "p_value": nan, "n_redraws": 0, "verdict": "",
            "unit": spec.unit, "description": spec.description,
            "reading": str(exc), "note": "", "ui_reading": exc.ui_message}


def _spec(key: str, registry: dict | None = None) -> MetricSpec:
    registry = BINARY_METRICS if registry is None else registry
    try:
        return registry[key]
    except KeyError:
        raise InputError(f"unknown metric {key!r}; choose from {', '.join(registry)}.") from None


def _wald_interval(key, y, p, w, confidence):
    if key == "auc" and np.ndim(p) == 1:  # DeLong's asymptotic interval
        r = M.auc_delong(y, p, sample_weight=w, confidence=confidence)
        return r.low, r.high
    if key not in ("calibration_slope", "calibration_intercept"):
        return np.nan, np.nan
    r = _logistic_fit(y, p, w, confidence)
    return (r.slope_low, r.slope_high) if key == "calibration_slope" else (r.intercept_low, r.intercept_high)


def has_calibration_test(key: str) -> bool:
    """Whether the panel gives metric ``key`` a p-value against a calibrated model (consistency resampling, or
    the metric's own test: Hosmer-Lemeshow, Spiegelhalter, the Wald tests of slope and intercept); AUC, DSC,
    UNC and accuracy measure no miscalibration and have none."""
    return key in _REFERENCE or key in ("calibration_slope", "calibration_intercept")


def p_value_from_redraws(key: str) -> bool:
    """Whether metric ``key``'s p-value comes from label redraws when the panel draws them (its smallest value is
    then 1 / (redraws + 1)): Hosmer-Lemeshow and the calibration intercept's test too; Spiegelhalter and the Wald
    test of the slope have p-values of their own."""
    spec = metric_spec(key)
    return spec is not None and _p_from_redraws(spec)


#: Tests whose p-value the panel takes from label redraws when it draws them (their own approximations failed a
#: size simulation: Hosmer-Lemeshow's chi-square with few expected events per group, the intercept's Wald test with
#: scores near 0 and 1); without redraws their own tests decide.
_REDRAWN_TESTS = ("hosmer_lemeshow", "calibration_intercept")


def _p_from_redraws(spec: MetricSpec) -> bool:
    return (_has_reference(spec) and spec.p_value is None) or spec.key in _REDRAWN_TESTS


def _observed_minus_expected(y, p, sample_weight=None) -> float:
    """|sum w (y - p)| / sum w: the calibration intercept's score statistic at 0 (calibration-in-the-large)."""
    return float(abs(np.average(np.asarray(y, dtype=np.float64) - p, weights=sample_weight)))


def _hl_reading(ctx: dict) -> str:
    """The Hosmer-Lemeshow reading: its p-value against the label redraws when the panel drew them (with the
    chi-square reference's beside it), else the chi-square test's."""
    dof = "" if ctx.get("dof") is None else f" ({ctx['dof']} degree{'' if ctx['dof'] == 1 else 's'} of freedom)"
    if "chi2_p_value" in ctx and not np.isfinite(ctx["p_value"]):  # a scan: no redraws of this statistic
        return (f"The Hosmer-Lemeshow test gives no verdict here: its groups expect as few as "
                f"{ctx['min_expected']:.2g} events (or non-events), too few for its chi-square reference{dof} "
                f"({p_value_words(ctx['chi2_p_value'])} would reject calibrated models too often); label redraws "
                "from the predictions decide it (the data in memory, with a calibrated-model reference).")
    if "chi2_p_value" in ctx:
        return (f"The Hosmer-Lemeshow statistic is read against label redraws from the predictions "
                f"({p_value_words(ctx['p_value'], ctx.get('n_redraws', 0))}); its groups expect as few as "
                f"{ctx['min_expected']:.2g} events (or non-events), too few for the chi-square reference{dof}, "
                f"which gives {p_value_words(ctx['chi2_p_value'])}.")
    return f"The Hosmer-Lemeshow chi-square test{dof} gives {p_value_words(ctx['p_value'])}."


def spiegelhalter_range(alpha: float) -> float:
    """q of the range [-q, q] a calibrated model's Spiegelhalter Z stays in beside its verdict at ``alpha``: the
    normal test's critical value, the reference its p-value reads (in memory and on scans). The range of |Z| over
    label redraws stood beside the normal p-value: Z = 1.94 lay outside "-1.876 to 1.876" and read "no evidence
    (p = 0.052)" (an audit).

    >>> round(spiegelhalter_range(0.05), 3)
    1.96
    """
    from scipy.stats import norm

    return float(norm.ppf(1.0 - alpha / 2.0))


def _has_reference(spec: MetricSpec) -> bool:
    """Whether :func:`_reference` redraws labels for ``spec`` (slope and intercept use Wald tests)."""
    return spec.reference is not None and spec.key not in ("calibration_slope", "calibration_intercept",
                                                            "spiegelhalter_z")


def costly_reference(key: str, config: PanelConfig) -> bool:
    """Whether a metric's calibrated-model reference costs time in proportion to the rows on every redraw.

    TCE and class-wise TCE refit PAVA-BC per redraw, as any metric on bins that depend on the labels (PAVA,
    PAVA-BC) does; class-wise ECE draws a class for every row. The others redraw sums of fixed bins or buckets
    (:func:`calibviz.metrics.consistency_test`), cheap at any size (0.1-1 s for 200 redraws of 200,000 rows),
    so a dashboard can give them as many redraws on large data as on small (the dashboard's
    :func:`calibviz.ui.blocks.reference_redraws`).

    >>> costly_reference("tce", PanelConfig()), costly_reference("ece", PanelConfig())
    (True, False)
    >>> costly_reference("ece", PanelConfig(binning="pavabc"))
    True
    """
    if key in ("tce", "classwise_tce", "classwise_ece"):
        return True
    return "binning" in _DEPENDS.get(key, ()) and config.scheme().needs_labels


def _reference(spec: MetricSpec, y, p, w, config: PanelConfig, n_reference: int, random_state):
    """(null_mean, null_low, null_high, p_value, range_at) of a metric against a calibrated model with these
    predictions; ``range_at(alpha)`` gives the range beside a verdict at another level from the same redraws (None
    without a range).

    Consistency resampling (:func:`calibviz.metrics.consistency_test`) where the metric is "larger =
    worse"; the calibration intercept's score test against the redraws (its Wald test without them); the Wald
    test of the logistic fit for the calibration slope (no resampling).
    """
    nan = float("nan")
    if spec.key == "calibration_intercept" and n_reference:
        # the test of intercept 0 by its score statistic, sum w (y - p) (observed minus expected events), against
        # the label redraws: exact at any n, where the Wald test rejected 7.5-7.9% of calibrated logs at 5% with
        # scores near both 0 and 1 (n = 200-1,000; a size simulation); the interval stays Wald's
        r = M.consistency_test(y, p, metric=_observed_minus_expected, n_resamples=n_reference,
                               random_state=random_state, sample_weight=w, level=M.reference_level(config.alpha))
        return nan, nan, nan, r.p_value, None
    if spec.key in ("calibration_slope", "calibration_intercept"):
        r = _logistic_fit(y, p, w)
        return nan, nan, nan, float(r.slope_p_value if spec.key == "calibration_slope" else r.intercept_p_value), None
    if spec.key == "spiegelhalter_z" and n_reference:
        q = spiegelhalter_range(config.alpha)
        return 0.0, -q, q, nan, _spiegelhalter_range_at
    if spec.reference is None or not n_reference:
        return nan, nan, nan, nan, None
    name, options = spec.reference(config)
    r = M.consistency_test(y, p, metric=name, n_resamples=n_reference, random_state=random_state,
                           sample_weight=w, level=M.reference_level(config.alpha), **options)
    return r.null_mean, r.null_low, r.null_high, r.p_value, lambda alpha: r.range_at(M.reference_level(alpha))


def _spiegelhalter_range_at(alpha: float) -> tuple[float, float]:
    q = spiegelhalter_range(alpha)
    return -q, q


def at_alpha(table: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """A panel's calibrated-model ranges at another significance level, from the redraws they were made of
    (``attrs["ranges"]``, :func:`metric_panel`): the range beside a verdict at ``alpha`` (:func:`reference_level`);
    the verdicts follow when the table is judged (:func:`judged_together`). Metrics whose value depends on alpha
    (TCE) are not in ``attrs["ranges"]`` when computed at another level: their rows are the caller's to redo.

    >>> import numpy as np
    >>> rng = np.random.default_rng(0); p = rng.uniform(0.05, 0.95, 500); y = (rng.random(500) < p).astype(int)
    >>> t = metric_panel(y, p, metrics=("ece",), n_resamples=0, n_reference=99)
    >>> moved = at_alpha(t, 0.1)
    >>> fresh = metric_panel(y, p, metrics=("ece",), n_resamples=0, n_reference=99, config=PanelConfig(alpha=0.1))
    >>> bool(moved.loc[0, "null_high"] == fresh.loc[0, "null_high"] < t.loc[0, "null_high"])
    True
    """
    ranges = table.attrs.get("ranges", {})
    out = table.copy()
    for i, key in enumerate(out["metric"]):
        if key in ranges:
            out.loc[out.index[i], ["null_low", "null_high"]] = ranges[key](float(alpha))
    return out


def _pp_range(low: float, high: float, value: float | None = None) -> str:
    """A range in percentage points with one decimal, or as many more (up to 3) as it takes for its ends to
    differ, and for a ``value`` outside the range to differ from the end it lies beyond: a narrow reference at
    large n must not read '0.1 to 0.1', nor a value above the range read as its end.

    Examples
    --------
    >>> _pp_range(0.012, 0.031), _pp_range(0.00081, 0.00139), _pp_range(0.0004, 0.0010)
    ('1.2 to 3.1 percentage points', '0.08 to 0.14 percentage points', '0.04 to 0.10 percentage points')
    >>> _pp_range(0.0118, 0.1665, value=0.1669)  # 16.69 above 16.65: not '1.2 to 16.7'
    '1.18 to 16.65 percentage points (this value: 16.69)'

    The value with those digits where they are more than the reading's one decimal and it lies outside the range
    (smECE "off by 0.5 percentage points" beside "0.374 to 0.462" read as far outside; it was 0.463, a browser
    check).
    """
    for digits in (1, 2, 3):
        a, b = f"{100 * low:.{digits}f}", f"{100 * high:.{digits}f}"
        v = None if value is None else f"{100 * value:.{digits}f}"
        # two significant digits of the larger end at least: '0.0 to 0.1' for 0.04 to 0.10 points read as nothing
        # beside a table's 0.0004 - 0.0010 (a walk-through)
        enough = 100 * max(abs(low), abs(high)) * 10 ** digits >= 9.95
        if a != b and enough and not (v is not None and ((value > high and v == b) or (value < low and v == a))):
            break
    outside = value is not None and (value > high or value < low)
    return f"{a} to {b} percentage points" + (f" (this value: {v})" if outside and digits > 1 else "")


def _reference_sentence(spec: MetricSpec, null_low: float, null_high: float, p_value: float, level: float,
                        n_redraws: int = 0, value: float | None = None, *, family: int = 1,
                        p_adjusted: float | None = None, held: int | None = None) -> str:
    """'A perfectly calibrated model with these predictions would show a–b; no evidence of miscalibration (p = …).'

    ``n_redraws``: the redraws behind a Monte Carlo p-value (1 + #{null >= value}) / (1 + redraws). When none
    reached the value, p is the smallest the redraws can give, a bound and not a measurement, and says so (50
    redraws give 0.02, 200 give 0.005: the same evidence, not two different p-values). ``value``: the metric's
    value, so that a range in percentage points shows the digits that set it apart from the value. ``family``:
    the number of tests shown together (:func:`family_verdicts`) and ``p_adjusted`` this test's Holm-adjusted
    p-value among them, which decides the verdict; ``held``: no verdict, because Holm's procedure stopped at a
    p-value at its redraws' floor, and the redraws that would decide it.

    >>> from calibviz.panel import BINARY_METRICS
    >>> _reference_sentence(BINARY_METRICS["ece"], 0.01, 0.02, 1 / 201, 0.05, n_redraws=200).split(": ", 1)[1]
    'evidence of miscalibration (p ≤ 0.005: none of 200 redraws reached this value).'
    >>> _reference_sentence(BINARY_METRICS["ece"], 0.01, 0.02, 2 / 201, 0.05, n_redraws=200).split(": ", 1)[1]
    'evidence of miscalibration (p = 0.00995).'
    >>> _reference_sentence(BINARY_METRICS["ece"], 0.01, 0.02, 1 / 201, 0.001, n_redraws=200).split("; ", 1)[1]
    '200 redraws cannot test at α = 0.001: the smallest p-value they give is 0.005 (at least 999 are needed).'
    >>> print(_reference_sentence(BINARY_METRICS["ece"], 0.01, 0.02, 0.03, 0.05, n_redraws=200, family=7,
    ...                           p_adjusted=0.21).split(": ", 1)[1])
    no evidence of miscalibration among the 7 tests judged together (p = 0.03 on its own, p = 0.21 adjusted by Holm's method: among 7 tests of a calibrated model, one p-value this small is common).
    """
    if not np.isfinite(p_value):
        # an error without its reference (computed on request on large data) read as an alarm: "TCE = 47.92%"
        # stood alone on the Data page for a calibrated model of 200,000 rows (a walk-through)
        if spec.key not in ZERO_WHEN_CALIBRATED or value is None or not np.isfinite(value):  # undefined: its reason
            return ""
        far = (" (far above on many rows, where the tests reject predictions that differ from their bin's rate even "
               "when the model is calibrated)" if spec.key in ("tce", "classwise_tce") else "")
        return (f"{_NOT_COMPARED}, whose {spec.label} also lies above 0{far}; this value alone is no evidence of "
                "miscalibration.")
    shown = _shown_range(spec, null_low, null_high, value)
    if too_few_redraws(n_redraws, level):  # no verdict: "no evidence" would be the redraws' limit, not the data's
        return ((f"{_WOULD_SHOW}{shown}; " if shown else " ")
                + f"{n_redraws}{_CANNOT_TEST}{level:g}: the smallest p-value they give is "
                f"{1 / (n_redraws + 1):.2g} (at least {redraws_needed(level)} are needed).")
    adjusted = p_value if p_adjusted is None or not np.isfinite(p_adjusted) else p_adjusted
    verdict = _verdict(adjusted, level, n_redraws)
    p_text = p_value_words(p_value, n_redraws)
    at_floor = p_text.startswith("p ≤")
    if at_floor:  # two-sided: a value below every redraw reaches none of them either, by its distance
        p_text += (f": none of {n_redraws} redraws was as far from a calibrated model's expected score"
                   if spec.key in M.TWO_SIDED_METRICS else f": none of {n_redraws} redraws reached this value")
    if family > 1 and p_value <= level:
        adj_text = format_adjusted_p(adjusted, p_value, n_redraws)
        if held:  # Holm stopped at a p-value that is its redraws' floor: more redraws could reject it
            verdict = (f"no verdict among the {family} tests judged together ({p_text}{'' if at_floor else ' on its own'}"
                       f"; Holm's adjustment stops at a p-value that is its redraws' floor, so at least {held} "
                       "redraws, or fewer tests, would decide it)")
        elif verdict == "evidence of miscalibration":
            verdict += f" ({p_text}; adjusted for the {family} tests judged together: {p_words(adj_text)})"
        else:
            verdict += (f" among the {family} tests judged together ({p_text} on its own, "
                        f"{p_words(adj_text)} adjusted by Holm's method: among {family} tests of a calibrated model, "
                        "one p-value this small is common)")
    elif family > 1:
        # "adjusted for the 3 tests judged together: p = 1" (it read "1 adjusted for ...", as if a count)
        verdict += (f" ({p_text}; adjusted for the {family} tests judged together: "
                    f"{p_words(format_adjusted_p(adjusted, p_value, n_redraws))})")
    else:
        verdict += f" ({p_text})"
    if verdict.startswith("evidence") and spec.direction is not None and value is not None and np.isfinite(value):
        verdict += f"; {spec.direction(value)}"
    below = ""
    # below the range as the reading shows both ("TCE = 86.49% ... would show 86.49% to 86.60% ... lies below that
    # range" read as a contradiction, a walk-through: 86.494 < 86.495)
    shown_below = (np.isfinite(null_low) and value is not None and value < null_low
                   and (spec.unit == "probability"  # its range's digits set it apart from the value (_pp_range)
                        or format_value(value, spec.unit) != format_value(null_low, spec.unit)))
    if spec.key in M.TWO_SIDED_METRICS and shown_below and verdict.startswith("evidence"):
        # a proper score below the calibrated range is no success of the model (the test is two-sided): its
        # outcomes are less uncertain than its predictions say (said where the verdict finds it: below the range on
        # its own but within chance among the tests shown together, a calibrated model's score read so)
        below = (" Below that range: the outcomes are less uncertain than the predictions say (for example rarer "
                 "than predicted where predictions are below 1/2), not a better model.")
    elif spec.key in ZERO_WHEN_CALIBRATED and shown_below:
        # an error below what a calibrated model shows (a walk-through met an isotonic "after" ECE of 0.0019 beside
        # "would show 0.0029 - 0.0066", unexplained): chance, or predictions that follow these very labels
        below = (" The value lies below that range, as a calibrated model's does about 1 time in "
                 f"{round(1 / level):g}; far below, the predictions follow these labels more closely than a "
                 "calibrated model's noise allows (predictions fitted or recalibrated on these rows).")
    if shown:
        return f"{_WOULD_SHOW}{shown}: {verdict}.{below}"
    return f"{_AGAINST}{verdict}.{below}"


# How the verdict sentence starts: written by _reference_sentence, found by judged_together to replace it.
_WOULD_SHOW = " A perfectly calibrated model with these predictions would show "
_AGAINST = " Against a calibrated model: "
_NOT_COMPARED = " Not compared with a calibrated model here"
_CANNOT_TEST = " redraws cannot test at α = "


def _shown_range(spec: MetricSpec, null_low: float, null_high: float, value: float | None) -> str:
    """The calibrated-model range in the reading's own unit (probability metrics in percentage points); ''
    without one."""
    if not (np.isfinite(null_low) and np.isfinite(null_high)):
        return ""
    return (_pp_range(null_low, null_high, value) if spec.unit == "probability"
            else f"{format_value(null_low, spec.unit)} to {format_value(null_high, spec.unit)}")


def format_p_value(p_value: float, n_redraws: int = 0) -> str:
    """A p-value as tables show it: two significant digits (more where two would print a one-digit value that the
    p-value is not, :func:`calibviz.stats.p_value_digits`), "< 0.001" below that, and "≤ 1/(R + 1)" where it
    comes from ``n_redraws`` = R label redraws of which none reached the value: the smallest p-value they can
    give is then a bound, not a measurement (200 redraws: "≤ 0.005", rounded up,
    :func:`calibviz.stats.bound_digits`); "" for NaN.

    >>> format_p_value(2 / 201, 200), format_p_value(1 / 201, 200), format_p_value(1 / 201), format_p_value(1e-5)
    ('0.00995', '≤ 0.005', '0.00498', '< 0.001')
    >>> format_p_value(0.104), format_p_value(0.0504), format_p_value(0.05), format_p_value(0.23)
    ('0.104', '0.0504', '0.05', '0.23')
    """
    if not np.isfinite(p_value):
        return ""
    if at_redraw_floor(p_value, n_redraws):
        return f"≤ {bound_digits(p_value)}"
    return p_value_digits(p_value) if p_value >= 0.001 else "< 0.001"


def format_adjusted_p(p_adjusted: float, p_value: float, n_redraws: int = 0) -> str:
    """The Holm-adjusted p-value as tables show it (:func:`format_p_value`); a bound ("≤") where the p-value
    itself is the redraws' floor, as it is then.

    >>> format_adjusted_p(7 / 201, 1 / 201, 200), format_adjusted_p(0.21, 0.03, 200), format_adjusted_p(0.3, 0.1)
    ('≤ 0.035', '0.21', '0.3')
    >>> format_adjusted_p(2 / 2401, 1 / 2401, 2400)
    '≤ 0.00084'
    """
    if not np.isfinite(p_adjusted):
        return ""
    if at_redraw_floor(p_value, n_redraws):  # a bound keeps its digits ("≤ 0.00084", never "≤ < 0.001")
        return f"≤ {bound_digits(p_adjusted)}"
    return format_p_value(p_adjusted)


def at_redraw_floor(p_value: float, n_redraws: int) -> bool:
    """Whether a Monte Carlo p-value is the smallest its ``n_redraws`` redraws can give, 1 / (n_redraws + 1):
    none reached the value, so p is a bound, not a measurement (0 redraws: a test of its own, never)."""
    return bool(n_redraws) and p_value * (n_redraws + 1) <= 1.0 + 1e-9


def family_words(n: int, noun: str) -> str:
    """'the 3 variables judged together', or 'one variable, tested alone' (it read 'the 1 variables judged
    together').

    >>> family_words(3, "variable"), family_words(1, "class")
    ('the 3 variables judged together', 'one class, tested alone')
    """
    if n == 1:
        return f"one {noun}, tested alone"
    return f"the {n} {noun}{'es' if noun.endswith('s') else 's'} judged together"


def p_value_words(p_value: float, n_redraws: int = 0) -> str:
    """The p-value in a sentence: "p = 0.01", "p ≤ 0.005" (a bound, :func:`format_p_value`) or "p < 0.001".

    >>> p_value_words(2 / 201, 200), p_value_words(1 / 201, 200), p_value_words(1e-5)
    ('p = 0.00995', 'p ≤ 0.005', 'p < 0.001')
    """
    return p_words(format_p_value(p_value, n_redraws))


def p_words(shown: str) -> str:
    """A formatted p-value in a sentence: "p = 0.01", and "p ≤ 0.005" / "p < 0.001" for bounds.

    >>> p_words("0.01"), p_words("≤ 0.005")
    ('p = 0.01', 'p ≤ 0.005')
    """
    return f"p {shown}" if shown[:1] in ("≤", "<") else f"p = {shown}"


def too_few_redraws(n_redraws: int, level: float) -> bool:
    """Whether ``n_redraws`` label redraws cannot give a p-value of at most ``level`` (200 redraws cannot test at
    0.001; :func:`redraws_needed`). 0 redraws: a test of its own, never."""
    return 0 < n_redraws < redraws_needed(level)


def _verdict(p_value: float, level: float, n_redraws: int = 0) -> str:
    """The verdict at ``level``; '' without a p-value, or when ``n_redraws`` cannot reach the level."""
    if not np.isfinite(p_value) or too_few_redraws(n_redraws, level):
        return ""
    return "evidence of miscalibration" if p_value <= level else "no evidence of miscalibration"


def family_verdicts(rows: list[dict], alpha: float, specs: dict, pending: int = 0) -> list[dict]:
    """The verdicts of a panel's tests taken together, and each reading's sentence on the calibrated model.

    Every verdict of a panel reads the same labels; shown together, 7 tests at 5% each flagged at least one
    metric of 18% of calibrated models (400 simulated logs, n = 2,000, the default binary panel). The tests
    with a verdict (a finite p-value and enough redraws to reach ``alpha``) are therefore judged together:
    ``p_adjusted`` is Holm's step-down adjustment of their p-values (:func:`calibviz.stats.holm_adjusted`: the
    chance of any false "evidence" stays at most ``alpha`` whatever their dependence) and the verdict is read
    from it; ``p_value`` stays the test's own. A lone test is not adjusted. Holm rather than a joint
    resampling (Westfall-Young): it covers the tests of their own (Wald, normal, chi-square) beside the Monte
    Carlo ones, and scans and memory read the same rule; the cost is power only where p-values are
    borderline (with 200 redraws, 7 tests need p ≤ 0.007 for the first rejection: a value above all redraws).

    ``rows``: the panel's rows (``metric``, ``value``, ``null_low``, ``null_high``, ``p_value``, ``n_redraws``,
    ``reading`` without that sentence); ``specs``: their :class:`MetricSpec` by key. Shared by
    :func:`metric_panel` and :meth:`calibviz.scan.Scan.metrics` (and :func:`judged_together` for panels
    computed apart and shown together). ``pending``: tests of the family whose p-values are not computed yet
    (a dashboard page that leaves a slow reference to the page that shows it), counted as p = 1. Returns the rows
    with ``p_adjusted``, ``n_tests`` (the tests judged together, 0 for a row without a verdict), ``verdict`` and
    the reading's last sentence filled in.

    >>> rows = [{**dict.fromkeys(PANEL_COLUMNS, ""), "metric": "ece", "value": 0.03, "null_low": 0.01,
    ...          "null_high": 0.02, "p_value": 0.02, "n_redraws": 0, "low": np.nan, "unit": "probability"}]
    >>> [(r["n_tests"], r["p_adjusted"], r["verdict"]) for r in family_verdicts(rows, 0.05, BINARY_METRICS)]
    [(1, 0.02, 'evidence of miscalibration')]
    >>> [(r["n_tests"], r["p_adjusted"], r["verdict"]) for r in family_verdicts(rows, 0.05, BINARY_METRICS, 1)]
    [(2, 0.04, 'evidence of miscalibration')]
    """
    testable = [i for i, r in enumerate(rows)
                if np.isfinite(r["p_value"]) and not too_few_redraws(r["n_redraws"], alpha)]
    p_values = np.array([rows[i]["p_value"] for i in testable], dtype=np.float64)
    # ``pending`` tests of the family whose references are not computed yet count as p = 1: the family keeps its
    # size, and when they come the others' adjusted p-values can only fall (Holm's are non-increasing in another
    # test's p), so no verdict shown before is withdrawn as a false "evidence"
    pending = int(pending) if testable else 0
    adjusted = (dict(zip(testable, holm_adjusted(np.r_[p_values, np.ones(pending)])[:len(testable)]))
                if testable else {})
    family = len(testable) + pending
    # Holm rejects a prefix of the tests sorted by p (its adjusted values rise along that order, as in
    # holm_adjusted's stable sort). Where the first test it does not reject sits at its redraws' floor, the stop is
    # the redraws' limit, not the data's: that test and every later one whose own p is below alpha get no verdict,
    # with the redraws that would decide it (alpha over the tests left at that step).
    held = {}
    order = [testable[k] for k in np.argsort(p_values, kind="stable")]
    for step, i in enumerate(order):
        if adjusted[i] <= alpha:
            continue
        if at_redraw_floor(rows[i]["p_value"], rows[i]["n_redraws"]):
            need = redraws_needed(alpha / (family - step))
            held = {j: need for j in order[step:] if rows[j]["p_value"] <= alpha}
        break
    out = []
    for i, r in enumerate(rows):
        r = {**r, "n_tests": family if i in adjusted else 0}
        p_adj = float(adjusted.get(i, np.nan))
        sentence = _reference_sentence(specs[r["metric"]], r["null_low"], r["null_high"], r["p_value"], alpha,
                                       r["n_redraws"], r["value"], family=family if i in adjusted else 1,
                                       p_adjusted=p_adj, held=held.get(i))
        verdict = ("" if i in held else _verdict(p_adj, alpha, r["n_redraws"]) if i in adjusted
                   else _verdict(r["p_value"], alpha, r["n_redraws"]))
        row = {**r, "p_adjusted": p_adj, "verdict": verdict, "reading": r["reading"] + sentence}
        if (verdict.startswith("no evidence") and r["metric"] in ABOVE_ZERO_NOTED and np.isfinite(r["low"])
                and _shown_above_zero(r["low"], r["unit"]) and ABOVE_ZERO_NOTE not in (r.get("note") or "")):
            row["note"] = " ".join(t for t in (r.get("note") or "", ABOVE_ZERO_NOTE) if t)
        out.append({k: row[k] for k in PANEL_COLUMNS} | {k: v for k, v in row.items() if k not in PANEL_COLUMNS})
    return out


#: Coverage of the 95% intervals of scores whose variance rests on the rarer outcome, with 4 to 16 events of it
#: (an audit's simulation, 29 Nov 2026: calibrated models, p ~ Beta(0.5, 60), 500 and 2,000 rows, 150-200 logs;
#: truth from 2x10^6 draws): the interval notes of the row count cannot see it.
RARE_EVENT_COVERAGE = {"brier": "90–92%", "log_loss": "89–92%", "auc": "69–91%"}
#: Fewer events of the rarer outcome than this get :func:`rare_events_note`.
RARE_EVENTS = 20


def rare_events_note(key: str, y) -> str:
    """The note of a Brier, log-loss or AUC interval on binary labels with fewer than :data:`RARE_EVENTS` of the
    rarer outcome (rows, not weights), or "".

    >>> rare_events_note("auc", [1] * 4 + [0] * 496)[:60]
    'Approximate interval: only 4 events (label 1); with 4 to 16 '
    >>> rare_events_note("auc", [1] * 40 + [0] * 460)
    ''
    """
    y = np.asarray(y)
    ones = int(np.count_nonzero(y == 1))
    rare = min(ones, y.size - ones)
    if rare >= RARE_EVENTS:
        return ""
    which = "label 1" if ones <= y.size - ones else "label 0"
    return (f"Approximate interval: only {rare} events ({which}); with 4 to 16 such events, 95% intervals of this "
            f"metric covered the true value {RARE_EVENT_COVERAGE[key]} of the time in a simulation, not 95%.")


def _shown_above_zero(low: float, unit: str) -> bool:
    """Whether an interval's lower end reads above 0 as tables show it (an ACE interval "0.0000 – 0.0055" got the
    note that its interval lies above 0: its end was 3e-6).

    >>> _shown_above_zero(3e-6, "probability"), _shown_above_zero(0.0092, "probability"), _shown_above_zero(0.001, "percent")
    (False, True, False)
    """
    return bool(np.isfinite(low) and low > 0 and format_value(low, unit) != format_value(0.0, unit))


#: Errors that are 0 exactly when the model is calibrated: an interval of theirs above 0 beside "no evidence" gets
#: :data:`ABOVE_ZERO_NOTE` (a review read "ECE 0.0229 (95% interval 0.0092-0.0270)" next to "no evidence of
#: miscalibration" on 45 of 100 calibrated logs: noise keeps the error above 0, so no interval reaches 0 there).
# (not debiased_ece: its bias is removed, it is not held above 0 by noise)
#: Calibration errors that a calibrated model shows above 0 by noise alone (their calibrated-model reference's
#: mean is that bias): the panel's note on intervals above 0, and recalibration's call beyond the bias.
ZERO_WHEN_CALIBRATED = frozenset({"ece", "ace", "mce", "rmsce", "tce", "smooth_ece", "ici",
                                   "brier_reliability", "mcb", "confidence_ece", "top_label_ece", "top_label_mce",
                                   "classwise_ece", "classwise_tce"})
#: The errors that get :data:`ABOVE_ZERO_NOTE`: not TCE, which a calibrated model shows far above 0 on many rows
#: (85% at 3x10^6), as its reading's range says; "its interval does not reach 0" read as meaningless there (a
#: walk-through).
ABOVE_ZERO_NOTED = ZERO_WHEN_CALIBRATED - {"tce", "classwise_tce"}
ABOVE_ZERO_NOTE = ("No evidence of miscalibration, yet the interval lies above 0: noise alone keeps a calibration "
                   "error above 0, so its interval does not reach 0 even for a perfectly calibrated model; the "
                   "verdict says whether this one is.")

#: The columns of :func:`metric_panel` (and of :meth:`calibviz.scan.Scan.metrics`), in order.
PANEL_COLUMNS = ("metric", "label", "value", "low", "high", "interval", "null_mean", "null_low", "null_high",
                 "p_value", "p_adjusted", "n_tests", "n_redraws", "verdict", "unit", "description", "reading", "note")


def family_size(keys) -> int:
    """How many of the metrics ``keys`` shown together have a test against a calibrated model: the family whose
    verdicts :func:`family_verdicts` judges together (at most; a test without a p-value on the data drops out).

    >>> family_size(DEFAULT_BINARY_METRICS), family_size(("ece", "auc", "ece"))
    (7, 1)
    """
    return sum(1 for k in dict.fromkeys(keys) if has_calibration_test(k))


def redraws_for(keys, alpha: float, base: int = 200) -> int:
    """Label redraws for a panel of ``keys`` at level ``alpha``: ``base``, or the fewest with which a value above
    every redraw reaches the family's first Holm level ``alpha / tests`` (:func:`redraws_needed`), whichever is
    larger. ``keys`` None: the larger of the default binary and multiclass panels.

    >>> redraws_for(None, 0.05), redraws_for([k for k in BINARY_METRICS], 0.05), redraws_for(("ece",), 0.001)
    (200, 319, 999)
    """
    tests = (max(family_size(DEFAULT_BINARY_METRICS), family_size(DEFAULT_MULTICLASS_METRICS)) if keys is None
             else family_size(keys))
    return max(int(base), redraws_needed(alpha / max(tests, 1)))


def judged_together(*tables: pd.DataFrame, alpha: float | None = None, pending: int = 0) -> pd.DataFrame:
    """Panels computed apart (one metric at a time, as the dashboard caches them) shown as one: their rows one
    below the other, the verdicts of all their tests judged together (:func:`family_verdicts`), the attributes
    of the first table kept.

    Each row's reading loses the verdict sentence of its own panel (cut where that sentence starts, so nothing
    else of the reading changes) and gets the one of the joint panel. ``alpha``: the verdicts' level; by default that of
    the tables holding a test (a table of a metric without one does not depend on it, and a cache may hold it from
    another level).

    >>> import numpy as np
    >>> rng = np.random.default_rng(0); p = rng.uniform(0.05, 0.95, 500); y = (rng.random(500) < p).astype(int)
    >>> a = metric_panel(y, p, metrics=("ece",), n_resamples=0, n_reference=50)
    >>> b = metric_panel(y, p, metrics=("tce",), n_resamples=0, n_reference=50)
    >>> both = judged_together(a, b)
    >>> both["n_tests"].tolist(), both.equals(judged_together(metric_panel(y, p, metrics=("ece", "tce"),
    ...                                                                  n_resamples=0, n_reference=50)))
    ([2, 2], True)
    """
    table = pd.concat(tables, ignore_index=True)
    if not len(table):
        return table
    alpha = _alpha_of(tables) if alpha is None else float(alpha)
    specs = {**MULTICLASS_METRICS, **BINARY_METRICS}
    rows = []
    for r in table.to_dict("records"):
        # its verdict sentence, or the one of a value without its reference, ends the reading
        # (_reference_sentence): cut where it starts, at its first mark ("... would show a-b; 200 redraws cannot
        # test ..." has two: cut at the first, the range was said twice; "Not compared ..." was said twice on the
        # Data page, a walk-through)
        r["reading"] = split_reading(r["reading"])[0]
        rows.append(r)
    out = pd.DataFrame(family_verdicts(rows, alpha, specs, pending))
    out.attrs.update(tables[0].attrs)
    out.attrs["ui_readings"] = {k: v for t in tables for k, v in t.attrs.get("ui_readings", {}).items()}
    out.attrs["ranges"] = {k: v for t in tables for k, v in t.attrs.get("ranges", {}).items()}
    return out


def split_reading(reading: str) -> tuple[str, str]:
    """A panel row's reading as (what the value says, the sentence on the calibrated model that ends it, from
    :func:`_reference_sentence`; "" without one): :func:`judged_together` replaces the second, the Test-based
    page's headline quotes it.

    >>> split_reading("ECE says so. A perfectly calibrated model with these predictions would show 1 to 2: x.")
    ('ECE says so.', ' A perfectly calibrated model with these predictions would show 1 to 2: x.')
    """
    start = _SENTENCE_START.search(reading)
    return (reading, "") if start is None else (reading[:start.start()], reading[start.start():])


#: Where the verdict sentence of :func:`_reference_sentence` starts (:func:`split_reading`).
_SENTENCE_START = re.compile("|".join([re.escape(_WOULD_SHOW), re.escape(_AGAINST), re.escape(_NOT_COMPARED),
                                       r" \d+" + re.escape(_CANNOT_TEST)]))


def _alpha_of(tables) -> float:
    """The verdicts' level of panels to be judged together (their configs' alpha; they must agree)."""
    levels = {float(t.attrs["config"].alpha) for t in tables
              if "config" in t.attrs and np.isfinite(t["p_value"].to_numpy(np.float64)).any()}
    if len(levels) > 1:
        raise InputError(f"panels at different levels ({sorted(levels)}) cannot be judged together.")
    return levels.pop() if levels else PanelConfig().alpha


def interval_binning(key: str, config: PanelConfig):
    """The bins a metric's small-sample interval needs (:func:`calibviz.metrics.intervals.bootstrap_metric`)."""
    return EqualMass(config.n_bins) if key == "debiased_ece" else config.scheme()


#: Metrics with percentile intervals whose resamples read the repeated rows as miscalibration (their estimand
#: grows with noise: :data:`calibviz.metrics.intervals.INTERVALS` gives the reason of each choice).
_RESAMPLING_INFLATES = frozenset({"tce", "classwise_tce"})


def _outside_note(spec: MetricSpec, value: float, low: float, high: float, method: str, debiased) -> str:
    """Why a value lies outside its own interval (never shown without a reason; an upper bound: above it)."""
    # a value on its bound up to rounding is not outside it (ECE 1.1e-16 of exactly calibrated bins, whose
    # bias-corrected upper bound is 0, read "the value lies above its upper bound", a review)
    slack = 1e-12 * max(1.0, abs(value))
    base, what = method.split(",")[0], ("upper bound" if low == -np.inf else "interval")
    if not np.isfinite(high) or (value <= high + slack if low == -np.inf
                                 else not np.isfinite(low) or low - slack <= value <= high + slack):
        # inside, in the lowest quarter of a percentile interval: the same upward pull of resampling (TCE 67.4% in
        # 65.1% - 83.0% read as a lopsided interval with no word, a walk-through)
        # (TCE only: a mean's percentile interval near its value's side says nothing of the kind)
        low_end = (spec.key in _RESAMPLING_INFLATES and base == "percentile" and np.isfinite(low)
                   and np.isfinite(high) and high > low and value - low < 0.25 * (high - low))
        return ("The value lies near the low end of its interval: a bootstrap resample repeats some rows and drops "
                "others, and this metric reads that extra noise as miscalibration, so its resampled values lie "
                "mostly above the data's; the interval shows the metric's spread, not a range centred on the "
                "value." if low_end else "")
    side = "above" if value > high else "below"
    if base in ("basic", "bias_corrected", "double_basic", "debiased_basic"):
        kind = "debiased (Kumar et al.) estimate" if method == "debiased_basic" else "bias-corrected estimate"
        centre = (f" ({kind} {format_value(debiased, spec.unit)})"
                  if debiased is not None and np.isfinite(debiased) else "")
        return (f"The value lies {side} its {what}: the {base.replace('_', '-')} bootstrap {what} corrects "
                f"the estimate's bias{centre}; calibration errors of a finite sample are biased upward by "
                "noise, most where the model is nearly calibrated.")
    if side == "below":  # a percentile interval above the value: resampling itself reads as miscalibration
        return (f"The value lies below its {what}: a bootstrap resample repeats some rows and drops others, and "
                "this metric reads that extra noise as miscalibration, so its resampled values lie above the data's "
                "(most where the model is nearly calibrated); the interval shows the metric's spread, not a range "
                "around the value.")
    return (f"The value lies above its {what}: the bootstrap distribution of this metric is skewed, most "
            "where the model is nearly calibrated (a small bin or a value near 0 dominates).")


def _certain_mistakes(ctx: dict) -> str:
    """What the log loss of predictions of exactly 0 or 1 that turned out wrong is (infinite; clipped)."""
    n = ctx.get("certain_mistakes", 0)
    if not n:
        return ""
    rows, its = ("1 row was", "its") if n == 1 else (f"{n:,} rows were", "their")
    return (f" {rows} predicted with certainty (probability 0 or 1) and turned out otherwise: {its} log loss is "
            f"infinite, counted here as {-np.log(LOG_LOSS_EPS):.2f} each (probabilities clipped at "
            f"{LOG_LOSS_EPS:.2g}, as scikit-learn does), so the value is a lower bound of the model's loss.")


def _context(spec: MetricSpec, y, p, w, config: PanelConfig, prevalence: float) -> dict:
    ctx = {"prevalence": prevalence, "uncertainty": prevalence * (1 - prevalence), "p_value": float("nan")}
    if spec.key == "hosmer_lemeshow":  # one test gives the reading both its p-value and its degrees of freedom
        hl = M.hosmer_lemeshow(y, p, sample_weight=w, reference="chi2")  # the panel draws the redraws itself
        ctx.update(p_value=float(hl.p_value), dof=hl.dof, min_expected=hl.min_expected)
    elif spec.p_value:
        ctx["p_value"] = float(spec.p_value(y, p, w, config))
    if spec.key in ("mcb", "dsc", "unc"):
        ctx["corp"] = M.corp_decomposition(y, p, sample_weight=w)
    if spec.key == "log_loss":
        wrong = ((p == 0.0) & (y == 1)) | ((p == 1.0) & (y == 0))
        ctx["certain_mistakes"] = int(np.count_nonzero(wrong if w is None else wrong & (w > 0)))
    if spec.key == "mce":
        from .summary import bin_statistics

        ctx["worst_bin"] = bin_statistics(y, p, binning=config.scheme(), sample_weight=w,
                                          second_moments=False)[1].worst_bin()
    return ctx


def reference_range_words(alpha: float, two_sided: bool = False) -> str:
    """What the calibrated-model range of a verdict at ``alpha`` is, in words (captions, table headers);
    ``two_sided``: the table shows a metric of :data:`calibviz.metrics.TWO_SIDED_METRICS`.

    >>> print(reference_range_words(0.05))
    the central 90% of the metric over the label redraws (1 - 2α at α = 0.05), so that a value above it has p ≤ α on its own; the verdict judges the panel's tests together (p adjusted, Holm's method)
    >>> print(reference_range_words(0.05, two_sided=True).split("; ")[1])
    for the Brier score and log loss, which miscalibration moves either way, the 95% of the redraws nearest a calibrated model's expected score, so that a value outside it, below or above, has p ≤ α on its own
    """
    both = (f"; for the Brier score and log loss, which miscalibration moves either way, the {100 * (1 - alpha):g}% "
            "of the redraws nearest a calibrated model's expected score, so that a value outside it, below or above, "
            "has p ≤ α on its own"
            if two_sided else "")
    return (f"the central {100 * M.reference_level(alpha):g}% of the metric over the label redraws (1 - 2α at "
            f"α = {alpha:g}), so that a value above it has p ≤ α on its own{both}; the verdict judges the "
            "panel's tests together (p adjusted, Holm's method)")


def two_sided(metrics) -> bool:
    """Whether a table of these metric keys holds a two-sided reference (:data:`calibviz.metrics.TWO_SIDED_METRICS`):
    its captions say so.

    >>> two_sided(["ece", "brier"]), two_sided(["ece"])
    (True, False)
    """
    return not M.TWO_SIDED_METRICS.isdisjoint(metrics)


def interval_caption(table: pd.DataFrame) -> str:
    """One sentence saying how the intervals and the reference of a :func:`metric_panel` table were made.

    Examples
    --------
    >>> t = metric_panel([0, 1, 1, 0] * 25, [0.2, 0.7, 0.6, 0.3] * 25, metrics=("ece", "brier"),
    ...                  n_resamples=10, n_reference=10)
    >>> print(interval_caption(t))  # doctest: +ELLIPSIS
    Intervals: bootstrap, 10 resamples, seed 0 (rows resampled, bins refitted), ...
    """
    n_boot, n_ref = table.attrs.get("n_resamples", 0), table.attrs.get("n_reference", 0)
    parts = []
    if n_boot:
        by_method: dict[str, list] = {}
        wald = []
        for label, method in zip(table["label"], table.get("interval", [""] * len(table))):
            if method == "wald":
                wald.append(label)
            elif method and method != "delong":
                by_method.setdefault(method.replace("_", "-"), []).append(label)
        methods = "; ".join(f"{m} for {', '.join(labels)}" for m, labels in by_method.items())
        own = ([f"{' and '.join(wald)}: Wald intervals"] if wald else []) + (
            ["AUC: DeLong's interval"] if "delong" in set(table.get("interval", [])) else [])
        parts.append(f"Intervals: bootstrap, {n_boot} resamples, seed {table.attrs.get('random_state')} (rows "
                     "resampled, bins refitted)"
                     + (f", {methods} (each metric's method chosen by a coverage study, docs/intervals.md)"
                        if methods else "")
                     + "".join(f"; {o}" for o in own) + ".")
    elif table.attrs.get("intervals_wait"):  # the dashboard's large data: the bootstrap waits for its button
        parts.append("95% intervals: press 'Compute 95% intervals' (bootstrap resamples of the rows; on data this "
                     "large it takes a while, so it starts on request).")
    else:
        parts.append("Bootstrap intervals were turned off (0 resamples).")
    fewer = ""
    if n_ref and "n_redraws" in table:  # a dashboard's large data: fewer redraws where each costs time per row
        other = table[(table["n_redraws"] > 0) & (table["n_redraws"] != n_ref)]
        if len(other):
            fewer = ("; " + ", ".join(f"{r.label}: {int(r.n_redraws)}" for r in other.itertuples())
                     + " (fewer: each of their redraws refits bins or draws every row's class, which costs time "
                       "per row)")
    if n_ref:
        keys = set(table["metric"])
        # the multiclass panel redraws each row's class; its caption named the binary draw and tests it lacks
        multiclass = bool(keys & (set(MULTICLASS_METRICS) - set(BINARY_METRICS)))
        own = [words for key, words in _OWN_TESTS if key in keys]
        parts.append(f"Calibrated-model reference: {n_ref} redraws of the labels from the predictions "
                     + ("(each row's class drawn from its predicted probabilities" if multiclass
                        else "(y* ~ Bernoulli(p)")
                     + f", consistency resampling{fewer}); the range is "
                     f"{reference_range_words(table.attrs.get('config', PanelConfig()).alpha, two_sided(keys))}, "
                     "and the p-value is "
                     "against the redraws" + (f" ({'; '.join(own)})." if own else "."))
    if (held := no_verdict_words(table)):
        parts.append(held)
    return " ".join(parts)


def no_verdict_words(table: pd.DataFrame) -> str:
    """What to do where a panel's redraws cannot reach its level (a dashboard caps them to stay fast: 7 tests at
    α = 0.001 need 5,999 each), or '', with the numbers that decide it. For the captions of
    :func:`interval_caption` and of scans' (:func:`calibviz.scan.interval_caption`).

    A test whose R redraws cannot give p <= α at all needs α >= 1/(R + 1). Tests held by Holm's procedure (its
    first step needs p <= α/m among m tests, below the redraws' floor 1/(R + 1)) are decided with at most
    floor(α (R + 1)) tests shown together, or at α >= m/(R + 1). A walk-through followed "fewer metrics" from 7
    to 2 with no verdict: the caption now says how many.

    >>> t = pd.DataFrame({"label": ["ECE", "TCE"], "n_redraws": [999, 200], "n_tests": [6, 0],
    ...                   "p_value": [0.001, 0.005], "verdict": ["", ""]})
    >>> t.attrs["config"] = PanelConfig(alpha=0.001)
    >>> print(no_verdict_words(t))
    No verdict at α = 0.001 for TCE: its 200 redraws cannot give a p-value that small; choose α ≥ 0.005. For ECE: with 999 redraws only 1 test shown together can be decided at this α (6 are): keep 1 metric with a test, or choose α ≥ 0.006. The command line (calibviz metrics ... --alpha) draws as many redraws as the level needs.
    """
    alpha = table.attrs.get("config", PanelConfig()).alpha
    # from the rows' columns (:func:`family_verdicts`): a test whose redraws cannot reach the level is left out of
    # the family; a test of the family without a verdict was held by Holm's procedure at its redraws' floor
    tested = np.isfinite(table["p_value"].to_numpy(float))
    cannot = table[tested & np.array([too_few_redraws(int(r) if np.isfinite(r) else 0, alpha)
                                       for r in table["n_redraws"].to_numpy(float)], dtype=bool)]
    held = table[(table["n_tests"] > 0) & (table["verdict"] == "")]
    if not len(cannot) and not len(held):
        return ""
    parts = []
    if len(cannot):
        r = int(cannot["n_redraws"].min())
        one = len(cannot) == 1
        parts.append(f"for {', '.join(cannot['label'])}: {'its' if one else 'their'} {r} redraws cannot give a "
                     f"p-value that small; choose α ≥ {bound_digits(1 / (r + 1))}.")
    if len(held):
        redrawn = table.loc[(table["n_redraws"] > 0) & (table["n_tests"] > 0), "n_redraws"]  # the family's
        r = int(redrawn.min()) if len(redrawn) else 0
        m = int(held["n_tests"].max())
        k = int(np.floor(alpha * (r + 1) + 1e-9))
        keep = (f"keep {k} metric{'s' if k != 1 else ''} with a test, or choose" if k >= 1 else "choose")
        parts.append(f"for {', '.join(held['label'])}: with {r} redraws only {k} "
                     f"test{'s' if k != 1 else ''} shown together can be decided at this α ({m} are): {keep} "
                     f"α ≥ {bound_digits(m / (r + 1))}.")
    text = f"No verdict at α = {alpha:g} " + " ".join([parts[0]] + [p[0].upper() + p[1:] for p in parts[1:]])
    return text + (" The command line (calibviz metrics ... --alpha) draws as many redraws as the level needs.")


#: The metrics whose p-value is a test of their own (not the redraws'), as the reference caption words them.
_OWN_TESTS = (("hosmer_lemeshow", "Hosmer-Lemeshow: its chi-square test where every group expects 10 or more events "
                                  "and non-events"),
              ("spiegelhalter_z", "Spiegelhalter: its own test"),
              ("calibration_intercept", "the intercept: its score statistic against the redraws"),
              ("calibration_slope", "the slope: a Wald test"))


def metric_panel(y_true, y_prob, *, metrics=DEFAULT_BINARY_METRICS, config: PanelConfig = PanelConfig(),
                 sample_weight=None, n_resamples: int = 200, confidence: float = 0.95, random_state=0,
                 progress=None, n_reference: int | None = None) -> pd.DataFrame:
    """Metrics with intervals, the calibrated-model reference and plain-language readings.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary labels, or class indices 0..K-1 for multiclass data.
    y_prob : array-like of shape (n,) or (n, K)
        P(y = 1), or probability vectors (then the multiclass metrics apply).
    metrics : sequence of str
        Keys of :data:`BINARY_METRICS` (binary) or :data:`MULTICLASS_METRICS`
        (multiclass; the binary default becomes :data:`DEFAULT_MULTICLASS_METRICS`).
    config : PanelConfig
        Binning and test options shared by the metrics; ``config.alpha`` is
        also the level of the verdicts.
    sample_weight : array-like of shape (n,), optional
    n_resamples : int, default 200
        Bootstrap resamples (rows resampled and bins refitted each time; the
        interval method of each metric is the one the coverage study chose,
        :func:`calibviz.metrics.interval_method`); 0 skips the intervals.
    confidence : float, default 0.95
    random_state : int, default 0
        Same seed, same intervals and references.
    progress : callable(done, total), optional
        Called as the bootstrap advances and after each metric's reference
        (``total`` counts bootstrap resamples and label redraws of all metrics).
    n_reference : int or None, default None
        Label redraws of the calibrated-model reference (consistency
        resampling, :func:`calibviz.metrics.consistency_test`); 0 skips it.
        None: 200, raised to what the panel's tests judged together need
        (:func:`redraws_for`: 319 for 16 tests at ``alpha`` 0.05).

    Returns
    -------
    pandas.DataFrame
        One row per metric: ``metric``, ``label``, ``value``, ``low``,
        ``high`` (bootstrap interval; Wald interval of the logistic fit for
        intercept and slope; NaN for test statistics), ``interval`` (its
        method), ``null_mean``, ``null_low``, ``null_high`` (what a perfectly
        calibrated model with these predictions would show: mean and central
        ``1 - 2 alpha`` of the metric under ``y* ~ Bernoulli(p)``, whose upper
        end is the critical value of the redraws' test; for the Brier
        score and log loss, tested two-sided, the ``1 - alpha`` nearest their
        expectation under calibration, both ends critical:
        :func:`calibviz.metrics.null_summary`; Spiegelhalter keeps its own
        test's p-value beside it),
        ``p_value`` (against
        that reference: consistency resampling, Hosmer-Lemeshow's statistic
        and the intercept's score statistic included (their chi-square and
        Wald p-values without redraws); Spiegelhalter's Z (normal) and the
        slope (Wald) have their own tests), ``p_adjusted`` (Holm's adjustment
        of the p-values of the panel's tests taken together, which decides
        the verdicts: :func:`family_verdicts`; the p-value itself for a lone
        test), ``n_redraws`` (the label redraws behind a
        p-value from the reference, 0 for a test's own: with none of them
        reaching the value, p = 1/(n_redraws + 1) is a bound,
        :func:`format_p_value`), ``verdict``, ``unit``, ``description``, ``reading`` and
        ``note`` (why a value lies outside its own interval; and, where the
        coverage study found intervals of this size to cover less than the
        93-97% target, a sentence saying so with the measured coverage,
        :func:`calibviz.metrics.intervals.coverage_note`; else "").

    References
    ----------
    Bröcker & Smith (2007), "Increasing the reliability of reliability
    diagrams", Weather and Forecasting 22(3) (consistency resampling);
    Dimitriadis, Gneiting & Jordan (2021), PNAS (consistency bands).

    Examples
    --------
    >>> import calibviz as cv
    >>> d = cv.load_demo("hospital_readmission")
    >>> t = metric_panel(d.y, d.y_prob, metrics=("ece", "tce"), n_resamples=20, n_reference=20)
    >>> t["metric"].tolist(), bool((t["null_low"] <= t["null_high"]).all())
    (['ece', 'tce'], True)
    """
    if np.ndim(y_prob) == 2:
        y, p, w = check_multiclass(y_true, y_prob, sample_weight)
        registry = MULTICLASS_METRICS
        prevalence = float("nan")
        if tuple(metrics) == DEFAULT_BINARY_METRICS:
            metrics = DEFAULT_MULTICLASS_METRICS
    else:
        y, p, w = check_binary(y_true, y_prob, sample_weight)
        registry = BINARY_METRICS
        prevalence = float(np.average(y, weights=w))
    specs = [_spec(k, registry) for k in metrics]
    if n_reference is None:
        n_reference = redraws_for([s.key for s in specs], config.alpha)
    n_boot = sum(s.bootstrap for s in specs) if n_resamples else 0
    n_classes = p.shape[1] if p.ndim == 2 else 2
    n_eff = float(len(y)) if w is None else float(w.sum() ** 2 / (w @ w)) if (w @ w) > 0 else 0.0  # Kish
    # progress counts bootstrap resamples and the reference's label redraws (often the larger part)
    n_ref = sum(_has_reference(s) for s in specs) if n_reference else 0
    total = n_boot * n_resamples + n_ref * n_reference
    token = _PANEL_FITS.set({})
    try:
        rows = _panel_rows(specs, y, p, w, config, prevalence, n_resamples, n_boot, n_classes, n_eff, confidence,
                           random_state, progress, n_reference, total)
    finally:
        _PANEL_FITS.reset(token)
    out = panel_frame(rows, config.alpha, {s.key: s for s in specs})
    out.attrs.update(config=config, n_resamples=n_resamples, confidence=confidence, random_state=random_state,
                     n_reference=n_reference)
    return out


def panel_frame(rows: list[dict], alpha: float, specs: dict) -> pd.DataFrame:
    """The panel table of ``rows`` judged together (:func:`family_verdicts`). The reasons of undefined metrics in
    the dashboard's words (:func:`undefined_row`) go to ``attrs["ui_readings"]`` ({metric: text}), not to a column:
    the columns are :data:`PANEL_COLUMNS` whatever the data (a review found a column only where a metric was
    undefined)."""
    ui = {r["metric"]: r.pop("ui_reading") for r in rows if "ui_reading" in r}
    ranges = {r["metric"]: r.pop("range_at") for r in rows if "range_at" in r}
    out = pd.DataFrame(family_verdicts(rows, alpha, specs))
    out.attrs["ui_readings"] = ui
    out.attrs["ranges"] = ranges  # at_alpha
    return out


def resample_order(spec: MetricSpec, config: PanelConfig, y_prob):
    """The order in which the bootstrap lists the rows of ``spec``'s resamples (``row_order``), or None.

    Panel metrics do not depend on the order of the rows. For those whose bins are refitted by sorting the scores
    (TCE's PAVA-BC; the panel's binning when it is PAVA, PAVA-BC or median splits) resamples listed by score make
    that sort a pass over presorted data (TCE on 10^6 rows: about half the time); for the others the reordering
    would only cost time. Shared by :func:`metric_panel` and :func:`calibviz.compare.compare_models`, whose
    intervals are the same.
    """
    p = np.asarray(y_prob)
    sorts = spec.key == "tce" or ("binning" in spec.depends and config.scheme().sorts_scores)
    return np.argsort(p, kind="stable") if sorts and p.ndim == 1 else None


def _resampled_metric(spec: MetricSpec, config: PanelConfig) -> Callable:
    """``spec``'s metric as the bootstrap calls it, with its batched form (``many``) where it has one."""
    def metric(y, p, sample_weight=None):
        return spec.compute(y, p, sample_weight, config)

    if spec.compute_many is not None:
        metric.many = lambda samples: spec.compute_many(samples, config)
    return metric


def _panel_rows(specs, y, p, w, config, prevalence, n_resamples, n_boot, n_classes, n_eff, confidence, random_state,
                progress, n_reference, total) -> list[dict]:
    """The rows of :func:`metric_panel`, one per metric spec."""
    rows = []
    done_before = 0
    for spec in specs:
        try:
            value = float(spec.compute(y, p, w, config))
        except InputError as exc:  # the metric is undefined on these predictions; the others still are
            rows.append(undefined_row(spec, exc))
            done_before += (n_resamples if n_boot and spec.bootstrap else 0) + (
                n_reference if n_reference and _has_reference(spec) else 0)
            continue
        low = high = np.nan
        method, debiased, approx = "", None, ""
        if n_resamples and spec.bootstrap:
            offset = done_before

            def _progress(done, _n, _offset=offset):
                if progress is not None:
                    progress(_offset + done, total)

            # the chosen interval, small-sample method included (calibviz.metrics.intervals); bins for it
            res = bootstrap_metric(spec.key, _resampled_metric(spec, config), y, p, binning=interval_binning(spec.key, config), n_bins=config.n_bins,
                                   n_classes=n_classes, sample_weight=w, n_resamples=n_resamples,
                                   confidence=confidence, random_state=random_state, progress=_progress,
                                   row_order=resample_order(spec, config, p))
            low, high, method, debiased = res.low, res.high, res.method, getattr(res, "debiased", None)
            approx = coverage_note(spec.key, n_eff, n_bins=config.n_bins, n_classes=n_classes, method=res.method,
                                   alternative=res.alternative)
            if res.alternative == "less":  # an upper bound only: shown as "at most high"
                low, method = -np.inf, f"{method}, upper bound"
            done_before += n_resamples
        elif not spec.bootstrap:
            low, high = _wald_interval(spec.key, y, p, w, confidence)
            method = ("delong" if spec.key == "auc" else "wald") if np.isfinite(low) else ""
        if np.isfinite(low) and spec.key in RARE_EVENT_COVERAGE and np.ndim(p) == 1:
            approx = " ".join(t for t in (approx, rare_events_note(spec.key, y)) if t)
        null_mean, null_low, null_high, p_ref, range_at = _reference(spec, y, p, w, config, n_reference,
                                                                     random_state)
        if n_reference and _has_reference(spec):  # the redraws report once per metric, when done
            done_before += n_reference
            if progress is not None:
                progress(done_before, total)
        ctx = _context(spec, y, p, w, config, prevalence)
        redrawn = n_reference > 0 and _p_from_redraws(spec) and np.isfinite(p_ref)
        if spec.key == "hosmer_lemeshow" and ctx.get("min_expected", 0.0) >= HL_MIN_EXPECTED:
            redrawn = False  # enough expected events in every group: the chi-square test, whose p goes below 1/(R+1)
        if redrawn and spec.key == "hosmer_lemeshow":
            # Hosmer-Lemeshow against the label redraws, exact for any n: its chi-square reference over-rejects
            # calibrated models where groups expect few events (13-14% at 5% with rare events, n = 200-1,000;
            # 6.5% at n = 30; a simulation of 2,000-3,000 calibrated logs per case), so it is only the reading's
            # second number there, and the verdict's reference when no redraws were asked for
            ctx.update(chi2_p_value=ctx["p_value"], p_value=p_ref, n_redraws=n_reference)
        elif spec.key == "hosmer_lemeshow" and ctx.get("min_expected", math.inf) < HL_MIN_EXPECTED:
            # no redraws and too few expected events for the chi-square: no verdict, as on a scan (its chi-square
            # verdict flagged 9-10% of calibrated models with scores Beta(0.5, 20), a review's simulation)
            ctx.update(chi2_p_value=ctx["p_value"], p_value=float("nan"))
            p_ref = float("nan")
        elif spec.p_value is not None and not redrawn:  # a test's own reference (HL: chi2(G); Z: normal)
            p_ref = ctx["p_value"]
        reading = spec.reading(value, ctx)  # the verdict's sentence follows, by family_verdicts
        # the redraws behind p_ref: none for a test's own p-value (Spiegelhalter, the Wald tests, HL's chi-square)
        redraws = n_reference if redrawn else 0
        rows.append({"metric": spec.key, "label": spec.label, "value": value, "low": low, "high": high,
                     "interval": method, "null_mean": null_mean, "null_low": null_low, "null_high": null_high,
                     "p_value": p_ref, "n_redraws": redraws, "verdict": "",
                     "unit": spec.unit,
                     "description": spec.description, "reading": reading,
                     "note": " ".join(t for t in (_outside_note(spec, value, low, high, method, debiased), approx,
                                                  _crowded_bins_note(spec, p, w, config)) if t)})
        if range_at is not None and "alpha" not in spec.depends:  # a range that can follow alpha (at_alpha)
            rows[-1]["range_at"] = range_at
    return rows


#: Share of the weight in one bin above which a note says that the bins cannot resolve the predictions.
CROWDED_SHARE = 0.8


def _crowded_bins_note(spec: MetricSpec, p, w, config: PanelConfig) -> str:
    """:func:`crowded_bins_note` of the rows (y, p, w) in memory."""
    if np.ndim(p) != 1:
        return ""

    def bin_weights():
        bins = config.scheme().fit(p)
        return np.bincount(bins.index, weights=w, minlength=bins.n_bins)

    return crowded_bins_note(spec, config, bin_weights)


def crowded_bins_note(spec: MetricSpec, config: PanelConfig, bin_weights) -> str:
    """A note for a metric on fixed-edge bins (uniform, custom) when one bin holds most of the data (rare events:
    every prediction below 1/15 falls in the first of 15 uniform bins, and ECE reads one gap, equal to MCE).

    ``bin_weights``: a callable giving the weight (rows) of each bin, called only for such a metric and scheme
    (in memory from the rows, on a scan from its bin sums).
    """
    if "binning" not in spec.depends or not isinstance(config.scheme(), (Uniform, Custom)):
        return ""  # bins that follow the data never crowd
    weight = np.asarray(bin_weights(), dtype=np.float64)
    if weight.size < 2:  # one bin holds everything by choice ('--bins 1'), not because the predictions crowd
        return ""
    share = float(weight.max() / weight.sum()) if weight.sum() > 0 else 0.0
    if share < CROWDED_SHARE:
        return ""
    crowded = int(np.argmax(weight))
    # where they crowd says why: the first bin holds rare events, the last a confident classifier's top labels
    why = (" (predictions near 0, as with rare events)" if crowded == 0 else
           " (predictions near 1, as with a confident classifier)" if crowded == weight.size - 1 else "")
    return (f"{share:.0%} of the predictions fall in one of the {weight.size} bins{why}: these bins cannot resolve "
            "them; equal-mass bins (ACE, or equal-mass binning) or PAVA-BC can.")


def __getattr__(name):
    # compare_models lives in calibviz.compare (which imports this module); kept importable from here
    if name == "compare_models":
        from .compare import compare_models

        return compare_models
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --------------------------------------------------------------------------- metric names


def resolve_metrics(metrics, is_binary: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The metric keys that apply to binary or multiclass data, and the requested ones that do not.

    Parameters
    ----------
    metrics : sequence of str or None
        Keys of :data:`calibviz.panel.BINARY_METRICS` or
        :data:`calibviz.panel.MULTICLASS_METRICS` (case-insensitive; a
        metric's label such as "smECE" is accepted too). None gives the
        default panel of the data's kind.
    is_binary : bool

    Returns
    -------
    (keys, skipped) : tuple of tuples
        ``keys`` apply to the data; ``skipped`` are known metrics of the
        other kind (a file with binary and multiclass models asks for both).

    Raises
    ------
    InputError
        A name that is no metric at all, or none of the names applies.

    References
    ----------
    The metrics' sources are listed in :data:`calibviz.panel.BINARY_METRICS`
    and :data:`calibviz.panel.MULTICLASS_METRICS` (e.g. Naeini et al. 2015 for
    ECE, Matsubara et al. 2023 for TCE, Gupta & Ramdas 2022 for top-label ECE).

    Examples
    --------
    >>> resolve_metrics(["ECE", "confidence_ece"], True)
    (('ece',), ('confidence_ece',))
    >>> resolve_metrics(None, False)[0][:2]
    ('confidence_ece', 'top_label_ece')
    """
    own, other = (BINARY_METRICS, MULTICLASS_METRICS) if is_binary else (MULTICLASS_METRICS, BINARY_METRICS)
    if metrics is None:
        return (DEFAULT_BINARY_METRICS if is_binary else DEFAULT_MULTICLASS_METRICS), ()
    if isinstance(metrics, str):
        metrics = [m for m in metrics.split(",") if m.strip()]
    keys, skipped = [], []
    for name in metrics:
        key = metric_key(name)
        if key in own:
            if key not in keys:
                keys.append(key)
        elif key in other:
            skipped.append(key)
    if not keys:
        kind = "binary" if is_binary else "multiclass"
        raise InputError(f"none of the metrics {', '.join(map(str, metrics))} applies to {kind} data; "
                         f"choose from {', '.join(own)}.")
    return tuple(keys), tuple(skipped)


def metric_spec(key: str):
    """The :class:`MetricSpec` of a registry key, binary or multiclass; None for an unknown key."""
    return BINARY_METRICS.get(key) or MULTICLASS_METRICS.get(key)


def metric_label(key: str) -> str:
    """A metric's label as shown ("TCE"), or the key itself when it has no spec.

    >>> metric_label("tce"), metric_label("confidence_ece"), metric_label("mine")
    ('TCE', 'Confidence ECE', 'mine')
    """
    spec = metric_spec(key)
    return spec.label if spec is not None else key


def metric_key(name) -> str:
    """The registry key of a metric name or label (case-insensitive); InputError when unknown.

    Examples
    --------
    >>> metric_key("ECE"), metric_key("smECE"), metric_key("Top-label ECE")
    ('ece', 'smooth_ece', 'top_label_ece')
    """
    wanted = str(name).strip().lower()
    for registry in (BINARY_METRICS, MULTICLASS_METRICS):
        for key, spec in registry.items():
            if wanted in (key, spec.label.lower()):
                return key
    raise InputError(f"unknown metric {name!r}; choose from {', '.join(list(BINARY_METRICS) + list(MULTICLASS_METRICS))}.")
