"""Rows that are no valid prediction, dropped only on request (``drop_invalid=True``) and always reported.

By default the loader refuses a file with invalid rows and says where they are. A prediction log often has a
few (a request that failed and left its score empty, a label that never arrived): with ``drop_invalid=True``
(command line ``--drop-invalid``, dashboard "Drop invalid rows") those rows are left out and a note counts them
by reason, so the numbers never hide them.

Two kinds of invalid rows are told apart:

* **missing** values (an empty or NaN label, probability or weight; a long log's row without a model name):
  dropped however many there are;
* values that are present but **wrong** (text in a number column, a probability outside [0, 1], class
  probabilities that do not sum to 1, a label outside the classes, a negative weight): dropped only while they
  are under :data:`WRONG_SHARE` of the rows. More of them are no stray errors but a wrong column, scale or
  layout (logits, percentages, another model's column), which dropping would hide: the loader's own error,
  which names that fix, is raised instead.

The scans (:class:`calibviz.scan.Scan`) apply the same rule to the rows they count in their aggregation.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import InputError
from ..validation import row_positions, row_sums
from .mapping import _key

__all__ = ["WRONG_SHARE", "coerce_numbers", "label_codes", "invalid_rows", "file_invalid", "dropped_note",
           "too_many_wrong_error", "split_invalid", "with_drop_advice", "counted"]

#: Largest share of rows whose present-but-wrong values ``drop_invalid`` drops (missing values: any share).
WRONG_SHARE = 0.05

#: Label codes of :func:`label_codes` for a label outside the classes and a missing one.
UNKNOWN, MISSING = -1, -2


def coerce_numbers(s: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(float values, mask of text cells that are no number) of a column; a missing cell is NaN and not text."""
    if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
        return s.to_numpy(dtype=np.float64, na_value=np.nan), np.zeros(len(s), dtype=bool)
    num = pd.to_numeric(s, errors="coerce")
    text = (num.isna() & s.notna()).to_numpy()
    return num.to_numpy(dtype=np.float64, na_value=np.nan), text


def label_codes(series: pd.Series, keys: dict) -> np.ndarray:
    """Class index of each label (``keys``: {normalised label: index}), :data:`UNKNOWN` for a label outside the
    classes, :data:`MISSING` for an empty one. One lookup per distinct label."""
    inverse, uniques = pd.factorize(series, sort=False)  # missing labels get -1 here
    codes = np.array([keys.get(_key(u), UNKNOWN) for u in uniques] + [MISSING], dtype=np.int64)
    return codes[inverse]  # inverse -1 picks the trailing MISSING


def invalid_rows(df: pd.DataFrame, label: str, keys: dict, cols, weight: str | None, *, logits: bool,
                 renormalize: bool, sum_tolerance: float) -> list[tuple[str, np.ndarray, bool]]:
    """Every reason a row of one model is invalid: ``(reason, mask, missing)`` (``missing``: a missing value).

    A row counts under its first reason in this order, so the masks are disjoint: labels, then probabilities,
    then weights. The checks are those of the loader (:func:`calibviz.io.loading.load_predictions`).
    """
    taken = np.zeros(len(df), dtype=bool)
    out = []

    def add(reason, mask, missing):
        mask = mask & ~taken
        taken[:] |= mask
        if mask.any():
            out.append((reason, mask, missing))

    codes = label_codes(df[label], keys)
    add("an empty label", codes == MISSING, True)
    add("a label outside the classes", codes == UNKNOWN, False)
    block, text = np.empty((len(df), len(cols))), np.zeros(len(df), dtype=bool)
    for j, c in enumerate(cols):
        block[:, j], t = coerce_numbers(df[c])
        text |= t
    finite = np.isfinite(block).all(axis=1)
    add("text in a probability column", text, False)
    add("an empty, NaN or infinite probability", ~finite, True)
    if not logits:
        with np.errstate(invalid="ignore"):
            add("a probability outside [0, 1]", ((block < 0) | (block > 1)).any(axis=1), False)
        if block.shape[1] > 1:
            sums = row_sums(np.where(np.isfinite(block), block, 0.0))
            bad_sum = sums <= 0 if renormalize else np.abs(sums - 1.0) > sum_tolerance
            add("class probabilities not summing to 1", bad_sum, False)
    if weight is not None:
        w, wtext = coerce_numbers(df[weight])
        add("text in the weight column", wtext, False)
        add("an empty, NaN or infinite weight", ~np.isfinite(w), True)
        with np.errstate(invalid="ignore"):
            add("a negative weight", w < 0, False)
    return out


def counted(counts) -> str:
    """'2 with an empty label (0-based: 3, 7), 1 with a negative weight' of (reason, rows[, where]) tuples: the list
    of every note and error of this module."""
    return ", ".join(f"{c[1]:,} with {c[0]}" + (f" ({c[2]})" if len(c) > 2 and c[2] else "") for c in counts)


def dropped_note(counts: list[tuple[str, int, str | None]], total: int) -> str:
    """The note of rows left out by ``drop_invalid``: ``counts`` holds (reason, rows, where or None).

    >>> dropped_note([("an empty label", 2, "0-based: 3, 7"), ("a negative weight", 1, None)], 1000)
    'dropped 3 of 1,000 rows as asked (drop invalid rows): 2 with an empty label (0-based: 3, 7), 1 with a negative weight'
    """
    n = sum(c for _, c, _ in counts)
    return f"dropped {n:,} of {total:,} rows as asked (drop invalid rows): " + counted(counts)


def with_drop_advice(cause: InputError, dropped: list[tuple[str, int]]) -> InputError:
    """The loader's error ``cause`` with the option that would leave out its rows (only where ``drop_invalid``
    would: :func:`split_invalid` drops every one of them); ``dropped`` (reason, rows) says which."""
    n = sum(c for _, c in dropped)
    what = counted(dropped)
    rows = "row" if n == 1 else "rows"
    lib = (f" To leave out the invalid {rows} instead ({what}), with a note that counts them, pass "
           "drop_invalid=True.")
    ui = (f" To leave out the invalid {rows} instead ({what}), with a note that counts them, tick 'Drop invalid "
          "rows' in the column mapping.")
    return InputError(str(cause) + lib, ui_message=cause.ui_message + ui,
                      hint=cause.hint if cause.hint else {"drop_invalid": True})


def too_many_wrong_error(reasons: list[tuple[str, int]], total: int, cause: InputError) -> InputError:
    """The error of present-but-wrong values in more than :data:`WRONG_SHARE` of the rows: not dropped (a wrong
    column or scale), with the loader's own error ``cause`` and its fix."""
    n = sum(c for _, c in reasons)
    what = counted(reasons)
    head = (f"not dropped: {n:,} of {total:,} rows ({n / total:.1%}) hold wrong values ({what}); dropping invalid "
            f"rows leaves out wrong values only in under {WRONG_SHARE:.0%} of the rows, since more point at a "
            "wrong column or scale. ")
    return InputError(head + str(cause), ui_message=head + cause.ui_message, hint=cause.hint)


def split_invalid(counts: list[tuple[str, int, bool]], total: int) -> tuple[list, list]:
    """(dropped, kept) of ``counts`` (reason, rows, missing) under the rule of this module: missing values are
    dropped; wrong values too while they are under :data:`WRONG_SHARE` of the ``total`` rows, else they are kept
    (for the caller to refuse with the loader's error). In memory and on scans.

    >>> split_invalid([("an empty label", 40, True), ("a probability outside [0, 1]", 6, False)], 100)
    ([('an empty label', 40)], [('a probability outside [0, 1]', 6)])
    >>> split_invalid([("an empty label", 40, True), ("a probability outside [0, 1]", 6, False)], 1000)
    ([('an empty label', 40), ('a probability outside [0, 1]', 6)], [])
    """
    keep_wrong = sum(c for _, c, missing in counts if not missing) >= WRONG_SHARE * total
    dropped = [(r, c) for r, c, missing in counts if missing or not keep_wrong]
    return dropped, [(r, c) for r, c, missing in counts if not missing and keep_wrong]


def file_invalid(df: pd.DataFrame, mapping, keys: dict, *, logits: bool, renormalize: bool,
                 sum_tolerance: float) -> tuple[np.ndarray, list, list]:
    """(rows to drop, dropped (reason, rows, where), wrong values kept (reason, rows)) of a file's rows for
    ``drop_invalid=True``, under :func:`split_invalid`'s rule.

    A row is an example: in a file of several models side by side, a row invalid for any model is dropped for
    all of them, so that the models are still compared on the same examples; a long log's rows without a model
    name are dropped too. ``mapping`` is the file's :class:`~calibviz.io.mapping.ColumnMapping`.
    """
    taken = np.zeros(len(df), dtype=bool)
    merged: dict = {}  # reason -> (mask, missing), each row under its first reason
    if mapping.model is not None:
        merged["an empty model name"] = (df[mapping.model].isna().to_numpy(), True)
        taken |= merged["an empty model name"][0]
    for cols in mapping.probs.values():
        for reason, mask, missing in invalid_rows(df, mapping.label, keys, cols, mapping.weight, logits=logits,
                                                  renormalize=renormalize, sum_tolerance=sum_tolerance):
            mask = mask & ~taken
            taken |= mask
            old = merged.get(reason, (np.zeros(len(df), dtype=bool), missing))[0]
            merged[reason] = (old | mask, missing)
    counts = [(r, int(m.sum()), missing) for r, (m, missing) in merged.items() if m.any()]
    dropped, kept = split_invalid(counts, len(df))
    drop = np.zeros(len(df), dtype=bool)
    where = []
    for reason, count in dropped:
        drop |= merged[reason][0]
        where.append((reason, count, row_positions(merged[reason][0])))
    return drop, where, kept
