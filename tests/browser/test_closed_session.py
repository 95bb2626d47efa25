"""Real browser: work started by a session stops when its browser tab closes (issue #16, section 4).

Streamlit asks a session's script to stop when its websocket closes; the request takes effect at the
script's next Streamlit call. calibviz's long computations report progress through Streamlit elements
(``ui.compute.progress_bar``), so they reach such a call every few resamples and the server's CPU goes
idle soon after the tab closes, instead of finishing a report nobody will read.
"""
from __future__ import annotations

import os
import time

import pytest

from .conftest import wait_idle

pytestmark = pytest.mark.browser

_TICKS = os.sysconf("SC_CLK_TCK")


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process and its finished children, from /proc (Linux, as CI)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(int(v) for v in fields[11:15]) / _TICKS  # utime, stime, cutime, cstime


def _busy_share(pid: int, seconds: float) -> float:
    """Share of one core the process used over the next ``seconds``."""
    start = _cpu_seconds(pid)
    time.sleep(seconds)
    return (_cpu_seconds(pid) - start) / seconds


def test_closing_the_tab_stops_a_long_report(browser, fresh_server):
    pid = fresh_server.proc.pid
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    page = context.new_page()
    # 1000 resamples per metric: the report takes well over a minute here, far longer than the test waits
    page.goto(f"{fresh_server.url}/Report?boot=1000")
    wait_idle(page)
    page.get_by_role("button", name="Build the report").click()
    page.wait_for_selector('[data-testid="stProgress"]', timeout=60_000)
    time.sleep(2)
    assert _busy_share(pid, 2.0) > 0.1, "the report should be computing while the tab is open"
    context.close()

    # the script stops at its next progress update; allow for a slow machine
    deadline = time.time() + 30
    share = 1.0
    while time.time() < deadline:
        share = _busy_share(pid, 3.0)
        if share < 0.05:
            break
    assert share < 0.05, f"the server still uses {share:.0%} of a core after the tab closed"
    # and the server still answers a new visitor
    page = browser.new_page()
    try:
        page.goto(fresh_server.url)
        wait_idle(page)
        assert page.get_by_text("calibviz", exact=False).count() >= 1
    finally:
        page.close()
