"""calibviz.sensitivity: values equal the metrics, intervals equal the shared bootstrap."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from calibviz import metrics
from calibviz.binning import EqualMass, Uniform
from calibviz.errors import InputError
from calibviz.sensitivity import binning_sensitivity


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(11)
    p = rng.uniform(size=1500)
    y = (rng.uniform(size=1500) < p ** 1.3).astype(int)
    return y, p


def test_values_are_the_metrics(data):
    y, p = data
    t = binning_sensitivity(y, p, metrics=("ece", "mce", "tce"), n_bins=(4, 9), n_resamples=0)
    assert len(t) == 3 * 2 * 2 and t["low"].isna().all()
    for r in t.itertuples():
        scheme = Uniform(r.n_bins) if r.scheme == "uniform" else EqualMass(r.n_bins)
        ref = {"ece": metrics.ece, "mce": metrics.mce, "tce": metrics.tce}[r.metric](y, p, binning=scheme)
        assert r.value == pytest.approx(ref, rel=1e-12)


def test_intervals_are_the_shared_seed_bootstrap(data):
    y, p = data
    t = binning_sensitivity(y, p, n_bins=(10,), schemes=("equal_mass",), n_resamples=40, random_state=3)
    res = metrics.bootstrap(metrics.ece, y, p, n_resamples=40, random_state=3, binning=EqualMass(10))
    assert (t["low"].iloc[0], t["high"].iloc[0]) == pytest.approx((res.low, res.high))
    assert t.attrs["n_resamples"] == 40


def test_ace_is_ece_on_equal_mass_bins(data):
    y, p = data
    t = binning_sensitivity(y, p, schemes=("quantile",), n_bins=(15,), n_resamples=0)
    assert t["value"].iloc[0] == pytest.approx(metrics.ace(y, p, n_bins=15))
    assert t["scheme_label"].iloc[0] == "equal mass"


@pytest.mark.parametrize("kwargs, fragment", [
    (dict(metrics=("nope",)), "unknown metric"),
    (dict(n_bins=()), "n_bins"),
    (dict(n_bins=(0,)), "n_bins"),
    (dict(n_resamples=-1), "n_resamples"),
    (dict(schemes=("pava_foo",)), "unknown binning"),
])
def test_bad_input(data, kwargs, fragment):
    y, p = data
    with pytest.raises(InputError, match=fragment):
        binning_sensitivity(y, p, **{"n_resamples": 0, **kwargs})

def test_intervals_of_an_earlier_table_are_reused_across_alpha():
    """The dashboard changes alpha without redoing the bootstrap: a table made at another alpha gives the same
    intervals, and the reference follows the new alpha (as a table computed from scratch at it)."""
    rng = np.random.default_rng(4)
    p = rng.uniform(size=600)
    y = (rng.uniform(size=600) < p).astype(int)
    grid = dict(metrics=("ece", "mce"), n_bins=(5, 10))
    boot = binning_sensitivity(y, p, n_resamples=30, **grid)
    fresh = binning_sensitivity(y, p, n_resamples=30, n_reference=40, alpha=0.1, **grid)
    reused = binning_sensitivity(y, p, n_reference=40, alpha=0.1, intervals=boot, **grid)
    pd.testing.assert_frame_equal(reused, fresh)
    assert reused.attrs["n_resamples"] == 30
    with pytest.raises(InputError, match="same metrics"):
        binning_sensitivity(y, p, metrics=("ece", "tce"), n_bins=(5,), alpha=0.1, intervals=boot)
    with pytest.raises(InputError, match="same metrics"):  # TCE's test runs at alpha: its intervals do not carry
        tce = binning_sensitivity(y, p, metrics=("tce",), n_bins=(5,), n_resamples=5)
        binning_sensitivity(y, p, metrics=("tce",), n_bins=(5,), alpha=0.1, intervals=tce)


def test_each_point_says_its_smallest_bin():
    """Equal-width MCE jumped to 0.92 at 25 bins and back at 30 (a browser review read a glitch): a bin of one row,
    whose gap MCE then is. Each point carries the rows of its smallest non-empty bin, in the table and the hover."""
    from calibviz import figures

    rng = np.random.default_rng(3)
    p = rng.beta(2, 8, 3000)
    y = (rng.uniform(size=3000) < p).astype(int)
    t = binning_sensitivity(y, p, metrics=("mce",), n_bins=(10, 30), n_resamples=0)
    for b in (10, 30):
        counts, _ = np.histogram(p, bins=np.linspace(0, 1, b + 1))  # independent equal-width counts
        row = t[(t.scheme == "uniform") & (t.n_bins == b)].iloc[0]
        assert row["min_rows"] == counts[counts > 0].min()
    fig = figures.binning_sensitivity(table=t)
    hovers = [h for tr in fig.data if tr.hovertext for h in tr.hovertext]
    assert any(h.endswith(f"smallest bin: {int(t.loc[1, 'min_rows'])} row" + ("s" if t.loc[1, "min_rows"] != 1 else ""))
               for h in hovers)


def test_a_reference_band_spike_does_not_flatten_the_lines():
    """Equal-width MCE at 30 bins has a bin of one row, where a calibrated model's range reaches ~1: drawn to its
    top the band flattened every line of the panel (a walk-through); the axis now follows the values."""
    import pandas as pd

    from calibviz.figures import binning_sensitivity

    t = pd.DataFrame({"metric": "mce", "label": "MCE", "scheme": "uniform", "scheme_label": "equal width",
                      "n_bins": [10, 20, 30], "value": [0.05, 0.07, 0.09], "low": [0.03, 0.05, 0.06],
                      "high": [0.08, 0.1, 0.12], "reference_low": [0.02, 0.03, 0.05],
                      "reference_high": [0.06, 0.09, 0.97]})
    fig = binning_sensitivity(table=t)
    top = fig.layout.yaxis.range[1]
    assert 0.12 < top < 0.2
    t["reference_high"] = [0.06, 0.09, 0.13]  # no spike: Plotly's own range
    assert binning_sensitivity(table=t).layout.yaxis.range is None
