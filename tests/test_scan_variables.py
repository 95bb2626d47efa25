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


def _same(got: pd.DataFrame, want: pd.DataFrame, *, numeric_max_vce_nan=True, gaussian_reference=True):
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
    # the reference: on Gaussian bins the in-memory law and random numbers, hence its p-values; where the in-memory
    # ranking redraws rows (small data) two Monte Carlo estimates of one p-value (2,000 draws: sd <= 0.016)
    # the test beyond the score's miscalibration likewise (its fit from Newton passes over the rows: to ~1e-12)
    cols = ["p_value", "p_adjusted", "p_varies", "p_varies_adjusted"]
    np.testing.assert_allclose(g[cols], w[cols], rtol=RTOL if gaussian_reference else 0,
                               atol=0 if gaussian_reference else 0.07)
    assert g["p_varies"].notna().all()
    np.testing.assert_array_equal(g["n_reference"], w["n_reference"])


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
    assert got.attrs["mean_gap"] == pytest.approx(want.attrs["mean_gap"], rel=RTOL)  # VECE's floor
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
    only_levels = cv.scan(df.assign(c=np.where(x > 0, "pos", "other")), engine=engine)
    assert only_levels.variable_ranking(["c"]).attrs["mean_gap"] == pytest.approx(
        variable_ranking(df.assign(c=np.where(x > 0, "pos", "other"))[["c"]], df.y, df.p).attrs["mean_gap"], rel=RTOL)
    for n_bins in (3, 7):
        got = cv.scan(df, engine=engine).variable_ranking(["x"], n_bins=n_bins, n_resamples=0)
        want = variable_ranking(df[["x"]], df.y, df.p, n_bins=n_bins, n_resamples=0)
        _same(got, want, gaussian_reference=False)  # 4,000 rows: the in-memory reference redraws them


# ----------------------------------------------------------------------------- VECE against a calibrated model

def test_cumulant_null_is_the_gaussian_reference_where_bins_are_symmetric():
    """Bins of a few hundred rows of mid-range scores: the row-free reference uses the in-memory Gaussian law with
    the same random numbers, so it gives bernoulli_abs_sum_p's p-value (which takes that path above 2^23 rows x
    draws)."""
    from calibviz.stats import bernoulli_abs_sum_p, cumulant_abs_sum_p

    rng = np.random.default_rng(2)
    q = rng.uniform(0.3, 0.7, 20_000)
    starts = np.arange(0, q.size, 2_000)
    v = q * (1 - q)
    var, k3 = np.add.reduceat(v, starts), np.add.reduceat(v * (1 - 2 * q), starts)
    for observed in (30.0, 80.0, 200.0):
        rows = bernoulli_abs_sum_p(starts, q, None, observed, n_draws=2000, random_state=9)
        sums = cumulant_abs_sum_p(var, k3, observed, n_draws=2000, random_state=9)
        assert rows[1] == sums[1] == "gaussian"
        assert sums[0] == pytest.approx(rows[0], rel=1e-12)


@pytest.mark.parametrize("weighted", [False, True])
def test_skewed_bins_take_the_three_cumulant_law_close_to_redrawn_rows(weighted):
    """Rare events in small bins (null skewness ~1): the gamma with the bins' three cumulants gives the p-values of
    outcomes redrawn row by row (the exact null), which the Gaussian law misses in the tail."""
    from calibviz.stats import _abs_sum_draws, bernoulli_abs_sum_p, cumulant_abs_sum_p

    rng = np.random.default_rng(4)
    q = rng.beta(0.5, 30, 400)  # predicted errors near 0: 8 bins of 50 rows, ~0.8 expected errors each
    w = rng.lognormal(0, 0.5, q.size) if weighted else None
    starts = np.arange(0, q.size, 50)
    ww = np.ones_like(q) if w is None else w
    v = ww ** 2 * q * (1 - q)
    var, k3 = np.add.reduceat(v, starts), np.add.reduceat(v * ww * (1 - 2 * q), starts)
    assert (k3 / var ** 1.5).max() > 0.3
    null_rows = np.sort(np.concatenate([
        np.abs(np.add.reduceat(((rng.uniform(size=(20_000, q.size)) < q) - q) * ww, starts, axis=1)).sum(axis=1)]))
    gauss = np.sort(_abs_sum_draws(np.random.default_rng(1), var, None, 20_000))
    for level in (0.9, 0.95, 0.99):
        observed = float(np.quantile(null_rows, level))
        p, how, _ = cumulant_abs_sum_p(var, k3, observed, n_draws=20_000, random_state=3)
        exact = bernoulli_abs_sum_p(starts, q, w, observed, n_draws=20_000, random_state=5)[0]
        assert how == "gamma (3 cumulants)"
        assert p == pytest.approx(exact, abs=0.25 * (1 - level) + 0.004)  # within a quarter of the tail
    # measured: exact 0.0105-0.011, gamma 0.0113-0.0119, Gaussian 0.0058 (twice the false alarms at 1%)
    assert p > 0.85 * exact and np.mean(gauss >= observed) < 0.7 * exact


def test_cumulant_reference_bad_and_degenerate_input():
    from calibviz.errors import InputError
    from calibviz.stats import cumulant_abs_sum_p

    with pytest.raises(InputError, match="n_draws must be a positive integer"):
        cumulant_abs_sum_p([1.0], [0.0], 1.0, n_draws=0)
    assert cumulant_abs_sum_p([0.0, 0.0], [0.0, 0.0], 0.0)[0] == 1.0  # no variance: every draw reaches 0
    assert cumulant_abs_sum_p([0.0, 0.0], [0.0, 0.0], 0.5)[0] == pytest.approx(1 / 2001)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_variable_off_calibration_is_found_and_judged_with_the_others(engine):
    """Errors 0.1 above their prediction for age > 50 and 0.1 below elsewhere (calibrated on average): age is beyond
    chance, the noise columns are not, and the adjusted p-values are Holm's over the ranked variables."""
    from calibviz.stats import holm_adjusted
    from calibviz.variables import vece_test_sentence

    rng = np.random.default_rng(8)
    n = 20_000
    p = rng.uniform(0.15, 0.45, n)  # every row predicts 0: its predicted error is p, its error y
    df = pd.DataFrame({"p": p, "age": rng.uniform(20, 80, n), "noise": rng.normal(size=n),
                       "visits": rng.poisson(2, n), "city": rng.choice(list("abc"), n)})
    df["y"] = (rng.uniform(size=n) < p + np.where(df.age > 50, 0.1, -0.1)).astype(int)
    features = ["age", "noise", "visits", "city"]
    got = cv.scan(df, label="y", probs="p", engine=engine).variable_ranking(features, n_resamples=0)
    r = got.set_index("feature")
    assert r.loc["age", "p_value"] == pytest.approx(1 / 2001)  # beyond every draw
    assert r.loc["age", "p_adjusted"] == pytest.approx(4 / 2001)
    assert (r.loc[["noise", "visits", "city"], "p_adjusted"] > 0.05).all()
    np.testing.assert_allclose(got["p_adjusted"], holm_adjusted(got["p_value"].to_numpy()))
    assert (got["n_reference"] == 2000).all()  # 4 variables at 95%: max(2000, 20 x 4 / 0.05)
    assert vece_test_sentence(got, 0.05).startswith("VECE beyond what a calibrated model shows (the 4 variables "
                                                    "judged together, α = 0.05): age (p ≤ ")


@pytest.mark.slow
def test_calibrated_scans_rarely_get_a_vece_verdict():
    """100 small calibrated logs of rare events (the skewed, gamma path), 3 variables: some variable's adjusted
    p <= 0.05 on 5 expected; P(>= 12) < 0.005 at 5%. benchmarks/bench_scan_vece_reference.py runs more."""
    hits = 0
    for seed in range(100):
        rng = np.random.default_rng(900 + seed)
        n = 600
        p = rng.beta(0.5, 20, n)
        df = pd.DataFrame({"p": p, "y": (rng.uniform(size=n) < p).astype(int), "age": rng.uniform(20, 80, n),
                           "visits": rng.poisson(2, n), "city": rng.choice(list("abcd"), n)})
        r = cv.scan(df).variable_ranking(["age", "visits", "city"], n_resamples=0, random_state=seed)
        hits += bool((r["p_adjusted"] <= 0.05).any())
    assert hits <= 11


def test_a_variable_at_the_overall_gap_is_named_as_the_floor():
    """Over-confident everywhere (errors 0.1 above their prediction in every row): a noise variable's bins all
    share the gap's sign, so its VECE is the overall gap, VECE's floor, and the caption names it (as in memory)."""
    from calibviz.variables import vece_floor_caption

    rng = np.random.default_rng(9)
    n = 20_000
    p = rng.uniform(0.1, 0.4, n)
    df = pd.DataFrame({"p": p, "noise": rng.normal(size=n), "y": (rng.uniform(size=n) < p + 0.1).astype(int)})
    got = cv.scan(df).variable_ranking(["noise"], n_resamples=0)
    want = variable_ranking(df[["noise"]], df.y, df.p, n_resamples=0)
    assert got.attrs["mean_gap"] == pytest.approx(want.attrs["mean_gap"], rel=RTOL)
    assert got.loc[0, "vece"] == pytest.approx(abs(got.attrs["mean_gap"]), rel=RTOL)
    assert vece_floor_caption(got) == vece_floor_caption(want) is not None
    assert "sits exactly there, however much the gap varies along it: noise." in vece_floor_caption(got)
    # and the test beyond the overall gap finds nothing along it, as in memory
    assert got.loc[0, "p_varies"] == pytest.approx(want.loc[0, "p_varies"], rel=RTOL)
    assert got.loc[0, "p_varies"] > 0.05


def test_a_skewed_feature_leaves_the_next_ones_p_values_those_of_memory():
    """Each feature draws its reference from a stream of its own: after a feature with a skewed bin (gamma on the
    scan, redrawn rows in memory, which take different amounts of random numbers) a Gaussian feature still gets
    the in-memory p-value."""
    from calibviz.stats import GAUSSIAN_MAX_SKEWNESS

    rng = np.random.default_rng(21)
    n = 20_000
    p = rng.beta(0.5, 20, n)  # rare events; binned along p itself the lowest bin's errors are skewed
    df = pd.DataFrame({"p": p, "y": (rng.uniform(size=n) < p).astype(int), "score": p, "x": rng.uniform(size=n)})
    low = np.sort(p)[: n // 10]
    assert (low * (1 - low) * (1 - 2 * low)).sum() / (low * (1 - low)).sum() ** 1.5 > GAUSSIAN_MAX_SKEWNESS
    got = cv.scan(df).variable_ranking(["score", "x"], n_resamples=0).set_index("feature")
    want = variable_ranking(df[["score", "x"]], df.y, df.p, n_resamples=0).set_index("feature")
    assert got.loc["x", "p_value"] == pytest.approx(want.loc["x", "p_value"], rel=RTOL)
    assert got.loc["score", "p_value"] == pytest.approx(want.loc["score", "p_value"], abs=0.05)  # gamma vs redraws


def test_the_test_beyond_the_score_is_nan_where_its_fit_has_no_maximum():
    """A day without events (binary, all 0): the recalibration's intercept runs off, in memory and on a scan, so
    the test beyond the score's miscalibration is NaN and out of Holm's family (the calibrated-model test stays);
    a constant score (a singular design) is fitted on both paths."""
    rng = np.random.default_rng(2)
    n = 3000
    none = pd.DataFrame({"p": rng.uniform(0.05, 0.4, n), "y": 0, "x": rng.normal(size=n)})
    got = cv.scan(none).variable_ranking(["x"], n_resamples=0)
    want = variable_ranking(none[["x"]], none.y, none.p, n_resamples=0)
    assert np.isnan(got.loc[0, "p_varies"]) and np.isnan(want.loc[0, "p_varies"])
    assert np.isnan(got.loc[0, "p_varies_adjusted"]) and got.loc[0, "p_value"] == want.loc[0, "p_value"]
    flat = pd.DataFrame({"p": 0.3, "y": (rng.uniform(size=n) < 0.35).astype(int), "x": rng.normal(size=n)})
    got = cv.scan(flat).variable_ranking(["x"], n_resamples=0)
    want = variable_ranking(flat[["x"]], flat.y, flat.p, n_resamples=0)
    assert got.loc[0, "p_varies"] == pytest.approx(want.loc[0, "p_varies"], abs=0.07)  # redraws vs Gaussian bins
