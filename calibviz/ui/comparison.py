"""Dashboard blocks of the Compare page: the metric differences to the reference (intervals on request), the
better/worse summary and one table per metric.

The numbers and verdicts come from :func:`calibviz.compare.compare_models`; the sentences from
:func:`calibviz.compare.comparison_sentences` (the HTML report uses the same two).
"""
from __future__ import annotations

import hashlib

import pandas as pd
import streamlit as st

from ..compare import NO_VERDICT, compare_models, comparison_sentences, family_verdicts, verdict_words
from ..panel import config_key, format_p_value
from ..reduce import BinaryView
from .blocks import BOOTSTRAP_ROW_BUDGET, download_table, metric_redraws, slug
from .blocks import show_dataframe, table_height
from .compute import cached, progress_bar
from .settings import pavabc_conflict
from .text import md

__all__ = ["NUMBER_FORMATS", "number_column", "comparison_table", "show_comparison"]

#: Display formats of st.column_config.NumberColumn per metric unit (the values stay numbers: sorting is numeric).
NUMBER_FORMATS = {"probability": "%.4f", "percent": "%.2f%%", "score": "%.4f", "auc": "%.4f", "share": "%.4f",
                  "statistic": "%.3f", "z": "%.3f", "slope": "%.3f", "logit": "%.3f"}


def number_column(label: str, unit: str, *, signed: bool = False, help: str | None = None):
    """A NumberColumn in the unit's format (TCE in percent); ``signed``: a difference, with an explicit +, and
    in percentage points for percentages (:func:`calibviz.panel.format_difference`)."""
    fmt = NUMBER_FORMATS.get(unit, "%.4g")
    if signed:  # significant digits: a difference's interval end of -0.000036 must not read -0.0000
        fmt = "%+.2f pp" if unit == "percent" else "%+.3g"
    return st.column_config.NumberColumn(label, format=fmt, help=help)


def without_conflicting_tce(metrics: tuple, sizes) -> tuple:
    """The metrics to compare, without TCE (and a note saying so) while the sidebar's PAVA-BC bin sizes conflict for
    a model of ``sizes`` rows: TCE needs PAVA-BC bins, the other metrics do not (the page stays)."""
    if "tce" not in metrics or len(metrics) < 2 or not any(pavabc_conflict(int(n)) for n in sizes):
        return metrics
    st.warning("TCE is left out of the comparison: the PAVA-BC bin sizes of the sidebar conflict (see its message "
               "there).", icon=":material/warning:")
    return tuple(k for k in metrics if k != "tce")


def comparison_table(views: dict[str, BinaryView], fingerprints: tuple, s: dict, cfg, reference: str,
                     metrics: tuple) -> pd.DataFrame:
    """:func:`calibviz.compare.compare_models` of the views, cached per metric (on the settings that metric
    depends on) and per reference.

    The intervals (and so the verdicts) are computed when the resampled rows stay within
    :data:`calibviz.ui.blocks.BOOTSTRAP_ROW_BUDGET`, or after the user asks for them (a button says how many
    resamples of how many rows); until then the table holds the values and differences only.
    """
    n_boot, seed = int(s["boot"]), int(s["seed"])
    # the verdicts are tests at the sidebar's level, read from intervals at 1 - alpha (as the diagrams' intervals)
    confidence = round(1.0 - float(s["alpha"]), 10)
    n_rows = sum(v.n for v in views.values())
    models = {name: (v.y, v.p, v.w) for name, v in views.items()}
    base = ("compare", tuple(views), fingerprints, tuple(v.name for v in views.values()), reference, metrics,
            tuple(config_key(k, cfg) for k in metrics), seed, n_boot, confidence)
    consent = "cv_compare_boot_" + hashlib.sha1(repr(base).encode()).hexdigest()[:16]
    wanted = bool(n_boot) and (n_rows * n_boot <= BOOTSTRAP_ROW_BUDGET or st.session_state.get(consent, False))
    n_run = n_boot if wanted else 0
    # the calibrated-model reference a "worse calibrated" verdict needs: as many redraws as the metric panel
    n_max = max(v.n for v in views.values())

    def one(key):
        n_ref = metric_redraws(key, cfg, n_max)

        def compute():
            with progress_bar(f"Bootstrapping the differences in {key}") as progress:
                return compare_models(models, metrics=(key,), config=cfg, reference=reference, n_resamples=n_run,
                                      confidence=confidence, random_state=seed, progress=progress,
                                      n_reference=n_ref)

        return cached(("compare_metric", tuple(views), fingerprints, tuple(v.name for v in views.values()), key,
                       config_key(key, cfg), reference, n_run, n_ref, seed, confidence), compute)

    metrics = without_conflicting_tce(metrics, [v.n for v in views.values()])
    parts = [one(k) for k in metrics]
    table = pd.concat(parts, ignore_index=True)
    table.attrs.update(parts[0].attrs)
    # each metric's table is judged alone; the page shows them together, so they are judged together
    table = family_verdicts(table)
    if n_boot and not wanted:
        st.info("Better or worse needs intervals: on these data the bootstrap takes a while, so it waits for you. "
                "The values and differences below are exact.", icon=":material/info:")
        sizes = sorted({v.n for v in views.values()})
        rows = f"{sizes[0]:,} rows" if len(sizes) == 1 else f"{sizes[0]:,} to {sizes[-1]:,} rows"
        if st.button(f"Compute {100 * confidence:g}% intervals and verdicts ({n_boot} bootstrap resamples of {rows} "
                     f"for each of {len(views)} models)", key="compare_boot", icon=":material/calculate:"):
            st.session_state[consent] = True
            st.rerun()
    elif not n_boot:
        st.caption("Bootstrap resamples are set to 0 in the sidebar: values and differences only, no verdicts.")
    return table


def _shown(t: pd.DataFrame) -> pd.DataFrame:
    ref = t["is_reference"]
    return pd.DataFrame({  # the verdict beside the value: after the intervals it was off-screen at 1024 px
        "Model": t["model"],
        "Value": t["value"],
        "Versus the reference": verdict_words(t),
        # the p-values beside the verdict they decide (in the last columns, "p adjusted" was cut to a sliver at
        # 1280 px: a browser check); none where nothing was tested: MCE, no resamples, streamed models
        **({"p": t["p_value"].map(format_p_value), "p adjusted": t["p_adjusted"].map(format_p_value)}
           if t["p_value"].notna().any() else {}),
        "95% low": t["low"].where(t["low"].abs() != float("inf")),  # a one-sided bound: no lower end
        "95% high": t["high"],
        "Difference": t["diff"].where(~ref),
        "Difference low": t["diff_low"].where(~ref),
        "Difference high": t["diff_high"].where(~ref),
        # None: not known (an opened file's models may or may not share rows)
        "Paired": t["paired"].map({True: "yes", False: "no"}).fillna("not known").where(~ref, ""),
        **({"Note": t["note"]} if "note" in t and t["note"].astype(bool).any() else {}),
    })


def show_comparison(table: pd.DataFrame, reference: str) -> None:
    """The better/worse sentences, then one table per metric (numbers as numbers, in the metric's unit)."""
    sentences = comparison_sentences(table, name=lambda m: f"**{md(m)}**")
    if sentences:
        for line in sentences:
            st.markdown(f"- {line}")
    level = f"{100 * table.attrs.get('confidence', 0.95):g}%"
    alpha = 1 - table.attrs.get("confidence", 0.95)
    n_tests = int(table["n_tests"].max()) if len(table) else 0
    if n_tests > 1:
        st.caption(f"The {n_tests} tested differences on this page are judged together: a model is better or worse "
                   f"where the difference interval excludes 0 and the p-value adjusted by Holm's method is at most "
                   f"{alpha:g}, so that equal models get a better or worse among them at most about "
                   f"{100 * alpha:g}% of the time.")
    labels = list(dict.fromkeys(table["label"]))
    tabs = st.tabs(labels)
    for tab, label in zip(tabs, labels):
        t = table[table["label"] == label]
        unit = t["unit"].iloc[0]
        way = t["direction"].iloc[0]
        better = {"lower": "lower is better", "higher": "higher is better",
                  "ideal": "closer to the ideal value is better"}.get(way, "not a property of the model: not ranked")
        with tab:
            shown = _shown(t)
            show_dataframe(shown, height=table_height(len(shown)), column_config={
                "Value": number_column("Value", unit, help=f"{label}: {better}."),
                "95% low": number_column(f"{level} low", unit, help="Lower end of the metric's interval (empty "
                                         "for a one-sided upper bound, as for MCE)."),
                "95% high": number_column(f"{level} high", unit),
                "Difference": number_column("Difference", unit, signed=True,
                                            help=f"Value minus the reference's ({md(reference)})."),
                "Difference low": number_column(f"Difference {level} low", unit, signed=True),
                "Difference high": number_column(f"Difference {level} high", unit, signed=True),
                "p": st.column_config.TextColumn(
                    help="Two-sided p-value of 'no difference' for this difference on its own: the level at which "
                         "its bootstrap interval would reach 0 (DeLong's test for AUC on the same rows, a normal "
                         "test on other rows; for calibration slope, intercept and Spiegelhalter's Z, of 'as close "
                         "to the ideal value')."),
                "p adjusted": st.column_config.TextColumn(
                    help=f"The p-value adjusted by Holm's method for the {n_tests} differences shown together "
                         "(every tested metric and model on this page): the verdict reads it, so that equal "
                         "models are rarely called different anywhere on the page."),
                "Versus the reference": st.column_config.TextColumn(
                    help="Better or worse when the difference interval excludes 0 (paired bootstrap on the "
                         "same rows; DeLong for AUC) and, where several differences are tested, the adjusted "
                         f"p-value is at most {alpha:g}; for calibration errors the worse model must also fail its "
                         "calibrated-model reference. 'No clear difference' otherwise."),
                "Note": st.column_config.TextColumn(width="large", help="Why a value lies outside its own "
                                                                        "interval."),
            })
            st.caption(f"{label}: {better}." + (f" {NO_VERDICT[t['metric'].iloc[0]]}"
                                                if t["metric"].iloc[0] in NO_VERDICT else ""))
    download_table(table, f"compare_{slug(reference)}", label="Comparison as CSV", key="compare")
