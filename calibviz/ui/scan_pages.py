"""The binned pages drawn from an opened file (a scan) instead of the data in memory.

:func:`calibviz.ui.source.scan_dispatch` calls one of these after the page's
``page_setup`` (sidebar and settings as usual). Each mirrors its page's layout
with the scan's results: the same figure builders and tables, fed from the
bucket sums (:class:`calibviz.scan.Scan`, :mod:`calibviz.scan.tables`), so a
value shown here equals the library's value for the file. Results are cached
(:func:`calibviz.ui.compute.cached`) on the file's identity
(:func:`calibviz.ui.scan.scan_identity`), the view and every setting used.
Elements that need the rows (CORP, ROC, violins, LOESS, recalibration,
bootstrap intervals, paired verdicts) are replaced by one line saying so
(:func:`calibviz.ui.source.needs_rows`).
"""
from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import streamlit as st

from .. import figures
from ..binning import PAVABC
from ..compare import comparison_metrics
from ..errors import InputError
from ..figures.testbased import _DEFAULT_SCHEMES
from ..panel import (PanelConfig, config_key, costly_reference, family_size, format_value,
                     judged_together, metric_label)
from ..scan import interval_caption
from ..scan import tables as scan_tables
from ..scan.reference import BUCKET_KEYS, bucket_nulls
from ..scan.refine import EXACT_BLOCK_ROWS
from ..multiclass import (GRID_READING, TOP_LABEL_DIAGRAM_READING, class_reference_draws, class_test_sentence,
                          readable_class_ranking)
from ..variables import (top_is_finding, top_variable_words, vece_floor_caption, vece_test_sentence,
                         vece_whiskers_caption)
from .blocks import (BOOTSTRAP_ROW_BUDGET, download_table, reference_redraws, not_applicable, show_figure,
                     family_rows, judged_family, show_headlines, show_metric_table, slug, tce_headline,
                     tce_tiles, zoom_bin_picker)
from .blocks import TCE_PAGE_CAPTION, band_reading, show_dataframe
from .comparison import show_comparison, without_conflicting_tce
from .compute import cached, guarded, in_cache, progress_bar
from .settings import page_control, panel_config, set_setting, settings, tce_axis_control, tce_scheme
from .source import (cache_id, cannot_analyse, checked_model, needs_rows, scan_active, scan_view,
                     scan_view_options)
from .text import md
from .views import options_picker

__all__ = ["reliability", "test_based", "multiclass", "compare", "variables"]

#: The schemes of the Test-based page's binning comparison: those the in-memory page compares.
_COMPARED_SCHEMES = _DEFAULT_SCHEMES


def _header(title: str, scan) -> None:
    st.title(title)
    st.caption(f"Opened file **{md(scan.source)}** (model {md(scan.name)}, read in place by {scan.engine}): the "
               "binned views below come from sums per score bucket; the rows are never loaded.")


def _view(scan):
    """The binary view the settings select (with the picker for a multiclass file); ends the run on an empty one."""
    opts = scan_view_options(scan)
    value = settings()["view"]
    if value not in opts:
        value = next(iter(opts))
    if not scan.is_binary:
        options_picker(opts, value)
    view = scan_view(scan, value)
    n = guarded(lambda: view.n)  # the view's pass (one per class view), with its validation
    if n == 0:
        not_applicable(f"No row of the file is in the view {md(opts[value])} (no prediction of this class): pick "
                       "another view.")
        st.stop()
    return view


def _redraws(key: str, family: int = 1) -> int:
    """Label redraws of a metric's calibrated-model reference on an opened file: TCE refits PAVA-BC on every
    redraw (0.07-0.1 s at 2^16 buckets), so it takes the in-memory pages' large-data number; the others redraw
    bucket sums (cheap whatever the file's size; smECE ~8 ms per redraw for its fixed point), as many as a verdict
    at the sidebar's alpha needs; both raised to what the ``family`` of tests shown together needs
    (:func:`calibviz.ui.blocks.reference_redraws`)."""
    alpha = float(settings()["alpha"])
    if key == "tce":  # any data above the row budget: the large-data number
        return reference_redraws(BOOTSTRAP_ROW_BUDGET + 1, alpha, family)
    return reference_redraws(0, alpha, family)


def _metric_key(view, key: str, cfg: PanelConfig, seed: int, resamples: int, family: int) -> tuple:
    """The cache key of one metric's panel row: the options it depends on, its reference redraws, the seed and the
    bootstrap resamples (0: none)."""
    return ("scan_metric", cache_id(), view.name, key, config_key(key, cfg), _redraws(key, family), seed, resamples)


def _shown_key(view, key: str) -> str:
    """The ``metric`` of ``key``'s row in a scan's panel: a multiclass view's ECE is its confidence ECE
    (:meth:`calibviz.scan.Scan.metrics`)."""
    return "confidence_ece" if key == "ece" and not view.is_binary else key


def _panel(view, keys, cfg: PanelConfig, s: dict, *, leave_out=(), intervals=True) -> pd.DataFrame:
    """The scan's metric panel: values and the calibrated-model reference (binned metrics of binary views) at once;
    bootstrap intervals from the score buckets (the sidebar's resamples and seed) on request.

    The rule of :func:`calibviz.ui.blocks.panel_table` on large data: the Poisson bootstrap of a scan costs about
    1-5 s of CPU per metric whatever the file's size (it resamples some 10^5 bucket sums, not rows; TCE ~0.15 s per
    resample), so a button says how many resamples it draws and starts it; intervals already computed (on another
    page, or before) are shown at once. Cached per metric, on the settings that metric depends on: adding a metric or
    changing the bins does not recompute the others.

    The verdicts are judged with the family of every page (:func:`calibviz.ui.blocks.judged_family`) but the members
    in ``leave_out`` (a reference left to the pages that show it); only ``keys``' rows are returned. ``intervals``
    False: no button for bootstrap intervals (a page that shows only the verdict)."""
    keys = tuple(keys) or ("ece",)
    seed = int(s["seed"])
    n_boot = int(s["boot"])
    base = ("scan_panel", cache_id(), view.name, keys, cfg, seed, n_boot)
    consent = "cv_scan_boot_" + hashlib.sha1(repr(base).encode()).hexdigest()[:16]

    # judged with the family of every page (ui.blocks.judged_family), whose other metrics give their p-values
    whole = judged_family(keys, multiclass=not view.is_binary)
    judged = tuple(k for k in whole if k in keys or k not in leave_out)
    family = family_size(whole)

    def one(key):
        asked = n_boot and ((st.session_state.get(consent) and key in keys)
                            or in_cache(_metric_key(view, key, cfg, seed, n_boot, family)))
        resamples = n_boot if asked else 0

        def compute():
            # the bar also counts the reference's redraws (Scan.metrics): named for what runs, as on the in-memory page
            with progress_bar(f"Bootstrapping {key} from the score buckets" if resamples
                              else f"Calibrated-model reference of {key}") as progress:
                return view.metrics([key], config=cfg, n_reference=_redraws(key, family), random_state=seed,
                                    n_resamples=resamples, progress=progress)

        return cached(_metric_key(view, key, cfg, seed, resamples, family), compute,
                      label=f"Computing {key} and its calibrated-model reference"), resamples

    fresh = [k for k in judged if k in BUCKET_KEYS and not in_cache(_metric_key(view, k, cfg, seed, 0, family))]
    if view.is_binary and len(fresh) > 1:
        try:  # one draw of the score buckets for smECE's, Brier's and log loss's references: the values of each alone
            with st.spinner("Computing the calibrated-model references of " + ", ".join(fresh)):
                bucket_nulls(view, fresh, _redraws(fresh[0], family), seed)
        except InputError:
            pass  # each metric's row says what is wrong
    computed = {k: one(k) for k in judged}
    # cached one by one; the members left out count as tests without evidence (ui.blocks.panel_table)
    together = judged_together(*[computed[k][0] for k in judged], alpha=cfg.alpha, pending=len(whole) - len(judged))
    table = family_rows(together, [_shown_key(view, k) for k in keys])
    parts = [computed[k] for k in keys]
    table.attrs["config"] = cfg  # a cached table of a metric without a test may come from another alpha
    missing = sum(1 for _, r in parts if not r)
    table.attrs["n_resamples"] = n_boot if missing < len(keys) else 0
    table.attrs["intervals_wait"] = bool(n_boot and missing)
    if n_boot and missing and intervals:  # not on a page that shows no interval (Test-based: the verdict only)
        which = "" if missing == len(keys) else f" of the other {missing} metric{'s' if missing > 1 else ''}"
        if st.button(f"Compute 95% intervals{which} ({n_boot} resamples)",
                     key=f"scan_boot_{slug(view.name)}", icon=":material/calculate:",
                     help="Poisson resamples of the score buckets' sums, no pass over the rows: about 1-5 s per "
                          "metric whatever the file's size (TCE about 0.15 s per resample: PAVA-BC is refitted on "
                          "each). The values above are exact without it."):
            st.session_state[consent] = True
            st.rerun()
    return table


def _headlines(panel: pd.DataFrame) -> None:
    show_headlines(panel[np.isfinite(panel["value"].to_numpy(float))], 4)


def _first_view(scan):
    """The view the Large data page shows: the binary view, or a multiclass file's confidence view."""
    return scan_view(scan, next(iter(scan_view_options(scan))))


def tce_page_table(scan, s: dict) -> pd.DataFrame:
    """The per-bin table of ``scan``'s first view on the Test-based page's bins (PAVA-BC by default, the metric
    panel's TCE), cached with that page's: the Large data page drew its test-based diagram on the sidebar's bins,
    and its caption's TCE (81.61% on 15 uniform bins) stood beside the panel's 50.49% (a walk-through)."""
    view = _first_view(scan)
    scheme, alpha = tce_scheme(s), float(s["alpha"])
    return cached(("tce_table", cache_id(), view.name, scheme, alpha), lambda: view.reliability_table(scheme, alpha))


def tce_bins_caption(scan, table: pd.DataFrame, panel: pd.DataFrame, s: dict) -> str:
    """The Large data page's caption of its test-based diagram (:func:`tce_page_table`): its bins and its TCE,
    the metric panel's where the bins are the panel's PAVA-BC (its title names no TCE: with the binning it ran
    under Plotly's toolbar at 1024 px, a walk-through)."""
    from ..figures._base import table_about

    binning = table_about(table, interval=False).get("binning", "")
    rows = panel.set_index("metric")
    if s["tce_scheme"] == "pavabc" and "tce" in rows.index:
        return ("The test-based diagram tests each prediction against the observed rate of its PAVA-BC bin (the "
                f"Test-based page's bins, the paper's choice): TCE = {format_value(rows.loc['tce', 'value'], 'percent')}, "
                "the metric panel's, read against a calibrated model beside the diagram above.")
    value = format_value(_first_view(scan).tce(tce_scheme(s), float(s["alpha"])), "percent")
    return (f"The test-based diagram tests each prediction against the observed rate of its bin ({md(binning)}, the "
            f"Test-based page's bins): TCE = {value}, not compared with a calibrated model here (its TCE is far "
            "above 0 on many rows: alone no evidence); the Test-based page reads it.")


def reliability_headlines(scan) -> pd.DataFrame:
    """The headlines of ``scan``'s first view (a multiclass file's confidence view) for the Large data page: the
    Reliability page's panel rows, each value with the calibrated-model reference (cached and shared with that
    page). Shown alone, a value misread: a calibrated model of 10^6 rows read "TCE = 74.90%. 74.90% of predictions
    are rejected" (a walk-through), where a calibrated model shows 74.5-75.0%. A metric whose reference costs
    time per row (TCE: PAVA-BC refitted per redraw, ~20 s on 10^6 rows) is left to the pages that show it until
    its reference is computed, so that opening a file stays one pass (a review: 2.5 s became 25 s)."""
    s = settings()
    cfg = panel_config(s)
    view = _first_view(scan)
    keys = tuple(s["metrics"]) or ("ece",)
    family = family_size(keys)
    waiting = [k for k in keys if costly_reference(k, cfg)
               and not in_cache(_metric_key(view, k, cfg, int(s["seed"]), 0, family))]
    panel = _panel(view, [k for k in keys if k not in waiting] or ["ece"], cfg, s, leave_out=waiting)
    show_headlines(panel[np.isfinite(panel["value"].to_numpy(float))], n=None)
    if waiting:
        labels = ", ".join(metric_label(k) for k in waiting)
        # the way there: without "Analyse on every page" the Reliability page shows the data in memory (the demo's
        # alarm read as the file's, a walk-through)
        there = ("the Reliability page" if scan_active()
                 else "the Reliability page, after **Analyse on every page** (until then it shows the data in memory)")
        judged = (f" Until then the verdicts here count {'it' if len(waiting) == 1 else 'them'} among the tests "
                  "judged together as without evidence: they can only gain evidence when it is computed.")
        st.caption(f"{labels}, with what a calibrated model would show: on {there}; its reference refits the bins on "
                   "every redraw, some seconds per 10^5 rows, computed once for every page." + judged)
    return panel

def banded_diagram(name: str, table: pd.DataFrame, cfg: PanelConfig, s: dict):
    """The binned reliability diagram of an opened file's per-bin ``table``, with the band of the sidebar's settings
    ``s`` (the Large data page drew it without, a walk-through)."""
    return figures.reliability_diagram(table={name: table}, alpha=cfg.alpha, show_band=bool(s["band"]), title="")


def banded_caption(table: pd.DataFrame, s: dict) -> str:
    """The caption under :func:`banded_diagram`: what a point is, the band's reading, where the rows per bin are."""
    return ("Each point is a bin: its mean prediction (x) against the observed rate (y). "
            + (figures.BAND_READING + " " + band_reading(table) + " " if s["band"] else "")
            + "The bars count the rows per bin; a histogram of the predictions by outcome needs the rows (an "
              "opened file's are not loaded).")


def reliability(scan) -> None:
    """Reliability: binned diagram, headlines, metric panel, per-bin table and binning sensitivity of the file."""
    _header("Reliability", scan)
    view = _view(scan)
    mode_col, _ = st.columns([2, 3])
    with mode_col:
        page_control("diagram", st.radio, label="Diagram", options=["binned", "corp"], horizontal=True,
                     format_func={"binned": "Binned", "corp": "CORP (isotonic, no bins)"}.get, disabled=True,
                     help="Binned: observed rate per bin. CORP needs every prediction: data in memory (upload a "
                          "sample on the Data page). The choice is kept for uploaded data.")
    s = settings()
    cfg = panel_config(s)
    key = (cache_id(), view.name, cfg, s["interval"], s["band"])
    table = cached(("table",) + key, lambda: view.reliability_table(cfg.scheme(), cfg.alpha, interval=s["interval"],
                                                                   test=None))
    kind = "binary" if scan.is_binary else "confidence"
    fig = cached(("reliability_fig",) + key, lambda: banded_diagram(view.name, table, cfg, s))
    left, right = st.columns([3, 2], gap="medium")
    with left:
        if s["diagram"] == "corp":
            needs_rows("The CORP diagram (an isotonic fit through every prediction)")
        st.subheader(f"Reliability diagram · {md(view.name)}")
        show_figure(fig, f"reliability_{view.name}", key="reliability")
        st.caption(banded_caption(table, s))
    # the diagram first, then the panel: TCE's reference refits PAVA-BC per redraw (~20 s for 139 redraws of a
    # file of 10^6 rows here), which left the page blank until it was done (as the in-memory page does)
    panel = _panel(view, s["metrics"], cfg, s)
    with right:
        st.subheader("In plain words")
        _headlines(panel)
    tab_metrics, tab_bins, tab_sens, tab_roc = st.tabs(["Metrics", "Per-bin table", "Binning sensitivity",
                                                        "Discrimination (ROC)"])
    with tab_metrics:
        show_metric_table(panel, f"{scan.name}_{kind}", caption=interval_caption(
            panel, multiclass=not view.is_binary, weighted=scan.mapping.weight is not None))
    with tab_bins:
        show_dataframe(table)
        download_table(table, f"bins_{view.name}", key="bins")
    with tab_sens:
        st.caption("How ECE and MCE move with the number of bins, per binning scheme (from the same bucket sums; no "
                   "bootstrap bands on an opened file).")
        sens = cached(("sensitivity", cache_id(), view.name), lambda: scan_tables.binning_sensitivity(
            view, metrics=("ece", "mce")))
        show_figure(figures.binning_sensitivity(table=sens), f"binning_sensitivity_{view.name}", key="sensitivity")
    with tab_roc:
        needs_rows("The ROC curve and AUC (they rank every prediction)")


def test_based(scan) -> None:
    """Test-based: TCE, the test-based diagram and its per-bin table of the file."""
    _header("Test-based calibration (TCE)", scan)
    st.caption(TCE_PAGE_CAPTION)
    view = _view(scan)
    tce_axis_control()
    s = settings()
    scheme = tce_scheme(s)
    alpha = float(s["alpha"])
    key = (cache_id(), view.name, scheme, alpha)
    table = cached(("tce_table",) + key, lambda: view.reliability_table(scheme, alpha))
    if isinstance(scheme, PAVABC):  # TCE with the scan's note on PAVA-BC bins formed from score buckets
        # the sidebar's n_min / n_max / alpha, as on the Reliability page: one reference for both pages
        # judged with the panel's tests, as there
        row = _panel(view, ["tce"], panel_config(s), s, intervals=False).iloc[0]
        tce, note, reference = float(row["value"]), (row["note"] or "").strip(), row
    else:
        tce, note, reference = cached(("tce",) + key, lambda: view.tce(scheme, alpha)), "", None
    n_all = tce_tiles(tce, table, weighted=scan.mapping.weight is not None)
    st.markdown(tce_headline(tce, alpha, reference, n_rows=n_all))
    if note:
        st.caption(note)
    fig = cached(("tce_fig", s["tce_axis"]) + key, lambda: figures.tce_diagram(
        table=table, alpha=alpha, x_axis=s["tce_axis"], title=f"Test-based reliability diagram · {view.name}"))
    show_figure(fig, f"tce_{view.name}", key="tce")
    st.caption(figures.TCE_BARS_READING if reference is not None else figures.TCE_BARS_READING_NO_RANGE)
    tab_cmp, tab_violin, tab_table = st.tabs(["Binning comparison", "Predictions per bin", "Per-bin table"])
    with tab_cmp:
        on_groups = cached(("blocks_on_grid", cache_id(), view.name), lambda: view.blocks_on_grid)
        blocks = (f"on a view of more than {EXACT_BLOCK_ROWS:,} rows PAVA and PAVA-BC blocks start between score "
                  "buckets 2⁻¹⁶ wide, the full ones split into cells down to 2⁻²²" if on_groups
                  else "PAVA and PAVA-BC blocks fitted on the exact scores, as in memory")
        st.caption("Bin sizes (bars spanning each bin) and empirical probabilities (steps) of PAVA, PAVA-BC and "
                   f"equal-mass bins (TCE paper, Figs. 2-4), from the scan: {blocks}.")
        cmp_tables = cached(("binning_comparison", cache_id(), view.name), lambda: {
            name: view.reliability_table(sch, test=None) for name, sch in _COMPARED_SCHEMES.items()})
        show_figure(figures.binning_comparison(tables=cmp_tables), f"binning_comparison_{view.name}", key="cmp")
    with tab_violin:
        needs_rows("The violins of the predictions in each bin")
    with tab_table:
        show_dataframe(table)
        download_table(table, f"tce_bins_{view.name}", key="tce_bins")


def multiclass(scan) -> None:
    """Multiclass: confidence vs top-label diagram, per predicted class and class-wise diagrams of the file."""
    st.title("Multiclass calibration")
    if scan.is_binary:
        not_applicable("This page does not apply to binary data: with two classes, confidence, top-label and "
                       "class-wise calibration all reduce to the reliability diagram of the Reliability page.")
        return
    st.caption(f"Opened file **{md(scan.source)}** (model {md(scan.name)}, {len(scan.mapping.classes)} classes, "
               f"read in place by {scan.engine}): the confidence, top-label and class-wise views, each a binary "
               "reliability diagram from sums per score bucket (one pass per class view).")
    s = settings()
    cfg = panel_config(s)
    scheme = cfg.scheme()
    cid = cache_id()
    table = cached(("tl_table", cid, scan.name, scheme, cfg.alpha),
                   lambda: scan_tables.top_label_table(scan, scheme, cfg.alpha))
    left, right = st.columns([3, 2], gap="medium")
    with left:
        st.subheader("Confidence (★) vs top-label (+)")
        show_figure(figures.top_label_diagram(table=table, title=""), f"top_label_{scan.name}", key="tl")
        st.caption(TOP_LABEL_DIAGRAM_READING)
    # the diagram first, then the panel (its references take a while on a large file), as on the Reliability page
    panel = _panel(scan, ("confidence_ece", "top_label_ece", "top_label_mce", "classwise_ece"), cfg, s)
    with right:
        st.subheader("In plain words")
        _headlines(panel)
    tab_metrics, tab_zoom, tab_tl, tab_cw = st.tabs(["Metrics", "Zoom into a bin", "Per predicted class",
                                                     "Class-wise grid"])
    with tab_metrics:
        show_metric_table(panel, f"{scan.name}_multiclass", caption=interval_caption(panel, multiclass=True))
    with tab_zoom:
        pick = zoom_bin_picker(table)
        zoom = cached(("zoom", cid, scan.name, scheme, pick), lambda: scan_tables.bin_zoom(scan, int(pick), scheme))
        show_figure(figures.bin_zoom(table=zoom, title=""), f"bin_zoom_{scan.name}_{pick}", key="zoom")
    with tab_tl:
        tables = cached(("tl_tables", cid, scan.name, scheme, cfg.alpha),
                        lambda: scan_tables.per_class_top_label_tables(scan, scheme, cfg.alpha))
        k = len(tables)
        offset = st.number_input("First class (by share of predictions)", min_value=0, max_value=max(0, k - 1),
                                 value=0, step=20, key="w_tl_offset") if k > 20 else 0
        show_figure(figures.top_label_small_multiples(tables=tables, alpha=cfg.alpha, top_n=20, offset=int(offset),
                                                      title=""), f"top_label_per_class_{scan.name}", key="tl_small")
        st.caption(GRID_READING)
    with tab_cw:
        tables = cached(("cw_tables", cid, scan.name, scheme, cfg.alpha),
                        lambda: scan_tables.classwise_tables(scan, scheme, cfg.alpha))
        n_ref, seed = class_reference_draws(len(tables), cfg.alpha), int(s["seed"])
        ranking = cached(("cw_ranking", cid, scan.name, scheme, cfg.alpha, n_ref, seed),
                         lambda: scan_tables.class_ranking(scan, scheme, tables=tables, n_reference=n_ref,
                                                           random_state=seed))
        sentence = class_test_sentence(ranking, cfg.alpha, panel=panel, escape=md, strong=lambda t: f"**{t}**")
        st.markdown(sentence or f"The classes are not tested one by one on this file: {ranking.attrs['no_test']} "
                                "(the class-wise ECE's verdict in the Metrics tab judges them together).")
        k = len(ranking)
        offset = st.number_input("First rank shown", min_value=0, max_value=max(0, k - 1), value=0, step=12,
                                 key="w_cw_offset") if k > 12 else 0
        show_figure(figures.classwise_grid(tables=tables, ranking=ranking, alpha=cfg.alpha, top_n=12,
                                           offset=int(offset), title=""), f"classwise_{scan.name}", key="cw")
        st.caption(GRID_READING + " Ranked by class-wise ECE, largest first; no per-class bootstrap intervals on an "
                   "opened file (they resample rows).")
        show_dataframe(readable_class_ranking(ranking))
        download_table(ranking, f"class_ranking_{scan.name}", label="Ranking as CSV", key="class_ranking")


def compare(scan) -> None:
    """Compare: the file's models against a reference (values and differences), overlaid and side by side."""
    st.title("Compare models")
    models = scan.models
    failed = {name: err for name in models if isinstance(err := checked_model(scan, name), InputError)}
    if failed:  # models whose rows fail are left out, said as the other pages say it (it raised here, a review)
        st.warning(md(" ".join(cannot_analyse(name, err) for name, err in failed.items())),
                   icon=":material/warning:")
        models = {name: m for name, m in models.items() if name not in failed}
    if len(models) < 2 and failed:
        not_applicable("Comparing needs two models whose rows can be analysed; the opened file has "
                       f"{len(models)}.")
        return
    if len(models) < 2:
        not_applicable("This page does not apply to a single model: the opened file has one. Comparing needs a "
                       "`model` column (one row per example and model) or column groups such as `raw__p` and "
                       "`calibrated__p`.")
        return
    names = list(models)
    if settings()["ref"] not in names:
        set_setting("ref", names[0])
    ref_col, info_col = st.columns([2, 3])
    with ref_col:
        page_control("ref", st.selectbox, label="Reference model", options=names,
                     help="Every other model is read against this one.")
    s = settings()
    ref, cfg = s["ref"], panel_config(s)
    binary = scan.is_binary
    views = {name: (m if binary else m.confidence_view()) for name, m in models.items()}
    with info_col:
        st.caption(f"{len(models)} models of the opened file **{md(scan.source)}**, "
                   f"{'positive-class probability' if binary else 'confidence'} view; differences against "
                   f"**{md(ref)}**.")
    metrics = guarded(lambda: comparison_metrics(tuple(s["metrics"]), binary))[0]
    metrics = without_conflicting_tce(metrics, [v.n for v in views.values()])
    key = (cache_id(), tuple(names), cfg, s["interval"], s["band"])
    st.subheader(f"Better or worse than {md(ref)}")
    needs_rows("Better or worse (the interval of a difference, a paired bootstrap over the rows of both models)")
    st.caption("Each model's own 95% interval comes from a Poisson bootstrap of its score buckets; the differences "
               "are exact, their intervals and the verdicts are not computed.")
    n_boot, seed = int(s["boot"]), int(s["seed"])
    consent = "cv_scan_compare_boot_" + hashlib.sha1(repr((cache_id(), tuple(names), metrics, cfg, ref, n_boot,
                                                            seed)).encode()).hexdigest()[:16]
    n_boot = n_boot if st.session_state.get(consent) else 0  # as the metric panel: intervals on request

    def _compare():
        with progress_bar("Bootstrapping each model's score buckets") as progress:
            return scan_tables.compare_scans(views, metrics, cfg, ref, n_resamples=n_boot, random_state=seed,
                                             progress=progress)

    table = cached(("compare_metric", cache_id(), tuple(names), metrics, cfg, ref, n_boot, seed), _compare,
                   label="Comparing the models")
    if int(s["boot"]) and not n_boot and st.button(
            f"Compute each model's 95% interval ({int(s['boot'])} Poisson resamples of its score buckets, "
            f"{len(views)} models)", key="scan_compare_boot", icon=":material/calculate:"):
        st.session_state[consent] = True
        st.rerun()
    show_comparison(table, ref)
    overlay = cached(("compare_overlay",) + key, lambda: figures.reliability_diagram(
        views, binning=cfg.scheme(), alpha=cfg.alpha, interval=s["interval"], title="Reliability diagrams overlaid"))
    show_figure(overlay, "compare_overlay", key="overlay")
    st.subheader("Calibration vs discrimination")
    needs_rows("The triptych (CORP decomposition into miscalibration and discrimination, ROC curves, Murphy diagram)")
    st.subheader("Side by side")
    cols = st.columns(min(len(views), 3))
    for i, (name, v) in enumerate(views.items()):
        with cols[i % len(cols)]:
            fig = cached(("compare_single", name) + key, lambda v=v, name=name: figures.reliability_diagram(
                v, binning=cfg.scheme(), alpha=cfg.alpha, interval=s["interval"], show_band=bool(s["band"]),
                show_histogram=False, title=name, band_alpha=cfg.alpha / len(views)))  # read together
            show_figure(fig, f"reliability_{name}", key=f"single_{i}")


def variables(scan) -> None:
    """Variables: the VECE ranking of the file's features from sums per feature bucket; the curves need rows."""
    st.title("Calibration along variables")
    features = list(scan.mapping.features) if scan.mapping is not None else []
    if not features:
        not_applicable("This page does not apply: the opened file has no feature columns. Columns other than the "
                       "label, probabilities, weight and model are used as variables.")
        return
    st.caption(f"Opened file **{md(scan.source)}** (model {md(scan.name)}): which variables hide miscalibration, "
               "ranked by VECE (Kelly & Smyth 2023) from sums per feature bucket, one pass per feature.")
    s = settings()
    n_boot, seed = int(s["boot"]), int(s["seed"])

    def _ranking():
        with progress_bar("Ranking variables by VECE") as progress:
            return scan.variable_ranking(features, n_resamples=n_boot, random_state=seed, progress=progress)

    st.subheader("Which variables hide miscalibration?")
    ranking = cached(("ranking", cache_id(), scan.name, tuple(features), n_boot, seed), _ranking)
    if not len(ranking):
        not_applicable("No column varies (each is constant, missing, or has one level): nothing to rank.")
    else:
        show_figure(figures.vece_ranking(ranking=ranking), f"vece_ranking_{scan.name}", key="ranking")
        top = ranking.iloc[0]
        if top_is_finding(ranking, float(s["alpha"])):  # the top bar is always the largest: named beyond chance
            st.markdown(f"**{md(top['feature'])}** {top_variable_words(ranking)}: VECE = "
                        f"{format_value(top['vece'], 'probability')}.")
        if (verdict := vece_test_sentence(ranking, float(s["alpha"]), escape=md, strong=lambda t: f"**{t}**")):
            st.markdown(verdict)
        if (floor := vece_floor_caption(ranking, escape=md)):
            st.caption(floor)
        if (whiskers := vece_whiskers_caption(ranking)):
            st.caption(whiskers)
        if ranking.attrs.get("note"):
            st.caption(ranking.attrs["note"])
        download_table(ranking, f"vece_ranking_{scan.name}", label="Ranking as CSV", key="ranking")
    st.subheader("Look at one variable")
    needs_rows("The LOESS curves along a variable and the per-level tables")
