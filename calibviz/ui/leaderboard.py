"""The leaderboard of the Data page: all models in one sortable table, the sidebar's metrics and their verdicts.

Each model's numbers are its metric panel (:func:`calibviz.panel.metric_panel`, values and the
calibrated-model reference, no bootstrap), cached per metric under the same keys as the panels of the other
pages, so the headline metrics and the Reliability page of the selected model reuse them. The table is
:func:`calibviz.compare.leaderboard`.
"""
from __future__ import annotations

import hashlib

import pandas as pd
import streamlit as st

from .. import reduce
from ..compare import comparison_metrics, leaderboard
from ..panel import config_key, costly_reference, metric_panel
from .blocks import BOOTSTRAP_ROW_BUDGET, download_table, judged_at, metric_cache_key, metric_redraws, pages_family
from .blocks import show_dataframe, table_height
from .comparison import number_column
from .compute import cached, guarded, progress_bar
from .data import current_models
from .settings import panel_config, settings

__all__ = ["show_leaderboard"]

_DIRECTION_WORDS = {"lower": "lower is better", "higher": "higher is better",
                    "ideal": "closer to the ideal value is better", "": "not a property of the model"}


def show_leaderboard() -> None:
    """All models, one row each: the sidebar's metric set (values as numbers in their unit's format) and each
    metric's verdict against a calibrated model with the same predictions. Shown only for several models.

    The verdicts need label redraws of every metric (TCE's are the slowest); on large data they wait for a
    click, as the bootstrap intervals do on the other pages.
    """
    models = current_models()
    if len(models) < 2:
        return
    s = settings()
    cfg = panel_config(s)
    first = next(iter(models.values()))
    kind = "binary" if first.is_binary else "confidence"
    keys = guarded(lambda: comparison_metrics(tuple(s["metrics"]), first.is_binary))[0]
    seed = int(s["seed"])
    views = {name: reduce.views(p, kind)[0] for name, p in models.items()}
    n_rows = sum(v.n for v in views.values())
    n_max = max(v.n for v in views.values())
    base = ("leaderboard", tuple(p.fingerprint() for p in models.values()), keys,
            tuple(config_key(k, cfg) for k in keys), seed)
    consent = "cv_board_ok_" + hashlib.sha1(repr(base).encode()).hexdigest()[:16]
    # redraws as one model's metric panel, metric by metric; only those that cost time per row count
    family = pages_family(keys)  # the redraws of the pages' panels: their cache is this one
    costly_rows = n_rows * sum(metric_redraws(k, cfg, n_max, family) for k in keys if costly_reference(k, cfg))
    with_reference = costly_rows <= 4 * BOOTSTRAP_ROW_BUDGET or st.session_state.get(consent, False)

    def panel(name, view, fingerprint, key):
        # cheap references always; those that cost time per row wait for the button on large data
        n_run_ref = (metric_redraws(key, cfg, n_max, family) if with_reference or not costly_reference(key, cfg)
                     else 0)

        def compute():
            with progress_bar(f"{name}: {key} against a calibrated model"):
                return metric_panel(view.y, view.p, metrics=(key,), config=cfg, sample_weight=view.w,
                                    n_resamples=0, random_state=seed, n_reference=n_run_ref)

        # the key of calibviz.ui.blocks.panel_table for a panel without bootstrap: shared with the other pages
        return cached(metric_cache_key(fingerprint, view.name, key, cfg, 0, n_run_ref, seed), compute)

    # each model's verdicts are judged together, as its metric panel's (calibviz.panel.judged_together)
    panels = {name: judged_at([panel(name, views[name], p.fingerprint(), k) for k in keys], cfg.alpha)
              for name, p in models.items()}
    board = leaderboard(panels)
    st.subheader("All models")
    st.caption(f"{len(models)} models on their {'positive-class' if kind == 'binary' else 'confidence'} view, "
               "the sidebar's metrics; click a column header to sort. The verdict is against a perfectly "
               "calibrated model with the same predictions (labels redrawn from them), each model's tests judged "
               f"together as on its own pages, not across the models: among {len(models)} calibrated models some "
               "model shows evidence more often than α (5 equally calibrated models: 15% of simulated boards), so "
               "read a lone verdict among many with care. The Compare page says which model is better than which.")
    columns = {"Model": board["model"]}
    config = {}
    for key, label, unit, way in board.attrs["metrics"]:
        columns[label] = board[key]
        config[label] = number_column(label, unit, help=f"{_DIRECTION_WORDS[way].capitalize()}.")
        if board[f"{key}_verdict"].astype(bool).any():
            columns[f"{label}: verdict"] = board[f"{key}_verdict"]
    shown = pd.DataFrame(columns)
    show_dataframe(shown, height=table_height(len(shown)), column_config=config)
    waiting = [k for k in keys if costly_reference(k, cfg)]
    if not with_reference and waiting:
        n_ref = metric_redraws(waiting[0], cfg, n_max, family)
        if st.button(f"Compute the verdicts of {', '.join(waiting)} against a calibrated model ({n_ref} label "
                     f"redraws x {len(waiting)} metric{'s' if len(waiting) > 1 else ''} x {len(models)} models of "
                     f"{first.n:,} rows)", key="board_reference", icon=":material/calculate:"):
            st.session_state[consent] = True
            st.rerun()
    download_table(board, "leaderboard", label="Leaderboard as CSV", key="leaderboard")
