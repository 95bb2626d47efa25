"""Golden tests: TCE paper GDA experiment (tce_gda.json, vendored in tests/data/gda)."""
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from calibviz import binning as bn
from calibviz import metrics as M
from calibviz.summary import reliability_table

DATA = Path(__file__).parent / "data" / "gda"
GOLD = json.loads((DATA / "tce_gda.json").read_text())
CASES = sorted(GOLD["cases"])


def load(name):
    d = pd.read_csv(DATA / name)
    return d["y"].to_numpy(), d["p"].to_numpy()


@pytest.mark.golden
@pytest.mark.parametrize("name", CASES)
def test_summary_metrics(name):
    y, p = load(name)
    ref = GOLD["cases"][name]
    got = {
        "TCE_P": M.tce(y, p, binning=bn.PAVABC(300, 1200)),
        "TCE_Q": M.tce(y, p, binning=bn.EqualMass(10)),
        "ECE": M.ece(y, p, binning=bn.Uniform(10)),
        "ACE": M.ace(y, p, n_bins=10),
        "MCE": M.mce(y, p, binning=bn.Uniform(10)),
        "MCE_Q": M.ace(y, p, n_bins=10, norm="max"),
    }
    for key, value in got.items():
        assert abs(value - ref[key]) <= 5e-5 + 1e-9, (key, value, ref[key])


@pytest.mark.golden
@pytest.mark.parametrize("name", CASES)
def test_default_pavabc_equals_300_1200(name):
    y, p = load(name)  # N = 6000 -> N//20 = 300, N//5 = 1200
    assert M.tce(y, p) == M.tce(y, p, binning=bn.PAVABC(300, 1200))


@pytest.mark.golden
@pytest.mark.parametrize("rule", ["paper", "reference"])
@pytest.mark.parametrize("name", CASES)
def test_pavabc_per_bin(name, rule):
    y, p = load(name)
    ref = GOLD["pavabc_300_1200_per_bin"][name]
    table = reliability_table(y, p, binning=bn.PAVABC(300, 1200, tail_rule=rule))
    assert table["n"].tolist() == ref["bin_sizes"]
    assert table["positives"].tolist() == ref["bin_positives"]
    assert table["rejected"].tolist() == ref["rejected"]
    edges = np.r_[table["lower"].to_numpy(), table["upper"].to_numpy()[-1]]
    np.testing.assert_allclose(edges, ref["edges"], rtol=0, atol=1e-12)


@pytest.mark.golden
@pytest.mark.parametrize("rule", ["paper", "reference"])
def test_pavabc_toy_trace(rule):
    toy = GOLD["pavabc_toy"]
    bins = bn.PAVABC(toy["n_min"], toy["n_max"], tail_rule=rule).fit(toy["x"], toy["y"])
    assert bins.counts.tolist() == toy["bin_sizes"]
    pos = np.bincount(bins.index, weights=toy["y"], minlength=bins.n_bins)
    assert pos.astype(int).tolist() == toy["bin_positives"]
    np.testing.assert_allclose(bins.edges, toy["edges"], atol=1e-12)
