"""M2B reductions: views, names, rows, ties, top-K, properties."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calibviz import InputError
from calibviz.binning import Uniform
from calibviz.io import Predictions
from calibviz.metrics import ece, top_label_ece
from calibviz.reduce import (
    binary,
    classwise,
    confidence,
    predicted_class,
    top_k_confidence,
    top_k_label,
    top_label,
    views,
)

P = np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6], [0.2, 0.5, 0.3], [0.6, 0.3, 0.1], [0.3, 0.3, 0.4]])
Y = np.array([0, 1, 1, 2, 2])
W = np.array([1.0, 2.0, 0.5, 1.0, 3.0])


def random_probs(seed, n, K):
    rng = np.random.default_rng(seed)
    Q = rng.dirichlet(np.ones(K), n)
    return rng.integers(0, K, n), Q


def test_confidence_view():
    v = confidence(Y, P, W)
    assert v.name == "confidence" and v.kind == "confidence" and v.rows is None
    assert v.p.tolist() == [0.7, 0.6, 0.5, 0.6, 0.4]
    assert v.y.tolist() == [1.0, 0.0, 1.0, 0.0, 1.0]
    assert v.w is not None and v.sample_weight.tolist() == W.tolist()


def test_top_label_views_partition_rows():
    vs = top_label(Y, P, W, classes=["cat", "dog", "emu"])
    assert [v.name for v in vs] == ["predicted = cat", "predicted = dog", "predicted = emu"]
    assert [v.rows.tolist() for v in vs] == [[0, 3], [2], [1, 4]]
    assert [v.label for v in vs] == [0, 1, 2]
    assert vs[2].y.tolist() == [0.0, 1.0] and vs[2].p.tolist() == [0.6, 0.4]
    assert vs[0].w.tolist() == [1.0, 1.0]
    rows = np.sort(np.concatenate([v.rows for v in vs]))
    assert rows.tolist() == list(range(5))


def test_never_predicted_class_has_no_top_label_view():
    vs = top_label([0, 1], [[0.9, 0.05, 0.05], [0.8, 0.1, 0.1]])
    assert [v.name for v in vs] == ["predicted = class 0"]


def test_argmax_ties_go_to_first_class():
    Pt = np.array([[0.4, 0.4, 0.2], [0.2, 0.4, 0.4], [1 / 3, 1 / 3, 1 / 3]])
    assert predicted_class(Pt).tolist() == [0, 1, 0]
    assert [v.label for v in top_label([0, 1, 2], Pt)] == [0, 1]
    cs = [(v.rank, v.label, v.rows.tolist()) for v in top_k_label([0, 1, 2], Pt, k=3)]
    # ranks follow score, then class index: row 0 -> 0, 1, 2; row 1 -> 1, 2, 0; row 2 -> 0, 1, 2
    assert cs == [
        (1, 0, [0, 2]), (1, 1, [1]),
        (2, 1, [0, 2]), (2, 2, [1]),
        (3, 0, [1]), (3, 2, [0, 2]),
    ]


def test_classwise_views():
    vs = classwise(Y, P, classes=["cat", "dog", "emu"])
    assert [v.name for v in vs] == ["cat vs rest", "dog vs rest", "emu vs rest"]
    assert vs[1].p.tolist() == P[:, 1].tolist()
    assert vs[1].y.tolist() == [0.0, 1.0, 1.0, 0.0, 0.0]
    assert all(v.rows is None and v.n == 5 for v in vs)


def test_binary_view():
    v = binary([0, 1, 1], [[0.8, 0.2], [0.4, 0.6], [0.5, 0.5]], classes=["no", "yes"])
    assert v.name == "P(yes)" and v.p.tolist() == [0.2, 0.6, 0.5] and v.y.tolist() == [0.0, 1.0, 1.0]
    v0 = binary([0, 1, 1], [[0.8, 0.2], [0.4, 0.6], [0.5, 0.5]], positive=0)
    assert v0.name == "P(class 0)" and v0.y.tolist() == [1.0, 0.0, 0.0]
    with pytest.raises(InputError, match="exactly 2"):
        binary(Y, P)


def test_top_k_confidence():
    vs = top_k_confidence(Y, P, k=2)
    assert [v.name for v in vs] == ["confidence", "rank 2 confidence"]
    assert vs[1].p.tolist() == [0.2, 0.3, 0.3, 0.3, 0.3]
    # second choices: row0 -> 1, row1 -> 1, row2 -> 2, row3 -> 1, row4 -> 0 (0.3 tie with 1 -> 0)
    assert vs[1].y.tolist() == [0.0, 1.0, 0.0, 0.0, 0.0]
    assert vs[0].p.tolist() == confidence(Y, P).p.tolist()
    with pytest.raises(InputError, match="k must be"):
        top_k_confidence(Y, P, k=4)
    with pytest.raises(InputError, match="integer"):
        top_k_confidence(Y, P, k=1.5)


def test_top_k_label_rank_one_equals_top_label():
    y, Q = random_probs(0, 200, 5)
    a = top_label(y, Q)
    b = [v for v in top_k_label(y, Q, k=3) if v.rank == 1]
    assert [(v.name, v.rows.tolist(), v.p.tolist(), v.y.tolist()) for v in a] == [
        (v.name, v.rows.tolist(), v.p.tolist(), v.y.tolist()) for v in b
    ]
    later = [v for v in top_k_label(y, Q, k=3) if v.rank == 2]
    assert sum(v.n for v in later) == 200 and later[0].name.startswith("rank 2 = ")


def test_views_of_predictions():
    pr = Predictions(y=Y, probs=P, classes=("cat", "dog", "emu"), weights=W)
    assert [v.name for v in views(pr)] == ["confidence"]
    assert [v.name for v in views(pr, "classwise")] == ["cat vs rest", "dog vs rest", "emu vs rest"]
    assert [v.name for v in views(pr, "top_label")] == ["predicted = cat", "predicted = dog", "predicted = emu"]
    assert len(views(pr, "top_k_confidence", k=3)) == 3
    assert views(pr, "top_k_label")[-1].name.startswith("rank 2")
    with pytest.raises(InputError, match="exactly 2"):
        views(pr, "binary")
    with pytest.raises(InputError, match="kind must be"):
        views(pr, "canonical")
    pb = Predictions(y=np.array([0, 1]), probs=np.array([[0.7, 0.3], [0.2, 0.8]]), classes=("no", "yes"))
    assert views(pb, "binary")[0].name == "P(yes)"


def test_views_accept_predictions_rows_within_loader_tolerance():
    # Predictions tolerates row sums off by up to 1e-3; views must not re-check more strictly
    Q = np.array([[0.7, 0.2, 0.1004], [0.1, 0.3, 0.6]])
    pr = Predictions(y=np.array([0, 2]), probs=Q, classes=(0, 1, 2))
    assert views(pr, "top_label")[0].p.tolist() == [0.7]


def test_bad_inputs():
    with pytest.raises(InputError, match="class indices"):
        confidence([0, 5], [[0.5, 0.5], [0.5, 0.5]])
    with pytest.raises(InputError, match="names"):
        top_label(Y, P, classes=["a", "b"])


def test_views_feed_the_binary_metrics():
    y, Q = random_probs(1, 500, 4)
    vs = top_label(y, Q)
    expected = sum(v.n / 500 * ece(v.y, v.p, binning=Uniform(10)) for v in vs)
    assert top_label_ece(y, Q, binning=Uniform(10)) == pytest.approx(expected, abs=1e-12)


@pytest.mark.property
@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 200), st.integers(2, 8))
def test_top_label_reductions_never_change_the_predicted_class(seed, n, K):
    y, Q = random_probs(seed, n, K)
    c = Q.argmax(axis=1)
    for v in top_label(y, Q):
        assert (c[v.rows] == v.label).all()
        assert np.array_equal(v.p, Q[v.rows, v.label])
        assert np.array_equal(v.y, (y[v.rows] == v.label).astype(float))
    conf = confidence(y, Q)
    assert np.array_equal(conf.y, (y == c).astype(float))
    for v in top_k_label(y, Q, k=min(K, 3)):
        assert np.array_equal(v.p, Q[v.rows, v.label])


@pytest.mark.property
@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 100), st.integers(2, 6))
def test_top_k_scores_are_sorted_and_distinct_classes(seed, n, K):
    y, Q = random_probs(seed, n, K)
    vs = top_k_confidence(y, Q, k=K)
    scores = np.stack([v.p for v in vs])
    assert (np.diff(scores, axis=0) <= 0).all()
    assert np.allclose(scores.sum(axis=0), Q.sum(axis=1))
    assert (sum(v.y for v in vs) == 1).all()  # the true class has exactly one rank


def test_classwise_selected_labels_equal_the_full_reduction():
    from calibviz.reduce import classwise

    rng = np.random.default_rng(4)
    P = rng.dirichlet(np.ones(5), 200)
    y = rng.integers(0, 5, 200)
    full = classwise(y, P)
    some = classwise(y, P, labels=[3, 1])
    assert [v.label for v in some] == [3, 1]
    for v in some:
        np.testing.assert_array_equal(v.p, full[v.label].p)
        np.testing.assert_array_equal(v.y, full[v.label].y)
        assert v.name == full[v.label].name
    with pytest.raises(InputError):
        classwise(y, P, labels=[7])
