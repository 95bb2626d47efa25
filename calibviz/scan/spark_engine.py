"""Spark engine: PySpark for clusters (``pip install 'calibviz[spark]'``; Java 17+).

The aggregation of :mod:`calibviz.scan.aggregate` (Narwhals) runs as one Spark
job; only the bucket table (about 2^17 rows) comes back to the driver.

Session: an active SparkSession is used as it is (configure it for your
cluster before calling ``cv.scan``). Otherwise one is created once per
process from ``CALIBVIZ_SPARK_MASTER`` (default ``local[2]``), bound to
127.0.0.1 with the UI off when the master is local.
"""
from __future__ import annotations

import os
import re
import warnings
from contextlib import contextmanager
from pathlib import Path

from ..errors import InputError
from .source import hive_types, parquet_columns

__all__ = ["session", "read_files", "query", "from_object"]

_LOG_CONFIG = Path(__file__).with_name("spark_log4j2.properties")


@contextmanager
def _no_pandas_version_warning():
    """PySpark 4 warns, when its session starts, that it does not "fully support pandas >= 3": calibviz moves only
    the bucket table through pandas, and tests/test_scan_spark.py checks Spark's values against DuckDB's on the
    pandas installed; a warning the user cannot act on would open every Spark run."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)
        yield


def _pyspark():
    try:
        with _no_pandas_version_warning():
            import pyspark.sql  # noqa: F401
    except ImportError:
        raise InputError("engine='spark' needs PySpark and Java 17+: pip install 'calibviz[spark]' (and, on Debian, "
                         "apt-get install openjdk-17-jre-headless).") from None


def session():
    """The active SparkSession, or a new one for ``CALIBVIZ_SPARK_MASTER`` (default local[2])."""
    _pyspark()
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    from pyspark import SparkContext

    # a running SparkContext (a session the user built, not active in this thread) is the user's, logging and all:
    # getOrCreate returns it, and calibviz's log settings are for the JVM it starts itself
    own = SparkContext._active_spark_context is None
    master = os.environ.get("CALIBVIZ_SPARK_MASTER", "local[2]")
    builder = SparkSession.builder.master(master).appName("calibviz")
    if master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        builder = (builder.config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
                   .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
                   .config("spark.sql.shuffle.partitions", "4")
                   .config("spark.sql.session.timeZone", "UTC")
                   # errors only: Spark's default log profile prints a banner and WARN lines into every command
                   .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={_LOG_CONFIG.as_uri()}"))
    with _no_pandas_version_warning():
        spark = builder.getOrCreate()
    if own:
        spark.sparkContext.setLogLevel("ERROR")
        _quiet_query_context_loggers()
    return spark


#: PySpark 4's Python-side loggers (pyspark.logger.PySparkLogger, a JSON handler on stderr of their own, not
#: propagated): every AnalysisException or ParseException logs itself to one of them at ERROR when it is raised, with
#: the whole Java stack trace, before calibviz can turn it into its one line
_QUERY_CONTEXT_LOGGERS = ("SQLQueryContextLogger", "DataFrameQueryContextLogger")


def _quiet_query_context_loggers():
    """Fatal only, as the JVM's log4j loggers of the session calibviz starts (spark_log4j2.properties): the error
    reaches the user as calibviz's one-line InputError, in Spark's words (:func:`spark_message`)."""
    try:
        from pyspark.logger import PySparkLogger
    except ImportError:  # PySpark 3.5 has no such loggers
        return
    import logging

    for name in _QUERY_CONTEXT_LOGGERS:
        # PySparkLogger.getLogger, not logging.getLogger: a plain logger created first would be the one PySpark then
        # finds, without a handler, and Python's last-resort handler would print the message
        PySparkLogger.getLogger(name).setLevel(logging.CRITICAL)


def read_files(files, fmt: str, display: str, *, literal: bool = False):
    """A DataFrame over Parquet or CSV files; a directory's hive partitions become columns. ``literal``: the names
    are files, not globs (Hadoop's wildcard characters escaped, :func:`literal_name`)."""
    spark = session()
    names = files
    if literal:
        files = [literal_name(f) for f in files]
    # hive partitions typed as DuckDB types them (:func:`calibviz.scan.source.hive_types`): Spark's own inference
    # read models '001', '1' and '1.0' as one 1.0 and pooled them (a review), so it is off while the files are
    # listed and the columns are cast here
    partitions = hive_types(names) if literal else {}
    previous = spark.conf.get(_PARTITION_INFERENCE, "true") if partitions else None
    try:
        if partitions:
            spark.conf.set(_PARTITION_INFERENCE, "false")
        base = display if Path(display).is_dir() else None
        reader = spark.read.option("basePath", base) if base else spark.read
        if fmt == "parquet":
            # the union of the files' columns, as DuckDB reads them, where the files' columns differ: Spark takes
            # one file's schema, and a model column only in later files was dropped and two models pooled (a
            # review). Only then: merging refuses a column stored narrower in some files, which Spark widens
            # otherwise (int8 and int64 labels).
            if literal and len({frozenset(c) for c in parquet_columns(names)}) > 1:
                reader = reader.option("mergeSchema", "true")
            frame = reader.parquet(*files)
        else:
            # fields padded with spaces (``y, p``) are read as pandas and DuckDB read them, not as text named ' p'
            raw = (reader.option("header", True).option("inferSchema", False).option("ignoreLeadingWhiteSpace", True)
                   .option("ignoreTrailingWhiteSpace", True).csv(list(files)))
            frame = _typed(raw, partitions=set(partitions))
    except Exception as exc:  # Spark raises AnalysisException and Py4J errors
        raise InputError(f"Spark cannot read {display!r}: {spark_message(exc)}") from None
    finally:
        if partitions:
            spark.conf.set(_PARTITION_INFERENCE, previous)
    from pyspark.sql import functions as F

    ints = [k for k, t in partitions.items() if t == "int" and k in frame.columns]
    return frame.withColumns({k: F.col(f"`{k}`").cast("long") for k in ints}) if ints else frame


_PARTITION_INFERENCE = "spark.sql.sources.partitionColumnTypeInference.enabled"

#: Spark's error class where a line of its message names it: "[PARSE_SYNTAX_ERROR] Syntax error at or near ..."
_ERROR_CLASS = re.compile(r"\[[A-Z][A-Z0-9_]*(\.[A-Z0-9_]+)*\] ")
#: the Java class before a message in a Py4J error's text: ": org.apache.spark.SparkException: ", "Caused by: ..."
_JAVA_CLASS = re.compile(r"^(: )?(Caused by: )?([\w$]+\.)+[\w$]+: ")
#: where in the query Spark stopped: "(line 1, pos 14)" (a parse error), "; line 1 pos 14;" (an analysis error)
_POSITION = re.compile(r"\bline (\d+),? pos (\d+)")


def spark_message(exc: BaseException) -> str:
    """Spark's reason for a failure, in one line: the line that names Spark's error class with the position in the
    query, and for a Py4J error the root cause's own message.

    Why not the first line: a parse error's text opens with an empty line, a Py4J error's with "An error occurred
    while calling o40.parquet" (the wrapper), and the lines after the reason are the query's plan or Java's stack.

    >>> class ParseException(Exception): pass
    >>> spark_message(ParseException("\\n[PARSE_SYNTAX_ERROR] Syntax error at or near 'DROP'. SQLSTATE: 42601 "
    ...                              "(line 1, pos 25)\\n\\n== SQL ==\\nSELECT 1; DROP x\\n---^^^"))
    "[PARSE_SYNTAX_ERROR] Syntax error at or near 'DROP'. (line 1, pos 25)"
    """
    text = str(exc)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    # neither Java's stack ("at org.apache...", "... 12 more") nor Py4J's "An error occurred while calling o40.sql"
    lines = [line for line in lines if not re.match(r"(at |\.\.\. \d+ more|Suppressed: |An error occurred while "
                                                    r"calling )", line)]
    if not lines:
        return type(exc).__name__
    named = [line for line in lines if _ERROR_CLASS.search(line)]
    said = named[0][_ERROR_CLASS.search(named[0]).start():] if named else _JAVA_CLASS.sub("", lines[0])
    # SQLSTATE is for programs; the position is for the user, in the form a parse error gives it (an analysis
    # error's "SQLSTATE: 42P01; line 1 pos 14;" may follow the reason some lines later)
    said = re.sub(r"\s*SQLSTATE: \w+", "", said)
    said = re.sub(r"[;\s]*\(?\bline \d+,? pos \d+\)?;?", "", said).strip()
    position = _POSITION.search(text)
    if position:
        said += f" (line {position.group(1)}, pos {position.group(2)})"
    # a Py4J error (a file Spark cannot read) says what failed; its last "Caused by:" says why (the reason DuckDB
    # gives: "footer is too large", "is not a Parquet file")
    causes = [_JAVA_CLASS.sub("", line) for line in lines if line.startswith("Caused by: ")]
    cause = getattr(exc, "_cause", None)  # PySpark's converted exception keeps the JVM's cause there, not in its text
    while getattr(cause, "_cause", None) is not None:
        cause = cause._cause
    if not causes and isinstance(cause, BaseException):
        causes = [spark_message(cause)]
    if causes and causes[-1] and causes[-1] not in said:
        said += f" (caused by: {causes[-1]})"
    return said


def literal_name(path: str) -> str:
    r"""A file name as a Hadoop glob that matches only it: its wildcard characters escaped.

    >>> literal_name("logs/run[1]{a}*.parquet")
    'logs/run\\[1\\]\\{a\\}\\*.parquet'
    """
    return "".join("\\" + c if c in "\\*?[]{}" else c for c in str(path))


#: A text Spark casts to a 64-bit integer without overflow (longer digit strings are read as floats)
_INTEGER = r"^[-+]?\d{1,18}$"


def _typed(raw, partitions=frozenset()):
    """A CSV read as text, typed as the in-memory reader (pyarrow) types it: the null texts of
    :func:`calibviz.scan.source.csv_null_values` ('NA', 'N/A', 'NULL', 'nan', blank) are missing in every column,
    and a column whose other cells are all integers, all numbers or all true/false becomes one of those types;
    any other column stays text.

    Why not Spark's ``inferSchema``: its reader takes a single null text, so 'NA' made a score column text ("a
    non-numeric value") where memory, DuckDB and Polars read a missing value. The types come from one pass over
    every row, as ``inferSchema``'s own pass did, so a late 0.5 makes an integer column a float column.
    """
    from pyspark.sql import functions as F

    from .source import _NUMBER, csv_null_values

    nulls = sorted({t.strip() for t in csv_null_values()} - {""})
    text = [c for c, t in raw.dtypes if t == "string" and c not in partitions]
    if not text:
        return raw
    quoted = {c: F.col("`" + c.replace("`", "``") + "`") for c in raw.columns}
    cleaned = {c: F.when(quoted[c].isin(nulls), F.lit(None)).otherwise(quoted[c]) for c in text}
    counts = []
    for i, c in enumerate(text):
        v = cleaned[c]
        counts += [F.count(v).alias(f"n{i}"),
                   F.count(F.when(v.rlike(_INTEGER), 1)).alias(f"i{i}"),
                   F.count(F.when(v.rlike(_NUMBER), 1)).alias(f"f{i}"),
                   F.count(F.when(v.isin("true", "True", "TRUE", "false", "False", "FALSE"), 1)).alias(f"b{i}")]
    row = raw.agg(*counts).first()
    columns = []
    for c in raw.columns:
        if c not in cleaned:  # a hive partition column, typed by :func:`read_files`
            columns.append(quoted[c])
            continue
        i = text.index(c)
        n = row[f"n{i}"]
        v = cleaned[c]
        if n and row[f"i{i}"] == n:
            v = v.cast("long")
        elif n and row[f"f{i}"] == n:
            v = F.trim(v).cast("double")
        elif n and row[f"b{i}"] == n:
            v = F.lower(v) == F.lit("true")
        columns.append(v.alias(c))
    return raw.select(*columns)


def query(sql: str, *, database=None):
    if database is not None:
        raise InputError("--database is a DuckDB option; with engine='spark' the query runs on the session's tables.")
    # spark.sql runs commands (DROP, INSERT, CREATE ... AS) at once: only a query is a source
    first = re.sub(r"^(\s|--[^\n]*\n|/\*.*?\*/|\()*", "", sql, flags=re.S).split(None, 1)
    if not first or first[0].upper() not in ("SELECT", "WITH", "FROM", "TABLE", "VALUES"):
        raise InputError("a SQL source is one query (SELECT ..., WITH ... SELECT, FROM ...); write the query that "
                         "reads the predictions, without other statements.")
    try:
        return session().sql(sql)
    except Exception as exc:
        raise InputError(f"the Spark SQL query failed: {spark_message(exc)}") from None


def from_object(obj):
    _pyspark()
    from pyspark.sql import DataFrame

    return obj if isinstance(obj, DataFrame) else None
