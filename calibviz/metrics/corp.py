"""CORP: the PAV (isotonic) reliability curve, its bands, and the MCB/DSC/UNC score decomposition.

CORP stands for *Consistent, Optimally binned, Reproducible, PAV-based*
(Dimitriadis, Gneiting & Jordan 2021). The reliability curve is the
isotonic (pool-adjacent-violators) regression of the outcome on the
prediction: no bins to choose, and among all non-decreasing recalibration
maps it fits best under every proper scoring rule at once. Its value at a
prediction is the *conditional event probability* (CEP) estimate.

Everything here works on the *groups of equal scores* of the sorted
predictions (tied scores are pooled, DESIGN.md §4): one sort, then O(G) work
for G distinct scores, so resampled curves and bootstrap decompositions cost
O(G) per resample.

* :func:`corp_table`: the curve (one row per evaluation point) with
  consistency bands (where the curve of a calibrated model with these
  predictions would fall: pointwise as in the reliabilitydiag R package, or
  simultaneous, the whole curve inside with the band's probability, by
  :func:`band_limits`) and the paper's confidence bands (the spread of the
  curve refitted to labels drawn from it, pointwise), by resampling;
* :func:`corp_decomposition`: ``score = MCB - DSC + UNC`` for the Brier
  score or the log loss;
* :func:`decomposition_table`: several models' decompositions with paired
  bootstrap intervals and a sentence per model against a reference (the
  MCB-DSC plot of the triptych);
* :func:`murphy_table`: mean elementary scores across thresholds (Murphy
  diagram).
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import InputError
from ..seeding import data_seed
from ..validation import check_binary
from ..stats import holm_adjusted_finite, p_value_digits
from .resampling import interval_from_distribution, percentile_p_value
from .scores import LOG_LOSS_EPS
from .._lazy import lazy

isotonic_regression = lazy("scipy.optimize", "isotonic_regression")
xlogy = lazy("scipy.special", "xlogy")

__all__ = [
    "CorpDecomposition",
    "corp_decomposition",
    "MiscalibrationStatistic",
    "corp_table",
    "band_limits",
    "band_resamples",
    "decomposition_table",
    "murphy_table",
    "CORP_SCORES",
    "CORP_BANDS",
]


def _vdot(a, b) -> float:
    """sum(a * b) of two vectors. Not np.dot: OpenBLAS's threaded dot is ~100x slower than this on a busy
    2-core machine (thread contention), and these vectors are too short to gain from BLAS."""
    return float(np.sum(np.multiply(a, b)))

#: Scores :func:`corp_decomposition` decomposes ("log" = log loss, nats).
CORP_SCORES = ("brier", "log")
#: Bands :func:`corp_table` can add.
CORP_BANDS = ("consistency", "confidence")
_SCORE_ALIASES = {"brier": "brier", "brier_score": "brier", "log": "log", "log_loss": "log", "logloss": "log"}


# ----------------------------------------------------------------------------
# groups of equal scores and the PAV fit on them


@dataclass(frozen=True, eq=False)
class _Groups:
    """Distinct sorted scores with their row counts and weighted outcome sums."""

    x: np.ndarray  # distinct scores, increasing, shape (G,)
    count: np.ndarray  # rows per group (int64)
    weight: np.ndarray  # sum of weights (= count unweighted)
    pos: np.ndarray  # sum of w * y
    neg: np.ndarray  # sum of w * (1 - y)
    order: np.ndarray  # row permutation sorting the scores
    starts: np.ndarray  # first sorted position of each group

    @property
    def n(self) -> int:
        return int(self.order.shape[0])

    def group_of_rows(self) -> np.ndarray:
        """Group id of every input row (in input order)."""
        gid = np.empty(self.n, dtype=np.int64)
        gid[self.order] = np.repeat(np.arange(self.x.shape[0], dtype=np.int64), self.count)
        return gid


def _groups(y: np.ndarray, p: np.ndarray, w: np.ndarray | None) -> _Groups:
    order = np.argsort(p)  # unstable is 4x faster; only group sums matter
    ps = p[order]
    n = ps.shape[0]
    starts = np.flatnonzero(np.r_[True, ps[1:] != ps[:-1]])
    count = np.diff(np.r_[starts, n])
    ys = y[order]
    if w is None:
        weight = count.astype(np.float64)
        pos = np.add.reduceat(ys, starts)
    else:
        ws = w[order]
        weight = np.add.reduceat(ws, starts)
        pos = np.add.reduceat(ws * ys, starts)
    neg = np.maximum(weight - pos, 0.0) if w is None else np.add.reduceat(ws * (1.0 - ys), starts)
    return _Groups(ps[starts], count, weight, pos, neg, order, starts)


def _pav(pos: np.ndarray, weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(fitted value per group, first group of each block) of the weighted PAV fit of pos/weight.

    Adjacent blocks with equal fitted values are pooled, so block values are
    strictly increasing. Every weight must be positive.
    """
    fit = isotonic_regression(pos / weight, weights=weight)
    first = fit.blocks[:-1]
    val = fit.x[first]
    keep = np.r_[True, val[1:] != val[:-1]]
    return fit.x, first[keep]


# ----------------------------------------------------------------------------
# scores on groups


def _check_score(score) -> str:
    key = _SCORE_ALIASES.get(str(score).strip().lower()) if isinstance(score, str) else None
    if key is None:
        raise InputError(f"score must be 'brier' or 'log' (log loss), got {score!r}.")
    return key


def _total(score: str, pos, neg, q) -> float:
    """Sum over groups of the score of predictions q: pos * S(q, 1) + neg * S(q, 0)."""
    if score == "brier":
        return float(_vdot(pos, (1.0 - q) ** 2) + _vdot(neg, q * q))
    # Clipped like calibviz.metrics.log_loss. The model's own predictions need it (p = 0 with y = 1); the
    # recalibrated and climatological values give probability 0 to an observed outcome only through underflow
    # (weights near the smallest float), and clipping them too keeps every term finite; a PAV block at 0 holding
    # only y = 0 then costs -log(1 - eps) = 2.2e-16 per unit weight instead of 0.
    q = np.clip(q, LOG_LOSS_EPS, 1.0 - LOG_LOSS_EPS)
    return float(-(np.sum(xlogy(pos, q)) + np.sum(xlogy(neg, 1.0 - q))))


@dataclass(frozen=True)
class CorpDecomposition:
    """Result of :func:`corp_decomposition`: ``score = miscalibration - discrimination + uncertainty``.

    Attributes
    ----------
    score : float
        Mean score of the predictions, S(p).
    miscalibration : float
        MCB = S(p) - S(PAV-recalibrated p) >= 0: what recalibration would save.
    discrimination : float
        DSC = S(climatology) - S(PAV-recalibrated p) >= 0: what the
        predictions' ordering is worth.
    uncertainty : float
        UNC = S(climatology): the score of always predicting the (weighted) base rate.
    score_name : str
        "brier" or "log".

    ``mcb``, ``dsc``, ``unc`` are aliases; iterating gives
    ``(score, miscalibration, discrimination, uncertainty)``.

    Examples
    --------
    >>> d = CorpDecomposition(0.2, 0.01, 0.06, 0.25, "brier")
    >>> d.mcb, d.dsc, d.unc, round(d.mcb - d.dsc + d.unc, 10)
    (0.01, 0.06, 0.25, 0.2)
    """

    score: float
    miscalibration: float
    discrimination: float
    uncertainty: float
    score_name: str = "brier"

    @property
    def mcb(self) -> float:
        return self.miscalibration

    @property
    def dsc(self) -> float:
        return self.discrimination

    @property
    def unc(self) -> float:
        return self.uncertainty

    def __iter__(self):
        return iter((self.score, self.miscalibration, self.discrimination, self.uncertainty))

    def to_dict(self) -> dict:
        return {"score": self.score, "miscalibration": self.miscalibration,
                "discrimination": self.discrimination, "uncertainty": self.uncertainty,
                "score_name": self.score_name}


def _decompose(score: str, pos, neg, x, weight) -> CorpDecomposition:
    """Decomposition from group sums (groups with positive weight only)."""
    total = float(weight.sum())
    cep, _ = _pav(pos, weight)
    base = float(pos.sum()) / total
    s_p = _total(score, pos, neg, x) / total
    s_c = _total(score, pos, neg, cep) / total
    s_u = _total(score, np.array([pos.sum()]), np.array([neg.sum()]), np.array([base])) / total
    return CorpDecomposition(s_p, s_p - s_c, s_u - s_c, s_u, score)


def corp_decomposition(y_true, y_prob, *, score="brier", sample_weight=None) -> CorpDecomposition:
    """CORP decomposition of a mean score into miscalibration, discrimination and uncertainty.

    ``S(p) = MCB - DSC + UNC`` with ``MCB = S(p) - S(c)``, ``DSC = S(r) -
    S(c)`` and ``UNC = S(r)``, where ``c`` are the PAV-recalibrated
    predictions (isotonic regression of y on p, tied scores pooled) and
    ``r`` is the climatology (the base rate for every row). Because the PAV
    fit is optimal under every proper scoring rule among non-decreasing maps
    of p, MCB >= 0 and DSC >= 0 for both scores.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Outcomes in {0, 1}.
    y_prob : array-like of shape (n,)
        Predicted P(y = 1), in [0, 1].
    score : {"brier", "log"}, default "brier"
        The Brier score (mean squared error) or the log loss in nats
        ("log_loss" is accepted). The model's own log loss clips p to
        ``[eps, 1 - eps]`` exactly as :func:`calibviz.metrics.log_loss`
        (so S(p) equals it), and so do the recalibrated and climatological
        predictions (a difference of at most 2.2e-16 per unit weight; it
        keeps the terms finite when weights underflow).
    sample_weight : array-like of shape (n,), optional
        Non-negative weights: every mean, the base rate and the PAV fit are
        weighted. Rows of weight 0 are absent rows.

    Returns
    -------
    CorpDecomposition
        ``score``, ``miscalibration``, ``discrimination``, ``uncertainty``
        (aliases ``mcb``, ``dsc``, ``unc``); the identity holds to rounding.

    References
    ----------
    T. Dimitriadis, T. Gneiting and A. I. Jordan, "Stable reliability
    diagrams for probabilistic classifiers", PNAS 118(8), 2021, eq. (5)-(6)
    (CORP decomposition S = MCB - DSC + UNC); A. H. Murphy, "A new vector
    partition of the probability score", J. Appl. Meteor. 12, 1973 (the
    binned Brier decomposition it replaces).

    Examples
    --------
    >>> from calibviz.metrics import corp_decomposition
    >>> d = corp_decomposition([0, 0, 1, 0, 1, 1], [0.1, 0.3, 0.3, 0.6, 0.8, 0.9])
    >>> [round(v, 4) for v in d]          # score, MCB, DSC, UNC
    [0.1667, 0.0556, 0.1389, 0.25]
    >>> abs(d.mcb - d.dsc + d.unc - d.score) < 1e-12
    True
    """
    key = _check_score(score)
    y, p, w = check_binary(y_true, y_prob, sample_weight)
    g = _groups(y, p, w)
    return _decompose(key, g.pos, g.neg, g.x, g.weight)


class MiscalibrationStatistic:
    """MCB as a callable ``(y_true, y_prob, sample_weight=None) -> float`` that sorts the predictions once.

    For :func:`calibviz.metrics.consistency_test` (a calibrated model's MCB
    under ``y* ~ Bernoulli(p)``): every redraw has the same predictions, so
    the sort and the groups of equal scores are kept from the last call made
    with the *same array object* (held, so its identity cannot be reused);
    a redraw then costs one gather and one PAV fit instead of a sort. Any
    other array is validated and grouped afresh. Values equal
    ``corp_decomposition(...).miscalibration``.

    Parameters
    ----------
    score : {"brier", "log"}, default "brier"

    Examples
    --------
    >>> import numpy as np
    >>> from calibviz.metrics import consistency_test, corp_decomposition
    >>> rng = np.random.default_rng(0); p = rng.uniform(size=500); y = (rng.uniform(size=500) < p).astype(int)
    >>> mcb = MiscalibrationStatistic()
    >>> bool(np.isclose(mcb(y, p), corp_decomposition(y, p).mcb))
    True
    >>> consistency_test(y, p, metric=mcb, n_resamples=50, random_state=0).metric
    'mcb'
    """

    __name__ = "mcb"

    def __init__(self, score="brier"):
        self.score = _check_score(score)
        self._key = None  # (y_prob array, weight array) of the cached groups
        self._cache = None

    def __call__(self, y_true, y_prob, sample_weight=None) -> float:
        key = (y_prob, sample_weight)
        if (self._key is None or self._key[0] is not y_prob or self._key[1] is not sample_weight
                or np.shape(y_true) != (self._cache[0].n,)):
            y, p, w = check_binary(y_true, y_prob, sample_weight, drop_zero_weight=False)
            keep = None if w is None or w.all() else w > 0
            if keep is not None:
                y, p, w = y[keep], p[keep], w[keep]
            g = _groups(y, p, w)
            ws = None if w is None else w[g.order]
            self._key, self._cache = key, (g, ws, keep)
        g, ws, keep = self._cache
        y = np.asarray(y_true, dtype=np.float64)
        if keep is not None:
            y = y[keep]
        if ((y != 0) & (y != 1)).any():
            raise InputError("y_true must contain only 0 and 1 for a binary view.")
        ys = y[g.order]
        pos = np.add.reduceat(ys if ws is None else ws * ys, g.starts)
        neg = g.weight - pos if ws is None else np.add.reduceat(ws * (1.0 - ys), g.starts)
        return _decompose(self.score, pos, np.maximum(neg, 0.0), g.x, g.weight).miscalibration


# ----------------------------------------------------------------------------
# the curve and its bands


def _check_int(value, name: str, minimum: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value < minimum:
        raise InputError(f"{name} must be an integer >= {minimum}, got {value!r}.")
    return int(value)


def _check_level(level) -> float:
    if isinstance(level, (bool, np.bool_)) or not (isinstance(level, numbers.Real) and 0 < level < 1):
        raise InputError(f"level must lie strictly between 0 and 1 (e.g. 0.9), got {level!r}.")
    return float(level)


def _check_bands(bands) -> tuple[str, ...]:
    if bands is None:
        return ()
    if isinstance(bands, str):
        bands = (bands,)
    out = []
    for b in bands:
        if b not in CORP_BANDS:
            raise InputError(f"bands must be a subset of {CORP_BANDS}, got {b!r}.")
        if b not in out:
            out.append(b)
    return tuple(out)


def _grid_points(g: _Groups, n_points: int) -> np.ndarray:
    """Group ids that depend on the predictions only: every group when few, else quantiles and an even grid."""
    G = g.x.shape[0]
    if G <= 2 * n_points:
        return np.arange(G)
    cum = np.cumsum(g.weight)
    by_mass = np.searchsorted(cum, np.linspace(0.0, cum[-1], n_points), side="left")
    by_x = np.searchsorted(g.x, np.linspace(g.x[0], g.x[-1], n_points), side="left")
    return np.unique(np.clip(np.concatenate((by_mass, by_x, [0, G - 1])), 0, G - 1))


def _eval_points(g: _Groups, block_first: np.ndarray, n_points: int) -> np.ndarray:
    """Group ids where the curve and bands are evaluated: every group when few, else block ends + the grid."""
    G = g.x.shape[0]
    grid = _grid_points(g, n_points)
    if G <= 2 * n_points:
        return grid
    block_last = np.r_[block_first[1:] - 1, G - 1]
    return np.unique(np.concatenate((block_first, block_last, grid)))


def _band_draws(g: _Groups, q: np.ndarray, w_sorted, eval_ids, n_resamples, rng, resample_predictions):
    """Refitted PAV curves under y* ~ Bernoulli(q) at the groups ``eval_ids``, shape (n_resamples, len(eval_ids))."""
    G = g.x.shape[0]
    draws = np.empty((n_resamples, eval_ids.shape[0]))
    n = g.n
    q_rows = None if resample_predictions else np.repeat(q, g.count)
    group_of_sorted = np.repeat(np.arange(G), g.count)
    cum_w = None if w_sorted is None else np.cumsum(w_sorted)
    for r in range(n_resamples):
        if resample_predictions:
            # n rows drawn with replacement (probability proportional to weight), then one label each
            if cum_w is None:
                rows = rng.integers(0, n, n)
            else:
                rows = np.minimum(np.searchsorted(cum_w, rng.random(n) * cum_w[-1], side="right"), n - 1)
            grp = group_of_sorted[rows]
            cnt = np.bincount(grp, minlength=G)
            k = np.bincount(grp, weights=rng.random(n) < q[grp], minlength=G)
            present = np.flatnonzero(cnt)
            fit, _ = _pav(k[present], cnt[present].astype(np.float64))
            # a group absent from the resample takes the fit of the nearest present group below
            # (above for groups below the first present one), as reliabilitydiag does
            at = np.searchsorted(present, eval_ids, side="right") - 1
            draws[r] = fit[np.maximum(at, 0)]
        elif w_sorted is None:  # one Bernoulli per row, summed per group (cheaper than a binomial per group)
            k = np.add.reduceat((rng.random(n) < q_rows).astype(np.float64), g.starts)
            fit, _ = _pav(k, g.weight)
            draws[r] = fit[eval_ids]
        else:
            z = rng.random(n) < q_rows
            k = np.add.reduceat(w_sorted * z, g.starts)
            fit, _ = _pav(k, g.weight)
            draws[r] = fit[eval_ids]
    return draws


_SPREAD_HALF_WINDOW = 5


def _moving_average(a: np.ndarray, half: int) -> np.ndarray:
    """Centred moving average over ``2 half + 1`` points, the ends padded with the end values."""
    if a.shape[0] <= 1 or half <= 0:
        return a
    kernel = np.full(2 * half + 1, 1.0 / (2 * half + 1))
    return np.convolve(np.pad(a, half, mode="edge"), kernel, mode="valid")


def band_limits(draws: np.ndarray, level: float, coverage: str = "pointwise",
                smooth: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Band of resampled curves, pointwise or for the whole curve at once.

    Parameters
    ----------
    draws : ndarray of shape (B, M)
        B resampled curves evaluated at M points.
    level : float
        Coverage in (0, 1).
    coverage : {"pointwise", "simultaneous"}, default "pointwise"
        "pointwise": at each point the central ``level`` quantiles of the
        draws (reliabilitydiag's bands): a curve drawn like them falls inside
        at any one point with probability ``level``, but leaves the band
        somewhere far more often. "simultaneous": a band that a whole new
        curve drawn like them stays inside with probability at least
        ``level`` (split conformal, Lei, Rinaldo & Wasserman 2015;
        Diquigiovanni, Fontana & Vantini 2022): the even draws give each
        point's mean and its upper and lower semi-deviations (PAV curves are
        skewed near 0 and 1), averaged over 11 neighbouring points; each odd
        draw's score is its largest deviation from the mean in those units; the band is the mean minus / plus the
        ``ceil(level (B_odd + 1))``-th smallest score times the
        semi-deviations, clipped to [0, 1]. The guarantee is finite-sample
        for curves exchangeable with the draws (a calibrated model's curve
        and curves of labels redrawn from its predictions); a side without
        spread in the even draws takes the other side's, else the median
        spread (any positive unit keeps the guarantee). Too few draws for
        ``level`` (fewer than ``level / (1 - level)`` odd ones) give the
        whole of [0, 1].
    smooth : bool, default True
        Average each point's spreads over its 11 neighbours (above). False
        where the points are tie groups of the predictions, each its own
        spread (3 groups of 150, 90 and 60 rows: the large group's band was
        4 binomial SDs wide, the others' 2.3-2.6, and the band found a
        squashed model in 30% of samples against the binned band's 94%, an
        audit).

    Returns
    -------
    (low, high) : tuple of ndarray of shape (M,)

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> d = rng.normal(0.5, 0.05, size=(400, 30))
    >>> lo, hi = band_limits(d, 0.9)
    >>> slo, shi = band_limits(d, 0.9, "simultaneous")
    >>> bool((slo < lo).all() and (shi > hi).all())  # wider: it holds for the whole curve
    True
    >>> new = rng.normal(0.5, 0.05, size=(2000, 30))
    >>> float(np.mean(((new >= slo) & (new <= shi)).all(axis=1))) >= 0.9  # new whole curves inside
    True
    """
    draws = np.asarray(draws, dtype=np.float64)
    if coverage == "pointwise":
        lo, hi = np.quantile(draws, [(1.0 - level) / 2.0, (1.0 + level) / 2.0], axis=0)
        return lo, hi
    if coverage != "simultaneous":
        raise InputError(f"coverage must be 'pointwise' or 'simultaneous', got {coverage!r}.")
    fit, held = draws[0::2], draws[1::2]
    rank = math.ceil(level * (held.shape[0] + 1))
    if rank > held.shape[0]:
        return np.zeros(draws.shape[1]), np.ones(draws.shape[1])
    center = fit.mean(axis=0)
    dev = fit - center
    up = np.sqrt(np.mean(np.maximum(dev, 0.0) ** 2, axis=0))
    down = np.sqrt(np.mean(np.maximum(-dev, 0.0) ** 2, axis=0))
    up, down = np.where(up > 0, up, down), np.where(down > 0, down, up)
    spread = np.r_[up, down]
    fallback = float(np.median(spread[spread > 0])) if (spread > 0).any() else 1.0
    up, down = np.where(up > 0, up, fallback), np.where(down > 0, down, fallback)
    # Neighbouring points' spreads averaged (11 points): a point whose spread the even draws underestimate by
    # chance would otherwise rule the largest score and widen the band everywhere (100 draws, 10^5 rows: the
    # band's median width 0.073, up to 0.110 over 20 seeds, against 0.066 and 0.076 averaged)
    if smooth:
        up, down = _moving_average(up, _SPREAD_HALF_WINDOW), _moving_average(down, _SPREAD_HALF_WINDOW)
    off = held - center
    score = np.max(np.where(off > 0, off / up, -off / down), axis=1)
    c = np.sort(score)[rank - 1]
    return np.clip(center - c * down, 0.0, 1.0), np.clip(center + c * up, 0.0, 1.0)


def band_resamples(level: float, n_resamples: int = 200) -> int:
    """Resamples enough for a simultaneous band at ``level``: at least ``n_resamples``.

    The band's held-out half needs ``m >= level / (1 - level)`` curves, or
    the band is the whole of [0, 1] (:func:`band_limits`). 200 by default:
    with 100 the band's width at 10^5 rows varied from 0.060 to 0.076 over
    seeds, with 200 from 0.058 to 0.067 (0.95, Beta(2, 5) scores).

    >>> band_resamples(0.95), band_resamples(0.99, 100), band_resamples(0.999, 50)
    (200, 198, 1998)
    """
    level = _check_level(level)
    held = math.ceil(level / (1.0 - level) - 1e-9)
    return max(int(n_resamples), 2 * held)


def corp_table(
    y_true,
    y_prob,
    *,
    sample_weight=None,
    bands=("consistency",),
    level: float = 0.9,
    n_resamples: int = 100,
    random_state=None,
    resample_predictions: bool | None = None,
    n_points: int = 400,
    coverage: str = "pointwise",
) -> pd.DataFrame:
    """The CORP reliability curve (PAV fit of y on p) with consistency and confidence bands.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Outcomes in {0, 1}.
    y_prob : array-like of shape (n,)
        Predicted P(y = 1).
    sample_weight : array-like of shape (n,), optional
        Weights of the PAV fit (and of the resampling, see Notes).
    bands : sequence of {"consistency", "confidence"} or None, default ("consistency",)
        "consistency": where the curve of a *calibrated* model with these
        predictions would fall (labels drawn as ``y* ~ Bernoulli(p)``);
        "confidence": where the true calibration curve lies (labels drawn
        from the fitted curve, ``y* ~ Bernoulli(CEP(p))``).
    level : float, default 0.9
        Coverage of the bands (reliabilitydiag's default, pointwise).
    n_resamples : int, default 100
        Refitted curves per band.
    random_state : None, int or numpy.random.Generator
        Seed of the bands' draws; an int seeds them together with a digest
        of the data (:func:`calibviz.seeding.data_seed`: every log its own
        redraws, which the band's guarantee needs), a Generator is used as
        it is.
    resample_predictions : bool, optional
        Draw the predictions with replacement before the labels (as
        reliabilitydiag); False keeps the predictions fixed and redraws the
        labels only (the calibrated-model reference of
        :func:`calibviz.metrics.consistency_test`). Default: True, except
        for a simultaneous consistency band, whose guarantee needs curves
        exchangeable with the model's own: a calibrated model's curve is one
        of labels drawn on these very predictions (with the predictions
        resampled, whole calibrated curves left a simultaneous band 14-18%
        of the time at 95%, measured at 5,000-20,000 rows).
    n_points : int, default 400
        With more than ``2 * n_points`` distinct scores the curve is
        evaluated at every PAV block's first and last score plus
        ``n_points`` quantiles and ``n_points`` evenly spaced scores (enough
        to draw it exactly: the curve is constant on blocks); otherwise at
        every distinct score.
    coverage : {"pointwise", "simultaneous"}, default "pointwise"
        Of the consistency band. "pointwise" (the paper's and
        reliabilitydiag's band): at each score on its own, so the curve of a
        calibrated model leaves it somewhere almost always (measured: every
        one of 100 calibrated logs of 2,000 rows at 90%). "simultaneous":
        the whole curve of a calibrated model stays inside with probability
        at least ``level`` (:func:`band_limits`; measured 3.3-5.8% outside
        at 95% over 300-400 logs each of 500-20,000 rows, rare events and
        tied scores included: benchmarks/bench_bands.py), the band to read
        at first sight; the dashboard
        draws that one. Its guarantee holds at the points that depend on the
        predictions only (every distinct score, or the ``n_points``
        quantiles and even grid); at the other points (block ends) it
        takes the next grid point's upper and the previous one's lower end,
        which holds the monotone curve wherever it holds it at the grid
        (interpolated, the band was left between grid points by 8.0% of
        350 calibrated logs of 10^5 rows, an audit). The confidence band is pointwise either way, and it
        is a spread, not a guarantee: the bootstrap of a monotone fit is
        inconsistent at a point (Sen, Banerjee & Woodroofe 2010; Guntuboyina
        & Sen 2018, Statistical Science 33(4)), and the smooth true
        curve left even a simultaneous version of it somewhere on 67-87%
        of logs (150 each, 2,000-20,000 rows).

    Returns
    -------
    pandas.DataFrame
        One row per evaluation point, increasing ``x`` (a distinct
        prediction): ``x``, ``cep`` (the PAV fit), ``block`` (PAV block id),
        ``block_lower``, ``block_upper`` (the block's smallest and largest
        score), ``block_n`` (rows), ``block_weight``, ``block_positives``
        (weighted count of y = 1) and, per band, ``consistency_low``,
        ``consistency_high``, ``confidence_low``, ``confidence_high``.
        ``attrs``: ``level``, ``coverage``, ``n_resamples``, ``bands``, ``n``,
        ``n_distinct``, ``n_blocks``, ``weighted``, ``resample_predictions``
        (per band)
        and ``decomposition`` (the Brier :func:`corp_decomposition` as a dict).

    Notes
    -----
    Each resample refits PAV on the groups of equal scores with their
    resampled counts: n rows are drawn with replacement (probability
    proportional to their weight) and get one label each, and only the
    per-group counts and positives enter the O(G) PAV fit. A group that a resample
    misses takes the fit of the nearest lower present group (or the lowest
    present one), as reliabilitydiag fills its join. Confidence bands at a
    score whose fitted CEP is exactly 0 or 1 (away from the ends) collapse,
    since every draw there is 0 (1); reliabilitydiag then interpolates the
    band between its neighbours, and so does this table. Weighted data with
    fixed predictions draw one label per row.

    References
    ----------
    T. Dimitriadis, T. Gneiting and A. I. Jordan, "Stable reliability
    diagrams for probabilistic classifiers", PNAS 118(8), 2021 (CORP
    reliability diagram, consistency and confidence bands by resampling);
    J. Bröcker and L. A. Smith, "Increasing the reliability of reliability
    diagrams", Weather and Forecasting 22(3), 2007 (consistency resampling);
    R. E. Barlow et al., *Statistical Inference under Order Restrictions*,
    1972 (pool-adjacent-violators).

    Examples
    --------
    >>> import numpy as np
    >>> from calibviz.metrics import corp_table
    >>> t = corp_table([0, 0, 1, 0, 1, 1], [0.1, 0.3, 0.3, 0.6, 0.8, 0.9], bands=None)
    >>> t[["x", "cep", "block"]].to_dict("list")
    {'x': [0.1, 0.3, 0.6, 0.8, 0.9], 'cep': [0.0, 0.3333333333333333, 0.3333333333333333, 1.0, 1.0], 'block': [0, 1, 1, 2, 2]}
    >>> rng = np.random.default_rng(0); p = rng.uniform(size=500); y = rng.uniform(size=500) < p
    >>> t = corp_table(y, p, bands=("consistency", "confidence"), n_resamples=50, random_state=0)
    >>> bool((t.consistency_low <= t.consistency_high).all()), t.attrs["level"]
    (True, 0.9)
    """
    y, p, w = check_binary(y_true, y_prob, sample_weight)
    bands = _check_bands(bands)
    level = _check_level(level)
    if coverage not in ("pointwise", "simultaneous"):
        raise InputError(f"coverage must be 'pointwise' or 'simultaneous', got {coverage!r}.")
    if coverage == "simultaneous" and resample_predictions and "consistency" in bands:
        raise InputError("a simultaneous consistency band redraws labels on the fixed predictions (with the "
                         "predictions resampled too, 14-18% of calibrated curves left a 95% band): leave "
                         "resample_predictions unset or pass False.")
    n_resamples = _check_int(n_resamples, "n_resamples", 1)
    n_points = _check_int(n_points, "n_points", 2)
    g = _groups(y, p, w)
    # an int seed seeds the bands' redraws with the predictions too (calibviz.seeding): their distinct scores and
    # weights, whatever the rows' order; a Generator is used as it is
    try:
        rng = np.random.default_rng(data_seed(random_state, g.x, g.weight))
    except (TypeError, ValueError) as exc:
        raise InputError(f"random_state must be None, an int or a numpy Generator ({exc}).") from None
    cep, block_first = _pav(g.pos, g.weight)
    G = g.x.shape[0]
    block_of_group = np.repeat(np.arange(block_first.shape[0]), np.diff(np.r_[block_first, G]))
    block_last = np.r_[block_first[1:] - 1, G - 1]
    ids = _eval_points(g, block_first, n_points)
    b = block_of_group[ids]
    cum_n = np.r_[0, np.cumsum(g.count)]
    cum_w = np.r_[0.0, np.cumsum(g.weight)]
    cum_pos = np.r_[0.0, np.cumsum(g.pos)]
    first, last = block_first[b], block_last[b]
    table = pd.DataFrame({
        "x": g.x[ids],
        "cep": cep[ids],
        "block": b.astype(np.int64),
        "block_lower": g.x[first],
        "block_upper": g.x[last],
        "block_n": (cum_n[last + 1] - cum_n[first]).astype(np.int64),
        "block_weight": cum_w[last + 1] - cum_w[first],
        "block_positives": cum_pos[last + 1] - cum_pos[first],
    })
    w_sorted = None if w is None else w[g.order]
    resampled = {}
    for band in bands:
        q = g.x if band == "consistency" else cep
        # the confidence band stays pointwise: no band from this bootstrap covers the true curve as a whole
        # (see coverage), so the simultaneous rule would only promise what it does not hold
        band_coverage = coverage if band == "consistency" else "pointwise"
        resample = (band_coverage == "pointwise") if resample_predictions is None else bool(resample_predictions)
        resampled[band] = resample
        if band_coverage == "simultaneous":
            # drawn and scored at points that depend on the predictions only (the observed curve's own block ends
            # would make it slightly less exchangeable with the redrawn ones: 5.1% outside against 4.0% measured
            # at level 0.95), and carried to the other points as steps that hold every monotone curve inside
            # between two grid points once inside at both (the PAV curve is monotone: from x_a to x_b it stays
            # within [cep(x_a), cep(x_b)]). Interpolated, the band was left between grid points: 8.0% of 350
            # calibrated logs of 10^5 rows outside at level 0.95 (an audit); 6.1% of 700 now, every one outside at
            # a grid point too (benchmarks/README.md).
            grid = _grid_points(g, n_points)
            draws = _band_draws(g, q, w_sorted, grid, n_resamples, rng, resample)
            lo_grid, hi_grid = band_limits(draws, level, band_coverage, smooth=G > 2 * n_points)
            lo, hi = _monotone_envelope(g.x[grid], lo_grid, hi_grid, g.x[ids])
        else:
            lo, hi = band_limits(_band_draws(g, q, w_sorted, ids, n_resamples, rng, resample), level, band_coverage)
        if band == "confidence":
            lo, hi = _interpolate_degenerate(table["x"].to_numpy(), table["cep"].to_numpy(), lo, hi)
        table[f"{band}_low"] = lo
        table[f"{band}_high"] = hi
    table.attrs.update(
        level=level, coverage=coverage, n_resamples=n_resamples, bands=bands, n=g.n, n_distinct=int(G),
        n_blocks=int(block_first.shape[0]), weighted=w is not None, resample_predictions=resampled,
        decomposition=_decompose("brier", g.pos, g.neg, g.x, g.weight).to_dict(),
    )
    return table


def _monotone_envelope(grid_x, lo_grid, hi_grid, x):
    """A band known at ``grid_x`` (sorted, spanning ``x``) at the points ``x``: between two grid points x_a <= x <=
    x_b, from the lower of their lower ends to the higher of their upper ends. A non-decreasing curve inside the
    band at the grid points is then inside at every x (it lies within [curve(x_a), curve(x_b)] there), and the band
    holds the one interpolated between them (their ends need not be monotone: a review).

    >>> _monotone_envelope(np.array([0.0, 1.0]), np.array([0.1, 0.5]), np.array([0.3, 0.9]), np.array([0, 0.5, 1]))
    (array([0.1, 0.1, 0.5]), array([0.3, 0.9, 0.9]))
    >>> _monotone_envelope(np.array([0.0, 1.0]), np.array([0.5, 0.3]), np.array([0.9, 0.6]), np.array([0.5]))
    (array([0.3]), array([0.9]))
    """
    following = np.minimum(np.searchsorted(grid_x, x, side="left"), grid_x.shape[0] - 1)
    preceding = np.maximum(np.searchsorted(grid_x, x, side="right") - 1, 0)
    return (np.minimum(lo_grid[preceding], lo_grid[following]),
            np.maximum(hi_grid[preceding], hi_grid[following]))


def _interpolate_degenerate(x, cep, lo, hi):
    """Confidence limits at interior points with CEP exactly 0 or 1, interpolated from the other points."""
    bad = (cep == 0.0) | (cep == 1.0)
    if x.shape[0] > 2:
        bad[0] = bad[-1] = False
    good = ~bad
    if not bad.any() or good.sum() < 2:
        return lo, hi
    return np.interp(x, x[good], lo[good]), np.interp(x, x[good], hi[good])


# ----------------------------------------------------------------------------
# several models: decompositions with bootstrap intervals and readings


def _model_arrays(name, value):
    if isinstance(value, (tuple, list)) and len(value) in (2, 3):
        y, p, w = check_binary(*(value if len(value) == 3 else (*value, None)))
        return y, p, w
    raise InputError(f"model {name!r}: expected (y_true, y_prob) or (y_true, y_prob, sample_weight), "
                     f"got {type(value).__name__}.")


def _fmt(v: float) -> str:
    return f"{v:.4f}" if abs(v) >= 1e-4 or v == 0 else f"{v:.2g}"


def _round_off(uncertainty: float) -> float:
    """Differences within this read as "equal" (a monotone recalibration keeps DSC exactly): round-off."""
    return 1e-12 * max(1.0, abs(uncertainty))


#: A label's form after "not clearly".
_ADJECTIVE = {"discriminates less": "less discriminating", "discriminates more": "more discriminating"}


def _reading(row, ref, score_label: str, paired: bool, alpha: float = 0.05, n_tests: int = 0) -> str:
    if row["model"] == ref["model"]:
        return f"{row['model']} is the reference."
    d_score = row["score"] - ref["score"]
    d_mcb = row["miscalibration"] - ref["miscalibration"]
    d_dsc = row["discrimination"] - ref["discrimination"]
    verdict = "worse" if d_score > 0 else "better" if d_score < 0 else "the same"
    # a score difference within the resampling noise is no "better" and has no "gains mainly on" (it read "b scores
    # 0.0026 better than a: it gains mainly on discrimination; ... discriminates about equally (within resampling
    # noise)" beside the Compare page's "do not differ beyond the bootstrap noise": a browser review)
    score_noise = paired and row.get("d_score_p_adjusted", row.get("d_score_p", math.nan)) > alpha
    if score_noise and d_score:
        head = (f"{row['model']} and {ref['model']} score about the same ({score_label} {_fmt(row['score'])} vs "
                f"{_fmt(ref['score'])}, a difference within resampling noise)")
    elif d_score:
        head = (f"{row['model']} scores {_fmt(abs(d_score))} {verdict} than {ref['model']} ({score_label} "
                f"{_fmt(row['score'])} vs {_fmt(ref['score'])})")
    else:
        head = f"{row['model']} scores the same as {ref['model']} ({score_label} {_fmt(row['score'])})"
    tiny = _round_off(ref["uncertainty"])
    calib = ("equally calibrated" if abs(d_mcb) <= tiny else "worse calibrated" if d_mcb > 0 else "better calibrated")
    held = row.get("mcb_held_back") or ""
    if held and abs(d_mcb) > tiny:  # the worse model's MCB is what a calibrated model with its predictions shows
        calib = f"not clearly {calib}"
    discr = ("discriminates equally (the same ranking of the cases)" if abs(d_dsc) <= tiny else
             "discriminates less" if d_dsc < 0 else "discriminates more")
    parts, unclear = [], set()
    for label, d, lo, hi, name, col in ((calib, d_mcb, row.get("d_mcb_low"), row.get("d_mcb_high"), "MCB", "mcb"),
                                        (discr, d_dsc, row.get("d_dsc_low"), row.get("d_dsc_high"), "DSC", "dsc")):
        if abs(d) <= tiny:
            parts.append(label)
            continue
        suffix = ""
        if paired and lo is not None and np.isfinite(lo):
            adjusted = row.get(f"d_{col}_p_adjusted", math.nan)
            if col == "mcb" and held:
                whose = "its" if held == row["model"] else f"{held}'s"
                suffix = (f", beyond the resampling noise, but {whose} MCB is within what a perfectly calibrated "
                          f"model with {'its' if held == row['model'] else 'those'} predictions shows: "
                          f"p = {p_value_digits(row['mcb_reference_p'])}")  # above alpha: no bound, not < 0.001
            elif np.isfinite(adjusted) and adjusted <= alpha:
                suffix = ", clear"
            elif row.get(f"d_{col}_p", math.nan) <= alpha:  # beyond the noise alone, not among all read
                label = f"not clearly {_ADJECTIVE.get(label, label)}"
                suffix = f", not clear among the {n_tests} differences read together"
                unclear.add(col)
            elif np.isfinite(row.get(f"d_{col}_p", math.nan)):
                # no direction for a difference within the noise (it read "discriminates less (DSC -1.2e-06, within
                # resampling noise)": a browser review)
                label = "not clearly better or worse calibrated" if col == "mcb" else "discriminates about equally"
                suffix = ", within resampling noise"
                unclear.add(col)
        # tiny differences positional too, as the values beside them ('-0.00000034', not '-3.4e-07')
        text = (f"{label} ({name} {d:+.4f}" if abs(d) >= 5e-5 else
                f"{label} ({name} {'+' if d > 0 else ''}"
                f"{np.format_float_positional(d, precision=2, unique=False, fractional=False, trim='-')}")
        text += suffix
        parts.append(text + ")")
    why = ""
    if d_score and not score_noise:  # the larger share of the difference, named only when read beyond the noise
        sign = 1.0 if d_score > 0 else -1.0
        shares = [("calibration", "mcb", sign * d_mcb),
                  ("discrimination", "dsc", -sign * d_dsc if abs(d_dsc) > tiny else 0.0)]
        what, col, share = max(shares, key=lambda t: t[2])
        if share > 0 and col not in unclear:
            why = f": it {'loses' if d_score > 0 else 'gains'} mainly on {what}"
    unc = ""
    if abs(row["uncertainty"] - ref["uncertainty"]) > tiny:
        # score = MCB - DSC + UNC: with other outcomes (a confidence view's are each model's own correctness) a
        # model can score worse while better calibrated and more discriminating, unexplained (an audit)
        unc = (f" The outcomes' uncertainty differs too (UNC {_fmt(row['uncertainty'])} vs "
               f"{_fmt(ref['uncertainty'])}: the models are scored against different outcomes), and the score "
               "includes it.")
    return f"{head}{why}; it is {parts[0]} and {parts[1]}.{unc}"


def _calibration_gate(table: pd.DataFrame, arrays, key: str, ref_j: int, alpha: float, n_reference: int,
                      rng: np.random.Generator) -> None:
    """Hold back each clear MCB difference whose worse model is consistent with a calibrated model (in place)."""
    from .consistency import consistency_test, redraws_needed

    n_reference = max(n_reference, redraws_needed(alpha))  # 200 redraws cannot give p <= 0.001

    def mcb(y_true, y_prob, sample_weight=None):
        return corp_decomposition(y_true, y_prob, score=key, sample_weight=sample_weight).mcb

    seed = int(rng.integers(2**32))  # drawn after the bootstrap: its resamples stay as they were
    p_of = {}
    for j in range(len(table)):
        adjusted = table.at[j, "d_mcb_p_adjusted"]
        if j == ref_j or not (np.isfinite(adjusted) and adjusted <= alpha):
            continue
        d = table.at[j, "miscalibration"] - table.at[ref_j, "miscalibration"]
        worse = j if d > 0 else ref_j
        if worse not in p_of:
            y, p, w = arrays[worse]
            p_of[worse] = consistency_test(y, p, metric=mcb, n_resamples=n_reference, random_state=seed,
                                           sample_weight=w).p_value
        if p_of[worse] > alpha:
            table.at[j, "mcb_held_back"] = table.at[worse, "model"]
            table.at[j, "mcb_reference_p"] = p_of[worse]


def decomposition_table(
    models: dict,
    *,
    score="brier",
    reference=None,
    n_resamples: int = 200,
    confidence: float = 0.9,
    random_state=None,
    alpha: float = 0.05,
    n_reference: int = 200,
    of: str | None = None,
) -> pd.DataFrame:
    """CORP decompositions of several models, with bootstrap intervals and a reading against a reference.

    Parameters
    ----------
    models : dict
        ``{name: (y_true, y_prob[, sample_weight])}``, binary predictions.
        When every model has the same labels and weights (the usual case:
        several models scored on the same rows), the bootstrap is *paired*
        (the same resampled rows for every model) and the differences to the
        reference get intervals too.
    score : {"brier", "log"}, default "brier"
    reference : str, optional
        The model the others are compared with; default the first.
    n_resamples : int, default 200
        Bootstrap resamples (0: no intervals).
    confidence : float, default 0.9
        Level of the percentile intervals.
    random_state : None, int or numpy.random.Generator
    alpha : float, default 0.05
        Level of the readings' "clear". The MCB and DSC differences of every
        model to the reference are read together: each gets the two-sided
        p-value at which its percentile interval would reach 0
        (:func:`calibviz.metrics.resampling.percentile_p_value`), Holm's
        method adjusts them over all the differences read, and a difference
        is "clear" when its adjusted p-value is at most ``alpha``. Read one
        by one at the whiskers' 90%, each of two equal models' differences
        was "clear" one time in ten.
    n_reference : int, default 200
        Label redraws of the calibrated-model reference that "worse
        calibrated" needs: a clear MCB difference stands only when the model
        with the larger MCB shows evidence of miscalibration itself
        (consistency resampling of its MCB, p <= ``alpha``; raised to the
        redraws ``alpha`` needs, 999 at 0.001), as
        :func:`calibviz.compare.compare_models` asks of calibration errors.
        MCB is biased upward for sharp predictions (a PAV fit follows the
        noise of many distinct scores): a perfectly calibrated sharp model
        read "worse calibrated (clear)" against a perfectly calibrated coarse
        one in 30 of 30 simulated cases without it. 0 skips the condition.
    of : str, optional
        What the predictions are the probabilities of, for the readings'
        score ("the confidence": "Brier score of the confidence", so that a
        multiclass comparison's confidence-view score is not read as the
        multiclass Brier score).

    Returns
    -------
    pandas.DataFrame
        One row per model: ``model``, ``score``, ``miscalibration``,
        ``discrimination``, ``uncertainty``, their intervals
        (``score_low``, ``score_high``, ``mcb_low``, ``mcb_high``,
        ``dsc_low``, ``dsc_high``), for a paired bootstrap the intervals of
        the differences to the reference (``d_score_low``, ``d_score_high``,
        ``d_mcb_low``, ``d_mcb_high``, ``d_dsc_low``, ``d_dsc_high``) with
        the p-values of the MCB and DSC differences and their Holm
        adjustment (``d_mcb_p``, ``d_mcb_p_adjusted``, ``d_dsc_p``,
        ``d_dsc_p_adjusted``; paired bootstrap only, NaN for the reference and
        for a difference 0 in every resample), ``d_score_p`` (the score
        difference's p-value, and ``d_score_p_adjusted``, Holm's adjustment over
        the models' score differences: above ``alpha`` the reading says the
        two score about the same and names no main share), ``mcb_held_back`` (the model whose MCB held a clear
        difference back, see ``n_reference``; "" otherwise) with
        ``mcb_reference_p`` (its p-value), ``note`` (why an estimate lies outside its interval, if it does) and
        ``reading`` (one sentence: does the model lose on calibration or on
        discrimination against the reference?). ``attrs``: ``score``,
        ``reference``, ``paired``, ``confidence``, ``n_resamples``, ``alpha``,
        ``n_tests`` (the differences read together), ``n_reference``.

    Notes
    -----
    Percentile intervals. MCB is biased upward in small samples (a PAV fit
    follows noise), so its bootstrap values can lie above the estimate; the
    ``note`` column says so when the estimate falls outside its interval.
    Each resample costs O(n) per model (a weighted count per group of equal
    scores) plus the O(G) PAV fit.

    References
    ----------
    T. Dimitriadis, T. Gneiting and A. I. Jordan (2021), PNAS 118(8), Fig. 4
    (MCB-DSC plot with score isolines); T. Dimitriadis, T. Gneiting, A. I.
    Jordan and P. Vogel, "Evaluating probabilistic classifiers: the
    triptych", International Journal of Forecasting 40(3), 2024.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0); p = rng.uniform(size=2000); y = (rng.uniform(size=2000) < p).astype(int)
    >>> t = decomposition_table({"calibrated": (y, p), "overconfident": (y, np.clip(1.4 * p - 0.2, 0, 1))},
    ...                         n_resamples=50, random_state=0)
    >>> t["model"].tolist(), bool(t.loc[1, "miscalibration"] > t.loc[0, "miscalibration"])
    (['calibrated', 'overconfident'], True)
    >>> "loses mainly on calibration" in t.loc[1, "reading"]
    True
    """
    key = _check_score(score)
    if not isinstance(models, dict) or not models:
        raise InputError("models must be a non-empty dict {name: (y_true, y_prob[, sample_weight])}.")
    n_resamples = _check_int(n_resamples, "n_resamples", 0)
    if isinstance(confidence, bool) or not (isinstance(confidence, numbers.Real) and 0 < confidence < 1):
        raise InputError(f"confidence must lie strictly between 0 and 1, got {confidence!r}.")
    if isinstance(alpha, bool) or not (isinstance(alpha, numbers.Real) and 0 < alpha < 1):
        raise InputError(f"alpha must lie strictly between 0 and 1, got {alpha!r}.")
    n_reference = _check_int(n_reference, "n_reference", 0)
    try:
        rng = np.random.default_rng(random_state)
    except (TypeError, ValueError) as exc:
        raise InputError(f"random_state must be None, an int or a numpy Generator ({exc}).") from None
    names = [str(k) for k in models]
    ref_name = names[0] if reference is None else str(reference)
    if ref_name not in names:
        raise InputError(f"reference {reference!r} is not one of the models: {', '.join(names)}.")
    arrays = [_model_arrays(k, v) for k, v in models.items()]
    y0, _, w0 = arrays[0]
    paired = all(a[0].shape == y0.shape and np.array_equal(a[0], y0)
                 and ((a[2] is None and w0 is None) or (a[2] is not None and w0 is not None
                                                        and np.array_equal(a[2], w0))) for a in arrays)
    groups = [_groups(*a) for a in arrays]
    est = [_decompose(key, g.pos, g.neg, g.x, g.weight) for g in groups]
    m = len(arrays)
    dist = np.full((n_resamples, m, 3), np.nan)  # score, mcb, dsc
    if n_resamples:
        gids = [g.group_of_rows() for g in groups]
        for r in range(n_resamples):
            idx_counts = None
            for j, (y, p, w) in enumerate(arrays):
                if idx_counts is None or not paired:
                    n = y.shape[0]
                    idx_counts = np.bincount(rng.integers(0, n, n), minlength=n).astype(np.float64)
                    cw = idx_counts if w is None else idx_counts * w
                G = groups[j].x.shape[0]
                wt = np.bincount(gids[j], weights=cw, minlength=G)
                pos = np.bincount(gids[j], weights=cw * y, minlength=G)
                keep = wt > 0
                d = _decompose(key, pos[keep], np.maximum(wt[keep] - pos[keep], 0.0), groups[j].x[keep], wt[keep])
                dist[r, j] = (d.score, d.miscalibration, d.discrimination)
    rows = []
    ref_j = names.index(ref_name)
    tiny = _round_off(est[ref_j].uncertainty)
    for j, (name, d) in enumerate(zip(names, est)):
        row = {"model": name, "score": d.score, "miscalibration": d.miscalibration,
               "discrimination": d.discrimination, "uncertainty": d.uncertainty}
        notes = []
        for col, k, label in (("score", 0, "score"), ("mcb", 1, "MCB"), ("dsc", 2, "DSC")):
            point = (d.score, d.miscalibration, d.discrimination)[k]
            if n_resamples:
                res = interval_from_distribution(dist[:, j, k], point, method="percentile", confidence=confidence)
                row[f"{col}_low"], row[f"{col}_high"] = res.low, res.high
                if np.isfinite(res.low) and not (res.low <= point <= res.high):
                    notes.append(f"{label} {_fmt(point)} lies outside its bootstrap interval: the resampled "
                                 f"values are shifted ({'upward' if res.low > point else 'downward'}), as PAV "
                                 "fits follow the noise of a resample")
            else:
                row[f"{col}_low"] = row[f"{col}_high"] = math.nan
            if paired and n_resamples:
                ref_point = (est[ref_j].score, est[ref_j].miscalibration, est[ref_j].discrimination)[k]
                diff = dist[:, j, k] - dist[:, ref_j, k]
                res = interval_from_distribution(diff, point - ref_point, method="percentile",
                                                 confidence=confidence)
                row[f"d_{col}_low"], row[f"d_{col}_high"] = res.low, res.high
                # a difference 0 in every resample (a monotone map keeps DSC) is no test: out of the family; the
                # score's difference is read on its own (d_score_p, not in the MCB / DSC family)
                same = np.all(np.abs(np.r_[diff[np.isfinite(diff)], point - ref_point]) <= tiny)
                row[f"d_{col}_p"] = math.nan if j == ref_j or same else percentile_p_value(diff)
        row["note"] = "; ".join(notes)
        rows.append(row)
    table = pd.DataFrame(rows)
    # the readings' "clear": the MCB and DSC differences read together (Holm), so that equal models are rarely
    # read different anywhere in the table
    n_tests = 0
    if paired and n_resamples:
        p = table[["d_mcb_p", "d_dsc_p"]].to_numpy(dtype=np.float64)
        adjusted = holm_adjusted_finite(p)
        table["d_mcb_p_adjusted"], table["d_dsc_p_adjusted"] = adjusted[:, 0], adjusted[:, 1]
        n_tests = int(np.isfinite(p).sum())
        # the score differences of the models to the reference, read together too (Holm): with several models
        # one of them read "better" beyond the noise by chance otherwise
        table["d_score_p_adjusted"] = holm_adjusted_finite(table["d_score_p"].to_numpy(dtype=np.float64))
    table["mcb_held_back"], table["mcb_reference_p"] = "", math.nan
    if paired and n_resamples and n_reference:
        _calibration_gate(table, arrays, key, ref_j, alpha, int(n_reference), rng)
    score_label = ("Brier score" if key == "brier" else "log loss") + (f" of {of}" if of else "")
    ref_row = table.iloc[ref_j]
    table["reading"] = [_reading(r, ref_row, score_label, paired and n_resamples > 0, alpha, n_tests)
                        for _, r in table.iterrows()]
    table.attrs.update(score=key, reference=ref_name, paired=bool(paired), confidence=float(confidence),
                       n_resamples=n_resamples, alpha=float(alpha), n_tests=n_tests, n_reference=int(n_reference))
    return table


# ----------------------------------------------------------------------------
# Murphy diagram: elementary scores across thresholds


def murphy_table(y_true, y_prob, *, thresholds=None, sample_weight=None) -> pd.DataFrame:
    """Mean elementary scores across thresholds theta (the data of a Murphy diagram).

    The elementary score of a probability forecast p for a binary outcome y
    at threshold theta is the cost of acting on "p > theta" with a false
    alarm costing theta and a miss costing 1 - theta::

        S_theta(p, y) = theta * 1{y = 0, p > theta} + (1 - theta) * 1{y = 1, p <= theta}

    Every proper scoring rule is a mixture of these: the Brier score is
    ``2 * integral S_theta d theta``, the log loss ``integral S_theta /
    (theta (1 - theta)) d theta``. A model whose curve lies below another's
    at every theta is better for every decision maker.

    Parameters
    ----------
    y_true : array-like of shape (n,)
    y_prob : array-like of shape (n,)
    thresholds : array-like, optional
        Values of theta in [0, 1]; default 201 evenly spaced values in [0, 1].
    sample_weight : array-like of shape (n,), optional

    Returns
    -------
    pandas.DataFrame
        ``theta``, ``score`` (mean elementary score), ``false_alarms``
        (theta x weighted share of y = 0 with p > theta) and ``misses``
        ((1 - theta) x weighted share of y = 1 with p <= theta).

    References
    ----------
    W. Ehm, T. Gneiting, A. Jordan and F. Krüger, "Of quantiles and
    expectiles: consistent scoring functions, Choquet representations and
    forecast rankings", JRSS B 78(3), 2016, Sec. 3 (elementary scores,
    Murphy diagrams); A. H. Murphy, "A note on the utility of probabilistic
    predictions and the probability score in the cost-loss ratio
    decision situation", J. Appl. Meteor. 5, 1966.

    Examples
    --------
    >>> from calibviz.metrics import murphy_table
    >>> t = murphy_table([0, 1], [0.2, 0.7], thresholds=[0.1, 0.5, 0.9])
    >>> t["score"].round(4).tolist()      # false alarm 0.1 * 1/2; no error; miss 0.1 * 1/2
    [0.05, 0.0, 0.05]
    """
    y, p, w = check_binary(y_true, y_prob, sample_weight)
    if thresholds is None:
        theta = np.linspace(0.0, 1.0, 201)
    else:
        theta = np.asarray(thresholds, dtype=np.float64).ravel()
        if not theta.size or not np.isfinite(theta).all() or theta.min() < 0 or theta.max() > 1:
            raise InputError("thresholds must be finite numbers in [0, 1].")
    ww = np.ones_like(p) if w is None else w
    total = float(ww.sum())
    order = np.argsort(p)  # unstable is 4x faster; only group sums matter
    ps = p[order]
    cum_pos = np.r_[0.0, np.cumsum((ww * y)[order])]
    cum_neg = np.r_[0.0, np.cumsum((ww * (1.0 - y))[order])]
    k = np.searchsorted(ps, theta, side="right")  # rows with p <= theta
    misses = (1.0 - theta) * cum_pos[k] / total
    false_alarms = theta * (cum_neg[-1] - cum_neg[k]) / total
    return pd.DataFrame({"theta": theta, "score": misses + false_alarms, "false_alarms": false_alarms,
                         "misses": misses})
