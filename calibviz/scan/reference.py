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
"""
from __future__ import annotations

import math

import numpy as np

from ..binning import EqualMass
from ..metrics.binned import _decomposition, _norm_of_gaps
from ..metrics.consistency import _TIE_RTOL, _Plan, _null_fixed
from . import refine as _ref

__all__ = ["REFERENCE_METRICS", "reference"]

#: Metrics of a scan with a calibrated-model reference: (bins of the config, reduction, needs sum p y*).
REFERENCE_METRICS = ("ece", "mce", "rmsce", "ace", "brier_reliability")


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
    dist = values[~np.isnan(values)]
    if not dist.shape[0]:
        return nan, nan, nan, nan
    tol = _TIE_RTOL * abs(statistic) if math.isfinite(statistic) else 0.0
    p_value = (1.0 + np.count_nonzero(dist >= statistic - tol)) / (1.0 + dist.shape[0])
    low, high = (float(v) for v in np.quantile(dist, [(1 - level) / 2, (1 + level) / 2]))
    return float(dist.mean()), low, high, float(p_value)
