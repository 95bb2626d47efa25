"""Regenerate the catalogue of malformed inputs (python tests/data/bad/make_bad.py).

Every file here must make ``calibviz.load_predictions`` raise
``calibviz.InputError`` whose message contains the fragment listed in
catalogue.json (plus the keyword arguments listed there, if any). The files are
hand-made for this purpose (no third-party data).
"""
import gzip
import io
import json
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
rng = np.random.default_rng(7)
ok_rows = "".join(f"{i % 2},{0.2 + 0.6 * (i % 2):.2f}\n" for i in range(20))
cases: dict[str, dict] = {}


def text(name, content, expect, encoding="utf-8", **kwargs):
    (HERE / name).write_bytes(content.encode(encoding) if isinstance(content, str) else content)
    cases[name] = {"expect": expect, "kwargs": kwargs}


text("empty.csv", "", "is empty")
text("whitespace_only.csv", "  \n \n", "is empty")
text("header_only.csv", "label,p\n", "no data rows")
text("no_label_column.csv", "a,b\n" + ok_rows, "no label column found")
text("no_probability_column.csv", "label,age\n" + ok_rows, "no probability columns found")
text("wrong_delimiter_colon.csv", "label:p\n" + ok_rows.replace(",", ":"), "pass delimiter=':'")
text("only_one_column.csv", "label\n" + "0\n1\n" * 10, "single column")
text("latin1_encoding.csv", "label,p,city\n" + "".join(f"{i % 2},0.5,Mal\u00e9\n" for i in range(20)),
     "not UTF-8", encoding="latin-1")
text("ragged_rows.csv", "label,p\n0,0.2\n1,0.7,extra\n" + ok_rows, "could not be parsed")
text("duplicate_columns.csv", "label,p,p\n" + "".join(f"{i % 2},0.5,0.5\n" for i in range(20)),
     "duplicated column names")
text("label_not_in_classes.csv", "label,p_a,p_b\n" + "a,0.6,0.4\nb,0.3,0.7\n" * 10 + "c,0.5,0.5\n",
     "not among the classes")
# one class of a binary label is a log to analyse (with a note); of three classes it is refused
text("single_class.csv", "label,p_a,p_b,p_c\n" + "a,0.5,0.3,0.2\n" * 20, "only one class")
text("prob_above_one.csv", "label,p\n" + ok_rows + "1,1.5\n0,2\n", "must lie in [0, 1]")
text("prob_negative.csv", "label,p\n" + ok_rows + "0,-0.1\n", "must lie in [0, 1]")
text("prob_nan.csv", "label,p\n" + ok_rows + "0,\n1,NaN\n", "NaN or infinite")
text("prob_inf.csv", "label,p\n" + ok_rows + "0,inf\n", "NaN or infinite")
text("prob_text.csv", "label,p\n" + ok_rows + "0,high\n", "non-numeric")
text("rows_not_summing_to_one.csv", "label,p_a,p_b,p_c\n" + "a,0.5,0.3,0.1\nb,0.2,0.6,0.2\nc,0.3,0.3,0.4\n" * 5,
     "must sum to 1")
text("binary_two_columns_not_summing.csv", "label,p_0,p_1\n" + "0,0.7,0.2\n1,0.3,0.9\n" * 10, "must sum to 1")
text("too_few_rows.csv", "label,p\n0,0.1\n1,0.9\n0,0.3\n1,0.6\n0,0.2\n", "at least 10")
text("negative_weight.csv", "label,p,weight\n" + "".join(f"{i % 2},0.5,1\n" for i in range(20)) + "1,0.5,-2\n",
     "negative")
text("nan_weight.csv", "label,p,weight\n" + "".join(f"{i % 2},0.5,1\n" for i in range(20)) + "1,0.5,\n",
     "NaN or infinite")
text("zero_weights.csv", "label,p,weight\n" + "".join(f"{i % 2},0.5,0\n" for i in range(20)), "zero everywhere")
text("missing_labels.csv", "label,p\n" + ok_rows + ",0.5\n", "is empty in 1 row")
text("three_labels_one_probability.csv", "label,p\n" + "0,0.2\n1,0.7\n2,0.5\n" * 5,
     "describes a binary problem")
text("ambiguous_positive_class.csv", "label,p\n" + "cat,0.2\ndog,0.7\n" * 10, "pass positive=")
text("positive_not_a_label.csv", "label,p\n" + ok_rows, "not among the labels", positive="yes")
text("label_override_missing.csv", "label,p\n" + ok_rows, "is not in the file", label="target")
text("probs_override_missing.csv", "label,p\n" + ok_rows, "not in the file", probs="score")
text("model_with_too_few_rows.csv",
     "label,p,model\n" + "".join(f"{i % 2},0.5,a\n" for i in range(20)) + "0,0.5,b\n1,0.5,b\n", "has 2 rows")
text("python_pickle.pkl", pickle.dumps(pd.DataFrame({"label": [0, 1], "p": [0.1, 0.9]}), protocol=4),
     "pickle")
text("corrupt.parquet", b"PAR1" + rng.bytes(200), "no complete Parquet file")
text("corrupt.xlsx", b"PK\x03\x04" + rng.bytes(200), "not a readable Excel")
text("binary_garbage.bin", b"\x00\x01\x02" + rng.bytes(300), "unsupported type")
text("corrupt_gzip.csv.gz", b"\x1f\x8b" + rng.bytes(100), "corrupt gzip")
text("over_size_limit.csv", "label,p\n" + ok_rows, "over the", max_bytes=64)
buf = io.BytesIO()
with pd.ExcelWriter(buf, engine="openpyxl") as xw:
    pd.DataFrame().to_excel(xw, sheet_name="empty", index=False)
text("empty_sheet.xlsx", buf.getvalue(), "empty first sheet")
text("logits_without_flag.csv", "label,p\n" + "".join(f"{i % 2},{(-3 + 0.3 * i):.2f}\n" for i in range(20)),
     "pass logits=True")
# A decimal comma is detected since #16 (read with decimal=','); forcing a decimal point gets the advice.
text("decimal_comma.csv", "label;p\n" + "".join(f"{i % 2};0,{2 + 5 * (i % 2)}5\n" for i in range(20)),
     "decimal comma: pass decimal=','", decimal=".")
text("multiclass_labels_unmatched.csv", "label,p_a,p_b\n" + "a,0.6,0.4\nb,0.3,0.7\nz,0.5,0.5\n" * 5,
     "not among the classes")
# Issue #16: formats that used to escape as TypeError / MemoryError or get the wrong advice.
text("legacy_excel.xls", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504), "save it as .xlsx")
text("utf16_without_bom.csv", "label,p\n" + ok_rows, "without a byte-order mark", encoding="utf-16-le")
zbuf = io.BytesIO()
with zipfile.ZipFile(zbuf, "w") as zf:
    zf.writestr(zipfile.ZipInfo("preds.csv", date_time=(2026, 1, 1, 0, 0, 0)), "label,p\n" + ok_rows)
text("zipped_csv.zip", zbuf.getvalue(), "is a zip archive")
pbuf = io.BytesIO()
pq.write_table(pa.table({"label": pa.array([[i % 2] for i in range(20)]),
                         "p": [0.2 + 0.6 * (i % 2) for i in range(20)]}), pbuf)
text("parquet_list_label.parquet", pbuf.getvalue(), "holds list")
xbuf = io.BytesIO()
with zipfile.ZipFile(xbuf, "w", zipfile.ZIP_DEFLATED) as zf:
    # One value at XFD1048576, the last cell of a sheet: used to expand to 1.7e10 cells (9.8 GB).
    parts = {
        "[Content_Types].xml": '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/'
        'package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
        'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/'
        'workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
        '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.'
        'spreadsheetml.worksheet+xml"/></Types>',
        "_rels/.rels": '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/'
        'package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/'
        '2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>',
        "xl/workbook.xml": '<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/'
        'spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
        '<sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>',
        "xl/_rels/workbook.xml.rels": '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.'
        'openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.'
        'org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>',
        "xl/worksheets/sheet1.xml": '<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.'
        'openxmlformats.org/spreadsheetml/2006/main"><dimension ref="A1:XFD1048576"/><sheetData><row r="1">'
        '<c r="A1" t="inlineStr"><is><t>label</t></is></c><c r="B1" t="inlineStr"><is><t>p</t></is></c></row>'
        '<row r="1048576"><c r="XFD1048576"><v>1</v></c></row></sheetData></worksheet>',
    }
    for part, xml in parts.items():
        zf.writestr(zipfile.ZipInfo(part, date_time=(2026, 1, 1, 0, 0, 0)), xml, zipfile.ZIP_DEFLATED)
text("xlsx_far_stray_cell.xlsx", xbuf.getvalue(), "the label column 'label' is empty")
(HERE / "catalogue.json").write_text(json.dumps(cases, indent=1, sort_keys=True) + "\n")
print(len(cases), "cases")
