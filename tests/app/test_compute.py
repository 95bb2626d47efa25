"""calibviz.ui.compute: cached results, and input errors shown as messages, never tracebacks."""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from .helpers import TIMEOUT, app, assert_clean, shown

pytestmark = [pytest.mark.apptest, pytest.mark.usefixtures("clear_streamlit_caches")]


def _script():
    import streamlit as st

    from calibviz.errors import InputError
    from calibviz.ui.compute import cached

    def fail():
        raise InputError("x has only 2 distinct values")

    st.write(cached(("ok", 1), lambda: 41 + 1))
    cached(("fails", 1), fail)
    st.write("not reached")


def test_input_error_in_a_computation_is_shown_and_stops_the_page():
    at = AppTest.from_function(_script, default_timeout=TIMEOUT).run()
    assert_clean(at)
    assert at.error and "only 2 distinct values" in shown(at.error[0])
    texts = [m.value for m in at.markdown]
    assert any("42" in t for t in texts) and "not reached" not in texts


def test_numeric_column_with_few_values_is_shown_per_value():
    at = app()
    at.query_params["data"] = "loan_recalibration"
    at.query_params["feature"] = "term_months"
    at.run()
    at.switch_page("pages/4_Variables.py").run()
    assert_clean(at)
    assert not at.error
    assert any("fewer than 10 distinct values" in c.value for c in at.caption)
    assert len(at.dataframe) >= 1


def _bug_script():
    import streamlit as st

    from calibviz.ui.compute import cached

    def bug():
        raise TypeError("unhashable type: 'list'")

    cached(("bug", 1), bug)
    st.write("not reached")


def test_unexpected_error_in_a_computation_is_one_message_not_a_traceback():
    at = AppTest.from_function(_bug_script, default_timeout=TIMEOUT).run()
    assert_clean(at)
    assert at.error and "could not be computed (TypeError: unhashable type" in shown(at.error[0])
    assert "not reached" not in [m.value for m in at.markdown]


def test_the_computation_cache_is_bounded_in_bytes(monkeypatch):
    import numpy as np

    from calibviz.ui import compute

    monkeypatch.setattr(compute, "CACHE_BYTES", 10 * 8_000_000)
    store = compute._Store()
    for i in range(40):  # 40 results of 8 MB each, as 40 distinct uploads would leave behind
        store.put(("metric", i), np.zeros(1_000_000))
    assert store.bytes <= compute.CACHE_BYTES and len(store.values) == 10
    assert ("metric", 39) in store.values and ("metric", 0) not in store.values  # least recent go first
    assert compute.nbytes(store.get(("metric", 39))) == 8_000_000
