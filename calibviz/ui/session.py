"""Links and session files on the dashboard (thin: the work is in calibviz.io.store and calibviz.io.session).

- :func:`open_stored`: a link ``?data=upload:<sha256>&map=<id>`` opened in a fresh session loads the file from
  the server's upload store with the same column mapping.
- :func:`lost_link_notice`: a link whose data the server no longer holds says so and offers the ways back;
  no other data is shown in its place.
- :func:`save_session_controls` (sidebar) and :func:`session_opener` (Data page): one JSON file with the
  settings, the data's identity and optionally the data, that reopens the same view; a damaged, edited or
  mismatched file is refused with the reason and the previous data and settings are kept. While a file opened by
  path is analysed, the session file names that file (its path and the form's fields, never its rows) and opens
  it again as a link does, under the server's allowed directories; a file whose rows changed is refused. (Saved
  as the data in memory, such a session reopened the demo beside the file's settings, with no word: a
  walk-through.)
"""
from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import replace

import streamlit as st

from ..demo import demo_datasets
from ..errors import InputError
from ..io.session import EMBED_LIMIT_BYTES, DataRef, SessionError, dump_session, parse_session, verify_models
from ..io.store import StoreError
from .data import (DEFAULT_DEMO, MAX_UPLOAD_BYTES, current_models, current_source, load_bytes_into_state,
                   load_demo_into_state)
from .links import UPLOAD_PREFIX, upload_store
from .scan import STATE_KEYS, current_scan, link_params, open_from_link, scan_work
from .source import active_scan, checked_model, scan_active, use_memory, use_scan
from .settings import replace_settings, url_values
from .text import md

_LOG = logging.getLogger(__name__)

__all__ = ["PAGE_PATHS", "open_stored", "link_lost", "lost_link_notice", "save_session_controls", "session_opener",
           "restore_session", "session_ref"]

#: page title (as given to ``page_setup``) -> script; a session file names its page by title.
PAGE_PATHS = {
    "Data": "app.py", "Reliability": "pages/1_Reliability.py", "Test-based": "pages/2_Test_based.py",
    "Multiclass": "pages/3_Multiclass.py", "Variables": "pages/4_Variables.py", "Compare": "pages/5_Compare.py",
    "Report": "pages/6_Report.py", "Recalibrate": "pages/7_Recalibrate.py", "Large data": "pages/8_Large_data.py",
}
_LOST = "cv_lost_link"
_DATA_KEYS = ("cv_models", "cv_source", "cv_bytes", "cv_model", "cv_error", "cv_pending", _LOST, *STATE_KEYS)
#: A session file embeds at most EMBED_LIMIT_BYTES of data, base64 (4/3) plus the JSON around it.
_MAX_SESSION_BYTES = max(MAX_UPLOAD_BYTES, EMBED_LIMIT_BYTES * 4 // 3) + 2**20


def open_stored(key: str, map_id: str = "") -> str | None:
    """Load the stored upload ``key`` with mapping ``map_id``; None when done, else why it could not be."""
    try:
        entry = upload_store().get(key, map_id or "")
    except StoreError as exc:
        return str(exc)
    if load_bytes_into_state(entry.data, entry.name, kind="upload", **entry.options):
        return None
    return st.session_state.get("cv_error") or "the stored file could not be loaded."


def mark_lost(link: str, reason: str, *, opened: dict | None = None) -> None:
    """Remember that the link's data could not be opened (cleared when any data is loaded or a file opened).
    ``opened``: for a link to a file opened by path, its URL parameters (:func:`calibviz.ui.scan.link_params`)."""
    st.session_state[_LOST] = {"data": link, "reason": reason, "opened": opened}


def link_lost() -> bool:
    """Whether the session's link named data that could not be opened (and nothing has answered it yet)."""
    return bool(st.session_state.get(_LOST))


def lost_link_notice(title: str) -> bool:
    """Say that the link's data is gone and offer the ways back; True while the page must not show its own view
    (every page but Data for a lost upload; for a lost opened file, the pages that would have analysed it)."""
    lost = st.session_state.get(_LOST)
    if not lost:
        return False
    if lost.get("opened"):
        return _lost_file_notice(lost, title)
    if title != "Data":  # the notice is the page: it keeps the page's name
        st.title(title)
    digest = lost["data"][len(UPLOAD_PREFIX):]
    shown_instead = ("Below, the Data page shows the demo until you upload the file."
                     if title == "Data" else "Nothing is shown in its place, so that no other data passes for it.")
    st.error(f"**The data of this link is not on this server.** The link shows an uploaded file "
             f"(digest {md(digest[:12])}…), and {md(lost['reason'].rstrip('.'))}. {shown_instead}\n\n"
             "To see the view: ask whoever sent the link for the file (or for a saved session file) and open it "
             "on the Data page; the link then works again with the same settings. Or look at a demo.",
             icon=":material/cloud_off:")
    ways = _ways_back()
    if title != "Data":
        ways.page_link("app.py", label="Upload the file on the Data page", icon=":material/upload_file:")
    _demo_button(ways)
    return True


def _lost_file_notice(lost: dict, title: str) -> bool:
    """:func:`lost_link_notice` for a link to a file opened by path (the Large data page's form)."""
    analysed = lost["opened"].get("analyse") == "1"
    stops = analysed and title not in ("Data", "Large data")
    if stops:  # the notice is the page: it keeps the page's name
        st.title(title)
    shown_instead = ("Nothing is shown in its place, so that no other data passes for it." if stops else
                     "The form below opens it, or another file, by path." if title == "Large data" else
                     "This page shows the data in memory; the pages that would have analysed the file show nothing "
                     "in its place." if analysed else "The pages show the data in memory.")
    st.error(f"**The file of this link cannot be opened here.** The link reads {md(lost['data'])} in place on the "
             f"server, and {md(lost['reason'].rstrip('.'))}. {shown_instead}\n\n"
             "Links to an opened file work on the server that serves them, while the file is there and its "
             "directory is allowed; ask whoever runs it, or look at a demo.", icon=":material/cloud_off:")
    ways = _ways_back()
    if title != "Large data":
        ways.page_link("pages/8_Large_data.py", label="Open a file on the Large data page", icon=":material/storage:")
    _demo_button(ways)
    return stops


def _ways_back():
    """One row, from the left, for the ways back under a lost link's notice (a link and a button in two columns
    sat at different heights, the button alone in the right half on the Data page)."""
    return st.container(horizontal=True, vertical_alignment="center", gap="medium")


def _demo_button(where) -> None:
    if where.button("Open the demo instead", key="cv_lost_demo", icon=":material/dataset:"):
        load_demo_into_state(DEFAULT_DEMO)
        st.rerun()


# -- session files ----------------------------------------------------------------------------------------

def session_ref() -> DataRef:
    """The identity of the current data, as a session file records it: the opened file's path, fields and
    fingerprint while the pages analyse it, else the data in memory's."""
    if scan_active():
        shown = active_scan()
        fields = {k: v for k, v in link_params(True).items() if k != "analyse"}
        with scan_work():
            return DataRef(kind="opened", name=fields["open"], options=fields,
                           models={str(shown.name): shown.fingerprint()}, rows=shown.n, model=str(shown.name))
    src = current_source()
    fps = src.get("fingerprints") or {n: m.fingerprint() for n, m in current_models().items()}
    pick = st.session_state.get("cv_model")
    models = current_models()
    rows = next(iter(models.values())).n
    return DataRef(kind=src["kind"], name=src["name"], sha256=src.get("store_key") or None, demo=src.get("demo"),
                   options=dict(src.get("options") or {}), models=dict(fps), rows=rows,
                   model=pick if pick in fps else None)


def _file_name(name: str, page: str) -> str:
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", name.rsplit("/", 1)[-1].rsplit(".", 1)[0])[:60] or "data"
    return f"{stem}_{re.sub(r'[^A-Za-z0-9]+', '_', page).lower()}.calibviz.json"


def save_session_controls(page: str) -> None:
    """Sidebar: save the current view (settings, data identity, optionally the data) as one JSON file."""
    src = current_source()
    if scan_active() and not link_params(True):  # a scan set without the form (no path to open it again)
        with st.expander("Save or share this view", icon=":material/bookmark:"):
            st.caption("This file was not opened by path on the Large data page: a session file could not open it "
                       "again.")
        return
    ref = session_ref()
    opened = ref.kind == "opened"
    data = None if opened else st.session_state.get("cv_bytes")
    from .recalibrate import link_values  # the Recalibrate page's choices and the recalibrated models added

    values = url_values() if opened else {**url_values(), **link_values()}
    is_demo = ref.kind == "demo"
    with st.expander("Save or share this view", icon=":material/bookmark:"):
        st.caption("The address bar holds a link to this view: anyone who has it and can reach this server sees "
                   "the same data and settings. A session file keeps the view for later or for another server; "
                   "open it on the Data page.")
        if opened:
            st.caption("The session file names the opened file by its path (its rows stay where they are): it "
                       "opens again on a server whose allowed directories hold the same file, and is refused if "
                       "the file's rows have changed.")
        elif src.get("store_note"):
            st.caption(f":material/link_off: {md(src['store_note'])}")
        embed = False
        if not is_demo and data is not None:
            fits = len(data) <= EMBED_LIMIT_BYTES
            embed = st.checkbox("Include the data in the file", value=fits, disabled=not fits, key="cv_session_embed",
                                help="The file then opens anywhere. Without the data it opens where the server "
                                     "still holds the upload." + ("" if fits else
                                     f" Files over {EMBED_LIMIT_BYTES // 1024**2} MB are referenced only."))

        def build() -> bytes:  # runs on click, in another thread: uses only the values captured above
            payload = data if embed else None
            r = ref if ref.sha256 or is_demo or opened or data is None else replace(
                ref, sha256=hashlib.sha256(data).hexdigest())
            return dump_session(page=page, settings=values, data=r, payload=payload)

        name = ref.name if opened else str(src.get("demo") or src["name"])
        st.download_button("Save session", data=build, file_name=_file_name(name, page), mime="application/json",
                           key="cv_session_save", icon=":material/download:", on_click="ignore",
                           help="One JSON file: this page, every setting, the data's digest and fingerprints"
                                + (", and the data." if embed else "."))


def restore_session(session) -> list[str]:
    """Make a parsed session the current state (data, settings, model); returns the ignored settings.

    On any problem raises :class:`SessionError` and leaves the previous data and settings as they were.
    """
    before = {k: st.session_state[k] for k in _DATA_KEYS if k in st.session_state}
    d = session.data
    # loading keeps the file in the upload store: a refused session must not leave its data there
    stored_before = d.kind in ("demo", "opened") or d.sha256 in upload_store()
    try:
        if d.kind == "opened":
            _reopen(d)
        elif d.kind == "demo":
            if d.demo not in demo_datasets():
                raise SessionError(f"the session shows the demo {d.demo!r}, which this version of calibviz does "
                                   "not ship.")
            ok = load_demo_into_state(d.demo)
        else:
            payload = session.payload
            if payload is None:
                try:
                    payload = upload_store().get(d.sha256).data
                except StoreError as exc:
                    raise SessionError(
                        f"the session does not include its data ({d.name}) and {str(exc).rstrip('.')}. Upload "
                        f"{d.name} on the Data page, then open the session again (or save it with the data "
                        "included).") from None
            ok = load_bytes_into_state(payload, d.name, kind=d.kind, **d.options)
        if d.kind != "opened":
            if not ok:
                raise SessionError(f"its data could not be loaded: {st.session_state.get('cv_error')}")
            verify_models(d.models, current_source().get("fingerprints") or {})
            use_memory()  # the pages show the session's data, not a file opened before
    except Exception:  # any failure, not only the data's: an engine error after _reopen left the new file open
        if not stored_before:
            upload_store().remove(d.sha256)
        for k in _DATA_KEYS:  # the previous data, exactly as it was
            st.session_state.pop(k, None)
        st.session_state.update(before)
        raise
    from .recalibrate import LINK_PARAMS, apply_link_values  # the recalibrated models added, fitted again

    recal = {k: session.settings[k] for k in LINK_PARAMS if k in session.settings}
    ignored = replace_settings({k: v for k, v in session.settings.items() if k not in recal})
    if d.kind == "opened":
        # the model was picked among the file's (:func:`_reopen`), not the data in memory's; the data in memory keep
        # their recalibrated models (a session of a file has no recalibration to reset them to)
        return [i for i in ignored if i != f"model={d.model}"]
    ignored += apply_link_values(recal, reset=True)
    models = current_models()
    want = d.model or ""
    if want in models:
        st.session_state["cv_model"] = want
    elif want:
        ignored.append(f"model={want}")
    return ignored


def _reopen(d: DataRef) -> None:
    """Open the file a session names, as its link would (the allowed directories checked), and analyse the
    session's model on every page; raises :class:`SessionError` if it cannot be opened or its rows changed."""
    reason = open_from_link(d.options)
    if reason:
        raise SessionError(f"the file it analyses cannot be opened here: {d.name} — {reason.rstrip('.')}. Links and "
                           "session files of an opened file work on a server whose allowed directories hold it.")
    scan = current_scan()
    name = d.model if d.model is not None else next(iter(d.models))
    if name not in scan.models:
        raise SessionError(f"the file {d.name} no longer holds the model {name!r} it analyses.")
    checked = checked_model(scan, name)
    if isinstance(checked, InputError):
        raise SessionError(f"the rows of model {name!r} in {d.name} cannot be analysed now: {checked}")
    if d.rows is not None and checked.n != d.rows:
        raise SessionError(f"the file {d.name} has changed since the session was saved: it holds {checked.n:,} "
                           f"rows of model {name!r}, the session {d.rows:,}.")
    now = checked.fingerprint()
    if now != d.models.get(name):
        raise SessionError(f"the file {d.name} has changed since the session was saved: the scores or labels of "
                           f"model {name!r} differ (fingerprint {now}, saved {d.models.get(name)}).")
    st.session_state["cv_scan_model"] = name
    use_scan()


def _on_session_file() -> None:
    uploaded = st.session_state.get("cv_session_file")
    if uploaded is None:
        return
    name = uploaded.name
    try:
        session = parse_session(uploaded.getvalue(), max_bytes=_MAX_SESSION_BYTES)
        ignored = restore_session(session)
    except InputError as exc:
        st.session_state["cv_session_error"] = f"{name}: {exc}"
        return
    except Exception as exc:  # noqa: BLE001 - a file must never break the app; the log keeps the traceback
        _LOG.exception("unexpected error while opening the session %s", name)
        st.session_state["cv_session_error"] = (f"{name}: could not be opened ({type(exc).__name__}). This is a bug "
                                                "in calibviz; please report it.")
        return
    st.session_state.pop("cv_session_error", None)
    if session.page not in PAGE_PATHS:
        ignored.append(f"page {session.page}")
    st.session_state["cv_session_ignored"] = ignored
    st.session_state["cv_session_goto"] = PAGE_PATHS.get(session.page, "app.py")


def session_opener() -> None:
    """Data page: the 'Open session' uploader, its error (previous view kept) and the switch to the saved page."""
    err = st.session_state.get("cv_session_error")
    # a toggle, not an expander: the uploader is drawn only on request, so the page keeps one drop zone
    if st.toggle("Open a saved session", key="cv_session_show",
                 help="A session file saved with 'Save session' (sidebar) reopens its page with the same data and "
                      "settings."):
        st.file_uploader("Session file (saved with 'Save session' in the sidebar)", key="cv_session_file",
                         on_change=_on_session_file,
                         help="Reopens the saved page with the same data and settings. The data's fingerprint is "
                              "checked: a file that was changed, or data that differ, are refused.")
    if err:
        st.error(f"{md(err)}\n\nThe previously loaded data and settings are kept.", icon=":material/error:")
        del st.session_state["cv_session_error"]
    goto = st.session_state.pop("cv_session_goto", None)
    if goto:
        st.switch_page(goto)
