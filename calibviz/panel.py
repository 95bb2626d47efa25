"""The metric panel: named metrics with bootstrap intervals and plain-language readings.

One registry of metrics serves the dashboard, the HTML report and the CLI
(``--fail-above ECE=0.05``), so a metric is named, computed and explained in
one place. Every value comes from :mod:`calibviz.metrics`; this module only
chooses the options (binning, alpha) from one :class:`PanelConfig` and
attaches intervals and readings.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import numpy as np
import pandas as pd

from . import metrics as M
from .binning import PAVABC, EqualMass, get_scheme
from .errors import InputError
from .validation import check_binary, check_multiclass

__all__ = ["PanelConfig", "MetricSpec", "BINARY_METRICS", "DEFAULT_BINARY_METRICS", "MULTICLASS_METRICS",
           "DEFAULT_MULTICLASS_METRICS", "metric_panel", "metric_value", "compare_models", "config_key",
           "format_value", "format_interval"]


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
        Level of the TCE tests (intervals are at ``1 - alpha``).
    n_min, n_max : int or None
        PAVA-BC constraints of TCE; None gives N // 20 and N // 5.
    """

    binning: str = "uniform"
    n_bins: int = 15
    alpha: float = 0.05
    n_min: int | None = None
    n_max: int | None = None

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
    """
    if value is None or not np.isfinite(value):
        return "n/a"
    if unit == "percent":
        return f"{value:.2f}%"
    if unit == "probability":
        return f"{value:.4f}"
    return f"{value:.4g}"


def format_interval(low: float, high: float, unit: str) -> str:
    """An interval as ``low – high`` in the unit's format ('' when there is none).

    Examples
    --------
    >>> format_interval(0.011, 0.02, "probability"), format_interval(float("nan"), 1.0, "percent")
    ('0.0110 – 0.0200', '')
    """
    if low is None or high is None or not (np.isfinite(low) and np.isfinite(high)):
        return ""
    return f"{format_value(low, unit)} – {format_value(high, unit)}"


def _pct(v: float) -> str:
    return f"{100 * v:.1f} percentage points"


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
    p_value: Callable | None = None  # (y, p, w, cfg) -> float, for tests
    depends: tuple = ()  # the PanelConfig fields the value depends on (for caching)


def _tce(y, p, w, cfg):
    return M.tce(y, p, binning=PAVABC(cfg.n_min, cfg.n_max), alpha=cfg.alpha, sample_weight=w)


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
        lambda v, ctx: f"In the worst bin, predictions are off by {_pct(v)}.",
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
        lambda v, ctx: f"{v:.0f}% of predictions deviate significantly from their bin's observed rate.",
        unit="percent",
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
        lambda v, ctx: (f"Brier score {v:.4f}; always predicting the prevalence would score "
                        f"{ctx['uncertainty']:.4f}."),
        unit="score",
    ),
    MetricSpec(
        "brier_reliability", "Brier reliability",
        lambda y, p, w, c: M.brier_decomposition(y, p, binning=c.scheme(), sample_weight=w).reliability,
        "Reliability term of Murphy's Brier decomposition: the calibration part of the Brier score.",
        lambda v, ctx: f"Miscalibration contributes {v:.4f} to the Brier score.",
        unit="score",
    ),
    MetricSpec(
        "log_loss", "Log loss", lambda y, p, w, c: M.log_loss(y, p, sample_weight=w),
        "Mean negative log-likelihood of the outcomes (probabilities clipped away from 0 and 1).",
        lambda v, ctx: f"Log loss {v:.4f} (lower is better).", unit="score",
    ),
    MetricSpec(
        "hosmer_lemeshow", "Hosmer-Lemeshow",
        lambda y, p, w, c: M.hosmer_lemeshow(y, p, sample_weight=w).statistic,
        "Chi-square statistic over 10 groups of predicted risk; its p-value tests 'the model is calibrated'.",
        lambda v, ctx: ("The Hosmer-Lemeshow test " + ("finds significant miscalibration" if ctx["p_value"] <= 0.05
                                                         else "finds no significant miscalibration")
                        + f" (p = {ctx['p_value']:.3g})."),
        unit="statistic", bootstrap=False,
        p_value=lambda y, p, w, c: M.hosmer_lemeshow(y, p, sample_weight=w).p_value,
    ),
    MetricSpec(
        "spiegelhalter_z", "Spiegelhalter Z", lambda y, p, w, c: M.spiegelhalter_z(y, p, sample_weight=w).statistic,
        "Spiegelhalter's Z test of calibration (no bins); |Z| > 1.96 rejects at 5%.",
        lambda v, ctx: ("Spiegelhalter's test " + ("rejects" if ctx["p_value"] <= 0.05 else "does not reject")
                        + f" calibration (Z = {v:.2f}, p = {ctx['p_value']:.3g})."),
        unit="z", bootstrap=False, lower_is_better=False,
        p_value=lambda y, p, w, c: M.spiegelhalter_z(y, p, sample_weight=w).p_value,
    ),
    MetricSpec(
        "calibration_slope", "Calibration slope",
        lambda y, p, w, c: M.calibration_intercept_slope(y, p, sample_weight=w).slope,
        "Slope of the logistic recalibration of logit(p): 1 is ideal, < 1 means predictions are too extreme.",
        lambda v, ctx: ("Predictions are too extreme (overconfident)" if v < 1 else
                        "Predictions are too timid (underconfident)") + f": calibration slope {v:.2f} (ideal 1).",
        unit="slope", bootstrap=False, lower_is_better=False,
    ),
    MetricSpec(
        "calibration_intercept", "Calibration-in-the-large",
        lambda y, p, w, c: M.calibration_intercept_slope(y, p, sample_weight=w).intercept,
        "Intercept of the offset model logit P(y=1) = a + logit(p): 0 is ideal; > 0 means under-prediction.",
        lambda v, ctx: ("The model under-predicts the outcome on average" if v > 0 else
                        "The model over-predicts the outcome on average") + f" (intercept {v:+.2f}, ideal 0).",
        unit="logit", bootstrap=False, lower_is_better=False,
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
        lambda y, P, w, c: M.classwise_tce(y, P, binning=PAVABC(c.n_min, c.n_max), alpha=c.alpha, sample_weight=w),
        "TCE of each one-vs-rest view, averaged over classes (TCE paper, Remark 2).",
        lambda v, ctx: f"{v:.0f}% of class probabilities deviate significantly from their bin's observed rate.",
        unit="percent",
    ),
]}

DEFAULT_MULTICLASS_METRICS = ("confidence_ece", "top_label_ece", "top_label_mce", "classwise_ece")

for _registry in (BINARY_METRICS, MULTICLASS_METRICS):
    for _key, _spec_ in list(_registry.items()):
        _registry[_key] = replace(_spec_, depends=_DEPENDS.get(_key, ()))


def config_key(metric: str, config: PanelConfig) -> tuple:
    """The part of ``config`` that ``metric``'s value depends on (a cache key).

    Examples
    --------
    >>> config_key("tce", PanelConfig(n_bins=10))
    (('alpha', 0.05), ('n_min', None), ('n_max', None))
    >>> config_key("brier", PanelConfig())
    ()
    """
    spec = BINARY_METRICS.get(metric) or MULTICLASS_METRICS.get(metric)
    if spec is None:
        raise InputError(f"unknown metric {metric!r}.")
    return tuple((f, getattr(config, f)) for f in spec.depends)


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


def _spec(key: str, registry: dict | None = None) -> MetricSpec:
    registry = BINARY_METRICS if registry is None else registry
    try:
        return registry[key]
    except KeyError:
        raise InputError(f"unknown metric {key!r}; choose from {', '.join(registry)}.") from None


def _wald_interval(key, y, p, w, confidence):
    if key not in ("calibration_slope", "calibration_intercept"):
        return np.nan, np.nan
    r = M.calibration_intercept_slope(y, p, sample_weight=w, confidence=confidence)
    return (r.slope_low, r.slope_high) if key == "calibration_slope" else (r.intercept_low, r.intercept_high)


def metric_panel(y_true, y_prob, *, metrics=DEFAULT_BINARY_METRICS, config: PanelConfig = PanelConfig(),
                 sample_weight=None, n_resamples: int = 200, confidence: float = 0.95, random_state=0,
                 progress=None) -> pd.DataFrame:
    """Metrics with bootstrap intervals and plain-language readings.

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
        Binning and test options shared by the metrics.
    sample_weight : array-like of shape (n,), optional
    n_resamples : int, default 200
        Bootstrap resamples (percentile interval, rows resampled and bins
        refitted each time); 0 skips the intervals.
    confidence : float, default 0.95
    random_state : int, default 0
        Same seed, same intervals.
    progress : callable(done, total), optional
        Called as the bootstrap advances (over all metrics).

    Returns
    -------
    pandas.DataFrame
        One row per metric: ``metric``, ``label``, ``value``, ``low``,
        ``high`` (bootstrap percentile interval; Wald interval of the
        logistic fit for intercept and slope; NaN for test statistics),
        ``p_value`` (tests only), ``unit``, ``description``, ``reading``.

    Examples
    --------
    >>> import calibviz as cv
    >>> d = cv.load_demo("hospital_readmission")
    >>> t = metric_panel(d.y, d.y_prob, metrics=("ece", "tce"), n_resamples=20)
    >>> t["metric"].tolist(), bool((t["low"] <= t["value"]).all())
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
    n_boot = sum(s.bootstrap for s in specs) if n_resamples else 0
    rows = []
    done_before = 0
    for spec in specs:
        value = float(spec.compute(y, p, w, config))
        low = high = np.nan
        if n_resamples and spec.bootstrap:
            offset = done_before

            def _progress(done, total, _offset=offset):
                if progress is not None:
                    progress(_offset + done, n_boot * n_resamples)

            res = M.bootstrap(lambda yy, pp, sample_weight=None, _s=spec: _s.compute(yy, pp, sample_weight, config),
                              y, p, sample_weight=w, n_resamples=n_resamples, confidence=confidence,
                              random_state=random_state, progress=_progress)
            low, high = res.low, res.high
            done_before += n_resamples
        elif not spec.bootstrap:
            low, high = _wald_interval(spec.key, y, p, w, confidence)
        pval = float(spec.p_value(y, p, w, config)) if spec.p_value else np.nan
        ctx = {"p_value": pval, "prevalence": prevalence, "uncertainty": prevalence * (1 - prevalence)}
        rows.append({"metric": spec.key, "label": spec.label, "value": value, "low": low, "high": high,
                     "p_value": pval, "unit": spec.unit, "description": spec.description,
                     "reading": spec.reading(value, ctx)})
    out = pd.DataFrame(rows)
    out.attrs.update(config=config, n_resamples=n_resamples, confidence=confidence, random_state=random_state)
    return out


def compare_models(models: dict, *, metrics=("ece", "ace", "tce", "brier", "log_loss"),
                   config: PanelConfig = PanelConfig(), n_resamples: int = 200, confidence: float = 0.95,
                   random_state=0, progress=None) -> pd.DataFrame:
    """Metrics of several binary models side by side, with differences to the first model.

    Parameters
    ----------
    models : dict
        ``{name: (y_true, y_prob)}`` or ``{name: (y_true, y_prob, sample_weight)}``;
        the first model is the reference.
    metrics, config, n_resamples, confidence, random_state, progress
        As :func:`metric_panel`.

    Returns
    -------
    pandas.DataFrame
        One row per (metric, model): ``metric``, ``label``, ``model``,
        ``value``, ``low``, ``high``, ``diff`` (value - reference value),
        ``diff_low``, ``diff_high`` and ``paired``. When a model has the same
        rows and labels as the reference (same length and identical
        ``y_true``), the difference interval comes from a *paired* bootstrap
        (rows resampled jointly, so the shared noise cancels); otherwise from
        independent resamples of each model.

    Examples
    --------
    >>> import calibviz as cv
    >>> m = cv.load_demo_models("loan_recalibration")
    >>> t = compare_models({k: (v.y, v.y_prob) for k, v in m.items()}, metrics=("ece",), n_resamples=30)
    >>> t[["model", "paired"]].values.tolist()
    [['raw', True], ['recalibrated', True]]
    >>> bool(t.loc[1, "diff_high"] < 0)  # recalibration lowers the ECE, beyond the noise
    True
    """
    if not isinstance(models, dict) or not models:
        raise InputError("models must be a non-empty dict {name: (y_true, y_prob[, sample_weight])}.")
    data = {}
    for name, value in models.items():
        if not isinstance(value, (tuple, list)) or len(value) not in (2, 3):
            raise InputError(f"model {name!r}: expected (y_true, y_prob[, sample_weight]).")
        data[str(name)] = check_binary(*value) if len(value) == 3 else check_binary(*value, None)
    specs = [_spec(k) for k in metrics]
    names = list(data)
    ref_y, ref_p, ref_w = data[names[0]]
    total = len(specs) * len(names) * n_resamples * 2
    done = [0]

    def _progress(d, t, _base=None):
        if progress is not None:
            progress(min(total, done[0] + d), total)

    def boot(fn, *arrays, w=None):
        res = M.bootstrap(fn, *arrays, sample_weight=w, n_resamples=n_resamples, confidence=confidence,
                          random_state=random_state, progress=_progress)
        done[0] += n_resamples
        return res

    rows = []
    for spec in specs:
        ref_value = float(spec.compute(ref_y, ref_p, ref_w, config))
        for name in names:
            y, p, w = data[name]
            value = float(spec.compute(y, p, w, config))
            low = high = d_low = d_high = np.nan
            paired = y.shape == ref_y.shape and np.array_equal(y, ref_y) and (
                (w is None and ref_w is None) or (w is not None and ref_w is not None and np.array_equal(w, ref_w)))
            if n_resamples and spec.bootstrap:
                one = boot(lambda yy, pp, sample_weight=None, _s=spec: _s.compute(yy, pp, sample_weight, config),
                           y, p, w=w)
                low, high = one.low, one.high
                if name != names[0]:
                    if paired:
                        diff = boot(lambda yy, pa, pb, sample_weight=None, _s=spec:
                                    _s.compute(yy, pb, sample_weight, config) - _s.compute(yy, pa, sample_weight,
                                                                                          config),
                                    y, ref_p, p, w=w)
                        d_low, d_high = diff.low, diff.high
                    else:
                        ref_boot = boot(lambda yy, pp, sample_weight=None, _s=spec:
                                        _s.compute(yy, pp, sample_weight, config), ref_y, ref_p, w=ref_w)
                        dist = one.distribution - ref_boot.distribution
                        q = (1 - confidence) / 2
                        d_low, d_high = np.nanquantile(dist, [q, 1 - q])
                else:
                    d_low = d_high = 0.0
            rows.append({"metric": spec.key, "label": spec.label, "model": name, "value": value, "low": low,
                         "high": high, "diff": value - ref_value, "diff_low": d_low, "diff_high": d_high,
                         "paired": bool(paired)})
    out = pd.DataFrame(rows)
    out.attrs.update(reference=names[0], config=config, n_resamples=n_resamples, confidence=confidence)
    return out
