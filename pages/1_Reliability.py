"""Reliability: the standard reliability diagram, the metric panel, the per-bin table, binning sensitivity."""
import streamlit as st

from calibviz import figures
from calibviz.summary import reliability_table
from calibviz.ui import current_predictions, page_setup
from calibviz.ui.blocks import BOOTSTRAP_ROW_BUDGET, download_table, panel_table, show_figure, show_headlines, show_metric_table
from calibviz.ui.compute import cached
from calibviz.ui.settings import panel_config, settings
from calibviz.ui.views import current_view, view_picker

page_setup("Reliability", controls=("binning", "uncertainty", "metrics"))
preds = current_predictions()
st.title("Reliability")
st.caption("Each point is a bin of predictions: its mean prediction (x) against the observed rate (y). "
           "A calibrated model stays on the diagonal, within the grey band.")
view_picker(preds)
view = current_view(preds)
s = settings()
cfg = panel_config(s)
key = (preds.fingerprint(), view.name, cfg, s["interval"], s["band"])

# The TCE columns live on the Test-based page; here the table matches the diagram.
table = cached(("table",) + key, lambda: reliability_table(view.y, view.p, binning=cfg.scheme(), alpha=cfg.alpha,
                                                            interval=s["interval"], sample_weight=view.w, test=None))
fig = cached(("reliability_fig",) + key, lambda: figures.reliability_diagram(
    view.y, view.p, binning=cfg.scheme(), alpha=cfg.alpha, interval=s["interval"], sample_weight=view.w,
    show_band=bool(s["band"]), title=""))
panel = panel_table(view.y, view.p, view.w, view.name, preds.fingerprint())

left, right = st.columns([3, 2], gap="medium")
with left:
    st.subheader(f"Reliability diagram · {view.name}")
    show_figure(fig, f"reliability_{preds.name}_{view.name}", key="reliability")
with right:
    st.subheader("In plain words")
    show_headlines(panel, 4)

tab_metrics, tab_bins, tab_sens = st.tabs(["Metrics", "Per-bin table", "Binning sensitivity"])
with tab_metrics:
    show_metric_table(panel, f"{preds.name}_{view.name}")
with tab_bins:
    st.dataframe(table, hide_index=True, width="stretch")
    download_table(table, f"bins_{preds.name}_{view.name}", key="bins")
with tab_sens:
    st.caption("How each metric moves with the number of bins, per binning scheme: a stable conclusion "
               "should not hinge on one choice.")
    # Bands from 100 resamples per point while that stays cheap; on large data the curves alone.
    n_sens = 100 if view.n * 100 <= BOOTSTRAP_ROW_BUDGET else 0
    if not n_sens:
        st.caption(f"Bootstrap bands are left out on {view.n:,} rows to keep the page fast.")
    sens = cached(("sensitivity", preds.fingerprint(), view.name, n_sens), lambda: figures.binning_sensitivity(
        view.y, view.p, metrics=("ece", "mce"), sample_weight=view.w, n_resamples=n_sens))
    show_figure(sens, f"binning_sensitivity_{preds.name}", key="sensitivity")
