"""The shared sidebar every page renders: navigation, the loaded data, the model picker, the controls."""
from __future__ import annotations

import re
from pathlib import Path

import streamlit as st

from .data import current_models, current_source, ensure_data, load_demo_into_state
from .links import UPLOAD_PREFIX, link_data
from .scan import LINK_KEYS, current_scan, link_params, open_from_link, reopen_if_changed
from .session import link_lost, lost_link_notice, mark_lost, open_stored, save_session_controls
from .source import memory_only_notice, scan_active, scan_sidebar, use_scan
from .settings import (binning_controls, init_from_url, metric_controls, set_setting, settings, sync_url,
                       uncertainty_controls)
from .text import md

_FAVICON = Path(__file__).parent / "assets" / "favicon.png"
#: Points where a long file name may wrap in the narrow sidebar (after these characters), instead of
#: anywhere ("parque t"): a zero-width space after each.
_BREAK_AFTER = re.compile(r"([_\-./])")

__all__ = ["PAGES", "render_sidebar", "page_setup"]

_ROOT = Path(__file__).resolve().parents[2]

#: (script path relative to the app root, label, icon). Pages whose file is
#: absent (an installed library without the app) are skipped.
PAGES = [
    ("app.py", "Data", ":material/database:"),
    ("pages/1_Reliability.py", "Reliability", ":material/show_chart:"),
    ("pages/2_Test_based.py", "Test-based (TCE)", ":material/rule:"),
    ("pages/3_Multiclass.py", "Multiclass", ":material/category:"),
    ("pages/4_Variables.py", "Variables", ":material/tune:"),
    ("pages/5_Compare.py", "Compare", ":material/compare_arrows:"),
    ("pages/7_Recalibrate.py", "Recalibrate", ":material/auto_fix_high:"),
    ("pages/6_Report.py", "Report", ":material/description:"),
    ("pages/8_Large_data.py", "Large data", ":material/storage:"),
]


def page_setup(title: str, controls: tuple = (), model_picker: bool = True) -> None:
    """First call of every page: page config, URL settings, data, sidebar with the page's controls.

    ``controls`` picks the sidebar groups: "binning", "tce_binning", "uncertainty", "metrics".
    ``model_picker=False`` hides the sidebar's model picker (the Compare page shows every model and chooses
    its reference in the page). A link's data is opened here on the first run of a session: a demo by name,
    an upload from the server's store (:mod:`calibviz.ui.session`), a file opened by path under the server's
    allowed directories (:func:`calibviz.ui.scan.open_from_link`); a link whose data is gone says so and the
    page stops (the Data page goes on, to take the file; for an opened file, the Large data page too).
    """
    # the favicon is served by the app itself: a Material icon would be fetched from a font CDN
    st.set_page_config(page_title=f"calibviz · {title}", page_icon=str(_FAVICON), layout="wide")
    # Less empty space above the title: figures must fit a 1366x768 projector.
    st.markdown("<style>[data-testid=\"stMainBlockContainer\"]{padding-top:2.2rem;padding-bottom:2rem}</style>",
                unsafe_allow_html=True)
    fresh_url = not st.session_state.get("cv_url_read")
    ignored = init_from_url()
    first_run = "cv_models" not in st.session_state
    data = st.query_params.get("data") if first_run else None
    if data and data.startswith(UPLOAD_PREFIX):
        reason = open_stored(data[len(UPLOAD_PREFIX):], st.query_params.get("map", ""))
        if reason:
            ensure_data()  # the session needs some data for its widgets; the notice says it is not the link's
            mark_lost(data, reason)
    elif data and not load_demo_into_state(data):
        ignored.append(f"data={data}")
    ensure_data()
    linked_path = st.query_params.get("open") if first_run else None
    opened_by_link = bool(linked_path) and not link_lost() and _open_linked_file(linked_path)
    changed = reopen_if_changed()  # an opened file rewritten on disk: read again (or closed), and said
    if changed:
        st.warning(changed, icon=":material/sync_problem:")
    if fresh_url and not link_lost():  # a lost link's model is no invalid setting
        ignored += _recalibration_from_link()  # before the model: a link may pick a recalibrated one
        ignored += _linked_model()
    if ignored:
        st.warning(f"Ignored link settings that are not valid: {md(', '.join(ignored))}.", icon=":material/link_off:")
    elif opened_by_link and title == "Data" and (_ROOT / "pages" / "8_Large_data.py").exists():
        # a link to a file lands where the file is shown: the Data page's first screen is the data in memory's
        # (a walk-through followed such a link into a meeting and showed the demo's headline numbers)
        st.switch_page("pages/8_Large_data.py")
    # shown on the page the session opens (the Data page first runs the upload's callback, then switches)
    from_session = [] if st.session_state.get("cv_session_goto") else st.session_state.pop("cv_session_ignored", [])
    if from_session:  # set by ui.session when a session file opened with values this version does not accept
        st.warning(f"Ignored settings of the session file that are not valid here: {md(', '.join(from_session))}.",
                   icon=":material/link_off:")
    if lost_link_notice(title):
        render_sidebar((), model_picker=False, page=None)
        if title != "Data":
            st.stop()
        return  # the address keeps the link: a reload after the file is uploaded again opens it
    render_sidebar(controls, model_picker=model_picker, page=title)
    memory_only_notice(title)  # a page without a scan version, while an opened file is analysed elsewhere
    from .presentation import screen_layout; screen_layout()  # noqa: E702 compact header, presentation mode
    names, pick = _model_pick()
    set_setting("model", pick if pick in names and pick != names[0] else "")
    if link_lost():
        return  # the address keeps the link whose file is gone (Data, Large data): a reload tries it again
    # an opened file is part of the view where a page analyses it: on every binned page, and on Large data
    scan_link = link_params(scan_active()) if scan_active() or title == "Large data" else {}
    sync_url({**link_data(current_source()), **scan_link, **_recalibration_link(title)}, page=title)


def _recalibration_from_link() -> list[str]:
    """The Recalibrate page's choices and the recalibrated models a link names (:mod:`calibviz.ui.recalibrate`);
    returns what was ignored."""
    if scan_active():
        return []
    from .recalibrate import LINK_PARAMS, apply_link_values

    values = {k: st.query_params[k] for k in LINK_PARAMS if st.query_params.get(k)}

    return apply_link_values(values)


def _recalibration_link(title: str) -> dict:
    """The link's parameters of recalibration (:func:`calibviz.ui.recalibrate.link_values`)."""
    if scan_active():
        return {}
    from .recalibrate import link_values

    return link_values(title)


def _open_linked_file(path: str) -> bool:
    """Open the file a link names (``open=``) and, with ``analyse=1``, make it the data of every binned page;
    a file that cannot be opened is a lost link (:func:`calibviz.ui.session.lost_link_notice`). Whether it opened."""
    linked = {k: st.query_params.get(k, "") for k in LINK_KEYS}
    reason = open_from_link(linked)
    if reason:
        mark_lost(path, reason, opened=linked)
        set_setting("model", "")
        return False
    if linked["analyse"] == "1":
        use_scan()
    return True


def _model_pick() -> tuple[list[str], str | None]:
    """The model names of the data the pages analyse (an opened file's, or the data in memory's) and the pick."""
    if scan_active():
        return list(current_scan().models), st.session_state.get("cv_scan_model")
    return list(current_models()), st.session_state.get("cv_model")


def _linked_model() -> list[str]:
    """Select the link's ``model`` (once, when the URL is read) among the models the pages analyse; the ignored
    value if the data has no such model."""
    want = settings()["model"]
    if not want:
        return []
    if want in _model_pick()[0]:
        st.session_state["cv_scan_model" if scan_active() else "cv_model"] = want
        return []
    set_setting("model", "")
    return [f"model={want}"]


def _breakable(name: str) -> str:
    """``name`` as inert Markdown that wraps after ``_ - . /`` rather than inside a word."""
    return _BREAK_AFTER.sub("\\1\u200b", md(name))


def render_sidebar(controls: tuple = (), *, model_picker: bool = True, page: str | None = None) -> None:
    """The sidebar: navigation, the data, the model picker, the page's controls and (with ``page``) the
    'Save or share this view' box."""
    with st.sidebar:
        st.markdown("### calibviz")
        for path, label, icon in PAGES:
            if (_ROOT / path).exists():
                st.page_link(path, label=label, icon=icon)
        st.divider()
        models = current_models()
        src = current_source()
        first = next(iter(models.values()))
        kind = "binary" if first.is_binary else f"{first.n_classes} classes"
        n_rows = first.n
        if scan_active():  # a file opened by path is the data of every binned page (ui.source)
            n_rows = scan_sidebar(model_picker=model_picker)
        else:
            st.caption(f"**Data:** {_breakable(src.get('title') or src['name'])}  \n{first.n:,} rows · {kind}")
        if len(models) > 1 and model_picker and not scan_active():
            # Widget state does not survive page switches: keep the pick in "cv_model" (see ui.data).
            if st.session_state.get("cv_model") not in models:
                st.session_state["cv_model"] = next(iter(models))
            st.session_state["w_model"] = st.session_state["cv_model"]
            st.selectbox("Model", list(models), key="w_model",
                         on_change=lambda: st.session_state.update(cv_model=st.session_state["w_model"]),
                         help="Which model's predictions the pages analyse; the Compare page shows all.")
        if controls:
            st.divider()
        if "binning" in controls:
            binning_controls(n_rows)
        if "tce_binning" in controls:
            binning_controls(n_rows, setting="tce_scheme")
        if "uncertainty" in controls:
            uncertainty_controls()
        if "metrics" in controls:
            metric_controls()
        if page is not None:
            st.divider()
            save_session_controls(page)
