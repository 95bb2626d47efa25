"""Figure JSON: trace types, plotted values equal the tables', hover text, axis ranges, theme."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

import calibviz as cv
from calibviz import figures, metrics
from calibviz import multiclass as mc
from calibviz import variables
from calibviz.binning import PAVABC, EqualMass, Uniform
from calibviz.distributions import bin_distributions
from calibviz.errors import InputError
from calibviz.figures.theme import FONT, PALETTE
from calibviz.sensitivity import binning_sensitivity
from calibviz.summary import reliability_table

from .conftest import scatter_points, trace_by_name

pytestmark = pytest.mark.figures


def _close(a, b, tol=1e-6):
    np.testing.assert_allclose(np.asarray(a, float), np.asarray(b, float), atol=tol, rtol=0)


# ----------------------------------------------------------------------------- reliability diagram

def test_reliability_points_error_bars_counts_equal_the_table(binary_data):
    y, p = binary_data
    fig = figures.reliability_diagram(y, p, binning=Uniform(10), show_band=True, show_gaps=True)
    t = reliability_table(y, p, binning=Uniform(10))
    pts = trace_by_name(fig, "Observed rate (95% CI)")
    assert pts.type == "scatter"
    _close(pts.x, t["mean_pred"]); _close(pts.y, t["obs_rate"])
    _close(pts.error_y.array, t["ci_high"] - t["obs_rate"]); _close(pts.error_y.arrayminus, t["obs_rate"] - t["ci_low"])
    counts = trace_by_name(fig, "Rows per bin")  # a marker per bin at its mean prediction, on a needle
    assert counts.type == "scatter" and counts.xaxis == "x3"
    _close(counts.y, t["n"]); _close(counts.x, t["mean_pred"])
    needles = np.array(scatter_points(trace_by_name(fig, "Needles: rows per bin"))).reshape(-1, 2, 2)
    _close(needles[:, 0, 0], t["mean_pred"]); _close(needles[:, 1, 0], t["mean_pred"])
    _close(needles[:, 0, 1], 0); _close(needles[:, 1, 1], t["n"])
    gaps = trace_by_name(fig, "Gap")
    _close(gaps.base, t["mean_pred"]); _close(np.asarray(gaps.base) + np.asarray(gaps.y), t["obs_rate"])
    band = trace_by_name(fig, "Calibrated band (95%)")
    assert band.fill == "toself" and band.hoveron == "fills"
    corners = np.array(scatter_points(band)).reshape(-1, 5, 2)
    _close(corners[:, 0, 1], t["band_low"]); _close(corners[:, 2, 1], t["band_high"])
    _close(corners[:, 0, 0], t["lower"]); _close(corners[:, 1, 0], t["upper"])


def test_reliability_hover_says_what_the_issue_asks():
    t = pd.DataFrame({"lower": [0.4], "upper": [0.5], "n": [200], "weight": [200.0], "positives": [48],
                      "mean_pred": [0.452], "obs_rate": [0.24], "ci_low": [0.184], "ci_high": [0.305]})
    fig = figures.reliability_diagram(table=t)
    pts = trace_by_name(fig, "Observed rate")
    assert pts.hovertext[0] == ("bin [0.40, 0.50): observed 48/200 = 0.240<br>mean prediction 0.452, "
                                "95% CI 0.184-0.305")
    assert "%{hovertext}" in pts.hovertemplate
    # table only: no prediction histogram panel
    assert not any(t.orientation == "h" for t in fig.data if t.type == "bar")


def test_reliability_two_kinds_of_interval_are_named_apart(binary_data):
    y, p = binary_data
    fig = figures.reliability_diagram(y, p, show_band=True)
    names = [t.name for t in fig.data]
    assert "Observed rate (95% CI)" in names and "Calibrated band (95%)" in names
    pts = trace_by_name(fig, "Observed rate")
    assert all("95% CI" in h and "(all bins at once, 95%)" in h and "this bin alone:" in h for h in pts.hovertext)


def test_reliability_histogram_split_by_outcome(binary_data):
    y, p = binary_data
    fig = figures.reliability_diagram(y, p)
    neg, pos = trace_by_name(fig, "Predictions: y = 0"), trace_by_name(fig, "Predictions: y = 1")
    assert neg.orientation == pos.orientation == "h"
    assert sum(pos.x) == y.sum() and sum(neg.x) == (1 - y).sum()


def test_reliability_several_models_overlaid():
    models = cv.load_demo_models("loan_recalibration")
    fig = figures.reliability_diagram(models, binning=Uniform(10))
    for i, (name, pr) in enumerate(models.items()):
        t = reliability_table(pr.y_true, pr.y_prob, binning=Uniform(10))
        tr = next(t for t in fig.data if t.name == name)
        _close(tr.y, t["obs_rate"])
        assert tr.marker.color == PALETTE[i]
    tables = {k: reliability_table(v.y_true, v.y_prob) for k, v in models.items()}
    fig2 = figures.reliability_diagram(table=tables)
    assert {t.name.split(" (")[0] for t in fig2.data if t.type == "scatter" and t.mode == "lines+markers"} == set(models)


def test_reliability_weighted_hover_names_the_weighting(binary_data):
    y, p = binary_data
    w = np.where(p > 0.5, 2.0, 1.0)
    fig = figures.reliability_diagram(y, p, sample_weight=w)
    assert "weighted" in trace_by_name(fig, "Observed rate").hovertext[-1]


@pytest.mark.parametrize("kwargs", [
    dict(y_true=[0, 1], y_prob=[0.2, 0.8], table=pd.DataFrame()),
    dict(y_true=[0, 1]),
    dict(y_true={}),
    dict(y_true={"a": "junk"}),
    dict(table=pd.DataFrame({"x": [1]})),
])
def test_reliability_bad_calls_raise_input_error(kwargs):
    with pytest.raises(InputError):
        figures.reliability_diagram(**kwargs)


# ----------------------------------------------------------------------------- TCE diagram

def test_tce_diagram_segments_bars_and_title_equal_the_table(binary_data):
    y, p = binary_data
    fig = figures.tce_diagram(y, p, binning=PAVABC(n_min=150, n_max=600))
    t = reliability_table(y, p, binning=PAVABC(n_min=150, n_max=600), test="binomial")
    seg = trace_by_name(fig, "Empirical probability")
    ys = np.array([v for v in seg.y if v is not None]).reshape(-1, 2)
    _close(ys[:, 0], t["obs_rate"]); _close(ys[:, 1], t["obs_rate"])
    xs = np.array([v for v in seg.x if v is not None]).reshape(-1, 2)
    _close(xs.mean(1), np.arange(1, len(t) + 1))  # bins by ID at 1..B
    grey, red = trace_by_name(fig, "Predictions in bin"), trace_by_name(fig, "Rejected predictions")
    assert grey.type == red.type == "bar"
    assert list(grey.y) == t["n"].tolist() and list(red.y) == t["rejected"].tolist()
    assert all("TCE of the bin" in h for h in red.hovertext)
    tce = metrics.tce(y, p, binning=PAVABC(n_min=150, n_max=600))
    assert f"TCE = {tce:.2f}%" in fig.layout.title.text  # the panel's percent format
    ticks = fig.layout.xaxis3.ticktext
    assert list(ticks) == [str(b) for b in t["bin"]]  # the per-bin table's ids: one name per bin everywhere
    # the axis holds predictions and observed rates alike: its title names both, not one of them
    assert fig.layout.yaxis.title.text == "Probability (predicted and observed)"


def test_tce_violins_stay_within_each_bins_range(binary_data):
    y, p = binary_data
    scheme = PAVABC(n_min=150, n_max=600)
    fig = figures.tce_diagram(y, p, binning=scheme)
    bins = scheme.fit(p, y)
    vio = trace_by_name(fig, "Predictions in the bin")
    assert vio.fill == "toself" and vio.type == "scatter"
    pts = np.array(scatter_points(vio))
    k = np.rint(pts[:, 0]).astype(int) - 1
    for b in range(bins.n_bins):
        inb = p[bins.index == b]
        vy = pts[k == b, 1]
        assert vy.min() >= inb.min() - 1e-6 and vy.max() <= inb.max() + 1e-6
        assert np.abs(pts[k == b, 0] - (b + 1)).max() <= 0.4 + 1e-9
    # the y axis shows every violin whole
    assert fig.layout.yaxis.range[1] >= p.max() - 1e-9


def test_tce_diagram_from_table_and_probability_axis(binary_data):
    y, p = binary_data
    scheme = PAVABC(n_min=150, n_max=600)
    bins = scheme.fit(p, y)
    t = reliability_table(y, p, binning=scheme)
    d = bin_distributions(p, bins.index)
    fig = figures.tce_diagram(table=t, distributions=d, x_axis="probability")
    seg = trace_by_name(fig, "Empirical probability")
    xs = np.array([v for v in seg.x if v is not None]).reshape(-1, 2)
    _close(xs.mean(1), (t["lower"] + t["upper"]) / 2)
    assert tuple(fig.layout.xaxis.range) == (0, 1)
    with pytest.raises(InputError, match="x_axis"):
        figures.tce_diagram(y, p, x_axis="log")
    with pytest.raises(InputError, match="rejected"):
        figures.tce_diagram(table=reliability_table(y, p, test=None))


def test_tce_diagram_json_does_not_grow_with_n():
    rng = np.random.default_rng(0)
    sizes = []
    for n in (2_000, 200_000):
        p = rng.beta(2, 5, n); y = (rng.uniform(size=n) < p).astype(int)
        sizes.append(len(figures.tce_diagram(y, p, binning=PAVABC(n_min=n // 20, n_max=n // 5)).to_json()))
    assert sizes[1] < 2 * sizes[0] and sizes[1] < 200_000


# ----------------------------------------------------------------------------- violin per bin, binning comparison

def test_violin_per_bin_markers_and_violins(binary_data):
    y, p = binary_data
    fig = figures.violin_per_bin(y, p, binning=Uniform(8))
    t = reliability_table(y, p, binning=Uniform(8))
    obs = trace_by_name(fig, "Observed rate at the mean prediction")
    _close(obs.x, t["mean_pred"]); _close(obs.y, t["obs_rate"])
    assert obs.hovertext[0].startswith("bin [0.00, 0.12)")
    vio = np.array(scatter_points(trace_by_name(fig, "Predictions in the bin")))
    assert vio[:, 0].min() >= p.min() - 1e-6 and vio[:, 0].max() <= p.max() + 1e-6
    assert np.abs(vio[:, 1][:, None] - t["obs_rate"].to_numpy()[None, :]).min(1).max() <= 0.035 + 1e-6


def test_binning_comparison_bars_and_steps_equal_the_tables(binary_data):
    y, p = binary_data
    fig = figures.binning_comparison(y, p)
    bars = [t for t in fig.data if t.type == "bar"]
    steps = [t for t in fig.data if t.name == "Empirical probability"]
    assert len(bars) == len(steps) == 3
    for bar, step, scheme in zip(bars, steps, (cv.binning.PAVA(), PAVABC(), EqualMass(10))):
        t = reliability_table(y, p, binning=scheme, test=None)
        _close(bar.y, t["n"]); _close(bar.x, t["lower"]); _close(bar.width, t["upper"] - t["lower"])
        _close(step.y[:-1], t["obs_rate"]); assert step.line.shape == "hv"
    edges = [t for t in fig.data if t.name == "Bin edge"]
    assert len(edges) == 3 and {t.xaxis for t in edges} == {"x", "x3", "x5"}  # under the bars only
    assert all(len(a.text) <= 28 for a in fig.layout.annotations)  # two panels in a 570 px figure


def test_binning_comparison_zooms_on_rare_event_predictions():
    """Predictions below 0.05: the last bin reaches 1 by definition and drew one bar across the figure, the real
    bins squashed against 0 (a browser review). The axis shows the range the bins occupy; ordinary data keep
    [0, 1]."""
    rng = np.random.default_rng(0)
    p = rng.uniform(0, 0.05, 2000)
    y = (rng.random(2000) < p).astype(int)
    lo, hi = figures.binning_comparison(y, p).layout.xaxis.range
    assert lo == 0.0 and 0.045 < hi < 0.06
    p = rng.beta(2, 5, 2000)
    y = (rng.random(2000) < p).astype(int)
    assert tuple(figures.binning_comparison(y, p).layout.xaxis.range) == (0.0, 1.0)


# ----------------------------------------------------------------------------- multiclass

def _outside_example():
    """Gupta & Ramdas digest example: one bin whose plus lies at 0.15 - 0.22 = -0.07."""
    K = 10
    row = np.full(K, 0.85 / (K - 1))
    rows, labels = [], []
    for _ in range(10):   # predicted class 0 (conf 0.15), always right
        r = row.copy(); r[0] = 0.15; rows.append(r); labels.append(0)
    for _ in range(90):   # predicted class 1 (conf 0.15), always wrong
        r = row.copy(); r[1] = 0.15; r[0] = 0.85 / (K - 1); rows.append(r); labels.append(2)
    return np.array(labels), np.array(rows)


def test_top_label_plus_outside_unit_interval_is_visible():
    y, P = _outside_example()
    fig = figures.top_label_diagram(y, P, binning=Uniform(10))
    plus = trace_by_name(fig, "Top-label")
    assert plus.y[0] == pytest.approx(-0.07, abs=1e-9)
    lo, hi = fig.layout.yaxis.range
    assert lo < -0.07 and hi >= 1
    assert "below 0" in plus.hovertext[0] and "not an accuracy" in plus.hovertext[0]
    star = trace_by_name(fig, "Confidence")
    assert star.marker.symbol == "star" and star.y[0] == pytest.approx(0.1)


def test_top_label_plus_above_1_is_not_shown_as_an_accuracy():
    """sklearn digits, logistic regression: a bin's plus lands at 1.13 (its classes are off in opposite
    directions); the figure must not read as an accuracy above 1."""
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split

    X, y = load_digits(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=3)
    P = LogisticRegression(max_iter=2000).fit(X_train, y_train).predict_proba(X_test)
    t = mc.top_label_table(y_test, P, binning=Uniform(15))
    assert t["plus"].max() > 1 and (t["obs_rate"] <= 1).all()   # the plus, never the accuracy, leaves [0, 1]
    spec = json.loads(figures.top_label_diagram(table=t).to_json())
    yaxis = spec["layout"]["yaxis"]
    title = yaxis["title"]["text"]
    assert "Accuracy (★)" in title and "confidence ± deviation (+)" in title
    assert max(yaxis["tickvals"]) == 1  # no tick label above 1 on this axis
    assert yaxis["range"][1] > t["plus"].max()  # the plus is kept, not clipped
    plus = next(tr for tr in spec["data"] if tr.get("name", "").startswith("Top-label"))
    star = next(tr for tr in spec["data"] if tr.get("name", "").startswith("Confidence"))
    assert max(star["y"]) <= 1
    for yv, text in zip(plus["y"], plus["hovertext"]):
        assert "not an accuracy" in text
        assert ("above 1" in text) == (yv > 1)
    notes = [a["text"] for a in spec["layout"].get("annotations", [])]
    assert any("not an accuracy" in n for n in notes)
    # equal-mass bins where every class is right: the plus lies on 1 (round-off), not outside
    em = mc.top_label_table(y_test, P, binning=EqualMass(15))
    assert em["plus"].max() <= 1 and not (em["plus_outside"] & (em["obs_rate"] == 1)).any()


def test_top_label_diagram_equals_table(multiclass_data):
    y, P = multiclass_data
    fig = figures.top_label_diagram(y, P)
    t = mc.top_label_table(y, P)
    _close(trace_by_name(fig, "Top-label").y, t["plus"]); _close(trace_by_name(fig, "Confidence").y, t["obs_rate"])
    _close(trace_by_name(fig, "Share of rows").y, t["frac"])
    assert "TL-ECE" in fig.layout.title.text


def test_small_multiples_one_panel_per_predicted_class_and_paging(multiclass_data):
    y, P = multiclass_data
    tabs = mc.per_class_top_label_tables(y, P, classes=list("abcd"))
    fig = figures.top_label_small_multiples(tables=tabs)
    shares = [f"{100 * t.attrs['share']:.0f}%" for t in tabs.values()]
    assert [a.text.split("<br>")[0] for a in fig.layout.annotations] == [f"{k} ({s})" for k, s in zip(tabs, shares)]
    # four panels in 570 px at 1024 (the grid's title says "per predicted class")
    assert all(len(line) <= 16 for a in fig.layout.annotations for line in a.text.split("<br>"))
    obs = [t for t in fig.data if t.type == "scatter" and t.mode == "lines+markers"]
    for tr, t in zip(obs, tabs.values()):
        _close(tr.y, t["obs_rate"])
    page = figures.top_label_small_multiples(tables=tabs, top_n=2, offset=2)
    assert [a.text.split("<br>")[0].split(" (")[0] for a in page.layout.annotations] == ["c", "d"]
    assert "classes 3-4 of 4" in page.layout.title.text


def test_classwise_grid_ranked_worst_first_and_paged(multiclass_data):
    y, P = multiclass_data
    ranking = mc.class_ranking(y, P, n_resamples=30, classes=list("abcd"))
    tabs = mc.classwise_tables(y, P, classes=list("abcd"))
    fig = figures.classwise_grid(tables=tabs, ranking=ranking, top_n=3)
    heads = [a.text for a in fig.layout.annotations]
    assert [h.split(" ")[1] for h in heads] == ranking["label"].tolist()[:3]
    assert heads[0].startswith("#1 ")
    second = figures.classwise_grid(tables=tabs, ranking=ranking, top_n=3, offset=3)
    assert [a.text.split(" ")[1] for a in second.layout.annotations] == ranking["label"].tolist()[3:]
    with pytest.raises(InputError, match="offset"):
        figures.classwise_grid(tables=tabs, ranking=ranking, offset=10)


def test_classwise_grid_with_100_classes_is_paged():
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.full(100, 0.3), 3000)
    y = rng.integers(0, 100, 3000)
    fig = figures.classwise_grid(y, P, n_resamples=0, top_n=12)
    assert len(fig.layout.annotations) == 12 and "ranks 1-12 of 100" in fig.layout.title.text


def test_bin_zoom_counts_and_points_equal_the_table(multiclass_data):
    y, P = multiclass_data
    z = mc.bin_zoom(y, P, 9)
    fig = figures.bin_zoom(y, P, 9)
    bars = [t for t in fig.data if t.type == "bar"][0]
    _close(bars.x, z["weight"]); assert list(bars.y) == [str(v) for v in z["label"]]
    pts = trace_by_name(fig, "Predicted class")
    by_label = z.set_index(z["label"].astype(str)).loc[list(pts.text)]  # each point is its class's, whatever order
    _close(pts.x, by_label["confidence"]); _close(pts.y, by_label["accuracy"])
    assert sorted(pts.text) == sorted(str(v) for v in z["label"])
    assert list(by_label["share"]) == sorted(z["share"], reverse=True)  # largest first: small bubbles drawn on top
    star = trace_by_name(fig, "Whole bin")
    assert star.x[0] == pytest.approx(z.attrs["confidence"])
    lo, hi = fig.layout.xaxis.range
    assert lo <= min(z["confidence"].min(), z["accuracy"].min()) and hi >= max(z["confidence"].max(), z["accuracy"].max())
    with pytest.raises(InputError, match="bin_id"):
        figures.bin_zoom(y, P)


def test_bin_zoom_labels_of_close_classes_sit_apart():
    """Two classes at almost the same (confidence, accuracy) and a third far away: the close pair's labels take
    different sides (they printed on top of each other, "dog" over "owl")."""
    P = [[0.55, 0.25, 0.2]] * 40 + [[0.2, 0.56, 0.24]] * 30 + [[0.25, 0.2, 0.55]] * 30
    y = [0] * 22 + [1] * 18 + [1] * 17 + [0] * 13 + [2] * 29 + [0]
    fig = figures.bin_zoom(y, P, 5, binning=Uniform(10), classes="abc")
    pts = trace_by_name(fig, "Predicted class")
    pos = dict(zip(pts.text, pts.textposition))
    xy = dict(zip(pts.text, zip(pts.x, pts.y)))
    assert abs(xy["a"][0] - xy["b"][0]) < 0.02 and abs(xy["a"][1] - xy["b"][1]) < 0.02  # the close pair
    assert pos["a"] != pos["b"]


def test_bin_zoom_of_a_small_bin_keeps_probability_axes_and_whole_row_ticks():
    """A bin of 3 rows, one class always right and one always wrong: the axes stay within [0, 1] (accuracies 0 and
    1 sit on the edges, unclipped) and the count axis ticks whole rows."""
    P = [[0.62, 0.2, 0.18]] * 2 + [[0.2, 0.18, 0.62]] + [[0.1, 0.85, 0.05]] * 5
    y = [0, 0, 1, 1, 1, 1, 1, 1]
    fig = figures.bin_zoom(y, P, 6, binning=Uniform(10), classes="abc")
    pts = trace_by_name(fig, "Predicted class")
    assert sorted(pts.y) == [0.0, 1.0] and pts.cliponaxis is False
    lo, hi = fig.layout.xaxis.range
    assert lo == 0.0 and hi == 1.0 and tuple(fig.layout.yaxis.range) == (lo, hi)
    assert fig.layout.xaxis2.dtick == 1


# ----------------------------------------------------------------------------- variable-based

def test_variable_curves_draw_the_curves_and_flag_ranges():
    d = cv.load_demo("hospital_readmission")
    x = d.features["age"]
    curves = variables.variable_curves(x, d.y_true, d.y_prob, kind="rate", grid=60)
    fig = figures.variable_curves(x, curves=curves)
    for name in ("observed rate", "predicted rate"):
        tr = [t for t in fig.data if t.name == name][0]
        _close(tr.y, curves.loc[curves["curve"] == name, "fit"])
        assert "band" in tr.hovertext[0]
    flags = trace_by_name(fig, "Flagged: beyond a calibrated model")
    ranges = variables.disagreement_ranges(curves)
    assert len(ranges) >= 1 and flags.text.count("<br>") == len(ranges) - 1
    hist = [t for t in fig.data if t.type == "bar"][0]
    assert sum(hist.y) == len(x)
    assert fig.layout.xaxis2.title.text == "age"


def test_variable_curves_never_leave_0_100_percent_and_say_where_they_were_truncated():
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 100, 400)
    error = (x >= 50) & (rng.uniform(size=400) < 0.6)  # no errors below 50: the raw LOESS dips below 0
    y, p = np.where(error, 0, 1), np.full(400, 0.7)
    curves = variables.variable_curves(x, y, p, span=0.3, grid=91, scale="percent")
    fig = figures.variable_curves(x, curves=curves, name="age")
    top = [t for t in fig.data if t.type == "scatter" and (t.yaxis or "y") == "y" and t.y is not None]
    ys = np.array([v for t in top for v in t.y if v is not None], float)
    assert ys.min() >= 0 and ys.max() <= 100
    actual = [t for t in fig.data if t.name == "actual error"][0]
    band = trace_by_name(fig, "actual error: 95% band")
    _close([v for v in band.y if v is not None], np.r_[curves.loc[curves["curve"] == "actual error", "upper"],
                                                    curves.loc[curves["curve"] == "actual error", "lower"][::-1]])
    cut = curves.loc[curves["curve"] == "actual error", "truncated"].to_numpy()
    assert cut.any() and not cut.all()
    assert all(("truncated at 0%" in h) == c for h, c in zip(actual.hovertext, cut))
    mark = trace_by_name(fig, "Truncated at 0%")
    assert mark.showlegend is not False and "crosses the bound" in mark.hovertext
    assert {v for v in mark.y if v is not None} == {0.0}
    # nothing truncated, no mark
    d = cv.load_demo("hospital_readmission")
    plain = figures.variable_curves(d.features["age"], d.y_true, d.y_prob, kind="rate", grid=40)
    assert not any((t.name or "").startswith("Truncated") for t in plain.data)


def test_vece_ranking_bars_sorted_with_intervals():
    r = pd.DataFrame({"feature": ["b", "a", "c"], "vece": [0.05, 0.10, 0.01], "vece_low": [0.03, 0.08, 0.0],
                      "vece_high": [0.07, 0.12, 0.02]})
    fig = figures.vece_ranking(ranking=r, top_n=2)
    bar = fig.data[0]
    assert bar.type == "bar" and bar.orientation == "h"
    assert list(bar.y) == ["b", "a"]   # highest at the top (last drawn)
    _close(bar.error_x.array, [0.02, 0.02]); _close(bar.error_x.arrayminus, [0.02, 0.02])
    assert fig.layout.xaxis.tickformat == "~g"  # small VECEs read "100µ ... 600µ" with Plotly's SI default


def test_vece_ranking_keeps_the_rankings_tie_order_and_labels_every_interval():
    """Equal VECEs (the overall gap) in the ranking's order, by their largest local gap, as the page's sentence
    names the first; every bar's hover names its interval's level (a loop variable once overwrote it with a
    categorical row's level: "(nan 0.05 - 0.06)"); large x values written out."""
    r = pd.DataFrame({"feature": ["amount", "grade", "term"], "type": ["numeric", "categorical", "numeric"],
                      "vece": [0.02, 0.02, 0.02], "vece_low": [0.01] * 3, "vece_high": [0.03] * 3,
                      "max_vce": [0.03, 0.09, 0.04], "x_at_max_vce": [37450.2, np.nan, 36.0],
                      "level_at_max_vce": [None, "C", None], "n": [100] * 3})
    bar = figures.vece_ranking(ranking=r).data[0]
    assert list(bar.y) == ["amount", "term", "grade"]  # grade first (top of the chart, last drawn)
    hover = list(bar.hovertext if bar.hovertext is not None else bar.customdata)
    assert all("95% CI" in h for h in hover) and not any("nan" in h for h in hover)
    assert any("at 37,450" in h for h in hover)


def test_binning_sensitivity_lines_and_bands_equal_the_table(binary_data):
    y, p = binary_data
    t = binning_sensitivity(y, p, metrics=("ece", "mce"), n_bins=(5, 10), n_resamples=20)
    fig = figures.binning_sensitivity(table=t)
    lines = [tr for tr in fig.data if tr.type == "scatter" and tr.mode == "lines+markers"]
    assert len(lines) == 4
    for tr in lines:
        assert "bins" in tr.name and tr.hovertext
    first = t[(t["metric"] == "ece") & (t["scheme"] == "uniform")]
    _close(lines[0].y, first["value"])
    band = [tr for tr in fig.data if tr.type == "scatter" and tr.fill == "toself"][0]
    _close(band.y[:2], first["high"])
    assert [a.text for a in fig.layout.annotations] == ["ECE", "MCE"]


# ----------------------------------------------------------------------------- theme, every figure

def _all_figures(y, p, Y, P, x):
    return {
        "reliability": figures.reliability_diagram(y, p, show_band=True),
        "tce": figures.tce_diagram(y, p),
        "violin": figures.violin_per_bin(y, p),
        "comparison": figures.binning_comparison(y, p),
        "top_label": figures.top_label_diagram(Y, P),
        "small_multiples": figures.top_label_small_multiples(Y, P),
        "classwise": figures.classwise_grid(Y, P, n_resamples=10),
        "zoom": figures.bin_zoom(Y, P, 10),
        "variable": figures.variable_curves(x, y, p, grid=40),
        "ranking": figures.vece_ranking(pd.DataFrame({"x": x}), y, p, n_resamples=10),
        "sensitivity": figures.binning_sensitivity(y, p, n_bins=(5, 10), n_resamples=5),
        "corp": figures.corp_diagram(y, p, bands=("consistency", "confidence"), n_resamples=20),
        "mcb_dsc": figures.mcb_dsc_plot({"a": (y, p), "b": (y, p ** 1.5)}, n_resamples=20),
        "roc": figures.roc_curves({"a": (y, p), "b": (y, p ** 1.5)}),
        "murphy": figures.murphy_diagram({"a": (y, p), "b": (y, p ** 1.5)}),
    }


def test_every_figure_uses_the_theme_and_has_hover(binary_data, multiclass_data):
    y, p = binary_data
    Y, P = multiclass_data
    x = np.random.default_rng(0).normal(size=len(y))
    figs = _all_figures(y, p, Y, P, x)
    assert set(figs) >= {"reliability", "tce", "violin", "comparison", "top_label", "small_multiples",
                         "classwise", "zoom", "variable", "ranking", "sensitivity"}
    for name, fig in figs.items():
        assert isinstance(fig, go.Figure), name
        spec = json.loads(fig.to_json())
        tmpl = spec["layout"]["template"]["layout"]
        assert tmpl["plot_bgcolor"] == "white" and tmpl["font"]["size"] >= 14, name
        assert tmpl["xaxis"]["tickfont"]["size"] >= 14, name
        assert spec["layout"]["title"]["text"], name
        assert spec["layout"]["height"] >= 300, name
        assert any(t.get("hovertext") or t.get("text") for t in spec["data"]), name
        assert FONT["title"] >= 16


@pytest.mark.parametrize("demo", cv.demo_datasets())
def test_every_figure_builds_on_every_demo(demo):
    for name, pr in cv.load_demo_models(demo).items():
        if pr.is_binary:
            y, p = pr.y_true, pr.y_prob
            figures.reliability_diagram(y, p, show_band=True, show_gaps=True)
            figures.tce_diagram(y, p); figures.tce_diagram(y, p, x_axis="probability")
            figures.violin_per_bin(y, p); figures.binning_comparison(y, p)
            num = pr.numeric_features
            figures.variable_curves(pr.features[num[0]], y, p, kind="rate")
        else:
            y, P = pr.y, pr.probs
            t = mc.top_label_table(y, P, classes=pr.classes)
            figures.top_label_diagram(table=t)
            figures.top_label_small_multiples(y, P, classes=pr.classes)
            figures.classwise_grid(y, P, classes=pr.classes, n_resamples=20)
            figures.bin_zoom(y, P, int(t["bin"].iloc[-2]), classes=pr.classes)
            figures.variable_curves(P.max(1), y, P)


def test_metric_values_in_figures_use_the_panel_formatter(binary_data, multiclass_data):
    """One number format per unit: TCE as format_value(., "percent"), ECE-type metrics as "probability"."""
    from calibviz.panel import format_value

    y, p = binary_data
    tce = metrics.tce(y, p)
    assert f"TCE = {format_value(tce, 'percent')}," in figures.tce_diagram(y, p).layout.title.text
    sens = figures.binning_sensitivity(y, p, metrics=("ece", "tce"), n_bins=(5, 10), n_resamples=0)
    t = binning_sensitivity(y, p, metrics=("ece", "tce"), n_bins=(5, 10), n_resamples=0)
    texts = [h.split("<br>")[0] for tr in sens.data if tr.hovertext for h in tr.hovertext]  # before the bin's rows
    for r in t.itertuples():
        unit = "percent" if r.metric == "tce" else "probability"
        assert any(h.endswith(f"B = {r.n_bins}: {format_value(r.value, unit)}") and h.startswith(r.label)
                   for h in texts)
    Y, P = multiclass_data
    ranking = mc.class_ranking(Y, P, n_resamples=20, classes=list("abcd"))
    grid = figures.classwise_grid(Y, P, ranking=ranking, classes=list("abcd"))
    first = ranking.iloc[0]
    # the value only: with its interval the panels' titles overlapped at 1024 px (the interval is in the ranking)
    assert grid.layout.annotations[0].text.endswith(f"<br>ECE {format_value(first['value'], 'probability')}")
    assert f"CW-ECE {format_value(ranking.attrs['overall'], 'probability')}" in grid.layout.title.text


def test_bin_zoom_gives_each_class_its_accuracy_interval():
    """A walk-through read 'bird 0.35 against confidence 0.435' from ~100 rows with nothing to judge it by: each
    class's accuracy has Wilson's 95% interval on its rows (statsmodels), drawn as a bar."""
    from statsmodels.stats.proportion import proportion_confint

    from calibviz.multiclass import bin_zoom

    rng = np.random.default_rng(5)
    P = rng.dirichlet([1, 1, 1], 3000)
    y = (rng.random(3000)[:, None] > np.cumsum(P, 1)).sum(1)
    t = bin_zoom(y, P, 7, classes=["a", "b", "c"])
    lo, hi = proportion_confint(np.round(t["accuracy"] * t["n"]), t["n"], alpha=0.05, method="wilson")
    np.testing.assert_allclose(t["accuracy_low"], lo, atol=1e-12)
    np.testing.assert_allclose(t["accuracy_high"], hi, atol=1e-12)
    fig = figures.bin_zoom(table=t)
    dots = next(tr for tr in fig.data if tr.name.startswith("Predicted class"))
    assert dots.error_y.array is not None and "95% interval of its accuracy" in dots.name
    assert fig.layout.yaxis.range[0] <= float(t["accuracy_low"].min())


def test_bin_zoom_leaves_out_labels_that_would_print_over_others():
    """Ten classes at one confidence: their labels printed over each other (a browser review at 1024 px). Each label
    takes a spot clear of the others' boxes, or is left out (its colour and hover name it)."""
    from calibviz.figures.multiclass import _label_layout

    x = np.full(10, 0.99)
    y = np.linspace(0.975, 0.99, 10)
    labels = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]
    positions, clear = _label_layout(x, y, 0.09, labels)
    assert 2 <= sum(clear) < 10 and len(positions) == 10
    far = _label_layout([0.1, 0.5, 0.9], [0.1, 0.5, 0.9], 1.0, ["a", "b", "c"])
    assert far == (["middle right"] * 3, [True] * 3)
    # at the right edge of the axes a label goes left, not past the panel
    edge = _label_layout([0.99], [0.95], 0.09, ["automobile"], low=0.91)
    assert edge == (["middle left"], [True])


def test_multiclass_panel_titles_say_which_share_they_give():
    """Per predicted class: the share of rows predicted as the class; class-wise: the share of labels. Both read
    'b (33%)' and 'b (34%)' side by side, as a contradiction (a walk-through); the figures' titles say which."""
    from calibviz.figures.multiclass import classwise_grid, top_label_small_multiples

    rng = np.random.default_rng(8)
    probs = rng.dirichlet([2, 2, 2], size=3000)
    y = np.array([rng.choice(3, p=row) for row in probs])
    per = top_label_small_multiples(y, probs, classes=["a", "b", "c"])
    grid = classwise_grid(y, probs, classes=["a", "b", "c"], n_resamples=0)
    assert "(% = rows predicted)" in per.layout.title.text
    assert "(% = share of labels)" in grid.layout.title.text
    per_titles = [a.text for a in per.layout.annotations if "<br>" in a.text]
    grid_titles = [a.text for a in grid.layout.annotations if "<br>" in a.text]
    predicted = np.bincount(probs.argmax(1), minlength=3) / 3000
    labels = np.bincount(y, minlength=3) / 3000
    assert len(per_titles) == 3 and len(grid_titles) == 3
    for k, c in enumerate("abc"):
        assert any(t.startswith(f"{c} ({100 * predicted[k]:.0f}%)") for t in per_titles), per_titles
        assert any(f" {c} ({100 * labels[k]:.0f}%)" in t for t in grid_titles), grid_titles
