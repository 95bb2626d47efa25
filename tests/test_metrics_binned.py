import numpy as np
import pytest

from calibviz import InputError
from calibviz import binning as bn
from calibviz import metrics as M


def _data(n=4000, seed=0, shift=0.0):
    rng = np.random.default_rng(seed)
    p = rng.random(n)
    y = (rng.random(n) < np.clip(p + shift, 0, 1)).astype(int)
    return y, p


def _naive_ece(y, p, B):
    total, worst = 0.0, 0.0
    for b in range(B):
        m = (p >= b / B) & ((p < (b + 1) / B) if b < B - 1 else (p <= 1))
        if m.any():
            g = abs(y[m].mean() - p[m].mean())
            total += m.mean() * g
            worst = max(worst, g)
    return total, worst


def test_ece_mce_naive_loop():
    y, p = _data()
    e, m = _naive_ece(y, p, 15)
    assert M.ece(y, p) == pytest.approx(e, abs=1e-12)
    assert M.mce(y, p) == pytest.approx(m, abs=1e-12)
    assert M.ece(y, p, norm="l2") >= M.ece(y, p) - 1e-12


def test_ece_string_binning():
    y, p = _data()
    assert M.ece(y, p, binning="quantile") == M.ace(y, p)


def test_brier_decomposition_identity():
    y, p = _data(shift=0.05)
    w = np.random.default_rng(2).random(y.size)
    for weights in (None, w):
        d = M.brier_decomposition(y, p, binning=bn.Uniform(10), sample_weight=weights)
        ww = np.ones_like(p) if weights is None else weights
        assert d.brier == pytest.approx(np.average((p - y) ** 2, weights=ww), abs=1e-12)
        rhs = d.reliability - d.resolution + d.uncertainty + d.within_bin_variance - 2 * d.within_bin_covariance
        assert d.brier == pytest.approx(rhs, abs=1e-12)
    # constant predictions within bins: the three-term identity holds
    pc = np.round(p, 1)
    d = M.brier_decomposition(y, pc, binning=bn.Custom(np.linspace(-0.05, 1.05, 12)))
    assert d.brier == pytest.approx(d.reliability - d.resolution + d.uncertainty, abs=1e-12)


def test_debiased_ece():
    y, p = _data(20000, 4)
    plug = M.ece(y, p, binning=bn.EqualMass(15), norm="l2")
    deb = M.debiased_ece(y, p)
    assert deb <= plug
    sq = M.debiased_ece(y, p, squared=True)
    assert deb == pytest.approx(np.sqrt(max(sq, 0)))


def test_tce_properties():
    y, p = _data(3000, 5)
    assert 0 <= M.tce(y, p) <= 100
    assert M.tce(y, p, alpha=0.0) <= M.tce(y, p, alpha=0.05) <= M.tce(y, p, alpha=0.5) <= M.tce(y, p, alpha=1.0)
    assert M.tce(y, p, alpha=1.0) == 100.0
    assert 0 <= M.tce(y, p, test="ttest") <= 100
    with pytest.raises(InputError):
        M.tce(y, p, test="z")


def test_hosmer_lemeshow_against_manual():
    from scipy.stats import chi2

    y, p = _data(2000, 6)
    stat, pv = M.hosmer_lemeshow(y, p)
    o = np.argsort(p)
    H = 0.0
    for g in np.array_split(o, 10):
        O, E, n = y[g].sum(), p[g].sum(), g.size
        H += (O - E) ** 2 / (E * (1 - E / n))
    assert stat == pytest.approx(H)
    assert pv == pytest.approx(chi2.sf(H, 10))  # fixed predictions: G degrees of freedom
    assert M.hosmer_lemeshow(y, p, fitted=True).p_value == pytest.approx(chi2.sf(H, 8))  # in-sample fit: G - 2
    y2, p2 = _data(2000, 6, shift=0.15)
    assert M.hosmer_lemeshow(y2, p2).p_value < 1e-6


def test_edge_cases():
    assert M.ece([1, 1], [1.0, 1.0]) == 0.0
    assert M.ece([0, 1], [0.0, 1.0]) == 0.0
    assert M.tce([0, 0, 1], [0.0, 0.0, 1.0], binning=bn.Uniform(2)) == 0.0
    assert M.mce([0], [0.3]) == pytest.approx(0.3)
    assert M.ece([0, 1, 0, 1], [0.5] * 4, binning=bn.Uniform(1)) == 0.0


def test_binned_metrics_equal_the_individual_functions():
    y, p = _data(50000, seed=4, shift=0.05)
    w = np.random.default_rng(5).random(y.size)
    for sw in (None, w):
        got = M.binned_metrics(
            y, p, metrics=["ece", "rmsce", "mce", "ace", "mce_q", "brier", "reliability", "resolution", "uncertainty"],
            binning=bn.Uniform(12), n_bins=9, sample_weight=sw,
        )
        d = M.brier_decomposition(y, p, binning=bn.Uniform(12), sample_weight=sw)
        assert got == {
            "ece": M.ece(y, p, binning=bn.Uniform(12), sample_weight=sw),
            "rmsce": M.ece(y, p, binning=bn.Uniform(12), norm="l2", sample_weight=sw),
            "mce": M.mce(y, p, binning=bn.Uniform(12), sample_weight=sw),
            "ace": M.ace(y, p, n_bins=9, sample_weight=sw),
            "mce_q": M.ace(y, p, n_bins=9, norm="max", sample_weight=sw),
            "brier": d.brier, "reliability": d.reliability, "resolution": d.resolution, "uncertainty": d.uncertainty,
        }
    assert d.brier == pytest.approx(np.average((p - y) ** 2, weights=w), rel=1e-12)
    assert list(M.binned_metrics(y, p)) == ["ece", "ace", "mce", "brier"]
    with pytest.raises(InputError):
        M.binned_metrics(y, p, metrics=["nope"])


def test_chunked_statistics_match_naive_sums():
    # more rows than one chunk: per-bin sums accumulated chunk by chunk
    from calibviz.summary import bin_statistics

    y, p = _data(200001, seed=6)
    w = np.random.default_rng(7).random(y.size)
    _, s = bin_statistics(y, p, binning=bn.Uniform(7), sample_weight=w)
    b = np.minimum((p * 7).astype(int), 6)
    for name, ref in [("count", np.bincount(b)), ("weight", np.bincount(b, w)), ("sum_pred", np.bincount(b, w * p)),
                      ("sum_true", np.bincount(b, w * y)), ("sum_pred_sq", np.bincount(b, w * p * p)),
                      ("sum_pred_true", np.bincount(b, w * p * y)), ("sum_weight_sq", np.bincount(b, w * w))]:
        np.testing.assert_allclose(getattr(s, name), ref, rtol=1e-12, err_msg=name)


def test_uniform_metrics_on_many_rows_match_naive():
    # above one chunk, ece/mce/brier sum Uniform bins on the fly (no per-row index)
    y, p = _data(150001, seed=8, shift=-0.03)
    p[:7] = [0.0, 1.0, 1 / 15, 2 / 15, 7 / 15, 14 / 15, 0.5]
    e, m = _naive_ece(y, p, 15)
    assert M.ece(y, p) == pytest.approx(e, abs=1e-12)
    assert M.mce(y, p) == pytest.approx(m, abs=1e-12)
    assert M.brier_decomposition(y, p).brier == pytest.approx(np.mean((p - y) ** 2), rel=1e-12)


def test_binned_metrics_one_pass_path_on_many_rows():
    from calibviz.summary import _PANEL_MIN

    y, p = _data(_PANEL_MIN + 1, seed=11, shift=0.02)
    p = np.round(p, 4)  # ties at the equal-mass cuts
    got = M.binned_metrics(y, p, metrics=["ece", "mce", "ace", "mce_q", "brier", "reliability"])
    ref = {
        "ece": M.ece(y, p), "mce": M.mce(y, p), "ace": M.ace(y, p), "mce_q": M.ace(y, p, norm="max"),
        "brier": M.brier_decomposition(y, p).brier, "reliability": M.brier_decomposition(y, p).reliability,
    }
    for k, v in ref.items():
        assert got[k] == pytest.approx(v, rel=1e-9, abs=1e-14), k


def test_tce_many_equals_tce_on_each_sample_across_batches(monkeypatch):
    # one batch, and batches cut inside the list (a flush every ~3 samples): the values of tce itself; a sample
    # tce refuses is NaN, as the bootstrap's per-call path counts it
    import calibviz.metrics.binned as binned
    from calibviz.metrics import tce, tce_many

    rng = np.random.default_rng(11)
    p = rng.beta(2, 5, 4000)
    samples = [((rng.random(4000) < p).astype(int), p, None if r % 2 else rng.lognormal(size=4000))
               for r in range(9)]
    samples.insert(4, ([1, 0], [0.5, np.nan], None))
    want = [tce(y, q, sample_weight=w, alpha=0.01) if np.all(np.isfinite(q)) else np.nan for y, q, w in samples]
    np.testing.assert_array_equal(tce_many(samples, alpha=0.01), want)
    monkeypatch.setattr(binned, "_TCE_BATCH_ROWS", 10_000)
    np.testing.assert_array_equal(tce_many(samples, alpha=0.01), want)
    with pytest.raises(InputError, match="test must be"):
        tce_many(samples, test="z")


def test_tce_reference_and_bootstrap_batched_equal_one_call_per_redraw(monkeypatch):
    # consistency_test and bootstrap hand TCE's redraws / resamples to tce_many; without the batched form
    # (one tce call per redraw, the generic path) the same seed gives the same distribution
    import calibviz.metrics.binned as binned
    from calibviz.metrics import bootstrap, consistency_test, tce

    rng = np.random.default_rng(12)
    p = rng.beta(2, 5, 3000)
    y = (rng.random(3000) < p).astype(int)
    w = rng.lognormal(size=3000)
    runs = []
    for batched in (True, False):
        if not batched:
            monkeypatch.delattr(binned.tce, "many")
        runs.append([consistency_test(y, p, metric="tce", n_resamples=40, random_state=3).distribution,
                     consistency_test(y, p, metric="tce", n_resamples=20, random_state=3,
                                      sample_weight=w).distribution,
                     bootstrap(tce, y, p, n_resamples=30, random_state=4).distribution])
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)
