"""Binned calibration metrics, all computed from per-bin sufficient statistics.

Each function validates its inputs once, fits the binning scheme, aggregates
:class:`calibviz.summary.BinStatistics` with ``np.bincount`` and reduces them
(DESIGN.md §2). Empty bins are skipped in every sum.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..binning import EqualMass, PAVABC, Uniform, get_scheme
from ..errors import InputError
from ..stats import _check_alpha
from ..summary import _PANEL_MIN, _fit_and_sum, _panel_statistics, _stats_only, rejections, rejections_many
from ..validation import check_binary
from .._lazy import lazy

chi2 = lazy("scipy.stats", "chi2")

__all__ = [
    "ece",
    "mce",
    "ace",
    "debiased_ece",
    "tce",
    "tce_many",
    "BrierDecomposition",
    "brier_decomposition",
    "binned_metrics",
    "HosmerLemeshowResult",
    "hosmer_lemeshow",
]

_NORMS = ("l1", "l2", "max")


def _binned(y_true, y_prob, sample_weight, binning, second_moments=False):
    y, p, w = check_binary(y_true, y_prob, sample_weight)
    bins, s = _fit_and_sum(y, p, w, binning, second_moments)
    return y, p, w, bins, s


def _stats(y_true, y_prob, sample_weight, binning, second_moments=False):
    """Validated per-bin sums for metrics that need no per-row bins."""
    y, p, w = check_binary(y_true, y_prob, sample_weight)
    return _stats_only(y, p, w, binning, second_moments)


def _norm_of_gaps(s, norm: str) -> float:
    """Weighted L1 / root-mean-square / max of |obs_rate - mean_pred| over non-empty bins."""
    if norm not in _NORMS:
        raise InputError(f"norm must be one of {', '.join(_NORMS)}, got {norm!r}.")
    keep = s.nonempty
    gap = np.abs(s.sum_true[keep] - s.sum_pred[keep]) / s.weight[keep]
    frac = s.weight[keep] / s.weight[keep].sum()
    if norm == "l1":
        return float(np.sum(frac * gap))
    if norm == "l2":
        return float(np.sqrt(np.sum(frac * gap * gap)))
    return float(gap.max())


def ece(y_true, y_prob, *, binning=Uniform(15), norm="l1", sample_weight=None) -> float:
    """Expected calibration error over bins.

    ``ECE = sum_b (W_b / W) |obs_rate_b - mean_pred_b|`` over non-empty bins,
    with W_b the bin's total weight (its size without weights).

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Labels in {0, 1}.
    y_prob : array-like of shape (n,)
        Predicted probabilities of class 1.
    binning : Scheme, str or edges, default Uniform(15)
        Any scheme of :mod:`calibviz.binning` or a name for
        :func:`calibviz.binning.get_scheme`.
    norm : {"l1", "l2", "max"}
        "l1": weighted mean absolute gap (ECE); "l2": root of the weighted
        mean squared gap (RMSCE); "max": largest gap over non-empty bins (MCE).
    sample_weight : array-like of shape (n,), optional

    Returns
    -------
    float in [0, 1]

    References
    ----------
    Naeini, Cooper & Hauskrecht (2015), AAAI, ECE and MCE; Guo et al. (2017),
    ICML, eq. (3); Matsubara et al. (2023), TCE paper, eq. (4) and Example 1.

    Examples
    --------
    >>> round(ece([0, 1, 1, 1], [0.2, 0.6, 0.7, 0.9], binning=Uniform(2)), 4)
    0.25
    """
    s = _stats(y_true, y_prob, sample_weight, binning)
    return _norm_of_gaps(s, norm)


def mce(y_true, y_prob, *, binning=Uniform(15), sample_weight=None) -> float:
    """Maximum calibration error: ``ece(..., norm="max")``.

    The largest |obs_rate - mean_pred| over non-empty bins (unweighted max).

    Parameters
    ----------
    y_true, y_prob : array-like of shape (n,)
    binning : Scheme, str or edges, default Uniform(15)
    sample_weight : array-like of shape (n,), optional

    Returns
    -------
    float in [0, 1]

    References
    ----------
    Naeini, Cooper & Hauskrecht (2015), AAAI (MCE).

    Examples
    --------
    >>> round(mce([0, 1, 1, 1], [0.2, 0.6, 0.7, 0.9], binning=Uniform(2)), 4)
    0.2667
    """
    return ece(y_true, y_prob, binning=binning, norm="max", sample_weight=sample_weight)


def ace(y_true, y_prob, *, n_bins=15, norm="l1", sample_weight=None) -> float:
    """Adaptive calibration error: ECE on equal-mass (quantile) bins.

    Parameters
    ----------
    y_true, y_prob : array-like of shape (n,)
    n_bins : int, default 15
    norm : {"l1", "l2", "max"}
        "max" gives MCE(Q) of the TCE paper.
    sample_weight : array-like of shape (n,), optional

    Returns
    -------
    float in [0, 1]

    References
    ----------
    Nixon et al. (2019), "Measuring calibration in deep learning", CVPR-W;
    Matsubara et al. (2023), TCE paper, Section 4 (ACE, MCE(Q)).

    Examples
    --------
    >>> round(ace([0, 1, 1, 1], [0.2, 0.6, 0.7, 0.9], n_bins=2), 4)
    0.15
    """
    return ece(y_true, y_prob, binning=EqualMass(n_bins), norm=norm, sample_weight=sample_weight)


def debiased_ece(y_true, y_prob, *, binning=EqualMass(15), sample_weight=None, squared=False) -> float:
    """Debiased estimate of the L2 calibration error (Kumar, Liang & Ma 2019).

    The plug-in squared error ``sum_b (W_b/W)(obs_rate_b - mean_pred_b)^2``
    overestimates the true squared L2 error because each obs_rate_b is
    noisy; the debiased estimator subtracts the estimated variance of each
    bin's rate: ``sum_b (W_b/W) [(obs_rate_b - mean_pred_b)^2 -
    obs_rate_b (1 - obs_rate_b) / (n_b - 1)]``.

    Parameters
    ----------
    y_true, y_prob : array-like of shape (n,)
    binning : Scheme, str or edges, default EqualMass(15)
        The paper uses uniform-mass bins.
    sample_weight : array-like of shape (n,), optional
        With weights, n_b is Kish's effective sample size.
    squared : bool, default False
        False: return ``sqrt(max(estimate, 0))``, the debiased L2 error on the
        scale of ``ece(norm="l2")`` (as the authors' library reports it).
        True: return the debiased estimate of the squared error itself,
        which can be negative.

    Returns
    -------
    float

    Notes
    -----
    Bins with an effective size below 2 get no correction (the variance
    estimate needs two samples).

    References
    ----------
    Kumar, Liang & Ma (2019), "Verified uncertainty calibration", NeurIPS,
    Section 5 (debiased estimator of the squared calibration error).

    Examples
    --------
    >>> y = [0, 1] * 50; p = [0.5] * 100
    >>> debiased_ece(y, p, binning=Uniform(1))
    0.0
    """
    s = _stats(y_true, y_prob, sample_weight, binning, second_moments=True)
    return _debiased_from_stats(s, squared)


def _debiased_from_stats(s, squared: bool = False) -> float:
    """Kumar, Liang & Ma's debiased L2 error from per-bin sums with second moments."""
    keep = s.nonempty
    rate = s.sum_true[keep] / s.weight[keep]
    gap2 = (rate - s.sum_pred[keep] / s.weight[keep]) ** 2
    n_eff = s.effective_n[keep]
    with np.errstate(divide="ignore", invalid="ignore"):
        corr = np.where(n_eff >= 2, rate * (1 - rate) / (n_eff - 1), 0.0)
    frac = s.weight[keep] / s.weight[keep].sum()
    est = float(np.sum(frac * (gap2 - corr)))
    return est if squared else float(np.sqrt(max(est, 0.0)))


def tce(y_true, y_prob, *, binning=PAVABC(), alpha=0.05, test="binomial", sample_weight=None) -> float:
    """Test-based calibration error, in percent.

    Each prediction p_i in bin b is tested against the bin's labels (k_b
    positives of n_b); TCE = 100 * (share of rejected predictions).

    Parameters
    ----------
    y_true, y_prob : array-like of shape (n,)
    binning : Scheme, str or edges, default PAVABC()
        PAVA-BC with N//20, N//5 (the paper's default). "quantile" bins give
        TCE(Q), PAVA() gives TCE(V).
    alpha : float, default 0.05
        Reject iff the p-value <= alpha.
    test : {"binomial", "ttest"}
        "binomial": exact two-sided binomial test with scipy's
        minimum-likelihood p-value (decisions identical to
        ``scipy.stats.binomtest``); "ttest": t-test with sd sqrt(mu(1-mu))
        (the reference code uses the variance; a bug, not reproduced).
    sample_weight : array-like of shape (n,), optional
        Our extension: TCE becomes the weighted share of rejected
        predictions; the tests still use the unweighted (k_b, n_b). Weights
        of single observations (sampling weights), not counts of identical
        rows: a log collapsed to (score, label, count) holds about one row
        of each label per score, so every bin's rate reads about 1/2 and the
        calibrated-model reference (one label draw per row) flagged 82-85% of
        such calibrated logs; expand counts into rows for TCE.

    Returns
    -------
    float in [0, 100]

    References
    ----------
    Matsubara, Tax, Mudd & Guy (2023), "TCE: A test-based approach to
    measuring calibration error", UAI, Definition 2, eq. (7), Algorithm 1.

    Examples
    --------
    >>> tce([0, 1] * 10, [0.5] * 20, binning=Uniform(1))
    0.0
    >>> tce([0] * 20, [0.9] * 20, binning=Uniform(1))
    100.0
    """
    _check_alpha(alpha)
    y, p, w, bins, s = _binned(y_true, y_prob, sample_weight, binning)
    return _rejected_percent(rejections(p, bins, s, alpha=alpha, test=test), w)


def _rejected_percent(rej, w) -> float:
    if w is None:
        return 100.0 * float(np.count_nonzero(rej)) / rej.shape[0]
    return 100.0 * float(np.sum(w[rej])) / float(np.sum(w))


#: Predictions tested in one call of :func:`tce_many` (~0.2 GB of temporaries at most): beyond a million the
#: fixed cost of a call is long amortised.
_TCE_BATCH_ROWS = 1 << 21


def tce_many(samples, *, binning=PAVABC(), alpha=0.05, test="binomial", strict: bool = False) -> np.ndarray:
    """:func:`tce` of many samples (bootstrap resamples, label redraws), tested together.

    Parameters
    ----------
    samples : iterable of (y_true, y_prob, sample_weight or None)
    binning, alpha, test
        As in :func:`tce`.
    strict : bool, default False
        Raise :func:`tce`'s :class:`~calibviz.InputError` for a sample it
        refuses, instead of giving it NaN.

    Returns
    -------
    ndarray of float, shape (len(samples),)
        ``tce(y, p, ..., sample_weight=w)`` of each sample, identical to
        calling it; NaN for a sample that :func:`tce` refuses with
        :class:`~calibviz.InputError` (a degenerate resample: what the
        bootstrap's per-call path counts as failed), unless ``strict``.

    Notes
    -----
    Each sample's bins are fitted on their own (PAVA-BC refits per sample);
    the binomial decisions of up to ``2^21`` predictions are taken in one
    call (:func:`calibviz.summary.rejections_many`), whose fixed cost
    otherwise dominates TCE on tens of thousands of rows: a calibrated-model
    reference of 200 redraws of 20,000 rows takes 0.8 s instead of 2.3 s.

    References
    ----------
    Matsubara, Tax, Mudd & Guy (2023), "TCE: A test-based approach to
    measuring calibration error", UAI, Definition 2, eq. (7).

    Examples
    --------
    >>> y, p = [0, 1] * 10, [0.5] * 20
    >>> tce_many([(y, p, None), ([0] * 20, [0.9] * 20, None)], binning=Uniform(1)).tolist()
    [0.0, 100.0]
    """
    _check_alpha(alpha)
    get_scheme(binning)  # a bad argument is the caller's error, not a failed sample
    values, parts, weights, where, rows = [], [], [], [], 0

    def flush():
        for i, rej, w in zip(where, rejections_many(parts, alpha=alpha, test=test), weights):
            values[i] = _rejected_percent(rej, w)
        parts.clear(), weights.clear(), where.clear()

    for i, (y_true, y_prob, sample_weight) in enumerate(samples):
        values.append(math.nan)
        try:
            _, p, w, bins, s = _binned(y_true, y_prob, sample_weight, binning)
        except InputError:
            if strict:
                raise
            continue
        parts.append((p, bins, s))
        weights.append(w)
        where.append(i)
        rows += p.shape[0]
        if rows >= _TCE_BATCH_ROWS:
            flush()
            rows = 0
    flush()
    return np.array(values, dtype=np.float64)


tce.many = tce_many  # the batched form that the bootstrap and consistency_test use (resampling._values)


@dataclass(frozen=True)
class BrierDecomposition:
    """Murphy's decomposition of the Brier score over bins.

    ``brier == reliability - resolution + uncertainty + within_bin_variance
    - 2 * within_bin_covariance`` holds exactly. The classical three-term
    identity ``brier = REL - RES + UNC`` holds only when predictions are
    constant within bins (then both within-bin terms vanish).

    Attributes
    ----------
    brier : mean (weighted) squared error (p - y)^2.
    reliability : sum_b (W_b/W)(mean_pred_b - obs_rate_b)^2 (lower is better).
    resolution : sum_b (W_b/W)(obs_rate_b - obs_rate)^2 (higher is better).
    uncertainty : obs_rate (1 - obs_rate).
    within_bin_variance : (1/W) sum_b sum_i w_i (p_i - mean_pred_b)^2.
    within_bin_covariance : (1/W) sum_b sum_i w_i (p_i - mean_pred_b)(y_i - obs_rate_b).
    """

    brier: float
    reliability: float
    resolution: float
    uncertainty: float
    within_bin_variance: float
    within_bin_covariance: float


def brier_decomposition(y_true, y_prob, *, binning=Uniform(15), sample_weight=None) -> BrierDecomposition:
    """Murphy decomposition of the Brier score into reliability, resolution, uncertainty.

    Parameters
    ----------
    y_true, y_prob : array-like of shape (n,)
    binning : Scheme, str or edges, default Uniform(15)
    sample_weight : array-like of shape (n,), optional

    Returns
    -------
    BrierDecomposition
        With the two within-bin terms that make the identity exact when
        predictions vary within a bin (Stephenson, Coelho & Jolliffe 2008).

    References
    ----------
    Murphy (1973), "A new vector partition of the probability score", J.
    Appl. Meteor.; Stephenson, Coelho & Jolliffe (2008), "Two extra
    components in the Brier score decomposition", Weather and Forecasting.

    Examples
    --------
    >>> d = brier_decomposition([0, 1, 1, 0], [0.2, 0.8, 0.8, 0.2], binning=Uniform(2))
    >>> round(d.brier, 4), round(d.reliability, 4), round(d.resolution, 4), round(d.uncertainty, 4)
    (0.04, 0.04, 0.25, 0.25)
    """
    s = _stats(y_true, y_prob, sample_weight, binning, second_moments=True)
    return _decomposition(s)


def _decomposition(s) -> BrierDecomposition:
    """Murphy decomposition from per-bin sums with second moments."""
    keep = s.nonempty
    W = s.weight[keep].sum()
    wb = s.weight[keep]
    sp, sy = s.sum_pred[keep], s.sum_true[keep]
    mp, oy = sp / wb, sy / wb
    base = sy.sum() / W
    rel = float(np.sum(wb * (mp - oy) ** 2) / W)
    res = float(np.sum(wb * (oy - base) ** 2) / W)
    unc = float(base * (1 - base))
    wbv = float(np.sum(s.sum_pred_sq[keep] - sp * mp) / W)
    wbc = float(np.sum(s.sum_pred_true[keep] - mp * sy) / W)
    # sum w (p - y)^2 = sum w p^2 - 2 sum w p y + sum w y  (y^2 = y)
    brier = float((s.sum_pred_sq[keep].sum() - 2 * s.sum_pred_true[keep].sum() + sy.sum()) / W)
    return BrierDecomposition(brier, rel, res, unc, max(wbv, 0.0), wbc)


_PANEL = {  # name -> (statistics: "binning" or "equal_mass", reduction of the BinStatistics)
    "ece": ("binning", lambda s: _norm_of_gaps(s, "l1")),
    "rmsce": ("binning", lambda s: _norm_of_gaps(s, "l2")),
    "mce": ("binning", lambda s: _norm_of_gaps(s, "max")),
    "ace": ("equal_mass", lambda s: _norm_of_gaps(s, "l1")),
    "mce_q": ("equal_mass", lambda s: _norm_of_gaps(s, "max")),
    "brier": ("binning", lambda s: _decomposition(s).brier),
    "reliability": ("binning", lambda s: _decomposition(s).reliability),
    "resolution": ("binning", lambda s: _decomposition(s).resolution),
    "uncertainty": ("binning", lambda s: _decomposition(s).uncertainty),
}


def binned_metrics(
    y_true, y_prob, *, metrics=("ece", "ace", "mce", "brier"), binning=Uniform(15), n_bins=15, sample_weight=None
) -> dict:
    """Several binned metrics from one validation and at most two binning passes.

    The same numbers as the individual functions (same reductions of the
    same per-bin sums), without re-validating the input and re-binning it
    for every metric. From 2**18 rows with Uniform bins, both schemes' sums
    come from one pass over the rows (a fine histogram of the scores, see
    ``calibviz.summary._panel_statistics``): equal to the individual
    functions up to float rounding of the sums (~1e-12 relative).

    Parameters
    ----------
    y_true, y_prob : array-like of shape (n,)
        Labels in {0, 1} and predicted probabilities of class 1.
    metrics : sequence of str
        Any of "ece", "rmsce" (= ``ece(norm="l2")``), "mce" (on ``binning``),
        "ace", "mce_q" (= ``ace(norm="max")``, on EqualMass(``n_bins``)),
        "brier", "reliability", "resolution", "uncertainty" (Murphy terms on
        ``binning``).
    binning : Scheme, str or edges, default Uniform(15)
        Bins of ece / rmsce / mce and of the Brier decomposition.
    n_bins : int, default 15
        Number of equal-mass bins of ace / mce_q.
    sample_weight : array-like of shape (n,), optional

    Returns
    -------
    dict
        ``{name: float}`` in the order of ``metrics``.

    References
    ----------
    Naeini et al. (2015), AAAI (ECE, MCE); Nixon et al. (2019), CVPR-W (ACE);
    Murphy (1973) (Brier decomposition); Matsubara et al. (2023), TCE paper,
    Section 4 (MCE(Q)).

    Examples
    --------
    >>> out = binned_metrics([0, 1, 1, 1], [0.2, 0.6, 0.7, 0.9], binning=Uniform(2), n_bins=2)
    >>> {k: round(v, 4) for k, v in out.items()}
    {'ece': 0.25, 'ace': 0.15, 'mce': 0.2667, 'brier': 0.075}
    """
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    unknown = [m for m in names if m not in _PANEL]
    if unknown:
        raise InputError(f"unknown metric(s) {unknown}; choose from {', '.join(_PANEL)}.")
    y, p, w = check_binary(y_true, y_prob, sample_weight)
    kinds = {_PANEL[m][0] for m in names}
    moments = any(m in ("brier", "reliability", "resolution", "uncertainty") for m in names)
    scheme = get_scheme(binning)
    EqualMass(n_bins)  # validates n_bins
    both = None
    if type(scheme) is Uniform and p.shape[0] >= _PANEL_MIN:
        # one pass over the rows for both schemes (a fine histogram of the scores)
        both = _panel_statistics(y, p, w, scheme.n_bins, n_bins if "equal_mass" in kinds else None, moments)
    stats = {}
    if both is not None:
        stats["binning"], stats["equal_mass"] = both
    else:
        if "binning" in kinds:
            stats["binning"] = _stats_only(y, p, w, scheme, moments)
        if "equal_mass" in kinds:
            stats["equal_mass"] = _stats_only(y, p, w, EqualMass(n_bins), False)
    return {m: _PANEL[m][1](stats[_PANEL[m][0]]) for m in names}


@dataclass(frozen=True)
class HosmerLemeshowResult:
    """The Hosmer-Lemeshow test; unpacks as ``(statistic, p_value)``.

    Attributes
    ----------
    statistic : float
        H (``inf`` when a group of predictions all 0 or all 1 holds outcomes
        that contradict them).
    p_value : float
        ``chi2.sf(H, dof)``.
    dof : int
        Degrees of freedom: G (groups with a non-zero null variance), or G - 2
        with ``fitted=True``.
    n_groups : int
        Non-empty groups (ties may leave fewer than asked for).
    note : str
        Why the statistic is infinite, groups were left out or the p-value
        comes from label redraws; "" otherwise.
    min_expected : float
        The smallest expected number of events or of non-events in a group
        (in effective rows with weights, Kish's n_g = (sum w)^2 / sum w^2):
        the chi-square reference needs these to be large; with rare events
        (below :data:`HL_MIN_EXPECTED`) it rejects calibrated models too often
        (13-14% at 5% with about 0.2 expected events per group, 9-10% with
        scores Beta(0.5, 20) at n = 300-2,000: size simulations).
    chi2_p_value : float
        The chi-square reference's p-value (``p_value`` itself unless the
        label redraws gave it).
    n_redraws : int
        The label redraws behind ``p_value`` (0: the chi-square reference).
    """

    statistic: float
    p_value: float
    dof: int = 0
    n_groups: int = 0
    note: str = ""
    min_expected: float = math.inf
    chi2_p_value: float = math.nan
    n_redraws: int = 0

    def __iter__(self):
        return iter((self.statistic, self.p_value))

    @property
    def chi2_reliable(self) -> bool:
        """Whether every group expects at least :data:`HL_MIN_EXPECTED` events and non-events, where the
        chi-square reference holds its size."""
        return self.min_expected >= HL_MIN_EXPECTED


#: Hosmer-Lemeshow's chi-square reference decides when every group expects at least this many events and
#: non-events (effective rows); below, label redraws do. A size simulation of calibrated logs (2,000-3,000 per
#: case): 13-14% at 5% with ~0.2 expected events per group, 7.8% with ~1, 6.2% with ~5; 4.8-5.0% with many.
HL_MIN_EXPECTED = 10.0


def hosmer_lemeshow(y_true, y_prob, *, n_groups=10, fitted=False, sample_weight=None, reference="auto",
                    n_redraws: int = 999, random_state=0) -> HosmerLemeshowResult:
    """Hosmer-Lemeshow goodness-of-fit test on groups of predicted risk.

    Predictions are split into ``n_groups`` equal-count groups (EqualMass;
    tied predictions always share a group, so heavy ties can leave fewer
    groups); ``H = sum_g (O_g - E_g)^2 / (E_g (1 - E_g / n_g))`` with O_g the
    observed and E_g the expected (sum of predictions) positives of group g.
    With weights, O_g = sum w y, E_g = sum w p, and the denominator is
    ``max(sum w^2 * pbar_g (1 - pbar_g), sum w^2 p (1 - p))`` with
    ``pbar_g = E_g / sum w``: each row is one observation carrying its weight
    (sampling or importance weights), so O_g varies as sum w^2 p (1 - p)
    under calibration; unit weights give the formula above exactly, and the
    statistic does not change when all weights are scaled. (Reading a weight
    as a count of identical rows, ``E_g (1 - E_g / n_g)`` with weighted sums,
    flagged 52% of calibrated models with log-normal(0, 0.7) weights at the 5%
    level; tests/test_honest_numbers.py checks the size with weights.)

    The reference distribution depends on where the predictions come from.
    calibviz scores *fixed* predictions, usually on held-out data (external
    validation): H is then approximately chi-squared with G degrees of freedom
    (the default). For a logistic model fitted on the same rows, two degrees
    of freedom are spent on the fit: ``fitted=True`` uses G - 2. A simulation
    of calibrated models (y ~ Bernoulli(p), p ~ Beta(2, 5)) rejects 5.1% at
    n = 500 and 5.0% at n = 5000 with G, and 9.9% / 11.2% with G - 2
    (tests/test_honest_numbers.py checks the size).

    Parameters
    ----------
    y_true, y_prob : array-like of shape (n,)
    n_groups : int, default 10
        G; at least 3.
    fitted : bool, default False
        True for in-sample predictions of a fitted logistic model (G - 2
        degrees of freedom).
    sample_weight : array-like of shape (n,), optional
        Non-negative weights of the rows (see above); weights of counts of
        identical rows make the test conservative.
    reference : {"auto", "chi2", "redraws"}, default "auto"
        The p-value's reference. "chi2": chi-square with the degrees of
        freedom above. "redraws": the statistic against ``n_redraws`` label
        redraws ``y* ~ Bernoulli(p)`` from the predictions
        (:func:`calibviz.metrics.consistency_test`; exact for any n, p-value
        ``(1 + #{H* >= H}) / (1 + n_redraws)``). "auto": the chi-square
        unless a group expects fewer than :data:`HL_MIN_EXPECTED` events or
        non-events, where it rejects calibrated models too often (9-10% at
        5% with scores Beta(0.5, 20), a review's simulation of 1,000 logs);
        ``note`` then says so and ``chi2_p_value`` keeps the chi-square's.
        Fixed predictions only: with ``fitted=True`` "auto" keeps the
        chi-square (redraws from a model fitted on these labels would need a
        refit per redraw) and the note warns of the few expected events.
    n_redraws : int, default 999
        Label redraws of the "redraws" reference.
    random_state : None, int or numpy.random.Generator, default 0
        Seed of the redraws (the same data and seed give the same p-value).

    Returns
    -------
    HosmerLemeshowResult
        Unpacks as ``(statistic, p_value)``. A group whose predictions are all
        0 (or all 1) has no variance under calibration: it adds nothing and no
        degree of freedom when it holds no events (no non-events), and makes
        H infinite (p-value 0) when it does, since a calibrated model cannot
        produce an event at probability 0; ``note`` says which case occurred.

    References
    ----------
    Hosmer & Lemeshow (1980), "Goodness of fit tests for the multiple
    logistic regression model", Comm. Statist. Theory Methods 9(10);
    Hosmer, Lemeshow & Sturdivant (2013), Applied Logistic Regression, 3rd ed.,
    Section 5.2.2 and 5.3 (G degrees of freedom in external validation).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0); p = rng.uniform(0.1, 0.9, 2000)
    >>> y = (rng.uniform(size=2000) < p).astype(int)
    >>> res = hosmer_lemeshow(y, p)
    >>> res.dof, bool(res.p_value > 0.01)
    (10, True)
    >>> hosmer_lemeshow([1, 0, 0, 1], [0.0, 0.0, 0.5, 0.5], n_groups=3).statistic
    inf
    """
    if isinstance(n_groups, bool) or not isinstance(n_groups, (int, np.integer)) or n_groups < 3:
        raise InputError(f"n_groups must be an integer >= 3, got {n_groups!r}.")
    if reference not in ("auto", "chi2", "redraws"):
        raise InputError(f"reference must be 'auto', 'chi2' or 'redraws', got {reference!r}.")
    if reference == "redraws" and fitted:
        raise InputError("reference='redraws' tests fixed predictions: with fitted=True the model would have to be "
                         "refitted on every redraw; use reference='chi2' (or 'auto').")
    s = _stats(y_true, y_prob, sample_weight, EqualMass(int(n_groups)), second_moments=True)
    res = _hosmer_lemeshow_from_stats(s, fitted)
    res = dataclasses.replace(res, chi2_p_value=res.p_value)
    few = not res.chi2_reliable
    if not math.isfinite(res.statistic) or reference == "chi2" or (reference == "auto" and not few):
        return res
    expected = f"its groups expect as few as {res.min_expected:.2g} events (or non-events)"
    if fitted:  # "auto" with a fitted model: the chi-square, said to be unreliable here
        return dataclasses.replace(res, note=" ".join(t for t in (res.note, (
            f"The chi-square reference is unreliable here: {expected}, below {HL_MIN_EXPECTED:g}, where it rejects "
            "calibrated models too often.")) if t))
    if isinstance(n_redraws, bool) or not isinstance(n_redraws, (int, np.integer)) or n_redraws < 1:
        raise InputError(f"n_redraws must be a positive integer, got {n_redraws!r}.")
    from .consistency import consistency_test  # it imports this module

    redrawn = consistency_test(y_true, y_prob, metric="hosmer_lemeshow", n_resamples=int(n_redraws),
                               random_state=random_state, sample_weight=sample_weight, n_groups=int(n_groups))
    why = (f"p-value from {int(n_redraws)} label redraws from the predictions" + (
        f": {expected}, below {HL_MIN_EXPECTED:g}, where the chi-square reference rejects calibrated models too "
        f"often (it gives p = {res.p_value:.2g})" if few else ""))
    return dataclasses.replace(res, p_value=float(redrawn.p_value), n_redraws=int(n_redraws),
                               note=" ".join(t for t in (res.note, why[:1].upper() + why[1:] + ".") if t))


def _hosmer_lemeshow_from_stats(s, fitted: bool = False) -> HosmerLemeshowResult:
    """The Hosmer-Lemeshow test from the per-group sums of EqualMass(G), second moments included (see
    :func:`hosmer_lemeshow`)."""
    keep = s.nonempty
    obs, exp, ng = s.sum_true[keep], s.sum_pred[keep], s.weight[keep]
    pbar = exp / ng
    # sum w^2 pbar (1 - pbar): HL's n_g pbar (1 - pbar) when unweighted; never below the exact variance
    # sum w^2 p (1 - p) of O_g, which it exceeds by sum w^2 (p - pbar)^2 unweighted but not always weighted
    denom = np.maximum(s.sum_weight_sq[keep] * pbar * (1 - pbar), s.null_var[keep])
    ok = denom > 0
    # a group of predictions all 0 or all 1: |O - E| > 0 is impossible under calibration (relative tolerance
    # for the float sums of weights)
    contradicted = ~ok & (np.abs(obs - exp) > 1e-9 * np.maximum(ng, 1.0))
    dof = int(ok.sum()) - (2 if fitted else 0)
    if dof < 1 and not contradicted.any():
        need = 3 if fitted else 1
        raise InputError(f"Hosmer-Lemeshow needs at least {need} group(s) with predictions strictly between 0 and 1; "
                         f"here {int(ok.sum())} of {int(keep.sum())} groups have them.")
    note = ""
    if contradicted.any():
        k = int(contradicted.sum())
        note = (f"{k} group(s) of predictions that are all exactly 0 or 1 hold outcomes that contradict them "
                "(an event at probability 0 or a non-event at probability 1), which a calibrated model cannot "
                "produce: the statistic is infinite.")
        return HosmerLemeshowResult(math.inf, 0.0, max(dof, 0), int(keep.sum()), note)
    if (~ok).any():
        note = (f"{int((~ok).sum())} group(s) of predictions all exactly 0 or 1 agree with their outcomes; "
                "they add nothing and no degree of freedom.")
    stat = float(np.sum((obs[ok] - exp[ok]) ** 2 / denom[ok]))
    n_eff = ng[ok] ** 2 / s.sum_weight_sq[keep][ok]  # the group's rows without weights
    min_expected = float(np.min(np.minimum(pbar[ok], 1 - pbar[ok]) * n_eff))
    return HosmerLemeshowResult(stat, float(chi2.sf(stat, dof)), dof, int(keep.sum()), note, min_expected)
