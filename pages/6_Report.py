"""Report: a self-contained HTML report of the current data with the current settings, to download."""
import streamlit as st

from calibviz.panel import metric_label
from calibviz.report import build_report, report_contents
from calibviz.ui import current_models, current_source, page_setup
from calibviz.ui.blocks import slug
from calibviz.ui.compute import guarded, progress_bar
from calibviz.ui.recalibrate import METHOD_LABELS
from calibviz.ui.settings import SCHEME_LABELS, panel_config, settings
from calibviz.ui.source import scan_active
from calibviz.ui.text import md

page_setup("Report", controls=("binning", "uncertainty", "metrics"))
models = current_models()
src = current_source()
st.title("Report")
st.caption("One HTML file to share after the review: plain-language summary, metrics with intervals, the diagrams, "
           "per-bin tables and how to regenerate it. It opens offline in any browser (plotly.js is embedded, "
           "about 5 MB).")

s = settings()
cfg = panel_config(s)
first = next(iter(models.values()))
source = src.get("demo") or src["name"]
options = dict(config=cfg, metrics=tuple(s["metrics"]) or None if first.is_binary else None,
               n_resamples=int(s["boot"]), random_state=int(s["seed"]), source=source,
               # the comparison as on the Compare page: the sidebar's metrics, the reference chosen there
               compare_metrics=tuple(s["metrics"]) or None, reference=s["ref"] if s["ref"] in models else None,
               load_options=src.get("options") or None)
recal_methods = tuple(st.session_state.get("cv_recal", {}).get("methods", ()))  # chosen on the Recalibrate page
if recal_methods and st.checkbox(f"Include recalibration: {', '.join(METHOD_LABELS[m] for m in recal_methods)} "
                                 "(as chosen on the Recalibrate page)", value=True, key="report_recal",
                                 help="Adds the out-of-fold before/after, the loss gained and the fitted maps."):
    options["recalibration"] = recal_methods
key = (tuple(p.fingerprint() for p in models.values()), repr(sorted(options.items(), key=lambda kv: kv[0])))

left, right = st.columns(2, gap="medium")
with left:
    st.subheader("What it will contain")
    st.markdown("\n".join(f"- {section}" for section in report_contents(models, options.get("recalibration"))))
with right:
    st.subheader("With these settings")
    st.markdown(f"- Data: **{md(src.get('title') or src['name'])}** · {len(models)} model{'s' * (len(models) > 1)}, "
                f"{first.n:,} rows\n"
                f"- Binning: {SCHEME_LABELS.get(cfg.binning, cfg.binning)}"
                + (f", {cfg.n_bins} bins" if cfg.binning in ("uniform", "equal_mass") else "") + "\n"
                f"- Significance level α = {cfg.alpha:g}; bootstrap: {options['n_resamples']} resamples, "
                f"seed {options['random_state']}\n"
                "- Metrics: " + (", ".join(map(metric_label, options["metrics"])) if options["metrics"]
                                 else "the default panel"))
    st.caption("Change them in the sidebar; the report records them in its reproducibility block.")

built = st.session_state.get("cv_report")
# while a file is opened for the other pages, the button names the data it reports on (a walk-through pressed it
# expecting the opened file's report; the notice above gives that one's command)
label = f"Build the report of {src.get('title') or src['name']}" if scan_active() else "Build the report"
file_name = f"calibviz_report_{slug(source)}.html"  # the download's name, which the report's commands write to
if st.button(label, type="primary", key="build_report", icon=":material/description:"):
    with progress_bar("Building the report") as progress:
        report = guarded(lambda: build_report(models, progress=progress, output=file_name, **options))
    st.session_state["cv_report"] = built = (key, report)
if built and built[0] == key:
    page = built[1].encode("utf-8")
    st.download_button("Download the report (HTML)", data=page, file_name=file_name,
                       mime="text/html", key="download_report", icon=":material/download:",
                       help="A self-contained HTML file: open it in a browser, offline.")
    st.caption(f"{len(page) / 1e6:.1f} MB, built for the current data and settings.")
else:
    st.info("Press *Build the report*; with many bootstrap resamples it takes a few seconds per model "
            "(set *Bootstrap resamples* to 0 in the sidebar for the fastest report).", icon=":material/info:")
