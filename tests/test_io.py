"""calibviz.io: reading every format, detecting the mapping, building Predictions."""
from __future__ import annotations

import gzip
import io
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import softmax

import calibviz as cv
from calibviz.io import detect_mapping, read_table
from calibviz.io.loading import predictions_from_frame


def _frame(n=40, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.05, 0.95, n)
    return pd.DataFrame({"label": rng.binomial(1, p), "p": p, "age": rng.integers(20, 80, n),
                         "city": rng.choice(["a", "b"], n)})


@pytest.mark.parametrize("name", cv.demo_datasets())
def test_every_demo_loads_from_its_file(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # multi-model demo warns that it returns the first model
        p = cv.load_predictions(cv.demo_path(name))
    assert isinstance(p, cv.Predictions) and p.n >= 1000
    np.testing.assert_allclose(p.probs.sum(axis=1), 1.0, atol=1e-12)
    assert p.y.dtype == np.int64 and p.probs.dtype == np.float64


@pytest.mark.parametrize("name", cv.demo_datasets())
@pytest.mark.parametrize("fmt", ["csv", "tsv", "parquet", "xlsx", "csv.gz"])
def test_demo_roundtrips_through_every_format(tmp_path, name, fmt):
    frame = read_table(cv.demo_path(name)).frame
    if fmt == "xlsx":
        frame = frame.head(400)  # Excel writing is slow; the format path is what is tested
    path = tmp_path / f"demo.{fmt}"
    if fmt == "csv":
        frame.to_csv(path, index=False)
    elif fmt == "tsv":
        frame.to_csv(path, index=False, sep="\t")
    elif fmt == "parquet":
        frame.to_parquet(path, index=False)
    elif fmt == "xlsx":
        frame.to_excel(path, index=False)
    else:
        path.write_bytes(gzip.compress(frame.to_csv(index=False).encode()))
    models = cv.load_models(path)
    expected = cv.load_models(cv.demo_path(name))
    assert list(models) == list(expected) or len(models) == len(expected)
    for got, ref in zip(models.values(), expected.values()):
        assert got.classes == ref.classes
        np.testing.assert_allclose(got.probs, ref.probs[: got.n], rtol=0, atol=1e-12)
        np.testing.assert_array_equal(got.y, ref.y[: got.n])
        assert list(got.features.columns) == list(ref.features.columns)


def test_sources_path_bytes_and_filelike_agree(tmp_path):
    df = _frame()
    data = df.to_csv(index=False).encode()
    path = tmp_path / "x.csv"
    path.write_bytes(data)
    a = cv.load_predictions(path)
    b = cv.load_predictions(data)
    c = cv.load_predictions(io.BytesIO(data))
    d = cv.load_predictions(str(path))
    for other in (b, c, d):
        np.testing.assert_array_equal(a.probs, other.probs)
        np.testing.assert_array_equal(a.y, other.y)


def test_binary_single_column_maps_positive_to_column_1():
    df = _frame()
    p = cv.predictions_from_frame(df)["model"]
    assert p.classes == (0, 1) and p.is_binary
    np.testing.assert_allclose(p.y_prob, df["p"])
    np.testing.assert_array_equal(p.y, df["label"])
    assert list(p.features.columns) == ["age", "city"]
    assert p.numeric_features == ["age"] and p.categorical_features == ["city"]


@pytest.mark.parametrize("labels,positive", [(["no", "yes"], "yes"), ([False, True], True), (["neg", "pos"], "pos")])
def test_positive_class_is_inferred_for_common_label_pairs(labels, positive):
    df = pd.DataFrame({"target": labels * 10, "score": [0.3, 0.8] * 10})
    p = cv.predictions_from_frame(df)["model"]
    assert p.positive_label == positive
    np.testing.assert_allclose(p.y_prob, df["score"])


def test_positive_class_from_column_suffix_and_override():
    df = pd.DataFrame({"label": ["cat", "dog"] * 10, "p_dog": [0.3, 0.8] * 10})
    assert cv.predictions_from_frame(df)["model"].positive_label == "dog"
    df2 = pd.DataFrame({"label": ["cat", "dog"] * 10, "prob": [0.7, 0.2] * 10})
    p = cv.predictions_from_frame(df2, positive="cat")["model"]
    assert p.classes == ("dog", "cat")
    np.testing.assert_array_equal(p.y, [1, 0] * 10)


@pytest.mark.parametrize("prefix", ["p_", "prob_", "proba_", "probability_", "p-", "prob."])
def test_per_class_prefixes(prefix):
    k = ["ant", "bee", "cow"]
    P = softmax(np.random.default_rng(1).normal(size=(30, 3)), axis=1)
    df = pd.DataFrame(P, columns=[prefix + c for c in k])
    df.insert(0, "label", np.array(k)[np.arange(30) % 3])
    p = cv.predictions_from_frame(df)["model"]
    assert p.classes == tuple(k)
    np.testing.assert_allclose(p.probs, P)


def test_columns_named_as_labels_and_integer_suffixes():
    P = softmax(np.random.default_rng(2).normal(size=(30, 3)), axis=1)
    df = pd.DataFrame(P, columns=["red", "green", "blue"])
    df["y"] = np.array(["blue", "red", "green"])[np.arange(30) % 3]
    p = cv.predictions_from_frame(df)["model"]
    assert p.classes == ("red", "green", "blue")
    assert p.y[0] == 2
    df2 = pd.DataFrame(P, columns=["prob_0", "prob_1", "prob_2"])
    df2["label"] = np.arange(30) % 3
    p2 = cv.predictions_from_frame(df2)["model"]
    assert p2.classes == (0, 1, 2)
    np.testing.assert_array_equal(p2.y, np.arange(30) % 3)


def test_integer_labels_as_column_positions_are_noted():
    P = softmax(np.random.default_rng(3).normal(size=(30, 3)), axis=1)
    df = pd.DataFrame(P, columns=["p_airplane", "p_bird", "p_cat"])
    df["label"] = np.arange(30) % 3
    p = cv.predictions_from_frame(df)["model"]
    assert p.classes == ("airplane", "bird", "cat")
    assert any("positions" in n for n in p.notes)


def test_binary_two_columns():
    df = pd.DataFrame({"label": [0, 1] * 10, "p_0": [0.7, 0.2] * 10, "p_1": [0.3, 0.8] * 10})
    p = cv.predictions_from_frame(df)["model"]
    np.testing.assert_allclose(p.y_prob, df["p_1"])


def test_logits_sigmoid_and_softmax():
    z = np.linspace(-3, 3, 20)
    df = pd.DataFrame({"label": [0, 1] * 10, "p": z})
    p = cv.predictions_from_frame(df, logits=True)["model"]
    np.testing.assert_allclose(p.y_prob, 1 / (1 + np.exp(-z)))
    Z = np.random.default_rng(4).normal(size=(20, 3)) * 4
    df3 = pd.DataFrame(Z, columns=["p_a", "p_b", "p_c"])
    df3["label"] = np.array(list("abc"))[np.arange(20) % 3]
    p3 = cv.predictions_from_frame(df3, logits=True)["model"]
    np.testing.assert_allclose(p3.probs, softmax(Z, axis=1))


def test_renormalize_is_explicit():
    df = pd.DataFrame({"label": list("ab") * 10, "p_a": [0.5, 0.2] * 10, "p_b": [0.3, 0.6] * 10})
    with pytest.raises(cv.InputError, match="sum to 1") as err:
        cv.predictions_from_frame(df)
    assert "renormalize=True" not in str(err.value)  # sums of 0.8 are no rounding: the fix is not advised
    p = cv.predictions_from_frame(df, renormalize=True)["model"]
    np.testing.assert_allclose(p.probs[0], [0.625, 0.375])


def test_weights_detected_and_validated():
    df = _frame()
    df["sample_weight"] = np.arange(len(df)) % 3 + 1.0
    p = cv.predictions_from_frame(df)["model"]
    np.testing.assert_array_equal(p.weights, df["sample_weight"])
    assert "sample_weight" not in p.features.columns


def test_long_format_models():
    a, b = _frame(seed=1), _frame(seed=2)
    a["model"], b["model"] = "before", "after"
    models = cv.predictions_from_frame(pd.concat([a, b]))
    assert list(models) == ["before", "after"]
    np.testing.assert_allclose(models["after"].y_prob, b["p"])
    assert "model" not in models["before"].features.columns


def test_wide_model_groups_and_load_predictions_warns():
    df = _frame()
    df = df.rename(columns={"p": "raw__p"})
    df["cal__p"] = np.clip(df["raw__p"] * 0.9, 0, 1)
    models = cv.predictions_from_frame(df)
    assert list(models) == ["raw", "cal"]
    np.testing.assert_allclose(models["cal"].y_prob, df["cal__p"])
    data = df.to_csv(index=False).encode()
    with pytest.warns(UserWarning, match="2 models"):
        first = cv.load_predictions(data)
    assert first.name == "raw"
    assert cv.load_predictions(data, select="cal").name == "cal"
    with pytest.raises(cv.InputError, match="not in the file"):
        cv.load_predictions(data, select="nope")


def test_ids_are_not_features_and_explicit_features():
    df = _frame()
    df.insert(0, "patient_id", range(len(df)))
    df.insert(0, "Unnamed: 0", range(len(df)))
    p = cv.predictions_from_frame(df)["model"]
    assert list(p.features.columns) == ["age", "city"]
    assert list(cv.predictions_from_frame(df, features=["city"])["model"].features.columns) == ["city"]


def test_delimiters_are_sniffed():
    df = _frame()
    for sep in [",", ";", "\t", "|"]:
        p = cv.load_predictions(df.to_csv(index=False, sep=sep).encode())
        np.testing.assert_allclose(p.y_prob, df["p"])


def test_encoding_option_reads_latin1():
    text = "label,p,city\n" + "".join(f"{i % 2},0.5,Malé\n" for i in range(20))
    p = cv.load_predictions(text.encode("latin-1"), encoding="latin-1")
    assert p.features["city"].iloc[0] == "Malé"
    assert cv.load_predictions(b"\xef\xbb\xbf" + text.encode("utf-8")).n == 20  # UTF-8 with BOM


def test_predictions_are_read_only_and_fingerprinted():
    p = cv.load_demo("hospital_readmission")
    with pytest.raises(ValueError):
        p.probs[0, 0] = 0.5
    q = cv.load_demo("hospital_readmission")
    assert p.fingerprint() == q.fingerprint() and len(p.fingerprint()) == 16
    assert p.subset(np.arange(10)).fingerprint() != p.fingerprint()


def test_detect_mapping_reports_what_it_found():
    m = detect_mapping(read_table(cv.demo_path("loan_recalibration")).frame)
    assert m.label == "label" and m.model_names == ("raw", "recalibrated")
    assert m.probs["raw"] == ("raw__p",) and m.is_binary


def test_input_error_is_a_value_error():
    assert issubclass(cv.InputError, ValueError)


@pytest.mark.parametrize("bad,match", [(np.nan, "NaN or infinite"), (np.inf, "NaN or infinite"), (1.5, "lie in"),
                                       (-0.1, "lie in")])
def test_check_multiclass_names_bad_rows(bad, match):
    from calibviz.validation import check_multiclass

    P = np.full((6, 3), 1 / 3)
    P[4, 1] = bad
    with pytest.raises(cv.InputError, match=match) as info:
        check_multiclass(np.zeros(6, dtype=int), P)
    assert "0-based: 4" in str(info.value)


@pytest.mark.parametrize("engine", [None, "duckdb", "polars"])
def test_a_third_class_absent_from_two_labels_is_a_class(tmp_path, engine):
    """p_c0, p_c1, p_c2 whose rows sum to 1 beside labels c0 and c1 only: p_c2 was read as another model's column
    and the file refused as ambiguous (a review); rows that sum to 1 are one model's class probabilities."""
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(3), 200)
    y = np.where(rng.uniform(size=200) < 0.5, "c0", "c1")
    path = tmp_path / "absent.csv"
    pd.DataFrame({"label": y, "p_c0": P[:, 0], "p_c1": P[:, 1], "p_c2": P[:, 2]}).to_csv(path, index=False)
    got = cv.load_predictions(path) if engine is None else cv.scan(str(path), engine=engine)
    assert got.classes == ("c0", "c1", "c2")
    assert got.notes == ("class c2 has a probability column but never occurs in the labels",)


def test_class_never_observed_keeps_its_column():
    rng = np.random.default_rng(0)
    n = 200
    P = rng.dirichlet([5, 5], n) * (1 - 4e-4)
    P = np.c_[P, np.full(n, 4e-4)]
    df = pd.DataFrame(P, columns=["p_cat", "p_dog", "p_bird"])
    df.insert(0, "label", np.where(rng.uniform(size=n) < P[:, 1], "dog", "cat"))
    p = cv.predictions_from_frame(df)["model"]
    assert p.classes == ("cat", "dog", "bird") and list(p.features.columns) == []
    assert any("never occur" in note for note in p.notes)
    np.testing.assert_allclose(p.probs, P / P.sum(axis=1, keepdims=True))


def test_unrelated_p_columns_stay_features():
    rng = np.random.default_rng(1)
    p = rng.uniform(size=50)
    df = pd.DataFrame({"label": rng.binomial(1, p), "p_1": p, "p_value": rng.uniform(size=50)})
    got = cv.predictions_from_frame(df)["model"]
    np.testing.assert_allclose(got.y_prob, p)
    assert list(got.features.columns) == ["p_value"]
    df2 = pd.DataFrame({"label": rng.binomial(1, p), "p": p, "p_value": rng.uniform(size=50),
                        "p_adj": rng.uniform(size=50)})
    got2 = cv.predictions_from_frame(df2)["model"]
    np.testing.assert_allclose(got2.y_prob, p)
    assert set(got2.features.columns) == {"p_value", "p_adj"}


def test_model_column_and_groups_together_is_an_error():
    df = pd.DataFrame({"label": [0, 1] * 10, "model": ["m1", "m2"] * 10, "a__p": [0.3] * 20, "b__p": [0.6] * 20})
    with pytest.raises(cv.InputError, match="both a model column"):
        cv.predictions_from_frame(df)


def test_missing_model_names_are_named():
    df = pd.DataFrame({"label": [0, 1] * 10, "p": [0.3, 0.6] * 10, "model": ["a"] * 19 + [None]})
    with pytest.raises(cv.InputError, match="model column 'model' is empty in 1 row"):
        cv.predictions_from_frame(df)


def test_excel_numeric_header_reads_as_typed(tmp_path):
    P = softmax(np.random.default_rng(2).normal(size=(30, 3)), axis=1)
    df = pd.DataFrame(P, columns=[0, 1, 2])
    df.insert(0, "label", np.arange(30) % 3)
    path = tmp_path / "numeric_header.xlsx"
    df.to_excel(path, index=False)
    p = cv.load_predictions(path)
    assert p.classes == (0, 1, 2)
    np.testing.assert_allclose(p.probs, P)


def test_fingerprint_covers_the_features():
    df = _frame()
    a = cv.predictions_from_frame(df)["model"]
    b = cv.predictions_from_frame(df.rename(columns={"age": "income"}))["model"]
    df2 = df.copy()
    df2.loc[0, "age"] += 1
    c = cv.predictions_from_frame(df2)["model"]
    assert len({a.fingerprint(), b.fingerprint(), c.fingerprint()}) == 3
    assert a.fingerprint() == cv.predictions_from_frame(df)["model"].fingerprint()


# ---- issue #16: unsupported column types, name collisions, signed labels ----

def _parquet(table) -> bytes:
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def test_parquet_list_label_is_named_not_a_type_error():
    import pyarrow as pa

    data = _parquet(pa.table({"label": pa.array([[i % 2] for i in range(20)]), "p": [0.3, 0.7] * 10}))
    with pytest.raises(cv.InputError, match=r"the label column 'label' holds list<.*int64> values; it must hold one "
                                            r"class per row"):
        cv.load_predictions(data, name="lists.parquet")
    only_lists = _parquet(pa.table({"label": pa.array([[i % 2] for i in range(20)]), "p": pa.array([[0.3]] * 20)}))
    with pytest.raises(cv.InputError, match=r"every column holds lists, records or raw bytes \('label' \(list<"):
        cv.load_predictions(only_lists, name="lists.parquet")


def test_nested_feature_columns_are_left_out_with_a_note():
    import pyarrow as pa

    n = 40
    df = _frame(n)
    table = pa.table({**{c: df[c] for c in df.columns}, "emb": pa.array([[0.1, 0.2]] * n),
                      "meta": pa.array([{"a": 1, "b": "x"}] * n), "raw": pa.array([b"\x00\x01"] * n)})
    p = cv.load_predictions(_parquet(table), name="nested.parquet")
    assert list(p.features.columns) == ["age", "city"]
    note = next(n for n in p.notes if "left out of the features" in n)
    assert "'emb' (list<" in note and "'meta' (struct<" in note and "'raw' (binary" in note
    assert len(p.fingerprint()) == 16  # the pages' cache key: used to raise TypeError on lists
    # The same from a DataFrame built in Python (object columns holding lists, dicts, arrays).
    df2 = df.assign(emb=[[1, 2]] * n, meta=[{"a": 1}] * n, arr=[np.zeros(2)] * n)
    q = cv.predictions_from_frame(df2)["model"]
    assert list(q.features.columns) == ["age", "city"]
    assert any("'emb' (lists, e.g. [1, 2])" in note for note in q.notes)
    with pytest.raises(cv.InputError, match="column 'emb' holds lists.*one number"):
        cv.predictions_from_frame(df2, features=["age", "emb"])
    with pytest.raises(cv.InputError, match="the weight column 'w' holds lists"):
        cv.predictions_from_frame(df2.assign(w=[[1.0]] * n), weight="w")


def test_fingerprint_survives_unhashable_features():
    p = cv.Predictions(y=np.array([0, 1]), probs=np.array([[0.8, 0.2], [0.3, 0.7]]), classes=(0, 1),
                       features=pd.DataFrame({"emb": [[1, 2], [3]]}))
    assert len(p.fingerprint()) == 16


@pytest.mark.parametrize("forged", [
    {"columns": 5, "index_columns": []},  # TypeError in to_pandas
    {"index_columns": [{"kind": "range", "start": 0, "stop": 10**12, "step": 1}], "columns": [{"x": 1}]},  # KeyError
    "not json",
])
def test_parquet_with_forged_pandas_metadata_loads_without_it(forged):
    import json

    import pyarrow as pa

    df = _frame()
    table = pa.Table.from_pandas(df, preserve_index=False)
    raw = forged if isinstance(forged, str) else json.dumps(forged)
    table = table.replace_schema_metadata({b"pandas": raw.encode()})
    p = cv.load_predictions(_parquet(table), name="forged.parquet")
    np.testing.assert_allclose(p.y_prob, df["p"])
    assert list(p.features.columns) == ["age", "city"]
    if not isinstance(forged, str):
        assert any("pandas metadata could not be read" in n for n in p.notes)


def test_first_of_label_and_LABEL_wins():
    df = _frame()
    df.insert(1, "LABEL", 1 - df["label"])
    p = cv.predictions_from_frame(df)["model"]
    np.testing.assert_array_equal(p.y, df["label"])
    assert any("'label' is the label (the first of 'label', 'LABEL')" in n for n in p.notes)
    q = cv.predictions_from_frame(df[["LABEL", "label", "p"]])["model"]
    np.testing.assert_array_equal(q.y, df["LABEL"])
    assert detect_mapping(df, label="LABEL").label == "LABEL"


@pytest.mark.parametrize("sep", ["_", "-", "__"])
def test_signed_labels_with_p_minus_one_columns(sep):
    rng = np.random.default_rng(5)
    p1 = rng.uniform(0.05, 0.95, 30)
    y = np.where(rng.uniform(size=30) < p1, 1, -1)
    df = pd.DataFrame({"label": y, f"p{sep}-1": 1 - p1, f"p{sep}1": p1})
    p = cv.predictions_from_frame(df)["model"]
    assert p.classes == (-1, 1)
    np.testing.assert_allclose(p.y_prob, p1)
    np.testing.assert_array_equal(p.y, (y == 1).astype(int))
    single = cv.predictions_from_frame(df[["label", f"p{sep}-1"]])["model"]  # P(-1) alone: -1 is positive
    assert single.positive_label == -1
    np.testing.assert_allclose(single.y_prob, 1 - p1)


def test_nan_and_out_of_range_probabilities_are_named_in_one_message():
    """A walk-through met the rows with 1.2 only after fixing the NaN rows: both kinds are named at once."""
    csv = b"y,p\n1,0.2\n0,nan\n1,1.2\n0,0.3\n1,0.8\n" + b"0,0.4\n" * 10
    with pytest.raises(cv.InputError, match=r"NaN or infinite values in 1 row \(0-based: 1\), and values outside "
                                            r"\[0, 1\] in 1 row \(0-based: 2\); fix, fill or drop those rows"):
        cv.load_predictions(csv)


def test_a_codec_that_refuses_the_file_is_an_input_error():
    """UTF-8 text read as 'utf-16' (offered by the dashboard's Encoding control): the codec raises UnicodeError
    without a position, which reached the page as a traceback and the CLI as an internal error."""
    csv = b"y,p\n" + b"1,0.7\n0,0.2\n" * 10
    with pytest.raises(cv.InputError, match=r"cannot be read as utf-16 text \(UTF-16 stream does not start with "
                                            r"BOM\); pass the file's encoding"):
        cv.load_predictions(csv, encoding="utf-16")


def test_a_workbook_read_on_its_first_of_several_sheets_says_so():
    """Without sheet=..., the first sheet is read: a missing label names the other sheets and the option; a
    successful load notes which sheet was read (a robustness review: nothing mentioned --sheet)."""
    import io as _io

    buf = _io.BytesIO()
    with pd.ExcelWriter(buf) as w:
        pd.DataFrame({"a": [1, 2]}).to_excel(w, sheet_name="notes", index=False)
        pd.DataFrame({"y": [0, 1] * 15, "p": [0.2, 0.7] * 15}).to_excel(w, sheet_name="data", index=False)
        pd.DataFrame({"y": [1, 0] * 15, "p": [0.6, 0.1] * 15}).to_excel(w, sheet_name="old", index=False)
    data = buf.getvalue()
    with pytest.raises(cv.InputError, match=r"first sheet, 'notes'; if the predictions are on another \('data', "
                                            r"'old'\), pass sheet=<name> \(command line: --sheet NAME\)"):
        cv.load_predictions(data, name="book.xlsx")
    assert cv.load_predictions(data, name="book.xlsx", sheet="data").notes == ()  # named: nothing to note
    buf2 = _io.BytesIO()
    with pd.ExcelWriter(buf2) as w:
        pd.DataFrame({"y": [0, 1] * 15, "p": [0.2, 0.7] * 15}).to_excel(w, sheet_name="data", index=False)
        pd.DataFrame({"a": [1, 2]}).to_excel(w, sheet_name="notes", index=False)
    notes = cv.load_predictions(buf2.getvalue(), name="book.xlsx").notes
    assert any("book.xlsx has 2 sheets ('data', 'notes'); the first, 'data', was read" in n for n in notes), notes


def test_frames_with_integer_or_multi_level_column_names():
    """label=0 for a column named 0 was 'not in the file; columns are: '0', '1''; a MultiIndex of columns raised
    AttributeError (a robustness review)."""
    df = pd.DataFrame({0: [0, 1] * 10, 1: [0.3, 0.7] * 10, 2: range(20)})
    p = cv.predictions_from_frame(df, label=0, probs=[1], features=[2])
    assert p["model"].n == 20 and list(p["model"].features.columns) == ["2"]
    assert cv.predictions_from_frame(df, label=0, probs={1: 1})["model"].n == 20  # one name of any type
    df.columns = pd.MultiIndex.from_tuples([("a", "label"), ("a", "p"), ("a", "x")])
    with pytest.raises(cv.InputError, match=r"column names have 2 levels \(a MultiIndex\); flatten them first"):
        cv.predictions_from_frame(df)


def test_a_second_column_named_like_a_label_is_noted():
    """'y' and 'target' both present: 'y' became the label and 'target' a feature, unnoticed (robustness review)."""
    df = pd.DataFrame({"y": [0, 1] * 10, "target": [1, 0] * 10, "p": [0.3, 0.7] * 10})
    notes = cv.predictions_from_frame(df)["model"].notes
    assert ("'y' is the label; 'target' is named like one too and read as a feature: choose another label column "
            "to change it") in notes
    chosen = cv.predictions_from_frame(df, label="target")["model"].notes  # chosen: no rival to note
    assert not any("named like one" in n for n in chosen)
    assert chosen == ("P(1) ranks the rows of class 1 below those of class 0 (AUC 0.000): if the column holds P(0), "
                      "make 0 the positive class",)  # p follows y, the other label: read against 'target' it is reversed
    # common columns that are no rival: a 'class' feature, a boolean label's class columns
    titanic = pd.DataFrame({"target": [0, 1] * 10, "p": [0.3, 0.7] * 10, "class": [1, 2, 3, 1, 2] * 4})
    assert not any("named like one" in n for n in cv.predictions_from_frame(titanic)["model"].notes)
    boolean = pd.DataFrame({"label": [False, True] * 10, "False": [0.7, 0.3] * 10, "True": [0.3, 0.7] * 10})
    assert not any("named like one" in n for n in cv.predictions_from_frame(boolean)["model"].notes)


@pytest.mark.parametrize("data, kind", [(b"<!DOCTYPE html><html><body>model card</body></html>", "HTML"),
                                        (b'{"label": [0, 1], "p": [0.2, 0.7]}', "JSON"),
                                        (b'[\n  {"label": 0, "p": 0.2}\n]\n', "JSON"),
                                        (b'<?xml version="1.0"?><rows/>', "XML")])
def test_markup_documents_are_no_tables(data, kind):
    """A one-line HTML or JSON file read as a header without rows was called 'empty' (a robustness review)."""
    with pytest.raises(cv.InputError, match=f"preds.csv is {kind}, not a table of rows and columns; export"):
        cv.load_predictions(data, name="preds.csv")


def test_a_header_in_brackets_is_still_a_header():
    with pytest.raises(cv.InputError, match="no label column found"):
        cv.load_predictions(b"[label],p\n" + b"1,0.5\n0,0.2\n" * 10, name="preds.csv")


def test_percent_strings_name_the_fix():
    with pytest.raises(cv.InputError, match=r"e.g. '30%'; it must hold numbers. They look like percentages written "
                                            r"with '%'"):
        cv.load_predictions(b"y,p\n" + b"1,30%\n0,70%\n" * 10)


def test_a_tiny_share_of_bad_rows_is_not_called_zero_percent():
    """10 bad rows of 300,000 read "So few rows (0.0%)" (a walk-through)."""
    from calibviz.io.loading import out_of_range_fix

    assert "So few rows (under 0.1%)" in out_of_range_fix(10 / 300_000, 0.0, 1.7, 10 / 300_000)[0]
    assert "So few rows (3.3%)" in out_of_range_fix(0.033, 0.0, 1.7, 0.033)[0]


def test_class_columns_off_by_rounding_are_called_rounding(tmp_path):
    """Ten classes given to 2 decimals, the last as 1 minus the others' rounded sum: a few -0.01 cells were answered
    "The other probability columns do hold probabilities: check the probability columns" (a walk-through). Values
    this close to [0, 1] are rounding; the fix says so, in memory and on a scan."""
    rng = np.random.default_rng(1)
    P = np.round(rng.dirichlet(np.full(10, 0.7), 400), 2)
    P[:, -1] = np.round(1 - P[:, :-1].sum(axis=1), 2)
    assert (P < 0).any()
    y = rng.integers(0, 10, 400)
    path = tmp_path / "rounded.parquet"
    pd.DataFrame({"label": y, **{f"p_{k}": P[:, k] for k in range(10)}}).to_parquet(path)
    for load in (lambda: cv.load_predictions(str(path)), lambda: cv.scan(str(path)).n):
        with pytest.raises(cv.InputError, match=r"column\(s\) 'p_9' hold values outside it .* are rounding, e\.g\. "
                                                r"a last column written as 1 minus"):
            load()


@pytest.mark.parametrize("labels, positive, classes", [
    ([0] * 12, None, (0, 1)),
    ([1] * 12, None, (0, 1)),
    ([True] * 12, None, (False, True)),
    (["no"] * 12, None, ("no", "yes")),
    (["Yes"] * 12, None, ("No", "Yes")),
    (["no"] * 12, "yes", ("no", "yes")),
    ([0] * 12, "1", (0, 1)),
    (["healthy"] * 12, "sick", ("healthy", "sick")),
])
def test_a_binary_label_of_one_class_names_the_other_class(labels, positive, classes):
    """One class among binary labels (a day without fraud): the other class is the opposite of a yes/no-like label,
    of its type (0 -> 1, not '0' beside integers), or the positive class given; the note says which occurs."""
    df = pd.DataFrame({"y": labels, "p": np.linspace(0.1, 0.6, len(labels))})
    preds = next(iter(predictions_from_frame(df, positive=positive).values()))
    assert preds.classes == classes and type(preds.classes[1]) is type(classes[1])
    assert any(f"only class {labels[0]} occurs in the labels" in n for n in preds.notes), preds.notes


def test_a_one_class_label_that_names_no_opposite_asks_for_the_positive_class():
    df = pd.DataFrame({"y": ["cat"] * 12, "p": np.linspace(0.1, 0.6, 12)})
    with pytest.raises(cv.InputError, match="cannot tell the positive class among the labels \\['cat'\\]"):
        predictions_from_frame(df)


def test_a_few_stray_labels_beside_a_binary_column_are_counted_in_memory_and_on_scans(tmp_path):
    """Six rows labelled 2 in a binary log of 200,000 read "the label column holds 3 classes (0.0, 1.0, 2.0)",
    as if the file were multiclass (a walk-through): the message counts them and says what to do. A scan whose
    first rows hold them names no counts of its sample."""
    rng = np.random.default_rng(0)
    p = rng.uniform(size=200_000)
    y = (rng.random(200_000) < p).astype(float)
    y[-6:] = 2
    pd.DataFrame({"y": y, "p": p}).to_parquet(tmp_path / "stray.parquet")
    stray = "the label 2.0 occurs in only 6 of 200,000 rows: if those rows are errors, drop them or fix their labels"
    with pytest.raises(cv.InputError, match=stray):
        cv.load_predictions(str(tmp_path / "stray.parquet"))
    with pytest.raises(cv.InputError, match=stray):
        cv.scan(str(tmp_path / "stray.parquet")).metrics(["ece"], n_reference=0)
    y[:6], y[-6:] = 2, (rng.random(6) < p[-6:])
    pd.DataFrame({"y": y, "p": p}).to_parquet(tmp_path / "first.parquet")
    with pytest.raises(cv.InputError, match="holds 3 classes") as err:
        cv.scan(str(tmp_path / "first.parquet")).metrics(["ece"], n_reference=0)
    assert "occurs in only" not in str(err.value)
    frame = pd.DataFrame({"y": np.arange(300) % 3, "p": rng.uniform(size=300)})  # three real classes: no strays
    with pytest.raises(cv.InputError, match="holds 3 classes") as err:
        cv.predictions_from_frame(frame)
    assert "occurs in only" not in str(err.value)


def test_one_yes_no_class_names_its_opposite_for_the_columns_and_the_positive_class():
    """A review: p_0 and p_1 over labels all 0 read as two models ("one model per column ('p_0', '1')"), and
    --positive true over labels all 1 made 1 the negative class (ECE 0.784 instead of 0.216), a typo '2' accepted.
    The opposite of a one-class yes/no label is a class as if it had occurred."""
    rng = np.random.default_rng(5)
    p1 = rng.uniform(0.05, 0.6, 200)
    both = next(iter(predictions_from_frame(pd.DataFrame({"y": 0, "p_0": 1 - p1, "p_1": p1})).values()))
    assert both.classes == (0, 1) and np.allclose(both.y_prob, p1)
    ones = pd.DataFrame({"y": np.ones(200, int), "p": p1})
    for wrong in ("true", "yes", "2"):
        with pytest.raises(cv.InputError, match="not among the labels \\[0, 1\\]"):
            predictions_from_frame(ones, positive=wrong)
    for positive in (1, "1"):
        preds = next(iter(predictions_from_frame(ones, positive=positive).values()))
        assert preds.classes == (0, 1) and (preds.y == 1).all() and np.allclose(preds.y_prob, p1)


def test_a_yes_no_pair_is_the_binary_label_however_rare_its_events():
    """Labels 0, 1 and -1 (unlabelled) with more -1 than 1 named the real positives as strays to drop (a review):
    the yes/no pair is the two classes, the others the strays."""
    y = np.r_[np.zeros(990, int), -np.ones(7, int), np.ones(3, int)]
    with pytest.raises(cv.InputError, match="the label -1 occurs in only 7 of 1,000 rows") as err:
        predictions_from_frame(pd.DataFrame({"y": y, "p": np.linspace(0.01, 0.2, 1000)}))
    assert "label 1 occurs" not in str(err.value)
