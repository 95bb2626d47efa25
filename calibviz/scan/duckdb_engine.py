"""DuckDB engine (the default): embedded, no server; streams Parquet and CSV files.

Opens sources as DuckDB relations; the aggregation itself is the Narwhals
code of :mod:`calibviz.scan.aggregate`, which DuckDB runs in parallel over
row groups without materialising the rows.
"""
from __future__ import annotations

from ..errors import InputError

__all__ = ["connection", "read_files", "query", "from_object"]

_CON = None


def connection(database=None):
    """The process-wide in-memory connection, or a read-only connection to a database file."""
    import duckdb

    global _CON
    if database is not None:
        try:
            con = duckdb.connect(str(database), read_only=True)
            con.execute("SET enable_progress_bar = false")
            return con
        except duckdb.Error as exc:
            raise InputError(f"cannot open the DuckDB database {str(database)!r}: {exc}") from None
    if _CON is None:
        _CON = duckdb.connect()
        _CON.execute("SET enable_progress_bar = false")
    return _CON


def read_files(files, fmt: str, display: str):
    """A relation over Parquet or CSV files (hive partitions become columns)."""
    import duckdb

    con = connection()
    try:
        if fmt == "parquet":
            return con.read_parquet(files, hive_partitioning=True, union_by_name=True)
        return con.read_csv(files, header=True, union_by_name=True)
    except duckdb.Error as exc:
        raise InputError(f"DuckDB cannot read {display!r}: {str(exc).splitlines()[0]}") from None


def query(sql: str, *, database=None):
    """A relation of a SQL query (against ``database``, a DuckDB file, when given)."""
    import duckdb

    try:
        return connection(database).sql(sql)
    except duckdb.Error as exc:
        raise InputError(f"the SQL query failed: {str(exc).splitlines()[0]}") from None


def from_object(obj):
    """A DuckDB relation passed from Python, or a pandas / pyarrow table; None for anything else."""
    import duckdb

    if isinstance(obj, duckdb.DuckDBPyRelation):
        return obj
    mod = type(obj).__module__.split(".")[0]
    if mod in ("pandas", "pyarrow"):
        return connection().from_df(obj) if mod == "pandas" else connection().from_arrow(obj)
    return None
