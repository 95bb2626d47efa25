"""Sources of a scan and their column roles.

A source is opened lazily by one engine (:mod:`calibviz.scan.duckdb_engine`,
``polars_engine``, ``spark_engine``) as a Narwhals LazyFrame; nothing is read
until an aggregation is collected. Column roles resolve as
:func:`calibviz.load_predictions` resolves them (same names, same messages),
on a small sample of the rows plus the distinct values of the label column.
"""
from __future__ import annotations

import glob as _glob
from dataclasses import replace
import os
import re
from pathlib import Path

import narwhals as nw
import numpy as np
import pandas as pd

from ..errors import InputError
from ..io.cleaning import dropped_note, with_drop_advice
from ..io.loading import MULTICLASS_NEEDS_TWO, _detect, _model_name_from_source
from ..io.readers import check_parquet_marks, is_sql
from ..io.mapping import LABEL_NAMES, _find, _key, detect_mapping, unsupported_columns
from .aggregate import TEXT_IN_NUMBERS_FIX, Roles, collect, is_missing
from .files import Outside, glob_base, matched_files, unreadable_note

__all__ = ["ENGINES", "open_source", "resolve_roles", "check_allowed", "several_files_note", "IN_MEMORY", "SAMPLE_ROWS",
           "MAX_LABELS"]

ENGINES = ("duckdb", "polars", "spark")
#: Rows read to detect the column roles (the probability columns' names and sums).
SAMPLE_ROWS = 2000
#: Most distinct labels a scan accepts (a float score given as the label is caught here).
MAX_LABELS = 1000
#: Models of a long-format model column a scan takes (each model is its own passes over the rows)
MAX_MODELS = 1000
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")  # s3://, s3a://, gs://, hdfs://, https://


def _engine_of(source, engine):
    if engine is not None:
        key = str(engine).strip().lower()
        if key not in ENGINES:
            raise InputError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}.")
        return key
    mod = type(source).__module__.split(".")[0]
    if mod == "polars":
        return "polars"
    if mod == "pyspark":
        return "spark"
    return "duckdb"


def files_of(path: str) -> tuple[list[str], str]:
    """(files, format) of a path, a glob or a directory (searched recursively, hive partitions included; each file
    once, :func:`calibviz.scan.files.matched_files`).

    Examples
    --------
    >>> files_of("/nonexistent/preds.parquet")
    Traceback (most recent call last):
    ...
    calibviz.errors.InputError: no file matches '/nonexistent/preds.parquet'; give a Parquet or CSV file, a glob such as 'logs/*.parquet' or a directory of them.
    """
    return _files_of(path)[:2]


def _files_of(path: str) -> tuple[list[str], str, tuple]:
    """(files, format, notes): the notes name the files read once that links named twice, and hidden names not
    read."""
    try:
        return _found(path)
    except OSError as exc:  # a name too long, a directory that may not be listed: a message, not a traceback
        raise InputError(f"{str(path)[:80]!r} cannot be read ({exc.strerror or exc}).") from None


#: What "no file matches" adds for a source with spaces (a query with a typo), where SQL is a source (not on the
#: dashboard, which drops it: :func:`calibviz.ui.scan._in_form_words`).
SQL_HINT = "; a SQL query starts with SELECT, WITH, FROM, TABLE or VALUES."


def _found(path: str) -> tuple[list[str], str, tuple]:
    files, repeats, hidden = matched_files(str(path))
    if not files:
        query = " " in str(path).strip()  # a query with a typo, such as "SELEC * FROM preds"
        raise InputError(f"no file matches {str(path)!r}{unreadable_note(str(path))}; give a Parquet or CSV file, a "
                         "glob such as 'logs/*.parquet' or a directory of them"
                         + (SQL_HINT if query else "."))
    sizes = {f: os.path.getsize(f) for f in files}
    empty = [f for f in files if sizes[f] == 0]
    if empty:  # every engine fails on them, not all of them naming the file
        raise InputError(f"{empty[0]!r} is empty (0 bytes)" + (f", as are {len(empty) - 1} more of the files"
                                                               if len(empty) > 1 else "")
                         + "; remove it or write its predictions again.")
    kinds = {}
    for f in files:
        kinds.setdefault(_format(f), f)
    if len(kinds) > 1:  # naming one of each: a stray file among hundreds is found at once
        raise InputError(f"{str(path)!r} mixes Parquet and CSV files (e.g. {kinds['parquet']!r} and "
                         f"{kinds['csv']!r}); scan one format at a time.")
    fmt = next(iter(kinds))
    if fmt == "parquet":
        for f in files:  # the engines' words for a damaged file name no fix ("No magic bytes found")
            with open(f, "rb") as fh:
                head = fh.read(4)
                fh.seek(max(sizes[f] - 4, 0))
                check_parquet_marks(repr(f), head, fh.read(4))
    _check_columns(files, fmt)
    notes = []
    if repeats:  # links that name a file twice (logs/latest -> 2024-01): its rows count once
        left, kept = min(repeats, key=lambda r: (len(r[0]), r))  # the shortest name shows the link best
        notes.append(f"{len(repeats):,} of the names matched {'are links' if len(repeats) > 1 else 'is a link'} to "
                     f"a file or directory already read (e.g. {left!r}, the same as {kept!r}): each file's rows are "
                     "counted once")
    if hidden:  # said, not a silent gap: Path.rglob read them before
        notes.append(f"{len(hidden):,} hidden name{'s' if len(hidden) > 1 else ''} (starting with '.', e.g. "
                     f"{hidden[0]!r}) {'are' if len(hidden) > 1 else 'is'} not read, as Spark and Arrow leave them "
                     "out (checkpoints and temporary copies); name them in a glob ('.*') to read them")
    return files, fmt, tuple(notes)


def _check_columns(files: list[str], fmt: str) -> None:
    """Refuse what the engines would read silently wrong: a column name twice in a file (DuckDB renamed the second
    ``p_1``, Polars took the first of two contradicting label columns; in memory it is refused), and hive
    partition keys (directories ``key=value``) named like a column of the files (every engine gives the
    directory's value to the whole column: a file's p became 0.5 everywhere under ``p=0.5/``)."""
    keys = {key for f in files for key, _ in hive_partitions(f)}
    for f in files[:20]:  # the columns are the same in every file of a log; metadata or a header line each
        columns = _columns_of(f, fmt)
        twice = sorted({c for c in columns if columns.count(c) > 1})
        if twice:
            raise InputError(f"{f!r} names the column {twice[0]!r} twice; give each column its own name.")
        clash = sorted(keys & set(columns))
        if clash:
            raise InputError(f"the directories name the partition key {clash[0]!r} (as in {clash[0]}=...), and "
                             f"{f!r} has a column {clash[0]!r} too: the engines would give every row the "
                             "directory's value. Rename the directories or the column.")


def hive_partitions(path: str) -> list[tuple[str, str]]:
    """The hive partitions (key, value) of a file's directories, which the engines add as columns.

    >>> hive_partitions("/logs/year=2024/model=a=b/m=c%20d/part.csv")
    [('year', '2024'), ('model', 'a=b'), ('m', 'c d')]
    """
    from urllib.parse import unquote

    parts = str(path).replace("\\", "/").split("/")[:-1]
    # values percent-decoded, as DuckDB, Polars and Spark decode them ('m=a%20b' is model 'a b', a review)
    return [(key, unquote(value)) for key, value in (part.split("=", 1) for part in parts if "=" in part)]


#: A partition value DuckDB types as BIGINT (a canonical integer: '001' and '1.0' stay text, as DuckDB keeps them)
_HIVE_INTEGER = re.compile(r"^-?(0|[1-9]\d{0,17})$")


def hive_types(files) -> dict[str, str]:
    """Each hive partition key of ``files`` as DuckDB types it: "int" where every value is a canonical integer,
    else "text" (so models '001', '1' and '1.0' stay three, as DuckDB reads them).

    >>> hive_types(["/l/day=1/m=001/a.csv", "/l/day=2/m=1/b.csv"])
    {'day': 'int', 'm': 'text'}
    """
    values: dict[str, set] = {}
    for f in files:
        for key, value in hive_partitions(f):
            values.setdefault(key, set()).add(value)
    return {k: "int" if all(_HIVE_INTEGER.match(v) for v in vs) else "text" for k, vs in values.items()}


def parquet_columns(files) -> list[set]:
    """The column names of each Parquet file (its metadata): Spark merges the files' schemas only where these
    differ (:func:`calibviz.scan.spark_engine.read_files`)."""
    return [set(_columns_of(f, "parquet")) for f in files]


def _check_case(path: str, fmt: str, engine: str) -> None:
    """Refuse columns whose names differ only in case on engines that read names without case: DuckDB renamed
    'y' beside 'Y' to 'y_1' (a review), and Spark finds them ambiguous; Polars and memory read them apart."""
    seen: dict = {}
    for c in _columns_of(path, fmt):
        if c.lower() in seen and seen[c.lower()] != c:
            raise InputError(f"{path!r} has columns {seen[c.lower()]!r} and {c!r}, whose names differ only in case; "
                             f"engine={engine!r} reads names without case. Rename one of them, or use "
                             "engine='polars'.")
        seen.setdefault(c.lower(), c)


def _columns_of(path: str, fmt: str) -> list[str]:
    """Column names of one Parquet file (its metadata) or CSV file (its header line); [] when unreadable (the
    engine's own read then says why)."""
    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            return list(pq.read_schema(path).names)
        import csv

        header = csv_header(path)
        return [] if header is None else [c.strip() for c in next(csv.reader([header],
                                                                             delimiter=header_separator(header)))]
    except Exception:  # noqa: BLE001 - any unreadable file: the engine's read reports it
        return []


def csv_header(path: str) -> str | None:
    """The header line of a CSV file (gzip or not, byte-order mark dropped); None when its start is not UTF-8 text
    (UTF-16, a spreadsheet or binary file named .csv, a NUL byte). Raises OSError when it cannot be read."""
    import gzip

    opener = gzip.open if path.lower().endswith(".gz") else open
    with opener(path, "rb") as fh:
        head = fh.read(1 << 16)
    cut = head.rfind(b"\n") + 1 or len(head)  # whole lines only: a multi-byte character may straddle the end
    try:
        text = head[:cut].decode("utf-8")
    except UnicodeDecodeError:
        return None
    if "\x00" in text:
        return None
    return text.split("\n", 1)[0].strip("\r\ufeff")


def check_csv_text(path: str, engine: str) -> str:
    """The header line of a CSV file an engine reads; refuses, with the fix, a file whose start is not UTF-8 text
    (UTF-16 or latin-1 text, a spreadsheet or a zip, gzip or pickle named .csv), which the engines report in their
    own words ("CSV Error on Line: 2", "Error when sniffing file") or, Polars, with a panic."""
    try:
        header = csv_header(path)
    except OSError as exc:
        raise InputError(f"{engine} cannot read {path!r}: {exc}.") from None
    if header is None:
        raise InputError(f"{path!r} is not UTF-8 text (latin-1 or UTF-16 text, a spreadsheet or a binary file?): "
                         "the engines read UTF-8 CSV and Parquet. Save it as UTF-8 CSV or Parquet, or load it in "
                         "memory (without --engine / engine=), which reads other encodings.")
    return header


def csv_null_values() -> list:
    """The texts a CSV cell reads as missing ('NA', 'N/A', 'NULL', 'nan', blank, ...): pyarrow's, which the
    in-memory reader uses (:mod:`calibviz.io.readers`), so that a scan counts the same rows as missing instead of
    calling 'NA' a non-numeric value.

    >>> {"NA", "N/A", ""} <= set(csv_null_values())
    True
    """
    import pyarrow.csv as pacsv

    texts = [t for t in pacsv.ConvertOptions().null_values if t]
    # with the spaces of a padded file (' NA'), which the engines compare before any stripping
    return ["", *texts, *(f" {t}" for t in texts), *(f"{t} " for t in texts), *(f" {t} " for t in texts)]


def csv_padded(path: str, sep: str | None = None) -> bool:
    """Whether a local CSV file's first lines have fields padded with spaces
    (:func:`calibviz.io.readers.padded_fields`, the in-memory reader's rule); ``sep`` by default that of the
    header line (:func:`header_separator`)."""
    from ..io.readers import PADDED_LINES, padded_fields

    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        lines = [line for _, line in zip(range(PADDED_LINES), fh)]
    return bool(lines) and padded_fields(lines, sep or header_separator(lines[0]))


def header_separator(header: str) -> str:
    r"""The separator of a CSV header line: the most frequent of comma, semicolon, tab and pipe (comma when none),
    as DuckDB detects it.

    >>> header_separator("y;p;x"), header_separator("y\tp"), header_separator("label")
    (';', '\t', ',')
    """
    counts = {sep: header.count(sep) for sep in ",;\t|"}
    best = max(counts, key=counts.get)
    return best if counts[best] else ","


def _format(name: str) -> str:
    low = name.lower()
    if low.endswith(".parquet") or low.endswith(".pq"):
        return "parquet"
    if low.endswith((".csv", ".tsv", ".txt", ".csv.gz", ".tsv.gz")):
        return "csv"
    with open(name, "rb") as fh:
        return "parquet" if fh.read(4) == b"PAR1" else "csv"


def check_allowed(path: str, roots) -> list[str]:
    """Refuse a path, glob or directory that could reach outside the allowed root directories; its files if not.

    Every file the path can match must resolve (symlinks followed) under one of
    ``roots``; a glob is checked on its fixed prefix and on every match. The
    files returned are those a scan reads (:func:`calibviz.scan.files.matched_files`).

    Examples
    --------
    >>> check_allowed("/etc/passwd", ["/srv/data"])
    Traceback (most recent call last):
    ...
    calibviz.errors.InputError: '/etc/passwd' is outside the directories this server may read (/srv/data); ask whoever runs the server to add its directory to CALIBVIZ_SCAN_ROOTS.
    """
    if not roots:
        raise InputError("no data directories are allowed on this server; set CALIBVIZ_SCAN_ROOTS (directories "
                         "separated by ':') to open files by path.")
    real_roots = [os.path.realpath(r) for r in roots]

    def inside(p: str) -> bool:
        real = os.path.realpath(p)
        return any(real == r or real.startswith(r.rstrip(os.sep) + os.sep) for r in real_roots)

    text = str(path)
    if "\x00" in text or is_sql(text):
        # a query could read any file the server can (read_csv('/etc/passwd')): the command line and Python take
        # queries (a walk-through typed one and was told only that it is no path)
        what = "a SQL query, which the dashboard does not run" if is_sql(text) else "not a path"
        raise InputError(f"{text[:60]!r} is {what}; the dashboard opens files by path under {', '.join(roots)} "
                         "(queries run from the command line, calibviz metrics QUERY --engine duckdb --database "
                         "FILE, or cv.scan in Python).")
    # a file named directly is taken by its name (matched_files), not walked: its whole path is checked ('d[1]' is
    # a glob character's name, and a link 'd[1] -> /outside' behind it was read, a review)
    fixed = text if Path(text).is_file() else glob_base(text)[0]
    if re.match(r"^[a-zA-Z][\w+.-]*://", text):  # file://, s3://: the form opens paths on the server's disks only
        raise InputError(f"{text[:80]!r} is an address, not a path; the dashboard opens files on this server's disks "
                         f"under {', '.join(roots)}: give the path alone (e.g. /data/logs/preds.parquet). The "
                         "command line and cv.scan read object stores.")
    if text.startswith("~"):  # the server's home, not the reader's: said as such, not as a relative path
        raise InputError(f"{text!r}: '~' is not expanded here; give the absolute path of a file under the "
                         f"directories this server may read ({', '.join(roots)}).")
    if not os.path.isabs(text):  # relative to the server's working directory, which the person does not see
        raise InputError(f"{text!r} is a relative path; give the absolute path of a file under the directories this "
                         f"server may read ({', '.join(roots)}), e.g. {os.path.join(roots[0], Path(text).name)!r}.")
    if ".." in Path(text).parts or not inside(fixed):
        # a link inside a root that leads out: said as such ('is outside' read as wrong for a path under the root)
        link = ".." not in Path(text).parts and any(
            os.path.commonpath([os.path.abspath(fixed), os.path.abspath(r)]) == os.path.abspath(r) for r in roots)
        where = "is a link that resolves outside" if link else "is outside"
        raise InputError(f"{text!r} {where} the directories this server may read ({', '.join(roots)}); ask "
                         "whoever runs the server to add its directory to CALIBVIZ_SCAN_ROOTS.")
    try:
        files, repeats, _ = matched_files(text, within=inside)
        matches = files + [left for left, _ in repeats]
    except Outside as out:  # a link to a directory outside: refused before its tree is walked (a link to '/')
        raise InputError(f"{out.path!r} (matched by {text!r}) is a link that resolves outside the directories this "
                         f"server may read ({', '.join(roots)}).") from None
    except OSError as exc:  # a name too long, a directory the server may not list: a message, not a traceback
        raise InputError(f"{text[:80]!r} cannot be read on this server ({exc.strerror or exc}).") from None
    # every directory listed was checked as it was listed (``within``) and the path's fixed part above: only a
    # name that is a link itself can lead out (a realpath per file cost ~70% of a run's check, a review)
    for m in matches:
        if os.path.islink(m) and not inside(m):
            raise InputError(f"{m!r} (matched by {text!r}) resolves outside the directories this server may "
                             f"read ({', '.join(roots)}).")
    return files


def open_source(source, engine=None, *, database=None, read_only_roots=None):
    """(Narwhals LazyFrame, engine name, display name, notes) of a source; reads nothing but metadata.

    ``source``: a Parquet/CSV path, a glob, a directory (hive partitions
    become columns), a SQL query (DuckDB; against ``database`` if given), a
    DuckDB relation, a Polars (Lazy)Frame, a PySpark DataFrame or a pandas
    DataFrame.
    """
    engine = _engine_of(source, engine)
    if engine == "duckdb":
        from . import duckdb_engine as eng
    elif engine == "polars":
        from . import polars_engine as eng
    else:
        from . import spark_engine as eng
    if isinstance(source, (str, os.PathLike)):
        text = os.fspath(source)
        if not str(text).strip():  # Path("") is the working directory: an empty source scanned it whole
            raise InputError("the source is empty; give a Parquet or CSV path, a glob, a directory or a SQL query.")
        if isinstance(source, str) and is_sql(text) and not Path(text).exists():
            if engine != "duckdb" and engine != "spark":
                raise InputError(f"a SQL query needs engine='duckdb' or 'spark', not {engine!r}.")
            return nw.from_native(eng.query(text, database=database)), engine, "query", ()
        if database is not None:
            raise InputError(f"database= (--database) is the DuckDB file a SQL query runs against; {text!r} is "
                             "no SELECT query. Leave database= (--database) out to read a file, or give a query such "
                             "as \"SELECT * FROM preds\".")
        if _URL.match(text):  # object stores and HDFS: the engine resolves them (Spark as the cluster is set up)
            fmt = "csv" if text.lower().endswith((".csv", ".csv.gz", ".tsv")) else "parquet"
            return nw.from_native(eng.read_files([text], fmt, text)), engine, text, ()
        files, fmt, notes = _files_of(text)
        if engine != "polars":
            _check_case(files[0], fmt, engine)
        # the files found, each read as named: engines glob the names they are given ('run[1].parquet' read
        # run1.parquet), so the names are escaped for each engine's own glob syntax
        return nw.from_native(eng.read_files(files, fmt, text, literal=True)), engine, text, notes
    native = eng.from_object(source)
    if native is None:
        raise InputError(f"cannot scan a {type(source).__name__}; give a Parquet or CSV path, a glob, a directory, a "
                         "SQL query, a DuckDB relation, a Polars LazyFrame or a PySpark DataFrame.")
    return nw.from_native(native), engine, type(source).__name__, ()


#: Where a result that needs the rows is had, said alike by every message of a scan (people of the library, the
#: command line and the dashboard read the same messages).
IN_MEMORY = ("the rows in memory (cv.load_predictions in Python, the command line without --engine, or a sample "
             "uploaded on the dashboard's Data page)")

#: A number as text (the engines cast these to DOUBLE): decimal or scientific notation, nan and infinities.
_NUMBER = r"^\s*[-+]?((\d+\.?\d*|\.\d+)([eE][-+]?\d+)?|(?i:nan|inf|infinity))\s*$"


def several_files_note(display: str, columns) -> str:
    """A sentence for columns (names) found empty in some rows of a source of several files (a directory or
    glob): the files are matched by column name, so a file of another layout gives empty values there. It names
    such a file where one of the first :data:`LAYOUT_FILES` lacks a column (dropping its rows is then no fix:
    the advice to drop invalid rows left 0 of 60,200 rows, a review); '' for a source of one file.

    Examples
    --------
    >>> several_files_note("query", ["model"])
    ''
    """
    try:
        files, fmt = files_of(display) if not _URL.match(str(display)) else ([], "")
    except (InputError, OSError, ValueError):
        return ""
    if len(files) < 2:
        return ""
    shown = ", ".join(map(repr, columns))
    for f in files[:LAYOUT_FILES]:
        has = _columns_of(f, fmt)  # [] where unreadable: the engine's read says why
        lacking = [c for c in columns if c not in has]
        if has and lacking:
            return (f" The source is {len(files):,} files read together and matched by column name, and {f!r} has "
                    f"no column {lacking[0]!r} (its columns: {', '.join(has[:8])}{', ...' if len(has) > 8 else ''}): "
                    f"{OTHER_LAYOUT}. Open the files of one layout (a glob that names them, or one directory per "
                    "layout).")
    return (f" The source is {len(files):,} files read together and matched by column name: a file without the "
            f"column {shown} gives empty values there. If a file of another layout is among them, open the "
            "files of one layout (a glob that names them, or one directory per layout).")


#: Files whose columns :func:`several_files_note` reads (metadata or a header line each).
LAYOUT_FILES = 200
#: How :func:`several_files_note` says a file lacks a column (leaving its rows out as invalid is then no fix).
OTHER_LAYOUT = "a file of another layout, whose rows would all be invalid here"


def _check_numbers(frame: nw.LazyFrame, name: str, columns: dict) -> None:
    """Text columns among the score and weight columns (a CSV column that holds a word): InputError with the
    rows that are not numbers, counted and shown as :func:`calibviz.load_predictions` shows them (one short
    pass over that column, only when the engine typed it as text)."""
    schema = frame.collect_schema()
    for c, what in columns.items():
        if schema[c] != nw.String:
            continue
        bad = frame.filter(~nw.col(c).str.contains(_NUMBER) & ~nw.col(c).is_null()).select(nw.col(c))
        example = collect(bad.head(1))[c]
        if len(example):
            n = int(collect(bad.select(nw.len().alias("n")))["n"].iloc[0])
            comma = re.fullmatch(r"\s*[-+]?\d*,\d+\s*", str(example.iloc[0])) is not None
            raise InputError(f"{what} column {c!r} of {name} holds non-numeric values in {n} "
                             f"row{'' if n == 1 else 's'}, e.g. {example.iloc[0]!r}; it must hold numbers."
                             + (" These use a decimal comma, which scans do not read: write the file with decimal "
                                "points, or load it in memory (calibviz metrics FILE --decimal ',')." if comma
                                else " " + TEXT_IN_NUMBERS_FIX))


def _fixed_part(name: str) -> str:
    """A glob's path up to its first wildcard segment, which names what it matches ('logs/*.parquet' -> 'logs'),
    else ``name``: a model named "model" next to the word model read "model model".

    >>> _fixed_part("/data/logs/*.parquet"), _fixed_part("/data/day=*/x.parquet"), _fixed_part("preds.parquet")
    ('/data/logs', '/data', 'preds.parquet')
    """
    if not _glob.has_magic(name):
        return name
    base = glob_base(name)[0]
    return "" if base == os.curdir else base


def _as_label_number(value, floats: bool):
    """A class named by text ('2') as a number of the label column's kind (2.0 for float labels, 2 for integers),
    where memory matches them (by :func:`calibviz.io.mapping._key`: '01' names no label 1); other values unchanged.

    >>> _as_label_number("2", True), _as_label_number("2", False), _as_label_number("cat", False)
    (2.0, 2, 'cat')
    >>> _as_label_number("01", False), _as_label_number(1, True)
    ('01', 1)
    """
    if not isinstance(value, str):
        return value
    try:
        number = float(value)
    except ValueError:
        return value
    whole = int(number) if number.is_integer() else number
    if _key(whole) != _key(value):
        return value
    return float(number) if floats else whole


def _python(value):
    return value.item() if isinstance(value, np.generic) else value


def resolve_roles(frame: nw.LazyFrame, name: str, *, label=None, probs=None, weight=None, positive=None,
                  model=None, features=None, drop_invalid: bool = False):
    """(ColumnMapping, {model name: Roles}) of a lazy source, resolved as load_predictions does.

    Reads :data:`SAMPLE_ROWS` rows, and the distinct labels (at most
    :data:`MAX_LABELS`) when the sample holds fewer than two; the probability
    columns are then found by name and, where names are ambiguous, by the
    sample's row sums. Labels outside the classes found are counted by the
    aggregation and reported.
    """
    sample = collect(frame.head(SAMPLE_ROWS))
    sample = sample.rename(columns=lambda c: str(c))
    columns = list(sample.columns)
    label_col = _find(columns, LABEL_NAMES, label, "label")
    if label_col is not None and unsupported_columns(sample[[label_col]]):  # lists or records: the in-memory error
        detect_mapping(sample, label=label, probs=probs, weight=weight, model=model, positive=positive,
                       features=features)
    given = [probs] if isinstance(probs, str) else list(probs or ())
    if label_col is not None and (label_col in given or label_col == weight):  # the in-memory error of two roles
        detect_mapping(sample, label=label, probs=probs, weight=weight, model=model, positive=positive,
                       features=features)
    seen_labels = sample[label_col].nunique() if label_col is not None else 0
    if seen_labels > MAX_LABELS:
        raise InputError(f"the label column {label_col!r} holds more than {MAX_LABELS} distinct values in its first "
                         f"{len(sample):,} rows; is it a score? Pass label=<column> with the true classes.",
                         ui_message=f"the label column {label_col!r} holds more than {MAX_LABELS} distinct values in "
                                    f"its first {len(sample):,} rows; is it a score? Type the column of the true "
                                    "classes as the Label column.")
    if label_col is not None and seen_labels < 2:
        # the sample alone cannot tell the classes: read the label column's distinct values (one column, one pass)
        distinct = collect(frame.select(nw.col(label_col)).unique().head(MAX_LABELS + 1))[label_col]
        distinct = distinct.dropna()
        if len(distinct) > MAX_LABELS:
            raise InputError(f"the label column {label_col!r} holds more than {MAX_LABELS} distinct values; is it a "
                             "score? Pass label=<column> with the true classes.",
                             ui_message=f"the label column {label_col!r} holds more than {MAX_LABELS} distinct "
                                        "values; is it a score? Type the column of the true classes as the Label "
                                        "column.")
        seen = {_key(v) for v in sample[label_col].dropna()}
        extra = [v for v in distinct if _key(v) not in seen]
        if extra and len(sample):
            rows = sample.iloc[[0] * len(extra)].copy()
            rows[label_col] = pd.Series(extra, index=rows.index, dtype=sample[label_col].dtype)
            sample = pd.concat([sample, rows], ignore_index=True)
    if sample.empty:
        raise InputError(f"{name} has no rows: a source needs rows of predictions (a CSV file: a header row and at "
                         "least one data row).")
    if label_col is not None and isinstance(positive, str) and sample[label_col].dtype == bool:
        # a boolean label column (Parquet, or CSV true/false: the engines' readers keep other words as text) takes
        # its positive class as in memory, "true" or "false" in any case ('yes' and '1' were taken for True, where
        # memory refuses them, a review)
        positive = {"true": True, "false": False}.get(positive.strip().lower(), positive)
    # a few stray labels beyond a 0/1 log's classes in the sample: the option that drops them (calibviz.io.cleaning)
    mapping = _detect(sample, drop_invalid, label=label, probs=probs, weight=weight, model=model, positive=positive,
                      features=features, sample=True)
    numbers = {c: "probability" for cols in mapping.probs.values() for c in cols}
    _check_numbers(frame, name, {**numbers, **({mapping.weight: "weight"} if mapping.weight else {})})
    multiclass = len(mapping.classes) > 2
    if multiclass and label_col is not None and sample[label_col].nunique() == 1:
        # the sample holds the source's distinct labels when it showed fewer than two (read above): one class
        raise InputError(f"{name}: only one class ({_python(sample[label_col].dropna().iloc[0])!r}) occurs in the "
                         f"labels; {MULTICLASS_NEEDS_TWO}")
    if multiclass and mapping.label_positions:
        raise InputError(f"{name}: integer labels that are positions of the probability columns are not supported "
                         "by scans; name the columns p_<class> after the labels.")
    classes = tuple(_python(c) for c in mapping.classes)
    if label_col is not None and pd.api.types.is_numeric_dtype(sample[label_col]) \
            and not pd.api.types.is_bool_dtype(sample[label_col]):
        # a class named only by its column (p_2, never among the labels) is text beside numeric labels: as the
        # label's type, or the engines mixed text and numbers in one expression (a review: an internal error)
        classes = tuple(_as_label_number(c, sample[label_col].dtype.kind == "f") for c in classes)
    negative, pos = (None, None) if multiclass else classes
    view = {"view": "confidence", "classes": classes} if multiclass else {}
    roles = {}
    if mapping.model is not None:
        cols = next(iter(mapping.probs.values()))
        names = collect(frame.select(nw.col(mapping.model)).unique().head(MAX_MODELS + 1))[mapping.model]
        if len(names) > MAX_MODELS:
            raise InputError(f"{name}: the model column {mapping.model!r} holds more than {MAX_MODELS:,} models; a "
                             "scan runs its passes per model. Select the models to compare (e.g. a SQL query with "
                             f"WHERE {mapping.model} IN (...)), or name another column as the model column.")
        if names.isna().any():  # as load_models: a row of no model would be silently left out of every model
            missing = is_missing(frame.collect_schema(), mapping.model)
            # the count as a sum of 0/1 (Spark sums no booleans)
            empty, total = (int(v) for v in collect(frame.select(nw.len().alias("n"),
                                                                 missing.cast(nw.Int64).sum().alias("e")))
                            [["e", "n"]].iloc[0])
            if not drop_invalid:
                files = several_files_note(name, [mapping.model])
                err = InputError(f"{name}: the model column {mapping.model!r} is empty in {empty:,} "
                                 f"row{'s' if empty != 1 else ''}; name the model of every row or drop those rows." + files)
                # files of another layout read together: dropping their rows is no fix, the note says what is
                raise (err if files else with_drop_advice(err, [("an empty model name", empty)]))
            mapping = replace(mapping, notes=tuple(mapping.notes) + (
                dropped_note([("an empty model name", empty, None)], total),))
            names = names.dropna()
        for m in sorted(names, key=_key):  # engines give no row order: models in sorted order
            roles[str(m)] = Roles(mapping.label, tuple(cols), negative, pos, mapping.weight,
                                  (mapping.model, _python(m)), **view)
    else:
        single = len(mapping.probs) == 1
        for m, cols in mapping.probs.items():
            key = _model_name_from_source(_fixed_part(name)) if single else m
            roles[key] = Roles(mapping.label, tuple(cols), negative, pos, mapping.weight, **view)
    return mapping, roles
