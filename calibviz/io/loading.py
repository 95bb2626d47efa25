"""From a file (or DataFrame) to validated :class:`Predictions`, one per model."""
from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit, softmax

from ..errors import InputError
from ..validation import check_weights, describe_rows
from .mapping import ColumnMapping, _key, _named_part, detect_mapping
from .predictions import Predictions
from .readers import DEFAULT_MAX_BYTES, read_table

__all__ = ["load_predictions", "load_models", "predictions_from_frame", "MIN_ROWS", "SUM_TOLERANCE"]

#: Fewest rows accepted: below this no binned diagnostic says anything.
MIN_ROWS = 10
#: Largest |row sum - 1| accepted for probability vectors; float32 softmax
#: outputs written with 6 significant digits stay well inside it.
SUM_TOLERANCE = 1e-3


def _numeric_block(df: pd.DataFrame, cols, what: str) -> np.ndarray:
    out = np.empty((len(df), len(cols)), dtype=np.float64)
    for j, c in enumerate(cols):
        s = df[c]
        if not pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s):
            num = pd.to_numeric(s, errors="coerce")
            bad = num.isna() & s.notna()
            if bad.any():
                i = int(np.flatnonzero(bad.to_numpy())[0])
                example = s.iloc[i]
                comma = isinstance(example, str) and re.fullmatch(r"\s*-?\d+,\d+\s*", example) is not None
                what_ = (f"{what} column {c!r} holds non-numeric values in {describe_rows(bad.to_numpy())}, "
                         f"e.g. {example!r}; it must hold numbers.")
                raise InputError(
                    what_ + (" It looks like a decimal comma: pass decimal=',' (command line: --decimal ,) or save "
                             "the file with a decimal point ('0.25')." if comma else ""),
                    ui_message=what_ + (" It looks like a decimal comma: choose Decimal: comma in the column "
                                        "mapping." if comma else ""),
                    hint={"decimal": ","} if comma else None,
                )
            s = num
        out[:, j] = s.to_numpy(dtype=np.float64, na_value=np.nan)
    return out


def _labels_to_index(series: pd.Series, classes: tuple, label_col: str, positions: bool = False) -> np.ndarray:
    missing = series.isna().to_numpy()
    if missing.any():
        raise InputError(
            f"the label column {label_col!r} is empty in {describe_rows(missing)}; fill or drop those rows."
        )
    lookup = {_key(i if positions else c): i for i, c in enumerate(classes)}
    inverse, uniques = pd.factorize(series, sort=False)
    codes = np.array([lookup.get(_key(u), -1) for u in uniques], dtype=np.int64)  # loop over distinct labels only
    y = codes[inverse]
    unknown = y < 0
    if unknown.any():
        bad = sorted({str(u) for u, c in zip(uniques, codes) if c < 0})
        raise InputError(
            f"labels {', '.join(map(repr, bad[:5]))} in {describe_rows(unknown)} are not among the classes of the "
            f"probability columns {list(classes)[:10]!r}; add their probability columns or drop those rows."
        )
    return y


#: Largest |row sum - 1| that rounding explains (each of a few class probabilities written with 2 decimals):
#: only then is dividing the rows by their sums (``renormalize=True``) advised.
RENORMALIZE_ADVICE_MAX = 0.05


def _one_model_per_column(cols) -> tuple[str, str]:
    """The library's and the dashboard's way to read each column as one model's P(positive)."""
    names = {c: (_named_part(c) or c) for c in cols}
    if len(set(names.values())) < len(names):
        names = {c: c for c in cols}
    as_dict = "{" + ", ".join(f"{names[c]!r}: [{c!r}]" for c in cols) + "}"
    return (f"if each column holds one model's probability of the positive class, read one model per column: "
            f"probs={as_dict} (columns named <model>_proba are detected that way)",
            "if each column holds one model's probability of the positive class, choose 'one model per column' in "
            "the column mapping")


def _probabilities(block: np.ndarray, cols, logits: bool, renormalize: bool, n_classes: int | None = None,
                   notes: list | None = None, class_named: bool = False) -> np.ndarray:
    """Probability rows from the mapped columns; every error names the fix that is right for *these* values.

    ``renormalize=True`` is advised only for rows whose sums are off by rounding (at most
    ``RENORMALIZE_ADVICE_MAX``), ``logits=True`` only for columns with negative values (log-odds): a fix
    that makes numbers out of the wrong columns is never suggested. Two columns of a binary label whose
    rows do not sum to 1 are refused even with ``renormalize=True`` unless their names say they are the
    label's classes (``p_benign``, ``p_malignant``): otherwise they are two models, or a mistake.
    """
    bad = ~np.isfinite(block).all(axis=1)
    if bad.any():
        raise InputError(
            f"probability column(s) {', '.join(map(repr, cols))} hold NaN or infinite values in "
            f"{describe_rows(bad)}; drop or fill those rows."
        )
    if logits:
        return np.column_stack([1 - expit(block[:, 0]), expit(block[:, 0])]) if block.shape[1] == 1 \
            else softmax(block, axis=1)
    out = ((block < 0) | (block > 1)).any(axis=1)
    if out.any():
        outside = [c for j, c in enumerate(cols) if ((block[:, j] < 0) | (block[:, j] > 1)).any()]
        low, high = float(block.min()), float(block.max())
        what = (f"probabilities must lie in [0, 1]; column(s) {', '.join(map(repr, outside))} hold values outside "
                f"it in {describe_rows(out)} (min {low:.4g}, max {high:.4g}).")
        if len(outside) < len(cols):
            raise InputError(
                f"{what} The other probability columns do hold probabilities: {', '.join(map(repr, outside))} "
                "cannot be one of them; check the probability columns (probs=...).",
                ui_message=f"{what} The other probability columns do hold probabilities: check the Probability "
                           "columns in the column mapping.")
        if low < 0:
            fix = ("If they are logits (log-odds, the model's outputs before the sigmoid or softmax), pass "
                   "logits=True (command line: --logits); other scores (SVM decision values, ranks) are no "
                   "probabilities: calibrate them first.")
            ui_fix = ("If they are logits (log-odds, the model's outputs before the sigmoid or softmax), tick "
                      "'Columns hold logits' in the column mapping; other scores (SVM decision values, ranks) are "
                      "no probabilities: calibrate them first.")
            hint = {"logits": True}
        elif high <= 100:
            fix = ui_fix = "They look like percentages: divide them by 100 and load the file again."
            hint = None
        else:
            fix = "These are no probabilities (counts or scores?); map the columns with P(class) (probs=...)."
            ui_fix = "These are no probabilities (counts or scores?); choose the Probability columns in the column mapping."
            hint = None
        raise InputError(f"{what} {fix}", ui_message=f"{what} {ui_fix}", hint=hint)
    if block.shape[1] == 1:
        return np.column_stack([1.0 - block[:, 0], block[:, 0]])
    sums = block.sum(axis=1)
    off = np.abs(sums - 1.0) > SUM_TOLERANCE
    if off.any():
        deviation = float(np.max(np.abs(sums - 1.0)))
        what = (f"probability rows must sum to 1 (tolerance {SUM_TOLERANCE:g}); they do not in {describe_rows(off)} "
                f"(sums from {sums.min():.4g} to {sums.max():.4g}).")
        two_models = (block.shape[1] == 2 and (n_classes or 2) <= 2 and deviation > RENORMALIZE_ADVICE_MAX
                      and not (class_named and renormalize))
        if two_models:
            lib, ui = _one_model_per_column(cols)
            raise InputError(
                f"{what} Two columns of a binary label that do not sum to 1 are not one model's class "
                f"probabilities (dividing by the sums would make up numbers); {lib}.",
                ui_message=f"{what} Two columns of a binary label that do not sum to 1 are not one model's class "
                           f"probabilities; {ui}.",
                hint={"probs": list(cols), "per_model": True},
            )
        if not renormalize:
            if deviation <= RENORMALIZE_ADVICE_MAX:
                raise InputError(
                    f"{what} The sums are off by rounding (at most {deviation:.3g}): pass renormalize=True "
                    "(command line: --renormalize) to divide each row by its sum.",
                    ui_message=f"{what} The sums are off by rounding (at most {deviation:.3g}): tick 'Renormalise "
                               "rows' in the column mapping to divide each row by its sum.",
                    hint={"renormalize": True},
                )
            why = ("rows summing to less than 1 mean a class has no column" if sums.max() < 1 else
                   "sums far from 1 mean the columns are not the class probabilities of one model")
            raise InputError(
                f"{what} {why.capitalize()}: give one column per class of one model (probs=...).",
                ui_message=f"{what} {why.capitalize()}: choose one Probability column per class of one model in the "
                           "column mapping.",
            )
        if (sums <= 0).any():
            raise InputError(f"probability rows sum to 0 in {describe_rows(sums <= 0)}; they cannot be renormalised.")
        if notes is not None and deviation > RENORMALIZE_ADVICE_MAX:
            notes.append(f"rows renormalised although their sums ranged from {sums.min():.4g} to {sums.max():.4g} "
                         f"({int(off.sum()):,} rows off by more than {SUM_TOLERANCE:g}): more than rounding")
    # Exact renormalisation either way: within-tolerance rounding is removed too.
    return block / sums[:, None]


def _weights(df: pd.DataFrame, col: str | None):
    if col is None:
        return None
    return check_weights(_numeric_block(df, [col], "weight")[:, 0], len(df), what=f"weight column {col!r}")


def _build(df: pd.DataFrame, mapping: ColumnMapping, cols, name: str, source: str, logits: bool,
           renormalize: bool, min_rows: int) -> Predictions:
    if len(df) < min_rows:
        raise InputError(
            f"{source}: model {name!r} has {len(df)} rows; at least {min_rows} are needed for a calibration analysis."
        )
    y = _labels_to_index(df[mapping.label], mapping.classes, mapping.label, mapping.label_positions)
    notes = list(mapping.notes)
    label_keys = {_key(c) for c in mapping.classes}
    class_named = all(_key(_named_part(c, label_keys) or c) in label_keys for c in cols)
    probs = _probabilities(_numeric_block(df, cols, "probability"), cols, logits, renormalize,
                           len(mapping.classes), notes, class_named)
    w = _weights(df, mapping.weight)
    present = np.unique(y)
    if present.size < 2:
        raise InputError(
            f"{source}: only one class ({mapping.classes[present[0]]!r}) occurs in the labels of model {name!r}; "
            "calibration needs examples of at least two classes."
        )
    features = df[list(mapping.features)].reset_index(drop=True)
    return Predictions(y=y, probs=probs, classes=mapping.classes, weights=w, features=features, name=name,
                       source=source, notes=tuple(notes))


def _model_name_from_source(source: str) -> str:
    stem = Path(source).name.split(".")[0] if source else ""
    return stem if stem and stem not in ("data", "uploaded data", "uploaded file") else "model"


def predictions_from_frame(df: pd.DataFrame, *, label=None, probs=None, weight=None, logits: bool = False,
                           positive=None, model=None, features=None, renormalize: bool = False,
                           min_rows: int = MIN_ROWS, source: str = "data") -> dict[str, Predictions]:
    """Validate a DataFrame and split it into one :class:`Predictions` per model.

    Parameters are those of :func:`load_predictions`; ``model`` is the
    long-format model column. Returns an ordered ``{model name: Predictions}``.

    Examples
    --------
    >>> df = pd.DataFrame({"label": ["a", "b", "c"] * 4,
    ...                    "p_a": [.6, .2, .2] * 4, "p_b": [.2, .6, .2] * 4, "p_c": [.2, .2, .6] * 4})
    >>> m = predictions_from_frame(df)
    >>> list(m), m["model"].classes, m["model"].n
    (['model'], ('a', 'b', 'c'), 12)
    """
    if not isinstance(df, pd.DataFrame):
        raise InputError(f"expected a pandas DataFrame, got {type(df).__name__}.")
    df = df.rename(columns=lambda c: str(c).strip())  # "label " and "label" are the same column to a person
    if df.columns.duplicated().any():
        dups = sorted(set(df.columns[df.columns.duplicated()].astype(str)))
        raise InputError(f"duplicated column names: {', '.join(map(repr, dups))}; rename them so each is unique.")
    mapping = detect_mapping(df, label=label, probs=probs, weight=weight, model=model, positive=positive,
                             features=features)
    if len(df) < min_rows:
        raise InputError(f"{source} has {len(df)} rows; at least {min_rows} are needed for a calibration analysis.")
    out: dict[str, Predictions] = {}
    if mapping.model is not None:
        cols = next(iter(mapping.probs.values()))
        missing = df[mapping.model].isna().to_numpy()
        if missing.any():
            raise InputError(f"the model column {mapping.model!r} is empty in {describe_rows(missing)}; "
                             "name the model of every row or drop those rows.")
        key = df[mapping.model].astype(str)
        for name in pd.unique(key):
            out[str(name)] = _build(df[key == name], mapping, cols, str(name), source, logits, renormalize, min_rows)
    else:
        single = len(mapping.probs) == 1
        for name, cols in mapping.probs.items():
            # A one-model file names its model after the file ("hospital_readmission").
            label = _model_name_from_source(source) if single else name
            out[label] = _build(df, mapping, cols, label, source, logits, renormalize, min_rows)
    return out


def load_models(path_or_buffer, label=None, probs=None, weight=None, logits: bool = False, *, positive=None,
                model=None, features=None, renormalize: bool = False, delimiter=None, encoding=None, sheet=None,
                max_bytes: int = DEFAULT_MAX_BYTES, min_rows: int = MIN_ROWS, name=None,
                limits=None) -> dict[str, Predictions]:
    """Load every model of a predictions file: ``{model name: Predictions}`` in file order.

    See :func:`load_predictions` for the parameters and the formats.

    Examples
    --------
    >>> import calibviz as cv
    >>> models = cv.load_models(cv.demo_path("loan_recalibration"))
    >>> list(models)
    ['raw', 'recalibrated']
    """
    raw = read_table(path_or_buffer, delimiter=delimiter, encoding=encoding, sheet=sheet, max_bytes=max_bytes,
                     name=name, limits=limits)
    return predictions_from_frame(raw.frame, label=label, probs=probs, weight=weight, logits=logits,
                                  positive=positive, model=model, features=features, renormalize=renormalize,
                                  min_rows=min_rows, source=raw.name)


def load_predictions(path_or_buffer, label=None, probs=None, weight=None, logits: bool = False, *, positive=None,
                     model=None, features=None, renormalize: bool = False, delimiter=None, encoding=None,
                     sheet=None, max_bytes: int = DEFAULT_MAX_BYTES, min_rows: int = MIN_ROWS,
                     name=None, select=None, limits=None) -> Predictions:
    """Load and validate a file of predictions.

    Parameters
    ----------
    path_or_buffer : str, os.PathLike, bytes or binary file-like
        CSV / TSV (any of ``, \\t ; |``), Parquet or Excel; gzip-compressed
        text is accepted. Nothing is executed or unpickled.
    label : str, optional
        Label column (detected by name: label, y, y_true, target, ...).
    probs : str, list of str or dict, optional
        Probability columns: one column with P(positive) for binary data, one
        column per class (list in class order or ``{class: column}``), or
        ``{model: [columns]}`` for several models in wide format. Detected by
        name (``p``, ``p_<class>``, ``prob_<class>``, ``proba_<class>``, or
        the class labels themselves) when omitted.
    weight : str, optional
        Sample-weight column (detected: weight, sample_weight).
    logits : bool, default False
        The probability columns hold logits: a single column goes through
        the sigmoid, several through the softmax.
    positive : label, optional
        Positive class of binary data given as one column (detected for
        0/1, True/False, yes/no labels, or from a ``p_<label>`` name).
    model : str, optional
        Long-format model column (detected: model, model_name, classifier).
    features : list of str, optional
        Feature columns (default: every remaining column except ids).
    renormalize : bool, default False
        Divide multiclass rows that do not sum to 1 by their sum instead of
        raising.
    delimiter, encoding, sheet : optional
        Reading options, see :func:`calibviz.io.read_table`.
    max_bytes : int
        Largest file accepted (as stored, before decompression).
    min_rows : int, default 10
        Fewest rows accepted.
    name : str, optional
        Display name of the source in messages.
    select : str, optional
        Which model to return when the file holds several (default: the
        first, with a warning naming the others; use :func:`load_models` for
        all of them).
    limits : calibviz.io.ReadLimits or dict, optional
        Bounds on rows, cells and decompressed bytes checked before and while
        reading (default: the ``CALIBVIZ_MAX_*`` environment variables, else
        :class:`~calibviz.io.ReadLimits`'s defaults); a dict overrides single
        limits, e.g. ``limits={"max_rows": 50_000_000}``.

    Returns
    -------
    Predictions

    Raises
    ------
    calibviz.InputError
        For every malformed input; the message says what is wrong, where
        (column, rows) and how to fix it.

    Examples
    --------
    >>> import calibviz as cv
    >>> p = cv.load_predictions(b"label,p\\n" + b"0,0.2\\n1,0.7\\n" * 5)
    >>> p.n, p.classes, round(float(p.y_prob.mean()), 2)
    (10, (0, 1), 0.45)
    """
    models = load_models(path_or_buffer, label, probs, weight, logits, positive=positive, model=model,
                         features=features, renormalize=renormalize, delimiter=delimiter, encoding=encoding,
                         sheet=sheet, max_bytes=max_bytes, min_rows=min_rows, name=name, limits=limits)
    if select is not None:
        if str(select) not in models:
            raise InputError(f"model {select!r} is not in the file; models are: {', '.join(map(repr, models))}.")
        return models[str(select)]
    first = next(iter(models.values()))
    if len(models) > 1:
        warnings.warn(
            f"the file holds {len(models)} models ({', '.join(map(repr, models))}); returning {first.name!r}. "
            "Use calibviz.load_models() for all of them or select=<name>.", UserWarning, stacklevel=2,
        )
    return first
