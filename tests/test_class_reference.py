"""Which classes of a multiclass model are beyond what a calibrated model shows (class_ranking's n_reference).

The first class of a ranking always has the largest ECE, noise or not; the per-class test redraws labels from the
predictions. Checked here: the fast redraws (counts moved in fixed cells) equal the per-class values computed from
scratch on the same drawn labels (the metrics' own binning path), the bisection draw equals the inverse-CDF draw of
the consistency reference, a model whose two classes are mispredicted gets those two flagged, and the share of
calibrated models with a class flagged stays at alpha (modest replication).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from calibviz.binning import EqualMass, Uniform
from calibviz.errors import InputError
from calibviz.metrics.consistency import _categorical_draw
from calibviz.metrics.multiclass import _classwise_values, _per_class_from_cells, _top_label_cells
from calibviz.multiclass import (_categorical_by_bisection, _redrawn_values, class_ranking, class_reference_draws,
                                 class_test_sentence)


def _softmax(rng, n, K, scale):
    L = rng.normal(size=(n, K)) * scale
    P = np.exp(L)
    return P / P.sum(axis=1, keepdims=True)


def _draw(rng, P):
    return (rng.random(P.shape[0])[:, None] > P.cumsum(axis=1)).sum(axis=1).clip(0, P.shape[1] - 1)


def test_bisection_draw_is_the_inverse_cdf_draw():
    rng = np.random.default_rng(0)
    for K in (2, 3, 10, 101):
        P = _softmax(rng, 3000, K, 2.0)
        cum = np.cumsum(P, axis=1)
        np.testing.assert_array_equal(_categorical_draw(P, cum, np.random.default_rng(K)),
                                      _categorical_by_bisection(cum, np.random.default_rng(K).random(3000)))


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("scheme", [Uniform(15), EqualMass(10)])
def test_redrawn_values_equal_a_fresh_computation(weighted, scheme):
    rng = np.random.default_rng(1)
    n, K = 4000, 6
    P = _softmax(rng, n, K, 1.5)
    w = rng.uniform(0.2, 2.0, n) if weighted else None

    def slow(metric):
        def per_class(yy, PP, ww, redrawn=False):
            if metric == "classwise_ece":
                return _classwise_values(yy, PP, ww, scheme, "l1"), None
            return _per_class_from_cells(_top_label_cells(yy, PP, ww, scheme)), None
        return per_class

    cum = np.cumsum(P, axis=1)
    f = _redrawn_values("classwise_ece", P, w, scheme, slow("classwise_ece"))
    ystar = _categorical_by_bisection(cum, np.random.default_rng(7).random(n))
    np.testing.assert_allclose(f(np.random.default_rng(7)), _classwise_values(ystar, P, w, scheme, "l1"), atol=1e-12)
    f = _redrawn_values("top_label_ece", P, w, scheme, slow("top_label_ece"))
    got = f(np.random.default_rng(8))
    c, h = P.argmax(axis=1), P.max(axis=1)
    ystar = np.where(np.random.default_rng(8).random(n) < h, c, (c + 1) % K)
    want = _per_class_from_cells(_top_label_cells(ystar, P, w, scheme))
    np.testing.assert_allclose(got, want, atol=1e-12, equal_nan=True)


def test_classes_are_named_only_where_the_panel_finds_evidence():
    """The Multiclass page showed the panel's verdicts and the class ranking's, each at alpha: 8.0% (6.0-10.5) of
    calibrated 10-class models got an alarm from one or the other (an audit). The ranking now names classes only
    where the panel's class-wise ECE verdict finds evidence."""
    r = pd.DataFrame({"label": ["cat", "dog"], "value": [0.031, 0.012], "p_value": [1 / 881, 0.3],
                      "p_adjusted": [3 / 881, 0.6]})
    r.attrs.update(metric="classwise_ece", n_reference=880, p_value=3 / 881)
    panel = pd.DataFrame({"metric": ["confidence_ece", "classwise_ece"], "label": ["Confidence ECE", "Class-wise ECE"],
                          "verdict": ["evidence of miscalibration", "no evidence of miscalibration"]})
    closed = class_test_sentence(r, 0.05, panel=panel)
    assert closed.startswith("No class is singled out: Class-wise ECE finds no evidence of miscalibration among the "
                             "tests shown together") and "class cat's (0.031), is no evidence on its own" in closed
    untested = class_test_sentence(r, 0.05, panel=panel.assign(verdict=""))  # no verdict there: no gate (a review)
    assert untested == class_test_sentence(r, 0.05)
    opened = class_test_sentence(r, 0.05, panel=panel.assign(verdict="evidence of miscalibration"))
    # a bound rounds up: 3/881 = 0.003405 ("≤ 0.0034" claimed less than the redraws show)
    assert opened == class_test_sentence(r, 0.05) and opened.endswith("cat (0.031, p ≤ 0.0035).")
    assert class_test_sentence(r, 0.05, panel=panel[panel["metric"] != "classwise_ece"]) == opened  # no gate there


def test_p_values_recount_and_sentence():
    rng = np.random.default_rng(2)
    P = _softmax(rng, 3000, 4, 1.5)
    Q = P.copy()
    Q[:, 0], Q[:, 1] = P[:, 0] * 0.7, P[:, 1] + P[:, 0] * 0.3   # Q under-predicts class 0, over-predicts class 1
    y = _draw(rng, P)
    r = class_ranking(y, Q, n_resamples=0, n_reference=400, classes=list("abcd"), random_state=3)
    assert r.attrs["n_reference"] == 400 and r.attrs["p_value"] == r["p_adjusted"].min()
    assert (r["p_adjusted"] >= r["p_value"] - 1e-12).all()
    assert set(r.loc[r["p_adjusted"] <= 0.05, "label"]) >= {"a", "b"}
    s = class_test_sentence(r, 0.05)
    assert s.startswith("One-vs-rest ECE beyond what a calibrated model shows "
                        "(the 4 classes judged together, α = 0.05): ")
    plain = class_ranking(y, Q, n_resamples=0, classes=list("abcd"))
    assert plain["p_value"].isna().all() and class_test_sentence(plain, 0.05) is None
    # the bootstrap intervals of the same seed do not move with the reference (its own random stream)
    a = class_ranking(y, Q, n_resamples=30, random_state=5)
    b = class_ranking(y, Q, n_resamples=30, random_state=5, n_reference=50)
    np.testing.assert_array_equal(a["low"], b["low"])
    with pytest.raises(InputError, match="n_reference"):
        class_ranking(y, Q, n_resamples=0, n_reference=-3)
    assert class_reference_draws(10) == 880 and class_reference_draws(10, 0.05, n_rows=10 ** 6) == 0


@pytest.mark.slow
@pytest.mark.parametrize("metric,K,n", [("classwise_ece", 3, 2000), ("classwise_ece", 10, 3000),
                                        ("top_label_ece", 5, 2000)])
def test_calibrated_models_get_a_class_flagged_at_most_alpha(metric, K, n):
    rng = np.random.default_rng(4)
    reps, hits = 150, 0
    for r in range(reps):
        P = _softmax(rng, n, K, 1.5 if K <= 3 else 2.0)
        t = class_ranking(_draw(rng, P), P, metric=metric, n_resamples=0,
                          n_reference=class_reference_draws(K), random_state=r)
        hits += bool((t["p_adjusted"] <= 0.05).any())
    assert hits / reps <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / reps)


def test_a_class_never_predicted_is_left_out_not_every_class_unflagged():
    # top-label: a class that is never the top label has no value; it once made every class's p_adjusted 1
    rng = np.random.default_rng(9)
    n = 3000
    P = np.column_stack([rng.uniform(0.4, 0.9, n), np.zeros(n), np.zeros(n)])
    P[:, 1] = (1 - P[:, 0]) * 0.8
    P[:, 2] = 1 - P[:, 0] - P[:, 1]   # class 2 is never the largest
    P[: n // 2, [0, 1]] = P[: n // 2, [1, 0]]
    y = np.where(rng.uniform(size=n) < 0.5, P.argmax(axis=1), 2)  # the top class right half of the time
    r = class_ranking(y, P, metric="top_label_ece", n_resamples=0, n_reference=320, random_state=0)
    never = r[r["value"].isna()]
    assert len(never) == 1 and never["p_adjusted"].isna().all()
    assert (r.dropna(subset=["value"])["p_adjusted"] <= 0.05).all()
    assert class_test_sentence(r, 0.05).startswith("Top-label ECE beyond what a calibrated model shows (the 2 classes")


def test_equal_mass_bins_take_the_fixed_cell_redraws():
    rng = np.random.default_rng(10)
    P = _softmax(rng, 3000, 5, 1.5)
    scheme = EqualMass(10)
    f = _redrawn_values("classwise_ece", P, None, scheme, None)   # no per_class: the fast path or a TypeError
    ystar = _categorical_by_bisection(np.cumsum(P, axis=1), np.random.default_rng(4).random(3000))
    np.testing.assert_allclose(f(np.random.default_rng(4)), _classwise_values(ystar, P, None, scheme, "l1"),
                               atol=1e-12)
