"""Honest before/after: out-of-fold recalibration and the metric table before, after and their difference.

A map evaluated on the rows it was fitted on looks better than it is (an
isotonic map on distinct scores reproduces its labels). :func:`cross_fit`
splits the rows into folds, fits the map on all folds but one and predicts
the held-out fold, so every "after" prediction comes from a map that never
saw its row; a user-given split (calibration rows vs test rows) is honoured
instead when present. :func:`recalibration_table` then reads every metric
before and after with its bootstrap interval and calibrated-model reference
(:func:`calibviz.panel.metric_panel`) and the difference with a paired
bootstrap interval; :func:`loss_gained` gives the proper-score view
("calibration error as loss gained", Berta et al. 2025).
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .. import metrics as M
from ..errors import InputError
from ..metrics.intervals import difference_span
from ..metrics.resampling import difference_interval
from ..panel import (BINARY_METRICS, MULTICLASS_METRICS, ZERO_WHEN_CALIBRATED, PanelConfig, format_difference,
                     format_interval, format_value, judged_together, metric_panel)
from ..validation import check_binary, check_multiclass, check_weights
from ._base import Recalibrator

__all__ = ["CrossFit", "GroupedCrossFit", "cross_fit_by", "cross_fit", "fold_indices", "recalibration_table", "loss_gained", "split_mask", "map_curves"]


@dataclass(eq=False)
class CrossFit:
    """Out-of-fold recalibrated predictions and the maps that made them.

    Attributes
    ----------
    method : str
        The recalibrator's name.
    y_prob : ndarray of shape (n,) or (n, K)
        Recalibrated predictions of the evaluated rows (each from a map not
        fitted on it); NaN on calibration-only rows of a user split.
    evaluated : ndarray of bool, shape (n,)
        Rows with an out-of-fold prediction (all rows when cross-fitting; the
        test rows of a user split).
    fold : ndarray of int, shape (n,)
        Fold of each row (0..n_splits-1); -1 for calibration rows of a user split.
    maps : list of Recalibrator
        The map fitted for each fold (``maps[f]`` predicted the rows with ``fold == f``).
    fit_rows : list of ndarray
        The row indices each map was fitted on (``fold != f``, or the calibration rows).
    final : Recalibrator
        The map fitted on every calibration row: the one to export and apply
        to new data (its quality is what the out-of-fold predictions measure).
    scheme : str
        "cross-fit (5 folds)" or "user split (n calibration rows)".
    interval : (ndarray, ndarray) or None
        Venn-Abers: the out-of-fold interval (p0, p1) of each evaluated row
        (NaN elsewhere): shape (n,) for binary data and the top-label and
        confidence views, (n, K) class-wise (:meth:`VennAbers.predict_interval`).
    notes : tuple of str
        What a reader of the maps should know (:meth:`warnings`): rows whose observed class has probability 0
        exactly, which pull the maps fitted on log-probabilities.
    """

    method: str
    y_prob: np.ndarray
    evaluated: np.ndarray
    fold: np.ndarray
    maps: list = field(repr=False)
    fit_rows: list = field(repr=False)
    final: Recalibrator = field(repr=False)
    scheme: str = ""
    interval: tuple | None = field(default=None, repr=False)
    notes: tuple = ()

    @property
    def n_evaluated(self) -> int:
        return int(self.evaluated.sum())

    def warnings(self) -> list[str]:
        """One sentence per note (as :meth:`GroupedCrossFit.warnings`)."""
        return list(self.notes)


#: Recalibrators fitted on log-probabilities (the log loss of a logistic or softmax model): a probability of 0 given
#: to the observed class is clipped to machine epsilon there, a loss of 36 per row.
_LOG_FITS = ("platt", "beta", "temperature")


def zero_probability_notes(method: str, y: np.ndarray, P: np.ndarray, w=None, reduction: str | None = None,
                           label: str | None = None) -> tuple:
    """The note of rows whose observed outcome has probability exactly 0 in a fit on log-probabilities.

    Such a row costs log(2^-52), a loss of 36, in the fit's objective (an audit: 26 of 5,000 rows of a calibrated
    10-class model given to 2 decimals moved the temperature from 1.00 to 1.24 and worsened its confidence ECE
    from 0.016 to 0.069, while the log loss read "better after"): said, not hidden. Which rows count is what the
    map fits: binary p against y, temperature scaling P[y], the top-label and confidence reductions of a binary
    map (``reduction``) the top probability against "the prediction is right" (a top probability of 1 that was
    wrong), the class-wise one each class's column (P[y] = 0). Rows of weight 0 do not count.

    >>> zero_probability_notes("platt", np.array([1, 0, 1]), np.array([0.0, 0.2, 0.9]))[0][:57]
    '1 row gives the observed outcome a probability of exactly'
    >>> zero_probability_notes("isotonic", np.array([1, 0, 1]), np.array([0.0, 0.2, 0.9]))
    ()
    """
    if method not in _LOG_FITS:
        return ()
    if P.ndim == 1:
        zero = np.where(y == 1, P, 1.0 - P) == 0
    elif reduction in ("top_label", "confidence"):
        zero = (P.max(axis=1) == 1) & (P.argmax(axis=1) != y)
    else:
        zero = P[np.arange(len(y)), y] == 0
    if w is not None:
        zero &= w > 0
    k = int(zero.sum())
    if not k:
        return ()
    name = label or method  # the recalibrator's own label ("Platt scaling")
    return (f"{k:,} row{'s' if k != 1 else ''} give{'' if k != 1 else 's'} the observed outcome a probability of "
            f"exactly 0 (predictions rounded to a few decimals?): {name} is fitted on log-probabilities, where each "
            "such row weighs as a loss of 36, and they pull its map and the log loss before and after. Export the "
            "predictions with more decimals, or compare with isotonic recalibration, which does not read logs.",)


def split_mask(split, n: int) -> np.ndarray:
    """True for calibration rows of a user-given split column.

    Accepted values: booleans or 0/1 (True/1 = calibration row), or strings
    "calibration" / "cal" / "fit" / "train" and "test" / "eval" / "holdout"
    (any case).

    Examples
    --------
    >>> split_mask(["cal", "test", "Calibration"], 3).tolist()
    [True, False, True]
    """
    arr = pd.Series(np.asarray(split, dtype=object) if not isinstance(split, pd.Series) else split.to_numpy(
        dtype=object))
    if len(arr) != n:
        raise InputError(f"the split column has {len(arr)} entries but there are {n} rows.")
    words = {"calibration": True, "cal": True, "calib": True, "fit": True, "train": True, "true": True, "1": True,
             "test": False, "eval": False, "evaluation": False, "holdout": False, "false": False, "0": False}
    text = arr.map(lambda v: str(v).strip().lower() if not isinstance(v, (bool, np.bool_)) else str(bool(v)).lower())
    text = text.map(lambda s: s[:-2] if s.endswith(".0") else s)
    mask = text.map(words)
    bad = mask.isna()
    if bad.any():
        shown = ", ".join(map(repr, pd.unique(arr[bad])[:5]))
        raise InputError(f"the split column must mark each row as calibration or test (True/False, 1/0, "
                         f"'calibration'/'test'); it holds {shown}.")
    out = mask.to_numpy(dtype=bool)
    if out.all() or not out.any():
        raise InputError("the split column must mark some rows as calibration and some as test rows; "
                         f"it marks all {n} rows as {'calibration' if out.all() else 'test'}.")
    return out


def fold_indices(y, n_splits: int = 5, *, groups=None, random_state=0) -> np.ndarray:
    """Fold of every row: stratified by label, or by groups (all rows of a group in one fold).

    Parameters
    ----------
    y : ndarray of shape (n,)
        Labels (class indices); folds hold each class in nearly equal shares.
    n_splits : int, default 5
    groups : array-like of shape (n,), optional
        Rows of one group (a patient, a customer) never straddle folds; groups
        are shuffled and dealt to folds by cumulative size.
    random_state : int, default 0

    Returns
    -------
    ndarray of int64, shape (n,)

    Examples
    --------
    >>> import numpy as np
    >>> f = fold_indices(np.array([0] * 6 + [1] * 4), 2, random_state=0)
    >>> np.bincount(f).tolist(), np.bincount(f[6:]).tolist()
    ([5, 5], [2, 2])
    """
    n = len(y)
    rng = np.random.default_rng(random_state)
    if groups is not None:
        codes, uniq = pd.factorize(pd.Series(np.asarray(groups, dtype=object)), use_na_sentinel=False)
        if len(codes) != n:
            raise InputError(f"groups has {len(codes)} entries but there are {n} rows.")
        G = len(uniq)
        if G < n_splits:
            raise InputError(f"groups has {G} distinct values, fewer than n_splits = {n_splits}; lower n_splits "
                             "or give finer groups.")
        sizes = np.bincount(codes, minlength=G)
        order = rng.permutation(G)
        before = np.cumsum(sizes[order]) - sizes[order]
        gfold = np.empty(G, dtype=np.int64)
        gfold[order] = np.minimum((before * n_splits) // n, n_splits - 1)
        return gfold[codes]
    perm = rng.permutation(n)
    order = perm[np.argsort(np.asarray(y)[perm], kind="stable")]
    fold = np.empty(n, dtype=np.int64)
    fold[order] = np.arange(n) % n_splits
    return fold


def cross_fit(method, y_true, y_prob, *, n_splits: int = 5, random_state=0, sample_weight=None, groups=None,
              split=None, **options) -> CrossFit:
    """Out-of-fold recalibrated predictions: no row is predicted by a map fitted on it.

    Parameters
    ----------
    method : str or Recalibrator
        A name of :data:`calibviz.recalibration.RECALIBRATORS` or an (unfitted) recalibrator.
    y_true : array-like of shape (n,)
        Labels in {0, 1}, or class indices.
    y_prob : array-like of shape (n,) or (n, K)
    n_splits : int, default 5
        Folds (>= 2). Each fold's predictions come from a map fitted on the
        other folds.
    random_state : int, default 0
        Seed of the fold assignment.
    sample_weight : array-like of shape (n,), optional
        Weights (a row of weight 0 is absent from every fit).
    groups : array-like of shape (n,), optional
        Keeps the rows of a group in one fold.
    split : array-like of shape (n,), optional
        A user-given split (True / "calibration" = calibration row, False /
        "test" = test row): the map is fitted on the calibration rows and
        only the test rows are evaluated (``n_splits`` is then unused).
    **options
        Options of the method (``get_recalibrator(method, **options)``).

    Returns
    -------
    CrossFit

    References
    ----------
    Cross-fitting as in Chernozhukov et al. (2018), Econometrics Journal 21
    (sample splitting so that a fitted nuisance never meets its own rows);
    Gupta & Ramdas (2022), Sec. 4 (recalibration on held-out data).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=1000); y = rng.uniform(size=1000) < p ** 2
    >>> cf = cross_fit("isotonic", y, p, n_splits=5)
    >>> cf.y_prob.shape, cf.n_evaluated, [len(r) for r in cf.fit_rows]
    ((1000,), 1000, [800, 800, 800, 800, 800])
    >>> bool(np.all([not np.isin(np.flatnonzero(cf.fold == f), rows).any() for f, rows in enumerate(cf.fit_rows)]))
    True
    """
    from . import get_recalibrator

    proto = get_recalibrator(method, **options)
    if np.ndim(y_prob) == 2:
        y, P, _ = check_multiclass(y_true, y_prob, None, drop_zero_weight=False)
    else:
        y, P, _ = check_binary(y_true, y_prob, None, drop_zero_weight=False)
    w = check_weights(sample_weight, y.shape[0])
    cf = _cross_fit(proto, y, P, w, n_splits=n_splits, random_state=random_state, groups=groups, split=split)
    cf.notes = zero_probability_notes(proto.name, y, P, w, None if proto.native_multiclass else proto.multiclass,
                                      label=proto.label)
    return cf


def _cross_fit(proto, y, P, w, *, n_splits, random_state, groups, split) -> CrossFit:
    """:func:`cross_fit` on checked arrays."""
    n, multi = y.shape[0], P.ndim == 2
    present = np.unique(y if w is None else y[w > 0])
    if not multi and present.size < 2:  # every map would learn "always this outcome" (Platt: no maximum at all)
        raise InputError(f"a recalibration map learns the outcome rate at each prediction and needs rows of both "
                         f"outcomes; only y = {int(present[0]) if present.size else 0} occurs in these labels.")
    if split is not None:
        cal = split_mask(split, n)
        if w is not None and not (w[cal] > 0).any():
            raise InputError("every calibration row of the split has weight 0; nothing to fit the map on.")
        rows = np.flatnonzero(cal)
        test = np.flatnonzero(~cal)
        final = _fit(proto, P, y, w, rows)
        out = np.full(P.shape, np.nan)
        out[test] = final.predict(P[test])
        interval = _interval(final, P, [(test, final)], multi)
        fold = np.where(cal, -1, 0)
        return CrossFit(method=proto.name, y_prob=out, evaluated=~cal, fold=fold, maps=[final], fit_rows=[rows],
                        final=final, scheme=f"user split ({len(rows):,} calibration rows, {len(test):,} test rows)",
                        interval=interval)
    if isinstance(n_splits, bool) or not isinstance(n_splits, numbers.Integral) or n_splits < 2:
        raise InputError(f"n_splits must be an integer >= 2, got {n_splits!r}.")
    if n_splits > n:
        raise InputError(f"n_splits = {n_splits} folds exceed the {n} rows; lower it (command line: --cross-fit).",
                         ui_message=f"{n_splits} cross-fitting folds exceed the {n} rows; choose fewer folds.")
    fold = fold_indices(y, int(n_splits), groups=groups, random_state=random_state)
    if multi and proto.name == "temperature" and proto.options.get("scaling") == "temperature":
        return _cross_fit_temperature(proto, P, y, w, fold, int(n_splits))
    out = np.empty(P.shape)
    maps, fit_rows = [], []
    for f in range(int(n_splits)):
        held = fold == f
        rows = np.flatnonzero(~held)
        m = _fit(proto, P, y, w, rows)
        out[held] = m.predict(P[held])
        maps.append(m)
        fit_rows.append(rows)
    final = _fit(proto, P, y, w, np.arange(n))
    interval = _interval(final, P, [(np.flatnonzero(fold == f), m) for f, m in enumerate(maps)], multi)
    return CrossFit(method=proto.name, y_prob=out, evaluated=np.ones(n, dtype=bool), fold=fold, maps=maps,
                    fit_rows=fit_rows, final=final, scheme=f"cross-fit ({int(n_splits)} folds)", interval=interval)


@dataclass(eq=False)
class GroupedCrossFit:
    """Recalibration per level of a categorical column: one :class:`CrossFit` (one map) per level.

    Attributes
    ----------
    method, y_prob, evaluated, fold, scheme
        As :class:`CrossFit`, assembled over the levels. Rows of a level
        left out (too few rows) keep their original prediction.
    by : str
        The column's name.
    parts : dict
        ``{level: CrossFit}`` of the levels that were recalibrated.
    skipped : dict
        ``{level: rows}`` of the levels with fewer than ``min_rows`` rows:
        left as they are, with a warning (a map fitted on a handful of rows
        is noise).
    """

    method: str
    y_prob: np.ndarray
    evaluated: np.ndarray
    fold: np.ndarray
    by: str
    parts: dict = field(repr=False)
    skipped: dict
    scheme: str = ""
    interval: tuple | None = field(default=None, repr=False)

    @property
    def n_evaluated(self) -> int:
        return int(self.evaluated.sum())

    @property
    def maps(self) -> list:
        return [m for cf in self.parts.values() for m in cf.maps]

    def to_dict(self) -> dict:
        """The per-level maps as one JSON object ``{format, by, levels: {level: map}}``."""
        return {"format": "calibviz.recalibration.by", "version": 1, "by": self.by,
                "levels": {str(k): cf.final.to_dict() for k, cf in self.parts.items()},
                "unrecalibrated_levels": [str(k) for k in self.skipped]}

    def warnings(self) -> list[str]:
        """One sentence per level left out, and the notes of the levels' maps."""
        return ([f"{self.by} = {level!s}: only {n:,} rows, too few to fit a map; its predictions are left as they "
                 "are." for level, n in self.skipped.items()]
                + [f"{self.by} = {level!s}: {note}" for level, cf in self.parts.items() for note in cf.notes])


def cross_fit_by(method, y_true, y_prob, by, *, name: str = "group", min_rows: int = 100, **options) -> GroupedCrossFit:
    """:func:`cross_fit` separately within each level of a categorical column (one map per level).

    Parameters
    ----------
    method, y_true, y_prob
        As :func:`cross_fit`.
    by : array-like of shape (n,)
        The column (any values; missing values form a level of their own).
    name : str, default "group"
        The column's name, for messages and the JSON map.
    min_rows : int, default 100
        Levels with fewer rows (of positive weight) keep their predictions and are listed in ``skipped``.
    **options
        Passed to :func:`cross_fit` (``n_splits``, ``random_state``, ``sample_weight``, ``split``, ...) and the method.

    Returns
    -------
    GroupedCrossFit

    References
    ----------
    Kelly & Smyth (2023): a model calibrated on average can be miscalibrated within subgroups; a map per
    subgroup recalibrates each.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0); p = rng.uniform(size=900); g = np.repeat(["a", "b", "c"], [450, 420, 30])
    >>> y = rng.uniform(size=900) < np.where(g == "a", p ** 2, p)
    >>> r = cross_fit_by("platt", y, p, g, name="ward")
    >>> sorted(r.parts), r.skipped, r.warnings()[0][:26]
    (['a', 'b'], {'c': 30}, 'ward = c: only 30 rows, to')
    """
    multi = np.ndim(y_prob) == 2
    P = np.asarray(y_prob, dtype=np.float64)
    y = np.asarray(y_true)
    n = P.shape[0]
    codes, levels = pd.factorize(pd.Series(np.asarray(by, dtype=object)), use_na_sentinel=False)
    if len(codes) != n:
        raise InputError(f"the column {name!r} has {len(codes)} entries but there are {n} rows.")
    w = options.pop("sample_weight", None)
    w = check_weights(w, n)
    split = options.pop("split", None)
    split = None if split is None else split_mask(split, n)
    groups = options.pop("groups", None)
    out = P.copy()
    evaluated = np.ones(n, dtype=bool) if split is None else ~split
    fold = np.full(n, -1, dtype=np.int64)
    parts, skipped = {}, {}
    proto_name = None
    p0 = p1 = None
    for j, level in enumerate(levels):
        rows = np.flatnonzero(codes == j)
        n_rows = int(rows.size if w is None else (w[rows] > 0).sum())
        sub_split = None if split is None else split[rows]
        if n_rows < min_rows or (sub_split is not None and (sub_split.all() or not sub_split.any())):
            skipped[level] = n_rows
            continue
        cf = cross_fit(method, y[rows], P[rows], sample_weight=None if w is None else w[rows],
                       groups=None if groups is None else np.asarray(groups, dtype=object)[rows],
                       split=sub_split, **options)
        proto_name = cf.method
        ev = rows[cf.evaluated]
        out[ev] = cf.y_prob[cf.evaluated]
        fold[rows] = cf.fold
        parts[level] = cf
        if cf.interval is not None:
            if p0 is None:
                shape = (n,) + cf.interval[0].shape[1:]
                p0, p1 = np.full(shape, np.nan), np.full(shape, np.nan)
            p0[rows], p1[rows] = cf.interval
    if not parts:
        raise InputError(f"no level of {name!r} has {min_rows} rows or more (and, with a split, both calibration and "
                         "test rows); recalibrate without --by or lower min_rows.")
    if split is not None:
        out[split] = np.nan
    first = next(iter(parts.values()))
    return GroupedCrossFit(method=proto_name, y_prob=out, evaluated=evaluated, fold=fold, by=name, parts=parts,
                           skipped=skipped, scheme=f"{first.scheme.split(' (')[0]}, one map per {name} "
                                                   f"({len(parts)} levels)", interval=None if p0 is None else (p0, p1))


def _interval(proto, P, parts, multi):
    """Out-of-fold Venn-Abers intervals (p0, p1) of the evaluated rows (NaN elsewhere), else None.

    Binary and top-label / confidence views: shape (n,); class-wise: (n, K) (see VennAbers.predict_interval).
    """
    if not hasattr(proto, "predict_interval") or (multi and proto.multiclass == "pairwise"):
        return None
    shape = P.shape if (multi and proto.multiclass == "classwise") else P.shape[:1]
    p0, p1 = np.full(shape, np.nan), np.full(shape, np.nan)
    for rows, m in parts:
        p0[rows], p1[rows] = m.predict_interval(P[rows])
    return p0, p1


def _cross_fit_temperature(proto, P, y, w, fold, n_splits) -> CrossFit:
    """Temperature scaling's folds share one matrix of log-probabilities and its data passes.

    Every fold's objective (the log loss on the other folds' rows) and the final one are sums of the same
    per-row terms, so :func:`calibviz.recalibration.parametric.fit_inverse_temperatures` fits all of them from
    shared passes (two at 10^6 x 100 instead of two per map); the maps equal those of fitting each fold's rows
    on their own (tested to 1e-10). The out-of-fold predictions are one more chunked pass over the same matrix.
    """
    from .parametric import _log_probs, _softmax_shifted, fit_inverse_temperatures

    d = _log_probs(P)
    d -= d.max(axis=1, keepdims=True)
    if w is not None:
        for f in range(n_splits):
            if (w[fold != f] > 0).sum() < 2:
                raise InputError("need at least 2 rows of positive weight to fit temperature scaling in each fold.")
    betas = fit_inverse_temperatures(d, y, w, groups=fold, n_groups=n_splits)
    maps = []
    for beta in betas:
        m = proto.clone()
        m.kind_, m.n_classes_ = "multiclass", int(P.shape[1])
        m.state_ = {"multiclass": proto._temperature_from_beta(float(beta))}
        maps.append(m)
    final = maps.pop()
    row_beta = np.array([1.0 / m.state_["multiclass"]["temperature"] for m in maps])[fold]
    out = _softmax_shifted(d, row_beta, out=d)  # d is ours and no longer needed: overwritten in place
    fit_rows = [np.flatnonzero(fold != f) for f in range(n_splits)]
    return CrossFit(method=proto.name, y_prob=out, evaluated=np.ones(P.shape[0], dtype=bool), fold=fold, maps=maps,
                    fit_rows=fit_rows, final=final, scheme=f"cross-fit ({n_splits} folds)")


def _fit(proto: Recalibrator, P, y, w, rows) -> Recalibrator:
    m = proto.clone()
    return m.fit(P[rows], y[rows], None if w is None else w[rows])


# ---------------------------------------------------------------------------- proper scores (binary and multiclass)


def _score(kind: str, y, P, w) -> float:
    """Mean Brier score or log loss; multiclass: the sum over classes (Brier) / -log P(true class)."""
    if P.ndim == 1:
        return M.brier_score(y, P, sample_weight=w) if kind == "brier" else M.log_loss(y, P, sample_weight=w)
    rows = np.arange(P.shape[0])
    if kind == "brier":
        per = (P ** 2).sum(axis=1) - 2 * P[rows, y] + 1.0
    else:
        per = -np.log(np.clip(P[rows, y], M.scores.LOG_LOSS_EPS, 1.0))
    return float(np.average(per, weights=w))


def loss_gained(y_true, y_before, y_after, *, score: str = "brier", sample_weight=None, n_resamples: int = 200,
                confidence: float = 0.95, random_state=0) -> dict:
    """The proper score before and after recalibration and their difference, with a paired bootstrap interval.

    Parameters
    ----------
    y_true : array-like of shape (n,)
    y_before, y_after : array-like of shape (n,) or (n, K)
        Predictions before recalibration and the out-of-fold recalibrated ones, on the same rows.
    score : {"brier", "log_loss"}
        Multiclass: the Brier score summed over classes and the log loss of the true class.
    sample_weight : array-like of shape (n,), optional
    n_resamples : int, default 200
        Rows are resampled jointly for before and after (a paired bootstrap,
        so the noise the two share cancels); 0 skips the interval.
    confidence : float, default 0.95
    random_state : int, default 0

    Returns
    -------
    dict
        ``score, before, after, gained`` (= before - after; positive when
        recalibration helps), ``low, high`` (interval of ``gained``) and
        ``share`` (gained / before).

    References
    ----------
    E. Berta, D. Holzmüller, M. I. Jordan & F. Bach (2025), "Rethinking early
    stopping: refine, then calibrate" / probmetrics: calibration error as
    the loss a recalibration gains; A. H. Murphy (1973) for proper scores.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000); y = rng.uniform(size=2000) < p
    >>> r = loss_gained(y, np.clip(1.3 * p - 0.15, 0, 1), p, n_resamples=50)
    >>> r["gained"] > 0 and r["low"] > 0
    True
    """
    if score not in ("brier", "log_loss"):
        raise InputError(f"score must be 'brier' or 'log_loss', got {score!r}.")
    multi = np.ndim(y_before) == 2
    if multi:
        y, Pb, w = check_multiclass(y_true, y_before, sample_weight)
        _, Pa, _ = check_multiclass(y_true, y_after, sample_weight)
    else:
        y, Pb, w = check_binary(y_true, y_before, sample_weight)
        _, Pa, _ = check_binary(y_true, y_after, sample_weight)
    before, after = _score(score, y, Pb, w), _score(score, y, Pa, w)
    low = high = np.nan
    if n_resamples:
        res = M.bootstrap(lambda yy, a, b, sample_weight=None: _score(score, yy, a, sample_weight)
                          - _score(score, yy, b, sample_weight),
                          y, Pb, Pa, sample_weight=w, n_resamples=n_resamples, confidence=confidence,
                          random_state=random_state)
        low, high = res.low, res.high
    return {"score": score, "before": before, "after": after, "gained": before - after, "low": low, "high": high,
            "share": (before - after) / before if before > 0 else np.nan}


# ---------------------------------------------------------------------------- the before/after table


def _as_results(results) -> dict:
    if isinstance(results, (CrossFit, GroupedCrossFit)):
        return {results.method: results}
    if not isinstance(results, dict) or not results or not all(isinstance(v, (CrossFit, GroupedCrossFit))
                                                               for v in results.values()):
        raise InputError("results must be a CrossFit or a dict {name: CrossFit} (from cross_fit).")
    return results


#: The metrics of :func:`recalibration_table` when none are given (a page with none selected shows these).
DEFAULT_METRICS = {"binary": ("ece", "ace", "tce", "smooth_ece"),
                   "multiclass": ("confidence_ece", "top_label_ece", "classwise_ece")}


def recalibration_table(y_true, y_prob, results, *, metrics=None, config: PanelConfig = PanelConfig(),
                        sample_weight=None, n_resamples: int = 200, n_reference: int = 200, confidence: float = 0.95,
                        random_state=0, scores=("brier", "log_loss"), progress=None) -> pd.DataFrame:
    """Every metric before and after recalibration (out of fold), with intervals, references and differences.

    Parameters
    ----------
    y_true : array-like of shape (n,)
    y_prob : array-like of shape (n,) or (n, K)
        The predictions before recalibration.
    results : CrossFit or dict of {name: CrossFit}
        From :func:`cross_fit` on the same rows, one per method.
    metrics : sequence of str, optional
        Registry keys (:mod:`calibviz.panel`); default ECE, ACE, TCE, smECE
        (binary) or confidence, top-label and class-wise ECE (multiclass).
    config : PanelConfig
    sample_weight : array-like of shape (n,), optional
    n_resamples : int, default 200
        Bootstrap resamples of the intervals (before, after, and the paired
        difference); 0 skips them.
    n_reference : int or dict, default 200
        Label redraws of the calibrated-model reference of before and after;
        ``{metric: redraws}`` gives each metric its own (a dashboard's, so
        that "before" equals its other pages' panels).
    confidence : float, default 0.95
    random_state : int, default 0
    scores : sequence of {"brier", "log_loss"}
        Proper scores added as "loss gained" rows: their difference is the
        loss gained by recalibration. Binary: rows of the metric panel (with
        intervals and the calibrated reference); multiclass: from
        :func:`loss_gained` (Brier summed over classes, log loss of the true
        class; difference interval only).
    progress : callable(done, total), optional

    Returns
    -------
    pandas.DataFrame
        One row per (method, metric): ``method, metric, label, unit, before,
        before_low, before_high, before_null_low, before_null_high,
        before_p_value, before_n_redraws, after, after_low, after_high,
        after_null_low, after_null_high, after_p_value, after_n_redraws,
        after_verdict, diff`` (before - after:
        positive = better after, for every metric where lower is better)
        ``, diff_low, diff_high, improved`` (the difference interval lies
        above 0), ``n_evaluated, scheme``, ``after_note`` (why an "after"
        value lies outside its own interval, as :func:`metric_panel` says)
        and ``reading``. Evaluated on the
        rows each :class:`CrossFit` predicted out of fold. The difference
        interval resamples rows jointly (paired bootstrap) with the fitted
        maps held fixed: the fold-to-fold variation of the maps is the
        cross-fitting's part, not the bootstrap's.

    References
    ----------
    Bröcker & Smith (2007) (consistency resampling, the reference);
    Efron & Tibshirani (1993), Ch. 13 (percentile and basic intervals of
    the paired difference; their hull, as :func:`calibviz.compare.compare_models`);
    Berta et al. (2025) (loss gained).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(0.02, 0.98, 3000); y = rng.uniform(size=3000) < p ** 2
    >>> t = recalibration_table(y, p, cross_fit("platt", y, p), metrics=("ece",), n_resamples=20, n_reference=20)
    >>> t[["method", "metric"]].values.tolist(), bool(t.loc[0, "after"] < t.loc[0, "before"])
    ([['platt', 'ece'], ['platt', 'brier'], ['platt', 'log_loss']], True)
    """
    results = _as_results(results)
    multi = np.ndim(y_prob) == 2
    if multi:
        y, P, _ = check_multiclass(y_true, y_prob, None, drop_zero_weight=False)
        registry = MULTICLASS_METRICS
        metrics = tuple(metrics) if metrics else DEFAULT_METRICS["multiclass"]
    else:
        y, P, _ = check_binary(y_true, y_prob, None, drop_zero_weight=False)
        registry = BINARY_METRICS
        metrics = tuple(metrics) if metrics else DEFAULT_METRICS["binary"]
    w = check_weights(sample_weight, y.shape[0])
    for k in metrics:
        if k not in registry:
            raise InputError(f"unknown metric {k!r} for {'multiclass' if multi else 'binary'} predictions; choose "
                             f"from {', '.join(registry)}.")
    if multi:  # the multiclass registry has no proper scores: loss_gained computes them (no reference)
        metrics = tuple(k for k in metrics if k not in scores)
    else:  # binary: the scores go through the panel too, with their interval and calibrated reference
        metrics = tuple(metrics) + tuple(k for k in scores if k not in metrics)
        scores = ()
    if isinstance(n_reference, dict):  # redraws per metric (a dashboard's, so that "before" equals its panels)
        missing = [k for k in metrics if k not in n_reference]
        if missing:
            raise InputError(f"n_reference has no redraws for {', '.join(missing)}; give one per metric.")

    def panel(P_):
        """The metric panel of ``P_`` on the evaluated rows (``ym``, ``wm``); with redraws per metric, one panel
        per metric judged together (each metric's reference draws on its own seed, whatever else is computed)."""
        if not isinstance(n_reference, dict):
            return metric_panel(ym, P_, metrics=metrics, config=config, sample_weight=wm, n_resamples=n_resamples,
                                confidence=confidence, random_state=random_state, n_reference=n_reference)
        return judged_together(*(metric_panel(ym, P_, metrics=(k,), config=config, sample_weight=wm,
                                              n_resamples=n_resamples, confidence=confidence,
                                              random_state=random_state, n_reference=int(n_reference[k]))
                                 for k in metrics), alpha=config.alpha)

    total = len(results) * (len(metrics) + len(scores))
    done = 0
    rows = []
    before_cache: dict = {}
    for name, cf in results.items():
        if cf.y_prob.shape != P.shape:
            raise InputError(f"{name}: the cross-fitted predictions have shape {cf.y_prob.shape}, the data "
                             f"{P.shape}; run cross_fit on the same rows.")
        mask = cf.evaluated
        ym, Pb, Pa = y[mask], P[mask], cf.y_prob[mask]
        wm = None if w is None else w[mask]
        key = mask.tobytes()
        if key not in before_cache:
            before_cache[key] = panel(Pb) if metrics else None
        before = before_cache[key]
        after = panel(Pa) if metrics else None
        for i, key_m in enumerate(metrics):
            spec = registry[key_m]
            b, a = before.iloc[i], after.iloc[i]
            d_low = d_high = np.nan
            diff = float(b["value"] - a["value"])
            if n_resamples and spec.bootstrap:
                res = M.bootstrap(lambda yy, pb, pa, sample_weight=None, _s=spec:
                                  _s.compute(yy, pb, sample_weight, config) - _s.compute(yy, pa, sample_weight, config),
                                  ym, Pb, Pa, sample_weight=wm, n_resamples=n_resamples, confidence=confidence,
                                  random_state=random_state)
                # the hull of the percentile and basic intervals, as Compare's differences: each model's error is
                # biased upward by noise, the recalibrated one's more, and the percentile interval alone covered the
                # ECE difference 32-74% of the time (an audit; the truth lay above it)
                d_low, d_high = difference_interval(res.distribution, diff, confidence, difference_span(key_m))
            rows.append(_row(name, cf, key_m, spec.label, spec.unit, spec.lower_is_better, b, a, diff, d_low,
                             d_high, confidence))
            done += 1
            if progress is not None:
                progress(done, total)
        for s in scores:
            r = loss_gained(ym, Pb, Pa, score=s, sample_weight=wm, n_resamples=n_resamples, confidence=confidence,
                            random_state=random_state)
            label = {"brier": "Brier score", "log_loss": "Log loss"}[s]
            b = {"value": r["before"]}
            a = {"value": r["after"]}
            rows.append(_row(name, cf, s, label, "score", True, b, a, r["gained"], r["low"], r["high"], confidence))
            done += 1
            if progress is not None:
                progress(done, total)
    out = pd.DataFrame(rows)
    out.attrs.update(config=config, n_resamples=n_resamples, n_reference=n_reference, confidence=confidence,
                     random_state=random_state)
    return out


def _get(row, key):
    try:
        v = row[key]
    except (KeyError, IndexError):
        return np.nan
    return v


def _redraws(row) -> int:
    """The label redraws behind a panel row's p-value (0: a test's own p-value, or none; see
    :func:`calibviz.panel.format_p_value`: with R redraws the smallest p-value is 1/(R+1), a bound)."""
    v = _get(row, "n_redraws")
    return int(v) if np.isfinite(v) else 0


def _row(name, cf, metric, label, unit, lower_is_better, b, a, diff, d_low, d_high, confidence) -> dict:
    # what calibrated predictions of each kind would differ by: a binned error of a calibrated model lies above 0
    # by a bias that depends on the predictions (fewer distinct values after isotonic regression, fewer in each
    # bin), so "before - after" of a calibrated model's ECE is not centred on 0. The call is on the difference
    # beyond it: raw, the page called isotonic regression of calibrated logs "better" (2.0% of 200 logs of 5,000
    # rows rounded to 2 decimals, 50 bins; 0% beyond the shift, and the same power on miscalibrated logs). Only on
    # calibration errors (ZERO_WHEN_CALIBRATED), not on the other
    # rows (Brier score, log loss: proper scores, lower is better as they stand; their calibrated-model mean is the
    # expected score, not a bias, and subtracting it called calibrated logs "better" on Brier 12.5% of the time)
    shift = float(_get(b, "null_mean")) - float(_get(a, "null_mean")) if metric in ZERO_WHEN_CALIBRATED else 0.0
    shift = shift if np.isfinite(shift) else 0.0
    improved = bool(np.isfinite(d_low) and (d_low - shift > 0 if lower_is_better else d_high - shift < 0))
    worse = bool(np.isfinite(d_high) and (d_high - shift < 0 if lower_is_better else d_low - shift > 0))
    return {
        "method": name, "metric": metric, "label": label, "unit": unit,
        "before": float(b["value"]), "before_low": _get(b, "low"), "before_high": _get(b, "high"),
        "before_null_low": _get(b, "null_low"), "before_null_high": _get(b, "null_high"),
        "before_p_value": _get(b, "p_value"), "before_n_redraws": _redraws(b),
        "before_verdict": _get(b, "verdict") if "verdict" in b else "",
        "after": float(a["value"]), "after_low": _get(a, "low"), "after_high": _get(a, "high"),
        "after_null_low": _get(a, "null_low"), "after_null_high": _get(a, "null_high"),
        "after_p_value": _get(a, "p_value"), "after_n_redraws": _redraws(a),
        "after_verdict": _get(a, "verdict") if "verdict" in a else "",
        "diff": diff, "diff_low": d_low, "diff_high": d_high, "calibrated_diff": shift, "improved": improved,
        "worse": worse,
        "n_evaluated": cf.n_evaluated, "scheme": cf.scheme,
        "after_note": _get(a, "note") if "note" in a else "",
        "reading": _reading(name, label, unit, b["value"], a["value"], diff, d_low, d_high, improved, worse,
                            confidence, shift, lower_is_better) + _after_note(a, unit),
    }


def _after_note(a, unit: str) -> str:
    """The recalibrated value's own note, with the interval it speaks of: the sentence shows only the difference's
    interval, and "After recalibration: ... the interval lies above 0" named one it did not show (a walk-through)."""
    note = _get(a, "note") if "note" in a else ""
    if not isinstance(note, str) or not note:
        return ""
    low, high = _get(a, "low"), _get(a, "high")
    shown = format_interval(float(low), float(high), unit) if np.isfinite(high) else ""
    which = f" (its interval {shown})" if shown else ""
    return f" After recalibration{which}: {note[:1].lower()}{note[1:]}"


def _reading(name, label, unit, before, after, diff, d_low, d_high, improved, worse, confidence, shift=0.0,
             lower_is_better=True) -> str:
    fv = lambda v: format_value(v, unit)  # noqa: E731
    text = f"{name}: {label} {fv(before)} → {fv(after)}"
    if not np.isfinite(d_low):
        return text + "."
    fd = lambda v: format_difference(v, unit)  # noqa: E731  (two significant digits below 0.001 of a score)
    interval = f"difference {fd(diff)}, {100 * confidence:g}% interval {fd(d_low)} to {fd(d_high)}"
    raw_call = (d_low > 0) - (d_high < 0)  # +1: the interval above 0 (lower after), -1 below, 0 across
    call = int(improved) - int(worse) if lower_is_better else int(worse) - int(improved)
    if raw_call != call:  # the call is not the raw interval's (beside 0 and no call, or flipped): say why
        interval += (f"; calibrated predictions of each kind would differ by {fv(shift)}, as the upward bias of "
                     f"{label} on finite data differs between them")
    if improved:
        return text + f" ({interval}): better after recalibration, beyond the bootstrap noise."
    if worse:
        return text + f" ({interval}): worse after recalibration, beyond the bootstrap noise."
    return text + f" ({interval}): no clear change."


# ---------------------------------------------------------------------------- the fitted maps, drawable


def map_curves(y_prob, results, *, grid: int = 200) -> pd.DataFrame:
    """The fitted maps (prediction in, recalibrated prediction out) and their spread across folds.

    Parameters
    ----------
    y_prob : array-like of shape (n,) or (n, K)
        The predictions the maps were fitted on (they set the range drawn).
    results : CrossFit or dict of {name: CrossFit}
    grid : int, default 200
        Binary: points between the smallest and largest prediction.
        Multiclass: the confidence axis is cut into ``grid // 4`` equal-mass
        bins and each map's recalibrated probability of the predicted class is
        averaged per bin (a multiclass map has no single curve).

    Returns
    -------
    pandas.DataFrame
        One row per (method, x): ``method, x, y`` (the map fitted on all
        calibration rows), ``fold_low, fold_high`` (smallest and largest
        value over the fold maps: how much the map moves when a fold of the
        data is left out), ``n_folds``, and for Venn-Abers on binary data
        ``p0, p1``. ``attrs["kind"]`` is "binary" or "confidence".

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0); p = rng.uniform(size=500); y = rng.uniform(size=500) < p
    >>> c = map_curves(p, cross_fit("platt", y, p), grid=11)
    >>> c.columns.tolist()[:5], len(c)
    (['method', 'x', 'y', 'fold_low', 'fold_high'], 11)
    """
    results = _as_results(results)
    P = np.asarray(y_prob, dtype=np.float64)
    frames = []
    if P.ndim == 1:
        x = np.linspace(float(np.min(P)), float(np.max(P)), int(grid))
        for name, cf in _flatten(results).items():
            folds = np.array([m.predict(x) for m in cf.maps])
            d = {"method": name, "x": x, "y": cf.final.predict(x), "fold_low": folds.min(axis=0),
                 "fold_high": folds.max(axis=0), "n_folds": len(cf.maps)}
            if hasattr(cf.final, "predict_interval"):
                d["p0"], d["p1"] = cf.final.predict_interval(x)
            frames.append(pd.DataFrame(d))
        out = pd.concat(frames, ignore_index=True)
        out.attrs["kind"] = "binary"
        return out
    rows = np.arange(P.shape[0])
    c = np.argmax(P, axis=1)
    h = P[rows, c]
    n_bins = max(2, int(grid) // 4)
    edges = np.unique(np.quantile(h, np.linspace(0, 1, n_bins + 1)))
    b = np.clip(np.searchsorted(edges, h, side="right") - 1, 0, len(edges) - 2)
    counts = np.bincount(b, minlength=len(edges) - 1)
    keep = counts > 0

    def per_bin(values):
        return (np.bincount(b, weights=values, minlength=len(edges) - 1)[keep] / counts[keep])

    x = per_bin(h)
    for name, cf in _flatten(results).items():
        final = per_bin(cf.final.predict(P)[rows, c])
        folds = np.array([per_bin(m.predict(P)[rows, c]) for m in cf.maps])
        frames.append(pd.DataFrame({"method": name, "x": x, "y": final, "fold_low": folds.min(axis=0),
                                    "fold_high": folds.max(axis=0), "n_folds": len(cf.maps)}))
    out = pd.concat(frames, ignore_index=True)
    out.attrs["kind"] = "confidence"
    return out


def _flatten(results: dict) -> dict:
    """Grouped results as one entry per level ("platt · ward = a")."""
    out = {}
    for name, cf in results.items():
        if isinstance(cf, GroupedCrossFit):
            out.update({f"{name} · {cf.by} = {level}": part for level, part in cf.parts.items()})
        else:
            out[name] = cf
    return out
