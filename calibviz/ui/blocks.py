"""Page building blocks: figures with downloads, tables with CSV export, the metric panel."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import streamlit as st

from ..panel import BINARY_METRICS, metric_panel
from ..reduce import BinaryView
from .compute import cached, progress_bar
from .settings import panel_config, settings

__all__ = ["show_figure", "download_table", "metric_panel_block", "slug", "not_applicable"]


def slug(text: str) -> str:
    """A file-name-safe version of ``text``."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", str(text)).strip("_") or "calibviz"


def show_figure(fig, name: str, *, key: str | None = None) -> None:
    """A Plotly figure in calibviz's own theme, PNG from the toolbar, HTML as a download."""
    config = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "filename": slug(name), "scale": 2}}
    st.plotly_chart(fig, theme=None, config=config, key=key)
    # The callable runs only on click: the 4 MB self-contained HTML is not built on every rerun.
    st.download_button("Figure as HTML", data=lambda: fig.to_html(include_plotlyjs=True, full_html=True),
                       file_name=f"{slug(name)}.html", mime="text/html", key=f"html_{key or slug(name)}",
                       icon=":material/download:", help="A self-contained interactive HTML file (opens offline).")


def download_table(df: pd.DataFrame, name: str, *, label: str = "Table as CSV", key: str | None = None) -> None:
    st.download_button(label, data=df.to_csv(index=False).encode("utf-8"), file_name=f"{slug(name)}.csv",
                       mime="text/csv", key=f"csv_{key or slug(name)}", icon=":material/download:",
                       help="The numbers behind the figure, one row per bin.")


def not_applicable(message: str) -> None:
    """Say plainly that a page does not apply to the loaded data."""
    st.info(message, icon=":material/info:")


def _format_value(row) -> str:
    v = row["value"]
    if not np.isfinite(v):
        return "n/a"
    if row["unit"] == "percent":
        return f"{v:.2f}%"
    if row["unit"] == "probability":
        return f"{v:.4f}"
    return f"{v:.4g}"


def _format_interval(row) -> str:
    lo, hi = row["low"], row["high"]
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return f"p = {row['p_value']:.3g}" if np.isfinite(row["p_value"]) else ""
    if row["unit"] == "percent":
        return f"{lo:.2f}% – {hi:.2f}%"
    return f"{lo:.4g} – {hi:.4g}"


def metric_panel_block(view: BinaryView, fingerprint: str, *, metrics=None, headline: int = 2) -> pd.DataFrame:
    """Headline readings and the metric table (with bootstrap intervals) of one binary view."""
    s = settings()
    keys = tuple(metrics or s["metrics"]) or ("ece",)
    cfg = panel_config(s)
    n_boot, seed = int(s["boot"]), int(s["seed"])
    cache_key = ("panel", fingerprint, view.name, keys, cfg, n_boot, seed)

    def compute():
        with progress_bar("Bootstrapping metric intervals") as progress:
            return metric_panel(view.y, view.p, metrics=keys, config=cfg, sample_weight=view.w,
                                n_resamples=n_boot, random_state=seed, progress=progress)

    table = cached(cache_key, compute)
    for _, row in table.head(headline).iterrows():
        st.markdown(f"**{row['label']} = {_format_value(row)}.** {row['reading']}")
    shown = pd.DataFrame({
        "Metric": table["label"],
        "Value": table.apply(_format_value, axis=1),
        "95% interval": table.apply(_format_interval, axis=1),
        "What it means": table["reading"],
    })
    st.dataframe(shown, hide_index=True, width="stretch",
                 column_config={"What it means": st.column_config.TextColumn(width="large")})
    if n_boot:
        st.caption(f"Intervals: percentile bootstrap, {n_boot} resamples, seed {seed} (bins refitted on each "
                   "resample); calibration slope and intercept: Wald intervals of the logistic fit.")
    download_table(table.drop(columns=["description"]), f"metrics_{view.name}", label="Metrics as CSV",
                   key=f"metrics_{slug(view.name)}")
    with st.expander("Metric definitions"):
        for key in keys:
            st.markdown(f"- **{BINARY_METRICS[key].label}**: {BINARY_METRICS[key].description}")
    return table
