"""Recalibrate: fit maps, see the honest (out-of-fold) before/after, along variables too; export predictions and maps."""
import streamlit as st

from calibviz.panel import format_value, p_value_words
from calibviz.ui import current_predictions, page_setup
from calibviz.ui.blocks import download_table, show_figure
from calibviz.ui.recalibrate import (METHOD_LABELS, before_after_figure, controls, corp_figure, downloads,
                                     maps_figure, metric_table, named_reading, open_in_compare, results,
                                     show_metric_table, variable_figures)
from calibviz.ui.settings import panel_config, settings
from calibviz.ui.text import md

page_setup("Recalibrate", controls=("binning", "uncertainty"))
preds = current_predictions()
st.title("Recalibrate")
st.caption("Can the miscalibration be fixed, and by how much? Each method's map is fitted on held-out folds and "
           "evaluated only on rows it did not see (cross-fitting), so the 'after' is what the map would do on new "
           "data. Export the map and apply it in production.")
choice = controls(preds)
if not choice["methods"]:
    st.info("Choose at least one method above.", icon=":material/info:")
    st.stop()
s = settings()
cfg = panel_config(s)
seed = int(s["seed"])
res = results(preds, choice, seed)
key = (preds.fingerprint(), tuple(choice["methods"]), choice["split"], int(choice["folds"]), choice["by"],
       choice["multiclass"], seed, cfg)
# each method's warnings once (levels left out are the same for every method; zero probabilities concern the
# methods fitted on log-probabilities)
for message in dict.fromkeys(m for cf in res.values() for m in cf.warnings()):
    st.warning(md(message), icon=":material/warning:")  # the column's name and levels are the user's text

st.subheader("Before and after")
tabs = st.tabs(["Binned", "CORP (isotonic, no bins)"] if preds.is_binary else ["Binned (confidence)"])
with tabs[0]:
    show_figure(before_after_figure(preds, res, cfg, key), f"recalibration_{preds.name}", key="recal_binned")
if preds.is_binary:
    with tabs[1]:
        show_figure(corp_figure(preds, res, key, cfg.alpha), f"recalibration_corp_{preds.name}", key="recal_corp")
metrics = choice["metrics"] if preds.is_binary else choice["mc_metrics"]
table = metric_table(preds, res, cfg, metrics, int(s["boot"]), seed, key)
st.markdown("**In plain words**")
st.markdown("\n".join(f"- {named_reading(r['method'], r['reading'], strong=True)}"
                       for _, r in table[table["metric"].isin([*metrics[:1], "brier"])].iterrows()))
st.subheader("Metrics before, after and the difference")
show_metric_table(table)
download_table(table, f"recalibration_metrics_{preds.name}", label="Metrics as CSV", key="recal_metrics")

st.subheader("The fitted maps")
st.caption("Prediction in, recalibrated prediction out: the line is the map fitted on all rows (the one you export), "
           "the shaded band the range of the maps fitted with one fold left out (wide = the map depends on which "
           "rows it saw). A map off the diagonal is what the method fits, not evidence that the model needs it: a "
           "calibrated model's maps leave the diagonal too (the band shows how much the map moves with the rows, "
           "not what a calibrated model would fit); whether recalibration helps is the out-of-fold metrics' verdict "
           "above." + ("" if preds.is_binary else " Multiclass: the recalibrated probability of the predicted "
                               "class, averaged over rows of similar confidence."))
show_figure(maps_figure(preds, res, key), f"recalibration_maps_{preds.name}", key="recal_maps")

numeric = [c for c in preds.numeric_features if preds.features[c].nunique() >= 10]
if numeric:
    st.subheader("Does the fix hold along a variable?")
    st.caption("A map fitted on all rows fixes the average; along a variable the model may stay over- or "
               "under-confident (Kelly & Smyth 2023). LOESS curves of actual vs predicted error on the out-of-fold "
               "rows, before and after.")
    c1, c2 = st.columns(2)
    with c1:
        feature = st.selectbox("Variable", numeric, key="recal_variable",
                               help="A numeric column of the data.")
    with c2:
        method = st.selectbox("Method", list(res), format_func=METHOD_LABELS.get, key="recal_var_method")
    before, after, v_before, v_after, p_after, n_draws = variable_figures(preds, res, method, feature, cfg.alpha, key)
    # judged by the after curve's test along the whole variable: VECE is above 0 for a calibrated model too, and
    # its ratio called 84-92% of calibrated models still miscalibrated along a variable
    words = p_value_words(p_after, n_draws)
    verdict = (f"after it, the error still differs from the predicted error along it beyond what a calibrated model "
               f"shows ({words} along the whole curve): recalibrate per group of it (above) or add it to the model"
               if p_after <= cfg.alpha else
               f"after it, no range of it is beyond what a calibrated model shows ({words} along the whole curve)")
    st.markdown(f"VECE along **{md(feature)}**: {format_value(v_before, 'probability')} before, "
                f"{format_value(v_after, 'probability')} after {METHOD_LABELS[method]}: {verdict}.")
    a, b = st.columns(2)
    with a:
        show_figure(before, f"variable_before_{feature}", key="recal_var_before")
    with b:
        show_figure(after, f"variable_after_{feature}", key="recal_var_after")

st.subheader("Export")
method = st.selectbox("Map to export", list(res), format_func=METHOD_LABELS.get, key="recal_export",
                      help="The predictions file gets this method's out-of-fold predictions as new columns.")
downloads(preds, res, method)
if st.button("Open the recalibrated predictions as models (Compare page)", icon=":material/compare_arrows:",
             key="recal_open", help="Adds one model per method to the current data; the Compare page then shows "
                                    "them next to the original."):
    st.session_state["cv_compare_added"] = open_in_compare(preds, res, choice, seed)
    st.switch_page("pages/5_Compare.py")  # the button's label promises the Compare page
