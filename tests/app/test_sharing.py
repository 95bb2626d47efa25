"""Links and session files (issue #14 part 1): a link reproduces the view in a fresh session, from the
server's upload store; a link whose data is gone says so; page settings stay on their page; the model is in
the link; session files reopen the view and bad ones are refused with the previous data kept."""
from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd
import pytest
import streamlit as st

from calibviz.io.session import DataRef, dump_session
from calibviz.io.store import DatasetStore

from streamlit.testing.v1 import AppTest

from .helpers import ROOT, assert_clean, figures, metric_values, shown, upload

pytestmark = [pytest.mark.apptest, pytest.mark.usefixtures("clear_streamlit_caches")]

RELIABILITY = "pages/1_Reliability.py"


def app() -> AppTest:
    """app.py with a generous timeout: these tests run whole pages several times on a shared 2-core machine."""
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)


def _csv(n: int = 400, seed: int = 3) -> bytes:
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.02, 0.98, n)
    df = pd.DataFrame({"label": rng.binomial(1, np.clip(p + 0.1, 0, 1)), "p": p.round(4),
                       "x": rng.normal(size=n).round(3)})
    return df.to_csv(index=False).encode()


def _params(at) -> dict[str, str]:
    out = {}
    for k, v in at.query_params.items():
        out[k] = v[0] if isinstance(v, list) else v
    return out


def _fresh(page: str, params: dict, *, restart: bool = True):
    """A new session (another browser), with caches emptied as after a server restart (``restart=False``: another
    visitor of the same server, whose results cached under the same data and settings are shared)."""
    if restart:
        st.cache_data.clear()
        st.cache_resource.clear()
    at = app()  # a deep link: the page is the first script this session runs
    if page != "app.py":
        at.switch_page(page)
    for k, v in params.items():
        at.query_params[k] = v
    return at.run()


def _reliability_figure(at) -> dict:
    figs = figures(at)
    assert figs, "the page shows its diagram"
    return figs[0]["data"]


def test_an_upload_link_reproduces_the_view_in_a_fresh_session_from_the_store():
    data = _csv()
    at = app().run()
    upload(at, "shared_preds.csv", data)
    at.switch_page(RELIABILITY).run()
    at.selectbox(key="w_scheme").set_value("equal_mass").run()
    at.slider(key="w_bins").set_value(11).run()
    assert_clean(at)
    params = _params(at)
    assert params["data"] == "upload:" + hashlib.sha256(data).hexdigest()
    assert params["scheme"] == "equal_mass" and params["bins"] == "11"
    assert "map" not in params  # the detected mapping
    original = _reliability_figure(at)

    fresh = _fresh(RELIABILITY, params)
    assert_clean(fresh)
    assert not fresh.error and not fresh.warning, [shown(e) for e in [*fresh.error, *fresh.warning]]
    src = fresh.session_state["cv_source"]
    assert (src["name"], src["kind"]) == ("shared_preds.csv", "upload")
    assert fresh.session_state["cv_settings"]["scheme"] == "equal_mass"
    assert fresh.session_state["cv_settings"]["bins"] == 11
    assert _reliability_figure(fresh) == original  # the same diagram, number for number
    assert _params(fresh) == params  # and the same link


def test_a_links_column_mapping_is_stored_with_the_file():
    rng = np.random.default_rng(8)
    p_a = rng.uniform(0.05, 0.95, 300).round(4)
    df = pd.DataFrame({"outcome": np.where(rng.uniform(size=300) < p_a, "a", "b"), "score": p_a})
    data = df.to_csv(index=False).encode()
    options = {"label": "outcome", "probs": ("score",), "positive": "a"}
    key, map_id = DatasetStore.from_env().put(data, "scores.csv", options)
    assert map_id
    at = _fresh(RELIABILITY, {"data": f"upload:{key}", "map": map_id})
    assert_clean(at)
    preds = next(iter(at.session_state["cv_models"].values()))
    assert str(preds.positive_label) == "a"
    assert np.allclose(preds.probs[:, 1], p_a)  # the score read as P(a), as the uploader mapped it
    assert _params(at)["map"] == map_id
    # an unknown mapping id is not replaced by a guess: the link says so
    other = _fresh(RELIABILITY, {"data": f"upload:{key}", "map": "0123456789ab"})
    assert other.error and "mapping of the link is not known" in shown(other.error[0])
    assert not figures(other)


def test_a_link_whose_data_is_gone_says_so_shows_nothing_else_and_offers_the_way_back():
    gone = "upload:" + "ab" * 32
    at = _fresh(RELIABILITY, {"data": gone, "bins": "11"})
    assert_clean(at)
    assert at.error, "the page says the data is not there"
    text = shown(at.error[0])
    assert "not on this server" in text and "no longer holds" in text and "Nothing is shown in its place" in text
    assert not figures(at)  # no other data passes for the link's
    assert any(p.proto.label == "Upload the file on the Data page" and p.proto.page == ""  # "" = the main page
               for p in at.get("page_link"))
    assert _params(at)["data"] == gone  # the address keeps the link
    at.button(key="cv_lost_demo").click().run()
    assert_clean(at)
    assert not at.error and figures(at)
    assert at.session_state["cv_source"]["demo"] == "hospital_readmission"
    assert _params(at)["data"] == "hospital_readmission" and _params(at)["bins"] == "11"


def test_a_damaged_stored_copy_is_reported_not_shown():
    data = _csv(seed=11)
    store = DatasetStore.from_env()
    key, _ = store.put(data, "damaged.csv")
    (store.root / f"{key}.data").write_bytes(data.replace(b"0.", b"0,", 1))
    at = _fresh(RELIABILITY, {"data": f"upload:{key}"})
    assert at.error and "damaged" in shown(at.error[0])
    assert not figures(at) and key not in store


def test_page_settings_stay_on_their_page_and_in_the_session():
    at = app().run()
    at.switch_page("pages/4_Variables.py").run()
    options = at.selectbox(key="w_feature").options
    chosen = "bmi" if at.selectbox(key="w_feature").value != "bmi" else "age"
    assert chosen in options
    at.selectbox(key="w_feature").set_value(chosen).run()
    assert_clean(at)
    assert _params(at)["feature"] == chosen
    for page in (RELIABILITY, "app.py", "pages/2_Test_based.py"):
        at.switch_page(page).run()
        assert_clean(at)
        assert "feature" not in _params(at), (page, _params(at))
    at.switch_page(RELIABILITY).run()
    at.radio(key="w_diagram").set_value("corp").run()
    assert _params(at)["diagram"] == "corp"
    at.switch_page("pages/4_Variables.py").run()
    assert_clean(at)
    params = _params(at)
    assert params["feature"] == chosen and "diagram" not in params  # remembered, and only here
    assert at.selectbox(key="w_feature").value == chosen


def test_the_model_is_in_the_link():
    at = _fresh(RELIABILITY, {"data": "loan_recalibration", "boot": "0"})
    raw_fig = _reliability_figure(at)
    at.selectbox(key="w_model").set_value("recalibrated").run()
    assert_clean(at)
    params = _params(at)
    assert params == {"model": "recalibrated", "data": "loan_recalibration", "boot": "0"}
    # Same server: the session state comes from the link alone, while the cached results (keyed on the model's
    # fingerprint and name) spare three recomputations of the whole page.
    fresh = _fresh(RELIABILITY, params, restart=False)
    assert_clean(fresh)
    assert fresh.session_state["cv_model"] == "recalibrated"
    assert fresh.selectbox(key="w_model").value == "recalibrated"
    assert _reliability_figure(fresh) != raw_fig and _reliability_figure(fresh) == _reliability_figure(at)
    # back to the first model: the link no longer names one
    fresh.selectbox(key="w_model").set_value("raw").run()
    assert "model" not in _params(fresh)
    bad = _fresh(RELIABILITY, {"data": "loan_recalibration", "model": "nope", "boot": "0"}, restart=False)
    assert any("model=nope" in shown(w) for w in bad.warning)
    assert bad.session_state["cv_model"] == "raw"


def test_compare_hides_the_model_picker_the_other_pages_show_it():
    """page_setup(..., model_picker=False): the Compare page shows every model and picks its reference itself."""
    if "model_picker=False" not in (ROOT / "pages/5_Compare.py").read_text():
        pytest.skip("the Compare page does not call page_setup(model_picker=False) yet")
    # no intervals: fast; same server as the test before, whose cached Reliability results it may reuse
    at = _fresh("pages/5_Compare.py", {"data": "loan_recalibration", "boot": "0"}, restart=False)
    assert_clean(at)
    assert "w_model" not in [s.key for s in at.sidebar.selectbox]
    at.switch_page(RELIABILITY).run()
    assert "w_model" in [s.key for s in at.sidebar.selectbox]


def test_a_long_file_name_wraps_at_its_separators_in_the_sidebar():
    at = app().run()
    upload(at, "breast_cancer_five_models.csv", _csv(seed=4))
    caption = next(c for c in at.sidebar.caption if "Data:" in c.value)
    assert "breast\\_\u200bcancer\\_\u200bfive\\_\u200bmodels\\.\u200bcsv" in caption.value
    assert "breast_cancer_five_models.csv" in shown(caption).replace("\u200b", "")


# -- session files ---------------------------------------------------------------------------------------

def _session_of(at, page: str, *, embed: bool = True) -> bytes:
    """The session file of an AppTest's state, built as the sidebar's 'Save session' builds it."""
    from calibviz.ui.settings import SETTINGS, _url_value

    src = at.session_state["cv_source"]
    values = {k: _url_value(v) for k, v in at.session_state["cv_settings"].items() if k in SETTINGS}
    data = at.session_state["cv_bytes"]
    ref = DataRef(kind=src["kind"], name=src["name"], sha256=src.get("store_key") or None, demo=src.get("demo"),
                  options=dict(src["options"]), models=dict(src["fingerprints"]), rows=None,
                  model=at.session_state["cv_model"])
    return dump_session(page=page, settings=values, data=ref, payload=data if embed and src["kind"] != "demo"
                        else None)


def _open_session(at, raw: bytes, name: str = "view.calibviz.json"):
    if not at.toggle(key="cv_session_show").value:
        at.toggle(key="cv_session_show").set_value(True).run()
    at.file_uploader(key="cv_session_file").set_value((name, raw, "application/json"))
    return at.run()


def test_a_saved_session_reopens_the_same_view_on_a_server_that_never_saw_the_file(tmp_path, monkeypatch):
    data = _csv(seed=21)
    at = app().run()
    upload(at, "session_preds.csv", data)
    at.switch_page(RELIABILITY).run()
    at.selectbox(key="w_scheme").set_value("equal_mass").run()
    at.slider(key="w_bins").set_value(9).run()
    assert_clean(at)
    raw = _session_of(at, "Reliability")
    original = _reliability_figure(at)
    assert at.get("download_button"), "the sidebar offers 'Save session'"

    monkeypatch.setenv("CALIBVIZ_STORE_DIR", str(tmp_path / "another_server"))  # an empty store
    st.cache_data.clear()
    fresh = app().run()
    _open_session(fresh, raw)
    assert_clean(fresh)
    assert not fresh.error, [shown(e) for e in fresh.error]
    assert fresh.session_state["cv_source"]["name"] == "session_preds.csv"
    assert fresh.session_state["cv_settings"]["scheme"] == "equal_mass"
    assert fresh.session_state["cv_settings"]["bins"] == 9
    assert _reliability_figure(fresh) == original  # switched to the saved page, same diagram
    assert _params(fresh)["data"] == "upload:" + hashlib.sha256(data).hexdigest()
    # the embedded file is now in this server's store: its links work here too
    assert hashlib.sha256(data).hexdigest() in DatasetStore.from_env()
    # values this version does not accept are validated as a link's and named, the rest opens
    body = json.loads(raw)
    body["settings"].update(bins="99", colour="red")
    body.pop("checksum")
    body["checksum"] = "sha256:" + hashlib.sha256(json.dumps(
        body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()).hexdigest()
    fresh.switch_page("app.py").run()
    _open_session(fresh, json.dumps(body).encode(), name="edited.calibviz.json")
    assert_clean(fresh)
    warnings = [shown(w) for w in fresh.warning]
    assert any("Ignored settings of the session file" in w and "bins=99" in w and "colour=red" in w
               for w in warnings), warnings
    assert fresh.session_state["cv_settings"]["bins"] == 15 and fresh.session_state["cv_settings"]["scheme"] == "equal_mass"


def test_bad_session_files_are_refused_and_the_previous_view_is_kept(tmp_path, monkeypatch):
    data = _csv(seed=22)
    at = app().run()
    upload(at, "kept.csv", data)
    good = json.loads(_session_of(at, "Reliability"))
    no_data = _session_of(at, "Reliability", embed=False)
    at.selectbox(key="cv_demo_pick").set_value("loan_recalibration").run()
    at.slider  # noqa: B018 - the loan demo is the data to keep
    before = metric_values(at)
    settings_before = dict(at.session_state["cv_settings"])

    def resealed(body):
        body = json.loads(json.dumps(body))
        body.pop("checksum")
        canon = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
        body["checksum"] = "sha256:" + hashlib.sha256(canon).hexdigest()
        return json.dumps(body).encode()

    tampered = dict(good, settings={**good["settings"], "bins": "40"})
    wrong_fp = json.loads(json.dumps(good))
    wrong_fp["data"]["models"] = {k: "0" * 16 for k in wrong_fp["data"]["models"]}
    monkeypatch.setenv("CALIBVIZ_STORE_DIR", str(tmp_path / "empty_store"))
    cases = [
        (b"not json at all", "not JSON"),
        (json.dumps(tampered).encode(), "checksum does not match"),
        (resealed(wrong_fp), "differ from the saved data"),
        (no_data, "does not include its data"),
    ]
    for i, (raw, message) in enumerate(cases):
        _open_session(at, raw, name=f"bad{i}.calibviz.json")
        assert_clean(at)
        errors = [shown(e) for e in at.error]
        assert any(message in e and "previously loaded data and settings are kept" in e for e in errors), (message,
                                                                                                         errors)
        assert not any("Traceback" in e or "{" in e for e in errors)
        assert at.session_state["cv_source"]["demo"] == "loan_recalibration"
        assert metric_values(at) == before
        assert at.session_state["cv_settings"] == settings_before
    # a refused session leaves nothing in the server's store (the embedded file of the mismatched one)
    assert not DatasetStore.from_env().keys()
