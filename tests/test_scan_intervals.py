"""Bootstrap intervals on scans (calibviz.scan.resample): a Poisson bootstrap of the bucket table.

The references are independent of the scan: the in-memory row bootstrap
(calibviz.metrics.bootstrap on the loaded rows), metric_panel's interval
columns, row-level Poisson weights aggregated by hand, and population values
of a miscalibrated model integrated with scipy.
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, special, stats

import calibviz as cv
from calibviz import metrics as M
from calibviz.binning import EqualMass, Uniform
from calibviz.metrics.resampling import bootstrap
from calibviz.panel import PanelConfig, metric_panel
from calibviz.scan.resample import BUCKET_BOUND, poisson_draw, resample_distributions

SHIFT, SLOPE = 0.3, 1.5  # the model: q = expit(SLOPE logit(p) + SHIFT), p ~ Beta(2, 5), y ~ Bernoulli(p)


def _model(n, seed, weighted=False):
    rng = np.random.default_rng(seed)
    p = rng.beta(2, 5, n)
    q = special.expit(SLOPE * special.logit(p) + SHIFT)
    y = (rng.uniform(size=n) < p).astype(int)
    w = rng.gamma(2.0, 1.0, n) if weighted else None
    return y, q, w


def _scan(y, q, w=None):
    df = pd.DataFrame({"y": y, "p": q})
    if w is not None:
        df["w"] = w
    return cv.scan(df, weight="w" if w is not None else None)


_FNS = {
    "ece": lambda y, p, sample_weight=None: M.ece(y, p, sample_weight=sample_weight),
    "ace": lambda y, p, sample_weight=None: M.ace(y, p, n_bins=15, sample_weight=sample_weight),
    "debiased_ece": lambda y, p, sample_weight=None: M.debiased_ece(y, p, binning=EqualMass(15),
                                                                    sample_weight=sample_weight),
    "brier": lambda y, p, sample_weight=None: M.brier_score(y, p, sample_weight=sample_weight),
    "log_loss": lambda y, p, sample_weight=None: M.log_loss(y, p, sample_weight=sample_weight),
    "smooth_ece": lambda y, p, sample_weight=None: M.smooth_ece(y, p, sample_weight=sample_weight),
}


def _agree(scan_dist, row_dist, key):
    """Same mean (4 Monte Carlo standard errors), same sd (within 20%), KS does not reject at 0.1%."""
    a, b = scan_dist[np.isfinite(scan_dist)], row_dist
    se = np.sqrt(a.var() / a.size + b.var() / b.size)
    assert abs(a.mean() - b.mean()) < 4 * se, (key, a.mean(), b.mean(), se)
    assert 0.8 < a.std() / b.std() < 1.25, (key, a.std(), b.std())
    assert stats.ks_2samp(a, b).pvalue > 1e-3, key


@pytest.mark.parametrize("n,weighted,keys", [
    (20_000, False, ("ece", "ace", "debiased_ece", "brier", "log_loss", "smooth_ece")),
    (10_000, True, ("ece", "ace", "brier", "log_loss")),
    (10_000, "heavy", ("ece", "brier", "log_loss"))])
def test_poisson_bucket_bootstrap_matches_the_row_bootstrap(n, weighted, keys):
    y, q, w = _model(n, 1, weighted)
    if weighted == "heavy":  # heavy-tailed weights in buckets of many rows (2-decimal scores): the Gamma draw
        q = np.round(q, 2)
        w = np.random.default_rng(11).lognormal(0.0, 1.5, n)
    B = 200
    dist = resample_distributions(_scan(y, q, w), keys, PanelConfig(), B, random_state=0)
    for key in keys:
        rows = bootstrap(_FNS[key], y, q, sample_weight=w, n_resamples=B, random_state=1).distribution
        _agree(dist[key], rows, key)


def test_the_draw_is_exact_in_counts_and_bounded_in_scores():
    """n* is Poisson(n) per atom (mean and variance n); every atom's resampled mean score lies in its range."""
    y, q, _ = _model(20_000, 2)
    # scores with 3 decimals: no bucket holds two scores (one score per atom, about 10 rows), no approximation at all
    s3 = _scan(y, np.round(q, 3))
    s3._ensure_ranges()  # every bucket's exact range (the binned panel's first pass leaves them out)
    a3 = s3._atoms()
    assert (a3.lo == a3.hi).all() and np.median(a3.n) >= 5
    d3 = poisson_draw(a3, 1000, np.random.default_rng(0), False)
    np.testing.assert_array_equal(d3["swp"], d3["n"] * (a3.swp / a3.sw))
    z = (d3["n"].mean(axis=0) - a3.n) / np.sqrt(a3.n / 1000)
    assert np.abs(z).max() < 5.5
    ratio = d3["n"].var(axis=0).sum() / a3.n.sum()  # Poisson: variance = mean
    assert 0.97 < ratio < 1.03
    # continuous scores: the spread inside a bucket is drawn, the mean stays inside the bucket's score range
    atoms = _scan(y, q)._atoms()
    d = poisson_draw(atoms, 50, np.random.default_rng(0), False)
    with np.errstate(invalid="ignore"):
        mean = d["swp"] / d["sw"]
    assert (atoms.lo < atoms.hi).sum() > 100
    tol = 1e-12 * atoms.hi  # float rounding of sw * mean / sw
    assert (np.isnan(mean) | ((mean >= atoms.lo - tol) & (mean <= atoms.hi + tol))).all()


def test_bucket_bound_on_exact_row_poisson_weights():
    """With the same row weights W_i ~ Poisson(1), the bucket approximation moves a resample's ECE by < 2^-16."""
    y, q, _ = _model(30_000, 3)
    s = _scan(y, q)
    atoms = s._atoms()
    rng = np.random.default_rng(5)
    b = np.minimum(np.floor(q * 2 ** 16), 2 ** 16 - 1).astype(np.int64)
    key = b * 2 + y  # atom of each row (no refined bucket: Uniform(15) edges are on the grid)
    assert not atoms.exact.any()
    order = np.searchsorted(atoms.bucket * 2 + atoms.y, key)
    bins = Uniform(15).fit(q).index
    worst = 0.0
    for _ in range(20):
        W = rng.poisson(1.0, q.shape[0]).astype(float)
        exact = M.ece(y, q, sample_weight=W)
        n_star = np.bincount(order, weights=W, minlength=atoms.size)
        mean_p = (atoms.swp / atoms.sw)[order]  # each row's score replaced by its atom's mean
        approx = M.ece(y, mean_p, binning=Uniform(15).fit(q).edges, sample_weight=W)
        assert n_star.sum() == W.sum()
        assert np.array_equal(Uniform(15).fit(mean_p).index, bins)  # no atom crosses an edge
        worst = max(worst, abs(exact - approx))
    assert worst <= BUCKET_BOUND
    assert worst > 0  # the bound is about something


def _columns(t):
    return t[["metric", "label", "interval", "unit"]].reset_index(drop=True)


@pytest.mark.parametrize("n,weighted,n_bins", [(12_000, False, 10), (6_000, False, 15), (8_000, True, 15)])
def test_scan_panel_intervals_match_metric_panel(n, weighted, n_bins):
    """Same columns, the same interval method per metric (small-sample switches included), the same notes on
    coverage, and limits within Monte Carlo noise of the in-memory ones."""
    y, q, w = _model(n, 4, weighted)
    keys = ("ece", "ace", "mce", "rmsce", "debiased_ece", "brier", "brier_reliability", "log_loss")
    cfg = PanelConfig(n_bins=n_bins)
    mem = metric_panel(y, q, metrics=keys, config=cfg, sample_weight=w, n_resamples=200, random_state=0,
                       n_reference=0)
    got = _scan(y, q, w).metrics(list(keys), config=cfg, n_resamples=200, random_state=0)
    assert list(got.columns) == list(mem.columns)
    pd.testing.assert_frame_equal(_columns(got), _columns(mem))
    small = got.set_index("metric").loc[["rmsce", "debiased_ece"], "interval"]
    if n_bins == 15:  # 400 rows per bin (Kish's size with weights: about 360): the debiased-basic interval
        assert set(small) == {"debiased_basic"}
    else:  # 1,200 rows per bin
        assert list(small) == ["bias_corrected", "percentile"]
    np.testing.assert_allclose(got["value"], mem["value"], rtol=1e-9)
    for g, m in zip(got.itertuples(), mem.itertuples()):
        width = m.high - (m.low if np.isfinite(m.low) else m.value)
        assert abs(g.high - m.high) < 0.35 * width, (g.metric, g.high, m.high)
        if np.isfinite(m.low):
            assert abs(g.low - m.low) < 0.35 * width, (g.metric, g.low, m.low)
        else:
            assert g.low == -np.inf
        coverage = [t for t in m.note.split(". ") if "coverage study" in t]
        assert all(t in g.note for t in coverage)
    assert got.attrs["n_resamples"] == 200 and got.attrs["confidence"] == 0.95


@pytest.mark.parametrize("binning", ["pava", "pavabc"])
def test_block_bins_refitted_on_every_resample(binning):
    """PAVA / PAVA-BC panel bins refitted per resample by the scan's block code (4-decimal scores: bins exact)."""
    y, q, _ = _model(5_000, 9)
    q = np.round(q, 4)
    cfg = PanelConfig(binning=binning)
    keys = ("ece", "brier_reliability")
    got = _scan(y, q).metrics(list(keys), config=cfg, n_resamples=150, random_state=0)
    mem = metric_panel(y, q, metrics=keys, config=cfg, n_resamples=150, random_state=0, n_reference=0)
    np.testing.assert_allclose(got["value"], mem["value"], rtol=1e-9)
    assert list(got["interval"]) == list(mem["interval"])
    for g, m in zip(got.itertuples(), mem.itertuples()):
        assert abs(g.low - m.low) < 0.35 * (m.high - m.low) and abs(g.high - m.high) < 0.35 * (m.high - m.low)


def test_a_tiny_scan_uses_the_double_bootstrap_of_its_rows():
    y, q, _ = _model(900, 6)  # 60 rows per bin: ECE's double bootstrap (its calibrated upper bound)
    mem = metric_panel(y, q, metrics=("ece", "tce", "spiegelhalter_z"), n_resamples=50, random_state=0, n_reference=0)
    got = _scan(y, q).metrics(["ece", "tce", "spiegelhalter_z"], n_resamples=50, random_state=0)
    assert got.loc[0, "interval"] == mem.loc[0, "interval"] == "double_basic, upper bound"
    assert got.loc[0, "high"] == mem.loc[0, "high"]
    assert got.loc[0, "low"] <= got.loc[0, "high"]
    assert got.loc[1, "interval"] == mem.loc[1, "interval"] == "percentile"
    assert 0 <= got.loc[1, "low"] <= got.loc[1, "high"] <= 100
    assert got.loc[2, "interval"] == mem.loc[2, "interval"] == "" and "No bootstrap" not in got.loc[2, "note"]


def test_tce_interval_of_a_scan_matches_metric_panel_on_tied_scores():
    """TCE's interval: PAVA-BC refitted and every atom retested on each Poisson resample of the buckets. On scores
    with 4 decimals every bucket holds one score, so the scan's TCE is the in-memory one, a resample of the atoms
    as they are gives it back exactly, and the interval agrees with metric_panel's row bootstrap (both 400
    resamples, different draws: endpoints within 0.35 of the interval's width)."""
    from calibviz.binning import PAVABC
    from calibviz.scan.refine import redrawn_tce

    rng = np.random.default_rng(12)
    n = 20_000
    q = np.round(special.expit(SLOPE * special.logit(rng.beta(2, 5, n)) + SHIFT), 4)
    y = (rng.uniform(size=n) < special.expit((special.logit(np.clip(q, 1e-4, 1 - 1e-4)) - SHIFT) / SLOPE)).astype(int)
    s = _scan(y, q)
    want = M.tce(y, q, binning=PAVABC())
    assert s.tce() == pytest.approx(want, abs=1e-9)
    assert redrawn_tce(s._atoms(), PAVABC(), alpha=0.05) == pytest.approx(want, abs=1e-9)
    got = s.metrics(["tce"], n_resamples=400, random_state=0).iloc[0]
    mem = metric_panel(y, q, metrics=("tce",), n_resamples=400, random_state=0, n_reference=0).iloc[0]
    assert got["interval"] == mem["interval"] == "percentile"
    width = mem["high"] - mem["low"]
    assert width > 0
    assert abs(got["low"] - mem["low"]) < 0.35 * width and abs(got["high"] - mem["high"]) < 0.35 * width


def test_multiclass_scan_intervals_match_metric_panel():
    """Confidence ECE, top-label ECE / MCE (independent draws per top-label view) and class-wise ECE (the joint
    draw of calibviz.scan.classwise; more in tests/test_scan_classwise.py) as metric_panel."""
    rng = np.random.default_rng(8)
    n = 6_000
    truth = rng.dirichlet([1.0, 1.0, 1.0], n)
    probs = truth ** 1.5
    probs /= probs.sum(axis=1, keepdims=True)  # overconfident
    y = (rng.uniform(size=(n, 1)) > np.cumsum(truth, axis=1)).sum(axis=1)
    df = pd.DataFrame({"y": np.array(["a", "b", "c"])[y], "p_a": probs[:, 0], "p_b": probs[:, 1], "p_c": probs[:, 2]})
    got = cv.scan(df).metrics(n_resamples=200, random_state=0).set_index("metric")
    mem = metric_panel(y, probs, n_resamples=200, n_reference=0).set_index("metric")
    for key in ("confidence_ece", "top_label_ece", "top_label_mce", "classwise_ece"):
        assert got.loc[key, "interval"] == mem.loc[key, "interval"]
        width = mem.loc[key, "high"] - mem.loc[key, "value"]
        assert abs(got.loc[key, "high"] - mem.loc[key, "high"]) < 0.35 * width, key
    assert "No bootstrap" not in got.loc["classwise_ece", "note"]


@pytest.mark.parametrize("bad", [-1, 2.5, True, "200"])
def test_bad_resample_counts_are_input_errors(bad):
    y, q, _ = _model(2_000, 10)
    with pytest.raises(cv.InputError, match="n_resamples must be a whole number"):
        _scan(y, q).metrics(["ece"], n_resamples=bad)


def _population():
    """Population ECE (Uniform(15) bins of q) and Brier score of the model, by numerical integration."""
    f = stats.beta(2, 5).pdf
    q_of = lambda p: special.expit(SLOPE * special.logit(p) + SHIFT)  # noqa: E731
    p_of = lambda q: special.expit((special.logit(q) - SHIFT) / SLOPE)  # noqa: E731
    edges = np.linspace(0, 1, 16)
    cuts = np.r_[0.0, p_of(edges[1:-1]), 1.0]
    ece = sum(abs(integrate.quad(lambda p: (p - q_of(p)) * f(p), a, b, limit=200)[0])
              for a, b in zip(cuts[:-1], cuts[1:]))
    brier = integrate.quad(lambda p: (p * (1 - q_of(p)) ** 2 + (1 - p) * q_of(p) ** 2) * f(p), 0, 1, limit=200)[0]
    return ece, brier


def test_coverage_of_a_miscalibrated_model():
    """Modest check (full study: docs/intervals.md): 30 datasets of 10,000 rows, 100 resamples each."""
    ece_true, brier_true = _population()
    hits = {"ece": 0, "brier": 0}
    reps = 30
    for r in range(reps):
        y, q, _ = _model(10_000, 100 + r)
        t = _scan(y, q).metrics(["ece", "brier"], n_resamples=100, random_state=r).set_index("metric")
        hits["ece"] += t.loc["ece", "low"] <= ece_true <= t.loc["ece", "high"]
        hits["brier"] += t.loc["brier", "low"] <= brier_true <= t.loc["brier", "high"]
    # 95% intervals: at least 24 of 30 (P(fewer) = 0.3% at a true 95% coverage, 1.5% at 93%)
    assert hits["ece"] >= 24 and hits["brier"] >= 24, hits


def test_cli_engine_with_ci_gives_intervals(tmp_path, capsys):
    from calibviz.cli import main

    y, q, _ = _model(20_000, 7)
    path = tmp_path / "log.parquet"
    pd.DataFrame({"y": y, "p": q}).to_parquet(path)
    assert main(["metrics", str(path), "--engine", "duckdb", "--ci", "50", "--metrics", "ece,brier,tce",
                 "--format", "json", "--reference", "0", "-q"]) == 0
    out = {r["metric"]: r for r in json.loads(capsys.readouterr().out)}
    for key in ("ece", "brier", "tce"):
        assert out[key]["low"] is not None and out[key]["low"] <= out[key]["high"]


def test_intervals_do_not_depend_on_what_was_computed_before():
    """Same seed, same intervals, whichever bins earlier results refined (the page's order of views)."""
    rng = np.random.default_rng(0)
    n = 50_000
    p = rng.beta(2, 5, n)
    df = pd.DataFrame({"y": (rng.random(n) < p).astype(int), "p": p})
    fresh = cv.scan(df).metrics(["ece", "ace", "debiased_ece"], n_resamples=60, random_state=1)
    used = cv.scan(df)
    used.reliability_table(binning=cv.binning.EqualMass(10))  # refines other buckets first
    used.reliability_table(binning=cv.binning.Uniform(7))
    again = used.metrics(["ece", "ace", "debiased_ece"], n_resamples=60, random_state=1)
    np.testing.assert_allclose(again[["low", "high"]].to_numpy(), fresh[["low", "high"]].to_numpy(), rtol=1e-12,
                               atol=1e-15)


def test_tce_interval_of_a_small_scan_refits_exact_blocks_whatever_the_binning():
    """On a view of at most EXACT_BLOCK_ROWS rows every bootstrap refit of TCE's PAVA-BC runs on exact scores (a
    bucket of several scores left whole there raises): the interval is the same whatever the panel's binning,
    which once decided which buckets were refined."""
    rng = np.random.default_rng(0)
    p = rng.beta(2, 5, 20_000)
    df = pd.DataFrame({"y": (rng.uniform(size=p.size) < p).astype(int), "p": p})
    got = [cv.scan(df).metrics(["tce", "ece"], config=PanelConfig(binning=b), n_resamples=40, random_state=0)
           .set_index("metric").loc["tce", ["low", "high"]].tolist() for b in ("uniform", "pavabc")]
    assert np.isfinite(got[0]).all() and got[0] == got[1]


def test_a_resample_of_a_tiny_view_that_draws_no_row_is_no_crash():
    """A 10-row view draws no row in about 1 of 22,000 Poisson resamples (e^-10): that resample has no TCE."""
    df = pd.DataFrame({"y": [0, 1] * 5, "p": np.round(np.random.default_rng(0).uniform(size=10), 6)})
    row = cv.scan(df).metrics(["tce"], n_resamples=1000, random_state=0).iloc[0]
    assert 0 <= row["low"] <= row["value"] <= row["high"] <= 100
