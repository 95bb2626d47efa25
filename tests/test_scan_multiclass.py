"""Multiclass scans: the confidence, top-label and class-wise views give the in-memory metrics and tables.

Metrics against calibviz.metrics (confidence_ece, top_label_ece, top_label_mce with the
paper's per-class fit, classwise_ece), tables against calibviz.reliability_table on the
view's rows and calibviz.multiclass.classwise_tables, with weights (zeros included) and
without, uniform and equal-mass bins, on DuckDB and Polars.
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import calibviz as cv
from calibviz import multiclass as mc
from calibviz.binning import PAVA, PAVABC, Custom, EqualMass, MedianVariance, Uniform
from calibviz.panel import PanelConfig, metric_panel

ENGINES = ["duckdb", "polars"]
RTOL = 1e-9
CLASSES = ["cat", "dog", "fox", "owl"]
SCHEMES = [(Uniform(15), PanelConfig()), (EqualMass(10), PanelConfig(binning="equal_mass", n_bins=10))]
COLUMNS = ["n", "positives", "weight", "mean_pred", "obs_rate", "lower", "upper", "ci_low", "ci_high"]


def _frame(n, seed, owl=0.3):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet([3, 2, 1, 0.3], n)
    P[:, 3] *= owl  # owl: rarely (or, small, never) the top class
    P[:200] = 0.25  # ties: argmax goes to the first class
    P /= P.sum(axis=1, keepdims=True)
    y = (P.cumsum(axis=1) < rng.uniform(size=(n, 1))).sum(axis=1)
    w = rng.exponential(size=n)
    w[::37] = 0.0  # absent rows
    return pd.DataFrame({"label": np.array(CLASSES)[y], **{f"p_{c}": P[:, i] for i, c in enumerate(CLASSES)},
                         "w": w})


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    path = tmp_path_factory.mktemp("mc") / "mc.parquet"
    _frame(30_000, 2).to_parquet(path)
    return str(path)


def _close(got: pd.DataFrame, want: pd.DataFrame):
    assert got["bin"].tolist() == want["bin"].tolist()
    np.testing.assert_array_equal(got[["n", "positives"]], want[["n", "positives"]])
    np.testing.assert_allclose(got[COLUMNS].to_numpy(float), want[COLUMNS].to_numpy(float), rtol=RTOL, atol=1e-15)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("weighted", [False, True])
def test_metrics_equal_in_memory(source, engine, weighted):
    preds = cv.load_predictions(source, weight="w" if weighted else None)
    s = cv.scan(source, weight="w" if weighted else None, engine=engine)
    y, P, w = preds.y, preds.probs, preds.weights
    for scheme, cfg in SCHEMES:
        got = s.metrics(["confidence_ece", "top_label_ece", "top_label_mce", "classwise_ece", "accuracy"],
                        config=cfg).set_index("metric")["value"]
        # the confidence view's share of "correct" (ties to the first class, as in memory; 200 tied rows here)
        assert got["accuracy"] == pytest.approx(cv.metrics.accuracy(y, P, sample_weight=w), rel=RTOL)
        assert got["confidence_ece"] == pytest.approx(cv.metrics.confidence_ece(y, P, binning=scheme,
                                                                                 sample_weight=w), rel=RTOL)
        assert got["top_label_ece"] == pytest.approx(cv.metrics.top_label_ece(y, P, binning=scheme,
                                                                               sample_weight=w), rel=RTOL)
        assert got["top_label_mce"] == pytest.approx(cv.metrics.top_label_mce(y, P, binning=scheme,
                                                                               sample_weight=w), rel=RTOL)
        assert got["classwise_ece"] == pytest.approx(cv.metrics.classwise_ece(y, P, binning=scheme,
                                                                               sample_weight=w), rel=RTOL)


@pytest.mark.parametrize("engine", ENGINES)
def test_columns_named_like_the_views_own_are_read_as_themselves(tmp_path, engine):
    """A weight named ``_conf`` and a feature named ``_correct`` (the view's internal names before) gave wrong rows
    and values (a review): they are the user's columns, and the view's own names are refused."""
    df = _frame(4_000, 9).rename(columns={"w": "_conf"})
    df["_correct"] = np.random.default_rng(1).normal(size=len(df))
    path = tmp_path / "names.parquet"
    df.to_parquet(path)
    preds = cv.load_predictions(str(path), weight="_conf")
    s = cv.scan(str(path), weight="_conf", features=["_correct"], engine=engine)
    got = s.metrics(["confidence_ece"])["value"].iloc[0]
    assert got == pytest.approx(cv.metrics.confidence_ece(preds.y, preds.probs, sample_weight=preds.weights),
                                rel=RTOL)
    assert s.variable_ranking(["_correct"], n_resamples=0)["n"].iloc[0] == int((df["_conf"] > 0).sum())
    df.rename(columns={"_correct": "__calibviz_correct__"}).to_parquet(path)
    with pytest.raises(cv.InputError, match="'__calibviz_correct__', a name calibviz uses"):
        cv.scan(str(path), engine=engine).metrics(["confidence_ece"])


@pytest.mark.parametrize("engine", ENGINES)
def test_view_tables_equal_in_memory(source, engine):
    preds = cv.load_predictions(source, weight="w")
    s = cv.scan(source, weight="w", engine=engine)
    y, P, w = preds.y, preds.probs, preds.weights
    pred, conf = P.argmax(axis=1), P.max(axis=1)
    correct = (pred == y).astype(int)
    for scheme, _ in SCHEMES:
        _close(s.reliability_table(scheme, test=None),
               cv.reliability_table(correct, conf, binning=scheme, sample_weight=w, test=None))
        want_cw = mc.classwise_tables(y, P, binning=scheme, classes=CLASSES, sample_weight=w)
        for k, c in enumerate(CLASSES):
            rows = pred == k  # top-label view: the rows predicted as c, their confidence against correct
            got = s.top_label_view(c).reliability_table(scheme, test=None)
            if (w[rows] > 0).sum() == 0:
                assert got.empty
            else:
                _close(got, cv.reliability_table(correct[rows], conf[rows], binning=scheme, sample_weight=w[rows],
                                                 test=None))
            view = s.class_view(c).reliability_table(scheme, test=None)
            _close(view, want_cw[c])
            assert (np.abs(view["gap"]) * view["weight"]).sum() / view.attrs["total_weight"] == pytest.approx(
                want_cw[c].attrs["ece"], rel=RTOL)


def test_a_class_never_predicted():
    df = _frame(6_000, 5, owl=0.01)
    preds_p = df[[f"p_{c}" for c in CLASSES]].to_numpy()
    assert (preds_p.argmax(axis=1) == 3).sum() == 0 and (df.label == "owl").any()
    s = cv.scan(df)
    y = pd.Categorical(df.label, categories=CLASSES).codes
    assert s.top_label_view("owl").n == 0
    # every scheme gives an empty view no bins (EqualMass and PAVA raised IndexError there, a fuzz)
    for scheme in (Uniform(10), EqualMass(10), PAVA(), PAVABC(), MedianVariance(), Custom((0, 0.5, 1))):
        assert s.top_label_view("owl").reliability_table(scheme).empty, scheme
        assert s.top_label_view("owl").bin_statistics(scheme).count.sum() == 0, scheme
    for scheme, cfg in SCHEMES:
        got = s.metrics(["top_label_ece", "top_label_mce", "classwise_ece"], config=cfg).set_index("metric")["value"]
        assert got["top_label_ece"] == pytest.approx(cv.metrics.top_label_ece(y, preds_p, binning=scheme), rel=RTOL)
        assert got["top_label_mce"] == pytest.approx(cv.metrics.top_label_mce(y, preds_p, binning=scheme), rel=RTOL)
        assert got["classwise_ece"] == pytest.approx(cv.metrics.classwise_ece(y, preds_p, binning=scheme), rel=RTOL)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_class_predicted_only_on_rows_of_weight_0(tmp_path, engine):
    """Rows of weight 0 are absent rows: a class whose predicted rows all weigh 0 is a class never predicted (its
    top-label view empty), not a log "zero everywhere" (a fuzz: top-label ECE and MCE were NaN and the top-label
    tables refused the whole file)."""
    from calibviz.scan import tables

    rng = np.random.default_rng(0)
    n = 60
    P = np.tile([0.6, 0.3, 0.1], (n, 1))
    P[0] = [0.1, 0.2, 0.7]  # the one row predicted "c", of weight 0
    y = np.array(["a", "b", "c"])[rng.integers(0, 3, n)]
    w = np.r_[0.0, rng.uniform(0.5, 2.0, n - 1)]
    pd.DataFrame({"label": y, "p_a": P[:, 0], "p_b": P[:, 1], "p_c": P[:, 2], "w": w}).to_parquet(tmp_path / "z.parquet")
    s = cv.scan(str(tmp_path / "z.parquet"), weight="w", engine=engine)
    assert s.top_label_view("c").n == 0
    with pytest.raises(cv.InputError, match="holds no rows"):  # not a ZeroDivisionError (a review)
        s.top_label_view("c").metrics(["ece"], n_reference=0)
    codes = pd.Categorical(y, categories=["a", "b", "c"]).codes
    got = s.metrics(["top_label_ece", "top_label_mce"], n_reference=0).set_index("metric")["value"]
    assert got["top_label_ece"] == pytest.approx(cv.metrics.top_label_ece(codes, P, sample_weight=w), rel=RTOL)
    assert got["top_label_mce"] == pytest.approx(cv.metrics.top_label_mce(codes, P, sample_weight=w), rel=RTOL)
    want = mc.per_class_top_label_tables(codes, P, classes=["a", "b", "c"], sample_weight=w)
    assert list(tables.per_class_top_label_tables(s)) == list(want) == ["a"]
    assert not tables.top_label_table(s).empty


def test_views_need_a_multiclass_source():
    s = cv.scan(pd.DataFrame({"y": [0, 1] * 10, "p": [0.2, 0.7] * 10}))
    with pytest.raises(cv.InputError, match="needs a multiclass source"):
        s.class_view(1)
    with pytest.raises(cv.InputError, match="needs a multiclass source"):
        s.top_label_view(1)
    mcs = cv.scan(_frame(2_000, 1))
    with pytest.raises(cv.InputError, match="class 'emu' is not among"):
        mcs.class_view("emu")


@pytest.mark.parametrize("engine", ENGINES)
def test_many_rounded_classes_fall_in_the_same_bins(tmp_path, engine):
    """Eight or more classes given to two decimals: numpy's pairwise row sums differed from the engines' left-to-right
    sums in the last bit, so a renormalised 0.2 became 0.19999999999999996 on a scan and fell a bin lower (an audit:
    confidence ECE 3.9% off at K = 8). Both sum in column order now (validation.row_sums)."""
    rng = np.random.default_rng(11)
    K, n = 10, 6000
    P = np.round(rng.dirichlet(np.full(K, 0.7), n), 2)
    P[:, -1] = np.round(1.0 - P[:, :-1].sum(axis=1), 2)  # rows of 2-decimal entries summing to 1 up to rounding
    keep = P[:, -1] >= 0
    P = P[keep]
    y = (P.cumsum(axis=1) < rng.uniform(size=(len(P), 1))).sum(axis=1).clip(0, K - 1)
    frame = pd.DataFrame({"label": y, **{f"p_{k}": P[:, k] for k in range(K)}})
    path = tmp_path / "rounded.parquet"
    frame.to_parquet(path)
    preds = cv.load_predictions(str(path), renormalize=True)
    s = cv.scan(str(path), engine=engine)
    conf, correct = preds.probs.max(axis=1), (preds.probs.argmax(axis=1) == preds.y).astype(int)
    for binning in (Uniform(15), EqualMass(10)):
        got = s.confidence_view().reliability_table(binning=binning)
        want = cv.reliability_table(correct, conf, binning=binning)
        np.testing.assert_array_equal(got["n"].to_numpy(), want["n"].to_numpy())
        np.testing.assert_allclose(got["mean_pred"].to_numpy(), want["mean_pred"].to_numpy(), rtol=RTOL)
    c = int(np.argmax(np.bincount(y)))
    got = s.class_view(s.classes[c]).reliability_table()
    want = cv.reliability_table((preds.y == c).astype(int), preds.probs[:, c])
    np.testing.assert_array_equal(got["n"].to_numpy(), want["n"].to_numpy())


@pytest.mark.parametrize("engine", ENGINES)
def test_rows_that_sum_to_one_are_read_as_written(tmp_path, engine):
    """[0.2, 0.4, 0.3, 0.1] sums to 1 + 2^-52 in floats; every loader divided each row by its sum, so the 0.4 became
    0.3999999999999999 and fell from uniform bin 4 to bin 3 (DESIGN.md section 4: a score of k/B is in bin k):
    confidence ECE 0.075 from a file against 0.275 from the same matrix (a review). Rows summing to 1 within the
    tolerance are now the user's numbers on every path; only rows renormalised are divided."""
    P = np.array([[0.2, 0.4, 0.3, 0.1]] * 10 + [[0.15, 0.35, 0.25, 0.25]] * 10)
    y = np.array([1] * 2 + [0] * 8 + [1] * 7 + [2] * 3)
    assert cv.validation.row_sums(P)[0] == 1.0 + 2.0 ** -52
    path = str(tmp_path / "edge.parquet")
    pd.DataFrame({"label": y, **{f"p_{k}": P[:, k] for k in range(4)}}).to_parquet(path)
    preds = cv.load_predictions(path)
    np.testing.assert_array_equal(preds.probs, P)
    s = cv.scan(path, engine=engine)
    got = s.metrics(["confidence_ece", "top_label_ece", "classwise_ece"], n_reference=0,
                    config=PanelConfig(n_bins=10)).set_index("metric")["value"]
    for name, want in (("confidence_ece", 0.275), ("top_label_ece", 0.275), ("classwise_ece", 0.25)):
        assert getattr(cv.metrics, name)(y, P, binning=Uniform(10)) == pytest.approx(want, rel=1e-12)
        assert got[name] == pytest.approx(want, rel=1e-12), name
    assert s.confidence_view().reliability_table(Uniform(10), test=None)["bin"].tolist() == [3, 4]
    # renormalising divides only the rows whose sums are off: the others keep their bins
    R = np.vstack([P, [[0.3, 0.3, 0.3, 0.3]] * 4])
    pd.DataFrame({"label": np.r_[y, [3] * 4], **{f"p_{k}": R[:, k] for k in range(4)}}).to_parquet(path)
    preds = cv.load_predictions(path, renormalize=True)
    np.testing.assert_array_equal(preds.probs[:20], P)
    np.testing.assert_allclose(preds.probs[20:], 0.25, rtol=1e-15)
    t = cv.scan(path, renormalize=True, engine=engine).confidence_view().reliability_table(Uniform(10), test=None)
    assert t["bin"].tolist() == [2, 3, 4] and t["n"].tolist() == [4, 10, 10]


@pytest.mark.parametrize("engine", ENGINES)
def test_renormalize_divides_rows_as_in_memory(tmp_path, engine):
    """Class probabilities rounded to 2 decimals independently (rows sum to 0.97-1.03): a scan refused them with
    no way round, although load_predictions(renormalize=True) reads them. Now scan(renormalize=True) divides each
    row by its sum as memory does (same metrics and tables); without it the refusal gives the sums' range and the
    fix, in the in-memory words; rows summing to 0 are refused either way; far sums get the in-memory note."""
    rng = np.random.default_rng(5)
    P = rng.dirichlet(np.full(6, 0.8), 8000)
    y = (P.cumsum(axis=1) < rng.uniform(size=(len(P), 1))).sum(axis=1).clip(0, 5)
    R = np.round(P, 2)
    frame = pd.DataFrame({"label": y, **{f"p_{k}": R[:, k] for k in range(6)}})
    path = str(tmp_path / "r.parquet")
    frame.to_parquet(path)
    sums = cv.validation.row_sums(R)
    off = np.abs(sums - 1) > 1e-3
    with pytest.raises(cv.InputError) as mem:
        cv.load_predictions(path)
    with pytest.raises(cv.InputError) as scanned:
        cv.scan(path, engine=engine).metrics(["confidence_ece"])
    # the same words, without the row positions (an engine gives the rows no order)
    assert str(scanned.value) == f"{path}: {re.sub(r' [(]0-based: [^)]*[)]', '', str(mem.value))}"
    assert f"in {off.sum()} rows (sums from {sums.min():.4g} to {sums.max():.4g})" in str(scanned.value)
    assert "renormalize=True" in str(scanned.value)
    preds = cv.load_predictions(path, renormalize=True)
    s = cv.scan(path, renormalize=True, engine=engine)
    assert s.notes == preds.notes == ()  # rounding: no note
    cfg = PanelConfig(binning="equal_mass", n_bins=10)
    got = s.metrics(["confidence_ece", "classwise_ece"], config=cfg).set_index("metric")["value"]
    assert got["confidence_ece"] == pytest.approx(cv.metrics.confidence_ece(preds.y, preds.probs,
                                                                             binning=EqualMass(10)), rel=RTOL)
    assert got["classwise_ece"] == pytest.approx(cv.metrics.classwise_ece(preds.y, preds.probs,
                                                                           binning=EqualMass(10)), rel=RTOL)
    conf, correct = preds.probs.max(axis=1), (preds.probs.argmax(axis=1) == preds.y).astype(int)
    _close(s.reliability_table(Uniform(15), test=None), cv.reliability_table(correct, conf, binning=Uniform(15),
                                                                              test=None))
    # sums far from 1: renormalised with the in-memory note; a row of zeros refused
    far = frame.copy()
    far.loc[:99, "p_0"] = np.minimum(far.loc[:99, "p_0"] + 0.5, 1.0)
    far.to_parquet(path)
    preds = cv.load_predictions(path, renormalize=True)
    assert cv.scan(path, renormalize=True, engine=engine).notes == preds.notes
    assert "more than rounding" in preds.notes[0]
    far.loc[7, [f"p_{k}" for k in range(6)]] = 0.0
    far.to_parquet(path)
    with pytest.raises(cv.InputError, match=r"rows sum to 0 in 1 row; they cannot be renormalised"):
        cv.scan(path, renormalize=True, engine=engine).metrics(["confidence_ece"])


@pytest.mark.parametrize("engine", ENGINES)
def test_two_class_columns_that_do_not_sum_to_one(tmp_path, engine):
    """Two columns of a binary label: the scan's refusal gives the sums' range as memory does; columns named by
    the classes are renormalised with renormalize=True, other names stay two models' columns."""
    rng = np.random.default_rng(2)
    p = rng.uniform(0.05, 0.95, 3000)
    y = (rng.random(3000) < p).astype(int)
    frame = pd.DataFrame({"y": y, "p_0": np.round(1 - p, 2), "p_1": np.round(p, 2) + 0.1 * (np.arange(3000) < 10)})
    frame["p_1"] = frame["p_1"].clip(upper=1.0)
    path = str(tmp_path / "two.parquet")
    frame.to_parquet(path)
    with pytest.raises(cv.InputError) as mem:
        cv.load_predictions(path)
    with pytest.raises(cv.InputError) as scanned:
        cv.scan(path, engine=engine).metrics(["ece"])
    assert str(scanned.value) == f"{path}: {re.sub(r' [(]0-based: [^)]*[)]', '', str(mem.value))}"
    assert "sums from" in str(scanned.value)
    preds = cv.load_predictions(path, renormalize=True)
    s = cv.scan(path, renormalize=True, engine=engine)
    assert s.metric("brier")[0] == pytest.approx(cv.metrics.brier_score(preds.y, preds.y_prob), rel=RTOL)
    assert s.notes == preds.notes and "more than rounding" in s.notes[0]


@pytest.mark.parametrize("engine", ENGINES)
def test_renormalize_keeps_two_models_columns_apart_as_in_memory(tmp_path, engine):
    """A review: two columns of a binary label that are two models' (m1, m2; sums 0.09-1.61) were divided by their
    sums by scan(renormalize=True), which memory refuses ("dividing by the sums would make up numbers"). The scan
    refuses them in the same words; an opened file without valid rows gets no note of 'nan' sums."""
    rng = np.random.default_rng(1)
    p = rng.uniform(0.05, 0.95, 400)
    frame = pd.DataFrame({"y": (rng.random(400) < p).astype(int), "m1": p.round(2), "m2": (0.7 * p).round(2)})
    path = str(tmp_path / "two_models.parquet")
    frame.to_parquet(path)
    with pytest.raises(cv.InputError) as mem:
        cv.load_predictions(path, label="y", probs=["m1", "m2"], renormalize=True)
    with pytest.raises(cv.InputError) as scanned:
        cv.scan(path, label="y", probs=["m1", "m2"], renormalize=True, engine=engine).metrics(["ece"])
    assert str(scanned.value) == f"{path}: {re.sub(r' [(]0-based: [^)]*[)]', '', str(mem.value))}"
    assert "dividing by the sums would make up numbers" in str(scanned.value)
    empty = frame.assign(m1=np.nan)
    empty.to_parquet(path)
    notes = cv.scan(path, label="y", probs=["m1", "m2"], renormalize=True, engine=engine).notes
    assert not any("renormalised" in n or "nan" in n for n in notes), notes  # the mapping's own notes stay


@pytest.mark.parametrize("engine", ENGINES)
def test_float_labels_with_a_class_named_only_by_its_column(tmp_path, engine):
    """Labels 0.0 / 1.0 and columns p_0, p_1, p_2 (class 2 never a label, so named by its column as text): the
    engines mixed text and numbers in one expression, an internal error (a review)."""
    rng = np.random.default_rng(3)
    P = rng.dirichlet([3, 3, 0.5], 3000)
    y = (rng.uniform(size=3000) < P[:, 1] / (P[:, 0] + P[:, 1])).astype(float)
    pd.DataFrame({"y": y, "p_0": P[:, 0], "p_1": P[:, 1], "p_2": P[:, 2]}).to_parquet(tmp_path / "f.parquet")
    cols = ["p_0", "p_1", "p_2"]
    preds = cv.load_predictions(str(tmp_path / "f.parquet"), probs=cols)
    got = cv.scan(str(tmp_path / "f.parquet"), probs=cols, engine=engine).metrics(["confidence_ece", "classwise_ece"])
    got = got.set_index("metric")["value"]
    assert got["confidence_ece"] == pytest.approx(cv.metrics.confidence_ece(preds.y, preds.probs), rel=RTOL)
    assert got["classwise_ece"] == pytest.approx(cv.metrics.classwise_ece(preds.y, preds.probs), rel=RTOL)


def test_a_multiclass_scan_gets_no_crowded_bins_note_as_in_memory(tmp_path):
    """Class-wise ECE on a scan carried "95% of the predictions fall in one of the 15 bins (predictions near 1
    ...)", the confidence bins' crowding, where 90% of its class probabilities sit near 0 (an audit); memory gives a
    multiclass panel no such note (its bins are not one binning's). Scans now agree."""
    rng = np.random.default_rng(6)
    top = rng.integers(0, 10, 3000)
    P = np.full((3000, 10), 0.02 / 9)
    P[np.arange(3000), top] = 0.98  # every confidence in the last of 15 uniform bins
    y = np.array([rng.choice(10, p=row) for row in P])
    frame = pd.DataFrame({"y": y, **{f"p_{k}": P[:, k] for k in range(10)}})
    frame.to_parquet(tmp_path / "m.parquet")
    keys = ["classwise_ece", "confidence_ece"]
    memory = metric_panel(y, P, metrics=keys, n_resamples=0, n_reference=0)
    scan = cv.scan(str(tmp_path / "m.parquet")).metrics(keys, n_reference=0)
    assert list(memory["note"].fillna("")) == list(scan["note"].fillna("")) == ["", ""], scan["note"].tolist()
