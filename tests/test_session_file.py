"""Session files (calibviz.io.session): round trip, and every way a file can be damaged or edited is refused."""
from __future__ import annotations

import base64
import hashlib
import json

import pytest

from calibviz.errors import InputError
from calibviz.io.session import (DataRef, SessionError, dump_session, parse_session, verify_models, FORMAT,
                                 VERSION)

DATA = b"label,p\n1,0.9\n0,0.2\n"
SHA = hashlib.sha256(DATA).hexdigest()
REF = DataRef(kind="upload", name="preds.csv", sha256=SHA, options={"label": "label", "probs": ("p",)},
              models={"preds": "0123456789abcdef"}, rows=2, model="preds")


def _reseal(body: dict) -> bytes:
    """An edited file with a recomputed checksum: what someone editing on purpose would make."""
    body.pop("checksum", None)
    canon = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    body["checksum"] = "sha256:" + hashlib.sha256(canon).hexdigest()
    return json.dumps(body).encode()


def test_round_trip_with_and_without_the_data():
    raw = dump_session(page="Reliability", settings={"scheme": "equal_mass", "bins": "11"}, data=REF,
                       payload=DATA)
    body = json.loads(raw)
    assert body["format"] == FORMAT and body["version"] == VERSION and body["embedded"]["bytes"] == len(DATA)
    assert base64.b64decode(body["embedded"]["data"]) == DATA  # plain JSON + base64: readable by any tool
    s = parse_session(raw)
    assert (s.page, s.settings, s.payload) == ("Reliability", {"scheme": "equal_mass", "bins": "11"}, DATA)
    assert s.data.options == {"label": "label", "probs": ["p"]} and s.data.models == REF.models
    assert (s.data.sha256, s.data.name, s.data.rows, s.data.model) == (SHA, "preds.csv", 2, "preds")
    bare = parse_session(dump_session(page="Compare", settings={}, data=REF))
    assert bare.payload is None and bare.data.sha256 == SHA
    demo = parse_session(dump_session(page="Data", settings={}, data=DataRef(
        kind="demo", name="hospital_readmission.csv", demo="hospital_readmission", models={"h": "a" * 16})))
    assert demo.data.demo == "hospital_readmission" and demo.data.sha256 is None


def test_embedding_other_bytes_than_the_named_file_is_refused():
    with pytest.raises(SessionError, match="SHA-256 differs"):
        dump_session(page="Data", settings={}, data=REF, payload=DATA + b"1,0.5\n")


@pytest.mark.parametrize("edit, message", [
    (lambda b: b.__setitem__("settings", {**b["settings"], "bins": "30"}), "checksum does not match"),
    (lambda b: b["data"].__setitem__("models", {"preds": "f" * 16}), "checksum does not match"),
    (lambda b: b.pop("checksum"), "checksum does not match"),
])
def test_an_edited_file_fails_its_checksum(edit, message):
    body = json.loads(dump_session(page="Reliability", settings={"bins": "11"}, data=REF, payload=DATA))
    edit(body)
    with pytest.raises(SessionError, match=message):
        parse_session(json.dumps(body).encode())


def _resealed(mutate) -> bytes:
    body = json.loads(dump_session(page="Reliability", settings={"bins": "11"}, data=REF, payload=DATA))
    mutate(body)
    return _reseal(body)


@pytest.mark.parametrize("mutate, message", [
    (lambda b: b["embedded"].__setitem__("data", base64.b64encode(DATA + b"0,0.1\n").decode()), "SHA-256 differs"),
    (lambda b: b["embedded"].__setitem__("data", "not base64!"), "not valid base64"),
    (lambda b: b["data"].__setitem__("sha256", "../../etc/passwd"), "not a SHA-256"),
    (lambda b: b["data"].__setitem__("kind", "pickle"), "unknown data source"),
    (lambda b: b["data"]["options"].__setitem__("exec", "import os"), "does not know"),
    (lambda b: b["data"]["options"].__setitem__("probs", "p"), "not a list of column names"),
    (lambda b: b["data"]["options"].__setitem__("logits", "yes"), "wrong type"),
    (lambda b: b["data"].__setitem__("models", {}), "fingerprints"),
    (lambda b: b["data"].__setitem__("models", {"preds": "xyz"}), "fingerprints"),
    (lambda b: b.__setitem__("settings", {"bins": 11}), "settings are not"),
    (lambda b: b.__setitem__("page", 3), "the page"),
    (lambda b: b.__setitem__("version", 99), "format version 99"),
    (lambda b: b["data"].__setitem__("rows", True), "row count"),
])
def test_resealed_but_invalid_content_is_refused(mutate, message):
    with pytest.raises(SessionError, match=message):
        parse_session(_resealed(mutate))


@pytest.mark.parametrize("raw, message", [
    (b"\x80\x04\x95 pickle", "not JSON"),
    (b"label,p\n1,0.9\n", "not JSON"),
    (b"[1, 2]", "not a session saved by calibviz"),
    (json.dumps({"format": "other"}).encode(), "not a session saved by calibviz"),
    (b"[" * 100_000 + b"]" * 100_000, "nested thousands of levels deep"),  # RecursionError: "a bug in calibviz"
])
def test_files_that_are_not_sessions(raw, message):
    with pytest.raises(SessionError, match=message):
        parse_session(raw)


def test_size_limit_and_error_type():
    raw = dump_session(page="Data", settings={}, data=REF, payload=DATA)
    with pytest.raises(SessionError, match="over the"):
        parse_session(raw, max_bytes=100)
    assert issubclass(SessionError, InputError)


def test_verify_models_names_what_differs():
    verify_models({"a": "0" * 16, "b": "1" * 16}, {"b": "1" * 16, "a": "0" * 16})
    with pytest.raises(SessionError, match="models missing: b"):
        verify_models({"a": "0" * 16, "b": "1" * 16}, {"a": "0" * 16})
    with pytest.raises(SessionError, match="models not in the session: c"):
        verify_models({"a": "0" * 16}, {"a": "0" * 16, "c": "2" * 16})
    with pytest.raises(SessionError, match="model 'a' has other predictions"):
        verify_models({"a": "0" * 16}, {"a": "2" * 16})


def test_a_file_opened_by_path_is_named_by_its_path_and_fields_never_embedded():
    fields = {"open": "/data/logs/*.parquet", "label": "outcome", "probs": "s", "per_model": ""}
    ref = DataRef(kind="opened", name=fields["open"], options=fields, models={"raw": "0123456789abcdef"},
                  rows=10**8, model="raw")
    s = parse_session(dump_session(page="Reliability", settings={"bins": "20"}, data=ref))
    assert (s.data.kind, s.data.name, s.data.options, s.data.rows, s.data.sha256, s.payload) == (
        "opened", "/data/logs/*.parquet", fields, 10**8, None, None)
    with pytest.raises(SessionError, match="read in place"):
        dump_session(page="Reliability", settings={}, data=ref, payload=b"rows")
    body = json.loads(dump_session(page="Reliability", settings={}, data=ref))
    for options, said in [({"label": "outcome"}, "path and the form's named values"),
                          ({**fields, "sql": "SELECT 1"}, "path and the form's named values"),
                          ({**fields, "per_model": True}, "path and the form's named values")]:
        body["data"]["options"] = options
        with pytest.raises(SessionError, match=said):
            parse_session(_reseal(dict(body)))
    body["data"]["options"] = {**fields, "open": "/data/other/*.parquet"}
    with pytest.raises(SessionError, match="name and path differ"):
        parse_session(_reseal(dict(body)))
    body["data"]["options"] = fields
    body["embedded"] = {"encoding": "base64", "bytes": 4, "data": "cm93cw=="}
    with pytest.raises(SessionError, match="read in place on the server"):
        parse_session(_reseal(dict(body)))
