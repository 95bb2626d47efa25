"""Multiclass calibration metrics: M2B reductions feeding the binary core.

Confidence, top-label and class-wise metrics (Gupta & Ramdas 2022) are
binned ECEs of the binary views of :mod:`calibviz.reduce`, computed from the
per-bin sufficient statistics of :mod:`calibviz.summary`: the top-label
metrics aggregate one statistic per (predicted class, bin) *cell* with a
single ``bincount``; the class-wise ones loop over classes (each pass is
vectorised over rows). :func:`canonical_ece` is the full-vector ECE of
CalibrationErrors.jl, binning the probability simplex.

Bins of the top-label metrics (``fit=``)
-----------------------------------------
The paper bins *within each predicted class*: the cell (l, b) holds the rows
with ``argmax = l`` whose confidence falls in bin b (Gupta & Ramdas, Sec. 2.3
of the digest; Remark 1). For edge-based schemes (``Uniform``, ``Custom``)
this is the same fixed grid for every class. For rank- or label-based
schemes (``EqualMass``, ``PAVA``, ``PAVABC``, ``MedianVariance``)
``fit="per_class"`` (default) fits the scheme separately on each predicted
class's rows, as the authors' library does; ``fit="pooled"`` fits it once on
all confidences and splits every bin by predicted class (then
conf-ECE <= TL-ECE holds for every scheme, Proposition 4).
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from ..binning import PAVABC, Custom, Uniform, get_scheme, MedianVariance
from ..errors import InputError
from ..reduce import _group_rows, _top
from ..summary import BinStatistics, _fit_and_sum, sufficient_statistics
from ..validation import check_multiclass
from .binned import _norm_of_gaps, tce_many

__all__ = [
    "confidence_ece",
    "top_label_ece",
    "top_label_mce",
    "top_label_ece_per_class",
    "classwise_ece",
    "classwise_ece_per_class",
    "classwise_tce",
    "canonical_ece",
]

_FITS = ("per_class", "pooled")
_REDUCES = ("bin", "cell")


# ----------------------------------------------------------------------------
# top-label cells: per-(predicted class, bin) sufficient statistics


def _is_edge_based(scheme) -> bool:
    """A score's bin depends on the score alone: per-class and pooled fits coincide."""
    return isinstance(scheme, (Uniform, Custom))


@dataclass(frozen=True, eq=False)
class _Cells:
    """Top-label statistics of the K*B cells (cell id = class * B + bin)."""

    stats: BinStatistics
    n_classes: int
    n_bins: int
    index: np.ndarray  # cell id of every row, shape (n,)
    c: np.ndarray  # predicted class, shape (n,)
    h: np.ndarray  # top score, shape (n,)
    z: np.ndarray  # 1{y = c}, shape (n,)
    bins: object = None  # pooled Bins (edge-based or fit="pooled"), else None

    def grid(self, values: np.ndarray) -> np.ndarray:
        """A per-cell array reshaped to (K, B)."""
        return values.reshape(self.n_classes, self.n_bins)


def _top_label_cells(y, P, w, binning, fit="per_class", second_moments=False) -> _Cells:
    if fit not in _FITS:
        raise InputError(f"fit must be one of {', '.join(_FITS)}, got {fit!r}.")
    scheme = get_scheme(binning)
    K = P.shape[1]
    c, h = _top(P)
    z = (y == c).astype(np.float64)
    bins = None
    if fit == "pooled" or _is_edge_based(scheme):
        bins = scheme._fit(h, z, w)
        B = bins.n_bins
        cell = c * B + bins.index
    else:
        order, starts, counts = _group_rows(c, K)
        fitted = []
        for lab in np.flatnonzero(counts):  # one scheme fit per predicted class
            rows = order[starts[lab] : starts[lab] + counts[lab]]
            fitted.append((lab, rows, scheme._fit(h[rows], z[rows], None if w is None else w[rows])))
        B = max(b.n_bins for *_, b in fitted)
        cell = np.empty(c.shape[0], dtype=np.int64)
        for lab, rows, b in fitted:
            cell[rows] = lab * B + b.index
    stats = sufficient_statistics(z, h, cell, K * B, w, second_moments=second_moments)
    return _Cells(stats=stats, n_classes=K, n_bins=B, index=cell, c=c, h=h, z=z, bins=bins)


def _bin_deviation(cells: _Cells):
    """(Delta_b, W_b): class-weighted mean |acc - conf| per bin index, and the bin's weight.

    Delta_b = sum_l (W_{l,b} / W_b) |acc_{l,b} - conf_{l,b}| = sum_l |S_true - S_pred|_{l,b} / W_b.
    """
    s = cells.stats
    absdiff = cells.grid(np.abs(s.sum_true - s.sum_pred)).sum(axis=0)
    weight = cells.grid(s.weight).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(weight > 0, absdiff / weight, np.nan), weight


def _check_choice(value, allowed, name):
    if value not in allowed:
        raise InputError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}.")


# ----------------------------------------------------------------------------
# public metrics


def confidence_ece(y_true, y_prob, *, binning=Uniform(15), norm="l1", sample_weight=None) -> float:
    """Confidence ECE: the binary ECE of the top score vs "top class correct".

    ``conf-ECE = sum_b (W_b / W) |acc_b - conf_b|`` over non-empty bins of the
    top-label confidence ``h(x) = max_l P[x, l]`` (Guo et al.'s "ECE").

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Class indices 0..K-1.
    y_prob : array-like of shape (n, K)
        Probability vectors (rows sum to 1).
    binning : Scheme, str or edges, default Uniform(15)
        Any :mod:`calibviz.binning` scheme, fitted on the confidences.
    norm : {"l1", "l2", "max"}, default "l1"
        "max" gives the confidence MCE, eq. (16).
    sample_weight : array-like of shape (n,), optional

    Returns
    -------
    float in [0, 1]

    References
    ----------
    Gupta & Ramdas (2022), "Top-label calibration and multiclass-to-binary
    reductions", ICLR, eq. (1), (3) and (16); Guo et al. (2017), ICML, eq. (3).

    Examples
    --------
    >>> P = [[0.6, 0.2, 0.2]] * 5 + [[0.2, 0.6, 0.2]] * 5
    >>> y = [0, 2, 2, 2, 2, 1, 1, 1, 1, 1]
    >>> round(confidence_ece(y, P, binning=Uniform(10)), 6)
    0.0
    """
    y, P, w = check_multiclass(y_true, y_prob, sample_weight)
    c, h = _top(P)
    _, s = _fit_and_sum((y == c).astype(np.float64), h, w, binning, False)
    return _norm_of_gaps(s, norm)


def top_label_ece(y_true, y_prob, *, binning=Uniform(15), norm="l1", fit="per_class", sample_weight=None) -> float:
    """Top-label ECE: calibration of the top score *given the predicted class*.

    ``TL-ECE = sum_{l,b} (W_{l,b} / W) |acc_{l,b} - conf_{l,b}|`` over the
    non-empty cells (predicted class l, confidence bin b). It conditions on
    the predicted class, so it is >= conf-ECE (Proposition 4) and it is *not*
    what some papers call "top-label ECE" (their conf-ECE; paper Remark 2).

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Class indices 0..K-1.
    y_prob : array-like of shape (n, K)
    binning : Scheme, str or edges, default Uniform(15)
        The paper's tables use ``Uniform(15)``.
    norm : {"l1", "l2", "max"}, default "l1"
        "l2" is the l2-TL-ECE (root of the weighted mean squared gap, our
        extension); "max" is the per-cell max of definition (17)
        (= ``top_label_mce(reduce="cell")``).
    fit : {"per_class", "pooled"}, default "per_class"
        How data-dependent schemes are fitted (see the module notes);
        irrelevant for Uniform / Custom bins.
    sample_weight : array-like of shape (n,), optional

    Returns
    -------
    float in [0, 1]

    References
    ----------
    Gupta & Ramdas (2022), ICLR, eq. (2) and (4), Remark 1, Tables 2 and 4
    (B = 15 equal-width bins).

    Examples
    --------
    Example 1 of the paper: confidence-calibrated, top-label miscalibrated.

    >>> P = [[0.6, 0.2, 0.2]] * 5 + [[0.2, 0.6, 0.2]] * 5
    >>> y = [0, 2, 2, 2, 2, 1, 1, 1, 1, 1]
    >>> round(top_label_ece(y, P, binning=Uniform(10)), 6)
    0.4
    """
    _check_choice(norm, ("l1", "l2", "max"), "norm")
    y, P, w = check_multiclass(y_true, y_prob, sample_weight)
    return _norm_of_gaps(_top_label_cells(y, P, w, binning, fit).stats, norm)


def top_label_mce(y_true, y_prob, *, binning=Uniform(15), reduce="bin", fit="per_class", sample_weight=None) -> float:
    """Top-label maximum calibration error.

    Parameters
    ----------
    y_true : array-like of shape (n,)
    y_prob : array-like of shape (n, K)
    binning : Scheme, str or edges, default Uniform(15)
    reduce : {"bin", "cell"}, default "bin"
        "bin": ``max_b Delta_b`` with ``Delta_b = sum_l (W_{l,b}/W_b)
        |acc_{l,b} - conf_{l,b}|``, the class-weighted deviation of bin b
        (the "+" marker of the top-label diagram) -- what the paper's Tables
        2 and 4 report. "cell": ``max_{l,b} |acc_{l,b} - conf_{l,b}|`` over
        non-empty cells, definition (17). For per-class fits of data-dependent
        schemes, "bin" groups the b-th bin of every class.
    fit : {"per_class", "pooled"}, default "per_class"
    sample_weight : array-like of shape (n,), optional

    Returns
    -------
    float in [0, 1]

    References
    ----------
    Gupta & Ramdas (2022), ICLR, eq. (17), Tables 2 and 4 (reduce="bin"
    reproduces the tables; see the digest's erratum on TL-MCE).

    Examples
    --------
    >>> P = [[0.6, 0.4]] * 2 + [[0.35, 0.65]] * 8  # one bin: class 0 off by 0.4, class 1 by 0.15
    >>> y = [0, 0] + [1] * 4 + [0] * 4
    >>> round(top_label_mce(y, P, binning=Uniform(10), reduce="bin"), 4)
    0.2
    >>> round(top_label_mce(y, P, binning=Uniform(10), reduce="cell"), 4)
    0.4
    """
    _check_choice(reduce, _REDUCES, "reduce")
    y, P, w = check_multiclass(y_true, y_prob, sample_weight)
    cells = _top_label_cells(y, P, w, binning, fit)
    if reduce == "cell":
        return _norm_of_gaps(cells.stats, "max")
    dev, weight = _bin_deviation(cells)
    return float(np.max(dev[weight > 0]))


def top_label_ece_per_class(y_true, y_prob, *, binning=Uniform(15), fit="per_class", sample_weight=None) -> np.ndarray:
    """TL-ECE of each predicted class: ``ECE_l = sum_b (W_{l,b} / W_l) |acc_{l,b} - conf_{l,b}|``.

    ``top_label_ece == sum_l (W_l / W) ECE_l`` (the paper's per-class bar plots).

    Parameters
    ----------
    y_true : array-like of shape (n,)
    y_prob : array-like of shape (n, K)
    binning : Scheme, str or edges, default Uniform(15)
    fit : {"per_class", "pooled"}, default "per_class"
    sample_weight : array-like of shape (n,), optional

    Returns
    -------
    ndarray of float64, shape (K,)
        NaN for classes that are never predicted.

    References
    ----------
    Gupta & Ramdas (2022), ICLR, Fig. 4 and 9 (per-class TL-ECE bars).

    Examples
    --------
    >>> P = [[0.6, 0.2, 0.2]] * 5 + [[0.2, 0.6, 0.2]] * 5
    >>> y = [0, 2, 2, 2, 2, 1, 1, 1, 1, 1]
    >>> top_label_ece_per_class(y, P, binning=Uniform(10)).round(6).tolist()
    [0.4, 0.4, nan]
    """
    y, P, w = check_multiclass(y_true, y_prob, sample_weight)
    return _per_class_from_cells(_top_label_cells(y, P, w, binning, fit))


def _per_class_from_cells(cells: _Cells) -> np.ndarray:
    s = cells.stats
    absdiff = cells.grid(np.abs(s.sum_true - s.sum_pred)).sum(axis=1)
    weight = cells.grid(s.weight).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(weight > 0, absdiff / weight, np.nan)


def _classwise_values(y, P, w, binning, norm) -> np.ndarray:
    scheme = get_scheme(binning)
    out = np.empty(P.shape[1])
    for lab in range(P.shape[1]):  # one binary ECE per class; each is vectorised over rows
        _, s = _fit_and_sum((y == lab).astype(np.float64), np.ascontiguousarray(P[:, lab]), w, scheme, False)
        out[lab] = _norm_of_gaps(s, norm)
    return out


def classwise_ece(y_true, y_prob, *, binning=Uniform(15), norm="l1", sample_weight=None) -> float:
    """Class-wise ECE: the mean over classes of the one-vs-rest binary ECE.

    ``CW-ECE = (1/K) sum_l ECE(1{y = l}, P[:, l])``; each class's ECE uses all
    rows, its bins fitted on that class's column.

    Parameters
    ----------
    y_true : array-like of shape (n,)
    y_prob : array-like of shape (n, K)
    binning : Scheme, str or edges, default Uniform(15)
    norm : {"l1", "l2", "max"}, default "l1"
        Norm of each class's binary ECE (averaged over classes).
    sample_weight : array-like of shape (n,), optional

    Returns
    -------
    float in [0, 1]
        The paper's Tables 3 and 5 print this value times 100.

    References
    ----------
    Gupta & Ramdas (2022), ICLR, Sec. 4 (CW-ECE definition), eq. (5),
    Tables 3 and 5; Kull et al. (2019), NeurIPS.

    Examples
    --------
    >>> P = [[0.6, 0.2, 0.2]] * 5 + [[0.2, 0.6, 0.2]] * 5
    >>> y = [0, 2, 2, 2, 2, 1, 1, 1, 1, 1]
    >>> round(classwise_ece(y, P, binning=Uniform(10)), 6)
    0.266667
    """
    _check_choice(norm, ("l1", "l2", "max"), "norm")
    y, P, w = check_multiclass(y_true, y_prob, sample_weight)
    return float(np.mean(_classwise_values(y, P, w, binning, norm)))


def classwise_ece_per_class(y_true, y_prob, *, binning=Uniform(15), norm="l1", sample_weight=None) -> np.ndarray:
    """The one-vs-rest binary ECE of every class (``classwise_ece`` is their mean).

    Parameters
    ----------
    y_true : array-like of shape (n,)
    y_prob : array-like of shape (n, K)
    binning : Scheme, str or edges, default Uniform(15)
    norm : {"l1", "l2", "max"}, default "l1"
    sample_weight : array-like of shape (n,), optional

    Returns
    -------
    ndarray of float64, shape (K,)

    References
    ----------
    Gupta & Ramdas (2022), ICLR, Sec. 4; Kull et al. (2019), NeurIPS.

    Examples
    --------
    >>> P = [[0.6, 0.2, 0.2]] * 5 + [[0.2, 0.6, 0.2]] * 5
    >>> y = [0, 2, 2, 2, 2, 1, 1, 1, 1, 1]
    >>> classwise_ece_per_class(y, P, binning=Uniform(10)).round(6).tolist()
    [0.3, 0.3, 0.2]
    """
    _check_choice(norm, ("l1", "l2", "max"), "norm")
    y, P, w = check_multiclass(y_true, y_prob, sample_weight)
    return _classwise_values(y, P, w, binning, norm)


def classwise_tce(y_true, y_prob, *, binning=PAVABC(), alpha=0.05, test="binomial", sample_weight=None) -> float:
    """Class-wise TCE: the one-vs-rest TCE of every class, averaged (percent).

    Each class's column ``P[:, l]`` against ``1{y = l}`` is binned (default
    PAVA-BC fitted per class) and every prediction is tested against its
    bin's labels, exactly as :func:`calibviz.metrics.tce`.

    Parameters
    ----------
    y_true : array-like of shape (n,)
    y_prob : array-like of shape (n, K)
    binning : Scheme, str or edges, default PAVABC()
    alpha : float, default 0.05
    test : {"binomial", "ttest"}, default "binomial"
    sample_weight : array-like of shape (n,), optional
        As in :func:`calibviz.metrics.tce` (our extension).

    Returns
    -------
    float in [0, 100]

    Notes
    -----
    Costs K binary TCEs; PAVA-BC's block merging is a per-row stack, so at
    N = 10^6 expect a few seconds per class.

    References
    ----------
    Matsubara, Tax, Mudd & Guy (2023), "TCE: A test-based approach to
    measuring calibration error", UAI, Remark 2 (multiclass: one-vs-rest,
    averaged) and Definition 2.

    Examples
    --------
    >>> P = [[0.5, 0.5]] * 20
    >>> classwise_tce([0, 1] * 10, P, binning=Uniform(1))
    0.0
    """
    y, P, w = check_multiclass(y_true, y_prob, sample_weight)
    scheme = get_scheme(binning)
    views = [((y == lab).astype(np.float64), P[:, lab], w) for lab in range(P.shape[1])]
    # one binary TCE per class, tested together; a class that tce refuses raises its message
    return float(np.mean(tce_many(views, binning=scheme, alpha=alpha, test=test, strict=True)))


# ----------------------------------------------------------------------------
# canonical (full-vector) ECE, CalibrationErrors.jl

_DISTANCES = ("tv", "cityblock", "sqeuclidean")
_SIMPLEX_BINNINGS = ("uniform", "median_variance")
_PACK_LIMIT = 1 << 62


def _simplex_uniform_groups(P: np.ndarray, n_bins: int) -> np.ndarray:
    """Group id (0..G-1) per row: rows share a bin iff every component has the same uniform bin.

    Component bin = ceil(n_bins * p) in floating point, p == 0 -> 1, i.e. bins
    (k-1)/B < p <= k/B as CalibrationErrors.jl's ``binindex``. The K bin ids of
    a row are packed into one int64 (mixed radix); the packed ids are
    renumbered densely (np.unique) whenever the next column would overflow.
    """
    n, K = P.shape
    comp = np.ceil(n_bins * P).astype(np.int64)
    comp[P == 0] = 1
    radix = n_bins + 1
    g = np.zeros(n, dtype=np.int64)
    span = 1
    for j in range(K):  # loop over components; each step is vectorised over rows
        if span * radix >= _PACK_LIMIT:
            uniq, g = np.unique(g, return_inverse=True)
            span = uniq.shape[0]
        g = g * radix + comp[:, j]
        span *= radix
    return np.unique(g, return_inverse=True)[1].reshape(-1)


def _max_var_dim(X: np.ndarray) -> tuple[float, int]:
    """(largest unbiased component variance, its component); near-ties go to the first component.

    CalibrationErrors.jl keeps the first component unless a later one is
    strictly larger; equal variances (e.g. K = 2, where p_2 = 1 - p_1) differ
    only by round-off, so a relative tolerance keeps the first one.
    """
    var = X.var(axis=0, ddof=1)
    best = float(var.max())
    dim = int(np.flatnonzero(var >= best * (1 - 1e-12))[0]) if best > 0 else 0
    return best, dim


def _simplex_median_variance_groups(P: np.ndarray, min_size: int, max_bins: int | None) -> np.ndarray:
    """Group id per row for MedianVarianceBinning(min_size, max_bins) of CalibrationErrors.jl."""
    n = P.shape[0]
    if n < min_size:
        raise InputError(
            f"median-variance binning needs at least min_size={min_size} predictions, got {n}; lower min_size."
        )
    max_bins = n + 1 if max_bins is None else max_bins
    finished: list[np.ndarray] = []
    heap: list = []
    rows = np.arange(n)
    if n < 2 * min_size or max_bins == 1:
        finished.append(rows)
    else:
        v, d = _max_var_dim(P)
        heap.append((-v, 0, rows, d))
    counter, nbins = 1, 1
    while nbins < max_bins and heap:  # loop over splits; each split is vectorised
        _, _, idx, dim = heapq.heappop(heap)
        x = P[idx, dim]
        order = np.argsort(x, kind="stable")
        xs = x[order]
        m = idx.shape[0] // 2  # 0-based position of the (upper) median
        # below = values strictly smaller than the median element (ties stay together above)
        cut = m if xs[m - 1] < xs[m] else int(np.searchsorted(xs[:m], xs[m], side="left"))
        below, above = idx[order[:cut]], idx[order[cut:]]
        if below.shape[0] < min_size or above.shape[0] < min_size:
            finished.append(idx)
            continue
        for part in (below, above):
            if part.shape[0] < 2 * min_size:
                finished.append(part)
            else:
                v, d = _max_var_dim(P[part])
                heapq.heappush(heap, (-v, counter, part, d))
                counter += 1
        nbins += 1
    finished.extend(item[2] for item in heap)
    g = np.empty(n, dtype=np.int64)
    for gid, part in enumerate(finished):  # loop over bins
        g[part] = gid
    return g


def canonical_ece(
    y_true,
    y_prob,
    *,
    binning="uniform",
    n_bins=10,
    min_size=10,
    max_bins=None,
    distance="tv",
    bin_weights="uniform",
) -> float:
    """Canonical (full-vector) ECE with simplex binning, as in CalibrationErrors.jl.

    Predictions are binned on the probability simplex; in each non-empty bin
    the mean prediction vector is compared with the mean one-hot label vector
    (the class proportions) by a distance d, and the distances are averaged:
    ``(1/B) sum_b d(Pbar_b, Ybar_b)`` over the B non-empty bins.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Class indices 0..K-1.
    y_prob : array-like of shape (n, K)
    binning : {"uniform", "median_variance"} or Uniform / MedianVariance scheme
        "uniform" (``UniformBinning(n_bins)``): each component p_k is put in
        bin ``ceil(n_bins * p_k)`` (computed in floating point; p = 0 in bin
        1), i.e. ``((k-1)/B, k/B]``, and a simplex bin is a tuple of component
        bins. "median_variance" (``MedianVarianceBinning(min_size,
        max_bins)``): starting from all rows, repeatedly split the bin with
        the largest (unbiased) variance of any component at the median of
        that component (rows below the median element vs the rest), while
        both parts keep >= ``min_size`` rows, up to ``max_bins`` bins.
        A ``binning.Uniform(B)`` / ``binning.MedianVariance(m, M)`` object
        supplies its parameters instead.
    n_bins : int, default 10
        Bins per component for "uniform".
    min_size : int, default 10
        Minimum rows per bin for "median_variance"; fewer than ``min_size``
        rows in total is an error (as in CalibrationErrors.jl).
    max_bins : int or None
        Maximum number of bins for "median_variance" (None = unlimited).
    distance : {"tv", "cityblock", "sqeuclidean"}, default "tv"
        Total variation ``0.5 sum_k |a_k - b_k|``, cityblock ``sum_k |a_k -
        b_k|`` or squared Euclidean ``sum_k (a_k - b_k)^2`` (Distances.jl).
    bin_weights : {"uniform", "size"}, default "uniform"
        "uniform": the documented estimator ``(1/B) sum_b d_b``.
        "size": ``sum_b (n_b / n) d_b``, which is what the code of
        CalibrationErrors.jl (its ``ECE`` functor, a running mean weighted by
        bin size) actually returns; use it to reproduce the package's numbers.

    Returns
    -------
    float

    Notes
    -----
    The docstring of CalibrationErrors.jl's ``ECE`` states the (1/B) formula
    while its implementation weights bins by their size; both are offered
    (``bin_weights``). Canonical calibration needs exponentially many bins in
    K: use it for small K (Gupta & Ramdas 2022, App. G). No sample weights:
    the estimator is not defined for them. Component variances that tie up to
    round-off (always for K = 2) split on the first component.

    References
    ----------
    Widmann, Lindsten & Zachariah, CalibrationErrors.jl documentation, "ECE",
    "UniformBinning", "MedianVarianceBinning"; Vaicenavicius et al. (2019),
    "Evaluating model calibration in classification", AISTATS; Gupta & Ramdas
    (2022), ICLR, App. G (canonical calibration).

    Examples
    --------
    >>> P = [[0.8, 0.1, 0.1], [0.8, 0.1, 0.1], [0.1, 0.1, 0.8]]
    >>> round(canonical_ece([0, 1, 2], P, n_bins=10), 4)  # bins: 2 rows (d = 0.4), 1 row (d = 0.2)
    0.3
    >>> round(canonical_ece([0, 1, 2], P, n_bins=10, bin_weights="size"), 4)
    0.3333
    """
    _check_choice(distance, _DISTANCES, "distance")
    _check_choice(bin_weights, ("uniform", "size"), "bin_weights")
    y, P, _ = check_multiclass(y_true, y_prob)
    if isinstance(binning, Uniform):
        binning, n_bins = "uniform", binning.n_bins
    elif isinstance(binning, MedianVariance):
        binning, min_size, max_bins = "median_variance", binning.min_size, binning.max_bins
    _check_choice(binning, _SIMPLEX_BINNINGS, "binning")
    if binning == "uniform":
        # validated like the schemes' own parameters
        g = _simplex_uniform_groups(P, Uniform(n_bins).n_bins)
    else:
        mv = MedianVariance(min_size, max_bins)
        g = _simplex_median_variance_groups(P, mv.min_size, mv.max_bins)
    G = int(g.max()) + 1
    count = np.bincount(g, minlength=G).astype(np.float64)
    d = np.zeros(G)
    for k in range(P.shape[1]):  # loop over components; O(n) each, O(G) memory
        diff = (np.bincount(g, weights=P[:, k], minlength=G) - np.bincount(g[y == k], minlength=G)) / count
        d += diff * diff if distance == "sqeuclidean" else np.abs(diff)
    if distance == "tv":
        d *= 0.5
    if bin_weights == "uniform":
        return float(d.mean())
    return float(np.dot(count, d) / count.sum())
