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

Small samples (fewer than :data:`SMALL_SAMPLE_ROWS_PER_BIN` rows per bin,
:func:`rows_per_bin`): RMSCE and debiased ECE switch to ``"debiased_basic"`` (:func:`debiased_l2_bootstrap`): the basic
interval of Kumar et al.'s debiased squared error, centred on the plug-in
squared error ``t(F_hat)`` (the bootstrap world's true value), mapped to the
root. It met the target where the intervals above did not (the study's
``--small-sample`` table in ``docs/intervals.md``). ECE, below
:data:`DOUBLE_ROWS_PER_BIN` rows per bin with fixed-edge bins, uses
``"double_basic"`` (:func:`double_bootstrap_ece`): the basic interval at
levels calibrated by a second bootstrap level (prepivoting, Hall 1986, Beran
1987; Davison & Hinkley 1997, Sec. 3.9, 5.6), vectorised as per-bin sums.
It raised coverage by 2-6 points at n = 500 without reaching 93% for every
model. The other L1 errors (ACE, smECE, top-label / class-wise / confidence
ECE) keep the bias-corrected interval: no unbiased estimator of ``|gap|``
exists, and the double bootstrap was measured for ECE only.

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
           "debiased_l2_bootstrap", "debiased_l2_from_distribution", "double_bootstrap_ece", "bootstrap_metric",
           "chosen_method", "rows_per_bin", "coverage_note", "STUDY_COVERAGE",
           "SMALL_SAMPLE_ROWS_PER_BIN"]


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
        :func:`double_bootstrap_ece`.
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

#: Below this many rows per bin (on average, :func:`rows_per_bin`) RMSCE and debiased ECE use the
#: debiased-basic interval. The study measured it at about 33 and 333 rows per bin (n = 500, 5,000 with 15
#: bins); above, the main method has the evidence (n = 50,000), and the panel at large n keeps its cost.
SMALL_SAMPLE_ROWS_PER_BIN = 1000
#: Below this many rows per bin ECE uses the double bootstrap (measured at 33 rows per bin; at 333 the
#: bias-corrected interval already covers within two Monte Carlo errors, and the cost grows with n).
DOUBLE_ROWS_PER_BIN = 100

#: metric key -> :class:`IntervalChoice` (the one record of the choice; docs/intervals.md has the evidence).
#: A reason says why, with the coverage (percent, n = 500 / 5,000 / 50,000) of the best alternative.
INTERVALS: dict[str, IntervalChoice] = {
    "ece": IntervalChoice("bias_corrected", small_sample=DOUBLE_BASIC, small_below=DOUBLE_ROWS_PER_BIN,
                          reason=f"{_GAPS} 0-62 / 70-89 / 88-96; below 100 rows per bin (fixed bins) the "
                          "basic interval at levels calibrated by a double bootstrap"),
    "ace": IntervalChoice("bias_corrected", reason=f"{_GAPS} 0-33 / 48-90 / 89-94"),
    "rmsce": IntervalChoice("bias_corrected", small_sample=DEBIASED_BASIC, small_below=SMALL_SAMPLE_ROWS_PER_BIN,
                            reason=f"{_GAPS} 0-24 / 20-79 / 79-96; below 1,000 rows per bin the bootstrap "
                            "misjudges the bias: the debiased squared error's interval instead"),
    "brier_reliability": IntervalChoice("bias_corrected",
                                        reason=f"{_GAPS} 0-24 / 20-79 / 79-96; the debiased squared error's "
                                        "interval covers as well (--small-sample table), no need to switch"),
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
    "debiased_ece": IntervalChoice("percentile", small_sample=DEBIASED_BASIC, small_below=SMALL_SAMPLE_ROWS_PER_BIN,
                                   reason="already debiased: basic about the estimate corrects twice, 51-74 / 68-92 / "
                                   "86-98; below 1,000 rows per bin: basic about the plug-in squared error, on the "
                                   "squared scale"),
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
# the small-sample interval of ECE: a calibrated (double) bootstrap of the basic interval


def _fixed_edges(binning) -> bool:
    from ..binning import Custom, Uniform

    return isinstance(binning, (Uniform, Custom))


def bin_sums(bidx, y, p, w, idx, n_bins: int) -> np.ndarray:
    """Per-bin (weight, weighted sum of y, weighted sum of p) of resamples ``idx``: shape (m, 3, n_bins).

    ``bidx`` is each row's bin (fixed edges: a row keeps its bin in every resample), ``idx`` (m, n) the
    resampled row numbers; one ``bincount`` per sum, no per-row loop.
    """
    m, n = idx.shape
    key = (np.arange(m)[:, None] * n_bins + bidx[idx]).ravel()
    out = np.empty((m, 3, n_bins))
    if w is None:
        out[:, 0] = np.bincount(key, minlength=m * n_bins).reshape(m, n_bins)
        out[:, 1] = np.bincount(key, y[idx].ravel(), minlength=m * n_bins).reshape(m, n_bins)
        out[:, 2] = np.bincount(key, p[idx].ravel(), minlength=m * n_bins).reshape(m, n_bins)
    else:
        ww = w[idx].ravel()
        out[:, 0] = np.bincount(key, ww, minlength=m * n_bins).reshape(m, n_bins)
        out[:, 1] = np.bincount(key, ww * y[idx].ravel(), minlength=m * n_bins).reshape(m, n_bins)
        out[:, 2] = np.bincount(key, ww * p[idx].ravel(), minlength=m * n_bins).reshape(m, n_bins)
    return out


def ece_from_sums(sums: np.ndarray) -> np.ndarray:
    """ECE (L1, weighted by bin mass) of each resample from :func:`bin_sums`; NaN for a weightless one."""
    total = sums[:, 0].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.abs(sums[:, 1] - sums[:, 2]).sum(axis=1) / total


def double_basic_levels(bidx, y, p, w, idx, outer, estimate: float, rng, n_inner: int, n_bins: int,
                        confidence: float, progress=None) -> tuple[float, float]:
    """Calibrated quantile levels of the basic interval (prepivoting by a second bootstrap level).

    For each outer resample b (rows ``idx[b]``, ECE ``outer[b]``), ``n_inner`` resamples of *its* rows give
    ``u_b`` = share of inner values with ``theta** - theta*_b <= theta*_b - theta_hat``: where the
    first-level root distribution puts the data's estimate. Were the basic interval exact, ``u`` would be
    uniform; its ``alpha/2`` and ``1 - alpha/2`` quantiles are the levels at which to read the basic
    interval instead (Beran 1987; Davison & Hinkley 1997, Sec. 3.9). Returns (level for the lower limit's
    quantile, level for the upper limit's quantile) of ``outer``.
    """
    B, n = idx.shape
    alpha = 1.0 - confidence
    u = np.full(B, np.nan)
    for b in range(B):
        if not np.isfinite(outer[b]):
            continue
        inner = idx[b][rng.integers(0, n, size=(n_inner, n))]
        vals = ece_from_sums(bin_sums(bidx, y, p, w, inner, n_bins))
        vals = vals[np.isfinite(vals)]
        if vals.size:
            u[b] = np.mean(vals - outer[b] <= outer[b] - estimate)
        if progress is not None:
            progress(b + 1)
    u = u[np.isfinite(u)]
    lo_level, hi_level = np.quantile(u, [alpha / 2, 1 - alpha / 2])
    return float(hi_level), float(lo_level)


def double_bootstrap_ece(y_true, y_prob, *, binning, sample_weight=None, n_resamples: int = 200,
                         n_inner: int = 100, confidence: float = 0.95, random_state=None,
                         progress=None) -> BootstrapResult:
    """ECE with the basic interval at levels calibrated by a double bootstrap (fixed-edge bins).

    The basic interval ``[2 theta_hat - q(1 - alpha/2), 2 theta_hat - q(alpha/2)]`` of ECE misses the
    population value more often than it should when bins hold few rows (the bootstrap misjudges the bias
    of ``|noisy gap|``). A second bootstrap level measures that error and moves the quantile levels
    (:func:`double_basic_levels`; Hall 1986, Beran 1987). With fixed bin edges (``Uniform``, ``Custom``)
    a resample's ECE is a function of per-bin sums, so the ``n_resamples x n_inner`` inner resamples are
    vectorised bincounts: at n = 500, 200 x 100 resamples take about 0.16 s of CPU (0.42 s at n = 1,400).

    In the coverage study (``docs/intervals.md``, ``--small-sample``) at n = 500 (about 33 rows per bin)
    it raised coverage by 2-6 points over the bias-corrected interval, making the intervals 16-26% wider;
    it is used below :data:`DOUBLE_ROWS_PER_BIN` rows per bin.

    Parameters
    ----------
    y_true, y_prob : array-like of shape (n,)
    binning : Uniform or Custom
        Bins with fixed edges.
    sample_weight : array-like of shape (n,), optional
        Rows are resampled with their weights, as in :func:`calibviz.metrics.bootstrap`.
    n_resamples : int, default 200
        Outer resamples B.
    n_inner : int, default 100
        Inner resamples M per outer resample.
    confidence : float, default 0.95
    random_state : None, int, SeedSequence or Generator
    progress : callable ``progress(done, total)``, optional
        Called as the outer resamples' inner levels finish.

    Returns
    -------
    BootstrapResult
        ``method="double_basic"``, ``estimate`` the ECE, ``debiased`` the bias-corrected estimate (the
        value to show, as for ``"bias_corrected"``), limits clipped to [0, 1].

    References
    ----------
    P. Hall, "On the bootstrap and confidence intervals", Ann. Statist. 14(4), 1986. R. Beran,
    "Prepivoting to reduce level error of confidence sets", Biometrika 74(3), 1987. A. C. Davison and
    D. V. Hinkley, *Bootstrap Methods and their Application*, 1997, Sec. 3.9 and 5.6.

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
    import numbers

    from ..validation import check_binary
    from .binned import ece
    from .resampling import _check_interval_args

    if not _fixed_edges(binning):
        raise InputError("the double bootstrap of ECE needs bins with fixed edges (Uniform or Custom); "
                         f"got {binning!r}.")
    for name, v in (("n_resamples", n_resamples), ("n_inner", n_inner)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 2:
            raise InputError(f"{name} must be an integer >= 2, got {v!r}.")
    _, confidence, _, _ = _check_interval_args("basic", confidence, "two-sided", (0.0, 1.0))
    y, p, w = check_binary(y_true, y_prob, sample_weight)
    y = y.astype(np.float64)
    try:
        rng = np.random.default_rng(random_state)
    except (TypeError, ValueError) as exc:
        raise InputError(f"random_state must be None, an int, a SeedSequence or a numpy Generator ({exc}).") from None
    n = p.shape[0]
    bins = binning.fit(p)
    bidx, k = bins.index, bins.n_bins
    estimate = float(ece(y, p, binning=binning, sample_weight=w))
    idx = rng.integers(0, n, size=(int(n_resamples), n))
    outer = ece_from_sums(bin_sums(bidx, y, p, w, idx, k))
    level_low, level_high = double_basic_levels(
        bidx, y, p, w, idx, outer, estimate, rng, int(n_inner), k, confidence,
        progress=None if progress is None else (lambda b: progress(b, int(n_resamples))))
    finite = outer[np.isfinite(outer)]
    low = 2 * estimate - float(np.quantile(finite, level_low))
    high = 2 * estimate - float(np.quantile(finite, level_high))
    bias = float(finite.mean() - estimate)
    return BootstrapResult(estimate=estimate, low=min(max(low, 0.0), 1.0), high=min(max(high, 0.0), 1.0),
                           confidence=confidence, method=DOUBLE_BASIC, n_resamples=int(n_resamples),
                           distribution=finite, n_failed=int(outer.size - finite.size), alternative="two-sided",
                           bias=bias, debiased=min(max(estimate - bias, 0.0), 1.0))


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
    ('double_basic', 'bias_corrected', 'debiased_basic')
    """
    return _chosen(key, rows_per_bin)


def bootstrap_metric(key: str, metric, y_true, y_prob, *, binning=None, n_bins: int = STUDY_BINS,
                     n_classes: int = 2, sample_weight=None, n_resamples: int = 200, confidence: float = 0.95,
                     random_state=None, progress=None) -> BootstrapResult:
    """The chosen interval of a panel metric (what :func:`calibviz.panel.metric_panel` shows).

    Parameters
    ----------
    key : str
        A key of :data:`INTERVALS`.
    metric : callable ``metric(y, p, sample_weight=None) -> float``
        The metric exactly as the panel computes it.
    y_true, y_prob, sample_weight
        The data.
    binning : Scheme, optional
        The metric's bins; needed by the small-sample method of RMSCE, Brier
        reliability and debiased ECE (:func:`debiased_l2_bootstrap`).
    n_bins, n_classes : int
        For :func:`rows_per_bin`, which decides the small-sample method
        (with weights, from Kish's effective size; the double bootstrap,
        whose cost grows with the rows, also needs the rows themselves below
        the threshold).
    n_resamples, confidence, random_state, progress
        As in :func:`calibviz.metrics.bootstrap`.

    Returns
    -------
    BootstrapResult

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
    from .resampling import bootstrap

    c = _choice(key)
    w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    n_eff = np.shape(y_true)[0] if w is None else (w.sum() ** 2 / (w @ w) if (w @ w) > 0 else 0.0)
    method = _chosen(key, rows_per_bin(key, n_eff, n_bins=n_bins, n_classes=n_classes))
    # the double bootstrap's cost is B x M x (rows): with weights, the rows (not Kish's size) must be few too
    rows_actual = rows_per_bin(key, np.shape(y_true)[0], n_bins=n_bins, n_classes=n_classes)
    if method == DOUBLE_BASIC and _fixed_edges(binning) and rows_actual < c.small_below:
        return double_bootstrap_ece(y_true, y_prob, binning=binning, sample_weight=sample_weight,
                                    n_resamples=n_resamples, confidence=confidence, random_state=random_state,
                                    progress=progress)
    if method == DEBIASED_BASIC:
        if binning is None:
            raise InputError(f"the small-sample interval of {key!r} needs the metric's binning (binning=...).")
        return debiased_l2_bootstrap(y_true, y_prob, binning=binning, squared=key == "brier_reliability",
                                     estimate="debiased" if key == "debiased_ece" else "plugin",
                                     sample_weight=sample_weight, n_resamples=n_resamples, confidence=confidence,
                                     random_state=random_state, progress=progress)
    return bootstrap(metric, y_true, y_prob, sample_weight=sample_weight, n_resamples=n_resamples,
                     confidence=confidence, random_state=random_state, progress=progress, method=c.method,
                     alternative=c.alternative, bounds=c.bounds)


#: Coverage the study measured for each metric's chosen method(s): {(key, method): {n: (min, max, reps)}} over
#: the models whose population value is not on the boundary (min/max coverage in percent, the fewest
#: replications of a model in that cell). Written by ``benchmarks/coverage_study.py`` (do not edit by hand).
# <study-coverage:start>
STUDY_COVERAGE: dict = {
    ('accuracy', 'percentile'): {500: (89.0, 89.0, 100), 5000: (95.0, 95.0, 40)},
    ('ace', 'bias_corrected'): {500: (81.5, 91.0, 200), 5000: (89.0, 94.0, 200), 50000: (92.5, 92.5, 80)},
    ('auc', 'percentile'): {500: (96.0, 96.0, 100), 5000: (95.0, 95.0, 40)},
    ('brier', 'percentile'): {500: (92.0, 97.0, 100), 5000: (93.0, 96.0, 100), 50000: (93.3, 100.0, 60)},
    ('brier_reliability', 'bias_corrected'): {500: (95.5, 99.5, 200), 5000: (93.0, 96.0, 200), 50000: (96.2, 98.8, 80)},
    ('classwise_ece', 'bias_corrected'): {500: (87.0, 87.0, 200), 5000: (92.5, 92.5, 200), 50000: (97.5, 97.5, 40)},
    ('classwise_tce', 'percentile'): {500: (75.0, 75.0, 20)},
    ('confidence_ece', 'bias_corrected'): {500: (89.0, 89.0, 200), 5000: (93.5, 93.5, 200), 50000: (97.5, 97.5, 40)},
    ('debiased_ece', 'debiased_basic'): {500: (93.5, 96.5, 200), 5000: (91.0, 96.0, 200)},
    ('debiased_ece', 'percentile'): {500: (75.5, 84.0, 200), 5000: (85.0, 91.0, 200), 50000: (92.5, 98.8, 80)},
    ('dsc', 'bias_corrected'): {500: (90.0, 96.0, 100), 5000: (90.0, 93.0, 100)},
    ('ece', 'bias_corrected'): {500: (82.5, 89.0, 200), 5000: (91.0, 93.5, 200), 50000: (91.2, 95.0, 80)},
    ('ece', 'double_basic'): {500: (89.5, 93.0, 200)},
    ('ici', 'bias_corrected'): {500: (80.0, 90.0, 40), 5000: (80.0, 80.0, 20)},
    ('log_loss', 'percentile'): {500: (92.5, 98.0, 100), 5000: (91.0, 95.5, 100), 50000: (93.3, 100.0, 60)},
    ('mcb', 'bias_corrected'): {500: (86.0, 94.0, 100), 5000: (76.0, 94.0, 100)},
    ('mce', 'percentile'): {500: (100.0, 100.0, 200), 5000: (100.0, 100.0, 200), 50000: (100.0, 100.0, 80)},
    ('rmsce', 'bias_corrected'): {500: (75.5, 89.5, 200), 5000: (89.5, 94.5, 200), 50000: (92.5, 98.8, 80)},
    ('rmsce', 'debiased_basic'): {500: (95.5, 99.5, 200), 5000: (93.0, 95.0, 200)},
    ('smooth_ece', 'bias_corrected'): {500: (81.0, 88.0, 100), 5000: (85.0, 95.0, 100), 50000: (92.5, 100.0, 40)},
    ('tce', 'percentile'): {500: (90.0, 100.0, 30), 5000: (93.3, 95.0, 30), 50000: (100.0, 100.0, 20)},
    ('top_label_ece', 'bias_corrected'): {500: (82.0, 82.0, 200), 5000: (92.5, 92.5, 200), 50000: (97.5, 97.5, 40)},
    ('top_label_mce', 'percentile'): {500: (100.0, 100.0, 200), 5000: (100.0, 100.0, 200), 50000: (100.0, 100.0, 40)},
    ('unc', 'percentile'): {500: (90.0, 94.0, 100), 5000: (94.0, 98.0, 100)},
}
# <study-coverage:end>

_STUDY_TARGET = 93.0


def _undercovers(lo: float, reps: int) -> bool:
    """The study's lowest coverage lies more than two Monte Carlo errors (at 95%) below the 93% target."""
    return lo < _STUDY_TARGET - 200.0 * math.sqrt(0.95 * 0.05 / max(int(reps), 1))


def coverage_note(key: str, n_rows: float, *, n_bins: int = STUDY_BINS, n_classes: int = 2,
                  method: str | None = None) -> str:
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
        The interval method shown (default: the method chosen for this size).

    Examples
    --------
    >>> coverage_note("brier", 500)
    ''
    """
    rows = rows_per_bin(key, n_rows, n_bins=n_bins, n_classes=n_classes)
    method = method or _chosen(key, rows)
    cells = STUDY_COVERAGE.get((key, method))
    if not cells or not (rows > 0):
        return ""
    study_rows = {n: rows_per_bin(key, n, n_bins=STUDY_BINS, n_classes=STUDY_CLASSES) for n in cells}
    c = _choice(key)
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
