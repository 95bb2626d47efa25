"""Issue #16 through the upload widget: hostile files are refused with st.error, the previous data stays."""
from __future__ import annotations

import time

import pytest

from .. import crafted
from .helpers import app, assert_clean, metric_values, upload, shown

pytestmark = [pytest.mark.apptest, pytest.mark.usefixtures("clear_streamlit_caches")]


@pytest.mark.parametrize("key,fragment", [
    ("parquet_constant_rows", "CALIBVIZ_MAX_ROWS"),
    ("csv_gz_bomb", "CALIBVIZ_MAX_ROWS"),
    ("xlsx_many_rows", "CALIBVIZ_MAX_EXCEL_CELLS"),
    ("xlsx_far_cell", "the label column 'label' is empty"),
])
def test_hostile_upload_is_refused_and_keeps_previous_data(tmp_path, key, fragment):
    path = crafted.ISSUE_FILES[key](tmp_path)
    at = app().run()
    before = metric_values(at)
    t0 = time.perf_counter()
    upload(at, path.name, path.read_bytes(), "application/octet-stream")
    assert time.perf_counter() - t0 < 30
    assert_clean(at)
    assert at.error and fragment in shown(at.error[0])
    assert metric_values(at) == before
    assert at.session_state["cv_source"]["demo"] == "hospital_readmission"


def test_unexpected_error_while_loading_is_a_message_and_the_app_stays_usable(monkeypatch):
    import calibviz.ui.data as data

    def broken(*args, **kwargs):
        raise TypeError("unhashable type: 'list'")

    at = app().run()
    before = metric_values(at)
    monkeypatch.setattr(data, "_parse", broken)
    upload(at, "lists.csv", b"label,p\n1,0.5\n0,0.5\n")
    assert_clean(at)
    assert at.error and "could not be loaded (TypeError" in shown(at.error[0])
    assert metric_values(at) == before
    at.switch_page("pages/1_Reliability.py").run()  # every page still works on the previous data
    assert_clean(at)


def test_link_to_an_upload_this_server_does_not_hold_says_so():
    at = app().run()
    upload(at, "mine.csv", b"label,p\n" + b"".join(f"{i % 2},{0.3 + 0.4 * (i % 2)}\n".encode() for i in range(60)))
    digest_link = at.query_params["data"]
    assert digest_link.startswith("upload:")
    from calibviz.io.store import DatasetStore

    DatasetStore.from_env().remove(digest_link.split(":", 1)[1])  # evicted, or the store was emptied
    fresh = app()
    fresh.query_params["data"] = digest_link
    fresh.query_params["band"] = "maybe"
    fresh.run()
    assert_clean(fresh)
    errors = [shown(e) for e in fresh.error]
    assert any("uploaded file" in t and "no longer holds" in t and "shows the demo until you upload" in t
               for t in errors), errors
    assert any("band=maybe" in shown(w) for w in fresh.warning)  # a yes/no setting that is neither is reported
    assert metric_values(fresh)["Rows"] == "20,000"  # the demo, said out loud


def test_an_unreadable_text_file_is_named_once_and_its_error_said_once():
    """A CSV that cannot be parsed: the error named the file twice ("bad.csv: bad.csv could not be parsed") and
    the mapping panel repeated the whole message as a warning (a browser review); now one error, the file named
    once, and the panel points at its reading options."""
    at = app().run()
    upload(at, "bad_garbage.csv", b'y,p\n"unterminated,1\n0,0.5\n', "text/csv")
    assert_clean(at)
    errors = [shown(e) for e in at.error]
    assert len(errors) == 1 and "could not be parsed" in errors[0]
    assert errors[0].count("bad_garbage.csv") == 1, errors[0]
    assert not any("could not be parsed" in shown(w) for w in at.warning)
    assert any("choose the encoding, delimiter or decimal mark" in c.value for c in at.caption)
