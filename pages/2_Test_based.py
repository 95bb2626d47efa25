"""Test-based: the TCE reliability diagram, TCE with alpha and PAVA-BC controls, binning comparison, violins."""
import streamlit as st

from calibviz import figures, metrics
from calibviz.summary import reliability_table
from calibviz.ui import current_predictions, page_setup
from calibviz.ui.blocks import download_table, panel_table, show_figure, tce_headline, tce_reference, tce_tiles
from calibviz.ui.blocks import TCE_PAGE_CAPTION, show_dataframe
from calibviz.ui.source import scan_dispatch
from calibviz.ui.compute import cached
from calibviz.ui.settings import settings, tce_axis_control, tce_scheme
from calibviz.ui.views import current_view, one_view_note, view_picker

page_setup("Test-based", controls=("tce_binning", "uncertainty"))
scan_dispatch("Test-based")  # an opened large file analysed on every page: its binned views (ui.scan_pages)
preds = current_predictions()
st.title("Test-based calibration (TCE)")
st.caption(TCE_PAGE_CAPTION)
view_picker(preds)
view = current_view(preds)
tce_axis_control()
s = settings()
scheme = tce_scheme(s)
alpha = float(s["alpha"])
key = (preds.fingerprint(), view.name, scheme, alpha)

table = cached(("tce_table",) + key, lambda: reliability_table(view.y, view.p, binning=scheme, alpha=alpha,
                                                                sample_weight=view.w))
tce = cached(("tce",) + key, lambda: metrics.tce(view.y, view.p, binning=scheme, alpha=alpha,
                                                 sample_weight=view.w))
tce_tiles(tce, table, weighted=view.w is not None)
if s["tce_scheme"] == "pavabc":  # the panel's TCE: its row, judged with the panel's other tests as on Reliability
    reference = panel_table(view.y, view.p, view.w, view.name, preds.fingerprint(), metrics=("tce",),
                            intervals=False).iloc[0]
else:
    reference = tce_reference(view, preds.fingerprint(), scheme, alpha)
st.markdown(tce_headline(tce, alpha, reference))
if (note := one_view_note(preds, alpha)) is not None:
    st.caption(note)

fig = cached(("tce_fig", s["tce_axis"]) + key, lambda: figures.tce_diagram(
    view.y, view.p, binning=scheme, alpha=alpha, sample_weight=view.w, x_axis=s["tce_axis"],
    title=f"Test-based reliability diagram · {view.name}"))
show_figure(fig, f"tce_{preds.name}_{view.name}", key="tce")
st.caption(figures.TCE_BARS_READING)

tab_cmp, tab_violin, tab_table = st.tabs(["Binning comparison", "Predictions per bin", "Per-bin table"])
with tab_cmp:
    st.caption("Bin sizes (bars spanning each bin) and empirical probabilities (steps) of PAVA, PAVA-BC and "
               "equal-mass bins: PAVA-BC keeps PAVA's adaptivity while bounding bin sizes (TCE paper, Figs. 2-4).")
    cmp_fig = cached(("binning_comparison", preds.fingerprint(), view.name, scheme),
                     lambda: figures.binning_comparison(view.y, view.p, sample_weight=view.w))
    show_figure(cmp_fig, f"binning_comparison_{preds.name}", key="cmp")
with tab_violin:
    violin = cached(("violin",) + key, lambda: figures.violin_per_bin(view.y, view.p, binning=scheme, alpha=alpha,
                                                                       sample_weight=view.w))
    show_figure(violin, f"violins_{preds.name}", key="violin")
    st.caption(figures.VIOLIN_READING)
with tab_table:
    show_dataframe(table)
    download_table(table, f"tce_bins_{preds.name}_{view.name}", key="tce_bins")
