"""calibviz.panel: the registry computes what calibviz.metrics computes, with honest intervals."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import calibviz as cv
from calibviz import metrics as M
from calibviz.binning import PAVABC, EqualMass, Uniform
from calibviz.panel import BINARY_METRICS, PanelConfig, metric_panel, metric_value, p_value_words


@pytest.fixture(scope="module")
def demo():
    return cv.load_demo("hospital_readmission")


def test_values_equal_the_metric_functions(demo):
    y, p = demo.y, demo.y_prob
    cfg = PanelConfig(binning="uniform", n_bins=10, alpha=0.01)
    t = metric_panel(y, p, metrics=list(BINARY_METRICS), config=cfg, n_resamples=0).set_index("metric")
    assert t.loc["ece", "value"] == M.ece(y, p, binning=Uniform(10))
    assert t.loc["ace", "value"] == M.ace(y, p, n_bins=10)
    assert t.loc["mce", "value"] == M.mce(y, p, binning=Uniform(10))
    assert t.loc["tce", "value"] == M.tce(y, p, binning=PAVABC(), alpha=0.01)
    assert t.loc["debiased_ece", "value"] == M.debiased_ece(y, p, binning=EqualMass(10))
    assert t.loc["brier", "value"] == M.brier_score(y, p)
    assert t.loc["hosmer_lemeshow", "p_value"] == M.hosmer_lemeshow(y, p).p_value
    assert t["reading"].str.len().min() > 10


def test_intervals_bracket_the_estimate_and_are_seeded(demo):
    y, p = demo.y[:4000], demo.y_prob[:4000]
    a = metric_panel(y, p, metrics=("ece", "brier"), n_resamples=50, random_state=3)
    b = metric_panel(y, p, metrics=("ece", "brier"), n_resamples=50, random_state=3)
    assert a[["low", "high"]].equals(b[["low", "high"]])
    assert (a["low"] <= a["value"]).all() and (a["value"] <= a["high"]).all()
    slope = metric_panel(y, p, metrics=("calibration_slope",), n_resamples=10).iloc[0]
    assert slope["low"] < slope["value"] < slope["high"]


def test_progress_reaches_the_total(demo):
    seen = []
    metric_panel(demo.y[:2000], demo.y_prob[:2000], metrics=("ece", "ace", "hosmer_lemeshow"), n_resamples=20,
                 progress=lambda d, t: seen.append((d, t)))
    # the bootstrap of ECE and ACE (2 x 20 resamples; Hosmer-Lemeshow has none) and the calibrated-model
    # reference of all three (3 x 200 label redraws, the default n_reference)
    assert seen[-1] == (2 * 20 + 3 * 200,) * 2
    assert all(d <= t for d, t in seen) and [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_tce_reading_is_plain_language():
    p = np.linspace(0.85, 0.95, 200)
    t = metric_panel(np.zeros(200), p, metrics=("tce",), n_resamples=0, n_reference=50)
    reading = t.loc[0, "reading"]
    assert reading.startswith("100.00% of predictions are rejected by the binomial test")
    assert "A perfectly calibrated model with these predictions would show" in reading
    assert "evidence of miscalibration" in reading and t.loc[0, "verdict"] == "evidence of miscalibration"
    # one tie of 100 equal scores is one bin: TCE is 0% or 100% for a calibrated model too (the reference's
    # redraws reach 100% about as often as the binomial test's level), so 90 positives of 100 read as calibrated
    # and 0 positives as miscalibrated, with the value above the range exactly when the verdict says so
    y90 = np.r_[np.ones(90), np.zeros(10)]
    t = metric_panel(y90, np.full(100, 0.9), metrics=("tce",), n_resamples=0, n_reference=200)
    assert t.loc[0, "value"] == 0.0 and 0 < t.loc[0, "null_mean"] < 10 and t.loc[0, "verdict"].startswith("no ")
    t = metric_panel(np.zeros(100), np.full(100, 0.9), metrics=("tce",), n_resamples=0, n_reference=200)
    assert t.loc[0, "value"] == 100.0 and t.loc[0, "p_value"] <= 0.05 and t.loc[0, "value"] > t.loc[0, "null_high"]
    assert t.loc[0, "verdict"] == "evidence of miscalibration"


def test_too_few_redraws_for_alpha_give_no_verdict_and_say_so():
    """200 redraws cannot give p <= 0.001 (the smallest is 1/201): a far-off model must not read 'no evidence of
    miscalibration' at alpha = 0.001; the reading says how many redraws the level needs. A level of 0.5 or more
    is refused (a one-sided verdict there flags a median value)."""
    rng = np.random.default_rng(0)
    p = rng.uniform(size=4000)  # deciles of 400 rows: every group expects >= 10 events (HL: its chi-square test)
    y = (rng.uniform(size=4000) < p ** 2).astype(int)
    t = metric_panel(y, p, metrics=["ece", "hosmer_lemeshow", "calibration_slope"],
                     config=PanelConfig(alpha=0.001), n_reference=200, n_resamples=0).set_index("metric")
    assert t.loc["ece", "verdict"] == "" and t.loc["ece", "p_value"] == pytest.approx(1 / 201)
    assert "200 redraws cannot test at α = 0.001" in t.loc["ece", "reading"] and "999" in t.loc["ece", "reading"]
    # tests with p-values of their own are not limited by the redraws
    assert t.loc["hosmer_lemeshow", "verdict"] == t.loc["calibration_slope", "verdict"] == "evidence of miscalibration"
    assert "redraws" not in t.loc["calibration_slope", "reading"]
    t = metric_panel(y, p, metrics=["ece"], config=PanelConfig(alpha=0.01), n_reference=200, n_resamples=0)
    assert t.loc[0, "verdict"] == "evidence of miscalibration"  # 200 redraws do test at 0.01
    with pytest.raises(cv.InputError, match="strictly between 0 and 0.5"):
        PanelConfig(alpha=0.5)


def test_reference_beside_every_metric_matches_consistency_test():
    rng = np.random.default_rng(3)
    p = rng.beta(2, 5, 3000)
    y = (rng.random(3000) < p).astype(int)
    t = metric_panel(y, p, metrics=list(BINARY_METRICS), n_resamples=0, n_reference=60, random_state=4)
    t = t.set_index("metric")
    level = M.reference_level(0.05)  # the range beside a verdict at alpha = 0.05: the central 90%
    r = M.consistency_test(y, p, metric="ece", binning=Uniform(15), n_resamples=60, random_state=4, level=level)
    assert t.loc["ece", "null_low"] == r.null_low and t.loc["ece", "p_value"] == r.p_value
    r = M.consistency_test(y, p, metric="tce", binning=PAVABC(), alpha=0.05, n_resamples=60, random_state=4,
                           level=level)
    assert t.loc["tce", "null_high"] == r.null_high
    for key in BINARY_METRICS:
        if key in ("dsc", "unc", "auc"):  # discrimination, uncertainty: no calibration error, no reference
            assert np.isnan(t.loc[key, "p_value"]) and t.loc[key, "verdict"] == "", key
            continue
        assert np.isfinite(t.loc[key, "p_value"]), key
        assert t.loc[key, "verdict"] in ("evidence of miscalibration", "no evidence of miscalibration")
        if key not in ("calibration_slope", "calibration_intercept"):
            assert t.loc[key, "null_low"] <= t.loc[key, "null_high"], key
    # HL and Spiegelhalter keep their own tests' p-values; Z's reference is symmetric
    assert t.loc["hosmer_lemeshow", "p_value"] == M.hosmer_lemeshow(y, p).p_value
    assert t.loc["spiegelhalter_z", "null_low"] == -t.loc["spiegelhalter_z", "null_high"]
    # a calibrated model is not flagged by its own reference on the binned metrics
    assert t.loc["tce", "null_low"] <= t.loc["tce", "value"] or t.loc["tce", "p_value"] > 0.05


def test_large_calibrated_logistic_model_reads_as_calibrated():
    # the case: TCE far from 0 on a calibrated model at large n is what a calibrated model shows
    rng = np.random.default_rng(8)
    n = 100_000
    p = 1 / (1 + np.exp(-rng.normal(-1, 1.5, n)))
    y = (rng.random(n) < p).astype(int)
    t = metric_panel(y, p, metrics=("ece", "tce"), n_resamples=0, n_reference=30, random_state=1).set_index("metric")
    assert t.loc["tce", "value"] > 10  # TCE itself is large...
    assert t.loc["tce", "verdict"] == "no evidence of miscalibration"  # ...and so is a calibrated model's
    assert "no evidence of miscalibration" in t.loc["tce", "reading"]


def test_mce_reading_names_the_worst_bin_and_its_size():
    y = np.r_[np.zeros(5), (np.arange(200) % 2)]
    p = np.r_[np.full(5, 0.93), np.full(200, 0.5)]
    t = metric_panel(y, p, metrics=("mce",), n_resamples=0, n_reference=0)
    reading = t.loc[0, "reading"]
    assert "worst bin (5 rows, mean prediction 0.93" in reading and "a small bin, whose gap is mostly noise)" in reading
    assert "observed rate 0.00" in reading and "93.0 percentage points" in reading
    assert "bins of few rows widen" not in reading  # the worst bin is the small one


def test_mce_reading_says_small_bins_set_the_calibrated_range_beside_a_large_worst_bin():
    """A walk-through read MCE's calibrated range (1.9-9.0 points, set by a top bin of 16 rows) as saying that a
    9.6-point gap over 353,265 rows was nearly normal: beside a worst bin ten times the smallest, the reading says
    that MCE's range comes from its noisiest bins, naming the smallest's size, on a scan as in memory."""
    rng = np.random.default_rng(9)
    p = np.r_[rng.uniform(0.3, 0.35, 5000), np.full(12, 0.95)]
    y = (rng.random(p.size) < np.where(p < 0.5, p - 0.08, p)).astype(int)
    mem = metric_panel(y, p, metrics=("mce",), n_resamples=0, n_reference=0).loc[0, "reading"]
    assert "worst bin (1,636 rows" in mem and "(the smallest here holds 12 rows)" in mem, mem
    got = cv.scan(pd.DataFrame({"y": y, "p": p})).metrics(["mce"], n_reference=0).loc[0, "reading"]
    assert "(the smallest here holds 12 rows)" in got, got


def test_value_outside_its_interval_always_has_a_reason():
    rng = np.random.default_rng(0)
    p = rng.beta(2, 5, 500)
    y = (rng.random(500) < p).astype(int)
    t = metric_panel(y, p, metrics=("ece", "ace", "mce", "smooth_ece", "brier"), n_resamples=100, n_reference=0)
    for row in t.itertuples():
        # an upper bound (low = -inf, "at most") is exceeded when the value lies above it
        outside = row.value > row.high if row.low == -np.inf else np.isfinite(row.low) and not (
            row.low <= row.value <= row.high)
        # the note may also say the interval is approximate (coverage study); the reason is its own sentence
        assert row.note.startswith("The value lies") == outside, row.metric


def test_unknown_metric_is_an_input_error():
    with pytest.raises(cv.InputError, match="unknown metric"):
        metric_value("nope", [0, 1], [0.2, 0.8])


def test_compare_models_paired_differences():
    from calibviz.panel import compare_models

    m = cv.load_demo_models("loan_recalibration")
    t = compare_models({k: (v.y, v.y_prob) for k, v in m.items()}, metrics=("ece", "brier"), n_resamples=40)
    assert t["paired"].all()
    ref = t[t["model"] == "raw"]
    assert (ref["diff"] == 0).all()
    cal = t[(t["model"] == "recalibrated") & (t["metric"] == "ece")].iloc[0]
    assert cal["diff"] == pytest.approx(M.ece(m["recalibrated"].y, m["recalibrated"].y_prob)
                                        - M.ece(m["raw"].y, m["raw"].y_prob))
    assert cal["diff_low"] <= cal["diff"] <= cal["diff_high"] < 0


def test_compare_models_unpaired_when_rows_differ():
    from calibviz.panel import compare_models

    rng = np.random.default_rng(0)
    a = (rng.integers(0, 2, 500), rng.uniform(size=500))
    b = (rng.integers(0, 2, 300), rng.uniform(size=300))
    t = compare_models({"a": a, "b": b}, metrics=("ece",), n_resamples=30)
    assert not t.loc[1, "paired"] and np.isfinite(t.loc[1, "diff_low"])


def test_a_metric_undefined_on_these_predictions_leaves_the_others():
    """Constant scores: Spiegelhalter's null variance is 0 and ICI's LOESS needs 3 distinct scores. Each is
    reported as undefined with its reason; ECE and Brier are still computed (one InputError used to fail the
    whole panel, and with it the CLI command and the dashboard's metric table)."""
    y, p = np.r_[np.zeros(50), np.ones(50)], np.full(100, 0.5)
    t = metric_panel(y, p, metrics=("ici", "spiegelhalter_z", "ece", "brier"), n_resamples=20,
                     n_reference=20).set_index("metric")
    assert np.isnan(t.loc["ici", "value"]) and "needs at least 3 distinct predictions" in t.loc["ici", "reading"]
    assert np.isnan(t.loc["spiegelhalter_z", "value"]) and "null variance is zero" in t.loc["spiegelhalter_z",
                                                                                            "reading"]
    assert t.loc["ece", "value"] == 0.0 and t.loc["brier", "value"] == 0.25
    assert t.loc["ici", "verdict"] == "" and np.isnan(t.loc["ici", "p_value"])


def test_separating_predictions_read_as_an_undefined_slope_without_repeated_warnings():
    y, p = np.r_[np.zeros(50), np.ones(50)], np.r_[np.full(50, 0.1), np.full(50, 0.9)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = metric_panel(y, p, metrics=("calibration_slope",), n_resamples=0, n_reference=0)
    assert np.isnan(t["value"].iloc[0])
    assert t["reading"].iloc[0].startswith("The calibration slope is undefined: the predictions separate")
    assert not [w for w in caught if "calibration slope undefined" in str(w.message)]
    # the library function itself still warns
    with pytest.warns(RuntimeWarning, match="calibration slope undefined"):
        M.calibration_intercept_slope(y, p)


def test_hosmer_lemeshow_reading_names_its_degrees_of_freedom(demo):
    t = metric_panel(demo.y, demo.y_prob, metrics=("hosmer_lemeshow",), n_resamples=0, n_reference=0)
    hl = M.hosmer_lemeshow(demo.y, demo.y_prob)
    assert f"({hl.dof} degrees of freedom)" in t["reading"].iloc[0] and t["p_value"].iloc[0] == hl.p_value
    # its groups expect many events: the chi-square test decides, with or without redraws
    assert hl.min_expected >= 10
    assert metric_panel(demo.y, demo.y_prob, metrics=("hosmer_lemeshow",), n_resamples=0,
                        n_reference=50)["p_value"].iloc[0] == hl.p_value
    # rare events (under 10 expected in a group): the verdict reads the label redraws, the chi-square p beside it
    rng = np.random.default_rng(5)
    p = rng.uniform(0, 0.05, 2000)
    y = (rng.random(2000) < p).astype(int)
    rare = M.hosmer_lemeshow(y, p)
    assert rare.min_expected < 10
    row = metric_panel(y, p, metrics=("hosmer_lemeshow",), n_resamples=0, n_reference=50).iloc[0]
    assert row["n_redraws"] == 50 and abs(row["p_value"] * 51 - round(row["p_value"] * 51)) < 1e-9
    assert "against label redraws" in row["reading"] and f"gives {p_value_words(rare.chi2_p_value)}" in row["reading"]
    # without redraws, no verdict there (the chi-square over-rejects), as on a scan; it said the chi-square's
    alone = metric_panel(y, p, metrics=("hosmer_lemeshow",), n_resamples=0, n_reference=0).iloc[0]
    assert np.isnan(alone["p_value"]) and alone["verdict"] == "" and "gives no verdict here" in alone["reading"]


def test_rounding_noise_of_a_zero_is_shown_as_zero():
    from calibviz.panel import format_value

    assert format_value(4.94e-29, "statistic") == "0" and format_value(-1.388e-17, "logit") == "0"
    assert format_value(2.5e-7, "statistic") == "2.5e-07" and format_value(-0.0123, "logit") == "-0.0123"


def test_slope_and_intercept_rows_share_one_logistic_fit(monkeypatch):
    """Value, Wald interval and test of both rows come from one fit per panel (each is ~1 s at 10^6 rows), and a
    second panel fits again (the memo lives for one call)."""
    calls = []
    fit = M.calibration_intercept_slope
    monkeypatch.setattr(M, "calibration_intercept_slope", lambda *a, **k: calls.append(1) or fit(*a, **k))
    rng = np.random.default_rng(3)
    p = rng.beta(2, 5, 5000)
    y = (rng.uniform(size=5000) < p).astype(int)
    keys = ("calibration_slope", "calibration_intercept")
    got = metric_panel(y, p, metrics=keys, n_resamples=0, n_reference=0).set_index("metric")
    assert len(calls) == 1
    want = fit(y, p)
    assert got.loc["calibration_slope", ["value", "low", "high", "p_value"]].tolist() == pytest.approx(
        [want.slope, want.slope_low, want.slope_high, want.slope_p_value], rel=1e-12)
    assert got.loc["calibration_intercept", ["value", "low", "high", "p_value"]].tolist() == pytest.approx(
        [want.intercept, want.intercept_low, want.intercept_high, want.intercept_p_value], rel=1e-12, abs=1e-15)
    metric_panel(y, p, metrics=keys, n_resamples=0, n_reference=0)
    assert len(calls) == 2


def test_reference_p_value_floor_reads_as_a_bound():
    """No calibrated redraw reaches a clearly miscalibrated ECE: the Monte Carlo p-value is its floor 1/(1 + R),
    and the reading says it is a bound (50 and 200 redraws give 0.02 and 0.005 for the same evidence)."""
    rng = np.random.default_rng(0)
    p = rng.uniform(0.05, 0.95, 4000)
    y = (rng.random(4000) < p ** 2).astype(int)  # over-predicts by up to 0.25
    for redraws in (50, 200):
        row = metric_panel(y, p, metrics=["ece"], n_resamples=0, n_reference=redraws, random_state=0).iloc[0]
        assert row["p_value"] == pytest.approx(1 / (redraws + 1))
        assert f"(p ≤ {1 / (redraws + 1):.2g}: none of {redraws} redraws reached this value)" in row["reading"]
    calibrated = (rng.random(4000) < p).astype(int)
    row = metric_panel(calibrated, p, metrics=["ece"], n_resamples=0, n_reference=50, random_state=0).iloc[0]
    assert "(p = " in row["reading"] and "none of" not in row["reading"]


def test_outside_note_says_why_a_percentile_interval_lies_above_the_value():
    from calibviz.panel import _outside_note

    tce = BINARY_METRICS["tce"]
    below = _outside_note(tce, 54.37, 54.72, 59.63, "percentile", None)
    assert below.startswith("The value lies below its interval") and "repeats some rows" in below
    assert "small bin" not in below  # TCE's bins held 15,000 rows when this read "a small bin dominates"
    above = _outside_note(tce, 60.0, 54.72, 59.63, "percentile", None)
    assert above.startswith("The value lies above its interval") and "skewed" in above
    assert _outside_note(tce, 57.0, 54.72, 59.63, "percentile", None) == ""
    assert _outside_note(tce, 55.0, 54.72, 59.63, "percentile", None).startswith("The value lies near the low end")
    assert _outside_note(BINARY_METRICS["brier"], 0.1, 0.099, 0.11, "percentile", None) == ""  # a mean: no such pull
    smooth = _outside_note(BINARY_METRICS["smooth_ece"], 0.004, 0.0024, 0.0034, "basic", 0.003)
    assert "binned" not in smooth and "bias" in smooth


def test_a_value_on_its_bound_up_to_rounding_has_no_outside_note():
    """Exactly calibrated bins (4 of 20 at 0.2, 16 of 20 at 0.8): ECE is 1.1e-16 in floats, its bias-corrected upper
    bound 0, and the note read "The value lies above its upper bound" (a review)."""
    p = np.r_[np.full(20, 0.2), np.full(20, 0.8)]
    y = np.r_[np.ones(4), np.zeros(16), np.zeros(4), np.ones(16)].astype(int)
    t = metric_panel(y, p, metrics=("ece", "brier_reliability"), n_resamples=200, random_state=0).set_index("metric")
    assert 0.0 <= t.loc["ece", "value"] < 1e-15 and t.loc["ece", "high"] == 0.0
    assert "lies above" not in t.loc["ece", "note"] and "lies above" not in t.loc["brier_reliability", "note"]
    from calibviz.panel import _outside_note
    assert _outside_note(BINARY_METRICS["ece"], 1e-9, -np.inf, 0.0, "double_basic", 0.0).startswith("The value lies")


def test_an_error_without_its_reference_says_it_is_no_evidence_alone():
    """The Data page shows TCE, ECE and smECE of large data before their references (computed on request): "TCE =
    47.92%" stood alone for a calibrated model of 200,000 rows, whose calibrated range is 45-50% (a walk-through)."""
    rng = np.random.default_rng(0)
    p = rng.beta(2, 5, 2000)
    y = (rng.random(2000) < p).astype(int)
    t = metric_panel(y, p, metrics=["tce", "ece", "brier"], n_resamples=0, n_reference=0).set_index("metric")
    assert t.loc["tce", "reading"].endswith("even when the model is calibrated); this value alone is no evidence of "
                                            "miscalibration.")
    assert "Not compared with a calibrated model here, whose ECE also lies above 0;" in t.loc["ece", "reading"]
    assert "Not compared" not in t.loc["brier", "reading"]
    with_reference = metric_panel(y, p, metrics=["ece"], n_resamples=0, n_reference=50, random_state=0)
    assert "Not compared" not in with_reference["reading"].iloc[0]


def test_a_bin_holding_most_predictions_is_noted():
    """Rare events on 15 uniform bins: every prediction fell in the first bin and ECE read one gap, equal to MCE,
    with nothing saying that the bins cannot resolve these predictions (a browser review)."""
    rng = np.random.default_rng(5)
    p = rng.uniform(0, 0.05, 2000)
    y = (rng.random(2000) < p).astype(int)
    t = metric_panel(y, p, metrics=("ece", "mce", "ace", "brier"), n_resamples=0, n_reference=0).set_index("metric")
    for key in ("ece", "mce"):
        assert "100% of the predictions fall in one of the 15 bins (predictions near 0, as with rare events)" in \
            t.loc[key, "note"]
    assert "fall in one of" not in t.loc["ace", "note"] + t.loc["brier", "note"]
    q = 1 - p  # a confident classifier's scores crowd the last bin: the note says so, not "rare events"
    note = metric_panel(y, q, metrics=("ece",), n_resamples=0, n_reference=0)["note"][0]
    assert "(predictions near 1, as with a confident classifier)" in note and "rare events" not in note
    p = rng.beta(2, 5, 2000)
    y = (rng.random(2000) < p).astype(int)
    assert "fall in one of" not in metric_panel(y, p, metrics=("ece",), n_resamples=0, n_reference=0)["note"][0]


def test_log_loss_reading_says_when_certain_mistakes_were_clipped():
    """A prediction of exactly 0 or 1 that turns out wrong has infinite log loss; the value clips it at 2.2e-16
    (36.04 each, as scikit-learn), which a robustness review found said nowhere but in the docstring."""
    rng = np.random.default_rng(0)
    p = rng.uniform(0.1, 0.9, 200)
    y = (rng.uniform(size=200) < p).astype(int)
    p[[3, 7]] = np.where(y[[3, 7]] == 1, 0.0, 1.0)  # certain, and wrong
    row = metric_panel(y, p, metrics=("log_loss",), n_resamples=0, n_reference=0).iloc[0]
    assert "2 rows were predicted with certainty (probability 0 or 1) and turned out otherwise" in row["reading"]
    assert "counted here as 36.04 each" in row["reading"] and "lower bound" in row["reading"]
    w = np.ones(200)
    w[3] = 0.0  # a row of weight 0 is not in the loss
    row = metric_panel(y, p, metrics=("log_loss",), sample_weight=w, n_resamples=0, n_reference=0).iloc[0]
    assert "1 row was predicted with certainty" in row["reading"] and "its log loss is infinite" in row["reading"]
    p[[3, 7]] = y[[3, 7]]  # certain and right: nothing to say
    assert "certainty" not in metric_panel(y, p, metrics=("log_loss",), n_resamples=0, n_reference=0)["reading"][0]


def test_a_single_bin_is_no_crowded_bin():
    """'--bins 1' read '100% of the predictions fall in one of the 1 bins (predictions near 0, as with rare
    events)' for predictions spread over 0.05-0.95 (a robustness review); 15 bins of rare events still say it."""
    rng = np.random.default_rng(1)
    p = rng.uniform(0.05, 0.95, 500)
    y = (rng.uniform(size=500) < p).astype(int)
    one = metric_panel(y, p, metrics=("ece",), config=PanelConfig(n_bins=1), n_resamples=0, n_reference=0)
    assert "bins" not in one["note"][0]
    rare = rng.uniform(0, 0.03, 500)
    crowded = metric_panel((rng.uniform(size=500) < rare).astype(int), rare, metrics=("ece",), n_resamples=0,
                           n_reference=0)
    assert "fall in one of the 15 bins (predictions near 0, as with rare events)" in crowded["note"][0]


def test_an_interval_above_zero_beside_no_evidence_is_explained():
    """A review read 'ECE 0.0229 (95% interval 0.0092-0.0270)' beside 'no evidence of miscalibration' on 45 of
    100 calibrated logs with nothing said: calibration errors get a note; scores (Brier) do not; judging the
    panel again with others does not repeat it."""
    from calibviz.panel import ABOVE_ZERO_NOTE, judged_together

    rng = np.random.default_rng(2)
    p = rng.beta(2, 5, 5000)
    y = (rng.random(5000) < p).astype(int)
    t = metric_panel(y, p, metrics=("ece", "brier"), n_resamples=100, random_state=0)
    ece, brier = t.iloc[0], t.iloc[1]
    assert ece["verdict"].startswith("no evidence") and ece["low"] > 0 and ABOVE_ZERO_NOTE in ece["note"]
    assert brier["low"] > 0 and ABOVE_ZERO_NOTE not in brier["note"]
    again = judged_together(t, metric_panel(y, p, metrics=("tce",), n_resamples=0, random_state=0))
    assert again["note"][0].count(ABOVE_ZERO_NOTE) == 1
    miscalibrated = metric_panel((rng.random(5000) < p ** 0.6).astype(int), p, metrics=("ece",), n_resamples=50,
                                 random_state=0).iloc[0]
    assert miscalibrated["verdict"].startswith("evidence") and ABOVE_ZERO_NOTE not in miscalibrated["note"]
    # TCE: a calibrated model's lies far above 0 (its reading's range says so); the note read as meaningless there
    tce = metric_panel(y, p, metrics=("tce",), n_resamples=30, random_state=0).iloc[0]
    assert tce["verdict"].startswith("no evidence") and tce["low"] > 0 and ABOVE_ZERO_NOTE not in tce["note"]


def test_judged_together_says_a_range_once_where_redraws_cannot_test():
    """At alpha = 0.001 a TCE reference of 200 redraws cannot test: its reading "... would show a to b; 200
    redraws cannot test ..." was cut at its second mark when panels computed apart were judged together, and the
    range was said twice (a walk-through, Reliability page)."""
    from calibviz.panel import judged_together

    rng = np.random.default_rng(3)
    p = rng.beta(2, 5, 2000)
    y = (rng.random(2000) < p).astype(int)
    cfg = PanelConfig(alpha=0.001)
    tce = metric_panel(y, p, metrics=("tce",), config=cfg, n_resamples=0, n_reference=200, random_state=0)
    ece = metric_panel(y, p, metrics=("ece",), config=cfg, n_resamples=0, n_reference=999, random_state=0)
    reading = judged_together(ece, tce).set_index("metric").loc["tce", "reading"]
    assert reading.count("would show") == 1 and "200 redraws cannot test at α = 0.001" in reading
    assert reading == tce["reading"][0]


def test_a_calibration_error_below_the_calibrated_range_is_explained():
    """A walk-through met an isotonic 'after' ECE of 0.0019 beside 'a calibrated model would show 0.0029 -
    0.0066' with no word. Predictions fitted to the very labels (isotonic in sample: each bin's rate is met)
    sit below a calibrated model's noise; the reading says so, as it did for proper scores."""
    from sklearn.isotonic import IsotonicRegression

    rng = np.random.default_rng(5)
    p = rng.uniform(0.05, 0.95, 4000)
    y = (rng.random(4000) < p).astype(int)
    fitted = IsotonicRegression(out_of_bounds="clip").fit(p, y).predict(p)
    row = metric_panel(y, fitted, metrics=("ece",), n_resamples=0, n_reference=200, random_state=0).iloc[0]
    assert row["value"] < row["null_low"]
    assert "The value lies below that range, as a calibrated model's does about 1 time in 20" in row["reading"]
    calibrated = metric_panel(y, p, metrics=("ece",), n_resamples=0, n_reference=200, random_state=0).iloc[0]
    assert calibrated["value"] >= calibrated["null_low"] and "lies below that range" not in calibrated["reading"]


def test_rare_events_get_a_note_on_the_scores_intervals():
    """With 8 events of 500 rows the intervals of the Brier score, log loss and AUC covered 69-92% in an audit's
    simulation and the row-count notes said nothing: the rows of those three say so; 200 events do not."""
    rng = np.random.default_rng(3)
    p = rng.beta(0.5, 30, 500)
    y = np.zeros(500, dtype=int)
    y[np.argsort(p)[-8:]] = 1
    t = metric_panel(y, p, metrics=("ece", "brier", "log_loss", "auc"), n_resamples=20, n_reference=0)
    notes = dict(zip(t["metric"], t["note"]))
    for key in ("brier", "log_loss", "auc"):
        assert "only 8 events (label 1)" in notes[key], notes[key]
    assert "only 8 events" not in notes["ece"]
    y_many = (rng.random(500) < 0.4).astype(int)
    t = metric_panel(y_many, p, metrics=("brier", "auc"), n_resamples=20, n_reference=0)
    assert not any("Approximate interval: only" in n for n in t["note"])


def test_slope_and_intercept_name_a_direction_only_with_evidence():
    """'Predictions are too extreme (overconfident): calibration slope 0.9841' stood beside 'no evidence of
    miscalibration' on a calibrated model (a slope is never exactly 1; an audit): the direction now comes with a
    verdict of evidence only, in the verdict's sentence (which judged_together recomputes)."""
    rng = np.random.default_rng(1)
    p = rng.uniform(0.05, 0.95, 2000)
    calibrated = (rng.random(2000) < p).astype(int)
    for y, evidence in ((calibrated, False), ((rng.random(2000) < p ** 0.6).astype(int), True)):
        t = metric_panel(y, p, metrics=("calibration_slope", "calibration_intercept"), n_resamples=0,
                         n_reference=200).set_index("metric")
        named = ["too extreme" in t.loc["calibration_slope", "reading"] or "too timid" in t.loc["calibration_slope", "reading"],
                 "predicts the outcome on average" in t.loc["calibration_intercept", "reading"]]
        verdicts = [t.loc[k, "verdict"].startswith("evidence") for k in ("calibration_slope", "calibration_intercept")]
        assert verdicts == [evidence, evidence] and named == verdicts, t[["verdict", "reading"]]
    assert "too extreme (overconfident)" in t.loc["calibration_slope", "reading"]  # p ** 0.6 stretched: slope < 1
    assert "under-predicts" in t.loc["calibration_intercept", "reading"]


def test_a_value_is_said_below_its_range_only_where_the_reading_shows_it_below():
    """'TCE = 86.49% ... would show 86.49% to 86.60% ... The value lies below that range' (86.494 against 86.495,
    a walk-through): the sentence needs the shown value below the shown range."""
    from calibviz.panel import _reference_sentence

    tce = BINARY_METRICS["tce"]
    tied = _reference_sentence(tce, 86.4945, 86.60, 0.96, 0.05, n_redraws=200, value=86.4941)
    apart = _reference_sentence(tce, 86.4945, 86.60, 0.96, 0.05, n_redraws=200, value=86.2)
    assert "86.49% to 86.60%" in tied and "lies below that range" not in tied
    assert "lies below that range" in apart
    ece = _reference_sentence(BINARY_METRICS["ece"], 0.01232, 0.02, 0.96, 0.05, n_redraws=200, value=0.0123)
    assert "lies below that range" in ece  # percentage points shown with the digits that set them apart


def test_the_worst_bin_shows_the_digits_that_set_its_rate_apart_from_its_prediction():
    """'mean prediction 0.63, observed rate 0.63 ... off by 0.8 percentage points' (0.633 against 0.625, a
    walk-through)."""
    from calibviz.panel import _worst_bin_reading

    text = _worst_bin_reading(0.008, {"worst_bin": {"n": 5000, "mean_pred": 0.6334, "obs_rate": 0.6254}})
    assert "mean prediction 0.633, observed rate 0.625" in text, text
    assert "mean prediction 0.30, observed rate 0.10" in _worst_bin_reading(
        0.2, {"worst_bin": {"n": 50, "mean_pred": 0.3, "obs_rate": 0.1}})


def test_spiegelhalters_range_is_its_verdicts_reference_in_memory_and_on_scans(tmp_path):
    """The range beside Spiegelhalter's Z came from label redraws and its verdict from the normal test: Z = 1.94
    lay outside "-1.876 to 1.876" and read "no evidence (p = 0.052)" (an audit). The range is now the normal
    test's [-1.96, 1.96] at 5%, so a Z outside it is exactly a Z with p < 0.05; scans show the same range."""
    import pandas as pd

    from scipy.stats import norm

    rng = np.random.default_rng(336)
    outside_is_evidence = []
    for _ in range(30):
        p = rng.beta(0.5, 8, 300)
        y = (rng.uniform(size=300) < p * rng.choice([1.0, 1.6])).astype(int)
        r = metric_panel(y, p, metrics=("spiegelhalter_z",), n_resamples=0, n_reference=50).iloc[0]
        assert (r.null_low, r.null_high) == pytest.approx((norm.ppf(0.025), norm.ppf(0.975)))
        outside_is_evidence.append((not r.null_low <= r.value <= r.null_high) == (r.p_value < 0.05))
    assert all(outside_is_evidence)
    pd.DataFrame({"y": y, "p": p}).to_parquet(tmp_path / "s.parquet")
    s = cv.scan(str(tmp_path / "s.parquet")).metrics(["spiegelhalter_z"], n_reference=50).iloc[0]
    assert (s.null_low, s.null_high, s.p_value) == pytest.approx((r.null_low, r.null_high, r.p_value), rel=1e-9)
    assert s.n_redraws == r.n_redraws == 0 and "redraws" not in s.reading  # no redraws behind a normal p-value


def test_a_negative_slope_reads_as_a_reversed_ranking_not_as_overconfidence():
    """A reversed positive class gives a slope near -1, which read "the predictions are too extreme
    (overconfident)" (a review)."""
    rng = np.random.default_rng(4)
    p = rng.uniform(0.05, 0.95, 2000)
    y = (rng.random(2000) >= p).astype(int)  # the probability of the other class
    row = metric_panel(y, p, metrics=("calibration_slope",), n_resamples=0, n_reference=0).iloc[0]
    assert row["value"] < 0 and row["verdict"].startswith("evidence")
    assert "rank the outcomes the wrong way round" in row["reading"] and "overconfident" not in row["reading"]


def test_tce_near_the_low_end_of_its_percentile_interval_says_why():
    """TCE 67.4% in 65.1% - 83.0% showed with no word (a walk-through); a mean's interval gets no such note."""
    p = cv.load_demo("hospital_readmission")
    t = metric_panel(p.y, p.y_prob, metrics=["tce", "brier"], n_resamples=100, random_state=0).set_index("metric")
    low, high, value = t.loc["tce", ["low", "high", "value"]]
    assert low <= value < low + 0.25 * (high - low)
    assert "near the low end of its interval" in t.loc["tce", "note"]
    assert "near the low end" not in t.loc["brier", "note"]
