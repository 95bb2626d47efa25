"""Variables: LOESS calibration curves along any column, VECE ranking, categorical subgroups (Kelly & Smyth 2023)."""
import pandas as pd
import streamlit as st

from calibviz import figures
from calibviz.panel import format_value
from calibviz.variables import (CURVE_MIN_VALUES, ERROR_CURVES_ON_BINARY, MAX_RANKED_FEATURES, curve_family,
                                disagreement_ranges, draws_curve, largest_disagreement, level_tables, level_test_sentence,
                                no_range_sentence, numeric_values, range_sentence, ranked_columns, readable_levels,
                                subgroup_table, top_variable_words, variable_curves, top_is_finding, two_tests_note,
                                variable_ranking, vece_floor_caption, vece_test_sentence, vece_whiskers_caption,
                                x_words)
from calibviz.ui import current_predictions, page_setup
from calibviz.ui.blocks import download_table, not_applicable, show_figure
from calibviz.ui.blocks import show_dataframe
from calibviz.ui.source import scan_dispatch
from calibviz.ui.compute import cached, progress_bar
from calibviz.ui.settings import page_control, panel_config, set_setting, settings
from calibviz.ui.text import md

page_setup("Variables", controls=("uncertainty",))
scan_dispatch("Variables")  # an opened large file analysed on every page: its binned views (ui.scan_pages)
preds = current_predictions()
st.title("Calibration along variables")
st.caption("A model can look calibrated on average yet be over-confident for some values of a variable and "
           "under-confident for others (Kelly & Smyth 2023). The curves are LOESS fits against the variable, with "
           "95% bands: of the actual and the predicted error (the error of the predicted class), or, binary data, "
           "of the observed and the predicted rate (Curves). Where predictions lie below 0.5, over-confident means "
           "more positives than predicted: the model under-predicts the rate there.")
numeric, categorical = preds.numeric_features, preds.categorical_features
if not numeric and not categorical:
    not_applicable("This page does not apply: the loaded data has no feature columns. Columns other than the "
                   "label, probabilities, weight and model are used as variables (try the hospital demo).")
    st.stop()

s = settings()
fp = preds.fingerprint()
y_prob = preds.y_prob if preds.is_binary else preds.probs
n_boot, seed = int(s["boot"]), int(s["seed"])

st.subheader("Which variables hide miscalibration?")
ranked = ranked_columns(numeric, categorical)
for kind, cols in (("numeric", numeric), ("categorical", categorical)):
    if len(cols) > MAX_RANKED_FEATURES:
        st.caption(f"Ranking the first {MAX_RANKED_FEATURES} of {len(cols):,} {kind} columns; the other "
                   f"{len(cols) - MAX_RANKED_FEATURES:,} can still be picked below.")


def _ranking():
    with progress_bar("Ranking variables by VECE") as progress:
        return variable_ranking(preds.features[ranked], preds.y, y_prob, sample_weight=preds.weights,
                                n_resamples=n_boot, random_state=seed, progress=progress)


ranking = cached(("ranking", fp, tuple(ranked), n_boot, seed), _ranking)
if not len(ranking):
    not_applicable("No column varies (each is constant, missing, or has one level): nothing to rank.")
else:
    show_figure(figures.vece_ranking(ranking=ranking), f"vece_ranking_{preds.name}", key="ranking")
    top = ranking.iloc[0]
    where = (f"in level **{md(top['level_at_max_vce'])}**" if top["type"] == "categorical"
             else f"at {md(top['feature'])} ≈ {x_words(top['x_at_max_vce'])}")
    gap = (f", with the largest local gap ({100 * top['max_vce']:.1f} percentage points) {where}"
           if pd.notna(top["max_vce"]) else "")
    if top_is_finding(ranking, float(s["alpha"])):  # the top bar is always the largest: named only beyond chance
        st.markdown(f"**{md(top['feature'])}** {top_variable_words(ranking)}: VECE = "
                    f"{format_value(top['vece'], 'probability')}{gap}.")
    if (verdict := vece_test_sentence(ranking, float(s["alpha"]), escape=md, strong=lambda t: f"**{t}**")):
        st.markdown(verdict)
    st.caption("VECE: the row-weighted gap between actual and predicted error over 10 equal-mass bins of a numeric "
               "column, or over the levels of a categorical one (levels under 30 rows pooled), on one scale."
               + (" " + whiskers if (whiskers := vece_whiskers_caption(ranking)) else ""))
    if (floor := vece_floor_caption(ranking, escape=md)):
        st.caption(floor)
    download_table(ranking, f"vece_ranking_{preds.name}", label="Ranking as CSV", key="ranking")

st.subheader("Look at one variable")
columns = numeric + categorical
if s["feature"] not in columns:
    set_setting("feature", str(ranking.iloc[0]["feature"]) if len(ranking) else columns[0])
c1, c2, c3 = st.columns(3)
with c1:
    page_control("feature", st.selectbox, label="Variable", options=columns,
                 help="Any column of the data; numeric ones get LOESS curves, categorical ones a per-level table.")
feature = settings()["feature"]
# A numeric column with a handful of values (a 36/60-month term) reads better as groups than as a curve.
few_values = feature in numeric and not draws_curve(preds.features[feature])
if few_values:
    st.caption(f"{md(feature)} takes fewer than {CURVE_MIN_VALUES} distinct values: shown per value instead of as a "
               "curve.")
if feature in numeric and not few_values:
    kinds = ["error", "rate"] if preds.is_binary else ["error"]
    if s["kind"] not in kinds:
        set_setting("kind", "error")
    with c2:
        page_control("kind", st.radio, label="Curves", options=kinds, horizontal=True,
                     format_func={"error": "actual vs predicted error", "rate": "observed vs predicted rate"}.get,
                     help="Error: Kelly & Smyth's view (1 - confidence vs mistakes). Rate: P(positive) for binary.")
    with c3:
        page_control("span", st.select_slider, label="LOESS span", options=[0.3, 0.5, 0.75, 1.0],
                     help="Share of the data in each local fit: smaller follows the data more closely.")
    s = settings()
    x, ok = numeric_values(preds.features[feature])
    if not ok.all():
        st.caption(f"{int((~ok).sum()):,} rows without a value of {md(feature)} are left out of the curves.")
    x = x[ok]
    # the ranking above invites picking its top variable: the curve's test is adjusted for the variables it ranks
    family = curve_family(ranking)
    key = (fp, feature, s["kind"], float(s["span"]), float(s["alpha"]), family)
    curves = cached(("curves",) + key, lambda: variable_curves(
        x, preds.y[ok], y_prob[ok], kind=s["kind"], span=float(s["span"]), alpha=float(s["alpha"]),
        scale="percent", sample_weight=None if preds.weights is None else preds.weights[ok], family=family))
    ranges = cached(("ranges",) + key, lambda: disagreement_ranges(curves))
    fig = figures.variable_curves(x, curves=curves, ranges=ranges, name=feature, title="")
    show_figure(fig, f"variable_{preds.name}_{feature}", key="curves")
    largest = largest_disagreement(ranges)
    if largest is not None:
        st.markdown("Largest disagreement: " + range_sentence(feature, largest, escape=md, strong=lambda t: f"**{t}**"))
        if (note := two_tests_note(ranking, float(s["alpha"]))):
            st.caption(note)
        if len(ranges) > 1:  # the other ranges, in x order (the largest is said above)
            st.markdown("Also:\n" + "\n".join(
                f"- {range_sentence(feature, r, escape=md, strong=lambda t: f'**{t}**')}"
                for i, r in ranges.iterrows() if i != largest.name))
    else:
        st.markdown(no_range_sentence(feature, curves, escape=md))
    if preds.is_binary and s["kind"] == "error":
        st.caption(ERROR_CURVES_ON_BINARY)
    download_table(curves, f"curves_{preds.name}_{feature}", label="Curves as CSV", key="curves")
else:
    # binary: observed vs predicted rate per level; multiclass: actual vs predicted error (top label)
    kind = "rate" if preds.is_binary else "error"
    table = cached(("subgroups", fp, feature, kind, n_boot, seed), lambda: subgroup_table(
        preds.features[feature], preds.y, y_prob, kind=kind, sample_weight=preds.weights, n_resamples=n_boot,
        random_state=seed))
    shown = readable_levels(table, kind)
    show_dataframe(shown, column_config={
        c: st.column_config.NumberColumn(format="%.3f") for c in shown.columns
        if c not in ("Level", "Rows") and pd.api.types.is_float_dtype(shown[c])} | {
        "Share of rows": st.column_config.NumberColumn(format="percent"),
        "z (observed vs predicted)": st.column_config.NumberColumn(
            format="%.2f", help="The level's observed minus predicted sum in units of its standard deviation for a "
                                "calibrated model (outcomes drawn from the predictions)."),
        "p (levels judged together)": st.column_config.NumberColumn(
            format="%.2g", help="Whether the level's observed rate is beyond what a calibrated model shows, adjusted "
                                "for reading all the levels of the table together (max-T). The 95% intervals beside "
                                "it are one level's each.")})
    if len(table):
        # the table ranks levels by the ECE within each level; the level whose overall rate is furthest from its
        # prediction can be another one, so both are named (one sentence when they coincide)
        worst, what = table.iloc[0], "observed" if kind == "rate" else "error"
        off = table.loc[table["gap"].abs().idxmax()]
        overall = lambda r: f"{what} {r['observed']:.3f} vs predicted {r['predicted']:.3f}"  # noqa: E731
        # the test's verdict first; then, descriptive, which level is furthest off (a walk-through read a level
        # named "largest" above a verdict that did not flag it as a finding)
        st.markdown(level_test_sentence(table, float(s["alpha"]), kind, escape=md, strong=lambda t: f"**{t}**"))
        st.markdown(f"Largest ECE within a level: **{md(worst['level'])}** ({worst['n']:,} rows, ECE "
                    f"{worst['ece']:.3f}); over the level, {overall(worst)}.")
        if off["level"] != worst["level"]:
            st.markdown(f"Largest gap over a whole level: **{md(off['level'])}** ({off['n']:,} rows), "
                        f"{overall(off)}.")
    download_table(table, f"subgroups_{preds.name}_{feature}", label="Levels as CSV", key="subgroups")
    cfg = panel_config(s)
    tables = cached(("level_tables", fp, feature, cfg, float(s["alpha"])), lambda: level_tables(
        preds.features[feature], preds.y, y_prob, binning=cfg.scheme(), alpha=float(s["alpha"]),
        sample_weight=preds.weights))
    if tables:
        st.caption("One reliability diagram per level (" + ("observed rate against the predicted probability"
                   if preds.is_binary else "accuracy against confidence") + f", {cfg.binning.replace('_', ' ')} "
                   "bins as chosen on the Reliability page): a level can be miscalibrated however good the "
                   f"average, but each interval is a {100 * (1 - float(s['alpha'])):g}% interval of its own, so "
                   "with many bins and levels some leave the diagonal by chance even for a calibrated model.")
        show_figure(figures.level_reliability(tables=tables, name=feature), f"levels_{preds.name}_{feature}",
                    key="levels")
