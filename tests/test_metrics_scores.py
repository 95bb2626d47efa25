"""calibviz.metrics.scores: Brier score and log loss, cross-checked against scikit-learn."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import brier_score_loss
from sklearn.metrics import log_loss as sk_log_loss

from calibviz import InputError
from calibviz.metrics import brier_score, log_loss
from calibviz.metrics.scores import LOG_LOSS_EPS


def _data(n=500, seed=0, extremes=True):
    rng = np.random.default_rng(seed)
    p = rng.random(n)
    y = (rng.random(n) < p).astype(int)
    if extremes:
        p[:4] = [0.0, 1.0, 0.0, 1.0]
        y[:4] = [0, 1, 1, 0]  # two exact hits, two confidently wrong
    w = rng.uniform(0, 3, n)
    return y, p, w


@pytest.mark.parametrize("seed", range(3))
def test_brier_matches_sklearn(seed):
    y, p, w = _data(seed=seed)
    assert brier_score(y, p) == pytest.approx(brier_score_loss(y, p), rel=1e-12)
    assert brier_score(y, p, sample_weight=w) == pytest.approx(brier_score_loss(y, p, sample_weight=w), rel=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_log_loss_matches_sklearn_default_clipping(seed):
    # scikit-learn >= 1.5 clips at the float64 machine epsilon, our default.
    y, p, w = _data(seed=seed)
    assert log_loss(y, p) == pytest.approx(sk_log_loss(y, p, labels=[0, 1]), rel=1e-12)
    assert log_loss(y, p, sample_weight=w) == pytest.approx(
        sk_log_loss(y, p, sample_weight=w, labels=[0, 1]), rel=1e-12
    )


def test_log_loss_without_extremes_matches_sklearn_and_needs_no_clipping():
    y, p, _ = _data(seed=5, extremes=False)
    assert log_loss(y, p) == pytest.approx(sk_log_loss(y, p), rel=1e-12)
    assert log_loss(y, p, eps=1e-15) == pytest.approx(log_loss(y, p), rel=1e-9)


def test_log_loss_clipping_by_hand():
    # A confidently wrong prediction costs -log(eps); a confident hit costs -log(1 - eps).
    assert log_loss([0], [1.0]) == pytest.approx(-np.log(LOG_LOSS_EPS))
    assert log_loss([1], [0.0], eps=1e-15) == pytest.approx(-np.log(1e-15))
    assert log_loss([1, 0], [1.0, 0.0]) == pytest.approx(-np.log1p(-LOG_LOSS_EPS), abs=1e-15)
    expected = -(np.log(0.9) + np.log(0.8) + np.log(0.6)) / 3
    assert log_loss([0, 1, 1], [0.1, 0.8, 0.6]) == pytest.approx(expected, rel=1e-14)


def test_brier_by_hand():
    assert brier_score([0, 1, 1], [0.1, 0.8, 0.6]) == pytest.approx((0.01 + 0.04 + 0.16) / 3)
    assert brier_score([1, 0], [1.0, 0.0]) == 0.0
    assert brier_score([1, 0], [0.0, 1.0]) == 1.0


@pytest.mark.parametrize("fn", [brier_score, log_loss])
@pytest.mark.parametrize(
    "y, p, w, fragment",
    [
        ([0, 1, 2], [0.1, 0.2, 0.3], None, "only 0 and 1"),
        ([0, 1], [0.1, 1.2], None, "must lie in [0, 1]"),
        ([0, 1], [0.1, np.nan], None, "NaN"),
        ([0, 1, 1], [0.1, 0.2], None, "same length"),
        ([0, 1], [0.1, 0.2], [1.0, -1.0], "negative"),
        ([0, 1], [0.1, 0.2], [1.0], "one weight per row"),
        ([], [], None, "at least 1"),
    ],
)
def test_bad_inputs_raise_input_error(fn, y, p, w, fragment):
    with pytest.raises(InputError, match=None) as info:
        fn(y, p, sample_weight=w)
    assert fragment in str(info.value)


@pytest.mark.parametrize("eps", [0.0, -1e-3, 0.5, np.nan])
def test_log_loss_bad_eps(eps):
    with pytest.raises(InputError, match="eps"):
        log_loss([0, 1], [0.2, 0.7], eps=eps)


rows = st.integers(1, 60).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 1), min_size=n, max_size=n),
        st.lists(st.floats(0, 1), min_size=n, max_size=n),
        st.lists(st.integers(1, 4), min_size=n, max_size=n),
        st.randoms(use_true_random=False),
    )
)


@pytest.mark.property
@settings(max_examples=60, deadline=None)
@given(rows)
def test_scores_properties(data):
    y, p, counts, rnd = data
    y, p, counts = np.array(y), np.array(p), np.array(counts)
    perm = np.array(rnd.sample(range(y.size), y.size))
    for fn, upper in [(brier_score, 1.0), (log_loss, -np.log(LOG_LOSS_EPS))]:
        v = fn(y, p)
        assert 0.0 <= v <= upper + 1e-12
        assert fn(y[perm], p[perm]) == pytest.approx(v, rel=1e-12, abs=1e-15)  # order invariance
        assert fn(y, p, sample_weight=np.ones(y.size)) == pytest.approx(v, rel=1e-12, abs=1e-15)
        # integer weights act as repetitions
        rep = np.repeat(np.arange(y.size), counts)
        assert fn(y, p, sample_weight=counts) == pytest.approx(fn(y[rep], p[rep]), rel=1e-10, abs=1e-15)
