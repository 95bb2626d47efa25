"""The calibrated-model reference of binned metrics from a scan's buckets (consistency resampling).

:func:`calibviz.metrics.consistency_test` redraws labels ``y* ~ Bernoulli(p)``
and recomputes the metric; for metrics on bins that do not depend on the
labels it draws, per bin, one ``Binomial(n_g, mean score)`` per score bucket g
(its "binomial buckets" path, with a proven bound on the approximation).
A scan already holds exactly those groups: every fine bucket (2^-16 wide,
sixteen times narrower than the in-memory path's 2^-12) with its row count
and sum of scores, and in refined buckets every exact score (there the draw is
exact). So the reference costs one binomial draw per group and resample, on
the driver, without another pass over the rows; the null values are reduced
by the metric's own function (:func:`calibviz.metrics.binned._norm_of_gaps`,
the Brier decomposition), as in memory.

Bound (from :func:`~calibviz.metrics.consistency_test`'s notes, with h = 2^-16):
a bin's null standard deviation is overstated by at most h / 2 = 2^-17 of
itself (the binomial is the wider draw, so p-values are at most very slightly
conservative). Weighted scans have no reference yet (the in-memory path draws
weighted rows one by one).

TCE's bins (PAVA-BC) depend on the labels, so its reference refits them on
every redraw (:func:`_tce_null`), as the in-memory reference does on rows.
"""
from __future__ import annotations

import math

import numpy as np

from ..binning import PAVABC, EqualMass
from ..metrics.binned import _decomposition, _norm_of_gaps
from ..metrics.consistency import _TIE_RTOL, _Plan, _null_fixed
from . import refine as _ref

__all__ = ["REFERENCE_METRICS", "reference"]

#: Metrics of a scan with a calibrated-model reference: (bins of the config, reduction, needs sum p y*).
REFERENCE_METRICS = ("ece", "mce", "rmsce", "ace", "brier_reliability", "tce")


def _spec(key: str, config):
    if key == "ace":
        return EqualMass(config.n_bins), lambda s: _norm_of_gaps(s, "l1"), False
    if key == "brier_reliability":
        return config.scheme(), lambda s: _decomposition(s).reliability, True
    norm = {"ece": "l1", "mce": "max", "rmsce": "l2"}[key]
    return config.scheme(), lambda s: _norm_of_gaps(s, norm), False


def reference(scan, key: str, config, n_resamples: int, random_state=None, level: float = 0.95):
    """(null_mean, null_low, null_high, p_value) of ``key`` against a calibrated model with the scan's predictions.

    As :func:`calibviz.metrics.consistency_test` with ``method="fast"``:
    ``p_value = (1 + #{null >= value}) / (1 + m)``, the range is the central
    ``level`` quantiles. NaNs for a weighted scan or a metric outside
    :data:`REFERENCE_METRICS`.

    Examples
    --------
    >>> import calibviz as cv, numpy as np, pandas as pd
    >>> from calibviz.panel import PanelConfig
    >>> rng = np.random.default_rng(0); p = rng.uniform(size=5000)
    >>> s = cv.scan(pd.DataFrame({"y": (rng.uniform(size=5000) < p ** 2).astype(int), "p": p}))
    >>> reference(s, "ece", PanelConfig(), 99, random_state=0)[3] < 0.05   # over-predicts: p^2 is the truth
    True
    """
    nan = float("nan")
    if key not in REFERENCE_METRICS or not n_resamples or scan._roles.weight is not None:
        return nan, nan, nan, nan
    if key == "tce":
        statistic, values = _tce_null(scan, PAVABC(config.n_min, config.n_max), config.alpha, "binomial",
                                      int(n_resamples), np.random.default_rng(random_state))
        return _summary(statistic, values, level)
    scheme, reduce, moments = _spec(key, config)
    scan._prepare([scheme])
    atoms = scan._atoms()
    _, index, stats, _ = scan._bins(scheme, atoms)
    statistic = reduce(stats)
    # groups: a whole bucket or one exact score (labels merged); all its rows share a bin
    starts, size = _ref._groups(atoms)
    lo, hi = np.minimum.reduceat(atoms.lo, starts), np.maximum.reduceat(atoms.hi, starts)
    mean = np.where(lo == hi, lo, np.clip(np.add.reduceat(atoms.swp, starts) / size, 0.0, 1.0))  # one score: exact
    cell = index[starts]
    order = np.argsort(cell, kind="stable")
    size, mean, cell = size[order], mean[order], cell[order]
    first = np.flatnonzero(np.r_[True, cell[1:] != cell[:-1]])
    plan = _Plan(cell=cell, q=mean, w=None, base=stats, reduce=reduce, moments=moments)
    values = _null_fixed(plan, int(n_resamples), np.random.default_rng(random_state), (size, mean, cell[first], first))
    return _summary(statistic, values, level)


def _summary(statistic: float, values: np.ndarray, level: float):
    """(null_mean, null_low, null_high, p_value) as consistency_test reads its null values."""
    nan = float("nan")
    dist = values[~np.isnan(values)]
    if not dist.shape[0]:
        return nan, nan, nan, nan
    tol = _TIE_RTOL * abs(statistic) if math.isfinite(statistic) else 0.0
    p_value = (1.0 + np.count_nonzero(dist >= statistic - tol)) / (1.0 + dist.shape[0])
    low, high = (float(v) for v in np.quantile(dist, [(1 - level) / 2, (1 + level) / 2]))
    return float(dist.mean()), low, high, float(p_value)


def _redrawn_atoms(bucket, value, lo, hi, size, mean, positives) -> "_ref.Atoms":
    """Atoms of one label redraw: every group (a whole bucket or one exact score) split into its redrawn
    negatives and positives, at the group's mean score (unweighted)."""
    neg = size - positives
    n = np.column_stack([neg, positives]).ravel()
    keep = n > 0
    rep = np.repeat(np.arange(size.shape[0]), 2)[keep]
    y = np.tile(np.array([0, 1], np.int64), size.shape[0])[keep]
    n = n[keep].astype(np.int64)
    q = mean[rep]
    sw = n.astype(np.float64)
    zeros = np.zeros(n.shape[0])
    return _ref.Atoms(bucket=bucket[rep], value=value[rep], y=y, n=n, sw=sw, swp=sw * q, swpp=sw * q * q, sww=sw,
                      sll=zeros, snum=zeros, sden=zeros, lo=lo[rep], hi=hi[rep])


def _tce_null(scan, scheme, alpha: float, test: str, n_resamples: int, rng) -> tuple[float, np.ndarray]:
    """TCE of the scan and TCE under ``n_resamples`` label redraws y* ~ Binomial(group size, group mean).

    PAVA-BC's bins depend on the labels, so each redraw refits them (:func:`calibviz.scan.refine.pavabc_bins`
    on the redrawn atoms, as the in-memory reference refits them on redrawn rows) and tests every group at its
    mean score: exact for a group of one score; for a whole bucket of several scores (2^-16 wide) the
    decision of its rows is taken at their mean, as their labels are (the in-memory reference tests each row).
    About 0.1 s per redraw at 2^16 buckets (a Python stack loop of PAVA-BC), whatever the rows.
    """
    statistic = float(scan.tce(scheme, alpha, test))
    atoms = scan._atoms_for([scheme])
    starts, size = _ref._groups(atoms)
    lo, hi = np.minimum.reduceat(atoms.lo, starts), np.maximum.reduceat(atoms.hi, starts)
    mean = np.where(lo == hi, lo, np.clip(np.add.reduceat(atoms.swp, starts) / size, 0.0, 1.0))
    bucket, value = atoms.bucket[starts], atoms.value[starts]
    null = np.full(int(n_resamples), np.nan)
    for r in range(int(n_resamples)):
        a = _redrawn_atoms(bucket, value, lo, hi, size, mean, rng.binomial(size, mean))
        null[r] = _ref.redrawn_tce(a, scheme, alpha=alpha, test=test)
    return statistic, null
