"""The dashboard's data state: what is loaded, from where, and how uploads get in.

Cross-page state lives in ``st.session_state`` under ``cv_*`` keys (uploaded
files are dropped by Streamlit on page switches, so uploads are parsed in the
uploader's ``on_change`` callback and kept here). A failed load never
replaces the data already loaded: the error is stored for the page to show.
"""
from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

import streamlit as st

from ..demo import demo_datasets, demo_info, demo_path
from ..errors import InputError
from ..io import (ColumnMapping, Predictions, detect_mapping, load_models_from_files, models_to_frame,
                  predictions_from_frame, read_table)
from ..io.readers import RawTable, excel_sheet_names
from .links import keep_upload

_LOG = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_DEMO", "MAX_UPLOAD_BYTES", "ensure_data", "current_models", "current_predictions", "current_source",
    "load_demo_into_state", "load_bytes_into_state", "on_upload", "pending_file", "take_error", "raw_table",
    "detected_mapping", "load_files_into_state", "current_files", "error_hint", "READING_OPTIONS", "sheet_names",
]

DEFAULT_DEMO = "hospital_readmission"
#: Mirrors ``[server] maxUploadSize`` (MB) in .streamlit/config.toml; checked in
#: Python too because AppTest and the library bypass the browser's limit.
MAX_UPLOAD_BYTES = 1024 * 1024**2

_MODELS, _SOURCE, _ERROR, _PENDING, _MODEL_PICK = "cv_models", "cv_source", "cv_error", "cv_pending", "cv_model"
_HINT, _FILES = "cv_error_hint", "cv_files"
#: Options of read_table (the mapping panel's encoding, delimiter and decimal choices); the rest map columns.
READING_OPTIONS = ("encoding", "delimiter", "decimal", "sheet")


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# Process-wide caches of parsed uploads, bounded in number and in time: each entry can be as large as an upload,
# and a closed session's file must not stay resident (the current data of a session lives in its session state).
@st.cache_data(show_spinner=False, max_entries=2, ttl=1800)
def _read(digest: str, _data: bytes, name: str, reading: tuple = ()) -> RawTable:
    # Keyed on the digest, not the bytes: hashing 10^8 bytes per rerun is what we avoid.
    return read_table(_data, name=name, max_bytes=MAX_UPLOAD_BYTES, **dict(reading))


def _split(options: dict) -> tuple[tuple, dict]:
    """(reading options as a sorted tuple, mapping options)."""
    reading = tuple(sorted((k, v) for k, v in options.items() if k in READING_OPTIONS and v is not None))
    return reading, {k: v for k, v in options.items() if k not in READING_OPTIONS}


@st.cache_data(show_spinner=False, max_entries=4, ttl=1800)
def _parse(digest: str, _data: bytes, name: str, options: tuple) -> dict[str, Predictions]:
    reading, mapping = _split(dict(options))
    raw = _read(digest, _data, name, reading)
    return predictions_from_frame(raw.frame, source=name, **mapping)


@st.cache_data(show_spinner=False, max_entries=4, ttl=1800)
def _sheet_names(digest: str, _data: bytes) -> list[str]:
    return excel_sheet_names(_data)


def sheet_names(data: bytes) -> list[str]:
    """The worksheet titles of an uploaded .xlsx workbook (cached; [] for other files)."""
    return _sheet_names(_digest(data), data) if bytes(data[:2]) == b"PK" else []


def raw_table(data: bytes, name: str, **reading) -> RawTable:
    """The parsed (cached) table of a file, before mapping; ``reading``: encoding, delimiter, decimal, sheet."""
    return _read(_digest(data), data, name, _split(reading)[0])


def detected_mapping(data: bytes, name: str, **overrides) -> ColumnMapping:
    """The column mapping detected for a file (raises InputError when detection fails)."""
    reading, mapping = _split(overrides)
    return detect_mapping(raw_table(data, name, **dict(reading)).frame, **mapping)


def _fail(name: str, exc: InputError) -> None:
    """Store a load error in the dashboard's words (its hint preselects the mapping panel's fix)."""
    message = exc.ui_message
    # the file's name once: readers' messages often start with it already, or with the one file of several
    # that failed ("a.csv + b.csv: b.csv: ..." read twice, a walk-through)
    names = (name, *name.split(" + "))
    named = message.startswith(tuple(f"{n}{end}" for n in names for end in (" ", ":")))
    st.session_state[_ERROR] = message if named else f"{name}: {message}"
    st.session_state[_HINT] = dict(exc.hint)


def error_hint() -> dict:
    """The machine-readable fix of the last load error (``{mapping option: value}``), or {}."""
    return st.session_state.get(_HINT) or {} if st.session_state.get(_ERROR) else {}


def _load_failed(name: str, exc: Exception, *, several: bool = False) -> bool:
    """Record why ``name`` could not be loaded (shown by the Data page, which keeps the previous data); False.

    Called from the ``except`` block of a loader: an unexpected error is logged with its traceback.
    """
    if isinstance(exc, InputError):
        _fail(name, exc)
    elif isinstance(exc, MemoryError):
        what = "these files; sample their rows" if several else "this file; sample its rows"
        st.session_state[_ERROR] = f"{name}: not enough memory to load {what}."
    else:
        _LOG.exception("unexpected error while loading %s", name)
        whose = "files'" if several else "file's"
        st.session_state[_ERROR] = (f"{name}: could not be loaded ({type(exc).__name__}: {exc}). This is a bug in "
                                    f"calibviz, not in your data; please report it with the {whose} column types.")
    return False


def load_bytes_into_state(data: bytes, name: str, *, kind: str = "upload", **options) -> bool:
    """Parse ``data`` and make it the current data; on bad input keep the old data and store the message.

    ``options`` are :func:`calibviz.predictions_from_frame` keywords (label,
    probs, positive, logits, weight, model, renormalize, ...).
    """
    clean = tuple(sorted((k, v if not isinstance(v, list) else tuple(v)) for k, v in options.items()
                         if v is not None and v != ""))
    try:
        models = _parse(_digest(data), data, name, clean)
        for m in models.values():
            m.fingerprint()  # every page keys its caches on it: fail here, not on every later rerun
    except Exception as exc:  # noqa: BLE001 - an upload must never break the app
        return _load_failed(name, exc)
    st.session_state[_MODELS] = models
    st.session_state["cv_bytes"] = data  # for re-mapping the current file
    st.session_state[_SOURCE] = {"kind": kind, "name": name, "options": dict(clean), "digest": _digest(data)[:16]}
    st.session_state[_SOURCE]["fingerprints"] = {n: m.fingerprint() for n, m in models.items()}  # session files
    if kind != "demo":  # kept server-side so that a link to this view opens elsewhere and after a restart
        st.session_state[_SOURCE].update(keep_upload(data, name, dict(clean)))
    st.session_state.pop("cv_lost_link", None)  # new data: a link whose data was gone is answered
    st.session_state.pop("cv_scan_active", None)  # new data in memory: the pages analyse it, not an opened file
    st.session_state[_MODEL_PICK] = next(iter(models))
    st.session_state.pop(_ERROR, None)
    st.session_state.pop(_HINT, None)
    st.session_state.pop(_FILES, None)  # a single file (load_files_into_state sets them again for several)
    return True


def load_files_into_state(files: list, **options) -> bool:
    """Several files, one model each (named after its file), as the current data; False and a message if not.

    The files go through :func:`calibviz.io.load_models_from_files` (rows matched by a shared id column, else
    checked to hold the same labels in the same order) and are kept as one long table
    (:func:`calibviz.io.models_to_frame`, Parquet) through :func:`load_bytes_into_state`, the one way data
    becomes current (and is kept for links). The original files stay in the session for re-mapping.
    """
    import io as _io

    name = " + ".join(n for n, _ in files)
    st.session_state[_PENDING] = {"name": name, "data": files[0][1], "file_name": files[0][0], "files": files}
    try:
        models = load_models_from_files(list(files), max_bytes=MAX_UPLOAD_BYTES,
                                        **{k: v for k, v in options.items() if v is not None and v != ""})
        buf = _io.BytesIO()
        models_to_frame(models).to_parquet(buf, index=False)
    except Exception as exc:  # noqa: BLE001 - an upload must never break the app
        _load_failed(name, exc, several=True)
        if isinstance(exc, InputError):
            st.session_state[_ERROR] += (" (Files uploaded together are read as one model each; to replace a file "
                                         "instead, remove the other one from the uploader.)")
        return False
    if not load_bytes_into_state(buf.getvalue(), name):
        return False
    st.session_state[_FILES] = {"files": list(files), "options": {k: v for k, v in options.items() if v is not None}}
    st.session_state[_SOURCE]["files"] = [n for n, _ in files]
    st.session_state.pop(_PENDING, None)
    return True


def current_files() -> dict | None:
    """The uploaded files behind the current data when there are several: ``{"files": [(name, bytes)], "options"}``."""
    return st.session_state.get(_FILES)


def load_demo_into_state(name: str) -> bool:
    """Make the demo dataset ``name`` the current data."""
    if name not in demo_datasets():
        st.session_state[_ERROR] = f"unknown demo dataset {name!r}; choose one of {', '.join(demo_datasets())}."
        return False
    data = demo_path(name).read_bytes()
    ok = load_bytes_into_state(data, demo_path(name).name, kind="demo")
    if ok:
        st.session_state[_SOURCE]["demo"] = name
        st.session_state[_SOURCE]["title"] = demo_info(name).title
        st.session_state.pop(_PENDING, None)
    return ok


def on_upload(widget_key: str = "cv_upload") -> None:
    """``on_change`` callback of the file uploader: parse the upload right away (it is gone after a page switch).

    Several files are several models, one per file (:func:`load_files_into_state`).
    """
    uploaded = st.session_state.get(widget_key)
    if not uploaded:  # every file removed: its error and pending mapping go with it, the shown data stays
        for key in (_ERROR, _HINT, _PENDING):
            st.session_state.pop(key, None)
        return
    files = []
    for up in (uploaded if isinstance(uploaded, (list, tuple)) else [uploaded]):
        size = getattr(up, "size", None)
        if size is not None and size > MAX_UPLOAD_BYTES:
            st.session_state[_ERROR] = (f"{up.name} is {size / 1e6:.0f} MB, over the {MAX_UPLOAD_BYTES / 1e6:.0f} MB "
                                        "upload limit; sample the rows or load it with `calibviz app FILE`.")
            return
        data = up.getvalue()
        if len(data) > MAX_UPLOAD_BYTES:
            st.session_state[_ERROR] = (f"{up.name} is over the {MAX_UPLOAD_BYTES / 1e6:.0f} MB upload limit; "
                                        "sample the rows or load it with `calibviz app FILE`.")
            return
        files.append((up.name, data))
    if len(files) > 1:
        load_files_into_state(files)
        return
    name, data = files[0]
    st.session_state[_PENDING] = {"name": name, "data": data}
    if load_bytes_into_state(data, name):
        st.session_state.pop(_PENDING, None)


def pending_file() -> dict | None:
    """The last upload that could not be loaded yet (awaiting a manual mapping), if any."""
    return st.session_state.get(_PENDING)


def take_error() -> str | None:
    """The message of the last failed load, if any (kept until the next successful load)."""
    return st.session_state.get(_ERROR)


def ensure_data() -> None:
    """Load the start data on the first run of any page (a deep link starts here too).

    That is the file named by ``$CALIBVIZ_DATA`` (set by ``calibviz app FILE``)
    when given, else the default demo. If the file cannot be loaded the demo is
    shown together with the file's error message.
    """
    if _MODELS in st.session_state:
        return
    start = os.environ.get("CALIBVIZ_DATA")
    if start:
        if start in demo_datasets():
            if load_demo_into_state(start):
                return
        else:
            path = Path(start)
            try:
                data = path.read_bytes()
            except OSError as exc:
                st.session_state[_ERROR] = f"{start}: cannot read the file ({exc.strerror})."
            else:
                if load_bytes_into_state(data, path.name, kind="file"):
                    return
        error = st.session_state.get(_ERROR)
        load_demo_into_state(DEFAULT_DEMO)
        st.session_state[_ERROR] = error
        return
    load_demo_into_state(DEFAULT_DEMO)


def current_models() -> dict[str, Predictions]:
    ensure_data()
    return st.session_state[_MODELS]


def current_source() -> dict:
    ensure_data()
    return st.session_state[_SOURCE]


def current_predictions() -> Predictions:
    """The selected model of the current data."""
    models = current_models()
    pick = st.session_state.get(_MODEL_PICK)
    return models.get(pick) or next(iter(models.values()))
