"""The ``calibviz`` command line.

Bad input prints one line on stderr and exits 2 (never a traceback); success
exits 0. Subcommands::

    calibviz demos                     list the demo datasets
    calibviz info FILE [mapping]       validate a predictions file and summarise it
    calibviz metrics FILE [options]    the metric panel per model (table, JSON or CSV; CI gates)
    calibviz report FILE -o OUT.html   a self-contained HTML calibration report
    calibviz recalibrate FILE --method M -o OUT   out-of-fold recalibrated predictions (and the map as JSON)
    calibviz app [FILE]                start the dashboard (on FILE, or on the demo data)

``metrics`` exits 1 when a ``--fail-above METRIC=VALUE`` threshold is exceeded,
or when ``--fail-p-below METRIC=P`` finds evidence of miscalibration (the
p-value against a calibrated model with the same predictions is at most P),
and when a gated metric is undefined on the data (a gate cannot vouch for a
value that is not there).
Its JSON output is a list of objects ``{model, metric, label, value, low,
high, null_low, null_high, p_value, p_adjusted, n_redraws, verdict, unit,
reading}`` (NaN written as null), see :data:`JSON_FIELDS`. ``n_redraws`` is the
number of label redraws behind ``p_value`` (0 for a test's own p-value): where
p_value is 1 / (n_redraws + 1), none of them reached the value and p_value is a
bound. ``p_adjusted`` is Holm's adjustment over the model's tests shown
together, which decides ``verdict`` (:func:`calibviz.panel.family_verdicts`);
``--fail-p-below`` reads the gated metric's own ``p_value``, a test chosen
before the data were seen.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import re
import socket
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np

from .errors import InputError

__all__ = ["main", "run", "build_parser", "JSON_FIELDS", "parse_threshold"]

APP_ENV = "CALIBVIZ_DATA"
#: Fields of every record of ``calibviz metrics --format json`` (and the CSV columns), in order.
JSON_FIELDS = ("model", "metric", "label", "value", "low", "high", "null_low", "null_high", "p_value", "p_adjusted",
               "n_redraws", "verdict", "unit", "reading")
BINNINGS = ("uniform", "equal_mass", "pava", "pavabc", "median_variance")


def _add_mapping(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("column mapping (auto-detected when omitted)")
    g.add_argument("--label", help="label column")
    g.add_argument("--probs", nargs="+", metavar="COL", help="probability column(s): one (binary) or one per class")
    g.add_argument("--positive", help="positive class when a single probability column is given")
    g.add_argument("--weight", help="sample-weight column")
    g.add_argument("--model-column", dest="model", help="long-format model column")
    g.add_argument("--logits", action="store_true", help="columns hold logits (sigmoid / softmax applied)")
    g.add_argument("--renormalize", action="store_true", help="divide rows that do not sum to 1 by their sum")
    g.add_argument("--drop-invalid", dest="drop_invalid", action="store_true",
                   help="leave out rows with an empty label, probability, weight or model name (and rows with wrong "
                        "values while under 5%% of the rows), with a note that counts them, instead of refusing the "
                        "file")
    g.add_argument("--delimiter", type=_delimiter,
                   help="field separator of delimited text (sniffed by default; a tab as '\\t' or tab)")
    g.add_argument("--encoding", help="text encoding (UTF-8 by default)")
    g.add_argument("--decimal", choices=[".", ","], help="decimal mark of delimited text (a comma is detected in files "
                   "that are not comma-separated)")
    g.add_argument("--sheet", help="Excel sheet (first by default)")


def _add_quiet(p: argparse.ArgumentParser) -> None:
    p.add_argument("-q", "--quiet", action="store_true",
                   help="no progress lines on stderr (they appear only on a terminal, for steps over 2 s; "
                        "CALIBVIZ_PROGRESS=always|never overrides the terminal test)")


def _progress(args):
    """The terminal progress of a command (calibviz.progress): silent with --quiet or when stderr is no terminal."""
    from .progress import TerminalProgress, progress_enabled

    return TerminalProgress(enabled=progress_enabled(getattr(args, "quiet", False)))


def _mapping_kwargs(args) -> dict:
    keys = ("label", "positive", "weight", "model", "delimiter", "encoding", "sheet", "decimal")
    kw = {k: getattr(args, k) for k in keys if getattr(args, k, None) is not None}
    if args.probs:
        kw["probs"] = args.probs[0] if len(args.probs) == 1 else args.probs
    kw["logits"] = args.logits
    kw["renormalize"] = args.renormalize
    kw["drop_invalid"] = args.drop_invalid
    return kw


def _add_metric_options(p: argparse.ArgumentParser, *, ci_default: int) -> None:
    g = p.add_argument_group("metric options")
    g.add_argument("--binning", choices=BINNINGS, default="uniform",
                   help="binning of ECE, MCE, RMSCE, the Brier decomposition and the diagrams (default: uniform)")
    g.add_argument("--bins", type=int, default=15, metavar="N", help="bins of uniform / equal_mass and ACE (default: 15)")
    g.add_argument("--alpha", type=float, default=0.05, metavar="A",
                   help="level of the TCE tests; intervals are at 1 - A (default: 0.05)")
    g.add_argument("--n-min", dest="n_min", type=int, metavar="N", help="PAVA-BC smallest bin of TCE (default: N/20)")
    g.add_argument("--n-max", dest="n_max", type=int, metavar="N", help="PAVA-BC largest bin of TCE (default: N/5)")
    g.add_argument("--metrics", metavar="LIST",
                   help="comma-separated metric keys, e.g. ece,tce,brier (default: the standard panel); "
                        "`calibviz metrics --list` names them all")
    g.add_argument("--ci", type=int, default=ci_default, metavar="N_RESAMPLES",
                   help=f"bootstrap resamples of the intervals, 0 = none (default: {ci_default})")
    g.add_argument("--reference", type=int, default=None, metavar="N_RESAMPLES",
                   help="label redraws of the calibrated-model reference (the range a perfectly calibrated model "
                        "with these predictions would show, and the p-value against it), 0 = none (default: 200, "
                        "or what the tests shown together need: 319 for 16 tests at alpha 0.05)")
    g.add_argument("--seed", type=int, default=0, help="random seed of the bootstrap and the reference (default: 0)")


class _Parser(argparse.ArgumentParser):
    """argparse with a usage error on one line (argparse prints the whole usage first: 13-16 lines for a
    subcommand), pointing to --help; exit status 2 as before. Subcommands' parsers are of this class too."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="calibviz", description="Diagnose the calibration of probabilistic classifiers.",
        epilog="examples:\n  calibviz demos\n  calibviz info preds.csv --label y --probs p\n"
               "  calibviz metrics hospital_readmission --ci 200 --format json\n"
               "  calibviz metrics preds.csv --fail-above ece=0.05 --fail-p-below tce=0.01\n"
               "  calibviz report preds.csv -o report.html\n  calibviz app preds.parquet\n\n"
               "FILE is a CSV, TSV, Parquet or Excel file, or a demo name (calibviz demos).\n"
               "Exit status: 0 ok, 1 a --fail-above/--fail-p-below gate was exceeded or could not be\n"
               "checked (the metric is undefined on the data), 2 bad input or usage,\n"
               "3 an internal error (one line; rerun with --debug for the traceback).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"calibviz {__import__('calibviz').__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="show the Python traceback of an internal error (for a bug report)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser("demos", help="list the demo datasets",
                   description="List the demo datasets shipped with calibviz, with their stories.")
    info = sub.add_parser("info", help="validate a predictions file and summarise it",
                          description="Load FILE with calibviz's validation and print a summary per model.",
                          epilog="example:\n  calibviz info preds.csv --format json",
                          formatter_class=argparse.RawDescriptionHelpFormatter)
    info.add_argument("file", help="CSV, TSV, Parquet or Excel file (or a demo name)")
    info.add_argument("--format", choices=["table", "json"], default="table")
    _add_mapping(info)
    met = sub.add_parser(
        "metrics", help="the metric panel per model (table, JSON or CSV; CI gates)",
        description="Compute the metric panel of every model in FILE (binary or multiclass) with optional "
                    "bootstrap intervals and plain-language readings.",
        epilog="examples:\n  calibviz metrics preds.csv --label y --probs p\n"
               "  calibviz metrics hospital_readmission --metrics ece,tce,brier --ci 200\n"
               "  calibviz metrics cifar10_resnet50 --format json\n"
               "  calibviz metrics preds.parquet --format csv > metrics.csv\n"
               "  calibviz metrics preds.csv --fail-above ece=0.05   # CI gate on a value\n"
               "  calibviz metrics preds.csv --fail-p-below ece=0.01 --fail-p-below tce=0.01   # CI gate on evidence\n"
               "  of miscalibration (gate TCE by its p-value: a calibrated model's TCE is far above 0, each\n"
               "  prediction being tested at alpha)\n\n"
               "JSON: a list of {model, metric, label, value, low, high, null_low, null_high, p_value, p_adjusted,\n"
               "n_redraws, verdict, unit, reading}; missing numbers are null. null_low-null_high is what a perfectly calibrated\n"
               "model with the same predictions would show (the central 1 - 2*alpha of the redraws: a value above it\n"
               "has p_value <= alpha; Brier score and log loss, tested two-sided: the 1 - alpha of the redraws nearest\n"
               "a calibrated model's expected score, a value outside it on either side has p_value <= alpha),\n"
               "p_value is against that reference (n_redraws label redraws, 0 for a test's own p-value;\n"
               "p_value = 1/(n_redraws + 1) is a bound: none of them reached the value); the verdict reads p_adjusted,\n"
               "Holm's adjustment over the model's tests shown together. TCE is in percent (0-100), ECE-type\n"
               "metrics are probabilities (0-1).\n"
               "Exit status: 0 ok, 1 a threshold was exceeded (listed on stderr), 2 bad input.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    met.add_argument("file", nargs="?", help="CSV, TSV, Parquet or Excel file (or a demo name)")
    met.add_argument("--format", choices=["table", "json", "csv"], default="table", help="output format (default: table)")
    met.add_argument("--fail-above", dest="fail_above", action="append", default=[], metavar="METRIC=VALUE",
                     help="exit 1 when METRIC exceeds VALUE for any model (repeatable; the metric is computed "
                          "even if --metrics omits it)")
    met.add_argument("--fail-p-below", dest="fail_p_below", action="append", default=[], metavar="METRIC=P",
                     help="exit 1 when the p-value of METRIC against a calibrated model with the same predictions "
                          "is at most P for any model: evidence of miscalibration, not a raw value (repeatable)")
    met.add_argument("--list", action="store_true", help="list the metric keys and exit")
    met.add_argument("--engine", choices=("duckdb", "polars", "spark"),
                     help="stream FILE (a Parquet/CSV path, glob, directory or DuckDB SQL query) through this engine "
                          "instead of loading it: for logs larger than memory (--ci: a Poisson bootstrap of the "
                          "bucket sums, no pass over the rows; the calibrated-model reference from the bucket sums too, log loss's "
                          "with one more pass, over the rows scored below 1/64 or from 63/64)")
    met.add_argument("--database", metavar="DB", help="with --engine duckdb: the DuckDB database FILE's query runs on")
    _add_metric_options(met, ci_default=0)
    _add_quiet(met)
    _add_mapping(met)
    met.add_argument("--recalibrate", metavar="METHOD", choices=RECALIBRATION_METHODS,
                     help="report each metric before and after recalibration with METHOD (cross-fitted, "
                          f"out of fold): one of {', '.join(RECALIBRATION_METHODS)}")
    met.add_argument("--cross-fit", dest="cross_fit", type=int, default=None, metavar="K",
                     help="with --recalibrate: folds of the cross-fitting (default: 5)")
    _add_recalibrate_parser(sub)
    rep = sub.add_parser(
        "report", help="write a self-contained HTML calibration report",
        description="Write an HTML report of every model in FILE: plain-language summary, metric table with "
                    "intervals, standard and test-based reliability diagrams, multiclass and variable sections "
                    "where they apply, per-bin tables, model comparison, and a reproducibility block. The file "
                    "opens offline (plotly.js is embedded).",
        epilog="examples:\n  calibviz report preds.csv -o report.html\n"
               "  calibviz report loan_recalibration -o loan.html --ci 0     # fastest: no intervals\n"
               "  calibviz report preds.parquet -o r.html --binning equal_mass --bins 10 --alpha 0.01\n"
               "  calibviz report 'logs/*.parquet' -o r.html --engine duckdb   # larger than memory: streamed",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    rep.add_argument("file", help="CSV, TSV, Parquet or Excel file (or a demo name)")
    rep.add_argument("-o", "--output", default="calibviz-report.html", metavar="OUT.html",
                     help="where to write the report (default: calibviz-report.html)")
    rep.add_argument("--title", help="report title (default: 'Calibration report: FILE')")
    rep.add_argument("--engine", choices=("duckdb", "polars", "spark"),
                     help="stream FILE (a Parquet/CSV path, glob, directory or DuckDB SQL query) through this engine "
                          "instead of loading it: for logs larger than memory. The report has every section per-bin "
                          "sums support (--ci: a Poisson bootstrap of the bucket sums) and says which need the rows "
                          "(CORP, violins, LOESS curves, paired comparisons); no --recalibrate")
    rep.add_argument("--database", metavar="DB", help="with --engine duckdb: the DuckDB database FILE's query runs on")
    rep.add_argument("--recalibrate", action="append", default=[], metavar="METHOD", choices=RECALIBRATION_METHODS,
                     help="add a recalibration section: out-of-fold before/after with METHOD (repeatable)")
    _add_metric_options(rep, ci_default=200)
    _add_quiet(rep)
    _add_mapping(rep)
    app = sub.add_parser("app", help="start the dashboard",
                         description="Start the Streamlit dashboard, on FILE if given, else on the demo data.",
                         epilog="example:\n  calibviz app preds.csv --port 8502",
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    app.add_argument("file", nargs="?", help="predictions file to open")
    app.add_argument("--port", type=int, default=8501)
    app.add_argument("--address", default="127.0.0.1")
    return parser


def _print_notes(notes_by_model: dict) -> None:
    """``{model: notes}`` one line each on stderr (the results on stdout stay as they are): what reading the file
    changed that the reader should know, as the Data page shows it (rows renormalised although their sums are far
    from 1, a label chosen among twins, columns left out), and a recalibration's notes (``CrossFit.warnings``)."""
    for name, notes in notes_by_model.items():
        for note in notes:
            print(f"calibviz: note: model {_printable(name)}: {note}", file=sys.stderr)


def _load(file: str, **kw):
    from . import demo
    from .io import load_models

    if file in demo.demo_datasets() and not Path(file).exists():
        return demo.load_demo_models(file)
    return load_models(file, **kw)


def _scan(args) -> dict:
    """``{model: Scan}`` of FILE streamed through ``--engine`` (cv.scan); nothing is loaded whole."""
    from .scan import scan

    if args.logits:
        raise InputError("--logits is not available with --engine; give probabilities.")
    reading = [f"--{k}" for k in ("delimiter", "decimal", "encoding", "sheet") if getattr(args, k, None) is not None]
    if reading:  # the engine reads the file itself; ignoring them would read another table than the user meant
        raise InputError(f"{', '.join(reading)}: reading options of the in-memory path, not available with --engine "
                         "(the engine reads UTF-8 CSV or Parquet itself; DuckDB detects the delimiter). Drop --engine "
                         "for this file, or convert it to Parquet or UTF-8 CSV with a dot as decimal mark.")
    kw = {k: getattr(args, k) for k in ("label", "positive", "weight", "model") if getattr(args, k, None) is not None}
    if args.probs:
        kw["probs"] = args.probs[0] if len(args.probs) == 1 else args.probs
    return scan(args.file, engine=args.engine, database=args.database, renormalize=args.renormalize,
                drop_invalid=args.drop_invalid, **kw).models


def _cmd_demos(args) -> int:
    from .demo import DEMOS

    for d in DEMOS.values():
        print(f"{d.name:22s} {d.title}\n{'':22s} {d.story}")
    return 0


def _cmd_info(args) -> int:
    from .overview import data_overview

    models = _load(args.file, **_mapping_kwargs(args))
    rows = [data_overview(p) for p in models.values()]
    if args.format == "json":
        print(json.dumps(rows, indent=2, default=str))
    else:
        for r in rows:
            print(f"model {_printable(r['name'])}: {r['rows']:,} rows, {r['kind']} ({r['classes']} classes), "
                  f"accuracy {r['accuracy']:.4f}, mean confidence {r['mean_confidence']:.4f}"
                  + (f", prevalence {r['prevalence']:.4f}, mean prediction {r['mean_prediction']:.4f}"
                     if r["kind"] == "binary" else "") + f", fingerprint {r['fingerprint']}")
    return 0


def parse_threshold(text: str, option: str = "--fail-above") -> tuple[str, float]:
    """``"ece=0.05"`` -> ``("ece", 0.05)``: a metric key (or label, any case) and a finite number.

    Examples
    --------
    >>> parse_threshold("ECE=0.05"), parse_threshold("smECE = 0.1")
    (('ece', 0.05), ('smooth_ece', 0.1))
    """
    from .panel import metric_key

    name, sep, value = str(text).partition("=")
    if not sep or not name.strip() or not value.strip():
        raise InputError(f"{option} expects METRIC=VALUE (e.g. ece=0.05), got {text!r}.")
    try:
        threshold = float(value)
    except ValueError:
        raise InputError(f"{option} {text!r}: {value.strip()!r} is not a number; write e.g. ece=0.05.") from None
    if not np.isfinite(threshold):
        raise InputError(f"{option} {text!r}: the threshold must be a finite number.")
    return metric_key(name), threshold


#: Binary metric names a ``--fail-above`` / ``--fail-p-below`` gate maps to on multiclass data: the multiclass
#: metric that is the same quantity by the usual convention (said on stderr when used).
MULTICLASS_GATES = {
    "ece": ("confidence_ece", "ECE of the top-class probability against 'top class correct', Guo et al. 2017: what "
                              "'ECE' means for a multiclass model"),
    "tce": ("classwise_tce", "TCE of each one-vs-rest view averaged over classes: the TCE paper's multiclass TCE, "
                             "Matsubara et al. 2023, Remark 2"),
}
#: Binary metric names without one multiclass counterpart: the error names what to write instead.
MULTICLASS_ALTERNATIVES = {
    "mce": "top_label_mce (the largest class-weighted top-label deviation over bins, Gupta & Ramdas 2022)",
    "ace": "confidence_ece with --binning equal_mass (ACE is ECE on equal-mass bins)",
    "rmsce": "confidence_ece or top_label_ece (multiclass ECEs use the L1 norm here)",
}


def gate_metric(key: str, is_binary: bool) -> str:
    """The metric a CI gate on ``key`` checks for binary or multiclass data.

    On multiclass data a binary name with one established multiclass counterpart is mapped to it
    (:data:`MULTICLASS_GATES`: ``ece`` -> ``confidence_ece``, ``tce`` -> ``classwise_tce``); a binary name without
    one raises :class:`calibviz.InputError` naming the metric to write instead.

    Examples
    --------
    >>> gate_metric("ece", False), gate_metric("ece", True), gate_metric("top_label_ece", False)
    ('confidence_ece', 'ece', 'top_label_ece')
    """
    from .panel import BINARY_METRICS, MULTICLASS_METRICS

    own, kind = (BINARY_METRICS, "binary") if is_binary else (MULTICLASS_METRICS, "multiclass")
    if key in own:
        return key
    if not is_binary and key in MULTICLASS_GATES:
        return MULTICLASS_GATES[key][0]
    if not is_binary and key in MULTICLASS_ALTERNATIVES:
        raise InputError(f"{key} is a binary metric and has no single multiclass counterpart; for multiclass data "
                         f"write {MULTICLASS_ALTERNATIVES[key]}.")
    raise InputError(f"{key} does not apply to {kind} data; choose from {', '.join(own)}.")


def _config(args):
    from .panel import PanelConfig

    if not 0 < args.alpha < 0.5:
        raise InputError(f"--alpha must lie strictly between 0 and 0.5 (a significance level, e.g. 0.05), got "
                         f"{args.alpha:g}.")
    if args.bins < 1:
        raise InputError(f"--bins must be a positive integer, got {args.bins}.")
    if args.ci < 0:
        raise InputError(f"--ci must be 0 (no intervals) or a positive number of resamples, got {args.ci}.")
    for flag, v in (("--n-min", args.n_min), ("--n-max", args.n_max)):
        if v is not None and v < 1:
            raise InputError(f"{flag} must be a positive number of predictions, got {v}.")
    if args.n_min and args.n_max and args.n_min > args.n_max:
        raise InputError(f"--n-min ({args.n_min}) must not exceed --n-max ({args.n_max}).")
    return PanelConfig(binning=args.binning, n_bins=args.bins, alpha=args.alpha, n_min=args.n_min, n_max=args.n_max)


def _metric_list(args):
    if args.metrics is None:
        return None
    names = [m for m in args.metrics.split(",") if m.strip()]
    if not names:
        raise InputError("--metrics is empty; give metric names separated by commas (calibviz metrics --list), or "
                         "drop --metrics for the default panel.")
    return names


def _list_metrics() -> int:
    from .panel import BINARY_METRICS, MULTICLASS_METRICS

    for kind, registry in (("binary", BINARY_METRICS), ("multiclass", MULTICLASS_METRICS)):
        print(f"{kind} metrics:")
        for key, spec in registry.items():
            print(f"  {key:22s} {spec.label}: {spec.description}")
    return 0


def _json_number(v):
    return None if v is None or not np.isfinite(v) else float(v)


def _check_companions(args) -> None:
    """Options that only act with another one are refused without it (they were ignored in silence)."""
    if getattr(args, "database", None) and not args.engine:
        raise InputError("--database is the DuckDB database a query runs on: add --engine duckdb (or spark), or "
                         "drop --database.")


def _cmd_metrics(args) -> int:
    if args.list:
        return _list_metrics()
    if not args.file:
        raise InputError("FILE is missing: give a predictions file or a demo name, e.g. calibviz metrics "
                         "hospital_readmission.")
    _check_companions(args)
    if args.cross_fit is not None and not args.recalibrate:
        raise InputError("--cross-fit sets the folds of --recalibrate; add --recalibrate METHOD or drop --cross-fit.")
    thresholds = [parse_threshold(t) for t in args.fail_above]
    p_thresholds = [parse_threshold(t, "--fail-p-below") for t in args.fail_p_below]
    from .panel import has_calibration_test

    for key, level in p_thresholds:
        if not 0 < level < 1:
            raise InputError(f"--fail-p-below {key}={level:g}: the p-value threshold must lie in (0, 1), e.g. 0.01.")
        if not has_calibration_test(MULTICLASS_GATES.get(key, (key,))[0]) and not has_calibration_test(key):
            raise InputError(f"--fail-p-below {key}: {key} has no test against a calibrated model (it does not "
                             "measure miscalibration); gate it with --fail-above, or gate a calibration metric such "
                             "as ece.")
    if p_thresholds and args.reference is not None and args.reference < 1:
        raise InputError("--fail-p-below needs the calibrated-model reference: drop --reference 0 (or give "
                         "--reference 200).")
    from .panel import p_value_from_redraws, redraws_needed, too_few_redraws

    for key, level in p_thresholds:  # R redraws give p >= 1/(R+1): a gate below that could never fire
        gated = MULTICLASS_GATES.get(key, (key,))[0]
        # (without --reference the redraws are raised to what the gates need: _redraws)
        if (args.reference is not None and (p_value_from_redraws(key) or p_value_from_redraws(gated))
                and too_few_redraws(args.reference, level)):
            raise InputError(f"--fail-p-below {key}={level:g} can never fire with --reference {args.reference}: "
                             f"{args.reference} label redraws give p-values of {1 / (args.reference + 1):.2g} at "
                             f"least; give --reference {redraws_needed(level)} or more.")
    if args.reference is not None and args.reference < 0:
        raise InputError(f"--reference must be a non-negative number of resamples, got {args.reference}.")
    cfg = _config(args)
    requested = _metric_list(args)
    if requested is not None:
        from .panel import metric_key

        requested = [metric_key(m) for m in requested]  # unknown names fail before the file is read
    bar = _progress(args)
    with bar:
        with bar.step(f"reading {_printable(args.file)}"):
            models = _scan(args) if args.engine else _load(args.file, **_mapping_kwargs(args))
        if not args.engine:  # a scan's notes are complete after its first pass (one class among the labels)
            _print_notes({n: m.notes for n, m in models.items()})
        if args.recalibrate:
            if args.engine or thresholds or p_thresholds:
                raise InputError("--recalibrate cannot be combined with --engine, --fail-above or --fail-p-below.")
            return _metrics_recalibrated(args, models, cfg, requested, bar)
        records, gate_keys = _panel_records(args, models, cfg, requested, thresholds + p_thresholds, bar)
        if args.engine:
            _print_notes({n: m.notes for n, m in models.items()})
    return _report_metrics(args, records, thresholds, p_thresholds, gate_keys)


def _redraws(args, keys=None, alpha: float = 0.05) -> int:
    """``--reference``, or by default 200 raised to what the tests shown together need
    (:func:`calibviz.panel.redraws_for`: a value above every redraw must reach alpha / tests) and to what the
    ``--fail-p-below`` gates need (a gate at P needs 1/P - 1 redraws)."""
    if args.reference is not None:
        return args.reference
    from .panel import redraws_for, redraws_needed

    gates = [parse_threshold(t, "--fail-p-below")[1] for t in getattr(args, "fail_p_below", None) or ()]
    return max([redraws_for(keys, alpha)] + [redraws_needed(level) for level in gates if 0 < level < 1])


def _panel_records(args, models, cfg, requested, gates, bar) -> tuple[list, dict]:
    """The metric records of every model, and ``{(model, gate key): key computed for that model}``."""
    from .panel import metric_panel, resolve_metrics

    records, gate_keys = [], {}
    for name, p in models.items():
        if args.engine:  # the rows' checks first (the pass every result needs): a label outside the classes, not
            p.n  # noqa: B018 - "none of the metrics applies to binary data" (a review)
        keys, _ = resolve_metrics(requested, p.is_binary)
        for gate, _ in gates:
            gate_keys[(name, gate)] = gate_metric(gate, p.is_binary)
        own = tuple(dict.fromkeys(gate_keys[(name, g)] for g, _ in gates))
        keys = keys + tuple(k for k in own if k not in keys)
        n_ref = _redraws(args, keys, cfg.alpha)
        what = f"model {_printable(name)}: {len(keys)} metrics" + (
            f", {args.ci} bootstrap resamples" if args.ci else "") + (
            f", {n_ref} label redraws" if n_ref else "")
        with bar.step(what) as progress:
            if args.engine:  # a scan: values computed where the data live (cv.scan)
                panel = p.metrics(keys, config=cfg, n_reference=n_ref, random_state=args.seed,
                                  n_resamples=args.ci, progress=progress)
            else:
                panel = metric_panel(p.y, p.y_prob if p.is_binary else p.probs, metrics=keys, config=cfg,
                                     sample_weight=p.weights, n_resamples=args.ci, random_state=args.seed,
                                     n_reference=n_ref, progress=progress)
        for r in panel.itertuples():
            # an infinite value is a value (Hosmer-Lemeshow of groups at 0 or 1 that their outcomes contradict):
            # kept for the gates and the table ("inf"), null only in JSON, which has no infinity
            value = None if r.value is None or np.isnan(r.value) else float(r.value)
            records.append({"model": name, "metric": r.metric, "label": r.label, "value": value,
                            "low": _json_number(r.low), "high": _json_number(r.high),
                            "null_low": _json_number(r.null_low), "null_high": _json_number(r.null_high),
                            "p_value": _json_number(r.p_value), "p_adjusted": _json_number(r.p_adjusted),
                            "n_redraws": int(r.n_redraws),
                            "verdict": r.verdict, "unit": r.unit,
                            "reading": r.reading + (f" {r.note}" if r.note else "")})
    for gate in dict.fromkeys(g for g, _ in gates):
        mapped = sorted({gate_keys[(m, gate)] for m in models} - {gate})
        for key in mapped:  # said once per gate: the JSON/CSV on stdout stay clean
            print(f"calibviz: note: {gate} is a binary metric; on multiclass data the gate uses {key} "
                  f"({MULTICLASS_GATES[gate][1]}); write {key} to say so.", file=sys.stderr)
    return records, gate_keys


def _report_metrics(args, records, thresholds, p_thresholds, gate_keys) -> int:
    from .panel import format_interval, format_value, p_value_words

    import pandas as pd

    known = {(r["model"], r["metric"]) for r in records}
    for option, key in [("--fail-above", k) for k, _ in thresholds] + [("--fail-p-below", k) for k, _ in p_thresholds]:
        if not any((m, gate_keys[(m, g)]) in known for (m, g) in gate_keys if g == key):
            raise InputError(f"{option} {key}: this metric does not apply to the data in {args.file}.")
    if args.format == "json":
        print(json.dumps([{**r, "value": _json_number(r["value"])} for r in records], indent=2, ensure_ascii=False))
    elif args.format == "csv":
        from .io.export import to_csv

        sys.stdout.write(to_csv(pd.DataFrame(records, columns=list(JSON_FIELDS))))
    else:
        _print_table(records, args.ci, format_value, format_interval)
    failures = [f"{r['label']} of model {r['model']} = {_shown_value(r['value'], r['unit'], format_value)} "
                f"exceeds {t:g}"
                for key, t in thresholds for r in records
                if r["metric"] == gate_keys[(r["model"], key)] and r["value"] is not None and r["value"] > t]
    p_checks = [(r, t) for key, t in p_thresholds for r in records
                if r["metric"] == gate_keys[(r["model"], key)] and r["p_value"] is not None]
    p_failures = [f"{r['label']} of model {r['model']}: its own test against a calibrated model with the same "
                  f"predictions gives {p_value_words(r['p_value'], r['n_redraws'])} <= {t:g} (a gate reads the "
                  "gated metric's own p-value, not the panel's adjusted one)"
                  for r, t in p_checks if r["p_value"] <= t]
    failures += p_failures
    # a gate cannot pass on a value that is not there (a metric undefined on these predictions): a CI gate that
    # let every such model through would pass exactly the models it cannot judge
    gated = {(m, metric, "value") for key, _ in thresholds for (m, g), metric in gate_keys.items() if g == key}
    gated |= {(m, metric, "p_value") for key, _ in p_thresholds for (m, g), metric in gate_keys.items() if g == key}
    where = " on a scan (no calibrated-model reference of this metric there yet)" if args.engine else ""
    unchecked = []
    for r in records:
        missing = {which for which in ("value", "p_value") if (r["model"], r["metric"], which) in gated
                   and r[which] is None}
        if missing and r["value"] is None:
            unchecked.append(f"{r['label']} of model {r['model']} is undefined: {r['reading']}")
        elif missing:
            unchecked.append(f"{r['label']} of model {r['model']} has no p-value{where}; gate its value with "
                             "--fail-above")
    for f in failures:
        print(f"calibviz: threshold exceeded: {_printable(f)}", file=sys.stderr)
    if p_failures and len(p_checks) > 1:
        print(f"calibviz: note: {_several_p_gates_note([t for _, t in p_checks])}", file=sys.stderr)
    for f in unchecked:
        print(f"calibviz: threshold not met (no value to check): {_printable(f)}", file=sys.stderr)
    return 1 if failures or unchecked else 0


def _several_p_gates_note(levels: list[float]) -> str:
    """What several ``--fail-p-below`` checks (their ``levels``) mean together.

    Each check holds its own level, but the command fails when any of them fires: on a calibrated model that
    happens with a probability up to the sum of their levels (Bonferroni's bound; the gated tests read the same
    labels and are strongly dependent, so it is often less). The gates stay what the user wrote (a gate names
    its metric and level before the data are seen); the note says how to keep the whole command at one level.
    """
    total = min(sum(levels), 1.0)
    return (f"{len(levels)} --fail-p-below checks ran (metrics x models); the command fails when any fires, so a "
            f"calibrated model fails one of them with a probability of up to {total:.2g} (the sum of their levels). "
            f"To keep the whole command at a level P, give each check P / {len(levels)} "
            f"(e.g. {max(levels):g} / {len(levels)} = {max(levels) / len(levels):.2g}).")


def _ends(low, high) -> tuple[float, float]:
    """A record's interval ends as floats: JSON has no infinity, so a one-sided bound is stored with its open end
    null (MCE's "at most"); both null is no interval."""
    if low is None and high is None:
        return np.nan, np.nan
    return (-np.inf if low is None else low), (np.inf if high is None else high)


def _shown_value(value, unit: str, format_value) -> str:
    """A record's value as the table and the gates' messages show it: an infinite one as 'inf' (not 'n/a')."""
    if value is not None and np.isinf(value):
        return "inf" if value > 0 else "-inf"
    return format_value(value, unit)


def _print_table(records, n_resamples, format_value, format_interval) -> None:
    from .panel import format_adjusted_p, format_p_value

    head = ("model", "metric", "value", "interval" if n_resamples else "", "calibrated model", "p", "p adj.",
            "reading")
    rows = [(_printable(r["model"]), r["label"], _shown_value(r["value"], r["unit"], format_value),
             format_interval(*_ends(r["low"], r["high"]), r["unit"]),
             format_interval(r["null_low"], r["null_high"], r["unit"]),
             "" if r["p_value"] is None else format_p_value(r["p_value"], r["n_redraws"]),
             "" if r["p_adjusted"] is None else format_adjusted_p(r["p_adjusted"], r["p_value"], r["n_redraws"]),
             r["reading"])
            for r in records]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    for row in (head, *rows):
        print("  ".join(str(x).ljust(w) for x, w in zip(row[:-1], widths)) + "  " + row[-1])


def _cmd_report(args) -> int:
    from .report import metric_key, write_report

    _check_companions(args)
    cfg = _config(args)
    metrics = _metric_list(args)
    if metrics is not None:
        metrics = [metric_key(m) for m in metrics]
    out = Path(args.output)
    if not out.parent.exists():
        raise InputError(f"cannot write {out}: the folder {out.parent} does not exist.")
    load = _mapping_kwargs(args)
    if args.engine:
        return _report_scan(args, cfg, metrics, out)
    bar = _progress(args)
    with bar:
        with bar.step(f"reading {_printable(args.file)}"):
            models = _load(args.file, **load)
        _print_notes({n: m.notes for n, m in models.items()})
        options = {k: v for k, v in load.items() if v not in (None, False)}
        with bar.step(f"building the report of {len(models)} model{'s' if len(models) > 1 else ''}") as progress:
            write_report(models, out, config=cfg, metrics=metrics, n_resamples=args.ci, random_state=args.seed,
                         n_reference=_redraws(args, metrics, cfg.alpha), title=args.title, source=args.file, load_options=options,
                         recalibration=args.recalibrate or None, progress=progress)
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB)", file=sys.stderr)
    return 0


def _report_scan(args, cfg, metrics, out: Path) -> int:
    """``calibviz report FILE --engine E``: the report of a streamed source (calibviz.report_scan); no row loaded."""
    from .report import _write_page
    from .report_scan import build_scan_report

    if args.recalibrate:
        raise InputError("--recalibrate cannot be combined with --engine (recalibration maps are fitted on rows).")
    if args.reference is not None and args.reference < 0:
        raise InputError(f"--reference must be a non-negative number of resamples, got {args.reference}.")
    options = {k: v for k, v in _mapping_kwargs(args).items() if k in ("label", "probs", "positive", "weight", "model")}
    bar = _progress(args)
    with bar:
        with bar.step(f"opening {_printable(args.file)} ({args.engine})"):
            models = _scan(args)
        with bar.step(f"building the report of {len(models)} model{'s' if len(models) > 1 else ''} from "
                      f"{args.engine} aggregations") as progress:
            page = build_scan_report(models, config=cfg, metrics=metrics, n_resamples=args.ci, random_state=args.seed,
                                     n_reference=_redraws(args, metrics, cfg.alpha), title=args.title,
                                     source=args.file, load_options=options, engine=args.engine, database=args.database,
                                     output=str(out), progress=progress)
        _print_notes({n: m.notes for n, m in models.items()})  # after the first passes (see _cmd_metrics)
        _write_page(page, out)
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB)", file=sys.stderr)
    return 0


def _cmd_app(args) -> int:
    root = Path(__file__).resolve().parents[1]
    script = root / "app.py"
    if not script.exists():
        raise InputError(f"the dashboard script {script} is missing; run from a source checkout (pip install -e .).")
    env = dict(os.environ)
    if args.file:
        _load(args.file)  # validate first: a bad file fails here with one line, not inside the app
        env[APP_ENV] = str(Path(args.file).resolve()) if Path(args.file).exists() else args.file
    if not 1 <= args.port <= 65535:
        raise InputError(f"--port {args.port} is not a TCP port; use one from 1 to 65535 (default 8501).")
    try:  # Streamlit would print a traceback for an address it cannot bind
        socket.getaddrinfo(args.address, args.port)
    except (socket.gaierror, UnicodeError):
        raise InputError(f"--address {args.address!r} is not a valid address or host name; use 127.0.0.1 (this "
                         "machine only) or 0.0.0.0 (every network interface).") from None
    cmd = [sys.executable, "-m", "streamlit", "run", str(script), f"--server.port={args.port}",
           f"--server.address={args.address}"]
    print(f"calibviz dashboard on http://{args.address}:{args.port}", file=sys.stderr)
    return subprocess.call(cmd, cwd=root, env=env)


# --------------------------------------------------------------------------- recalibration (#15)

RECALIBRATION_METHODS = ("platt", "isotonic", "beta", "temperature", "histogram_binning", "venn_abers")
#: Fields of every record of ``calibviz metrics --recalibrate METHOD --format json`` (and the CSV columns).
RECALIBRATION_FIELDS = ("model", "method", "metric", "label", "before", "before_low", "before_high",
                        "before_null_low", "before_null_high", "after", "after_low", "after_high", "after_null_low",
                        "after_null_high", "after_p_value", "after_n_redraws", "diff", "diff_low", "diff_high",
                        "calibrated_diff", "improved", "worse", "unit", "scheme", "reading")


def _add_recalibrate_parser(sub) -> None:
    rec = sub.add_parser(
        "recalibrate", help="fit a recalibration map, write out-of-fold recalibrated predictions (and the map)",
        description="Fit a recalibration map on FILE and write FILE's rows with the recalibrated predictions "
                    "appended. Each row's new prediction comes from a map fitted on the other folds (cross-fitting), "
                    "or, with --split-column, from the map fitted on the calibration rows (test rows only). The map "
                    "fitted on all (calibration) rows is what --map writes, as JSON.",
        epilog="examples:\n  calibviz recalibrate preds.csv --method isotonic -o recalibrated.parquet\n"
               "  calibviz recalibrate hospital_readmission --method platt -o out.csv --map platt.json\n"
               "  calibviz recalibrate cifar10_resnet50 --method temperature -o out.parquet --cross-fit 10\n"
               "  calibviz recalibrate preds.csv --method histogram_binning --option points_per_bin=100 -o out.csv\n"
               "  calibviz recalibrate preds.csv --method beta --split-column split -o out.csv  # split: calibration/test\n\n"
               "New columns: <method>__p (binary) or <method>:p_<class> (multiclass), <method>__fold (the fold\n"
               "whose map predicted the row; -1 = calibration row of a user split), and for venn_abers on binary\n"
               "data the interval <method>__p0, <method>__p1. Apply the map later with\n"
               "calibviz.recalibration.from_dict(json.load(open('map.json'))).predict(y_prob).\n"
               "Exit status: 0 ok, 2 bad input.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    rec.add_argument("file", help="CSV, TSV, Parquet or Excel file (or a demo name)")
    rec.add_argument("--method", required=True, choices=RECALIBRATION_METHODS, help="the recalibration map")
    rec.add_argument("-o", "--output", required=True, metavar="OUT",
                     help="where to write the rows with the new columns (.parquet, .csv or .tsv)")
    rec.add_argument("--map", dest="map_file", metavar="MAP.json", help="also write the fitted map as JSON")
    rec.add_argument("--cross-fit", dest="cross_fit", type=int, default=None, metavar="K",
                     help="folds of the cross-fitting (default: 5)")
    rec.add_argument("--split-column", dest="split_column", metavar="COL",
                     help="a column marking calibration rows (true/1/'calibration') and test rows "
                          "(false/0/'test'): fit on the first, predict the second (instead of cross-fitting)")
    rec.add_argument("--groups", metavar="COL", help="a column whose groups never straddle folds (e.g. patient id)")
    rec.add_argument("--multiclass", choices=("top_label", "confidence", "classwise"), default=None,
                     help="M2B reduction of binary methods on multiclass data (default: top_label)")
    rec.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                     help="a method option, e.g. targets=platt, scaling=vector, points_per_bin=100 (repeatable)")
    rec.add_argument("--model", dest="pick_model", metavar="NAME",
                     help="with several models in FILE: which one (default: every model)")
    rec.add_argument("--seed", type=int, default=0, help="seed of the fold assignment (default: 0)")
    _add_quiet(rec)
    _add_mapping(rec)


def _option_value(text: str):
    """'100' -> 100, '0.5' -> 0.5, 'true' -> True, 'none' -> None, else the text."""
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text.strip()


def _recalibration_options(args) -> dict:
    options = {}
    for item in args.option:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError(f"--option expects KEY=VALUE (e.g. points_per_bin=100), got {item!r}.")
        options[key.strip()] = _option_value(value)
    if args.multiclass is not None:
        options["multiclass"] = args.multiclass
    return options


def _raw_frame(args):
    """The table FILE holds (for the output: same columns, new ones appended)."""
    from . import demo
    from .io import read_table

    if args.file in demo.demo_datasets() and not Path(args.file).exists():
        return read_table(demo.demo_path(args.file)).frame
    kw = {k: getattr(args, k) for k in ("delimiter", "encoding", "sheet", "decimal") if getattr(args, k, None) is not None}
    return read_table(args.file, **kw).frame


def _write_frame(df, path: Path) -> None:
    from .io.export import spreadsheet_safe

    suffix = path.suffix.lower()
    try:
        if suffix == ".parquet":
            df.to_parquet(path, index=False)
        elif suffix in (".csv", ".tsv", ".txt"):
            spreadsheet_safe(df).to_csv(path, index=False, sep="\t" if suffix == ".tsv" else ",")
        else:
            raise InputError(f"cannot write {path.name}: use a .parquet, .csv or .tsv output file.")
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror}; choose a writable path with -o.") from None


def _cmd_recalibrate(args) -> int:
    from .recalibration import cross_fit, get_recalibrator, recalibrated_frame

    if args.drop_invalid:
        raise InputError("--drop-invalid is not available with recalibrate: the output keeps every row of the file "
                         "with its recalibrated probabilities; drop the invalid rows from the file first.")
    out = Path(args.output)
    if out.suffix.lower() not in (".parquet", ".csv", ".tsv", ".txt"):
        raise InputError(f"cannot write {out.name}: use a .parquet, .csv or .tsv output file.")
    for target in (out, Path(args.map_file) if args.map_file else None):
        if target is not None and not target.parent.exists():
            raise InputError(f"cannot write {target}: the folder {target.parent} does not exist.")
        if target is not None and Path(args.file).exists() and target.resolve() == Path(args.file).resolve():
            raise InputError(f"{target} is the input file; write the recalibrated predictions to another file "
                             "(-o), so the original stays.")
    if args.split_column and args.cross_fit is not None:  # it was ignored in silence
        raise InputError("--cross-fit and --split-column are two ways to choose the rows each map is fitted on; "
                         "give one of them.")
    args.cross_fit = 5 if args.cross_fit is None else args.cross_fit
    if args.cross_fit < 2 and not args.split_column:
        raise InputError(f"--cross-fit must be at least 2 folds, got {args.cross_fit}.")
    options = _recalibration_options(args)
    get_recalibrator(args.method, **options)  # bad options fail before the file is read
    load = _mapping_kwargs(args)
    bar = _progress(args)
    with bar.step(f"reading {_printable(args.file)}"):
        models = _load(args.file, **load)
        frame = _raw_frame(args)
    if args.pick_model is not None:
        if args.pick_model not in models:
            raise InputError(f"--model {args.pick_model!r} is not in {args.file}; its models are {', '.join(models)}.")
        models = {args.pick_model: models[args.pick_model]}
    from .io import detect_mapping

    mapping_kw = {k: load[k] for k in ("label", "weight", "model", "positive") if k in load}
    if "probs" in load:
        mapping_kw["probs"] = load["probs"]
    try:
        model_column = detect_mapping(frame, **mapping_kw).model
    except InputError:
        model_column = None
    long_format = model_column is not None and model_column in frame.columns
    maps, parts = {}, []
    for name, p in models.items():
        rows = frame
        if long_format:
            rows = frame[frame[model_column].astype(str) == str(name)].reset_index(drop=True)
        for col in (args.split_column, args.groups):
            if col is not None and col not in rows.columns:
                raise InputError(f"column {col!r} is not in {args.file}; its columns are {', '.join(map(str, rows.columns))}.")
        if len(rows) != p.n:
            raise InputError(f"{args.file} has {len(rows):,} rows for model {name!r} but {p.n:,} predictions were "
                             "loaded (rows were left out when loading); recalibrate a file without such rows.")
        fitting = (f"model {_printable(name)}: {args.method}, "
                   + ("fit on the calibration rows" if args.split_column else f"{args.cross_fit}-fold cross-fit"))
        with bar.step(fitting):
            cf = cross_fit(args.method, p.y, p.y_prob if p.is_binary else p.probs, n_splits=args.cross_fit,
                           random_state=args.seed, sample_weight=p.weights,
                           groups=None if args.groups is None else rows[args.groups].to_numpy(),
                           split=None if args.split_column is None else rows[args.split_column], **options)
        parts.append(recalibrated_frame(rows, p, cf, prefix_model=len(models) > 1 and not long_format))
        maps[name] = cf.final.to_dict()
        _print_recalibration_summary(name, p, cf)
        _print_notes({name: cf.warnings()})
    import pandas as pd

    if long_format:
        result = pd.concat(parts, ignore_index=True)
    else:
        result = parts[0]
        for extra in parts[1:]:
            result = pd.concat([result, extra[[c for c in extra.columns if c not in result.columns]]], axis=1)
    _write_frame(result, out)
    print(f"wrote {out} ({len(result):,} rows, {len(result.columns) - len(frame.columns)} new columns)",
          file=sys.stderr)
    if args.map_file:
        payload = next(iter(maps.values())) if len(maps) == 1 else {"format": "calibviz.recalibration.models",
                                                                   "models": maps}
        try:
            Path(args.map_file).write_text(json.dumps(payload, indent=1), encoding="utf-8")
        except OSError as exc:
            raise InputError(f"cannot write {args.map_file}: {exc.strerror}.") from None
        print(f"wrote {args.map_file} (the map fitted on all calibration rows)", file=sys.stderr)
    return 0


def _print_recalibration_summary(name, p, cf) -> None:
    from .recalibration import loss_gained

    rows = cf.evaluated
    before = p.y_prob if p.is_binary else p.probs
    r = loss_gained(p.y[rows], before[rows], cf.y_prob[rows], score="brier",
                    sample_weight=None if p.weights is None else p.weights[rows], n_resamples=0)
    used = rows if p.weights is None else rows & (p.weights > 0)  # a row of weight 0 is absent
    print(f"model {_printable(name)}: {cf.method}, {cf.scheme}: Brier score {r['before']:.4f} -> {r['after']:.4f} "
          f"on {int(used.sum()):,} out-of-fold rows; {cf.final.describe()}", file=sys.stderr)


def _metrics_recalibrated(args, models, cfg, requested, bar) -> int:
    import pandas as pd

    from .panel import format_difference, format_interval, format_value, resolve_metrics
    from .recalibration import cross_fit, recalibration_table

    args.cross_fit = 5 if args.cross_fit is None else args.cross_fit
    if args.cross_fit < 2:
        raise InputError(f"--cross-fit must be at least 2 folds, got {args.cross_fit}.")
    records = []
    for name, p in models.items():
        y_prob = p.y_prob if p.is_binary else p.probs
        keys, _ = resolve_metrics(requested, p.is_binary)
        with bar.step(f"model {_printable(name)}: {args.recalibrate}, {args.cross_fit}-fold cross-fit"):
            cf = cross_fit(args.recalibrate, p.y, y_prob, n_splits=args.cross_fit, random_state=args.seed,
                           sample_weight=p.weights)
        _print_notes({name: cf.warnings()})
        with bar.step(f"model {_printable(name)}: metrics before and after") as progress:
            table = recalibration_table(p.y, y_prob, {args.recalibrate: cf}, metrics=keys, config=cfg,
                                        sample_weight=p.weights, n_resamples=args.ci,
                                        n_reference=_redraws(args, keys, cfg.alpha),
                                        # at 1 - alpha, as the Recalibrate page: "improved" comes from this interval
                                        confidence=1.0 - cfg.alpha, random_state=args.seed, progress=progress)
        for r in table.to_dict("records"):
            rec = {k: r.get(k) for k in RECALIBRATION_FIELDS if k != "model"}
            # NaN is no value; an infinite one is (Hosmer-Lemeshow), kept for the table and the CSV as in metrics
            rec = {"model": name, **{k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in rec.items()}}
            records.append(rec)
    if args.format == "json":
        print(json.dumps([{k: (_json_number(v) if isinstance(v, float) else v) for k, v in r.items()}
                          for r in records], indent=2, ensure_ascii=False))
    elif args.format == "csv":
        from .io.export import to_csv

        sys.stdout.write(to_csv(pd.DataFrame(records, columns=list(RECALIBRATION_FIELDS))))
    else:
        head = ("model", "method", "metric", "before", "after", "before - after",
                f"{100 * (1 - cfg.alpha):g}% interval", "calibrated model after")
        rows = [(r["model"], r["method"], r["label"], _shown_value(r["before"], r["unit"], format_value),
                 _shown_value(r["after"], r["unit"], format_value), format_difference(r["diff"], r["unit"]),
                 format_interval(r["diff_low"], r["diff_high"], r["unit"], difference=True),
                 format_interval(r["after_null_low"], r["after_null_high"], r["unit"])) for r in records]
        widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
        for row in (head, *rows):
            print(_printable("  ".join(str(x).ljust(w) for x, w in zip(row, widths))))
        print(f"(after = out-of-fold predictions, {records[0]['scheme'] if records else ''}; before - after > 0 "
              "is an improvement for every error and score)")
    return 0


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    handler = {"demos": _cmd_demos, "info": _cmd_info, "metrics": _cmd_metrics, "report": _cmd_report,
               "app": _cmd_app, "recalibrate": _cmd_recalibrate}[args.command]
    try:
        with warnings.catch_warnings():
            if not args.debug:  # a library warning reads as one line, not as a source location and its code
                warnings.showwarning = _show_warning
            return handler(args)
    except InputError as exc:
        print(f"calibviz: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # the reader of the output left (calibviz metrics ... | head): the rest goes nowhere, quietly, as in any
        # Unix tool; stdout points at /dev/null so that the interpreter's final flush does not fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except MemoryError:
        print("calibviz: error: not enough memory for this input; use a smaller file or sample its rows.",
              file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - the last line of defence: never a traceback unless asked for
        if args.debug:
            raise
        print(f"calibviz: internal error: {type(exc).__name__}: {_one_line(exc)} (a bug in calibviz, not in your "
              "data; rerun with --debug for the traceback)", file=sys.stderr)
        return 3


def run() -> int:
    """The console entry point (``calibviz``, ``python -m calibviz``): :func:`main`, then a quick exit.

    At shutdown Python's cyclic garbage collector walks every object of the
    imported libraries (pandas, numpy, DuckDB): ~0.1 s here, a third of a
    10^7-row DuckDB pass. ``gc.freeze`` takes them out of its reach first.
    atexit handlers and ``weakref.finalize`` callbacks still run, but not the
    ``__del__`` of objects alive at exit: calibviz's DuckDB connection is
    closed first (its spill files go with it). Not in :func:`main`, which
    tests and other Python code call in long-lived processes.
    """
    status = main()
    engine = sys.modules.get("calibviz.scan.duckdb_engine")
    if engine is not None:
        engine.close()
    gc.freeze()
    return status


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """``warnings.showwarning`` of the command line: ``calibviz: warning: <message>`` on stderr."""
    print(f"calibviz: warning: {_one_line(message)}", file=sys.stderr)


def _delimiter(text: str) -> str:
    """--delimiter as typed: a tab as the two characters backslash and t (what messages print, "pass --delimiter
    '\\t'", and a shell passes on) or the word tab; anything else as it is.

    >>> _delimiter(chr(92) + "t") == _delimiter("tab") == chr(9), _delimiter(";")
    (True, ';')
    """
    return "\t" if text in ("\\t", "tab", "TAB") else text


#: The library's keyword arguments that messages name as fixes, and the options that give them here.
_OPTIONS = {"probs": "--probs", "positive": "--positive", "label": "--label", "weight": "--weight",
            "model": "--model-column", "delimiter": "--delimiter", "encoding": "--encoding", "decimal": "--decimal",
            "sheet": "--sheet"}
_KEYWORD = re.compile(r"\b(pass |with |or )(" + "|".join(_OPTIONS) + r"|renormalize|logits|drop_invalid)="
                      r"(?![\[{(])(<[^>]*>|'[^']*'|\S*?)"
                      r"(?=[\s,;)]|\.(?:\s|$)|$)")


def _as_options(text: str) -> str:
    """A library message's fixes in the command line's words: 'pass probs=<column>' -> 'pass --probs <column>'
    (messages named Python arguments, an audit; a dict or list value, which no option takes, stays as written).

    >>> _as_options("cannot tell the positive class; pass positive=<label> (the class ...).")
    'cannot tell the positive class; pass --positive <label> (the class ...).'
    >>> _as_options("it looks delimited by ';': pass delimiter=';'."), _as_options("or pass renormalize=True.")
    ("it looks delimited by ';': pass --delimiter ';'.", 'or pass --renormalize.')
    >>> _as_options("Choose with probs='p_a' for (a), or probs={'a': ['p_a']} for (b).")
    "Choose with --probs 'p_a' for (a), or probs={'a': ['p_a']} for (b)."
    """
    def option(m):
        if m.group(2) in ("renormalize", "logits", "drop_invalid"):  # flags
            return f"{m.group(1)}--{m.group(2).replace('_', '-')}"
        value = m.group(3)
        return f"{m.group(1)}{_OPTIONS[m.group(2)]}" + (f" {value}" if value else "")

    return _KEYWORD.sub(option, text)


def _one_line(exc: BaseException) -> str:
    """The message of ``exc`` on one line, without terminal control characters, its fixes as options."""
    return _printable(_as_options(" ".join(str(exc).split())))


def _printable(text) -> str:
    """``text`` with control characters (escape sequences, carriage returns, ...) shown as '?'.

    Names come from the user's file: an escape sequence in a model name must not retitle or clear the terminal.

    Examples
    --------
    >>> _printable("model\x1b]0;pwned\x07")
    'model?]0;pwned?'
    """
    return "".join(ch if ch.isprintable() else "?" for ch in str(text))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
