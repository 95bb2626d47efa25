"""Tables behind the multiclass diagrams (Gupta & Ramdas 2022, Fig. 1 and 4).

Every table is a :func:`calibviz.reliability_table` of a binary view, or a
regrouping of the per-(predicted class, bin) sufficient statistics that the
top-label metrics use (:mod:`calibviz.metrics.multiclass`), so diagrams and
metrics always show the same numbers:

* :func:`top_label_table` -- the confidence (star) and top-label (plus)
  reliability diagram, one row per bin;
* :func:`per_class_top_label_tables` -- one reliability table per predicted class;
* :func:`classwise_tables` -- one reliability table per class (one-vs-rest);
* :func:`class_ranking` -- per-class CW-ECE or TL-ECE with bootstrap CIs and
  class shares, vectorised so that 100 classes stay interactive;
* :func:`bin_zoom` -- inside one confidence bin, n / confidence / accuracy
  per predicted class (Fig. 1b).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import sparse

from .binning import Uniform, get_scheme
from .errors import InputError
from .metrics.multiclass import (
    _bin_deviation,
    _check_choice,
    _classwise_values,
    _is_edge_based,
    _per_class_from_cells,
    _top_label_cells,
)
from .metrics.resampling import bootstrap, interval_from_distribution
from .panel import family_words, format_adjusted_p, p_words
from .reduce import _class_names, _classwise, _top, _top_label
from .stats import proportion_interval
from .summary import reliability_table
from .validation import check_multiclass

__all__ = ["top_label_table", "per_class_top_label_tables", "classwise_tables", "class_ranking",
           "class_reference_draws", "class_p_values", "class_test_sentence", "CLASS_INTERVAL_READING",
           "readable_class_ranking", "GRID_READING", "TOP_LABEL_READING", "bin_zoom"]

_RANKING_METRICS = ("classwise_ece", "top_label_ece")


def _labels(classes, K):
    """Original class labels (for dict keys and the ``label`` column)."""
    _class_names(classes, K)  # checks the length
    return list(range(K)) if classes is None else list(classes)


# |acc - conf| below this is a tie (sign rule: minus branch); sums of equal
# scores can differ from the label mean by round-off only
_TIE = 1e-12

#: How to read the top-label diagram's pluses (the Multiclass page and the report). A plus far from its star was read
#: as "classes cancel out", but the per-class deviations of a bin are noisy: on perfectly calibrated models some
#: plus lay outside its star's interval in 16-20% of simulated logs with 3 classes and in all of them with 10
#: (a review's simulation, 29 Nov 2026), so the reading points to the tested number instead.
TOP_LABEL_READING = ("A plus further from the diagonal than its star can mean that classes cancel out in the "
                     "confidence view, but per-class deviations are noisy: a calibrated model's pluses also drift "
                     "from their stars, more so with many classes. Whether the top-label calibration is beyond that "
                     "noise is the top-label ECE's verdict in the metric table (against a calibrated model).")


#: The caption of the confidence vs top-label diagram on the Multiclass page (in memory and of an opened file).
TOP_LABEL_DIAGRAM_READING = ("Stars are confidence calibration (accuracy per bin); pluses sit at the confidence ± "
                             "each bin's class-weighted top-label deviation, not an accuracy, so they can leave "
                             "[0, 1]. " + TOP_LABEL_READING)


#: How to read the small multiples (per predicted class, class-wise): their green bands hold for all panels together.
GRID_READING = ("The green bands are the ranges that all bins of all panels of a calibrated model stay in together "
                "with probability 1 - α (each panel's at α / classes): a point outside is evidence at level α by "
                "the band's own test, apart from the metric table's (each grid and the table hold at α on their "
                "own; together a calibrated model shows one of them on about 6% of logs, a simulation). "
                "Error bars are each bin's own interval: with many bins and classes some miss the diagonal by chance "
                "even for a calibrated model.")


def _plus(conf, acc, delta):
    """y of the plus marker: conf + Delta if acc > conf, else conf - Delta (ties: minus).

    Round-off at the bounds is removed: with every class right in a bin,
    Delta = 1 - conf and conf + Delta can come out as 1 + 2e-16; such a
    plus is 1 (it lies on the bound, not outside [0, 1]).
    """
    plus = np.where(acc - conf > _TIE, conf + delta, conf - delta)
    inside = np.clip(plus, 0.0, 1.0)
    return np.where(np.abs(plus - inside) <= _TIE, inside, plus)


def top_label_table(y_true, y_prob, *, binning=Uniform(15), classes=None, sample_weight=None, alpha=0.05) -> pd.DataFrame:
    """Per-bin data of the confidence (star) and top-label (plus) reliability diagram.

    Bins are fitted once on the top-label confidences; each bin is split by
    predicted class into cells (l, b). The star of bin b is the pooled
    ``(conf_b, acc_b)``; the plus is ``(conf_b, conf_b + Delta_b)`` if
    ``acc_b > conf_b`` else ``(conf_b, conf_b - Delta_b)`` (ties go to the
    minus branch), with ``Delta_b = sum_l (W_{l,b}/W_b) |acc_{l,b} -
    conf_{l,b}|`` the class-weighted deviation. Gaps below 1e-12 count as
    ties (round-off of equal scores).

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Class indices 0..K-1.
    y_prob : array-like of shape (n, K)
    binning : Scheme, str or edges, default Uniform(15)
        The paper's Fig. 1 uses ``Uniform(10)``.
    classes : sequence of K names, optional
        Only checked here (the table is per bin).
    sample_weight : array-like of shape (n,), optional
    alpha : float, default 0.05
        Level of the interval columns of the confidence view.

    Returns
    -------
    pandas.DataFrame
        One row per non-empty bin: the columns of
        :func:`calibviz.reliability_table` for the confidence view (star =
        ``(mean_pred, obs_rate)``, with ``ci_low``, ``ci_high`` ...), plus
        ``frac`` (share of the total weight, the grey bars), ``deviation``
        (Delta_b >= |gap|), ``plus`` (y of the plus marker, ``conf_b +-
        Delta_b``: a deviation drawn from the confidence, **not an accuracy**,
        and not clipped: it can leave [0, 1]), ``plus_outside`` (bool) and
        ``n_classes`` (predicted classes present in the bin). ``attrs`` as the
        reliability table's, plus ``confidence_ece`` and ``top_label_ece`` on
        these bins.

    Notes
    -----
    A plus above 1 (or below 0) is not an error. If every predicted class
    in bin b deviated in the star's direction, Delta_b would equal
    ``|acc_b - conf_b|`` and the plus would sit on the star. Delta_b is larger
    exactly when some classes are over-confident and others under-confident
    in the bin (they partly cancel in the star); it is then bounded by 1 but
    not by the room ``1 - conf_b`` above the confidence. Gupta & Ramdas fix
    their axes to [0, 1], so such pluses disappear from their plots; calibviz
    keeps them (the figure labels the y axis and hover accordingly).

    References
    ----------
    Gupta & Ramdas (2022), "Top-label calibration and multiclass-to-binary
    reductions", ICLR, Sec. 2.1 and Fig. 1a (Delta_b and the sign rule).

    Examples
    --------
    >>> P = [[0.6, 0.2, 0.2]] * 5 + [[0.2, 0.6, 0.2]] * 5
    >>> y = [0, 2, 2, 2, 2, 1, 1, 1, 1, 1]
    >>> t = top_label_table(y, P, binning=Uniform(10))
    >>> t[["bin", "n", "mean_pred", "obs_rate", "deviation", "plus"]].round(6).to_dict("records")
    [{'bin': 6, 'n': 10, 'mean_pred': 0.6, 'obs_rate': 0.6, 'deviation': 0.4, 'plus': 0.2}]
    """
    y, P, w = check_multiclass(y_true, y_prob, sample_weight)
    _class_names(classes, P.shape[1])
    scheme = get_scheme(binning)
    cells = _top_label_cells(y, P, w, scheme, fit="pooled")
    # The star columns come from the confidence view's reliability table; it
    # refits the (deterministic) scheme on the same confidences, so its bins are ours.
    table = reliability_table(cells.z, cells.h, binning=scheme, alpha=alpha, sample_weight=w, test=None)
    dev, weight = _bin_deviation(cells)
    b = table["bin"].to_numpy()
    conf, acc = table["mean_pred"].to_numpy(), table["obs_rate"].to_numpy()
    delta = dev[b]
    plus = _plus(conf, acc, delta)
    table["frac"] = weight[b] / weight.sum()
    table["deviation"] = delta
    table["plus"] = plus
    table["plus_outside"] = (plus < 0) | (plus > 1)
    table["n_classes"] = (cells.grid(cells.stats.weight) > 0).sum(axis=0)[b].astype(np.int64)
    table.attrs["confidence_ece"] = float(np.sum(table["frac"] * np.abs(acc - conf)))
    table.attrs["top_label_ece"] = float(np.sum(table["frac"] * delta))
    return table


def per_class_top_label_tables(
    y_true, y_prob, *, binning=Uniform(15), classes=None, sample_weight=None, alpha=0.05, test=None
) -> dict:
    """One reliability table per predicted class (the top-label small multiples).

    Parameters
    ----------
    y_true : array-like of shape (n,)
    y_prob : array-like of shape (n, K)
    binning : Scheme, str or edges, default Uniform(15)
        Fitted separately on each predicted class's rows.
    classes : sequence of K labels, optional
    sample_weight : array-like of shape (n,), optional
    alpha : float, default 0.05
    test : {"binomial", "ttest"} or None, default None
        TCE columns of each table (None skips them).

    Returns
    -------
    dict
        ``{label: DataFrame}`` for every class predicted at least once, in
        class order; each table is :func:`calibviz.reliability_table` of the
        view "predicted = <label>" (x = top score, y = 1{y = label}), with
        ``attrs`` ``label``, ``class_index``, ``name``, ``share`` (weight
        share of rows predicted as this class) and ``ece`` (its TL-ECE_l).
        The band (``band_low``, ``band_high``) is at ``alpha / K``: all bins
        of all K panels of a calibrated model stay in their bands together
        with probability at least ``1 - alpha``.

    References
    ----------
    Gupta & Ramdas (2022), ICLR, Sec. 3.4 / Fig. 4 and 9 (per-class top-label
    reliability diagrams).

    Examples
    --------
    >>> P = [[0.6, 0.2, 0.2]] * 5 + [[0.2, 0.6, 0.2]] * 5
    >>> y = [0, 2, 2, 2, 2, 1, 1, 1, 1, 1]
    >>> tabs = per_class_top_label_tables(y, P, binning=Uniform(10), classes=["a", "b", "c"])
    >>> {k: (t["obs_rate"].tolist(), round(t.attrs["ece"], 4)) for k, t in tabs.items()}
    {'a': ([0.2], 0.4), 'b': ([1.0], 0.4)}
    """
    y, P, w = check_multiclass(y_true, y_prob, sample_weight)
    labels = _labels(classes, P.shape[1])
    total = float(P.shape[0] if w is None else w.sum())
    out = {}
    for view in _top_label(y, P, w, classes):  # one small table per predicted class
        t = reliability_table(view.y, view.p, binning=binning, alpha=alpha, sample_weight=view.w, test=test,
                              band_alpha=alpha / P.shape[1])
        t.attrs.update(
            label=labels[view.label], class_index=view.label, name=view.name,
            share=t.attrs["total_weight"] / total,
            ece=float(np.sum(np.abs(t["gap"]) * t["weight"]) / t.attrs["total_weight"]),
        )
        out[labels[view.label]] = t
    return out


def classwise_tables(
    y_true, y_prob, *, binning=Uniform(15), classes=None, sample_weight=None, alpha=0.05, test=None
) -> dict:
    """One reliability table per class, one-vs-rest on all rows (the class-wise grid).

    Parameters
    ----------
    y_true : array-like of shape (n,)
    y_prob : array-like of shape (n, K)
    binning : Scheme, str or edges, default Uniform(15)
        Fitted on each class's column.
    classes : sequence of K labels, optional
    sample_weight : array-like of shape (n,), optional
    alpha : float, default 0.05
    test : {"binomial", "ttest"} or None, default None

    Returns
    -------
    dict
        ``{label: DataFrame}`` for every class, in class order; ``attrs``
        ``label``, ``class_index``, ``name`` ("<label> vs rest"),
        ``prevalence`` (weight share of the class) and ``ece`` (its
        one-vs-rest ECE; the mean over classes is CW-ECE). The band
        (``band_low``, ``band_high``) is at ``alpha / K``, as for
        :func:`per_class_top_label_tables`.

    References
    ----------
    Gupta & Ramdas (2022), ICLR, eq. (5), Sec. 4 (CW-ECE); Kull et al. (2019).

    Examples
    --------
    >>> P = [[0.6, 0.2, 0.2]] * 5 + [[0.2, 0.6, 0.2]] * 5
    >>> y = [0, 2, 2, 2, 2, 1, 1, 1, 1, 1]
    >>> tabs = classwise_tables(y, P, binning=Uniform(10))
    >>> [round(t.attrs["ece"], 4) for t in tabs.values()]
    [0.3, 0.3, 0.2]
    """
    y, P, w = check_multiclass(y_true, y_prob, sample_weight)
    labels = _labels(classes, P.shape[1])
    total = float(P.shape[0] if w is None else w.sum())
    out = {}
    for view in _classwise(y, P, w, classes):  # one small table per class
        t = reliability_table(view.y, view.p, binning=binning, alpha=alpha, sample_weight=view.w, test=test,
                              band_alpha=alpha / P.shape[1])
        pos = float(view.y.sum() if view.w is None else np.dot(view.w, view.y))
        t.attrs.update(
            label=labels[view.label], class_index=view.label, name=view.name, prevalence=pos / total,
            ece=float(np.sum(np.abs(t["gap"]) * t["weight"]) / t.attrs["total_weight"]),
        )
        out[labels[view.label]] = t
    return out


# ----------------------------------------------------------------------------
# per-class ranking with bootstrap intervals


def _fixed_cell_evaluator(metric, y, P, w, scheme):
    """Per-class values as a function of row weights, for fixed-edge bins.

    With edge-based bins a row's cell never changes under resampling, so a
    resample is just a reweighting: TL-ECE_l needs two bincounts over the
    (class, bin) cells, CW-ECE_l one sparse mat-vec over the K cells of every
    row. Returns ``f(weights) -> (values (K,), overall)``.
    """
    n, K = P.shape
    if metric == "top_label_ece":
        cells = _top_label_cells(y, P, w, scheme)
        d = cells.z - cells.h
        KB = K * cells.n_bins

        def evaluate(weights):
            num = np.abs(np.bincount(cells.index, weights=weights * d, minlength=KB)).reshape(K, -1).sum(axis=1)
            den = np.bincount(cells.c, weights=weights, minlength=K)
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.where(den > 0, num / den, np.nan), num.sum() / den.sum()

        return evaluate
    # class-wise: matrix (K*B, n) holding 1{y=l} - P[i,l] at row l*B + bin(P[i,l])
    cols = []
    for lab in range(K):  # one bin fit per class column
        cols.append(scheme._fit(np.ascontiguousarray(P[:, lab]), None, None).index)
    B = max(int(c.max()) for c in cols) + 1
    cell = (np.stack(cols, axis=1) + np.arange(K) * B).ravel()
    data = ((y[:, None] == np.arange(K)) - P).ravel()
    M = sparse.csr_matrix((data, (cell, np.repeat(np.arange(n), K))), shape=(K * B, n))

    def evaluate(weights):
        vals = np.abs(M @ weights).reshape(K, B).sum(axis=1) / weights.sum()
        return vals, vals.mean()

    return evaluate


#: How to read a class ranking's per-class intervals (the Multiclass page and the report).
CLASS_INTERVAL_READING = ("Each class's 95% interval is the basic bootstrap interval of its calibration error: a sum "
                          "of noisy bins' gaps is biased upward, and the interval removes the bias the bootstrap "
                          "sees, so it can lie below the value shown (as the class-wise ECE's interval in the "
                          "metric table). Whether a class is beyond chance is the test's sentence above.")


def readable_class_ranking(ranking: pd.DataFrame) -> pd.DataFrame:
    """A :func:`class_ranking` table with headers for people (numbers stay numbers; the CSV keeps the raw names).

    Examples
    --------
    >>> r = pd.DataFrame({"rank": [1], "class_index": [2], "label": ["dog"], "value": [0.05], "low": [0.03],
    ...                   "high": [0.07], "share": [0.3], "n": [300], "contribution": [0.017]})
    >>> list(readable_class_ranking(r).columns)
    ['Rank', 'Class', 'Calibration error', '95% CI from', '95% CI to', 'Share of rows', 'Rows', 'Contribution to the overall error']
    """
    return ranking.drop(columns=[c for c in ("class_index",) if c in ranking]).rename(columns={
        "rank": "Rank", "label": "Class", "value": "Calibration error", "low": "95% CI from", "high": "95% CI to",
        "share": "Share of rows", "n": "Rows", "contribution": "Contribution to the overall error",
        "p_value": "p-value (this class)", "p_adjusted": "p-value (classes judged together)"})


def class_ranking(
    y_true,
    y_prob,
    *,
    metric="classwise_ece",
    binning=Uniform(15),
    n_resamples=200,
    confidence=0.95,
    random_state=0,
    progress=None,
    classes=None,
    sample_weight=None,
    n_reference=0,
) -> pd.DataFrame:
    """Rank classes by their calibration error, with bootstrap intervals and class shares.

    Parameters
    ----------
    y_true : array-like of shape (n,)
    y_prob : array-like of shape (n, K)
    metric : {"classwise_ece", "top_label_ece"}, default "classwise_ece"
        "classwise_ece": one-vs-rest ECE of each class (CW-ECE is their mean);
        "top_label_ece": TL-ECE_l of each predicted class (TL-ECE is their
        share-weighted sum).
    binning : Scheme, str or edges, default Uniform(15)
    n_resamples : int, default 200
        Bootstrap resamples (0 skips the intervals).
    confidence : float, default 0.95
    random_state : int, Generator or None, default 0
    progress : callable ``progress(done, total)``, optional
    classes : sequence of K labels, optional
    sample_weight : array-like of shape (n,), optional
    n_reference : int, default 0
        Labels redrawn from the predictions (``y* ~ Categorical(P[i])``, a
        calibrated model) to tell which classes are beyond chance: every
        class's value is > 0 on a calibrated model too (the first of a
        ranking is always "worst", noise or not), and a bootstrap interval of
        it never contains 0. Each class's p-value is the share of redraws
        whose value for that class reaches its own, ``(1 + #) / (R + 1)``;
        ``p_adjusted`` judges the K classes together by the single-step minP
        of the same redraws (Westfall & Young 1993, Sec. 2.6: the share of
        redraws whose smallest per-class p-value is at most the class's),
        so that on a calibrated model any ``p_adjusted <= a`` happens with
        probability at most about ``a``. 0 skips them (NaN columns).

    Returns
    -------
    pandas.DataFrame
        One row per class, largest value first (NaN last): ``rank`` (1 = largest),
        ``class_index``, ``label``, ``value``, ``low``, ``high`` (basic
        bootstrap interval, :data:`CLASS_INTERVAL_READING`), ``share`` (class-wise: prevalence of the class;
        top-label: share of rows predicted as the class), ``n`` (rows of the
        class / predicted as it) and ``contribution`` (the class's part of
        the overall metric: value/K resp. share*value), ``p_value``,
        ``p_adjusted`` (against a calibrated model, see ``n_reference``).
        ``attrs``: ``metric``, ``overall``, ``overall_low``,
        ``overall_high``, ``n_resamples``, ``confidence``, ``scheme``,
        ``n_reference``, ``p_value`` (the smallest ``p_adjusted``).

    Notes
    -----
    All classes share the same resamples: the rows are resampled once per
    replicate by :func:`calibviz.metrics.bootstrap` and every class's value
    is computed from that replicate. With edge-based bins (Uniform, Custom)
    a replicate is a reweighting of fixed cells (``resample="weights"``,
    exact), costing O(n) (top-label) or O(nK) (class-wise) per replicate;
    other schemes are refitted on every replicate (slower). A class never
    predicted in a replicate has no TL-ECE there; its interval uses the
    other replicates.

    References
    ----------
    Gupta & Ramdas (2022), ICLR, Fig. 4 (per-class TL-ECE with class
    proportions); Davison & Hinkley (1997), Sec. 5.2 (basic interval).

    Examples
    --------
    Labels drawn from P (calibrated), then half of class c's probability
    moved to class a: a is over-, c under-predicted, b stays calibrated.

    >>> rng = np.random.default_rng(0)
    >>> P = rng.dirichlet([1, 1, 1], 2000); y = (rng.random(2000)[:, None] > P.cumsum(1)).sum(1)
    >>> Q = P.copy(); Q[:, 2] = P[:, 2] / 2; Q[:, 0] = P[:, 0] + P[:, 2] / 2
    >>> r = class_ranking(y, Q, n_resamples=50, classes=["a", "b", "c"])
    >>> r["label"].tolist(), bool((r["low"] < r["high"]).all())
    (['a', 'c', 'b'], True)
    """
    _check_choice(metric, _RANKING_METRICS, "metric")
    y, P, w = check_multiclass(y_true, y_prob, sample_weight)
    n, K = P.shape
    labels = _labels(classes, K)
    scheme = get_scheme(binning)
    ones = np.ones(n) if w is None else w
    fast = _is_edge_based(scheme)
    evaluate = _fixed_cell_evaluator(metric, y, P, w, scheme) if fast else None

    def per_class(yy, PP, ww, redrawn=False):
        if evaluate is not None and not redrawn:  # the fixed-cell evaluator holds the observed labels
            return evaluate(ones if ww is None else ww)
        if metric == "top_label_ece":
            cells = _top_label_cells(yy, PP, ww, scheme)
            vals = _per_class_from_cells(cells)
            s = cells.stats
            return vals, float(np.abs(s.sum_true - s.sum_pred).sum() / s.weight.sum())
        vals = _classwise_values(yy, PP, ww, scheme, "l1")
        return vals, float(vals.mean())

    values, overall = per_class(y, P, w)
    low = high = np.full(K, np.nan)
    o_low = o_high = np.nan
    if n_resamples:
        draws = []

        def scalar(*arrays, sample_weight=None):
            # bootstrap() wants one number: return the overall metric and keep
            # every class's value of the same replicate on the side
            yy, PP = (y, P) if fast else arrays
            vals, tot = per_class(yy, PP, sample_weight)
            draws.append(vals)
            return tot

        arrays = (y,) if fast else (y, P)
        res = bootstrap(
            scalar, *arrays, sample_weight=w, n_resamples=n_resamples, confidence=confidence,
            random_state=random_state, progress=progress, resample="weights" if fast else "rows",
            method="bias_corrected", bounds=(0.0, 1.0),
        )
        dist = np.asarray(draws[1:])  # draws[0] is bootstrap's call on the full data
        # a class's value sums the |noisy gaps| of its bins, biased upward by the noise: the percentile interval
        # carried that bias twice and lay above the value (class-wise ECE at 500 rows: 0% coverage, see
        # docs/intervals.md); the basic interval removes the bias the bootstrap sees, as the panel's class-wise
        # ECE interval does ("bias_corrected"), and may lie below the value
        limits = [interval_from_distribution(dist[:, k], values[k], method="bias_corrected",
                                             confidence=confidence, bounds=(0.0, 1.0)) for k in range(K)]
        low = np.array([r.low for r in limits])
        high = np.array([r.high for r in limits])
        o_low, o_high = res.low, res.high

    redraw = _redrawn_values(metric, P, w, scheme, per_class) if n_reference else None
    p_value, p_adjusted = _class_reference(redraw, values, K, n_reference, random_state)

    if metric == "classwise_ece":
        count = np.bincount(y, minlength=K)
        wsum = np.bincount(y, weights=w, minlength=K)
        contribution = values / K
    else:
        c = np.argmax(P, axis=1)
        count = np.bincount(c, minlength=K)
        wsum = np.bincount(c, weights=w, minlength=K)
        contribution = wsum / wsum.sum() * values
    table = pd.DataFrame(
        {
            "class_index": np.arange(K),
            "label": labels,
            "value": values,
            "low": low,
            "high": high,
            "share": wsum / wsum.sum(),
            "n": count.astype(np.int64),
            "contribution": contribution,
            "p_value": p_value,
            "p_adjusted": p_adjusted,
        }
    )
    table = table.sort_values("value", ascending=False, na_position="last", kind="stable").reset_index(drop=True)
    table.insert(0, "rank", np.arange(1, K + 1))
    table.attrs.update(
        metric=metric, overall=float(overall), overall_low=float(o_low), overall_high=float(o_high),
        n_resamples=int(n_resamples), confidence=float(confidence), scheme=str(scheme),
        n_reference=int(n_reference), p_value=float(np.nanmin(p_adjusted)) if n_reference else float("nan"),
    )
    return table


def class_test_sentence(ranking: pd.DataFrame, alpha: float, *, panel: pd.DataFrame | None = None, escape=str,
                        strong=lambda t: t) -> str | None:
    """Which classes of a :func:`class_ranking` are beyond what a calibrated model shows, in one sentence; None
    without a reference (``n_reference=0``, or classes left untested: over the redraw budget, or a scan's ranking
    without fixed-edge bins).

    The first class of a ranking always has the largest value, noise or not: on calibrated 10-class models every
    class's bootstrap interval lay above 0 and the report called one "the worst calibrated class" on all of them.

    ``panel``: the metric panel shown beside the ranking. Classes are then named only where the panel's verdict
    on the ranking's metric (class-wise ECE) does not say "no evidence", a gate that keeps the page's verdicts at
    α together: the panel and the ranking, each at α, flagged 8.0% (6.0-10.5) of calibrated 10-class models on
    the Multiclass page (an audit, 600 models of 1,000 rows). A class is named only beside the panel's evidence
    (or where the panel has no verdict on it, e.g. its reference still to compute), and the ranking's minP
    adjustment still guards the classes named.

    >>> r = pd.DataFrame({"label": ["cat", "dog"], "value": [0.031, 0.012], "p_value": [1 / 881, 0.3],
    ...                   "p_adjusted": [3 / 881, 0.6]})
    >>> r.attrs.update(metric="classwise_ece", n_reference=880, p_value=3 / 881)
    >>> class_test_sentence(r, 0.05)
    'One-vs-rest ECE beyond what a calibrated model shows (the 2 classes judged together, α = 0.05): cat (0.031, p ≤ 0.0035).'
    >>> r2 = r.assign(p_value=[0.1, 0.3], p_adjusted=[0.2, 0.6]); r2.attrs.update(r.attrs, p_value=0.2)
    >>> class_test_sentence(r2, 0.05)
    "No class's one-vs-rest ECE is beyond what a calibrated model shows (the 2 classes judged together: smallest adjusted p = 0.2, α = 0.05); the largest is cat's (0.031)."
    """
    if "p_adjusted" not in ranking or not ranking["p_adjusted"].notna().any():
        return None
    key = ranking.attrs.get("metric", "classwise_ece")
    what = "one-vs-rest ECE" if key == "classwise_ece" else "top-label ECE"
    n_ref = int(ranking.attrs.get("n_reference", 0))
    tested = ranking[ranking["p_adjusted"].notna()]
    hits = tested[tested["p_adjusted"] <= alpha]
    k = len(tested)
    gate = None if panel is None else panel[panel["metric"] == key]
    if gate is not None and len(gate) and str(gate["verdict"].iloc[0]).startswith("no evidence"):
        # (no verdict there, e.g. a reference still to compute: the ranking's own test stands alone, a review)
        top = tested.iloc[0]
        label = gate["label"].iloc[0]
        return (f"No class is singled out: {label} finds no evidence of miscalibration among the tests shown "
                f"together, and classes are named only where it does, so that the ranking adds no false alarm "
                f"to the table's at α = {alpha:g}. The largest {what}, class {escape(str(top['label']))}'s "
                f"({top['value']:.3f}), is no evidence on its own.")
    if not len(hits):
        top = tested.iloc[0]
        smallest = "smallest adjusted " if k > 1 else ""  # the table beside it shows each class's own p-value
        return (f"No class's {what} is beyond what a calibrated model shows ({family_words(k, 'class')}: "
                f"{smallest}"
                f"{p_words(format_adjusted_p(tested['p_adjusted'].min(), tested['p_value'].min(), n_ref))}"
                f", α = {alpha:g}); the largest is {strong(escape(str(top['label'])))}'s ({top['value']:.3f}).")
    listed = "; ".join(f"{strong(escape(str(r.label)))} ({r.value:.3f}, "
                       f"{p_words(format_adjusted_p(r.p_adjusted, r.p_value, n_ref))})"
                       for r in hits.itertuples(index=False))
    return (f"{what[0].upper()}{what[1:]} beyond what a calibrated model shows ({family_words(k, 'class')}, "
            f"α = {alpha:g}): {listed}.")


#: Rows x redraws the per-class test draws at most by default (~15 s at 6e-8 s per row and redraw, measured on
#: 5,000 x 10 with uniform bins: a redraw is one bisection over the classes and one bincount per row).
CLASS_REFERENCE_BUDGET = 1 << 28


def class_reference_draws(n_classes: int, alpha: float = 0.05, n_rows: int = 0,
                          budget: int = CLASS_REFERENCE_BUDGET) -> int:
    """Label redraws for :func:`class_ranking`'s per-class test at ``alpha``; 0 where ``n_rows`` x redraws would
    exceed ``budget`` (no test then).

    The smallest adjusted p-value R redraws give is about (K + 1) / (R + 1), so R = 4 (K + 1) / alpha leaves room
    below alpha (at least 200).

    >>> class_reference_draws(3), class_reference_draws(10), class_reference_draws(100, 0.01)
    (320, 880, 40400)
    >>> class_reference_draws(10, 0.05, n_rows=10**6)   # 880 redraws of 10^6 rows: over the budget
    0
    """
    draws = max(200, math.ceil(4 * (int(n_classes) + 1) / float(alpha)))
    return draws if int(n_rows) * draws <= budget else 0


def _categorical_by_bisection(cum: np.ndarray, u: np.ndarray) -> np.ndarray:
    """``y* = #{k : cum[i, k] <= u_i * cum[i, -1]}`` by a vectorised bisection over the K columns: O(n log K)
    per draw instead of a comparison with every column (the same draws as :func:`_categorical_draw`)."""
    n, K = cum.shape
    rows = np.arange(n)
    thr = u * cum[:, -1]
    lo, hi = np.zeros(n, dtype=np.int64), np.full(n, K, dtype=np.int64)
    for _ in range(int(K).bit_length()):  # ceil(log2(K + 1)) halvings
        active = lo < hi
        mid = (lo + hi) // 2
        below = cum[rows, np.minimum(mid, K - 1)] <= thr
        lo = np.where(active & below, mid + 1, lo)
        hi = np.where(active & ~below, mid, hi)
    return np.minimum(lo, K - 1)


def _redrawn_values(metric, P, w, scheme, per_class):
    """``f(rng) -> per-class values`` of labels redrawn from P (a calibrated model).

    With bins that do not look at the labels (equal width, equal mass, custom edges) a row's cells do not depend on
    its label, so a redraw only moves counts: class-wise, the row adds its weight to its drawn class's cell (one
    bincount of n entries); top-label, to its predicted class's cell when the draw is that class (probability =
    the confidence). Label-driven schemes (PAVA, PAVA-BC) refit on every redraw.
    """
    n, K = P.shape
    ones = np.ones(n) if w is None else w
    fixed_cells = not getattr(scheme, "needs_labels", True)
    if metric == "top_label_ece":
        if fixed_cells:
            cells = _top_label_cells(np.zeros(n, dtype=np.int64), P, w, scheme)  # cells from P alone
            KB = K * cells.n_bins
            pred = np.bincount(cells.index, weights=ones * cells.h, minlength=KB)
            den = np.bincount(cells.c, weights=ones, minlength=K)

            def draw(rng):
                hit = rng.random(n) < cells.h
                num = np.abs(np.bincount(cells.index, weights=ones * hit, minlength=KB) - pred)
                with np.errstate(invalid="ignore", divide="ignore"):
                    return np.where(den > 0, num.reshape(K, -1).sum(axis=1) / den, np.nan)

            return draw
        c, h = _top(P)
        other = (c + 1) % K

        def draw(rng):  # only whether y* is the predicted class matters
            return per_class(np.where(rng.random(n) < h, c, other), P, w, redrawn=True)[0]

        return draw
    cum = np.cumsum(P, axis=1)
    if fixed_cells:
        cols = [scheme._fit(np.ascontiguousarray(P[:, k]), None, None).index for k in range(K)]
        B = max(int(c.max()) for c in cols) + 1
        cell = np.stack(cols, axis=1) + np.arange(K) * B  # (n, K): class k's cell of each row
        pred = np.bincount(cell.ravel(), weights=(ones[:, None] * P).ravel(), minlength=K * B)
        rows = np.arange(n)
        total = ones.sum()

        def draw(rng):
            ystar = _categorical_by_bisection(cum, rng.random(n))
            pos = np.bincount(cell[rows, ystar], weights=ones, minlength=K * B)
            return np.abs(pos - pred).reshape(K, B).sum(axis=1) / total

        return draw

    def draw(rng):
        return per_class(_categorical_by_bisection(cum, rng.random(n)), P, w, redrawn=True)[0]

    return draw


def _class_reference(redraw, values, K, n_reference, random_state):
    """Per-class p-values against labels redrawn from P, and their single-step minP adjustment (see class_ranking)."""
    if not n_reference:
        return np.full(K, np.nan), np.full(K, np.nan)
    if not (isinstance(n_reference, (int, np.integer)) and n_reference > 0):
        raise InputError(f"n_reference must be a non-negative integer, got {n_reference!r}.")
    # its own stream (spawned from the seed): the bootstrap intervals stay those of the same seed without it
    rng = np.random.default_rng(random_state).spawn(1)[0]
    null = np.empty((n_reference, K))
    for r in range(n_reference):  # one redraw of every row per pass (vectorised numpy), no per-row loop
        null[r] = redraw(rng)
    return class_p_values(null, values)


def class_p_values(null: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-class p-values of ``values`` (K,) against R redraws ``null`` (R, K) of a calibrated model, and their
    single-step minP adjustment (Westfall & Young 1993: each redraw's smallest per-class p-value is the null law of
    the smallest observed one; see :func:`class_ranking`). A class with a NaN value is not judged (NaN)."""
    n_reference, K = null.shape
    null = np.where(np.isfinite(null), null, -np.inf)  # a class never predicted in a redraw reaches nothing
    tested = np.isfinite(values)  # a class never predicted (top-label) has no value: not among the classes judged
    tol = 1e-12 * np.maximum(1.0, np.abs(np.nan_to_num(values)))  # round-off ties count as reaching
    reach = (null >= values - tol).sum(axis=0)
    p_value = np.where(tested, (1.0 + reach) / (n_reference + 1.0), np.nan)
    # each redraw's own per-class p-values, read as the observed one is: 1 + the other redraws reaching it, over
    # R + 1; then its smallest over the classes
    ranks = np.sort(null, axis=0)
    own = np.empty_like(null)
    for k in range(K):  # K searches of R values: loops over classes, not rows
        own[:, k] = (n_reference - np.searchsorted(ranks[:, k], null[:, k] - tol[k], side="left")) / (n_reference + 1.0)
    own[:, ~tested] = np.inf
    smallest = own.min(axis=1)
    p_adjusted = (1.0 + (smallest[None, :] <= p_value[:, None] + 1e-12).sum(axis=1)) / (n_reference + 1.0)
    return p_value, np.where(tested, np.minimum(p_adjusted, 1.0), np.nan)


def zoom_rows(labels, cnt, wt, sp, st) -> pd.DataFrame:
    """The rows of :func:`bin_zoom` from one bin's per-class sums (count, weight, sums of the confidence and of
    'top label correct', shape (K,)); shared with a scan's zoom (:func:`calibviz.scan.tables.bin_zoom`).

    Each class's accuracy gets Wilson's 95% interval on its row count (weighted: the rate with the rows as
    trials, an approximation), to show how far chance alone moves it: a walk-through read 'bird 0.35 against
    confidence 0.435' from ~100 rows with nothing to judge it by.
    """
    keep = np.flatnonzero(wt > 0)
    conf, acc = sp[keep] / wt[keep], st[keep] / wt[keep]
    n_rows = np.maximum(cnt[keep], 1).astype(np.float64)
    acc_low, acc_high = proportion_interval(acc * n_rows, n_rows, alpha=0.05)
    W = wt.sum()
    return pd.DataFrame({"class_index": keep, "label": [str(labels[i]) for i in keep],
                         "n": cnt[keep].astype(np.int64), "weight": wt[keep],
                         "share": wt[keep] / W if W > 0 else wt[keep], "confidence": conf, "accuracy": acc,
                         "accuracy_low": acc_low, "accuracy_high": acc_high, "gap": acc - conf})


def bin_zoom(y_true, y_prob, bin_id, *, binning=Uniform(15), classes=None, sample_weight=None) -> pd.DataFrame:
    """Inside one confidence bin: n, confidence and accuracy per predicted class.

    Parameters
    ----------
    y_true : array-like of shape (n,)
    y_prob : array-like of shape (n, K)
    bin_id : int
        0-based bin of the scheme (the ``bin`` column of
        :func:`top_label_table`); the paper's "bin 6" of 10 is ``bin_id=5``.
    binning : Scheme, str or edges, default Uniform(15)
        Fitted on all top-label confidences, as in :func:`top_label_table`.
    classes : sequence of K labels, optional
    sample_weight : array-like of shape (n,), optional

    Returns
    -------
    pandas.DataFrame
        One row per predicted class present in the bin, in class order:
        ``class_index``, ``label``, ``n``, ``weight``, ``share`` (of the
        bin's weight), ``confidence``, ``accuracy``, ``accuracy_low``,
        ``accuracy_high`` (Wilson's 95% interval on the class's rows; with
        weights an approximation), ``gap`` (accuracy - confidence). ``attrs``: ``bin``, ``lower``, ``upper``, ``n``,
        ``confidence`` and ``accuracy`` (the star), ``deviation`` (Delta_b)
        and ``plus``.

    References
    ----------
    Gupta & Ramdas (2022), ICLR, Fig. 1b (class-wise view of one bin).

    Examples
    --------
    >>> P = [[0.6, 0.2, 0.2]] * 5 + [[0.2, 0.6, 0.2]] * 5
    >>> y = [0, 2, 2, 2, 2, 1, 1, 1, 1, 1]
    >>> z = bin_zoom(y, P, 6, binning=Uniform(10), classes="abc")
    >>> z[["label", "n", "confidence", "accuracy"]].round(6).to_dict("list")
    {'label': ['a', 'b'], 'n': [5, 5], 'confidence': [0.6, 0.6], 'accuracy': [0.2, 1.0]}
    """
    y, P, w = check_multiclass(y_true, y_prob, sample_weight)
    K = P.shape[1]
    labels = _labels(classes, K)
    cells = _top_label_cells(y, P, w, get_scheme(binning), fit="pooled")
    B = cells.n_bins
    if isinstance(bin_id, (bool, np.bool_)) or not isinstance(bin_id, (int, np.integer)) or not 0 <= bin_id < B:
        raise InputError(f"bin_id must be an integer between 0 and {B - 1} (the 'bin' column of top_label_table), got {bin_id!r}.")
    s = cells.stats
    col = lambda a: cells.grid(a)[:, bin_id]  # noqa: E731 - column of a (K, B) grid
    cnt, wt, sp, st = col(s.count), col(s.weight), col(s.sum_pred), col(s.sum_true)
    table = zoom_rows(labels, cnt, wt, sp, st)
    W = wt.sum()
    star_c = sp.sum() / W if W > 0 else np.nan
    star_a = st.sum() / W if W > 0 else np.nan
    dev = _bin_deviation(cells)[0][bin_id]
    table.attrs.update(
        bin=int(bin_id), lower=float(cells.bins.edges[bin_id]), upper=float(cells.bins.edges[bin_id + 1]),
        n=int(cnt.sum()), confidence=float(star_c), accuracy=float(star_a), deviation=float(dev),
        plus=float(_plus(star_c, star_a, dev)),
    )
    return table
