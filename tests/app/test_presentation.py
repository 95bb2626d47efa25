"""AppTest of the presentation mode and the figure downloads: present=1 in the address turns it on (larger
figure fonts and heights, a button to leave), the sidebar toggle turns it on, each figure's download menu
says the sizes."""
from __future__ import annotations

import pytest

from calibviz.figures.theme import FONT
from calibviz.ui.presentation import PRESENT_FONT_FACTOR, PRESENT_HEIGHT

from .helpers import app, assert_clean, figures

pytestmark = [pytest.mark.apptest, pytest.mark.usefixtures("clear_streamlit_caches")]


def _reliability(**query):
    at = app()
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    at.switch_page("pages/1_Reliability.py").run()
    assert_clean(at)
    return at


def test_present_1_in_the_address_turns_the_mode_on_and_the_button_leaves_it():
    at = _reliability(present="1")
    leave = [b for b in at.button if b.label == "Leave presentation mode"]
    assert leave, [b.label for b in at.button]
    fig = figures(at)[0]
    assert fig["layout"]["height"] == PRESENT_HEIGHT
    assert fig["layout"]["yaxis"]["tickfont"]["size"] == pytest.approx(PRESENT_FONT_FACTOR * FONT["size"])
    assert not [t for t in at.sidebar.toggle if t.label == "Presentation mode"]  # the sidebar is hidden anyway
    leave[0].click().run()
    assert_clean(at)
    assert not [b for b in at.button if b.label == "Leave presentation mode"]
    assert figures(at)[0]["layout"]["height"] < PRESENT_HEIGHT
    assert "present" not in at.query_params


def test_sidebar_toggle_turns_the_mode_on_and_writes_the_address():
    at = _reliability()
    toggle = [t for t in at.sidebar.toggle if t.label == "Presentation mode"]
    assert toggle and toggle[0].value is False
    toggle[0].set_value(True).run()
    assert_clean(at)
    assert [b for b in at.button if b.label == "Leave presentation mode"]
    assert at.query_params.get("present") in (["1"], "1")  # what people type; _flag reads it


def test_bad_present_value_is_reported_not_applied():
    at = app()
    at.query_params["present"] = "maybe"
    at.run()   # the address is read on the session's first page
    assert any("present" in w.value and "maybe" in w.value and "not valid" in w.value for w in at.warning)
    assert not [b for b in at.button if b.label == "Leave presentation mode"]


def test_figure_downloads_say_their_sizes():
    at = _reliability()
    labels = [d.proto.label for d in at.get("download_button")]
    html = [label for label in labels if label.startswith("HTML · ")]
    json_ = [label for label in labels if label.startswith("JSON · ")]
    assert html and json_
    assert all(label.endswith(" MB") for label in html)                 # plotly.js inside: megabytes
    assert all(label.endswith((" kB", " B")) for label in json_)        # the light version
