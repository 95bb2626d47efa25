"""AppTest helpers shared by the page tests."""
from __future__ import annotations

import json
import re
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60  # 2-core machines: AppTest's default of 3 s is too short


def app(script: str = "app.py") -> AppTest:
    return AppTest.from_file(str(ROOT / script), default_timeout=TIMEOUT)


def assert_clean(at: AppTest) -> None:
    """No exception element was rendered."""
    assert not at.exception, [e.value for e in at.exception]


def shown(element) -> str:
    """The text an element displays: its Markdown source without the escapes of calibviz.ui.text.md."""
    return re.sub(r"\\(.)", r"\1", element.value).replace("\u2060", "")


def figures(at: AppTest) -> list[dict]:
    """The Plotly figure JSON of every chart on the page."""
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def metric_values(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def upload(at: AppTest, name: str, data: bytes, mime: str = "text/csv") -> AppTest:
    at.file_uploader(key="cv_upload").set_value((name, data, mime))
    return at.run()
