"""The calibrated-model reference of binned metrics from a scan's buckets (consistency resampling).

:func:`calibviz.metrics.consistency_test` redraws labels ``y* ~ Bernoulli(p)``
and recomputes the metric; for metrics on bins that do not depend on the
labels it draws, per bin, one ``Binomial(n_g, mean score)`` per score bucket g
(its "binomial buckets" path, with a proven bound on the approximation).
A scan holds those groups: its fine buckets (2^-16 wide) and exact scores
nest in the in-memory path's buckets (2^-12 wide), so per bin it sums their
row counts and scores into exactly the groups of ``method="fast"``, in the same
order: with the same seed the scan draws the in-memory reference's values
(tested), and the same values on every run and engine: each draw uses its
group's mean rounded to 12 decimals
(:func:`~calibviz.metrics.consistency.drawn_probability`; weighted scans'
Beta draws their shapes so rounded, :func:`_share_draw`), so that sums of
the same scores in another order draw the same.
So the reference costs one binomial draw per group and resample, on the
driver, without another pass over the rows; the null values are reduced by
the metric's own function (:func:`calibviz.metrics.binned._norm_of_gaps`, the
Brier decomposition), as in memory, and the bins that share a scheme (ECE,
MCE, RMSCE and the Brier reliability of a panel) share one draw.

Bound: that of :func:`~calibviz.metrics.consistency_test`'s binomial buckets
(h = 2^-12): a bin's null standard deviation is overstated by at most 0.025%
of itself (the binomial is the wider draw, so p-values are at most very
slightly conservative).

Weighted scans: the in-memory path draws every weighted row; a scan has per
group its count, weight W = sum w, sum w p and sum w^2 p (1 - p) (``swwv``,
summed by the first pass of weighted scans). The bins' metrics read the
redrawn weight of positives, drawn as W times a Beta with the exact mean
``sum w p`` and the exact variance ``sum w^2 p (1 - p)`` of the per-row draw
(:func:`positive_weight`); the positives' count is drawn apart, k ~
Binomial(n, weighted mean score). Checked by simulation against the
in-memory per-row draws (calibrated logs of weighted rows, exponential and
log-normal(0, 1.5) weights, scores Beta(2, 5) and scores near 0: rejection
rates at 5% and p-values, ``benchmarks/bench_scan_reference.py``; tested at
modest size). Two earlier versions were wrong, and simulation caught both: a
Gamma clipped at W (with log-normal weights and buckets of one or two rows
the clip cut a bin's null variance by up to 30% and flagged 17% of calibrated
logs), and a variance ``pbar (1 - pbar) sum w^2`` from the group's weighted
mean pbar (its error, up to ``h sum w^2`` for groups h wide, is of the order
of the variance itself where p (1 - p) is of the order of h: scores below
~1e-3; per-bin null variances were off by factors 0.46 to 2.8 there).
TCE's reference keeps the coupled draw of :func:`weighted_positives` (its
redrawn atoms need the positives' count and weight to agree), with that
second error.

TCE's bins (PAVA-BC) depend on the labels, so its reference refits them on
every redraw (:func:`_tce_null`), as the in-memory reference does on rows.
smECE's, the Brier score's and log loss's redraw the positives of every fine
bucket the same way, in one draw for the three (smECE solving each redraw's own
fixed point, log loss's deviation scaled to its per-row variance,
:func:`bucket_nulls`).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from ..binning import PAVABC, EqualMass
from ..metrics.binned import _debiased_from_stats, _decomposition, _norm_of_gaps
from ..metrics.consistency import (_BUCKETS, DRAW_DECIMALS, _Plan, _null_statistics, bucket_binomial_draws,
                                   cell_bucket_groups, drawn_probability, TWO_SIDED_METRICS, null_summary)
from . import refine as _ref
from .aggregate import FINE_BUCKETS, LOG_LOSS_BOUND, LOSS_HIGH, LOSS_LOW

__all__ = ["REFERENCE_METRICS", "BUCKET_KEYS", "is_seed", "reference", "bucket_nulls", "top_label_reference",
           "weighted_positives", "positive_weight"]

#: Metrics of a scan with a calibrated-model reference.
REFERENCE_METRICS = ("ece", "mce", "rmsce", "ace", "debiased_ece", "brier_reliability", "tce", "smooth_ece", "brier",
                     "log_loss")


def is_seed(random_state) -> bool:
    """Whether ``random_state`` fixes the draws (an int or a tuple of ints, not None or a Generator): draws made
    with it may be kept on the scan and shared (:func:`bucket_nulls`, :func:`_redrawn_cells`)."""
    return isinstance(random_state, (int, np.integer, tuple))


def _spec(key: str, config):
    """(bins, reduction of their statistics) of a metric with fixed bins."""
    if key == "ace":
        return EqualMass(config.n_bins), lambda s: _norm_of_gaps(s, "l1")
    if key == "debiased_ece":
        return EqualMass(config.n_bins), _debiased_from_stats
    if key == "brier_reliability":
        return config.scheme(), lambda s: _decomposition(s).reliability
    norm = {"ece": "l1", "mce": "max", "rmsce": "l2"}[key]
    return config.scheme(), lambda s: _norm_of_gaps(s, norm)


def reference(scan, key: str, config, n_resamples: int, random_state=None, level: float = 0.95, progress=None):
    """(null_mean, null_low, null_high, p_value) of ``key`` against a calibrated model with the scan's predictions.

    As :func:`calibviz.metrics.consistency_test` with ``method="fast"``:
    ``p_value = (1 + #{null >= value}) / (1 + m)``, the range is the central
    ``level`` quantiles (weighted scans: :func:`weighted_positives`). NaNs for
    a metric outside :data:`REFERENCE_METRICS`. ``progress(done)``: called with the redraws done, as TCE's
    batches end (its refits are the slow part: ~0.03-0.2 s per redraw).

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
    if key not in REFERENCE_METRICS or not n_resamples:
        return nan, nan, nan, nan
    if key == "tce":
        statistic, values = _tce_null(scan, PAVABC(config.n_min, config.n_max), config.alpha, "binomial",
                                      int(n_resamples), np.random.default_rng(random_state), progress)
        return null_summary(statistic, values, level)
    if key in ("smooth_ece", "brier", "log_loss"):
        centre = {"brier": _brier_expectation, "log_loss": _log_loss_expectation}.get(key)
        # log loss and its centre are known to their moments' bounds (per unit weight): a value within them of
        # the centre is no evidence (a perfect model of scores 0 and 1: value 1.5e-16 against a centre of eps)
        atol = LOG_LOSS_BOUND + ENTROPY_BOUND if key == "log_loss" else 0.0
        return null_summary(scan.metric(key)[0], _bucket_null(scan, key, int(n_resamples), random_state), level,
                            centre=centre(scan) if key in TWO_SIDED_METRICS else None, atol=atol)
    scheme, reduce = _spec(key, config)
    statistic, draws = _redrawn_cells(scan, scheme, int(n_resamples), random_state)
    return null_summary(reduce(statistic), np.fromiter(map(reduce, draws), np.float64, count=len(draws)), level)


def _redrawn_cells(scan, scheme, n_resamples: int, random_state):
    """(observed, redrawn) bin statistics of ``scheme``: the binomial draws every metric on these bins reduces.

    Drawn on the atoms these bins need (:meth:`Scan._atoms_for`), so they depend on the seed and the bins
    alone. With an integer seed they are kept on the scan: ECE, MCE, RMSCE and the Brier reliability of one
    panel share one draw, as they would share it drawing apart with that seed (same groups, same stream).
    """
    key = (repr(scheme), n_resamples, random_state)
    seeded = is_seed(random_state)
    if seeded and key in scan._reference_draws:
        return scan._reference_draws[key]
    atoms = scan._atoms_for([scheme])  # refined as these bins need, whatever other results refined
    _, index, stats, _ = scan._bins(scheme, atoms)
    # consistency_test's groups (the same code): rows of one bin and one score bucket 2^-12 wide (16 fine buckets
    # nest in it), in the order of key = bin * 2^12 + bucket, so a seed draws what it draws there
    group, cell, size, mean, first = cell_bucket_groups(index, atoms.bucket // (FINE_BUCKETS // _BUCKETS),
                                                        stats.count.shape[0], count=atoms.n, score=atoms.swp,
                                                        weight=atoms.sw)  # weighted: the weighted mean
    rng = np.random.default_rng(list(random_state) if isinstance(random_state, tuple) else random_state)
    if scan._roles.weight is None:
        # moments always drawn (the Brier reliability needs sum p y*; they use no random numbers)
        plan = _Plan(cell=cell, q=mean, w=None, base=stats, reduce=None, moments=True)
        draws = list(_null_statistics(plan, n_resamples, rng, (size, mean, cell[first], first)))
    else:
        weight, sww, variance = (np.bincount(group, weights=v) for v in (atoms.sw, atoms.sww, atoms.swwv))
        draws = _weighted_cell_statistics(stats, cell[first], first, size, weight, sww, variance, mean,
                                          n_resamples, rng)
    out = stats, draws
    if seeded:
        scan._reference_draws[key] = out
    return out


def top_label_reference(scan, key: str, config, n_resamples: int, random_state=None, level: float = 0.95):
    """(null_mean, null_low, null_high, p_value) of top-label ECE or MCE of a multiclass scan.

    As :func:`calibviz.metrics.consistency_test`: a calibrated model's label
    is the predicted class with probability max P (that is all these metrics
    see), so each top-label view (the rows whose predicted class is l) redraws
    "correct" per bin and score bucket as a binary view does
    (:func:`_redrawn_cells`); the views partition the rows, so independent
    draws per view are the draw of the whole log (seeds ``(seed, l)``). Bins
    fitted once per view (the "per_class" fit); NaNs for PAVA or PAVA-BC bins,
    which depend on the labels.
    """
    nan = float("nan")
    scheme = config.scheme()
    if key not in ("top_label_ece", "top_label_mce") or not n_resamples or _ref.scheme_kind(scheme) in ("pava",
                                                                                                       "pavabc"):
        return nan, nan, nan, nan
    if isinstance(random_state, (int, np.integer)):
        seeds = [(int(random_state), k) for k in range(len(scan._roles.classes))]
    else:  # None or a Generator: independent streams from it
        seeds = np.random.default_rng(random_state).spawn(len(scan._roles.classes))
    observed, redrawn = [], []
    for view, seed in zip((scan.top_label_view(c) for c in scan._roles.classes), seeds):
        if view.n > 0:
            stats, draws = _redrawn_cells(view, scheme, int(n_resamples), seed)
            observed.append(stats)
            redrawn.append(draws)
    null = np.array([_ref.top_label_values([d[r] for d in redrawn])[key] for r in range(int(n_resamples))])
    return null_summary(_ref.top_label_values(observed)[key], null, level)


def weighted_positives(k, size, weight, sww, rng):
    """Redrawn weight of the positives of groups of a weighted scan, given ``k`` positives of ``size`` rows.

    The rows of a group (one bin, one score bucket) are summarised by their
    count n, weight W and sum of squared weights; the weights of the k
    positives of a label redraw are k of those n weights, taken without
    replacement: mean ``k W / n`` and variance
    ``k (n - k) / (n - 1) s^2`` (s^2 the weights' variance). The sum is drawn
    as W times a Beta with that mean and variance (it exists: a variable on
    [0, W] with mean m has variance at most m (W - m), Bhatia-Davis; exact
    when the group's weights are equal, where the variance is 0 and the sum is
    k W / n; two rows of very unequal weights give a near two-point draw, as
    they should). With ``k ~ Binomial(n, pbar)`` (pbar the group's weighted
    mean score) the drawn sum has the mean of the exact
    ``sum_i w_i Bernoulli(p_i)``, ``sum_i w_i p_i``, exactly, and the variance
    ``pbar (1 - pbar) sum w^2`` against the exact ``sum w_i^2 p_i (1 - p_i)``:
    they differ by at most ``h sum w^2`` for scores within a bucket of width
    h. Arrays of any shape broadcast with ``k``.
    """
    wbar = weight / size
    s2 = np.maximum(sww / size - wbar * wbar, 0.0)
    mean = k * wbar
    var = k * (size - k) / np.maximum(size - 1, 1) * s2
    spread = var > 0
    out = np.array(mean, dtype=np.float64)
    W = np.broadcast_to(weight, out.shape)[spread]
    # the share of the group's weight: its mean and variance. Beta on [0, 1]: it exists because a sum of k of the
    # weights lies in [0, W], so its variance is below f (1 - f) (Bhatia-Davis); a Gamma overshoots W and, clipped,
    # loses variance
    out[spread] = W * _share_draw(out[spread] / W, var[spread] / (W * W), rng)
    return out


def _share_draw(f: np.ndarray, v: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A Beta draw with mean ``f`` and variance ``v`` (``0 < v < f (1 - f)``), its shapes rounded to
    :data:`~calibviz.metrics.consistency.DRAW_DECIMALS` decimals.

    Rounded for the reason :func:`~calibviz.metrics.consistency.drawn_probability` rounds a binomial's
    probability: the shapes come from sums the engines add in any order, and numpy's beta and gamma samplers
    branch at shape 1 (Johnk's algorithm below it, the exponential at it, Marsaglia-Tsang above it), so a shape
    of 1 summed as 0.9999999999999999 drew another value and shifted the stream of every later draw.

    >>> a, b = _share_draw(np.array([0.5]), np.array([1 / 12]), np.random.default_rng(3)), np.nextafter(1 / 12, 0)
    >>> bool(a == _share_draw(np.array([0.5]), np.array([b]), np.random.default_rng(3)))
    True
    """
    c = np.maximum(f * (1.0 - f) / v - 1.0, 1e-9)
    return rng.beta(np.maximum(np.round(f * c, DRAW_DECIMALS), 1e-12),
                    np.maximum(np.round((1.0 - f) * c, DRAW_DECIMALS), 1e-12))


def positive_weight(weight, mean, variance, rng, size=None):
    """Redrawn weight of the positives of groups of a weighted scan under "calibrated", with the exact mean and
    variance of ``sum_i w_i Bernoulli(p_i)``.

    ``weight`` W = sum w, ``mean`` the weighted mean score (so the mean is
    ``W mean = sum w p``) and ``variance`` = ``sum w^2 p (1 - p)`` (the
    scan's ``swwv``) per group. Drawn as W times a Beta with that mean and
    variance: it exists, since ``sum_i w_i^2 p_i (1 - p_i) <= (sum_i w_i p_i)
    (sum_j w_j (1 - p_j))`` (the right side holds the left side's terms and
    more, all >= 0), which is the Bhatia-Davis bound of a variable on [0, W].
    One row gives the two-point draw w Bernoulli(p) exactly; many rows a
    smooth draw with the right first two moments (the sum is near normal
    there). Shape ``size`` (resamples, groups), default the groups'.
    """
    W = np.broadcast_to(weight, np.broadcast_shapes(np.shape(weight), size or ()))
    f = np.clip(np.broadcast_to(mean, W.shape), 0.0, 1.0)
    v = np.broadcast_to(variance, W.shape) / np.where(W > 0, W * W, 1.0)
    spread = (v > 0) & (f > 0) & (f < 1)
    out = np.array(W * f, dtype=np.float64)  # no spread: every row's score is 0 or 1, or the group weighs nothing
    out[spread] = W[spread] * _share_draw(f[spread], v[spread], rng)
    return out


def _weighted_cell_statistics(stats, cells, starts, size, weight, sww, variance, mean, n_resamples: int,
                              rng) -> list:
    """Redrawn bin statistics of a weighted scan: per group k ~ Binomial(n, weighted mean score) positives
    (the bins' counts) and their weight: ``w k`` for a group of equal weights (the unweighted binomial-bucket
    draw, so weights of 1 give the unweighted reference), otherwise drawn apart from k by
    :func:`positive_weight` (exact mean and variance; the fixed-bin metrics read only the weights); sum p y*
    as the group's mean score x that weight."""
    n_cells = stats.count.shape[0]
    out = []
    for k, t in _positive_draws(size, weight, sww, variance, mean, n_resamples, rng):
        c = k.shape[0]
        pos, true, ptrue = (np.zeros((c, n_cells)) for _ in range(3))
        pos[:, cells] = np.add.reduceat(k, starts, axis=1)
        true[:, cells] = np.add.reduceat(t, starts, axis=1)
        ptrue[:, cells] = np.add.reduceat(t * mean, starts, axis=1)
        out += [replace(stats, positives=pos[j].round().astype(np.int64), sum_true=true[j], sum_pred_true=ptrue[j])
                for j in range(c)]
    return out


def _unequal_weights(size, weight, sww) -> np.ndarray:
    """The groups whose rows' weights differ (their positives' weight is drawn by :func:`positive_weight`)."""
    wbar = weight / size
    return np.flatnonzero(sww / size - wbar * wbar > 1e-12 * wbar * wbar)


def _positive_draws(size, weight, sww, variance, mean, n_resamples: int, rng):
    """Chunks (k, t) of redrawn positives of groups of a weighted scan: k ~ Binomial(n, weighted mean score) rows
    and their weight t, ``w k`` for a group of equal weights, otherwise :func:`positive_weight` (exact mean and
    variance), arrays of shape (redraws, groups). :func:`_drawn_variance` is the variance of t."""
    wbar = weight / size
    unequal = _unequal_weights(size, weight, sww)
    for k in bucket_binomial_draws(size, mean, n_resamples, rng):
        t = k * wbar
        if unequal.size:
            t[:, unequal] = positive_weight(weight[unequal], mean[unequal], variance[unequal], rng,
                                            size=(k.shape[0], unequal.size))
        yield k, t


def _drawn_variance(size, weight, sww, variance, mean) -> np.ndarray:
    """Variance of the positives' weight t that :func:`_positive_draws` draws per group: (W / n)^2 n pbar (1 -
    pbar) for a binomial count of equal weights (at least the per-row sum w^2 p (1 - p)), the exact ``variance``
    where the weights differ."""
    wbar = weight / size
    out = wbar * wbar * size * mean * (1.0 - mean)
    unequal = _unequal_weights(size, weight, sww)
    out[unequal] = variance[unequal]
    return out


#: Bound on the error per unit weight of the expected log loss from a fine bucket's moments (scores in [1/64,
#: 63/64]): the Taylor remainder |H^(3)| / 6 |u|^3 of the entropy H, |H^(3)| = |1 - 2p| / (p (1 - p))^2 <= 4096 there,
#: |u| <= 2^-17: 2^-40 / 3, against a loss of 0.07-0.69 per row there.
ENTROPY_BOUND = 2.0 ** -40 / 3.0


def _log_loss_terms(scan, bucket, sw, swp, swpp, swwv) -> tuple[np.ndarray, np.ndarray]:
    """Per fine bucket (pooled labels): sum w H(p), the log loss's expectation under "calibrated", and sum w^2
    p (1 - p) logit(p)^2, the variance of its sum w (y* - p) logit(p) part (its only random part: the loss of a
    row is -log(1 - q) - y logit(q)).

    In the tail buckets (scores below 1/64 or from 63/64) both are summed per row by one filtered pass
    (:func:`calibviz.scan.aggregate.entropy_tails`, with the in-memory clip). Elsewhere H comes from the
    bucket's moments to second order around its midpoint c (remainder below :data:`ENTROPY_BOUND` per unit
    weight), and the variance as logit(c)^2 sum w^2 p (1 - p): logit^2 changes by at most 2 |logit| / (p (1 -
    p)) 2^-17 across half a bucket, 0.03% of itself at 1/64 and less inward (the variance sets the spread of
    the redraws, whose Monte Carlo error at 200 redraws is ~5%).
    """
    c = (bucket + 0.5) / FINE_BUCKETS
    u1 = swp - c * sw
    u2 = swpp - 2.0 * c * swp + c * c * sw
    logit = np.log(c) - np.log1p(-c)
    entropy = -(c * np.log(c) + (1.0 - c) * np.log1p(-c)) * sw - logit * u1 - 0.5 / (c * (1.0 - c)) * u2
    spread = logit * logit * swwv
    tail = (bucket < LOSS_LOW) | (bucket >= LOSS_HIGH)
    if tail.any():
        tails = scan._entropy_tails()
        at = pd.Index(tails["_b"].to_numpy(np.int64)).get_indexer(bucket[tail])
        if (at < 0).any():
            raise RuntimeError("calibviz bug: the log-loss reference's pass missed a tail bucket; please report it.")
        entropy[tail] = tails["sh"].to_numpy(np.float64)[at]
        spread[tail] = tails["sv"].to_numpy(np.float64)[at]
    return entropy, spread


def _bucket_sums(scan) -> dict:
    """Per fine bucket (refined atoms pooled, labels pooled): ``bucket``, ``size`` (rows), ``weight``, ``swp``,
    ``swpp``, ``sww``, ``variance`` (sum w^2 p (1 - p)) and ``mean`` (weighted mean score): what the bucket
    redraws read (:func:`bucket_nulls`)."""
    atoms = scan._atoms()
    bucket, group = np.unique(atoms.bucket, return_inverse=True)
    size, weight, swp, swpp, sww, variance = (np.bincount(group, weights=v) for v in
                                              (atoms.n, atoms.sw, atoms.swp, atoms.swpp, atoms.sww, atoms.swwv))
    return {"bucket": bucket, "size": np.rint(size).astype(np.int64), "weight": weight, "swp": swp, "swpp": swpp,
            "sww": sww, "variance": variance, "mean": np.clip(swp / weight, 0.0, 1.0)}


def _log_loss_expectation(scan) -> float:
    """The log loss's expectation under calibration, ``sum w H(p) / sum w`` (:func:`_log_loss_terms`): the centre
    of its two-sided reference (:func:`calibviz.metrics.calibrated_expectation` in memory)."""
    g = _bucket_sums(scan)
    entropy, _ = _log_loss_terms(scan, g["bucket"], g["weight"], g["swp"], g["swpp"], g["variance"])
    return float(entropy.sum() / g["weight"].sum())


def _brier_expectation(scan) -> float:
    """The Brier score's expectation under calibration, ``sum w p (1 - p) / sum w``, from the buckets' sums: the
    centre of its two-sided reference (:func:`calibviz.metrics.calibrated_expectation` in memory)."""
    atoms = scan._atoms()
    return float((atoms.swp.sum() - atoms.swpp.sum()) / atoms.sw.sum())


#: Metrics whose reference redraws the positives of every fine bucket (:func:`bucket_nulls`).
BUCKET_KEYS = ("smooth_ece", "brier", "log_loss")


def _bucket_null(scan, key: str, n_resamples: int, random_state) -> np.ndarray:
    """:func:`bucket_nulls` of one metric."""
    return bucket_nulls(scan, [key], n_resamples, random_state)[key]


def bucket_nulls(scan, keys, n_resamples: int, random_state) -> dict:
    """smECE, the Brier score and/or the log loss (``keys``, of :data:`BUCKET_KEYS`) of ``n_resamples`` label
    redraws y* ~ Bernoulli(p) from a binary scan's fine buckets: ``{key: values}``.

    Per 2^-16 bucket the redrawn weight of positives is drawn as the binned
    metrics draw it (Binomial(n, mean score); weighted: :func:`positive_weight`,
    exact mean and variance), so ``sum w (y* - p)`` follows exactly, and
    ``sum w y* p`` takes the positives at the bucket's weighted mean score
    (each row at most 2^-16 from its own score). smECE: the residual sits
    there, a quarter of a step of its 2^14 grid, whose kernel is at least 8
    steps wide, and each redraw solves its own fixed point, as the value does
    (:meth:`Scan.smooth_ece`) and as the in-memory reference recomputes smECE
    on every redrawn row set (~8 ms per redraw). Brier: ``(sum w y* (1 - 2 p)
    + sum w p^2) / sum w``. Log loss: its expectation under "calibrated" minus ``sum w (y* - p) logit(p) / sum
    w``, each bucket's drawn deviation of the positives' weight scaled to that sum's per-row variance there
    (:func:`_log_loss_terms`; the tail buckets' terms take one filtered pass over the rows, once).

    The keys share one draw (the binomial draws of 2^16 buckets are most of the time: ~1 s per 200 redraws).
    With a seed, the values are kept on the scan, so a panel asking for the three (:meth:`Scan.metrics`
    fetches them together) draws once what each would draw alone with that seed: the same values.
    """
    from ..metrics.smooth import _GRID_SIZES, _masses_from_nodes, _solve_fixed_point

    seeded = is_seed(random_state)
    tag = (n_resamples, random_state if seeded else None)
    cache = scan._reference_draws
    todo = [key for key in dict.fromkeys(keys) if not (seeded and ("bucket", key, tag) in cache)]
    out = {}
    if todo:
        k = _GRID_SIZES[0]
        g = _bucket_sums(scan)
        bucket, size, weight, swp, swpp, sww, variance, mean = (g[c] for c in ("bucket", "size", "weight", "swp",
                                                                               "swpp", "sww", "variance", "mean"))
        total = float(weight.sum())
        rng = np.random.default_rng(list(random_state) if isinstance(random_state, tuple) else random_state)
        values = {key: [] for key in todo}
        if "log_loss" in values:
            entropy, spread = _log_loss_terms(scan, bucket, weight, swp, swpp, variance)
            drawn = _drawn_variance(size, weight, sww, variance, mean)
            # each bucket's drawn deviation of the positives' weight, scaled to the per-row variance of sum w (y* -
            # p) logit(p) there, with logit's sign (negative below 1/2): mean and variance exact per bucket
            scale = np.sqrt(np.divide(spread, drawn, out=np.zeros_like(drawn), where=drawn > 0))
            scale[bucket < FINE_BUCKETS // 2] *= -1.0
            centre = float(entropy.sum() / total)
        for _, t in _positive_draws(size, weight, sww, variance, mean, n_resamples, rng):
            if "log_loss" in values:
                values["log_loss"] += list(centre - ((t - weight * mean) @ scale) / total)
            if "brier" in values:
                values["brier"] += list((t @ (1.0 - 2.0 * mean) + swpp.sum()) / total)
            if "smooth_ece" in values:
                for positives in t:
                    nodes = _ref.residual_nodes(bucket, positives - swp, positives * mean - swpp, k)
                    values["smooth_ece"].append(
                        _solve_fixed_point(lambda kk: _masses_from_nodes(kk, nodes, total), sizes=(k,))[1])
        for key, v in values.items():
            out[key] = np.asarray(v, dtype=np.float64)
            if seeded:
                cache[("bucket", key, tag)] = out[key]
    return {key: out[key] if key in out else cache[("bucket", key, tag)] for key in keys}


def _redrawn_atoms(bucket, value, cell, lo, hi, ranged, size, mean, positives, weight=None, positive_weight=None):
    """(atoms, score of each) of one label redraw: every group (a whole bucket, a cell or one exact score) split into
    its redrawn negatives and positives, at the group's mean score; with weights, the positives weigh
    ``positive_weight`` and the negatives the rest of the group's ``weight`` (sums of squared weights are not
    redrawn: no TCE reduction reads them)."""
    neg = size - positives
    if not np.any((neg > 0) & (positives > 0)):
        # no group holds both labels (every group of a small view of distinct scores): one atom per group, in
        # place (2x10^6 gathers of 13 fields avoided: 43 -> ~5 ms per redraw at 10^6 rows)
        y, n = (positives > 0).astype(np.int64), size
        sw = None if positive_weight is None else np.where(y == 1, positive_weight, weight - positive_weight)

        def take(a):
            return a
    else:
        both = np.column_stack([neg, positives]).ravel()
        keep = both > 0
        rep = np.repeat(np.arange(size.shape[0]), 2)[keep]
        y = np.tile(np.array([0, 1], np.int64), size.shape[0])[keep]
        n = both[keep].astype(np.int64)
        sw = None if positive_weight is None else np.column_stack([weight - positive_weight,
                                                                   positive_weight]).ravel()[keep]

        def take(a):
            return a[rep]
    if sw is None:
        sw = n.astype(np.float64)
    q = take(mean)
    zeros = np.zeros(n.shape[0])
    atoms = _ref.Atoms(bucket=take(bucket), value=take(value), cell=take(cell), y=y, n=n, sw=sw, swp=sw * q,
                       swpp=sw * q * q, sww=sw, swwv=zeros, sll=zeros, lo=take(lo), hi=take(hi),
                       ranged=take(ranged))
    return atoms, q  # q: the group's score, the same float for both labels (swp / sw can differ by an ulp)


def _redrawn_positives(size: np.ndarray, mean: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Positives ~ Binomial(size, mean) of every group: a group of one row by one uniform (u < mean, as the
    in-memory reference redraws a row), the others by numpy's binomial (10^6 groups of one row: 7 ms against
    80 ms for binomial draws)."""
    single = size == 1
    if single.all():
        return (rng.random(size.shape[0]) < mean).astype(np.int64)
    k = np.empty(size.shape[0], np.int64)
    k[single] = rng.random(int(single.sum())) < mean[single]
    k[~single] = rng.binomial(size[~single], drawn_probability(mean[~single]))  # order-free (see there)
    return k


def _tce_null(scan, scheme, alpha: float, test: str, n_resamples: int, rng,
              progress=None) -> tuple[float, np.ndarray]:
    """TCE of the scan and TCE under ``n_resamples`` label redraws y* ~ Binomial(group size, group mean).

    PAVA-BC's bins depend on the labels, so each redraw refits them (:func:`calibviz.scan.refine.pavabc_bins`
    on the redrawn atoms, as the in-memory reference refits them on redrawn rows) and tests every group at its
    mean score: exact for a group of one score; for a group of several scores (a 2^-16 bucket or a cell of a
    full one, views of more than :data:`calibviz.scan.refine.EXACT_BLOCK_ROWS` rows) the decision of its rows
    is taken at their mean, as their labels are (the in-memory reference tests each row). There, ~0.025-0.05 s
    per redraw at 1-2x10^5 groups (PAVA-BC by runs, the binomial tests of a batch of redraws in one call),
    whatever the rows; on a smaller view every group is one score and a redraw costs what the in-memory one
    does.
    """
    exact = scan._exact_blocks
    scan._ensure_ranges()  # a group of one score is tested at that score
    statistic = float(scan.tce(scheme, alpha, test))
    atoms = scan._atoms_for([scheme])
    starts, size = _ref._groups(atoms)
    lo, hi = np.minimum.reduceat(atoms.lo, starts), np.maximum.reduceat(atoms.hi, starts)
    ranged = np.logical_and.reduceat(atoms.ranged, starts)
    weight = np.add.reduceat(atoms.sw, starts)
    mean = np.where(lo == hi, lo, np.clip(np.add.reduceat(atoms.swp, starts) / weight, 0.0, 1.0))
    bucket, value, cell = atoms.bucket[starts], atoms.value[starts], atoms.cell[starts]
    weighted = scan._roles.weight is not None
    sww = np.add.reduceat(atoms.sww, starts)
    del atoms  # the groups are all a redraw reads (a small view's atoms are ~100 bytes per row)
    null = np.full(int(n_resamples), np.nan)

    def redrawn(m):  # m redraws' atom tables, one at a time (each is released once its bins are fitted)
        for _ in range(m):
            k = _redrawn_positives(size, mean, rng)
            positive_weight = weighted_positives(k, size, weight, sww, rng) if weighted else None
            yield _redrawn_atoms(bucket, value, cell, lo, hi, ranged, size, mean, k, weight, positive_weight)

    # redraws tested in batches of ~2^20 groups: one binomial decision call each (rejections_many), ~30 bytes
    # per group kept until it
    batch = max(1, (1 << 20) // max(size.shape[0], 1))
    for r0 in range(0, int(n_resamples), batch):
        m = min(batch, int(n_resamples) - r0)
        null[r0:r0 + m] = _ref.redrawn_tces(redrawn(m), scheme, alpha=alpha, test=test, weighted=weighted,
                                            exact=exact)
        if progress is not None:
            progress(r0 + m)
    return statistic, null
