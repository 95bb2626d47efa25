"""The tests of a panel judged together: Holm's adjustment, its verdicts and readings, everywhere they are shown.

A panel shows several verdicts at once; each test alone has its level, but 7 of them flagged at least one
metric of 18% of calibrated models (400 logs, n = 2,000). The size of the panel as a whole is checked here by
simulation at modest replication (the full-size run is in benchmarks/bench_family.py).
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.multitest import multipletests

import calibviz as cv
from calibviz.errors import InputError
from calibviz.panel import (BINARY_METRICS, DEFAULT_BINARY_METRICS, PanelConfig, family_verdicts, judged_together,
                            metric_panel)
from calibviz.stats import holm_adjusted

EVIDENCE = "evidence of miscalibration"


# ----------------------------------------------------------------------------------------------------
# Holm's adjustment against statsmodels' (an independent implementation)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=20))
def test_holm_matches_statsmodels(p):
    expected = multipletests(np.array(p), method="holm")[1]
    np.testing.assert_allclose(holm_adjusted(p), expected, rtol=1e-12, atol=1e-15)


def test_holm_rejects_bad_input():
    for bad in ([0.1, np.nan], [1.2], [[0.1, 0.2]], [-0.1]):
        with pytest.raises(InputError, match="p-values in \\[0, 1\\]"):
            holm_adjusted(bad)


# ----------------------------------------------------------------------------------------------------
# verdicts and readings of a family


def _row(metric, p, redraws=200, value=0.05):
    return {"metric": metric, "label": BINARY_METRICS[metric].label, "value": value, "low": np.nan, "high": np.nan,
            "interval": "", "null_mean": 0.02, "null_low": 0.01, "null_high": 0.03, "p_value": p,
            "n_redraws": redraws, "verdict": "", "unit": BINARY_METRICS[metric].unit, "description": "",
            "reading": "Head.", "note": ""}


def test_family_verdicts_by_holm_with_readings_that_say_so():
    rows = [_row("ece", 0.03), _row("ace", 1 / 201), _row("tce", 0.5), _row("smooth_ece", 0.2)]
    out = family_verdicts(rows, 0.05, BINARY_METRICS)
    adjusted = [r["p_adjusted"] for r in out]
    np.testing.assert_allclose(adjusted, multipletests([0.03, 1 / 201, 0.5, 0.2], method="holm")[1])
    assert [r["verdict"] for r in out] == ["no evidence of miscalibration", EVIDENCE,
                                          "no evidence of miscalibration", "no evidence of miscalibration"]
    assert [r["n_tests"] for r in out] == [4, 4, 4, 4]
    # the metric whose own p is below alpha says why it is not flagged
    assert ("among the 4 tests judged together (p = 0.03 on its own, p = 0.09 adjusted by Holm's method"
            in out[0]["reading"])
    assert "adjusted for the 4 tests judged together: p ≤ 0.02" in out[1]["reading"]
    assert out[2]["reading"].endswith("no evidence of miscalibration (p = 0.5; adjusted for the 4 tests judged "
                                      "together: p = 0.5).")
    assert all(r["reading"].startswith("Head. A perfectly calibrated model") for r in out)


def test_lone_test_is_not_adjusted_and_rows_without_a_test_stay_out():
    rows = [_row("ece", 0.03), _row("brier", np.nan, redraws=0)]
    out = family_verdicts(rows, 0.05, BINARY_METRICS)
    assert out[0]["p_adjusted"] == 0.03 and out[0]["verdict"] == EVIDENCE and out[0]["n_tests"] == 1
    assert out[0]["reading"].endswith("evidence of miscalibration (p = 0.03).")
    assert np.isnan(out[1]["p_adjusted"]) and out[1]["verdict"] == "" and out[1]["n_tests"] == 0
    # a row whose redraws cannot reach alpha stays out of the family: no adjusted p-value
    out = family_verdicts([_row("ece", 1 / 11, redraws=10), _row("ace", 0.01)], 0.05, BINARY_METRICS)
    assert np.isnan(out[0]["p_adjusted"]) and out[1]["n_tests"] == 1 and out[1]["p_adjusted"] == 0.01


def test_holm_stopped_at_a_floor_leaves_the_later_tests_undecided():
    """ECE at its redraws' floor (50 redraws: p = 1/51) is not rejected among 3 tests; Spiegelhalter's p = 0.021,
    which would be rejected if ECE's p were resolved, must not read "no evidence" (a review's case)."""
    rows = [_row("ece", 1 / 51, redraws=50), _row("spiegelhalter_z", 0.021, redraws=0, value=2.3),
            _row("ace", 0.4, redraws=50)]
    out = family_verdicts(rows, 0.05, BINARY_METRICS)
    assert [r["verdict"] for r in out] == ["", "", "no evidence of miscalibration"]
    assert "at least 59 redraws, or fewer tests, would decide it" in out[0]["reading"]  # 0.05 / 3: 59
    assert "no verdict among the 3 tests judged together (p = 0.021 on its own" in out[1]["reading"]
    # resolved (more redraws, ECE's p smaller): both rejected
    rows[0] = _row("ece", 1 / 201)
    out = family_verdicts(rows, 0.05, BINARY_METRICS)
    assert [r["verdict"] for r in out] == [EVIDENCE, EVIDENCE, "no evidence of miscalibration"]


def test_floor_of_the_redraws_short_of_the_family_level_gives_no_verdict():
    # 16 tests need p <= 0.05/16 = 0.0031 for the first rejection; 200 redraws give 1/201 = 0.005 at best
    rows = [_row("ece", 1 / 201)] + [_row("ace", 0.5) for _ in range(15)]
    out = family_verdicts(rows, 0.05, BINARY_METRICS)
    assert out[0]["verdict"] == ""
    assert "no verdict among the 16 tests judged together" in out[0]["reading"]
    assert "at least 319 redraws" in out[0]["reading"]
    # a test of its own (no redraws) below the family's level is flagged
    rows[0] = _row("spiegelhalter_z", 1e-4, redraws=0, value=3.9)
    out = family_verdicts(rows, 0.05, BINARY_METRICS)
    assert out[0]["verdict"] == EVIDENCE


def _calibrated(n, rng):
    p = rng.beta(2, 5, n)
    return (rng.random(n) < p).astype(np.int64), p


def test_panel_size_on_calibrated_models():
    """The default panel flags any metric of a calibrated model at most at alpha (Holm), where single verdicts
    flagged 18%: 120 logs here; the old rule fails this bound with probability < 1e-3."""
    rng = np.random.default_rng(20261128)
    flagged, single = 0, 0
    for r in range(120):
        y, p = _calibrated(400, rng)
        t = metric_panel(y, p, n_resamples=0, n_reference=200, random_state=r)
        flagged += bool((t["verdict"] == EVIDENCE).any())
        single += bool((t["p_value"] <= 0.05).any())
    assert flagged <= 10, flagged  # rate <= 8.3% (alpha 5% + 2 standard errors)
    assert single >= 10, single  # the simulation can see the problem: single tests flag many more


def test_panel_still_flags_a_miscalibrated_model():
    rng = np.random.default_rng(5)
    p = rng.beta(2, 5, 2000)
    y = (rng.random(2000) < p ** 1.3).astype(np.int64)  # over-predicts
    t = metric_panel(y, p, n_resamples=0, n_reference=200, random_state=0)
    flagged = set(t.loc[t["verdict"] == EVIDENCE, "metric"])
    assert {"ece", "ace", "tce", "smooth_ece"} <= flagged
    np.testing.assert_allclose(t["p_adjusted"], multipletests(t["p_value"], method="holm")[1])


def test_panels_cached_apart_are_judged_together():
    rng = np.random.default_rng(1)
    y, p = _calibrated(600, rng)
    keys = ("ece", "ace", "tce", "spiegelhalter_z")
    parts = [metric_panel(y, p, metrics=(k,), n_resamples=0, n_reference=100, random_state=3) for k in keys]
    joint = metric_panel(y, p, metrics=keys, n_resamples=0, n_reference=100, random_state=3)
    pd.testing.assert_frame_equal(judged_together(*parts), joint)
    # and judging a joint panel again changes nothing
    pd.testing.assert_frame_equal(judged_together(joint), joint)


def test_a_metric_without_a_test_does_not_fix_the_level():
    # cached apart from alpha (it does not depend on it): joining it with tests at another level is fine
    rng = np.random.default_rng(12)
    y, p = _calibrated(300, rng)
    auc = metric_panel(y, p, metrics=("auc",), n_resamples=0, n_reference=20)  # alpha 0.05
    ece = metric_panel(y, p, metrics=("ece", "ace"), n_resamples=0, n_reference=20, config=PanelConfig(alpha=0.1))
    both = judged_together(ece, auc)
    assert both["n_tests"].tolist() == [2, 2, 0]
    pd.testing.assert_frame_equal(judged_together(ece, auc, alpha=0.1), both)


def test_panels_at_different_levels_are_not_judged_together():
    rng = np.random.default_rng(2)
    y, p = _calibrated(300, rng)
    a = metric_panel(y, p, metrics=("ece",), n_resamples=0, n_reference=20)
    b = metric_panel(y, p, metrics=("ace",), n_resamples=0, n_reference=20, config=PanelConfig(alpha=0.1))
    with pytest.raises(InputError, match="different levels"):
        judged_together(a, b)


def test_multiclass_panel_is_judged_together():
    rng = np.random.default_rng(4)
    P = rng.dirichlet([1, 1, 1], 800)
    y = (rng.random(800)[:, None] > np.cumsum(P, axis=1)).sum(axis=1)
    t = metric_panel(y, P, n_resamples=0, n_reference=100, random_state=0)
    tested = np.isfinite(t["p_value"].to_numpy(float))
    assert tested.sum() >= 3 and set(t.loc[tested, "n_tests"]) == {int(tested.sum())}
    np.testing.assert_allclose(t.loc[tested, "p_adjusted"], multipletests(t.loc[tested, "p_value"], method="holm")[1])


def test_scan_panel_uses_the_same_rule(tmp_path):
    rng = np.random.default_rng(6)
    p = rng.beta(2, 5, 5000)
    y = (rng.random(5000) < p ** 1.15).astype(np.int64)
    t = cv.scan(pd.DataFrame({"y": y, "p": p})).metrics(n_reference=200, random_state=0)
    tested = np.isfinite(t["p_value"].to_numpy(float))
    assert tested.sum() >= 5
    np.testing.assert_allclose(t.loc[tested, "p_adjusted"], multipletests(t.loc[tested, "p_value"], method="holm")[1])
    expected = np.where(t.loc[tested, "p_adjusted"] <= 0.05, EVIDENCE, "no evidence of miscalibration")
    assert (t.loc[tested, "verdict"].to_numpy() == expected).all()


def test_cli_json_has_the_adjusted_p_value(tmp_path, capsys):
    from calibviz.cli import main

    rng = np.random.default_rng(7)
    y, p = _calibrated(500, rng)
    path = tmp_path / "preds.csv"
    pd.DataFrame({"y": y, "p": p}).to_csv(path, index=False)
    assert main(["metrics", str(path), "--format", "json", "--metrics", "ece,ace,tce", "--reference", "50"]) == 0
    records = json.loads(capsys.readouterr().out)
    adjusted = multipletests([r["p_value"] for r in records], method="holm")[1]
    np.testing.assert_allclose([r["p_adjusted"] for r in records], adjusted)
    assert all((r["verdict"] == EVIDENCE) == (r["p_adjusted"] <= 0.05) for r in records)


def test_default_panel_has_what_the_family_needs():
    # 200 redraws reach the family level of the default panel: a value above every redraw can be flagged
    tested = [k for k in DEFAULT_BINARY_METRICS if BINARY_METRICS[k].reference is not None]
    assert 1 / 201 <= 0.05 / len(tested)


def test_cli_gives_the_family_the_redraws_it_needs(tmp_path, capsys):
    from calibviz.cli import main

    rng = np.random.default_rng(8)
    p = rng.beta(2, 5, 300)
    y = (rng.random(300) < p ** 2).astype(np.int64)  # far from calibrated: values above every redraw
    path = tmp_path / "preds.csv"
    pd.DataFrame({"y": y, "p": p}).to_csv(path, index=False)
    keys = "ece,ace,mce,rmsce,debiased_ece,tce,smooth_ece,brier,brier_reliability,log_loss,hosmer_lemeshow," \
           "spiegelhalter_z,calibration_intercept,calibration_slope,ici,mcb"
    assert main(["metrics", str(path), "--format", "json", "--metrics", keys]) == 0
    records = {r["metric"]: r for r in json.loads(capsys.readouterr().out)}
    assert records["ece"]["n_redraws"] == 319  # 16 tests: p <= 0.05 / 16 needs 319 redraws, not 200
    assert records["ece"]["verdict"] == EVIDENCE
    # an explicit --reference is kept, and the floor then says why there is no verdict
    assert main(["metrics", str(path), "--format", "json", "--metrics", keys, "--reference", "200"]) == 0
    records = {r["metric"]: r for r in json.loads(capsys.readouterr().out)}
    assert records["ece"]["n_redraws"] == 200 and records["ece"]["verdict"] == ""
    # Holm stops at ECE's floor after the tests of their own (HL, Spiegelhalter, slope) it rejected first: the
    # reading names the redraws that step needs, alpha / (tests left)
    import re

    from calibviz.panel import redraws_needed

    need = int(re.search(r"at least (\d+) redraws, or fewer tests", records["ece"]["reading"]).group(1))
    assert need in {redraws_needed(0.05 / k) for k in range(10, 17)} and need > 200, need


def test_metric_panel_default_redraws_follow_the_family():
    rng = np.random.default_rng(9)
    y, p = _calibrated(200, rng)
    assert metric_panel(y, p, metrics=("ece", "ace"), n_resamples=0).attrs["n_reference"] == 200
    keys = [k for k in BINARY_METRICS if k not in ("dsc", "unc", "auc")]  # the 16 with a test
    t = metric_panel(y, p, metrics=keys, n_resamples=0)
    assert t.attrs["n_reference"] == 319 and set(t.loc[t["n_redraws"] > 0, "n_redraws"]) == {319}


def test_scan_panels_cached_apart_are_judged_together():
    rng = np.random.default_rng(10)
    p = rng.beta(2, 5, 4000)
    y = (rng.random(4000) < p ** 1.2).astype(np.int64)
    s = cv.scan(pd.DataFrame({"y": y, "p": p}))
    keys = ["ece", "ace", "tce", "spiegelhalter_z"]
    parts = [s.metrics([k], n_reference=100, random_state=3) for k in keys]
    joint = s.metrics(keys, n_reference=100, random_state=3)
    together = judged_together(*parts)
    cols = ["metric", "p_value", "p_adjusted", "n_tests", "verdict", "reading"]
    pd.testing.assert_frame_equal(together[cols], joint[cols])


def test_a_proper_score_below_the_calibrated_range_is_evidence():
    """An over-predicting model (true risk p^1.3, p mostly below 1/2) has a Brier score and log loss below what a
    calibrated model with its predictions would show. The reference of the two scores is two-sided: that is
    evidence (one-sided it read "no evidence (p = 1)" beside an ECE flagged at p <= 0.01; a walk-through), and
    the reading says that a lower score is no success here."""
    rng = np.random.default_rng(13)
    p = rng.beta(2, 5, 2000)
    y = (rng.random(2000) < p ** 1.3).astype(np.int64)
    t = metric_panel(y, p, metrics=("brier", "log_loss", "ece"), n_resamples=0, n_reference=100).set_index("metric")
    for key in ("brier", "log_loss"):
        assert t.loc[key, "value"] < t.loc[key, "null_low"]
        assert t.loc[key, "p_value"] <= 0.05 and t.loc[key, "verdict"] == "evidence of miscalibration"
        assert "Below that range: the outcomes are less uncertain than the predictions say" in t.loc[key, "reading"]
        # a value below every redraw reached none by its distance, not by being larger (a walk-through)
        assert "none of 100 redraws was as far from a calibrated model's expected score" in t.loc[key, "reading"]
    assert "Below that range" not in t.loc["ece", "reading"]
    y_cal = (rng.random(2000) < p).astype(np.int64)
    t = metric_panel(y_cal, p, metrics=("brier",), n_resamples=0, n_reference=100)
    assert ("Below that range" in t.loc[0, "reading"]) == (t.loc[0, "value"] < t.loc[0, "null_low"])


def test_a_metric_in_both_joined_panels_is_shown_and_judged_once():
    from calibviz.ui.blocks import joined_panels

    rng = np.random.default_rng(14)
    y, p = _calibrated(400, rng)
    corp = metric_panel(y, p, metrics=("mcb", "dsc", "auc"), n_resamples=0, n_reference=50)
    panel = metric_panel(y, p, metrics=("ece", "mcb"), n_resamples=0, n_reference=50)
    both = joined_panels(corp, panel)
    assert both["metric"].tolist() == ["mcb", "dsc", "auc", "ece"]
    assert set(both.loc[np.isfinite(both["p_value"].to_numpy(float)), "n_tests"]) == {2}
