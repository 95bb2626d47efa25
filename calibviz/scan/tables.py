"""The dashboard's tables from a scan: multiclass (top-label, per predicted class, class-wise, class ranking),
binning sensitivity and the comparison of several models, each with the columns of its in-memory counterpart.

Every table here is a function of per-bin sums, so a scan computes it from its
bucket aggregation (:class:`calibviz.scan.Scan`): one pass per view (the
multiclass source itself, then one per class for the class-wise and top-label
views). What needs rows is left out and said so: bootstrap intervals (``low``
and ``high`` are NaN, ``attrs["n_resamples"]`` is 0) and therefore the
better/worse verdicts of a comparison.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..binning import Custom, get_scheme
from ..errors import InputError
from ..multiclass import _plus, zoom_rows
from ..panel import PanelConfig

__all__ = ["top_label_table", "bin_zoom", "per_class_top_label_tables", "classwise_tables", "class_ranking",
           "binning_sensitivity", "compare_scans"]

_NAN = float("nan")


def _multiclass(scan, what: str) -> tuple:
    if scan.is_binary:
        raise InputError(f"{what} needs a multiclass source (K >= 3 class columns); this scan is binary.")
    return tuple(scan.mapping.classes)


def _ece(table: pd.DataFrame) -> float:
    total = table.attrs["total_weight"]
    return float(np.sum(np.abs(table["gap"]) * table["weight"]) / total) if total else _NAN


def _cells(scan, scheme) -> tuple:
    """(edges, {"count", "weight", "sum_pred", "sum_true": (K, B) arrays}): the cells (predicted class l, bin b)
    of the confidence bins fitted on all rows (the pooled fit); one pass per predicted class."""
    classes = tuple(scan.mapping.classes)
    edges = scan._solve(lambda atoms: scan._bins(scheme, atoms, edges=True), [scheme])[0]  # the pooled bins' edges
    same = Custom(tuple(float(e) for e in edges))
    B = edges.shape[0] - 1
    grid = {k: np.zeros((len(classes), B)) for k in ("count", "weight", "sum_pred", "sum_true")}
    for i, c in enumerate(classes):
        view = scan.top_label_view(c)
        if view.n == 0:  # a class never predicted
            continue
        st = view.bin_statistics(same)
        for k in grid:
            grid[k][i] = getattr(st, k)
    return edges, grid


def top_label_table(scan, binning="uniform", alpha: float = 0.05) -> pd.DataFrame:
    """:func:`calibviz.multiclass.top_label_table` of a multiclass scan (confidence stars, top-label pluses).

    The bins are fitted once on the confidences (the scan itself, the pooled
    fit of the in-memory function); each predicted class's top-label view is
    then binned on the same edges (:class:`calibviz.binning.Custom`), which
    gives the cells (l, b) whose class-weighted deviation is the plus.

    Parameters
    ----------
    scan : calibviz.scan.Scan
        A multiclass scan (its confidence view).
    binning : Scheme or name, default "uniform" (15 bins)
        Uniform, EqualMass, Custom or PAVABC (see :meth:`Scan.reliability_table`).
    alpha : float, default 0.05

    Returns
    -------
    pandas.DataFrame
        The columns and attrs of :func:`calibviz.multiclass.top_label_table`
        (``frac``, ``deviation``, ``plus``, ``plus_outside``, ``n_classes``;
        ``attrs`` ``confidence_ece`` and ``top_label_ece``). One pass per
        predicted class (K passes) besides the scan's own.

    Examples
    --------
    >>> import calibviz as cv, pandas as pd
    >>> df = pd.DataFrame({"y": ["a", "c", "c", "c", "c", "b", "b", "b", "b", "b"],
    ...                    "p_a": [.6] * 5 + [.2] * 5, "p_b": [.2] * 5 + [.6] * 5, "p_c": [.2] * 10})
    >>> t = top_label_table(cv.scan(df), cv.binning.Uniform(10))
    >>> t[["bin", "n", "mean_pred", "obs_rate", "deviation", "plus"]].round(6).to_dict("records")
    [{'bin': 6, 'n': 10, 'mean_pred': 0.6, 'obs_rate': 0.6, 'deviation': 0.4, 'plus': 0.2}]
    """
    _multiclass(scan, "top_label_table")
    scheme = get_scheme(binning)
    table = scan.reliability_table(scheme, alpha, test=None)
    _, grid = _cells(scan, scheme)
    absdiff = np.abs(grid["sum_true"] - grid["sum_pred"]).sum(axis=0)
    weight = grid["weight"].sum(axis=0)
    present = (grid["weight"] > 0).sum(axis=0)
    b = table["bin"].to_numpy()
    conf, acc = table["mean_pred"].to_numpy(), table["obs_rate"].to_numpy()
    delta = absdiff[b] / weight[b]
    plus = _plus(conf, acc, delta)
    table["frac"] = weight[b] / weight.sum()
    table["deviation"] = delta
    table["plus"] = plus
    table["plus_outside"] = (plus < 0) | (plus > 1)
    table["n_classes"] = present[b]
    table.attrs["confidence_ece"] = float(np.sum(table["frac"] * np.abs(acc - conf)))
    table.attrs["top_label_ece"] = float(np.sum(table["frac"] * delta))
    return table


def bin_zoom(scan, bin_id: int, binning="uniform") -> pd.DataFrame:
    """:func:`calibviz.multiclass.bin_zoom` of a multiclass scan: inside one confidence bin, n, confidence and
    accuracy per predicted class (the cells of :func:`top_label_table`, same columns and attrs).

    Examples
    --------
    >>> import calibviz as cv, pandas as pd
    >>> df = pd.DataFrame({"y": ["a", "c", "c", "c", "c", "b", "b", "b", "b", "b"],
    ...                    "p_a": [.6] * 5 + [.2] * 5, "p_b": [.2] * 5 + [.6] * 5, "p_c": [.2] * 10})
    >>> z = bin_zoom(cv.scan(df), 6, cv.binning.Uniform(10))
    >>> z[["label", "n", "confidence", "accuracy"]].round(6).to_dict("list")
    {'label': ['a', 'b'], 'n': [5, 5], 'confidence': [0.6, 0.6], 'accuracy': [0.2, 1.0]}
    """
    classes = _multiclass(scan, "bin_zoom")
    edges, grid = _cells(scan, get_scheme(binning))
    B = edges.shape[0] - 1
    if isinstance(bin_id, (bool, np.bool_)) or not isinstance(bin_id, (int, np.integer)) or not 0 <= bin_id < B:
        raise InputError(f"bin_id must be an integer between 0 and {B - 1} (the 'bin' column of top_label_table), "
                         f"got {bin_id!r}.")
    cnt, wt, sp, st = (grid[k][:, bin_id] for k in ("count", "weight", "sum_pred", "sum_true"))
    table = zoom_rows(classes, cnt, wt, sp, st)
    W = wt.sum()
    star_c, star_a = (sp.sum() / W, st.sum() / W) if W > 0 else (_NAN, _NAN)
    dev = float(np.abs(st - sp).sum() / W) if W > 0 else _NAN
    table.attrs.update(bin=int(bin_id), lower=float(edges[bin_id]), upper=float(edges[bin_id + 1]),
                       n=int(cnt.sum()), confidence=float(star_c), accuracy=float(star_a), deviation=dev,
                       plus=float(_plus(star_c, star_a, dev)))
    return table


def per_class_top_label_tables(scan, binning="uniform", alpha: float = 0.05, test=None) -> dict:
    """:func:`calibviz.multiclass.per_class_top_label_tables` of a multiclass scan (bins fitted per class).

    Returns ``{label: reliability table}`` for every class predicted at least
    once, with ``attrs`` ``label``, ``class_index``, ``name``, ``share`` and
    ``ece`` as in memory. One pass per class.
    """
    classes = _multiclass(scan, "per_class_top_label_tables")
    total = scan.total_weight
    out = {}
    for i, c in enumerate(classes):
        view = scan.top_label_view(c)
        if view.n == 0:
            continue
        t = view.reliability_table(binning, alpha, test=test, band_alpha=alpha / len(classes))
        t.attrs.update(label=str(c), class_index=i, name=f"predicted = {c}", share=t.attrs["total_weight"] / total,
                       ece=_ece(t))
        out[str(c)] = t
    return out


def classwise_tables(scan, binning="uniform", alpha: float = 0.05, test=None) -> dict:
    """:func:`calibviz.multiclass.classwise_tables` of a multiclass scan (one-vs-rest on all rows).

    Returns ``{label: reliability table}`` for every class, with ``attrs``
    ``label``, ``class_index``, ``name``, ``prevalence`` and ``ece``. One
    pass per class.
    """
    classes = _multiclass(scan, "classwise_tables")
    out = {}
    for i, c in enumerate(classes):
        view = scan.class_view(c)
        t = view.reliability_table(binning, alpha, test=test, band_alpha=alpha / len(classes))
        t.attrs.update(label=str(c), class_index=i, name=f"{c} vs rest", prevalence=view.prevalence, ece=_ece(t))
        out[str(c)] = t
    return out


def _class_test(scan, binning, values: np.ndarray, n_reference, random_state):
    """(p_value, p_adjusted, redraws made, why not tested) of :func:`class_ranking`'s per-class test."""
    from ..multiclass import CLASS_REFERENCE_BUDGET, class_p_values
    from .classwise import MAX_GROUPS, NoInterval, cell_table, class_null

    untested = np.full(values.size, _NAN)
    if not n_reference:
        return untested, untested, 0, ""
    if not (isinstance(n_reference, (int, np.integer)) and n_reference > 0):
        raise InputError(f"n_reference must be a non-negative integer, got {n_reference!r}.")
    try:
        cells = cell_table(scan, binning)
    except NoInterval:
        return untested, untested, 0, ("their label redraws are drawn per cell tuple (the bin of every class and the "
                                       "label), which needs bins with fixed edges (uniform or custom) and at most "
                                       f"{MAX_GROUPS:,} distinct tuples")
    if cells.n_groups * cells.n_classes * int(n_reference) > CLASS_REFERENCE_BUDGET:
        return untested, untested, 0, (f"{n_reference:,} redraws of its {cells.n_groups:,} cell tuples x "
                                       f"{cells.n_classes} classes exceed the budget of {CLASS_REFERENCE_BUDGET:,} "
                                       "draws")
    # its own stream, as in memory: the seed's other draws do not depend on whether the classes are tested
    rng = np.random.default_rng(random_state).spawn(1)[0]
    return (*class_p_values(class_null(cells, int(n_reference), rng), values), int(n_reference), "")


def class_ranking(scan, binning="uniform", *, tables: dict | None = None, n_reference: int = 0,
                  random_state=0) -> pd.DataFrame:
    """:func:`calibviz.multiclass.class_ranking` (metric "classwise_ece") of a scan, without intervals.

    The bootstrap intervals of the in-memory ranking resample rows: on a scan
    ``low`` and ``high`` are NaN and ``attrs["n_resamples"]`` is 0. ``tables``:
    :func:`classwise_tables` already computed (saves the K passes).

    ``n_reference`` > 0 tests each class's one-vs-rest ECE against labels
    redrawn from the predictions, the classes together by single-step minP, as
    the in-memory ranking does (:func:`calibviz.multiclass.class_p_values`):
    the redraws are those of the class-wise ECE's scan reference
    (:func:`calibviz.scan.classwise.classwise_reference`: per cell tuple of the
    bins of every class and the label, the group's labels redrawn jointly from
    its mean prediction; the null is at most slightly wider than the per-row
    one, so p-values err towards no alarm), read class by class. That needs
    bins with fixed edges (uniform, custom) and at most
    :data:`~calibviz.scan.classwise.MAX_GROUPS` cell tuples; otherwise the
    classes are not tested (``p_value`` NaN, ``attrs["n_reference"]`` 0,
    ``attrs["no_test"]`` says why), as where redraws x cell tuples x classes
    exceed :data:`~calibviz.multiclass.CLASS_REFERENCE_BUDGET` (the in-memory
    ranking's budget of rows x redraws).

    Returns
    -------
    pandas.DataFrame
        One row per class, worst first: ``rank``, ``class_index``, ``label``,
        ``value`` (one-vs-rest ECE), ``low``, ``high``, ``share`` (prevalence),
        ``n`` (rows of the class), ``contribution`` (value / K), ``p_value``
        and ``p_adjusted``; ``attrs`` ``metric``, ``overall`` (CW-ECE),
        ``overall_low``, ``overall_high``, ``n_resamples``, ``confidence``,
        ``scheme``, ``n_reference``, ``p_value`` (the smallest ``p_adjusted``).
    """
    _multiclass(scan, "class_ranking")
    tables = classwise_tables(scan, binning) if tables is None else tables
    K = len(tables)
    values = np.array([t.attrs["ece"] for t in tables.values()], dtype=np.float64)
    p_value, p_adjusted, n_reference, no_test = _class_test(scan, binning, values, n_reference, random_state)
    rows = [{"class_index": t.attrs["class_index"], "label": t.attrs["label"], "value": t.attrs["ece"],
             "low": _NAN, "high": _NAN, "share": t.attrs["prevalence"], "n": int(t["positives"].sum()),
             "contribution": t.attrs["ece"] / K, "p_value": p_value[k], "p_adjusted": p_adjusted[k]}
            for k, t in enumerate(tables.values())]
    out = pd.DataFrame(rows).sort_values("value", ascending=False, kind="stable", na_position="last")
    out.insert(0, "rank", np.arange(1, K + 1))
    out = out.reset_index(drop=True)
    out.attrs.update(metric="classwise_ece", overall=float(out["value"].mean()), overall_low=_NAN,
                     overall_high=_NAN, n_resamples=0, confidence=0.95, scheme=repr(get_scheme(binning)),
                     n_reference=int(n_reference), no_test=no_test,
                     p_value=float(np.nanmin(p_adjusted)) if n_reference else _NAN)
    return out


def binning_sensitivity(scan, metrics=("ece",), schemes=("uniform", "equal_mass"),
                        n_bins=(5, 10, 15, 20, 25, 30)) -> pd.DataFrame:
    """:func:`calibviz.sensitivity.binning_sensitivity` of a scan, values only (``low``/``high`` NaN).

    ``metrics`` among "ece", "rmsce", "mce"; each point is a reduction of the
    scan's buckets (no pass over the rows once the scan is aggregated, apart
    from the refining pass equal-mass bins may need).

    Examples
    --------
    >>> import calibviz as cv, pandas as pd
    >>> s = cv.scan(pd.DataFrame({"y": [0, 1] * 50, "p": [0.3, 0.6] * 50}))
    >>> binning_sensitivity(s, n_bins=(2, 5))[["scheme", "n_bins"]].values.tolist()
    [['uniform', 2], ['uniform', 5], ['equal_mass', 2], ['equal_mass', 5]]
    """
    from ..sensitivity import _SCHEME_LABELS, SENSITIVITY_METRICS

    allowed = ("ece", "rmsce", "mce")
    unknown = [m for m in metrics if m not in allowed]
    if unknown or not len(metrics):
        raise InputError(f"scans compute the binning sensitivity of {', '.join(allowed)}, not {unknown}.")
    rows = []
    for metric in metrics:
        for name in schemes:
            for b in n_bins:
                value = scan.metric(metric, PanelConfig(binning=name, n_bins=int(b)))[0]
                rows.append(dict(metric=metric, label=SENSITIVITY_METRICS[metric][1], scheme=str(name),
                                 scheme_label=_SCHEME_LABELS.get(str(name), str(name)), n_bins=int(b),
                                 value=float(value), low=_NAN, high=_NAN))
    out = pd.DataFrame(rows, columns=["metric", "label", "scheme", "scheme_label", "n_bins", "value", "low", "high"])
    out.attrs.update(confidence=0.95, n_resamples=0, n=scan.n)
    return out


def compare_scans(scans: dict, metrics, config: PanelConfig | None = None, reference: str | None = None, *,
                  n_resamples: int = 0, random_state=0, progress=None) -> pd.DataFrame:
    """:func:`calibviz.compare.compare_models` of several models' scans: values, each model's own interval and the
    differences, without the intervals of the differences.

    Parameters
    ----------
    scans : dict {name: Scan}
        The models (``scan.models`` of one source).
    metrics : sequence of str
    config : PanelConfig, optional
    reference : str, optional
        Default the first model.
    n_resamples : int, default 0
        Resamples of each model's own interval (``low``, ``high``): the
        Poisson bootstrap of its bucket table (:meth:`Scan.metrics`); 0: NaN.
    random_state : int, default 0
    progress : callable(done, total), optional
        Called after each model.

    Returns
    -------
    pandas.DataFrame
        The columns of :func:`~calibviz.compare.compare_models`. ``diff_low``
        and ``diff_high`` are NaN (0 for the reference), ``p_value`` and ``p_adjusted`` NaN, and ``verdict`` is ""
        ("reference" for it): better or worse needs the interval of the
        difference, a paired bootstrap that resamples the same rows for both
        models, which bucket tables drawn model by model cannot give.
        ``paired`` is None (a scan does not tell whether two models share rows).
    """
    from ..compare import COMPARISON_COLUMNS, direction

    names = list(scans)
    reference = names[0] if reference is None else reference
    if reference not in scans:
        raise InputError(f"reference {reference!r} is not among the models {names!r}.")
    config = PanelConfig() if config is None else config
    panels = {}
    for i, (name, s) in enumerate(scans.items()):
        panels[name] = s.metrics(list(metrics), config=config, n_resamples=int(n_resamples),
                                 random_state=random_state)
        if progress is not None:
            progress(i + 1, len(scans))
    rows = []
    for i, key in enumerate(panels[reference]["metric"]):
        ref_value = float(panels[reference]["value"].iloc[i])
        for name in names:
            r = panels[name].iloc[i]
            is_ref = name == reference
            rows.append({"metric": key, "label": r["label"], "unit": r["unit"], "model": name, "is_reference": is_ref,
                         "value": float(r["value"]), "low": float(r["low"]), "high": float(r["high"]),
                         "diff": 0.0 if is_ref else float(r["value"]) - ref_value,
                         "diff_low": 0.0 if is_ref else _NAN, "diff_high": 0.0 if is_ref else _NAN,
                         "paired": None, "direction": direction(key), "p_value": _NAN, "p_adjusted": _NAN,
                         "n_tests": 0, "verdict": "reference" if is_ref else "",
                         "verdict_alone": "reference" if is_ref else "", "held_back": "", "held_back_p": _NAN,
                         # the panel's note: why a value lies outside its own interval, a grid's bound, ...
                         "note": str(r["note"]) if isinstance(r["note"], str) else ""})
    out = pd.DataFrame(rows, columns=COMPARISON_COLUMNS)
    out.attrs.update(reference=reference, confidence=0.95, n_resamples=int(n_resamples), config=config)
    return out
