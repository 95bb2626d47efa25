"""Issue #16, part 1: small files that expand to gigabytes are refused before they are read.

Every hostile file is built here (tests/crafted.py), a few kB to a few MB on disk. The in-process tests
use small limits so they run in milliseconds; ``test_issue_files_under_a_memory_cap`` loads the issue's
own files with the default limits in a subprocess whose address space is capped (RLIMIT_AS), and checks
each is refused within 30 s with a message naming the limit.
"""
from __future__ import annotations

import gzip
import io
import json
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pandas as pd
import pytest

import calibviz as cv
from calibviz.cli import main as cli_main
from calibviz.io import ReadLimits, read_table
from calibviz.io.limits import resolve_limits

from . import crafted
from .conftest import ROOT


def _csv(n=100, seed=0) -> bytes:
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.05, 0.95, n)
    return pd.DataFrame({"label": rng.binomial(1, p), "p": p}).to_csv(index=False).encode()


# ---- configuration ----

def test_defaults_and_environment(monkeypatch):
    d = ReadLimits()
    assert (d.max_rows, d.max_cells, d.max_columns, d.max_decompressed_bytes, d.max_excel_cells,
            d.max_xlsx_part_bytes) == (10_000_000, 100_000_000, 30_000, 512 * 1024**2, 1_000_000, 256 * 1024**2)
    monkeypatch.setenv("CALIBVIZ_MAX_ROWS", "50")
    monkeypatch.setenv("CALIBVIZ_MAX_CELLS", "1e3")
    lim = resolve_limits()
    assert lim.max_rows == 50 and lim.max_cells == 1000
    assert resolve_limits({"max_cells": 7}) == ReadLimits(max_rows=50, max_cells=7)  # keyword over environment
    with pytest.raises(cv.InputError, match="CALIBVIZ_MAX_ROWS=.*not a positive integer"):
        monkeypatch.setenv("CALIBVIZ_MAX_ROWS", "lots")
        resolve_limits()
    with pytest.raises(cv.InputError, match="unknown read limit"):
        resolve_limits({"max_lines": 3})
    with pytest.raises(cv.InputError, match="positive integer"):
        ReadLimits(max_rows=0)


def test_environment_variable_reaches_library_and_cli(monkeypatch, tmp_path, capsys):
    path = tmp_path / "p.csv"
    path.write_bytes(_csv(100))
    monkeypatch.setenv("CALIBVIZ_MAX_ROWS", "50")
    with pytest.raises(cv.InputError, match=r"100 data lines, above the limit of 50 \(CALIBVIZ_MAX_ROWS\)"):
        cv.load_predictions(path)
    assert cli_main(["info", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "CALIBVIZ_MAX_ROWS" in err and "Traceback" not in err
    assert cv.load_predictions(path, limits={"max_rows": 100}).n == 100  # raised per call


# ---- delimited text and gzip ----

def test_device_path_is_refused():
    with pytest.raises(cv.InputError, match="not a regular file"):
        read_table("/dev/zero")  # st_size 0, endless: used to read until memory ran out


def test_csv_rows_and_cells_are_checked_before_parsing():
    data = _csv(100)
    assert read_table(data, limits={"max_rows": 100}).frame.shape == (100, 2)
    with pytest.raises(cv.InputError, match="above the limit of 99 .CALIBVIZ_MAX_ROWS.; raise the limit") as info:
        read_table(data, limits={"max_rows": 99})
    assert "calibviz.scan(path)" in str(info.value) and "--engine duckdb" in str(info.value)  # the out-of-core path
    with pytest.raises(cv.InputError, match=r"200 cells.*CALIBVIZ_MAX_CELLS"):
        read_table(data, limits={"max_cells": 199})
    no_final_newline = data.rstrip(b"\n")
    with pytest.raises(cv.InputError, match="CALIBVIZ_MAX_ROWS"):
        read_table(no_final_newline, limits={"max_rows": 99})
    with pytest.raises(cv.InputError, match="CALIBVIZ_MAX_ROWS"):  # old Mac line ends count too
        read_table(data.replace(b"\n", b"\r"), limits={"max_rows": 99})
    assert read_table(data.replace(b"\n", b"\r"), limits={"max_columns": 2}).frame.shape == (100, 2)


def test_wide_header_is_refused_before_parsing():
    # 10^5 columns in a 5 MB CSV used to take ~20 s to read and map; the header is counted first.
    k = 100_000
    header = "label,p," + ",".join(f"f{i}" for i in range(k)) + "\n"
    data = (header + "".join(f"{i % 2},0.5," + ",".join(["1"] * k) + "\n" for i in range(20))).encode()
    t0 = time.perf_counter()
    with pytest.raises(cv.InputError, match=r"100,002 columns in its header, above the limit of 30,000 "
                                            r"\(CALIBVIZ_MAX_COLUMNS\)"):
        read_table(data)
    assert time.perf_counter() - t0 < 1
    with pytest.raises(cv.InputError, match=r"declares 3 columns, above the limit of 2 \(CALIBVIZ_MAX_COLUMNS\)"):
        buf = io.BytesIO()
        pd.read_csv(io.BytesIO(_csv(20))).assign(x=1).to_parquet(buf)
        read_table(buf.getvalue(), name="x.parquet", limits={"max_columns": 2})


def test_gzip_is_counted_while_decompressing(tmp_path):
    path = crafted.csv_gz_bomb(tmp_path, 50_000_000)  # 50 MB of "0,0.5" lines, 8.3 million rows
    t0 = time.perf_counter()
    with pytest.raises(cv.InputError, match=r"more than 1,000 rows \(counted while decompressing.*CALIBVIZ_MAX_ROWS"):
        read_table(path, limits={"max_rows": 1000})
    assert time.perf_counter() - t0 < 2  # stopped at the first megabyte, not after 50
    long = crafted.csv_gz_long_lines(tmp_path, 5_000_000)
    with pytest.raises(cv.InputError, match=r"decompresses to more data, above the limit of 1 MiB \(CALIBVIZ_MAX_DECOMPRESSED_BYTES\)"):
        read_table(long, limits={"max_decompressed_bytes": 1 << 20})
    ok = gzip.compress(_csv(50))
    assert cv.load_predictions(ok, name="ok.csv.gz", limits={"max_rows": 50}).n == 50
    with pytest.raises(cv.InputError, match="corrupt gzip"):
        read_table(ok[:-20] + b"\x00" * 20, name="cut.csv.gz")


def test_gzipped_parquet_still_reads():
    buf = io.BytesIO()
    pd.read_csv(io.BytesIO(_csv(30))).to_parquet(buf, index=False)
    assert cv.load_predictions(gzip.compress(buf.getvalue()), name="x.parquet.gz").n == 30


# ---- Parquet ----

def test_parquet_metadata_is_checked_before_reading(tmp_path):
    path = crafted.parquet_constant_rows(tmp_path, 2_000_000)
    t0 = time.perf_counter()
    with pytest.raises(cv.InputError, match=r"declares 2,000,000 rows, above the limit of 1,000,000 \(CALIBVIZ_MAX_ROWS\)"):
        read_table(path, limits={"max_rows": 1_000_000})
    with pytest.raises(cv.InputError, match=r"4,000,000 cells.*CALIBVIZ_MAX_CELLS"):
        read_table(path, limits={"max_cells": 3_999_999})
    assert time.perf_counter() - t0 < 1
    with pytest.raises(cv.InputError, match="declares .* of column data.*CALIBVIZ_MAX_DECOMPRESSED_BYTES"):
        read_table(path, limits={"max_decompressed_bytes": 1000})


def test_parquet_dictionary_strings_are_measured_before_expanding(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = 200_000  # one 2 kB string, repeated: 400 MB once expanded, 2 kB of dictionary in the file
    text = pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int32)), pa.array(["x" * 2000]))
    table = pa.table({"label": pa.array(np.arange(n) % 2), "p": pa.array(np.full(n, 0.5)), "note": text})
    path = tmp_path / "strings.parquet"
    pq.write_table(table, path, store_schema=False)  # a plain string column, dictionary-encoded in the pages
    assert path.stat().st_size < 200_000
    with pytest.raises(cv.InputError, match=r"expands to 40\d MB when read.*CALIBVIZ_MAX_DECOMPRESSED_BYTES"):
        read_table(path, limits={"max_decompressed_bytes": 100 * 1024**2})
    small = tmp_path / "small.parquet"
    pq.write_table(table.slice(0, 1000), small, store_schema=False)
    got = read_table(small).frame
    assert got["note"].iloc[0] == "x" * 2000 and not isinstance(got["note"].dtype, pd.CategoricalDtype)


# ---- Excel ----

def test_xlsx_far_cell_is_not_expanded(tmp_path):
    # One value at XFD1048576: the declared range is 1.7e10 cells, the sheet stores 3.
    for dimension in ("A1:XFD1048576", None, "A1"):
        path = crafted.xlsx_far_cell(tmp_path, dimension=dimension)
        t0 = time.perf_counter()
        frame = read_table(path).frame
        assert time.perf_counter() - t0 < 10
        assert list(frame.columns) == ["label", "p", ""] and frame.shape == (1, 3)  # no 16384-column frame
    with pytest.raises(cv.InputError, match="the label column 'label' is empty"):
        cv.load_predictions(path)


def test_xlsx_sizes_from_the_zip_directory(tmp_path):
    path = crafted.xlsx_huge_string(tmp_path, n_bytes=3_000_000)
    assert path.stat().st_size < 50_000
    t0 = time.perf_counter()
    with pytest.raises(cv.InputError, match=r"shared-strings table is 3 MB uncompressed.*CALIBVIZ_MAX_XLSX_PART_BYTES"):
        read_table(path, limits={"max_xlsx_part_bytes": 2_000_000})
    inline = crafted.xlsx_huge_string(tmp_path, n_bytes=3_000_000, shared=False)
    with pytest.raises(cv.InputError, match=r"part xl/worksheets/sheet1.xml is 3 MB.*CALIBVIZ_MAX_XLSX_PART_BYTES"):
        read_table(inline, limits={"max_xlsx_part_bytes": 2_000_000})
    with pytest.raises(cv.InputError, match=r"decompresses to 3 MB.*CALIBVIZ_MAX_DECOMPRESSED_BYTES"):
        read_table(inline, limits={"max_decompressed_bytes": 2_000_000})
    assert time.perf_counter() - t0 < 1


def test_xlsx_shared_string_count_is_checked(tmp_path):
    # openpyxl makes every shared string a Python object on opening: 8 million of them (21 MB zipped)
    # took 200 s and 1.4 GB. The <si> elements are counted first.
    sst = ['<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/'
           '2006/main">', "".join(f"<si><t>s{i}</t></si>" for i in range(3000)), "</sst>"]
    cells = [crafted._header_row(), '<row r="2"><c r="A2"><v>1</v></c><c r="B2" t="s"><v>0</v></c></row>']
    path = crafted.xlsx(tmp_path / "strings.xlsx", cells, dimension="A1:B2", shared_string_pieces=sst)
    with pytest.raises(cv.InputError, match=r"shared-strings table holds more than 2,000 strings.*"
                                            r"CALIBVIZ_MAX_EXCEL_CELLS"):
        read_table(path, limits={"max_excel_cells": 2000})
    assert read_table(path, limits={"max_excel_cells": 3000}).frame["p"].tolist() == ["s0"]


def test_xlsx_bloated_styles_are_refused(tmp_path):
    import zipfile

    path = crafted.xlsx(tmp_path / "styles.xlsx", [crafted._header_row()], dimension="A1:B1")
    xf = '<xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>'
    with zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED) as zf:  # 250,000 formats: ~15 s and 360 MB in openpyxl
        zf.writestr("xl/styles.xml", '<?xml version="1.0"?><styleSheet xmlns="http://schemas.openxmlformats.org/'
                    'spreadsheetml/2006/main"><cellXfs>' + xf * 250_000 + "</cellXfs></styleSheet>")
    t0 = time.perf_counter()
    with pytest.raises(cv.InputError, match=r"its part xl/styles.xml is 1\d.\d MB of XML .*re-save it as .xlsx"):
        read_table(path)
    assert time.perf_counter() - t0 < 2


@pytest.mark.parametrize("dimension", [True, False])
def test_xlsx_cells_declared_or_counted(tmp_path, dimension):
    path = crafted.xlsx_many_rows(tmp_path, 30_000, dimension=dimension)
    t0 = time.perf_counter()
    with pytest.raises(cv.InputError, match=r"sheet 'Sheet1' .*(spans A1:B30001|stores more than 20,000).*"
                                            r"CALIBVIZ_MAX_EXCEL_CELLS.*save the sheet as CSV"):
        read_table(path, limits={"max_excel_cells": 20_000})
    assert time.perf_counter() - t0 < 2
    assert read_table(path, limits={"max_excel_cells": 60_002}).frame.shape == (30_000, 2)


def test_xlsx_whose_dimension_lies_is_stopped_while_streaming(tmp_path):
    # The dimension claims one cell; the counter of the streamed rows is the second line of defence.
    rows = "".join(f'<row r="{i}"><c r="A{i}"><v>{i % 2}</v></c><c r="B{i}"><v>0.5</v></c></row>'
                   for i in range(2, 3002))
    path = crafted.xlsx(tmp_path / "liar.xlsx", [crafted._header_row(), rows], dimension="A1")
    with pytest.raises(cv.InputError, match=r"holds more than 5,000 cells \(2,501 non-empty rows by 2 columns"):
        read_table(path, limits={"max_excel_cells": 5000})
    with pytest.raises(cv.InputError, match=r"more than 2,000 rows.*CALIBVIZ_MAX_ROWS") as info:
        read_table(path, limits={"max_rows": 2000})
    assert "scan" not in str(info.value)  # cv.scan reads CSV and Parquet, not Excel
    assert cv.load_predictions(path).n == 3000


def test_xlsx_rows_beyond_excel_are_refused(tmp_path):
    row = '<row r="5000000"><c r="A5000000"><v>1</v></c></row>'
    path = crafted.xlsx(tmp_path / "beyond.xlsx", [crafted._header_row(), row], dimension=None)
    with pytest.raises(cv.InputError, match="beyond Excel's last row"):
        read_table(path)


def test_xlsx_written_by_pandas_still_reads(tmp_path):
    df = pd.DataFrame({"label": ["a", "b"] * 10, "p_a": [0.6, 0.3] * 10, "p_b": [0.4, 0.7] * 10,
                       "when": pd.date_range("2024-01-01", periods=20), "flag": [True, False] * 10})
    path = tmp_path / "two.xlsx"
    with pd.ExcelWriter(path) as xw:
        pd.DataFrame({"x": [1]}).to_excel(xw, sheet_name="notes", index=False)
        df.to_excel(xw, sheet_name="preds", index=False, startrow=2)  # two blank rows above the header
    for sheet in ("preds", 1, "1"):
        p = cv.load_predictions(path, sheet=sheet)
        assert p.classes == ("a", "b") and p.n == 20
        assert p.features["flag"].dtype == bool and str(p.features["when"].dtype).startswith("datetime64")
    with pytest.raises(cv.InputError, match="there is no sheet 'nope'; its sheets are 'notes', 'preds'"):
        cv.load_predictions(path, sheet="nope")


def test_xls_and_plain_zip_get_the_right_advice(tmp_path):
    ole = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504)
    with pytest.raises(cv.InputError, match=r"legacy Excel 97-2003 workbook \(.xls\).*save it as .xlsx") as info:
        cv.load_predictions(ole, name="old.xls")
    assert "pip install" not in str(info.value)
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("preds.csv", _csv(20))
    with pytest.raises(cv.InputError, match="is a zip archive, not an Excel workbook.*'preds.csv'.*unzip it"):
        cv.load_predictions(buf.getvalue(), name="preds.zip")
    ods = io.BytesIO()
    with zipfile.ZipFile(ods, "w") as zf:
        zf.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet")
        zf.writestr("content.xml", "<office:document-content/>")
    with pytest.raises(cv.InputError, match=r"OpenDocument spreadsheet \(.ods\).*save it as .xlsx or CSV"):
        cv.load_predictions(ods.getvalue(), name="preds.ods")


def test_utf16_without_bom_is_named():
    text = "label,p\n" + "".join(f"{i % 2},0.5\n" for i in range(20))
    for codec in ("utf-16-le", "utf-16-be"):
        with pytest.raises(cv.InputError, match=f"UTF-16 text without a byte-order mark .*; pass encoding='{codec}'") as info:
            cv.load_predictions(text.encode(codec), name="u16.csv")
        assert "latin-1" not in str(info.value)
        assert cv.load_predictions(text.encode(codec), encoding=codec).n == 20
    assert cv.load_predictions(text.encode("utf-16")).n == 20  # with BOM: recognised


# ---- the issue's files, at full size, under a memory cap ----

_CAP = 1_500_000_000  # bytes of address space, interpreter and libraries included
_CHILD = textwrap.dedent("""
    import json, resource, sys, time
    resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap}))
    import calibviz as cv
    out = {{}}
    for path in sys.argv[1:]:
        t0 = time.perf_counter()
        try:
            p = cv.load_predictions(path)
            result = ["loaded", p.n]
        except cv.InputError as exc:
            result = ["refused", str(exc)]
        except MemoryError:
            result = ["MemoryError", ""]
        out[path] = result + [time.perf_counter() - t0]
    out["maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))
""")


def _run_capped(paths, timeout=240) -> dict:
    # pyarrow's default pool (mimalloc) reserves ~1 GB of address space at its first allocation: virtual, not
    # memory, but RLIMIT_AS counts it, and whether it fits under the cap depended on what the process had mapped
    # before (with scipy imported at start it did not, and mimalloc fell back to small reservations). The system
    # allocator makes the cap count what the loads really allocate.
    env = {**os.environ, "ARROW_DEFAULT_MEMORY_POOL": "system"}
    proc = subprocess.run([sys.executable, "-c", _CHILD.format(cap=_CAP), *map(str, paths)], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_issue_files_under_a_memory_cap(tmp_path):
    """Each file of the issue, with the default limits, in a process capped at 1.5 GB of address space."""
    expected = {  # builder -> fragment of the refusal (None: loads or gives an ordinary InputError)
        "xlsx_far_cell": "the label column 'label' is empty",
        "xlsx_far_cell_no_dimension": "the label column 'label' is empty",
        "xlsx_huge_shared_string": "(CALIBVIZ_MAX_XLSX_PART_BYTES)",
        "xlsx_huge_inline_string": "(CALIBVIZ_MAX_XLSX_PART_BYTES)",
        "parquet_constant_rows": "declares 50,000,000 rows, above the limit of 10,000,000 (CALIBVIZ_MAX_ROWS)",
        "csv_gz_bomb": "above the limit of 10,000,000 (CALIBVIZ_MAX_ROWS)",
        "csv_gz_long_lines": "(CALIBVIZ_MAX_DECOMPRESSED_BYTES)",
        "xlsx_many_rows": "(CALIBVIZ_MAX_EXCEL_CELLS)",
        "xlsx_many_rows_no_dimension": "(CALIBVIZ_MAX_EXCEL_CELLS)",
    }
    builders = dict(crafted.ISSUE_FILES)  # the issue's 1 GB strings and text, above the limits and quicker to build:
    builders["xlsx_huge_shared_string"] = lambda d: crafted.xlsx_huge_string(d, n_bytes=300_000_000)
    builders["xlsx_huge_inline_string"] = lambda d: crafted.xlsx_huge_string(d, n_bytes=300_000_000, shared=False)
    builders["csv_gz_long_lines"] = lambda d: crafted.csv_gz_long_lines(d, 600_000_000)
    paths = {}
    for key in expected:
        folder = tmp_path / key
        folder.mkdir()
        paths[key] = builders[key](folder)
    # Normal files must still load under the same cap.
    rng = np.random.default_rng(0)
    n = 100_000
    p = rng.uniform(size=n)
    normal = pd.DataFrame({"label": rng.binomial(1, p), "p": p, "age": rng.integers(18, 90, n),
                           "city": rng.choice(["a", "b", "c"], n)})
    paths["normal_csv"] = tmp_path / "normal.csv"
    normal.to_csv(paths["normal_csv"], index=False)
    paths["normal_parquet"] = tmp_path / "normal.parquet"
    normal.to_parquet(paths["normal_parquet"], index=False)
    paths["normal_csv_gz"] = tmp_path / "normal.csv.gz"
    paths["normal_csv_gz"].write_bytes(gzip.compress(normal.to_csv(index=False).encode()))
    paths["normal_xlsx"] = tmp_path / "normal.xlsx"
    normal.head(5000).to_excel(paths["normal_xlsx"], index=False)

    for key, path in paths.items():
        assert path.stat().st_size < 3_000_000, key  # small files, all of them
    # One capped process loads them all in turn (each file's time is measured on its own): a child per file
    # re-imported calibviz 13 times (~25 s of the test). Memory a load leaves behind only tightens the cap for the next.
    results = _run_capped(list(paths.values()), timeout=60 + 30 * len(paths))
    for key, path in paths.items():
        got = results[str(path)]
        kind, message, seconds = got
        assert seconds < 30, (key, seconds)
        if key.startswith("normal"):
            assert kind == "loaded" and message == (5000 if key == "normal_xlsx" else n), (key, got)
        else:
            assert kind == "refused" and expected[key] in message, (key, got)


def test_xml_entity_expansion_is_refused(tmp_path):
    import zipfile

    lol = ('<!DOCTYPE lolz [<!ENTITY lol0 "lolololololololololol">'
           + "".join(f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, 10)) + "]>")
    path = crafted.xlsx(tmp_path / "laughs.xlsx", [crafted._header_row(),
                        '<row r="2"><c r="A2" t="inlineStr"><is><t>&lol9;</t></is></c></row>'], dimension="A1:B2")
    with zipfile.ZipFile(path) as zf:
        parts = {i.filename: zf.read(i.filename) for i in zf.infolist()}
    sheet = parts["xl/worksheets/sheet1.xml"].decode().replace("?>\n", "?>\n" + lol, 1)
    parts["xl/worksheets/sheet1.xml"] = sheet.encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for part, blob in parts.items():
            zf.writestr(part, blob)
    t0 = time.perf_counter()
    with pytest.raises(cv.InputError, match="not a readable Excel workbook.*amplification"):
        read_table(path)  # expat's billion-laughs guard (expat >= 2.4), reported as unreadable
    assert time.perf_counter() - t0 < 5


def test_readme_names_every_limit():
    from dataclasses import fields

    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Limits"):]
    section = section[:section.index("\n## ", 5)]
    for f in fields(ReadLimits):
        assert f"`{f.name}`" in section and f"`{ReadLimits.env_name(f.name)}`" in section, f.name
        default = getattr(ReadLimits(), f.name)
        shown = f"{default // 1024**2} MiB" if f.name.endswith("_bytes") else f"{default:,}"
        assert shown in section, (f.name, shown)
