"""calibviz.compare: differences to a chosen reference, the better/worse verdict, sentences, leaderboard, report."""
from __future__ import annotations

import html

import numpy as np
import pandas as pd
import pytest

import calibviz as cv
from calibviz import metrics as M
from calibviz.compare import (comparison_metrics, comparison_sentences, compare_models, difference_verdict, direction,
                              leaderboard)
from calibviz.metrics.intervals import interval_options
from calibviz.panel import BINARY_METRICS, PanelConfig, metric_panel
from calibviz.report import build_report


def three_models(n=3000, seed=0):
    """A calibrated model, an overconfident one (clearly worse calibrated) and a blurred one (worse AUC)."""
    rng = np.random.default_rng(seed)
    z = rng.normal(-0.5, 1.5, n)
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-z))).astype(int)
    sig = lambda t: 1 / (1 + np.exp(-t))  # noqa: E731
    return y, {"good": sig(z), "overconfident": sig(2.5 * z), "blurred": sig(z + rng.normal(0, 2.0, n))}


@pytest.fixture(scope="module")
def table():
    y, p = three_models()
    return compare_models({k: (y, v) for k, v in p.items()}, metrics=("ece", "brier", "auc", "calibration_slope"),
                          n_resamples=100, random_state=3)


def test_direction_of_every_metric():
    assert [direction(k) for k in ("ece", "tce", "brier", "log_loss", "mcb", "hosmer_lemeshow")] == ["lower"] * 6
    assert [direction(k) for k in ("auc", "dsc", "accuracy")] == ["higher"] * 3
    assert [direction(k) for k in ("calibration_slope", "calibration_intercept", "spiegelhalter_z")] == ["ideal"] * 3
    assert direction("unc") == ""


@pytest.mark.parametrize("metric, low, high, expected", [
    ("ece", 0.01, 0.02, "worse"), ("ece", -0.02, -0.01, "better"), ("ece", -0.01, 0.02, "no clear difference"),
    ("auc", 0.01, 0.02, "better"), ("auc", -0.02, -0.01, "worse"), ("dsc", 0.001, 0.002, "better"),
    ("accuracy", -0.05, -0.01, "worse"), ("brier", 0.0, 0.01, "no clear difference"),
    ("calibration_slope", 0.1, 0.3, "worse"), ("unc", 0.1, 0.2, ""), ("ece", np.nan, 0.1, ""),
])
def test_difference_verdict(metric, low, high, expected):
    assert difference_verdict(low, high, metric) == expected


def test_clearly_worse_and_better_models(table):
    v = table.set_index(["metric", "model"])["verdict"]
    assert v["ece", "good"] == "reference"
    assert v["ece", "overconfident"] == "worse" and v["brier", "overconfident"] == "worse"
    assert v["auc", "blurred"] == "worse" and v["calibration_slope", "overconfident"] == "worse"
    assert table.attrs["reference"] == "good" and table["paired"].all()


def test_reference_choice_turns_the_verdicts_round():
    y, p = three_models()
    models = {k: (y, v) for k, v in p.items()}
    t = compare_models(models, metrics=("ece", "auc"), n_resamples=100, reference="overconfident")
    v = t.set_index(["metric", "model"])["verdict"]
    assert v["ece", "good"] == "better" and v["ece", "overconfident"] == "reference"
    assert v["auc", "blurred"] == "worse"
    d = t.set_index(["metric", "model"])["diff"]
    assert d["ece", "good"] == pytest.approx(M.ece(y, p["good"]) - M.ece(y, p["overconfident"]))
    with pytest.raises(cv.InputError, match="reference model 'nope'"):
        compare_models(models, metrics=("ece",), n_resamples=0, reference="nope")


def test_intervals_equal_the_metric_panel_and_a_direct_paired_bootstrap(table):
    y, p = three_models()
    row = table[(table["metric"] == "ece") & (table["model"] == "overconfident")].iloc[0]
    panel = metric_panel(y, p["overconfident"], metrics=("ece",), n_resamples=100, random_state=3, n_reference=0)
    assert (row["low"], row["high"]) == pytest.approx((panel.loc[0, "low"], panel.loc[0, "high"]), abs=1e-12)
    # the paired difference: the same rows resampled for both models, the metric's own interval method
    # (a biased calibration error: the union of the basic and the percentile interval, see calibviz.compare)
    assert interval_options("ece")["method"] == "bias_corrected"
    diff = lambda yy, a, b: M.ece(yy, b) - M.ece(yy, a)  # noqa: E731
    basic, pct = (M.bootstrap(diff, y, p["good"], p["overconfident"], n_resamples=100, random_state=3, method=m)
                  for m in ("basic", "percentile"))
    assert (row["diff_low"], row["diff_high"]) == pytest.approx((min(basic.low, pct.low), max(basic.high, pct.high)),
                                                                abs=1e-12)
    brier = table[(table["metric"] == "brier") & (table["model"] == "overconfident")].iloc[0]
    basic, pct = (M.bootstrap(lambda yy, a, b: M.brier_score(yy, b) - M.brier_score(yy, a), y, p["good"],
                              p["overconfident"], n_resamples=100, random_state=3, method=m)
                  for m in ("basic", "percentile"))
    hull = (min(basic.low, pct.low), max(basic.high, pct.high))  # every metric's difference: the same hull
    assert (brier["diff_low"], brier["diff_high"]) == pytest.approx(hull, abs=1e-12)
    assert hull == pytest.approx((pct.low, pct.high), rel=0.02)  # a nearly unbiased score: the two nearly agree
    auc = table[(table["metric"] == "auc") & (table["model"] == "blurred")].iloc[0]
    r = M.delong_test(y, p["good"], p["blurred"])
    assert (auc["diff_low"], auc["diff_high"]) == pytest.approx((r.low, r.high))


def test_small_data_get_the_panels_small_sample_intervals():
    """compare_models and metric_panel share bootstrap_metric: at 600 rows (40 per bin) the small-sample methods
    (double bootstrap of ECE and ACE, debiased-basic RMSCE) give both the same interval, from the same seed."""
    from calibviz.metrics.intervals import chosen_method, method_alternative, rows_per_bin

    y, p = three_models(600, seed=4)
    keys = ("ece", "ace", "rmsce", "brier")
    t = compare_models({k: (y, v) for k, v in p.items() if k != "blurred"}, metrics=keys, n_resamples=40,
                       random_state=5, n_reference=0)
    small = 0
    for key in keys:
        panel = metric_panel(y, p["overconfident"], metrics=(key,), n_resamples=40, random_state=5,
                             n_reference=0).iloc[0]
        row = t[(t["metric"] == key) & (t["model"] == "overconfident")].iloc[0]
        assert (row["low"], row["high"]) == pytest.approx((panel["low"], panel["high"]), abs=1e-12), key
        name = chosen_method(key, rows_per_bin(key, 600))
        method = method_alternative(name)[0]
        assert panel["interval"].split(",")[0] == method, (key, panel["interval"])
        small += name != interval_options(key)["method"]
    assert small >= 3  # ECE, ACE and RMSCE are small-sample cells at 40 rows per bin


def test_models_on_other_rows_are_compared_unpaired():
    y, p = three_models(2000)
    y2, p2 = three_models(1500, seed=1)
    t = compare_models({"a": (y, p["good"]), "b": (y2, p2["overconfident"])}, metrics=("ece", "auc"),
                       n_resamples=60)
    b = t[t["model"] == "b"]
    assert not b["paired"].any() and b["verdict"].eq("worse").iloc[0]
    assert np.isfinite(b["diff_low"]).all()


def test_without_resamples_values_only():
    y, p = three_models(1000)
    t = compare_models({k: (y, v) for k, v in p.items()}, metrics=("ece", "tce"), n_resamples=0)
    assert t["low"].isna().all() and t.loc[~t["is_reference"], "diff_low"].isna().all()
    assert set(t.loc[~t["is_reference"], "verdict"]) == {""}
    assert comparison_sentences(t) == []
    assert t.loc[1, "value"] == pytest.approx(M.ece(y, p["overconfident"]))


def test_sentences_say_better_and_worse(table):
    lines = comparison_sentences(table, name=lambda m: f"[{m}]")
    worse = [s for s in lines if s.startswith("[overconfident] is worse than [good] on ECE")]
    assert len(worse) == 1 and "(higher is worse;" in worse[0]
    assert any(s.startswith("[blurred] is worse than [good] on AUC") and "(lower is worse;" in s for s in lines)
    # the reference turned round: 'better' sentences
    y, p = three_models()
    t = compare_models({k: (y, v) for k, v in p.items()}, metrics=("ece",), n_resamples=100, reference="overconfident")
    assert any(s.startswith("good is better than overconfident on ECE") and "(lower is better;" in s
               for s in comparison_sentences(t))


def test_equally_good_models_are_rarely_called_different():
    """The paired verdict's false alarm rate on two exchangeable, equally (mis)calibrated models: ~alpha.

    A quick version of benchmarks/bench_compare_null.py (60 replications; the benchmark runs 200+)."""
    calls, reps = 0, 60
    for rep in range(reps):
        rng = np.random.default_rng([rep, 5])
        u1, u2 = rng.uniform(size=800), rng.uniform(size=800)
        y = (rng.uniform(size=800) < (u1 + u2) / 2).astype(int)
        sharpen = lambda q: 1 / (1 + np.exp(-2 * np.log(q / (1 - q))))  # noqa: E731
        t = compare_models({"a": (y, sharpen(u1 / 2 + 0.25)), "b": (y, sharpen(u2 / 2 + 0.25))},
                           metrics=("ece", "brier"), n_resamples=100, random_state=rep)
        calls += int(t["verdict"].isin(["better", "worse"]).sum())
    # 120 tests at 5%: expected 6; P(X > 15 | p = 0.05) < 0.001
    assert calls <= 15, calls


def test_a_calibrated_model_is_not_called_worse_calibrated():
    """Two perfectly calibrated models, a sharp and a coarse one (bench_compare_null.py's sharp_vs_coarse): the
    bootstrap alone calls the sharp one's ECE higher here (its binning noise), the calibrated-model reference
    holds the verdict back."""
    rng = np.random.default_rng([1, 11])  # a draw where the bootstrap alone says "worse" (about 15% of draws)
    u1, u2 = rng.uniform(size=2000), rng.uniform(size=2000)
    y = (rng.uniform(size=2000) < (u1 + u2) / 2).astype(int)
    models = {"coarse": (y, np.where(u1 > 0.5, 0.625, 0.375)), "sharp": (y, u1 / 2 + 0.25)}
    bare = compare_models(models, metrics=("ece",), n_resamples=100, n_reference=0)
    assert bare.loc[1, "verdict"] == "worse" and bare.loc[1, "diff_low"] > 0
    t = compare_models(models, metrics=("ece",), n_resamples=100)
    assert t.loc[1, "verdict"] == "no clear difference" and t.loc[1, "held_back"] == "sharp"
    p = metric_panel(y, u1 / 2 + 0.25, metrics=("ece",), n_resamples=0, n_reference=200).loc[0, "p_value"]
    assert t.loc[1, "held_back_p"] == pytest.approx(p) and p > 0.05  # the panel's own reference, same seed
    lines = comparison_sentences(t)
    assert any("sharp's is within what a perfectly calibrated model" in s for s in lines), lines
    assert not any(" is worse than " in s for s in lines)


def test_comparison_metrics_rule():
    assert comparison_metrics(None) == (cv.panel.DEFAULT_BINARY_METRICS, ())
    assert comparison_metrics(("tce", "ece", "tce")) == (("tce", "ece"), ())
    assert comparison_metrics(("confidence_ece", "classwise_ece"), is_binary=False) == (("ece",), ("classwise_ece",))
    with pytest.raises(cv.InputError, match="none of the metrics"):
        comparison_metrics(("top_label_ece",), is_binary=False)
    with pytest.raises(cv.InputError, match="unknown metric"):
        comparison_metrics(("nope",))


def test_leaderboard_equals_the_panels():
    y, p = three_models(1500)
    panels = {k: metric_panel(y, v, metrics=("ece", "auc"), n_resamples=0, n_reference=30) for k, v in p.items()}
    board = leaderboard(panels)
    assert board["model"].tolist() == list(p)
    assert board["ece"].dtype == float and board["ece"].tolist() == pytest.approx([M.ece(y, v) for v in p.values()])
    assert board.loc[1, "ece_verdict"] == "evidence of miscalibration"
    assert set(board["auc_verdict"]) == {""}  # AUC is no calibration error: no verdict against a calibrated model
    # the redraws behind each p-value travel with it (1/(R+1) is a bound): 30 for ECE, none for AUC
    assert board["ece_n_redraws"].tolist() == [30, 30, 30] and board["auc_n_redraws"].tolist() == [0, 0, 0]
    assert board.loc[1, "ece_p"] == pytest.approx(1 / 31)
    with pytest.raises(cv.InputError, match="same metrics"):
        leaderboard({"a": panels["good"], "b": panels["blurred"].head(1)})


def test_report_comparison_uses_the_metric_set_the_reference_and_the_verdicts():
    y, p = three_models(1500)
    models = {k: cv.Predictions(y=y, probs=np.column_stack([1 - v, v]), classes=(0, 1), name=k) for k, v in p.items()}
    page = build_report(models, metrics=("ece", "brier"), n_resamples=40, n_reference=0, reference="overconfident")
    compare = page.split('<section id="compare">')[1].split("</section>")[0]
    assert "<td>ECE</td>" in compare and "<td>Brier score</td>" in compare and "<td>ACE</td>" not in compare
    assert "reference model <b>overconfident</b>" in compare
    assert "<th>p adjusted</th>" in compare and "Holm's method for the 4 differences shown together" in compare
    t = compare_models({k: (y, v) for k, v in p.items()}, metrics=("ece", "brier"), n_resamples=40,
                       reference="overconfident", n_reference=0)
    summary = page.split('id="summary"')[1].split("</section>")[0]
    sentences = comparison_sentences(t, name=lambda m: f"<b>{html.escape(m)}</b>")
    assert any("is better than" in s for s in sentences)
    for s in sentences:
        assert s.replace("< ", "&lt; ") in summary
    assert "p < " not in summary  # valid HTML: the sentences' "<" is escaped
    assert "reference='overconfident'" in html.unescape(page.split('id="python-call">')[1].split("</pre>")[0])
    # an explicit comparison set wins over the panel's
    page = build_report(models, metrics=("ece",), compare_metrics=("tce",), n_resamples=0, n_reference=0)
    compare = page.split('<section id="compare">')[1].split("</section>")[0]
    assert "<td>TCE</td>" in compare and "<td>ECE</td>" not in compare


def test_score_ordered_resamples_give_the_panels_intervals():
    """TCE and ECE on PAVA-BC bins list their resamples by score (panel.resample_order); compare_models draws
    them the same way per model, so its intervals are still the panel's, and the values are the plain bootstrap's
    (the same resamples, listed in another order)."""
    from calibviz.panel import resample_order

    y, p = three_models(3000, seed=2)
    config = PanelConfig(binning="pavabc")
    assert resample_order(BINARY_METRICS["tce"], config, p["good"]) is not None
    assert resample_order(BINARY_METRICS["ece"], config, p["good"]) is not None
    assert resample_order(BINARY_METRICS["ece"], PanelConfig(), p["good"]) is None  # uniform bins do not sort
    assert resample_order(BINARY_METRICS["brier"], config, p["good"]) is None
    t = compare_models({k: (y, v) for k, v in p.items()}, metrics=("tce", "ece"), config=config, n_resamples=30,
                       random_state=8, n_reference=0)
    for key in ("tce", "ece"):
        for model in ("good", "overconfident"):
            panel = metric_panel(y, p[model], metrics=(key,), config=config, n_resamples=30, random_state=8,
                                 n_reference=0).iloc[0]
            row = t[(t["metric"] == key) & (t["model"] == model)].iloc[0]
            assert (row["low"], row["high"]) == pytest.approx((panel["low"], panel["high"]), rel=1e-12), key
    spec = BINARY_METRICS["tce"]
    plain = M.bootstrap(lambda yy, pp: spec.compute(yy, pp, None, config), y, p["good"], n_resamples=30,
                        random_state=8)
    panel = metric_panel(y, p["good"], metrics=("tce",), config=config, n_resamples=30, random_state=8,
                         n_reference=0).iloc[0]
    assert (panel["low"], panel["high"]) == (plain.low, plain.high)


def test_every_difference_interval_contains_the_difference_it_is_shown_with():
    """TCE's resamples inflate a near-calibrated model's value far more than a miscalibrated one's, so the
    percentile interval of a calibrated against a sharp, miscalibrated model's TCE difference missed the
    difference itself (a browser review: -79.6 points, interval -76.9 to -44.3); the hull of the percentile and
    basic intervals contains it for every metric, and the clear verdicts stay."""
    rng = np.random.default_rng(12)
    p = rng.beta(2, 5, 1500)
    y = (rng.random(1500) < p).astype(int)
    sharp = np.clip(np.where(p > 0.3, p + 0.35, p - 0.2), 0.001, 0.999)  # badly miscalibrated
    t = compare_models({"sharp": (y, sharp), "calib": (y, p)}, metrics=("tce", "ece", "brier", "log_loss"),
                       n_resamples=60, random_state=1, n_reference=0)
    rows = t[~t["is_reference"]]
    assert len(rows) == 4 and np.isfinite(rows[["diff_low", "diff_high"]].to_numpy()).all()
    assert ((rows["diff_low"] <= rows["diff"]) & (rows["diff"] <= rows["diff_high"])).all(), rows
    assert (rows["verdict"] == "better").all()


def test_paired_resamples_share_their_rows_without_a_seed():
    """Each model's resamples are drawn from one seed so that they resample the same rows; without a seed
    (random_state=None) two generators from fresh entropy would have unpaired them."""
    from calibviz.compare import _resampled

    y, p = three_models(500, seed=6)
    mats = _resampled(BINARY_METRICS["brier"], PanelConfig(), [(y, p["good"], None), (y, p["good"], None)], 20,
                      None, lambda k: None)
    np.testing.assert_array_equal(mats[0], mats[1])


def test_difference_intervals_stay_within_the_metrics_range():
    """A difference of two TCE values lies within -100 to 100 points; the hull of the basic and percentile
    intervals reached -114.9 pp for a calibrated against a sharp model (a browser review)."""
    rng = np.random.default_rng(12)
    p = rng.beta(2, 5, 1500)
    y = (rng.random(1500) < p).astype(int)
    sharp = np.clip(np.where(p > 0.3, p + 0.35, p - 0.2), 0.001, 0.999)
    t = compare_models({"sharp": (y, sharp), "calib": (y, p)}, metrics=("tce", "ece"), n_resamples=60,
                       random_state=1, n_reference=0)
    tce = t[(t["metric"] == "tce") & ~t["is_reference"]].iloc[0]
    assert -100 <= tce["diff_low"] <= tce["diff"] <= tce["diff_high"] <= 100
    ece = t[(t["metric"] == "ece") & ~t["is_reference"]].iloc[0]
    assert -1 <= ece["diff_low"] <= ece["diff_high"] <= 1


# ---- differences shown together are judged together (family_verdicts) ----

from hypothesis import given, settings, strategies as hst  # noqa: E402
from scipy import stats as sps  # noqa: E402
from statsmodels.stats.multitest import multipletests  # noqa: E402

from calibviz.compare import COMPARISON_COLUMNS, _difference_p, family_verdicts  # noqa: E402


@pytest.mark.property
@settings(max_examples=80, deadline=None)
@given(hst.lists(hst.floats(-1, 1, allow_nan=False, allow_subnormal=False), min_size=5, max_size=120, unique=True),
       hst.floats(-0.6, 0.6),
       hst.floats(-0.5, 0.5))
def test_difference_p_is_the_level_at_which_the_verdicts_interval_reaches_zero(values, shift, estimate):
    """p <= a exactly when the verdict's interval (the hull of percentile and basic, compare._interval) at level
    1 - a excludes 0; where it excludes 0 at every level, p is at most 1 / resamples."""
    from calibviz.metrics.resampling import difference_interval as _interval

    dist = np.asarray(values) + shift
    p = _difference_p(dist, estimate)
    assert 0 <= p <= 1
    low, high = _interval(dist, estimate, 1 - 1e-12)
    if low > 0 or high < 0:  # beyond every resample: the normal reading, capped at the resamples' resolution
        assert p <= 1 / dist.size
        return
    for a in (0.001, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 0.9):
        if abs(p - a) < 1e-9:
            continue
        low, high = _interval(dist, estimate, 1 - a)
        assert (p <= a) == (low > 0 or high < 0), (a, p, low, high)


def test_difference_p_edge_cases():
    assert np.isnan(_difference_p(np.array([0.1]), 0.1))
    assert np.isnan(_difference_p(np.array([0.1, np.nan, np.inf]), 0.1))
    assert np.isnan(_difference_p(np.array([0.1, 0.2]), np.nan))
    assert _difference_p(np.full(50, 0.3), 0.3) == 0.0  # every resample on one side, no spread
    assert _difference_p(np.zeros(50), 0.0) == 1.0


def test_family_verdicts_are_holm_over_every_difference_shown(table):
    """compare_models judges all (metric, model) differences of its table together: Holm's adjustment (against
    statsmodels, an independent implementation) of the p-values of the tested rows."""
    tested = table[table["n_tests"] > 0]
    assert set(tested["metric"]) == {"ece", "brier", "auc", "calibration_slope"}
    assert (tested["n_tests"] == len(tested)).all() and len(tested) == 8
    np.testing.assert_allclose(tested["p_adjusted"], multipletests(tested["p_value"], method="holm")[1])
    assert table.loc[table["is_reference"], ["p_value", "p_adjusted"]].isna().all(axis=None)
    assert list(table.columns) == list(COMPARISON_COLUMNS)
    # a verdict needs its adjusted p-value at the interval's level
    called = table["verdict"].isin(["better", "worse"])
    assert (table.loc[called, "p_adjusted"] <= 0.05).all()
    assert (table.loc[called, "verdict"] == table.loc[called, "verdict_alone"]).all()
    # idempotent, and the same when the metrics are computed apart and judged together (the Compare page)
    pd_testing = pytest.importorskip("pandas.testing")
    pd_testing.assert_frame_equal(family_verdicts(table), table)


def test_tables_computed_apart_and_judged_together_equal_the_joint_table():
    import pandas as pd

    y, p = three_models(1500, seed=4)
    models = {k: (y, v) for k, v in p.items()}
    y2, p2 = three_models(1200, seed=5)
    models["elsewhere"] = (y2, p2["good"])  # scored on other rows: its resamples are paired in a shuffled order
    keys = ("ece", "brier", "auc", "log_loss")
    joint = compare_models(models, metrics=keys, n_resamples=60, random_state=2)
    assert not joint.loc[joint["model"] == "elsewhere", "paired"].any()
    parts = [compare_models(models, metrics=(k,), n_resamples=60, random_state=2) for k in keys]
    assert all(part["n_tests"].max() == 3 for part in parts)  # each alone: its three models
    joined = pd.concat(parts, ignore_index=True)
    joined.attrs.update(parts[0].attrs)
    pd.testing.assert_frame_equal(family_verdicts(joined), joint, check_like=False)


def test_a_difference_beyond_the_noise_alone_is_withdrawn_among_many_and_said_so():
    """A difference whose own p-value is below 0.05 but not below Holm's threshold for the differences shown
    together gets "no clear difference", and the sentences say why (with both p-values)."""
    import pandas as pd

    t = pd.DataFrame({"metric": ["brier", "brier", "ece", "ece"], "label": ["Brier score", "Brier score", "ECE", "ECE"],
                      "unit": ["score", "score", "probability", "probability"], "model": ["a", "b", "a", "b"],
                      "is_reference": [True, False, True, False], "value": [0.2, 0.21, 0.02, 0.021],
                      "diff": [0.0, 0.01, 0.0, 0.001], "diff_low": [0.0, 0.001, 0.0, -0.01],
                      "diff_high": [0.0, 0.02, 0.0, 0.012], "direction": ["lower"] * 4,
                      "p_value": [np.nan, 0.03, np.nan, 0.6], "verdict_alone": ["reference", "worse", "reference",
                                                                              "no clear difference"],
                      "held_back": [""] * 4, "held_back_p": [np.nan] * 4})
    t.attrs.update(reference="a", confidence=0.95)
    out = family_verdicts(t)
    assert out["verdict"].tolist() == ["reference", "no clear difference", "reference", "no clear difference"]
    assert out["p_adjusted"].tolist()[1] == pytest.approx(0.06)
    lines = comparison_sentences(out)
    assert not any(" is worse than " in s for s in lines)
    assert any("b and a differ on Brier score beyond the bootstrap noise of each difference alone, but not beyond "
               "what 2 differences of equal models would give by chance (Brier score p = 0.03, 0.06 adjusted; "
               "Holm's method): neither is called better or worse." in s for s in lines), lines
    # the withdrawn difference is not also listed among those that do not differ
    assert [s for s in lines if "do not differ" in s] == ["b and a do not differ beyond the bootstrap noise on ECE."]
    # at 90% the same difference stands, and its sentence gives both p-values
    t.attrs.update(confidence=0.90)
    out = family_verdicts(t)
    assert out["verdict"].tolist()[1] == "worse"
    line = next(s for s in comparison_sentences(out) if s.startswith("b is worse than a on Brier score"))
    assert line.endswith("; p = 0.03, 0.06 adjusted for 2 differences).")


@pytest.mark.slow
def test_equal_models_are_rarely_called_different_anywhere_on_the_page():
    """The chance of any better/worse among the differences shown together (3 models x 4 metrics: 8 tests) for
    exchangeable, equally miscalibrated models: at most ~5% (benchmarks/bench_compare_family.py runs it at
    full size with the default metrics). Each difference read alone is counted from the same tables."""
    reps, any_family, any_alone = 40, 0, 0
    sharpen = lambda q: 1 / (1 + np.exp(-2 * np.log(q / (1 - q))))  # noqa: E731
    for rep in range(reps):
        rng = np.random.default_rng([rep, 17])
        u = rng.uniform(size=(3, 800))
        y = (rng.uniform(size=800) < u.mean(axis=0)).astype(int)
        models = {name: (y, sharpen(u[j] / 3 + 1 / 3)) for j, name in enumerate("abc")}
        t = compare_models(models, metrics=("ece", "ace", "brier", "log_loss"), n_resamples=100, random_state=rep,
                           n_reference=100)
        any_family += bool(t["verdict"].isin(["better", "worse"]).any())
        any_alone += bool(t["verdict_alone"].isin(["better", "worse"]).any())
    assert any_family <= any_alone
    # P(X >= 7 | 40, 0.05) = 0.014
    assert any_family <= 6, (any_family, any_alone)


def test_a_lone_difference_keeps_the_verdict_of_its_interval():
    """With one tested difference nothing is adjusted: the empirical interval decides, even where the normal
    reading of the resamples would put its p-value just above the level."""
    import pandas as pd

    t = pd.DataFrame({"metric": ["brier", "brier"], "is_reference": [True, False], "p_value": [np.nan, 0.07],
                      "verdict_alone": ["reference", "worse"]})
    assert family_verdicts(t)["verdict"].tolist() == ["reference", "worse"]


def test_report_says_how_verdicts_were_reached_for_its_number_of_differences():
    from calibviz.report import _compare_rule
    import pandas as pd

    assert _compare_rule(pd.DataFrame({"n_tests": [0, 0]})) == "without bootstrap intervals there are no verdicts."
    assert "Holm" not in _compare_rule(pd.DataFrame({"n_tests": [0, 1]}))
    assert "Holm's method for the 6 differences" in _compare_rule(pd.DataFrame({"n_tests": [0, 6]}))


def test_sentences_quote_the_reference_value_its_row_shows():
    """value - diff can round the other way: "84.50% vs 8.08%" beside a table showing the reference's 8.07%."""
    from calibviz.compare import comparison_sentences

    t = pd.DataFrame({"metric": ["tce", "tce"], "label": ["TCE", "TCE"], "unit": ["percent"] * 2,
                      "model": ["logreg", "rf"], "is_reference": [True, False], "value": [8.075, 84.5],
                      "diff": [0.0, 84.5 - 8.075], "diff_low": [0.0, 51.7], "diff_high": [0.0, 100.0],
                      "direction": ["lower"] * 2, "verdict": ["reference", "worse"]})
    t.attrs.update(reference="logreg", confidence=0.95)
    assert f"{t['value'][1] - t['diff'][1]:.2f}" == "8.08"  # the rounding the sentence met
    assert "TCE: 84.50% vs 8.07% (" in comparison_sentences(t)[0]
