"""The variable ranking (VECE, Kelly & Smyth 2023) of scans equals the in-memory ranking (calibviz.variables)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import calibviz as cv
from calibviz.metrics import vece
from calibviz.scan import variables as scan_variables
from calibviz.variables import variable_ranking

ENGINES = ["duckdb", "polars"]
RTOL = 1e-9
FEATURES = ["age", "income", "visits", "score", "city", "flag"]


def _frame(n=20_000, seed=3):
    """Binary predictions with a continuous, a heavy-tailed (with NaN), an integer (ties), a rounded feature, a text
    feature with a missing level and small levels (pooled), and a boolean; miscalibrated along age."""
    rng = np.random.default_rng(seed)
    p = rng.beta(2, 3, n)
    age = rng.uniform(20, 80, n)
    df = pd.DataFrame({
        "p": p, "age": age, "income": rng.lognormal(10, 2.0, n), "visits": rng.poisson(2, n),
        "score": np.round(rng.normal(size=n), 1),
        "city": rng.choice(["a", "b", "c", "d", "e", "f"], n, p=[.4, .3, .2, .099, .0005, .0005]),
        "flag": rng.uniform(size=n) < .3})
    df.loc[rng.choice(n, 50, replace=False), "income"] = np.nan
    df.loc[rng.choice(n, 40, replace=False), "city"] = None
    df["y"] = (rng.uniform(size=n) < np.clip(p + np.where(age > 50, 0.15, -0.1), 0, 1)).astype(int)
    df["w"] = rng.uniform(0.5, 2.0, n)
    df.loc[::41, "w"] = 0.0  # absent rows
    return df


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    df = _frame()
    path = tmp_path_factory.mktemp("vece") / "preds.parquet"
    df.to_parquet(path)
    return str(path), df


def _same(got: pd.DataFrame, want: pd.DataFrame, *, numeric_max_vce_nan=True):
    """Equal rankings, compared per feature (VECEs equal to 1e-16 may swap places in the stable sort)."""
    assert list(got.columns) == list(want.columns)
    assert sorted(got["feature"]) == sorted(want["feature"])
    g, w = got.set_index("feature"), want.set_index("feature").loc[got["feature"]]
    np.testing.assert_allclose(g["vece"], w["vece"], rtol=RTOL, atol=0)
    np.testing.assert_array_equal(g[["type", "n", "n_bins", "ci_method"]], w[["type", "n", "n_bins", "ci_method"]])
    np.testing.assert_allclose(g[["vece_low", "vece_high"]], w[["vece_low", "vece_high"]], rtol=RTOL, atol=0)
    cat = g["type"] == "categorical"
    np.testing.assert_allclose(g.loc[cat, "max_vce"], w.loc[cat, "max_vce"], rtol=RTOL, atol=0)
    assert g.loc[cat, "level_at_max_vce"].tolist() == w.loc[cat, "level_at_max_vce"].tolist()
    if numeric_max_vce_nan:  # LOESS needs the rows: not on a scan
        assert g.loc[~cat, ["max_vce", "x_at_max_vce"]].isna().all().all()
    np.testing.assert_allclose(got["vece"].to_numpy(), np.sort(want["vece"].to_numpy())[::-1], rtol=RTOL)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("weighted", [False, True])
def test_ranking_equals_in_memory(binary, engine, weighted):
    path, df = binary
    s = cv.scan(path, label="y", probs="p", weight="w" if weighted else None, engine=engine)
    got = s.variable_ranking(FEATURES, random_state=7)
    want = variable_ranking(df[FEATURES], df.y, df.p, sample_weight=df.w if weighted else None, random_state=7)
    assert got.loc[0, "feature"] == "age" and want.loc[0, "feature"] == "age"
    present = df.w > 0 if weighted else np.ones(len(df), bool)
    assert got.set_index("feature").loc["income", "n"] == (present & df.income.notna()).sum()  # no value: left out
    assert got.set_index("feature").loc["city", "n_bins"] == 6  # a-d, "<missing>", e and f pooled
    assert "LOESS" in got.attrs["note"]
    _same(got, want)


def test_default_features_are_the_mappings(binary):
    path, df = binary
    s = cv.scan(path, label="y", probs="p", weight="w")
    assert set(s.mapping.features) == set(FEATURES)
    got = s.variable_ranking(n_resamples=0)
    assert sorted(got["feature"]) == sorted(FEATURES) and (got["ci_method"] == "none").all()
    assert got[["vece_low", "vece_high"]].isna().all().all()


def test_vece_equals_the_metric_on_a_heavy_tail_and_ties(binary):
    path, df = binary
    ok = df.income.notna()
    got = cv.scan(path, label="y", probs="p").variable_ranking(["income", "visits"], n_bins=7, n_resamples=0)
    got = got.set_index("feature")["vece"]
    assert got["income"] == pytest.approx(vece(df.income[ok], df.y[ok], df.p[ok], n_bins=7), rel=RTOL)
    assert got["visits"] == pytest.approx(vece(df.visits, df.y, df.p, n_bins=7), rel=RTOL)


@pytest.mark.parametrize("engine", ENGINES)
def test_refining_by_sub_buckets_and_extreme_ranges(monkeypatch, engine):
    """Splits in buckets too large for exact values are refined by sub-buckets, over several rounds."""
    monkeypatch.setattr(scan_variables, "EXACT_ROWS", 8)
    rng = np.random.default_rng(5)
    n = 12_000
    p = rng.uniform(0.05, 0.95, n)
    x = np.concatenate([rng.lognormal(0, 1, n - 20), [1e12, -1e12, 1e-300] * 6, [3e300, -3e300]])
    tied = np.round(rng.lognormal(0, 1, n), 3)  # ties inside buckets: runs moved to their nearer end
    df = pd.DataFrame({"p": p, "x": x, "tied": tied, "w": 1.0 + np.round(tied * 1000) % 3})
    df["y"] = (rng.uniform(size=n) < p ** 1.3).astype(int)
    for w in (None, "w"):
        got = cv.scan(df, label="y", probs="p", weight=w, engine=engine).variable_ranking(["x", "tied"],
                                                                                          random_state=2)
        want = variable_ranking(df[["x", "tied"]], df.y, df.p, sample_weight=None if w is None else df.w,
                                random_state=2)
        _same(got, want)


@pytest.mark.parametrize("engine", ENGINES)
def test_multiclass_top_label_and_views(tmp_path, engine):
    rng = np.random.default_rng(8)
    n, classes = 15_000, ["cat", "dog", "fox"]
    P = rng.dirichlet(np.full(3, 0.8), n)
    P[:300] = 1 / 3  # ties: argmax goes to the first class
    y = (P.cumsum(axis=1) < rng.uniform(size=(n, 1))).sum(axis=1)
    age = rng.uniform(0, 10, n)
    y = np.where((age > 7) & (rng.uniform(size=n) < 0.3), (y + 1) % 3, y)  # more errors at age > 7
    df = pd.DataFrame({"label": np.array(classes)[y], **{f"p_{c}": P[:, i] for i, c in enumerate(classes)},
                       "age": age, "site": rng.choice(["north", "south", "west"], n)})
    path = tmp_path / "mc.parquet"
    df.to_parquet(path)
    preds = cv.load_predictions(str(path))
    s = cv.scan(str(path), engine=engine)
    got = s.variable_ranking(["age", "site"])
    want = variable_ranking(df[["age", "site"]], preds.y, preds.probs)
    assert got.loc[0, "feature"] == "age"
    _same(got, want)
    k = classes.index("dog")  # one-vs-rest: the binary model P(dog) against 1{dog}
    view = s.class_view("dog").variable_ranking(["age"], n_resamples=0)
    assert view.loc[0, "vece"] == pytest.approx(vece(df.age, preds.y == k, preds.probs[:, k]), rel=RTOL)
    rows = preds.probs.argmax(axis=1) == k  # top-label view: the rows predicted as dog
    top = s.top_label_view("dog").variable_ranking(["age"], n_resamples=0)
    assert top.loc[0, "vece"] == pytest.approx(vece(df.age[rows], preds.y[rows], preds.probs[rows]), rel=RTOL)


def test_level_cap_and_pooling(binary):
    path, df = binary
    s = cv.scan(path, label="y", probs="p")
    with pytest.raises(cv.InputError, match=r"feature 'city' has more than 4 distinct values.*features="):
        s.variable_ranking(["city"], max_distinct=4)
    got = s.variable_ranking(["city"], max_levels=2, min_level_rows=100, random_state=1)
    want = variable_ranking(df[["city"]], df.y, df.p, max_levels=2, min_level_rows=100, random_state=1)
    assert got.loc[0, "n_bins"] == 3  # a, b, "(other levels)"
    _same(got, want)


def test_bad_input_is_reported(binary):
    path, df = binary
    s = cv.scan(path, label="y", probs="p")
    with pytest.raises(cv.InputError, match=r"\['height'\] are not in"):
        s.variable_ranking(["age", "height"])
    with pytest.raises(cv.InputError, match="n_bins must be a positive integer"):
        s.variable_ranking(["age"], n_bins=0)
    with pytest.raises(cv.InputError, match="no numeric columns"):
        s.variable_ranking(["city"], categorical=False)
    bad = df.copy()
    bad.loc[[4, 8], "p"] = 1.5
    with pytest.raises(cv.InputError, match="outside it in 2 rows"):  # checked before any feature
        cv.scan(bad, label="y", probs="p").variable_ranking(["age"])


def test_constant_and_empty_features_are_not_ranked():
    df = pd.DataFrame({"y": [0, 1] * 50, "p": np.linspace(0.1, 0.9, 100), "const": 3.0, "none": np.nan,
                       "x": np.arange(100.0)})
    got = cv.scan(df).variable_ranking(["const", "none", "x"], n_resamples=0)
    want = variable_ranking(df[["const", "none", "x"]], df.y, df.p, n_resamples=0)
    assert got["feature"].tolist() == want["feature"].tolist() == ["x"]


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_equal_mass_bins_property(data):
    """Any small x with ties, weights or none, any number of bins: the bins and VECE of the in-memory ranking."""
    n = data.draw(st.integers(20, 150))
    seed = data.draw(st.integers(0, 2 ** 32 - 1))
    rng = np.random.default_rng(seed)
    distinct = data.draw(st.integers(2, 40))
    x = rng.choice(rng.normal(size=distinct) * 10.0 ** rng.integers(-3, 4), n)
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p).astype(int)
    # weights: equal within a run of tied x (otherwise the in-memory bins depend on the sort order of the ties,
    # which numpy leaves unspecified: a cut inside a run moves by whether the run's first row carries the target)
    w = (1.0 + np.abs(np.round(x * 7)) % 4) if data.draw(st.booleans()) else None
    y[:2] = [0, 1]
    n_bins = data.draw(st.integers(1, 12))
    df = pd.DataFrame({"y": y, "p": p, "x": x, **({} if w is None else {"w": w})})
    got = cv.scan(df, label="y", probs="p", weight=None if w is None else "w", engine="polars").variable_ranking(
        ["x"], n_bins=n_bins, n_resamples=0)
    want = variable_ranking(df[["x"]], y, p, n_bins=n_bins, sample_weight=w, n_resamples=0)
    assert got[["n", "n_bins"]].values.tolist() == want[["n", "n_bins"]].values.tolist()
    np.testing.assert_allclose(got["vece"], want["vece"], rtol=RTOL, atol=1e-15)


def test_long_format_models_rank_their_own_rows():
    rng = np.random.default_rng(9)
    n = 12_000
    df = pd.DataFrame({"model": np.repeat(["m1", "m2"], n // 2), "p": rng.uniform(0.05, 0.95, n),
                       "age": rng.uniform(0, 100, n), "site": rng.choice(["x", "y", "z"], n)})
    shift = np.where(df.model == "m1", 0.2, 0.0) * (df.age > 50)
    df["y"] = (rng.uniform(size=n) < np.clip(df.p + shift, 0, 1)).astype(int)
    scans = cv.scan(df, label="y", probs="p", model="model").models
    assert list(scans) == ["m1", "m2"]
    for name, s in scans.items():
        part = df[df.model == name]
        got = s.variable_ranking(["age", "site"], random_state=3)
        want = variable_ranking(part[["age", "site"]], part.y, part.p, random_state=3)
        _same(got, want)


def test_defaults_are_the_in_memory_ones():
    import inspect

    scan_sig = inspect.signature(cv.scan(pd.DataFrame({"y": [0, 1] * 10, "p": [0.3, 0.6] * 10})).variable_ranking)
    mem_sig = inspect.signature(variable_ranking)
    for name in ("n_bins", "n_resamples", "confidence", "random_state", "categorical", "max_levels",
                 "min_level_rows"):
        assert scan_sig.parameters[name].default == mem_sig.parameters[name].default, name


@pytest.mark.parametrize("engine", ENGINES)
def test_signed_zeros_are_one_value(engine):
    """-0.0 and 0.0 are one run of x (numpy compares them equal), also where a bucket is refined to exact values."""
    rng = np.random.default_rng(6)
    n = 4_000
    x = rng.choice([-0.0, 0.0, 1e-3, -1e-3, 2e-3], n)
    x[:20] = np.repeat([1e6, -1e6], 10)  # the values near 0 share one of 2^16 buckets: refined to exact values
    p = rng.uniform(size=n)
    df = pd.DataFrame({"y": (rng.uniform(size=n) < p).astype(int), "p": p, "x": x})
    for n_bins in (3, 7):
        got = cv.scan(df, engine=engine).variable_ranking(["x"], n_bins=n_bins, n_resamples=0)
        want = variable_ranking(df[["x"]], df.y, df.p, n_bins=n_bins, n_resamples=0)
        _same(got, want)
