"""Class-wise ECE intervals on multiclass scans: the joint Poisson bootstrap of cell tuples (calibviz.scan.classwise).

The references are independent of the scan: cv.metrics.classwise_ece and metric_panel on the rows loaded with
cv.load_predictions, the in-memory row bootstrap (calibviz.metrics.resampling.bootstrap, which metric_panel's
bias-corrected interval reads), and a population value from a large sample of the true class probabilities.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import calibviz as cv
from calibviz.binning import Custom, Uniform
from calibviz.metrics import classwise_ece
from calibviz.metrics.resampling import bootstrap
from calibviz.panel import PanelConfig, metric_panel
from calibviz.scan import classwise as cw


def _model(n, K, seed, power=1.4, weighted=False):
    """Truth T ~ Dirichlet(1), y ~ T, predictions T^power renormalised (overconfident for power > 1)."""
    rng = np.random.default_rng(seed)
    T = rng.dirichlet(np.ones(K), n)
    y = (T.cumsum(axis=1) < rng.uniform(size=(n, 1))).sum(axis=1)
    P = T ** power
    P /= P.sum(axis=1, keepdims=True)
    w = rng.gamma(2.0, 1.0, n) if weighted else None
    return y, P, w, T


def _frame(y, P, w=None):
    classes = [f"c{k}" for k in range(P.shape[1])]
    df = pd.DataFrame({"label": np.array(classes)[y], **{f"p_{c}": P[:, k] for k, c in enumerate(classes)}})
    if w is not None:
        df["w"] = w
    return df


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """A parquet log (K = 5, weights with zeros: absent rows) and its rows loaded in memory."""
    y, P, w, _ = _model(20_000, 5, 3, weighted=True)
    w[::41] = 0.0
    path = tmp_path_factory.mktemp("cw") / "cw.parquet"
    _frame(y, P, w).to_parquet(path)
    return str(path)


@pytest.mark.parametrize("engine", ["duckdb", "polars"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("binning", [Uniform(15), Custom((0.0, 0.05, 0.2, 0.5, 0.9, 1.0))])
def test_the_cell_table_gives_the_scans_and_the_in_memory_value(source, engine, weighted, binning):
    weight = "w" if weighted else None
    preds = cv.load_predictions(source, weight=weight)
    s = cv.scan(source, weight=weight, engine=engine)
    table = cw.cell_table(s, binning)
    want = classwise_ece(preds.y, preds.probs, binning=binning, sample_weight=preds.weights)
    got = s.metrics(["classwise_ece"], config=PanelConfig(binning=binning)).loc[0, "value"]
    assert table.value() == pytest.approx(want, rel=1e-9, abs=0)
    assert got == pytest.approx(want, rel=1e-9, abs=0)
    present = preds.y.shape[0] if preds.weights is None else int((preds.weights > 0).sum())
    assert table.n.sum() == present == s.n  # the valid rows of positive weight, as the first pass
    assert table.n_groups <= table.n.sum() and (np.diff(table.label) >= 0).all()  # sorted by tuple, label first


@pytest.mark.parametrize("n,K,B", [(20_000, 3, 400), (30_000, 10, 300)])
def test_distribution_and_interval_match_the_row_bootstrap(n, K, B):
    """Mean within 4 Monte Carlo errors, sd within 20% (measured at 2,000 resamples: K = 3, 5, 10 within 2.2%,
    see the module docstring), and metric_panel's interval endpoints within 0.35 of its width."""
    y, P, _, _ = _model(n, K, 7)
    s = cv.scan(_frame(y, P))
    dist = cw.classwise_distribution(cw.cell_table(s, Uniform(15)), B, random_state=0)
    rows = bootstrap(lambda yy, pp, sample_weight=None: classwise_ece(yy, pp, sample_weight=sample_weight), y, P,
                     n_resamples=B, random_state=1).distribution
    se = np.sqrt(dist.var() / B + rows.var() / B)
    assert abs(dist.mean() - rows.mean()) < 4 * se, (dist.mean(), rows.mean(), se)
    assert 0.8 < dist.std() / rows.std() < 1.25, (dist.std(), rows.std())
    got = s.metrics(["classwise_ece"], n_resamples=B, random_state=0).iloc[0]
    mem = metric_panel(y, P, metrics=("classwise_ece",), n_resamples=B, random_state=0, n_reference=0).iloc[0]
    assert got["interval"] == mem["interval"] == "bias_corrected"
    assert got["value"] == pytest.approx(mem["value"], rel=1e-9)
    width = mem["high"] - mem["low"]
    assert abs(got["low"] - mem["low"]) < 0.35 * width and abs(got["high"] - mem["high"]) < 0.35 * width
    assert "No bootstrap" not in got["note"]


def test_weighted_scans_match_the_weighted_row_bootstrap_and_engines_agree(source):
    preds = cv.load_predictions(source, weight="w")
    B = 300
    duck = cv.scan(source, weight="w").metrics(["classwise_ece"], n_resamples=B, random_state=3).iloc[0]
    polars = cv.scan(source, weight="w", engine="polars").metrics(["classwise_ece"], n_resamples=B,
                                                                   random_state=3).iloc[0]
    np.testing.assert_allclose([duck["low"], duck["high"]], [polars["low"], polars["high"]], rtol=1e-9)
    assert np.isfinite(duck["low"]) and duck["low"] < duck["high"]
    dist = cw.classwise_distribution(cw.cell_table(cv.scan(source, weight="w"), Uniform(15)), B, random_state=0)
    rows = bootstrap(lambda yy, pp, sample_weight=None: classwise_ece(yy, pp, sample_weight=sample_weight),
                     preds.y, preds.probs, sample_weight=preds.weights, n_resamples=B, random_state=1).distribution
    se = np.sqrt(dist.var() / B + rows.var() / B)
    assert abs(dist.mean() - rows.mean()) < 4 * se, (dist.mean(), rows.mean(), se)
    assert 0.8 < dist.std() / rows.std() < 1.25, (dist.std(), rows.std())
    mem = metric_panel(preds.y, preds.probs, sample_weight=preds.weights, metrics=("classwise_ece",), n_resamples=B,
                       random_state=0, n_reference=0).iloc[0]
    width = mem["high"] - mem["low"]
    assert duck["interval"] == mem["interval"]
    assert abs(duck["low"] - mem["low"]) < 0.35 * width and abs(duck["high"] - mem["high"]) < 0.35 * width


def test_no_interval_over_the_cap_or_without_fixed_edges(monkeypatch):
    y, P, _, _ = _model(5_000, 4, 2)
    df = _frame(y, P)
    t = cv.scan(df).metrics(["classwise_ece", "confidence_ece"], config=PanelConfig(binning="equal_mass"),
                            n_resamples=50, random_state=0).set_index("metric")
    assert np.isnan(t.loc["classwise_ece", "low"]) and np.isnan(t.loc["classwise_ece", "high"])
    assert "fixed edges" in t.loc["classwise_ece", "note"] and "cv.load_predictions" in t.loc["classwise_ece", "note"]
    assert np.isfinite(t.loc["confidence_ece", "high"])  # the others keep theirs
    monkeypatch.setattr(cw, "MAX_GROUPS", 10)
    t = cv.scan(df).metrics(["classwise_ece"], n_resamples=50, random_state=0).iloc[0]
    assert np.isnan(t["low"]) and np.isnan(t["high"]) and t["interval"] == ""
    assert "more than 10 distinct cells" in t["note"] and "cv.load_predictions" in t["note"]
    assert np.isfinite(t["value"])


def test_a_small_scan_uses_the_panels_double_bootstrap_of_its_rows():
    """900 rows, 60 per bin: class-wise ECE's calibrated upper bound, computed on the scan's rows in memory."""
    y, P, _, _ = _model(900, 3, 5)
    got = cv.scan(_frame(y, P)).metrics(["classwise_ece"], n_resamples=50, random_state=0).iloc[0]
    mem = metric_panel(y, P, metrics=("classwise_ece",), n_resamples=50, random_state=0, n_reference=0).iloc[0]
    assert got["interval"] == mem["interval"] == "double_basic, upper bound"
    assert got["high"] == pytest.approx(mem["high"], rel=1e-9)  # DuckDB keeps a DataFrame's row order
    assert got["low"] == -np.inf


def _population_cw_ece(K, power, edges, n=2_000_000, seed=99):
    """Population class-wise ECE: per class and bin, the mean of (T_k - P_k) over a large sample of the truth
    (no label noise: the gap's expectation is the mean of T_k - P_k over rows in the bin)."""
    _, P, _, T = _model(n, K, seed, power)
    total = 0.0
    for k in range(K):
        b = Uniform(len(edges) - 1).fit(P[:, k]).index
        total += np.abs(np.bincount(b, T[:, k] - P[:, k], minlength=len(edges) - 1)).sum() / n
    return total / K


def test_coverage_of_a_miscalibrated_model():
    """40 logs of 5,000 rows (K = 4, overconfident: population CW-ECE 0.0397), 200 resamples each.

    Measured: 35 of 40 (87.5%, Monte Carlo se 5.2) intervals hold the population value 0.0397 (the coverage
    study's in-memory bias-corrected interval at n = 5,000: 92.5% over 200 replications); the bound is 33
    (2.4 binomial sds below 92.5%). A calibrated model's CW-ECE is 0, on the boundary, where no interval
    covers; the calibrated-model reference answers that question.
    """
    K, power = 4, 1.4
    truth = _population_cw_ece(K, power, np.linspace(0, 1, 16))
    hits = 0
    reps = 40
    for r in range(reps):
        y, P, _, _ = _model(5_000, K, 1_000 + r, power)
        t = cv.scan(_frame(y, P)).metrics(["classwise_ece"], n_resamples=200, random_state=r).iloc[0]
        hits += t["low"] <= truth <= t["high"]
    assert hits >= 33, hits


# -- the calibrated-model reference ------------------------------------------------------------------------------


@pytest.mark.parametrize("K, n", [(3, 20_000), (10, 20_000)])
def test_reference_agrees_with_the_per_row_reference(K, n):
    """Labels redrawn per cell tuple against consistency_test's per-row Categorical(P_i) redraws of the same rows
    (an independent implementation): the same null mean, range and p-value within Monte Carlo error, on a
    calibrated model (power 1: y ~ P)."""
    from calibviz.metrics import consistency_test

    y, P, _, _ = _model(n, K, seed=40 + K, power=1.0)
    got = cw.classwise_reference(cw.cell_table(cv.scan(_frame(y, P)), "uniform"), 1000, 0)
    want = consistency_test(y, P, metric="classwise_ece", n_resamples=1000, random_state=1)
    spread = want.null_high - want.null_low
    assert got[0] == pytest.approx(want.null_mean, abs=0.03 * spread)
    assert got[1] == pytest.approx(want.null_low, abs=0.1 * spread)
    assert got[2] == pytest.approx(want.null_high, abs=0.1 * spread)
    assert got[3] == pytest.approx(want.p_value, abs=0.05)  # two independent 1000-redraw p-values
    assert got[3] > 0.05


def test_reference_flags_a_miscalibrated_model_and_reads_in_the_panel():
    y, P, w, _ = _model(20_000, 4, seed=7, power=1.4)  # overconfident
    s = cv.scan(_frame(y, P))
    row = s.metrics(["classwise_ece"], n_reference=200, random_state=0).set_index("metric").loc["classwise_ece"]
    assert row["p_value"] < 0.01 and row["verdict"] == "evidence of miscalibration"
    assert "A perfectly calibrated model with these predictions would show" in row["reading"]
    assert row["null_low"] < row["null_high"] < row["value"]
    # weighted scans: the weighted redraw per cell tuple flags it too
    sw = cv.scan(_frame(y, P, np.random.default_rng(8).gamma(2.0, 1.0, y.size)), weight="w")
    roww = sw.metrics(["classwise_ece"], n_reference=200, random_state=0).set_index("metric").loc["classwise_ece"]
    assert roww["p_value"] < 0.01 and "A perfectly calibrated model with these predictions" in roww["reading"]
    assert roww["null_low"] < roww["null_high"] < roww["value"]


def _weighted_calibrated(n, K, seed, law):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.full(K, 0.7), n)
    y = (P.cumsum(axis=1) < rng.uniform(size=(n, 1))).sum(axis=1)  # calibrated: y ~ P
    w = rng.lognormal(0.0, 1.5, n) if law == "lognormal" else np.exp(3 * P.max(axis=1)) * rng.exponential(size=n)
    return y, P, w


@pytest.mark.parametrize("K, law", [(3, "lognormal"), (10, "correlated")])
def test_weighted_reference_agrees_with_the_per_row_weighted_reference(K, law):
    """Weighted label redraws per cell tuple against consistency_test's per-row weighted redraws of the same rows
    (sample_weight; an independent implementation): null mean and range within Monte Carlo error, the p-value
    no lower than the per-row one by more than Monte Carlo error (the scan's null is at most wider)."""
    from calibviz.metrics import consistency_test

    y, P, w = _weighted_calibrated(20_000, K, 50 + K, law)
    got = cw.classwise_reference(cw.cell_table(cv.scan(_frame(y, P, w), weight="w"), "uniform"), 1000, 0)
    want = consistency_test(y, P, metric="classwise_ece", n_resamples=1000, random_state=1, sample_weight=w)
    spread = want.null_high - want.null_low
    assert got[0] == pytest.approx(want.null_mean, abs=0.05 * spread)
    assert got[1] == pytest.approx(want.null_low, abs=0.15 * spread)
    assert got[2] == pytest.approx(want.null_high, abs=0.15 * spread)
    assert got[3] >= want.p_value - 0.05


def test_weighted_reference_has_its_size_on_calibrated_weighted_logs():
    """No false alarms: 40 calibrated logs (K = 4, 3,000 rows, lognormal(0, 1.5) weights), 100 redraws each.

    Measured at full size (200 logs of 5,000 rows, 200 redraws): 4.0% of p-values at most 0.05 with lognormal
    weights, 1.0% with weights growing with the top probability (mean p-values 0.55, 0.57). The bound, 6 of 40,
    is 2.9 binomial sds above the nominal 2."""
    rejected = 0
    for r in range(40):
        y, P, w = _weighted_calibrated(3_000, 4, 2_000 + r, "lognormal")
        p = cw.classwise_reference(cw.cell_table(cv.scan(_frame(y, P, w), weight="w"), "uniform"), 100, r)[3]
        rejected += p <= 0.05
    assert rejected <= 6, rejected


def test_equal_weights_draw_the_unweighted_multinomial():
    """Equal weights within every tuple: the effective rows are the tuple's rows (the unweighted draw, scaled)."""
    y, P, _, _ = _model(5_000, 4, seed=3, power=1.0)
    t = cw.cell_table(cv.scan(_frame(y, P, np.full(y.size, 2.5)), weight="w"), "uniform")
    mean = t.swp / t.sw[:, None]
    np.testing.assert_allclose(cw._effective_rows(t, mean / mean.sum(axis=1, keepdims=True)), t.n, rtol=1e-12)


# ----------------------------------------------------------------------------- per-class test of a scan's ranking

def test_class_ranking_tests_classes_as_the_in_memory_ranking_does():
    """One class made overconfident, the others calibrated: the scan's per-class p-values (label redraws per cell
    tuple, read class by class) agree with the in-memory per-row redraws within Monte Carlo error, the shifted
    class is flagged and the calibrated ones are not; the redraws are classwise_reference's."""
    from calibviz.multiclass import class_ranking, class_test_sentence
    from calibviz.scan import tables as T

    rng = np.random.default_rng(12)
    n, K = 20_000, 4
    P = rng.dirichlet(np.full(K, 2.0), n)
    truth = P.copy()
    truth[:, 0] = 0.5 * P[:, 0]  # class c0 happens half as often as predicted
    truth /= truth.sum(axis=1, keepdims=True)
    y = (truth.cumsum(axis=1) < rng.uniform(size=(n, 1))).sum(axis=1)
    s = cv.scan(_frame(y, P))
    got = T.class_ranking(s, "uniform", n_reference=400, random_state=3).set_index("label")
    want = class_ranking(y, P, classes=[f"c{k}" for k in range(K)], n_resamples=0, n_reference=400,
                         random_state=3).set_index("label")
    np.testing.assert_allclose(got["value"], want.loc[got.index, "value"], rtol=1e-9)
    assert got.loc["c0", "p_value"] == pytest.approx(1 / 401)  # beyond every redraw
    assert got.loc["c0", "p_adjusted"] <= (K + 1) / 401  # minP's floor: each class's largest redraw reaches it
    calibrated = ["c1", "c2", "c3"]
    np.testing.assert_allclose(got.loc[calibrated, "p_value"], want.loc[calibrated, "p_value"], atol=0.1)
    ranking = T.class_ranking(s, "uniform", n_reference=400, random_state=3)
    assert ranking.attrs["n_reference"] == 400 and ranking.attrs["p_value"] == got.loc["c0", "p_adjusted"]
    assert class_test_sentence(ranking, 0.05).startswith(
        "One-vs-rest ECE beyond what a calibrated model shows (the 4 classes judged together, α = 0.05): c0 (")


def test_class_ranking_without_fixed_edges_or_over_budget_is_not_tested(monkeypatch):
    from calibviz import multiclass
    from calibviz.scan import tables as T

    y, P, _, _ = _model(3_000, 3, seed=5, power=1.0)
    s = cv.scan(_frame(y, P))
    r = T.class_ranking(s, "equal_mass", n_reference=200)
    assert r["p_value"].isna().all() and r.attrs["n_reference"] == 0
    assert "bins with fixed edges (uniform or custom)" in r.attrs["no_test"]
    monkeypatch.setattr(multiclass, "CLASS_REFERENCE_BUDGET", 1000)
    r = T.class_ranking(s, "uniform", n_reference=200)
    assert r["p_adjusted"].isna().all() and "exceed the budget" in r.attrs["no_test"]
    assert T.class_ranking(s, "uniform")["p_value"].isna().all()  # no reference asked
    with pytest.raises(cv.InputError, match="n_reference must be a non-negative integer"):
        T.class_ranking(s, "uniform", n_reference=-3)


@pytest.mark.slow
def test_calibrated_scans_rarely_get_a_class_flagged():
    """60 calibrated logs (K = 3, 3,000 rows), the report's redraws (320): some class's adjusted p <= 0.05 on 3
    expected (minP is exact up to the conservative per-tuple draw); P(>= 8) < 0.02 at 5%."""
    from calibviz.multiclass import class_reference_draws
    from calibviz.scan import tables as T

    hits = 0
    for r in range(60):
        y, P, _, _ = _model(3_000, 3, seed=3_000 + r, power=1.0)
        ranking = T.class_ranking(cv.scan(_frame(y, P)), "uniform", n_reference=class_reference_draws(3),
                                  random_state=r)
        hits += bool((ranking["p_adjusted"] <= 0.05).any())
    assert hits <= 7, hits
