"""Read a table of predictions from a path, bytes or an uploaded file object.

Formats: CSV / TSV / other delimited text (read with pyarrow's multithreaded
CSV reader, which is several times faster than pandas' on 10^6+ rows),
Parquet (pyarrow) and Excel (openpyxl). Nothing is executed or unpickled:
pickle/feather-with-pickle and similar formats are deliberately unsupported.
"""
from __future__ import annotations

import io
import os
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..errors import InputError

__all__ = ["read_table", "RawTable", "DEFAULT_MAX_BYTES", "SUPPORTED_SUFFIXES"]

#: Largest file accepted by default (2 GiB); the dashboard's upload limit is
#: set in .streamlit/config.toml and re-checked here because AppTest and the
#: library bypass the browser's check.
DEFAULT_MAX_BYTES = 2 * 1024**3

SUPPORTED_SUFFIXES = {
    ".csv": "csv", ".txt": "csv", ".tsv": "tsv", ".tab": "tsv",
    ".parquet": "parquet", ".pq": "parquet",
    ".xlsx": "excel", ".xlsm": "excel", ".xls": "excel",
    ".gz": "csv",
}
_DELIMITERS = [",", "\t", ";", "|"]


@dataclass(frozen=True)
class RawTable:
    """A parsed table plus where it came from."""

    frame: pd.DataFrame
    name: str
    format: str
    n_bytes: int


def _size(n: int) -> str:
    """Human-readable byte count: '512 B', '3.2 kB', '140 MB'."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} B"


def _source_bytes(source, max_bytes: int) -> tuple[bytes, str]:
    """Return the raw bytes and a display name of ``source``."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.exists():
            raise InputError(f"file not found: {path}. Check the path (relative paths start at {Path.cwd()}).")
        if path.is_dir():
            raise InputError(f"{path} is a folder; pass the path of a CSV, TSV, Parquet or Excel file.")
        size = path.stat().st_size
        if size > max_bytes:
            raise InputError(
                f"{path.name} is {_size(size)}, over the {_size(max_bytes)} limit; "
                "sample the rows or raise the limit (max_bytes=...)."
            )
        return path.read_bytes(), path.name
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        name = "uploaded data"
    elif hasattr(source, "read"):
        name = Path(str(getattr(source, "name", "uploaded file"))).name
        if hasattr(source, "seek"):
            source.seek(0)
        data = source.read(max_bytes + 1)
        if isinstance(data, str):
            data = data.encode("utf-8")
    else:
        raise InputError(
            f"cannot read predictions from a {type(source).__name__}; pass a file path, bytes, or an open binary file."
        )
    if len(data) > max_bytes:
        raise InputError(
            f"{name} is over the {_size(max_bytes)} limit; sample the rows or raise the limit (max_bytes=...)."
        )
    return data, name


def _detect_format(data: bytes, name: str) -> str:
    if data[:4] == b"PAR1":
        return "parquet"
    if data[:2] == b"PK" or data[:8] == b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1":
        return "excel"
    if data[:2] == b"\x1f\x8b":
        return "gzip"
    if data[:2] in (b"\x80\x03", b"\x80\x04", b"\x80\x05"):
        raise InputError(f"{name} looks like a Python pickle; pickles are never loaded (they can run code). Export CSV or Parquet.")
    suffix = Path(name).suffix.lower()
    fmt = SUPPORTED_SUFFIXES.get(suffix)
    if fmt is None and suffix and suffix not in ("",):
        if b"\x00" in data[:4096]:
            raise InputError(
                f"{name} is a binary file of an unsupported type ({suffix}); use CSV, TSV, Parquet or Excel."
            )
    return fmt if fmt in ("csv", "tsv") else "csv"


def _sniff_delimiter(head: str) -> str:
    """Pick the delimiter that splits the first lines into the most, consistent columns."""
    lines = [ln for ln in head.splitlines()[:20] if ln.strip()]
    if not lines:
        return ","
    best, best_score = ",", 0
    for d in _DELIMITERS:
        counts = [ln.count(d) for ln in lines[: len(lines) - 1 or 1]]
        if counts[0] == 0:
            continue
        consistent = sum(c == counts[0] for c in counts) / len(counts)
        score = counts[0] * consistent
        if score > best_score:
            best, best_score = d, score
    return best


def _read_csv(data: bytes, name: str, delimiter: str | None, encoding: str | None) -> pd.DataFrame:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    if not data.strip():
        raise InputError(f"{name} is empty; it needs a header row and at least one data row.")
    if encoding is None:
        if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
            encoding = "utf-16"
        elif data[:3] == b"\xef\xbb\xbf":
            data = data[3:]
    head_bytes = data[:65536]
    try:
        head = head_bytes.decode(encoding or "utf-8", errors="strict")
    except UnicodeDecodeError as exc:
        # A multibyte character cut at the 64 KiB boundary is not an encoding error.
        if len(data) <= len(head_bytes) or exc.start < len(head_bytes) - 4:
            raise InputError(
                f"{name} is not UTF-8 text (byte 0x{head_bytes[exc.start]:02x} at position {exc.start}); "
                "re-save it as UTF-8 or pass encoding='latin-1' (or the file's encoding)."
            ) from None
        head = head_bytes[: exc.start].decode(encoding or "utf-8")
    except LookupError:
        raise InputError(f"unknown encoding {encoding!r}; use a Python codec name such as 'utf-8' or 'latin-1'.") from None
    sep = delimiter or _sniff_delimiter(head)
    header = head.splitlines()[0] if head.splitlines() else ""
    read_opts = pacsv.ReadOptions(encoding=encoding or "utf8", block_size=1 << 24)
    parse_opts = pacsv.ParseOptions(delimiter=sep)
    convert_opts = pacsv.ConvertOptions(strings_can_be_null=True)
    try:
        table = pacsv.read_csv(io.BytesIO(data), read_options=read_opts, parse_options=parse_opts,
                               convert_options=convert_opts)
    except pa.ArrowException as exc:
        msg = str(exc)
        if "Empty CSV" in msg:
            raise InputError(f"{name} is empty; it needs a header row and at least one data row.") from None
        raise InputError(
            f"{name} could not be parsed as delimited text with delimiter {sep!r} ({msg.splitlines()[0]}); "
            "check that every row has the same number of fields, or pass delimiter=..."
        ) from None
    binary_cols = [f.name for f in table.schema if pa.types.is_binary(f.type)]
    if binary_cols:
        raise InputError(
            f"{name} is not valid {encoding or 'UTF-8'} text (column {binary_cols[0]!r} holds undecodable bytes); "
            "re-save it as UTF-8 or pass encoding='latin-1' (or the file's encoding)."
        )
    names = table.column_names
    _check_duplicate_names(names, name)
    if len(names) == 1:
        # A predictions table has at least a label and a probability column.
        hint = next((d for d in [*_DELIMITERS, ":", " "] if d != sep and d in header.strip()), None)
        how = f"it looks delimited by {hint!r}: pass delimiter={hint!r}" if hint else \
            "separate the label and probability columns with commas, or pass delimiter=..."
        raise InputError(f"{name} parsed into a single column {names[0]!r} with delimiter {sep!r}; {how}.")
    return table.to_pandas()


def _check_duplicate_names(names, name: str) -> None:
    seen, dups = set(), []
    for col in names:
        if col in seen and col not in dups:
            dups.append(col)
        seen.add(col)
    if dups:
        raise InputError(
            f"{name} has duplicated column names: {', '.join(map(repr, dups))}; rename them so each column is unique."
        )


def _read_parquet(data: bytes, name: str) -> pd.DataFrame:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(io.BytesIO(data))
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"{name} is not a readable Parquet file ({exc}); re-export it or use CSV.") from None
    _check_duplicate_names(table.column_names, name)
    return table.to_pandas()


def _read_excel(data: bytes, name: str, sheet) -> pd.DataFrame:
    try:
        raw = pd.read_excel(io.BytesIO(data), sheet_name=0 if sheet is None else sheet, header=None)
    except ImportError as exc:  # pragma: no cover - openpyxl is a dependency
        raise InputError(f"reading Excel needs openpyxl ({exc}); pip install openpyxl or export CSV.") from None
    except ValueError as exc:
        raise InputError(f"{name}: {exc}. Pass sheet=<name or index> for the sheet with the predictions.") from None
    except Exception as exc:  # openpyxl/zipfile raise many types on corrupt files
        raise InputError(f"{name} is not a readable Excel workbook ({type(exc).__name__}: {exc}); re-save it as .xlsx or CSV.") from None
    if raw.empty:
        raise InputError(f"{name} has an empty first sheet; put the predictions table on the first sheet or pass sheet=...")
    # A header cell typed as a number comes back as 0.0: show it as the user typed it ("0").
    header = ["" if pd.isna(v) else str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)
              for v in raw.iloc[0].tolist()]
    _check_duplicate_names(header, name)
    frame = raw.iloc[1:].reset_index(drop=True)
    frame.columns = header
    # Excel cells come back as object; recover numeric columns.
    for col in frame.columns:
        converted = pd.to_numeric(frame[col], errors="coerce")
        if converted.notna().sum() == frame[col].notna().sum():
            frame[col] = converted
    return frame


def read_table(source, *, delimiter: str | None = None, encoding: str | None = None, sheet=None,
               max_bytes: int = DEFAULT_MAX_BYTES, name: str | None = None) -> RawTable:
    """Read a predictions table from a path, bytes or a binary file-like object.

    Parameters
    ----------
    source : str, os.PathLike, bytes or binary file-like
        The file. Uploaded Streamlit files (``UploadedFile``) work as is.
    delimiter : str, optional
        Field separator for delimited text; sniffed from the first lines
        (``,``, tab, ``;``, ``|``) when omitted.
    encoding : str, optional
        Text encoding; UTF-8 (with or without BOM) and UTF-16 with BOM are
        recognised, anything else must be named (no silent guessing).
    sheet : str or int, optional
        Excel sheet; the first one by default.
    max_bytes : int
        Refuse files larger than this.
    name : str, optional
        Display name used in messages; defaults to the file name.

    Returns
    -------
    RawTable

    Raises
    ------
    calibviz.InputError
        Unreadable, empty, too large, wrongly delimited or wrongly encoded
        files, and duplicated column names.

    Examples
    --------
    >>> t = read_table(b"label,p\\n0,0.2\\n1,0.9\\n")
    >>> t.frame.shape, t.format
    ((2, 2), 'csv')
    """
    data, display = _source_bytes(source, max_bytes)
    display = name or display
    fmt = _detect_format(data, display)
    if fmt == "gzip":
        import gzip
        import zlib

        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(f"{display} is a corrupt gzip file ({exc}).") from None
        if len(data) > max_bytes:
            raise InputError(f"{display} decompresses to over the {_size(max_bytes)} limit; sample the rows.")
        fmt = _detect_format(data, display.removesuffix(".gz"))
    if fmt == "parquet":
        frame = _read_parquet(data, display)
    elif fmt == "excel":
        frame = _read_excel(data, display, sheet)
    else:
        frame = _read_csv(data, display, "\t" if fmt == "tsv" and delimiter is None else delimiter, encoding)
    if frame.shape[1] == 0 or frame.shape[0] == 0:
        raise InputError(f"{display} has no data rows; it needs a header row and at least one data row.")
    frame.columns = [str(c).strip() for c in frame.columns]
    _check_duplicate_names(list(frame.columns), display)
    return RawTable(frame=frame, name=display, format=fmt, n_bytes=len(data))
