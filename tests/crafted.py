"""Hostile files built on the fly (issue #16): small on disk, gigabytes once read.

Each builder writes into a folder and returns the path; all of them take well
under a second or two and a few MB of memory, because the expansion is left
to the reader: zip and gzip compress repetition a thousandfold, Parquet
stores constant columns as run lengths, and an Excel sheet declares its size.
``python -m tests.crafted DIR`` writes the issue's files into DIR.
"""
from __future__ import annotations

import gzip
import itertools
import zipfile
from pathlib import Path

_CT = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
       '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
       '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
       '<Default Extension="xml" ContentType="application/xml"/>'
       '<Override PartName="/xl/workbook.xml" '
       'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
       '<Override PartName="/xl/worksheets/sheet1.xml" '
       'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
       '{strings}</Types>')
_SST_CT = ('<Override PartName="/xl/sharedStrings.xml" '
           'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>')
_RELS = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
         '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
         '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
         'officeDocument" Target="xl/workbook.xml"/></Relationships>')
_BOOK = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
         '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
         'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
         '<sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>')
_BOOK_RELS = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
              '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
              '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
              'worksheet" Target="worksheets/sheet1.xml"/>{strings}</Relationships>')
_SST_REL = ('<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
            'sharedStrings" Target="sharedStrings.xml"/>')
_SHEET_OPEN = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
               '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">{dimension}<sheetData>')
_SHEET_CLOSE = "</sheetData></worksheet>"


def _write_in_pieces(zf: zipfile.ZipFile, part: str, pieces) -> None:
    info = zipfile.ZipInfo(part, date_time=(2026, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    with zf.open(info, "w", force_zip64=True) as dst:
        for piece in pieces:
            dst.write(piece if isinstance(piece, bytes) else piece.encode())


def xlsx(path: Path, sheet_pieces, *, dimension: str | None, shared_string_pieces=None) -> Path:
    """A minimal .xlsx whose sheet XML (and shared strings) are written from iterables of pieces."""
    sst = shared_string_pieces is not None
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        zf.writestr("[Content_Types].xml", _CT.format(strings=_SST_CT if sst else ""))
        zf.writestr("_rels/.rels", _RELS)
        zf.writestr("xl/workbook.xml", _BOOK)
        zf.writestr("xl/_rels/workbook.xml.rels", _BOOK_RELS.format(strings=_SST_REL if sst else ""))
        dim = f'<dimension ref="{dimension}"/>' if dimension else ""
        _write_in_pieces(zf, "xl/worksheets/sheet1.xml",
                         itertools.chain([_SHEET_OPEN.format(dimension=dim)], sheet_pieces, [_SHEET_CLOSE]))
        if sst:
            _write_in_pieces(zf, "xl/sharedStrings.xml", shared_string_pieces)
    return path


def _header_row() -> str:
    return ('<row r="1"><c r="A1" t="inlineStr"><is><t>label</t></is></c>'
            '<c r="B1" t="inlineStr"><is><t>p</t></is></c></row>')


def xlsx_far_cell(folder: Path, *, dimension: str | None = "A1:XFD1048576") -> Path:
    """About 1 kB: a header and one value at XFD1048576, the last cell of a sheet (issue: 9.8 GB)."""
    cell = '<row r="1048576"><c r="XFD1048576"><v>1</v></c></row>'
    return xlsx(Path(folder) / "far_cell.xlsx", [_header_row(), cell], dimension=dimension)


def xlsx_huge_string(folder: Path, *, n_bytes: int = 10**9, shared: bool = True) -> Path:
    """About 1 MB: one string of ``n_bytes`` characters, in the shared strings or inline (issue: 9.5 GB)."""
    block = "a" * (1 << 20)
    text = [block] * (n_bytes // len(block)) + ["a" * (n_bytes % len(block))]
    if shared:
        sst = ['<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<sst xmlns="http://schemas.openxmlformats.'
               'org/spreadsheetml/2006/main" count="1" uniqueCount="1"><si><t>', *text, "</t></si></sst>"]
        cells = [_header_row(), '<row r="2"><c r="A2"><v>1</v></c><c r="B2" t="s"><v>0</v></c></row>']
        return xlsx(Path(folder) / "huge_shared_string.xlsx", cells, dimension="A1:B2", shared_string_pieces=sst)
    cells = [_header_row(), '<row r="2"><c r="A2"><v>1</v></c><c r="B2" t="inlineStr"><is><t>', *text,
             "</t></is></c></row>"]
    return xlsx(Path(folder) / "huge_inline_string.xlsx", cells, dimension="A1:B2")


def xlsx_many_rows(folder: Path, n_rows: int = 3_000_000, *, dimension: bool = True) -> Path:
    """About 0.4 MB: ``n_rows`` equal rows of (0, 0.5) without cell references (issue: 3 * 10^6 rows, 64 s)."""
    block = '<row><c><v>0</v></c><c><v>0.5</v></c></row>' * 10_000
    pieces = itertools.chain([_header_row()], itertools.repeat(block, n_rows // 10_000),
                             ['<row><c><v>0</v></c><c><v>0.5</v></c></row>' * (n_rows % 10_000)])
    return xlsx(Path(folder) / "many_rows.xlsx", pieces, dimension=f"A1:B{n_rows + 1}" if dimension else None)


def parquet_constant_rows(folder: Path, n_rows: int = 50_000_000) -> Path:
    """About 0.5 MB: ``n_rows`` rows of (0, 0.5), written in row groups of 10^6 (issue: 3.5 GB loaded)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(folder) / "constant_rows.parquet"
    chunk = 1_000_000
    block = pa.table({"label": pa.array([0, 1] * (chunk // 2), pa.int8()), "p": pa.array([0.5] * chunk)})
    with pq.ParquetWriter(path, block.schema, compression="zstd") as writer:
        for start in range(0, n_rows, chunk):
            writer.write_table(block.slice(0, min(chunk, n_rows - start)))
    return path


def csv_gz_bomb(folder: Path, n_bytes: int = 1_200_000_000, *, line: bytes = b"0,0.5\n1,0.5\n") -> Path:
    """About 1-2 MB: ``n_bytes`` of delimited text, as a multi-member gzip (issue: 1.2 GB, 4.35 GB peak).

    One compressed member of 1 MiB of text is repeated: valid gzip, built instantly.
    """
    block = line * ((1 << 20) // len(line))
    member = gzip.compress(block, compresslevel=9)
    path = Path(folder) / "bomb.csv.gz"
    with open(path, "wb") as f:
        f.write(gzip.compress(b"label,p\n"))
        for _ in range(max(1, n_bytes // len(block))):
            f.write(member)
    return path


def csv_gz_long_lines(folder: Path, n_bytes: int = 1_200_000_000) -> Path:
    """Few rows, long lines: the decompressed-bytes limit, not the row limit, stops it."""
    return csv_gz_bomb(folder, n_bytes, line=b"0,0.5," + b"x" * 100_000 + b"\n")


ISSUE_FILES = {
    "xlsx_far_cell": xlsx_far_cell,
    "xlsx_far_cell_no_dimension": lambda d: xlsx_far_cell(d, dimension=None),
    "xlsx_huge_shared_string": xlsx_huge_string,
    "xlsx_huge_inline_string": lambda d: xlsx_huge_string(d, shared=False),
    "parquet_constant_rows": parquet_constant_rows,
    "csv_gz_bomb": csv_gz_bomb,
    "csv_gz_long_lines": csv_gz_long_lines,
    "xlsx_many_rows": xlsx_many_rows,
    "xlsx_many_rows_no_dimension": lambda d: xlsx_many_rows(d, dimension=False),
}


if __name__ == "__main__":  # pragma: no cover
    import sys

    out = Path(sys.argv[1])
    import time

    for key, build in ISSUE_FILES.items():
        sub = out / key
        sub.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        path = build(sub)
        print(f"{key:30s} {path.stat().st_size:>12,d} B  {time.perf_counter() - t0:5.1f} s  {path}")
