"""A self-contained HTML calibration report: what a review meeting saw, shareable afterwards.

The report is assembled from the same pieces as the dashboard
(:func:`calibviz.panel.metric_panel`, :mod:`calibviz.figures`,
:func:`calibviz.reliability_table`, :mod:`calibviz.multiclass`,
:mod:`calibviz.variables`) into one HTML file that opens offline: plotly.js is
embedded once in the head, every figure is a ``<div>`` plus a small script.

Escaping (the report is opened by people who did not write the data): every
string that comes from the user's data (file name, model, class, column and
level names) goes through :func:`html.escape` before it reaches the HTML, and
is escaped before it is handed to a figure too, so plotly.js shows it as text
(plotly decodes ``&lt;`` for display; its JSON already writes ``<`` as
``\\u003c``). Numbers are formatted by this module.
"""
from __future__ import annotations

import datetime as _dt
import html
import platform
import shlex
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd

from . import figures
from .binning import PAVABC
from .columns import COLUMN_HELP
from .errors import InputError
from .io import Predictions
from .multiclass import (CLASS_INTERVAL_READING, TOP_LABEL_READING, class_ranking, class_reference_draws,
                         class_test_sentence, top_label_table)
from .overview import data_overview
from .panel import (BINARY_METRICS, DEFAULT_BINARY_METRICS, DEFAULT_MULTICLASS_METRICS, MULTICLASS_METRICS,
                    format_adjusted_p, format_difference, format_interval, format_p_value, format_value,
                    interval_caption, judged_together, metric_key, metric_label, redraws_for, resolve_metrics,
                    PanelConfig, metric_panel, reference_range_words, two_sided)
from .compare import NO_VERDICT, compare_models, comparison_metrics, comparison_sentences, verdict_words
from .reduce import views
from .metrics import band_resamples, corp_table, decomposition_table
from .summary import reliability_table
from .variables import (CURVE_MIN_VALUES, MAX_RANKED_FEATURES, curve_family, disagreement_ranges, draws_curve,
                        largest_disagreement, no_range_sentence, numeric_values, range_sentence, ranked_columns,
                        readable_ranking, top_is_finding, top_variable_words, two_tests_note, variable_curves,
                        variable_ranking, vece_floor_caption, vece_test_sentence, vece_whiskers_caption)

__all__ = ["build_report", "write_report", "report_contents", "resolve_metrics", "metric_key", "format_value",
           "format_interval", "VERSION_PACKAGES"]

#: Packages whose versions the reproducibility block lists.
VERSION_PACKAGES = ("calibviz", "numpy", "scipy", "pandas", "statsmodels", "plotly")
_PLOT_CONFIG = {"displaylogo": False, "responsive": True}
_MAPPING_FLAGS = {"label": "--label", "probs": "--probs", "positive": "--positive", "weight": "--weight",
                  "model": "--model-column", "delimiter": "--delimiter", "encoding": "--encoding", "sheet": "--sheet"}


# --------------------------------------------------------------------------- formatting


def _e(value) -> str:
    """HTML-escaped text of any value (quotes too: values also land in attributes)."""
    return html.escape(str(value), quote=True)


def _labels(values) -> list[str]:
    """User labels escaped for figures (plotly shows entities as the characters they stand for)."""
    return [_e(v) for v in values]


# --------------------------------------------------------------------------- metrics


# resolve_metrics and metric_key live in calibviz.panel (the registry's module; the CLI imports them without
# the report's figures); re-exported here for the report's callers.


def _is_scans(models) -> bool:
    """A :class:`calibviz.Scan` or a dict of them (the report of a streamed source, :mod:`calibviz.report_scan`)."""
    from .scan import Scan

    return isinstance(models, Scan) or (isinstance(models, dict) and bool(models)
                                        and all(isinstance(v, Scan) for v in models.values()))


def _as_models(models) -> dict[str, Predictions]:
    if isinstance(models, Predictions):
        return {models.name: models}
    if not isinstance(models, dict) or not models or not all(isinstance(v, Predictions) for v in models.values()):
        raise InputError("models must be a calibviz.Predictions or a non-empty dict {name: Predictions} "
                         "(e.g. from calibviz.load_models(path)).")
    return {str(k): v for k, v in models.items()}


# --------------------------------------------------------------------------- what the report holds


def report_contents(models, recalibration=None) -> list[str]:
    """Titles of the sections a report of ``models`` will contain (the dashboard shows them before building).

    Examples
    --------
    >>> import calibviz as cv
    >>> report_contents(cv.load_demo_models("cifar10_resnet50"))[:3]
    ['Summary', 'Metrics with intervals', 'Reliability diagram (confidence)']

    Scans (:func:`calibviz.scan`) list the sections of their report
    (:func:`calibviz.report_scan.scan_report_contents`).
    """
    if _is_scans(models):
        from .report_scan import scan_report_contents

        if recalibration:
            raise InputError("recalibration needs the rows (maps are fitted on them); it is not available on a scan.")
        return scan_report_contents(models)
    models = _as_models(models)
    out = ["Summary"]
    if len(models) > 1:
        out += ["Model comparison", "Calibration vs discrimination (triptych)"]
    for p in models.values():
        view = "positive class" if p.is_binary else "confidence"
        items = ["Metrics with intervals", f"Reliability diagram ({view})", f"CORP reliability diagram ({view})",
                 "Test-based reliability diagram (TCE)", "Per-bin table"]
        if not p.is_binary:
            items += ["Top-label diagram", "Class ranking"]
        if p.numeric_features or p.categorical_features:
            items += ["Variables ranked by VECE"]
        if _curve_features(p):
            items += ["Curves of the top variable"]
        out += [s for s in items if s not in out]
    if recalibration:
        out.append("Recalibration (out-of-fold before/after)")
    return out + ["Reproducibility"]


# --------------------------------------------------------------------------- HTML pieces


def _figure_html(fig) -> str:
    return fig.to_html(full_html=False, include_plotlyjs=False, config=_PLOT_CONFIG)


def _table_html(df: pd.DataFrame, floats: int = 4, max_rows: int | None = None) -> str:
    """A DataFrame as an HTML table; cells and headers are escaped by pandas (escape=True)."""
    note = ""
    if max_rows is not None and len(df) > max_rows:
        note = f'<p class="note">First {max_rows} of {len(df)} rows.</p>'
        df = df.head(max_rows)
    shown = df.copy()
    for c in shown.columns:
        if pd.api.types.is_integer_dtype(shown[c]) and not pd.api.types.is_bool_dtype(shown[c]):
            shown[c] = shown[c].map(lambda v: f"{v:,}")  # counts of 10^6 rows and more read at a glance
        elif pd.api.types.is_float_dtype(shown[c]):
            col = shown[c]
            if np.all(np.isnan(col) | (col == np.round(col))):  # whole numbers (e.g. weights = counts)
                shown[c] = col.map(lambda v: "" if pd.isna(v) else f"{v:,.0f}")
            else:
                shown[c] = col.map(lambda v: "" if pd.isna(v) else f"{v:.{floats + 2}g}" if abs(v) >= 10
                                   else f"{v:.{floats}f}")
    html = shown.to_html(index=False, escape=True, border=0, classes="cv-table", na_rep="")
    return note + _header_titles(html, df.columns)


def _header_titles(html: str, columns) -> str:
    """The table's header cells with the meaning of each library column as its tooltip
    (:data:`calibviz.columns.COLUMN_HELP`, as the dashboard's tables give it): the report showed ``rejected_rate``
    of uniform bins beside the TCE headline with nothing saying it is not TCE (a review)."""
    head, sep, body = html.partition("</thead>")
    for c in columns:
        if isinstance(c, str) and c in COLUMN_HELP:
            head = head.replace(f"<th>{_e(c)}</th>", f'<th title="{_e(COLUMN_HELP[c])}">{_e(c)}</th>', 1)
    return head + sep + body


def _reference_title(panel: pd.DataFrame) -> str:
    """The tooltip of the 'Calibrated model would show' header."""
    alpha = panel.attrs["config"].alpha if "config" in panel.attrs else PanelConfig().alpha
    return ("What a perfectly calibrated model with these predictions would show when the labels are redrawn "
            f"from them (y* ~ Bernoulli(p)): {reference_range_words(alpha, two_sided(panel['metric']))}.")


def _metric_table_html(panel: pd.DataFrame, confidence: float) -> str:
    rows = []
    for r in panel.itertuples():
        p = _e(format_p_value(r.p_value, getattr(r, "n_redraws", 0)))  # "< 0.001" is text, not a tag
        p_adj = _e(format_adjusted_p(getattr(r, "p_adjusted", np.nan), r.p_value, getattr(r, "n_redraws", 0)))
        note = f" {r.note}" if getattr(r, "note", "") else ""
        rows.append(f"<tr><td title=\"{_e(r.description)}\">{_e(r.label)}</td>"
                    f"<td class=\"num\">{_e(format_value(r.value, r.unit))}</td>"
                    f"<td class=\"num\">{_e(format_interval(r.low, r.high, r.unit))}</td>"
                    f"<td class=\"num\">{_e(format_interval(r.null_low, r.null_high, r.unit))}</td>"
                    f"<td class=\"num\">{p}</td><td class=\"num\">{p_adj}</td><td>{_e(r.verdict)}</td>"
                    f"<td>{_e(r.reading + note)}</td></tr>")
    head = (f"<tr><th>Metric</th><th>Value</th><th>{100 * confidence:g}% interval</th>"
            f"<th title=\"{_e(_reference_title(panel))}\">"
            "Calibrated model would show</th><th>p-value</th>"
            "<th title=\"Adjusted for the tests shown together (Holm's method); it decides the verdict.\">"
            "p adjusted</th><th>Verdict</th><th>What it means</th></tr>")
    defs = "".join(f"<li><b>{_e(r.label)}</b>: {_e(r.description)}</li>" for r in panel.itertuples())
    return (f'<table class="cv-table metrics"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'
            f"<details><summary>Metric definitions</summary><ul>{defs}</ul></details>")


_CSS = """
body{font-family:Arial,Helvetica,sans-serif;color:#222;max-width:1180px;margin:0 auto;padding:0 24px 48px;
line-height:1.45}
h1{margin:24px 0 4px}h2{border-bottom:2px solid #0072B2;padding-bottom:4px;margin-top:40px}
h3{margin-top:28px}.sub{color:#555;margin:0 0 16px}.note{color:#555;font-size:0.9em}
nav ul{columns:2;padding-left:20px}
.cv-table{border-collapse:collapse;font-size:13px;margin:8px 0 16px}
.cv-table th,.cv-table td{border-bottom:1px solid #ddd;padding:3px 8px;text-align:right;vertical-align:top}
.cv-table th{background:#f3f6f9}.cv-table td:first-child,.cv-table th:first-child{text-align:left}
.metrics td:last-child{text-align:left;max-width:520px}.num{white-space:nowrap}
.summary li{margin:4px 0}.figure{margin:8px 0 16px;min-height:200px}
pre{background:#f6f8fa;padding:10px;overflow-x:auto;white-space:pre-wrap;word-break:break-all}
dl.repro{display:grid;grid-template-columns:max-content auto;gap:2px 16px}dl.repro dt{font-weight:bold}
dl.repro dd{margin:0}details{margin:4px 0 12px}
@media print{.figure{break-inside:avoid}}
"""


class _Progress:
    """Maps the stages of the report (and the bootstrap inside them) to ``progress(done, total)``."""

    UNITS = 100

    def __init__(self, callback, stages: int):
        self.callback, self.total, self.done = callback, stages * self.UNITS, 0

    def inner(self):
        start = self.done

        def report(d, t):
            if self.callback is not None:
                self.callback(start + int(self.UNITS * d / max(t, 1)), self.total)
        return report

    def step(self):
        self.done += self.UNITS
        if self.callback is not None:
            self.callback(min(self.done, self.total), self.total)


def _curve_features(p: Predictions) -> list:
    """Numeric features drawn as curves (:func:`calibviz.variables.draws_curve`); those of few values are ranked
    too, as on the Variables page, but not drawn."""
    return [c for c in p.numeric_features if draws_curve(p.features[c])]


def _binary_view(p: Predictions):
    return views(p, "binary" if p.is_binary else "confidence")[0]


def _model_panel(p: Predictions, keys, cfg: PanelConfig, n_resamples: int, confidence: float, random_state,
                 prog: _Progress, n_reference: int | None) -> tuple[pd.DataFrame, pd.Series]:
    """The model's metric panel and the row of MCB, the CORP section's test, their verdicts judged together.

    Both are shown in the model's section, as on the Reliability page with the CORP diagram, so they form one
    family (:func:`calibviz.panel.judged_together`): read alone, MCB called a calibrated model with tied scores
    miscalibrated (p = 0.03) where the page, judging its 8 tests together, did not (a walk-through, 29 Nov
    2026). MCB is that of the binary view the CORP diagram draws (the confidence for multiclass data); a binary
    panel that holds it already is its own family. ``n_reference`` None: what the joint family needs."""
    mcb_in_panel = p.is_binary and "mcb" in keys
    if n_reference is None:
        n_reference = redraws_for(list(keys) + ([] if mcb_in_panel else ["mcb"]), cfg.alpha)
    panel = metric_panel(p.y, p.y_prob if p.is_binary else p.probs, metrics=keys, config=cfg,
                         sample_weight=p.weights, n_resamples=n_resamples, confidence=confidence,
                         random_state=random_state, progress=prog.inner(), n_reference=n_reference)
    if mcb_in_panel:
        return panel, panel[panel["metric"] == "mcb"].iloc[0]
    v = _binary_view(p)
    mcb = metric_panel(v.y, v.p, metrics=("mcb",), config=cfg, sample_weight=v.w, n_resamples=0,
                       random_state=random_state, n_reference=n_reference)
    joint = judged_together(panel, mcb, alpha=cfg.alpha)
    shown = joint.iloc[:-1].copy()
    shown.attrs = dict(panel.attrs)
    return shown, joint.iloc[-1]


def _model_section(idx: int, name: str, p: Predictions, panel: pd.DataFrame, mcb: pd.Series, cfg: PanelConfig,
                   n_resamples: int, confidence: float, random_state, prog: _Progress, headline: list,
                   n_reference: int | None = None) -> str:
    """The HTML of one model; appends plain-language sentences to ``headline``. ``mcb``: the CORP section's MCB
    row, judged with ``panel`` (:func:`_model_panel`). ``n_reference``: as :func:`build_report` (0: no
    calibrated-model reference, for the classes' test and MCB's either)."""
    test_classes = n_reference != 0
    anchor = f"model-{idx}"
    v = _binary_view(p)
    what = (f"P({_e(p.positive_label)}), the probability of the positive class" if p.is_binary else
            "the confidence (top-class probability) against 'the top class is correct'")
    parts = _metrics_parts(anchor, name, panel, confidence, notes=p.notes)
    if "mcb" not in set(panel["metric"]) and np.isfinite(mcb["p_value"]):  # the table's counts include it
        parts.append(f'<p class="note">The verdicts judge these tests together with the MCB test of the CORP '
                     f"section below ({int(mcb['n_tests'])} tests in all, Holm's method).</p>")
    scheme = cfg.scheme()
    table = reliability_table(v.y, v.p, binning=scheme, alpha=cfg.alpha, sample_weight=v.w)
    fig = figures.reliability_diagram(v.y, v.p, binning=scheme, alpha=cfg.alpha, sample_weight=v.w,
                                      show_band=True, title=None)
    parts += _reliability_parts(anchor, p.is_binary, what, fig, table, cfg)
    parts += _corp_parts(anchor, v, what, p.is_binary, random_state, headline, cfg, mcb, n_reference != 0)
    prog.step()
    tce_bins = PAVABC(cfg.n_min, cfg.n_max)
    tce_table = reliability_table(v.y, v.p, binning=tce_bins, alpha=cfg.alpha, sample_weight=v.w)
    tce_fig = figures.tce_diagram(v.y, v.p, binning=tce_bins, alpha=cfg.alpha, sample_weight=v.w, title=None)
    parts += _tce_parts(anchor, tce_fig, tce_table, cfg)
    prog.step()
    if not p.is_binary:
        classes = [str(c) for c in p.classes]
        tl_table = top_label_table(p.y, p.probs, binning=scheme, classes=classes, sample_weight=p.weights,
                                   alpha=cfg.alpha)
        tl_fig = figures.top_label_diagram(p.y, p.probs, binning=scheme, classes=_labels(classes),
                                           sample_weight=p.weights, alpha=cfg.alpha, title=None)
        n_class_ref = class_reference_draws(len(classes), cfg.alpha, p.n) if test_classes else 0
        ranking = class_ranking(p.y, p.probs, binning=scheme, classes=classes, sample_weight=p.weights,
                                n_resamples=n_resamples, confidence=confidence, random_state=random_state,
                                progress=prog.inner(), n_reference=n_class_ref)
        shown_ranking = ranking.assign(label=_labels(ranking["label"]))
        grid = figures.classwise_grid(p.y, p.probs, binning=scheme, classes=_labels(classes), sample_weight=p.weights,
                                      alpha=cfg.alpha, ranking=shown_ranking, top_n=12, title=None)
        parts += _multiclass_parts(anchor, tl_fig, tl_table, grid, ranking, headline, cfg.alpha, panel)
        prog.step()
    numeric, categorical = p.numeric_features, p.categorical_features
    y_prob = p.y_prob if p.is_binary else p.probs
    if numeric or categorical:
        ranked = ranked_columns(numeric, categorical)  # as the Variables page ranks them
        ranking = variable_ranking(p.features[ranked], p.y, y_prob, sample_weight=p.weights,
                                   n_resamples=n_resamples or 1, confidence=confidence,
                                   random_state=random_state, progress=prog.inner(),
                                   # it refuses 0 resamples: without intervals, take its cheap fixed-bin path
                                   # once and drop the interval below
                                   **({} if n_resamples else {"bootstrap_max_rows": -1}))
        if not n_resamples:
            ranking = ranking.assign(vece_low=np.nan, vece_high=np.nan, ci_method="none (0 resamples)")
    if (numeric or categorical) and not len(ranking):
        parts.append("<p>No column varies enough to rank (constant, missing or a single level): no variable "
                     "section.</p>")
        prog.step()
    elif numeric or categorical:
        top = ranking.iloc[0]
        # the curves of the top-ranked numeric variable drawn as curves (few values: shown per value on the page)
        top_curve = ranking[ranking["feature"].isin(_curve_features(p))]
        strong = lambda t: f"<b>{t}</b>"  # noqa: E731
        parts += _vece_parts(anchor, ranking, headline, cfg.alpha)
        for kind, cols in (("numeric", numeric), ("categorical", categorical)):
            if len(cols) > MAX_RANKED_FEATURES:
                parts.append(f"<p>The first {MAX_RANKED_FEATURES} of {len(cols):,} {kind} columns are ranked.</p>")
        if not len(top_curve):  # no numeric column to draw as curves
            prog.step()
    if (numeric or categorical) and len(ranking) and len(top_curve):
        feature = str(top_curve.iloc[0]["feature"])
        x, ok = numeric_values(p.features[feature])  # rows without a value: left out of the curves, counted
        # the curves of the top-ranked variable: their test is adjusted for the numeric variables it was picked from
        curves = variable_curves(x[ok], p.y[ok], y_prob[ok], kind="error", alpha=cfg.alpha, scale="percent",
                                 sample_weight=None if p.weights is None else p.weights[ok],
                                 family=curve_family(ranking))
        ranges = disagreement_ranges(curves)
        curve_fig = figures.variable_curves(curves=curves, ranges=ranges, name=_e(feature), title=None)
        sentences = [range_sentence(feature, r, escape=_e, strong=strong) for _, r in ranges.iterrows()]
        largest = largest_disagreement(ranges)  # the summary quotes the largest range, as the Variables page
        # the top-ranked variable may take few values (ranked, not drawn): the headline names it with its own VECE,
        # and the curves are those of the first variable drawn as curves (a review: the report gave term's VECE to
        # age, "Of the variables, age ... (VECE 0.1133)")
        is_top = feature == str(top["feature"])
        # a categorical top variable's sentence comes with the VECE test's (_vece_parts)
        if top["type"] != "categorical" and top_is_finding(ranking, cfg.alpha) and not is_top:
            headline.append(f"Of the variables, <b>{_e(top['feature'])}</b> {top_variable_words(ranking)} "
                            f"(VECE {format_value(top['vece'], 'probability')}); it takes fewer than "
                            f"{CURVE_MIN_VALUES} values, so it has no curves: the Variables page shows it per value.")
        elif top["type"] != "categorical" and top_is_finding(ranking, cfg.alpha):
            headline.append(f"Of the variables, <b>{_e(feature)}</b> {top_variable_words(ranking)} "
                            f"(VECE {format_value(top['vece'], 'probability')})"
                            + (f"; the largest disagreement: {range_sentence(feature, largest, escape=_e, strong=strong)}"
                               if largest is not None else
                               "; no range of it where the model is over- or under-confident beyond what a calibrated "
                               "model shows."))
        elif top["type"] != "categorical" and largest is not None and is_top:
            # its VECE is within chance (the test's sentence says so); a range its curves' own test found still is one
            headline.append(f"Along <b>{_e(feature)}</b>, the top-ranked variable, the largest disagreement: "
                            f"{range_sentence(feature, largest, escape=_e, strong=strong)}"
                            + (f" {_e(note)}" if (note := two_tests_note(ranking, cfg.alpha)) else ""))
        heading = ("Curves of the top variable" if is_top else
                   f"Curves of the top variable with {CURVE_MIN_VALUES} or more values")
        parts += [f'<h3 id="{anchor}-curves">{heading}: {_e(feature)}</h3>',
                  (f"<p>{int((~ok).sum()):,} rows without a value of {_e(feature)} are left out of the curves.</p>"
                   if not ok.all() else ""),
                  "<p>LOESS curves of actual and predicted error (percent) along the variable, with "
                  f"{100 * (1 - cfg.alpha):g}% pointwise bands; shaded ranges are where the curves differ beyond what a "
                  "calibrated model shows, tested along the whole curve at the same level.</p>",
                  f'<div class="figure">{_figure_html(curve_fig)}</div>',
                  ("<ul>" + "".join(f"<li>{s}</li>" for s in sentences) + "</ul>") if sentences else
                  f"<p>{no_range_sentence(feature, curves, escape=_e)}</p>"]
        prog.step()
    parts.append("</section>")
    return "".join(parts)


def _metrics_parts(anchor: str, name: str, panel: pd.DataFrame, confidence: float,
                   caption: str | None = None, notes=()) -> list[str]:
    """The model's heading, what reading its rows changed (``notes``: :attr:`Predictions.notes`, the dashboard's
    and the command line's notes) and its metric table (values, intervals, calibrated-model reference, readings);
    ``caption`` says how the intervals were made (default :func:`calibviz.panel.interval_caption`)."""
    return [f'<section id="{anchor}"><h2>Model: {_e(name)}</h2>',
            *(f'<p class="note">Note: {_e(n)}.</p>' for n in notes),
            f"<h3 id=\"{anchor}-metrics\">Metrics with intervals</h3>",
            _metric_table_html(panel, confidence),
            f'<p class="note">{_e(interval_caption(panel) if caption is None else caption)}</p>']


def _panel_headline(panel: pd.DataFrame) -> list[str]:
    """The summary's sentences of a model: its first four metrics with interval and reading, and every other
    metric whose verdict finds evidence of miscalibration (the summary missed a smECE verdict that the table below
    it showed: a review)."""
    flagged = panel["verdict"].astype(str).str.startswith("evidence")
    shown = panel[(np.arange(len(panel)) < 4) | flagged.to_numpy()]
    return [f"<b>{_e(r.label)} = {_e(format_value(r.value, r.unit))}</b>"
            + (f" ({_e(format_interval(r.low, r.high, r.unit))})" if np.isfinite(r.low) else "")
            + f". {_e(r.reading)}" + (f" <i>{_e(r.note)}</i>" if r.note else "")
            for r in shown.itertuples()]


def _reliability_parts(anchor: str, is_binary: bool, what: str, fig, table: pd.DataFrame,
                       cfg: PanelConfig) -> list[str]:
    """The reliability diagram of a view and its per-bin table."""
    return [f'<h3 id="{anchor}-reliability">Reliability diagram ({"positive class" if is_binary else "confidence"})'
            "</h3>",
            f"<p>Each point is a bin of predictions of {what}: its mean prediction (x) against the observed "
            f"rate (y), with its interval. {_e(figures.BAND_READING)} (α = {cfg.alpha:g}.)</p>",
            f'<div class="figure">{_figure_html(fig)}</div>',
            f"<details open><summary>Per-bin table ({_e(cfg.binning)} bins; a column's name shows its meaning on "
            f"hover)</summary>{_table_html(table)}</details>"]


def _tce_parts(anchor: str, fig, table: pd.DataFrame, cfg: PanelConfig, violins: str | None = None) -> list[str]:
    """The test-based reliability diagram and its PAVA-BC table; ``violins``: why the violins are missing."""
    shown = ("per bin, the distribution of its predictions (violin) and its observed rate (red segment)"
             if violins is None else "per bin, its mean prediction (black tick) and its observed rate (red segment)")
    return [f'<h3 id="{anchor}-tce">Test-based reliability diagram (TCE)</h3>',
            f"<p>PAVA-BC bins: {shown}; the bars below count the predictions a binomial test at level "
            f"{cfg.alpha:g} rejects against the bin's observed rate. {_e(figures.TCE_BARS_READING)}</p>",
            (f'<p class="unavailable">{violins}</p>' if violins else ""),
            f'<div class="figure">{_figure_html(fig)}</div>',
            f"<details><summary>Per-bin table (PAVA-BC bins)</summary>{_table_html(table)}</details>"]


def _multiclass_parts(anchor: str, tl_fig, tl_table: pd.DataFrame, grid, ranking: pd.DataFrame,
                      headline: list, alpha: float, panel: pd.DataFrame) -> list[str]:
    """Top-label diagram and class ranking of a multiclass model; which classes are beyond a calibrated model's
    goes to ``headline`` (without the test, the class with the largest one-vs-rest ECE, named as that), named only
    where the model's ``panel`` finds evidence in class-wise ECE (:func:`calibviz.multiclass.class_test_sentence`)."""
    tested = class_test_sentence(ranking, alpha, panel=panel, escape=_e, strong=lambda t: f"<b>{t}</b>")
    if tested is None:
        top = ranking.iloc[0]
        tested = (f"The largest one-vs-rest (class-wise) ECE is <b>{_e(top['label'])}</b>'s, "
                  f"{format_value(top['value'], 'probability')}"
                  + (f" ({format_interval(top['low'], top['high'], 'probability')})"
                     if np.isfinite(top["low"]) else "")
                  + "; the classes were not tested one by one against a calibrated model (the class-wise ECE's "
                  "verdict judges them together).")
    headline.append(tested)
    return [f'<h3 id="{anchor}-top-label">Top-label diagram</h3>',
            "<p>Stars: confidence calibration per bin; pluses add each bin's class-weighted top-label "
            f"deviation (Gupta &amp; Ramdas 2022). {_e(TOP_LABEL_READING)}</p>",
            f'<div class="figure">{_figure_html(tl_fig)}</div>',
            f"<details><summary>Per-bin top-label table</summary>{_table_html(tl_table)}</details>",
            f'<h3 id="{anchor}-classes">Class ranking</h3>',
            "<p>Classes ranked by their one-vs-rest (class-wise) ECE, largest first (a calibrated model's classes "
            f"have ECEs above 0 too, and one of them is the largest); the panels show the first 12. {tested}"
            + (f" {_e(CLASS_INTERVAL_READING)}" if np.isfinite(ranking["low"]).any() else "") + "</p>",
            f'<div class="figure">{_figure_html(grid)}</div>',
            _table_html(ranking, max_rows=100)]


def _overview_sentence(o: dict, positive_label, is_binary: bool) -> str:
    """The summary's description of a model from :func:`calibviz.overview.data_overview` (as on the Data page)."""
    return (f"{o['rows']:,} predictions, binary (positive class {_e(positive_label)}, prevalence "
            f"{o['prevalence']:.1%}, mean prediction {o['mean_prediction']:.1%})" if is_binary else
            f"{o['rows']:,} predictions, {o['classes']} classes, accuracy {o['accuracy']:.1%}, mean confidence "
            f"{o['mean_confidence']:.1%}") + (", weighted" if o["weighted"] else "")


def _summary_html(descriptions: dict, headline: dict, compare_lines: list) -> str:
    """The Summary section: per model its description and sentences, then the comparison's sentences."""
    summary = ['<section id="summary"><h2>Summary</h2>']
    for i, (name, desc) in enumerate(descriptions.items()):
        summary.append(f'<h3><a href="#model-{i}">{_e(name)}</a></h3><p>{desc}.</p><ul class="summary">'
                       + "".join(f"<li>{s}</li>" for s in headline[name]) + "</ul>")
    if compare_lines:
        summary.append("<h3>Comparison</h3><ul class=\"summary\">" + "".join(f"<li>{s}</li>" for s in compare_lines)
                       + "</ul>")
    summary.append("</section>")
    return "".join(summary)


def _document(title: str, n_models: int, toc: list[str], body: str) -> str:
    """The HTML page: head with plotly.js once (opens offline), title, table of contents, body."""
    from plotly.offline import get_plotlyjs

    generated = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<meta name=\"generator\" content=\"calibviz {_e(_versions()['calibviz'])}\">"
            f"<title>{_e(title)}</title><style>{_CSS}</style>"
            # plotly.js once, inline: the file opens offline and every figure below reuses it
            f'<script type="text/javascript">{get_plotlyjs()}</script></head><body>'
            f"<h1>{_e(title)}</h1><p class=\"sub\">calibviz calibration report · generated {generated} · "
            f"{n_models} model{'s' if n_models > 1 else ''}</p>"
            + "".join(toc) + body + "</body></html>\n")


def _vece_parts(anchor: str, ranking: pd.DataFrame, headline: list, alpha: float) -> list[str]:
    """The VECE ranking (figure and table); which variables are beyond a calibrated model's VECE goes to
    ``headline`` (nothing without a reference: the largest VECE of calibrated models' rankings is noise)."""
    rank_fig = figures.vece_ranking(ranking=ranking.assign(feature=_labels(ranking["feature"])), title=None)
    top = ranking.iloc[0]
    tested = vece_test_sentence(ranking, alpha, escape=_e, strong=lambda t: f"<b>{t}</b>")
    level = top["level_at_max_vce"] if top["type"] == "categorical" else None
    # the level with the largest gap is named only where its variable is beyond chance
    flagged = tested is not None and bool(top["p_adjusted"] <= alpha)
    level_words = (f"; in {_e(top['feature'])}, level <b>{_e(level)}</b> has the largest gap "
                   f"({100 * top['max_vce']:.1f} percentage points between error and predicted error)"
                   if flagged and level is not None and pd.notna(level) else "")
    if tested is not None:
        headline.append(tested[:-1] + level_words + "." if level_words else tested)
    return [f'<h3 id="{anchor}-variables">Variables ranked by VECE</h3>',
            "<p>A model can be calibrated on average and miscalibrated along a variable (Kelly &amp; Smyth "
            "2023): VECE is the row-weighted gap between actual and predicted error in equal-mass bins of "
            "each numeric column, or over the levels of a categorical column (levels under 30 rows "
            "pooled), on one scale." + (f" {_e(whiskers)}" if (whiskers := vece_whiskers_caption(ranking)) else "")
            + (f" {floor}" if (floor := vece_floor_caption(ranking, escape=_e)) else "")  # "the overall gap"
            + "</p>",
            f'<div class="figure">{_figure_html(rank_fig)}</div>', _table_html(readable_ranking(ranking))]


def _corp_parts(anchor: str, v, what: str, is_binary: bool, random_state, headline: list,
                cfg: PanelConfig, mcb: pd.Series, tested: bool) -> list[str]:
    """The CORP diagram of a view (PAV curve, consistency band, histogram) and its Brier decomposition, with MCB
    read against a calibrated model's (MCB is above 0 for every model: the PAV fit follows the noise); ``mcb``:
    its row, judged with the model's panel (:func:`_model_panel`)."""
    alpha = cfg.alpha
    level = 1.0 - alpha
    ct = corp_table(v.y, v.p, sample_weight=v.w, bands=("consistency",), level=level, coverage="simultaneous",
                    n_resamples=band_resamples(level), random_state=random_state)
    d = ct.attrs["decomposition"]
    fig = figures.corp_diagram(v.y, v.p, sample_weight=v.w, table=ct, title=None)
    sentence = (f"CORP decomposition: Brier score{'' if is_binary else ' of the confidence'} "
                f"{format_value(d['score'], 'score')} = MCB "
                f"{format_value(d['miscalibration'], 'score')} − DSC {format_value(d['discrimination'], 'score')} + "
                f"UNC {format_value(d['uncertainty'], 'score')}. " + mcb["reading"]
                + ("" if tested else " (MCB not tested against a calibrated model: references off.)"))
    headline.append(_e(sentence))
    return [f'<h3 id="{anchor}-corp">CORP reliability diagram ({"positive class" if is_binary else "confidence"})'
            "</h3>",
            f"<p>The isotonic (PAV) recalibration of {what}: the observed rate each prediction stands for, with "
            f"no bins to choose (Dimitriadis, Gneiting &amp; Jordan 2021). {_e(figures.CORP_BAND_READING)} "
            f"({ct.attrs['n_resamples']} resamples, α = {alpha:g}.)</p><p>{_e(sentence)}</p>",
            f'<div class="figure">{_figure_html(fig)}</div>']


def _triptych_section(vs: dict, ref: str, n_resamples: int, random_state, headline: list,
                      alpha: float = 0.05, n_reference: int = 200) -> str:
    """MCB-DSC plot with one sentence per model, CORP diagrams and ROC curves overlaid."""
    data = {name: (v.y, v.p, v.w) for name, v in vs.items()}
    confidence_view = next(iter(vs.values())).kind == "confidence"
    table = decomposition_table(data, reference=ref, n_resamples=n_resamples, confidence=0.9,
                                random_state=random_state, alpha=alpha, n_reference=n_reference,
                                of="the confidence" if confidence_view else None)
    shown = {_e(k): val for k, val in data.items()}
    esc_table = table.assign(model=_labels(table["model"]), reading=_labels(table["reading"]))
    mcb_dsc = figures.mcb_dsc_plot(table=esc_table, title=None)
    corp = figures.corp_diagram(shown, bands=("consistency",) if len(shown) <= 2 else None, level=1.0 - alpha,
                                n_resamples=band_resamples(1.0 - alpha),
                                random_state=random_state, title=None)
    roc = figures.roc_curves(shown, title=None)
    readings = [r for m, r in zip(table["model"], table["reading"]) if m != ref]
    headline.extend(_e(r) for r in readings)
    cols = ["model", "score", "miscalibration", "discrimination", "uncertainty"]
    cols += [c for c in ("mcb_low", "mcb_high", "dsc_low", "dsc_high") if c in table.columns]
    return ('<section id="triptych"><h2>Calibration vs discrimination (triptych)</h2>'
            "<p>The Brier score of each model split into miscalibration (MCB: what isotonic recalibration would "
            "save) and discrimination (DSC: what the ranking of the cases is worth); score = MCB − DSC + UNC, so "
            "grey lines join models of equal score and up-and-left is better"
            + (f"; whiskers are 90% paired bootstrap intervals ({n_resamples} resamples)" if n_resamples else "")
            + f". Reference: <b>{_e(ref)}</b> (Dimitriadis, Gneiting, Jordan &amp; Vogel 2024).</p>"
            + "<ul>" + "".join(f"<li>{_e(r)}</li>" for r in readings) + "</ul>"
            + f'<div class="figure">{_figure_html(mcb_dsc)}</div>' + _table_html(table[cols])
            + "<h3>CORP reliability diagrams</h3>" + f'<div class="figure">{_figure_html(corp)}</div>'
            + "<h3>ROC curves</h3><p>Discrimination alone: AUC with DeLong's 95% interval in the legend.</p>"
            + f'<div class="figure">{_figure_html(roc)}</div></section>')


def _compare_section(models: dict[str, Predictions], cfg: PanelConfig, metrics, reference: str, n_resamples,
                     confidence, random_state, prog: _Progress, headline: list, n_reference: int = 200) -> str:
    """The comparison: overlay, the table of differences to ``reference`` with verdicts, the triptych; the
    better/worse sentences (:func:`calibviz.compare.comparison_sentences`, as on the Compare page) go to
    ``headline``."""
    vs = {name: _binary_view(p) for name, p in models.items()}
    shown = {_e(name): (v.y, v.p, v.w) for name, v in vs.items()}
    overlay = figures.reliability_diagram(shown, binning=cfg.scheme(), alpha=cfg.alpha, title=None)
    table = compare_models({n: (v.y, v.p, v.w) for n, v in vs.items()}, metrics=metrics, config=cfg,
                           reference=reference, n_resamples=n_resamples, confidence=confidence,
                           random_state=random_state, progress=prog.inner(), n_reference=n_reference)
    ref = table.attrs["reference"]
    # metric labels and numbers are the registry's own text; model names are escaped
    # the sentences are text with the escaped model names in <b>; "p < 0.001" is their only other "<"
    sentences = comparison_sentences(table, name=lambda m: f"<b>{_e(m)}</b>")
    headline.extend(line.replace("< ", "&lt; ") for line in sentences)
    prog.step()
    return ('<section id="compare"><h2>Model comparison</h2>'
            f"<p>The {len(models)} models' reliability diagrams overlaid "
            f"({'positive class' if next(iter(models.values())).is_binary else 'confidence'}); differences are to "
            f"the reference model <b>{_e(ref)}</b>, with {'paired ' if table['paired'].all() else ''}bootstrap "
            "intervals (DeLong's for AUC); " + _compare_rule(table) + "</p>"
            + "".join(f'<p class="note">{_e(NO_VERDICT[k])}</p>' for k in dict.fromkeys(table["metric"])
                      if k in NO_VERDICT)
            + f'<div class="figure">{_figure_html(overlay)}</div>' + _table_html(_compare_shown(table, confidence))
            + "</section>" + _triptych_section(vs, ref, n_resamples, random_state, headline, cfg.alpha,
                                                     n_reference))


def _unit(metric: str) -> str:
    return BINARY_METRICS[metric].unit if metric in BINARY_METRICS else MULTICLASS_METRICS[metric].unit


def _compare_rule(table: pd.DataFrame) -> str:
    """How the comparison's verdicts were reached, for its number of tested differences."""
    n = int(table["n_tests"].max()) if len(table) else 0
    gate = " (for calibration errors the worse model must also fail its calibrated-model reference)"
    if n == 0:
        return "without bootstrap intervals there are no verdicts."
    if n == 1:
        return f"a model is better or worse when the difference interval excludes 0{gate}."
    alpha = 1.0 - float(table.attrs.get("confidence", 0.95))
    return (f"a model is better or worse when the difference interval excludes 0 and the difference's p-value, "
            f"adjusted by Holm's method for the {n} differences shown together, is at most {alpha:.2g}{gate}.")


def _compare_shown(table: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """The comparison table in words and numbers, each metric in its unit's format (:func:`format_value`)."""
    level = f"{100 * confidence:g}%"
    units = [_unit(k) for k in table["metric"]]
    return pd.DataFrame({
        "Metric": table["label"], "Model": table["model"], "Value": map(format_value, table["value"], units),
        f"{level} interval": map(format_interval, table["low"], table["high"], units),
        "Difference to reference": ["" if ref else format_difference(d, u) for d, u, ref in
                                    zip(table["diff"], units, table["is_reference"])],
        f"Difference {level} interval": ["" if ref or pd.isna(lo) else format_interval(lo, hi, u, difference=True)
                                         for lo, hi, u, ref in zip(table["diff_low"], table["diff_high"], units,
                                                                   table["is_reference"])],
        "p": table["p_value"].map(format_p_value),
        "p adjusted": table["p_adjusted"].map(format_p_value),
        "Versus the reference": verdict_words(table),
        "Paired": ["" if ref else {True: "yes", False: "no"}[p] for p, ref in zip(table["paired"],
                                                                                 table["is_reference"])],
    })


def _versions() -> dict[str, str]:
    out = {}
    for pkg in VERSION_PACKAGES:
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:  # a source checkout without installation
            out[pkg] = __import__(pkg).__version__
    out["python"] = platform.python_version()
    return out


def _python_call(source, load_options, cfg, metrics, n_resamples, random_state, title, loader=None,
                 output: str = "report.html") -> str:
    load = ", ".join([repr(source)] + [f"{k}={v!r}" for k, v in (load_options or {}).items()])
    if loader is None:
        loader = f"cv.load_demo_models({source!r})" if _is_demo(source) else f"cv.load_models({load})"
    args = [f"config={cfg!r}", f"metrics={metrics!r}", f"n_resamples={n_resamples}",
            f"random_state={random_state!r}"]
    if title:
        args.append(f"title={title!r}")
    if source is not None:
        args.append(f"source={source!r}")
    return ("import calibviz as cv\nfrom calibviz.panel import PanelConfig\nfrom calibviz.report import write_report\n"
            f"write_report({loader if source is not None else 'models'}, {output!r}, {', '.join(args)})")


def _is_demo(source) -> bool:
    from .demo import demo_datasets

    return isinstance(source, str) and source in demo_datasets() and not Path(source).exists()


def _cli_command(source, load_options, cfg, metrics, n_resamples, random_state, title, extra=(),
                 output: str = "report.html") -> str | None:
    if source is None:
        return None
    cmd = ["calibviz", "report", str(source), "-o", output]
    for key, value in (load_options or {}).items():
        if key in ("logits", "renormalize", "drop_invalid"):
            if value:
                cmd.append(f"--{key.replace('_', '-')}")
        elif key in _MAPPING_FLAGS and value is not None:
            cmd.append(_MAPPING_FLAGS[key])
            cmd += [str(v) for v in value] if isinstance(value, (list, tuple)) else [str(value)]
    cmd += list(extra) + settings_options(cfg, metrics, n_resamples, random_state, title)
    return " ".join(shlex.quote(c) for c in cmd)


def settings_options(cfg: PanelConfig, metrics, n_resamples: int, random_state, title=None) -> list[str]:
    """The ``calibviz report`` options of a report's settings (bins, alpha, PAVA-BC's sizes, metrics, bootstrap,
    seed, title), as words: the reproducibility block's command and the dashboard's command for an opened file."""
    cmd = ["--binning", cfg.binning, "--bins", str(cfg.n_bins), "--alpha", f"{cfg.alpha:g}"]
    if cfg.n_min is not None:
        cmd += ["--n-min", str(cfg.n_min)]
    if cfg.n_max is not None:
        cmd += ["--n-max", str(cfg.n_max)]
    if metrics is not None:
        cmd += ["--metrics", ",".join(metrics)]
    cmd += ["--ci", str(n_resamples), "--seed", str(random_state)]
    if title:
        cmd += ["--title", title]
    return cmd


# --------------------------------------------------------------------------- recalibration (#15)


def _recalibration_methods(recalibration) -> tuple:
    if not recalibration:
        return ()
    from .recalibration import get_recalibrator

    if isinstance(recalibration, str):
        recalibration = [m for m in recalibration.split(",") if m.strip()]
    return tuple(dict.fromkeys(get_recalibrator(m).name for m in recalibration))


def _recalibration_section(idx: int, name: str, p: Predictions, methods, cfg: PanelConfig, n_resamples: int,
                           n_reference: int, confidence: float, random_state, prog: _Progress, headline: list) -> str:
    """Before/after (out of fold) for each chosen method: diagram, metric table, loss gained, the fitted maps."""
    from .recalibration import cross_fit, map_curves, recalibration_table

    y_prob = p.y_prob if p.is_binary else p.probs
    results = {m: cross_fit(m, p.y, y_prob, random_state=random_state, sample_weight=p.weights) for m in methods}
    keys = ("ece",) if p.is_binary else ("confidence_ece", "top_label_ece")
    table = recalibration_table(p.y, y_prob, results, metrics=keys, config=cfg, sample_weight=p.weights,
                                n_resamples=n_resamples, n_reference=n_reference, confidence=confidence,
                                random_state=random_state, progress=prog.inner())

    def view(P):
        if p.is_binary:
            return p.y, P, p.weights
        v = views(Predictions(y=p.y, probs=P, classes=p.classes, weights=p.weights), "confidence")[0]
        return v.y, v.p, v.w

    overlay = figures.reliability_diagram({"before": view(y_prob), **{_e(m): view(cf.y_prob)
                                                                     for m, cf in results.items()}},
                                          binning=cfg.scheme(), alpha=cfg.alpha, title=None)
    maps = figures.recalibration_maps(map_curves(y_prob, results), title=None)
    level = f"{100 * confidence:g}%"
    shown = pd.DataFrame({
        "Method": table["method"], "Metric": table["label"],
        "Before": map(format_value, table["before"], table["unit"]),
        "Before: calibrated model would show": map(format_interval, table["before_null_low"],
                                                   table["before_null_high"], table["unit"]),
        "After": map(format_value, table["after"], table["unit"]),
        f"After {level} interval": map(format_interval, table["after_low"], table["after_high"], table["unit"]),
        "After: calibrated model would show": map(format_interval, table["after_null_low"],
                                                  table["after_null_high"], table["unit"]),
        "Before − after": map(format_difference, table["diff"], table["unit"]),
        f"Difference {level} interval (paired)": [format_interval(lo, hi, u, difference=True) for lo, hi, u in
                                                    zip(table["diff_low"], table["diff_high"], table["unit"])],
    })
    for r in table[table["metric"].isin([keys[0], "brier"])].itertuples():
        headline.append(_e(r.reading))
    described = "".join(f"<li><b>{_e(m)}</b>: {_e(cf.final.describe())}</li>" for m, cf in results.items())
    prog.step()
    scheme = next(iter(results.values())).scheme
    notes = "".join(f'<p class="note">{_e(n)}</p>'
                    for n in dict.fromkeys(n for cf in results.values() for n in cf.warnings()))
    return (f'<section id="recalibration-{idx}"><h2>Recalibration: {_e(name)}</h2>{notes}'
            f"<p>Each method's map was fitted and evaluated by {_e(scheme)}: every 'after' prediction comes from "
            "a map that did not see its row, so the numbers are what the map would do on new data. Before − after "
            "&gt; 0 is an improvement; the Brier score and log loss rows are the loss gained by recalibration "
            "(Berta et al. 2025).</p>"
            f'<div class="figure">{_figure_html(overlay)}</div>' + _table_html(shown)
            + "<h3>The fitted maps</h3><p>The map fitted on all rows (line) and the range of the maps fitted with "
            "one fold left out (band).</p>"
            f'<div class="figure">{_figure_html(maps)}</div><ul>{described}</ul></section>')


def _repro_section(models, cfg, metrics, compare_metrics, n_resamples, confidence, random_state, source,
                   load_options, title, skipped, reference=None, data_rows=None, loader=None, cli_extra=(),
                   output: str = "report.html") -> str:
    """Settings, data, software and the commands that regenerate the report (written to ``output``).

    ``data_rows``, ``loader`` and ``cli_extra`` let a report of scans (:mod:`calibviz.report_scan`) describe its
    data and its ``cv.scan`` / ``--engine`` commands with the same section."""
    settings = {
        "binning (ECE, MCE, diagrams)": f"{cfg.binning}" + (f", {cfg.n_bins} bins" if cfg.binning in
                                                            ("uniform", "equal_mass", "quantile") else ""),
        "TCE binning": f"PAVA-BC, n_min = {cfg.n_min or 'N/20'}, n_max = {cfg.n_max or 'N/5'}",
        "significance level α": f"{cfg.alpha:g}",
        # names as shown, keys as the commands below take them (the keys alone read as code, a walk-through)
        "metrics": ", ".join(f"{metric_label(m)} ({m})" for m in metrics) if metrics is not None
        else "default panel per kind of data",
        "comparison metrics": ", ".join(f"{metric_label(m)} ({m})" for m in compare_metrics) if len(models) > 1
        else "(one model)",
        "reference model": str(reference) if len(models) > 1 else "(one model)",
        "bootstrap resamples": str(n_resamples),
        "interval level": f"{100 * confidence:g}%",
        "random seed": str(random_state),
        "panel configuration": repr(cfg),
    }
    if any(skipped.values()):
        settings["metrics skipped"] = "; ".join(f"{m}: {', '.join(k)}" for m, k in skipped.items() if k)
    given, data_rows = data_rows is not None, list(data_rows or ())
    for name, p in ({} if given else models).items():
        classes = ", ".join(str(c) for c in p.classes[:20]) + (" …" if p.n_classes > 20 else "")
        data_rows.append({"model": name, "source": p.source, "rows": p.n, "classes": p.n_classes,
                          "class labels": classes, "weighted": p.weights is not None,
                          "features": len(p.features.columns), "fingerprint (SHA-256)": p.fingerprint()})
    versions = _versions()
    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    call = _python_call(source, load_options, cfg, metrics, n_resamples, random_state, title, loader, output)
    if len(models) > 1 and reference != next(iter(models)):  # the reference chosen on the Compare page
        cut = call.rindex(")")
        call = call[:cut] + f", reference={reference!r}" + call[cut:]
    cli = _cli_command(source, load_options, cfg, metrics, n_resamples, random_state, title, cli_extra, output)
    dl = lambda d: '<dl class="repro">' + "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in d.items()) + "</dl>"
    return ('<section id="reproducibility"><h2>Reproducibility</h2>'
            f'<h3>Settings</h3>{dl(settings)}'
            f'<h3>Data</h3><p>Source: <code>{_e(source if source is not None else "(in memory)")}</code></p>'
            f"{_table_html(pd.DataFrame(data_rows))}"
            f'<h3>Software</h3>{dl(versions)}'
            f'<h3>Generated</h3><p id="generated">{_e(now)}</p>'
            f'<h3>Regenerate</h3><p>Python:</p><pre id="python-call">{_e(call)}</pre>'
            + (f'<p>Command line:</p><pre id="cli-command">{_e(cli)}</pre>' if cli else
               "<p>Command line: not available for data built in memory.</p>")
            + "</section>")


def build_report(models, *, config: PanelConfig = PanelConfig(), metrics=None, n_resamples: int = 200,
                 random_state=0, title: str | None = None, source: str | None = None, progress=None,
                 compare_metrics=None, confidence: float = 0.95, reference: str | None = None,
                 load_options: dict | None = None, n_reference: int | None = None, recalibration=None,
                 output: str = "report.html") -> str:
    """A self-contained HTML calibration report (opens offline; plotly.js embedded once).

    Parameters
    ----------
    models : calibviz.Predictions, calibviz.Scan, or dict of {str: Predictions} or {str: Scan}
        One model, or several (e.g. :func:`calibviz.load_models`); several
        models add a comparison section (their views must be of one kind).
        A scan (``cv.scan(path)``, or ``cv.scan(path).models`` for every
        model) gives the report of a source too large for memory
        (:func:`calibviz.report_scan.build_scan_report`): the same call and
        options, because a data scientist reports a log the way they report
        a file, and the report says which sections need the rows (CORP,
        violins, LOESS curves, paired comparisons) instead of loading them;
        ``recalibration`` and a ``reference`` other than the first model are
        refused on scans.
    config : PanelConfig
        Binning, bins, alpha and PAVA-BC sizes used throughout.
    metrics : sequence of str, optional
        Metric keys of :mod:`calibviz.panel`; None gives the default panel of
        each model's kind. Keys of the other kind are skipped (and listed).
    n_resamples : int, default 200
        Bootstrap resamples of every interval (0 turns them off: fastest).
    random_state : int, default 0
    title : str, optional
        Report title (default: "Calibration report: <source>").
    source : str, optional
        The file path or demo name the models were loaded from: shown, and
        used in the commands that regenerate the report.
    progress : callable(done, total), optional
        Called as the report advances.
    compare_metrics : sequence of str, optional
        Metrics of the comparison (several models only). None takes
        ``metrics`` by the rule of the Compare page
        (:func:`calibviz.compare.comparison_metrics`: the binary-view keys of
        the metric set, ``confidence_ece`` as the confidence view's ECE; the
        default panel when ``metrics`` is None).
    reference : str, optional
        The model the others are compared with (differences, better/worse
        sentences, triptych); default the first.
    confidence : float, default 0.95
    n_reference : int or None, default None
        Label redraws of the calibrated-model reference beside every metric
        (:func:`calibviz.metrics.consistency_test`); 0 leaves it out. None:
        200, raised to what each panel's tests judged together need, as
        :func:`calibviz.panel.metric_panel` draws them.
        Level of the bootstrap intervals.
    load_options : dict, optional
        The column-mapping options used to load ``source`` (``label=``,
        ``probs=``, ...), for the regenerate commands.
    recalibration : sequence of str, optional
        Recalibration methods (:mod:`calibviz.recalibration`): adds a
        section per model with the out-of-fold (5-fold cross-fitted)
        before/after diagram, metrics with intervals and references, the
        loss gained and the fitted maps.
    output : str, default "report.html"
        The file the regenerate commands write to (:func:`write_report`
        passes its ``path``).

    Returns
    -------
    str
        The HTML document. Every value taken from the data (file, model,
        class, column and level names) is HTML-escaped.

    References
    ----------
    The sections follow DESIGN.md §5; the methods are those of the sections'
    functions: Naeini et al. (2015) ECE; Matsubara et al. (2023) TCE and its
    diagram (Fig. 1); Gupta & Ramdas (2022) top-label diagram (Fig. 1a);
    Kelly & Smyth (2023) VECE and variable-based curves.

    Examples
    --------
    >>> import calibviz as cv
    >>> page = build_report(cv.load_demo("hospital_readmission"), n_resamples=0, source="hospital_readmission")
    >>> page.startswith("<!DOCTYPE html>"), page.count("<script>/**") + page.count('<script type="text/javascript">/**')
    (True, 1)
    >>> "Reproducibility" in page and "Variables ranked by VECE" in page
    True
    """
    if _is_scans(models):  # a source streamed by cv.scan: the sections buckets support
        from .report_scan import build_scan_report

        if recalibration:
            raise InputError("recalibration needs the rows (maps are fitted on them); it is not available on a "
                             "scan: load the data with cv.load_models, or a sample of it.")
        if reference not in (None, "", next(iter(models)) if isinstance(models, dict) else models.name):
            raise InputError("reference= is not available on scans (the comparison of scans has no verdicts); "
                             "put the reference model first.")
        return build_scan_report(models, config=config, metrics=metrics, n_resamples=n_resamples,
                                 random_state=random_state, title=title, source=source, progress=progress,
                                 confidence=confidence, n_reference=n_reference, load_options=load_options,
                                 compare_metrics=compare_metrics, output=output)
    models = _as_models(models)
    _check_report_args(n_resamples, config)
    kinds = {p.is_binary for p in models.values()}
    if len(models) > 1 and len(kinds) > 1:
        raise InputError("the models mix binary and multiclass predictions; report them separately.")
    first = next(iter(models.values()))
    if len(models) > 1:
        requested = metrics if compare_metrics is None else compare_metrics
        if isinstance(requested, str):
            requested = [m for m in requested.split(",") if m.strip()]
        compare_metrics = comparison_metrics(None if requested is None else [metric_key(m) for m in requested],
                                             first.is_binary)[0]
        reference = next(iter(models)) if reference in (None, "") else str(reference)
        if reference not in models:
            raise InputError(f"reference model {reference!r} is not among the models ({', '.join(models)}).")
    else:
        compare_metrics, reference = (), None
    recalibration = _recalibration_methods(recalibration)
    stages = sum(2 + (not p.is_binary) + bool(p.numeric_features or p.categorical_features) + 1 + bool(recalibration)
                 for p in models.values()) \
        + (len(models) > 1)
    prog = _Progress(progress, stages)
    source_name = source if source is not None else (first.source or first.name)
    user_title, title = title, title or f"Calibration report: {source_name}"

    headline: dict[str, list] = {}
    sections, skipped = [], {}
    for i, (name, p) in enumerate(models.items()):
        keys, skipped[name] = resolve_metrics(metrics, p.is_binary)
        panel, mcb = _model_panel(p, keys, config, n_resamples, confidence, random_state, prog, n_reference)
        prog.step()
        headline[name] = _panel_headline(panel)
        sections.append(_model_section(i, name, p, panel, mcb, config, n_resamples, confidence, random_state,
                                       prog, headline[name], n_reference=n_reference))
    compare_html, compare_lines = "", []
    fixed = 200 if n_reference is None else n_reference  # comparisons and recalibration: one test per metric
    # better / worse and "improved" come from the differences' intervals: at 1 - alpha, as the Compare and
    # Recalibrate pages read them (at alpha = 0.01 the report called at 95% what the pages called at 99%)
    deciding = round(1.0 - config.alpha, 10)
    if len(models) > 1:
        compare_html = _compare_section(models, config, compare_metrics, reference, n_resamples, deciding,
                                        random_state, prog, compare_lines, fixed)
    recal_html = "".join(_recalibration_section(i, name, p, recalibration, config, n_resamples, fixed,
                                                deciding, random_state, prog, headline[name])
                         for i, (name, p) in enumerate(models.items())) if recalibration else ""

    summary = _summary_html({name: _overview_sentence(data_overview(p), p.positive_label, p.is_binary)
                             for name, p in models.items()}, headline, compare_lines)

    toc = ['<nav><ul><li><a href="#summary">Summary</a></li>']
    if compare_html:
        toc.append('<li><a href="#compare">Model comparison</a></li>')
    toc += [f'<li><a href="#model-{i}">Model: {_e(n)}</a></li>' for i, n in enumerate(models)]
    if recal_html:
        toc += [f'<li><a href="#recalibration-{i}">Recalibration: {_e(n)}</a></li>' for i, n in enumerate(models)]
    toc.append('<li><a href="#reproducibility">Reproducibility</a></li></ul></nav>')

    repro = _repro_section(models, config, metrics, compare_metrics, n_resamples, confidence, random_state, source,
                           load_options, user_title, skipped, reference, output=output)
    if recalibration:  # the settings and the regenerate commands name the methods too
        repro = repro.replace("</dl><h3>Data</h3>", f"<dt>recalibration</dt><dd>{_e(', '.join(recalibration))} "
                              "(5-fold cross-fitting, seed as above)</dd></dl><h3>Data</h3>", 1)
        call_end = repro.index("</pre>", repro.index('<pre id="python-call">'))
        cut = repro.rindex(")", 0, call_end)
        repro = repro[:cut] + _e(f", recalibration={list(recalibration)!r}") + repro[cut:]
        if 'id="cli-command"' in repro:
            cli_end = repro.index("</pre>", repro.index('<pre id="cli-command">'))
            repro = repro[:cli_end] + "".join(f" --recalibrate {m}" for m in recalibration) + repro[cli_end:]
    body = summary + compare_html + "".join(sections) + recal_html + repro
    return _document(title, len(models), toc, body)


def write_report(models, path, **options) -> Path:
    """Build the report (:func:`build_report` options) and write it to ``path`` as UTF-8.

    Returns
    -------
    pathlib.Path
        The written file.

    References
    ----------
    As :func:`build_report`.

    Examples
    --------
    >>> import calibviz as cv, tempfile, os
    >>> out = write_report(cv.load_demo("hospital_readmission"), os.path.join(tempfile.mkdtemp(), "r.html"),
    ...                    n_resamples=0)
    >>> out.stat().st_size > 3_000_000
    True
    """
    return _write_page(build_report(models, **{"output": str(path), **options}), path)


def _check_report_args(n_resamples, config) -> None:
    """The report's checks of its bootstrap size and significance level (in-memory and scan reports)."""
    if not isinstance(n_resamples, (int, np.integer)) or n_resamples < 0:
        raise InputError(f"n_resamples must be a non-negative integer, got {n_resamples!r}.")
    if not 0 < config.alpha < 1:
        raise InputError(f"alpha must be between 0 and 1 (exclusive), got {config.alpha!r}.")


def _write_page(page: str, path) -> Path:
    """Write a report page as UTF-8; an unwritable path is the user's input error."""
    path = Path(path)
    try:
        path.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write the report to {path}: {exc.strerror}; choose a writable path with -o.") from None
    return path
