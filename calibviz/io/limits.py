"""How much a file may expand to before calibviz refuses to read it.

A few kilobytes can declare gigabytes: a zip (``.xlsx``) or gzip stream
decompresses a thousandfold, a Parquet file stores ``5 * 10**7`` equal values
in a few hundred kilobytes, and an Excel sheet can declare a used range of
``1048576 * 16384`` cells with a single stray cell. The readers check the
*declared* size first (Parquet metadata, the zip directory of an ``.xlsx``,
the sheet's cell count) and count while streaming (gzip bytes, CSV and Excel
rows), and refuse with a message that names the limit and how to raise it.

The defaults fit a server with a few GB of memory: a table at the limits
(``10**7`` rows, ``10**8`` cells) takes about 1 GB as float64, and its
analysis a few times that. Change them per process with environment
variables (read when a file is read, so they also apply to the dashboard and
the CLI) or per call with ``limits=`` of :func:`calibviz.io.read_table` and
:func:`calibviz.load_predictions`:

===========================  ==================================  ===============
limit                        environment variable                default
===========================  ==================================  ===============
``max_rows``                 ``CALIBVIZ_MAX_ROWS``               10,000,000
``max_cells``                ``CALIBVIZ_MAX_CELLS``              100,000,000
``max_columns``              ``CALIBVIZ_MAX_COLUMNS``            30,000
``max_decompressed_bytes``   ``CALIBVIZ_MAX_DECOMPRESSED_BYTES`` 512 MiB
``max_excel_cells``          ``CALIBVIZ_MAX_EXCEL_CELLS``        1,000,000
``max_xlsx_part_bytes``      ``CALIBVIZ_MAX_XLSX_PART_BYTES``    256 MiB
===========================  ==================================  ===============
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace

from ..errors import InputError

__all__ = ["ReadLimits", "resolve_limits", "ENV_PREFIX"]

ENV_PREFIX = "CALIBVIZ_"


@dataclass(frozen=True)
class ReadLimits:
    """Upper bounds on what reading one file may produce.

    Attributes
    ----------
    max_rows : int
        Data rows of the table (every format).
    max_cells : int
        Rows times columns of the table (every format).
    max_columns : int
        Columns of the table: each costs a Python object and a detection
        step, so 10^5 columns of a 5 MB CSV take about 20 s. The default
        leaves room for 21,843 classes (ImageNet-21k) plus the label.
    max_decompressed_bytes : int
        Bytes a gzip stream may decompress to; the decoded size of a Parquet
        file's columns (as declared in its metadata, then as read); the sum of
        the uncompressed parts of an ``.xlsx``.
    max_excel_cells : int
        Cells of an Excel sheet (non-empty rows times the widest row; also
        the stored cells when the declared range is larger) and strings of
        the workbook's shared-strings table. Excel is parsed cell by cell in
        Python, 10 to 25 µs a cell: the default keeps a sheet under about
        25 s. CSV and Parquet have no such limit beyond ``max_cells``.
    max_xlsx_part_bytes : int
        Largest uncompressed part of an ``.xlsx`` (a sheet's XML, the shared
        strings). A sheet of a million cells is about 50 MB of XML; a single
        cell holds at most 32,767 characters in Excel.

    Examples
    --------
    >>> ReadLimits().max_rows
    10000000
    >>> ReadLimits(max_rows=500).max_rows
    500
    >>> ReadLimits.env_name("max_rows")
    'CALIBVIZ_MAX_ROWS'
    """

    max_rows: int = 10_000_000
    max_cells: int = 100_000_000
    max_columns: int = 30_000
    max_decompressed_bytes: int = 512 * 1024**2
    max_excel_cells: int = 1_000_000
    max_xlsx_part_bytes: int = 256 * 1024**2

    def __post_init__(self):
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise InputError(f"read limit {f.name} must be a positive integer, got {value!r}.")

    @staticmethod
    def env_name(limit: str) -> str:
        """The environment variable that sets ``limit``."""
        return ENV_PREFIX + limit.upper()

    @classmethod
    def from_env(cls, environ: Mapping | None = None) -> "ReadLimits":
        """The defaults, overridden by ``CALIBVIZ_MAX_*`` environment variables.

        Values are integers; ``_`` separators and a scientific notation of an
        integer (``1e7``) are accepted.

        Examples
        --------
        >>> ReadLimits.from_env({"CALIBVIZ_MAX_ROWS": "2_000_000"}).max_rows
        2000000
        >>> ReadLimits.from_env({"CALIBVIZ_MAX_CELLS": "1e9"}).max_cells
        1000000000
        """
        environ = os.environ if environ is None else environ
        values = {}
        for f in fields(cls):
            raw = environ.get(cls.env_name(f.name))
            if raw is None or not str(raw).strip():
                continue
            values[f.name] = _parse_int(raw, cls.env_name(f.name))
        return cls(**values)

    def describe(self, limit: str) -> str:
        """``'the limit of 10,000,000 (CALIBVIZ_MAX_ROWS)'`` for messages.

        Examples
        --------
        >>> ReadLimits().describe("max_xlsx_part_bytes")
        'the limit of 256 MiB (CALIBVIZ_MAX_XLSX_PART_BYTES)'
        """
        value = getattr(self, limit)
        if not limit.endswith("_bytes"):
            shown = f"{value:,}"
        elif value % 1024**3 == 0:
            shown = f"{value // 1024**3} GiB"
        elif value % 1024**2 == 0:
            shown = f"{value // 1024**2} MiB"
        else:
            shown = _size(value)
        return f"the limit of {shown} ({self.env_name(limit)})"


def _parse_int(raw, where: str) -> int:
    text = str(raw).strip().replace("_", "").replace(",", "")
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if value == value and value.is_integer() and value > 0:
        return int(value)
    raise InputError(f"{where}={raw!r} is not a positive integer; write e.g. {where}=20000000.")


def _size(n: int) -> str:
    """Human-readable byte count: '512 B', '3.2 kB', '140 MB', '1.07 GB'."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} B"


def resolve_limits(limits=None) -> ReadLimits:
    """The limits of one read: ``None`` -> environment, a mapping -> environment overridden, or as given.

    Examples
    --------
    >>> resolve_limits({"max_rows": 1000}).max_rows
    1000
    >>> resolve_limits(ReadLimits(max_cells=10)).max_cells
    10
    """
    if limits is None:
        return ReadLimits.from_env()
    if isinstance(limits, ReadLimits):
        return limits
    if isinstance(limits, Mapping):
        known = {f.name for f in fields(ReadLimits)}
        unknown = sorted(set(map(str, limits)) - known)
        if unknown:
            raise InputError(f"unknown read limit(s) {', '.join(map(repr, unknown))}; "
                             f"known limits are {', '.join(sorted(known))}.")
        return replace(ReadLimits.from_env(), **dict(limits))
    raise InputError(f"limits must be a calibviz.io.ReadLimits or a dict, got {type(limits).__name__}.")


def refuse(limits: ReadLimits, limit: str, what: str, how: str | None = None) -> InputError:
    """The error for a file beyond ``limit``: what it holds, which limit, and how to proceed.

    ``what`` reads like "big.csv has 50,000,000 rows"; the message adds the
    limit, how to raise it, and ``how`` (default: sample the file).
    """
    how = how or "or sample the rows into a smaller file"
    return InputError(
        f"{what}, above {limits.describe(limit)}; raise the limit if the machine has the memory (set the "
        f"environment variable {limits.env_name(limit)}, or pass limits={{'{limit}': ...}} in Python), {how}.",
        ui_message=(f"{what}, above {limits.describe(limit)}. Whoever runs this dashboard can raise the limit if the "
                    f"server has the memory (environment variable {limits.env_name(limit)}); or sample the rows "
                    "into a smaller file."),
    )
