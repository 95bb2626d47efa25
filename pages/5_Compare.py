"""Compare: several models read against a reference the user chooses: better and worse on each metric (paired
bootstrap, intervals on request on large data), the reliability diagrams overlaid, the triptych (calibration vs
discrimination) and the diagrams side by side."""
import streamlit as st

from calibviz import figures, reduce
from calibviz.compare import comparison_metrics
from calibviz.ui import current_models, page_setup
from calibviz.ui.blocks import not_applicable, show_figure
from calibviz.ui.comparison import comparison_table, show_comparison
from calibviz.ui.source import scan_dispatch
from calibviz.ui.compute import cached, guarded
from calibviz.ui.corp import triptych
from calibviz.ui.settings import page_control, panel_config, set_setting, settings
from calibviz.ui.text import md

# the sidebar's "Model" picker chooses one model for the other pages; here the reference below does that
page_setup("Compare", controls=("binning", "uncertainty", "metrics"), model_picker=False)
scan_dispatch("Compare")  # an opened large file analysed on every page: its binned views (ui.scan_pages)
st.title("Compare models")
added = st.session_state.pop("cv_compare_added", None)
if added:  # arrived from the Recalibrate page's button
    st.success(f"Added the recalibrated predictions as models: {md(added)}.", icon=":material/check:")
models = current_models()
if len(models) < 2:
    not_applicable("This page does not apply to a single model: comparing needs several models of the same "
                   "examples. On the Data page, upload several files at once (one model per file), or one file with "
                   "one probability column per model (`logreg_proba`, `rf_proba`), a `model` column (one row per "
                   "example and model) or column groups such as `raw__p` and `calibrated__p`; the Recalibrate page "
                   "adds its recalibrated predictions here. The *Loan default before and after recalibration* demo "
                   "has two models.")
    st.stop()

names = list(models)
if settings()["ref"] not in names:  # a new file, or a link's model that is not in it: its first model
    set_setting("ref", names[0])
ref_col, info_col = st.columns([2, 3])
with ref_col:
    page_control("ref", st.selectbox, label="Reference model", options=names,
                 help="Every other model is read against this one: the differences, the better/worse sentences "
                      "and the triptych. It is kept in the page's link.")
s = settings()
ref = s["ref"]
cfg = panel_config(s)
kind = "binary" if next(iter(models.values())).is_binary else "confidence"
views = {name: reduce.views(p, kind)[0] for name, p in models.items()}
with info_col:
    st.caption(f"{len(models)} models, {'positive-class probability' if kind == 'binary' else 'confidence'} view; "
               f"differences, verdicts and the triptych are against **{md(ref)}**.")
fps = tuple(p.fingerprint() for p in models.values())
key = (tuple(models), fps, kind, cfg, s["interval"], s["band"])

st.subheader(f"Better or worse than {md(ref)}")
metrics = guarded(lambda: comparison_metrics(tuple(s["metrics"]), kind == "binary"))[0]
table = comparison_table(views, fps, s, cfg, ref, metrics)
show_comparison(table, ref)

overlay = cached(("compare_overlay",) + key, lambda: figures.reliability_diagram(
    {n: (v.y, v.p, v.w) for n, v in views.items()}, binning=cfg.scheme(), alpha=cfg.alpha, interval=s["interval"],
    title="Reliability diagrams overlaid"))
show_figure(overlay, "compare_overlay", key="overlay")

st.subheader("Calibration vs discrimination: which model is better, and why")
st.caption("The triptych of Dimitriadis, Gneiting, Jordan & Vogel (2024): the Brier score of each model split into "
           "miscalibration (MCB) and discrimination (DSC), the CORP reliability diagrams and the ROC curves.")
score_col, murphy_col = st.columns([2, 1])
with score_col:
    page_control("tscore", st.radio, label="Score", options=["brier", "log"], horizontal=True,
                 format_func={"brier": "Brier score", "log": "Log loss"}.get,
                 help="The proper score split into MCB − DSC + UNC; the log loss weighs confident mistakes more.")
with murphy_col:
    page_control("murphy", st.checkbox, label="Murphy diagram",
                 help="Mean elementary scores across decision thresholds (Ehm et al. 2016): a model whose curve "
                      "is lower everywhere is better for every cost of false alarms vs misses.")
s = settings()
# the whiskers follow the metric table: bootstrapped when its intervals are (automatic or requested)
triptych(views, fps, s, ref, n_boot=int(table.attrs.get("n_resamples", 0)))

st.subheader("Side by side")
if s["band"]:
    st.caption(f"The green bands hold for all bins of the {len(views)} diagrams together (probability 1 - α; each "
               f"at α / {len(views)}): a point outside is evidence at level α that its model is miscalibrated.")
cols = st.columns(min(len(views), 3))
for i, (name, v) in enumerate(views.items()):
    with cols[i % len(cols)]:
        fig = cached(("compare_single", name) + key, lambda v=v, name=name: figures.reliability_diagram(
            v.y, v.p, binning=cfg.scheme(), alpha=cfg.alpha, interval=s["interval"], sample_weight=v.w,
            show_band=bool(s["band"]), show_histogram=False, title=name,
            band_alpha=cfg.alpha / len(views)))  # the models' diagrams are read together: all bins of all of them
        show_figure(fig, f"reliability_{name}", key=f"single_{i}")
