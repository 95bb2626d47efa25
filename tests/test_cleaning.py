"""Invalid rows left out on request (``drop_invalid``, calibviz.io.cleaning): the same numbers as the file without
them, a note that counts them, the loader's error where they are too many to be strays."""
import warnings

import numpy as np
import pandas as pd
import pytest

import calibviz as cv
from calibviz.panel import metric_panel


def _log(n=2_000, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.beta(2, 5, n)
    return pd.DataFrame({"y": (rng.random(n) < p).astype(int), "p": p, "weight": rng.uniform(0.5, 2, n),
                         "age": rng.integers(20, 90, n)})


def _csv(df):
    return df.to_csv(index=False).encode()


def test_dropped_rows_give_the_numbers_of_the_file_without_them():
    df = _log()
    bad = df.copy()
    bad.loc[[3, 7], "p"] = np.nan
    bad.loc[11, "y"] = np.nan
    bad.loc[20, "weight"] = np.nan
    bad.loc[30, "p"] = 1.5
    bad.loc[40, "weight"] = -1.0
    got = cv.load_predictions(_csv(bad), drop_invalid=True)
    want = cv.load_predictions(_csv(df.drop(index=[3, 7, 11, 20, 30, 40])))
    assert got.n == want.n == len(df) - 6
    np.testing.assert_array_equal(got.y, want.y)
    np.testing.assert_array_equal(got.probs, want.probs)
    np.testing.assert_array_equal(got.weights, want.weights)
    pd.testing.assert_frame_equal(got.features, want.features)
    assert got.notes[-1] == (
        "dropped 6 of 2,000 rows as asked (drop invalid rows): 1 with an empty label (0-based: 11), 2 with an empty, "
        "NaN or infinite probability (0-based: 3, 7), 1 with a probability outside [0, 1] (0-based: 30), 1 with an "
        "empty, NaN or infinite weight (0-based: 20), 1 with a negative weight (0-based: 40)")
    a = metric_panel(got.y, got.y_prob, sample_weight=got.weights, metrics=("ece", "brier"), n_resamples=0,
                     n_reference=0)
    b = metric_panel(want.y, want.y_prob, sample_weight=want.weights, metrics=("ece", "brier"), n_resamples=0,
                     n_reference=0)
    np.testing.assert_array_equal(a["value"], b["value"])


def test_without_the_option_the_error_names_it_only_where_it_would_drop_exactly_those_rows():
    df = _log()
    df.loc[[3, 7], "p"] = np.nan
    with pytest.raises(cv.InputError) as info:
        cv.load_predictions(_csv(df))
    msg = str(info.value)
    assert msg.startswith("probability column(s) 'p' hold NaN or infinite values in 2 rows (0-based: 3, 7)")
    assert msg.endswith("To leave out the invalid rows instead (2 with an empty, NaN or infinite probability), with a "
                        "note that counts them, pass drop_invalid=True.")
    assert "tick 'Drop invalid rows' in the column mapping" in info.value.ui_message
    assert info.value.hint == {"drop_invalid": True}
    # logits-like scores in most rows: a wrong scale, which dropping would hide; no such advice
    scaled = _log()
    scaled["p"] = scaled["p"] * 100
    with pytest.raises(cv.InputError) as info:
        cv.load_predictions(_csv(scaled))
    assert "drop_invalid" not in str(info.value)


def test_wrong_values_beyond_five_percent_are_not_dropped():
    df = _log()
    df.loc[:199, "p"] = df.loc[:199, "p"] * 100  # 10% of the rows on another scale
    df.loc[500, "y"] = np.nan
    with pytest.raises(cv.InputError) as info:
        cv.load_predictions(_csv(df), drop_invalid=True)
    msg = str(info.value)
    assert msg.startswith("not dropped: ")
    assert "rows (" in msg and "with a probability outside [0, 1]" in msg and "under 5% of the rows" in msg
    assert "probabilities must lie in [0, 1]" in msg  # the loader's own error and its fix follow
    # under 5%: stray errors, dropped with the missing ones
    df = _log()
    df.loc[:79, "p"] = 1.7  # 4%
    df.loc[500, "y"] = np.nan
    got = cv.load_predictions(_csv(df), drop_invalid=True)
    assert got.n == 2_000 - 81 and "80 with a probability outside [0, 1]" in got.notes[-1]


def test_stray_labels_of_a_binary_log_and_empty_model_names():
    df = _log()
    df.loc[[5, 6], "y"] = 2
    with pytest.raises(cv.InputError, match=r"label 2 occurs in only 2 of 2,000 rows.*pass drop_invalid=True"):
        cv.load_predictions(_csv(df))
    got = cv.load_predictions(_csv(df), drop_invalid=True)
    assert got.classes == (0, 1) and got.n == 1_998
    assert got.notes[-1].endswith("2 with a label outside the classes (0-based: 5, 6)")
    long = pd.concat([_log(500, 1).assign(model="a"), _log(500, 2).assign(model="b")], ignore_index=True)
    long.loc[[0, 600], "model"] = None
    with pytest.raises(cv.InputError, match=r"model column 'model' is empty in 2 rows.*drop_invalid=True"):
        cv.load_models(_csv(long))
    models = cv.load_models(_csv(long), drop_invalid=True)
    assert {k: v.n for k, v in models.items()} == {"a": 499, "b": 499}
    assert "2 with an empty model name (0-based: 0, 600)" in models["a"].notes[-1]


def test_models_side_by_side_and_in_several_files_stay_on_the_same_examples():
    df = _log()
    df["rf_proba"], df["lr_proba"] = df["p"], np.clip(df["p"] * 0.9 + 0.02, 0, 1)
    df = df.drop(columns=["p"])
    df.loc[4, "rf_proba"], df.loc[8, "lr_proba"] = np.nan, np.nan
    models = cv.load_models(_csv(df), drop_invalid=True)
    assert [m.n for m in models.values()] == [1_998, 1_998]
    np.testing.assert_array_equal(models["rf"].y, models["lr"].y)
    assert "left out for every model" in models["rf"].notes[-1]
    a = _log().assign(id=range(2_000))
    b = a.assign(p=np.clip(a["p"] * 1.1, 0, 1))
    a.loc[3, "p"], b.loc[10, "y"] = np.nan, np.nan
    files = [("a.csv", _csv(a)), ("b.csv", _csv(b.sample(frac=1, random_state=0)))]
    with pytest.raises(cv.InputError, match="drop_invalid=True"):
        cv.load_models_from_files(files)
    got = cv.load_models_from_files(files, drop_invalid=True)
    assert [m.n for m in got.values()] == [1_998, 1_998]
    np.testing.assert_array_equal(got["a"].y, got["b"].y)
    assert got["a"].notes[-1].startswith("dropped 2 examples invalid in at least one file from every file")
    want = a.drop(index=[3, 10])
    np.testing.assert_array_equal(got["a"].y_prob, want["p"].to_numpy())


def test_too_few_rows_left():
    df = _log(30)
    df.loc[:25, "p"] = np.nan
    with pytest.raises(cv.InputError, match=r"has 4 rows left after dropping the invalid rows; at least 10"):
        cv.load_predictions(_csv(df), drop_invalid=True)


def test_command_line_option(tmp_path, capsys):
    from calibviz.cli import main

    df = _log()
    df.loc[[3, 7], "p"] = np.nan
    path = tmp_path / "log.csv"
    df.to_csv(path, index=False)
    assert main(["metrics", str(path), "--metrics", "ece", "--ci", "0", "--reference", "0"]) == 2
    err = capsys.readouterr().err
    assert "--drop-invalid" in err and "drop_invalid" not in err
    assert main(["metrics", str(path), "--metrics", "ece", "--ci", "0", "--reference", "0", "--drop-invalid"]) == 0
    out = capsys.readouterr()
    assert "dropped 2 of 2,000 rows" in out.err + out.out


@pytest.mark.parametrize("engine", ["duckdb", "polars"])
def test_a_scan_drops_the_rows_memory_drops(tmp_path, engine):
    """A scan with drop_invalid: the same note (without row numbers: a scan has no row order) and the same numbers
    as the file without those rows, in memory and scanned."""
    df = _log(5_000)
    df["age"] = df["age"].astype(float)
    bad = df.copy()
    bad.loc[[3, 7], "p"] = np.nan
    bad.loc[11, "y"] = np.nan
    bad.loc[30, "p"] = 1.5
    bad.loc[40, "weight"] = -1.0
    bad.loc[41, "weight"] = np.nan
    path = tmp_path / "bad.parquet"
    bad.to_parquet(path)
    clean = df.drop(index=[3, 7, 11, 30, 40, 41])
    with pytest.raises(cv.InputError, match=r"pass drop_invalid=True\.$"):
        cv.scan(str(path), engine=engine).metrics(metrics=("ece",))
    s = cv.scan(str(path), engine=engine, drop_invalid=True)
    ref = cv.scan(clean.reset_index(drop=True), engine="duckdb")
    keys = ("ece", "ace", "brier", "log_loss", "tce")
    got = s.metrics(metrics=keys)
    want = ref.metrics(metrics=keys)
    np.testing.assert_allclose(got["value"].to_numpy(float), want["value"].to_numpy(float), rtol=1e-9)
    assert s.n == len(clean)
    assert s.notes[-1] == ("dropped 6 of 5,000 rows as asked (drop invalid rows): 1 with an empty label, 2 with an "
                           "empty, NaN or infinite probability, 1 with a probability outside [0, 1], 1 with an empty, "
                           "NaN or infinite weight, 1 with a negative weight")
    mem = cv.load_predictions(_csv(bad), drop_invalid=True)
    assert s.notes[-1] == mem.notes[-1].replace(" (0-based: 11)", "").replace(" (0-based: 3, 7)", "").replace(
        " (0-based: 30)", "").replace(" (0-based: 41)", "").replace(" (0-based: 40)", "")
    pd.testing.assert_frame_equal(s.reliability_table().reset_index(drop=True),
                                  ref.reliability_table().reset_index(drop=True), rtol=1e-9)
    ranked, want_rank = (x.variable_ranking(["age"], n_resamples=0) for x in (s, ref))
    np.testing.assert_allclose(ranked["vece"].to_numpy(float), want_rank["vece"].to_numpy(float), rtol=1e-9)
    # wrong values in 10% of the rows: refused with the loader's error after 'not dropped'
    many = df.copy()
    many.loc[:499, "p"] = 3.0
    many.to_parquet(tmp_path / "many.parquet")
    with pytest.raises(cv.InputError, match=r"^not dropped: 500 of 5,000 rows \(10\.0%\)"):
        cv.scan(str(tmp_path / "many.parquet"), engine=engine, drop_invalid=True).metrics(metrics=("ece",))


def test_a_long_scan_drops_rows_without_a_model():
    long = pd.concat([_log(500, 1).assign(model="a"), _log(500, 2).assign(model="b")], ignore_index=True)
    long.loc[[0, 600], "model"] = None
    with pytest.raises(cv.InputError, match=r"empty in 2 rows.*drop_invalid=True"):
        cv.scan(long)
    s = cv.scan(long, drop_invalid=True)
    assert {k: v.n for k, v in s.models.items()} == {"a": 499, "b": 499}
    assert s.notes[-1] == "dropped 2 of 1,000 rows as asked (drop invalid rows): 2 with an empty model name"


def test_a_multiclass_scan_drops_rows_in_every_view():
    rng = np.random.default_rng(5)
    P = rng.dirichlet(np.ones(3), 3_000)
    y = (P.cumsum(axis=1) < rng.random((3_000, 1))).sum(axis=1)
    df = pd.DataFrame({"label": np.array(["a", "b", "c"])[y], "p_a": P[:, 0], "p_b": P[:, 1], "p_c": P[:, 2]})
    bad = df.copy()
    bad.loc[4, "p_b"] = np.nan
    bad.loc[8, "label"] = None
    bad.loc[12, ["p_a", "p_b", "p_c"]] = [0.5, 0.5, 0.5]  # sums to 1.5
    clean = df.drop(index=[4, 8, 12]).reset_index(drop=True)
    s, ref = cv.scan(bad, drop_invalid=True), cv.scan(clean)
    mem = cv.load_predictions(_csv(bad), drop_invalid=True)
    assert mem.n == 2_997 and "1 with class probabilities not summing to 1 (0-based: 12)" in mem.notes[-1]
    keys = ("ece", "brier")
    for view in (lambda x: x.confidence_view(), lambda x: x.class_view("b"), lambda x: x.top_label_view("a")):
        a, b = view(s), view(ref)
        np.testing.assert_allclose(a.metrics(metrics=keys)["value"].to_numpy(float),
                                   b.metrics(metrics=keys)["value"].to_numpy(float), rtol=1e-9)
    assert any("dropped 3 of 3,000 rows" in n for n in s.confidence_view().notes)


def test_a_long_log_drops_each_models_own_rows_as_a_scan_does():
    """A review: in memory the 5% of wrong values was measured against the whole file (a model whose column was on
    another scale in 6% of its rows got through, diluted by the other models) and every model's note counted the
    file's rows; now each model's own rows, as the scans count them."""
    a, b = _log(1_000, 1).assign(model="a"), _log(3_000, 2).assign(model="b")
    a.loc[:59, "p"] = 1.5  # 6% of model a, 1.5% of the file
    b.loc[0:9, "y"] = np.nan
    long = pd.concat([a, b], ignore_index=True)
    with pytest.raises(cv.InputError, match=r"model 'a'.*not dropped: 60 of 1,000 rows \(6\.0%\)"):
        cv.load_models(_csv(long), drop_invalid=True)
    scan = cv.scan(long, drop_invalid=True)
    with pytest.raises(cv.InputError, match=r"not dropped: 60 of 1,000 rows \(6\.0%\)"):
        scan.models["a"].metrics(metrics=("ece",))
    long.loc[:59, "p"] = 0.3
    long.loc[:19, "p"] = 1.5  # 2% of model a: dropped
    models = cv.load_models(_csv(long), drop_invalid=True)
    assert models["a"].notes[-1].startswith("dropped 20 of 1,000 rows")
    assert models["b"].notes[-1].startswith("dropped 10 of 3,000 rows") and "outside" not in models["b"].notes[-1]


def test_several_files_without_ids_of_different_lengths_are_not_paired_after_dropping():
    """A review: files that each lost their own invalid rows reached one length and were paired by position."""
    df = _log(2_001)
    a, b = df.copy(), df.iloc[:2_000].copy()
    a.loc[5, "p"] = np.nan
    with pytest.raises(cv.InputError, match=r"different numbers of rows \(a\.csv 2,001, b\.csv 2,000\) and no id"):
        cv.load_models_from_files([("a.csv", _csv(a)), ("b.csv", _csv(b))], drop_invalid=True)


def test_a_recalibration_call_against_its_raw_interval_says_why():
    from calibviz.recalibration.crossfit import _reading

    flipped = _reading("isotonic", "ECE", "probability", 0.03, 0.025, 0.005, 0.002, 0.008, False, True, 0.95, 0.025)
    assert "would differ by 0.0250" in flipped and flipped.endswith("worse after recalibration, beyond the "
                                                                    "bootstrap noise.")
    same = _reading("isotonic", "ECE", "probability", 0.03, 0.025, 0.005, 0.002, 0.008, True, False, 0.95, 0.0)
    assert "would differ" not in same
