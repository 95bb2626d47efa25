"""CORP diagram and the triptych (MCB-DSC plot, ROC curves, Murphy diagram): plotted values equal the tables."""
from __future__ import annotations

import json

import numpy as np
import pytest

import calibviz as cv
from calibviz import figures
from calibviz.errors import InputError
from calibviz.metrics import corp_table, decomposition_table, murphy_table, roc_curve

from .conftest import scatter_points, trace_by_name

pytestmark = pytest.mark.figures


def _close(a, b, tol=1e-6):
    np.testing.assert_allclose(np.asarray(a, float), np.asarray(b, float), atol=tol, rtol=0)


def test_corp_diagram_draws_the_table(binary_data):
    y, p = binary_data
    fig = figures.corp_diagram(y, p, bands=("consistency", "confidence"), n_resamples=30, random_state=1)
    t = corp_table(y, p, bands=("consistency", "confidence"), n_resamples=30, random_state=1,
                   coverage="simultaneous")  # the figure's default: the band holds for the whole curve
    assert t.attrs["resample_predictions"] == {"consistency": False, "confidence": True}
    curve = trace_by_name(fig, "CORP curve (PAV)")
    _close(curve.x, t["x"]); _close(curve.y, t["cep"])
    assert "PAV block [" in curve.hovertext[0] and "observed" in curve.hovertext[0]
    band = trace_by_name(fig, "Consistency band (90%)")
    assert band.fill == "toself" and band.hoveron == "fills"
    n = len(t)
    _close(band.y[:n], t["consistency_low"]); _close(band.y[n:2 * n], t["consistency_high"][::-1])
    conf = trace_by_name(fig, "Spread (90% pointwise)")
    _close(conf.y[:n], t["confidence_low"])
    hist = [tr for tr in fig.data if tr.type == "bar"]
    assert {tr.name for tr in hist} == {"Predictions: y = 0", "Predictions: y = 1"}
    assert sum(sum(tr.y) for tr in hist) == pytest.approx(len(y))
    text = fig.layout.annotations[0].text
    d = t.attrs["decomposition"]
    assert text.startswith("Brier ") and f"MCB {d['miscalibration']:.4f}" in text and f"UNC {d['uncertainty']:.4f}" in text


def test_corp_diagram_from_tables_and_several_models(binary_data):
    y, p = binary_data
    tables = {"a": corp_table(y, p, bands=None), "b": corp_table(y, p ** 2, bands=None)}
    fig = figures.corp_diagram(table=tables)
    # several models: each decomposition is its curve's legend entry (a box of them inside the plot lay across
    # the curves)
    names = [t.name for t in fig.data if t.mode == "lines" and t.name != "Perfect calibration"]
    assert [n.split("<br>Brier ")[0] for n in names] == ["a", "b"] and all(" = MCB " in n for n in names)
    assert not fig.layout.annotations
    assert not [t for t in fig.data if t.type == "bar"]  # no predictions, no histogram
    fig2 = figures.corp_diagram({"a": (y, p), "b": (y, p ** 2)}, n_resamples=10)
    # several models' histograms: outlines that toggle with their curves
    outlines = [t for t in fig2.data if t.name.startswith("Predictions: ")]
    assert [(t.name, t.type, t.legendgroup) for t in outlines] == [("Predictions: a", "scatter", "a"),
                                                                     ("Predictions: b", "scatter", "b")]
    with pytest.raises(InputError, match="lacks the columns"):
        figures.corp_diagram(table={"a": tables["a"].drop(columns="cep")})


def test_mcb_dsc_plot_points_intervals_isolines(binary_data):
    y, p = binary_data
    models = {"a": (y, p), "b": (y, np.clip(1.3 * p, 0, 1)), "c": (y, 0.5 * p + 0.2)}
    t = decomposition_table(models, n_resamples=40, random_state=0)
    fig = figures.mcb_dsc_plot(table=t)
    pts = [tr for tr in fig.data if tr.mode == "markers"]
    assert [tr.name for tr in pts] == ["a", "b", "c"]
    for tr, (_, r) in zip(pts, t.iterrows()):
        _close(tr.x, [r["miscalibration"]]); _close(tr.y, [r["discrimination"]])
        _close(tr.error_x.array, [max(r["mcb_high"] - r["miscalibration"], 0)])
        assert r["reading"].split()[0] in tr.hovertext[0]
    lines = [tr for tr in fig.data if tr.mode == "lines"]
    assert lines
    unc = t["uncertainty"].iloc[0]
    for tr in lines:  # isolines of equal score: slope 1, DSC = MCB + UNC - S
        (x0, y0), (x1, y1) = scatter_points(tr)
        assert (y1 - y0) == pytest.approx(x1 - x0, abs=1e-6)
    labels = [a.text for a in fig.layout.annotations if a.text and a.text[0].isdigit()]
    assert labels and all(float(s) > 0 for s in labels)
    assert fig.layout.xaxis.title.text.startswith("Miscalibration MCB")
    with pytest.raises(InputError):
        figures.mcb_dsc_plot(models, table=t)


def test_mcb_dsc_plot_shows_a_negligible_difference_as_negligible(binary_data):
    """Two models whose DSC differs by ~1e-5 share a window at least a tenth of DSC high (it was 2.5e-4 for DSC
    0.026: the two markers read far apart), and a model at MCB = 0 sits inside the plot, not on its y axis."""
    y, p = binary_data
    models = {"a": (y, p), "b": (y, np.clip(p + 1e-6 * np.sin(np.arange(p.size)), 0, 1))}
    t = decomposition_table(models, n_resamples=0)
    dsc = t["discrimination"].to_numpy()
    assert abs(dsc[0] - dsc[1]) < 1e-4
    fig = figures.mcb_dsc_plot(table=t)
    lo, hi = fig.layout.yaxis.range
    assert hi - lo >= 0.1 * dsc.max()
    assert fig.layout.xaxis.range[0] < 0 <= min(t["miscalibration"])
    x_max = fig.layout.xaxis.range[1]
    labels = [a for a in fig.layout.annotations if a.text and a.text[0].isdigit()]
    assert all(a.x > 0.12 * x_max for a in labels)  # none on the y axis's ticks


def test_roc_curves_and_murphy_diagram_draw_their_tables(binary_data):
    y, p = binary_data
    fig = figures.roc_curves({"a": (y, p), "b": (y, p ** 2)}, max_points=500)
    curve = trace_by_name(fig, "a: AUC")
    r = roc_curve(y, p, max_points=500)
    _close(curve.x, r["fpr"]); _close(curve.y, r["tpr"])
    a = cv.metrics.auc_delong(y, p)
    assert curve.name == f"a: AUC {a.auc:.3f}<br>[95% CI {a.low:.3f}–{a.high:.3f}]"
    assert "true positive rate" in curve.hovertext[1]
    m = figures.murphy_diagram(y, p, thresholds=np.linspace(0, 1, 11))
    _close(m.data[0].y, murphy_table(y, p, thresholds=np.linspace(0, 1, 11))["score"])
    assert "false alarm" in m.data[0].hovertext[3]


def test_corp_figures_json_serialise_small(binary_data):
    y, p = binary_data
    big_p = np.random.default_rng(0).uniform(size=200_000)
    big_y = (np.random.default_rng(1).uniform(size=200_000) < big_p).astype(int)
    fig = figures.corp_diagram(big_y, big_p, n_resamples=5)
    assert len(json.dumps(json.loads(fig.to_json()))) < 1_000_000
    roc = figures.roc_curves(big_y, big_p)
    assert len(roc.data[1].x) <= 2002


def test_mcb_dsc_plot_passes_the_readings_level_and_redraws():
    """Built from models, the plot's hover readings follow the gate's redraws (0: no gate): two calibrated models,
    a sharp and a coarse one, read "not clearly worse calibrated" with the gate, "worse calibrated ... clear"
    without it."""
    import json

    import numpy as np

    from calibviz import figures

    rng = np.random.default_rng([0, 5])
    u1, u2 = rng.uniform(size=2000), rng.uniform(size=2000)
    y = (rng.uniform(size=2000) < (u1 + u2) / 2).astype(float)
    models = {"coarse": (y, np.where(u1 > 0.5, 0.625, 0.375)), "sharp": (y, u1 / 2 + 0.25)}
    gated = json.dumps(figures.mcb_dsc_plot(models, n_resamples=50).to_plotly_json()["data"])
    bare = json.dumps(figures.mcb_dsc_plot(models, n_resamples=50, n_reference=0).to_plotly_json()["data"])
    gated, bare = gated.replace("<br>", " "), bare.replace("<br>", " ")  # hover lines wrap
    assert "not clearly worse calibrated" in gated
    assert "not clearly" not in bare and "it is worse calibrated (MCB +0.0029, clear)" in bare
