"""Cached computations of the dashboard, keyed on the data fingerprint and the settings.

A plain process-wide LRU (held by ``st.cache_resource``) rather than
``st.cache_data``: long work (the bootstrap) reports progress to a bar drawn
by the page, which ``st.cache_data`` would record and replay as elements.
Values are immutable results (DataFrames are copied on the way out).
"""
from __future__ import annotations

import logging
import os
import sys
from collections import OrderedDict
from typing import Callable

import numpy as np
import pandas as pd
import streamlit as st

try:  # Streamlit's delay before a spinner appears (0.5 s in 1.67)
    from streamlit.elements.spinner import DELAY_SECS
except ImportError:  # pragma: no cover - a later Streamlit may move it
    DELAY_SECS = 0.5

from ..errors import InputError
from .text import md

__all__ = ["cached", "in_cache", "guarded", "progress_bar", "work_label", "nbytes", "CACHE_BYTES"]

_LOG = logging.getLogger(__name__)

_MAX_ENTRIES = 256
#: Byte budget of the computation cache, shared by all sessions of the server (CALIBVIZ_CACHE_MB, default 512):
#: the least recently used results go first, so memory levels off however many files are uploaded.
CACHE_BYTES = int(float(os.environ.get("CALIBVIZ_CACHE_MB", "512")) * 2**20)


class _Store:
    """An LRU of results bounded by entries and by (estimated) bytes."""

    def __init__(self):
        self.values: OrderedDict = OrderedDict()
        self.sizes: dict = {}
        self.bytes = 0

    def get(self, key):
        self.values.move_to_end(key)
        return self.values[key]

    def put(self, key, value) -> None:
        size = nbytes(value)
        self.values[key] = value
        self.sizes[key] = size
        self.bytes += size
        while len(self.values) > 1 and (len(self.values) > _MAX_ENTRIES or self.bytes > CACHE_BYTES):
            old, _ = self.values.popitem(last=False)
            self.bytes -= self.sizes.pop(old)


def nbytes(value, _depth: int = 0) -> int:
    """Estimated memory held by a cached result: arrays and frames dominate; containers and result objects
    (dataclasses, named tuples, plain objects) are summed a few levels deep, anything else counts its shell.

    Examples
    --------
    >>> import numpy as np
    >>> nbytes((np.zeros(1000), {"a": np.zeros(10)})) >= 8080
    True
    """
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if isinstance(value, pd.DataFrame):
        return int(value.memory_usage(deep=False).sum())
    if isinstance(value, pd.Series):
        return int(value.memory_usage(deep=False))
    shell = sys.getsizeof(value)
    if _depth >= 4:  # deep or cyclic structures (figures): their arrays are counted at the upper levels
        return shell
    if isinstance(value, dict):
        return shell + sum(nbytes(v, _depth + 1) for v in value.values())
    if isinstance(value, (list, tuple)):
        return shell + sum(nbytes(v, _depth + 1) for v in value)
    if hasattr(value, "__dict__") and not isinstance(value, type):
        return shell + sum(nbytes(v, _depth + 1) for v in vars(value).values())
    return shell


@st.cache_resource(show_spinner=False)
def _lru() -> _Store:
    return _Store()


#: What a computation does, by the first element of its cache key: the text of its spinner.
_WORK = {
    "metric": "Computing the metric, its interval and its calibrated-model reference",
    "table": "Binning the predictions", "reliability_fig": "Drawing the reliability diagram",
    "sensitivity": "Computing the metrics for every number of bins",
    "sensitivity-intervals": "Bootstrapping the metrics for every number of bins", "ranking": "Ranking the variables",
    "curves": "Fitting the LOESS curves", "subgroups": "Comparing the levels", "level_tables": "Binning each level",
    "tce": "Testing every prediction (TCE)", "tce_table": "Testing every prediction (TCE)",
    "tce_fig": "Drawing the test-based diagram", "violin": "Drawing the violins",
    "binning_comparison": "Comparing the binning schemes", "class_ranking": "Ranking the classes",
    "cw_grid": "Drawing the class-wise grid", "tl_table": "Computing the top-label table",
    "tl_small": "Drawing the top-label panels", "zoom": "Zooming into the bin", "view": "Reducing to a binary view",
    "corp_table": "Fitting the CORP curve and its bands", "corp_fig": "Drawing the CORP diagram",
    "corp_dec": "Decomposing the score", "decomposition": "Decomposing the score",
    "compare_metric": "Comparing the models", "compare_overlay": "Overlaying the models",
    "recal_maps": "Fitting the recalibration maps", "recal_table": "Comparing before and after recalibration",
    "recal_var": "Recalibrating along the variable", "roc_fig": "Computing the ROC curve",
}

#: The spinner of a computation appears once it has run this long (Streamlit's own delay): a cache hit or a
#: quick computation draws nothing.
SPINNER_DELAY = DELAY_SECS


def work_label(key: tuple) -> str:
    """The spinner text of the computation cached under ``key``.

    Examples
    --------
    >>> work_label(("ranking", "abc", 200, 0)), work_label(("something_new",))
    ('Ranking the variables…', 'Computing…')
    """
    return _WORK.get(key[0] if key else None, "Computing") + "…"


def in_cache(key: tuple) -> bool:
    """Whether a result is cached under ``key`` (without computing it)."""
    return key in _lru().values


def cached(key: tuple, compute: Callable[[], object], *, label: str | None = None):
    """``compute()`` once per ``key`` (which must include the data fingerprint and every setting used).

    While a computation runs, a spinner with its elapsed time says what is being computed (``label``, else
    :func:`work_label` of the key). Streamlit draws it only after :data:`SPINNER_DELAY` seconds, so quick work
    and cache hits show nothing; work that reports fractions adds a :class:`progress_bar` below it.

    A :class:`calibviz.InputError` raised by the computation (data or settings the method cannot
    handle) is shown as an error message and ends the page run: no traceback reaches the user.
    """
    store = _lru()
    if key in store.values:
        value = store.get(key)
    else:
        failure = None
        with st.spinner(label or work_label(key), show_time=True):
            try:
                value = compute()
            except Exception as exc:  # noqa: BLE001 - shown by guarded below, once the spinner is gone
                failure = exc
        if failure is not None:  # st.stop() inside the spinner left its timer counting beside the message
            guarded(lambda: _reraise(failure))
        store.put(key, value)
    return value.copy() if isinstance(value, pd.DataFrame) else value


def _reraise(exc: BaseException):
    raise exc


def guarded(compute: Callable[[], object]):
    """``compute()``; an error becomes a message that ends the page run (the sidebar and other pages still work).

    A :class:`calibviz.InputError` says what to change. Anything else is a bug: one line names it, and the
    server log keeps the traceback (the browser never sees one).
    """
    try:
        return compute()
    except InputError as exc:
        text = exc.ui_message  # the library's messages start in lowercase ("the label column ..."): a box's sentence
        st.error(f"{md(text[:1].upper() + text[1:])}\n\nChange the settings or the data and try again.",
                 icon=":material/error:")
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
