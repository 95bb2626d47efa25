"""The ``calibviz`` command line.

Bad input prints one line on stderr and exits 2 (never a traceback); success
exits 0. Subcommands::

    calibviz demos                     list the demo datasets
    calibviz info FILE [mapping]       validate a predictions file and summarise it
    calibviz app [FILE]                start the dashboard (on FILE, or on the demo data)
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from .errors import InputError

__all__ = ["main", "build_parser"]

APP_ENV = "CALIBVIZ_DATA"


def _add_mapping(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("column mapping (auto-detected when omitted)")
    g.add_argument("--label", help="label column")
    g.add_argument("--probs", nargs="+", metavar="COL", help="probability column(s): one (binary) or one per class")
    g.add_argument("--positive", help="positive class when a single probability column is given")
    g.add_argument("--weight", help="sample-weight column")
    g.add_argument("--model-column", dest="model", help="long-format model column")
    g.add_argument("--logits", action="store_true", help="columns hold logits (sigmoid / softmax applied)")
    g.add_argument("--renormalize", action="store_true", help="divide rows that do not sum to 1 by their sum")
    g.add_argument("--delimiter", help="field separator of delimited text (sniffed by default)")
    g.add_argument("--encoding", help="text encoding (UTF-8 by default)")
    g.add_argument("--sheet", help="Excel sheet (first by default)")


def _mapping_kwargs(args) -> dict:
    keys = ("label", "positive", "weight", "model", "delimiter", "encoding", "sheet")
    kw = {k: getattr(args, k) for k in keys if getattr(args, k, None) is not None}
    if args.probs:
        kw["probs"] = args.probs[0] if len(args.probs) == 1 else args.probs
    kw["logits"] = args.logits
    kw["renormalize"] = args.renormalize
    return kw


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="calibviz", description="Diagnose the calibration of probabilistic classifiers.",
        epilog="examples:\n  calibviz demos\n  calibviz info preds.csv --label y --probs p\n  calibviz app preds.parquet",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"calibviz {__import__('calibviz').__version__}")
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
    app = sub.add_parser("app", help="start the dashboard",
                         description="Start the Streamlit dashboard, on FILE if given, else on the demo data.",
                         epilog="example:\n  calibviz app preds.csv --port 8502",
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    app.add_argument("file", nargs="?", help="predictions file to open")
    app.add_argument("--port", type=int, default=8501)
    app.add_argument("--address", default="127.0.0.1")
    return parser


def _load(file: str, **kw):
    from . import demo
    from .io import load_models

    if file in demo.demo_datasets() and not Path(file).exists():
        return demo.load_demo_models(file)
    return load_models(file, **kw)


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
            print(f"model {r['name']}: {r['rows']:,} rows, {r['kind']} ({r['classes']} classes), "
                  f"accuracy {r['accuracy']:.4f}, mean confidence {r['mean_confidence']:.4f}"
                  + (f", prevalence {r['prevalence']:.4f}, mean prediction {r['mean_prediction']:.4f}"
                     if r["kind"] == "binary" else "") + f", fingerprint {r['fingerprint']}")
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
    cmd = [sys.executable, "-m", "streamlit", "run", str(script), f"--server.port={args.port}",
           f"--server.address={args.address}"]
    print(f"calibviz dashboard on http://{args.address}:{args.port}", file=sys.stderr)
    return subprocess.call(cmd, cwd=root, env=env)


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    handler = {"demos": _cmd_demos, "info": _cmd_info, "app": _cmd_app}[args.command]
    try:
        return handler(args)
    except InputError as exc:
        msg = " ".join(str(exc).split())
        print(f"calibviz: error: {msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
