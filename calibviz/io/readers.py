"""Read a table of predictions from a path, bytes or an uploaded file object.

Formats: CSV / TSV / other delimited text (read with pyarrow's multithreaded
CSV reader, which is several times faster than pandas' on 10^6+ rows),
gzip-compressed text, Parquet (pyarrow) and Excel ``.xlsx`` (openpyxl).
Nothing is executed or unpickled: pickle/feather-with-pickle and similar
formats are deliberately unsupported.

Every reader checks what the file *declares* before it reads (the Parquet
metadata, the zip directory and sheet size of an ``.xlsx``) and counts while
it reads (gzip bytes, text lines, Excel rows and cells), against the
:class:`~calibviz.io.limits.ReadLimits` of the call: a small file that would
expand to gigabytes is refused in milliseconds with a message naming the
limit, instead of exhausting the machine's memory.
"""
from __future__ import annotations

import glob
import io
import os
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..errors import InputError
from .limits import ReadLimits, _size, refuse, resolve_limits

__all__ = ["read_table", "RawTable", "is_sql", "DEFAULT_MAX_BYTES", "SUPPORTED_SUFFIXES", "UNSUPPORTED_ATTR", "ENCODINGS",
           "DELIMITERS", "DECIMALS", "SHEETS_ATTR", "excel_sheet_names"]

#: ``DataFrame.attrs`` key of a workbook read without a sheet named: (the sheet read, every sheet's title), for
#: messages that point to the other sheets (:func:`calibviz.io.mapping.detect_mapping`).
SHEETS_ATTR = "calibviz_sheets"

#: Largest file accepted by default (2 GiB); the dashboard's upload limit is
#: set in .streamlit/config.toml and re-checked here because AppTest and the
#: library bypass the browser's check.
DEFAULT_MAX_BYTES = 2 * 1024**3

#: ``DataFrame.attrs`` key of the columns a reader left out because their type
#: cannot be analysed ({column: type}); the mapping names them.
UNSUPPORTED_ATTR = "calibviz_unsupported_columns"

SUPPORTED_SUFFIXES = {
    ".csv": "csv", ".txt": "csv", ".tsv": "tsv", ".tab": "tsv",
    ".parquet": "parquet", ".pq": "parquet",
    ".xlsx": "excel", ".xlsm": "excel", ".xls": "excel",
    ".gz": "csv",
}
_DELIMITERS = [",", "\t", ";", "|"]
#: Reading options the dashboard offers (any Python codec name works in the library).
ENCODINGS = ("utf-8", "utf-8-sig", "latin-1", "cp1252", "utf-16", "utf-16-le", "utf-16-be", "cp1250", "iso-8859-15",
             "mac-roman", "shift_jis", "gb18030")
DELIMITERS = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}
DECIMALS = {".": "point", ",": "comma"}
_DECIMAL_COMMA = re.compile(r"^\s*\"?[-+]?\d+,\d+\"?\s*$")
_DECIMAL_POINT = re.compile(r"^\s*\"?[-+]?(\d+\.\d*|\.\d+)([eE][-+]?\d+)?\"?\s*$")
_OLE2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_HEAD = 65536
#: For a large honest CSV or Parquet file: the out-of-core path (calibviz.scan, DuckDB by default).
_SCAN = ("or sample the rows, or analyse the file where it lies without loading it: calibviz.scan(path) in "
         "Python, `calibviz metrics FILE --engine duckdb` on the command line, or the dashboard's Large data page")
_CHUNK = 1 << 20


@dataclass(frozen=True)
class RawTable:
    """A parsed table plus where it came from."""

    frame: pd.DataFrame
    name: str
    format: str
    n_bytes: int


#: Leading white space and SQL comments ('-- ...' lines, '/* ... */' blocks followed by white space), which a saved
#: query often starts with; then a keyword as a whole word. '/*/2024/*/with_labels.parquet' is a glob: its '/*/2024/*/'
#: is followed by no space and 'with_labels' is no keyword (both were taken for a query, a review).
_LEADING_COMMENTS = re.compile(r"^(\s|--[^\n]*(\n|$)|/\*.*?\*/(?=\s|$))*", re.S)
_SQL_KEYWORD = re.compile(r"(select|with|from|table|values)(\s|\(|\*|$)|\(", re.I)  # not values.csv, table_1.pq


def is_sql(text: str) -> bool:
    """Whether ``text`` reads as a SQL query rather than a path (comments before the query allowed).

    Examples
    --------
    >>> is_sql("  SELECT * FROM preds"), is_sql("-- last week\\nSELECT * FROM preds"), is_sql("logs/preds.parquet")
    (True, True, False)
    """
    return _SQL_KEYWORD.match(_LEADING_COMMENTS.sub("", text, count=1)) is not None


def _source_bytes(source, max_bytes: int) -> tuple[bytes, str]:
    """Return the raw bytes and a display name of ``source``."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        text = os.fspath(source)
        # a query, a glob or a folder is a source of cv.scan, which reads it where it lies
        scan = (" To analyse a {} without loading it, use cv.scan({!r}) or `calibviz metrics ... --engine duckdb`.")
        if not path.exists():
            what = "SQL query" if is_sql(text) else "glob" if glob.has_magic(text) else None
            raise InputError(f"file not found: {path}. Check the path (relative paths start at {Path.cwd()})."
                             + (scan.format(what, text) if what else ""))
        if path.is_dir():
            raise InputError(f"{path} is a folder; pass the path of a CSV, TSV, Parquet or Excel file."
                             + scan.format("folder of Parquet or CSV files", text))
        if not path.is_file():  # a device or pipe (/dev/zero) has no size to check and may never end
            raise InputError(f"{path} is not a regular file; save the data to a CSV, TSV, Parquet or Excel file.")
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


def check_parquet_marks(name: str, head: bytes, tail: bytes) -> None:
    """Refuse a file read as Parquet that does not start and end with Parquet's marker 'PAR1' (its first and last
    4 bytes): cut short, still being written or of another format. Without this, a damaged ``.parquet`` file was
    read as CSV and called "not UTF-8 text", and scans gave the engines' words ("No magic bytes found", "must end
    with PAR1"), with no fix.

    Examples
    --------
    >>> check_parquet_marks("a.parquet", b"PAR1", b"PAR1")
    >>> check_parquet_marks("a.parquet", b"PAR1", b"PAR0")
    Traceback (most recent call last):
    ...
    calibviz.errors.InputError: a.parquet is no complete Parquet file (a Parquet file starts and ends with 'PAR1'; this one does not end so): it was cut short, is still being written or is of another format. Write it again, or leave it out.
    """
    marks = (b"PAR1", b"PARE")  # PARE: a file with an encrypted footer starts and ends so
    if head[:4] in marks and tail[-4:] in marks:
        return
    where = "end" if head[:4] in marks else "start"
    text = where == "start" and head[:4].isascii() and bytes(head[:4]).decode("ascii").isprintable()
    raise InputError(f"{name} is no complete Parquet file (a Parquet file starts and ends with 'PAR1'; this one does "
                     f"not {where} so): it was cut short, is still being written or is of another format. Write it "
                     "again, or leave it out" + (" (it starts as text: if it is a CSV file, name it .csv)." if text
                                                 else "."))


def _detect_format(data, name: str) -> str:
    head = bytes(data[:8])
    if head[:4] == b"PAR1" or SUPPORTED_SUFFIXES.get(Path(name).suffix.lower()) == "parquet":
        check_parquet_marks(name, head, bytes(data[-4:]))
        return "parquet"
    if head[:2] == b"PK":
        return "excel"
    if head == _OLE2:
        return "ole2"
    if head[:2] == b"\x1f\x8b":
        return "gzip"
    if head[:2] in (b"\x80\x03", b"\x80\x04", b"\x80\x05"):
        raise InputError(f"{name} looks like a Python pickle; pickles are never loaded (they can run code). Export CSV or Parquet.")
    suffix = Path(name).suffix.lower()
    fmt = SUPPORTED_SUFFIXES.get(suffix)
    if fmt is None and suffix and suffix not in ("",):
        if b"\x00" in data[:4096] and _utf16_without_bom(bytes(data[:4096])) is None:
            raise InputError(
                f"{name} is a binary file of an unsupported type ({suffix}); use CSV, TSV, Parquet or Excel."
            )
    return fmt if fmt in ("csv", "tsv") else "csv"


def _utf16_without_bom(head: bytes) -> str | None:
    """'utf-16-le' / 'utf-16-be' when ``head`` looks like UTF-16 text without a byte-order mark, else None.

    Text in a Latin script stored as UTF-16 has a NUL byte in every other position (the high byte of
    each character); no UTF-8 or single-byte text does.

    Examples
    --------
    >>> _utf16_without_bom("label,p\\n1,0.5\\n".encode("utf-16-le"))
    'utf-16-le'
    >>> _utf16_without_bom(b"label,p\\n1,0.5\\n") is None
    True
    """
    n = len(head) - len(head) % 2
    if n < 8:
        return None
    even, odd = head[0:n:2], head[1:n:2]
    half = n // 2
    if odd.count(0) >= 0.6 * half and even.count(0) <= 0.05 * half:
        return "utf-16-le"
    if even.count(0) >= 0.6 * half and odd.count(0) <= 0.05 * half:
        return "utf-16-be"
    return None


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


def _sniff_decimal(head: str, sep: str) -> str:
    """',' when the first lines write numbers with a decimal comma (``0,25`` in a ``;``-separated file), else '.'.

    A comma can be the decimal mark only when it is not the separator; the fields are split by ``sep`` and
    the comma is chosen when some fields look like ``0,25`` and none like ``0.25``.

    Examples
    --------
    >>> _sniff_decimal("label;p\\n0;0,25\\n1;0,75\\n", ";"), _sniff_decimal("label;p\\n0;0.25\\n", ";")
    (',', '.')
    """
    if sep == ",":
        return "."
    fields = [f for ln in head.splitlines()[1:50] for f in ln.split(sep)]
    comma = sum(bool(_DECIMAL_COMMA.match(f)) for f in fields)
    point = sum(bool(_DECIMAL_POINT.match(f)) for f in fields)
    return "," if comma and not point else "."


def _check_reading_options(delimiter, encoding, decimal) -> None:
    """Refuse reading options that cannot work, before reading."""
    if delimiter is not None and (not isinstance(delimiter, str) or len(delimiter) != 1 or delimiter in "\r\n\""):
        raise InputError(f"delimiter must be a single character such as ',' ';' '\\t' or '|', got {delimiter!r}.",
                         ui_message="the delimiter must be a single character.")
    if decimal is not None and decimal not in DECIMALS:
        raise InputError(f"decimal must be '.' or ',', got {decimal!r}.", ui_message="the decimal mark must be a point "
                         "or a comma.")
    if decimal is not None and delimiter is not None and decimal == delimiter:
        raise InputError(f"the decimal mark and the delimiter are both {decimal!r}; a decimal comma needs another "
                         "delimiter (';' is the usual one).",
                         ui_message="the decimal mark and the delimiter are both a comma; a decimal comma needs "
                                    "another delimiter (semicolon is the usual one).")
    if encoding is not None:
        import codecs

        try:
            codecs.lookup(encoding)
        except (LookupError, TypeError):
            raise InputError(f"unknown encoding {encoding!r}; use a Python codec name such as 'utf-8' or 'latin-1'.",
                             ui_message=f"unknown encoding {encoding}.") from None


# ---------------------------------------------------------------------------------------------------------------
# gzip: decompressed while counting, never past the limits
# ---------------------------------------------------------------------------------------------------------------

def _gunzip(data: bytes, name: str, limits: ReadLimits, count_lines: bool) -> bytearray:
    """Decompress ``data`` chunk by chunk, refusing as soon as the output passes a limit.

    With ``count_lines`` (delimited text) the lines are counted on the way, so a stream of
    10^9 short rows is refused after ``max_rows`` of them, not after decompressing all.
    """
    import gzip
    import zlib

    out = bytearray()
    lines = 0
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
            while True:
                chunk = stream.read(_CHUNK)
                if not chunk:
                    break
                out += chunk
                if len(out) > limits.max_decompressed_bytes:
                    raise refuse(limits, "max_decompressed_bytes",
                                 f"{name} ({_size(len(data))} compressed) decompresses to more data")
                if count_lines:
                    lines += chunk.count(b"\n")
                    if lines > limits.max_rows + 1:
                        raise refuse(limits, "max_rows",
                                     f"{name} holds more than {limits.max_rows:,} rows (counted while "
                                     f"decompressing, {_size(len(data))} compressed)", _SCAN)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"{name} is a corrupt gzip file ({exc}).") from None
    return out


def _gunzip_head(data: bytes, name: str) -> bytes:
    """The first 64 KiB of the decompressed stream (to tell the format), without decompressing the rest."""
    import gzip
    import zlib

    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
            return stream.read(_HEAD)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"{name} is a corrupt gzip file ({exc}).") from None


# ---------------------------------------------------------------------------------------------------------------
# delimited text
# ---------------------------------------------------------------------------------------------------------------

def _blank(data) -> bool:
    head = bytes(data[:_HEAD])
    if head.strip():
        return False
    return len(data) <= _HEAD or not bytes(data).strip()


def _refuse_markup(head: str, name: str) -> None:
    """An HTML, XML or JSON document is no delimited table: say so (a one-line page read as a header without rows
    was called "empty"). JSON: a first line that parses as JSON, or opens an object or array ('{', '[', '{"',
    '[{', '["'); a CSV header such as "[label],p" stays a header."""
    start = head.lstrip().lower()
    first = head.lstrip().split("\n", 1)[0].strip()
    if start.startswith(("<!doctype html", "<html", "<?xml", "<table", "<head", "<body")):
        kind = "XML" if start.startswith("<?xml") else "HTML"
    elif first in ("{", "[") or first.startswith(('{"', "[{", '["')) or (first[:1] in "{[" and _is_json(first)):
        kind = "JSON"
    else:
        return
    raise InputError(f"{name} is {kind}, not a table of rows and columns; export the predictions as CSV, Parquet or "
                     "Excel (one row per example: a label column and probability columns).")


def _is_json(text: str) -> bool:
    import json

    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _codec_refusal(name: str, encoding: str | None, exc: UnicodeError) -> InputError:
    """A codec's own refusal, without a byte position ("UTF-16 stream does not start with BOM": a UTF-8 file read
    as UTF-16), as an input error that names the fix."""
    return InputError(
        f"{name} cannot be read as {encoding} text ({exc}); pass the file's encoding (encoding='utf-8', "
        "'utf-16-le', 'cp1252', ...; command line: --encoding) or leave it to auto-detection.",
        ui_message=f"{name} cannot be read as {encoding} text ({exc}); choose another Encoding in the column "
                   "mapping, or Auto-detect.",
    )


def _read_csv(data, name: str, delimiter: str | None, encoding: str | None, limits: ReadLimits,
              decimal: str | None = None) -> pd.DataFrame:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    if _blank(data):
        raise InputError(f"{name} is empty; it needs a header row and at least one data row.")
    view = memoryview(data)
    if encoding is None:
        if bytes(view[:2]) in (b"\xff\xfe", b"\xfe\xff"):
            encoding = "utf-16"
        elif bytes(view[:3]) == b"\xef\xbb\xbf":
            view = view[3:]
        else:
            guess = _utf16_without_bom(bytes(view[:4096]))
            if guess is not None:
                raise InputError(
                    f"{name} looks like UTF-16 text without a byte-order mark (every other byte is 0); pass "
                    f"encoding='{guess}' (command line: --encoding {guess}) or re-save the file as UTF-8.",
                    ui_message=f"{name} looks like UTF-16 text without a byte-order mark (every other byte is 0); "
                               f"choose Encoding: {guess} in the column mapping, or re-save the file as UTF-8.",
                    hint={"encoding": guess},
                )
    head_bytes = bytes(view[:_HEAD])
    try:
        head = head_bytes.decode(encoding or "utf-8", errors="strict")
    except UnicodeDecodeError as exc:
        # A multibyte character cut at the 64 KiB boundary is not an encoding error.
        if len(view) <= len(head_bytes) or exc.start < len(head_bytes) - 4:
            what = (f"{name} is not {encoding or 'UTF-8'} text (byte 0x{head_bytes[exc.start]:02x} at position "
                    f"{exc.start})")
            raise InputError(
                f"{what}; re-save it as UTF-8 or pass the file's encoding, e.g. encoding='cp1252' (Windows) or "
                "encoding='latin-1' (Western Europe); command line: --encoding cp1252.",
                ui_message=f"{what}; choose the file's Encoding in the column mapping, e.g. cp1252 (Windows) or "
                           "latin-1 (Western Europe), or re-save it as UTF-8.",
                hint={"encoding": "cp1252"},
            ) from None
        head = head_bytes[: exc.start].decode(encoding or "utf-8")
    except UnicodeError as exc:
        raise _codec_refusal(name, encoding, exc) from None
    except LookupError:
        raise InputError(f"unknown encoding {encoding!r}; use a Python codec name such as 'utf-8' or 'latin-1'.") from None
    _refuse_markup(head, name)
    sep = delimiter or _sniff_delimiter(head)
    if decimal is None:
        decimal = _sniff_decimal(head, sep)
    elif decimal == "," and sep == ",":
        raise InputError(f"{name} is comma-separated, so the comma cannot be its decimal mark; pass the file's "
                         "delimiter (e.g. delimiter=';') with decimal=','.",
                         ui_message=f"{name} is comma-separated, so the comma cannot be its decimal mark; choose the "
                                    "file's Delimiter (e.g. semicolon) with Decimal: comma.")
    header = head.splitlines()[0] if head.splitlines() else ""
    # Declared size before parsing: lines (an upper bound on rows, quoted newlines included) times columns.
    # The whole first line (the 64 KiB head may cut it): its separators give the columns.
    start = len(data) - len(view)
    ends = [i for i in (data.find(b"\n", start), data.find(b"\r", start)) if i >= 0]
    first = bytes(data[start:min(ends) if ends else len(data)])
    n_cols = first.decode(encoding or "utf-8", errors="replace").count(sep) + 1 if sep else 1
    if n_cols > limits.max_columns:
        raise refuse(limits, "max_columns", f"{name} has {n_cols:,} columns in its header",
                     "or keep only the columns you need")
    breaks = max(data.count(b"\n"), data.count(b"\r"))
    lines = breaks + (not bytes(data[-2:]).strip(b"\x00").endswith((b"\n", b"\r"))) - 1  # data lines
    if lines > limits.max_rows:
        raise refuse(limits, "max_rows", f"{name} has {lines:,} data lines", _SCAN)
    if lines * n_cols > limits.max_cells:
        raise refuse(limits, "max_cells", f"{name} has {lines:,} data lines of {n_cols:,} columns "
                     f"({lines * n_cols:,} cells)", "or keep only the columns you need, " + _SCAN.removeprefix("or "))
    read_opts = pacsv.ReadOptions(encoding=encoding or "utf8", block_size=1 << 24)
    parse_opts = pacsv.ParseOptions(delimiter=sep)
    convert_opts = pacsv.ConvertOptions(strings_can_be_null=True, decimal_point=decimal)
    try:
        table = pacsv.read_csv(pa.BufferReader(pa.py_buffer(view)), read_options=read_opts,
                               parse_options=parse_opts, convert_options=convert_opts)
    except UnicodeError as exc:  # pyarrow's transcoder runs the codec incrementally: its refusal comes here
        raise _codec_refusal(name, encoding, exc) from None
    except pa.ArrowException as exc:
        msg = str(exc)
        if "Empty CSV" in msg:
            raise InputError(f"{name} is empty; it needs a header row and at least one data row.") from None
        if isinstance(exc, pa.ArrowMemoryError):
            raise InputError(f"{name} does not fit in memory while parsing ({msg.splitlines()[0]}); "
                             "sample the rows or keep only the columns you need.") from None
        what = f"{name} could not be parsed as delimited text with delimiter {sep!r} ({msg.splitlines()[0]})"
        raise InputError(
            f"{what}; check that every row has the same number of fields, or pass delimiter=...",
            ui_message=(f"{name} could not be parsed as text delimited by {DELIMITERS.get(sep, repr(sep))} "
                        f"({msg.splitlines()[0]}); check that every row has the same number of fields, or choose "
                        "the Delimiter in the column mapping."),
        ) from None
    binary_cols = [f.name for f in table.schema if pa.types.is_binary(f.type)]
    if binary_cols:
        what = f"{name} is not valid {encoding or 'UTF-8'} text (column {binary_cols[0]!r} holds undecodable bytes)"
        raise InputError(
            f"{what}; re-save it as UTF-8 or pass the file's encoding, e.g. encoding='cp1252'.",
            ui_message=f"{what}; choose the file's Encoding in the column mapping (e.g. cp1252), or re-save it as "
                       "UTF-8.",
            hint={"encoding": "cp1252"},
        )
    names = table.column_names
    _check_duplicate_names(names, name)
    if len(names) == 1:
        # A predictions table has at least a label and a probability column.
        hint = next((d for d in [*_DELIMITERS, ":", " "] if d != sep and d in header.strip()), None)
        # no other separator in the header: the file holds one column (a label or scores alone), not a wrong
        # delimiter ("separate the columns with commas" was said of a comma-separated file of labels, an audit)
        need = ("a predictions table needs a label column and a probability column (e.g. y and p): add the "
                "missing one")
        how = f"it looks delimited by {hint!r}: pass delimiter={hint!r}" if hint else \
            f"{need}, or pass delimiter=... if another character separates its columns"
        ui_how = (f"it looks delimited by {DELIMITERS.get(hint, repr(hint))}: choose that Delimiter in the column "
                  "mapping" if hint else f"{need}, or choose the Delimiter in the column mapping if another "
                  "character separates its columns")
        what = (f"{name} parsed into a single column {names[0]!r} with delimiter {sep!r}" if hint else
                f"{name} holds a single column, {names[0]!r}")
        raise InputError(f"{what}; {how}.", ui_message=f"{what}; {ui_how}.",
                         hint={"delimiter": hint} if hint in DELIMITERS else None)
    _check_table_size(table.num_rows, table.num_columns, name, limits)
    if padded_fields(head.splitlines()[:PADDED_LINES], sep):
        table = _unpadded(table, convert_opts.null_values)
    return _to_pandas(table, name)


#: Lines of a CSV file's start read to tell whether its fields are padded with spaces (:func:`padded_fields`).
PADDED_LINES = 1000


def padded_fields(lines, sep: str) -> bool:
    """Whether a field of these CSV lines starts or ends with a space (``y, p`` / ``1, 0.298``): a file written
    with spaces after its separators, which pandas reads with ``skipinitialspace``. One rule for the in-memory
    reader and the scans' engines (:mod:`calibviz.scan.polars_engine`, :mod:`calibviz.scan.duckdb_engine`).

    >>> padded_fields(["y, p", "1, 0.3"], ","), padded_fields(["y,p", "1,0.3"], ","), padded_fields(["y,p", "1, 0.3"], ",")
    (True, False, True)
    """
    return any(field != field.strip(" \t") for line in lines for field in line.rstrip("\r\n").split(sep))


def _unpadded(table, null_values):
    """A table read from a padded CSV as pandas' ``skipinitialspace`` reads it: names and text cells stripped,
    the null texts (' NA') missing, and a text column whose stripped cells are all numbers (or true/false) typed
    as such (pyarrow, which has no such option, read ' NA' among numbers as text: a numeric feature became a
    category of 526 levels, a walk-through found)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    columns = []
    for col in table.columns:
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            text = pc.utf8_trim(col, characters=" \t")
            text = pc.if_else(pc.is_in(text, value_set=pa.array(list(null_values), pa.string())),
                              pa.scalar(None, pa.string()), text)
            for target in (pa.int64(), pa.float64()):
                try:
                    text = pc.cast(text, target)
                    break
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                    continue
            else:
                lowered = pc.utf8_lower(text)
                if pc.all(pc.is_in(pc.drop_null(lowered), value_set=pa.array(["true", "false"]))).as_py() and \
                        len(pc.drop_null(lowered)):
                    text = pc.equal(lowered, "true")
            col = text
        columns.append(col)
    return pa.table(columns, names=[n.strip(" \t") for n in table.column_names])


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


def _check_table_size(rows: int, cols: int, name: str, limits: ReadLimits, what: str = "has",
                      scan: bool = True) -> None:
    if cols > limits.max_columns:
        raise refuse(limits, "max_columns", f"{name} {what} {cols:,} columns", "or keep only the columns you need")
    if rows > limits.max_rows:
        raise refuse(limits, "max_rows", f"{name} {what} {rows:,} rows", _SCAN if scan else None)
    if rows * cols > limits.max_cells:
        raise refuse(limits, "max_cells", f"{name} {what} {rows:,} rows of {cols:,} columns ({rows * cols:,} cells)",
                     "or keep only the columns you need, " + _SCAN.removeprefix("or ") if scan else
                     "or keep only the columns you need")


# ---------------------------------------------------------------------------------------------------------------
# Arrow tables (CSV, Parquet) -> pandas
# ---------------------------------------------------------------------------------------------------------------

def _unsupported_arrow_type(t) -> bool:
    """Types whose values are containers or raw bytes: no label, probability or feature can hold them."""
    import pyarrow as pa

    if pa.types.is_dictionary(t):
        return _unsupported_arrow_type(t.value_type)
    return (pa.types.is_nested(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t)
            or pa.types.is_fixed_size_binary(t) or pa.types.is_binary_view(t)
            or isinstance(t, pa.ExtensionType))


def _to_pandas(table, name: str) -> pd.DataFrame:
    """``table.to_pandas()``, robust to forged pandas metadata (schema metadata is a JSON hint, not data)."""
    import pyarrow as pa

    try:
        return table.to_pandas()
    except pa.ArrowMemoryError:
        raise InputError(f"{name} does not fit in memory; sample the rows or keep only the columns you need.") from None
    except Exception:  # noqa: BLE001 - a forged b"pandas" schema entry raises TypeError, KeyError, ValueError...
        pass
    try:
        frame = table.replace_schema_metadata(None).to_pandas(ignore_metadata=True)
    except Exception as exc:  # noqa: BLE001
        raise InputError(f"{name}: its columns cannot be converted to a table ({type(exc).__name__}: {exc}); "
                         "re-export the file as CSV.") from None
    # pandas stores a non-default index as a column; without the metadata it would look like a feature.
    index_cols = [c for c in frame.columns if re.fullmatch(r"__index_level_\d+__", str(c))]
    frame = frame.drop(columns=index_cols)
    frame.attrs["calibviz_notes"] = [f"{name}: its pandas metadata could not be read and was ignored"]
    return frame


# ---------------------------------------------------------------------------------------------------------------
# Parquet: the footer declares rows and sizes; strings are measured before they are expanded
# ---------------------------------------------------------------------------------------------------------------

def _read_parquet(data, name: str, limits: ReadLimits) -> pd.DataFrame:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(pa.BufferReader(pa.py_buffer(data)))
        md, schema = pf.metadata, pf.schema_arrow
    except (pa.ArrowException, OSError, ValueError, TypeError) as exc:
        raise InputError(f"{name} is not a readable Parquet file ({exc}); re-export it or use CSV.") from None
    _check_duplicate_names(schema.names, name)
    unsupported = {f.name: str(f.type) for f in schema if _unsupported_arrow_type(f.type)}
    columns = [f.name for f in schema if f.name not in unsupported]
    rows = md.num_rows
    _check_table_size(rows, len(columns), name, limits, what="declares")
    # Decoded (uncompressed) size of the columns to read, from the column-chunk metadata.
    wanted = set(columns)
    declared = 0
    per_column = unsupported and md.num_row_groups * md.num_columns <= 100_000  # else: a Python loop too long
    for i in range(md.num_row_groups):
        rg = md.row_group(i)
        if not per_column:
            declared += max(rg.total_byte_size, 0)  # uncompressed size of all its columns
            continue
        for j in range(rg.num_columns):
            col = rg.column(j)
            if col.path_in_schema.split(".")[0] in wanted:
                declared += max(col.total_uncompressed_size, 0)
    if declared > limits.max_decompressed_bytes:
        raise refuse(limits, "max_decompressed_bytes",
                     f"{name} declares {_size(declared)} of column data ({_size(len(data))} on disk)")
    # Strings are read dictionary-encoded (no bigger than in the file), measured, then expanded.
    strings = [f.name for f in schema if f.name in wanted
               and (pa.types.is_string(f.type) or pa.types.is_large_string(f.type) or pa.types.is_string_view(f.type))]
    try:
        if strings:
            pf = pq.ParquetFile(pa.BufferReader(pa.py_buffer(data)), read_dictionary=strings)
        table = pf.read(columns=columns)
        expanded = table.nbytes
        for c in strings:
            col = table.column(c)
            if pa.types.is_dictionary(col.type):
                lengths = [pc.sum(pc.take(pc.binary_length(ch.dictionary), ch.indices)).as_py() or 0
                           for ch in col.chunks if len(ch.dictionary)]
                expanded += sum(lengths) + 4 * len(col)
        if expanded > limits.max_decompressed_bytes:
            raise refuse(limits, "max_decompressed_bytes",
                         f"{name} expands to {_size(expanded)} when read ({_size(len(data))} on disk)",
                         "or keep only the columns you need")
        if strings:
            table = pa.table([pc.cast(table.column(c), pa.string()) if c in strings
                              and pa.types.is_dictionary(table.column(c).type) else table.column(c)
                              for c in table.column_names], schema=None, names=table.column_names,
                             metadata=table.schema.metadata)
    except InputError:
        raise
    except pa.ArrowMemoryError:
        raise InputError(f"{name} does not fit in memory; sample the rows or keep only the columns you need.") from None
    except (pa.ArrowException, OSError, ValueError, TypeError) as exc:
        raise InputError(f"{name} is not a readable Parquet file ({exc}); re-export it or use CSV.") from None
    frame = _to_pandas(table, name)
    if unsupported:
        frame.attrs[UNSUPPORTED_ATTR] = unsupported
    return frame


# ---------------------------------------------------------------------------------------------------------------
# Excel (.xlsx): the zip directory and the sheet's size first, then openpyxl streaming with a counter
# ---------------------------------------------------------------------------------------------------------------

_EXCEL_MAX_ROWS = 1_048_576
#: XML parts openpyxl parses whole (styles, workbook, relationships, properties), unlike sheets and
#: shared strings, which are streamed and bounded by the limits: 10 MiB of styles take ~10 s to build.
_MAX_INDEX_PART_BYTES = 10 * 1024**2
_DIMENSION = re.compile(rb"<(?:[\w.-]+:)?dimension\s+ref\s*=\s*[\"']([A-Za-z]{1,3})(\d{1,9})"
                        rb"(?::([A-Za-z]{1,3})(\d{1,9}))?[\"']")
_CELL_TAG = re.compile(rb"<(?:[\w.-]+:)?c[\s/>]")
_STRING_TAG = re.compile(rb"<(?:[\w.-]+:)?si[\s/>]")
_SST_ROOT = re.compile(rb"<(?:[\w.-]+:)?sst[\s/>]")
_SHEET_DATA = re.compile(rb"<(?:[\w.-]+:)?sheetData[\s/>]")
_WORKSHEET_ROOT = re.compile(rb"<(?:[\w.-]+:)?worksheet[\s/>]")
_ERROR_CODES = {"#NULL!", "#DIV/0!", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#N/A", "#GETTING_DATA"}


def _col_index(letters: bytes) -> int:
    n = 0
    for ch in letters.upper():
        n = n * 26 + (ch - 64)
    return n


def _xlsx_sheet_parts(zf: zipfile.ZipFile, name: str, limits: ReadLimits) -> list[tuple[str, str]]:
    """[(sheet name, part path)] in workbook order, read from xl/workbook.xml and its relationships."""
    import xml.etree.ElementTree as ET

    def small_xml(part):
        info = zf.getinfo(part)
        if info.file_size > 16 * 1024**2:
            raise InputError(f"{name}: the workbook part {part} is {_size(info.file_size)}; a workbook index is a "
                             "few kB. The file is damaged or crafted; re-save it as .xlsx or CSV.")
        return ET.fromstring(zf.read(part))

    names = set(zf.namelist())
    if "xl/workbook.xml" not in names:
        return [("", p) for p in sorted(n for n in names if re.fullmatch(r"xl/worksheets/[^/]+\.xml", n))]
    book = small_xml("xl/workbook.xml")
    rels = small_xml("xl/_rels/workbook.xml.rels") if "xl/_rels/workbook.xml.rels" in names else None
    targets = {}
    if rels is not None:
        for rel in rels:
            target = rel.get("Target", "")
            target = target.lstrip("/") if target.startswith("/") else "xl/" + target
            targets[rel.get("Id")] = os.path.normpath(target).replace("\\", "/")
    out = []
    for el in book.iter():
        if el.tag.rsplit("}", 1)[-1] == "sheet":
            rid = next((v for k, v in el.attrib.items() if k.rsplit("}", 1)[-1] == "id" and k != "sheetId"), None)
            part = targets.get(rid)
            if part in names and "worksheets/" in part:
                out.append((el.get("name", ""), part))
    return out


def _count_cells(zf: zipfile.ZipFile, part: str, stop: int, pattern=_CELL_TAG) -> int:
    """Count the ``<c>`` elements of a sheet part (or ``pattern``), streaming; stops counting past ``stop``."""
    count, tail = 0, b""
    with zf.open(part) as src:
        while True:
            chunk = src.read(_CHUNK)
            if not chunk:
                break
            buf = tail + chunk
            cut = buf.rfind(b"<")
            if cut < 0:
                tail = b""
                continue
            count += len(pattern.findall(buf, 0, cut))
            tail = buf[cut:]
            if count > stop:
                return count
    return count + len(pattern.findall(tail))


def _check_xlsx(data, name: str, limits: ReadLimits) -> None:
    """Refuse a workbook whose declared sizes exceed the limits, before openpyxl opens it."""
    import zlib

    try:
        _check_xlsx_parts(data, name, limits)
    except (zipfile.BadZipFile, zlib.error, OSError, EOFError, NotImplementedError, RuntimeError, ValueError,
            KeyError) as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(f"{name} is not a readable Excel workbook ({type(exc).__name__}: {exc}); "
                         "re-save it as .xlsx or CSV.") from None


def _check_xlsx_parts(data, name: str, limits: ReadLimits) -> None:
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        infos = zf.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise InputError(f"{name} is not a readable Excel workbook (BadZipFile: {exc}); re-save it as .xlsx or CSV.") from None
    with zf:
        names = {i.filename for i in infos}
        if "xl/workbook.xml" not in names and "[Content_Types].xml" not in names:
            if "mimetype" in names and zf.getinfo("mimetype").file_size < 200 \
                    and b"opendocument.spreadsheet" in zf.read("mimetype"):
                raise InputError(f"{name} is an OpenDocument spreadsheet (.ods); calibviz reads .xlsx: save it as "
                                 ".xlsx or CSV in LibreOffice or Excel.")
            inner = [i.filename for i in infos if not i.is_dir()][:3]
            raise InputError(f"{name} is a zip archive, not an Excel workbook (it holds {', '.join(map(repr, inner))}); "
                             "unzip it and load the CSV or Parquet file inside.")
        # zipfile never returns more than a part's declared size, so the directory bounds what openpyxl reads.
        total = 0
        for info in infos:
            total += info.file_size
            if info.file_size > limits.max_xlsx_part_bytes:
                what = ("its shared-strings table" if info.filename.endswith("sharedStrings.xml")
                        else f"its part {info.filename}")
                raise refuse(limits, "max_xlsx_part_bytes",
                             f"{name}: {what} is {_size(info.file_size)} uncompressed ({_size(info.compress_size)} "
                             "in the file)", "or save the sheet as CSV (an Excel cell holds at most 32,767 characters)")
        if total > limits.max_decompressed_bytes:
            raise refuse(limits, "max_decompressed_bytes",
                         f"{name} decompresses to {_size(total)} ({_size(len(data))} in the file)",
                         "or save the sheet as CSV")
        if len(infos) > 10_000:
            raise InputError(f"{name} holds {len(infos):,} zip entries; a workbook holds a few dozen. The file is "
                             "damaged or crafted; re-save it as .xlsx or CSV.")
        try:
            titles = {part: title for title, part in _xlsx_sheet_parts(zf, name, limits)}
        except InputError:
            raise
        except Exception:  # noqa: BLE001 - a damaged index: openpyxl will say so
            titles = {}
        # Parts are told by their content, not their names (the package can name them anything).
        for info in infos:
            if info.is_dir() or info.file_size == 0:
                continue
            with zf.open(info) as src:
                head = src.read(_HEAD)
            if _SST_ROOT.search(head):
                # openpyxl turns every shared string into a Python object when it opens the workbook
                # (8 million strings, 21 MB zipped: 200 s and 1.4 GB); a sheet within the limit needs fewer.
                if _count_cells(zf, info.filename, limits.max_excel_cells, _STRING_TAG) > limits.max_excel_cells:
                    raise refuse(limits, "max_excel_cells",
                                 f"{name}: its shared-strings table holds more than {limits.max_excel_cells:,} "
                                 "strings", "or save the sheet as CSV")
            elif _SHEET_DATA.search(head) or (len(head) == _HEAD and b"sheetData" not in head
                                              and _WORKSHEET_ROOT.search(head)):
                _check_sheet_part(zf, info.filename, head, titles.get(info.filename, ""), name, limits)
            elif info.file_size > _MAX_INDEX_PART_BYTES and head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<"):
                # Styles, relationships, workbook, properties: openpyxl parses these whole into objects
                # (a 220 kB file with 74 MB of styles: 60 s and 1 GB). Excel's own stay at a few MB.
                raise InputError(
                    f"{name}: its part {info.filename} is {_size(info.file_size)} of XML ({_size(info.compress_size)} "
                    f"in the file); workbook, style and relationship parts are at most a few MB (Excel allows "
                    "64,000 cell formats). The file is damaged or crafted: re-save it as .xlsx (clearing unused "
                    "formats) or save the sheet as CSV."
                )


def _check_sheet_part(zf, part: str, head: bytes, title: str, name: str, limits: ReadLimits) -> None:
    """Refuse a sheet that declares, or stores, more cells than ``max_excel_cells``."""
    label = f"{name}: sheet {title!r}" if title else f"{name}: {part}"
    m = _DIMENSION.search(head)
    declared = ref = None
    if m:
        c1, r1 = _col_index(m.group(1)), int(m.group(2))
        c2, r2 = (_col_index(m.group(3)), int(m.group(4))) if m.group(3) else (c1, r1)
        declared = (abs(r2 - r1) + 1) * (abs(c2 - c1) + 1)
        ref = m.group(0).split(b"=", 1)[1].strip(b"\"' ").decode()
        if declared <= limits.max_excel_cells:
            return  # a dimension that lies low is caught by the row counter while streaming
    # No dimension, or a used range above the limit (a stray cell far away, or formatting): count the
    # cells actually stored (a C-speed scan of the XML, stopped at the limit).
    if _count_cells(zf, part, limits.max_excel_cells) > limits.max_excel_cells:
        if declared is not None:
            what = f"{label} spans {ref} ({declared:,} cells) and stores more than {limits.max_excel_cells:,}"
        else:
            what = f"{label} stores more than {limits.max_excel_cells:,} cells"
        raise refuse(limits, "max_excel_cells", what, "or save the sheet as CSV or Parquet (read 100 times faster)")


def _excel_refusal(name, title, rows, width, last_row, limits):
    return refuse(limits, "max_excel_cells",
                  f"{name}: sheet {title!r} holds more than {limits.max_excel_cells:,} cells ({rows:,} non-empty "
                  f"rows by {width:,} columns, up to row {last_row:,})",
                  "or delete the cells outside the table (Ctrl+End in Excel jumps to the last used cell) "
                  "or save the sheet as CSV")


def _read_excel(data, name: str, sheet, limits: ReadLimits) -> pd.DataFrame:
    if bytes(data[:8]) == _OLE2:
        raise InputError(
            f"{name} is a legacy Excel 97-2003 workbook (.xls) or a password-protected one; calibviz reads .xlsx: "
            "open it in Excel or LibreOffice and save it as .xlsx (without a password) or CSV."
        )
    _check_xlsx(data, name, limits)
    try:
        from openpyxl import load_workbook
    except ImportError as exc:  # pragma: no cover - openpyxl is a dependency
        raise InputError(f"reading .xlsx needs openpyxl ({exc}); pip install openpyxl or export CSV.") from None
    try:
        wb = load_workbook(io.BytesIO(data), read_only=True, data_only=True, keep_links=False)
    except MemoryError:
        raise InputError(f"{name} does not fit in memory; save the sheet as CSV.") from None
    except Exception as exc:  # openpyxl/zipfile raise many types on corrupt files
        raise InputError(f"{name} is not a readable Excel workbook ({type(exc).__name__}: {exc}); re-save it as .xlsx or CSV.") from None
    try:
        return _excel_frame(wb, name, sheet, limits)
    except (InputError, MemoryError) as exc:
        if isinstance(exc, MemoryError):
            raise InputError(f"{name} does not fit in memory; save the sheet as CSV.") from None
        raise
    except Exception as exc:  # noqa: BLE001 - damaged sheet XML
        raise InputError(f"{name} is not a readable Excel workbook ({type(exc).__name__}: {exc}); re-save it as .xlsx or CSV.") from None
    finally:
        wb.close()


def _worksheets(wb) -> list:
    """A workbook's worksheets (chart sheets have no rows)."""
    return [ws for ws in wb.worksheets if hasattr(ws, "iter_rows")]


def _pick_sheet(wb, name, sheet):
    sheets = _worksheets(wb)
    titles = [ws.title for ws in sheets]
    if not sheets:
        raise InputError(f"{name} has no worksheet; put the predictions table on the first sheet.")
    if sheet is None:
        return sheets[0]
    if sheet in titles:
        return sheets[titles.index(sheet)]
    if isinstance(sheet, str) and sheet.strip().lstrip("-").isdigit():
        sheet = int(sheet)
    if isinstance(sheet, int) and not isinstance(sheet, bool) and -len(sheets) <= sheet < len(sheets):
        return sheets[sheet]
    raise InputError(f"{name}: there is no sheet {sheet!r}; its sheets are {', '.join(map(repr, titles))}. "
                     "Pass sheet=<name or index> for the sheet with the predictions.")


def excel_sheet_names(data: bytes) -> list[str]:
    """The worksheet titles of an .xlsx workbook, in order ([] when ``data`` is no readable workbook); for the
    dashboard's Sheet control. Only the workbook part is parsed (openpyxl's read-only mode reads sheets lazily)."""
    if bytes(data[:2]) != b"PK":
        return []
    try:
        from openpyxl import load_workbook

        wb = load_workbook(io.BytesIO(data), read_only=True, data_only=True, keep_links=False)
    except Exception:  # noqa: BLE001 - not a workbook: the reader's own message says why when it is read
        return []
    try:
        return [ws.title for ws in _worksheets(wb)]
    finally:
        wb.close()


def _excel_frame(wb, name: str, sheet, limits: ReadLimits) -> pd.DataFrame:
    ws = _pick_sheet(wb, name, sheet)
    titles = [w.title for w in _worksheets(wb)]
    ws.reset_dimensions()  # a declared size can be wrong: let the rows say
    max_rows = min(limits.max_rows + 1, _EXCEL_MAX_ROWS)
    rows: list[tuple] = []
    width = 0
    for i, row in enumerate(ws.iter_rows(values_only=True)):
        if i >= max_rows:
            if i >= _EXCEL_MAX_ROWS:
                raise InputError(f"{name}: sheet {ws.title!r} has rows beyond Excel's last row ({_EXCEL_MAX_ROWS:,}); "
                                 "the file is damaged or crafted. Re-save it as .xlsx or CSV.")
            raise refuse(limits, "max_rows", f"{name}: sheet {ws.title!r} has more than {limits.max_rows:,} rows")
        n = len(row)
        while n and (row[n - 1] is None or row[n - 1] == ""):
            n -= 1
        if not n:
            continue  # blank rows are skipped, as pandas does
        if n > width:
            width = n
        rows.append(row[:n] if n < len(row) else row)
        if len(rows) * width > limits.max_excel_cells:
            raise _excel_refusal(name, ws.title, len(rows), width, i + 1, limits)
    if not rows:
        raise InputError(f"{name} has an empty first sheet; put the predictions table on the first sheet or pass sheet=...",
                         ui_message=f"{name} has an empty first sheet; put the predictions table on the first sheet.")
    _check_table_size(len(rows) - 1, width, name, limits, scan=False)
    pad = (None,)
    rows = [r if len(r) == width else tuple(r) + pad * (width - len(r)) for r in rows]
    # A header cell typed as a number comes back as 0.0: show it as the user typed it ("0").
    header = ["" if v is None else str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)
              for v in rows[0]]
    # A column without a header and without a value is nothing (a stray format far to the right).
    keep = [j for j, h in enumerate(header) if h.strip() or any(r[j] is not None for r in rows[1:])]
    if len(keep) < width:
        rows = [tuple(r[j] for j in keep) for r in rows]
        header = [header[j] for j in keep]
        width = len(keep)
    _check_duplicate_names(header, name)
    frame = pd.DataFrame.from_records(rows[1:], columns=range(width), nrows=len(rows) - 1) if len(rows) > 1 \
        else pd.DataFrame(columns=range(width))
    frame.columns = header
    # Excel cells come back as objects; error cells (#N/A) are missing values; recover numeric columns.
    for col in frame.columns:
        s = frame[col]
        if s.dtype == object:
            s = s.mask(s.isin(_ERROR_CODES) | s.eq(""))
            s = s.infer_objects()
        converted = pd.to_numeric(s, errors="coerce") if s.dtype == object else s
        if converted.notna().sum() == s.notna().sum():
            s = converted
        frame[col] = s
    if sheet is None and len(titles) > 1:  # the first of several sheets: messages and notes name the others
        frame.attrs[SHEETS_ATTR] = (ws.title, tuple(titles))
        frame.attrs.setdefault("calibviz_notes", []).append(
            f"{name} has {len(titles)} sheets ({', '.join(map(repr, titles))}); the first, {ws.title!r}, was read")
    return frame


def read_table(source, *, delimiter: str | None = None, encoding: str | None = None, sheet=None,
               max_bytes: int = DEFAULT_MAX_BYTES, name: str | None = None, limits=None,
               decimal: str | None = None) -> RawTable:
    """Read a predictions table from a path, bytes or a binary file-like object.

    Parameters
    ----------
    source : str, os.PathLike, bytes or binary file-like
        The file. Uploaded Streamlit files (``UploadedFile``) work as is.
    delimiter : str, optional
        Field separator for delimited text; sniffed from the first lines
        (``,``, tab, ``;``, ``|``) when omitted.
    encoding : str, optional
        Text encoding (any Python codec name; the dashboard offers
        :data:`ENCODINGS`); UTF-8 (with or without BOM) and UTF-16 with BOM are
        recognised, anything else must be named (no silent guessing: a wrong
        single-byte guess reads silently wrong characters).
    decimal : {'.', ','}, optional
        Decimal mark of delimited text. By default a comma is taken when the
        file is not comma-separated and its first 50 lines hold numbers like
        ``0,25`` and none like ``0.25`` (European spreadsheets' CSV export).
    sheet : str or int, optional
        Excel sheet; the first one by default.
    max_bytes : int
        Refuse files larger than this (as stored, before decompression).
    name : str, optional
        Display name used in messages; defaults to the file name.
    limits : ReadLimits or dict, optional
        Bounds on rows, cells and decompressed bytes (see
        :mod:`calibviz.io.limits`); by default the ``CALIBVIZ_MAX_*``
        environment variables, else the defaults. A dict overrides single
        limits: ``limits={"max_rows": 50_000_000}``.

    Returns
    -------
    RawTable
        Columns that cannot be analysed (Parquet lists, structs, maps, raw
        bytes) are left out and listed in
        ``frame.attrs["calibviz_unsupported_columns"]``.

    Raises
    ------
    calibviz.InputError
        Unreadable, empty, too large (on disk or once expanded), wrongly
        delimited or wrongly encoded files, and duplicated column names.

    Examples
    --------
    >>> t = read_table(b"label,p\\n0,0.2\\n1,0.9\\n")
    >>> t.frame.shape, t.format
    ((2, 2), 'csv')
    >>> read_table(b"label,p\\n0,0.2\\n1,0.9\\n0,0.4\\n", limits={"max_rows": 2})
    Traceback (most recent call last):
    ...
    calibviz.errors.InputError: uploaded data has 3 data lines, above the limit of 2 (CALIBVIZ_MAX_ROWS); ...
    """
    lim = resolve_limits(limits)
    _check_reading_options(delimiter, encoding, decimal)
    data, display = _source_bytes(source, max_bytes)
    display = name or display
    try:
        return _read(data, display, delimiter, encoding, sheet, lim, decimal)
    except MemoryError:
        raise InputError(f"{display} ({_size(len(data))}) does not fit in the memory left on this machine; "
                         "sample the rows, keep only the columns you need, or lower the limits "
                         "(CALIBVIZ_MAX_ROWS, CALIBVIZ_MAX_CELLS) so such files are refused early.") from None


def _read(data, display: str, delimiter, encoding, sheet, lim: ReadLimits, decimal=None) -> RawTable:
    fmt = _detect_format(data, display)
    if fmt == "gzip":
        inner_name = display.removesuffix(".gz").removesuffix(".GZ")
        inner = _detect_format(_gunzip_head(data, display), inner_name)
        data = _gunzip(data, display, lim, count_lines=inner in ("csv", "tsv"))
        fmt = inner
    if fmt == "parquet":
        frame = _read_parquet(data, display, lim)
    elif fmt in ("excel", "ole2"):
        frame = _read_excel(data, display, sheet, lim)
        fmt = "excel"
    else:
        frame = _read_csv(data, display, "\t" if fmt == "tsv" and delimiter is None else delimiter, encoding, lim,
                          decimal)
    left_out = frame.attrs.get(UNSUPPORTED_ATTR) or {}
    if frame.shape[1] == 0 and left_out:
        shown = ", ".join(f"{c!r} ({t})" for c, t in list(left_out.items())[:5])
        raise InputError(f"{display}: every column holds lists, records or raw bytes ({shown}); the label and "
                         "probabilities must be plain columns with one value per row. Flatten them and re-export.")
    if frame.shape[1] == 0 or frame.shape[0] == 0:
        raise InputError(f"{display} has no data rows; it needs a header row and at least one data row.")
    frame.columns = [str(c).strip() for c in frame.columns]
    _check_duplicate_names(list(frame.columns), display)
    return RawTable(frame=frame, name=display, format=fmt, n_bytes=len(data))
