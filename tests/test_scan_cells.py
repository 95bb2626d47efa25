"""Cells of full buckets (calibviz.scan.refine.full_bucket_levels): PAVA and PAVA-BC on views above the exact
limit fit their blocks on 2^-16 buckets split into cells down to 2^-22 where buckets are full. The statistic
itself is checked against an in-memory computation in tests/test_scan.py
(test_tce_pavabc_on_continuous_scores_is_pavabc_of_the_grid); here: the pass, the splicing of exact rows, the
calibrated-model reference and the bootstrap on such views."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

import calibviz as cv
from calibviz.binning import PAVABC
from calibviz.panel import PanelConfig
from calibviz.scan import aggregate, refine

pl = pytest.importorskip("polars")


def _cell_grid(p: np.ndarray) -> np.ndarray:
    """Each score rounded down to its group's lower end, by the rule that calibviz.scan.refine.full_bucket_levels
    documents, written out here on the rows (the independent computation the scans' TCE is checked against): a
    2^-16 bucket of n > T = N 2^-15 rows spanning [lo, hi] with lo < hi is cut into 2^l cells,
    l = clip(ceil(log2(n / (T (hi - lo) 2^16))), 1, 6); the others stay whole."""
    b = np.minimum(np.floor(p * 2 ** 16), 2 ** 16 - 1).astype(np.int64)
    count = np.bincount(b, minlength=2 ** 16)
    lo, hi = np.full(2 ** 16, np.inf), np.full(2 ** 16, -np.inf)
    np.minimum.at(lo, b, p)
    np.maximum.at(hi, b, p)
    t = p.size * 2.0 ** -15
    full = (count > t) & (lo < hi)
    level = np.zeros(2 ** 16)
    level[full] = np.clip(np.ceil(np.log2(count[full] / (t * (hi[full] - lo[full]) * 2 ** 16))), 1, 6)
    scale = 2.0 ** (16 + level[b])  # exact: powers of two
    return np.minimum(np.floor(p * scale), scale - 1) / scale


def _fullest_group(p: np.ndarray) -> int:
    """Rows of the fullest group of several scores that PAVA-BC pushes whole above the exact limit
    (:func:`_cell_grid`)."""
    grid = _cell_grid(p)
    _, group, count = np.unique(grid, return_inverse=True, return_counts=True)
    lo, hi = np.full(count.size, np.inf), np.full(count.size, -np.inf)
    np.minimum.at(lo, group, p)
    np.maximum.at(hi, group, p)
    return int(count[lo < hi].max())


@given(st.lists(st.integers(0, 2 ** 16 - 1), min_size=1, max_size=300, unique=True), st.integers(1, 40))
@settings(max_examples=200, deadline=None)
def test_bucket_ranges_cover_every_bucket_in_few_ranges(ids, max_ranges):
    ranges = aggregate.bucket_ranges_of(ids, max_ranges)
    assert 1 <= len(ranges) <= max_ranges
    firsts, lasts = np.array(ranges).T
    assert (firsts <= lasts).all() and (lasts[:-1] + 1 < firsts[1:]).all()  # sorted, disjoint, not adjacent
    inside = lambda b: ((firsts <= b) & (b <= lasts)).any()  # noqa: E731
    assert all(inside(b) for b in ids)
    assert set(firsts) | set(lasts) <= set(ids)  # each range starts and ends on a bucket asked for
    if len(set(ids)) <= max_ranges:  # no bridging needed: exactly the runs of the ids
        assert sum(b - a + 1 for a, b in ranges) == len(ids)


def _narrow(n, seed, lo=0.30, hi=0.31, shift=0.0):
    rng = np.random.default_rng(seed)
    p = rng.uniform(lo, hi, n)
    return pd.DataFrame({"y": (rng.uniform(size=n) < np.clip(p + shift, 0, 1)).astype(np.int64), "p": p})


@pytest.fixture
def small_limit(monkeypatch):
    monkeypatch.setattr(refine, "EXACT_BLOCK_ROWS", 10_000)


def test_cell_pass_engines_agree_and_sum_the_bucket_rows(tmp_path, small_limit):
    """DuckDB and Polars put every row in the same cell, at each bucket's level (2^-22 at level 6, 2^-18 at
    level 2, ...), and the cells are those of the rows counted here; a score of exactly 1 is in the last cell of
    the last bucket."""
    df = _narrow(60_000, 1)
    df.loc[:99, "p"] = 1.0
    df.loc[100:199, "p"] = 1.0 - 2.0 ** -23  # the last 2^-22 cell, beside p = 1
    path = tmp_path / "cells.parquet"
    df.to_parquet(path)
    level = np.zeros(2 ** 16, np.int8)
    level[[19_660, 19_700, 2 ** 16 - 1]] = 6
    level[19_680:19_690] = 2
    level[19_690] = 1
    level[19_800:19_900:7] = 3  # more runs than a level's ranges: bridged over buckets of other levels
    tables = []
    for engine in ("duckdb", "polars"):
        s = cv.scan(str(path), engine=engine)
        t = aggregate.cell_table(s._frame, s._roles, level).sort_values(["_b", "_c", "_y"]).reset_index(drop=True)
        tables.append(t)
    a, b = tables
    np.testing.assert_array_equal(a[["_b", "_c", "_y", "n"]].to_numpy(), b[["_b", "_c", "_y", "n"]].to_numpy())
    np.testing.assert_allclose(a[["swp", "swpp", "sll", "pmin", "pmax"]], b[["swp", "swpp", "sll", "pmin", "pmax"]],
                               rtol=1e-12)
    p = df.p.to_numpy()
    bucket = np.minimum(np.floor(p * 2 ** 16), 2 ** 16 - 1).astype(np.int64)
    finest = np.minimum(np.floor(p * 2 ** 22), 2 ** 22 - 1).astype(np.int64) - 64 * bucket  # in 2^-22 steps
    got = refine.cell_atoms(refine.fine_atoms(s._fine()), a, level)  # merged back to each bucket's level
    row_level = level[bucket].astype(np.int64)
    shift = 6 - row_level
    cell = row_level * 64 + (finest >> shift << shift)
    want = (pd.DataFrame({"_b": bucket, "_c": cell, "_y": df.y})[level[bucket] > 0]
            .groupby(["_b", "_c", "_y"]).size().reset_index(name="n"))
    celled = got.cell >= 0
    np.testing.assert_array_equal(np.c_[got.bucket, got.cell, got.y, got.n][celled], want.to_numpy())
    assert (a.loc[a["_b"] == 2 ** 16 - 1, "_c"] == 63).all()  # 1 - 2^-23 and 1 share the last cell
    assert not (got.cell[~celled] >= 0).any() and got.n.sum() == len(df)
    # the cells of a bucket hold its sums (the log loss from the moments, as the first pass's, or per row in the
    # tails: label 1 below 1/64 has none here, label 0 from 63/64 has the scores at 1)
    s._ensure_ranges()
    fine = s._fine().set_index(["_b", "_y"]).sort_index()
    per_bucket = a.groupby(["_b", "_y"])[["n", "swp", "swpp", "sll", "pmin", "pmax"]].agg(
        {"n": "sum", "swp": "sum", "swpp": "sum", "sll": "sum", "pmin": "min", "pmax": "max"})
    np.testing.assert_array_equal(per_bucket["n"], fine.loc[per_bucket.index, "n"])
    for c in ("swp", "swpp", "sll", "pmin", "pmax"):
        np.testing.assert_allclose(per_bucket[c], fine.loc[per_bucket.index, c], rtol=1e-9, atol=1e-12, err_msg=c)


def test_exact_rows_of_a_split_bucket_keep_their_cells(small_limit):
    """A bucket split into cells and then refined (its exact rows fetched for a TCE decision, an equal-mass cut)
    still forms the same groups for the blocks: the bins do not depend on which buckets were refined."""
    s = cv.scan(_narrow(120_000, 2))
    s._ensure_ranges()
    before = s._atoms(cells=True)
    level = refine.full_bucket_levels(s._fine_atoms())
    full = np.flatnonzero(level)
    assert full.size > 100 and (level[full] >= 5).any()
    groups = refine._bucket_groups(before)
    after = s._atoms(full[::3], cells=True)  # a third of the full buckets refined to exact scores
    assert after.exact.sum() > 10_000 and not before.exact.any()
    regrouped = refine._bucket_groups(after)
    np.testing.assert_array_equal(groups[1], regrouped[1])  # rows per group
    np.testing.assert_array_equal(groups[3], regrouped[3])  # smallest score per group
    np.testing.assert_array_equal(groups[4], regrouped[4])
    # and the PAVA-BC bins fitted on either are the same
    a = refine.pavabc_bins(PAVABC(), before, False)
    b = refine.pavabc_bins(PAVABC(), after, False)
    np.testing.assert_array_equal(a[2], b[2])
    np.testing.assert_array_equal(a[0], b[0])


def test_other_results_do_not_read_the_cells(small_limit):
    """Only PAVA and PAVA-BC bins fit on the cells: uniform bins and their values are those of the buckets, and
    the cell pass runs once, whatever is asked in which order."""
    df = _narrow(60_000, 3)
    s = cv.scan(df)
    ece = s.metric("ece")[0]
    assert s._cell_table_cache is None  # no PAVA bins asked for: no cell pass
    tce = s.tce()
    cells = s._cell_table_cache
    assert cells is not None and len(cells[1]) > 1_000
    assert s.metric("ece")[0] == ece == pytest.approx(cv.metrics.ece(df.y, df.p), rel=1e-9)
    s.reliability_table(PAVABC())
    s.bin_statistics("pava")
    assert s._cell_table_cache is cells and s.tce() == tce


def test_calibrated_reference_on_cells_keeps_its_size(small_limit):
    """Size of TCE's calibrated-model test on views above the exact limit, whose redraws refit PAVA-BC on the same
    cells and test each group at its mean score: calibrated logs of narrow-range scores (the data whose whole
    buckets moved TCE most) are flagged at alpha = 0.1 about 10% of the time. 16 logs, 39 redraws each (p <= 0.1
    is 4 of 40 ranks: exact size 0.1 if the redraws are exchangeable with the data): 6 or more flags have
    probability 0.0033 under size 0.1 and would say the test is anti-conservative. The full-size simulation is
    benchmarks/bench_scan_size_large.py (--regime narrow)."""
    flags, values = 0, []
    for seed in range(16):
        s = cv.scan(_narrow(40_000, 100 + seed))
        row = s.metrics(["tce"], config=PanelConfig(alpha=0.1), n_reference=39, random_state=seed).iloc[0]
        values.append(row["p_value"])
        flags += row["p_value"] <= 0.1
    assert s._cell_table_cache is not None  # the views did use cells
    assert flags <= 5, values
    assert np.median(values) > 0.2, values  # not piled up near 0


def test_calibrated_reference_on_cells_flags_a_miscalibrated_model(small_limit):
    s = cv.scan(_narrow(40_000, 7, shift=0.02))
    row = s.metrics(["tce"], n_reference=39, random_state=0).iloc[0]
    assert row["p_value"] <= 0.05 and row["value"] > row["null_high"]


def test_tce_interval_on_cells(small_limit):
    """The bootstrap refits PAVA-BC on the resampled cells: a finite interval around the value, the same for the
    same seed whatever was computed before."""
    df = _narrow(40_000, 9, shift=0.01)
    first = cv.scan(df).metrics(["tce"], n_resamples=60, random_state=3).iloc[0]
    s = cv.scan(df)
    s.tce(PAVABC(2_000, 10_000))
    s.reliability_table("uniform")
    again = s.metrics(["tce"], n_resamples=60, random_state=3).iloc[0]
    assert np.isfinite([first["low"], first["high"]]).all() and first["low"] <= first["value"] <= first["high"]
    assert (again["low"], again["high"]) == (first["low"], first["high"])


def _grid_tce(y, p, scheme=PAVABC(), sample_weight=None) -> float:
    """TCE of PAVA-BC fitted on the scores rounded down to their group (a row's bin is its group's block), each
    row tested at its own score: what a scan computes above the exact limit."""
    from calibviz.binning import Custom

    grid = _cell_grid(p)
    sizes = scheme.fit(grid, y, sample_weight=sample_weight).counts
    starts = np.sort(grid)[np.cumsum(sizes)[:-1]]  # each later block's first group
    return cv.metrics.tce(y, p, binning=Custom(np.r_[0.0, starts, 1.0]), sample_weight=sample_weight)


def _three_class_scan(n: int, seed: int):
    """(P, y, scan) of a K = 3 log: Dirichlet(2, 1, 0.7) class probabilities, labels drawn from them."""
    rng = np.random.default_rng(seed)
    P = rng.dirichlet([2.0, 1.0, 0.7], n)
    y = (rng.uniform(size=n)[:, None] > np.cumsum(P, 1)).sum(1)
    s = cv.scan(pd.DataFrame({"label": y, **{f"p_{k}": P[:, k] for k in range(3)}}), label="label",
                probs=[f"p_{k}" for k in range(3)])
    return P, y, s


def test_multiclass_views_fit_on_their_own_cells(monkeypatch):
    """Class and confidence views of K = 3 class columns run the cell pass on their own score expression (the
    rows filtered by their bucket code, not by a raw column): TCE is PAVA-BC of their scores rounded to their
    groups, exactly."""
    monkeypatch.setattr(refine, "EXACT_BLOCK_ROWS", 1_000)
    P, y, s = _three_class_scan(60_000, seed=4)
    P = P / P.sum(1, keepdims=True)  # the views' scores are renormalised rows, as in memory
    for k in range(3):
        view = s.class_view(k)
        assert view.tce() == pytest.approx(_grid_tce((y == k).astype(int), P[:, k]), rel=1e-12)
        assert view._cell_table_cache is not None
    confidence = s.confidence_view()
    assert confidence.tce() == pytest.approx(_grid_tce((P.argmax(1) == y).astype(int), P.max(1)), rel=1e-12)


@pytest.mark.parametrize("weighted", [False, True])
def test_invalid_rows_left_out_stay_out_of_the_cells(monkeypatch, weighted):
    """With drop_invalid, rows of a missing label, a score outside [0, 1] or a bad weight are left out of the
    first pass, and of the cell pass too (they sit inside the full buckets' score range)."""
    monkeypatch.setattr(refine, "EXACT_BLOCK_ROWS", 1_000)
    df = _narrow(40_000, 11)
    df["y"] = df["y"].astype(float)
    df.loc[:49, "y"] = np.nan  # scores in the full buckets, label missing
    df.loc[50:59, "p"] = 1.5
    if weighted:
        df["w"] = np.random.default_rng(1).lognormal(0, 1, len(df))
        df.loc[60:69, "w"] = -1.0
    s = cv.scan(df, weight="w" if weighted else None, drop_invalid=True)
    keep = np.arange(len(df)) >= (70 if weighted else 60)
    y, p = df.y.to_numpy()[keep].astype(int), df.p.to_numpy()[keep]
    w = df.w.to_numpy()[keep] if weighted else None
    assert s.n == keep.sum()
    assert s.tce() == pytest.approx(_grid_tce(y, p, sample_weight=w), rel=1e-12)
    assert int(s._cell_table_cache[1]["n"].sum()) == int(s._fine()["n"].sum())  # every bucket full here
