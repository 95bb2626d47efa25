"""Which column is what: detect (or take from the user) the column mapping.

Detection rules, in order (every rule can be overridden by an argument):

- label: the first column named (case-insensitively) one of ``LABEL_NAMES``.
- model (long format, one row per example and model): a column named
  ``model``, ``model_name`` or ``classifier``.
- weight: ``weight``, ``weights``, ``sample_weight``.
- probabilities, first match wins:
  1. column groups per model (wide format): ``<model>__<probability column>``
     or ``<model>:<probability column>``, e.g. ``raw__p`` and ``platt__p``;
  2. one column per class: ``p_<class>``, ``prob_<class>``, ``proba_<class>``,
     ``probability_<class>`` (also with ``-``, ``.`` or no separator) or
     ``<class>_proba`` / ``<class>_prob`` / ``<class>_probability``, where
     ``<class>`` is a label value; or columns named exactly as the labels;
     integer labels 0..K-1 with K prefixed columns whose suffixes are not label
     values are read as column indices (recorded in ``notes``);
  3. one column per model, for a binary label: two or more columns named like
     probabilities whose names do *not* name a class of the label --
     ``<model>_proba``, ``<model>_prob``, ``<model>_probability``,
     ``proba_<model>``, ``prob_<model>``, ``p_<model>``, ... (scikit-learn
     exports such as ``logreg_proba, rf_proba`` next to ``y_true``) -- holding
     values in [0, 1] whose rows do *not* sum to 1: each is P(positive class)
     of a model named by the rest of the column name. The rule that separates
     them from rule 2 is the label: a suffix that is one of the label's classes
     names a class (``p_0``, ``p_1``, ``p_benign``); any other suffix names a
     model. Rows that sum to 1 are one model's class probabilities (rule 2);
  4. one positive-class column for binary data: ``p``, ``prob``, ``proba``,
     ``probability``, ``y_prob``, ``y_score``, ``score``, ``pred``,
     ``prediction``, ``p_hat``, ``risk``; or a single ``p_<label>`` column,
     whose suffix names the positive class.

  Ambiguous layouts are refused with both readings and how to choose each
  (``probs=``): one positive-class column (``p`` or ``p_<class>``) next to
  columns named like other models' probabilities (``p_1`` and ``p_rf``
  could be a model and a feature, or two models). Suffixes of statistics
  (``p_value``, ``p_adj``, ...) never name a model.
- features: every other column except index-like ones (``id``, ``*_id``,
  ``index``, pandas' ``Unnamed: 0``): an identifier is no variable to analyse.
  Columns named like probabilities of a class or of a model (rules 2-3) are
  never features, also when only some of them are mapped (choosing one of
  ``p_benign``/``p_malignant`` leaves the other out, with a note).
"""
from __future__ import annotations

import numbers
import re
import reprlib
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import InputError
from .readers import SHEETS_ATTR

__all__ = ["ColumnMapping", "detect_mapping", "guess_label", "model_names", "unsupported_columns", "LABEL_NAMES", "WEIGHT_NAMES", "MODEL_NAMES", "ID_NAMES"]

LABEL_NAMES = ("label", "y", "y_true", "target", "true", "truth", "true_label", "ground_truth",
               "outcome", "actual", "class", "labels")
WEIGHT_NAMES = ("weight", "weights", "sample_weight", "sample_weights")
#: Label names that hardly ever name anything else (a second one of them read as a feature is noted).
_RIVAL_LABEL_NAMES = frozenset({"label", "y", "y_true", "target", "truth", "true_label", "ground_truth", "outcome"})
MODEL_NAMES = ("model", "model_name", "classifier")
ID_NAMES = ("id", "row_id", "index", "unnamed: 0", "")
_ID_PATTERN = re.compile(r"^(?:.*[_\- ])?id$|^unnamed: \d+$", re.IGNORECASE)
SINGLE_PROB_NAMES = ("p", "prob", "proba", "probability", "y_prob", "y_proba", "y_score", "score", "pred",
                     "prediction", "predicted_probability", "p_hat", "phat", "risk", "y_pred_proba", "pred_proba",
                     "pred_prob", "predicted_proba", "positive_proba", "positive_prob")
_PREFIX = re.compile(r"^(?:p|prob|probs|proba|probability|y_prob|y_proba)([_\-.: ]+)(.+)$", re.IGNORECASE)
_MODEL_SEP = re.compile(r"^(.+?)(?:__|:)(.+)$")
#: ``<name>_proba`` and similar: a class (``benign_proba``) or a model (``logreg_proba``), see the module docstring.
_POSTFIX = re.compile(r"^(.+?)[_\-.: ]+(?:prob|probs|proba|probability|pred_proba|pred_prob|predicted_proba|"
                      r"predicted_probability|y_prob|y_proba)$", re.IGNORECASE)
#: Suffixes of statistics that sit next to probabilities (``p_value``, ``p_adj``): never a model's name.
_STAT_SUFFIXES = frozenset({"value", "values", "val", "vals", "adj", "adjusted", "fdr", "bonf", "bonferroni", "holm",
                            "corrected", "corr", "raw_value"})
_AFFIRMATIVE = ("1", "true", "yes", "y", "pos", "positive", "t")
_NEGATIVE = ("0", "false", "no", "n", "neg", "negative", "f", "-1")


def _suffix(col: str, label_keys=()) -> str | None:
    """The class named by a prefixed probability column (``p_cat`` -> ``cat``), or None.

    The separator may be several characters (``p__cat``); a minus that starts a label is part of the
    label, not of the separator, when that label exists (``p_-1`` with labels -1/1 -> ``-1``).

    Examples
    --------
    >>> _suffix("p_-1", {"-1", "1"}), _suffix("p_1", {"-1", "1"}), _suffix("prob-cat"), _suffix("age")
    ('-1', '1', 'cat', None)
    """
    m = _PREFIX.match(col)
    if m is None:
        return None
    sep, rest = m.group(1), m.group(2)
    for i in range(1, len(sep)):
        candidate = sep[i:] + rest
        if _key(candidate) in label_keys:
            return candidate
    return rest


def _named_part(col: str, label_keys=()) -> str | None:
    """What a probability-like column name names: ``p_cat`` / ``cat_proba`` -> ``cat``; None for other names.

    Examples
    --------
    >>> _named_part("proba_rf"), _named_part("logreg_proba"), _named_part("p_-1", {"-1"}), _named_part("age")
    ('rf', 'logreg', '-1', None)
    >>> _named_part("y_prob") is None  # a positive-class name, not a class or model
    True
    """
    if str(col).strip().lower() in SINGLE_PROB_NAMES:
        return None
    part = _suffix(col, label_keys)
    if part is not None:
        return part
    m = _POSTFIX.match(col)
    return m.group(1) if m else None


def _probability_like(df: pd.DataFrame, cols, labels) -> tuple[list, dict, list]:
    """Columns named like probabilities: (naming a class, ``{column: model name}`` naming no class, bare names).

    A column counts as a model's only when its values lie in [0, 1] (a ``prob_rank`` of 1..100 stays a
    feature) and its suffix is no statistic's (``p_value``).
    """
    label_keys = {_key(v) for v in labels}
    class_named, model_named, bare = [], {}, []
    for c in cols:
        if str(c).strip().lower() in SINGLE_PROB_NAMES:
            if _unit_interval(df[c]):
                bare.append(c)
            continue
        part = _named_part(c, label_keys)
        if part is None:
            continue
        if _key(part) in label_keys:
            class_named.append(c)
        elif _key(part) not in _STAT_SUFFIXES and _unit_interval(df[c]):
            model_named[c] = part
    if len(set(map(_key, model_named.values()))) < len(model_named):  # p_rf and rf_proba: the names are ambiguous
        model_named = {c: c for c in model_named}
    return class_named, model_named, bare


def _unit_interval(s: pd.Series) -> bool:
    """Numeric (not boolean) values in [0, 1], at least one."""
    if pd.api.types.is_bool_dtype(s):
        return False
    v = pd.to_numeric(s, errors="coerce") if not pd.api.types.is_numeric_dtype(s) else s
    if v.notna().sum() == 0 or v.notna().sum() < s.notna().sum():
        return False
    v = v.to_numpy(dtype=np.float64, na_value=np.nan)
    return bool(np.nanmin(v) >= 0.0 and np.nanmax(v) <= 1.0)


def _per_model_columns(df: pd.DataFrame, cols, labels) -> dict | None:
    """Rule 3 of the module docstring: ``{model: [column]}`` for one probability column per model, or None.

    Raises InputError, naming both readings, when one positive-class column sits next to columns named like
    other models' probabilities.
    """
    if len(labels) > 2:
        return None
    class_named, model_named, bare = _probability_like(df, cols, labels)
    if not model_named:
        return None
    firsts = class_named + bare
    if not firsts:
        if len(model_named) < 2 or _rows_sum_to_one(df, list(model_named)):
            return None  # a single column (rule 4), or one model's class probabilities (rule 2)
        return {name: [c] for c, name in model_named.items()}
    if (len(class_named) >= 2 and _rows_sum_to_one(df, class_named)) or (
            class_named and _rows_sum_to_one(df, class_named + list(model_named))):
        # per-class columns of one model; the rest are handled (and noted) by rule 2. With the others the rows
        # summing to 1, the others are classes that never occur in the labels (p_c2 beside labels c0 and c1 was
        # read as a model's column and refused as ambiguous, a review; so were p_b and p_c beside labels all 'a')
        return None
    one = firsts[0]
    others = list(model_named)
    names = model_names([one, *others], labels)
    shown = ", ".join(map(repr, others[:4]))
    as_models = "{" + ", ".join(f"{names[c]!r}: [{c!r}]" for c in [one, *others[:3]]) + (", ..." if len(others) > 3 else "") + "}"
    what = (f"the probability columns are ambiguous: {one!r} holds P(positive class) of one model, and {shown} "
            f"{'is' if len(others) == 1 else 'are'} named like the probabilities of other models. Read either as "
            f"(a) one model {one!r} (the others left out), or (b) one model per "
            f"column ({', '.join(repr(names[c]) for c in [one, *others[:3]])}{', ...' if len(others) > 3 else ''})")
    raise InputError(
        f"{what}. Choose with probs={one!r} for (a), or probs={as_models} for (b).",
        ui_message=(f"{what}. Choose in the column mapping: Probability columns {one} only for (a); or select all "
                    "of them and 'one model per column' for (b)."),
        hint={"probs": [one, *others], "per_model": True},
    )


def _key(value) -> str:
    """Normalised string form of a label or a column suffix, for matching."""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value)).lower()
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        value = int(value)
    return str(value).strip().lower()


@dataclass(frozen=True)
class ColumnMapping:
    """The resolved meaning of the columns of a predictions table.

    Attributes
    ----------
    label : str
        Label column.
    probs : dict of str to tuple of str
        Model name -> probability columns. One column: binary data given as
        P(positive class). Several: one column per class in ``classes`` order.
    classes : tuple
        Class labels (as they appear in the file) in internal order 0..K-1.
        Binary data: ``(negative, positive)``.
    model : str or None
        Long-format model column.
    weight : str or None
        Sample-weight column.
    features : tuple of str
        Columns available for variable-based analysis.
    notes : tuple of str
        Decisions a person should know about (shown in the dashboard).
    label_positions : bool
        Integer labels are positions 0..K-1 of the probability columns.
    """

    label: str
    probs: dict
    classes: tuple
    model: str | None = None
    weight: str | None = None
    features: tuple = ()
    notes: tuple = field(default_factory=tuple)
    label_positions: bool = False

    @property
    def is_binary(self) -> bool:
        return len(self.classes) == 2

    @property
    def model_names(self) -> tuple:
        return tuple(self.probs)


_CONTAINERS = (list, tuple, dict, set, frozenset, np.ndarray)
_SCALAR_KINDS = {"string", "empty", "integer", "floating", "mixed-integer-float", "decimal", "boolean", "datetime64",
                 "datetime", "date", "timedelta64", "timedelta", "time", "period", "interval", "complex", "categorical"}


def _container_kind(s: pd.Series) -> str | None:
    """'lists', 'dicts', 'bytes', ... when an object column holds values no analysis can use, else None."""
    if s.dtype != object:
        return None
    kind = pd.api.types.infer_dtype(s, skipna=True)
    if kind in _SCALAR_KINDS:
        return None
    if kind == "bytes":
        return "raw bytes"
    values = s.dropna()
    hits = values.map(lambda v: isinstance(v, _CONTAINERS) or isinstance(v, (bytes, bytearray)))
    if not hits.any():
        return None
    first = values[hits.to_numpy()].iloc[0]
    name = {list: "lists", tuple: "tuples", dict: "records (dicts)", set: "sets", frozenset: "sets",
            np.ndarray: "lists (arrays)", bytes: "raw bytes", bytearray: "raw bytes"}.get(type(first), "containers")
    return f"{name}, e.g. {reprlib.repr(first)}"


def unsupported_columns(df: pd.DataFrame) -> dict:
    """Columns whose values are lists, records or raw bytes: ``{column: what it holds}``.

    Includes the columns a reader left out of ``df`` (``df.attrs["calibviz_unsupported_columns"]``, e.g.
    Parquet list or struct columns) and object columns holding such values.

    Examples
    --------
    >>> unsupported_columns(pd.DataFrame({"x": [1, 2], "emb": [[0.1, 0.2], [0.3, 0.4]]}))
    {'emb': 'lists, e.g. [0.1, 0.2]'}
    """
    out = {str(c): f"{t} values" for c, t in dict(df.attrs.get("calibviz_unsupported_columns") or {}).items()}
    for j, c in enumerate(df.columns):
        col = df.iloc[:, j]
        if col.dtype == object:
            kind = _container_kind(col)
            if kind is not None:
                out[c] = kind
    return out


def model_names(columns, labels=()) -> dict:
    """``{column: model name}`` when each column is one model's P(positive): ``logreg_proba`` -> ``logreg``.

    A column whose name names a class of the label (``p_1``), or no model at all, keeps its own name, and so do
    all of them when two would get the same name.

    Examples
    --------
    >>> model_names(["logreg_proba", "proba_rf", "p_1"], labels=[0, 1])
    {'logreg_proba': 'logreg', 'proba_rf': 'rf', 'p_1': 'p_1'}
    """
    keys = {_key(v) for v in labels}
    names = {}
    for c in columns:
        part = _named_part(c, keys)
        names[c] = part if part is not None and _key(part) not in keys else c
    if len(set(names.values())) < len(names):
        names = {c: c for c in columns}
    return names


def guess_label(columns) -> str | None:
    """The label column by name alone (``y_true``, ``label``, ...), or None: the mapping panel's default even when
    the rest of the detection fails.

    Examples
    --------
    >>> guess_label(["x0", "x1", "y_true", "logreg_proba"])
    'y_true'
    """
    return _find(list(map(str, columns)), LABEL_NAMES, None, "label")


def guess_probs(columns) -> list:
    """Probability columns by name alone (``p``, ``score``, ``p_<class>``, ...): the mapping panel's default when
    the rest of the detection fails (a 3-class label beside one ``p`` column showed the error about "a single
    probability column" above an empty Probability columns field, a walk-through).

    Examples
    --------
    >>> guess_probs(["label", "p", "age"]), guess_probs(["y", "p_cat", "p_dog", "x"])
    (['p'], ['p_cat', 'p_dog'])
    """
    names = list(map(str, columns))
    single = [c for c in names if c.lower() in SINGLE_PROB_NAMES]
    return single[:1] or [c for c in names if _PREFIX.match(c)]


def _find(columns, names, override, what):
    if override is not None:
        if override not in columns:
            raise InputError(f"{what} column {override!r} is not in the file; columns are: {_list(columns)}.",
                             ui_message=f"the {what} column {override} is not in the file; choose one of its columns: "
                                        f"{_plain(columns, 12)}.")
        return override
    lower: dict = {}
    for c in columns:
        lower.setdefault(c.lower(), c)  # the first of 'label' and 'LABEL', as documented
    for n in names:
        if n in lower:
            return lower[n]
    return None


#: Labels beyond a binary column's two main classes in at most this share of the rows are named as strays.
STRAY_SHARE = 0.01


def too_many_classes_error(values: list, strays: tuple | None = None) -> InputError:
    """The error of a single probability column against a label column of more than two classes ``values`` (in
    memory and on scans). ``strays``: (labels, rows, all rows) of the labels beyond the two main classes when they
    are a few rows (:data:`STRAY_SHARE`): a binary log with 6 rows labelled 2 read as a multiclass file (a
    walk-through), so the message counts them and says what to do.

    >>> str(too_many_classes_error([0, 1, 2], ([2], 6, 1_000_000))).split("; ", 1)[1]
    'the label 2 occurs in only 6 of 1,000,000 rows: if those rows are errors, drop them or fix their labels; otherwise give one probability column per class (e.g. p_<class>).'
    """
    few = strays is not None and strays[1] <= STRAY_SHARE * strays[2]
    stray = ""
    if few:
        labels, rows, total = strays
        what = f"the label {_plain(labels)} occurs" if len(labels) == 1 else f"the labels {_plain(labels)} occur"
        stray = (f"{what} in only {rows:,} of {total:,} rows: if those rows are errors, drop them or fix their "
                 "labels; otherwise ")
    return InputError(
        f"a single probability column describes a binary problem, but the label column holds {len(values)} "
        f"classes ({values[:10]!r}); {stray}give one probability column per class (e.g. p_<class>).",
        ui_message=f"a single probability column describes a binary problem, but the label column holds "
                   f"{len(values)} classes ({_plain(values)}); {stray}choose one Probability column per class (or "
                   "another Label column).")


def stray_labels(labels: pd.Series) -> tuple | None:
    """(labels, rows, all rows) of a label column's values beyond its two most frequent (for
    :func:`too_many_classes_error`), or None with at most two values."""
    present = labels.dropna()
    keys = present.map(_key)
    counts = keys.value_counts()
    if len(counts) <= 2:
        return None
    # a label of each key, by key (unique() took False and 0 for one value: Python finds them equal, a fuzz test)
    names = dict(zip(keys.to_numpy(), present.to_numpy()))
    # a yes/no-like pair among them is the binary label's two classes, however rare the events (labels 0, 1 and
    # more -1 than 1 named the real positives as strays to drop, a review); else the two most frequent
    pair = next(([a, b] for a in counts.index for b in counts.index
                 if a in _AFFIRMATIVE and _OPPOSITES.get(a) == b), None)
    rest = counts.drop(pair) if pair else counts.iloc[2:]
    return [names[k] for k in rest.index], int(rest.sum()), int(counts.sum())


def _plain(values, limit=10) -> str:
    """Values for the dashboard: ``a, b, c`` (no Python list syntax)."""
    values = list(values)
    return ", ".join(map(str, values[:limit])) + (f", ... ({len(values)} in all)" if len(values) > limit else "")


def _list(columns, limit=12) -> str:
    cols = list(columns)
    if not cols:
        return "none besides the label (and weight, model) columns"
    shown = ", ".join(repr(c) for c in cols[:limit])
    return shown + (f", ... ({len(cols)} columns)" if len(cols) > limit else "")


def _label_values(series: pd.Series) -> list:
    values = pd.unique(series.dropna())
    try:
        return sorted(values.tolist())
    except TypeError:
        return sorted(values.tolist(), key=_key)


#: Opposite pairs of yes/no-like labels: a binary label column that holds one of them names the other class too.
_OPPOSITES = {"0": "1", "-1": "1", "false": "true", "no": "yes", "n": "y", "neg": "pos", "negative": "positive",
              "f": "t"}
_OPPOSITES.update({v: k for k, v in _OPPOSITES.items() if k != "-1"})


def _other_class(value):
    """The class opposite a yes/no-like label, of the label's type and case (None for other labels): what the
    other class of a binary label column is called when only one class occurs in it (a day of a fraud log with no
    fraud is still a log of the classes 0 and 1).

    >>> _other_class(0), _other_class(True), _other_class(1.0), _other_class("No"), _other_class("YES")
    (1, False, 0.0, 'Yes', 'NO')
    >>> _other_class(-1), _other_class("cat") is None, _other_class(2) is None
    (1, True, True)
    """
    key = _key(value)
    other = _OPPOSITES.get(key)
    if other is None:
        return None
    if isinstance(value, (bool, np.bool_)):
        return not bool(value)
    if isinstance(value, (numbers.Number, np.number)):
        return type(value)(int(other)) if not isinstance(value, (float, np.floating)) else float(other)
    text = str(value).strip()
    return other.upper() if text.isupper() and len(text) > 1 else other.capitalize() if text[:1].isupper() else other


def _classes(n: int) -> str:
    return f"{n} class" if n == 1 else f"{n} classes"


#: The AUC from which a probability column's ranking names the class it is the probability of: the hint of the
#: Positive class (the alphabetically last label was preselected, and accepting it gave ECE 0.90 and AUC 0.005 on
#: churn/stay labels, an audit). A model ranking this well either way is told apart from chance by any sample.
RANKED_AUC = 0.6


def _ranked_positive(values: list, ranked):
    """The class of two whose rows a probability column ranks higher (AUC >= :data:`RANKED_AUC`), or None.

    >>> import pandas as pd
    >>> y = pd.Series(["stay", "churn", "stay", "churn"]); p = pd.Series([0.1, 0.8, 0.3, 0.6])
    >>> _ranked_positive(["churn", "stay"], (y, p, False)), _ranked_positive(["churn", "stay"], (y, 1 - p, False))
    ('churn', 'stay')
    >>> _ranked_positive(["churn", "stay"], (y, pd.Series([0.5] * 4), False)) is None
    True
    """
    if ranked is None or len(values) != 2:
        return None
    labels, scores = ranked[:2]
    scores = pd.to_numeric(scores, errors="coerce").to_numpy(dtype=np.float64)
    first = labels.map(_key).to_numpy() == _key(values[0])
    ok = np.isfinite(scores) & labels.notna().to_numpy()
    n1, n0 = int(np.count_nonzero(first & ok)), int(np.count_nonzero(~first & ok))
    if not n1 or not n0:
        return None
    from scipy.stats import rankdata

    from ..metrics.discrimination import roc_auc  # the one AUC; of ranks in (0, 1]: any scores (logits too)

    auc_first = roc_auc(first[ok], rankdata(scores[ok]) / ok.sum())
    return values[0] if auc_first >= RANKED_AUC else values[1] if auc_first <= 1 - RANKED_AUC else None


def _positive_of(values: list, positive, ranked=None) -> tuple:
    """(negative, positive) for binary labels; ``ranked``: (labels, scores, sample) of a single probability
    column, from which the error of labels that name no positive class suggests one (:func:`_ranked_positive`),
    and that of more than two labels counts the strays (not from a sample: a scan's first rows)."""
    if positive is not None:
        matches = [v for v in values if _key(v) == _key(positive)]
        if len(values) == 1 and not matches:  # one class occurs (no yes/no-like one: detect_mapping added its
            return values[0], positive        # opposite) and the positive class never does
        if not matches:
            if len(values) > 2:
                raise InputError(f"positive class {positive!r} is not among the labels {values[:10]!r}.",
                                 ui_message=f"the positive class {positive} is not among the labels ({_plain(values)}).")
            raise InputError(f"positive class {positive!r} is not among the labels {values!r}; pass one of them.",
                             ui_message=f"the positive class {positive} is not among the labels ({_plain(values)}); "
                                        "choose one of them.")
        pos = matches[0]
        others = [v for v in values if _key(v) != _key(pos)]
        if len(others) > 1:
            raise InputError(
                f"a single probability column describes two classes, but the labels hold {len(values)} values "
                f"({values[:10]!r}); give one probability column per class.",
                ui_message=f"a single probability column describes two classes, but the labels hold {len(values)} "
                           f"values ({_plain(values)}); choose one Probability column per class.")
        return (others[0] if others else "not " + str(pos)), pos
    if len(values) > 2:
        strays = None if ranked is None or ranked[2] else stray_labels(ranked[0])
        raise too_many_classes_error(values, strays)
    keys = [_key(v) for v in values]
    for i, k in enumerate(keys):
        if k in _AFFIRMATIVE and all(o in _NEGATIVE for j, o in enumerate(keys) if j != i):
            return values[1 - i], values[i]
    raise InputError(
        f"cannot tell the positive class among the labels {values!r}; pass positive=<label> "
        "(the class whose probability the column holds).",
        ui_message=f"which class is positive among the labels {_plain(values)}? Choose the Positive class (the class "
                   "whose probability the column holds) in the column mapping.",
        hint={"positive": _ranked_positive(values, ranked)},
    )


def _rows_sum_to_one(df: pd.DataFrame, cols) -> bool:
    """Do these columns hold probability vectors (finite rows summing to 1 within 1e-3)?"""
    try:
        block = df[list(cols)].apply(pd.to_numeric, errors="raise").to_numpy(dtype=np.float64)
    except (TypeError, ValueError):
        return False
    sums = block.sum(axis=1)
    finite = np.isfinite(sums)
    return bool(finite.any()) and bool(np.all(np.abs(sums[finite] - 1.0) <= 1e-3))


def _class_columns(df: pd.DataFrame, cols: list, labels: list, notes: list):
    """Match per-class probability columns to label values: (columns, classes, labels_are_positions) or None.

    Columns whose suffix is no label are read as classes only when the rows then sum to 1 (a class
    that never occurs in the labels still has a column); otherwise they stay features (``p_value``).
    """
    label_keys = {_key(v): v for v in labels}
    prefixed = {}
    for c in cols:
        suffix = _named_part(c, label_keys)
        if suffix is not None:
            prefixed[c] = suffix
    has_single = any(c.lower() in SINGLE_PROB_NAMES for c in cols)
    if prefixed:
        matched = {c: label_keys[_key(s)] for c, s in prefixed.items() if _key(s) in label_keys}
        unmatched = [c for c in prefixed if c not in matched]
        if len(matched) >= 2:
            if not unmatched:
                return list(matched), list(matched.values()), False
            everything = list(prefixed)
            if _rows_sum_to_one(df, everything):
                one = len(unmatched) == 1
                notes.append(f"class{'' if one else 'es'} {', '.join(prefixed[c] for c in unmatched)} "
                             f"ha{'s a probability column' if one else 've probability columns'} but never "
                             f"occur{'s' if one else ''} in the labels")
                return everything, [matched.get(c, prefixed[c]) for c in everything], False
            if _rows_sum_to_one(df, list(matched)):
                notes.append(f"{', '.join(unmatched)} not read as classes (the rows sum to 1 without them)")
                return list(matched), list(matched.values()), False
            what = (f"columns {', '.join(map(repr, unmatched))} look like probability columns but name no label, "
                    "and the rows sum to 1 neither with nor without them")
            raise InputError(f"{what}; pass probs=[...] with the class columns.",
                             ui_message=f"{what}; choose the class columns as Probability columns.")
        if len(matched) == 1 and unmatched and _rows_sum_to_one(df, list(prefixed)):
            # one class occurs and the others only name columns whose rows sum to 1: the classes of the columns
            # (labels all 'a' beside p_a, p_b, p_c read as one model per column, a review)
            notes.append(f"class{'' if len(unmatched) == 1 else 'es'} {', '.join(prefixed[c] for c in unmatched)} "
                         f"ha{'s a probability column' if len(unmatched) == 1 else 've probability columns'} but "
                         f"never occur{'s' if len(unmatched) == 1 else ''} in the labels")
            return list(prefixed), [matched.get(c, prefixed[c]) for c in prefixed], False
        if len(matched) == 1 and len(label_keys) <= 2:
            return None  # a single p_<label> column: the caller reads it as P(positive)
        int_labels = all(isinstance(v, (int, np.integer)) for v in labels)
        if (len(prefixed) >= 2 and not matched and not has_single and int_labels
                and all(0 <= v < len(prefixed) for v in labels) and _rows_sum_to_one(df, list(prefixed))):
            notes.append(
                f"integer labels read as positions of the probability columns ({', '.join(list(prefixed)[:3])}, ...)"
            )
            return list(prefixed), list(prefixed.values()), True
        if len(prefixed) >= 2 and not matched and _rows_sum_to_one(df, list(prefixed)):
            return list(prefixed), list(prefixed.values()), False  # the labels will be checked against them
    exact = [c for c in cols if _key(c) in label_keys]
    if len(exact) >= 2 and len(exact) == len(label_keys):
        return exact, [label_keys[_key(c)] for c in exact], False
    return None


def _resolve_probs(df, cols, labels, probs, positive, notes, label_col=None, sample=False):
    """Return (columns, classes, labels_are_positions) for one model.

    Binary data given as two class columns is put in (negative, positive) order: the ``positive``
    argument decides, else 1/true/yes-like labels are positive, else the second column's class.
    """
    got_cols, got_classes, positional = _resolve_probs_unordered(df, cols, labels, probs, positive, notes,
                                                                 label_col, sample)
    if len(got_cols) != 2 or positional:
        return got_cols, got_classes, positional
    keys = [_key(c) for c in got_classes]
    if positive is not None:
        if _key(positive) not in keys:
            raise InputError(
                f"positive class {positive!r} is not one of the classes of the probability columns "
                f"({', '.join(f'{c!r}: {k!r}' for c, k in zip(got_cols, got_classes))}); pass one of "
                f"{got_classes[0]!r}, {got_classes[1]!r}.",
                ui_message=(f"the positive class {positive} is not one of the classes of the probability columns "
                            f"({got_classes[0]}, {got_classes[1]}); choose one of them."),
                hint={"positive": got_classes[1]})
        first_positive = keys.index(_key(positive)) == 0
    else:
        first_positive = keys[0] in _AFFIRMATIVE and keys[1] in _NEGATIVE
    if first_positive:
        return got_cols[::-1], got_classes[::-1], positional
    return got_cols, got_classes, positional


def _resolve_probs_unordered(df, cols, labels, probs, positive, notes, label_col=None, sample=False):
    def ranked(col):  # the labels and the column's scores: a guess of the positive class from the data
        return (df[label_col], df[col], sample) if label_col in df.columns and col in df.columns else None

    if isinstance(probs, str):
        probs = [probs]
    if isinstance(probs, dict):
        missing = [c for c in probs.values() if c not in df.columns]
        if missing:
            raise InputError(f"probability column(s) {missing!r} not in the file; columns are: {_list(df.columns)}.",
                             ui_message=f"probability column(s) {_plain(missing)} not in the file.")
        label_keys = {_key(v): v for v in labels}
        classes = [label_keys.get(_key(k), k) for k in probs]
        if len(probs) == 1:
            return list(probs.values()), list(_positive_of(labels, next(iter(probs)))), False
        return list(probs.values()), classes, False
    if probs is not None:
        probs = list(probs)
        missing = [c for c in probs if c not in df.columns]
        if missing:
            raise InputError(f"probability column(s) {missing!r} not in the file; columns are: {_list(df.columns)}.",
                             ui_message=f"probability column(s) {_plain(missing)} not in the file.")
        if len(probs) == 1:
            return probs, list(_positive_of(labels, _single_positive(probs[0], labels, positive),
                                            ranked=ranked(probs[0]))), False
        found = _class_columns(df, probs, labels, notes)
        if found is not None and len(found[0]) == len(probs):
            return found
        if len(probs) == len(labels):
            notes.append("probability columns matched to the sorted labels in the order given")
            return probs, list(labels), False
        raise InputError(
            f"{len(probs)} probability columns were given but the labels hold {_classes(len(labels))} "
            f"({labels[:10]!r}); pass one column per class as a dict {{class: column}}.",
            ui_message=f"{len(probs)} probability columns were chosen but the labels hold {_classes(len(labels))} "
                       f"({_plain(labels)}); choose one Probability column per class, named p_<class>"
                       + (", or 'one model per column' if each column is one model's P(positive class)"
                          if len(labels) == 2 else "") + ".")
    found = _class_columns(df, cols, labels, notes)
    if found is not None:
        return found
    single = [c for c in cols if c.lower() in SINGLE_PROB_NAMES]
    if not single:
        label_keys = {_key(v) for v in labels}
        prefixed = [c for c in cols if _named_part(c, label_keys) is not None]
        naming_a_label = [c for c in prefixed if _key(_named_part(c, label_keys)) in label_keys]
        single = naming_a_label[:1] if len(naming_a_label) == 1 else prefixed if len(prefixed) == 1 else []
    if single:
        col = single[0]
        return [col], list(_positive_of(labels, _single_positive(col, labels, positive), ranked=ranked(col))), False
    raise InputError(
        "no probability columns found; name them p_<class> (one per class), p (positive-class probability "
        f"for binary data) or <model>_proba (one per model), or pass probs=... . Columns are: {_list(cols)}.",
        ui_message="no probability columns found; choose the Probability columns in the column mapping (one per "
                   "class, one positive-class column, or one per model), or name them p_<class>, p or "
                   "<model>_proba.",
    )


def _single_positive(col, labels, positive):
    if positive is not None:
        return positive
    suffix = _named_part(col, {_key(v) for v in labels})
    if suffix is not None and any(_key(v) == _key(suffix) for v in labels):
        return suffix
    return None


def detect_mapping(df: pd.DataFrame, *, label=None, probs=None, weight=None, model=None, positive=None,
                   features=None, sample: bool = False) -> ColumnMapping:
    """Resolve the column mapping of ``df``, overriding detection where arguments are given.

    Parameters
    ----------
    df : pandas.DataFrame
        The raw table.
    label, weight, model : str, optional
        Column names; detected by name when omitted.
    probs : str, list of str or dict, optional
        One column (binary, P(positive)), one column per class (list in
        class order, or dict ``{class: column}``), or ``{model: columns}``
        for several models in wide format.
    positive : label, optional
        Positive class when a single probability column is given.
    features : list of str, optional
        Feature columns; by default every column not otherwise used.

    Returns
    -------
    ColumnMapping

    Examples
    --------
    >>> df = pd.DataFrame({"y": [0, 1, 1], "p": [0.1, 0.8, 0.6], "age": [30, 40, 50]})
    >>> m = detect_mapping(df)
    >>> m.label, m.probs, m.classes, m.features
    ('y', {'model': ('p',)}, (0, 1), ('age',))
    """
    unsupported = unsupported_columns(df)
    # Columns a reader left out (Parquet lists, structs) still count for detection, so they are named.
    columns = list(df.columns) + [c for c in unsupported if c not in df.columns]
    notes: list[str] = [str(n) for n in df.attrs.get("calibviz_notes") or ()]
    label_col = _find(columns, LABEL_NAMES, label, "label")
    if label_col is None:
        if len(columns) == 1 and re.search(r"[,;\t|]", str(columns[0])):
            # DuckDB's sniffer reads a file as one column when its rows have unequal numbers of fields
            raise InputError(f"the header was read as one column, {str(columns[0])!r}: the delimiter could not be "
                             "detected, most often because some rows have more or fewer fields than the header; "
                             "check that every row has as many fields as the header.")
        read, titles = df.attrs.get(SHEETS_ATTR) or ("", ())
        others = ", ".join(repr(t) for t in titles if t != read)
        sheets = (f" This is the workbook's first sheet, {read!r}; if the predictions are on another ({others}), "
                  "pass sheet=<name> (command line: --sheet NAME)." if others else "")
        raise InputError(
            f"no label column found; name the true-class column one of {', '.join(LABEL_NAMES[:5])} "
            f"or pass label=<column>. Columns are: {_list(columns)}.{sheets}",
            ui_message=f"no label column found; choose the Label column in the column mapping, or name the "
                       f"true-class column one of {', '.join(LABEL_NAMES[:5])}."
                       + (f" This is the workbook's first sheet, {read!r}; if the predictions are on another "
                          f"({others}), choose the Sheet in the column mapping." if others else ""),
        )
    twins = [c for c in columns if c != label_col and str(c).lower() == str(label_col).lower()]
    if twins and label is None:
        notes.append(f"{label_col!r} is the label (the first of {', '.join(map(repr, [label_col, *twins]))}); "
                     "choose another label column to change it")
    model_col = _find(columns, MODEL_NAMES, model, "model")
    weight_col = _find(columns, WEIGHT_NAMES, weight, "weight")
    for role, col in (("label", label_col), ("model", model_col), ("weight", weight_col)):
        if col in unsupported:
            one = "one class" if role == "label" else "one model name" if role == "model" else "one number"
            raise InputError(
                f"the {role} column {col!r} holds {unsupported[col]}; it must hold {one} per row. "
                f"Flatten it into a plain column, or pass {role}=<column> to use another one.",
                ui_message=f"the {role} column {col} holds {unsupported[col].split(', e.g.')[0]}; it must hold {one} "
                           f"per row. Flatten it into a plain column, or choose another {role.capitalize()} column.",
            )
    given = [probs] if isinstance(probs, str) else list(probs.values()) if isinstance(probs, dict) else \
        list(probs) if probs is not None else []
    given = [c for g in given for c in ([g] if isinstance(g, str) else list(g))]
    bad = [c for c in given + list(features or ()) if c in unsupported]
    if bad:
        raise InputError(
            f"column {bad[0]!r} holds {unsupported[bad[0]]}; probabilities and features must hold one number "
            "(or one category) per row. Flatten it into plain columns, or leave it out."
        )
    twice = [(c, role) for c in given for role, col in (("label", label_col), ("weight", weight_col),
                                                         ("model", model_col)) if c == col]
    if weight_col is not None and weight_col in (label_col, model_col):
        twice.append((weight_col, "label" if weight_col == label_col else "model"))
    if twice:  # a column in two roles: the label as its own probability scores ECE 0, a perfect fit of nothing
        c, role = twice[0]
        raise InputError(f"column {c!r} cannot be both the {role} column and a probability or weight column; give "
                         "each role its own column.")
    used = {label_col, model_col, weight_col} - {None}
    rest = [c for c in columns if c not in used and c not in unsupported]
    left_out = [c for c in unsupported if c not in used]
    if left_out and features is None:
        notes.append(f"{', '.join(f'{c!r} ({unsupported[c]})' for c in left_out[:5])}"
                     f"{' and others' if len(left_out) > 5 else ''} left out of the features: values that are "
                     "lists, records or raw bytes cannot be analysed")
    labels = _label_values(df[label_col])
    if not labels:
        raise InputError(f"the label column {label_col!r} is empty; every row needs a true class.")
    if len(labels) == 1 and _other_class(labels[0]) is not None:
        # one yes/no-like class occurs (a day without fraud): its opposite is the other class, for the columns
        # (p_0 beside p_1) and the positive class alike, as if it had occurred (a review: p_0 and p_1 over labels
        # all 0 read as two models, and --positive true over labels all 1 made 1 the negative class)
        labels = _label_values(pd.Series([labels[0], _other_class(labels[0])], dtype=object))

    groups = None
    if isinstance(probs, dict) and probs and all(isinstance(v, (list, tuple)) for v in probs.values()):
        groups = {str(k): list(v) for k, v in probs.items()}
    elif probs is None:
        by_model: dict[str, list[str]] = {}
        for c in rest:
            m = _MODEL_SEP.match(c)
            if m and (_PREFIX.match(m.group(2)) or m.group(2).lower() in SINGLE_PROB_NAMES):
                by_model.setdefault(m.group(1), []).append(c)
        if len(by_model) >= 2:
            groups = by_model
        elif model_col is None:
            per_model = _per_model_columns(df, rest, labels)
            if per_model is not None:
                groups = per_model
                notes.append(f"one model per probability column: {', '.join(f'{m} ({c[0]})' for m, c in per_model.items())}")

    model_probs: dict[str, tuple] = {}
    classes = None
    if groups is not None and model_col is not None:
        raise InputError(
            f"the file has both a model column ({model_col!r}) and column groups per model "
            f"({', '.join(map(repr, groups))}); use one layout, or pass model=... / probs=... to choose.",
            ui_message=f"the file has both a model column ({model_col}) and column groups per model "
                       f"({_plain(groups)}); choose the Model column or the Probability columns in the column "
                       "mapping.",
        )
    if groups is not None:
        for name, cols in groups.items():
            if len(cols) == 1 and _MODEL_SEP.match(cols[0]) is None:  # one column per model: P(positive)
                got_cols, got_classes, positional = _resolve_probs(df, cols, labels, list(cols), positive, notes,
                                                                   label_col, sample)
                if classes is not None and [_key(c) for c in got_classes] != [_key(c) for c in classes]:
                    raise InputError(f"model {name!r} reads the positive class as {got_classes[1]!r} but another "
                                     f"model as {classes[1]!r}; pass positive=<label>.",
                                     ui_message=f"model {name} reads the positive class as {got_classes[1]} but "
                                                f"another model as {classes[1]}; choose the Positive class.")
                classes = got_classes
                model_probs[name] = tuple(got_cols)
                continue
            stripped = {_MODEL_SEP.match(c).group(2) if _MODEL_SEP.match(c) else c: c for c in cols}
            sub = df.rename(columns={v: k for k, v in stripped.items()})
            got_cols, got_classes, positional = _resolve_probs(sub, list(stripped), labels, None, positive, notes,
                                                               label_col, sample)
            got_cols = [stripped[c] for c in got_cols]
            if classes is not None and [_key(c) for c in got_classes] != [_key(c) for c in classes]:
                raise InputError(
                    f"model {name!r} has probability columns for classes {got_classes!r} but another model has "
                    f"{classes!r}; every model needs the same classes.",
                    ui_message=f"model {name} has probability columns for classes {_plain(got_classes)} but another "
                               f"model has {_plain(classes)}; every model needs the same classes.")
            classes = got_classes
            model_probs[name] = tuple(got_cols)
    else:
        got_cols, classes, positional = _resolve_probs(df, rest, labels, probs, positive, notes, label_col,
                                                       sample)
        model_probs["model"] = tuple(got_cols)

    prob_cols = {c for cols in model_probs.values() for c in cols}
    if features is None:
        # A probability column is never a feature, also when the mapping uses only some of them.
        class_named, model_named, bare = _probability_like(df, [c for c in rest if c not in prob_cols], labels)
        unused = class_named + list(model_named) + bare
        if unused:
            notes.append(f"{', '.join(map(repr, unused[:5]))}{' and others' if len(unused) > 5 else ''} left out of "
                         "the features: named like probabilities but not mapped")
        feats = tuple(c for c in rest if c not in prob_cols and c not in unused and c.strip().lower() not in ID_NAMES
                      and not _ID_PATTERN.match(c.strip()))
    else:
        missing = [c for c in features if c not in columns]
        if missing:
            raise InputError(f"feature column(s) {missing!r} not in the file; columns are: {_list(columns)}.",
                             ui_message=f"feature column(s) {_plain(missing)} not in the file.")
        feats = tuple(features)
    # a feature named like a label ('y' and 'target'): the first name of LABEL_NAMES won, the other would be read
    # as a feature unnoticed. Only unambiguous label names: 'class', 'true' or 'actual' are common features
    # (a passenger class) or class columns (a boolean label's 'True')
    rivals = [c for c in feats if str(c).lower() in _RIVAL_LABEL_NAMES]
    if rivals and label is None:
        notes.append(f"{label_col!r} is the label; {', '.join(map(repr, rivals))} "
                     f"{'is' if len(rivals) == 1 else 'are'} named like one too and read as a feature: choose "
                     "another label column to change it")
    return ColumnMapping(label=label_col, probs=model_probs, classes=tuple(classes), model=model_col,
                         weight=weight_col, features=feats, notes=tuple(notes), label_positions=positional)
