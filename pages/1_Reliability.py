"""Reliability: the binned or CORP reliability diagram, the metric panel, the per-bin table, binning sensitivity."""
import streamlit as st

from calibviz import figures
from calibviz.figures.corp import band_level_text
from calibviz.sensitivity import binning_sensitivity
from calibviz.summary import WEIGHTED_BAND_NOTE, reliability_table
from calibviz.ui import current_predictions, page_setup
from calibviz.ui.blocks import (BOOTSTRAP_ROW_BUDGET, download_table, joined_panels, panel_table, show_figure,
                                show_headlines, show_metric_table)
from calibviz.ui.blocks import band_reading, show_dataframe
from calibviz.ui.source import scan_dispatch
from calibviz.ui.compute import cached
from calibviz.ui.corp import CORP_METRICS, corp_figure, corp_table, discrimination
from calibviz.ui.settings import page_control, panel_config, settings
from calibviz.ui.views import current_view, view_picker
from calibviz.ui.text import md

page_setup("Reliability", controls=("binning", "uncertainty", "metrics"))
scan_dispatch("Reliability")  # an opened large file analysed on every page: its binned views (ui.scan_pages)
preds = current_predictions()
st.title("Reliability")
view_picker(preds)
view = current_view(preds)
mode_col, conf_col = st.columns([2, 3])
with mode_col:
    page_control("diagram", st.radio, label="Diagram", options=["binned", "corp"], horizontal=True,
                 format_func={"binned": "Binned", "corp": "CORP (isotonic, no bins)"}.get,
                 help="Binned: observed rate per bin. CORP: the isotonic (PAV) recalibration curve, with the band "
                      "a calibrated model's whole curve stays in (1 - α) and the Brier score split into "
                      "miscalibration, discrimination and uncertainty (Dimitriadis, Gneiting & Jordan 2021).")
s = settings()
corp = s["diagram"] == "corp"
if corp:
    with conf_col:
        page_control("corp_conf", st.checkbox, label="Spread of the curve",
                     help="How much the curve moves when refitted to labels drawn from it (the paper's confidence "
                          "band, 1 - α at each point). It is not a range that holds the true curve: the bootstrap "
                          "of an isotonic fit is inconsistent, and a calibrated model's diagonal leaves it somewhere "
                          "on most samples. Judge calibration by the green band and the verdicts.")
    s = settings()
st.caption("The curve is the isotonic (PAV) recalibration of the predictions: the observed rate each prediction "
           "stands for, with no bins to choose. " + figures.CORP_BAND_READING
           if corp else "Each point is a bin: mean prediction (x) vs observed rate (y). "
           # short: the diagram's x axis must stay on a 768 px first screen; the band's help text says the rest
           + ("A point outside the green band (all bins together) is evidence at level α." if s["band"] else
              "A calibrated model stays near the diagonal.")
           + (" " + WEIGHTED_BAND_NOTE if s["band"] and view.w is not None else ""))
cfg = panel_config(s)
key = (preds.fingerprint(), view.name, cfg, s["interval"], s["band"])

# The TCE columns live on the Test-based page; here the table matches the diagram.
table = cached(("table",) + key, lambda: reliability_table(view.y, view.p, binning=cfg.scheme(), alpha=cfg.alpha,
                                                            interval=s["interval"], sample_weight=view.w, test=None))
fig = cached(("reliability_fig",) + key, lambda: figures.reliability_diagram(
    view.y, view.p, binning=cfg.scheme(), alpha=cfg.alpha, interval=s["interval"], sample_weight=view.w,
    show_band=bool(s["band"]), title="", outcome_labels=figures.outcome_labels(view.kind, view.name)))
left, right = st.columns([3, 2], gap="medium")
with left:  # the diagram first: on large data the metrics' references take seconds more
    if corp:
        st.subheader(f"CORP reliability diagram · {md(view.name)}")
        show_figure(corp_figure(view, preds.fingerprint(), s), f"corp_{preds.name}_{view.name}", key="corp")
    else:
        st.subheader(f"Reliability diagram · {md(view.name)}")
        show_figure(fig, f"reliability_{preds.name}_{view.name}", key="reliability")
        if s["band"]:
            st.caption(band_reading(table))
panel = panel_table(view.y, view.p, view.w, view.name, preds.fingerprint())
if corp:  # both panels' tests are shown on the page: their verdicts are judged together (joined_panels)
    corp_panel = panel_table(view.y, view.p, view.w, view.name, preds.fingerprint(), metrics=CORP_METRICS)
    both = joined_panels(corp_panel, panel)
with right:
    st.subheader("In plain words")
    show_headlines(both.head(len(corp_panel)) if corp else panel, 4)

tabs = st.tabs(["Metrics", "Per-bin table", "Binning sensitivity", "Discrimination (ROC)"]
               + (["PAV curve table"] if corp else []))
tab_metrics, tab_bins, tab_sens, tab_roc = tabs[:4]
with tab_roc:
    discrimination(preds, view)
with tab_metrics:
    show_metric_table(both if corp else panel,
                      f"{preds.name}_{view.name}")
if corp:
    with tabs[4]:
        curve = corp_table(view, preds.fingerprint(), s)
        st.caption("One row per distinct prediction shown: the PAV (isotonic) fit and its block, the consistency "
                   f"band ({band_level_text(curve.attrs['level'], curve.attrs['coverage'])}) and, if drawn, the "
                   f"spread of the curve ({band_level_text(curve.attrs['level'], 'pointwise')}); "
                   f"{curve.attrs['n_resamples']} resamples each.")
        show_dataframe(curve)
        download_table(curve, f"corp_{preds.name}_{view.name}", key="corp_table")
with tab_bins:
    show_dataframe(table)
    download_table(table, f"bins_{preds.name}_{view.name}", key="bins")
with tab_sens:
    st.caption("How each metric moves with the number of bins, per binning scheme: a stable conclusion should not "
               "hinge on one choice. A calibrated model's ECE and MCE are above 0 too and grow with the number of "
               "bins (fewer rows per bin, noisier gaps): the dotted bands are what a calibrated model with these "
               "predictions shows at each binning (central 1 - 2α of label redraws), the shaded ones bootstrap "
               "intervals of the value. Each point above its dotted band is one test at α: with 24 points some "
               "point is above on about a quarter of calibrated models; the verdicts at the chosen binning, "
               "judged together, are in the Metrics tab. Hover a point for its smallest bin: with equal-width bins "
               "of one or two rows, MCE is one row's gap.")
    # Bands from 100 resamples / redraws per point while that stays cheap; on large data the curves alone.
    n_sens = 100 if view.n * 100 <= BOOTSTRAP_ROW_BUDGET else 0
    n_ref = 100 if view.n * 100 <= 4 * BOOTSTRAP_ROW_BUDGET else 0  # batched ECE / MCE redraws: ~4x cheaper
    if not n_sens:
        st.caption(f"Bootstrap bands are left out on {view.n:,} rows to keep the page fast"
                   + ("." if n_ref else ", and what a calibrated model shows too."))
    def _sensitivity(**extra):
        return binning_sensitivity(view.y, view.p, metrics=("ece", "mce"), sample_weight=view.w, **extra)

    # the bootstrap (~90% of the work) does not depend on α: changing α redoes the redraws only
    boot = cached(("sensitivity-intervals", preds.fingerprint(), view.name, n_sens),
                  lambda: _sensitivity(n_resamples=n_sens))
    sens = cached(("sensitivity", preds.fingerprint(), view.name, n_sens, n_ref, cfg.alpha),
                  lambda: _sensitivity(n_reference=n_ref, alpha=cfg.alpha, intervals=boot))
    show_figure(figures.binning_sensitivity(table=sens), f"binning_sensitivity_{preds.name}", key="sensitivity")
