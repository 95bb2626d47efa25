"""Distributions of predictions: per-bin densities (violins) and histograms.

The test-based reliability diagram of Matsubara et al. (2023, Fig. 1) draws,
for every bin, a violin of the bin's predictions, and at the side a histogram
of all predictions. Shipping 10^6 points to a browser is not an option, so
the densities are computed here (numpy/scipy only) and the figures draw them
as filled polygons: a few hundred numbers per bin, whatever N is.

Densities use :class:`scipy.stats.gaussian_kde` on a *deterministic
subsample* of each bin: the bin's (weighted) quantiles at levels
``(j + 1/2) / m``, ``j = 0..m-1``, ``m = min(n_b, max_points)``. This set of
order statistics represents the bin's distribution (for ``n_b <= max_points``
it is the bin itself), needs no random state, and keeps the cost at
``O(n log n)`` for the sort plus ``O(B * max_points * grid_size)``. The
bandwidth factor is Scott's rule for the *full* bin, ``n_eff ** (-1/5)``
(``n_eff`` = Kish's effective size with weights), so the subsample does not
widen the violin.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy.stats import gaussian_kde

from .errors import InputError
from .validation import check_binary, check_weights

__all__ = ["BinDistributions", "bin_distributions", "histogram"]


class BinDistributions(NamedTuple):
    """Result of :func:`bin_distributions`.

    Attributes
    ----------
    densities : DataFrame
        Long format ``bin, value, density``: for each non-empty bin,
        ``grid_size`` prediction values from the bin's minimum to its maximum
        and the kernel density there (integrates to about 1 over the bin's
        range). A bin whose predictions are all equal (spread below 1e-9)
        has one row with ``density`` NaN (a point mass; drawn as a line).
    summary : DataFrame
        One row per non-empty bin: ``bin, n, weight, min, q25, median, q75,
        max, mean`` of the bin's predictions (weighted quantiles and mean
        with weights), ``n_points`` (size of the subsample behind the
        density) and ``bandwidth`` (kernel standard deviation; 0 for a point
        mass).
    """

    densities: pd.DataFrame
    summary: pd.DataFrame


def _check_index(index, n: int) -> np.ndarray:
    idx = np.asarray(index)
    if idx.ndim != 1 or idx.shape[0] != n:
        raise InputError(f"index must be one bin id per prediction (shape ({n},)), got shape {idx.shape}; "
                         "pass Bins.index of a scheme fitted on the same predictions.")
    if not np.issubdtype(idx.dtype, np.integer) or (idx.size and idx.min() < 0):
        raise InputError("index must hold non-negative integer bin ids, e.g. Bins.index from calibviz.binning.")
    return idx.astype(np.int64, copy=False)


def _weighted_positions(cum: np.ndarray, starts: np.ndarray, totals: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Positions in the (bin, value)-sorted arrays of each bin's quantiles at (j + 1/2)/m_b.

    ``cum`` is the global cumulative weight; bins are contiguous, so a target
    inside bin b is ``cum_before_b + (j + 1/2)/m_b * total_b`` and one
    searchsorted over ``cum`` finds all of them at once.
    """
    owner = np.repeat(np.arange(m.shape[0]), m)
    j = np.arange(owner.shape[0]) - np.repeat(np.cumsum(m) - m, m)
    before = np.where(starts > 0, cum[np.maximum(starts - 1, 0)], 0.0)
    target = before[owner] + (j + 0.5) / m[owner] * totals[owner]
    pos = np.searchsorted(cum, target, side="left")
    # keep each position inside its own bin (round-off at the bin's top end)
    ends = starts + np.diff(np.r_[starts, cum.shape[0]]) - 1
    return np.clip(pos, starts[owner], ends[owner]), owner


def bin_distributions(y_prob, index, *, sample_weight=None, grid_size: int = 64,
                      max_points: int = 2000) -> BinDistributions:
    """Kernel densities and quantiles of the predictions in each bin (violin data).

    Parameters
    ----------
    y_prob : array-like of shape (n,)
        Predicted probabilities in [0, 1].
    index : array-like of int, shape (n,)
        Bin id of every prediction, e.g. ``Bins.index`` of a fitted scheme
        (authoritative for rank-based schemes with ties).
    sample_weight : array-like of shape (n,), optional
        Non-negative weights: the subsample, quantiles and mean are weighted.
    grid_size : int, default 64
        Points per violin, from the bin's minimum to its maximum prediction.
    max_points : int, default 2000
        Largest subsample per bin fed to ``gaussian_kde`` (see module notes).

    Returns
    -------
    BinDistributions
        ``(densities, summary)`` DataFrames keyed by ``bin``.

    References
    ----------
    Matsubara, Tax, Mudd & Guy (2023), "TCE: A test-based approach to
    measuring calibration error", UAI, Sec. 5 and Fig. 1 (violin of the
    predictions of each bin); Scott (1992), *Multivariate Density
    Estimation*, bandwidth rule n^(-1/5).

    Examples
    --------
    >>> import numpy as np
    >>> p = np.r_[np.linspace(0.1, 0.3, 50), np.full(10, 0.7)]
    >>> d = bin_distributions(p, np.r_[np.zeros(50, int), np.ones(10, int)], grid_size=5)
    >>> d.summary[["bin", "n", "min", "max"]].round(2).values.tolist()
    [[0.0, 50.0, 0.1, 0.3], [1.0, 10.0, 0.7, 0.7]]
    >>> d.densities.groupby("bin").size().tolist()    # a point mass has one row
    [5, 1]
    """
    _, p, _ = check_binary(np.zeros(np.shape(y_prob)[0] if np.ndim(y_prob) else 1), y_prob)
    w = check_weights(sample_weight, p.shape[0])
    idx = _check_index(index, p.shape[0])
    grid_size = int(grid_size)
    max_points = int(max_points)
    if grid_size < 2 or max_points < 2:
        raise InputError("grid_size and max_points must be at least 2.")
    # sort by bin, then by value: one argsort of the floats and a stable integer sort
    # (the order among tied values cannot change any quantile, so quicksort is fine)
    order = np.argsort(p)
    order = order[np.argsort(idx[order], kind="stable")]
    ps, ids = p[order], idx[order]
    ws = np.ones_like(ps) if w is None else w[order]
    if w is not None:  # zero-weight rows carry no mass; drop them so min/max describe the mass
        keep = ws > 0
        ps, ids, ws = ps[keep], ids[keep], ws[keep]
    bin_ids, starts, counts = np.unique(ids, return_index=True, return_counts=True)
    cum = np.cumsum(ws)
    totals = np.add.reduceat(ws, starts)
    sum_sq = np.add.reduceat(ws * ws, starts)
    n_eff = totals**2 / sum_sq
    means = np.add.reduceat(ws * ps, starts) / totals
    ends = starts + counts - 1

    m = np.minimum(counts, max_points)
    pos, owner = _weighted_positions(cum, starts, totals, m)
    sub = ps[pos]
    # quartiles share the same machinery: 3 targets per bin at levels 1/4, 1/2, 3/4
    levels = np.array([0.25, 0.5, 0.75])
    before = np.where(starts > 0, cum[np.maximum(starts - 1, 0)], 0.0)
    qpos = np.searchsorted(cum, before[:, None] + levels[None, :] * totals[:, None], side="left")
    quart = ps[np.clip(qpos, starts[:, None], ends[:, None])]

    sub_starts = np.cumsum(m) - m
    frames, bandwidths = [], np.zeros(bin_ids.shape[0])
    for b in range(bin_ids.shape[0]):  # loop over bins; each step is vectorised
        lo, hi = ps[starts[b]], ps[ends[b]]
        pts = sub[sub_starts[b]:sub_starts[b] + m[b]]
        kde = None
        # a spread at round-off level (or a single distinct value) has no density: a point mass
        if hi - lo > 1e-9 * max(1.0, abs(hi)) and np.ptp(pts) > 0:
            try:
                kde = gaussian_kde(pts, bw_method=float(n_eff[b]) ** (-0.2))
            except np.linalg.LinAlgError:  # variance underflows for denormal spreads
                kde = None
        if kde is None:
            frames.append((np.full(1, bin_ids[b]), np.array([lo]), np.array([np.nan])))
            continue
        grid = np.linspace(lo, hi, grid_size)
        frames.append((np.full(grid_size, bin_ids[b]), grid, kde(grid)))
        bandwidths[b] = float(np.sqrt(kde.covariance[0, 0]))
    densities = pd.DataFrame({
        "bin": np.concatenate([f[0] for f in frames]).astype(np.int64),
        "value": np.concatenate([f[1] for f in frames]),
        "density": np.concatenate([f[2] for f in frames]),
    })
    summary = pd.DataFrame({
        "bin": bin_ids.astype(np.int64), "n": counts.astype(np.int64), "weight": totals,
        "min": ps[starts], "q25": quart[:, 0], "median": quart[:, 1], "q75": quart[:, 2],
        "max": ps[ends], "mean": means, "n_points": m.astype(np.int64), "bandwidth": bandwidths,
    })
    return BinDistributions(densities, summary)


def histogram(values, *, bins=30, range=None, y_true=None, sample_weight=None) -> pd.DataFrame:
    """Histogram of a numeric variable, optionally split by a binary outcome.

    Parameters
    ----------
    values : array-like of shape (n,)
        Finite numbers (predictions or a feature).
    bins : int or array-like of edges, default 30
        Number of equal-width bins over ``range`` or explicit increasing edges.
    range : (float, float), optional
        Lower and upper limit; default the data's minimum and maximum.
        Values outside are not counted.
    y_true : array-like of shape (n,), optional
        Outcomes in {0, 1}; adds the columns ``count_pos`` and ``count_neg``.
    sample_weight : array-like of shape (n,), optional
        Counts become sums of weights.

    Returns
    -------
    pandas.DataFrame
        One row per bin: ``lower, upper, count`` (and ``count_pos``,
        ``count_neg``). Bins are ``[lower, upper)``, the last one closed, as
        :func:`numpy.histogram`.

    References
    ----------
    Matsubara et al. (2023), Fig. 1 (right panel: a 30-bin histogram of all
    predictions); Kelly & Smyth (2023), Fig. 1 (the variable's distribution).

    Examples
    --------
    >>> h = histogram([0.1, 0.2, 0.8, 0.9], bins=2, range=(0, 1), y_true=[0, 1, 1, 1])
    >>> h.to_dict("list")
    {'lower': [0.0, 0.5], 'upper': [0.5, 1.0], 'count': [2.0, 2.0], 'count_pos': [1.0, 2.0], 'count_neg': [1.0, 0.0]}
    """
    v = np.asarray(values, dtype=np.float64) if not isinstance(values, pd.Series) else values.to_numpy(np.float64)
    if v.ndim != 1:
        raise InputError(f"values must be one-dimensional, got shape {v.shape}.")
    if not np.isfinite(v).all():
        raise InputError("values contain NaN or infinite entries; drop or fill them before drawing a histogram.")
    w = check_weights(sample_weight, v.shape[0])
    if v.shape[0] == 0:
        raise InputError("values is empty; need at least one number for a histogram.")
    if range is None and np.ndim(bins) == 0 and v.min() == v.max():
        range = (v.min() - 0.5, v.max() + 0.5)
    try:
        count, edges = np.histogram(v, bins=bins, range=range, weights=w)
    except ValueError as exc:
        raise InputError(f"bad histogram bins or range: {exc}.") from None
    out = pd.DataFrame({"lower": edges[:-1], "upper": edges[1:], "count": count.astype(np.float64)})
    if y_true is not None:
        y, _, _ = check_binary(y_true, np.clip(np.nan_to_num(v), 0, 1), sample_weight, drop_zero_weight=False)
        pos, _ = np.histogram(v, bins=edges, weights=y if w is None else w * y)
        out["count_pos"] = pos.astype(np.float64)
        out["count_neg"] = out["count"] - out["count_pos"]
    return out
