"""Real-browser fixtures: `streamlit run app.py` on 127.0.0.1 and Debian's chromium driven by Playwright.

No browser is downloaded: Playwright launches /usr/bin/chromium (installed by
scripts/test.sh with apt-get). Screenshots go to tests/artifacts/ (kept by CI
as artifacts, ignored by git).
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts"
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class StreamlitServer:
    def __init__(self, env: dict | None = None):
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        log = ARTIFACTS / f"streamlit-{self.port}.log"
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self._log = open(log, "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.address=127.0.0.1",
             f"--server.port={self.port}", "--server.headless=true", "--browser.gatherUsageStats=false",
             "--server.fileWatcherType=none"],
            cwd=ROOT, stdout=self._log, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})},
        )
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                if urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2).read() == b"ok":
                    return
            except OSError:
                time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"streamlit did not become healthy; see {log}")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self._log.close()


@pytest.fixture(scope="session")
def chromium_path():
    path = _chromium()
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("Debian's chromium is missing; scripts/test.sh installs it with apt-get")
        pytest.skip("chromium not installed (run scripts/test.sh)")
    return path


@pytest.fixture(scope="session")
def browser(chromium_path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="session")
def server():
    s = StreamlitServer()
    yield s
    s.stop()


@pytest.fixture
def fresh_server():
    """A server of its own (for deep links on a fresh process)."""
    s = StreamlitServer()
    yield s
    s.stop()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1366, "height": 768}, accept_downloads=True)
    pg = context.new_page()
    pg.console_errors = []
    pg.on("console", lambda m: pg.console_errors.append(m.text) if m.type == "error" else None)
    yield pg
    context.close()


def wait_idle(page, timeout: float = 60_000) -> None:
    """Wait until the Streamlit script has finished and nothing is loading."""
    page.wait_for_selector('[data-testid="stApp"][data-test-connection-state="CONNECTED"]', timeout=timeout)
    page.wait_for_function(
        """() => { const app = document.querySelector('[data-testid="stApp"]');
                   return app && app.getAttribute('data-test-script-state') === 'notRunning'
                          && !document.querySelector('[data-testid="stSkeleton"]'); }""",
        timeout=timeout,
    )
    page.wait_for_timeout(300)


def screenshot(page, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
