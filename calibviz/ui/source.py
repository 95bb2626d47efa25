"""The session's data source: the predictions in memory (an upload, a demo) or a large file opened by path.

A file opened on the Large data page (:mod:`calibviz.ui.scan`) becomes the
data of every binned page when the user clicks "Analyse on every page"; the
sidebar then names it and offers the way back to the data in memory. Pages
call :func:`scan_dispatch` right after ``page_setup``: with an opened file it
draws the page's binned views from the scan (:mod:`calibviz.ui.scan_pages`)
and ends the run, so each page body stays the in-memory one. Pages without a
scan version (Data, Recalibrate, Report) say that they show the data in memory.

What a scan cannot give (anything that needs the rows: CORP, LOESS, violins,
recalibration, bootstrap intervals) is named on the page in one line
(:func:`needs_rows`), never dropped silently.
"""
from __future__ import annotations

import streamlit as st

from ..errors import InputError
from .scan import current_scan, current_scan_id, reopen_needed, report_command, scan_work
from .text import md

__all__ = ["SCAN_PAGES", "active_scan", "scan_active", "use_scan", "use_memory", "scan_sidebar", "scan_dispatch",
           "needs_rows", "use_controls", "checked_model", "memory_only_notice", "in_memory_heading",
           "scan_view_options", "scan_view", "cache_id"]

_ACTIVE, _MODEL, _PICK_ERROR = "cv_scan_active", "cv_scan_model", "cv_scan_pick_error"
#: Page titles (as given to page_setup) that have a scan version in :mod:`calibviz.ui.scan_pages`.
SCAN_PAGES = ("Reliability", "Test-based", "Multiclass", "Variables", "Compare")


def scan_active() -> bool:
    """Whether the session analyses an opened file (rather than the data in memory)."""
    return bool(st.session_state.get(_ACTIVE)) and current_scan() is not None


def active_scan():
    """The opened file's scan of the model picked in the sidebar, when the session analyses it; else None."""
    if not scan_active():
        return None
    scan = current_scan()
    pick = st.session_state.get(_MODEL)
    return scan.models.get(pick, scan) if pick else scan


def cache_id() -> str:
    """The opened file's identity, the first part of every cache key of its results."""
    return current_scan_id() or f"scan:{id(current_scan())}"


def use_scan() -> None:
    # the model picked on the Large data page is the one every page then analyses (the sidebar's previous pick was
    # shown instead, a review)
    pick, scan = st.session_state.get("w_scan_model"), current_scan()
    if scan is not None and pick in scan.models:
        st.session_state[_MODEL] = pick
        st.session_state.pop(_PICK_ERROR, None)
    st.session_state[_ACTIVE] = True


def use_memory() -> None:
    st.session_state[_ACTIVE] = False
    st.session_state.pop(_PICK_ERROR, None)


def analysed_pages(scan) -> str:
    """The pages that analyse an opened file, in words: Multiclass only for class columns, Compare only for several
    models (the notices listed both for a binary one-model file, a walk-through).

    >>> class S: is_binary, models = True, {"m": None}
    >>> analysed_pages(S())
    'Reliability, Test-based and Variables'
    """
    pages = [p for p in SCAN_PAGES if not (p == "Multiclass" and scan.is_binary)
             and not (p == "Compare" and len(scan.models) < 2)]
    return ", ".join(pages[:-1]) + " and " + pages[-1]


def use_controls() -> None:
    """The Large data page's switch: make the opened file the data of every page, or go back."""
    if current_scan() is None:
        return
    if scan_active():
        st.success(f"The binned pages ({analysed_pages(current_scan())}) analyse this file.",
                   icon=":material/check_circle:")
        st.button("Back to the data in memory", key="scan_leave_page", on_click=use_memory,
                  icon=":material/undo:", help="The pages analyse the uploaded or demo data again.")
    else:
        st.button("Analyse on every page", key="scan_use", on_click=use_scan, type="primary",
                  icon=":material/travel_explore:",
                  help=f"Make this file the data of the {analysed_pages(current_scan())} pages (their binned views, "
                       "from the same bucket sums); the sidebar leads back to the data in memory.")


def checked_model(scan, name: str):
    """The model ``name`` of an opened file once its rows are read and checked (its first pass), or the
    :class:`~calibviz.InputError` that says what is wrong with them. Opening a file checks its first model only
    (one pass per model), so another model's bad rows are found when it is picked."""
    model = scan.models[name]
    try:
        model.n  # noqa: B018 - the model's one pass, with the validation of every row
    except InputError as err:
        return err
    except Exception as exc:  # noqa: BLE001 - only the engines' errors of a file they cannot read; others raise
        if not (isinstance(exc, OSError) or {k.__name__ for k in type(exc).__mro__} & set(_UNREADABLE)):
            raise
        # the file changed or became unreadable after it was opened (deleted, columns renamed, its permissions
        # taken away): the engine's words, not Streamlit's blank error page (a review)
        said = next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
        return InputError(f"the file cannot be read now ({said.rstrip('.')}). If it was moved, rewritten or its "
                          "permissions changed, open it again on the Large data page.")
    return model


#: The engines' exception classes of a file that changed or became unreadable after it was opened (a file gone or
#: closed to the reader: DuckDB's IOException, Polars' ComputeError, Spark's AnalysisException; a column renamed:
#: DuckDB's BinderException, Narwhals' or Polars' ColumnNotFoundError). Others are calibviz's bugs and raise.
_UNREADABLE = ("IOException", "InvalidInputException", "BinderException", "ColumnNotFoundError", "ComputeError",
               "AnalysisException", "Py4JJavaError")


def cannot_analyse(name: str, err: InputError) -> str:
    """The sentence of a model of an opened file whose rows fail their checks."""
    return f"Model {name} cannot be analysed: {err.ui_message}"


def _pick_model() -> None:
    """The sidebar picker's callback: analyse the picked model, or keep the previous one and say why not."""
    name = st.session_state["w_scan_pick"]
    if reopen_needed():
        # the file changed on disk (or now resolves outside the allowed directories): nothing reads it here; the run
        # that follows opens it again, checked, and keeps this pick where the model is still there
        st.session_state[_MODEL] = name
        return
    with scan_work():
        checked = checked_model(current_scan(), name)
    if isinstance(checked, InputError):
        st.session_state[_PICK_ERROR] = cannot_analyse(name, checked)
        return
    st.session_state.pop(_PICK_ERROR, None)
    st.session_state[_MODEL] = name


def scan_sidebar(model_picker: bool = True) -> int:
    """The sidebar's data box for an opened file: its path, rows, model picker and the way back; its rows."""
    scan = current_scan()
    shown = active_scan()
    with scan_work():
        checked = checked_model(scan, shown.name)
        if isinstance(checked, InputError):  # a model whose rows fail (a link named it): the opened one instead
            st.session_state[_PICK_ERROR] = cannot_analyse(shown.name, checked)
            st.session_state[_MODEL] = scan.name  # the model checked when the file was opened
            shown = active_scan()
        n_rows = shown.n
    kind = "binary" if scan.is_binary else f"{len(scan.mapping.classes)} classes"
    st.caption(f"**Data (opened file):** {md(scan.source)}  \n{n_rows:,} rows · {kind} · read in place by "
               f"{scan.engine}")
    if len(scan.models) > 1 and model_picker:
        names = list(scan.models)
        if st.session_state.get(_MODEL) not in names:
            st.session_state[_MODEL] = names[0]
        st.session_state["w_scan_pick"] = st.session_state[_MODEL]
        st.selectbox("Model", names, key="w_scan_pick", on_change=_pick_model,
                     help="Which model of the file the pages analyse; the Compare page shows all.")
        if st.session_state.get(_PICK_ERROR):
            # a warning: the pages go on with the model shown above it (as red, it read as that model's failure)
            st.warning(md(st.session_state[_PICK_ERROR]), icon=":material/warning:")
    st.button("Back to the data in memory", key="scan_leave", on_click=use_memory, icon=":material/undo:",
              help="The pages analyse the uploaded or demo data again; the file stays open on the Large data page.")
    st.caption("A link to this view, or a session file saved below, opens the file again where its directory is "
               "allowed (they carry the path, never the rows).")
    return n_rows


def memory_only_notice(title: str) -> None:
    """On a page without a scan version, while a file is analysed elsewhere: say which data this page shows."""
    if scan_active() and title not in SCAN_PAGES and title != "Large data":
        scan = current_scan()
        # the report of an opened file is built where the file is, by the command line (a walk-through looked for it)
        command = report_command() if title == "Report" else None
        # how long it takes (a walk-through waited 61 s on 10^6 rows without knowing)
        report = (" The HTML report of the opened file is built by the command line on the server (below). On 10⁶ "
                  "rows and 2 cores it takes about a minute, most of it the bootstrap intervals, which `--ci 0` "
                  "leaves out." if command else "")
        st.info(f"This page works on data in memory: it shows the uploaded or demo data, not the opened file "
                f"{md(scan.source)} (analysed on the {analysed_pages(scan)} pages)." + report,
                icon=":material/info:")
        if command:  # a code block: whole, with a copy button (inline, it wrapped inside an option, a browser check)
            st.code(command, language="bash", wrap_lines=True)
        if title == "Data":  # a link to the file's view opened here showed the demo's verdict only (a walk-through)
            st.page_link("pages/1_Reliability.py", label="See the opened file on the Reliability page",
                         icon=":material/arrow_forward:")


def in_memory_heading(text: str) -> str:
    """A heading of the Data page, saying that it is of the data in memory while an opened file is analysed
    elsewhere (a walk-through read the demo's 'evidence of miscalibration' under a link to a calibrated file)."""
    return f"{text} (data in memory, not the opened file)" if scan_active() else text


def needs_rows(what: str) -> None:
    """One line saying that ``what`` needs the rows in memory, which an opened file does not load."""
    st.info(f"{what}: not available for an opened file. This needs the data in memory, and the rows of an opened "
            "file are never loaded; upload a sample of it on the Data page to see this.", icon=":material/info:")


def scan_view_options(scan) -> dict[str, str]:
    """{setting value: label} of the binary views of a scan (every class for the top-label views: which classes
    are predicted is known only after one pass per class)."""
    if scan.is_binary:
        return {"binary": f"P({scan.classes[1]})"}
    classes = scan.mapping.classes
    opts = {"confidence": "Confidence (top class correct?)"}
    opts.update({f"classwise:{i}": f"{c} vs rest" for i, c in enumerate(classes)})
    opts.update({f"top_label:{i}": f"predicted = {c}" for i, c in enumerate(classes)})
    return opts


def scan_view(scan, value: str):
    """The binary scan of a view value (:func:`scan_view_options`): the scan, its confidence, class-wise or
    top-label view."""
    if value == "binary":
        return scan
    if value == "confidence":
        return scan.confidence_view()
    kind, idx = value.split(":")
    cls = scan.mapping.classes[int(idx)]
    return scan.class_view(cls) if kind == "classwise" else scan.top_label_view(cls)


def scan_dispatch(page: str) -> None:
    """With an opened file analysed on every page: draw ``page``'s scan version and end the run; else nothing."""
    scan = active_scan()
    if scan is None:
        return
    from . import scan_pages

    with scan_work():  # one run of the session on the file at a time (a rerun can overlap the previous run)
        {"Reliability": scan_pages.reliability, "Test-based": scan_pages.test_based,
         "Multiclass": scan_pages.multiclass, "Variables": scan_pages.variables,
         "Compare": scan_pages.compare}[page](scan)
    st.stop()
