"""The header tooltips of every table the dashboard shows (:data:`calibviz.columns.COLUMN_HELP`, one line per
column); :func:`column_help` gives the tooltips of a table's columns."""
from __future__ import annotations

import streamlit as st

from ..columns import COLUMN_HELP

__all__ = ["COLUMN_HELP", "column_help"]


def column_help(columns, given=None) -> dict:
    """``column_config`` entries with the tooltip of every column of ``columns`` that has one and that ``given``
    (the caller's own configuration) does not configure."""
    given = given or {}
    return {c: st.column_config.Column(help=COLUMN_HELP[c]) for c in columns
            if isinstance(c, str) and c in COLUMN_HELP and c not in given}
