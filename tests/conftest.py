"""Shared fixtures. Tests never read ../shared: data they need is vendored in tests/data/."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent / "data"
ROOT = Path(__file__).resolve().parents[1]
BAD = DATA / "bad"


def bad_catalogue() -> dict:
    """{file name: {"expect": message fragment, "kwargs": load options}} of tests/data/bad/."""
    return json.loads((BAD / "catalogue.json").read_text())


@pytest.fixture
def clear_streamlit_caches():
    """Streamlit caches are process-wide: clear them so AppTests do not leak into each other."""
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()
    yield
    st.cache_data.clear()
    st.cache_resource.clear()
