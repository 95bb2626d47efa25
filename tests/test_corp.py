"""CORP: PAV reliability curve with bands, MCB/DSC/UNC decomposition, model comparison, Murphy diagram.

Golden values come from independent code: model-diagnostics' ``decompose`` (isotonic regression by
scikit-learn) and, for reliabilitydiag's convention, a plain PAV written out below that follows R's
``isoreg`` (rows ordered by (x, -y), which pools tied scores) and reliabilitydiag's ``summary``.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from model_diagnostics.scoring import LogLoss, SquaredError, decompose
from sklearn.isotonic import IsotonicRegression

import calibviz as cv
from calibviz.metrics import (MiscalibrationStatistic, brier_score, consistency_test, corp_decomposition, corp_table,
                              decomposition_table, log_loss, murphy_table)


def _data(n, seed=0, ties=False, weights=False):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.01, 0.99, n)
    if ties:
        p = np.round(p, 1)
    y = (rng.uniform(size=n) < p ** 1.4).astype(float)
    w = rng.uniform(0.1, 3.0, n) if weights else None
    return y, p, w


# ----------------------------------------------------------------------------
# golden: model-diagnostics' decompose


@pytest.mark.golden
@pytest.mark.parametrize("n", [37, 1000, 30000])
@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("weights", [False, True])
@pytest.mark.parametrize("score", ["brier", "log"])
def test_decomposition_equals_model_diagnostics(n, ties, weights, score):
    y, p, w = _data(n, seed=n, ties=ties, weights=weights)
    fn = SquaredError() if score == "brier" else LogLoss()
    ref = decompose(y, p, w, scoring_function=fn).row(0, named=True)
    d = corp_decomposition(y, p, score=score, sample_weight=w)
    assert d.score == pytest.approx(ref["score"], abs=1e-10)
    assert d.miscalibration == pytest.approx(ref["miscalibration"], abs=1e-10)
    assert d.discrimination == pytest.approx(ref["discrimination"], abs=1e-10)
    assert d.uncertainty == pytest.approx(ref["uncertainty"], abs=1e-10)


def _isoreg_pav(x, y):
    """PAV as R's isoreg: rows ordered by (x, -y), adjacent violators pooled; returns the fit in input order."""
    order = np.lexsort((-y, x))
    vals, wts, sizes = [], [], []
    for v in y[order]:
        vals.append(float(v)); wts.append(1.0); sizes.append(1)
        while len(vals) > 1 and vals[-2] >= vals[-1]:
            v2, w2, s2 = vals.pop(), wts.pop(), sizes.pop()
            vals[-1] = (vals[-1] * wts[-1] + v2 * w2) / (wts[-1] + w2)
            wts[-1] += w2
            sizes[-1] += s2
    fit_sorted = np.repeat(vals, sizes)
    fit = np.empty_like(fit_sorted)
    fit[order] = fit_sorted
    return fit


def _reliabilitydiag_summary(x, y):
    """reliabilitydiag's summary(): mean Brier of x, of the PAV fit (Sc) and of the base rate."""
    cep = _isoreg_pav(x, y)
    mean_score = np.mean((x - y) ** 2)
    unc = np.mean((np.mean(y) - y) ** 2)
    sc = np.mean((cep - y) ** 2)
    return mean_score, mean_score - sc, unc - sc, unc


@pytest.mark.golden
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_decomposition_equals_reliabilitydiag_convention(seed):
    y, p, _ = _data(400, seed=seed, ties=True)
    s, mcb, dsc, unc = _reliabilitydiag_summary(p, y)
    d = corp_decomposition(y, p)
    np.testing.assert_allclose([d.score, d.mcb, d.dsc, d.unc], [s, mcb, dsc, unc], atol=1e-12)


def test_curve_equals_isotonic_regression_and_isoreg():
    y, p, w = _data(3000, seed=5, ties=True, weights=True)
    t = corp_table(y, p, sample_weight=w, bands=None)
    iso = IsotonicRegression().fit(p, y, sample_weight=w)
    np.testing.assert_allclose(t["cep"], iso.predict(t["x"]), atol=1e-12)
    t0 = corp_table(y, p, bands=None)
    fit = _isoreg_pav(p, y)
    got = t0.set_index("x")["cep"]
    np.testing.assert_allclose(got.loc[p].to_numpy(), fit, atol=1e-12)


# ----------------------------------------------------------------------------
# properties of the decomposition


@pytest.mark.parametrize("score", ["brier", "log"])
def test_identity_and_score(score):
    y, p, w = _data(5000, seed=3, weights=True)
    d = corp_decomposition(y, p, score=score, sample_weight=w)
    assert d.mcb - d.dsc + d.unc == pytest.approx(d.score, abs=1e-14)
    own = brier_score(y, p, sample_weight=w) if score == "brier" else log_loss(y, p, sample_weight=w)
    assert d.score == pytest.approx(own, abs=1e-12)
    assert d.mcb >= 0 and d.dsc >= 0


def test_recalibrated_predictions_have_no_miscalibration_and_constant_no_discrimination():
    y, p, _ = _data(2000, seed=4)
    cep = IsotonicRegression().fit(p, y).predict(p)
    assert corp_decomposition(y, cep).mcb == pytest.approx(0.0, abs=1e-14)
    d = corp_decomposition(y, np.full_like(p, 0.3))
    assert d.dsc == pytest.approx(0.0, abs=1e-14)
    assert d.mcb == pytest.approx((0.3 - y.mean()) ** 2, abs=1e-14)


def test_integer_weights_equal_repeated_rows_and_zero_weights_are_absent():
    y, p, _ = _data(300, seed=6, ties=True)
    k = np.random.default_rng(0).integers(0, 4, 300)
    a = corp_decomposition(y, p, sample_weight=k.astype(float), score="log")
    b = corp_decomposition(np.repeat(y, k), np.repeat(p, k), score="log")
    np.testing.assert_allclose(list(a), list(b), atol=1e-13)
    ta = corp_table(y, p, sample_weight=k.astype(float), bands=None)
    tb = corp_table(np.repeat(y, k), np.repeat(p, k), bands=None)
    pd.testing.assert_frame_equal(ta[["x", "cep", "block"]], tb[["x", "cep", "block"]])


def test_row_order_does_not_matter():
    y, p, w = _data(1000, seed=7, ties=True, weights=True)
    perm = np.random.default_rng(1).permutation(1000)
    assert list(corp_decomposition(y, p, sample_weight=w)) == pytest.approx(
        list(corp_decomposition(y[perm], p[perm], sample_weight=w[perm])), abs=1e-14)


def test_log_loss_with_certain_wrong_prediction_is_clipped_like_log_loss():
    y = np.array([1.0, 0.0, 1.0, 0.0])
    p = np.array([0.0, 0.2, 0.7, 0.4])
    d = corp_decomposition(y, p, score="log")
    assert d.score == pytest.approx(log_loss(y, p))
    assert np.isfinite(d.mcb)


def test_bad_input():
    with pytest.raises(cv.InputError, match="score must be 'brier' or 'log'"):
        corp_decomposition([0, 1], [0.2, 0.8], score="crps")
    with pytest.raises(cv.InputError, match="bands must be"):
        corp_table([0, 1], [0.2, 0.8], bands=("wide",))
    with pytest.raises(cv.InputError, match="level"):
        corp_table([0, 1], [0.2, 0.8], level=90)
    with pytest.raises(cv.InputError, match="y_prob must lie in"):
        corp_decomposition([0, 1], [0.2, 1.8])


# ----------------------------------------------------------------------------
# the curve table and its bands


def test_table_blocks_and_thinning():
    y, p, _ = _data(50000, seed=8)
    full = corp_table(y, p, bands=None, n_points=10**6)
    thin = corp_table(y, p, bands=None, n_points=200)
    assert len(full) == np.unique(p).size
    assert len(thin) < len(full) / 10
    # every block keeps its first and last score, so the thinned curve draws the same steps
    b_full = full.groupby("block").agg(lo=("x", "min"), hi=("x", "max"), cep=("cep", "first"))
    b_thin = thin.groupby("block").agg(lo=("x", "min"), hi=("x", "max"), cep=("cep", "first"))
    pd.testing.assert_frame_equal(b_full, b_thin)
    assert (thin["block_lower"] <= thin["x"]).all() and (thin["x"] <= thin["block_upper"]).all()
    assert thin.groupby("block")["block_n"].first().sum() == 50000
    assert thin.attrs["decomposition"]["miscalibration"] == pytest.approx(corp_decomposition(y, p).mcb)


@pytest.mark.parametrize("resample_predictions", [True, False])
def test_consistency_band_covers_a_calibrated_model(resample_predictions):
    rng = np.random.default_rng(9)
    p = rng.uniform(0.05, 0.95, 4000)
    y = (rng.uniform(size=4000) < p).astype(float)
    t = corp_table(y, p, bands=("consistency", "confidence"), n_resamples=200, random_state=0,
                   resample_predictions=resample_predictions)
    inside = (t["consistency_low"] <= t["x"]) & (t["x"] <= t["consistency_high"])
    assert inside.mean() > 0.9  # a calibrated model's curve: the diagonal lies in its consistency band
    assert (t["consistency_low"] <= t["consistency_high"]).all()
    assert ((t["confidence_low"] <= t["cep"] + 1e-12) & (t["cep"] <= t["confidence_high"] + 1e-12)).mean() > 0.8
    assert (t["confidence_low"] <= t["confidence_high"]).all()


def test_band_flags_a_miscalibrated_model_and_is_reproducible():
    rng = np.random.default_rng(10)
    p = rng.uniform(0.05, 0.95, 4000)
    y = (rng.uniform(size=4000) < p ** 2).astype(float)  # over-predicts
    t = corp_table(y, p, n_resamples=100, random_state=3)
    outside = t["cep"] < t["consistency_low"]
    assert outside.mean() > 0.5
    t2 = corp_table(y, p, n_resamples=100, random_state=3)
    pd.testing.assert_frame_equal(t, t2)


def test_weighted_bands_with_fixed_predictions():
    y, p, w = _data(2000, seed=11, weights=True)
    t = corp_table(y, p, sample_weight=w, bands=("consistency",), n_resamples=50, random_state=0,
                   resample_predictions=False)
    assert t.attrs["weighted"] and (t["consistency_low"] <= t["consistency_high"]).all()


# ----------------------------------------------------------------------------
# several models


def _good_overconfident_blurred(n=3000):
    """A calibrated model, an overconfident one and a blurred monotone map of the first, on the same rows."""
    rng = np.random.default_rng(12)
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p).astype(float)
    return {"good": (y, p), "overconfident": (y, np.clip(1.5 * p - 0.25, 0, 1)),
            "blurred": (y, 0.5 + 0.3 * (p - 0.5))}


def test_decomposition_table_values_intervals_and_readings():
    models = _good_overconfident_blurred()
    t = decomposition_table(models, n_resamples=100, random_state=0)
    assert t.attrs["paired"] and t.attrs["reference"] == "good"
    for _, r in t.iterrows():
        d = corp_decomposition(*models[r["model"]])
        assert r["miscalibration"] == pytest.approx(d.mcb) and r["discrimination"] == pytest.approx(d.dsc)
        assert r["score_low"] <= r["score_high"]
    assert "loses mainly on calibration" in t.loc[1, "reading"]
    assert t.loc[0, "reading"] == "good is the reference."
    # the blurred model is a monotone map of the good one: same discrimination, only calibration differs
    assert t.loc[2, "discrimination"] == pytest.approx(t.loc[0, "discrimination"], abs=1e-12)
    assert "loses mainly on calibration" in t.loc[2, "reading"]
    assert "discriminates equally (the same ranking of the cases)" in t.loc[2, "reading"]
    t2 = decomposition_table(models, n_resamples=100, random_state=0, reference="overconfident")
    assert "gains mainly on calibration" in t2.loc[0, "reading"]


def test_decomposition_readings_judge_the_differences_together():
    """The readings' "clear" reads every MCB and DSC difference to the reference together: Holm's adjustment
    (against statsmodels) of p-values that are exactly the levels at which the percentile intervals reach 0;
    equal models are rarely read "clear" anywhere, where the 90% whiskers alone would say it 1 time in 10 per
    difference."""
    from statsmodels.stats.multitest import multipletests

    from calibviz.metrics.resampling import percentile_p_value

    models = _good_overconfident_blurred()
    t = decomposition_table(models, n_resamples=100, random_state=0)
    raw = t.loc[1:, ["d_mcb_p", "d_dsc_p"]].to_numpy().ravel()
    finite = np.isfinite(raw)
    np.testing.assert_allclose(t.loc[1:, ["d_mcb_p_adjusted", "d_dsc_p_adjusted"]].to_numpy().ravel()[finite],
                               multipletests(raw[finite], method="holm")[1])
    assert t.attrs["n_tests"] == finite.sum() and t.attrs["alpha"] == 0.05
    assert "worse calibrated (MCB +" in t.loc[1, "reading"] and ", clear)" in t.loc[1, "reading"]
    # the p-value is the level at which the percentile interval of the difference reaches 0
    for a in (0.01, 0.05, 0.2):
        dist = np.linspace(-0.3, 1.7, 41)
        q = np.quantile(dist, [a / 2, 1 - a / 2])
        assert (percentile_p_value(dist) <= a) == bool(q[0] > 0 or q[1] < 0)
    # equal models: four exchangeable calibrated models, 3 x 2 differences read together
    clear = whisker = 0
    for rep in range(15):
        rng = np.random.default_rng([rep, 31])
        u = rng.uniform(size=(4, 1500))
        yy = (rng.uniform(size=1500) < u.mean(axis=0)).astype(float)
        tt = decomposition_table({k: (yy, u[j] / 4 + 3 / 8) for j, k in enumerate("abcd")}, n_resamples=60,
                                 random_state=rep)
        clear += tt["reading"].str.contains(", clear").any()
        whisker += tt["reading"].str.contains(", not clear among").any()
    assert clear <= 2 and whisker >= 5, (clear, whisker)  # read one by one, 9 of these 15 tables said "clear"
    with pytest.raises(cv.InputError, match="alpha"):
        decomposition_table(models, alpha=1.5)


def test_a_score_difference_within_the_noise_is_no_better_and_has_no_main_share():
    """Two calibrated models of equal skill: a walk-through read "b scores 0.0026 better than a: it gains mainly
    on discrimination; ... discriminates about equally (within resampling noise)" beside the Compare page's "do
    not differ beyond the bootstrap noise". A score difference whose paired percentile interval at 1 - alpha
    holds 0 (d_score_p > alpha) reads "about the same" and names no share; a clear one keeps both."""
    from calibviz.metrics.resampling import percentile_p_value

    rng = np.random.default_rng(11)
    truth = rng.uniform(0.05, 0.95, 1500)
    y = (rng.uniform(size=1500) < truth).astype(float)
    a = np.clip(truth + rng.normal(0, 0.08, 1500), 0.01, 0.99)
    b = np.clip(truth + rng.normal(0, 0.08, 1500), 0.01, 0.99)
    t = decomposition_table({"a": (y, a), "b": (y, b)}, n_resamples=200, random_state=0)
    assert 0.05 < t.loc[1, "d_score_p"] < 1 and np.isnan(t.loc[0, "d_score_p"])
    reading = t.loc[1, "reading"]
    assert reading.startswith("b and a score about the same (Brier score ") and "within resampling noise)" in reading
    assert "mainly" not in reading and "better" not in reading.split(";")[0], reading
    # the p-value is the paired percentile one of the score's difference, as MCB's and DSC's
    clear = decomposition_table({"good": (y, truth), "blurred": (y, np.clip(0.5 + 1.8 * (truth - 0.5), 0.01,
                                                                            0.99))}, n_resamples=200, random_state=0)
    assert clear.loc[1, "d_score_p"] <= 0.05
    assert "blurred scores " in clear.loc[1, "reading"] and "loses mainly on calibration" in clear.loc[1, "reading"]
    assert percentile_p_value(np.array([0.1, 0.2, 0.3])) < 0.05
    # several models: the score differences are read together (Holm, statsmodels)
    from statsmodels.stats.multitest import multipletests

    c = np.clip(truth + rng.normal(0, 0.08, 1500), 0.01, 0.99)
    three = decomposition_table({"a": (y, a), "b": (y, b), "c": (y, c)}, n_resamples=200, random_state=0)
    np.testing.assert_allclose(three["d_score_p_adjusted"][1:], multipletests(three["d_score_p"][1:], method="holm")[1])


def test_a_calibrated_sharp_model_is_not_read_worse_calibrated():
    """Two perfectly calibrated models, a sharp and a coarse one: the sharp one's MCB is biased upward (PAV follows
    the noise of many distinct scores), beyond the resampling noise of the difference; "worse calibrated" also
    needs the worse model to fail its calibrated-model reference, as Compare's calibration errors do."""
    rng = np.random.default_rng([0, 5])
    u1, u2 = rng.uniform(size=2000), rng.uniform(size=2000)
    y = (rng.uniform(size=2000) < (u1 + u2) / 2).astype(float)
    models = {"coarse": (y, np.where(u1 > 0.5, 0.625, 0.375)), "sharp": (y, u1 / 2 + 0.25)}
    bare = decomposition_table(models, n_resamples=100, random_state=0, n_reference=0)
    assert "it is worse calibrated (MCB +" in bare.loc[1, "reading"] and ", clear)" in bare.loc[1, "reading"]
    t = decomposition_table(models, n_resamples=100, random_state=0)
    assert t.loc[1, "mcb_held_back"] == "sharp" and t.loc[1, "mcb_reference_p"] > 0.05
    assert "it is not clearly worse calibrated (MCB +" in t.loc[1, "reading"]
    assert "its MCB is within what a perfectly calibrated model with its predictions shows" in t.loc[1, "reading"]
    assert "discriminates more (DSC +" in t.loc[1, "reading"]  # the discrimination it truly gains stays
    # the same p-value as the consistency test of its MCB
    mcb = lambda yy, pp, sample_weight=None: corp_decomposition(yy, pp, sample_weight=sample_weight).mcb  # noqa
    r = consistency_test(y, models["sharp"][1], metric=mcb, n_resamples=200, random_state=0)
    assert 0.05 < r.p_value and abs(r.p_value - t.loc[1, "mcb_reference_p"]) < 0.2  # other seeds, same law
    # turned round: the coarse model is "not clearly better calibrated", and says whose MCB held it back
    t = decomposition_table(models, n_resamples=100, random_state=0, reference="sharp")
    assert "it is not clearly better calibrated (MCB -" in t.loc[0, "reading"]
    assert "sharp's MCB is within what a perfectly calibrated model with those predictions shows" in t.loc[0, "reading"]
    # a clearly miscalibrated model keeps its verdict
    t = decomposition_table(_good_overconfident_blurred(), n_resamples=100, random_state=0)
    assert t.loc[1, "mcb_held_back"] == "" and ", clear)" in t.loc[1, "reading"]


def test_decomposition_table_unpaired_and_errors():
    y1, p1, _ = _data(500, seed=1)
    y2, p2, _ = _data(700, seed=2)
    t = decomposition_table({"a": (y1, p1), "b": (y2, p2)}, n_resamples=20, random_state=0)
    assert not t.attrs["paired"] and "d_mcb_low" not in t.columns
    with pytest.raises(cv.InputError, match="reference"):
        decomposition_table({"a": (y1, p1)}, reference="z")
    with pytest.raises(cv.InputError, match="non-empty dict"):
        decomposition_table({})


# ----------------------------------------------------------------------------
# Murphy diagram


def test_murphy_table_direct_and_brier_integral():
    y, p, w = _data(2000, seed=13, ties=True, weights=True)
    theta = np.linspace(0, 1, 20001)
    t = murphy_table(y, p, thresholds=theta, sample_weight=w)
    # direct per-row computation on a few thresholds
    for th in (0.0, 0.25, 0.3, 0.77, 1.0):
        direct = np.sum(w * (th * ((y == 0) & (p > th)) + (1 - th) * ((y == 1) & (p <= th)))) / w.sum()
        assert murphy_table(y, p, thresholds=[th], sample_weight=w)["score"].iloc[0] == pytest.approx(direct)
    # Brier score = 2 * integral of the elementary scores
    integral = 2 * np.sum(np.diff(theta) * (t["score"].to_numpy()[1:] + t["score"].to_numpy()[:-1]) / 2)
    assert integral == pytest.approx(brier_score(y, p, sample_weight=w), abs=2e-4)


def test_mcb_consistency_reference_with_a_callable():
    rng = np.random.default_rng(14)
    p = rng.uniform(0.05, 0.95, 1500)
    y = (rng.uniform(size=1500) < p).astype(float)

    def mcb(y_true, y_prob, sample_weight=None):
        return corp_decomposition(y_true, y_prob, sample_weight=sample_weight).mcb

    r = consistency_test(y, p, metric=mcb, n_resamples=100, random_state=0)
    assert r.p_value > 0.01 and r.null_low <= r.null_high


@pytest.mark.parametrize("score", ["brier", "log"])
def test_miscalibration_statistic_equals_the_decomposition_and_the_plain_callable(score):
    y, p, w = _data(3000, seed=15, ties=True, weights=True)
    w[:20] = 0
    m = MiscalibrationStatistic(score)
    for yy in (y, 1 - y, y[::-1].copy()):
        assert m(yy, p) == pytest.approx(corp_decomposition(yy, p, score=score).mcb, abs=1e-15)
        assert m(yy, p, w) == pytest.approx(corp_decomposition(yy, p, score=score, sample_weight=w).mcb, abs=1e-15)
    assert m(y[:100], p[:100]) == pytest.approx(corp_decomposition(y[:100], p[:100], score=score).mcb, abs=1e-15)

    def plain(y_true, y_prob, sample_weight=None):
        return corp_decomposition(y_true, y_prob, score=score, sample_weight=sample_weight).mcb

    a = consistency_test(y, p, metric=plain, n_resamples=30, random_state=2, sample_weight=w)
    b = consistency_test(y, p, metric=MiscalibrationStatistic(score), n_resamples=30, random_state=2, sample_weight=w)
    np.testing.assert_allclose(a.distribution, b.distribution, atol=1e-15)
    with pytest.raises(cv.InputError):
        m(np.full(3000, 2), p)


# ----------------------------------------------------------------------------
# properties (hypothesis)

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@st.composite
def _binary_rows(draw):
    n = draw(st.integers(2, 60))
    levels = draw(st.integers(1, 12))  # few levels: many ties
    p = np.array(draw(st.lists(st.integers(0, levels), min_size=n, max_size=n)), float) / levels
    y = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), float)
    # no subnormal weights: a weight of 2e-313 carries a few bits, and sums of pair weights built on it differ from
    # their mirror image by 1e-11 (a falsifying example of test_auc_properties)
    w = np.array(draw(st.lists(st.floats(0.0, 5.0, allow_subnormal=False), min_size=n, max_size=n)))
    if w.sum() <= 0:
        w[0] = 1.0
    return y, p, w


@pytest.mark.property
@settings(max_examples=150, deadline=None)
@given(_binary_rows(), st.sampled_from(["brier", "log"]))
def test_decomposition_properties(rows, score):
    y, p, w = rows
    d = corp_decomposition(y, p, score=score, sample_weight=w)
    assert d.mcb >= -1e-12 and d.dsc >= -1e-12 and d.dsc <= d.unc + 1e-12
    assert d.mcb - d.dsc + d.unc == pytest.approx(d.score, abs=1e-12)
    perm = np.random.default_rng(0).permutation(len(y))
    e = corp_decomposition(y[perm], p[perm], score=score, sample_weight=w[perm])
    np.testing.assert_allclose(list(d), list(e), atol=1e-12)
    # the curve is non-decreasing, within [0, 1], and its blocks cover every row of positive weight
    t = corp_table(y, p, sample_weight=w, bands=None)
    assert (np.diff(t["cep"]) >= -1e-15).all() and t["cep"].between(0, 1).all()
    assert t.groupby("block")["block_n"].first().sum() == int((w > 0).sum())


@pytest.mark.property
@settings(max_examples=150, deadline=None)
@given(_binary_rows())
def test_auc_properties(rows):
    from calibviz.metrics import auc_delong, roc_auc

    y, p, w = rows
    keep = w > 0
    if len(set(y[keep])) < 2:
        return
    a = roc_auc(y, p, sample_weight=w)
    assert 0 <= a <= 1
    assert roc_auc(y, 1 - p, sample_weight=w) == pytest.approx(1 - a, abs=1e-12)
    assert roc_auc(1 - y, p, sample_weight=w) == pytest.approx(1 - a, abs=1e-12)
    r = auc_delong(y, p, sample_weight=w)
    assert np.isnan(r.se) or (r.se >= 0 and r.low <= a <= r.high)


def test_decomposition_reading_edge_cases():
    """A level below what 200 redraws can give raises the gate's redraws (a miscalibrated model keeps "clear" at
    alpha = 0.001); a difference not beyond the noise alone reads "within resampling noise", not a multiplicity
    reason; one resample gives no p-value and no verdict; a DSC difference that is 0 by construction (a monotone
    map) is no test and does not dilute the MCB's."""
    models = _good_overconfident_blurred(2000)
    t = decomposition_table(models, n_resamples=200, random_state=0, alpha=0.001)
    assert t.loc[1, "mcb_held_back"] == "" and ", clear)" in t.loc[1, "reading"]
    t = decomposition_table(models, n_resamples=1, random_state=0)
    assert "among the 0 differences" not in " ".join(t["reading"]) and ", clear" not in " ".join(t["reading"])
    y, p = models["good"]
    t = decomposition_table({"good": (y, p), "mapped": (y, p ** 1.25)}, n_resamples=60, random_state=0)
    assert np.isnan(t.loc[1, "d_dsc_p"]) and t.attrs["n_tests"] == 1
    assert t.loc[1, "d_mcb_p_adjusted"] == t.loc[1, "d_mcb_p"]
    rng = np.random.default_rng(6)
    p = rng.uniform(size=800)
    y = (rng.uniform(size=800) < p).astype(float)
    q = np.clip(p + rng.normal(0, 0.08, 800), 0, 1)
    for r in decomposition_table({"a": (y, p), "b": (y, q)}, n_resamples=100, random_state=0).itertuples():
        for col in ("mcb", "dsc"):
            p_raw = getattr(r, f"d_{col}_p")
            if np.isfinite(p_raw) and p_raw > 0.05:
                assert f"{col.upper()} " in r.reading and "not clear among" not in r.reading


def test_a_comparison_of_models_scored_against_different_outcomes_says_so():
    """A multiclass comparison reads the confidence views, whose outcome is each model's own correctness: "nb
    scores 0.0609 worse ... (Brier score 0.1401 vs 0.0791); it is better calibrated and discriminates more" read
    as the multiclass Brier score and as a contradiction (an audit). The score is named as the confidence's, and
    a difference of uncertainty (UNC) is said."""
    rng = np.random.default_rng(8)
    p_a, p_b = rng.uniform(0.5, 1.0, 2000), rng.uniform(0.3, 1.0, 2000)
    y_a, y_b = (rng.random(2000) < p_a).astype(int), (rng.random(2000) < p_b).astype(int)
    t = decomposition_table({"a": (y_a, p_a), "b": (y_b, p_b)}, n_resamples=0, of="the confidence")
    reading = t.set_index("model").loc["b", "reading"]
    assert "(Brier score of the confidence " in reading, reading
    assert "The outcomes' uncertainty differs too (UNC" in reading and "scored against different outcomes" in reading
    same = decomposition_table({"a": (y_a, p_a), "b": (y_a, np.clip(p_a + 0.05, 0, 1))}, n_resamples=0)
    assert "uncertainty differs" not in same.set_index("model").loc["b", "reading"]


def test_each_log_gets_its_own_band_redraws_and_the_same_log_the_same_ones():
    """With one fixed seed every log met the same uniforms, so the CORP band's false alarms were those of one fixed
    set of redraws (9.7% of calibrated logs at 5%, benchmarks/bench_seeds.py): an int seed now seeds the band's
    redraws with a digest of the predictions (calibviz.seeding.data_seed). The same predictions give the same band
    whatever the labels; other predictions other redraws; a Generator is used as it is."""
    rng = np.random.default_rng(3)
    p = np.round(rng.beta(2, 5, 2000), 2)
    y1, y2 = (rng.random(2000) < p).astype(int), (rng.random(2000) < p).astype(int)

    def band(y, q, state):
        t = corp_table(y, q, bands=("consistency",), coverage="simultaneous", n_resamples=40, random_state=state)
        return t.set_index("x")[["consistency_low", "consistency_high"]]

    a, b = band(y1, p, 0), band(y2, p, 0)
    common = a.index.intersection(b.index)
    assert a.loc[common].equals(b.loc[common])  # the band depends on the predictions only
    assert a.equals(band(y1, p, 0))  # reproducible
    q = p.copy()
    assert band(y1, p[::-1], 0).equals(band(y1[::-1], p[::-1], 0)) and a.equals(band(y1[::-1], p[::-1], 0))
    q[np.argmax(p != p[-1])] = p[-1]  # another log (one row moved to another score): other redraws
    c = band(y1, q, 0)
    assert (c - a).abs().to_numpy().max() > 1e-3
    g = band(y1, p, np.random.default_rng(0))  # a Generator: its own stream, as it is
    assert g.equals(band(y1, p, np.random.default_rng(0))) and not g.equals(a)
