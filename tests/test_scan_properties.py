"""Property tests of scans (hypothesis): tables and metrics from bucket sums equal the in-memory ones on any
scores, ties and clusters of distinct scores inside one fine bucket included, whether or not the first pass
summed each bucket's score range (the binned panel's pass leaves them out, tables refine what they read)."""
from __future__ import annotations

from unittest import mock

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import calibviz as cv
from calibviz.binning import PAVABC, EqualMass, Uniform
from calibviz.scan import refine
from tests.test_scan_cells import _grid_tce

pytestmark = pytest.mark.property

FINE = 2.0 ** -16


@st.composite
def logs(draw, max_size=300):
    """(y, p): scores on a coarse grid (ties), continuous, or clustered a few ulps to 1e-6 apart inside single
    fine buckets; 0 and 1 exactly now and then."""
    n = draw(st.integers(12, max_size))
    kind = draw(st.sampled_from(["grid", "continuous", "clusters"]))
    seed = draw(st.integers(0, 2 ** 31 - 1))
    rng = np.random.default_rng(seed)
    if kind == "grid":
        grid = draw(st.sampled_from([4, 10, 1000]))
        p = rng.integers(0, grid + 1, n) / grid
    elif kind == "continuous":
        p = rng.beta(draw(st.sampled_from([0.5, 2.0])), 2.0, n)
    else:  # a few buckets, each holding several distinct scores
        base = rng.integers(0, 1 << 16, draw(st.integers(1, 5))) * FINE
        p = base[rng.integers(0, base.size, n)] + rng.integers(0, 5, n) * draw(st.sampled_from([1e-6, 1e-12]))
        p = np.minimum(p, 1.0)
    if draw(st.booleans()):
        p[: max(1, n // 20)] = draw(st.sampled_from([0.0, 1.0]))
    y = (rng.uniform(size=n) < p).astype(np.int64)
    y[:2] = [0, 1]  # both classes
    return y, p


def _tables_agree(got: pd.DataFrame, want: pd.DataFrame) -> None:
    np.testing.assert_array_equal(got["n"], want["n"])
    np.testing.assert_array_equal(got["positives"], want["positives"])
    np.testing.assert_array_equal(got[["lower", "upper"]], want[["lower", "upper"]])  # edges exactly
    np.testing.assert_allclose(got["mean_pred"], want["mean_pred"], rtol=1e-12, atol=1e-15)


@settings(max_examples=40, deadline=None)
@given(logs(), st.sampled_from([EqualMass(3), EqualMass(10), Uniform(7)]), st.booleans())
def test_scan_tables_and_metrics_equal_in_memory(data, scheme, ranges_first):
    y, p = data
    s = cv.scan(pd.DataFrame({"y": y, "p": p}))
    if ranges_first:
        s.metrics(["tce"])  # a first pass with every bucket's range
    else:
        s.metrics(["brier"])  # the binned panel's pass: bucket bounds only
    assert s._fine()["ranged"].all() == ranges_first
    _tables_agree(s.reliability_table(binning=scheme, test=None),
                  cv.reliability_table(y, p, binning=scheme, test=None))
    assert s.metric("ace")[0] == pytest.approx(cv.metrics.ace(y, p), rel=1e-9, abs=1e-15)
    assert s.metric("ece")[0] == pytest.approx(cv.metrics.ece(y, p), rel=1e-9, abs=1e-15)


@settings(max_examples=25, deadline=None)
@given(logs())
def test_scan_tce_equals_in_memory_where_no_bucket_holds_two_scores(data):
    """PAVA-BC bins of a scan are those of the scores on the 2^-16 grid: equal to memory when no fine bucket holds
    two distinct scores (the documented condition), whichever first pass ran."""
    y, p = data
    buckets = np.minimum(np.floor(p / FINE), 2 ** 16 - 1)
    distinct = pd.DataFrame({"b": buckets, "p": p}).groupby("b")["p"].nunique()
    if (distinct > 1).any():
        return
    s = cv.scan(pd.DataFrame({"y": y, "p": p}))
    s.metrics(["ece"])
    assert s.tce(PAVABC()) == pytest.approx(cv.metrics.tce(y, p, binning=PAVABC()), rel=1e-12, abs=1e-12)
    _tables_agree(s.reliability_table(binning=PAVABC(), test=None),
                  cv.reliability_table(y, p, binning=PAVABC(), test=None))


@settings(max_examples=40, deadline=None)
@given(logs(), st.sampled_from([PAVABC(), PAVABC(4, 40)]), st.booleans())
def test_scan_tce_above_the_exact_limit_is_pavabc_of_the_scores_rounded_to_their_group(data, scheme, weighted):
    """Above the exact limit (here every view) a scan's TCE is, exactly, PAVA-BC fitted on the scores rounded down
    to their group (a 2^-16 bucket or a cell of a full one, tests.test_scan_cells._grid_tce), each row binned by its
    group's block and tested at its own score: on ties, continuous scores and clusters of distinct scores inside
    single buckets (1e-6 apart: several cells; 1e-12: one)."""
    y, p = data
    w = np.random.default_rng(y.size).lognormal(0, 1, y.size) if weighted else None
    df = pd.DataFrame({"y": y, "p": p, **({"w": w} if weighted else {})})
    with mock.patch.object(refine, "EXACT_BLOCK_ROWS", 0):
        got = cv.scan(df, weight="w" if weighted else None).tce(scheme)
    assert got == pytest.approx(_grid_tce(y, p, scheme, sample_weight=w), rel=1e-12, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 9), min_size=0, max_size=60), st.integers(10, 14), st.booleans())
def test_bin_totals_equal_bincount_with_empty_bins(index, n_bins, shuffled):
    """Per-bin sums by runs of sorted atoms (refine.bin_totals) equal a weighted bincount, empty bins first, in
    between and last included; an index out of score order falls back to bincount."""
    from calibviz.scan import refine

    index = np.array(index, np.int64)
    index = np.random.default_rng(index.size).permutation(index) if shuffled else np.sort(index)
    values = [np.arange(index.size, dtype=np.float64) + 0.5, np.ones(index.size)]
    got = refine.bin_totals(index, n_bins, *values)
    for g, v in zip(got, values):
        np.testing.assert_array_equal(g, np.bincount(index, weights=v, minlength=n_bins))


@settings(max_examples=40, deadline=None)
@given(logs(max_size=400), st.integers(0, 2 ** 31 - 1))
def test_refined_atoms_splice_equals_sorting_the_union(data, seed):
    """Atoms with refined buckets spliced into the sorted first pass (refine.atoms_of) equal the union of the kept
    buckets and the exact rows sorted by bucket, exact score and label (the definition of atom order)."""
    from calibviz.scan import refine

    y, p = data
    s = cv.scan(pd.DataFrame({"y": y, "p": p}))
    fine = s._fine()
    buckets = np.unique(fine["_b"])
    pick = np.random.default_rng(seed).choice(buckets, size=min(buckets.size, 3), replace=False)
    s._atoms(pick)
    got = refine.atoms_of(refine.fine_atoms(fine), s._exact_cache)
    exact = s._exact_cache
    union = pd.concat([fine[~fine["_b"].isin(exact["_b"])].assign(_p=np.nan), exact], ignore_index=True)
    union = union.iloc[np.lexsort((union["_y"], union["_p"].fillna(-1.0), union["_b"]))]
    np.testing.assert_array_equal(got.bucket, union["_b"])
    np.testing.assert_array_equal(got.value, union["_p"])
    np.testing.assert_array_equal(got.y, union["_y"])
    np.testing.assert_array_equal(got.n, union["n"])
    np.testing.assert_array_equal(got.swp, union["swp"])
    assert got.exact.sum() == len(exact)
