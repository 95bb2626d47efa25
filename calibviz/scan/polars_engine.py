"""Polars engine: lazy scans of Parquet and CSV files, or a LazyFrame passed from Python.

Polars streams the aggregation of :mod:`calibviz.scan.aggregate` (written
once with Narwhals) over the files without loading them whole.
"""
from __future__ import annotations

from ..errors import InputError

__all__ = ["read_files", "query", "from_object"]


def _polars():
    try:
        import polars as pl
    except ImportError:  # pragma: no cover - polars ships with the test extra
        raise InputError("engine='polars' needs Polars: pip install 'calibviz[polars]'.") from None
    return pl


def read_files(files, fmt: str, display: str):
    pl = _polars()
    try:
        if fmt == "parquet":
            # columns matched by name across files, as DuckDB's union_by_name: a file without a column gives
            # nulls there (reported as missing values if the scan reads it), columns beyond the first file's ignored;
            # an integer or float column stored narrower in some files (int8 labels, float32 scores) is widened,
            # as DuckDB widens it (an integer in one file and a float in another stays an error that names them)
            return pl.scan_parquet(files, hive_partitioning=True, missing_columns="insert", extra_columns="ignore",
                                   cast_options=pl.ScanCastOptions(integer_cast="upcast", float_cast="upcast"))
        # Polars reads commas unless told: the separator of each file's header line (as DuckDB detects it), so
        # a TSV or semicolon file is not one column named 'y\tp' or "more fields than the schema"
        return pl.concat([pl.scan_csv(f, separator=_check_text(f)) for f in files], how="diagonal_relaxed")
    except InputError:
        raise
    except Exception as exc:  # polars raises several error types for unreadable files
        raise InputError(f"Polars cannot read {display!r}: {str(exc).splitlines()[0]}") from None


def _check_text(path: str) -> str:
    """The separator of a CSV file's header line (:func:`calibviz.scan.source.header_separator`); refuses a file
    whose start is not UTF-8 text: Polars' reader panics on a NUL byte in the header (UTF-16 text, a binary file
    named .csv) with a Rust backtrace on stderr, which no handler can keep from a user."""
    from .source import check_csv_text, header_separator

    return header_separator(check_csv_text(path, "Polars"))


def query(sql: str, *, database=None):
    raise InputError("engine='polars' takes files or a LazyFrame; run SQL with engine='duckdb' or 'spark'.")


def from_object(obj):
    pl = _polars()
    if isinstance(obj, pl.LazyFrame):
        return obj
    if isinstance(obj, pl.DataFrame):
        return obj.lazy()
    if type(obj).__module__.split(".")[0] == "pandas":
        return pl.from_pandas(obj).lazy()
    return None
