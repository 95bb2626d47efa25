"""Widgets of the home (data) page: source picker, column mapping, data summary."""
from __future__ import annotations

import streamlit as st

from ..demo import DEMOS, demo_datasets
from ..io.mapping import guess_label, guess_probs, model_names
from ..io.readers import DECIMALS, DELIMITERS, ENCODINGS
from ..errors import InputError
from .. import reduce
from ..overview import class_table, data_overview, mean_gap
from ..panel import p_value_words
from .compute import cached
from .settings import settings
from .text import md
from .blocks import (_format_interval, _format_reference, _format_value, _verdict_badge, family_caption, panel_table,
                     show_headlines)
from .blocks import show_dataframe
from .data import (current_files, current_models, current_predictions, current_source, detected_mapping,
                   error_hint, load_bytes_into_state, load_demo_into_state, load_files_into_state, on_upload,
                   pending_file, raw_table, sheet_names, take_error)

__all__ = ["source_picker", "load_messages", "mapping_editor", "data_summary", "headline_metrics", "next_steps",
           "mean_gap_reading"]

_NONE = "(none)"
_AUTO = "(auto-detect)"


def _on_demo_change() -> None:
    if st.session_state.get("cv_demo_pick") is not None:
        load_demo_into_state(st.session_state["cv_demo_pick"])


def source_picker() -> None:
    """Demo selector and file uploader side by side."""
    left, right = st.columns(2)
    with left:
        src = current_source()
        names = demo_datasets()
        current = src.get("demo", names[0])
        if src["kind"] != "demo":  # an uploaded file is shown: the dropdown names no demo until one is picked
            st.session_state["cv_demo_pick"] = None
        st.selectbox("Demo dataset", names, index=names.index(current) if current in names else 0,
                     key="cv_demo_pick", format_func=lambda n: DEMOS[n].title, on_change=_on_demo_change,
                     placeholder="Your file is shown: pick a demo to switch",
                     help="Ready-made predictions to explore; each tells a calibration story.")
        picked = st.session_state.get("cv_demo_pick") or current
        if src["kind"] == "demo":
            st.caption(DEMOS[picked].story)
        if src["kind"] != "demo":
            st.info(f"Showing your file **{md(src['name'])}**.", icon=":material/upload_file:")
            # the demo's whole title did not fit the button at 1280 px ("... 20 000 patients) d…", a walk-through)
            if st.button("Show the demo instead", key="cv_back_to_demo",
                         help=f"Shows the {DEMOS[picked].title} demo. Your file stays uploaded; upload it again to "
                              "come back to it."):
                load_demo_into_state(picked)
                st.rerun()
    with right:
        # No type= filter: calibviz's reader names the problem with any file, which is more helpful than a
        # browser-side refusal (and Streamlit's server-side check raises instead of explaining).
        st.file_uploader("Or upload predictions", key="cv_upload", on_change=on_upload, accept_multiple_files=True,
                         help="One row per example: a label column and probability columns (p, p_<class> per "
                              "class, or <model>_proba per model); other columns become features. CSV, TSV, Parquet "
                              "or Excel. Several files at once are several models, each named after its file: rows "
                              "are matched by an id column if the files have one, else they must list the same "
                              "labels in the same order.")


def load_messages() -> None:
    """Show the last load error (the previous data stays loaded) and the loader's notes."""
    err = take_error()
    if err:
        st.error(f"{md(err)}\n\nThe previously loaded data is still shown.", icon=":material/error:")
    preds = current_predictions()
    for note in preds.notes:
        st.info(f"Note: {md(note)}.", icon=":material/info:")


def _file_for_mapping() -> dict | None:
    """The file the mapping panel edits: ``{data, name, pending, files}`` (``files``: several uploaded at once)."""
    pend = pending_file()
    if pend is not None:
        return {"data": pend["data"], "name": pend.get("file_name", pend["name"]), "title": pend["name"],
                "pending": True, "files": pend.get("files")}
    src = current_source()
    several = current_files() if src.get("files") else None
    if several is not None:
        first_name, first_data = several["files"][0]
        return {"data": first_data, "name": first_name, "title": src["name"], "pending": False,
                "files": several["files"], "options": several["options"]}
    data = st.session_state.get("cv_bytes")
    if data is None:
        return None
    return {"data": data, "name": src["name"], "title": src["name"], "pending": False, "files": None,
            "options": src.get("options", {})}


_ENCODING_LABELS = {None: _AUTO}
_DELIMITER_CHOICES = [None, *DELIMITERS]
_DECIMAL_CHOICES = [None, *DECIMALS]
_PER_CLASS, _PER_MODEL = "one class each", "one model each"
#: Largest number of label values offered as positive classes (a label with more is multiclass anyway).
_MAX_POSITIVE_CHOICES = 200


def _index(options: list, value, default: int = 0) -> int:
    return options.index(value) if value in options else default


def _reading_controls(key: str, preset: dict) -> dict:
    """Encoding, delimiter and decimal of a text file (#16), auto-detected unless chosen."""
    c1, c2, c3 = st.columns(3)
    encodings = [None, *ENCODINGS]
    encoding = c1.selectbox("Encoding", encodings, index=_index(encodings, preset.get("encoding")),
                            format_func=lambda e: _AUTO if e is None else e, key=f"cv_map_encoding_{key}",
                            help="Text encoding of the file. Auto-detect reads UTF-8 (with or without BOM) and "
                                 "UTF-16 with BOM; Windows exports are often cp1252, older European ones latin-1.")
    delimiter = c2.selectbox("Delimiter", _DELIMITER_CHOICES, index=_index(_DELIMITER_CHOICES, preset.get("delimiter")),
                             format_func=lambda d: _AUTO if d is None else DELIMITERS[d], key=f"cv_map_delimiter_{key}",
                             help="Field separator; auto-detect tries comma, tab, semicolon and pipe.")
    decimal = c3.selectbox("Decimal", _DECIMAL_CHOICES, index=_index(_DECIMAL_CHOICES, preset.get("decimal")),
                           format_func=lambda d: _AUTO if d is None else f"{DECIMALS[d]} ({d})",
                           key=f"cv_map_decimal_{key}",
                           help="Decimal mark of the numbers. Auto-detect takes a comma (0,25) in files that are not "
                                "comma-separated when no number uses a point.")
    return {"encoding": encoding, "delimiter": delimiter, "decimal": decimal}


def _sheet_control(key: str, data: bytes, preset: dict) -> dict:
    """The Sheet of a workbook with several (the first by default); {} for other binary files."""
    sheets = sheet_names(data)
    if len(sheets) < 2:
        return {}
    sheet = st.selectbox("Sheet", sheets, index=_index(sheets, preset.get("sheet")), key=f"cv_map_sheet_{key}",
                         help="The worksheet that holds the predictions; the first one is read by default.")
    return {"sheet": None if sheet == sheets[0] else sheet}


def _label_classes(frame, label: str) -> list:
    values = frame[label].dropna().unique()
    if len(values) > _MAX_POSITIVE_CHOICES:
        return []
    try:
        return sorted(values.tolist())
    except TypeError:
        return sorted(values.tolist(), key=str)


def mapping_editor() -> None:
    """Column mapping with the detected defaults, editable; Apply re-loads the file (or files) with them.

    Reading options (encoding, delimiter, decimal mark) come first for text files, so a file that cannot be
    read yet can be fixed here; the last error's hint (e.g. ``{"encoding": "cp1252"}``) preselects its fix.
    The positive class is chosen among the label's values; several probability columns of a binary label
    are read as one class each or one model each.
    """
    found = _file_for_mapping()
    if found is None:
        return
    data, name, is_pending, files = found["data"], found["name"], found["pending"], found["files"]
    hint = error_hint() if is_pending else {}
    preset = {**found.get("options", {}), **hint}
    key = _digest_key(data)
    # "needs your input" read as if a mapping could fix any error, also values outside [0, 1] (a walk-through)
    title = f"Column mapping of {md(found['title'])}" + (" (not loaded: check the columns)" if is_pending else "")
    if files:
        title += f" (applies to each of the {len(files)} files)"
    text_file = not data[:4] == b"PAR1" and not data[:2] == b"PK"
    with st.expander(title, expanded=is_pending):
        reading = _reading_controls(key, preset) if text_file else {}
        # the Sheet of the first workbook among the files (several files: the options apply to each; a CSV
        # ignores it), also beside a text file's reading options
        workbook = next((d for d in ([f[1] for f in files] if files else [data]) if bytes(d[:2]) == b"PK"), None)
        if workbook is not None:
            reading.update(_sheet_control(key, workbook, preset))
        chosen_reading = {k: v for k, v in reading.items() if v is not None}
        try:
            frame = raw_table(data, name, **chosen_reading).frame
        except InputError as exc:
            if chosen_reading:  # options the user chose: what they give
                st.warning(f"With these reading options: {md(exc.ui_message)}", icon=":material/warning:")
            else:  # auto-detected: the error above already says it
                st.caption("The file cannot be read with the detected options: choose the encoding, delimiter or "
                           "decimal mark above.")
            return
        columns = list(frame.columns)
        try:
            mapping = detected_mapping(data, name, **chosen_reading)
        except InputError:
            mapping = None
        if mapping is not None:
            groups = (", ".join(map(md, next(iter(mapping.probs.values())))) if len(mapping.probs) == 1 else
                      ", ".join(f"{md(m)}: {', '.join(map(md, c))}" for m, c in mapping.probs.items()))
            seen = _label_classes(frame, mapping.label)
            # a binary probability column implies two classes: say when the labels hold one (the error above
            # says "only one class occurs"; "classes 0, 1" alone read as a contradiction)
            only = f" (only {md(seen[0])} occurs in the labels)" if len(seen) == 1 else ""
            st.caption(f"Detected: label **{md(mapping.label)}**, probabilities {groups}, classes "
                       f"{', '.join(map(md, mapping.classes[:12]))}{only}"
                       + (f", model column **{md(mapping.model)}**" if mapping.model else "")
                       + (f", weight **{md(mapping.weight)}**" if mapping.weight else "") + ".")
        c1, c3 = st.columns(2)
        guess = mapping.label if mapping else guess_label(columns)
        label = c1.selectbox("Label column", columns, index=_index(columns, preset.get("label", guess)),
                             key=f"cv_map_label_{key}", help="The column with the true class of each row.")
        per_model_detected = mapping is not None and len(mapping.probs) > 1 and mapping.model is None and all(
            len(c) == 1 for c in mapping.probs.values())
        if mapping is None or (len(mapping.probs) > 1 and not per_model_detected):
            default_probs = [c for c in hint.get("probs", []) if c in columns]
            if mapping is None and not default_probs:
                default_probs = guess_probs(columns)
        else:
            default_probs = [c for cols in mapping.probs.values() for c in cols]
        # the whole width: ten class columns in a third of it showed as "p_airpl…" (a browser review)
        probs = st.multiselect("Probability columns", [c for c in columns if c != label],
                               default=[c for c in default_probs if c != label], key=f"cv_map_probs_{key}",
                               help="One column (P of the positive class, binary), one per class, or one per model "
                                    "(binary). Leave empty to auto-detect (also finds several models).")
        classes = _label_classes(frame, label)
        binary = len(classes) <= 2
        positive_default = preset.get("positive", mapping.classes[1] if mapping and mapping.is_binary else None)
        positive_options = [None, *classes] if binary else [None]
        positive = c3.selectbox(
            "Positive class", positive_options,
            index=_index([None if v is None else str(v) for v in positive_options],
                         None if positive_default is None else str(positive_default)),
            format_func=lambda v: _AUTO if v is None else str(v), key=f"cv_map_positive_{key}_{label}",
            disabled=not binary,
            help="The class whose probability a single column holds (binary data); with one column per class, "
                 "the class shown as the positive one." if binary else "Multiclass label: no positive class.")
        per_model = False
        if binary and len(probs) >= 2:
            layout = st.radio("The probability columns hold", [_PER_CLASS, _PER_MODEL], horizontal=True,
                              index=1 if (per_model_detected or hint.get("per_model")) else 0,
                              key=f"cv_map_layout_{key}",
                              help="One class each: P(class) of one model, rows sum to 1. One model each: every "
                                   "column is P(positive class) of its own model (e.g. logreg_proba, rf_proba).")
            per_model = layout == _PER_MODEL
        c4, c5, c6 = st.columns(3)
        weight = c4.selectbox("Weight column", [_NONE, *columns],
                              index=_index([_NONE, *columns], mapping.weight if mapping else None),
                              key=f"cv_map_weight_{key}", help="Optional sample weights (non-negative).")
        model = c5.selectbox("Model column (long format)", [_NONE, *columns],
                             index=_index([_NONE, *columns], mapping.model if mapping else None),
                             key=f"cv_map_model_{key}",
                             help="Optional: a column naming the model of each row, for several models.")
        logits = c6.checkbox("Columns hold logits", value=bool(preset.get("logits", False)), key=f"cv_map_logits_{key}",
                             help="Apply the sigmoid (one column) or softmax (several) first.")
        renormalize = c6.checkbox("Renormalise rows", value=bool(preset.get("renormalize", False)),
                                  key=f"cv_map_renormalize_{key}",
                                  help="Divide each probability row by its sum: for rows that miss 1 by rounding.")
        drop_invalid = c6.checkbox("Drop invalid rows", value=bool(preset.get("drop_invalid", False)),
                                   key=f"cv_map_drop_invalid_{key}",
                                   help="Leave out rows with an empty label, probability, weight or model name, and "
                                        "rows with wrong values (a probability outside [0, 1], a label outside the "
                                        "classes, ...) while they are under 5% of the rows; a note on the Data page "
                                        "counts them.")
        if st.button("Apply mapping", type="primary", key=f"cv_map_apply_{key}"):
            if per_model:
                mapped = {name: [c] for c, name in model_names(probs, classes).items()}
            else:
                mapped = probs or None
            if hasattr(positive, "item"):  # numpy scalars: the options are kept as JSON with the upload
                positive = positive.item()
            options = dict(label=label, probs=mapped, positive=positive,
                           weight=None if weight == _NONE else weight, model=None if model == _NONE else model,
                           logits=logits, renormalize=renormalize, drop_invalid=drop_invalid, **chosen_reading)
            if files:
                ok = load_files_into_state(files, **options)
            else:
                ok = load_bytes_into_state(data, name, **options)
            if ok:
                st.session_state.pop("cv_pending", None)
            st.rerun()


def _digest_key(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data[:1 << 20] + len(data).to_bytes(8, "little")).hexdigest()[:10]


def mean_gap_reading(predicted: float, observed: float, positive_class=None, *, p_value: float = float("nan"),
                     n_draws: int = 0, alpha: float = 0.05, model: str | None = None) -> str:
    """The home page's sentence on calibration in the large, in percentage points with one decimal.

    Binary (``positive_class`` given): mean prediction vs prevalence; multiclass: mean confidence vs accuracy.
    The direction ("over-predicts", "overconfident") is claimed only where the gap is beyond what a calibrated
    model shows (``p_value`` of :func:`calibviz.overview.mean_gap_test` at most ``alpha``, from ``n_draws`` null
    draws): a gap is never exactly 0, and read by its sign alone it called 88-95% of calibrated models over- or
    under-predicting. Otherwise, and without a p-value, it "matches within chance"; a gap that rounds to 0.0
    points reads "matches (within 0.05 percentage points)".

    Examples
    --------
    >>> mean_gap_reading(0.1662, 0.1660, 1)
    'On average the model **matches** the rate of *1* (within 0.05 percentage points: 16.6% predicted vs 16.6% observed).'
    >>> mean_gap_reading(0.20, 0.166, 1, p_value=1 / 4001, n_draws=4000)
    'On average the model **over-predicts** the rate of *1* by 3.4 percentage points (20.0% predicted vs 16.6% observed; p ≤ 0.00025 against a calibrated model).'
    >>> mean_gap_reading(0.169, 0.166, 1, p_value=0.41)
    'On average the model **matches** the rate of *1* within chance: 16.9% predicted vs 16.6% observed, 0.3 percentage points apart (p = 0.41 against a calibrated model).'
    >>> mean_gap_reading(0.95, 0.93, p_value=0.002)
    'The model is **overconfident** on average: its mean confidence is 95.0% for an accuracy of 93.0% (2.0 percentage points apart; p = 0.002 against a calibrated model).'
    >>> mean_gap_reading(0.169, 0.166, 1, p_value=0.41, model="rf")[:43]
    'On average the model “rf” **matches** the r'

    ``model``: the selected model's name (Markdown-escaped), said where several are loaded.
    """
    the = f"the model “{model}”" if model else "the model"  # quoted: "the model raw matches" read as a typo
    The = the[0].upper() + the[1:]
    points = round(abs(predicted - observed) * 100, 1)
    beyond = bool(p_value <= alpha)  # NaN: no test, no direction claimed
    p_text = f"{p_value_words(p_value, n_draws)} against a calibrated model" if p_value == p_value else ""
    if positive_class is not None:
        if points == 0:
            return (f"On average {the} **matches** the rate of *{positive_class}* (within 0.05 percentage "
                    f"points: {predicted:.1%} predicted vs {observed:.1%} observed).")
        if not beyond:
            return (f"On average {the} **matches** the rate of *{positive_class}* within chance: {predicted:.1%} "
                    f"predicted vs {observed:.1%} observed, {points:.1f} percentage points apart"
                    + (f" ({p_text})." if p_text else "."))
        direction = "over" if predicted > observed else "under"
        return (f"On average {the} **{direction}-predicts** the rate of *{positive_class}* by {points:.1f} "
                f"percentage points ({predicted:.1%} predicted vs {observed:.1%} observed; {p_text}).")
    if points == 0:
        return (f"{The}'s mean confidence **matches** its accuracy on average (within 0.05 percentage points: "
                f"{predicted:.1%} confidence for an accuracy of {observed:.1%}).")
    if not beyond:
        return (f"{The}'s mean confidence **matches** its accuracy within chance: {predicted:.1%} confidence for "
                f"an accuracy of {observed:.1%}, {points:.1f} percentage points apart"
                + (f" ({p_text})." if p_text else "."))
    return (f"{The} is **{'over' if predicted > observed else 'under'}confident** on average: its mean "
            f"confidence is {predicted:.1%} for an accuracy of {observed:.1%} ({points:.1f} percentage points "
            f"apart; {p_text}).")


def data_summary() -> None:
    """Rows, classes, prevalence/accuracy and the class table of the selected model."""
    preds = current_predictions()
    o = data_overview(preds)
    # the rates' labels are the long ones ("Prevalence of 1", "Mean prediction" were cut at 1024 px, a walk-through)
    cols = st.columns([1.3, 0.9, 1.4, 1.5, 1.0])
    rows = o["rows"]  # 200,000 was cut to "200,..." at 1024 px (a walk-through): large counts in k and M, exact in help
    shown = f"{rows:,}" if rows < 100_000 else f"{rows / 1e3:,.0f}k" if rows < 1_000_000 else f"{rows / 1e6:,.2f}M"
    cols[0].metric("Rows", shown, help=f"Number of predictions (rows) of this model: {rows:,}.")
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
    gap = cached(("mean_gap", preds.fingerprint()), lambda: mean_gap(preds))  # redraws on small data: once per data
    # several models: the sentence names the one the summary is of (it said "the model")
    test = dict(p_value=gap.p_value, n_draws=gap.n_draws, alpha=float(settings()["alpha"]),
                model=md(preds.name) if len(current_models()) > 1 else None)
    if preds.is_binary:
        st.markdown(mean_gap_reading(o["mean_prediction"], o["prevalence"], o["positive_class"], **test))
    else:
        st.markdown(mean_gap_reading(o["mean_confidence"], o["accuracy"], **test))
        with st.expander("Classes"):
            show_dataframe(class_table(preds))
    if preds.weights is not None:  # every number on every page is weighted: say so where the data are described
        w = preds.weights
        kish = float(w.sum() ** 2 / (w @ w))
        st.caption(f"Weighted rows: the prevalence, the mean prediction and every metric, table and figure weigh each "
                   f"row by the weight column of the column mapping (Kish's effective sample size {kish:,.0f} of "
                   f"{o['rows']:,} rows).")
    if len(preds.features.columns):
        st.caption("Feature columns: " + ", ".join(map(md, preds.features.columns)))


def headline_metrics() -> None:
    """Three headline calibration numbers with intervals, the calibrated-model reference, one verdict each and
    their plain-language readings."""
    preds = current_predictions()
    if preds.is_binary:
        view = reduce.views(preds, "binary")[0]
        table = panel_table(view.y, view.p, view.w, view.name, preds.fingerprint(),
                            metrics=("ece", "tce", "smooth_ece"), references_on_request=True)
    else:
        table = panel_table(preds.y, preds.probs, preds.weights, "multiclass", preds.fingerprint(),
                            metrics=("confidence_ece", "top_label_ece", "classwise_ece"), references_on_request=True)
    cols = st.columns(len(table))
    for col, (_, row) in zip(cols, table.iterrows()):
        interval = _format_interval(row)
        col.metric(row["label"], _format_value(row), help=row["description"])
        if interval:  # a value outside its interval is pointed to the note that says why (shown below)
            outside = (" (it lies " + ("above" if row["low"] > row["value"] else "below")
                       + " the value: see the note below)") if row.get("note") and not (
                row["low"] <= row["value"] <= row["high"]) else ""
            col.caption(f"95% interval {interval}{outside}")
        reference = _format_reference(row)
        if reference:
            col.caption(f"a calibrated model would show {reference}")
        badge = _verdict_badge(row)
        if badge:
            col.markdown(badge)
    show_headlines(table, len(table))
    if caption := family_caption(table, multiclass=not preds.is_binary):
        st.caption(caption)


def next_steps() -> None:
    """Where to look next, given what the data holds."""
    preds = current_predictions()
    models = current_models()
    st.page_link("pages/1_Reliability.py", label="Reliability: the diagram, all metrics, bin by bin",
                 icon=":material/show_chart:")
    st.page_link("pages/2_Test_based.py", label="Test-based: which predictions the binomial test rejects (TCE)",
                 icon=":material/rule:")
    if not preds.is_binary:
        st.page_link("pages/3_Multiclass.py", label="Multiclass: confidence vs top-label, class by class",
                     icon=":material/category:")
    if len(preds.features.columns):
        n_features = len(preds.features.columns)
        st.page_link("pages/4_Variables.py", label=f"Variables: calibration along {n_features} feature column"
                     + ("s" if n_features > 1 else ""), icon=":material/tune:")
    if len(models) > 1:
        st.page_link("pages/5_Compare.py", label=f"Compare the {len(models)} models", icon=":material/compare_arrows:")
