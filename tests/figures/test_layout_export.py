"""Figure JSON: layout for a 1366x768 screen (legend rows above the plot, margins, heights), the count panel
with equal-mass bins, outcome words of a view, what a figure records about itself, and the export figures."""
from __future__ import annotations

import io
import json

import numpy as np
import plotly.graph_objects as go
import pytest

import calibviz as cv
from calibviz import figures, reduce
from calibviz.binning import EqualMass, Uniform
from calibviz.figures import export
from calibviz.figures.theme import FONT, legend_rows
from calibviz.summary import reliability_table

from .conftest import scatter_points, trace_by_name

pytestmark = pytest.mark.figures


def _main_figures(y, p, Y, P, x):
    conf = reduce.confidence(Y, P)
    return {
        "reliability": figures.reliability_diagram(y, p, show_band=True, title=""),
        "reliability_overlay": figures.reliability_diagram({"a": (y, p), "b": (y, p ** 1.3)},
                                                           title="Reliability diagrams overlaid"),
        "side_by_side": figures.reliability_diagram(y, p, show_histogram=False, show_band=True, title="model a"),
        "tce": figures.tce_diagram(y, p),
        "top_label": figures.top_label_diagram(Y, P, title=""),
        "confidence": figures.reliability_diagram(conf.y, conf.p, outcome_labels=figures.outcome_labels("confidence")),
        "variable": figures.variable_curves(x, y, p, grid=40, title=""),
        "corp": figures.corp_diagram(y, p, n_resamples=20, title=""),
    }


@pytest.fixture(scope="module")
def main_figures(binary_data, multiclass_data):
    y, p = binary_data
    Y, P = multiclass_data
    return _main_figures(y, p, Y, P, np.random.default_rng(0).normal(size=len(y)))


def test_legends_are_rows_above_the_plot_anchored_to_the_figure(main_figures):
    for name, fig in main_figures.items():
        lg = fig.layout.legend
        assert lg.orientation == "h", name
        # anchored to the figure (container), top: Plotly pushes the plot below the legend's real height
        assert lg.yref == "container" and lg.yanchor == "top", name
        title_px = 40 if fig.layout.title.text else 30  # untitled: below the toolbar's band (MODEBAR_PX)
        assert lg.y == pytest.approx(1 - (title_px + 2) / fig.layout.height), name
        assert lg.font.size == FONT["legend"] and lg.traceorder == "normal", name


def test_margins_and_heights_fit_a_1366x768_screen(main_figures):
    for name, fig in main_figures.items():
        m = fig.layout.margin
        # no side column for a legend: the data get the width
        assert m.r <= 30 and m.l <= 70, name
        assert fig.layout.height <= 560, name   # 768 px minus the browser's header and the page's heading


def test_side_histogram_title_fits_its_narrow_panel(main_figures):
    fig = main_figures["reliability"]
    assert fig.layout.xaxis2.title.text == "Rows"   # was "Predictions by outcome<br>(rows)", clipped at 1366 px
    assert fig.layout.xaxis2.tickformat == "~s"      # 2k, 4k: no rotated tick labels
    assert fig.layout.xaxis.domain[1] - fig.layout.xaxis.domain[0] >= 0.8


def test_title_and_legend_do_not_share_pixels(main_figures):
    """Compare's overlay has a title: the legend starts under the title's 40 px band."""
    fig = main_figures["reliability_overlay"]
    assert fig.layout.title.text == "Reliability diagrams overlaid"
    assert fig.layout.title.yref == "container" and fig.layout.title.y == 1.0
    assert (1 - fig.layout.legend.y) * fig.layout.height >= 40


def test_equal_mass_counts_are_needles_not_a_block(binary_data):
    y, p = binary_data
    fig = figures.reliability_diagram(y, p, binning=EqualMass(12))
    t = reliability_table(y, p, binning=EqualMass(12))
    # no bar spans a bin any more: the counts panel has no bars at all
    assert not [tr for tr in fig.data if tr.type == "bar" and tr.xaxis == "x3"]
    needles = np.array(scatter_points(trace_by_name(fig, "Needles: rows per bin"))).reshape(-1, 2, 2)
    np.testing.assert_allclose(needles[:, 0, 0], t["mean_pred"], atol=1e-6)   # at the point above
    np.testing.assert_allclose(needles[:, 1, 1], t["n"], atol=1e-6)           # as high as the bin's rows
    assert fig.layout.xaxis3.range[1] - fig.layout.xaxis3.range[0] > 1         # the probability axis
    # the needles are 3 px wide, not a bin wide: the narrowest equal-mass bin here is under 1% of the axis
    assert trace_by_name(fig, "Needles: rows per bin").line.width == 3
    # every other bin is shaded: the bin widths stay visible
    shade = np.array(scatter_points(trace_by_name(fig, "Bins (alternately shaded)"))).reshape(-1, 5, 2)
    np.testing.assert_allclose(shade[:, 0, 0], t["lower"].iloc[::2], atol=1e-6)
    np.testing.assert_allclose(shade[:, 1, 0], t["upper"].iloc[::2], atol=1e-6)
    hover = trace_by_name(fig, "Rows per bin").hovertext
    assert all(h.endswith(" rows") for h in hover) and f"{int(t['n'].iloc[0]):,} rows" in hover[0]


def test_confidence_view_legend_says_wrong_and_correct(multiclass_data):
    Y, P = multiclass_data
    conf = reduce.confidence(Y, P)
    fig = figures.reliability_diagram(conf.y, conf.p, outcome_labels=figures.outcome_labels(conf.kind, conf.name))
    names = {tr.name for tr in fig.data}
    assert {"Predictions: wrong", "Predictions: correct"} <= names
    assert not any("y = " in (n or "") for n in names)
    wrong = trace_by_name(fig, "Predictions: wrong")
    assert sum(wrong.x) == (conf.y == 0).sum()       # the 'wrong' bars count the rows whose top class was wrong
    corp = figures.corp_diagram(conf.y, conf.p, n_resamples=10, outcome_labels=("wrong", "correct"))
    assert {"Predictions: wrong", "Predictions: correct"} <= {tr.name for tr in corp.data}
    cw = reduce.classwise(Y, P, None, classes=["a", "b", "c", "d"], labels=[2])[0]
    assert figures.outcome_labels(cw.kind, cw.name) == ("not c", "c")


def test_figures_record_their_title_and_settings(binary_data):
    y, p = binary_data
    fig = figures.reliability_diagram(y, p, binning=EqualMass(12), interval="jeffreys", show_band=True, title="")
    meta = fig.layout.meta["calibviz"]
    assert meta["title"] == "Reliability diagram"
    assert meta["about"] == {"binning": "equal mass, 12 bins", "interval": "Jeffreys 95%", "α": 0.05}
    tce = figures.tce_diagram(y, p, alpha=0.01).layout.meta["calibviz"]
    n = len(y)
    assert tce["about"]["binning"].startswith(f"PAVA-BC (bins of {n // 20}-{n // 5} rows), ")
    assert tce["about"]["α"] == 0.01
    assert tce["about"]["TCE"].endswith("%")
    assert json.loads(fig.to_json())["layout"]["meta"]["calibviz"]["title"] == "Reliability diagram"


def test_slide_figure_carries_title_data_and_settings(binary_data):
    y, p = binary_data
    fig = figures.reliability_diagram(y, p, binning=Uniform(10), title="")
    about = {"data": "Hospital readmission", "model": "raw", **fig.layout.meta["calibviz"]["about"]}
    slide = export.slide_figure(fig, title="Reliability diagram · P(1)", about=about)
    assert (slide.layout.width, slide.layout.height) == (1600, 900)
    assert slide.layout.title.text == "Reliability diagram · P(1)"
    sub = slide.layout.title.subtitle.text
    assert "data: Hospital readmission" in sub and "model: raw" in sub and "uniform, 10 bins" in sub
    # fonts for a slide: 1.2x the screen's; the legend still starts under title and subtitle
    assert slide.layout.xaxis.tickfont.size == pytest.approx(1.2 * FONT["size"])
    assert (1 - slide.layout.legend.y) * 900 >= 60
    # the screen figure is left alone
    assert fig.layout.width is None and not fig.layout.title.text


def test_caption_line_for_the_toolbar_image(binary_data):
    y, p = binary_data
    fig = figures.reliability_diagram(y, p, title="")
    cap = export.with_caption(fig, export.describe("Reliability diagram", {"data": "d", "binning": "uniform"}))
    assert cap.layout.title.text == "Reliability diagram · data: d · binning: uniform"
    assert cap.layout.title.font.size == 12
    assert (1 - cap.layout.legend.y) * cap.layout.height >= 20   # legend under the caption line


def test_png_text_chunks_are_read_by_an_independent_reader():
    PIL = pytest.importorskip("PIL.Image")
    png = export.with_png_text(export._tiny_png(), {"Title": "Reliability · α = 0.05", "Software": "calibviz"})
    im = PIL.open(io.BytesIO(png))
    im.load()   # verifies the chunks' CRCs
    assert im.text == {"Title": "Reliability · α = 0.05", "Software": "calibviz"}
    assert export.png_metadata_text(png)["Title"] == "Reliability · α = 0.05"


def test_html_size_is_announced_within_a_kilobyte(binary_data):
    y, p = binary_data
    fig = figures.reliability_diagram(y, p)
    spec = export.figure_json(fig)
    real = len(export.figure_html(fig).encode("utf-8"))
    assert abs(export.html_size(spec) - real) < 2_000
    assert real > 3_000_000 > 100 * len(spec) / 10   # plotly.js dominates; the JSON is the light version
    assert go.Figure(json.loads(spec)).data[0].name == fig.data[0].name


def test_legend_rows_estimate():
    names = ["Perfect calibration", "Calibrated range (95%)", "Observed rate (95% CI)", "Predictions: y = 0",
             "Predictions: y = 1"]
    fig = go.Figure([go.Scatter(name=n) for n in names])
    assert legend_rows(fig, width=520) == 3     # measured in chromium at 528 px: 3 rows
    assert legend_rows(fig, width=1600) == 1


def test_presentation_figure_is_larger_and_taller():
    from calibviz.ui.presentation import PRESENT_FONT_FACTOR, present_figure

    fig = figures.reliability_diagram(table=reliability_table(np.tile([0, 1], 50), np.linspace(0.05, 0.95, 100)),
                                      title="")
    big = present_figure(fig)
    assert big.layout.height == 640 > fig.layout.height
    assert big.layout.xaxis.tickfont.size == pytest.approx(PRESENT_FONT_FACTOR * FONT["size"])
    assert big.layout.legend.font.size == pytest.approx(PRESENT_FONT_FACTOR * FONT["legend"])
    # the legend keeps its pixel offset under the (absent) title
    assert (1 - big.layout.legend.y) * 640 == pytest.approx((1 - fig.layout.legend.y) * fig.layout.height)


def test_every_demo_figure_records_about(binary_data):
    models = cv.load_demo_models("loan_recalibration")
    fig = figures.reliability_diagram(models, binning=Uniform(10))
    assert fig.layout.meta["calibviz"]["about"]["models"] == ", ".join(models)
    assert fig.layout.meta["calibviz"]["title"] == "Reliability diagrams overlaid"


def test_the_reliability_legend_takes_two_columns_at_470_px(binary_data):
    """At 1280 px the reliability diagram sits in a 470 px column, where its legend took five rows (one entry each,
    Plotly's columns as wide as the widest entry, "Calibrated range (95%, all bins)") and left the plot about 200
    px high (a browser review). Its entries are short enough for two columns: three rows. The figure keeps its
    height (growing it put the x axis below a 1366x768 screen's fold: tests/browser/test_layout_browser.py)."""
    from calibviz.figures.theme import NARROW_WIDTH

    y, p = binary_data
    fig = figures.reliability_diagram(y, p, title="", show_band=True)  # the Reliability page's diagram
    assert NARROW_WIDTH == 470 and legend_rows(fig, width=NARROW_WIDTH) == 3 and fig.layout.height == 500
    names = [t.name for t in fig.data if t.showlegend is not False]
    assert max(map(len, names)) <= 22 and "Calibrated band (95%)" in names


def test_the_shading_key_only_where_bins_are_shaded(binary_data):
    """Several models' bins differ, so only one model's are shaded; the note "shaded: bins" stood beside the
    overlay's needles with no shading (Compare, Recalibrate)."""
    y, p = binary_data
    one = figures.reliability_diagram(y, p)
    two = figures.reliability_diagram({"a": (y, p), "b": (y, np.clip(p * 0.9, 0, 1))})
    assert [a.text for a in one.layout.annotations].count("shaded: bins") == 1
    assert "shaded: bins" not in [a.text for a in two.layout.annotations]
