"""Shared fixtures. Tests never read ../shared: data they need is vendored in tests/data/."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

# tests/data holds fixtures and the scripts that made them: never import them during collection
# (--doctest-modules would run tests/data/bad/make_bad.py and rewrite the catalogue).
collect_ignore_glob = ["data/*"]

DATA = Path(__file__).resolve().parent / "data"
ROOT = Path(__file__).resolve().parents[1]
BAD = DATA / "bad"


def bad_catalogue() -> dict:
    """{file name: {"expect": message fragment, "kwargs": load options}} of tests/data/bad/."""
    return json.loads((BAD / "catalogue.json").read_text())


@pytest.fixture(scope="session", autouse=True)
def upload_store_dir(tmp_path_factory):
    """The dashboard keeps uploads in CALIBVIZ_STORE_DIR: tests use a temporary folder (also inherited by the
    browser tests' servers), never the user's cache."""
    old = os.environ.get("CALIBVIZ_STORE_DIR")
    path = tmp_path_factory.mktemp("upload_store")
    os.environ["CALIBVIZ_STORE_DIR"] = str(path)
    yield path
    if old is None:
        os.environ.pop("CALIBVIZ_STORE_DIR", None)
    else:
        os.environ["CALIBVIZ_STORE_DIR"] = old


@pytest.fixture(scope="module")
def clear_streamlit_caches():
    """Streamlit caches are process-wide: clear them so one test module's AppTests do not leak into another's.

    Within a module the cached results (keyed on the data fingerprint and the settings) are shared on purpose:
    recomputing the same bootstrap for every test would only make the suite slower.
    """
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()
    yield
    st.cache_data.clear()
    st.cache_resource.clear()
