"""The HTML calibration report of a streamed source (:func:`calibviz.scan`): every section buckets can support.

A scan never holds the rows, so the report is built from what its bucket
aggregation gives (:class:`calibviz.scan.Scan`, :mod:`calibviz.scan.tables`):
the metric panel with the calibrated-model reference (and bootstrap intervals
when asked: a Poisson bootstrap of the bucket table), the reliability diagram
and its per-bin table, the test-based (TCE) diagram on PAVA-BC bins, the
multiclass views (top-label diagram, class ranking), the variable ranking by
VECE when the source has feature columns, and for several models the overlay
and the table of values. The HTML of every section is the one of
:mod:`calibviz.report` (same builders, same wording); what needs the rows
(the violins of the TCE diagram, the CORP diagram, the LOESS curves of the
variables, paired comparisons and the triptych) is replaced by a sentence
saying it is not available on a streamed source and why (class
``unavailable`` in the HTML), never by a silent gap.
"""
from __future__ import annotations

import pandas as pd

from . import figures
from .binning import PAVABC, Uniform
from .errors import InputError
from .panel import PanelConfig, format_value, redraws_for
from .multiclass import class_reference_draws
from .report import (_Progress, _check_report_args, _compare_shown, _document, _e, _figure_html, _labels,
                     _metrics_parts, _multiclass_parts, _overview_sentence, _panel_headline, _reliability_parts,
                     _repro_section, _summary_html, _table_html, _tce_parts, _vece_parts, metric_key, resolve_metrics)
from .scan import Scan, interval_caption

__all__ = ["build_scan_report", "scan_report_contents", "UNAVAILABLE"]

#: Why each row-based section is missing from the report of a streamed source (shown in the report).
UNAVAILABLE = {
    "violins": "The violins (the distribution of the predictions inside each bin) are not available on a streamed "
               "source: they are drawn from the rows of each bin, and a streamed source is only read as sums per "
               "score bucket. The diagram's numbers (bins, observed rates, rejected predictions, TCE) are those "
               "of the loaded rows, each prediction tested at its own score; only PAVA-BC bins on continuous "
               "scores of more than 2²⁰ rows are formed from score buckets 2⁻¹⁶ wide, the full ones split into "
               "cells down to 2⁻²² (the note under the diagram says so).",
    "corp": "The CORP reliability diagram is not available on a streamed source: its isotonic (PAV) fit and its "
            "consistency band are computed on the individual predictions, which a streamed source never brings "
            "into memory. The binned reliability diagram above and the Brier score's binned decomposition in "
            "the metric table stand in for it; for CORP, load a sample of the rows with cv.load_predictions.",
    "curves": "The LOESS curves of actual and predicted error along the top variable are not available on a "
              "streamed source: a local regression needs the rows themselves. The ranking above is exact; to draw "
              "the curves, load a sample of the rows with cv.load_predictions.",
    "compare": "Intervals of the differences, the better/worse verdicts and the triptych (CORP, MCB-DSC, ROC) are "
               "not available on a streamed source: they need paired resamples of rows shared by the models, and a "
               "streamed source is read as sums per score bucket, model by model. The values and differences side "
               "by side are exact; each model's own interval is its bootstrap of its buckets.",
}


def _unavailable(key: str) -> str:
    return f'<p class="unavailable">{_e(UNAVAILABLE[key])}</p>'


def _as_scans(scans) -> dict[str, Scan]:
    if isinstance(scans, Scan):
        return {scans.name: scans}
    if not isinstance(scans, dict) or not scans or not all(isinstance(v, Scan) for v in scans.values()):
        raise InputError("scans must be a calibviz.Scan or a non-empty dict {name: Scan} (e.g. cv.scan(path).models).")
    return {str(k): v for k, v in scans.items()}


def _overview(s: Scan) -> dict:
    """The keys of :func:`calibviz.overview.data_overview` that the summary quotes, from the scan's sums."""
    total = s.bin_statistics(Uniform(1))
    mean_score = float(total.sum_pred.sum() / total.weight.sum())
    weighted = s.mapping is not None and s.mapping.weight is not None
    out = {"rows": s.n, "weighted": weighted}
    if s.is_binary:
        out.update(prevalence=s.prevalence, mean_prediction=mean_score)
    else:
        out.update(classes=len(s.mapping.classes), accuracy=s.prevalence, mean_confidence=mean_score)
    return out


def _features(s: Scan) -> list:
    return [] if s.mapping is None else list(s.mapping.features)


def scan_report_contents(scans) -> list[str]:
    """Titles of the sections a report of ``scans`` will contain; those that need the rows say so.

    Reads nothing but the scans' column roles (no pass over the data).

    Examples
    --------
    >>> import calibviz as cv, pandas as pd
    >>> s = cv.scan(pd.DataFrame({"y": [0, 1] * 10, "p": [0.3, 0.6] * 10}))
    >>> scan_report_contents(s)[:4]
    ['Summary', 'Metrics with intervals', 'Reliability diagram (positive class)', 'CORP reliability diagram (positive class): not available on a streamed source']
    """
    scans = _as_scans(scans)
    out = ["Summary"] + (["Model comparison (values; no verdicts on a streamed source)"] if len(scans) > 1 else [])
    for s in scans.values():
        view = "positive class" if s.is_binary else "confidence"
        items = ["Metrics with intervals", f"Reliability diagram ({view})",
                 f"CORP reliability diagram ({view}): not available on a streamed source",
                 "Test-based reliability diagram (TCE; no violins on a streamed source)", "Per-bin table"]
        if not s.is_binary:
            items += ["Top-label diagram", "Class ranking"]
        if _features(s):
            items += ["Variables ranked by VECE", "Curves of the top variable: not available on a streamed source"]
        out += [t for t in items if t not in out]
    return out + ["Reproducibility"]


def _model_section(idx: int, name: str, s: Scan, panel: pd.DataFrame, cfg: PanelConfig, n_resamples: int,
                   confidence: float, random_state, prog: _Progress, headline: list,
                   n_reference: int | None = None) -> str:
    """The HTML of one model of a scan (the sections of :func:`calibviz.report._model_section` buckets support);
    ``n_reference`` 0: no per-class test, as in memory."""
    from .scan import tables
    from .variables import MAX_RANKED_FEATURES

    anchor = f"model-{idx}"
    what = (f"P({_e(s.classes[1])}), the probability of the positive class" if s.is_binary else
            "the confidence (top-class probability) against 'the top class is correct'")
    parts = _metrics_parts(anchor, name, panel, confidence, caption=interval_caption(
        panel, multiclass=not s.is_binary, weighted=s.mapping.weight is not None), notes=s.notes)
    scheme = cfg.scheme()
    table = s.reliability_table(scheme, cfg.alpha)
    fig = figures.reliability_diagram(s, binning=scheme, alpha=cfg.alpha, show_band=True, title=None)
    parts += _reliability_parts(anchor, s.is_binary, what, fig, table, cfg)
    parts += [f'<h3 id="{anchor}-corp">CORP reliability diagram ({"positive class" if s.is_binary else "confidence"})'
              "</h3>", _unavailable("corp")]
    prog.step()
    tce_bins = PAVABC(cfg.n_min, cfg.n_max)
    tce_table = s.reliability_table(tce_bins, cfg.alpha)
    tce_fig = figures.tce_diagram(s, binning=tce_bins, alpha=cfg.alpha, title=None)
    parts += _tce_parts(anchor, tce_fig, tce_table, cfg, violins=_e(UNAVAILABLE["violins"]))
    grid_note = s._grid_note(tce_bins)  # its fullest group: found once
    if grid_note:
        parts.append(f'<p class="note">{_e(grid_note)}</p>')
    prog.step()
    if not s.is_binary:
        tl_table = tables.top_label_table(s, scheme, cfg.alpha)
        tl_fig = figures.top_label_diagram(table=tl_table, title=None)
        cw_tables = tables.classwise_tables(s, scheme, cfg.alpha)
        n_class_ref = class_reference_draws(len(cw_tables), cfg.alpha) if n_reference != 0 else 0
        ranking = tables.class_ranking(s, scheme, tables=cw_tables, n_reference=n_class_ref,
                                       random_state=random_state)
        shown_tables = {_e(k): t for k, t in cw_tables.items()}
        shown_ranking = ranking.assign(label=_labels(ranking["label"]))
        grid = figures.classwise_grid(tables=shown_tables, ranking=shown_ranking, alpha=cfg.alpha, top_n=12,
                                      title=None)
        parts += _multiclass_parts(anchor, tl_fig, tl_table, grid, ranking, headline, cfg.alpha, panel)
        parts.append('<p class="note">The class ranking has no per-class intervals on a streamed source (its '
                     "bootstrap resamples rows); the values are exact. Class-wise ECE itself has its interval in the "
                     "metric table (a joint Poisson bootstrap of the rows' cells).</p>")
        prog.step()
    features = _features(s)
    if features:
        ranked = features[:MAX_RANKED_FEATURES]
        ranking = s.variable_ranking(ranked, n_resamples=n_resamples, confidence=confidence,
                                     random_state=random_state, progress=prog.inner())
        if len(ranking):
            parts += _vece_parts(anchor, ranking, headline, cfg.alpha)
            if len(features) > MAX_RANKED_FEATURES:
                parts.append(f"<p>The first {MAX_RANKED_FEATURES} of {len(features):,} feature columns are "
                             "ranked.</p>")
            numeric = ranking.loc[ranking["type"] != "categorical", "feature"]
            if len(numeric):
                parts += [f'<h3 id="{anchor}-curves">Curves of the top variable: {_e(numeric.iloc[0])}</h3>',
                          _unavailable("curves")]
        else:
            parts.append("<p>No column varies enough to rank (constant, missing or a single level): no variable "
                         "section.</p>")
        prog.step()
    parts.append("</section>")
    return "".join(parts)


def _compare_section(scans: dict, cfg: PanelConfig, keys, confidence: float, n_resamples: int, random_state) -> str:
    """Several models of one source: the overlaid reliability diagrams, their values side by side with each model's
    own interval (Poisson bootstrap of its buckets, :func:`calibviz.scan.tables.compare_scans`)."""
    from .scan import tables

    overlay = figures.reliability_diagram({_e(n): s for n, s in scans.items()}, binning=cfg.scheme(),
                                          alpha=cfg.alpha, title=None)
    table = tables.compare_scans(scans, keys, config=cfg, n_resamples=n_resamples, random_state=random_state)
    computed = table.groupby("metric", sort=False)["value"].transform(lambda v: v.notna().any())
    table = table[computed.astype(bool)].reset_index(drop=True)  # metrics a scan cannot compute: see each model
    table["paired"] = table["paired"].map(lambda v: False if v is None else v)  # unknown on scans
    shown = _compare_shown(table, confidence)
    shown = shown.drop(columns=[c for c in shown.columns if c.startswith("Difference ") and "interval" in c
                                or c in ("Paired", "Versus the reference", "p", "p adjusted")]
                       + ([] if n_resamples else [c for c in shown.columns if "interval" in c]))
    first = next(iter(scans.values()))
    return ('<section id="compare"><h2>Model comparison</h2>'
            f"<p>The {len(scans)} models' reliability diagrams overlaid "
            f"({'positive class' if first.is_binary else 'confidence'}); differences are to the first model, "
            f"<b>{_e(table.attrs['reference'])}</b>.</p>" + _unavailable("compare")
            + f'<div class="figure">{_figure_html(overlay)}</div>' + _table_html(shown) + "</section>")


def build_scan_report(scans, *, config: PanelConfig = PanelConfig(), metrics=None, n_resamples: int = 200,
                      random_state=0, title: str | None = None, source: str | None = None, progress=None,
                      confidence: float = 0.95, n_reference: int | None = None, load_options: dict | None = None,
                      engine: str | None = None, database: str | None = None, compare_metrics=None,
                      output: str = "report.html") -> str:
    """A self-contained HTML calibration report of scans: the rows are never loaded.

    The sections of :func:`calibviz.report.build_report` that per-bucket sums
    support, built by the same code: summary, metric table with the
    calibrated-model reference (and bootstrap intervals with
    ``n_resamples``), reliability diagram with its per-bin table, TCE diagram
    (PAVA-BC) with its table, top-label diagram and class ranking
    (multiclass), variables ranked by VECE (sources with feature columns),
    for several models their overlay and values side by side, and the
    reproducibility block. Sections that need the rows (CORP diagram, the
    TCE diagram's violins, LOESS curves, paired comparisons and the triptych)
    are replaced by a sentence saying why (:data:`UNAVAILABLE`).

    Parameters
    ----------
    scans : calibviz.Scan or dict of {str: Scan}
        One model (``cv.scan(path)``) or several (``cv.scan(path).models``).
    config, metrics, random_state, title, source, progress, confidence, n_reference, load_options :
        As :func:`calibviz.report.build_report`. Metrics a scan cannot compute
        (ICI, calibration slope, AUC, ...) keep their row with a reading that
        says so.
    n_resamples : int, default 200
        Bootstrap resamples of the metric intervals (:meth:`Scan.metrics`:
        a Poisson bootstrap of the bucket table, no pass over the rows) and
        of the VECE intervals; 0 turns them off.
    compare_metrics : sequence of str, optional
        Metrics of the comparison (several models), as in
        :func:`~calibviz.report.build_report`.
    engine, database : str, optional
        The engine and DuckDB database the scans ran on, for the regenerate
        commands (default the scans' own engine).
    output : str, default "report.html"
        The file the regenerate commands write to.

    Returns
    -------
    str
        The HTML document (every value from the data HTML-escaped).

    Raises
    ------
    calibviz.InputError
        Bad options; bad rows of the source (probabilities outside [0, 1],
        unknown labels, ...) as the scans report them.

    References
    ----------
    As :func:`calibviz.report.build_report`; scans: DESIGN.md §8.

    Examples
    --------
    >>> import calibviz as cv, numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0); p = rng.uniform(size=2000)
    >>> df = pd.DataFrame({"y": (rng.uniform(size=2000) < p).astype(int), "p": p})
    >>> page = build_scan_report(cv.scan(df), n_reference=0)
    >>> page.startswith("<!DOCTYPE html>"), "not available on a streamed source" in page
    (True, True)
    """
    scans = _as_scans(scans)
    _check_report_args(n_resamples, config)
    kinds = {s.is_binary for s in scans.values()}
    if len(kinds) > 1:
        raise InputError("the models mix binary and multiclass predictions; report them separately.")
    first = next(iter(scans.values()))
    engine = engine or first.engine
    stages = sum(2 + (not s.is_binary) + bool(_features(s)) + 1 for s in scans.values())
    prog = _Progress(progress, stages)
    source_name = source if source is not None else first.source
    user_title, title = title, title or f"Calibration report: {source_name}"

    headline: dict[str, list] = {}
    sections, skipped = [], {}
    for i, (name, s) in enumerate(scans.items()):
        keys, skipped[name] = resolve_metrics(metrics, s.is_binary)
        redraws = redraws_for(keys, config.alpha) if n_reference is None else n_reference  # as metric_panel's
        panel = s.metrics(list(keys), config=config, n_reference=redraws, random_state=random_state,
                          n_resamples=int(n_resamples), confidence=confidence, progress=prog.inner())
        prog.step()
        headline[name] = _panel_headline(panel)
        sections.append(_model_section(i, name, s, panel, config, int(n_resamples), confidence, random_state, prog,
                                       headline[name], n_reference))
    compare_html, compare_keys = "", ()
    if len(scans) > 1:
        from .compare import comparison_metrics

        requested = metrics if compare_metrics is None else compare_metrics
        requested = None if requested is None else [metric_key(m) for m in (
            requested.split(",") if isinstance(requested, str) else requested)]
        compare_keys = comparison_metrics(requested, first.is_binary)[0]
        compare_html = _compare_section(scans, config, compare_keys, confidence, int(n_resamples), random_state)

    summary = _summary_html({name: _overview_sentence(_overview(s), s.classes[1] if s.is_binary else None,
                                                      s.is_binary) for name, s in scans.items()}, headline, [])
    toc = ['<nav><ul><li><a href="#summary">Summary</a></li>']
    if compare_html:
        toc.append('<li><a href="#compare">Model comparison</a></li>')
    toc += [f'<li><a href="#model-{i}">Model: {_e(n)}</a></li>' for i, n in enumerate(scans)]
    toc.append('<li><a href="#reproducibility">Reproducibility</a></li></ul></nav>')

    data_rows = [{"model": name, "source": s.source, "engine": s.engine, "rows": s.n,
                  "classes": len(s.mapping.classes) if s.mapping is not None else 2,
                  "class labels": ", ".join(map(str, (s.mapping.classes if s.mapping is not None else s.classes)[:20])),
                  "weighted": s.mapping is not None and s.mapping.weight is not None,
                  "features": len(_features(s)),
                  "fingerprint (SHA-256)": "not computed (streamed source: the rows are not read one by one)"}
                 for name, s in scans.items()]
    scan_args = ", ".join([repr(source)] + [f"{k}={v!r}" for k, v in (load_options or {}).items()]
                          + [f"engine={engine!r}"] + ([f"database={database!r}"] if database else []))
    loader = f"cv.scan({scan_args}).models"
    cli_extra = ["--engine", engine] + (["--database", database] if database else [])
    repro = _repro_section(scans, config, metrics, compare_keys, n_resamples, confidence, random_state, source,
                           load_options, user_title, skipped, next(iter(scans)), data_rows=data_rows, loader=loader,
                           cli_extra=cli_extra, output=output)
    body = summary + compare_html + "".join(sections) + repro
    return _document(title, len(scans), toc, body)
