"""Dashboard blocks of the CORP diagram and the triptych (calibration vs discrimination).

Computations come from :mod:`calibviz.metrics` (corp_table, decomposition_table) and figures from
:mod:`calibviz.figures`; this module only caches them per data and settings and lays them out.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from .. import figures
from .. import metrics as M
from ..panel import format_value, rare_events_note
from ..errors import InputError
from ..io import Predictions
from ..reduce import BinaryView
from .blocks import BOOTSTRAP_ROW_BUDGET, CORP_METRICS, download_table, show_figure
from .blocks import show_dataframe
from .compute import cached
from .text import md

__all__ = ["CORP_METRICS", "corp_bands", "corp_table", "corp_figure", "triptych", "discrimination"]

#: Rows x classes above which the per-class one-vs-rest AUC (one sort per class) waits for a click.
OVR_AUC_CELL_BUDGET = 20_000_000
#: Refitted curves per band (a simultaneous band's spread settles at 200), fewer on very large data.
BAND_RESAMPLES = 200


def corp_bands(s: dict) -> tuple[str, ...]:
    return ("consistency", "confidence") if s.get("corp_conf") else ("consistency",)


def _n_bands(view: BinaryView, level: float) -> int:
    # labels redrawn on fixed predictions: ~1.5 ms per curve at 10^5 rows, ~15 ms at 10^6 (an O(n) pass each)
    base = BAND_RESAMPLES if view.n * BAND_RESAMPLES <= 80 * BOOTSTRAP_ROW_BUDGET else 50
    return M.band_resamples(level, base)


def corp_table(view: BinaryView, fingerprint: str, s: dict) -> pd.DataFrame:
    """The CORP table (PAV curve and bands) of a view, cached per data, view, bands, level and seed.

    The consistency band is simultaneous at 1 - α: a calibrated model's whole curve stays in it with that
    probability, so a curve leaving it is evidence at the page's level (the paper's pointwise band is left
    somewhere by every calibrated model)."""
    level = 1.0 - float(s["alpha"])
    bands, seed, n = corp_bands(s), int(s["seed"]), _n_bands(view, level)
    return cached(("corp_table", fingerprint, view.name, bands, n, seed, level), lambda: M.corp_table(
        view.y, view.p, sample_weight=view.w, bands=bands, level=level, coverage="simultaneous", n_resamples=n,
        random_state=seed))


def corp_figure(view: BinaryView, fingerprint: str, s: dict, *, title: str = ""):
    table = corp_table(view, fingerprint, s)
    return cached(("corp_fig", fingerprint, view.name, corp_bands(s), int(s["seed"]), float(s["alpha"]), title),
                  lambda: figures.corp_diagram(
        view.y, view.p, sample_weight=view.w, table=table, title=title, outcome_labels=figures.outcome_labels(view.kind, view.name)))


def triptych(views: dict[str, BinaryView], fingerprints: tuple, s: dict, reference: str,
             n_boot: int | None = None) -> None:
    """MCB-DSC plot with one sentence per model, CORP diagrams and ROC curves overlaid, optional Murphy diagram.

    ``n_boot``: bootstrap resamples of the whiskers, as the page decided (the Compare page passes 0 until the
    user asks for intervals on large data); None chooses by a row budget.
    """
    models = {name: (v.y, v.p, v.w) for name, v in views.items()}
    n_rows = sum(v.n for v in views.values())
    if n_boot is None:
        n_boot = int(s["boot"]) if n_rows * int(s["boot"]) <= 4 * BOOTSTRAP_ROW_BUDGET else 0
    seed = int(s["seed"])
    score = s.get("tscore", "brier")
    alpha = float(s["alpha"])
    key = (tuple(views), fingerprints, tuple(v.name for v in views.values()), reference, seed)
    table = cached(("decomposition", score) + key + (n_boot, alpha), lambda: M.decomposition_table(
        # whiskers at the comparison table's 1 - alpha (95% by default), not the library's 90%: one page, one level
        # (a walk-through met 90% whiskers beside the table's 95% intervals)
        models, score=score, reference=reference, n_resamples=n_boot, confidence=round(1.0 - alpha, 10),
        random_state=seed,
        alpha=alpha, of="the confidence" if next(iter(views.values())).kind == "confidence" else None))
    if int(s["boot"]) and not n_boot:
        # the budget counts every model's rows; the caption names what the reader loaded (it said "100,000 rows"
        # of a 50,000-row file of two models)
        per_model = sorted({v.n for v in views.values()})
        rows = (f"{len(views)} models of {per_model[0]:,} rows" if len(views) > 1 and len(per_model) == 1
                else f"{n_rows:,} rows")
        st.caption(f"Bootstrap intervals of the decomposition are left out on {rows} until requested.")
    left, right = st.columns([3, 2], gap="medium")
    with left:
        fig = cached(("mcb_dsc_fig", score) + key + (n_boot, alpha),
                     lambda: figures.mcb_dsc_plot(table=table, title=""))
        show_figure(fig, "mcb_dsc", key="mcb_dsc")
    with right:
        st.markdown("**Which model is better, and why**")
        for r in table.itertuples():
            if r.model != reference:
                st.markdown(f"- {md(r.reading)}")  # readings name the models
        label = "Brier score" if score == "brier" else "Log loss"
        st.caption(f"{label} = MCB − DSC + UNC. MCB: what isotonic recalibration would save; DSC: what the "
                   "ranking of the cases is worth; UNC: the score of always predicting the base rate. "
                   + (f"Whiskers: {100 * (1 - alpha):g}% paired bootstrap intervals ({n_boot} resamples)."
                      if n_boot else ""))
    shown = pd.DataFrame({
        "Model": table["model"], ("Brier score" if score == "brier" else "Log loss"):
            [format_value(v, "score") for v in table["score"]],
        "MCB": [format_value(v, "score") for v in table["miscalibration"]],
        "DSC": [format_value(v, "score") for v in table["discrimination"]],
        "UNC": [format_value(v, "score") for v in table["uncertainty"]],
    })
    show_dataframe(shown)
    download_table(table, "decomposition", key="decomposition")
    c1, c2 = st.columns(2, gap="medium")
    with c1:
        # consistency bands of more than two models hide each other (and cost a refit each): curves only then
        bands = ("consistency",) if len(models) <= 2 else None
        corp = cached(("corp_overlay", alpha) + key, lambda: figures.corp_diagram(
            models, bands=bands, level=1.0 - alpha, n_resamples=M.band_resamples(1.0 - alpha),
            random_state=seed, title="CORP reliability diagrams"))
        show_figure(corp, "corp_overlay", key="corp_overlay")
    with c2:
        roc = cached(("roc_overlay",) + key, lambda: figures.roc_curves(models, title="ROC curves"))
        show_figure(roc, "roc_overlay", key="roc_overlay")
    if s.get("murphy"):
        murphy = cached(("murphy",) + key, lambda: figures.murphy_diagram(models))
        show_figure(murphy, "murphy", key="murphy")


def discrimination(preds: Predictions, view: BinaryView) -> None:
    """ROC curve of the view with AUC and DeLong's interval, sharpness against DSC; multiclass: accuracy and
    one-vs-rest AUC per class."""
    fp = preds.fingerprint()
    one_outcome = np.unique(view.y if view.w is None else view.y[view.w > 0]).size < 2
    auc = None if one_outcome else cached(("auc", fp, view.name),
                                          lambda: M.auc_delong(view.y, view.p, sample_weight=view.w))
    sharp = cached(("sharpness", fp, view.name), lambda: M.sharpness(view.p, sample_weight=view.w))
    dec = cached(("corp_dec", fp, view.name), lambda: M.corp_decomposition(view.y, view.p, sample_weight=view.w))
    left, right = st.columns([3, 2], gap="medium")
    with left:
        if one_outcome:  # a log of one class (a day without fraud): the library's words, and the page goes on
            try:
                M.auc_delong(view.y, view.p, sample_weight=view.w)
            except InputError as exc:
                st.info(md(exc.ui_message[:1].upper() + exc.ui_message[1:]), icon=":material/info:")
        else:
            fig = cached(("roc_fig", fp, view.name), lambda: figures.roc_curves(
                {view.name: (view.y, view.p, view.w)}, title=""))
            show_figure(fig, f"roc_{preds.name}_{view.name}", key="roc")
    with right:
        if auc is not None:
            st.metric("AUC", f"{auc.auc:.3f}", help="Area under the ROC curve; 95% interval by DeLong et al. (1988).")
        if auc is not None and np.isfinite(auc.low):
            # few events: the panel's note on DeLong's coverage (69-91% with 4-16 events, an audit)
            few = rare_events_note("auc", view.y)
            st.caption(f"95% interval {auc.low:.3f}–{auc.high:.3f} (DeLong); {auc.n_pos:,} rows with the outcome, "
                       f"{auc.n_neg:,} without." + (f" {few}" if few else ""))
        st.metric("Sharpness (variance of the predictions)", format_value(sharp, "score"),
                  help="How spread out the predictions are. For a calibrated model it equals the discrimination "
                       "term DSC of the Brier decomposition.")
        if sharp > 0:
            ratio = dec.dsc / sharp
            st.markdown(f"A calibrated model with this spread would have DSC = {format_value(sharp, 'score')}; "
                        f"here DSC = {format_value(dec.dsc, 'score')}: "
                        + ("the outcomes back the spread of the predictions." if 0.8 <= ratio <= 1.25 else
                           f"only {100 * ratio:.0f}% of the spread is backed by the outcomes (over-confident "
                           "spread)." if ratio < 0.8 else
                           "the outcomes separate more than the predictions claim (under-confident spread)."))
    if not preds.is_binary:
        n, K = preds.probs.shape
        consent = f"cv_ovr_auc_{fp}"
        if n * K > OVR_AUC_CELL_BUDGET and not st.session_state.get(consent):
            if st.button(f"Compute the one-vs-rest AUC of each of the {K} classes ({K} sorts of {n:,} rows)",
                         key="ovr_auc_button", icon=":material/calculate:"):
                st.session_state[consent] = True
                st.rerun()
            return
        per_class = cached(("ovr_auc", fp), lambda: M.ovr_auc(preds.y, preds.probs, sample_weight=preds.weights,
                                                              average=None))
        acc = cached(("accuracy", fp), lambda: M.accuracy(preds.y, preds.probs, sample_weight=preds.weights))
        st.markdown(f"**All classes**: accuracy {100 * acc:.1f}%; one-vs-rest AUC, macro average "
                    f"{np.nanmean(per_class):.3f}.")
        table = pd.DataFrame({"class": [str(c) for c in preds.classes], "one-vs-rest AUC": per_class})
        show_dataframe(table.sort_values("one-vs-rest AUC"))
        download_table(table, f"auc_per_class_{preds.name}", key="auc_per_class")
