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

Small samples (the size switch: ``IntervalChoice.small_sample`` below
``small_below`` rows per bin, :func:`rows_per_bin`, :func:`small_sample_rows`):

* RMSCE and debiased ECE, below :data:`SMALL_SAMPLE_ROWS_PER_BIN` rows per
  bin: ``"debiased_basic"`` (:func:`debiased_l2_bootstrap`), the basic
  interval of Kumar et al.'s debiased squared error, centred on the plug-in
  squared error ``t(F_hat)`` (the bootstrap world's true value), mapped to
  the root (93.5-99.5 / 91-96 at n = 500 / 5,000).
* The binned L1 errors below :data:`DOUBLE_ROWS_PER_BIN` rows per bin
  (top-label ECE: :data:`DOUBLE_ROWS_PER_CELL` per cell), n < 1,500 in the
  study's setting: the double bootstrap (:func:`double_bootstrap`;
  prepivoting, Hall 1986, Beran 1987; Davison & Hinkley 1997, Sec. 3.9,
  5.6), its B x M inner resamples vectorised (:func:`resampled_values`:
  per-cell sums for fixed edges, refitted equal-mass bins for ACE). Chosen
  by the study at n = 500 (200 replications per cell): where the two-sided
  double-basic interval covered within two Monte Carlo standard errors of
  the target it is shown (``"double_basic"``: confidence ECE 92, top-label
  ECE 90.5; the bias-corrected interval 88.5 and 82-91); where it did not
  (ECE 88-92, ACE 88.5-95, class-wise ECE 89.5), its calibrated one-sided
  upper bound ``2 theta_hat - q(u_alpha)`` is shown instead
  (``"double_upper"``, "at most": ECE 91.5-96.5, ACE 92-95.5, class-wise ECE
  94), and the lower side is answered by the calibrated-model reference
  (:func:`calibviz.metrics.consistency_test`), which the panel shows beside
  every metric. The uncalibrated percentile upper bound covers 100: valid
  but it says less. No unbiased estimator of ``|gap|`` exists, so the L1
  errors have no debiased-basic counterpart.
* smECE below :data:`SMOOTH_ROWS` rows: ``"percentile_upper"``, the
  percentile upper bound (98.5–100 at n = 500, 97–100 at 5,000): the
  bias-corrected interval covered 87–93 / 83.5–93.5 and the basic upper
  bound 88.5–95.5 / 85.5–95.5; a double bootstrap costs minutes per interval
  (2-3 ms per smECE). ICI keeps the bias-corrected interval (20-40
  replications per cell: too few to choose by).

Where the study found the chosen interval to cover less than the target at
the data's size, :func:`coverage_note` returns a sentence with the measured
coverage (from :data:`STUDY_COVERAGE`, written by the study), which the
panel, the report, the dashboard and the CLI show with the interval.

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

import math
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .resampling import BootstrapResult

__all__ = ["IntervalChoice", "INTERVALS", "METHOD_BY_METRIC", "interval_method", "interval_options", "metric_bounds",
           "difference_span",
           "debiased_l2_bootstrap", "debiased_l2_from_distribution", "double_bootstrap_ece", "bootstrap_metric",
           "chosen_method", "rows_per_bin", "coverage_note", "STUDY_COVERAGE",
           "SMALL_SAMPLE_ROWS_PER_BIN", "double_bootstrap", "resampled_values", "method_alternative",
           "DOUBLE_KEYS", "small_sample_rows"]


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
    small_sample : str or None
        The method used instead when the bins hold fewer than
        ``small_below`` rows on average (:func:`rows_per_bin`; None:
        ``method`` at every size): ``"debiased_basic"`` is
        :func:`debiased_l2_bootstrap`, ``"double_basic"``
        :func:`double_bootstrap` (two-sided), ``"double_upper"`` its
        calibrated one-sided upper bound; ``"percentile_upper"`` and
        ``"basic_upper"`` are one-sided upper bounds of
        :func:`calibviz.metrics.bootstrap` (:func:`method_alternative`).
    small_below : float
        Rows per bin below which ``small_sample`` applies.
    """

    method: str
    alternative: str = "two-sided"
    bounds: tuple = (0.0, 1.0)
    reason: str = ""
    small_sample: str | None = None
    small_below: float = 1000.0


_GAPS = "sum of noisy gaps, biased upward; percentile"

#: The small-sample method of the L2 errors: :func:`debiased_l2_bootstrap`.
DEBIASED_BASIC = "debiased_basic"

#: The small-sample method of ECE: :func:`double_bootstrap_ece`.
DOUBLE_BASIC = "double_basic"
#: The double bootstrap's calibrated one-sided upper bound (:func:`double_bootstrap` with ``alternative="less"``).
DOUBLE_UPPER = "double_upper"


def method_alternative(name: str) -> tuple[str, str]:
    """(method of the result, alternative) of a recorded interval name: ``"..._upper"`` is a one-sided bound.

    Examples
    --------
    >>> method_alternative("double_upper"), method_alternative("percentile_upper"), method_alternative("basic")
    (('double_basic', 'less'), ('percentile', 'less'), ('basic', 'two-sided'))
    """
    if name == DOUBLE_UPPER:
        return DOUBLE_BASIC, "less"
    if name.endswith("_upper"):
        return name[: -len("_upper")], "less"
    return name, "two-sided"

#: Below this many rows per bin (on average, :func:`rows_per_bin`) RMSCE and debiased ECE use the
#: debiased-basic interval. The study measured it at about 33 and 333 rows per bin (n = 500, 5,000 with 15
#: bins); above, the main method has the evidence (n = 50,000), and the panel at large n keeps its cost.
SMALL_SAMPLE_ROWS_PER_BIN = 1000
#: Below this many rows per bin ECE, ACE, confidence and class-wise ECE use the double bootstrap (two-sided or
#: its calibrated upper bound: measured at 33 rows per bin, n = 500; at 333 the bias-corrected interval covers
#: within two Monte Carlo errors, and the cost grows with n): n < 1,500 with 15 bins.
DOUBLE_ROWS_PER_BIN = 100
#: The same switch for top-label ECE, whose cells are class x bin: 25 rows per cell is n < 1,500 with 4 classes
#: and 15 bins (the study's setting: measured at 8 rows per cell, n = 500; 83 at n = 5,000 covered).
DOUBLE_ROWS_PER_CELL = 25

#: Below this many rows smECE is bounded from above only (percentile upper bound): its bias-corrected interval
#: fell short at n = 500 and 5,000; at 50,000 it covered. Between the studied sizes, on a log scale.
SMOOTH_ROWS = 15_000

_DOUBLE = "a second bootstrap level calibrates the basic interval's levels"
_UPPER = ("no two-sided interval reached the target (double-basic {two}): the double-bootstrap-calibrated "
          "upper bound, 'at most'; the calibrated-model reference answers the lower side")

#: metric key -> :class:`IntervalChoice` (the one record of the choice; docs/intervals.md has the evidence).
#: A reason says why, with the coverage (percent, n = 500 / 5,000 / 50,000) of the best alternative.
INTERVALS: dict[str, IntervalChoice] = {
    "ece": IntervalChoice("bias_corrected", small_sample=DOUBLE_UPPER, small_below=DOUBLE_ROWS_PER_BIN,
                          reason=f"{_GAPS} 0-62 / 70-89 / 88-96; below 100 rows per bin (fixed bins) "
                          + _UPPER.format(two="88-92")),
    "ace": IntervalChoice("bias_corrected", small_sample=DOUBLE_UPPER, small_below=DOUBLE_ROWS_PER_BIN,
                          reason=f"{_GAPS} 0-33 / 48-90 / 89-94; below 100 rows per bin "
                          + _UPPER.format(two="88-95")),
    "rmsce": IntervalChoice("bias_corrected", small_sample=DEBIASED_BASIC, small_below=SMALL_SAMPLE_ROWS_PER_BIN,
                            reason=f"{_GAPS} 0-24 / 20-79 / 79-96; below 1,000 rows per bin the bootstrap "
                            "misjudges the bias: the debiased squared error's interval instead"),
    "brier_reliability": IntervalChoice("bias_corrected",
                                        reason=f"{_GAPS} 0-24 / 20-79 / 79-96; the debiased squared error's "
                                        "interval covers as well (--small-sample table), no need to switch"),
    "smooth_ece": IntervalChoice("bias_corrected", small_sample="percentile_upper", small_below=SMOOTH_ROWS,
                                 reason="smoothed gaps, biased upward; percentile 0-89 / 80-96 / 88-98; below "
                                 "15,000 rows no two-sided interval covers and the double bootstrap costs minutes "
                                 "(2-3 ms per smECE): the percentile upper bound, 'at most'"),
    "ici": IntervalChoice("bias_corrected",
                          reason="smoothed gaps, as smECE; percentile 55-92 / 90 (20-40 replications per cell: "
                          "thin evidence)"),
    "mcb": IntervalChoice("bias_corrected",
                          reason="the PAV fit follows the noise (n <= 5,000 studied); percentile 0 / 0-28"),
    "dsc": IntervalChoice("bias_corrected",
                          reason="the PAV fit follows the noise (n <= 5,000 studied); percentile 41-62 / 64-68"),
    "confidence_ece": IntervalChoice("bias_corrected", small_sample=DOUBLE_BASIC, small_below=DOUBLE_ROWS_PER_BIN,
                                     reason=f"{_GAPS} 84 / 93 / 98; below 100 rows per bin (fixed bins) {_DOUBLE}"),
    "top_label_ece": IntervalChoice("bias_corrected", small_sample=DOUBLE_BASIC, small_below=DOUBLE_ROWS_PER_CELL,
                                    reason=f"{_GAPS} 0 / 82 / 95 (K x 15 cells); below 25 rows per cell (fixed "
                                    f"bins) {_DOUBLE}"),
    "classwise_ece": IntervalChoice("bias_corrected", small_sample=DOUBLE_UPPER, small_below=DOUBLE_ROWS_PER_BIN,
                                    reason=f"{_GAPS} 0 / 74 / 98; below 100 rows per bin (fixed bins) "
                                    + _UPPER.format(two="89.5")),
    "mce": IntervalChoice("percentile", "less",
                          reason="a max over bins, ruled by the emptiest bin: no two-sided interval covers "
                          "(best: basic 49-64 / 54-82 / 71-90); the bound is conservative"),
    "top_label_mce": IntervalChoice("percentile", "less",
                                    reason="as MCE; two-sided at best 57 / 66 / 48"),
    "debiased_ece": IntervalChoice("percentile", small_sample=DEBIASED_BASIC, small_below=SMALL_SAMPLE_ROWS_PER_BIN,
                                   reason="already debiased: basic about the estimate corrects twice, 51-74 / 68-92 / "
                                   "86-98; below 1,000 rows per bin: basic about the plug-in squared error, on the "
                                   "squared scale"),
    "tce": IntervalChoice("percentile", bounds=(0.0, 100.0),
                          reason="repeated rows inflate a resample's TCE, so the bootstrap bias is an artefact: "
                          "basic 33-55 / 46-64 / 54-72 / 55-85 / 85 (n = 100 / 200 / 500 / 5,000 / 50,000)"),
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


def difference_span(key: str) -> float | None:
    """The width of a metric's range: a difference of two of its values lies within plus or minus it (TCE: 100
    points), the ``span`` of :func:`calibviz.metrics.resampling.difference_interval`; None when unbounded or
    without an interval choice.

    >>> difference_span("tce"), difference_span("log_loss")
    (100.0, None)
    """
    try:
        lo, hi = metric_bounds(key)
    except InputError:
        return None
    return None if lo is None or hi is None else float(hi - lo)


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


# ----------------------------------------------------------------------------
# the small-sample interval of the L2 errors


def _root(x):
    return np.sqrt(np.maximum(x, 0.0))


def debiased_l2_bootstrap(y_true, y_prob, *, binning, squared: bool = False, estimate: str = "plugin",
                          sample_weight=None, n_resamples: int = 200, confidence: float = 0.95,
                          random_state=None, progress=None) -> BootstrapResult:
    """Bootstrap interval of the binned L2 calibration error from its debiased square.

    The plug-in squared error ``sum_b (W_b/W) (rate_b - mean_pred_b)^2``
    is biased upward by the noise of each bin's rate; Kumar, Liang & Ma's
    (2019) estimator subtracts that noise (:func:`calibviz.metrics.debiased_ece`
    with ``squared=True``) and is nearly unbiased for the squared error. This
    function bootstraps *that* estimator and reads the basic interval on the
    squared scale, about the right centre: in the bootstrap world the data
    are the population, whose squared error is the plug-in value ``t(F_hat)``
    of the sample (its bins, its rates), so ``theta_hat - theta`` is
    approximated by ``theta* - t(F_hat)`` (``plugin=`` of
    :func:`calibviz.metrics.bootstrap`; Davison & Hinkley 1997, Sec. 2.2 and
    5.2). The limits are clipped at 0 and, unless ``squared``, mapped to the
    root (a monotone map keeps coverage).

    Why: at about 30 rows per bin a bootstrap of the plug-in error misjudges
    its bias (its resamples see the noisy gaps of the sample, not the true
    ones) and the basic interval covers 76-90%; centring the percentile
    interval of the debiased estimator on itself counts the bias correction
    twice. In the coverage study (``docs/intervals.md``) this interval
    covered the population RMSCE and debiased ECE 93.5-99.5% at n = 500 and
    91-96% at 5,000 (the upper end where the true error is small and the
    interval reaches 0), against 73.5-92.5% for the previous choices.

    Parameters
    ----------
    y_true, y_prob : array-like of shape (n,)
        Binary labels and predicted probabilities.
    binning : Scheme
        The bins (refitted on every resample): ``Uniform(15)`` for RMSCE and
        the Brier reliability term, ``EqualMass(15)`` for debiased ECE.
    squared : bool, default False
        False: the interval of the root (RMSCE, debiased ECE); True: of the
        squared error (the Brier reliability term).
    estimate : {"plugin", "debiased"}, default "plugin"
        Which value is the result's ``estimate``: the plug-in error (RMSCE,
        Brier reliability; then ``debiased`` holds Kumar et al.'s estimate,
        which is the value to show with the interval) or Kumar et al.'s
        estimate itself (debiased ECE; ``debiased`` is None).
    sample_weight : array-like of shape (n,), optional
    n_resamples, confidence, random_state, progress
        As in :func:`calibviz.metrics.bootstrap`.

    Returns
    -------
    BootstrapResult
        ``method="debiased_basic"``; ``distribution`` holds the resampled
        debiased estimates on the reported scale (root clipped at 0 unless
        ``squared``); ``bias`` is the estimate minus the debiased estimate
        (``estimate="plugin"``) or the bootstrap bias of the debiased root
        about ``t(F_hat)``.

    References
    ----------
    A. Kumar, P. Liang and T. Ma, "Verified uncertainty calibration",
    NeurIPS 2019 (debiased estimator). A. C. Davison and D. V. Hinkley,
    *Bootstrap Methods and their Application*, 1997, Sec. 2.2, 5.2.

    Examples
    --------
    >>> import numpy as np
    >>> from calibviz.binning import Uniform
    >>> rng = np.random.default_rng(0)
    >>> p = rng.beta(2, 5, 500); y = (rng.random(500) < np.clip(1.3 * p, 0, 1)).astype(int)
    >>> r = debiased_l2_bootstrap(y, p, binning=Uniform(15), n_resamples=100, random_state=0)
    >>> r.method, bool(r.low <= r.point <= r.high), bool(r.point < r.estimate)
    ('debiased_basic', True, True)
    """
    from .binned import debiased_ece, ece
    from .resampling import bootstrap

    if estimate not in ("plugin", "debiased"):
        raise InputError(f"estimate must be 'plugin' or 'debiased', got {estimate!r}.")

    def sq(y, p, sample_weight=None):
        return debiased_ece(y, p, binning=binning, squared=True, sample_weight=sample_weight)

    def plugin_sq(y, p, sample_weight=None):
        return ece(y, p, binning=binning, norm="l2", sample_weight=sample_weight) ** 2

    res = bootstrap(sq, y_true, y_prob, sample_weight=sample_weight, n_resamples=n_resamples,
                    confidence=confidence, method="basic", random_state=random_state, progress=progress,
                    plugin=plugin_sq, bounds=(0.0, None))
    return debiased_l2_from_distribution(res.distribution, res.estimate, plugin_sq(y_true, y_prob, sample_weight),
                                         confidence=confidence, squared=squared, estimate=estimate,
                                         n_failed=res.n_failed)


def debiased_l2_from_distribution(distribution, estimate_sq: float, plugin_sq: float, *, confidence: float = 0.95,
                                  squared: bool = False, estimate: str = "plugin",
                                  n_failed: int = 0) -> BootstrapResult:
    """:func:`debiased_l2_bootstrap` from already computed values (the coverage study uses it).

    Parameters
    ----------
    distribution : array-like of shape (B,)
        Debiased squared errors (``debiased_ece(..., squared=True)``) on the resamples.
    estimate_sq : float
        The debiased squared error on the data.
    plugin_sq : float
        The plug-in squared error on the data, ``t(F_hat)``.
    confidence, squared, estimate
        As in :func:`debiased_l2_bootstrap`.
    n_failed : int
        Recorded in the result.

    Examples
    --------
    >>> r = debiased_l2_from_distribution([0.002, 0.003, 0.004, 0.005, 0.006], 0.001, 0.003, confidence=0.5)
    >>> round(r.low ** 2, 6), round(r.high ** 2, 6), r.estimate == 0.003 ** 0.5
    (0.0, 0.001, True)
    """
    from .resampling import interval_from_distribution

    res = interval_from_distribution(distribution, estimate_sq, method="basic", confidence=confidence,
                                     plugin=float(plugin_sq), bounds=(0.0, None))
    back = (lambda v: np.maximum(v, 0.0)) if squared else _root
    plug = float(back(plugin_sq))
    deb = float(back(res.estimate))
    dist = back(res.distribution)
    if estimate == "plugin":
        est, debiased, bias = plug, deb, plug - deb
    else:
        est, debiased = deb, None
        bias = float(dist.mean() - plug) if dist.size else math.nan
    return BootstrapResult(estimate=est, low=float(back(res.low)), high=float(back(res.high)),
                           confidence=res.confidence, method=DEBIASED_BASIC, n_resamples=res.n_resamples + n_failed,
                           distribution=dist, n_failed=n_failed, alternative="two-sided", bias=bias,
                           debiased=debiased)


# ----------------------------------------------------------------------------
# the small-sample interval of the L1 errors: a calibrated (double) bootstrap of the basic interval


def _fixed_edges(binning) -> bool:
    from ..binning import Custom, Uniform

    return isinstance(binning, (Uniform, Custom))


def bin_sums(bidx, y, p, w, idx, n_bins: int) -> np.ndarray:
    """Per-cell (weight, weighted sum of y, weighted sum of p) of resamples ``idx``: shape (m, 3, n_bins).

    ``bidx`` is each row's cell (fixed edges: a row keeps its cell in every resample), shape (n,), or
    (n, C) when a row falls in C cells at once (class-wise ECE: one cell per class) with ``y`` and ``p``
    of the same shape; ``idx`` (m, n) the resampled row numbers; one ``bincount`` per sum and column, no
    per-row loop.
    """
    m, n = idx.shape
    bidx, y, p = np.asarray(bidx), np.asarray(y), np.asarray(p)
    cols = [(bidx, y, p)] if bidx.ndim == 1 else [(bidx[:, c], y[:, c], p[:, c]) for c in range(bidx.shape[1])]
    offset = np.arange(m)[:, None] * n_bins
    ww = None if w is None else w[idx].ravel()
    out = np.zeros((m, 3, n_bins))
    for cb, cy, cp in cols:
        key = (offset + cb[idx]).ravel()
        yy, pp = cy[idx].ravel(), cp[idx].ravel()
        if ww is None:
            out[:, 0] += np.bincount(key, minlength=m * n_bins).reshape(m, n_bins)
            out[:, 1] += np.bincount(key, yy, minlength=m * n_bins).reshape(m, n_bins)
            out[:, 2] += np.bincount(key, pp, minlength=m * n_bins).reshape(m, n_bins)
        else:
            out[:, 0] += np.bincount(key, ww, minlength=m * n_bins).reshape(m, n_bins)
            out[:, 1] += np.bincount(key, ww * yy, minlength=m * n_bins).reshape(m, n_bins)
            out[:, 2] += np.bincount(key, ww * pp, minlength=m * n_bins).reshape(m, n_bins)
    return out


def ece_from_sums(sums: np.ndarray) -> np.ndarray:
    """``sum_cells |sum y - sum p| / sum_cells weight`` of each resample from :func:`bin_sums`; NaN if weightless.

    With one cell per row this is ECE (confidence ECE, top-label ECE: cells = class x bin); with K cells per
    row (class-wise ECE) the total weight counts every row K times, which gives the mean over classes.
    """
    total = sums[:, 0].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.abs(sums[:, 1] - sums[:, 2]).sum(axis=1) / total


def equal_mass_sums(y, p, w, idx, n_bins: int) -> np.ndarray:
    """Per-bin sums (as :func:`bin_sums`) of resamples ``idx`` with equal-mass bins refitted on each resample.

    Exactly the bins of :class:`calibviz.binning.EqualMass` on every resample, vectorised over the (m, n)
    matrix of resampled rows, without sorting it: the distinct scores are sorted once, and a resample is
    a count of rows per distinct score. The cut before bin j is at sorted position ``floor(j N / B)``
    (N = resampled rows of positive weight); a cut strictly inside a run of equal scores moves to the
    nearer end of the run, the lower end when both are as near (the library's tie rule: rows with the
    same score share a bin; a resample repeats rows, so ties are everywhere). Bin sums are differences of
    cumulative sums over the distinct scores at the cuts; rows of weight 0 belong to no bin.
    """
    from ..binning import _snap_to_runs

    m, n = idx.shape
    _, g = np.unique(p, return_inverse=True)
    G = int(g.max()) + 1 if n else 0
    rows = np.arange(m)[:, None]
    key = (rows * G + g[idx]).ravel()
    present = np.ones(n) if w is None else (w > 0).astype(np.float64)
    wt = np.ones(n) if w is None else w
    sums = np.zeros((4, m, G + 1))  # rows of positive weight, weight, weighted y, weighted p per distinct score
    for j, v in enumerate((present, wt, wt * y, wt * p)):
        np.cumsum(np.bincount(key, v[idx].ravel(), minlength=m * G).reshape(m, G), axis=1, out=sums[j][:, 1:])
    cc = sums[0][:, 1:]  # sorted positions at the end of each distinct score (exact integers)
    n_pos = cc[:, -1].astype(np.int64)
    cuts = (np.arange(1, n_bins, dtype=np.int64)[None, :] * n_pos[:, None]) // n_bins  # (m, B-1)
    flat = (cc + rows * (n + 1)).ravel()  # row r's ends lie in [r (n + 1), r (n + 1) + n]: sorted as a whole

    def groups_ending_by(pos, side):  # per row: how many distinct scores end at or before (side="right") pos
        return np.searchsorted(flat, (pos + rows * (n + 1)).ravel(), side=side).reshape(pos.shape) - rows * G

    run = np.minimum(groups_ending_by(cuts, "right"), G - 1)  # the distinct score at sorted position cut
    run_end = np.take_along_axis(cc, run, axis=1)
    run_start = np.take_along_axis(sums[0], run, axis=1)
    cuts = _snap_to_runs(cuts, run_start, run_end)
    at = groups_ending_by(np.concatenate((np.zeros((m, 1), np.int64), cuts, n_pos[:, None]), axis=1), "right")
    out = np.empty((m, 3, n_bins))
    for j in range(3):
        c = np.take_along_axis(sums[j + 1], at, axis=1)
        out[:, j] = c[:, 1:] - c[:, :-1]
    return out


#: Metrics whose value on a resample the double bootstrap computes vectorised (:func:`resampled_values`).
DOUBLE_KEYS = ("ece", "ace", "confidence_ece", "top_label_ece", "classwise_ece")


def resampled_values(key: str, y_true, y_prob, *, binning=None, n_bins: int = 15, sample_weight=None):
    """The metric of each resample of rows, vectorised: a function ``f(idx) -> ndarray of shape (m,)``.

    ``idx`` is an (m, n) matrix of resampled row numbers; ``f(idx)[i]`` equals the library metric on the
    rows ``idx[i]`` (with their weights) up to floating-point rounding, without a per-resample call:

    * ``"ece"`` (``binning`` with fixed edges), ``"confidence_ece"``, ``"top_label_ece"`` (cells = predicted
      class x bin), ``"classwise_ece"`` (K cells per row, one per class): a row keeps its cell in every
      resample, so a resample's value is a function of per-cell sums (:func:`bin_sums`);
    * ``"ace"`` (``n_bins`` equal-mass bins): the bins are refitted on every resample
      (:func:`equal_mass_sums`, the tie rule of :class:`calibviz.binning.EqualMass`).

    Parameters
    ----------
    key : str
        One of :data:`DOUBLE_KEYS`.
    y_true : array-like of shape (n,)
        Binary labels (``"ece"``, ``"ace"``) or class indices.
    y_prob : array-like of shape (n,) or (n, K)
    binning : Uniform or Custom
        Bins with fixed edges (all keys but ``"ace"``).
    n_bins : int, default 15
        Equal-mass bins of ACE.
    sample_weight : array-like of shape (n,), optional

    Returns
    -------
    callable

    Examples
    --------
    >>> import numpy as np
    >>> from calibviz.metrics import ace
    >>> rng = np.random.default_rng(0); p = rng.beta(2, 5, 300); y = (rng.random(300) < p).astype(int)
    >>> idx = rng.integers(0, 300, size=(3, 300))
    >>> f = resampled_values("ace", y, p)
    >>> bool(np.allclose(f(idx), [ace(y[i], p[i]) for i in idx], rtol=1e-12))
    True
    """
    from ..reduce import _top
    from ..validation import check_binary, check_multiclass

    if key not in DOUBLE_KEYS:
        raise InputError(f"no vectorised resampled metric for {key!r}; available: {', '.join(DOUBLE_KEYS)}.")
    # rows of weight 0 are kept: resamples draw row numbers of the data as given (they are absent rows)
    if key in ("ece", "ace"):
        y, p, w = check_binary(y_true, y_prob, sample_weight, drop_zero_weight=False)
        y = y.astype(np.float64)
        if key == "ace":
            return lambda idx: ece_from_sums(equal_mass_sums(y, p, w, idx, int(n_bins)))
    else:
        y, P, w = check_multiclass(y_true, y_prob, sample_weight, drop_zero_weight=False)
    if not _fixed_edges(binning):
        raise InputError(f"the vectorised {key} needs bins with fixed edges (Uniform or Custom); got {binning!r}.")
    if key == "ece":
        bins = binning.fit(p)
        cell, k = bins.index, bins.n_bins
    elif key in ("confidence_ece", "top_label_ece"):
        c, h = _top(P)
        bins = binning.fit(h)
        y, p, k = (y == c).astype(np.float64), h, bins.n_bins
        cell = bins.index if key == "confidence_ece" else c * k + bins.index
        k = k if key == "confidence_ece" else k * P.shape[1]
    else:  # classwise: row i falls in cell (class l, bin of P[i, l]) of every class l
        K = P.shape[1]
        fits = [binning.fit(P[:, lab]) for lab in range(K)]
        nb = fits[0].n_bins
        cell = np.stack([lab * nb + f.index for lab, f in enumerate(fits)], axis=1)
        y = (y[:, None] == np.arange(K)[None, :]).astype(np.float64)
        p, k = P, K * nb
    return lambda idx: ece_from_sums(bin_sums(cell, y, p, w, idx, k))


def double_basic_u(values, idx, outer, estimate: float, rng, n_inner: int, progress=None) -> np.ndarray:
    """The prepivoted roots ``u_b`` of a double bootstrap of the basic interval: shape (B,) (NaN if undefined).

    For each outer resample b (rows ``idx[b]``, value ``outer[b]``), ``n_inner`` resamples of *its* rows
    (``values``: :func:`resampled_values`) give ``u_b`` = share of inner values with ``theta** - theta*_b
    <= theta*_b - theta_hat``: where the first-level root distribution puts the data's estimate. Were the
    basic interval exact, ``u`` would be uniform (Beran 1987; Davison & Hinkley 1997, Sec. 3.9).
    """
    B, n = idx.shape
    u = np.full(B, np.nan)
    for b in range(B):  # a loop over outer resamples; each inner level is one vectorised call
        if not np.isfinite(outer[b]):
            continue
        vals = values(idx[b][rng.integers(0, n, size=(n_inner, n))])
        vals = vals[np.isfinite(vals)]
        if vals.size:
            u[b] = np.mean(vals - outer[b] <= outer[b] - estimate)
        if progress is not None:
            progress(b + 1)
    return u


def double_basic_limits(outer, estimate: float, u, confidence: float, alternative: str = "two-sided",
                        bounds=(0.0, 1.0)) -> tuple[float, float]:
    """Limits of the basic interval read at the levels the double bootstrap calibrated.

    Two-sided: ``[2 theta_hat - q(u_(1 - alpha/2)), 2 theta_hat - q(u_(alpha/2))]``; ``"less"`` (an upper
    bound): ``(bounds[0], 2 theta_hat - q(u_alpha)]``, where ``u_a`` is the a-quantile of the prepivoted
    roots :func:`double_basic_u` and ``q`` the quantile of the finite outer values. Clipped to ``bounds``.
    """
    outer = np.asarray(outer, float)
    finite = outer[np.isfinite(outer)]
    u = np.asarray(u, float)
    u = u[np.isfinite(u)]
    alpha = 1.0 - confidence
    lo_b, hi_b = bounds

    def clip(v):
        return min(max(v, lo_b), hi_b)

    if alternative == "less":
        return clip(lo_b), clip(2 * estimate - float(np.quantile(finite, np.quantile(u, alpha))))
    lo_level, hi_level = np.quantile(u, [alpha / 2, 1 - alpha / 2])
    return (clip(2 * estimate - float(np.quantile(finite, hi_level))),
            clip(2 * estimate - float(np.quantile(finite, lo_level))))


def double_bootstrap(key: str, y_true, y_prob, *, binning=None, n_bins: int = 15, sample_weight=None,
                     n_resamples: int = 200, n_inner: int = 100, confidence: float = 0.95,
                     alternative: str = "two-sided", random_state=None, progress=None) -> BootstrapResult:
    """A binned L1 calibration error with the basic interval at levels calibrated by a double bootstrap.

    The basic interval ``[2 theta_hat - q(1 - alpha/2), 2 theta_hat - q(alpha/2)]`` of a binned L1 error
    misses the population value more often than it should when bins hold few rows: the bootstrap
    misjudges the bias of ``|noisy gap|`` (it sees the sample's noisy gaps, not the true ones), and no
    unbiased estimator of ``|gap|`` exists to centre on instead. A second bootstrap level measures that
    error and moves the quantile levels (prepivoting: :func:`double_basic_u`, :func:`double_basic_limits`;
    Hall 1986, Beran 1987; Davison & Hinkley 1997, Sec. 3.9, 5.6). Its cost is ``n_resamples x n_inner``
    metric evaluations, affordable because they are vectorised (:func:`resampled_values`): per-cell sums
    for fixed-edge bins (ECE, confidence / top-label / class-wise ECE), counts per distinct score for
    ACE's equal-mass bins. Measured on this machine at n = 500 / 1,499, 200 x 100 resamples, CPU: ECE 0.18 /
    0.52 s, ACE 0.60 / 1.64 s, confidence and top-label ECE 0.16 / 0.44 s, class-wise ECE (K = 4) 0.58 /
    1.61 s; the panel runs it below the size switch only (n < 1,500 with 15 bins, :data:`INTERVALS`).

    ``alternative="less"`` gives the calibrated one-sided upper bound ``2 theta_hat - q(u_alpha)``, for
    the cells of the coverage study where no two-sided interval reached the target (``docs/intervals.md``):
    "at most"; whether the model is calibrated at all is the calibrated-model reference's question
    (:func:`calibviz.metrics.consistency_test`).

    Parameters
    ----------
    key : str
        One of :data:`DOUBLE_KEYS`.
    y_true, y_prob : array-like
        Binary labels and P(y = 1) of shape (n,) for ``"ece"`` and ``"ace"``; class indices and (n, K)
        probabilities for the multiclass errors.
    binning : Uniform or Custom
        Bins with fixed edges (every key but ``"ace"``, which uses ``n_bins`` equal-mass bins).
    n_bins : int, default 15
    sample_weight : array-like of shape (n,), optional
        Rows are resampled with their weights, as in :func:`calibviz.metrics.bootstrap`.
    n_resamples : int, default 200
        Outer resamples B.
    n_inner : int, default 100
        Inner resamples M per outer resample.
    confidence : float, default 0.95
    alternative : {"two-sided", "less"}
    random_state : None, int, SeedSequence or Generator
    progress : callable ``progress(done, total)``, optional
        Called as the outer resamples' inner levels finish.

    Returns
    -------
    BootstrapResult
        ``method="double_basic"``, ``estimate`` the metric, ``debiased`` the bias-corrected estimate
        ``2 theta_hat - mean(theta*)`` (the value to show, as for ``"bias_corrected"``), limits clipped
        to [0, 1] (the lower one is 0 for ``"less"``).

    References
    ----------
    P. Hall, "On the bootstrap and confidence intervals", Ann. Statist. 14(4), 1986. R. Beran,
    "Prepivoting to reduce level error of confidence sets", Biometrika 74(3), 1987. A. C. Davison and
    D. V. Hinkley, *Bootstrap Methods and their Application*, 1997, Sec. 3.9 and 5.6.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> p = rng.beta(2, 5, 500); y = (rng.random(500) < np.clip(1.3 * p, 0, 1)).astype(int)
    >>> r = double_bootstrap("ace", y, p, n_resamples=100, n_inner=50, random_state=0)
    >>> r.method, bool(r.low <= r.point <= r.high)
    ('double_basic', True)
    >>> double_bootstrap("ace", y, p, n_resamples=100, n_inner=50, random_state=0, alternative="less").low
    0.0
    """
    import numbers

    from .resampling import _check_interval_args

    for name, v in (("n_resamples", n_resamples), ("n_inner", n_inner)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 2:
            raise InputError(f"{name} must be an integer >= 2, got {v!r}.")
    if alternative not in ("two-sided", "less"):
        raise InputError(f"alternative must be 'two-sided' or 'less' for the double bootstrap, got {alternative!r}.")
    _, confidence, _, _ = _check_interval_args("basic", confidence, alternative, (0.0, 1.0))
    values = resampled_values(key, y_true, y_prob, binning=binning, n_bins=n_bins, sample_weight=sample_weight)
    try:
        rng = np.random.default_rng(random_state)
    except (TypeError, ValueError) as exc:
        raise InputError(f"random_state must be None, an int, a SeedSequence or a numpy Generator ({exc}).") from None
    n = np.shape(y_true)[0]
    estimate = float(_library_value(key, y_true, y_prob, binning, n_bins, sample_weight))
    idx = rng.integers(0, n, size=(int(n_resamples), n))
    outer = values(idx)
    u = double_basic_u(values, idx, outer, estimate, rng, int(n_inner),
                       progress=None if progress is None else (lambda b: progress(b, int(n_resamples))))
    low, high = double_basic_limits(outer, estimate, u, confidence, alternative)
    finite = outer[np.isfinite(outer)]
    bias = float(finite.mean() - estimate)
    return BootstrapResult(estimate=estimate, low=low, high=high, confidence=confidence, method=DOUBLE_BASIC,
                           n_resamples=int(n_resamples), distribution=finite, n_failed=int(outer.size - finite.size),
                           alternative=alternative, bias=bias, debiased=min(max(estimate - bias, 0.0), 1.0))


def _library_value(key, y, p, binning, n_bins, w) -> float:
    from . import binned, multiclass

    if key == "ece":
        return binned.ece(y, p, binning=binning, sample_weight=w)
    if key == "ace":
        return binned.ace(y, p, n_bins=n_bins, sample_weight=w)
    return getattr(multiclass, key)(y, p, binning=binning, sample_weight=w)


def double_bootstrap_ece(y_true, y_prob, *, binning, sample_weight=None, n_resamples: int = 200,
                         n_inner: int = 100, confidence: float = 0.95, random_state=None,
                         progress=None) -> BootstrapResult:
    """ECE with the double-bootstrap interval (fixed-edge bins): ``double_bootstrap("ece", ...)``.

    Examples
    --------
    >>> import numpy as np
    >>> from calibviz.binning import Uniform
    >>> rng = np.random.default_rng(0)
    >>> p = rng.beta(2, 5, 500); y = (rng.random(500) < np.clip(1.3 * p, 0, 1)).astype(int)
    >>> r = double_bootstrap_ece(y, p, binning=Uniform(15), n_resamples=100, n_inner=50, random_state=0)
    >>> r.method, bool(r.low <= r.point <= r.high)
    ('double_basic', True)
    """
    if not _fixed_edges(binning):
        raise InputError("the double bootstrap of ECE needs bins with fixed edges (Uniform or Custom); "
                         f"got {binning!r}.")
    return double_bootstrap("ece", y_true, y_prob, binning=binning, sample_weight=sample_weight,
                            n_resamples=n_resamples, n_inner=n_inner, confidence=confidence,
                            random_state=random_state, progress=progress)


# ----------------------------------------------------------------------------
# the size of the data in the study's terms, and what the study says about it

# metric keys whose value adds up bins (cells: K x bins for the top-label ones); the others are read by rows
_BINNED = {"ece", "ace", "mce", "rmsce", "debiased_ece", "brier_reliability", "confidence_ece", "classwise_ece"}
_CELLS = {"top_label_ece", "top_label_mce"}
#: The study's setting: 15 bins, K = 4 classes for the multiclass models.
STUDY_BINS, STUDY_CLASSES = 15, 4


def rows_per_bin(key: str, n_rows: float, *, n_bins: int = STUDY_BINS, n_classes: int = 2) -> float:
    """Average rows per bin (per cell for top-label metrics; rows for metrics without bins).

    This is the size that decides how well a binned error's bootstrap works:
    ``n / n_bins`` (``n / (K n_bins)`` for top-label ECE and MCE, whose cells
    are class x bin), ``n`` for smECE, ICI, TCE, scores and the CORP terms.
    With weights pass Kish's effective size as ``n_rows``.

    Examples
    --------
    >>> rows_per_bin("ece", 500), rows_per_bin("top_label_ece", 500, n_classes=4), rows_per_bin("brier", 500)
    (33.333333333333336, 8.333333333333334, 500.0)
    """
    if key in _CELLS:
        return float(n_rows) / (max(int(n_bins), 1) * max(int(n_classes), 1))
    if key in _BINNED:
        return float(n_rows) / max(int(n_bins), 1)
    return float(n_rows)


def small_sample_rows(key: str, *, n_bins: int = STUDY_BINS, n_classes: int = 2) -> int | None:
    """The fewest rows at which a metric's main interval applies (below: its small-sample method); None without one.

    Examples
    --------
    >>> small_sample_rows("ece"), small_sample_rows("top_label_ece", n_classes=4), small_sample_rows("brier")
    (1500, 1500, None)
    """
    c = _choice(key)
    if c.small_sample is None:
        return None
    per_row = rows_per_bin(key, 1.0, n_bins=n_bins, n_classes=n_classes)  # rows per bin of one row
    n = math.ceil(c.small_below / per_row - 1e-9)
    while rows_per_bin(key, n, n_bins=n_bins, n_classes=n_classes) < c.small_below:
        n += 1
    while n > 1 and rows_per_bin(key, n - 1, n_bins=n_bins, n_classes=n_classes) >= c.small_below:
        n -= 1
    return n


def _chosen(key: str, rows: float | None) -> str:
    c = _choice(key)
    if c.small_sample is not None and rows is not None and rows < c.small_below:
        return c.small_sample
    return c.method


def chosen_method(key: str, rows_per_bin: float) -> str:
    """The method the panel uses for a metric at this many rows per bin (:func:`rows_per_bin`).

    Examples
    --------
    >>> chosen_method("ece", 33), chosen_method("ece", 333), chosen_method("rmsce", 333)
    ('double_upper', 'bias_corrected', 'debiased_basic')
    >>> chosen_method("top_label_ece", 8), chosen_method("smooth_ece", 5000)
    ('double_basic', 'percentile_upper')
    """
    return _chosen(key, rows_per_bin)


def bootstrap_metric(key: str, metric, y_true, y_prob, *, binning=None, n_bins: int = STUDY_BINS,
                     n_classes: int = 2, sample_weight=None, n_resamples: int = 200, confidence: float = 0.95,
                     random_state=None, progress=None, distribution=None, row_order=None) -> BootstrapResult:
    """The chosen interval of a panel metric (what :func:`calibviz.panel.metric_panel` shows).

    The one place that applies :data:`INTERVALS`, the size switch included: the metric panel and
    :func:`calibviz.compare.compare_models` both call it.

    Parameters
    ----------
    key : str
        A key of :data:`INTERVALS`.
    metric : callable ``metric(y, p, sample_weight=None) -> float``
        The metric exactly as the panel computes it.
    y_true, y_prob, sample_weight
        The data.
    binning : Scheme, optional
        The metric's bins; needed by the small-sample methods: RMSCE, Brier
        reliability and debiased ECE (:func:`debiased_l2_bootstrap`: any
        scheme), ECE and the multiclass ECEs (:func:`double_bootstrap`: fixed
        edges; with other bins the main method is used). ACE's equal-mass
        bins come from ``n_bins``.
    n_bins, n_classes : int
        For :func:`rows_per_bin`, which decides the small-sample method
        (with weights, from Kish's effective size; the double bootstrap,
        whose cost grows with the rows, also needs the rows themselves below
        the threshold).
    n_resamples, confidence, random_state, progress
        As in :func:`calibviz.metrics.bootstrap`.
    distribution : array-like of shape (n_resamples,), optional
        The metric on the resamples :func:`calibviz.metrics.bootstrap` draws
        with this ``random_state`` (a caller that needs them anyway, e.g. for
        paired differences); when the chosen method reads its interval off
        them they are used instead of resampling again.
    row_order : array-like of int, shape (n,), optional
        The order in which each resample lists its rows (``row_order`` of
        :func:`calibviz.metrics.bootstrap`; the same resamples).

    Returns
    -------
    BootstrapResult
        ``alternative="less"`` for a one-sided upper bound ("at most").

    Examples
    --------
    >>> import numpy as np
    >>> from calibviz.binning import Uniform
    >>> from calibviz.metrics import ece
    >>> rng = np.random.default_rng(0); p = rng.beta(2, 5, 600); y = (rng.random(600) < p).astype(int)
    >>> f = lambda y, p, sample_weight=None: ece(y, p, norm="l2", sample_weight=sample_weight)
    >>> bootstrap_metric("rmsce", f, y, p, binning=Uniform(15), n_resamples=50, random_state=0).method
    'debiased_basic'
    """
    from .resampling import bootstrap, interval_from_distribution

    c = _choice(key)
    w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    n_eff = np.shape(y_true)[0] if w is None else (w.sum() ** 2 / (w @ w) if (w @ w) > 0 else 0.0)
    name = _chosen(key, rows_per_bin(key, n_eff, n_bins=n_bins, n_classes=n_classes))
    method, alternative = method_alternative(name) if name != c.method else (c.method, c.alternative)
    # the double bootstrap's cost is B x M x (rows): with weights, the rows (not Kish's size) must be few too
    rows_actual = rows_per_bin(key, np.shape(y_true)[0], n_bins=n_bins, n_classes=n_classes)
    if method == DOUBLE_BASIC:
        if key in DOUBLE_KEYS and (key == "ace" or _fixed_edges(binning)) and rows_actual < c.small_below:
            return double_bootstrap(key, y_true, y_prob, binning=binning, n_bins=n_bins, sample_weight=sample_weight,
                                    n_resamples=n_resamples, confidence=confidence, alternative=alternative,
                                    random_state=random_state, progress=progress)
        method, alternative = c.method, c.alternative  # bins without fixed edges, or too many rows: the main method
    if method == DEBIASED_BASIC:
        if binning is None:
            raise InputError(f"the small-sample interval of {key!r} needs the metric's binning (binning=...).")
        return debiased_l2_bootstrap(y_true, y_prob, binning=binning, squared=key == "brier_reliability",
                                     estimate="debiased" if key == "debiased_ece" else "plugin",
                                     sample_weight=sample_weight, n_resamples=n_resamples, confidence=confidence,
                                     random_state=random_state, progress=progress)
    if distribution is not None:
        estimate = float(metric(y_true, y_prob, sample_weight=sample_weight))
        return interval_from_distribution(distribution, estimate, method=method, confidence=confidence,
                                          alternative=alternative, bounds=c.bounds)
    return bootstrap(metric, y_true, y_prob, sample_weight=sample_weight, n_resamples=n_resamples,
                     confidence=confidence, random_state=random_state, progress=progress, method=method,
                     alternative=alternative, bounds=c.bounds, row_order=row_order)


#: Coverage the study measured for each metric's chosen method(s): {(key, method): {n: (min, max, reps)}} over
#: the models whose population value is not on the boundary (min/max coverage in percent, the fewest
#: replications of a model in that cell). Written by ``benchmarks/coverage_study.py`` (do not edit by hand).
# <study-coverage:start>
STUDY_COVERAGE: dict = {
    ('accuracy', 'percentile'): {500: (89.0, 89.0, 100), 5000: (95.0, 95.0, 40)},
    ('ace', 'bias_corrected'): {500: (81.5, 91.0, 200), 5000: (89.0, 94.0, 200), 50000: (92.5, 92.5, 80)},
    ('ace', 'double_upper'): {500: (92.0, 95.5, 200)},
    ('auc', 'percentile'): {500: (96.0, 96.0, 100), 5000: (95.0, 95.0, 40)},
    ('brier', 'percentile'): {500: (92.0, 97.0, 100), 5000: (93.0, 96.0, 100), 50000: (93.3, 100.0, 60)},
    ('brier_reliability', 'bias_corrected'): {500: (95.5, 99.5, 200), 5000: (93.0, 96.0, 200), 50000: (96.2, 98.8, 80)},
    ('classwise_ece', 'bias_corrected'): {500: (87.0, 87.0, 200), 5000: (92.5, 92.5, 200), 50000: (97.5, 97.5, 40)},
    ('classwise_ece', 'double_upper'): {500: (94.0, 94.0, 200)},
    ('classwise_tce', 'percentile'): {500: (75.0, 75.0, 20)},
    ('confidence_ece', 'bias_corrected'): {500: (89.0, 89.0, 200), 5000: (93.5, 93.5, 200), 50000: (97.5, 97.5, 40)},
    ('confidence_ece', 'double_basic'): {500: (92.0, 92.0, 200)},
    ('debiased_ece', 'debiased_basic'): {500: (93.5, 96.5, 200), 5000: (91.0, 96.0, 200)},
    ('debiased_ece', 'percentile'): {500: (75.5, 84.0, 200), 5000: (85.0, 91.0, 200), 50000: (92.5, 98.8, 80)},
    ('dsc', 'bias_corrected'): {500: (90.0, 96.0, 100), 5000: (90.0, 93.0, 100)},
    ('ece', 'bias_corrected'): {500: (82.5, 89.0, 200), 5000: (91.0, 93.5, 200), 50000: (91.2, 95.0, 80)},
    ('ece', 'double_upper'): {500: (91.5, 96.5, 200)},
    ('ici', 'bias_corrected'): {500: (80.0, 90.0, 40), 5000: (80.0, 80.0, 20)},
    ('log_loss', 'percentile'): {500: (92.5, 98.0, 100), 5000: (91.0, 95.5, 100), 50000: (93.3, 100.0, 60)},
    ('mcb', 'bias_corrected'): {500: (86.0, 94.0, 100), 5000: (76.0, 94.0, 100)},
    ('mce', 'percentile'): {500: (100.0, 100.0, 200), 5000: (100.0, 100.0, 200), 50000: (100.0, 100.0, 80)},
    ('rmsce', 'bias_corrected'): {500: (75.5, 89.5, 200), 5000: (89.5, 94.5, 200), 50000: (92.5, 98.8, 80)},
    ('rmsce', 'debiased_basic'): {500: (95.5, 99.5, 200), 5000: (93.0, 95.0, 200)},
    ('smooth_ece', 'bias_corrected'): {500: (81.0, 88.0, 100), 5000: (85.0, 95.0, 100), 50000: (92.5, 100.0, 40)},
    ('smooth_ece', 'percentile_upper'): {500: (98.5, 100.0, 200), 5000: (97.0, 100.0, 200)},
    ('tce', 'percentile'): {100: (93.0, 99.5, 200), 200: (87.5, 97.0, 200), 500: (83.0, 97.5, 200), 5000: (81.0, 99.0, 100), 50000: (100.0, 100.0, 20)},
    ('top_label_ece', 'bias_corrected'): {500: (82.0, 82.0, 200), 5000: (92.5, 92.5, 200), 50000: (97.5, 97.5, 40)},
    ('top_label_ece', 'double_basic'): {500: (90.5, 90.5, 200)},
    ('top_label_mce', 'percentile'): {500: (100.0, 100.0, 200), 5000: (100.0, 100.0, 200), 50000: (100.0, 100.0, 40)},
    ('unc', 'percentile'): {500: (90.0, 94.0, 100), 5000: (94.0, 98.0, 100)},
}
# <study-coverage:end>

_STUDY_TARGET = 93.0


def _undercovers(lo: float, reps: int) -> bool:
    """The study's lowest coverage lies more than two Monte Carlo errors (at 95%) below the 93% target."""
    return lo < _STUDY_TARGET - 200.0 * math.sqrt(0.95 * 0.05 / max(int(reps), 1))


def coverage_note(key: str, n_rows: float, *, n_bins: int = STUDY_BINS, n_classes: int = 2,
                  method: str | None = None, alternative: str = "two-sided") -> str:
    """A sentence saying that a shown interval is approximate, with the coverage the study measured; else "".

    The study cell used is the one whose rows per bin (:func:`rows_per_bin`,
    with the study's 15 bins and 4 classes) lie nearest to the data's on a
    log scale (for a method chosen by size, among the sizes it is chosen at).
    The sentence is returned when that cell's lowest coverage over the
    miscalibrated models lies more than two Monte Carlo standard errors (at
    95%) below the 93% target; it names the studied size when that is more
    than twice or less than half the data's.

    Parameters
    ----------
    key : str
        A key of :data:`INTERVALS`.
    n_rows : float
        Rows (Kish's effective size with weights).
    n_bins, n_classes : int
        The bins and classes of the data's metric.
    method : str, optional
        The interval method shown (``BootstrapResult.method``; default: the
        method chosen for this size).
    alternative : str, default "two-sided"
        ``BootstrapResult.alternative`` of the interval shown (``"less"``:
        an upper bound, e.g. ``"double_basic"`` + ``"less"`` is
        ``"double_upper"``).

    Examples
    --------
    >>> coverage_note("brier", 500)
    ''
    """
    rows = rows_per_bin(key, n_rows, n_bins=n_bins, n_classes=n_classes)
    c = _choice(key)
    if method is None:
        method = _chosen(key, rows)
    elif c.small_sample is not None and method_alternative(c.small_sample) == (method, alternative):
        method = c.small_sample  # the result's (method, alternative) is the recorded small-sample name
    cells = STUDY_COVERAGE.get((key, method))
    if not cells or not (rows > 0):
        return ""
    study_rows = {n: rows_per_bin(key, n, n_bins=STUDY_BINS, n_classes=STUDY_CLASSES) for n in cells}
    if c.small_sample is not None and method == _chosen(key, rows):
        # a method chosen by size answers for the sizes it is chosen at: match within its range
        small = rows < c.small_below
        inside = {n for n, r in study_rows.items() if (r < c.small_below) == small}
        study_rows = {n: r for n, r in study_rows.items() if n in inside} or study_rows
    n = min(study_rows, key=lambda m: abs(math.log(study_rows[m] / rows)))
    lo, hi, reps = cells[n]
    if not _undercovers(lo, reps):
        return ""
    cover = f"{lo:.0f}%" if round(lo) == round(hi) else f"{lo:.0f}–{hi:.0f}%"
    unit = "rows per cell" if key in _CELLS else "rows per bin" if key in _BINNED else "rows"
    if key in _BINNED or key in _CELLS:
        size = f"{'cells' if key in _CELLS else 'bins'} hold about {rows:,.0f} rows"
    else:
        size = f"about {rows:,.0f} rows"
    if 0.5 <= study_rows[n] / rows <= 2.0:
        such = "such 95% intervals"
    else:
        such = f"95% intervals at about {study_rows[n]:,.0f} {unit} (the nearest size studied)"
    return (f"Approximate interval: {size}; in the coverage study {such} covered the true value "
            f"{cover} of the time, not 95% (docs/intervals.md).")
