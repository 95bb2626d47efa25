"""DuckDB engine (the default): embedded, no server; streams Parquet and CSV files.

Opens sources as DuckDB relations; the aggregation itself is the Narwhals
code of :mod:`calibviz.scan.aggregate`, which DuckDB runs in parallel over
row groups without materialising the rows.
"""
from __future__ import annotations

import os
import re
import threading

from ..errors import InputError

__all__ = ["connection", "close", "read_files", "query", "from_object"]

_CON = None
_CON_LOCK = threading.Lock()
#: Bits of group keys up to which DuckDB aggregates into an array indexed by the key instead of a hash
#: table (its default is 12). The plain first pass groups by ``floor(p 2^16)`` (17 bits with p = 1, plus one for
#: null) and a 0/1 label (2 bits): 20 bits let DuckDB use the array where the source has column statistics
#: (Parquet, tables), which halves that pass (10^8 rows, 2 cores: 2.2 s against 3.2 s for count and sums).
PERFECT_HASH_BITS = 20
#: Bytes of one entry of that array for the plain pass (key, count, three sums: p, p^2 and the log loss of confident
#: mistakes; measured ~80 with two sums, each sum adds 8, rounded up). DuckDB
#: allocates one array per thread outside its memory limit, so the setting is used only while all threads'
#: arrays fit in a quarter of that limit (2 threads: 256 MB; 64 threads need a limit of 32 GB).
_ENTRY_BYTES = 128
_INTEGER_TYPES = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER",
                  "UBIGINT", "UHUGEINT"}
_UNITS = {"b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12, "kib": 2 ** 10, "mib": 2 ** 20, "gib": 2 ** 30,
          "tib": 2 ** 40}


def _bytes(text: str) -> float:
    """DuckDB's memory setting ('18.6 GiB') in bytes; 0 when unreadable.

    >>> _bytes("1.5 GiB"), _bytes("512.0 MB"), _bytes("unlimited")
    (1610612736.0, 512000000.0, 0.0)
    """
    number, _, unit = str(text).strip().partition(" ")
    try:
        return float(number) * _UNITS[unit.strip().lower() or "b"]
    except (ValueError, KeyError):
        return 0.0


def _configured(con):
    con.execute("SET enable_progress_bar = false")
    threads, limit = con.execute("SELECT current_setting('threads'), current_setting('memory_limit')").fetchone()
    if int(threads) * _ENTRY_BYTES * 2 ** PERFECT_HASH_BITS <= _bytes(limit) / 4:
        con.execute(f"SET perfect_ht_threshold = {PERFECT_HASH_BITS}")
    return con


def connection(database=None):
    """A connection of its own for one source: a cursor of the process-wide in-memory database, or a read-only
    connection to a database file.

    Each source gets its own cursor because a DuckDB connection runs one query at a time: two dashboard sessions
    whose scans shared the process-wide connection failed with "connection is busy" when both computed at once.
    Cursors share the database (its memory limit and threads), and each is configured as the database is
    (``perfect_ht_threshold`` is a setting of the connection, not of the database).
    """
    import duckdb

    global _CON
    if database is not None:
        _check_database_file(str(database))
        try:
            return _configured(duckdb.connect(str(database), read_only=True))
        except duckdb.Error as exc:
            raise InputError(f"cannot open the DuckDB database {str(database)!r}: {exc}") from None
    with _CON_LOCK:  # two sessions opening their first files at once: one database, not two
        if _CON is None:
            _CON = _configured(duckdb.connect())
        return _configured(_CON.cursor())


def _check_database_file(path: str) -> None:
    """Refuse what is no DuckDB database file before DuckDB opens it: DuckDB answered '', ':memory:', a Parquet
    and a CSV file alike with "Cannot launch in-memory database in read-only mode!" (a review). A database file
    holds 'DUCK' at bytes 8-11. Addresses ('md:...', 's3://...') are DuckDB's to open."""
    if re.match(r"^[a-zA-Z][\w+.-]*:", path):
        return
    if not os.path.isfile(path):
        raise InputError(f"--database (database=) names a DuckDB database file; there is no file {path!r}. To query "
                         "Parquet or CSV files, drop it and read them in the query: SELECT * FROM "
                         "read_parquet('logs/*.parquet').")
    with open(path, "rb") as f:
        head = f.read(12)
    if head[8:12] != b"DUCK":
        raise InputError(f"{path!r} is not a DuckDB database file; to query a Parquet or CSV file, drop --database "
                         f"(database=) and read it in the query: SELECT * FROM '{os.path.basename(path)}'.")


def close() -> None:
    """Close the process-wide connection (a later :func:`connection` opens a new one): the command line's exit."""
    global _CON
    if _CON is not None:
        _CON.close()
        _CON = None


def read_files(files, fmt: str, display: str, *, literal: bool = False):
    """A relation over Parquet or CSV files (hive partitions become columns); ``literal``: the names are files,
    not globs (their wildcard characters escaped, :func:`literal_name`)."""
    import duckdb

    con = connection()
    paths = [literal_name(f) for f in files] if literal else files
    try:
        if fmt == "parquet":
            return con.read_parquet(paths, hive_partitioning=True, union_by_name=True)
        from .source import csv_null_values

        csv = {"header": True, "union_by_name": True, "na_values": csv_null_values()}
        rel = con.read_csv(paths, **csv)
        # DuckDB guesses a column's type from a sample of rows and then rounds what does not fit: a label or
        # score column of integers in the sample turned a later -0.3 into 0 and 1.4 into 1, so bad rows passed
        # and values changed. One pass reads the integer columns as text and counts the values that are no
        # integers; columns that hold numbers of other kinds are read as DOUBLE (every value as written, for the
        # checks to see), columns that hold words as text, the others stay integers (labels keep their integer
        # classes, as in memory). Guessing from the whole file was 15x slower.
        # Columns sniffed as BOOLEAN are read as text where they hold other words than true/false: DuckDB takes
        # yes/no, y/n and t/f for booleans, pandas only true/false, so a label column of 'yes' and 'no' keeps its
        # words (classes ('no', 'yes'), as in memory, not (False, True)). Every row is checked: the sniffer
        # decides from its sample, and a 'yes' after it was read as True (a review).
        # Columns sniffed as text whose first rows are all numbers to pandas ('inf', 'nan', 'Infinity', blanks: a
        # feature starting with inf was text and left out of the variable ranking, a review) are read as DOUBLE
        # where every row is such a number.
        hive = _partition_columns(files)  # typed by DuckDB from the paths: no dtype of the CSV's own can name them
        ints = [c for c, t in zip(rel.columns, rel.types) if str(t) in _INTEGER_TYPES and c not in hive]
        bools = [c for c, t in zip(rel.columns, rel.types) if str(t) == "BOOLEAN" and c not in hive]
        texts = _numeric_texts(rel, [c for c, t in zip(rel.columns, rel.types)
                                     if str(t) == "VARCHAR" and c not in hive])
        finish = _trimmed if _padded(files) else (lambda r: r)  # the file's start read once
        if not ints and not bools and not texts:
            return finish(rel)
        # integer columns read as text: a later 'yes' among 0/1 labels keeps the column's words (three classes, as
        # in memory) instead of failing the read with "CSV Error on Line: 25002" (a review)
        dbl = con.read_csv(paths, **csv, dtype={c: "VARCHAR" for c in ints + bools})
        # not an integer: a fraction, or a number no BIGINT holds (inf, nan, 1e20: a later inf failed the read, a
        # review); TRY_CAST to BIGINT alone rounds '0.5' to 1
        as_double = {c: f"TRY_CAST({_quoted(c)} AS DOUBLE)" for c in ints}
        checks = ([f"count(*) FILTER (WHERE {as_double[c]} IS NOT NULL AND ({as_double[c]} <> trunc({as_double[c]}) "
                   f"OR TRY_CAST({_quoted(c)} AS BIGINT) IS NULL))" for c in ints]
                  + [_not_numbers(c) for c in ints]
                  + [f"count(*) FILTER (WHERE lower(trim({_quoted(c)})) NOT IN ('true', 'false'))" for c in bools]
                  + [_not_numbers(c) for c in texts])
        counts = dbl.aggregate(", ".join(checks)).fetchall()[0]
        fractions, words = counts[:len(ints)], counts[len(ints):2 * len(ints)]
        changed = {c: "VARCHAR" if w else "DOUBLE" for c, f, w in zip(ints, fractions, words) if f or w}
        changed.update({c: "VARCHAR" for c, k in zip(bools, counts[2 * len(ints):]) if k})
        changed.update({c: "DOUBLE" for c, k in zip(texts, counts[2 * len(ints) + len(bools):]) if not k})
        return finish(con.read_csv(paths, **csv, dtype=changed) if changed else rel)
    except duckdb.Error as exc:
        if fmt != "parquet":  # a file that is no UTF-8 text: say so and how to fix it, not "CSV Error on Line: 2"
            from .source import check_csv_text

            for f in (files if isinstance(files, (list, tuple)) else [files]):
                if os.path.isfile(f):  # local files only: a URL or s3:// path keeps DuckDB's own words
                    check_csv_text(f, "DuckDB")
        raise InputError(f"DuckDB cannot read {display!r}: {str(exc).splitlines()[0]}") from None


#: Rows of a text column looked at before a pass checks whether all of it is numbers (:func:`_numeric_texts`).
_TEXT_SAMPLE = 2048


def _not_numbers(column: str) -> str:
    """SQL counting the cells of a text column that are no number as pandas reads them (``source._NUMBER``)."""
    from .source import _NUMBER

    q = _quoted(column)
    return f"count(*) FILTER (WHERE {q} IS NOT NULL AND NOT regexp_full_match({q}, '{_NUMBER}'))"


def _numeric_texts(rel, texts: list) -> list:
    """The text columns whose first :data:`_TEXT_SAMPLE` rows hold nothing but numbers (or nothing)."""
    if not texts:
        return []
    counts = rel.limit(_TEXT_SAMPLE).aggregate(", ".join(_not_numbers(c) for c in texts)).fetchall()[0]
    return [c for c, k in zip(texts, counts) if not k]


def literal_name(path: str) -> str:
    """A file name as a DuckDB glob that matches only it: its wildcard characters in brackets.

    >>> literal_name("logs/run[1]*.parquet")
    'logs/run[[]1][*].parquet'
    """
    return "".join(f"[{c}]" if c in "[*?" else c for c in str(path))


def _padded(files) -> bool:
    """Whether the first of ``files`` (a local CSV file) has fields padded with spaces
    (:func:`calibviz.io.readers.padded_fields`, the in-memory reader's rule)."""
    from .source import csv_padded

    first = (files if isinstance(files, (list, tuple)) else [files])[0]
    return os.path.isfile(first) and csv_padded(first)


def _trimmed(rel):
    """The text columns of a padded CSV (``y, p, segment``: ' north') stripped of their spaces, as the in-memory
    reader strips them; DuckDB reads padded numbers and null texts itself."""
    text = [c for c, t in zip(rel.columns, rel.types) if str(t) == "VARCHAR"]
    if not text:
        return rel
    return rel.project(", ".join(f"trim({_quoted(c)}) AS {_quoted(c)}" if c in text else _quoted(c)
                                 for c in rel.columns))


def _partition_columns(files) -> set:
    """Names of the hive partitions in the files' paths (``.../year=2024/part.csv``), which DuckDB adds as columns.

    >>> sorted(_partition_columns(["/logs/year=2024/month=1/a.csv", "/logs/year=2025/month=2/b.csv"]))
    ['month', 'year']
    """
    from .source import hive_partitions

    return {key for f in (files if isinstance(files, (list, tuple)) else [files]) for key, _ in hive_partitions(f)}


def _quoted(name: str) -> str:
    """A column name as a DuckDB identifier (any characters, quotes doubled)."""
    return '"' + str(name).replace('"', '""') + '"'


def query(sql: str, *, database=None):
    """A relation of a SQL query (against ``database``, a DuckDB file, when given).

    Exactly one SELECT statement: DuckDB runs every statement of a string it is given, so a source of
    ``SELECT ...; COPY (...) TO 'file'`` wrote the file (an adversarial review), whatever the read-only database.
    """
    import duckdb

    con = connection(database)
    try:
        statements = con.extract_statements(sql)
        if len(statements) != 1 or statements[0].type != duckdb.StatementType.SELECT:
            kinds = ", ".join(s.type.name for s in statements) or "none"
            raise InputError(f"a SQL source is one SELECT query (got {len(statements)} statement(s): {kinds}); "
                             "write the query that reads the predictions, without other statements.")
        rel = con.sql(sql)
    except duckdb.Error as exc:
        said = str(exc).splitlines()[0]
        # a table of a database file named without the file: the query ran in an empty in-memory database
        hint = (" The query runs in an empty in-memory database unless you name the DuckDB file that holds its "
                "tables: database=FILE (command line: --database FILE)."
                if database is None and "Catalog Error" in said else "")
        raise InputError(f"the SQL query failed: {said}{hint}") from None
    return _named_once(rel, "the SQL query's result")


def _named_once(rel, what: str):
    """``rel``, refused where it names a column twice: DuckDB reads the first of them (a review: the query
    ``SELECT y, y::DOUBLE AS p, p`` scored the labels as the probabilities, ECE 0)."""
    twice = sorted({c for c in rel.columns if rel.columns.count(c) > 1})
    if twice:
        raise InputError(f"{what} names the column {twice[0]!r} twice; give each column its own name "
                         "(... AS another_name).")
    return rel


def from_object(obj):
    """A DuckDB relation passed from Python, or a pandas / pyarrow table; None for anything else."""
    import duckdb

    if isinstance(obj, duckdb.DuckDBPyRelation):
        try:
            obj.columns  # noqa: B018 - a relation of a closed connection fails here, on every later use too
        except duckdb.ConnectionException:
            raise InputError("the DuckDB relation's connection is closed; scan a relation of an open connection "
                             "(keep it open until the results are computed).") from None
        return _named_once(obj, "the DuckDB relation")
    mod = type(obj).__module__.split(".")[0]
    if mod in ("pandas", "pyarrow"):
        return connection().from_df(obj) if mod == "pandas" else connection().from_arrow(obj)
    return None
