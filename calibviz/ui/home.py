"""Widgets of the home (data) page: source picker, column mapping, data summary."""
from __future__ import annotations

import streamlit as st

from ..demo import DEMOS, demo_datasets
from ..errors import InputError
from .. import reduce
from ..overview import class_table, data_overview
from .text import md
from .blocks import _format_interval, _format_reference, _format_value, _verdict_badge, panel_table, show_headlines
from .data import (current_models, current_predictions, current_source, detected_mapping, load_bytes_into_state,
                   load_demo_into_state, on_upload, pending_file, raw_table, take_error)

__all__ = ["source_picker", "load_messages", "mapping_editor", "data_summary", "headline_metrics", "next_steps",
           "mean_gap_reading"]

_NONE = "(none)"
_AUTO = "(auto-detect)"


def _on_demo_change() -> None:
    load_demo_into_state(st.session_state["cv_demo_pick"])


def source_picker() -> None:
    """Demo selector and file uploader side by side."""
    left, right = st.columns(2)
    with left:
        src = current_source()
        names = demo_datasets()
        current = src.get("demo", names[0])
        st.selectbox("Demo dataset", names, index=names.index(current) if current in names else 0,
                     key="cv_demo_pick", format_func=lambda n: DEMOS[n].title, on_change=_on_demo_change,
                     help="Ready-made predictions to explore; each tells a calibration story.")
        st.caption(DEMOS[st.session_state.get("cv_demo_pick", current)].story)
        if src["kind"] != "demo":
            st.info(f"Showing your file **{md(src['name'])}**.", icon=":material/upload_file:")
            if st.button("Show the selected demo instead", key="cv_back_to_demo",
                         help="Your file stays uploaded; upload it again to come back to it."):
                load_demo_into_state(st.session_state.get("cv_demo_pick", current))
                st.rerun()
    with right:
        # No type= filter: calibviz's reader names the problem with any file, which is more helpful than a
        # browser-side refusal (and Streamlit's server-side check raises instead of explaining).
        st.file_uploader("Or upload predictions", key="cv_upload", on_change=on_upload,
                         help="One row per example: a label column and probability columns (p, or p_<class> per "
                              "class); other columns become features. CSV, TSV, Parquet or Excel.")


def load_messages() -> None:
    """Show the last load error (the previous data stays loaded) and the loader's notes."""
    err = take_error()
    if err:
        st.error(f"{md(err)}\n\nThe previously loaded data is still shown.", icon=":material/error:")
    preds = current_predictions()
    for note in preds.notes:
        st.info(f"Note: {md(note)}.", icon=":material/info:")


def _file_for_mapping() -> tuple[bytes, str, bool] | None:
    pend = pending_file()
    if pend is not None:
        return pend["data"], pend["name"], True
    src = current_source()
    data = st.session_state.get("cv_bytes")
    return (data, src["name"], False) if data is not None else None


def mapping_editor() -> None:
    """Column mapping with the detected defaults, editable; Apply re-loads the file with them."""
    found = _file_for_mapping()
    if found is None:
        return
    data, name, is_pending = found
    try:
        frame = raw_table(data, name).frame
    except InputError:
        return  # the read error is already shown by load_messages
    columns = list(frame.columns)
    try:
        mapping = detected_mapping(data, name)
    except InputError:
        mapping = None
    title = f"Column mapping of {md(name)}" + (" (needs your input)" if is_pending else "")
    with st.expander(title, expanded=is_pending):
        if mapping is not None:
            groups = ", ".join(f"{md(m)}: {', '.join(map(md, c))}" for m, c in mapping.probs.items())
            st.caption(f"Detected: label **{md(mapping.label)}**, probabilities {groups}, classes "
                       f"{', '.join(map(md, mapping.classes[:12]))}"
                       + (f", model column **{md(mapping.model)}**" if mapping.model else "")
                       + (f", weight **{md(mapping.weight)}**" if mapping.weight else "") + ".")
        with st.form("cv_mapping_form"):
            c1, c2, c3 = st.columns(3)
            label = c1.selectbox("Label column", columns,
                                 index=columns.index(mapping.label) if mapping else 0,
                                 help="The column with the true class of each row.")
            multi_group = mapping is not None and len(mapping.probs) > 1
            default_probs = [] if (mapping is None or multi_group) else list(next(iter(mapping.probs.values())))
            probs = c2.multiselect("Probability columns", columns, default=default_probs,
                                   help="One column (P of the positive class, binary) or one per class. "
                                        "Leave empty to auto-detect (also finds several models).")
            positive = c3.text_input("Positive class (binary, one column)",
                                     value="" if mapping is None or not mapping.is_binary else str(mapping.classes[1]),
                                     help="The class whose probability a single column holds.")
            c4, c5, c6 = st.columns(3)
            weight = c4.selectbox("Weight column", [_NONE, *columns],
                                  index=(columns.index(mapping.weight) + 1) if mapping and mapping.weight else 0,
                                  help="Optional sample weights (non-negative).")
            model = c5.selectbox("Model column (long format)", [_NONE, *columns],
                                 index=(columns.index(mapping.model) + 1) if mapping and mapping.model else 0,
                                 help="Optional: a column naming the model of each row, for several models.")
            logits = c6.checkbox("Columns hold logits", value=False,
                                 help="Apply the sigmoid (one column) or softmax (several) first.")
            renormalize = c6.checkbox("Renormalise rows", value=False,
                                      help="Divide each probability row by its sum when rows do not sum to 1.")
            if st.form_submit_button("Apply mapping", type="primary"):
                ok = load_bytes_into_state(
                    data, name, label=label, probs=probs or None, positive=positive.strip() or None,
                    weight=None if weight == _NONE else weight, model=None if model == _NONE else model,
                    logits=logits, renormalize=renormalize,
                )
                if ok:
                    st.session_state.pop("cv_pending", None)
                st.rerun()


def mean_gap_reading(predicted: float, observed: float, positive_class=None) -> str:
    """The home page's sentence on calibration in the large, in percentage points with one decimal.

    Binary (``positive_class`` given): mean prediction vs prevalence;
    multiclass: mean confidence vs accuracy. A gap that rounds to 0.0
    points at that precision reads "matches (within 0.05 percentage
    points)", never "under-predicts ... by 0.0 percentage points".

    Examples
    --------
    >>> mean_gap_reading(0.1662, 0.1660, 1)
    'On average the model **matches** the rate of *1* (within 0.05 percentage points: 16.6% predicted vs 16.6% observed).'
    >>> mean_gap_reading(0.20, 0.166, 1)
    'On average the model **over-predicts** the rate of *1* by 3.4 percentage points (20.0% predicted vs 16.6% observed).'
    >>> mean_gap_reading(0.95, 0.93)
    'The model is **overconfident** on average: its mean confidence is 95.0% for an accuracy of 93.0% (2.0 percentage points apart).'
    """
    points = round(abs(predicted - observed) * 100, 1)
    if positive_class is not None:
        if points == 0:
            return (f"On average the model **matches** the rate of *{positive_class}* (within 0.05 percentage "
                    f"points: {predicted:.1%} predicted vs {observed:.1%} observed).")
        direction = "over" if predicted > observed else "under"
        return (f"On average the model **{direction}-predicts** the rate of *{positive_class}* by {points:.1f} "
                f"percentage points ({predicted:.1%} predicted vs {observed:.1%} observed).")
    if points == 0:
        return (f"The model's mean confidence **matches** its accuracy on average (within 0.05 percentage points: "
                f"{predicted:.1%} confidence for an accuracy of {observed:.1%}).")
    return (f"The model is **{'over' if predicted > observed else 'under'}confident** on average: its mean "
            f"confidence is {predicted:.1%} for an accuracy of {observed:.1%} ({points:.1f} percentage points "
            "apart).")


def data_summary() -> None:
    """Rows, classes, prevalence/accuracy and the class table of the selected model."""
    preds = current_predictions()
    o = data_overview(preds)
    cols = st.columns(5)
    cols[0].metric("Rows", f"{o['rows']:,}", help="Number of predictions (rows) of this model.")
    cols[1].metric("Classes", o["classes"], help="Number of classes of the label.")
    if preds.is_binary:
        cols[2].metric(f"Prevalence of {o['positive_class']}", f"{o['prevalence']:.1%}",
                       help="Share of rows whose label is the positive class.")
        cols[3].metric("Mean prediction", f"{o['mean_prediction']:.1%}",
                       help="Average predicted probability of the positive class; far from the prevalence means "
                            "miscalibration in the large.")
    else:
        cols[2].metric("Accuracy", f"{o['accuracy']:.1%}", help="Share of rows whose top class is the true class.")
        cols[3].metric("Mean confidence", f"{o['mean_confidence']:.1%}",
                       help="Average top probability; above the accuracy means overconfidence on average.")
    cols[4].metric("Features", o["features"], help="Other columns, available on the Variables page.")
    if preds.is_binary:
        st.markdown(mean_gap_reading(o["mean_prediction"], o["prevalence"], o["positive_class"]))
    else:
        st.markdown(mean_gap_reading(o["mean_confidence"], o["accuracy"]))
        with st.expander("Classes"):
            st.dataframe(class_table(preds), hide_index=True)
    if len(preds.features.columns):
        st.caption("Feature columns: " + ", ".join(map(md, preds.features.columns)))


def headline_metrics() -> None:
    """Three headline calibration numbers with intervals, the calibrated-model reference, one verdict each and
    their plain-language readings."""
    preds = current_predictions()
    if preds.is_binary:
        view = reduce.views(preds, "binary")[0]
        table = panel_table(view.y, view.p, view.w, view.name, preds.fingerprint(),
                            metrics=("ece", "tce", "smooth_ece"))
    else:
        table = panel_table(preds.y, preds.probs, preds.weights, "multiclass", preds.fingerprint(),
                            metrics=("confidence_ece", "top_label_ece", "classwise_ece"))
    cols = st.columns(len(table))
    for col, (_, row) in zip(cols, table.iterrows()):
        interval = _format_interval(row)
        col.metric(row["label"], _format_value(row), help=row["description"])
        if interval:
            col.caption(f"95% interval {interval}")
        reference = _format_reference(row)
        if reference:
            col.caption(f"a calibrated model would show {reference}")
        badge = _verdict_badge(row)
        if badge:
            col.markdown(badge)
    show_headlines(table, len(table))


def next_steps() -> None:
    """Where to look next, given what the data holds."""
    preds = current_predictions()
    models = current_models()
    st.page_link("pages/1_Reliability.py", label="Reliability: the diagram, all metrics, bin by bin",
                 icon=":material/show_chart:")
    st.page_link("pages/2_Test_based.py", label="Test-based: which predictions deviate significantly (TCE)",
                 icon=":material/rule:")
    if not preds.is_binary:
        st.page_link("pages/3_Multiclass.py", label="Multiclass: confidence vs top-label, class by class",
                     icon=":material/category:")
    if len(preds.features.columns):
        st.page_link("pages/4_Variables.py", label=f"Variables: calibration along {len(preds.features.columns)} "
                     "feature columns", icon=":material/tune:")
    if len(models) > 1:
        st.page_link("pages/5_Compare.py", label=f"Compare the {len(models)} models", icon=":material/compare_arrows:")
