"""Categorical columns in the variable ranking (VECE over levels), per-level diagrams, the largest disagreement."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import calibviz as cv
from calibviz import figures
from calibviz import metrics as M
from calibviz.binning import Uniform
from calibviz.variables import (MIN_LEVEL_ROWS, OTHER_LEVELS, disagreement_ranges, largest_disagreement, level_codes,
                                level_tables, numeric_values, range_sentence, readable_levels, readable_ranking,
                                subgroup_table, variable_curves, variable_ranking)


def _segments(n=3000, seed=0):
    """Three segments: calibrated, over-confident, under-confident; plus a few tiny levels."""
    rng = np.random.default_rng(seed)
    seg = rng.choice(["retail", "sme", "corporate"], n, p=[0.5, 0.3, 0.2]).astype(object)
    seg[:12] = ["tiny_a"] * 5 + ["tiny_b"] * 7
    p = rng.uniform(0.05, 0.95, n)
    true = np.where(seg == "sme", 0.5 + (p - 0.5) * 0.4, np.where(seg == "corporate", np.clip(p * 1.3, 0, 1), p))
    y = (rng.uniform(size=n) < true).astype(int)
    return pd.Series(seg, name="segment"), y, p


def _hand_vece(levels, y, p, w=None):
    """Kelly & Smyth's Eq. 7 with one bin per level, written out with pandas group sums."""
    pred = (p > 0.5).astype(int)
    conf = np.where(pred == 1, p, 1 - p)
    df = pd.DataFrame({"g": levels, "err": (pred != y).astype(float), "perr": 1 - conf,
                       "w": np.ones(len(y)) if w is None else w})
    df["werr"], df["wperr"] = df["w"] * df["err"], df["w"] * df["perr"]
    g = df.groupby("g")[["w", "werr", "wperr"]].sum()
    return float(((g["werr"] / g["w"] - g["wperr"] / g["w"]).abs() * g["w"]).sum() / g["w"].sum()), g


def test_categorical_vece_equals_a_hand_computation():
    seg, y, p = _segments()
    pooled = seg.where(~seg.isin(["tiny_a", "tiny_b"]), OTHER_LEVELS)  # both under 30 rows: one group
    expected, g = _hand_vece(pooled.to_numpy(), y, p)
    r = variable_ranking(pd.DataFrame({"segment": seg}), y, p, n_resamples=0).iloc[0]
    assert r["type"] == "categorical" and r["n_bins"] == 4
    assert r["vece"] == pytest.approx(expected, rel=1e-12)
    # its largest gap: the worst level of at least MIN_LEVEL_ROWS rows
    gaps = ((g["werr"] - g["wperr"]) / g["w"]).abs()
    big = gaps[g["w"] >= MIN_LEVEL_ROWS]
    assert r["level_at_max_vce"] == big.idxmax() and r["max_vce"] == pytest.approx(big.max())
    # every level kept (min_level_rows=1, no cap): the same as numeric VECE over level codes (independent path)
    r1 = variable_ranking(pd.DataFrame({"segment": seg}), y, p, n_resamples=0, min_level_rows=1,
                          max_levels=None).iloc[0]
    assert r1["vece"] == pytest.approx(_hand_vece(seg.to_numpy(), y, p)[0], rel=1e-12)
    assert r1["vece"] == pytest.approx(M.vece(pd.factorize(seg, sort=True)[0], y, p, n_bins=100), rel=1e-12)


def test_categorical_vece_with_weights_and_multiclass():
    seg, y, p = _segments(n=1500, seed=3)
    w = np.random.default_rng(4).uniform(0.2, 3, len(y))
    w[:40] = 0  # weight 0 = absent row
    keep = w > 0
    r = variable_ranking(pd.DataFrame({"s": seg}), y, p, n_resamples=0, sample_weight=w, min_level_rows=1,
                         max_levels=None).iloc[0]
    assert r["vece"] == pytest.approx(_hand_vece(seg.to_numpy()[keep], y[keep], p[keep], w[keep])[0], rel=1e-12)
    assert r["n"] == keep.sum()
    # multiclass: top-label error vs 1 - confidence, per level
    rng = np.random.default_rng(1)
    P = rng.dirichlet([1, 1, 1], 900)
    yk = np.array([rng.choice(3, p=row) for row in P])
    lev = np.array(["u", "v", "w"])[rng.integers(0, 3, 900)]
    err = (P.argmax(1) != yk).astype(float)
    perr = 1 - P.max(1)
    df = pd.DataFrame({"g": lev, "d": err - perr})
    expected = float(df.groupby("g")["d"].sum().abs().sum() / 900)
    got = variable_ranking(pd.DataFrame({"g": lev}), yk, P, n_resamples=0).iloc[0]["vece"]
    assert got == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("max_rows", [10_000, 100])  # bootstrap path, fixed-bin (levels) path
def test_categorical_interval_brackets_the_estimate(max_rows):
    seg, y, p = _segments()
    r = variable_ranking(pd.DataFrame({"segment": seg}), y, p, n_resamples=200, bootstrap_max_rows=max_rows).iloc[0]
    assert r["vece_low"] < r["vece"] < r["vece_high"] < 1
    assert r["ci_method"] == ("bootstrap" if max_rows > len(y) else "poisson-normal, fixed bins")


def test_ranking_mixes_numeric_and_categorical_on_one_scale():
    seg, y, p = _segments()
    rng = np.random.default_rng(9)
    feats = pd.DataFrame({"noise": rng.normal(size=len(y)), "segment": seg, "flag": rng.integers(0, 2, len(y)) > 0})
    r = variable_ranking(feats, y, p, n_resamples=50)
    assert set(r["feature"]) == {"noise", "segment", "flag"}
    assert r.iloc[0]["feature"] == "segment"  # the miscalibrated subgroups, above noise
    assert dict(zip(r["feature"], r["type"])) == {"noise": "numeric", "segment": "categorical",
                                                  "flag": "categorical"}
    assert (r["vece"].diff().dropna() <= 0).all()
    calls = []
    variable_ranking(feats, y, p, n_resamples=0, progress=lambda d, t: calls.append((d, t)))
    assert calls == [(1, 3), (2, 3), (3, 3)]
    assert len(variable_ranking(feats, y, p, n_resamples=0, categorical=False)) == 1
    # an id column: every level tiny, pooled into one group -> nothing to compare, not ranked
    ids = pd.DataFrame({"id": [f"r{i}" for i in range(len(y))]})
    assert variable_ranking(ids, y, p, n_resamples=0).empty


def test_level_codes_pool_small_and_surplus_levels():
    codes, names = level_codes(["a"] * 50 + ["b"] * 40 + ["c"] * 35 + [None] * 31, max_levels=2)
    assert names == ["a", "b", OTHER_LEVELS]
    assert (codes[90:] == 2).all()
    codes, names = level_codes(["a"] * 50 + [None] * 31)
    assert names == ["a", "<missing>"]


def test_level_tables_and_their_figure():
    seg, y, p = _segments()
    tables = level_tables(seg, y, p, binning=Uniform(10))
    assert list(tables)[:3] == ["retail", "sme", "corporate"] and OTHER_LEVELS in tables
    assert sum(t.attrs["share"] for t in tables.values()) == pytest.approx(1.0)
    sel = (seg == "sme").to_numpy()
    t = tables["sme"]
    assert t["n"].sum() == sel.sum() and t.attrs["n"] == sel.sum()
    assert t.attrs["ece"] == pytest.approx(M.ece(y[sel], p[sel], binning=Uniform(10)), rel=1e-10)
    fig = figures.level_reliability(tables=tables, name="segment")
    spec = json.loads(fig.to_json())
    titles = [a["text"].split("<br>")[0] for a in spec["layout"]["annotations"][:4]]
    assert titles == ["retail", "sme", "corporate", OTHER_LEVELS]
    assert "ECE" in spec["layout"]["annotations"][1]["text"]
    # multiclass: the confidence view per level
    rng = np.random.default_rng(2)
    P = rng.dirichlet([2, 1, 1], 400)
    yk = np.array([rng.choice(3, p=row) for row in P])
    lev = np.where(np.arange(400) < 250, "x", "z")
    mt = level_tables(lev, yk, P)
    conf_correct = (P.argmax(1) == yk)[:250].mean()
    assert (mt["x"]["positives"].sum() / mt["x"]["n"].sum()) == pytest.approx(conf_correct)


def test_readable_headers():
    seg, y, p = _segments(n=600)
    t = readable_levels(subgroup_table(seg, y, p, n_resamples=0))
    assert not any("_" in c for c in t.columns)
    assert pd.api.types.is_float_dtype(t["Observed rate"])  # numbers stay numbers
    r = readable_ranking(variable_ranking(pd.DataFrame({"segment": seg, "x": p}), y, p, n_resamples=0))
    assert not any("_" in c for c in r.columns)
    assert r.set_index("Variable").loc["segment", "Largest gap at"] in {"retail", "sme", "corporate"}


def test_largest_disagreement_is_quoted_not_the_first():
    d = cv.load_demo("hospital_readmission")
    x, ok = numeric_values(d.features["age"])
    ranges = disagreement_ranges(variable_curves(x[ok], d.y[ok], d.y_prob[ok], kind="error", scale="percent"))
    assert len(ranges) >= 2
    big = largest_disagreement(ranges)
    assert big["max_difference"] == ranges["max_difference"].max() > ranges["max_difference"].iloc[0]
    text = range_sentence("age", big, strong=lambda t: f"<b>{t}</b>")
    assert f"{big['max_difference']:.1f} percentage points" in text and "<b>over-confident" in text
    assert largest_disagreement(ranges.iloc[:0]) is None


def test_report_headline_quotes_the_largest_range():
    from calibviz.report import build_report

    d = cv.load_demo("hospital_readmission")
    x, ok = numeric_values(d.features["age"])
    ranges = disagreement_ranges(variable_curves(x[ok], d.y[ok], d.y_prob[ok], kind="error", scale="percent"))
    html = build_report(d, n_resamples=0, n_reference=0)
    summary = html.split('class="summary"')[1].split("</ul>")[0]
    assert f"up to {ranges['max_difference'].max():.1f} percentage points apart" in summary
    assert f"up to {ranges['max_difference'].iloc[0]:.1f} percentage points" not in summary
    # the categorical columns are ranked in the report, with readable headers
    assert "<th>Variable</th>" in html and "ward" in html and "vece_low" not in html
