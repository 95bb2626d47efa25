"""The layouts people export (#14 part 3): one probability column per model, several files, the positive class,
advice that is right for the values at hand, reading options (#16: encoding, delimiter, decimal comma)."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import calibviz as cv
from calibviz.io import detect_mapping, load_models_from_files, models_to_frame, read_table

PYTHON_SYNTAX = re.compile(r"\w+=|[{}]|\[['\"]")  # keyword arguments, dict or list literals


@pytest.fixture(scope="module")
def breast_cancer():
    """Two scikit-learn models on breast cancer (the issue's review-meeting set), as exported by people."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = load_breast_cancer(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.5, random_state=0)
    lr = make_pipeline(StandardScaler(), LogisticRegression()).fit(Xtr, ytr)
    rf = RandomForestClassifier(n_estimators=50, random_state=0).fit(Xtr, ytr)
    frame = pd.DataFrame(Xte[:, :3], columns=["x0", "x1", "x2"])  # features first: the label is not the first column
    frame["y_true"] = yte
    frame["logreg_proba"] = lr.predict_proba(Xte)[:, 1]
    frame["rf_proba"] = rf.predict_proba(Xte)[:, 1]
    return frame


def _ece_uniform(y, p, n_bins=15):
    """ECE on [k/B, (k+1)/B) bins, written here independently of calibviz."""
    idx = np.minimum((p * n_bins).astype(int), n_bins - 1)
    total = 0.0
    for b in range(n_bins):
        m = idx == b
        if m.any():
            total += m.sum() * abs(y[m].mean() - p[m].mean())
    return total / len(y)


# --------------------------------------------------------------------------------------------------------------
# one probability column per model
# --------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("pattern", ["{m}_proba", "proba_{m}", "{m}_prob", "p_{m}", "prob_{m}", "{m}_probability",
                                     "{m}_pred_proba"])
def test_one_column_per_model_is_several_binary_models(breast_cancer, pattern):
    df = breast_cancer.rename(columns={"logreg_proba": pattern.format(m="logreg"), "rf_proba": pattern.format(m="rf")})
    m = detect_mapping(df)
    assert m.label == "y_true" and m.classes == (0, 1)
    assert m.probs == {"logreg": (pattern.format(m="logreg"),), "rf": (pattern.format(m="rf"),)}
    assert m.features == ("x0", "x1", "x2")
    models = cv.predictions_from_frame(df)
    y = breast_cancer["y_true"].to_numpy()
    for name, col in (("logreg", "logreg_proba"), ("rf", "rf_proba")):
        np.testing.assert_array_equal(models[name].y_prob, breast_cancer[col].to_numpy())
        assert cv.metrics.ece(models[name].y_true, models[name].y_prob) == pytest.approx(
            _ece_uniform(y, breast_cancer[col].to_numpy()), abs=1e-12)


def test_class_suffixes_are_classes_other_suffixes_are_models():
    rng = np.random.default_rng(0)
    n = 200
    p = rng.uniform(0.05, 0.95, n)
    y = rng.binomial(1, p)
    # suffixes that are the label's classes: one model's class columns
    m = detect_mapping(pd.DataFrame({"label": y, "p_0": 1 - p, "p_1": p}))
    assert m.probs == {"model": ("p_0", "p_1")} and m.classes == (0, 1)
    # string classes, suffix style
    lab = np.where(y == 1, "malignant", "benign")
    m = detect_mapping(pd.DataFrame({"label": lab, "benign_proba": 1 - p, "malignant_proba": p}))
    assert m.probs == {"model": ("benign_proba", "malignant_proba")} and m.classes == ("benign", "malignant")
    # suffixes that name no class, rows not summing to 1: one model per column
    q = np.clip(p + rng.normal(0, 0.1, n), 0, 1)
    m = detect_mapping(pd.DataFrame({"label": y, "p_a": p, "p_b": q}))
    assert m.probs == {"a": ("p_a",), "b": ("p_b",)}
    # the same names whose rows sum to 1: one model's classes (labels are positions)
    m = detect_mapping(pd.DataFrame({"label": y, "p_a": 1 - p, "p_b": p}))
    assert m.probs == {"model": ("p_a", "p_b")} and m.label_positions
    # a multiclass label never reads one column per model
    y3 = rng.integers(0, 3, n)
    with pytest.raises(cv.InputError):
        detect_mapping(pd.DataFrame({"label": y3, "proba_lr": p, "proba_rf": q}))


def test_ambiguous_layout_names_both_readings_and_how_to_choose():
    rng = np.random.default_rng(1)
    p = rng.uniform(size=60)
    df = pd.DataFrame({"y_true": rng.binomial(1, p), "p_1": p, "rf_proba": np.clip(p + 0.1, 0, 1)})
    with pytest.raises(cv.InputError) as err:
        detect_mapping(df)
    msg = str(err.value)
    assert "(a) one model 'p_1'" in msg and "(b) one model per column" in msg
    assert "probs='p_1'" in msg and "probs={'p_1': ['p_1'], 'rf': ['rf_proba']}" in msg
    assert err.value.hint == {"probs": ["p_1", "rf_proba"], "per_model": True}
    assert not PYTHON_SYNTAX.search(err.value.ui_message), err.value.ui_message
    # both suggested fixes work
    assert list(cv.predictions_from_frame(df, probs="p_1")) == ["model"]
    both = cv.predictions_from_frame(df, probs={"p_1": ["p_1"], "rf": ["rf_proba"]})
    np.testing.assert_array_equal(both["rf"].y_prob, df["rf_proba"].to_numpy())
    # a bare positive-class column next to another model's column is ambiguous too; p-values are not models
    with pytest.raises(cv.InputError, match="ambiguous"):
        detect_mapping(df.rename(columns={"p_1": "p"}))
    ok = detect_mapping(pd.DataFrame({"y": df["y_true"], "p": p, "p_value": rng.uniform(size=60),
                                      "p_adj": rng.uniform(size=60)}))
    assert ok.probs == {"model": ("p",)} and set(ok.features) == {"p_value", "p_adj"}


def test_probability_like_columns_are_never_features(breast_cancer):
    m = detect_mapping(breast_cancer, probs="logreg_proba")
    assert m.probs == {"model": ("logreg_proba",)} and "rf_proba" not in m.features
    assert any("rf_proba" in n and "not mapped" in n for n in m.notes)


# --------------------------------------------------------------------------------------------------------------
# the positive class
# --------------------------------------------------------------------------------------------------------------

def _benign_malignant(n=100, seed=2):
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=n)
    lab = np.where(rng.uniform(size=n) < p, "malignant", "benign")
    return pd.DataFrame({"diagnosis": lab, "p_benign": 1 - p, "p_malignant": p}), p


def test_positive_class_with_both_probability_columns_selected():
    df, p = _benign_malignant()
    for positive, expected in (("malignant", p), ("benign", 1 - p), ("MALIGNANT", p)):
        got = cv.predictions_from_frame(df, label="diagnosis", probs=["p_benign", "p_malignant"], positive=positive)
        pred = got["model"]
        assert _key_str(pred.classes[1]) == positive.lower()
        np.testing.assert_allclose(pred.y_prob, expected)
        np.testing.assert_array_equal(pred.y, (df["diagnosis"].str.lower() == positive.lower()).astype(int))
    with pytest.raises(cv.InputError, match="not one of the classes") as err:
        cv.predictions_from_frame(df, label="diagnosis", probs=["p_benign", "p_malignant"], positive="cancer")
    assert not PYTHON_SYNTAX.search(err.value.ui_message)


def _key_str(v):
    return str(v).lower()


def test_positive_class_from_one_column_leaves_the_other_out_of_the_features():
    df, p = _benign_malignant()
    got = cv.predictions_from_frame(df, label="diagnosis", probs=["p_malignant"])["model"]
    assert got.classes == ("benign", "malignant") and list(got.features.columns) == []
    np.testing.assert_allclose(got.y_prob, p)


def test_one_and_zero_columns_in_either_order_make_one_positive():
    rng = np.random.default_rng(3)
    p = rng.uniform(size=50)
    y = rng.binomial(1, p)
    got = cv.predictions_from_frame(pd.DataFrame({"y": y, "p_1": p, "p_0": 1 - p}))["model"]
    assert got.classes == (0, 1)
    np.testing.assert_allclose(got.y_prob, p)


# --------------------------------------------------------------------------------------------------------------
# advice that is right for the values
# --------------------------------------------------------------------------------------------------------------

def test_two_models_given_as_class_columns_get_the_one_model_per_column_advice(breast_cancer):
    for renormalize in (False, True):  # renormalize=True gave ECE 0.389 with exit 0 before
        with pytest.raises(cv.InputError) as err:
            cv.predictions_from_frame(breast_cancer, probs=["logreg_proba", "rf_proba"], renormalize=renormalize)
        msg = str(err.value)
        assert "renormalize=True" not in msg and "probs={'logreg': ['logreg_proba'], 'rf': ['rf_proba']}" in msg
        assert "one model per column" in err.value.ui_message and not PYTHON_SYNTAX.search(err.value.ui_message)
    models = cv.predictions_from_frame(breast_cancer, probs={"logreg": ["logreg_proba"], "rf": ["rf_proba"]})
    np.testing.assert_array_equal(models["rf"].y_prob, breast_cancer["rf_proba"].to_numpy())


def test_renormalize_is_advised_for_rounding_only():
    rng = np.random.default_rng(4)
    P = rng.dirichlet(np.ones(3), size=80)
    y = np.array([rng.choice(3, p=row) for row in P])
    rounded = np.round(P, 2) + np.array([0.004, 0.004, 0.0])  # two decimals: sums off by up to 0.023
    df = pd.DataFrame({"label": y, "p_0": rounded[:, 0], "p_1": rounded[:, 1], "p_2": rounded[:, 2]})
    with pytest.raises(cv.InputError, match="off by rounding.*renormalize=True") as err:
        cv.predictions_from_frame(df)
    assert err.value.hint == {"renormalize": True} and "Renormalise rows" in err.value.ui_message
    got = cv.predictions_from_frame(df, renormalize=True)["model"]
    np.testing.assert_allclose(got.probs, rounded / rounded.sum(axis=1, keepdims=True))
    # a missing class column: no renormalisation advice
    missing = pd.DataFrame({"label": y, "p_0": P[:, 0], "p_1": P[:, 1], "p_2": P[:, 2] * 0.5})
    with pytest.raises(cv.InputError, match="a class has no column|not the class probabilities") as err:
        cv.predictions_from_frame(missing)
    assert "renormalize" not in str(err.value).split("sum to 1", 1)[1]


def test_logits_are_advised_for_negative_values_only():
    rng = np.random.default_rng(5)
    z = rng.normal(size=40)
    y = rng.binomial(1, 1 / (1 + np.exp(-z)))
    with pytest.raises(cv.InputError, match="logits=True") as err:
        cv.predictions_from_frame(pd.DataFrame({"y": y, "p": z}))
    assert err.value.hint == {"logits": True} and "Columns hold logits" in err.value.ui_message
    pct = rng.uniform(0, 100, 40)
    with pytest.raises(cv.InputError, match="percentages") as err:
        cv.predictions_from_frame(pd.DataFrame({"y": y, "p": pct}))
    assert "logits" not in str(err.value)
    # scores that overshoot 1 on a fifth of the rows (0.07 to 1.64) are no percentages: dividing by 100 would be
    # the wrong fix, and the message says what they are
    over = np.where(rng.uniform(size=40) < 0.2, rng.uniform(1.01, 1.64, 40), rng.uniform(0.07, 1.0, 40))
    with pytest.raises(cv.InputError, match="not how percentages look: these are scores") as err:
        cv.predictions_from_frame(pd.DataFrame({"y": y, "p": over}))
    assert "look like percentages" not in str(err.value) and "logits" not in str(err.value)
    # a few stray values are errors in the data, not another scale
    stray = rng.uniform(size=40)
    stray[3] = -0.1
    with pytest.raises(cv.InputError, match="fix or drop those rows") as err:
        cv.predictions_from_frame(pd.DataFrame({"y": y, "p": stray}))
    assert "logits" not in str(err.value) and "percent" not in str(err.value)
    # one column in [0, 1] and one outside: the outside one is not a probability column, whatever its scale
    with pytest.raises(cv.InputError, match="cannot be one of them") as err:
        cv.predictions_from_frame(pd.DataFrame({"y": y, "a": 1 - rng.uniform(size=40), "b": pct}), probs=["a", "b"])
    assert "logits" not in str(err.value)


def test_renormalising_more_than_rounding_is_noted():
    rng = np.random.default_rng(6)
    P = rng.dirichlet(np.ones(3), size=60) * 1.3  # one-vs-rest scores of one model
    df = pd.DataFrame({"label": rng.integers(0, 3, 60), "p_0": P[:, 0] / 1.3, "p_1": P[:, 1], "p_2": P[:, 2]})
    df[["p_1", "p_2"]] = df[["p_1", "p_2"]].clip(upper=1)
    got = cv.predictions_from_frame(df, renormalize=True)["model"]
    assert any("more than rounding" in n for n in got.notes)


# --------------------------------------------------------------------------------------------------------------
# several files, one per model
# --------------------------------------------------------------------------------------------------------------

def _csv(frame) -> bytes:
    return frame.to_csv(index=False).encode()


def test_files_matched_by_id(breast_cancer):
    base = breast_cancer.assign(id=np.arange(len(breast_cancer)) * 7 + 3)
    a = base[["id", "y_true", "x0", "logreg_proba"]].rename(columns={"logreg_proba": "proba"})
    b = base[["id", "y_true", "rf_proba"]].rename(columns={"rf_proba": "proba"}).sample(frac=1, random_state=1)
    models = load_models_from_files([("logreg.csv", _csv(a)), ("rf.parquet", b.to_parquet())])
    assert list(models) == ["logreg", "rf"]
    np.testing.assert_array_equal(models["rf"].y_prob, breast_cancer["rf_proba"].to_numpy())
    np.testing.assert_array_equal(models["rf"].y, models["logreg"].y)
    assert list(models["logreg"].features.columns) == ["x0"]
    assert any("id column 'id'" in n for n in models["rf"].notes)
    # missing and duplicated ids
    with pytest.raises(cv.InputError, match=r"rf.csv lacks 1 id\(s\) of logreg.csv \(3\)"):
        load_models_from_files([("logreg.csv", _csv(a)), ("rf.csv", _csv(b[b["id"] != 3]))])
    dup = pd.concat([b, b.iloc[:1]])
    with pytest.raises(cv.InputError, match=r"rf.csv: ids .* occur more than once"):
        load_models_from_files([("logreg.csv", _csv(a)), ("rf.csv", _csv(dup))])
    # the same id with different labels
    flipped = b.copy()
    flipped.loc[flipped.index[0], "y_true"] = 1 - flipped.loc[flipped.index[0], "y_true"]
    with pytest.raises(cv.InputError, match="disagree on the truth"):
        load_models_from_files([("logreg.csv", _csv(a)), ("rf.csv", _csv(flipped))])


def test_files_without_ids_must_hold_the_same_labels_in_order(breast_cancer):
    a = breast_cancer[["y_true", "logreg_proba"]]
    b = breast_cancer[["y_true", "rf_proba"]]
    models = load_models_from_files([("lr.csv", _csv(a)), ("rf.csv", _csv(b))])
    np.testing.assert_array_equal(models["rf"].y_prob, breast_cancer["rf_proba"].to_numpy())
    assert any("by position" in n for n in models["lr"].notes)
    with pytest.raises(cv.InputError, match="different labels .* row 0 .*add an id column") as err:
        load_models_from_files([("lr.csv", _csv(a)), ("rf.csv", _csv(b.iloc[::-1]))])
    assert not PYTHON_SYNTAX.search(err.value.ui_message)
    with pytest.raises(cv.InputError, match="has 284 rows but lr.csv has 285"):
        load_models_from_files([("lr.csv", _csv(a)), ("rf.csv", _csv(b.iloc[1:]))])
    # two files of one name (from two folders) are told apart in messages and model names
    with pytest.raises(cv.InputError, match=r"^x.csv \(2\) and x.csv have different labels"):
        load_models_from_files([("x.csv", _csv(a)), ("x.csv", _csv(b.iloc[::-1]))])
    assert list(load_models_from_files([("x.csv", _csv(a)), ("x.csv", _csv(b))])) == ["x", "x (2)"]


def test_files_name_the_failing_file_and_agree_on_classes():
    y = np.array([0, 1] * 10)
    good = pd.DataFrame({"y": y, "p": np.linspace(0.1, 0.9, 20)})
    with pytest.raises(cv.InputError, match=r"^bad.csv: no probability columns"):
        load_models_from_files([("good.csv", _csv(good)), ("bad.csv", _csv(good.rename(columns={"p": "age"})))])
    lab = np.where(y == 1, "yes", "no")
    other = pd.DataFrame({"y": lab, "p_no": np.linspace(0.1, 0.9, 20)})
    with pytest.raises(cv.InputError, match="classes"):
        load_models_from_files([("good.csv", _csv(good)), ("other.csv", _csv(other))])


def test_multiclass_files_in_another_column_order_are_aligned():
    rng = np.random.default_rng(7)
    P = rng.dirichlet(np.ones(3), size=30)
    y = np.array(["a", "b", "c"])[rng.integers(0, 3, 30)]
    f1 = pd.DataFrame({"label": y, "p_a": P[:, 0], "p_b": P[:, 1], "p_c": P[:, 2]})
    f2 = pd.DataFrame({"label": y, "p_c": P[:, 2], "p_a": P[:, 0], "p_b": P[:, 1]})
    models = load_models_from_files([("m1.csv", _csv(f1)), ("m2.csv", _csv(f2))])
    assert models["m2"].classes == models["m1"].classes
    np.testing.assert_allclose(models["m2"].probs, models["m1"].probs)
    np.testing.assert_array_equal(models["m2"].y, models["m1"].y)


def test_models_to_frame_round_trip(breast_cancer):
    lab = np.where(breast_cancer["y_true"] == 1, "benign", "malignant")  # sklearn: 1 = benign
    a = pd.DataFrame({"diagnosis": lab, "p_benign": breast_cancer["logreg_proba"], "x0": breast_cancer["x0"]})
    b = pd.DataFrame({"diagnosis": lab, "p_benign": breast_cancer["rf_proba"], "x0": breast_cancer["x0"]})
    models = load_models_from_files([("lr.csv", _csv(a)), ("rf.csv", _csv(b))], label="diagnosis")
    again = cv.predictions_from_frame(models_to_frame(models))
    assert list(again) == ["lr", "rf"]
    for name in models:
        assert again[name].classes == models[name].classes
        np.testing.assert_array_equal(again[name].probs, models[name].probs)
        np.testing.assert_array_equal(again[name].y, models[name].y)
        assert list(again[name].features.columns) == ["x0"]


# --------------------------------------------------------------------------------------------------------------
# reading options (#16): encoding, delimiter, decimal comma
# --------------------------------------------------------------------------------------------------------------

def test_decimal_comma_detected_and_chosen():
    text = "label;p;größe\n" + "".join(f"{i % 2};0,{2 + 5 * (i % 2)};1,5\n" for i in range(12))
    t = read_table(text.encode("utf-8"))
    assert t.frame["p"].tolist()[:2] == [0.2, 0.7] and t.frame["größe"].iloc[0] == 1.5
    # explicit point keeps the text (and the loader names the fix)
    with pytest.raises(cv.InputError, match="decimal comma: pass decimal=','") as err:
        cv.load_predictions(text.encode(), decimal=".")
    assert err.value.hint == {"decimal": ","} and "Decimal: comma" in err.value.ui_message
    # a comma-separated file cannot have a decimal comma
    with pytest.raises(cv.InputError, match="comma-separated"):
        read_table(b"label,p\n0,0.2\n1,0.7\n", decimal=",")


def test_encodings_and_delimiters_as_options():
    text = "label|p|städt\n" + "".join(f"{i % 2}|0.{2 + 5 * (i % 2)}|Köln\n" for i in range(12))
    data = text.encode("cp1252")
    with pytest.raises(cv.InputError, match="not UTF-8") as err:
        read_table(data)
    assert err.value.hint == {"encoding": "cp1252"} and "Encoding" in err.value.ui_message
    assert not PYTHON_SYNTAX.search(err.value.ui_message)
    t = read_table(data, encoding="cp1252")
    assert list(t.frame.columns) == ["label", "p", "städt"] and t.frame["städt"].iloc[0] == "Köln"
    assert read_table(text.encode("utf-8-sig"), encoding="utf-8-sig").frame.columns[0] == "label"
    assert read_table(text.encode("utf-16"), encoding="utf-16").frame.shape == (12, 3)
    # the delimiter option overrides sniffing
    with pytest.raises(cv.InputError, match="single column") as err:
        read_table(text.encode(), delimiter=";")
    assert err.value.hint == {"delimiter": "|"} and "pipe" in err.value.ui_message
    for bad, what in (({"delimiter": ";;"}, "single character"), ({"encoding": "klingon"}, "unknown encoding"),
                      ({"decimal": "·"}, "decimal must be")):
        with pytest.raises(cv.InputError, match=what):
            read_table(text.encode(), **bad)


def test_ui_messages_have_no_python_syntax():
    """The dashboard's text of common mapping errors names controls, not keyword arguments."""
    y = np.array([0, 1] * 10)
    cases = [
        pd.DataFrame({"truth_value": y, "p": np.linspace(0.1, 0.9, 20)}),                  # no label
        pd.DataFrame({"y": y, "age": np.arange(20)}),                                      # no probabilities
        pd.DataFrame({"y": np.where(y, "M", "B"), "p": np.linspace(0.1, 0.9, 20)}),        # positive class unknown
        pd.DataFrame({"y": np.arange(20) % 3, "p": np.linspace(0.1, 0.9, 20)}),            # 3 classes, one column
    ]
    for df in cases:
        with pytest.raises(cv.InputError) as err:
            cv.predictions_from_frame(df)
        assert not PYTHON_SYNTAX.search(err.value.ui_message), err.value.ui_message
    with pytest.raises(cv.InputError) as err:
        cv.predictions_from_frame(cases[2])
    assert err.value.hint == {"positive": None}  # p ranks M barely above B (AUC 0.55): no class to suggest


def test_the_suggested_positive_class_is_the_one_the_column_ranks_higher_and_a_reversed_one_gets_a_note():
    """Labels churn/stay: the hint preselected the alphabetically last label ('stay'), and accepting it gave ECE
    0.90 and AUC 0.005 without a word (an audit). The hint is now the class whose rows the column ranks higher
    (AUC >= 0.6), and predictions that rank the positive class below the other get a note on loading."""
    rng = np.random.default_rng(4)
    p = rng.uniform(size=300)
    y = np.where(rng.random(300) < p, "churn", "stay")
    df = pd.DataFrame({"y": y, "p": p})
    with pytest.raises(cv.InputError, match="cannot tell the positive class") as err:
        cv.predictions_from_frame(df)
    assert err.value.hint == {"positive": "churn"}
    with pytest.raises(cv.InputError) as err:
        cv.predictions_from_frame(df.assign(p=1 - p))
    assert err.value.hint == {"positive": "stay"}
    right = next(iter(cv.predictions_from_frame(df, positive="churn").values()))
    wrong = next(iter(cv.predictions_from_frame(df, positive="stay").values()))
    assert not any("ranks the rows" in n for n in right.notes)
    assert any("P(stay) ranks the rows of class 'stay' below those of class 'churn'" in n
               and "make 'churn' the positive class" in n for n in wrong.notes), wrong.notes


def test_a_long_format_error_names_its_model(tmp_path):
    """Ten scores of 1.7 in the third model of a long-format file read "in 10 rows (0-based: 0, 1, 2, ...)", rows of
    the first model in file terms (a walk-through). The message names the model and how its rows are counted."""
    rng = np.random.default_rng(0)
    p = rng.uniform(size=900)
    p[600:610] = 1.7
    path = tmp_path / "long3.parquet"
    pd.DataFrame({"y": (rng.uniform(size=900) < 0.5).astype(int), "p": p,
                  "model": ["alpha"] * 300 + ["beta"] * 300 + ["zbad"] * 300}).to_parquet(path)
    with pytest.raises(cv.InputError, match=r"^model 'zbad' \(rows counted among that model's rows, in file order\): "
                                            r"probabilities must lie in \[0, 1\]"):
        cv.load_models(str(path))


def test_a_file_of_one_column_is_told_what_is_missing_not_to_change_its_delimiter():
    """A comma-separated file of labels alone was told to "separate the label and probability columns with commas"
    (an audit): with no other separator in its header it holds one column, and the message says what is missing."""
    with pytest.raises(cv.InputError, match="holds a single column, 'y'; a predictions table needs a label column "
                                            "and a probability column") as err:
        read_table(b"y\n" + b"0\n1\n" * 10, name="labels.csv")
    assert not err.value.hint and "with commas" not in str(err.value)
    assert not PYTHON_SYNTAX.search(err.value.ui_message)
