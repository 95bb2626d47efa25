"""From a file (or DataFrame) to validated :class:`Predictions`, one per model."""
from __future__ import annotations

import re
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from .._lazy import lazy
from ..errors import InputError
from ..validation import ROW_SUM_ATOL, check_weights, describe_rows, probability_range, row_positions, row_sums
from .cleaning import (MISSING, UNKNOWN, WRONG_SHARE, coerce_numbers, counted, dropped_note, file_invalid,
                       invalid_rows, label_codes,
                       split_invalid, too_many_wrong_error, with_drop_advice)
from .mapping import (ID_NAMES, LABEL_NAMES, RANKED_AUC, _ID_PATTERN, ColumnMapping, _find, _key, _named_part,
                      detect_mapping, model_names, stray_labels)
from .predictions import Predictions
from .readers import DEFAULT_MAX_BYTES, read_table

expit, softmax = lazy("scipy.special", "expit"), lazy("scipy.special", "softmax")  # logits only

__all__ = ["load_predictions", "load_models", "load_models_from_files", "predictions_from_frame", "models_to_frame",
           "MIN_ROWS", "SUM_TOLERANCE", "RENORMALIZE_ADVICE_MAX"]

#: Fewest rows accepted: below this no binned diagnostic says anything.
MIN_ROWS = 10
#: Largest |row sum - 1| accepted for probability vectors; float32 softmax
#: outputs written with 6 significant digits stay well inside it.
SUM_TOLERANCE = 1e-3


def _numeric_block(df: pd.DataFrame, cols, what: str) -> np.ndarray:
    out = np.empty((len(df), len(cols)), dtype=np.float64)
    for j, c in enumerate(cols):
        out[:, j], text = coerce_numbers(df[c])
        if text.any():
            i = int(np.flatnonzero(text)[0])
            example = df[c].iloc[i]
            comma = isinstance(example, str) and re.fullmatch(r"\s*-?\d+,\d+\s*", example) is not None
            percent = (what == "probability" and isinstance(example, str)
                       and re.fullmatch(r"\s*\d+([.,]\d+)?\s*%\s*", example) is not None)
            what_ = (f"{what} column {c!r} holds non-numeric values in {describe_rows(text)}, "
                     f"e.g. {example!r}; it must hold numbers.")
            pct = (" They look like percentages written with '%': save the probabilities as numbers in [0, 1] "
                   "('0.30', not '30%')." if percent else "")
            raise InputError(
                what_ + (" It looks like a decimal comma: pass decimal=',' (command line: --decimal ,) or save "
                         "the file with a decimal point ('0.25')." if comma else pct),
                ui_message=what_ + (" It looks like a decimal comma: choose Decimal: comma in the column "
                                    "mapping." if comma else pct),
                hint={"decimal": ","} if comma else None,
            )
    return out


def _class_keys(classes: tuple, positions: bool = False) -> dict:
    """{normalised label: class index} of a mapping's classes (labels that are class positions: by position)."""
    return {_key(i if positions else c): i for i, c in enumerate(classes)}


def _labels_to_index(series: pd.Series, classes: tuple, label_col: str, positions: bool = False) -> np.ndarray:
    y = label_codes(series, _class_keys(classes, positions))
    missing = y == MISSING
    if missing.any():
        raise InputError(
            f"the label column {label_col!r} is empty in {describe_rows(missing)}; fill or drop those rows."
        )
    unknown = y == UNKNOWN
    if unknown.any():
        raise unknown_labels_error(sorted({str(u) for u in series[unknown].unique()}), describe_rows(unknown),
                                   classes)
    return y


def unknown_labels_error(labels, rows: str, classes) -> InputError:
    """The error of labels outside the classes of the probability columns (in memory and on scans): ``labels`` the
    offending values as text, ``rows`` where they are (e.g. "245 rows (0-based: 3, 4, ...)")."""
    shown = f"labels {', '.join(map(repr, list(labels)[:5]))} " if len(labels) else "labels "
    what = f"{shown}in {rows} are not among the classes of the "
    return InputError(
        f"{what}probability columns {list(classes)[:10]!r}; add their probability columns or drop those rows.",
        ui_message=f"{what}probability columns ({', '.join(map(str, list(classes)[:10]))}); add their "
                   "probability columns, choose another Label column, or drop those rows.",
    )


def out_of_range_error(outside, cols, rows: str, low: float, high: float, share_out: float, share_above_one: float,
                       logits_option: bool = True) -> InputError:
    """The error of probability columns with values outside [0, 1] (in memory and on scans): ``outside`` the
    columns that hold such values, ``cols`` all probability columns, ``rows`` where (as :func:`describe_rows`
    says it), ``low`` and ``high`` the smallest and largest values of the ``outside`` columns (a walk-through read
    'age' given "min 0.0004944", the other column's); the fix from
    :func:`out_of_range_fix`, or, when other columns hold probabilities, that these columns are none."""
    what = (f"probabilities must lie in [0, 1]; column(s) {', '.join(map(repr, outside))} hold values outside "
            f"it in {rows} {probability_range(low, high)}.")
    if len(cols) > 1 and low >= -RENORMALIZE_ADVICE_MAX and high <= 1.0 + RENORMALIZE_ADVICE_MAX:
        # a class column off by rounding (the last one written as 1 minus the others' rounded sum: -0.02), not a
        # column of something else (a walk-through was told to check its column choice)
        fix = ("Values this close to [0, 1] are rounding, e.g. a last column written as 1 minus the rounded sum of "
               "the others: clip them to [0, 1] in the file and divide each row by its sum.")
        return InputError(f"{what} {fix}", ui_message=f"{what} {fix}")
    if len(outside) < len(cols):
        return InputError(
            f"{what} The other probability columns do hold probabilities: {', '.join(map(repr, outside))} "
            "cannot be one of them; check the probability columns (probs=...).",
            ui_message=f"{what} The other probability columns do hold probabilities: check the Probability "
                       "columns in the column mapping.")
    fix, ui_fix, hint = out_of_range_fix(share_out, low, high, share_above_one, logits_option)
    return InputError(f"{what} {fix}", ui_message=f"{what} {ui_fix}", hint=hint)


#: Below this share of rows outside [0, 1], the values are stray errors, not logits or percentages (which put
#: most rows outside [0, 1]): no change of scale is advised.
STRAY_SHARE = 0.05
#: Largest |row sum - 1| that rounding explains (each of a few class probabilities written with 2 decimals):
#: only then is dividing the rows by their sums (``renormalize=True``) advised.
RENORMALIZE_ADVICE_MAX = 0.05


def _one_model_per_column(cols, classes=()) -> tuple[str, str]:
    """The library's and the dashboard's way to read each column as one model's P(positive)."""
    names = model_names(cols, classes)
    as_dict = "{" + ", ".join(f"{names[c]!r}: [{c!r}]" for c in cols) + "}"
    return (f"if each column holds one model's probability of the positive class, read one model per column: "
            f"probs={as_dict} (columns named <model>_proba are detected that way)",
            "if each column holds one model's probability of the positive class, choose 'one model per column' in "
            "the column mapping")


def out_of_range_fix(share_out: float, low: float, high: float, share_above_one: float,
                     logits_option: bool = True) -> tuple[str, str, dict | None]:
    """(fix, the dashboard's fix, mapping hint) for probabilities outside [0, 1], from what their values call for:
    a few stray rows, logits (negative values), percentages, an overshooting score, counts. Shared by the loader
    and scans (``logits_option`` False: a scan takes probabilities only)."""
    if share_out < STRAY_SHARE:
        share = f"{share_out:.1%}" if share_out >= 0.001 else "under 0.1%"  # not "0.0%" for 10 of 300,000
        fix = f"So few rows ({share}) are errors in the data, not another scale: fix or drop those rows."
        return fix, fix, None
    if low < 0:
        if not logits_option:
            fix = ("If they are logits (log-odds), convert them to probabilities first (scans take probabilities); "
                   "other scores (SVM decision values, ranks) are no probabilities: calibrate them first.")
            return fix, fix, None
        return ("If they are logits (log-odds, the model's outputs before the sigmoid or softmax), pass "
                "logits=True (command line: --logits); other scores (SVM decision values, ranks) are no "
                "probabilities: calibrate them first.",
                "If they are logits (log-odds, the model's outputs before the sigmoid or softmax), tick "
                "'Columns hold logits' in the column mapping; other scores (SVM decision values, ranks) are "
                "no probabilities: calibrate them first.", {"logits": True})
    if high <= 100 and share_above_one >= 0.5:
        fix = "They look like percentages: divide them by 100 and load the file again."
        return fix, fix, None
    if high <= 100:
        # most values are inside [0, 1]: percentages would put most of them above 1 (dividing these by 100
        # would squeeze them towards 0), so this is a score that overshoots (a regression's output?)
        fix = (f"Most values lie in [0, 1] and {share_above_one:.1%} exceed 1, which is not how percentages look: "
               "these are scores, not probabilities (a regression's output?); map them to [0, 1] with a calibrator "
               "first.")
        return fix, fix, None
    return ("These are no probabilities (counts or scores?); map the columns with P(class) (probs=...).",
            "These are no probabilities (counts or scores?); choose the Probability columns in the column mapping.",
            None)


def _probabilities(block: np.ndarray, cols, logits: bool, renormalize: bool, classes: tuple = (),
                   notes: list | None = None) -> np.ndarray:
    """Probability rows from the mapped columns; every error names the fix that is right for *these* values.

    ``renormalize=True`` is advised only for rows whose sums are off by rounding (at most
    ``RENORMALIZE_ADVICE_MAX``), ``logits=True`` only for columns with negative values in at least
    ``STRAY_SHARE`` of the rows (log-odds; percentages have none): a fix
    that makes numbers out of the wrong columns is never suggested. Two columns of a binary label whose
    rows do not sum to 1 are refused even with ``renormalize=True`` unless their names say they are the
    label's classes (``p_benign``, ``p_malignant``): otherwise they are two models, or a mistake.
    """
    bad = ~np.isfinite(block).all(axis=1)
    if bad.any():
        # every kind of bad value at once: fixing the NaN rows only to meet the 1.2s next time costs a round trip
        with np.errstate(invalid="ignore"):
            outside = np.isfinite(block).all(axis=1) & ((block < 0) | (block > 1)).any(axis=1)
        also = (f", and values outside [0, 1] in {describe_rows(outside)}" if outside.any() and not logits else "")
        raise InputError(
            f"probability column(s) {', '.join(map(repr, cols))} hold NaN or infinite values in "
            f"{describe_rows(bad)}{also}; {'fix, fill' if also else 'fill'} or drop those rows."
        )
    if logits:
        return np.column_stack([1 - expit(block[:, 0]), expit(block[:, 0])]) if block.shape[1] == 1 \
            else softmax(block, axis=1)
    out = ((block < 0) | (block > 1)).any(axis=1)
    if out.any():
        bad = ((block < 0) | (block > 1)).any(axis=0)
        outside = [c for j, c in enumerate(cols) if bad[j]]
        raise out_of_range_error(outside, cols, describe_rows(out), float(block[:, bad].min()),
                                 float(block[:, bad].max()), float(out.mean()), float((block > 1).mean()))
    if block.shape[1] == 1:
        return np.column_stack([1.0 - block[:, 0], block[:, 0]])
    sums = row_sums(block)  # the engines' order of addition: a scan and memory divide alike
    off = np.abs(sums - 1.0) > SUM_TOLERANCE
    if off.any():
        lo, hi = float(sums.min()), float(sums.max())
        err = bad_sums_error(cols, classes, describe_rows(off), lo, hi, renormalize=renormalize)
        if err is not None:
            raise err
        if (sums <= 0).any():
            raise InputError(f"probability rows sum to 0 in {describe_rows(sums <= 0)}; they cannot be renormalised.")
        if notes is not None and (note := renormalized_note(lo, hi, int(off.sum()))):
            notes.append(note)
    # Rows that sum to 1 up to float rounding (ROW_SUM_ATOL, the metrics' own check) are the user's numbers:
    # dividing them moved written scores across bin edges (0.4 of a row summing to 1 + 2^-52 became
    # 0.3999999999999999, a review). Rows off by more (rounded to 3 decimals: within SUM_TOLERANCE, or renormalised)
    # are divided, so that the metrics' check holds.
    return np.where((np.abs(sums - 1.0) > ROW_SUM_ATOL)[:, None], block / sums[:, None], block)


def bad_sums_error(cols, classes, rows: str, low: float, high: float, *, renormalize: bool) -> InputError | None:
    """The error of class columns whose rows do not sum to 1 (``rows``: how many, as :func:`describe_rows` says;
    ``low``, ``high``: the range of the sums), or None where ``renormalize`` divides them. One wording for the
    loaders in memory and for scans (:class:`calibviz.scan.Scan`).

    ``renormalize`` is advised only for sums off by rounding (at most ``RENORMALIZE_ADVICE_MAX``). Two columns of
    a binary label are two models unless their names say they are the label's classes (``p_benign``,
    ``p_malignant``) and ``renormalize`` is set.
    """
    keys = {_key(c) for c in classes}
    class_named = all(_key(_named_part(c, keys) or c) in keys for c in cols)
    deviation = max(abs(low - 1.0), abs(high - 1.0))
    what = (f"probability rows must sum to 1 (tolerance {SUM_TOLERANCE:g}); they do not in {rows} "
            f"(sums from {low:.4g} to {high:.4g}).")
    if len(cols) == 2 and len(classes) <= 2 and deviation > RENORMALIZE_ADVICE_MAX and not (class_named and renormalize):
        lib, ui = _one_model_per_column(cols, classes)
        return InputError(
            f"{what} Two columns of a binary label that do not sum to 1 are not one model's class "
            f"probabilities (dividing by the sums would make up numbers); {lib}.",
            ui_message=f"{what} Two columns of a binary label that do not sum to 1 are not one model's class "
                       f"probabilities; {ui}.",
            hint={"probs": list(cols), "per_model": True},
        )
    if renormalize:
        return None
    if deviation <= RENORMALIZE_ADVICE_MAX:
        return InputError(
            f"{what} The sums are off by rounding (at most {deviation:.3g}): pass renormalize=True "
            "(command line: --renormalize) to divide each row by its sum.",
            ui_message=f"{what} The sums are off by rounding (at most {deviation:.3g}): tick 'Renormalise "
                       "rows' in the column mapping to divide each row by its sum.",
            hint={"renormalize": True},
        )
    why = ("rows summing to less than 1 mean a class has no column" if high < 1 else
           "sums far from 1 mean the columns are not the class probabilities of one model")
    return InputError(
        f"{what} {why.capitalize()}: give one column per class of one model (probs=...).",
        ui_message=f"{what} {why.capitalize()}: choose one Probability column per class of one model in the "
                   "column mapping.",
    )


def renormalized_note(low: float, high: float, n_off: int) -> str | None:
    """The note of rows renormalised although their sums (``low`` to ``high``) are further from 1 than rounding
    explains, or None."""
    if max(abs(low - 1.0), abs(high - 1.0)) <= RENORMALIZE_ADVICE_MAX:
        return None
    return (f"rows renormalised although their sums ranged from {low:.4g} to {high:.4g} ({n_off:,} rows off by "
            f"more than {SUM_TOLERANCE:g}): more than rounding")


def _weights(df: pd.DataFrame, col: str | None):
    if col is None:
        return None
    return check_weights(_numeric_block(df, [col], "weight")[:, 0], len(df), what=f"weight column {col!r}")


def _build(df: pd.DataFrame, mapping: ColumnMapping, cols, name: str, source: str, logits: bool,
           renormalize: bool, min_rows: int, cleaned: tuple | None = None) -> Predictions:
    """One model's validated :class:`Predictions`. ``cleaned``: (notes, wrong values kept, rows before) of rows
    whose invalid ones were dropped (``drop_invalid``, :func:`_dropped_invalid`), or None."""
    dropped_notes, kept, total = cleaned if cleaned is not None else ((), [], len(df))
    notes, problems = list(mapping.notes) + list(dropped_notes), []
    keys = _class_keys(mapping.classes, mapping.label_positions)
    if len(df) < min_rows:
        after = " left after dropping the invalid rows" if dropped_notes else ""
        raise InputError(
            f"{source}: model {name!r} has {len(df)} rows{after}; at least {min_rows} are needed for a calibration "
            "analysis."
        )

    def checked(read):  # every column's problem at once: fixing the labels only to meet the scores costs a round trip
        try:
            return read()
        except InputError as exc:
            problems.append(exc)
            return None

    y = checked(lambda: _labels_to_index(df[mapping.label], mapping.classes, mapping.label, mapping.label_positions))
    probs = checked(lambda: _probabilities(_numeric_block(df, cols, "probability"), cols, logits, renormalize,
                                           mapping.classes, notes))
    w = checked(lambda: _weights(df, mapping.weight))
    if problems:
        err = problems[0] if len(problems) == 1 else InputError(
            " Also: ".join(str(e) for e in problems), ui_message=" Also: ".join(e.ui_message for e in problems),
            hint=problems[0].hint)
        if kept:
            raise too_many_wrong_error(kept, total, err)
        if cleaned is None:  # name the option where it would leave out exactly these rows
            reasons = invalid_rows(df, mapping.label, keys, cols, mapping.weight, logits=logits,
                                   renormalize=renormalize, sum_tolerance=SUM_TOLERANCE)
            dropped, wrong = split_invalid([(r, int(m.sum()), missing) for r, m, missing in reasons], total)
            if dropped and not wrong:
                raise with_drop_advice(err, dropped)
        raise err
    # a row of weight 0 is an absent row (DESIGN.md section 4): rows and classes are counted without them, as the
    # scans count them (a file whose negatives all weigh 0 holds one class; 5 rows of weight > 0 are 5 rows)
    present_rows = int(len(df) if w is None else np.count_nonzero(w))
    if present_rows < min_rows:
        raise InputError(f"{source}: model {name!r} has {present_rows} rows of positive weight; at least {min_rows} "
                         "are needed for a calibration analysis.")
    present = np.unique(y if w is None else y[w > 0])
    if present.size < 2:
        if len(mapping.classes) > 2:
            raise InputError(
                f"{source}: only one class ({mapping.classes[present[0]]!r}) occurs in the labels of model {name!r}"
                + ("" if w is None else " (among the rows of positive weight)")
                + f"; {MULTICLASS_NEEDS_TWO}"
            )
        notes.append(one_class_note(mapping.classes, int(present[0]), weighted=np.unique(y).size > 1))
    if len(mapping.classes) == 2 and present.size == 2:
        notes.extend(inverted_ranking_note(mapping.classes, y, probs[:, 1] if probs.ndim == 2 else probs, w))
    features = df[list(mapping.features)].reset_index(drop=True)
    return Predictions(y=y, probs=probs, classes=mapping.classes, weights=w, features=features, name=name,
                       source=source, notes=tuple(notes))


def inverted_ranking_note(classes, y, p, w=None) -> list[str]:
    """The note of binary predictions that rank the positive class below the negative one (AUC at most
    ``1 - RANKED_AUC``): most often the probability of the other class, read as P(positive) because of the wrong
    Positive class (churn/stay labels read with 'stay' positive gave ECE 0.90 and AUC 0.005 without a word, an
    audit); a model that bad is worth the question too.

    >>> inverted_ranking_note(("churn", "stay"), [0, 1, 0, 1], [0.9, 0.2, 0.7, 0.1])[0][:72]
    "P(stay) ranks the rows of class 'stay' below those of class 'churn' (AUC"
    """
    from ..metrics.discrimination import roc_auc

    auc = roc_auc(y, p, sample_weight=w)
    if not auc <= 1 - RANKED_AUC:
        return []
    neg, pos = classes
    return [f"P({pos}) ranks the rows of class {pos!r} below those of class {neg!r} (AUC {auc:.3f}): if the "
            f"column holds P({neg}), make {neg!r} the positive class"]


#: Why a multiclass log of one class is refused (in memory and on scans).
MULTICLASS_NEEDS_TWO = "a multiclass calibration analysis needs examples of at least two classes."


def one_class_note(classes, present: int, *, weighted: bool = False) -> str:
    """The note of binary labels of which only one class occurs (``present``: its index in ``classes``).

    Such a log is still a calibration question (a day of a fraud model's log with no fraud: did the model predict
    little fraud?); the metrics and tests compare the predictions with it. The few that need both classes say so
    where they are shown.

    >>> one_class_note((0, 1), 0)
    'only class 0 occurs in the labels (no row of class 1): the metrics and tests compare the predictions with that; AUC and the calibration slope and intercept need both classes'
    """
    where = " among the rows of positive weight" if weighted else " in the labels"  # weighted: the other weighs 0
    return (f"only class {classes[present]} occurs{where} (no row of class {classes[1 - present]}): the metrics and "
            "tests compare the predictions with that; AUC and the calibration slope and intercept need both classes")


def _model_name_from_source(source: str) -> str:
    stem = Path(source).name.split(".")[0] if source else ""
    return stem if stem and stem not in ("data", "uploaded data", "uploaded file") else "model"


def _column_name(name) -> str:
    return str(name).strip()


def _detect(df: pd.DataFrame, drop_invalid: bool, **given) -> ColumnMapping:
    """:func:`detect_mapping`, and for a single probability column whose label holds a few stray values beyond its
    two classes (labels 0, 1 and six rows of 2): with ``drop_invalid`` the mapping of the other rows (the strays
    are then labels outside the classes, dropped under :mod:`calibviz.io.cleaning`'s rule), else the error with
    that option."""
    try:
        return detect_mapping(df, **given)
    except InputError as err:
        try:
            label_col = _find(list(df.columns), LABEL_NAMES, given.get("label"), "label")
        except InputError:
            raise err from None
        strays = stray_labels(df[label_col]) if label_col is not None else None
        if strays is None or strays[1] >= WRONG_SHARE * len(df):
            raise
        try:
            mapping = detect_mapping(df[~df[label_col].isin(strays[0])], **given)
        except InputError:
            raise err from None
        if len(mapping.classes) != 2:
            raise err from None
        if not drop_invalid:
            raise with_drop_advice(err, [("a label outside the classes", strays[1])]) from None
        return mapping


def predictions_from_frame(df: pd.DataFrame, *, label=None, probs=None, weight=None, logits: bool = False,
                           positive=None, model=None, features=None, renormalize: bool = False,
                           min_rows: int = MIN_ROWS, source: str = "data",
                           drop_invalid: bool = False) -> dict[str, Predictions]:
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
    if isinstance(df.columns, pd.MultiIndex):
        raise InputError(f"the table's column names have {df.columns.nlevels} levels (a MultiIndex); flatten them "
                         "first, e.g. df.columns = ['_'.join(map(str, c)) for c in df.columns].")
    df = df.rename(columns=_column_name)  # "label " and "label" are the same column to a person
    # the names given for columns as the columns now are (label=0 for a column named 0)
    label, weight, model = (None if v is None else _column_name(v) for v in (label, weight, model))
    def names(v):  # one column name, or several
        return [_column_name(c) for c in v] if isinstance(v, (list, tuple)) else _column_name(v)

    if isinstance(probs, dict):
        probs = {k: names(v) for k, v in probs.items()}
    elif probs is not None:
        probs = names(probs)
    if features is not None and not isinstance(features, str):
        features = [_column_name(c) for c in features]
    if df.columns.duplicated().any():
        dups = sorted(set(df.columns[df.columns.duplicated()].astype(str)))
        raise InputError(f"duplicated column names: {', '.join(map(repr, dups))}; rename them so each is unique.")
    mapping = _detect(df, drop_invalid, label=label, probs=probs, weight=weight, model=model, positive=positive,
                      features=features)
    if len(df) < min_rows:
        raise InputError(f"{source} has {len(df)} rows; at least {min_rows} are needed for a calibration analysis.")
    cleaned, unnamed = None, ()
    if drop_invalid and mapping.model is None:  # one decision per row (example), a note for every model
        df, cleaned = _dropped_invalid(df, mapping, logits, renormalize)
    elif drop_invalid:  # a long log: the rows of no model for every model's note, then each model's own rows
        missing = df[mapping.model].isna().to_numpy()
        if missing.any():
            unnamed = (dropped_note([("an empty model name", int(missing.sum()), row_positions(missing))], len(df)),)
            df = df[~missing]
    out: dict[str, Predictions] = {}
    if mapping.model is not None:
        cols = next(iter(mapping.probs.values()))
        missing = df[mapping.model].isna().to_numpy()
        if missing.any():
            raise with_drop_advice(InputError(f"the model column {mapping.model!r} is empty in "
                                              f"{describe_rows(missing)}; name the model of every row or drop those "
                                              "rows."), [("an empty model name", int(missing.sum()))])
        key = df[mapping.model].astype(str)
        for name in pd.unique(key):
            rows = df[key == name]
            if drop_invalid:
                # the 5% of wrong values and the note of each model's own rows, as a scan counts them (a review:
                # a model whose column was on another scale got through, diluted by the file's other models)
                rows, cleaned = _dropped_invalid(rows, replace(mapping, model=None), logits, renormalize, unnamed)
            try:
                out[str(name)] = _build(rows, mapping, cols, str(name), source, logits, renormalize, min_rows,
                                        cleaned)
            except InputError as err:  # which model, and that its rows are counted among its own (a walk-through
                # read "0-based: 0, 1, 2" for rows 600000-600009 of the file, in the third model)
                where = f"model {str(name)!r} (rows counted among that model's rows, in file order): "
                raise InputError(where + str(err), ui_message=where + err.ui_message, hint=err.hint) from None
    else:
        single = len(mapping.probs) == 1
        for name, cols in mapping.probs.items():
            # A one-model file names its model after the file ("hospital_readmission").
            label = _model_name_from_source(source) if single else name
            out[label] = _build(df, mapping, cols, label, source, logits, renormalize, min_rows, cleaned)
    return out


def _dropped_invalid(df: pd.DataFrame, mapping: ColumnMapping, logits: bool, renormalize: bool,
                     notes: tuple = ()) -> tuple[pd.DataFrame, tuple]:
    """(rows left, ``cleaned`` for :func:`_build`) of ``drop_invalid`` on ``df`` (:func:`calibviz.io.cleaning.file_invalid`):
    ``notes`` before this one's."""
    drop, dropped, kept = file_invalid(df, mapping, _class_keys(mapping.classes, mapping.label_positions),
                                       logits=logits, renormalize=renormalize, sum_tolerance=SUM_TOLERANCE)
    note = dropped_note(dropped, len(df)) if dropped else None
    if note and len(mapping.probs) > 1:
        note += "; a row invalid for one model is left out for every model, which keeps them on the same examples"
    return df[~drop], (tuple(notes) + ((note,) if note else ()), kept, len(df))


def load_models(path_or_buffer, label=None, probs=None, weight=None, logits: bool = False, *, positive=None,
                model=None, features=None, renormalize: bool = False, delimiter=None, encoding=None, sheet=None,
                max_bytes: int = DEFAULT_MAX_BYTES, min_rows: int = MIN_ROWS, name=None,
                limits=None, decimal=None, drop_invalid: bool = False) -> dict[str, Predictions]:
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
                     name=name, limits=limits, decimal=decimal)
    return predictions_from_frame(raw.frame, label=label, probs=probs, weight=weight, logits=logits,
                                  positive=positive, model=model, features=features, renormalize=renormalize,
                                  min_rows=min_rows, source=raw.name, drop_invalid=drop_invalid)


def load_predictions(path_or_buffer, label=None, probs=None, weight=None, logits: bool = False, *, positive=None,
                     model=None, features=None, renormalize: bool = False, delimiter=None, encoding=None,
                     sheet=None, max_bytes: int = DEFAULT_MAX_BYTES, min_rows: int = MIN_ROWS,
                     name=None, select=None, limits=None, decimal=None, drop_invalid: bool = False) -> Predictions:
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
        Divide rows that do not sum to 1 (within 1e-3) by their sum instead
        of raising. Rows within 1e-3 are accepted either way: those off by
        more than float rounding (1e-6) are divided by their sums, the
        others read as written.
        Right for rows off by rounding; rows far from 1 are kept with a
        note; two columns of a binary label that are not named after its
        classes are refused (they are two models, see ``probs``).
    delimiter, encoding, sheet, decimal : optional
        Reading options, see :func:`calibviz.io.read_table` (``decimal=','``
        for ``0,25``; detected in files that are not comma-separated).
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
    drop_invalid : bool, default False
        Leave out invalid rows instead of refusing the file, with a note
        that counts them by reason (``Predictions.notes``): rows with an
        empty label, probability, weight or model name, whatever their
        number; rows with wrong values (text in a number column, a
        probability outside [0, 1], class probabilities off 1, a label
        outside the classes, a negative weight) while they are under 5% of
        the rows (more point at a wrong column or scale, and the error that
        names its fix is raised). See :mod:`calibviz.io.cleaning`.

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
                         sheet=sheet, max_bytes=max_bytes, min_rows=min_rows, name=name, limits=limits,
                         decimal=decimal, drop_invalid=drop_invalid)
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


# ---------------------------------------------------------------------------------------------------------------
# several files, one per model
# ---------------------------------------------------------------------------------------------------------------

def _id_column(frames: list, names: list, given):
    """The id column shared by every file: ``given``, else the first id-named column present in all, else None."""
    if given is not None:
        for frame, name in zip(frames, names):
            if given not in frame.columns:
                raise InputError(f"{name} has no id column {given!r}; its columns are "
                                 f"{', '.join(map(repr, list(frame.columns)[:12]))}.",
                                 ui_message=f"{name} has no id column {given}.")
        return given
    for c in frames[0].columns:
        low = str(c).strip().lower()
        if (low in ID_NAMES and low not in ("", "index")) or _ID_PATTERN.match(str(c).strip()):
            if all(c in f.columns for f in frames[1:]):
                return c
    return None


def _unique_names(stems: list) -> list:
    out, seen = [], {}
    for s in stems:
        seen[s] = seen.get(s, 0) + 1
        out.append(s if seen[s] == 1 else f"{s} ({seen[s]})")
    return out


def _examples(values, limit=5) -> str:
    values = pd.Series(list(values), dtype=object).map(lambda v: v.item() if hasattr(v, "item") else v).tolist()
    return ", ".join(map(repr, values[:limit])) + (", ..." if len(values) > limit else "")


def load_models_from_files(sources, *, id=None, label=None, probs=None, weight=None, logits: bool = False,
                           positive=None, model=None, features=None, renormalize: bool = False, delimiter=None,
                           encoding=None, decimal=None, sheet=None, max_bytes: int = DEFAULT_MAX_BYTES,
                           min_rows: int = MIN_ROWS, limits=None, names=None,
                           drop_invalid: bool = False) -> dict[str, Predictions]:
    """Load several prediction files of the same examples, one per model: ``{model name: Predictions}``.

    Each file is read and validated as by :func:`load_models` (the mapping options apply to every file)
    and its model is named after the file (``logreg.csv`` -> ``logreg``; a file holding several models
    gives ``<file>/<model>``). The rows of the files must be the same examples:

    - with an id column (``id=``, or detected: ``id``, ``row_id``, ``*_id``, pandas' ``Unnamed: 0``, present
      in every file), rows are matched by id: every file must hold each id once, the same set of ids, and
      the same label for an id; the order of the first file is kept;
    - without one, every file must hold the same labels in the same order (same number of rows), else an
      error names the first row that differs and asks for an id column. Rows are never matched by guess.

    Parameters
    ----------
    sources : sequence
        Paths, bytes, binary file-likes (an uploaded file) or ``(name, bytes)`` pairs, at least one.
    id : str, optional
        The id column shared by the files (detected when omitted).
    names : sequence of str, optional
        Model names, one per file (default: the file names without extension).
    label, probs, weight, logits, positive, model, features, renormalize, delimiter, encoding, decimal, sheet,
    max_bytes, min_rows, limits
        As in :func:`load_predictions`, applied to every file.
    drop_invalid : bool, default False
        As in :func:`load_predictions`; an example invalid in any file is
        left out of every file (matched by id, or by position), so that the
        models are still compared on the same examples.

    Returns
    -------
    dict of str to Predictions
        Row-aligned: row i of every model is the same example; the classes are those of the first file
        (binary files must agree on the positive class; multiclass probability columns are put in the first
        file's class order).

    Raises
    ------
    calibviz.InputError
        A file that cannot be loaded (the message starts with its name), missing or duplicated ids, different
        labels, numbers of rows or classes.

    Examples
    --------
    >>> a = b"id,y_true,proba\\n" + b"".join(b"%d,%d,0.%d\\n" % (i, i % 2, 2 + i % 2 * 5) for i in range(10))
    >>> b = b"id,y_true,proba\\n" + b"".join(b"%d,%d,0.%d\\n" % (i, i % 2, 3 + i % 2 * 3) for i in range(9, -1, -1))
    >>> models = load_models_from_files([("logreg.csv", a), ("rf.csv", b)])
    >>> list(models), models["rf"].y_prob[:2].tolist()
    (['logreg', 'rf'], [0.3, 0.6])
    """
    if isinstance(sources, (str, bytes, bytearray)) or hasattr(sources, "read") or not hasattr(sources, "__iter__"):
        sources = [sources]
    sources = list(sources)
    if not sources:
        raise InputError("no files given; pass at least one predictions file.", ui_message="no files were uploaded.")
    if names is not None and len(list(names)) != len(sources):
        raise InputError(f"{len(list(names))} names for {len(sources)} files; give one name per file.")
    raws = []
    for src in sources:
        if isinstance(src, tuple) and len(src) == 2 and isinstance(src[0], str):
            raws.append(read_table(src[1], name=src[0], delimiter=delimiter, encoding=encoding, sheet=sheet,
                                   max_bytes=max_bytes, limits=limits, decimal=decimal))
        else:
            raws.append(read_table(src, delimiter=delimiter, encoding=encoding, sheet=sheet, max_bytes=max_bytes,
                                   limits=limits, decimal=decimal))
    file_names = _unique_names([r.name for r in raws])  # two uploads named x.csv read "x.csv" and "x.csv (2)"
    frames = [r.frame.rename(columns=lambda c: str(c).strip()) for r in raws]
    id_col = _id_column(frames, file_names, id) if len(frames) > 1 else id
    stems = list(names) if names is not None else _unique_names(
        [Path(n).name.split(".")[0] or f"file {i + 1}" for i, n in enumerate(file_names)])
    opts = dict(label=label, probs=probs, weight=weight, logits=logits, positive=positive, model=model,
                features=features, renormalize=renormalize, min_rows=min_rows, drop_invalid=drop_invalid)
    file_note = None
    if drop_invalid and len(frames) > 1:
        frames, file_note = _drop_across_files(frames, file_names, id_col, opts)
    loaded = []  # (model name, Predictions, ids or None, file name)
    for frame, fname, stem in zip(frames, file_names, stems):
        try:
            models = predictions_from_frame(frame, source=fname, **opts)
        except InputError as exc:
            raise exc.prefixed(f"{fname}: ") from None
        if id_col is not None:
            mapping = detect_mapping(frame, **{k: opts[k] for k in ("label", "probs", "weight", "model", "positive",
                                                                     "features")})
            key = frame[mapping.model].astype(str) if mapping.model is not None else None
        for mname, pred in models.items():
            ids = None
            if id_col is not None:
                ids = frame[id_col] if key is None else frame.loc[key == mname, id_col]
            loaded.append((stem if len(models) == 1 else f"{stem}/{mname}", pred, ids, fname))
    return _align(loaded, id_col, file_note)


def _drop_across_files(frames: list, file_names: list, id_col, opts: dict) -> tuple[list, str | None]:
    """(frames without the examples invalid in any of them, note or None) for ``drop_invalid`` over several files:
    each file's invalid rows as :func:`calibviz.io.cleaning.file_invalid` finds them, matched across the files by
    id (or by position, when the files have as many rows; otherwise the alignment's own error follows)."""
    given = {k: opts[k] for k in ("label", "probs", "weight", "model", "positive", "features")}
    drops, parts = [], []
    for frame, fname in zip(frames, file_names):
        try:
            mapping = _detect(frame, True, **given)
        except InputError as exc:
            raise exc.prefixed(f"{fname}: ") from None
        drop, dropped, _ = file_invalid(frame, mapping, _class_keys(mapping.classes, mapping.label_positions),
                                        logits=opts["logits"], renormalize=opts["renormalize"],
                                        sum_tolerance=SUM_TOLERANCE)
        drops.append(drop)
        if dropped:
            parts.append(f"{fname}: " + counted(dropped))
    if not parts:
        return frames, None
    if id_col is not None:
        bad = pd.Index([]).append([_id_index(f[id_col])[d] for f, d in zip(frames, drops)])
        drops = [_id_index(f[id_col]).isin(bad) for f in frames]
    elif len({len(f) for f in frames}) == 1:
        union = np.logical_or.reduce(drops)
        drops = [union] * len(frames)
    else:  # no id and different lengths: rows cannot be matched, before or after dropping (a review: files that
        # each lost their own invalid rows reached one length and were paired by position, 977 of 2,000 wrongly)
        sizes = ", ".join(f"{name} {len(f):,}" for name, f in zip(file_names, frames))
        raise InputError(f"the files hold different numbers of rows ({sizes}) and no id column: their invalid rows "
                         "cannot be left out of every file, as the rows cannot be matched. Add an id column to "
                         "every file (rows are then matched by id), or export the same rows.")
    n = int(max(d.sum() for d in drops))
    note = (f"dropped {n:,} example{'s' if n != 1 else ''} invalid in at least one file from every file, as asked "
            f"(drop invalid rows), which keeps the models on the same examples; " + "; ".join(parts))
    return [f[~np.asarray(d)] for f, d in zip(frames, drops)], note


def _id_index(ids: pd.Series) -> pd.Index:
    """Ids as matching keys: 7, 7.0 and "7" are one id (a CSV and a Parquet export of the same rows)."""
    s = ids
    if pd.api.types.is_float_dtype(s) and bool(np.all(np.mod(s.to_numpy(), 1) == 0)):
        s = s.astype(np.int64)
    return pd.Index(s.astype(str).str.strip())


def _label_keys(pred: Predictions) -> np.ndarray:
    return np.asarray([_key(c) for c in pred.classes], dtype=object)[pred.y]


def _align(loaded: list, id_col, file_note: str | None = None) -> dict[str, Predictions]:
    """Put every model's rows in the first model's order (by id, or checked to be the same); same classes.
    ``file_note``: the rows dropped from every file (:func:`_drop_across_files`), a note of every model."""
    first_name, first, first_ids, first_file = loaded[0]
    out: dict[str, Predictions] = {}
    if id_col is not None:
        for name, pred, ids, fname in loaded:
            missing = ids.isna().to_numpy()
            if missing.any():
                raise InputError(f"{fname}: the id column {id_col!r} is empty in {describe_rows(missing)}; every row "
                                 "needs an id to be matched with the other files.")
            dup = ids.duplicated(keep=False).to_numpy()
            if dup.any():
                raise InputError(f"{fname}: ids {_examples(pd.unique(ids[dup]))} occur more than once in the id column "
                                 f"{id_col!r} ({int(dup.sum()):,} rows); each example needs one row per file.")
    first_index = _id_index(first_ids) if id_col is not None else None
    first_keys = _label_keys(first)
    for name, pred, ids, fname in loaded:
        if id_col is not None and pred is not first:
            index = _id_index(ids)
            pos = index.get_indexer(first_index)
            if (pos < 0).any() or len(index) != len(first_index):
                lacking = first_ids.to_numpy()[pos < 0]
                extra = ids.to_numpy()[~index.isin(first_index)]
                parts = ([f"lacks {len(lacking):,} id(s) of {first_file} ({_examples(lacking)})"] if len(lacking) else []) \
                    + ([f"has {len(extra):,} id(s) that {first_file} lacks ({_examples(extra)})"] if len(extra) else [])
                raise InputError(f"{fname} {' and '.join(parts)} in the id column {id_col!r}; every file must hold "
                                 "the same examples.")
            pred = pred.subset(pos)
        elif id_col is None and pred.n != first.n:
            raise InputError(
                f"{fname} has {pred.n:,} rows but {first_file} has {first.n:,}; files of one model each must hold the "
                "same examples: add an id column to every file (rows are then matched by id), or export the same rows.")
        pred = _same_classes(pred, first, fname, first_file)
        keys = _label_keys(pred)
        differ = keys != first_keys
        if differ.any():
            i = int(np.flatnonzero(differ)[0])
            where = (f"id {_examples([first_ids.iloc[i]])}" if id_col is not None else f"row {i} (0-based)")
            fix = ("the files disagree on the truth of these examples" if id_col is not None else
                   "the rows are not in the same order, or not the same examples: add an id column to every file "
                   "(rows are then matched by id), or sort the files the same way")
            raise InputError(
                f"{fname} and {first_file} have different labels in {describe_rows(differ)}: at {where} "
                f"{pred.classes[pred.y[i]]!r} vs {first.classes[first.y[i]]!r}; {fix}.",
                ui_message=(f"{fname} and {first_file} have different labels in {describe_rows(differ)}: at {where} "
                            f"{pred.classes[pred.y[i]]} vs {first.classes[first.y[i]]}; {fix}."))
        note = (f"rows matched by the id column {id_col!r}" if id_col is not None
                else "rows matched by position (same labels in the same order)")
        out[name] = Predictions(y=pred.y, probs=pred.probs, classes=pred.classes, weights=pred.weights,
                                features=pred.features, name=name, source=fname,
                                notes=pred.notes + ((note,) if len(loaded) > 1 else ()) + ((file_note,) if file_note
                                                                                        else ()))
    return out


def _same_classes(pred: Predictions, first: Predictions, fname: str, first_file: str) -> Predictions:
    """``pred`` with its probability columns in ``first``'s class order, or an error naming the difference."""
    keys, first_keys = [_key(c) for c in pred.classes], [_key(c) for c in first.classes]
    if keys == first_keys:
        return pred
    if sorted(keys) != sorted(first_keys):
        raise InputError(f"{fname} has the classes {', '.join(map(repr, pred.classes[:10]))} but {first_file} has "
                         f"{', '.join(map(repr, first.classes[:10]))}; the models must predict the same classes.")
    if pred.is_binary:
        raise InputError(
            f"{fname} reads {pred.classes[1]!r} as the positive class but {first_file} reads {first.classes[1]!r}; "
            f"pass positive={first.classes[1]!r} (command line: --positive {first.classes[1]}).",
            ui_message=f"{fname} reads {pred.classes[1]} as the positive class but {first_file} reads "
                       f"{first.classes[1]}; choose the Positive class.",
            hint={"positive": first.classes[1]})
    perm = np.array([keys.index(k) for k in first_keys])
    inverse = np.argsort(perm)
    return Predictions(y=inverse[pred.y], probs=pred.probs[:, perm], classes=first.classes, weights=pred.weights,
                       features=pred.features, name=pred.name, source=pred.source, notes=pred.notes)


def models_to_frame(models: dict) -> pd.DataFrame:
    """One long-format table of row-aligned models: ``model``, ``label``, probability and weight columns, features.

    Loading it again (:func:`predictions_from_frame`) gives the same models: binary data has one column
    ``p_<positive class>``, multiclass data one ``p_<class>`` per class, in class order. The dashboard
    keeps several uploaded files as this one table. Features named like these columns get an ``x_`` prefix.

    Examples
    --------
    >>> m = load_models_from_files([("a.csv", b"y,p\\n" + b"0,0.2\\n1,0.7\\n" * 5),
    ...                             ("b.csv", b"y,p\\n" + b"0,0.4\\n1,0.5\\n" * 5)])
    >>> df = models_to_frame(m)
    >>> list(df.columns), list(predictions_from_frame(df))
    (['model', 'label', 'p_1'], ['a', 'b'])
    """
    parts = []
    for name, pred in models.items():
        classes = np.empty(len(pred.classes), dtype=object)
        classes[:] = list(pred.classes)
        part = {"model": np.full(pred.n, name, dtype=object), "label": classes[pred.y]}
        cols = [f"p_{pred.classes[1]}"] if pred.is_binary else [f"p_{c}" for c in pred.classes]
        block = pred.probs[:, 1:] if pred.is_binary else pred.probs
        for j, c in enumerate(cols):
            part[c] = block[:, j]
        if pred.weights is not None:
            part["weight"] = pred.weights
        frame = pd.DataFrame(part)
        feats = pred.features.rename(columns=lambda c: f"x_{c}" if c in frame.columns or c == "id" else c)
        parts.append(pd.concat([frame, feats.reset_index(drop=True)], axis=1))
    out = pd.concat(parts, ignore_index=True)
    out["label"] = out["label"].infer_objects()
    if "weight" in out.columns:
        out["weight"] = out["weight"].fillna(1.0)  # a model given without weights: every row counts once
    return out
