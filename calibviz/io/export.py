"""CSV that opens safely in a spreadsheet (OWASP "CSV injection").

A cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is read by Excel, LibreOffice
and Google Sheets as a formula. Names and levels come from the user's file, so every CSV that calibviz
writes (dashboard downloads, ``calibviz metrics --format csv``) goes through :func:`to_csv`: such text cells
get a leading apostrophe, the mark spreadsheets use for "this is text". Numbers are written as numbers
(a negative difference stays ``-0.02``).
"""
from __future__ import annotations

import pandas as pd

__all__ = ["to_csv", "spreadsheet_safe"]

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _neutralise(value):
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def spreadsheet_safe(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` whose text cells and column names cannot start a spreadsheet formula.

    Examples
    --------
    >>> spreadsheet_safe(pd.DataFrame({"model": ["=HYPERLINK(1)", "ok"], "diff": [-0.5, 0.1]})).values.tolist()
    [["'=HYPERLINK(1)", -0.5], ['ok', 0.1]]
    """
    out = df.copy()
    out.columns = [_neutralise(c) for c in out.columns]
    for col in out.columns:
        if out[col].dtype == object or isinstance(out[col].dtype, pd.StringDtype) or \
                isinstance(out[col].dtype, pd.CategoricalDtype):
            out[col] = out[col].astype(object).map(_neutralise)
    return out


def to_csv(df: pd.DataFrame) -> str:
    """``df`` as CSV text (no index), spreadsheet-safe.

    Examples
    --------
    >>> print(to_csv(pd.DataFrame({"level": ["@SUM(A1)"], "n": [3]})), end="")
    level,n
    '@SUM(A1),3
    """
    return spreadsheet_safe(df).to_csv(index=False)
