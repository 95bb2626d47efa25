"""Page building blocks: figures with downloads, tables with CSV export, the metric panel."""
from __future__ import annotations

import hashlib
import re

import numpy as np
import pandas as pd
import streamlit as st

from ..figures.theme import inert_links
from ..io.export import to_csv
from ..panel import config_key, format_interval, format_value, interval_caption, metric_panel
from .compute import cached, progress_bar
from .settings import panel_config, settings

__all__ = ["BOOTSTRAP_ROW_BUDGET", "show_figure", "download_table", "panel_table", "show_headlines", "show_metric_table", "slug",
           "not_applicable"]


def slug(text: str) -> str:
    """A file-name-safe version of ``text``."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", str(text)).strip("_") or "calibviz"


def show_figure(fig, name: str, *, key: str | None = None) -> None:
    """A Plotly figure in calibviz's own theme, PNG from the toolbar, HTML as a download."""
    config = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "filename": slug(name), "scale": 2}}
    fig = inert_links(fig)  # a class, model or column name with <a href=...> stays text
    st.plotly_chart(fig, theme=None, config=config, key=key)
    # The callable runs only on click: the 4 MB self-contained HTML is not built on every rerun.
    st.download_button("Figure as HTML", data=lambda: fig.to_html(include_plotlyjs=True, full_html=True),
                       file_name=f"{slug(name)}.html", mime="text/html", key=f"html_{key or slug(name)}",
                       icon=":material/download:", help="A self-contained interactive HTML file (opens offline).")


def download_table(df: pd.DataFrame, name: str, *, label: str = "Table as CSV", key: str | None = None) -> None:
    st.download_button(label, data=to_csv(df).encode("utf-8"), file_name=f"{slug(name)}.csv",
                       mime="text/csv", key=f"csv_{key or slug(name)}", icon=":material/download:",
                       help="The numbers behind the figure, one row per bin.")


def not_applicable(message: str) -> None:
    """Say plainly that a page does not apply to the loaded data."""
    st.info(message, icon=":material/info:")


def _format_value(row) -> str:
    return format_value(row["value"], row["unit"])


def _format_interval(row) -> str:
    """The bootstrap (or Wald) interval; '' when there is none."""
    return format_interval(row["low"], row["high"], row["unit"])


def _format_reference(row) -> str:
    """What a perfectly calibrated model with these predictions would show (central 95%)."""
    return format_interval(row.get("null_low"), row.get("null_high"), row["unit"])


def _format_p(row) -> str:
    p = row.get("p_value")
    if p is None or not np.isfinite(p):
        return ""
    return f"{p:.2g}" if p >= 0.001 else "< 0.001"


def _verdict_badge(row) -> str:
    """':red[evidence of miscalibration]' / ':green[no evidence of miscalibration]' for Markdown."""
    verdict = row.get("verdict") or ""
    if not verdict:
        return ""
    colour = "red" if verdict.startswith("evidence") else "green"
    return f":{colour}[{verdict}]"


#: Above this many resampled rows (n x resamples) the intervals wait for a click: the values show at once.
BOOTSTRAP_ROW_BUDGET = 5_000_000
#: Label redraws of the calibrated-model reference; above the row budget, the smaller number.
REFERENCE_RESAMPLES = 200
REFERENCE_RESAMPLES_LARGE = 50


def panel_table(y, p, w, name: str, fingerprint: str, *, metrics=None) -> pd.DataFrame:
    """The metric panel of (y, p, w) — a binary view, or labels and (n, K) probabilities — cached per data
    (``fingerprint`` and ``name``) and settings; the bootstrap shows its progress.

    On large data the bootstrap is not started automatically: the values are
    shown with a button that computes the intervals (and says how many
    resamples of how many rows it will draw).
    """
    s = settings()
    keys = tuple(metrics or s["metrics"]) or ("ece",)
    cfg = panel_config(s)
    n_boot, seed = int(s["boot"]), int(s["seed"])
    n = len(y)
    base = ("panel", fingerprint, name, keys, cfg, seed)
    consent = "cv_boot_ok_" + hashlib.sha1(repr(base).encode()).hexdigest()[:16]
    wanted = n_boot and (n * n_boot <= BOOTSTRAP_ROW_BUDGET or st.session_state.get(consent))
    n_run = n_boot if wanted else 0
    # The calibrated-model reference is what makes a value readable: it is always computed, with fewer
    # label redraws on large data (the p-value's resolution is 1 / (redraws + 1)).
    cells = n * (np.shape(p)[1] if np.ndim(p) == 2 else 1)  # class-wise metrics redo every class
    n_ref = REFERENCE_RESAMPLES if cells * REFERENCE_RESAMPLES <= BOOTSTRAP_ROW_BUDGET else REFERENCE_RESAMPLES_LARGE

    def one(key):
        # Cached per metric on the settings it depends on: changing the bins does not recompute TCE.
        def compute():
            with progress_bar(f"Bootstrapping {key}") as progress:
                return metric_panel(y, p, metrics=(key,), config=cfg, sample_weight=w,
                                    n_resamples=n_run, random_state=seed, progress=progress, n_reference=n_ref)

        return cached(("metric", fingerprint, name, key, config_key(key, cfg), n_run, n_ref, seed), compute)

    table = pd.concat([one(k) for k in keys], ignore_index=True)
    table.attrs.update(n_resamples=n_run, random_state=seed, confidence=0.95, n_reference=n_ref)
    if n_boot and not wanted:
        if st.button(f"Compute 95% intervals ({n_boot} bootstrap resamples of {n:,} rows)",
                     key=f"boot_{slug(name)}", icon=":material/calculate:",
                     help="On large data the bootstrap takes a while; the values above are exact."):
            st.session_state[consent] = True
            st.rerun()
    return table


def show_headlines(table: pd.DataFrame, n: int = 3) -> None:
    """The first metrics as sentences for stakeholders; each reading ends with its verdict against a calibrated
    model."""
    for _, row in table.head(n).iterrows():
        st.markdown(f"**{row['label']} = {_format_value(row)}.** {row['reading']}"
                    + (f" *{row['note']}*" if row.get("note") else ""))


def show_metric_table(table: pd.DataFrame, name: str) -> None:
    """All metrics with intervals, the calibrated-model reference and readings, CSV download and definitions."""
    shown = pd.DataFrame({
        "Metric": table["label"],
        "Value": table.apply(_format_value, axis=1),
        "95% interval": table.apply(_format_interval, axis=1),
        "Calibrated model would show": table.apply(_format_reference, axis=1),
        "p-value": table.apply(_format_p, axis=1),
        "Verdict": table["verdict"],
        "What it means": (table["reading"] + table["note"].map(lambda t: f" {t}" if t else "")),
    })
    st.dataframe(shown, hide_index=True, width="stretch",
                 column_config={"What it means": st.column_config.TextColumn(width="large"),
                                "Calibrated model would show": st.column_config.TextColumn(
                                    help="Central 95% of the metric when the labels are redrawn from the "
                                         "predictions (y* ~ Bernoulli(p)): what a perfectly calibrated model with "
                                         "these predictions would show. It depends on n and the bins.")})
    st.caption(interval_caption(table))
    download_table(table.drop(columns=["description"]), f"metrics_{name}", label="Metrics as CSV",
                   key=f"metrics_{slug(name)}")
    with st.expander("Metric definitions"):
        for label, description in zip(table["label"], table["description"]):
            st.markdown(f"- **{label}**: {description}")
