"""Compare: several models side by side and overlaid, the triptych (calibration vs discrimination), metric table
with intervals and differences."""
import pandas as pd
import streamlit as st

from calibviz import figures, reduce
from calibviz.panel import BINARY_METRICS, compare_models, format_interval, format_value
from calibviz.ui import current_models, page_setup
from calibviz.ui.blocks import download_table, not_applicable, show_figure
from calibviz.ui.compute import cached, progress_bar
from calibviz.ui.corp import triptych
from calibviz.ui.settings import page_control, panel_config, set_setting, settings
from calibviz.ui.text import md

page_setup("Compare", controls=("binning", "uncertainty", "metrics"))
st.title("Compare models")
models = current_models()
if len(models) < 2:
    not_applicable("This page does not apply to a single model: comparing needs several models in one file: a `model` column (one row per example and model) "
                   "or column groups such as `raw__p` and `calibrated__p`. The *Loan default before and after "
                   "recalibration* demo on the Data page has two.")
    st.stop()

s = settings()
cfg = panel_config(s)
kind = "binary" if next(iter(models.values())).is_binary else "confidence"
views = {name: reduce.views(p, kind)[0] for name, p in models.items()}
st.caption(f"{len(models)} models, {'positive-class probability' if kind == 'binary' else 'confidence'} view; the "
           f"first model ({next(iter(models))}) is the reference for differences.")
fps = tuple(p.fingerprint() for p in models.values())
key = (tuple(models), fps, kind, cfg, s["interval"], s["band"])

overlay = cached(("compare_overlay",) + key, lambda: figures.reliability_diagram(
    {n: (v.y, v.p, v.w) for n, v in views.items()}, binning=cfg.scheme(), alpha=cfg.alpha, interval=s["interval"],
    title="Reliability diagrams overlaid"))
show_figure(overlay, "compare_overlay", key="overlay")

st.subheader("Calibration vs discrimination: which model is better, and why")
st.caption("The triptych of Dimitriadis, Gneiting, Jordan & Vogel (2024): the Brier score of each model split into "
           "miscalibration (MCB) and discrimination (DSC), the CORP reliability diagrams and the ROC curves.")
names = list(models)
ref_col, score_col, murphy_col = st.columns([2, 2, 1])
with ref_col:
    if s["ref"] not in names:  # a new file: its first model
        set_setting("ref", names[0])
    page_control("ref", st.selectbox, label="Reference model", options=names,
                 help="Each other model is read against this one: does it lose on calibration or on discrimination?")
with score_col:
    page_control("tscore", st.radio, label="Score", options=["brier", "log"], horizontal=True,
                 format_func={"brier": "Brier score", "log": "Log loss"}.get,
                 help="The proper score split into MCB − DSC + UNC; the log loss weighs confident mistakes more.")
with murphy_col:
    page_control("murphy", st.checkbox, label="Murphy diagram",
                 help="Mean elementary scores across decision thresholds (Ehm et al. 2016): a model whose curve "
                      "is lower everywhere is better for every cost of false alarms vs misses.")
s = settings()
triptych(views, fps, s, s["ref"])

st.subheader("Metrics with 95% intervals and differences to the reference")
metrics = tuple(s["metrics"]) or ("ece",)


def _table():
    with progress_bar("Bootstrapping metric differences") as progress:
        return compare_models({n: (v.y, v.p, v.w) for n, v in views.items()}, metrics=metrics, config=cfg,
                              n_resamples=int(s["boot"]), random_state=int(s["seed"]), progress=progress)


table = cached(("compare_table", metrics, int(s["boot"]), int(s["seed"])) + key, _table)
units = [BINARY_METRICS[k].unit for k in table["metric"]]  # each metric in its unit's one format
signed = lambda v, u: ("+" if v > 0 else "") + format_value(v, u)  # noqa: E731
shown = pd.DataFrame({
    "Metric": table["label"], "Model": table["model"], "Value": map(format_value, table["value"], units),
    "95% interval": map(format_interval, table["low"], table["high"], units),
    "Difference": map(signed, table["diff"], units),
    "Difference interval": [f"{signed(lo, u)} – {signed(hi, u)}" if pd.notna(lo) else "" for lo, hi, u in
                            zip(table["diff_low"], table["diff_high"], units)],
})
st.dataframe(shown, hide_index=True, width="stretch")
better = table[(table["model"] != next(iter(models))) & (table["diff_high"] < 0)]
for _, r in better.iterrows():
    u = BINARY_METRICS[r["metric"]].unit
    st.markdown(f"- **{md(r['model'])}** has a lower {r['label']} than {md(next(iter(models)))} "
                f"({format_value(r['value'], u)} vs {format_value(r['value'] - r['diff'], u)}), beyond the "
                "bootstrap noise.")
download_table(table, "compare_metrics", key="compare")

st.subheader("Side by side")
cols = st.columns(min(len(views), 3))
for i, (name, v) in enumerate(views.items()):
    with cols[i % len(cols)]:
        fig = cached(("compare_single", name) + key, lambda v=v, name=name: figures.reliability_diagram(
            v.y, v.p, binning=cfg.scheme(), alpha=cfg.alpha, interval=s["interval"], sample_weight=v.w,
            show_band=bool(s["band"]), show_histogram=False, title=name))
        show_figure(fig, f"reliability_{name}", key=f"single_{i}")
