"""Links to a view of a file opened by path (calibviz.ui.scan.link_params / open_from_link): a link opens the file
again in a fresh session, with the form's fields and the model, and shows the same numbers; it is checked against the
server's allowed directories like the form; a link whose file cannot be opened says so and shows nothing in its
place; a page analysing the data in memory carries no path."""
from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from .helpers import ROOT, assert_clean, figures, shown

pytestmark = [pytest.mark.apptest, pytest.mark.usefixtures("clear_streamlit_caches")]

RELIABILITY, LARGE = "pages/1_Reliability.py", "pages/8_Large_data.py"


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    """An allowed directory with a two-model log whose score column is not named like a score (the link must carry
    the form's fields), and a copy of it outside the allowed directory."""
    base = tmp_path_factory.mktemp("scan_links")
    allowed = base / "logs"
    allowed.mkdir()
    rng = np.random.default_rng(5)
    n = 3000
    s = rng.uniform(size=n)
    y = (rng.uniform(size=n) < s ** 1.3).astype(int)
    frame = pd.DataFrame({"outcome": np.r_[y, y], "s": np.r_[s, np.clip(0.05 + 0.9 * s, 0, 1)],
                          "model": ["raw"] * n + ["shrunk"] * n})
    frame.to_parquet(allowed / "scores.parquet")
    frame.to_parquet(base / "outside.parquet")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CALIBVIZ_SCAN_ROOTS", str(allowed))
        yield allowed


def app() -> AppTest:
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)


def _params(at) -> dict[str, str]:
    return {k: v[0] if isinstance(v, list) else v for k, v in at.query_params.items()}


def _fresh(page: str, params: dict) -> AppTest:
    """A new session (another browser) after a server restart, opening ``page`` with ``params`` in its address."""
    st.cache_data.clear()
    st.cache_resource.clear()
    at = app()
    if page != "app.py":
        at.switch_page(page)
    for k, v in params.items():
        at.query_params[k] = v
    return at.run()


def _open_in_form(at, path: str, **fields) -> AppTest:
    at.switch_page(LARGE).run()
    at.text_input(key="w_scan_path").set_value(path)
    for name, value in fields.items():
        at.text_input(key=f"w_scan_{name}").set_value(value)
    at.button[0].click()
    return at.run()


def _shrunk_in_equal_mass_bins(path: str) -> AppTest:
    """The two-model file opened and analysed, its model 'shrunk' on the Reliability page in equal-mass bins."""
    at = _open_in_form(app().run(), path, label="outcome", probs="s")
    assert not at.error, [shown(e) for e in at.error]
    at.button(key="scan_use").click()
    at.run()
    at.switch_page(RELIABILITY).run()
    at.sidebar.selectbox(key="w_scan_pick").set_value("shrunk").run()
    at.selectbox(key="w_scheme").set_value("equal_mass").run()
    assert_clean(at)
    return at


def test_a_link_to_an_analysed_file_reopens_it_with_its_fields_and_model(root):
    path = str(root / "scores.parquet")
    at = _shrunk_in_equal_mass_bins(path)
    params = _params(at)
    assert {k: params.get(k) for k in ("open", "label", "probs", "analyse", "model", "scheme")} == {
        "open": path, "label": "outcome", "probs": "s", "analyse": "1", "model": "shrunk", "scheme": "equal_mass"}
    assert not {"engine", "weight", "per_model"} & set(params)  # the defaults stay out of the link
    original = figures(at)[0]["data"]
    table = at.dataframe[1].value

    fresh = _fresh(RELIABILITY, params)
    assert_clean(fresh)
    assert not fresh.error and not fresh.warning, [shown(e) for e in [*fresh.error, *fresh.warning]]
    assert any("Data (opened file)" in c.value for c in fresh.sidebar.caption)
    assert fresh.session_state["cv_scan_model"] == "shrunk"
    assert figures(fresh)[0]["data"] == original  # the same diagram, number for number
    pd.testing.assert_frame_equal(fresh.dataframe[1].value, table)
    assert _params(fresh) == params  # and the same link


def test_a_link_outside_the_allowed_directories_opens_nothing_and_shows_nothing_in_its_place(root):
    outside = str(root.parent / "outside.parquet")
    at = _fresh(RELIABILITY, {"open": outside, "label": "outcome", "probs": "s", "analyse": "1", "model": "shrunk"})
    assert_clean(at)
    assert not at.warning, [shown(w) for w in at.warning]  # the file's model is no invalid setting of the link
    assert at.error, "the page says the file cannot be opened"
    text = shown(at.error[0])
    assert "cannot be opened here" in text and "outside the directories this server may read" in text, text
    assert "Nothing is shown in its place" in text
    assert not figures(at)  # the demo in memory does not pass for the link's file
    assert [t.value for t in at.title] == ["Reliability"]  # the notice is the page, under the page's name
    assert "cv_scan" not in at.session_state  # nothing was opened
    assert any(p.proto.label == "Open a file on the Large data page" for p in at.get("page_link"))
    # the Large data page goes on: its form is the way to open the file (or another); the address keeps the link
    link = {"open": outside, "label": "outcome", "probs": "s", "analyse": "1"}
    large = _fresh(LARGE, link)
    assert_clean(large)
    assert "cannot be opened here" in shown(large.error[0])
    assert large.text_input(key="w_scan_path") is not None
    assert {k: _params(large).get(k) for k in link} == link  # a reload tries the file again
    # opening an allowed file answers the notice
    at = _open_in_form(at, str(root / "scores.parquet"), label="outcome", probs="s")
    assert not at.error, [shown(e) for e in at.error]


@pytest.mark.parametrize("params, said", [
    ({"engine": "oracle"}, "its engine 'oracle' is none of duckdb, polars, spark"),
    ({"probs": "no_such_column"}, "no_such_column"),
    ({"open": "LONG"}, "cannot be read on this server (File name too long)"),  # an OSError, not a traceback
])
def test_a_link_with_fields_that_do_not_fit_the_file_says_why(root, params, said):
    if params.get("open") == "LONG":
        params = {"open": str(root / ("a" * 300))}
    at = _fresh(RELIABILITY, {"open": str(root / "scores.parquet"), "label": "outcome", "probs": "s",
                              "analyse": "1", **params})
    assert_clean(at)
    assert at.error and said in shown(at.error[0]), [shown(e) for e in at.error]
    assert not figures(at)


def test_a_page_on_the_data_in_memory_carries_no_path_and_the_large_data_page_does(root):
    path = str(root / "scores.parquet")
    at = _open_in_form(app().run(), path, label="outcome", probs="s")
    params = _params(at)
    assert params["open"] == path and "analyse" not in params  # opened, not analysed on every page
    fresh = _fresh(LARGE, params)
    assert_clean(fresh)
    assert not fresh.error, [shown(e) for e in fresh.error]
    assert any(path in shown(m) for m in fresh.markdown)  # the page shows the file again
    # and its form says what is open (Streamlit forgets a form's values between pages)
    assert fresh.text_input(key="w_scan_path").value == path
    assert (fresh.text_input(key="w_scan_label").value, fresh.text_input(key="w_scan_probs").value) == ("outcome", "s")
    assert "cv_scan_active" not in fresh.session_state  # opened, not analysed on every page
    fresh.switch_page(RELIABILITY).run()
    assert "open" not in _params(fresh)  # this page shows the demo in memory: the link does not name the file


def test_a_label_column_of_words_is_opened_with_the_positive_class_and_its_link_keeps_it(root):
    """Labels churn / stay with one probability column: the error asked for a Positive class the form did not
    have (a walk-through); the form has it, and the link carries it."""
    rng = np.random.default_rng(8)
    p = rng.uniform(size=2000)
    churn = rng.uniform(size=2000) < p
    pd.DataFrame({"y": np.where(churn, "churn", "stay"), "p": p}).to_parquet(root / "churn.parquet")
    path = str(root / "churn.parquet")
    at = _open_in_form(app().run(), path)
    assert "Choose the Positive class" in shown(at.error[0]) and "in this form" in shown(at.error[0])
    at = _open_in_form(at, path, positive="churn")
    assert not at.error, [shown(e) for e in at.error]
    assert at.session_state["cv_scan"].prevalence == pytest.approx(churn.mean())
    params = _params(at)
    assert params.get("positive") == "churn"
    fresh = _fresh(LARGE, params)
    assert not fresh.error, [shown(e) for e in fresh.error]
    assert fresh.session_state["cv_scan"].prevalence == pytest.approx(churn.mean())
    assert fresh.text_input(key="w_scan_positive").value == "churn"


def test_the_report_page_gives_the_command_that_reports_the_opened_file(root, tmp_path):
    """The Report page works on data in memory; with a file open it gives the command line that reports the file
    (a walk-through looked for it there), and that command runs."""
    import shlex
    import subprocess
    import sys

    path = str(root / "scores.parquet")
    at = _open_in_form(app().run(), path, label="outcome", probs="s")
    at.button(key="scan_use").click().run()
    at.switch_page("pages/6_Report.py").run()
    at.select_slider(key="w_alpha").set_value(0.1).run()
    text = next(i.value for i in at.info if "by the command line on the server" in i.value)
    shown_command = at.code[0].value  # a code block with a copy button, continued over lines between options
    assert all(len(line) <= 70 for line in shown_command.splitlines()[1:]), shown_command
    command = " ".join(shown_command.replace("\\\n", " ").split())  # as the shell reads it
    assert command.startswith("calibviz report ") and "--label outcome --probs s" in command
    # the sidebar's settings, as the Report page's own report records them (the command dropped them)
    assert "--binning uniform --bins 15 --alpha 0.1" in command and "--seed 0" in command, command
    assert "most of it the bootstrap intervals, which `--ci 0` leaves out" in text
    words = shlex.split(command)
    words[words.index("-o") + 1] = str(tmp_path / "r.html")
    done = subprocess.run([sys.executable, "-m", "calibviz", *words[1:], "--reference", "0"], capture_output=True,
                          text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr[-500:]
    assert (tmp_path / "r.html").stat().st_size > 10_000


def test_no_report_command_for_one_model_per_column(root):
    """The command line has no option for 'One model per column': a command that left the columns to detection
    failed on them (a review), so the page gives none."""
    rng = np.random.default_rng(2)
    p = rng.uniform(size=2000)
    pd.DataFrame({"y": (rng.uniform(size=2000) < p).astype(int), "score_a": p, "score_b": p ** 1.2}).to_parquet(
        root / "per_model.parquet")
    at = app().run()
    at.switch_page(LARGE).run()
    at.text_input(key="w_scan_path").set_value(str(root / "per_model.parquet"))
    at.text_input(key="w_scan_probs").set_value("score_a, score_b")
    at.checkbox(key="w_scan_per_model").check()
    at.button[0].click()
    at.run()
    assert not at.error, [shown(e) for e in at.error]
    at.button(key="scan_use").click().run()
    at.switch_page("pages/6_Report.py").run()
    assert any("works on data in memory" in i.value for i in at.info)
    assert not any("by the command line on the server" in i.value for i in at.info) and not at.code


def test_the_report_command_leaves_out_models_whose_rows_fail(root, tmp_path):
    """The command reports every model: it stopped at the model whose rows failed when the dashboard opened the
    log on the other one (a walk-through). The command's query leaves that model out, and runs."""
    import shlex
    import subprocess
    import sys

    rng = np.random.default_rng(4)
    p = rng.uniform(size=4000)
    y = (rng.uniform(size=4000) < p).astype(int)
    bad = p.copy()
    bad[:5] = 1.3
    pd.DataFrame({"y": np.r_[y, y], "p": np.r_[bad, p], "model": ["a_bad"] * 4000 + ["b_good"] * 4000}).to_parquet(
        root / "two_models.parquet")
    at = _open_in_form(app().run(), str(root / "two_models.parquet"))
    assert not at.error, [shown(e) for e in at.error]
    at.button(key="scan_use").click().run()
    at.switch_page("pages/6_Report.py").run()
    assert any("by the command line on the server" in i.value for i in at.info)
    command = at.code[0].value.replace("\\\n", " ")  # the lines' continuations, as the shell reads them
    assert "NOT IN ('a_bad')" in command, command
    words = shlex.split(command)
    words[words.index("-o") + 1] = str(tmp_path / "r.html")
    done = subprocess.run([sys.executable, "-m", "calibviz", *words[1:], "--reference", "0", "--ci", "0"],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr[-500:]
    html = (tmp_path / "r.html").read_text()
    assert "b_good" in html and html.count("a_bad") == html.count("NOT IN")  # a_bad only in the query it names


# -- session files of an opened file -----------------------------------------------------------------------

def _opened_session(at, path: str, model: str, fields: dict) -> bytes:
    """The session file of an AppTest analysing ``path``, built as the sidebar's 'Save session' builds it
    (:func:`calibviz.ui.session.session_ref`): the path and form fields, the model's first-pass fingerprint."""
    import calibviz as cv
    from calibviz.io.session import DataRef, dump_session
    from calibviz.ui.settings import SETTINGS, _url_value

    scan = cv.scan(path, label=fields.get("label") or None, probs=fields.get("probs") or None)
    values = {k: _url_value(v) for k, v in at.session_state["cv_settings"].items() if k in SETTINGS}
    ref = DataRef(kind="opened", name=path, options={"open": path, **fields},
                  models={model: scan.models[model].fingerprint()}, rows=scan.models[model].n, model=model)
    return dump_session(page="Reliability", settings=values, data=ref)


def _open_session(at, raw: bytes) -> AppTest:
    at.switch_page("app.py").run()
    if not at.toggle(key="cv_session_show").value:
        at.toggle(key="cv_session_show").set_value(True).run()
    at.file_uploader(key="cv_session_file").set_value(("view.calibviz.json", raw, "application/json"))
    return at.run()


def test_a_session_file_of_an_opened_file_reopens_that_file_not_the_demo(root):
    path = str(root / "scores.parquet")
    at = _shrunk_in_equal_mass_bins(path)
    original = figures(at)[0]["data"]
    raw = _opened_session(at, path, "shrunk", {"label": "outcome", "probs": "s"})

    fresh = _open_session(_fresh("app.py", {}), raw)  # another browser, on the demo
    assert_clean(fresh)
    assert not fresh.error, [shown(e) for e in fresh.error]
    assert fresh.session_state["cv_scan_active"] and fresh.session_state["cv_scan_model"] == "shrunk"
    assert any("Data (opened file)" in c.value for c in fresh.sidebar.caption)
    assert fresh.session_state["cv_settings"]["scheme"] == "equal_mass"
    assert figures(fresh)[0]["data"] == original  # the saved page, the same diagram of the same file
    assert _params(fresh)["open"] == path


def test_a_session_file_of_an_opened_file_is_refused_when_the_file_changed_or_is_not_allowed(root):
    path = root / "rewritten.parquet"
    pd.read_parquet(root / "scores.parquet").to_parquet(path)
    at = _open_in_form(app().run(), str(path), label="outcome", probs="s")
    at.button(key="scan_use").click()
    at.run()
    raw = _opened_session(at, str(path), "raw", {"label": "outcome", "probs": "s"})
    frame = pd.read_parquet(path)
    frame.loc[frame.index[:40], "outcome"] = 1 - frame["outcome"].iloc[:40]  # 40 labels flipped, as many rows
    frame.to_parquet(path)
    outside = raw.replace(str(path).encode(), str(root.parent / "outside.parquet").encode())
    body = json.loads(outside)
    body.pop("checksum")  # resealed: the checksum catches edits, not a path that the server does not allow
    body["checksum"] = "sha256:" + hashlib.sha256(json.dumps(
        body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()).hexdigest()
    fresh = _fresh("app.py", {})  # on the demo
    before = fresh.session_state["cv_source"]["demo"]
    for session, said in [(raw, "has changed since the session was saved: the scores or labels of model 'raw'"),
                          (json.dumps(body).encode(), "cannot be opened here")]:
        fresh = _open_session(fresh, session)
        assert_clean(fresh)
        errors = [shown(e) for e in fresh.error]
        assert any(said in e and "previously loaded data and settings are kept" in e for e in errors), errors
        assert "cv_scan" not in fresh.session_state or fresh.session_state["cv_scan"] is None
        assert fresh.session_state["cv_source"]["demo"] == before


def test_a_session_file_of_data_in_memory_leaves_the_opened_file_for_the_data_it_names(root):
    from calibviz.io.session import DataRef, dump_session

    at = _open_in_form(app().run(), str(root / "scores.parquet"), label="outcome", probs="s")
    at.button(key="scan_use").click()
    at.run()
    assert at.session_state["cv_scan_active"]
    fp = {n: m.fingerprint() for n, m in at.session_state["cv_models"].items()}
    raw = dump_session(page="Reliability", settings={"scheme": "uniform"},
                       data=DataRef(kind="demo", name="demo", demo=at.session_state["cv_source"]["demo"], models=fp))
    at = _open_session(at, raw)
    assert_clean(at)
    assert not at.error, [shown(e) for e in at.error]
    assert not at.session_state["cv_scan_active"]  # the Reliability page shows the session's data
    assert not any("Data (opened file)" in c.value for c in at.sidebar.caption)


def test_an_opened_file_rewritten_on_disk_is_read_again_and_said(root):
    import os

    path = root / "changing.parquet"
    frame = pd.read_parquet(root / "scores.parquet")
    frame.to_parquet(path)
    at = _open_in_form(app().run(), str(path), label="outcome", probs="s")
    at.button(key="scan_use").click()
    at.run()
    at.switch_page(RELIABILITY).run()
    before = figures(at)[0]["data"]
    frame.loc[frame.index[:300], "outcome"] = 1 - frame["outcome"].iloc[:300]
    frame.to_parquet(path)
    os.utime(path, (os.stat(path).st_atime + 10, os.stat(path).st_mtime + 10))  # a later write, whatever the clock
    at.run()
    assert_clean(at)
    assert any("changed on disk since it was opened" in shown(w) for w in at.warning), [shown(w) for w in at.warning]
    assert figures(at)[0]["data"] != before  # the new rows, not the first pass of the old ones
    again = _fresh(RELIABILITY, _params(at))  # as a fresh session opens the file now
    assert figures(again)[0]["data"] == figures(at)[0]["data"]
    at.run()
    assert not any("changed on disk" in shown(w) for w in at.warning)  # said once
    path.unlink()
    at.run()
    assert_clean(at)
    assert any("can no longer be read" in shown(w) for w in at.warning), [shown(w) for w in at.warning]
    assert "cv_scan" not in at.session_state  # closed: its old numbers are not shown as the file's
    assert not any("Data (opened file)" in c.value for c in at.sidebar.caption)


def test_a_restored_session_of_an_opened_file_warns_of_nothing_and_tce_without_range_points_nowhere(root):
    path = str(root / "scores.parquet")
    at = _shrunk_in_equal_mass_bins(path)
    raw = _opened_session(at, path, "shrunk", {"label": "outcome", "probs": "s"})
    fresh = _open_session(_fresh("app.py", {}), raw)
    assert not fresh.warning, [shown(w) for w in fresh.warning]  # "model=shrunk" was said to be ignored
    fresh.switch_page("pages/2_Test_based.py").run()
    fresh.selectbox(key="w_tce_scheme").set_value("uniform").run()
    assert_clean(fresh)
    text = " ".join(shown(m) for m in fresh.markdown) + " ".join(c.value for c in fresh.caption)
    assert "There is no calibrated-model reference for this TCE of 3,000 rows on these bins" in text
    assert "sentence above" not in text  # the caption pointed to a range the sentence says is not there


def test_a_session_that_fails_after_opening_its_file_leaves_the_previous_file_open(root, monkeypatch):
    """Rolled back on any failure, not only on the data's: an engine error after the file was opened left it open
    and analysed, unchecked, under 'the previously loaded data are kept' (a review)."""
    import calibviz.ui.session as session_ui

    other = root / "other.parquet"
    pd.read_parquet(root / "scores.parquet").to_parquet(other)
    at = _shrunk_in_equal_mass_bins(str(root / "scores.parquet"))
    raw = _opened_session(at, str(other), "raw", {"label": "outcome", "probs": "s"})
    before = (at.session_state["cv_scan"].source, at.session_state["cv_scan_id"], at.session_state["cv_scan_model"])

    def broken(*args, **kwargs):
        raise RuntimeError("the engine failed")

    monkeypatch.setattr(session_ui, "checked_model", broken)
    at = _open_session(at, raw)
    assert_clean(at)
    assert any("could not be opened" in shown(e) and "previously loaded data" in shown(e) for e in at.error)
    assert (at.session_state["cv_scan"].source, at.session_state["cv_scan_id"],
            at.session_state["cv_scan_model"]) == before
    assert at.session_state["cv_scan_active"]


@pytest.mark.parametrize("analyse", ["1", ""])
def test_a_link_to_a_file_on_the_data_page_lands_on_the_file(root, analyse):
    """A link to the Data page that opens a file lands on the Large data page, which shows the file; the Data
    page's first screen is the data in memory's (a walk-through showed the demo's headline numbers in a meeting
    from such a link). The address keeps the link."""
    path = str(root / "scores.parquet")
    params = {"open": path, "label": "outcome", "probs": "s"}
    fresh = _fresh("app.py", {**params, "analyse": analyse} if analyse else params)
    assert_clean(fresh)
    assert not fresh.error, [shown(e) for e in fresh.error]
    assert fresh.title[0].value == "Large data"
    assert any("6,000 rows" in m.value or "3,000 rows" in m.value for m in fresh.markdown)
    assert _params(fresh).get("open") == path
    bad = _fresh("app.py", {**params, "open": str(root.parent / "outside.parquet")})  # a lost link stays, and says so
    assert bad.title[0].value == "Can I trust these probabilities?"
