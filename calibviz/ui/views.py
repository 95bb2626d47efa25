"""Which binary view of the current predictions a page analyses (DESIGN.md §2: every diagram is a
reliability diagram of some binary view)."""
from __future__ import annotations

import streamlit as st

from .. import reduce
from ..io import Predictions
from .compute import cached
from .settings import set_setting, settings

__all__ = ["view_options", "current_view", "view_picker", "options_picker"]


def view_options(preds: Predictions) -> dict[str, str]:
    """{setting value: label} of the binary views a user can pick."""
    if preds.is_binary:
        return {"binary": f"P({preds.positive_label})"}

    def compute():
        opts = {"confidence": "Confidence (top class correct?)"}
        opts.update({f"classwise:{i}": f"{c} vs rest" for i, c in enumerate(preds.classes)})
        predicted = set(reduce.predicted_class(preds.probs).tolist())  # a top-label view needs predicted rows
        opts.update({f"top_label:{i}": f"predicted = {c}" for i, c in enumerate(preds.classes) if i in predicted})
        return opts

    # asked for several times per rerun (picker, current view, notes): the argmax over every row once per data
    return cached(("view_options", preds.fingerprint()), compute)


def one_view_note(preds: Predictions, alpha: float) -> str | None:
    """What a per-view verdict means when there are several views (None for binary data).

    Each view's verdict is tested on its own at alpha; reading every view of a calibrated 3-class model in turn
    found "evidence" in some view in 28% of simulated logs (7 views), 76% with 10 classes (21 views) (a review's
    simulation, 29 Nov 2026). The views are not adjusted here (each needs its own calibrated-model reference, the
    costliest part of the page); the note says which page judges them together.
    """
    n = len(view_options(preds))
    if n <= 1:
        return None
    return (f"The verdict is about this view alone, tested at α = {alpha:g}. Looked through one by one, the {n} "
            "views of even a perfectly calibrated model show evidence in some view far more often than α; the "
            "Multiclass page's metric panel judges the confidence, top-label and class-wise calibration together.")


def _resolve(preds: Predictions, value: str) -> str:
    opts = view_options(preds)
    return value if value in opts else next(iter(opts))


def current_view(preds: Predictions) -> reduce.BinaryView:
    """The binary view the settings select (cached per data and view)."""
    value = _resolve(preds, settings()["view"])

    def compute():
        if value in ("binary", "confidence"):
            return reduce.views(preds, value)[0]
        kind, idx = value.split(":")
        if kind == "classwise":  # only the chosen class: all K views of 10^6 rows would take gigabytes
            return reduce.classwise(preds.y, preds.probs, preds.weights, classes=preds.classes, labels=[int(idx)])[0]
        return next(v for v in reduce.views(preds, kind) if v.label == int(idx))

    return cached(("view", preds.fingerprint(), value), compute)


def view_picker(preds: Predictions) -> None:
    """Selector of the binary view for multiclass data (nothing to pick for binary data)."""
    if preds.is_binary:
        return
    options_picker(view_options(preds), _resolve(preds, settings()["view"]))


def options_picker(opts: dict[str, str], value: str) -> None:
    """The 'Binary view' selector over ``opts`` ({setting value: label}), bound to the "view" setting (also used
    for an opened file's views, :mod:`calibviz.ui.source`)."""
    st.session_state["w_view"] = value
    st.selectbox("Binary view", list(opts), format_func=opts.get, key="w_view",
                 on_change=lambda: set_setting("view", st.session_state["w_view"]),
                 help="Multiclass predictions are diagnosed as binary claims: the confidence, one class vs the "
                      "rest, or the top label within one predicted class (Gupta & Ramdas 2022).")
