"""Every figure renders to PNG through kaleido (needs a Chrome/Chromium; skipped without one)."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from .test_figures_json import _all_figures

pytestmark = [pytest.mark.figures, pytest.mark.slow]


@pytest.fixture(scope="module")
def kaleido_server():
    if not (shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")):
        pytest.skip("no chromium: static image export needs a Chrome (CI installs Debian's chromium)")
    kaleido = pytest.importorskip("kaleido")
    try:
        kaleido.start_sync_server(silence_warnings=True)
    except Exception as exc:  # pragma: no cover - environment-specific
        pytest.skip(f"kaleido could not start a browser: {exc}")
    yield
    try:
        kaleido.stop_sync_server(silence_warnings=True)
    except Exception:  # pragma: no cover
        pass


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


@pytest.mark.filterwarnings("ignore:The kopts argument")
def test_every_figure_renders_to_png(kaleido_server, binary_data, multiclass_data):
    y, p = binary_data
    Y, P = multiclass_data
    x = np.random.default_rng(0).normal(size=len(y))
    for name, fig in _all_figures(y, p, Y, P, x).items():
        png = fig.to_image(format="png", width=900, height=fig.layout.height, scale=1)
        w, h = _png_size(png)
        assert (w, h) == (900, fig.layout.height), name
        assert len(png) > 10_000, name   # not a blank canvas
