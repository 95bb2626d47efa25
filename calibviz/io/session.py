"""Session files: one JSON file that reopens a dashboard view later (settings, the data's identity, the data).

A session file holds what defines a view and nothing that runs:

- ``page``: the dashboard page (its title, e.g. ``"Reliability"``);
- ``settings``: every view setting as the text a link would carry (``{"scheme": "equal_mass", "bins": "11"}``),
  so opening a session validates them exactly as a link's;
- ``data``: where the data came from (``kind``: demo / upload / file, file ``name``, ``demo`` name), the
  SHA-256 of the file's bytes, the column-mapping ``options`` it was loaded with, and the fingerprint of
  each model's predictions (:meth:`calibviz.io.Predictions.fingerprint`). For a large file opened by path on
  the server (``kind`` "opened", never embedded: it is read in place), ``name`` is its path, ``options`` the
  fields it was opened with (:data:`OPENED_KEYS`, as a link carries them) and the fingerprint the analysed
  model's (:meth:`calibviz.scan.Scan.fingerprint`);
- optionally ``embedded``: the file's bytes in base64, so the session opens on a server that never saw the
  file. Without them the server must hold the file in its upload store (:mod:`calibviz.io.store`) or ship
  the demo;
- ``checksum``: the SHA-256 of everything else.

Why JSON with base64 rather than a zip or a pickle: one human-readable file that any tool can inspect, that
needs no archive handling, and that cannot carry code (nothing is ever unpickled). Base64 costs a third more
bytes; files larger than :data:`EMBED_LIMIT_BYTES` are referenced by digest only.

What the checks catch: a truncated or hand-edited file (checksum), embedded bytes that are not the saved
file (their SHA-256), and data that load differently from what was saved (the model fingerprints, checked
by the dashboard after loading with :func:`verify_models`). The checksum is not a signature: someone who
edits the file on purpose can recompute it, which is why every value is validated again on opening, as a
link's values are.

Examples
--------
>>> ref = DataRef(kind="upload", name="preds.csv", sha256=hashlib.sha256(b"label,p").hexdigest(),
...               options={"label": "label"}, models={"preds": "0123456789abcdef"}, rows=1)
>>> raw = dump_session(page="Reliability", settings={"bins": "11"}, data=ref, payload=b"label,p")
>>> s = parse_session(raw)
>>> s.page, s.settings, s.data.options, s.payload
('Reliability', {'bins': '11'}, {'label': 'label'}, b'label,p')
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone

from ..errors import InputError
from .limits import _size

__all__ = ["SessionError", "DataRef", "Session", "dump_session", "parse_session", "verify_models",
           "FORMAT", "VERSION", "EMBED_LIMIT_BYTES", "OPTION_KEYS", "OPENED_KEYS"]

FORMAT = "calibviz-session"
VERSION = 1
#: Files up to this size are embedded in a session file by default (base64 makes the file a third larger).
EMBED_LIMIT_BYTES = 200 * 1024**2
#: Loading options a session may carry (the keywords of calibviz.predictions_from_frame a user can set).
OPTION_KEYS = {"label": str, "probs": list, "weight": str, "logits": bool, "positive": str, "model": str,
               "features": list, "renormalize": bool, "drop_invalid": bool, "encoding": str, "delimiter": str, "decimal": str}
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_HEX16 = re.compile(r"^[0-9a-f]{16}$")
_KINDS = ("demo", "upload", "file", "opened")
#: The fields of a file opened by path that a session records (the Large data page's form, as a link carries them).
OPENED_KEYS = ("open", "engine", "label", "probs", "weight", "positive", "per_model", "renormalize", "drop_invalid")


class SessionError(InputError):
    """A session file that cannot be opened; the message says what is wrong with it."""


@dataclass(frozen=True)
class DataRef:
    """The identity of a session's data: source, file digest, column mapping, model fingerprints."""

    kind: str
    name: str
    sha256: str | None = None
    demo: str | None = None
    options: dict = field(default_factory=dict)
    models: dict = field(default_factory=dict)  # {model name: Predictions.fingerprint()}
    rows: int | None = None
    model: str | None = None  # the analysed model


@dataclass(frozen=True)
class Session:
    """A parsed, validated session file."""

    page: str
    settings: dict
    data: DataRef
    payload: bytes | None = field(default=None, repr=False)
    saved_at: str | None = None
    calibviz_version: str | None = None


def _canonical(body: dict) -> bytes:
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def dump_session(*, page: str, settings: dict, data: DataRef, payload: bytes | None = None,
                 calibviz_version: str | None = None) -> bytes:
    """The bytes of a session file (UTF-8 JSON).

    Parameters
    ----------
    page : str
        Title of the page the session reopens.
    settings : dict of str to str
        The view settings as link text.
    data : DataRef
        Identity of the data; ``sha256`` is required unless ``kind == "demo"``.
    payload : bytes, optional
        The data file's bytes to embed; must hash to ``data.sha256``.
    """
    if payload is not None and data.kind == "opened":
        raise SessionError("a file opened by path is read in place: its session file names it, it cannot embed it.")
    if payload is not None:
        digest = hashlib.sha256(payload).hexdigest()
        if data.sha256 not in (None, digest):
            raise SessionError("the embedded bytes are not the file the session names (SHA-256 differs).")
        data = replace(data, sha256=digest)
    if calibviz_version is None:
        from .. import __version__ as calibviz_version
    body = {
        "format": FORMAT, "version": VERSION, "calibviz_version": calibviz_version,
        "saved_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "page": str(page), "settings": {str(k): str(v) for k, v in settings.items()},
        "data": {"kind": data.kind, "name": data.name, "sha256": data.sha256, "demo": data.demo,
                 "options": {k: list(v) if isinstance(v, tuple) else v for k, v in (data.options or {}).items()},
                 "models": dict(data.models), "rows": data.rows, "model": data.model},
    }
    if payload is not None:
        body["embedded"] = {"encoding": "base64", "bytes": len(payload),
                            "data": base64.b64encode(payload).decode("ascii")}
    body["checksum"] = "sha256:" + hashlib.sha256(_canonical(body)).hexdigest()
    return json.dumps(body, indent=1, sort_keys=True, ensure_ascii=False).encode("utf-8")


def _fail(what: str) -> SessionError:
    return SessionError(f"this is not a usable calibviz session file: {what}")


def _text(value, what: str, *, empty: bool = False) -> str:
    if not isinstance(value, str) or (not empty and not value):
        raise _fail(f"{what} is missing or not text.")
    return value


def _options(raw, kind: str) -> dict:
    if not isinstance(raw, dict):
        raise _fail("the column mapping is not a list of named options.")
    if kind == "opened":  # the opening form's fields, as text (validated again when the file is opened)
        if not all(k in OPENED_KEYS and isinstance(v, str) for k, v in raw.items()) or not raw.get("open"):
            raise _fail("the fields of the opened file are not the path and the form's named values.")
        return dict(raw)
    out = {}
    for key, value in raw.items():
        kind = OPTION_KEYS.get(key)
        if kind is None:
            raise _fail(f"the column mapping has an option this version does not know ({str(key)[:40]!r}).")
        if value is None:
            continue
        if kind is list:
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise _fail(f"the mapping option {key!r} is not a list of column names.")
        elif not isinstance(value, kind):
            raise _fail(f"the mapping option {key!r} has the wrong type.")
        out[key] = value
    return out


def parse_session(raw: bytes, *, max_bytes: int | None = None) -> Session:
    """Parse and validate the bytes of a session file.

    Raises
    ------
    SessionError
        With what is wrong: not JSON, not a session, another version, a checksum or digest that does not
        match (the file was changed or damaged), fields of the wrong type.
    """
    if max_bytes is not None and len(raw) > max_bytes:
        raise SessionError(f"the session file is {_size(len(raw))}, over the {_size(max_bytes)} limit.")
    try:
        body = json.loads(bytes(raw).decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise _fail("it is not JSON text (a session file is saved by calibviz's 'Save session').") from None
    except RecursionError:  # the parser's recursion limit: arrays nested thousands deep
        raise _fail("it is JSON nested thousands of levels deep, not a session saved by calibviz.") from None
    if not isinstance(body, dict) or body.get("format") != FORMAT:
        raise _fail("it is JSON, but not a session saved by calibviz.")
    if body.get("version") != VERSION:
        raise _fail(f"it has format version {str(body.get('version'))[:20]}; this calibviz reads version {VERSION}.")
    checksum = body.pop("checksum", None)
    if not isinstance(checksum, str) or checksum != "sha256:" + hashlib.sha256(_canonical(body)).hexdigest():
        raise _fail("its checksum does not match its content: the file was changed or damaged after it was saved.")
    page = _text(body.get("page"), "the page")
    settings = body.get("settings")
    if not isinstance(settings, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                 for k, v in settings.items()):
        raise _fail("the settings are not a list of named values.")
    d = body.get("data")
    if not isinstance(d, dict):
        raise _fail("it does not say which data it shows.")
    kind = d.get("kind")
    if kind not in _KINDS:
        raise _fail(f"unknown data source {str(kind)[:20]!r}.")
    sha = d.get("sha256")
    if sha is not None and not (isinstance(sha, str) and _HEX64.match(sha)):
        raise _fail("the data digest is not a SHA-256.")
    demo = d.get("demo")
    if kind == "demo":
        _text(demo, "the demo's name")
    elif sha is None and kind != "opened":
        raise _fail("it names an uploaded file without its digest.")
    models = d.get("models")
    if not isinstance(models, dict) or not models or not all(
            isinstance(k, str) and isinstance(v, str) and _HEX16.match(v) for k, v in models.items()):
        raise _fail("the fingerprints of the data's models are missing or malformed.")
    rows = d.get("rows")
    if rows is not None and (not isinstance(rows, int) or isinstance(rows, bool) or rows < 0):
        raise _fail("the row count is not a number.")
    model = d.get("model")
    if model is not None and not isinstance(model, str):
        raise _fail("the analysed model is not a name.")
    payload = None
    emb = body.get("embedded")
    if emb is not None and kind == "opened":
        raise _fail("it embeds data for a file opened by path, which is read in place on the server.")
    if emb is not None:
        if not isinstance(emb, dict) or emb.get("encoding") != "base64" or not isinstance(emb.get("data"), str):
            raise _fail("the embedded data are not base64 text.")
        try:
            payload = base64.b64decode(emb["data"], validate=True)
        except (binascii.Error, ValueError):
            raise _fail("the embedded data are not valid base64.") from None
        if hashlib.sha256(payload).hexdigest() != sha:
            raise _fail("the embedded data are not the file the session names (their SHA-256 differs).")
    options = _options(d.get("options", {}), kind)
    if kind == "opened" and d.get("name") != options["open"]:  # one path, the one named and the one opened
        raise _fail("the opened file's name and path differ.")
    ref = DataRef(kind=kind, name=_text(d.get("name"), "the data's file name"), sha256=sha,
                  demo=demo if kind == "demo" else None, options=options,
                  models=dict(models), rows=rows, model=model)
    return Session(page=page, settings=dict(settings), data=ref, payload=payload,
                   saved_at=body.get("saved_at") if isinstance(body.get("saved_at"), str) else None,
                   calibviz_version=body.get("calibviz_version") if isinstance(body.get("calibviz_version"), str)
                   else None)


def verify_models(expected: dict, actual: dict) -> None:
    """Check that loaded data are the session's: same model names, same fingerprints.

    Raises
    ------
    SessionError
        Naming the first model whose predictions differ, or the models that are missing or extra.

    >>> verify_models({"a": "0" * 16}, {"a": "0" * 16})
    >>> verify_models({"a": "0" * 16}, {"a": "1" * 16})
    Traceback (most recent call last):
    ...
    calibviz.io.session.SessionError: the data loaded for this session differ from the saved data: model 'a' has other predictions (fingerprint 1111111111111111, saved 0000000000000000).
    """
    if set(expected) != set(actual):
        missing = sorted(set(expected) - set(actual))
        extra = sorted(set(actual) - set(expected))
        raise SessionError("the data loaded for this session differ from the saved data: "
                           + "; ".join(filter(None, [f"models missing: {', '.join(missing)}" if missing else "",
                                                     f"models not in the session: {', '.join(extra)}" if extra
                                                     else ""])) + ".")
    for name, fp in expected.items():
        if actual[name] != fp:
            raise SessionError(f"the data loaded for this session differ from the saved data: model {name!r} has "
                               f"other predictions (fingerprint {actual[name]}, saved {fp}).")
