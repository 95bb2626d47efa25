"""Multiclass: confidence vs top-label diagram, per-class top-label diagrams, class-wise grid, bin zoom."""
import streamlit as st

from calibviz import figures
from calibviz.multiclass import (CLASS_INTERVAL_READING, GRID_READING, TOP_LABEL_DIAGRAM_READING, class_ranking,
                                 class_reference_draws, class_test_sentence, readable_class_ranking, top_label_table)
from calibviz.ui import current_predictions, page_setup
from calibviz.ui.blocks import download_table, not_applicable, panel_table, show_figure, show_headlines, \
    show_metric_table, zoom_bin_picker
from calibviz.ui.blocks import show_dataframe
from calibviz.ui.source import scan_dispatch
from calibviz.ui.compute import cached, progress_bar
from calibviz.ui.settings import panel_config, settings
from calibviz.ui.text import md

page_setup("Multiclass", controls=("binning", "uncertainty"))
scan_dispatch("Multiclass")  # an opened large file analysed on every page: its binned views (ui.scan_pages)
preds = current_predictions()
st.title("Multiclass calibration")
if preds.is_binary:
    not_applicable("This page does not apply to binary data: with two classes, confidence, top-label and class-wise "
                   "calibration all reduce to the reliability diagram of the Reliability page. Try the CIFAR-10 "
                   "demo on the Data page.")
    st.stop()
st.caption("A multiclass model makes several kinds of probability claims (Gupta & Ramdas 2022): the confidence "
           "('the top class is right with probability c'), the top label ('this label is right with probability "
           "c', per predicted class) and class-wise ('class k has probability q'). Each is checked as a binary "
           "reliability diagram.")
s = settings()
cfg = panel_config(s)
scheme = cfg.scheme()
fp = preds.fingerprint()
n_boot, seed = int(s["boot"]), int(s["seed"])
y, P, w, classes = preds.y, preds.probs, preds.weights, [str(c) for c in preds.classes]

panel = panel_table(y, P, w, "multiclass", fp,
                    metrics=("confidence_ece", "top_label_ece", "top_label_mce", "classwise_ece"))
left, right = st.columns([3, 2], gap="medium")
table = cached(("tl_table", fp, scheme, cfg.alpha), lambda: top_label_table(
    y, P, binning=scheme, classes=classes, sample_weight=w, alpha=cfg.alpha))
with left:
    st.subheader("Confidence (★) vs top-label (+)")
    fig = figures.top_label_diagram(table=table, title="")
    show_figure(fig, f"top_label_{preds.name}", key="tl")
    # under the diagram it explains: beside the readings it made the narrow column twice as long (a walk-through)
    st.caption(TOP_LABEL_DIAGRAM_READING)
with right:
    st.subheader("In plain words")
    show_headlines(panel, 4)

tab_metrics, tab_zoom, tab_tl, tab_cw = st.tabs(["Metrics", "Zoom into a bin", "Per predicted class",
                                                 "Class-wise grid"])
with tab_metrics:
    show_metric_table(panel, f"{preds.name}_multiclass")
with tab_zoom:
    pick = zoom_bin_picker(table)
    zoom = cached(("zoom", fp, scheme, pick), lambda: figures.bin_zoom(y, P, pick, binning=scheme, classes=classes,
                                                                       sample_weight=w, title=""))
    show_figure(zoom, f"bin_zoom_{preds.name}_{pick}", key="zoom")
with tab_tl:
    k = len(classes)
    offset = st.number_input("First class (by share of predictions)", min_value=0, max_value=max(0, k - 1),
                             value=0, step=20, key="w_tl_offset",
                             help="With many classes the panels are paged, 20 at a time.") if k > 20 else 0
    small = cached(("tl_small", fp, scheme, offset, cfg.alpha), lambda: figures.top_label_small_multiples(
        y, P, binning=scheme, classes=classes, sample_weight=w, alpha=cfg.alpha, top_n=20, offset=int(offset),
        title=""))
    show_figure(small, f"top_label_per_class_{preds.name}", key="tl_small")
    st.caption(GRID_READING)
with tab_cw:
    n_ref = class_reference_draws(len(classes), cfg.alpha, preds.n)

    def _ranking():
        with progress_bar("Ranking classes") as progress:
            return class_ranking(y, P, binning=scheme, classes=classes, sample_weight=w, n_resamples=n_boot,
                                 random_state=seed, progress=progress, n_reference=n_ref)

    ranking = cached(("class_ranking", fp, scheme, n_boot, seed, n_ref), _ranking)
    sentence = class_test_sentence(ranking, cfg.alpha, panel=panel, escape=md, strong=lambda t: f"**{t}**")
    st.markdown(sentence or f"The classes are not tested one by one on {preds.n:,} rows (the class-wise ECE's "
                            "verdict in the metric table judges them together).")
    k = len(classes)
    offset = st.number_input("First rank shown", min_value=0, max_value=max(0, k - 1), value=0, step=12,
                             key="w_cw_offset", help="Panels are ranked by class-wise ECE, largest first; "
                                                     "page through 12 at a time.") if k > 12 else 0
    grid = cached(("cw_grid", fp, scheme, n_boot, seed, offset, cfg.alpha), lambda: figures.classwise_grid(
        y, P, binning=scheme, classes=classes, sample_weight=w, alpha=cfg.alpha, ranking=ranking, top_n=12,
        offset=int(offset), title=""))
    show_figure(grid, f"classwise_{preds.name}", key="cw")
    st.caption(GRID_READING + (" " + CLASS_INTERVAL_READING if n_boot else ""))
    show_dataframe(readable_class_ranking(ranking))
    download_table(ranking, f"class_ranking_{preds.name}", label="Ranking as CSV", key="class_ranking")
