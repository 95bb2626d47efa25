"""How binned calibration metrics depend on the number of bins (binning sensitivity).

Binned estimates move with the number of bins B, and equal-width and
equal-mass bins disagree (Kumar et al. 2019; Nixon et al. 2019; Gupta &
Ramdas 2022, Fig. 2 plots ECE against B in 5..25). This module evaluates a
metric on a grid of B for several schemes, each with a bootstrap interval,
so a reviewer sees whether a number is a property of the model or of the
binning.

Intervals come from :func:`calibviz.metrics.bootstrap` with the same seed for
every (scheme, B): the resamples are shared (common random numbers), so the
curves of one metric are comparable across B and schemes. A bootstrap
interval of a binned error never contains 0 and the error of a calibrated
model grows with B too, so each point can also carry what a calibrated model
with these predictions shows at that binning (``n_reference``: labels
redrawn from the predictions, :func:`calibviz.metrics.consistency_test`).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from . import metrics as _metrics
from .binning import get_scheme
from .errors import InputError
from .metrics.consistency import consistency_test
from .metrics.resampling import bootstrap
from .validation import check_binary

__all__ = ["SENSITIVITY_METRICS", "binning_sensitivity"]


def _ece_l1(y, p, *, binning, sample_weight=None):
    return _metrics.ece(y, p, binning=binning, sample_weight=sample_weight)


def _rmsce(y, p, *, binning, sample_weight=None):
    return _metrics.ece(y, p, binning=binning, norm="l2", sample_weight=sample_weight)


def _mce(y, p, *, binning, sample_weight=None):
    return _metrics.mce(y, p, binning=binning, sample_weight=sample_weight)


def _debiased(y, p, *, binning, sample_weight=None):
    return _metrics.debiased_ece(y, p, binning=binning, sample_weight=sample_weight)


def _tce(y, p, *, binning, sample_weight=None, alpha=0.05):
    return _metrics.tce(y, p, binning=binning, alpha=alpha, sample_weight=sample_weight)


#: metric name -> (function(y, p, *, binning, sample_weight), label with unit)
SENSITIVITY_METRICS = {
    "ece": (_ece_l1, "ECE"),
    "rmsce": (_rmsce, "RMSCE (L2 ECE)"),
    "mce": (_mce, "MCE"),
    "debiased_ece": (_debiased, "Debiased ECE"),
    "tce": (_tce, "TCE (%)"),
}

_SCHEME_LABELS = {"uniform": "equal width", "equal_mass": "equal mass", "quantile": "equal mass"}


def binning_sensitivity(y_true, y_prob, *, metrics=("ece",), schemes=("uniform", "equal_mass"),
                        n_bins=(5, 10, 15, 20, 25, 30), n_resamples: int = 200, confidence: float = 0.95,
                        sample_weight=None, alpha: float = 0.05, random_state=0, progress=None,
                        n_reference: int = 0, intervals: pd.DataFrame | None = None) -> pd.DataFrame:
    """Metric value, bootstrap interval and a calibrated model's range for every (metric, scheme, number of bins).

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Outcomes in {0, 1}.
    y_prob : array-like of shape (n,)
        Predicted P(y = 1).
    metrics : sequence of str, default ("ece",)
        Names from :data:`SENSITIVITY_METRICS`: "ece", "rmsce", "mce",
        "debiased_ece", "tce" (percent). ACE is "ece" with equal-mass bins.
    schemes : sequence of str, default ("uniform", "equal_mass")
        Scheme names that take a number of bins (see
        :func:`calibviz.binning.get_scheme`).
    n_bins : sequence of int, default (5, 10, 15, 20, 25, 30)
    n_resamples : int, default 200
        Bootstrap resamples per point; 0 skips the intervals (NaN). The
        cost is ``n_resamples`` metric calls per point: cheap for ECE/MCE
        (under 2 ms per call at n = 2*10^4), but TCE runs a test per
        prediction (about 30 ms per call at n = 2*10^4), so with "tce" use
        about 30-50 resamples for interactive work.
    confidence : float, default 0.95
    sample_weight : array-like of shape (n,), optional
    alpha : float, default 0.05
        Significance level of TCE's test, and of the reference: its range
        is the central 1 - 2 alpha of the redraws, the range beside a
        one-sided verdict at alpha (a value above it is beyond what a
        calibrated model shows at that binning, one point at a time).
    random_state : int, default 0
        One seed for all points (shared resamples).
    progress : callable ``progress(done, total)``, optional
        Called after each point.
    n_reference : int, default 0
        Labels redrawn from the predictions per point (the same seed at
        every point); 0 skips the reference (NaN).
    intervals : pandas.DataFrame, optional
        A table this function returned for the same data, metrics, schemes,
        bins, seed and confidence: its bootstrap intervals are taken instead
        of resampling again (``n_resamples`` is then its). They do not depend
        on ``alpha`` unless TCE is among the metrics, whose test is run at
        ``alpha``: such a table must have been made at the same ``alpha``.
        A dashboard that changes only ``alpha`` thus redoes the redraws
        (~10% of the work), not the bootstrap.

    Returns
    -------
    pandas.DataFrame
        One row per (metric, scheme, n_bins): ``metric, label, scheme,
        scheme_label, n_bins, value, low, high, reference_low,
        reference_high, min_rows`` (the rows of the smallest non-empty bin:
        equal-width bins of one or two rows set MCE, and its calibrated
        range, to one row's gap). ``attrs``: confidence, n_resamples, n,
        n_reference, alpha.

    References
    ----------
    Gupta & Ramdas (2022), "Top-label calibration and multiclass-to-binary
    reductions", ICLR, Fig. 2 (ECE vs number of bins); Nixon et al. (2019),
    "Measuring calibration in deep learning" (equal mass vs equal width);
    Efron & Tibshirani (1993), Ch. 13 (percentile bootstrap).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=1000); y = (rng.uniform(size=1000) < p).astype(int)
    >>> t = binning_sensitivity(y, p, n_bins=(5, 10), n_resamples=20)
    >>> t[["scheme", "n_bins"]].values.tolist()
    [['uniform', 5], ['uniform', 10], ['equal_mass', 5], ['equal_mass', 10]]
    >>> bool((t["low"] <= t["high"]).all())
    True
    """
    y, p, w = check_binary(y_true, y_prob, sample_weight)
    unknown = [m for m in metrics if m not in SENSITIVITY_METRICS]
    if unknown or not len(metrics):
        raise InputError(f"unknown metric(s) {unknown}; choose from {', '.join(SENSITIVITY_METRICS)}.")
    sizes = [int(b) for b in n_bins]
    if not sizes or min(sizes) < 1:
        raise InputError(f"n_bins must be a non-empty list of positive integers, got {n_bins!r}.")
    if int(n_resamples) < 0:
        raise InputError(f"n_resamples must be >= 0, got {n_resamples!r}.")
    total = len(metrics) * len(schemes) * len(sizes)
    if int(n_reference) < 0:
        raise InputError(f"n_reference must be >= 0, got {n_reference!r}.")
    reused = _reused_intervals(intervals, metrics, schemes, sizes, alpha, confidence, random_state)
    if reused is not None:
        n_resamples = int(intervals.attrs.get("n_resamples", 0))
    rows, done = [], 0
    order = None  # the scores' sort order, computed once for the schemes that sort
    smallest = {}  # (scheme, B): rows of the smallest non-empty bin, one fit per binning
    for metric in metrics:
        fn, label = SENSITIVITY_METRICS[metric]
        extra = {"alpha": alpha} if metric == "tce" else {}
        for scheme_name in schemes:
            for b in sizes:
                scheme = get_scheme(scheme_name, n_bins=b)
                value = fn(y, p, binning=scheme, sample_weight=w, **extra)
                lo = hi = float("nan")
                if reused is not None:
                    lo, hi = reused[(metric, str(scheme_name), b)]
                elif n_resamples:
                    # bins refitted by sorting: resamples listed by score (bootstrap's row_order, same resamples)
                    if scheme.sorts_scores and order is None:
                        order = np.argsort(p, kind="stable")
                    res = bootstrap(fn, y, p, sample_weight=w, n_resamples=int(n_resamples), confidence=confidence,
                                    random_state=random_state, binning=scheme,
                                    row_order=order if scheme.sorts_scores else None, **extra)
                    lo, hi = res.low, res.high
                ref_low = ref_high = float("nan")
                if n_reference:
                    # the same redraws (seed) at every (scheme, B): the reference curves are comparable like the
                    # intervals; central 1 - 2 alpha, the range beside a one-sided verdict at alpha
                    ref = consistency_test(y, p, metric=metric, n_resamples=int(n_reference), sample_weight=w,
                                           random_state=random_state, level=1.0 - 2.0 * alpha, binning=scheme,
                                           **extra)
                    ref_low, ref_high = ref.null_low, ref.null_high
                if (str(scheme_name), b) not in smallest:
                    counts = np.bincount(scheme.fit(p).index)
                    smallest[str(scheme_name), b] = int(counts[counts > 0].min())
                rows.append(dict(metric=metric, label=label, scheme=str(scheme_name),
                                 scheme_label=_SCHEME_LABELS.get(str(scheme_name), str(scheme_name)),
                                 n_bins=b, value=float(value), low=float(lo), high=float(hi),
                                 reference_low=float(ref_low), reference_high=float(ref_high),
                                 min_rows=smallest[str(scheme_name), b]))
                done += 1
                if progress is not None:
                    progress(done, total)
    out = pd.DataFrame(rows, columns=["metric", "label", "scheme", "scheme_label", "n_bins", "value", "low", "high",
                                      "reference_low", "reference_high", "min_rows"])
    out.attrs.update(confidence=float(confidence), n_resamples=int(n_resamples), n=int(p.shape[0]),
                     n_reference=int(n_reference), alpha=float(alpha), random_state=random_state)
    return out


def _reused_intervals(table, metrics, schemes, sizes, alpha, confidence, random_state) -> dict | None:
    """``{(metric, scheme, n_bins): (low, high)}`` of an earlier table whose intervals hold for this call; None
    without one. A table made for other settings is an error, not a silent recomputation."""
    if table is None:
        return None
    want = {(m, str(s), b) for m in metrics for s in schemes for b in sizes}
    have = {(m, str(s), int(b)): (float(lo), float(hi))
            for m, s, b, lo, hi in table[["metric", "scheme", "n_bins", "low", "high"]].itertuples(index=False)}
    attrs = table.attrs
    same = (want <= set(have) and attrs.get("confidence") == float(confidence)
            and attrs.get("random_state") == random_state
            and ("tce" not in metrics or attrs.get("alpha") == float(alpha)))
    if not same:
        raise InputError("intervals= must be a table of binning_sensitivity for the same metrics, schemes, bins, "
                         "confidence and seed (and alpha with TCE); compute it again without intervals=.")
    return have
