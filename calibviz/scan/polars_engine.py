"""Polars engine: lazy scans of Parquet and CSV files, or a LazyFrame passed from Python.

Polars streams the aggregation of :mod:`calibviz.scan.aggregate` (written
once with Narwhals) over the files without loading them whole.
"""
from __future__ import annotations

from ..errors import InputError
from .source import hive_partitions, hive_types

__all__ = ["read_files", "query", "from_object"]


def _polars():
    try:
        import polars as pl
    except ImportError:  # pragma: no cover - polars ships with the test extra
        raise InputError("engine='polars' needs Polars: pip install 'calibviz[polars]'.") from None
    return pl


def read_files(files, fmt: str, display: str, *, literal: bool = False):
    """A LazyFrame over Parquet or CSV files (hive partitions become columns); ``literal``: the names are files,
    not globs."""
    pl = _polars()
    try:
        if fmt == "parquet":
            # columns matched by name across files, as DuckDB's union_by_name: a file without a column gives
            # nulls there (reported as missing values if the scan reads it), the columns those of every file
            # (:func:`_union_schema`);
            # an integer or float column stored narrower in some files (int8 labels, float32 scores) is widened,
            # as DuckDB widens it (an integer in one file and a float in another stays an error that names them)
            return pl.scan_parquet(files, glob=not literal, schema=_union_schema(pl, files) if literal else None,
                                   hive_partitioning=True, missing_columns="insert",
                                   extra_columns="ignore", hive_schema=_hive_schema(pl, files) if literal else None,
                                   try_parse_hive_dates=False,
                                   cast_options=pl.ScanCastOptions(integer_cast="upcast", float_cast="upcast"))
        # Polars reads commas unless told: the separator of each file's header line (as DuckDB detects it), so
        # a TSV or semicolon file is not one column named 'y\tp' or "more fields than the schema"
        # Polars' CSV reader adds no hive partitions: each file gets its directories' values as columns
        schema = _hive_schema(pl, files) if literal else {}
        return pl.concat([_scan_csv(pl, f, glob=not literal).with_columns(
            pl.lit(value).cast(schema[key]).alias(key) for key, value in hive_partitions(f) if key in schema)
            for f in files], how="diagonal_relaxed")
    except InputError:
        raise
    except Exception as exc:  # polars raises several error types for unreadable files
        raise InputError(f"Polars cannot read {display!r}: {str(exc).splitlines()[0]}") from None


def _hive_schema(pl, files) -> dict | None:
    """The types of the files' hive partitions as DuckDB gives them (:func:`calibviz.scan.source.hive_types`):
    Polars typed models '001', '1' and '1.0' as one float 1.0 and pooled them (a review)."""
    types = hive_types(files)
    return {k: pl.Int64 if t == "int" else pl.String for k, t in types.items()} or None


def _union_schema(pl, files: list):
    """The union of the Parquet files' columns as a Polars schema (None for one file, or types no union holds:
    Polars then names the column). Polars takes the first file's columns and ignored the others' (a review: a model
    column only in later files was dropped and two models pooled), where DuckDB reads the union."""
    if len(files) < 2:
        return None
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        union = pa.unify_schemas([pq.read_schema(f) for f in files], promote_options="permissive")
    except (pa.ArrowException, OSError):
        return None
    return pl.from_arrow(union.empty_table()).schema

#: Rows of a CSV with padded fields from which the column types are told (Polars infers from its first 100).
PADDED_SAMPLE_ROWS = 1000


def _scan_csv(pl, path: str, glob: bool = True):
    """One CSV file, its separator that of its header line (:func:`calibviz.scan.source.header_separator`).

    The header is checked first (:func:`calibviz.scan.source.check_csv_text`): Polars' reader panics on a NUL
    byte in the header (UTF-16 text, a binary file named .csv) with a Rust backtrace on stderr, which no handler
    can keep from a user. A file written with spaces beside its separators (``y, p`` or ``1, 0.298``) is read as
    pandas and DuckDB read it (:func:`_unpadded`); Polars has no option for it and read ``' 0.298'`` as text.
    Polars types the other files' columns from their first 100 rows; the columns it takes for integers or
    true/false are read as text and checked on every row (:func:`_checked`), so a later 0.7 or label 1.0 makes a
    float column (it was refused, a review) and a later 'yes' keeps the column's words.
    """
    from .source import check_csv_text, csv_null_values, csv_padded, header_separator

    sep = header_separator(check_csv_text(path, "Polars"))
    options = dict(separator=sep, null_values=csv_null_values(), glob=glob)
    if csv_padded(path, sep):
        return _unpadded(pl, pl.scan_csv(path, infer_schema=False, **options))
    guessed = {name: dtype for name, dtype in pl.scan_csv(path, **options).collect_schema().items()
               if dtype.is_integer() or dtype == pl.Boolean}
    if not guessed:
        return pl.scan_csv(path, **options)
    text = pl.scan_csv(path, schema_overrides={name: pl.String for name in guessed}, **options)
    return _checked(pl, text, {name: pl.Boolean if dtype == pl.Boolean else pl.Int64
                               for name, dtype in guessed.items()})


def _unpadded(pl, raw):
    """Every field of an all-text scan stripped of its spaces, blanks missing, names stripped, and each column
    cast to the type its values take (integers, floats, booleans, else text), as Polars types an unpadded file:
    told from the first :data:`PADDED_SAMPLE_ROWS` rows, integers and true/false checked on every row
    (:func:`_checked`)."""
    names = raw.collect_schema().names()
    text = raw.select([pl.when(pl.col(c).str.strip_chars() != "").then(pl.col(c).str.strip_chars())
                       .alias(c.strip()) for c in names])
    sample = text.head(PADDED_SAMPLE_ROWS).collect()
    types = {}
    for name in sample.columns:
        values = sample.get_column(name).drop_nulls()
        if values.len() and values.str.to_integer(strict=False).null_count() == 0:
            types[name] = pl.Int64
        elif values.len() and values.cast(pl.Float64, strict=False).null_count() == 0:
            types[name] = pl.Float64
        elif values.len() and values.str.to_lowercase().is_in(["true", "false"]).all():
            types[name] = pl.Boolean
    return _checked(pl, text, types)


def _checked(pl, text, types: dict):
    """``text``'s columns named in ``types`` (read as text) cast to the types a sample of rows gave them, except
    that a column of integers or of true/false there is checked on every row (one pass), so that a later 0.5
    makes it a float column instead of an error and a later 'yes' keeps the column's words (a review: it was cut
    to 0 or read as False; DuckDB's reader guards the same way, :mod:`calibviz.scan.duckdb_engine`)."""
    types = dict(types)
    ints = [c for c, t in types.items() if t == pl.Int64]
    bools = [c for c, t in types.items() if t == pl.Boolean]
    if ints or bools:
        given = [pl.col(c).is_not_null() for c in ints]
        later = text.select([(g & pl.col(c).str.to_integer(strict=False).is_null()).any().alias(c)
                             for g, c in zip(given, ints)]
                            + [(g & pl.col(c).cast(pl.Float64, strict=False).is_null()).any().alias(f"{c}\0word")
                               for g, c in zip(given, ints)]
                            + [(pl.col(c).is_not_null() & ~pl.col(c).str.to_lowercase().is_in(["true", "false"]))
                               .any().alias(c) for c in bools]).collect(engine="streaming").row(0, named=True)
        for c in ints:
            if later[f"{c}\0word"]:
                del types[c]  # a word after integers: text, as pandas reads it (the cast to floats failed, a review)
            elif later[c]:
                types[c] = pl.Float64
        for c in bools:
            if later[c]:
                del types[c]  # words other than true/false: text, as in memory
    return text.with_columns([(pl.col(name).str.to_lowercase() == "true").alias(name) if dtype == pl.Boolean
                              else pl.col(name).cast(dtype) for name, dtype in types.items()])


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
