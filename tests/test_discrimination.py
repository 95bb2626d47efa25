"""ROC, AUC with DeLong's interval and paired test, multiclass AUC, accuracy, sharpness.

Independent references: scikit-learn (roc_auc_score, roc_curve), scipy's Mann-Whitney U, DeLong's
placement-value formula written out with O(n^2) loops over pairs, and the rating data of Hanley &
McNeil (1982), Table 1 (published area 0.893).
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from sklearn import metrics as skm

import calibviz as cv
from calibviz.metrics import accuracy, auc_delong, delong_test, ovr_auc, roc_auc, roc_curve, sharpness


def _data(n, seed=0, ties=False, weights=False):
    rng = np.random.default_rng(seed)
    y = (rng.uniform(size=n) < 0.3).astype(int)
    p = np.clip(0.3 + 0.25 * (y - 0.3) + rng.normal(0, 0.2, n), 0, 1)
    if ties:
        p = np.round(p, 1)
    w = rng.uniform(0.1, 3.0, n) if weights else None
    return y, p, w


def _psi(a, b):
    return 1.0 if a > b else 0.5 if a == b else 0.0


def _delong_plain(y, scores):
    """DeLong et al. (1988), eq. (2)-(5), with explicit loops: AUCs and the covariance matrix S10/m + S01/n."""
    pos = [i for i in range(len(y)) if y[i] == 1]
    neg = [j for j in range(len(y)) if y[j] == 0]
    m, n = len(pos), len(neg)
    k = len(scores)
    V10 = np.array([[sum(_psi(s[i], s[j]) for j in neg) / n for i in pos] for s in scores])  # (k, m)
    V01 = np.array([[sum(_psi(s[i], s[j]) for i in pos) / m for j in neg] for s in scores])  # (k, n)
    auc = V10.mean(axis=1)
    S10 = np.array([[sum((V10[r, i] - auc[r]) * (V10[s, i] - auc[s]) for i in range(m)) / (m - 1)
                     for s in range(k)] for r in range(k)])
    S01 = np.array([[sum((V01[r, j] - auc[r]) * (V01[s, j] - auc[s]) for j in range(n)) / (n - 1)
                     for s in range(k)] for r in range(k)])
    return auc, S10 / m + S01 / n


@pytest.mark.golden
@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("weights", [False, True])
def test_auc_equals_sklearn(ties, weights):
    y, p, w = _data(20000, seed=1, ties=ties, weights=weights)
    assert roc_auc(y, p, sample_weight=w) == pytest.approx(skm.roc_auc_score(y, p, sample_weight=w), abs=1e-12)


def test_auc_equals_mann_whitney():
    y, p, _ = _data(3000, seed=2, ties=True)
    u = stats.mannwhitneyu(p[y == 1], p[y == 0]).statistic
    assert roc_auc(y, p) == pytest.approx(u / ((y == 1).sum() * (y == 0).sum()), abs=1e-12)


@pytest.mark.golden
@pytest.mark.parametrize("ties", [False, True])
def test_delong_variance_equals_plain_formula(ties):
    y, p, _ = _data(150, seed=3, ties=ties)
    auc, cov = _delong_plain(y, [p])
    r = auc_delong(y, p, confidence=0.9)
    assert r.auc == pytest.approx(auc[0], abs=1e-12)
    assert r.se == pytest.approx(np.sqrt(cov[0, 0]), abs=1e-12)
    z = stats.norm.ppf(0.95)
    assert r.low == pytest.approx(max(0, auc[0] - z * r.se)) and r.high == pytest.approx(min(1, auc[0] + z * r.se))
    assert (r.n_pos, r.n_neg) == ((y == 1).sum(), (y == 0).sum())


@pytest.mark.golden
def test_paired_delong_equals_plain_formula():
    y, p, _ = _data(120, seed=4, ties=True)
    rng = np.random.default_rng(0)
    q = np.round(np.clip(p + rng.normal(0, 0.15, p.size), 0, 1), 2)
    auc, cov = _delong_plain(y, [p, q])
    r = delong_test(y, p, q)
    var = cov[0, 0] + cov[1, 1] - 2 * cov[0, 1]
    assert r.auc_a == pytest.approx(auc[0]) and r.auc_b == pytest.approx(auc[1])
    assert r.se == pytest.approx(np.sqrt(var), abs=1e-12)
    assert r.z == pytest.approx((auc[1] - auc[0]) / np.sqrt(var))
    assert r.p_value == pytest.approx(2 * stats.norm.sf(abs(r.z)))


@pytest.mark.golden
def test_hanley_mcneil_1982_rating_data():
    # Table 1 of Hanley & McNeil (1982): 5-point ratings of 58 normal and 51 abnormal CT images
    normal = np.repeat([1, 2, 3, 4, 5], [33, 6, 6, 11, 2])
    abnormal = np.repeat([1, 2, 3, 4, 5], [3, 2, 2, 11, 33])
    y = np.r_[np.zeros(58), np.ones(51)]
    score = np.r_[normal, abnormal] / 5.0
    r = auc_delong(y, score)
    assert round(r.auc, 3) == 0.893  # the published area
    # the published SE 0.032 uses Hanley & McNeil's exponential approximation, not DeLong's estimator
    assert r.se == pytest.approx(0.032, rel=0.1)
    assert r.se == pytest.approx(np.sqrt(_delong_plain(y, [score])[1][0, 0]), abs=1e-12)


def test_unit_weights_equal_no_weights_and_zero_weights_are_absent():
    y, p, _ = _data(500, seed=5, ties=True)
    a, b = auc_delong(y, p), auc_delong(y, p, sample_weight=np.ones_like(p))
    assert a.auc == pytest.approx(b.auc, abs=1e-14) and a.se == pytest.approx(b.se, abs=1e-14)
    w = np.ones_like(p)
    w[:50] = 0
    c, d = auc_delong(y, p, sample_weight=w), auc_delong(y[50:], p[50:])
    assert c.auc == pytest.approx(d.auc, abs=1e-14) and c.se == pytest.approx(d.se, abs=1e-14)
    # scaling the weights changes nothing
    w2 = np.random.default_rng(1).uniform(0.5, 2, p.size)
    e, f = auc_delong(y, p, sample_weight=w2), auc_delong(y, p, sample_weight=7 * w2)
    assert e.se == pytest.approx(f.se, rel=1e-12)


def test_roc_curve_equals_sklearn_and_thinning_stays_on_the_curve():
    y, p, w = _data(5000, seed=6, ties=True, weights=True)
    t = roc_curve(y, p, sample_weight=w)
    fpr, tpr, thr = skm.roc_curve(y, p, sample_weight=w, drop_intermediate=False)
    np.testing.assert_allclose(t["fpr"], fpr, atol=1e-12)
    np.testing.assert_allclose(t["tpr"], tpr, atol=1e-12)
    np.testing.assert_allclose(t["threshold"].to_numpy()[1:], thr[1:])
    assert np.isinf(t["threshold"].iloc[0])
    y, p, _ = _data(50000, seed=7)
    full, thin = roc_curve(y, p), roc_curve(y, p, max_points=300)
    assert len(thin) <= 302 and thin.iloc[0].tolist()[1:] == [0.0, 0.0] and thin.iloc[-1].tolist()[1:] == [1.0, 1.0]
    merged = thin.merge(full, on="threshold", suffixes=("", "_full"))
    assert len(merged) == len(thin)
    np.testing.assert_array_equal(merged["tpr"], merged["tpr_full"])


def test_multiclass_auc_and_accuracy_equal_sklearn():
    rng = np.random.default_rng(8)
    n, K = 3000, 4
    logits = rng.normal(size=(n, K))
    y = np.argmax(logits + rng.normal(0, 1.0, (n, K)), axis=1)
    P = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(ovr_auc(y, P, average=None), skm.roc_auc_score(y, P, multi_class="ovr", average=None),
                               atol=1e-12)
    assert ovr_auc(y, P) == pytest.approx(skm.roc_auc_score(y, P, multi_class="ovr", average="macro"), abs=1e-12)
    w = rng.uniform(0.1, 2, n)
    assert accuracy(y, P, sample_weight=w) == pytest.approx(skm.accuracy_score(y, P.argmax(1), sample_weight=w))
    # a class that never occurs has no AUC; the macro average skips it
    y3 = np.where(y == 3, 2, y)
    per = ovr_auc(y3, P, average=None)
    assert np.isnan(per[3]) and ovr_auc(y3, P) == pytest.approx(np.nanmean(per))


def test_sharpness_and_errors():
    p = np.array([0.1, 0.4, 0.8])
    w = np.array([1.0, 2.0, 0.5])
    m = np.average(p, weights=w)
    assert sharpness(p, sample_weight=w) == pytest.approx(np.average((p - m) ** 2, weights=w))
    with pytest.raises(cv.InputError, match="both outcomes"):
        roc_auc([1, 1, 1], [0.2, 0.3, 0.4])
    with pytest.raises(cv.InputError, match="confidence"):
        auc_delong([0, 1], [0.2, 0.3], confidence=95)
    with pytest.raises(cv.InputError, match="max_points"):
        roc_curve([0, 1], [0.2, 0.3], max_points=1)
    r = auc_delong([0, 1], [0.2, 0.3])  # one row per outcome: no variance
    assert r.auc == 1.0 and np.isnan(r.se)


def test_delong_is_invariant_to_tiny_weight_scales():
    """Weights scaled by 1e-250 (their squares underflow) give the interval of the same weights unscaled."""
    from calibviz.metrics import auc_delong

    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 300)
    p = np.clip(0.5 + 0.2 * (y - 0.5) + rng.normal(0, 0.2, 300), 0, 1)
    w = rng.uniform(0.5, 2.0, 300)
    a, b = auc_delong(y, p, sample_weight=w), auc_delong(y, p, sample_weight=w * 1e-250)
    assert b.low == pytest.approx(a.low, rel=1e-12) and b.high == pytest.approx(a.high, rel=1e-12)
