"""Real browser: a link to an uploaded file opens in another browser context and after a server restart (the
upload store), a link whose data is gone says so, a saved session reopens in another context, and a long
file name wraps at its separators in the sidebar."""
from __future__ import annotations

import shutil
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pandas as pd
import pytest

from .conftest import StreamlitServer, screenshot
from .conftest import wait_idle as _wait_idle

pytestmark = pytest.mark.browser


def wait_idle(page, timeout: float = 180_000) -> None:
    """Pages with an upload and a fresh server: longer than the default on a loaded 2-core machine."""
    _wait_idle(page, timeout)


def _csv(path, n=500, seed=1):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.02, 0.98, n).round(4)
    pd.DataFrame({"label": rng.binomial(1, p), "p": p, "income": rng.normal(size=n).round(2)}).to_csv(path, index=False)
    return path


def _context_page(browser):
    ctx = browser.new_context(viewport={"width": 1366, "height": 768}, accept_downloads=True)
    return ctx, ctx.new_page()


def _upload(page, path) -> None:
    page.get_by_test_id("stFileUploaderDropzoneInput").first.set_input_files(str(path))
    page.wait_for_function("""(name) => [...document.querySelectorAll('[data-testid="stSidebar"] [data-testid="stCaptionContainer"]')]
                               .some(e => e.innerText.replace(/\\u200b/g, '').includes(name))""",
                           arg=path.name, timeout=180_000)
    wait_idle(page)


def _sidebar_data(page) -> str:
    text = page.get_by_test_id("stSidebar").get_by_test_id("stCaptionContainer").filter(has_text="Data:").inner_text()
    return text.replace("\u200b", "")


def _main_texts(page) -> list[str]:
    return page.get_by_test_id("stMain").get_by_test_id("stMarkdownContainer").all_inner_texts()


def _to_reliability(page) -> None:
    page.get_by_test_id("stSidebar").get_by_role("link", name="Reliability").click()
    page.wait_for_url("**/Reliability**", timeout=180_000)
    wait_idle(page)


def test_an_upload_link_opens_in_another_browser_context(server, browser, tmp_path):
    csv = _csv(tmp_path / "shared_view.csv")
    ctx1, p1 = _context_page(browser)
    ctx2, p2 = _context_page(browser)
    try:
        p1.goto(server.url)
        wait_idle(p1)
        _upload(p1, csv)
        _to_reliability(p1)
        query = parse_qs(urlsplit(p1.url).query)
        assert query["data"][0].startswith("upload:") and len(query["data"][0]) == len("upload:") + 64
        link = p1.url + "&scheme=equal_mass&bins=11"
        p1.goto(link)  # the sender's view of the settings
        wait_idle(p1)
        p2.goto(link)  # another browser: no shared session, cookies or cache
        wait_idle(p2)
        assert "shared_view.csv" in _sidebar_data(p2) and "500 rows" in _sidebar_data(p2)
        assert p2.get_by_test_id("stAlertContentError").count() == 0
        assert p2.locator(".js-plotly-plot").count() > 0
        texts = _main_texts(p2)
        assert texts == _main_texts(p1)  # the same readings, number for number
        got = parse_qs(urlsplit(p2.url).query)
        assert got["scheme"] == ["equal_mass"] and got["bins"] == ["11"] and got["data"] == query["data"]
        screenshot(p2, "sharing_second_context")
    finally:
        ctx1.close()
        ctx2.close()


def test_a_link_survives_a_server_restart_and_a_lost_one_says_so(browser, tmp_path):
    store = tmp_path / "store"
    env = {"CALIBVIZ_STORE_DIR": str(store)}
    csv = _csv(tmp_path / "restart_me.csv", seed=2)
    first = StreamlitServer(env=env)
    ctx, page = _context_page(browser)
    try:
        page.goto(first.url)
        wait_idle(page)
        _upload(page, csv)
        _to_reliability(page)
        parts = urlsplit(page.url)
        path_query = f"{parts.path}?{parts.query}&bins=9"
        expected = _main_texts(page)
    finally:
        first.stop()
    assert list(store.glob("*.data")), "the upload is in the configured store"
    second = StreamlitServer(env=env)  # a restart: nothing in memory, the same store
    try:
        page.goto(second.url + path_query)
        wait_idle(page)
        assert "restart_me.csv" in _sidebar_data(page)
        assert page.get_by_test_id("stAlertContentError").count() == 0
        assert page.locator(".js-plotly-plot").count() > 0
        assert parse_qs(urlsplit(page.url).query)["bins"] == ["9"]
        assert len(expected) > 0
        shutil.rmtree(store)  # evicted or emptied: the link's data is gone
        ctx2, lost = _context_page(browser)
        try:
            lost.goto(second.url + path_query)
            wait_idle(lost)
            error = lost.get_by_test_id("stAlertContentError").inner_text()
            assert "not on this server" in error and "Nothing is shown in its place" in error
            assert lost.locator(".js-plotly-plot").count() == 0
            screenshot(lost, "sharing_lost_link")
            lost.get_by_role("button", name="Open the demo instead").click()
            lost.wait_for_selector(".js-plotly-plot", timeout=180_000)
            wait_idle(lost)
            assert "Hospital readmission" in _sidebar_data(lost)
            assert "data=hospital_readmission" in lost.url
        finally:
            ctx2.close()
    finally:
        ctx.close()
        second.stop()


def test_a_saved_session_reopens_in_another_context(server, browser, tmp_path):
    csv = _csv(tmp_path / "session_view.csv", seed=3)
    ctx1, p1 = _context_page(browser)
    ctx2, p2 = _context_page(browser)
    try:
        p1.goto(server.url + "/?bins=7")
        wait_idle(p1)
        _upload(p1, csv)
        _to_reliability(p1)
        expected = _main_texts(p1)
        p1.get_by_test_id("stSidebar").get_by_text("Save or share this view").click()
        save = p1.get_by_test_id("stSidebar").get_by_role("button", name="Save session")
        save.wait_for(state="visible", timeout=60_000)
        wait_idle(p1)  # a click while the script still runs can be lost with the rerun (seen on a loaded machine)
        with p1.expect_download(timeout=180_000) as dl:
            save.click()
        saved = tmp_path / dl.value.suggested_filename
        dl.value.save_as(saved)
        assert saved.name.endswith("_reliability.calibviz.json")
        p2.goto(server.url)
        wait_idle(p2)
        p2.get_by_text("Open a saved session").click()
        wait_idle(p2)
        p2.get_by_test_id("stFileUploader").filter(has_text="Session file").get_by_test_id(
            "stFileUploaderDropzoneInput").set_input_files(str(saved))
        p2.wait_for_url("**/Reliability**", timeout=180_000)
        wait_idle(p2)
        assert "session_view.csv" in _sidebar_data(p2)
        assert parse_qs(urlsplit(p2.url).query)["bins"] == ["7"]
        assert _main_texts(p2) == expected
        screenshot(p2, "sharing_session_opened")
    finally:
        ctx1.close()
        ctx2.close()


def test_a_long_file_name_wraps_at_its_separators(server, page, tmp_path):
    csv = _csv(tmp_path / "breast_cancer_five_models_predictions_test_split_2026.csv", seed=4)
    page.goto(server.url)
    wait_idle(page)
    _upload(page, csv)
    lines = page.evaluate("""() => {
        const el = [...document.querySelectorAll('[data-testid="stSidebar"] [data-testid="stCaptionContainer"]')]
            .find(e => e.innerText.includes('Data:'));
        const out = []; let top = null; let line = '';
        const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
        while (walker.nextNode()) {
            const node = walker.currentNode;
            for (let i = 0; i < node.length; i++) {
                const r = document.createRange(); r.setStart(node, i); r.setEnd(node, i + 1);
                const rect = r.getBoundingClientRect();
                if (rect.width === 0 && rect.height === 0) { line += node.data[i]; continue; }
                const t = Math.round(rect.top);
                if (top !== null && Math.abs(t - top) > 3) { out.push(line); line = ''; }
                top = t; line += node.data[i];
            }
        }
        out.push(line); return out;
    }""")
    name_lines = [l.replace("\u200b", "") for l in lines if not l.strip().startswith("500")]
    joined = "".join(name_lines)
    assert "breast_cancer_five_models_predictions_test_split_2026.csv" in joined
    assert len(name_lines) >= 2, "the name is long enough to wrap in the sidebar"
    for line in name_lines[:-1]:  # every wrapped line ends at a separator, never inside a word
        assert line.rstrip()[-1:] in "_-./:", lines
    screenshot(page, "sharing_long_file_name")
