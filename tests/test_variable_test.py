"""The simultaneous test behind the Variables page's flagged ranges (calibviz.smoothing.loess_bernoulli_test).

The ranges used to be wherever the two pointwise bands parted: ~10% of perfectly calibrated models got a range
(400 simulated logs of 5,000 rows, a variable correlated with the score). Now a grid point is flagged when the
difference of the curves is beyond what a calibrated model shows, adjusted for the whole grid (max-T)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from calibviz import InputError
from calibviz.smoothing import loess, loess_bernoulli_test
from calibviz.stats import GAUSSIAN_MAX_SKEWNESS
from calibviz.variables import (disagreement_ranges, level_test_sentence, no_range_sentence, range_sentence,
                                subgroup_table, variable_curves)


def calibrated(n, seed, weights=False):
    rng = np.random.default_rng(seed)
    p = rng.beta(2, 5, n)
    y = (rng.uniform(size=n) < p).astype(float)
    x = np.log(p / (1 - p)) + rng.normal(size=n)  # a variable that carries the score
    w = rng.exponential(size=n) if weights else None
    return x, y, p, w


@pytest.mark.parametrize("weights", [False, True])
def test_curve_and_null_sd_are_those_of_the_linear_smoother(weights):
    """Independent computation: LOESS is linear in the responses, so the smoother's weights l_j(x0) are the
    curves of the unit responses e_j (the public loess), the null sd is sqrt(sum_j l_j^2 v_j) and the sandwich sd
    sqrt(sum_j l_j^2 r_j^2)."""
    x, y, p, w = calibrated(40, 3, weights)
    grid = np.linspace(np.quantile(x, 0.1), np.quantile(x, 0.9), 7)
    t = loess_bernoulli_test(x, y, p, grid=grid, span=0.8, sample_weight=w)
    L = np.column_stack([loess(x, np.eye(40)[j], grid=grid, span=0.8, sample_weight=w)["fit"] for j in range(40)])
    np.testing.assert_allclose(t.curve, L @ (y - p), atol=1e-12)
    # z divides by the calibrated-model sd, or by the residuals' own (sandwich) sd where its variance exceeds the
    # model's by more than 3 of its null standard errors (Var r^2 = q (1-q) (1-2q)^2 per row)
    model, sandwich = np.sqrt((L * L) @ (p * (1 - p))), (L * L) @ (y - p) ** 2
    se = np.sqrt(L ** 4 @ (p * (1 - p) * (1 - 2 * p) ** 2))
    np.testing.assert_allclose(t.sd, np.where(sandwich > model ** 2 + 3 * se, np.sqrt(sandwich), model), rtol=1e-9)
    np.testing.assert_allclose(t.z, t.curve / t.sd, rtol=1e-12)


def test_binned_support_keeps_curve_and_sd_consistent():
    """Above max_grid_support distinct x the curve is built on fine bins; the sd uses the same bins."""
    x, y, p, _ = calibrated(3000, 4)
    grid = np.linspace(-2, 1, 9)
    t = loess_bernoulli_test(x, y, p, grid=grid, max_grid_support=500)
    ref = loess_bernoulli_test(x, y, p, grid=grid)
    np.testing.assert_allclose(t.curve, ref.curve, atol=2e-3)
    np.testing.assert_allclose(t.sd, ref.sd, rtol=0.02)


def test_p_values_of_calibrated_redraws_are_uniform():
    """The Gaussian null against the truth: labels redrawn from p on fixed (x, p); the whole-curve p-value of a
    calibrated model must be uniform (a test that falls below 0.05 as often as it should, and no more)."""
    x, _, p, _ = calibrated(1500, 5)
    rng = np.random.default_rng(9)
    ps = np.array([loess_bernoulli_test(x, rng.uniform(size=p.size) < p, p, grid=40,
                                   n_draws=2000).p_value for _ in range(300)])
    # 300 uniform p-values: <= 0.05 in 15 expected (P(>= 27) ~ 0.002), <= 0.5 in 150 +- 9
    assert (ps <= 0.05).sum() <= 26
    assert 115 <= (ps <= 0.5).sum() <= 185
    assert (ps <= 0.2).sum() >= 40  # not conservative either (60 expected)


def test_a_miscalibrated_range_is_found_and_adjusted_p_values_are_coherent():
    rng = np.random.default_rng(2)
    x, p = rng.uniform(0, 10, 4000), rng.uniform(0.2, 0.8, 4000)
    y = (rng.uniform(size=4000) < np.where(x > 6, p + 0.15, p)).astype(float)
    t = loess_bernoulli_test(x, y, p, grid=50)
    flagged = t.p_adjusted <= 0.05
    assert t.p_value < 0.001 and flagged.any() and t.x[flagged].min() > 5
    order = np.argsort(np.abs(t.z))
    assert np.all(np.diff(t.p_adjusted[order]) <= 0)  # a larger |z| never gets a larger p
    assert t.p_value == t.p_adjusted.min() >= 1 / (t.n_draws + 1)


def test_zero_variance_rows():
    """Certain predictions (p in {0, 1}): an outcome against one is a certain miscalibration (z infinite), none
    is nothing (z 0, p 1)."""
    x = np.linspace(0, 1, 200)
    p = np.zeros(200)
    t = loess_bernoulli_test(x, np.zeros(200), p, grid=10)
    assert np.all(t.z == 0) and np.all(t.p_adjusted == 1)
    y = np.zeros(200)
    y[150:] = 1.0  # y = 1 where p = 0
    t = loess_bernoulli_test(x, y, p, grid=10)
    assert np.isinf(t.z[-1]) and t.p_adjusted[-1] == 1 / (t.n_draws + 1)


def test_rare_events_are_redrawn_and_their_p_values_are_uniform():
    """p = 10^U(-4, -1.5) on 500 rows: a handful of events, a skewed null. Gaussian null curves flagged 12% of
    such calibrated logs (400 simulated); the test redraws the outcomes there, which is exact."""
    rng = np.random.default_rng(3)
    p = 10 ** rng.uniform(-4, -1.5, 500)
    x = np.log(p) + rng.normal(size=500)
    t = loess_bernoulli_test(x, rng.uniform(size=500) < p, p, grid=40)
    assert t.method == "redraws" and t.skewness > GAUSSIAN_MAX_SKEWNESS
    ps = np.array([loess_bernoulli_test(x, rng.uniform(size=500) < p, p, grid=40, n_draws=1000).p_value
                   for _ in range(200)])
    assert (ps <= 0.05).sum() <= 19  # 10 expected; P(>= 20) < 0.005
    assert (ps <= 0.3).sum() >= 40  # 60 expected: not conservative either


def test_gaussian_and_redrawn_nulls_agree_where_the_null_is_symmetric():
    x, y, p, w = calibrated(800, 8, weights=True)
    y = np.where(x > 0, (np.random.default_rng(2).uniform(size=800) < np.minimum(p + 0.08, 1)), y)
    gauss = loess_bernoulli_test(x, y, p, grid=30, sample_weight=w, method="gaussian")
    redraw = loess_bernoulli_test(x, y, p, grid=30, sample_weight=w, method="redraws")
    assert gauss.skewness <= GAUSSIAN_MAX_SKEWNESS and redraw.method == "redraws"
    assert 0.002 < gauss.p_value < 0.3  # a case in the middle of the distribution, where the two can be compared
    assert redraw.p_value == pytest.approx(gauss.p_value, rel=0.3, abs=0.01)
    np.testing.assert_array_equal(gauss.z, redraw.z)


def test_bad_input():
    x = np.linspace(0, 1, 50)
    with pytest.raises(InputError, match="probability must lie in"):
        loess_bernoulli_test(x, x > 0.5, -x)
    with pytest.raises(InputError, match="outcome must be 0 or 1"):
        loess_bernoulli_test(x, x, x)
    with pytest.raises(InputError, match="probability has 3 entries"):
        loess_bernoulli_test(x, x > 0.5, np.ones(3) / 2)
    with pytest.raises(InputError, match="n_draws"):
        loess_bernoulli_test(x, x > 0.5, x, n_draws=0)
    with pytest.raises(InputError, match="method must be"):
        loess_bernoulli_test(x, x > 0.5, x, method="exact")


def test_variable_curves_carry_the_test_and_ranges_follow_it():
    x, y, p, _ = calibrated(3000, 11)
    y = np.where(x > 0.5, (np.random.default_rng(1).uniform(size=x.size) < 0.9), y).astype(int)
    c = variable_curves(x, y, p, kind="rate", grid=60, alpha=0.1)
    a = c[c["curve"] == "observed rate"].reset_index(drop=True)
    b = c[c["curve"] == "predicted rate"].reset_index(drop=True)
    np.testing.assert_array_equal(a["z"], b["z"])
    assert (a["flagged"] == (a["p_adjusted"] <= 0.1)).all()
    assert c.attrs["p_value"] == a["p_adjusted"].min() and c.attrs["n_draws"] == 4000
    # the difference that is tested is the one drawn (untruncated fits agree with the drawn ones here)
    t = loess_bernoulli_test(x, y, p, grid=a["x"].to_numpy(), random_state=0)
    np.testing.assert_allclose(a["z"], t.z, rtol=1e-9)
    r = disagreement_ranges(c)
    assert len(r) and (r["higher"] == "observed rate").all() and r["x_start"].min() > -0.5 and r["x_end"].max() > 1
    assert (r["p_value"] <= 0.1).all()
    assert "along the whole curve" in range_sentence("x", r.iloc[0])


def test_the_draws_follow_alpha():
    x, y, p, _ = calibrated(500, 12)
    assert variable_curves(x, y, p, grid=20, alpha=0.001).attrs["n_draws"] == 50_000


def test_no_range_sentence_gives_the_curve_p_value():
    x, y, p, _ = calibrated(2000, 13)
    c = variable_curves(x, y, p, kind="rate", grid=40)
    assert c.attrs["p_value"] > 0.05 and disagreement_ranges(c).empty
    s = no_range_sentence("age", c)
    assert s.startswith("No range of age") and f"p = {c.attrs['p_value']:.2g}" in s and "5% level" in s


def test_ranges_need_the_test_columns():
    c = pd.DataFrame({"curve": ["a", "b"], "x": [1.0, 1.0], "fit": [0.5, 0.1], "lower": [0.4, 0.0],
                      "upper": [0.6, 0.2]})
    with pytest.raises(InputError, match="test's columns"):
        disagreement_ranges(c)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["error", "rate"])
def test_calibrated_models_rarely_get_a_range(kind):
    """Size of the page's claim at modest replication (full size: benchmarks/README.md, 'Ranges along a
    variable'): 120 calibrated logs of 3,000 rows (Gaussian null curves); 6 expected at 5%; P(>= 14) < 0.005."""
    hits = 0
    for seed in range(120):
        x, y, p, _ = calibrated(3000, 100 + seed)
        hits += len(disagreement_ranges(variable_curves(x, y, p, kind=kind, grid=100))) > 0
    assert hits <= 13


# ----------------------------------------------------------------------------- levels of a categorical column

def test_level_z_is_the_standardised_gap_of_its_sums():
    rng = np.random.default_rng(4)
    p = rng.beta(2, 5, 1200)
    y = rng.binomial(1, p)
    g = rng.choice(list("abcde"), 1200)
    w = rng.exponential(size=1200)
    t = subgroup_table(g, y, p, n_resamples=0, sample_weight=w).set_index("level")
    df = pd.DataFrame({"g": g, "r": w * (y - p), "v": w * w * p * (1 - p), "r2": (w * (y - p)) ** 2,
                       "v4": w ** 4 * p * (1 - p) * (1 - 2 * p) ** 2}).groupby("g").sum()
    # the calibrated-model sd, or the sandwich sd where it is beyond 3 null standard errors
    sd = np.where(df["r2"] > df["v"] + 3 * np.sqrt(df["v4"]), np.sqrt(df["r2"]), np.sqrt(df["v"]))
    np.testing.assert_allclose(t.loc[df.index, "z"], df["r"] / sd, rtol=1e-12)
    assert t.attrs["p_value"] == t["p_adjusted"].min()


def test_a_shifted_level_is_found_and_calibrated_levels_are_not():
    rng = np.random.default_rng(6)
    p = rng.beta(2, 5, 4000)
    g = rng.choice(list("abcdefgh"), 4000)
    y = rng.binomial(1, np.where(g == "c", np.minimum(p + 0.12, 1), p))
    t = subgroup_table(g, y, p, n_resamples=0)
    flagged = t.loc[t["p_adjusted"] <= 0.05, "level"].tolist()
    assert flagged == ["c"]
    s = level_test_sentence(t, 0.05)
    assert s.startswith("Beyond what a calibrated model shows (the 8 levels judged together") and "c (observed" in s


@pytest.mark.slow
@pytest.mark.parametrize("scores", ["beta", "rare"])
def test_calibrated_levels_are_rarely_flagged(scores):
    """120 calibrated logs with 8 levels (rare events: the outcomes are redrawn); 6 expected at 5%."""
    hits = 0
    for seed in range(120):
        rng = np.random.default_rng(500 + seed)
        p = rng.beta(2, 5, 2000) if scores == "beta" else 10 ** rng.uniform(-4, -1.5, 2000)
        y = rng.binomial(1, p)
        t = subgroup_table(rng.choice(list("abcdefgh"), 2000), y, p, n_resamples=0)
        hits += bool((t["p_adjusted"] <= 0.05).any())
    assert hits <= 13


# ----------------------------------------------------------------------------- VECE against a calibrated model

@pytest.mark.parametrize("shrink", [1.0, 0.3])
def test_vece_reference_matches_redrawn_outcomes(shrink):
    """The ranking's p-value against VECE recomputed (metrics.vece) on outcomes redrawn from the predictions."""
    from calibviz.metrics import vece
    from calibviz.variables import variable_ranking

    x, y, p, _ = calibrated(1500, 21)
    truth = 0.5 + shrink * (p - 0.5)  # shrink < 1: over-confident
    y = (np.random.default_rng(3).uniform(size=x.size) < truth).astype(int)
    r = variable_ranking(pd.DataFrame({"x": x}), y, p, n_resamples=0).iloc[0]
    rng = np.random.default_rng(5)
    null = np.array([vece(x, (rng.uniform(size=p.size) < p).astype(int), p) for _ in range(600)])
    brute = (1 + np.sum(null >= r["vece"])) / 601
    # Monte Carlo: 600 brute redraws (sd up to 0.02) against the ranking's 2,000
    assert r["p_value"] == pytest.approx(brute, abs=0.06)
    assert r["p_adjusted"] == r["p_value"]  # one variable: nothing to adjust
    if shrink < 1:
        assert brute < 0.01 and r["p_value"] < 0.01


def test_ranking_reference_leaves_the_intervals_alone_and_judges_variables_together():
    from calibviz.variables import variable_ranking

    x, y, p, _ = calibrated(3000, 22)
    rng = np.random.default_rng(1)
    feats = pd.DataFrame({"a": rng.normal(size=x.size), "b": x, "c": rng.choice(list("uvw"), x.size)})
    r = variable_ranking(feats, y, p, n_resamples=30, random_state=4)
    again = variable_ranking(feats[["a", "b"]], y, p, n_resamples=30, random_state=4)
    # the reference draws from its own stream: the bootstrap intervals of a and b do not depend on it
    pd.testing.assert_frame_equal(r.set_index("feature").loc[["a", "b"], ["vece_low", "vece_high"]],
                                  again.set_index("feature").loc[["a", "b"], ["vece_low", "vece_high"]])
    from calibviz.stats import holm_adjusted
    np.testing.assert_allclose(r["p_adjusted"], holm_adjusted(r["p_value"].to_numpy()))
    assert r["p_value"].notna().all() and (r["p_adjusted"] > 0.05).all()


@pytest.mark.slow
def test_calibrated_models_rarely_get_a_vece_verdict():
    """100 calibrated logs, 4 variables (2 noise, one carrying the score, one categorical): some variable's
    adjusted p <= 0.05 in 5 expected (at most; Holm is conservative); P(>= 12) < 0.005 at 5%."""
    from calibviz.variables import variable_ranking

    hits = 0
    for seed in range(100):
        x, y, p, _ = calibrated(1000, 700 + seed)
        rng = np.random.default_rng(seed)
        feats = pd.DataFrame({"a": rng.normal(size=x.size), "b": x, "n2": rng.uniform(size=x.size),
                              "c": rng.choice(list("uvwxy"), x.size)})
        hits += bool((variable_ranking(feats, y, p, n_resamples=0)["p_adjusted"] <= 0.05).any())
    assert hits <= 11


def test_a_curve_picked_among_variables_is_adjusted_for_them():
    """The page and the report show the curves of a variable picked from a ranking: p-values times the number of
    variables (Bonferroni), with the draws to resolve alpha / family, and the sentence says so."""
    x, y, p, _ = calibrated(3000, 31)
    y = (np.random.default_rng(2).uniform(size=x.size) < np.where(x > 0, np.minimum(p + 0.1, 1), p)).astype(int)
    one = variable_curves(x, y, p, kind="rate", grid=50, n_draws=6000)
    six = variable_curves(x, y, p, kind="rate", grid=50, family=6)
    assert six.attrs["n_draws"] == 6000 and six.attrs["family"] == 6
    np.testing.assert_allclose(six["p_adjusted"], np.minimum(1, 6 * one["p_adjusted"]))
    r = disagreement_ranges(six)
    assert len(r) and "adjusted for the 6 numeric variables it was picked from" in range_sentence("x", r.iloc[0])
    with pytest.raises(InputError, match="family must be a positive integer"):
        variable_curves(x, y, p, family=0)


def test_levels_when_min_rows_leaves_none():
    rng = np.random.default_rng(1)
    p = rng.uniform(0.2, 0.8, 100)
    t = subgroup_table(rng.choice(list("ab"), 100), rng.binomial(1, p), p, n_resamples=0, min_rows=1000)
    assert t.empty and np.isnan(t.attrs["p_value"])


def test_a_model_off_in_a_way_that_cancels_along_x_gets_no_direction():
    """Rates of 0.5 predicted as 0.1 or 0.9 at random: observed and predicted rates agree along x (no range of the
    rate curves: before the sandwich rule 32 of 40 such logs read 'over-/under-predicts' somewhere, a review's
    count), while the error curves find the over-confidence everywhere."""
    rng = np.random.default_rng(8)
    p = rng.choice([0.1, 0.9], 2000)
    y = (rng.uniform(size=2000) < 0.5).astype(int)
    x = rng.uniform(0, 1, 2000)
    assert disagreement_ranges(variable_curves(x, y, p, kind="rate", grid=50)).empty
    over = disagreement_ranges(variable_curves(x, y, p, kind="error", grid=50))
    assert len(over) == 1 and over["higher"].iloc[0] == "actual error" and over["n_points"].iloc[0] == 50


def test_one_tested_variable_reads_as_one():
    """'the 1 variables judged together' (a walk-through); with several, the smallest p-value is the adjusted one
    (the class grid read 'smallest p = 1' beside a table of p-values 0.67 to 0.87)."""
    from calibviz.variables import vece_test_sentence

    r = pd.DataFrame({"feature": ["age"], "p_value": [0.3], "p_adjusted": [0.3], "n_reference": [200]})
    assert vece_test_sentence(r, 0.05) == ("No variable's VECE is beyond what a calibrated model shows (one "
                                           "variable, tested alone: p = 0.3, α = 0.05).")
    two = pd.DataFrame({"feature": ["age", "bmi"], "p_value": [0.3, 0.6], "p_adjusted": [0.6, 0.6],
                        "n_reference": [200, 200]})
    assert "(the 2 variables judged together: smallest adjusted p = 0.6" in vece_test_sentence(two, 0.05)
