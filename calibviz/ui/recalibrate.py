"""The Recalibrate page's controls, cached computations and downloads (the page itself stays thin)."""
from __future__ import annotations

import hashlib
import io
import json

import numpy as np
import pandas as pd
import streamlit as st

from .. import figures, reduce
from ..io import Predictions
from ..metrics import band_resamples
from ..panel import format_difference, format_interval, format_value
from ..recalibration import (RECALIBRATORS, cross_fit, cross_fit_by, map_curves, python_snippet,
                             recalibrated_frame, recalibrated_predictions, recalibration_table)
from ..recalibration.crossfit import DEFAULT_METRICS, GroupedCrossFit
from .blocks import BOOTSTRAP_ROW_BUDGET, page_redraws, redraws_words, slug
from .blocks import show_dataframe
from .compute import cached, progress_bar
from .data import current_predictions, current_source
from .links import link_data

__all__ = ["METHOD_LABELS", "named_reading", "controls", "results", "before_after_figure", "corp_figure", "maps_figure",
           "metric_table", "show_metric_table", "downloads", "open_in_compare", "split_columns", "group_columns",
           "page_link_params", "read_page_link", "added_link_params", "restore_added", "PAGE_PARAM", "ADDED_PARAM", "LINK_PARAMS",
           "link_values", "apply_link_values",
           "variable_figures", "MIN_GROUP_ROWS"]

METHOD_LABELS = {"platt": "Platt scaling", "isotonic": "Isotonic regression", "beta": "Beta calibration",
                 "temperature": "Temperature scaling", "histogram_binning": "Histogram binning",
                 "venn_abers": "Venn-Abers"}
METHOD_HELP = ("Platt: logistic regression on logit(p). Isotonic: the best monotone step map (PAV). Beta: "
               "sigmoid(c + a ln p - b ln(1-p)). Temperature: softmax(log p / T). Histogram binning: equal-mass bins "
               "mapped to their observed rate. Venn-Abers: isotonic fits with the new row labelled 0 and 1, an "
               "interval (p0, p1).")
#: A level of the per-group column with fewer rows keeps its predictions (and the page says so).
MIN_GROUP_ROWS = 100
_STORE = "cv_recal"
# Default methods per kind of data: Platt and isotonic for binary predictions; temperature scaling for multiclass
# (one parameter for all classes, never changes the predicted class: Guo et al. 2017's choice for networks).
# "methods" mirrors the current kind's choice (the Report page reads it).
_DEFAULTS = {"bin_methods": ("platt", "isotonic"), "mc_methods": ("temperature",), "methods": ("platt", "isotonic"),
             "folds": 5, "split": "", "by": "", "multiclass": "top_label", "metrics": ("ece",),
             "mc_metrics": ("confidence_ece", "top_label_ece")}


def _store() -> dict:
    if _STORE not in st.session_state:
        st.session_state[_STORE] = dict(_DEFAULTS)
    store = st.session_state[_STORE]
    for k, v in _DEFAULTS.items():  # a session from before a new entry
        store.setdefault(k, v)
    return store


def _control(name: str, factory, *, store_key: str | None = None, **kwargs):
    """A page-local widget whose value survives page switches (kept in session state under ``store_key``,
    default ``name``, not in the widget)."""
    key = f"w_recal_{name}"
    store = _store()
    store_key = store_key or name
    value = store[store_key]
    st.session_state[key] = list(value) if isinstance(value, tuple) else value

    def _copy():
        v = st.session_state[key]
        store[store_key] = tuple(v) if isinstance(v, list) else v

    return factory(key=key, on_change=_copy, **kwargs)


def split_columns(preds: Predictions) -> list[str]:
    """Feature columns with exactly two values that can mark calibration vs test rows."""
    out = []
    for col in preds.features.columns:
        values = preds.features[col].dropna().unique()
        if len(values) == 2:
            out.append(col)
    return out


def group_columns(preds: Predictions) -> list[str]:
    """Categorical feature columns with 2 to 50 levels (one map per level)."""
    return [c for c in preds.categorical_features if 2 <= preds.features[c].nunique() <= 50]


def controls(preds: Predictions) -> dict:
    """The page's controls; returns the choices."""
    store = _store()
    methods = list(RECALIBRATORS)
    # methods on a row of their own: beside two selects their chips and the selects' options were cut at 1024 px
    # ("Isotonic r...", "cross-fitting (out o", a walk-through)
    c1, (c2, c3) = st.container(), st.columns(2)
    with c1:
        _control("methods", st.multiselect, store_key="bin_methods" if preds.is_binary else "mc_methods",
                 label="Methods", options=methods, format_func=METHOD_LABELS.get,
                 help=METHOD_HELP + ("" if preds.is_binary else " For multiclass predictions temperature scaling is "
                                     "the default: one parameter, and the predicted class never changes."))
    store["methods"] = store["bin_methods" if preds.is_binary else "mc_methods"]
    splits = split_columns(preds)
    with c2:
        options = [""] + splits
        if store["split"] not in options:
            store["split"] = ""
        _control("split", st.selectbox, label="Evaluate on", options=options,
                 format_func=lambda c: "cross-fitting (out of fold)" if c == "" else f"test rows of '{c}'",
                 help="Cross-fitting: each row's 'after' comes from a map fitted on the other folds. A column with "
                      "two values marks calibration vs test rows (values such as calibration/test, 1/0).")
        if store["split"] == "":
            _control("folds", st.select_slider, label="Folds", options=[2, 3, 5, 10],
                     help="Folds of the cross-fitting: more folds fit each map on more rows.")
    groups = group_columns(preds)
    with c3:
        options = [""] + groups
        if store["by"] not in options:
            store["by"] = ""
        _control("by", st.selectbox, label="One map per level of", options=options,
                 format_func=lambda c: "(one map for all rows)" if c == "" else c,
                 help=f"Recalibrate each level of a categorical column separately; levels with fewer than "
                      f"{MIN_GROUP_ROWS} rows keep their predictions.")
        if not preds.is_binary:
            _control("multiclass", st.selectbox, label="Multiclass reduction",
                     options=["top_label", "confidence", "classwise"],
                     format_func={"top_label": "top-label (one map per predicted class)",
                                  "confidence": "confidence (one map)",
                                  "classwise": "class-wise (one map per class, normalised)"}.get,
                     help="How binary methods see multiclass predictions (Gupta & Ramdas 2022); temperature "
                          "scaling is multiclass itself.")
    from ..panel import BINARY_METRICS, MULTICLASS_METRICS

    registry, name = (BINARY_METRICS, "metrics") if preds.is_binary else (MULTICLASS_METRICS, "mc_metrics")
    options = [k for k, spec in registry.items() if spec.reference is not None and k not in ("brier", "log_loss")]
    _control(name, st.multiselect, label="Metrics before and after (besides Brier score and log loss)",
             options=options, format_func=lambda k: registry[k].label,
             help="Each is computed before and after with its interval and its calibrated-model reference, and the "
                  "difference with a paired bootstrap: TCE, ACE and smECE take longer (each resample refits).")
    return dict(_store())


#: Link parameters: the Recalibrate page's choices (its own link) and the recalibrated models added to the data
#: (every page's link, as they are models of the data). Neither was in a link: the Compare page of added models
#: opened elsewhere read "does not apply to a single model" (a browser walk-through).
PAGE_PARAM, ADDED_PARAM = "recal", "added"
LINK_PARAMS = (PAGE_PARAM, ADDED_PARAM)
_ADDED = "cv_recal_added"  # [(data key, fit spec)] of the models added, for this session's data
_FOLDS = (2, 3, 5, 10)
_REDUCTIONS = ("top_label", "confidence", "classwise")


def _fit_choice(choice: dict) -> dict:
    """The choices that define a fit (what :func:`results` reads), as JSON values."""
    return {"methods": list(choice["methods"]), "split": choice["split"], "folds": int(choice["folds"]),
            "by": choice["by"], "multiclass": choice["multiclass"]}


def _data_key() -> str:
    return json.dumps(link_data(current_source()), sort_keys=True)


def page_link_params() -> dict:
    """The Recalibrate page's choices that differ from the defaults, as its link's parameter (compact JSON)."""
    store = _store()
    changed = {k: list(v) if isinstance(v, tuple) else v for k, v in store.items()
               if k != "methods" and v != _DEFAULTS[k]}
    return {PAGE_PARAM: json.dumps(changed, separators=(",", ":"))} if changed else {}


def _valid(key: str, value) -> bool:
    from ..panel import BINARY_METRICS, MULTICLASS_METRICS

    keys = {"bin_methods": RECALIBRATORS, "mc_methods": RECALIBRATORS, "metrics": BINARY_METRICS,
            "mc_metrics": MULTICLASS_METRICS}
    if key in keys:
        return isinstance(value, list) and all(isinstance(v, str) and v in keys[key] for v in value)
    if key == "folds":
        return value in _FOLDS
    if key == "multiclass":
        return value in _REDUCTIONS
    return key in ("split", "by") and isinstance(value, str)  # a column the data lacks is reset by controls()


#: The longest link value of recalibration read (a link of every method, column and fit is far shorter).
MAX_LINK_VALUE = 4000


def _json(raw: str):
    """A link value's JSON, or None (too long, nested beyond reason, not JSON: ignored as a link's bad value)."""
    if len(raw) > MAX_LINK_VALUE:
        return None
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return None


def read_page_link(raw: str) -> list[str]:
    """Set the Recalibrate page's choices from its link's parameter; returns what was ignored."""
    given = _json(raw)
    if not isinstance(given, dict):
        return [f"{PAGE_PARAM}={raw[:80]}"]
    store, ignored = _store(), []
    for key, value in given.items():
        if key in _DEFAULTS and key != "methods" and _valid(key, value):
            store[key] = tuple(value) if isinstance(value, list) else value
        else:
            ignored.append(f"{PAGE_PARAM}.{key}={str(value)[:40]}")
    # "methods" mirrors the data's kind (the Report page reads it)
    store["methods"] = store["bin_methods" if current_predictions().is_binary else "mc_methods"]
    return ignored


def added_link_params() -> dict:
    """What made the recalibrated models of the current data that are still among its models, as the link's
    parameter; {} when none."""
    models, key = st.session_state.get("cv_models", {}), _data_key()
    specs = [spec for data, spec in st.session_state.get(_ADDED, []) if data == key
             and all(f"{spec['model']} · {METHOD_LABELS[m]}" in models for m in spec["methods"])]
    return {ADDED_PARAM: json.dumps(specs, separators=(",", ":"))} if specs else {}


def _fit_spec(preds: Predictions | None, spec) -> bool:
    """Whether a link's fit spec is one the page's controls can make for ``preds`` (columns it offers: a split
    column of two values, a per-level column of 2 to 50 levels; a review fitted one map per value of a continuous
    column from a crafted link)."""
    return (preds is not None and isinstance(spec.get("seed"), int) and not isinstance(spec["seed"], bool)
            and 0 <= spec["seed"] < 2 ** 31 and _valid("bin_methods", spec.get("methods")) and bool(spec["methods"])
            and all(_valid(k, spec.get(k)) for k in ("folds", "split", "by", "multiclass"))
            and spec["split"] in ["", *split_columns(preds)] and spec["by"] in ["", *group_columns(preds)])


def restore_added(raw: str) -> list[str]:
    """Fit and add the recalibrated models a link names (:func:`added_link_params`) to the data just opened, as
    the Recalibrate page's button added them (same fits: same choices and seed); returns what was ignored (a
    spec the controls cannot make, or whose fit fails, without ending the page)."""
    specs = _json(raw)
    if not isinstance(specs, list) or len(specs) > len(RECALIBRATORS) * 4:
        return [f"{ADDED_PARAM}={raw[:80]}"]
    models, ignored = st.session_state["cv_models"], []
    for spec in specs:
        name = spec.get("model") if isinstance(spec, dict) else None
        preds = models.get(name) if isinstance(name, str) else None
        if not (isinstance(spec, dict) and _fit_spec(preds, spec)):
            ignored.append(f"{ADDED_PARAM}={json.dumps(spec)[:80]}")
            continue
        seed, fitted = spec["seed"], {}
        try:
            with st.spinner(f"Fitting the recalibrated models of the link ({', '.join(spec['methods'])})"):
                for method in spec["methods"]:
                    fitted[method] = _fit(preds, method, spec, seed)
        except Exception:  # noqa: BLE001 - a link's fit that fails is ignored, the rest of the link opens
            ignored.append(f"{ADDED_PARAM}={json.dumps(spec)[:80]}")
            continue
        res = {m: cached(_fit_key(preds, m, spec, seed), lambda f=f: f) for m, f in fitted.items()}  # the page's
        open_in_compare(preds, res, spec, seed)
    return ignored


def link_values(page: str | None = None) -> dict:
    """The link's recalibration parameters: the recalibrated models added to the data (every page) and the
    Recalibrate page's choices (its page, and the Report page's, whose recalibration section they choose; all of
    them for ``page`` None: a session file keeps them beside the settings)."""
    if _STORE not in st.session_state and _ADDED not in st.session_state:
        return {}
    return {**added_link_params(), **(page_link_params() if page in (None, "Recalibrate", "Report") else {})}


def apply_link_values(values: dict, *, reset: bool = False) -> list[str]:
    """Set the Recalibrate page's choices and fit the added models from link parameters (``recal``, ``added``);
    ``reset``: the page's choices go back to their defaults first, as a session file's settings do. Returns what
    was ignored."""
    if reset:
        st.session_state.pop(_STORE, None)
        st.session_state.pop(_ADDED, None)
    page, added = values.get(PAGE_PARAM), values.get(ADDED_PARAM)
    return (read_page_link(page) if page else []) + (restore_added(added) if added else [])


def _y_prob(preds: Predictions):
    return preds.y_prob if preds.is_binary else preds.probs


def _fit(preds: Predictions, method: str, choice: dict, seed: int):
    """One method's cross-fit (or per-level cross-fit) with the page's choices."""
    opts = {} if (preds.is_binary or method == "temperature") else {"multiclass": choice["multiclass"]}
    split = preds.features[choice["split"]] if choice["split"] else None
    kw = dict(n_splits=int(choice["folds"]), random_state=seed, sample_weight=preds.weights, split=split, **opts)
    if choice["by"]:
        return cross_fit_by(method, preds.y, _y_prob(preds), preds.features[choice["by"]], name=choice["by"],
                            min_rows=MIN_GROUP_ROWS, **kw)
    return cross_fit(method, preds.y, _y_prob(preds), **kw)


def _fit_key(preds: Predictions, method: str, choice: dict, seed: int) -> tuple:
    opts = () if (preds.is_binary or method == "temperature") else (("multiclass", choice["multiclass"]),)
    return ("recal", preds.fingerprint(), method, opts, choice["split"], int(choice["folds"]), choice["by"], seed)


def results(preds: Predictions, choice: dict, seed: int) -> dict:
    """{method: CrossFit or GroupedCrossFit}, cached per data and choices."""
    out = {}
    for method in choice["methods"]:
        what = "split" if choice["split"] else f"{int(choice['folds'])} folds"
        with st.spinner(f"Fitting {METHOD_LABELS[method]} ({what})"):
            out[method] = cached(_fit_key(preds, method, choice, seed),
                                 lambda method=method: _fit(preds, method, choice, seed))
    return out


def _views(preds: Predictions, res: dict) -> dict:
    """{name: (y, p, w)} binary views of before and each after, on the evaluated rows."""
    mask = next(iter(res.values())).evaluated
    rows = np.flatnonzero(mask)
    w = None if preds.weights is None else preds.weights[rows]

    def view(P):
        if preds.is_binary:
            return preds.y[rows], P[rows] if P.ndim == 1 else P[rows, 1], w
        v = reduce.confidence(preds.y[rows], P[rows], w)
        return v.y, v.p, v.w

    out = {"before": view(_y_prob(preds))}
    for name, cf in res.items():
        out[METHOD_LABELS[name]] = view(cf.y_prob)
    return out


def before_after_figure(preds: Predictions, res: dict, cfg, key: tuple):
    views = _views(preds, res)
    what = "P(positive)" if preds.is_binary else "confidence"
    st.caption(f"Reliability before and after ({what}, out-of-fold rows): each point a bin of predictions, its "
               "mean prediction against the observed rate.")
    # no title inside the figure: with three or more models the legend takes its place above the plot
    return cached(("recal_fig",) + key, lambda: figures.reliability_diagram(
        views, binning=cfg.scheme(), alpha=cfg.alpha, title=None))


def corp_figure(preds: Predictions, res: dict, key: tuple, alpha: float):
    views = _views(preds, res)
    # bands for three curves at most (before and the two default methods): seven bands overlaid piled up into one
    # block that hid the curves (six methods and 'before': a walk-through)
    with_bands = len(views) <= 3
    st.caption("CORP diagrams before and after (out-of-fold rows): the isotonic (PAV) curve of each"
               + (", with the band a calibrated model's whole curve stays in with probability 1 - α (labels redrawn "
                  "from each model's predictions)." if with_bands else
                  "; the bands a calibrated model stays in are drawn for up to two methods (choose fewer to see them)."))
    level = 1.0 - float(alpha)
    return cached(("recal_corp", level, with_bands) + key, lambda: figures.corp_diagram(
        views, bands=("consistency",) if with_bands else None, level=level, n_resamples=band_resamples(level),
        title=None))


def maps_figure(preds: Predictions, res: dict, key: tuple):
    def compute():
        return figures.recalibration_maps(map_curves(_y_prob(preds), res))
    return cached(("recal_maps",) + key, compute)


def metric_table(preds: Predictions, res: dict, cfg, metrics, n_boot: int, seed: int, key: tuple) -> pd.DataFrame:
    n = preds.n
    # on large data the intervals (and with them the better/worse calls) wait for a button, as on the other pages
    # (the page pointed to the command line instead, a walk-through)
    consent = "cv_recal_boot_" + hashlib.sha1(repr(key).encode()).hexdigest()[:16]
    wanted = n * n_boot * max(1, len(res)) <= BOOTSTRAP_ROW_BUDGET or st.session_state.get(consent)
    n_run = n_boot if wanted else 0
    if n_boot and not wanted and st.button(
            f"Compute {100 * (1 - cfg.alpha):g}% intervals and the better / worse calls ({n_boot} paired bootstrap "
            f"resamples of {n:,} rows for {len(res)} method{'s' if len(res) > 1 else ''})",
            key="recal_boot", icon=":material/calculate:",
            help="On large data the bootstrap takes a while; the values below are exact without it."):
        st.session_state[consent] = True
        st.rerun()
    # the redraws of the other pages' panels, metric by metric: "before" equals the Reliability page's reference
    # (it drew 100 here against 200 there: two ranges for one number, a walk-through)
    metrics = tuple(metrics or ()) or DEFAULT_METRICS["binary" if preds.is_binary else "multiclass"]
    keys = metrics + (("brier", "log_loss") if preds.is_binary else ())
    n_ref = page_redraws(keys, preds.n * (1 if preds.is_binary else len(preds.classes)),
                         multiclass=not preds.is_binary)

    def compute():
        with progress_bar("Before and after, with intervals") as progress:
            # intervals at 1 - alpha: the better/worse calls come from the difference's, as Compare's do
            return recalibration_table(preds.y, _y_prob(preds), res, metrics=metrics, config=cfg,
                                       sample_weight=preds.weights, n_resamples=n_run, n_reference=n_ref,
                                       confidence=1.0 - cfg.alpha, random_state=seed, progress=progress)

    table = cached(("recal_table", tuple(metrics or ()), n_run, tuple(sorted(n_ref.items()))) + key, compute)
    table.attrs.update(n_resamples=n_run, n_reference=n_ref, requested=n_boot)
    return table


def named_reading(method: str, reading: str, strong: bool = False) -> str:
    """A row's reading with the method named as the Method column names it ("Platt scaling: ECE ...", not
    "platt: ECE ..."); ``strong``: the name in bold Markdown (the page's "In plain words")."""
    label = METHOD_LABELS.get(method, method)
    return reading.replace(f"{method}:", f"**{label}:**" if strong else f"{label}:", 1)


def _change(improved: bool, worse: bool, low: float, high: float) -> str:
    """The row's call in a word, as its reading says it (recalibration_table's improved / worse)."""
    if not (np.isfinite(low) and np.isfinite(high)):
        return ""
    return "better" if improved else "worse" if worse else "no clear change"


def show_metric_table(table: pd.DataFrame) -> None:
    def fmt(v, u):
        return format_value(v, u)

    level = float(table.attrs.get("confidence", 0.95))

    shown = pd.DataFrame({  # before, after and the difference first: the calibrated ranges pushed them off-screen
        "Method": table["method"].map(METHOD_LABELS).fillna(table["method"]),
        "Metric": table["label"],
        "Change": [_change(i, w, lo, hi) for i, w, lo, hi in zip(table["improved"], table["worse"], table["diff_low"],
                                                                 table["diff_high"])],
        "Before": [fmt(v, u) for v, u in zip(table["before"], table["unit"])],
        f"After ({100 * level:g}% interval)": [fmt(v, u) + (f" ({format_interval(a, b, u)})" if np.isfinite(a)
                                                             else "") for v, a, b, u in
                  zip(table["after"], table["after_low"], table["after_high"], table["unit"])],
        "Before − after": [format_difference(d, u) for d, u in zip(table["diff"], table["unit"])],
        f"{100 * level:g}% interval of the difference": [format_interval(a, b, u, difference=True) for a, b, u in
                                                           zip(table["diff_low"], table["diff_high"], table["unit"])],
        "Before: calibrated model would show": [format_interval(a, b, u) for a, b, u in
                                                zip(table["before_null_low"], table["before_null_high"],
                                                    table["unit"])],
        "After: calibrated model would show": [format_interval(a, b, u) for a, b, u in
                                               zip(table["after_null_low"], table["after_null_high"], table["unit"])],
    })
    # the readings below, not in a column: the table cut them after a few words, and at 1280 px they pushed the
    # calibrated-model ranges off-screen (a walk-through)
    show_dataframe(shown)
    with st.expander("What each row means"):  # each reading names its method and metric ("Platt scaling: ECE ...")
        for method, reading in zip(table["method"], table["reading"]):
            st.markdown(named_reading(method, reading, strong=True))
    n_boot, n_ref = table.attrs.get("n_resamples", 0), table.attrs.get("n_reference", 0)
    st.caption(f"Evaluated on {int(table['n_evaluated'].iloc[0]):,} rows, {table['scheme'].iloc[0]}: every 'after' "
               "comes from a map that did not see its row, but the rows of all folds are scored together, and on "
               "a model already calibrated that made the 'after' look better than on new rows (ECE by about 0.005, "
               "a simulation): a small improvement, or 'no clear change', can be a small loss on new data; a split "
               "column's test rows judge it on rows no map saw. Before − after > 0 is an improvement; Brier score and "
               "log loss rows are the loss gained by recalibration (Berta et al. 2025). "
               + (f"Intervals at {100 * level:g}% (1 - α, the level of the better/worse calls) from {n_boot} "
                  "bootstrap resamples; the difference's interval is paired (rows resampled jointly for before and "
                  "after, maps held fixed) and is the hull of its percentile and basic intervals, as Compare's. "
                  if n_boot else
                  "Bootstrap intervals are off (0 resamples in the sidebar). " if not table.attrs.get("requested") else
                  "Bootstrap intervals wait for the button above on this many rows, to keep the page fast. ")
               + "Calibrated-model reference: " + redraws_words(n_ref, table["label"], table["metric"])
               + " label redraws from the predictions, as on the other pages.")


def downloads(preds: Predictions, res: dict, method: str) -> None:
    """The recalibrated predictions (CSV/Parquet), the map (JSON) and the Python snippet, for one method."""
    from ..io.export import to_csv

    cf = res[method]
    frame = _source_frame(preds)
    try:
        out = recalibrated_frame(frame, preds, cf) if frame is not None else None
    except Exception:  # noqa: BLE001 - the file and the loaded rows differ: offer the loaded columns instead
        out = None
    if out is None:
        out = preds.features.copy()
        out["label"] = [preds.classes[i] for i in preds.y]
        if preds.is_binary:
            out["p"] = preds.y_prob
        out = recalibrated_frame(out, preds, cf)
    stem = slug(f"{preds.name}_{method}")
    c1, c2, c3 = st.columns(3)
    with c1:
        st.download_button("Predictions as CSV", data=lambda: to_csv(out).encode("utf-8"),
                           file_name=f"{stem}_recalibrated.csv", mime="text/csv", icon=":material/download:",
                           key=f"recal_csv_{method}", help="The rows and columns of your file plus the new ones.")
    with c2:
        st.download_button("Predictions as Parquet", data=lambda: _parquet(out), file_name=f"{stem}_recalibrated.parquet",
                           mime="application/octet-stream", icon=":material/download:", key=f"recal_pq_{method}")
    mapping = cf.to_dict() if isinstance(cf, GroupedCrossFit) else cf.final.to_dict()
    with c3:
        st.download_button("Map as JSON", data=json.dumps(mapping, indent=1).encode("utf-8"),
                           file_name=f"{stem}_map.json", mime="application/json", icon=":material/download:",
                           key=f"recal_json_{method}",
                           help="The map fitted on all calibration rows: parameters or knots, plain JSON.")
    snippet = python_snippet(f"{stem}_map.json", is_binary=preds.is_binary)
    if isinstance(cf, GroupedCrossFit):
        snippet = (f"# one map per level of {cf.by!r}: apply json['levels'][level] to the rows of each level\n"
                   + snippet.replace("from_dict(json.load(f))", "from_dict(json.load(f)['levels'][LEVEL])"))
    st.code(snippet, language="python", wrap_lines=True)  # its comments were cut at 1280 px (a walk-through)
    st.caption("New columns: " + ", ".join(c for c in out.columns if c not in _source_columns(preds, frame)) + ".")


def _parquet(df: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    df.to_parquet(buf, index=False)
    return buf.getvalue()


def _source_frame(preds: Predictions):
    """The loaded file's table (same rows as the predictions of a single-model file), if available."""
    data = st.session_state.get("cv_bytes")
    if data is None:
        return None
    from .data import raw_table

    src = current_source()
    try:
        frame = raw_table(data, src["name"]).frame
    except Exception:  # noqa: BLE001
        return None
    return frame if len(frame) == preds.n else None


def _source_columns(preds, frame) -> list:
    return list(frame.columns) if frame is not None else list(preds.features.columns) + ["label", "p"]


def open_in_compare(preds: Predictions, res: dict, choice: dict, seed: int) -> str:
    """Add the recalibrated predictions as models of the current data (the Compare page shows them); every page's
    link then carries what made them (:func:`added_link_params`), so that it opens with them."""
    spec = {"model": preds.name, **_fit_choice(choice), "seed": int(seed)}
    added = [(key, old) for key, old in st.session_state.get(_ADDED, []) if old != spec]
    st.session_state[_ADDED] = added + [(_data_key(), spec)]
    models = dict(st.session_state["cv_models"])
    first = next(iter(res.values()))
    base = preds if first.evaluated.all() else preds.subset(first.evaluated)
    added = []
    if not first.evaluated.all():
        name = f"{preds.name} (test rows)"
        models[name] = Predictions(y=base.y, probs=base.probs, classes=base.classes, weights=base.weights,
                                   features=base.features, name=name, source=base.source)
        added.append(name)
    for method, cf in res.items():
        name = f"{preds.name} · {METHOD_LABELS[method]}"
        models[name] = recalibrated_predictions(preds, cf, name=name)
        added.append(name)
    st.session_state["cv_models"] = models
    return ", ".join(added)



def variable_figures(preds: Predictions, res: dict, method: str, feature: str, alpha: float, key: tuple):
    """(before figure, after figure, VECE before, VECE after, the after curve's p-value along the whole curve)
    along ``feature`` for one method (evaluated rows)."""
    from ..metrics import vece
    from ..variables import disagreement_ranges, variable_curves

    cf = res[method]
    rows = np.flatnonzero(cf.evaluated)
    x = preds.features[feature].to_numpy(dtype=float)[rows]
    w = None if preds.weights is None else preds.weights[rows]
    y = preds.y[rows]

    def one(P, title):
        curves = variable_curves(x, y, P, kind="error", alpha=alpha, scale="percent", sample_weight=w)
        ranges = disagreement_ranges(curves)
        return (figures.variable_curves(x, curves=curves, ranges=ranges, name=feature, title=title),
                float(vece(x, y, P, sample_weight=w)), float(curves.attrs["p_value"]), int(curves.attrs["n_draws"]))

    def compute():
        before, v_before, _, _ = one(_y_prob(preds)[rows], f"Before: error along {feature}")
        after, v_after, p_after, n_draws = one(cf.y_prob[rows], f"After {METHOD_LABELS[method]}: error along {feature}")
        return before, after, v_before, v_after, p_after, n_draws

    return cached(("recal_var", method, feature, alpha) + key, compute)
