"""AppTest of the Report page: it lists the sections, builds the report on a button press, offers the download."""
from __future__ import annotations

import pytest

import calibviz as cv

from .helpers import app, assert_clean, shown

pytestmark = [pytest.mark.apptest, pytest.mark.usefixtures("clear_streamlit_caches")]


def _open(demo: str | None = None, **query):
    at = app()
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    if demo:
        at.selectbox(key="cv_demo_pick").set_value(demo).run()
    at.switch_page("pages/6_Report.py").run()
    assert_clean(at)
    return at


def _downloads(at):
    # the report's own download (the sidebar also offers the session file)
    return [el for el in at.get("download_button") if el.key != "cv_session_save"]


@pytest.mark.parametrize("demo", cv.demo_datasets())
def test_report_page_builds_and_offers_download(demo):
    at = _open(demo, boot="0")
    text = " ".join(m.value for m in at.markdown)
    assert "Reliability diagram" in text and "Reproducibility" in text
    assert not _downloads(at)  # nothing built yet
    at.button(key="build_report").click().run()
    assert_clean(at)
    assert not at.error
    downloads = _downloads(at)
    assert len(downloads) == 1
    assert "MB, built for the current data" in " ".join(c.value for c in at.caption)
    # the report's regenerate commands write the file the download is named (they wrote report.html)
    page = at.session_state["cv_report"][1]
    assert f"-o calibviz_report_{demo}.html " in page and "&#x27;report.html&#x27;" not in page


def test_report_page_rebuild_needed_after_a_setting_change():
    at = _open(boot="0")
    at.button(key="build_report").click().run()
    assert len(_downloads(at)) == 1
    at.selectbox(key="w_scheme").set_value("equal_mass").run()
    assert_clean(at)
    assert not _downloads(at)  # the built report no longer matches the settings
    assert any("Build the report" in i.value for i in at.info)


def test_multiclass_report_page_lists_multiclass_sections():
    at = _open("cifar10_resnet50", boot="0")
    text = " ".join(m.value for m in at.markdown)
    assert "Top-label diagram" in text and "Class ranking" in text


def test_report_with_inconsistent_sizes_shows_the_problem():
    from .helpers import app as _app

    at = _app()
    at.query_params["n_min"] = "5000"
    at.query_params["boot"] = "0"
    at.run()
    at.switch_page("pages/6_Report.py").run()
    at.button(key="build_report").click().run()
    assert not at.exception
    assert at.error and "n_max" in shown(at.error[0])
