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

import warnings

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
from .metrics.resampling import bootstrap
from .reduce import _class_names, _classwise, _top_label
from .summary import reliability_table
from .validation import check_multiclass

__all__ = ["top_label_table", "per_class_top_label_tables", "classwise_tables", "class_ranking", "readable_class_ranking",
           "bin_zoom"]

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
        t = reliability_table(view.y, view.p, binning=binning, alpha=alpha, sample_weight=view.w, test=test)
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
        one-vs-rest ECE; the mean over classes is CW-ECE).

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
        t = reliability_table(view.y, view.p, binning=binning, alpha=alpha, sample_weight=view.w, test=test)
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
        "share": "Share of rows", "n": "Rows", "contribution": "Contribution to the overall error"})


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

    Returns
    -------
    pandas.DataFrame
        One row per class, worst first (NaN last): ``rank`` (1 = worst),
        ``class_index``, ``label``, ``value``, ``low``, ``high`` (percentile
        bootstrap interval), ``share`` (class-wise: prevalence of the class;
        top-label: share of rows predicted as the class), ``n`` (rows of the
        class / predicted as it) and ``contribution`` (the class's part of
        the overall metric: value/K resp. share*value). ``attrs``: ``metric``,
        ``overall``, ``overall_low``, ``overall_high``, ``n_resamples``,
        ``confidence``, ``scheme``.

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
    proportions); Efron & Tibshirani (1993), percentile interval.

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

    def per_class(yy, PP, ww):
        if evaluate is not None:
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
        )
        dist = np.asarray(draws[1:])  # draws[0] is bootstrap's call on the full data
        q = [(1 - confidence) / 2, (1 + confidence) / 2]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN column: class never predicted
            low, high = np.nanquantile(dist, q, axis=0)
        o_low, o_high = res.low, res.high

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
        }
    )
    table = table.sort_values("value", ascending=False, na_position="last", kind="stable").reset_index(drop=True)
    table.insert(0, "rank", np.arange(1, K + 1))
    table.attrs.update(
        metric=metric, overall=float(overall), overall_low=float(o_low), overall_high=float(o_high),
        n_resamples=int(n_resamples), confidence=float(confidence), scheme=str(scheme),
    )
    return table


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
        bin's weight), ``confidence``, ``accuracy``, ``gap`` (accuracy -
        confidence). ``attrs``: ``bin``, ``lower``, ``upper``, ``n``,
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
    keep = np.flatnonzero(wt > 0)
    conf, acc = sp[keep] / wt[keep], st[keep] / wt[keep]
    table = pd.DataFrame(
        {
            "class_index": keep,
            "label": [labels[i] for i in keep],
            "n": cnt[keep].astype(np.int64),
            "weight": wt[keep],
            "share": wt[keep] / wt.sum() if wt.sum() > 0 else wt[keep],
            "confidence": conf,
            "accuracy": acc,
            "gap": acc - conf,
        }
    )
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
