"""Cached computations of the dashboard, keyed on the data fingerprint and the settings.

A plain process-wide LRU (held by ``st.cache_resource``) rather than
``st.cache_data``: long work (the bootstrap) reports progress to a bar drawn
by the page, which ``st.cache_data`` would record and replay as elements.
Values are immutable results (DataFrames are copied on the way out).
"""
from __future__ import annotations

import logging
from collections import OrderedDict
from typing import Callable

import pandas as pd
import streamlit as st

from ..errors import InputError
from .text import md

__all__ = ["cached", "guarded", "progress_bar"]

_LOG = logging.getLogger(__name__)

_MAX_ENTRIES = 256


@st.cache_resource(show_spinner=False)
def _lru() -> OrderedDict:
    return OrderedDict()


def cached(key: tuple, compute: Callable[[], object]):
    """``compute()`` once per ``key`` (which must include the data fingerprint and every setting used).

    A :class:`calibviz.InputError` raised by the computation (data or settings the method cannot
    handle) is shown as an error message and ends the page run: no traceback reaches the user.
    """
    store = _lru()
    if key in store:
        store.move_to_end(key)
        value = store[key]
    else:
        value = guarded(compute)
        store[key] = value
        while len(store) > _MAX_ENTRIES:
            store.popitem(last=False)
    return value.copy() if isinstance(value, pd.DataFrame) else value


def guarded(compute: Callable[[], object]):
    """``compute()``; an error becomes a message that ends the page run (the sidebar and other pages still work).

    A :class:`calibviz.InputError` says what to change. Anything else is a bug: one line names it, and the
    server log keeps the traceback (the browser never sees one).
    """
    try:
        return compute()
    except InputError as exc:
        st.error(f"{md(exc)}\n\nChange the settings or the data and try again.", icon=":material/error:")
        st.stop()
    except MemoryError:
        st.error("Not enough memory for this view on these data; sample the rows or choose fewer bins or "
                 "resamples.", icon=":material/error:")
        st.stop()
    except Exception as exc:  # noqa: BLE001 - the last line of defence of a page
        _LOG.exception("unexpected error in a page computation")
        st.error(f"This view could not be computed ({md(type(exc).__name__)}: {md(exc)}). This is a bug in "
                 "calibviz, not in your data; the other pages and settings still work.", icon=":material/error:")
        st.stop()


class progress_bar:
    """Context manager giving a ``progress(done, total)`` callback drawn as a Streamlit progress bar."""

    def __init__(self, text: str):
        self.text = text
        self.bar = None

    def __enter__(self):
        return self

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            self.bar = st.progress(0.0, text=self.text)
        self.bar.progress(min(1.0, done / max(total, 1)), text=f"{self.text} ({done:,}/{total:,})")

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.empty()
        return False
