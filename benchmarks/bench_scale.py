"""Benchmark: prediction logs larger than memory (cv.scan, issue #13).

Run: nice -n 5 python benchmarks/bench_scale.py [--rows 10000000 100000000] [--spark] [--intervals 200] [--keep DIR]
     python benchmarks/bench_scale.py --rows 10000000 100000000 --keep DIR --rounds 7   # the ratios alone

Writes Parquet files of ``rows`` rows (p as float64, y, two features; a second
file with p as float32) with DuckDB in a temporary directory, then times, each
in its own process (wall time, CPU time, peak RSS from ``/usr/bin/time``):

* ``calibviz metrics FILE`` in memory (the path before scans; skipped above 10^7 rows);
* ``calibviz metrics FILE --engine duckdb`` with the binned panel
  (ECE, ACE, MCE, Brier + reliability, log loss) on uniform and on equal-mass bins;
* the same with the full default panel (ECE, ACE, MCE, TCE with PAVA-BC on the bucket grid, smECE, Brier, log loss),
  without and with the calibrated-model reference (200 label redraws, the command's default ``--reference``);
* importing the command line alone (a fixed cost of every process, ~1.7 s of CPU here);
* a hand-written DuckDB query computing only the bucket sums (the floor the issue compares with);
* in one process, after both have read the file once (warm page cache), the sums-only hand query (Arrow
  output) and a binned-panel scan split into its steps (opening the source, the first pass with the log loss of
  confident mistakes, refining and metrics), alternating, medians of 8 (and of the per-round ratios): the ratio
  without the fixed cost of starting Python and importing;
* ``--engine polars`` and, with ``--spark``, ``--engine spark`` (local[2]);
* with ``--intervals B``: the binned and the default panel through ``--engine duckdb --ci B`` (bootstrap
  intervals from a Poisson bootstrap of the bucket sums, :mod:`calibviz.scan.resample`; no pass over the rows),
  with the time the intervals add to the same run without them.

With ``--rounds R`` only the ratio to the hand queries is measured: R rounds alternating the sums-only query,
the query with min and max, the sums-only query after importing pandas, pyarrow and Narwhals (what any command
that returns pandas tables pays before its first result), the three passes an exact binned panel needs written by
hand with no pandas and no Python work (``HAND_PASSES``: the floor of any implementation in Python), and the
binned panel (one row per size: medians, ranges, per-round ratios).

Values of every scan run are compared with the DuckDB run (and with the
in-memory run where it ran). Prints a Markdown table; files are deleted at the end.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BINNED = "ece,ace,mce,brier,brier_reliability,log_loss"
HAND_QUERY = """
import duckdb, sys
con = duckdb.connect(); con.execute("SET enable_progress_bar = false")
con.sql("SELECT floor(p * 65536)::BIGINT AS b, y, count(*), sum(p), sum(p * p){} "
        "FROM read_parquet(?) GROUP BY ALL", params=[sys.argv[1]]).fetchall()
"""
#: the floor with the score range per bucket that exact refinement needs, and the sums alone (the issue's wording)
HAND_MINMAX, HAND_SUMS = HAND_QUERY.format(", min(p), max(p)"), HAND_QUERY.format("")
#: the sums-only query after importing the libraries a scan's results are made with (pandas with pyarrow, and
#: Narwhals, the issue's layer over the engines): the floor of any command that returns pandas tables
HAND_SUMS_IMPORTS = "import pandas, pyarrow, narwhals" + HAND_SUMS
#: The passes an exact binned panel cannot do without, hand-written, with no pandas and no Python work on their
#: results: a sample of rows (the columns' roles), the bucket sums with the log loss of confident mistakes (one
#: CASE per row), and a pass filtered to 14 buckets (the exact scores at ACE's equal-mass cuts). The floor of any
#: implementation of the binned panel in Python, whatever tables it returns.
HAND_PASSES = """
import duckdb, sys
con = duckdb.connect(); con.execute("SET enable_progress_bar = false")
con.sql("SELECT * FROM read_parquet(?) LIMIT 1000", params=[sys.argv[1]]).fetchnumpy()
con.sql("SELECT least(floor(p * 65536), 65535)::BIGINT AS b, y, count(*), sum(p), sum(p * p), "
        "sum(CASE WHEN y = 1 AND p < 1 / 64 THEN -ln(greatest(p, 1e-15)) "
        "WHEN y = 0 AND p >= 63 / 64 THEN -ln(greatest(1 - p, 1e-15)) ELSE 0 END) "
        "FROM read_parquet(?) GROUP BY ALL", params=[sys.argv[1]]).fetchnumpy()
keys = ", ".join(str(4369 * i) for i in range(1, 15))
con.sql(f"SELECT p, y, count(*) FROM read_parquet(?) WHERE floor(p * 65536) IN ({keys}) GROUP BY ALL",
        params=[sys.argv[1]]).fetchnumpy()
"""


def _write(path: Path, rows: int, float32: bool) -> None:
    import duckdb

    p = "least(greatest(u * u, 0), 1)" + ("::FLOAT" if float32 else "")
    duckdb.sql(f"""COPY (SELECT {p} AS p, (v < u * u)::TINYINT AS y, f1 AS age, (f2 * 100)::INTEGER AS tenure
                 FROM (SELECT random() AS u, random() AS v, random() AS f1, random() AS f2 FROM range({rows})))
                 TO '{path}' (FORMAT PARQUET, ROW_GROUP_SIZE 1000000)""")


def _run(cmd: list[str]) -> dict:
    """Wall seconds, CPU seconds and peak RSS (MB) of one process; its stdout."""
    out = subprocess.run(["/usr/bin/time", "-f", "%e %U %S %M", *cmd], capture_output=True, text=True,
                         cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    last = out.stderr.strip().splitlines()[-1].split()
    if out.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{out.stderr[-2000:]}")
    wall, user, sys_, rss = float(last[0]), float(last[1]), float(last[2]), float(last[3]) / 1024
    return {"wall": wall, "cpu": user + sys_, "rss": rss, "stdout": out.stdout}


IN_PROCESS = """
import json, statistics, sys, time
t0 = time.perf_counter()
import calibviz as cv
from calibviz.scan import aggregate
t_import = time.perf_counter() - t0
import duckdb
con = duckdb.connect(); con.execute("SET enable_progress_bar = false")
hand_sql = ("SELECT floor(p * 65536)::BIGINT AS b, y, count(*), sum(p), sum(p * p) "
            "FROM read_parquet(?) GROUP BY ALL")  # the sums alone, as a user would write it (default settings)
keys = ["ece", "ace", "mce", "brier", "brier_reliability", "log_loss"]
runs = {k: [] for k in ("hand", "open", "first", "metrics", "scan", "ratio")}
for _ in range(9):
    t = time.perf_counter(); con.sql(hand_sql, params=[sys.argv[1]]).to_arrow_table()
    runs["hand"].append(time.perf_counter() - t)
    t = time.perf_counter(); s = cv.scan(sys.argv[1]); t1 = time.perf_counter()
    first = s._validate(aggregate.fine_table(s._frame, s._roles, ranges=False))
    s._fine_cache = aggregate.with_tail_losses(first, s._frame, s._roles); t2 = time.perf_counter()
    s.metrics(keys); t3 = time.perf_counter()
    for k, v in zip(("open", "first", "metrics", "scan"), (t1 - t, t2 - t1, t3 - t2, t3 - t)):
        runs[k].append(v)
    runs["ratio"].append(runs["scan"][-1] / runs["hand"][-1])  # alternating rounds see the same machine state
out = {k: statistics.median(v[1:]) for k, v in runs.items()}  # the first round warms the page cache
out["ratio_range"] = [min(runs["ratio"][1:]), max(runs["ratio"][1:])]
out["import"] = t_import
print(json.dumps(out))
"""


def _in_process(path: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", IN_PROCESS, str(path)], capture_output=True, text=True, check=True,
                         cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    return json.loads(out.stdout.strip().splitlines()[-1])


def _metrics(path: Path, *extra: str, reference: int = 0) -> dict:
    cmd = [sys.executable, "-m", "calibviz", "metrics", str(path), "--format", "json", "--reference", str(reference),
           *extra]
    r = _run(cmd)
    r["values"] = {v["metric"]: v["value"] for v in json.loads(r["stdout"])}
    return r


def _max_rel(a: dict, b: dict) -> float:
    keys = [k for k in a if a[k] is not None and b.get(k) is not None]
    return max((abs(a[k] - b[k]) / max(abs(b[k]), 1e-300) for k in keys), default=float("nan"))


def _alternate(path: Path, n: int, rounds: int) -> None:
    """The ratio of the binned panel to the hand queries, alternating the three commands (single runs on this VM
    move by up to 2x; alternating rounds see the same machine state)."""
    import statistics

    runs = {"sums": [], "minmax": [], "imports": [], "passes": [], "scan": []}
    for _ in range(rounds):
        runs["sums"].append(_run([sys.executable, "-c", HAND_SUMS, str(path)]))
        runs["minmax"].append(_run([sys.executable, "-c", HAND_MINMAX, str(path)]))
        runs["imports"].append(_run([sys.executable, "-c", HAND_SUMS_IMPORTS, str(path)]))
        runs["passes"].append(_run([sys.executable, "-c", HAND_PASSES, str(path)]))
        runs["scan"].append(_metrics(path, "--engine", "duckdb", "--metrics", BINNED))
    wall = {k: [r["wall"] for r in v] for k, v in runs.items()}
    med = {k: statistics.median(v) for k, v in wall.items()}
    per_round = [s / h for s, h in zip(wall["scan"], wall["sums"])]
    print(f"| {n:.0e} | {med['sums']:.2f} s ({min(wall['sums']):.2f}-{max(wall['sums']):.2f}) | "
          f"{med['minmax']:.2f} s ({min(wall['minmax']):.2f}-{max(wall['minmax']):.2f}) | "
          f"{med['imports']:.2f} s ({min(wall['imports']):.2f}-{max(wall['imports']):.2f}), "
          f"{med['imports'] / med['sums']:.2f}x | "
          f"{med['passes']:.2f} s ({min(wall['passes']):.2f}-{max(wall['passes']):.2f}), "
          f"{med['passes'] / med['sums']:.2f}x | "
          f"{med['scan']:.2f} s ({min(wall['scan']):.2f}-{max(wall['scan']):.2f}) | "
          f"{med['scan'] / med['sums']:.2f}x (per round {min(per_round):.2f}-{max(per_round):.2f}) | "
          f"{med['scan'] / med['minmax']:.2f}x | {max(r['rss'] for r in runs['scan']):.0f} MB |", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, nargs="+", default=[10_000_000])
    ap.add_argument("--spark", action="store_true", help="also time --engine spark (local[2])")
    ap.add_argument("--keep", help="directory for the Parquet files (default: a temporary one, deleted)")
    ap.add_argument("--rounds", type=int, default=0, metavar="R",
                    help="only the ratio to the hand queries: R rounds alternating the two hand queries and the "
                         "binned panel through `calibviz metrics --engine duckdb` (medians and per-round ratios)")
    ap.add_argument("--intervals", type=int, default=0, metavar="B",
                    help="also time the binned and the default panel with B bootstrap resamples (--ci B)")
    args = ap.parse_args(argv)
    # an installed package runs from compiled bytecode; an editable checkout with PYTHONDONTWRITEBYTECODE set
    # would compile calibviz's sources in every timed process (~0.15 s)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "calibviz")], check=True,
                   stdout=subprocess.DEVNULL)
    tmp = Path(args.keep or tempfile.mkdtemp(prefix="calibviz-scale-"))
    tmp.mkdir(parents=True, exist_ok=True)
    rows_out = []

    def row(n, work, r, ref=None, base=None, note=""):
        ratio = f"{base['wall'] / r['wall']:.1f}x wall, {base['cpu'] / r['cpu']:.1f}x CPU" if base else ""
        check = f"{_max_rel(r['values'], ref):.1e}" if ref is not None and "values" in r else ""
        rows_out.append(f"| {n:.0e} | {work} | {r['wall']:.2f} | {r['cpu']:.2f} | {r['rss']:.0f} | {ratio} | "
                        f"{check} | {note} |")
        print(rows_out[-1], flush=True)

    try:
        if args.rounds:
            for n in args.rows:
                f64 = tmp / f"preds_{n}.parquet"
                if not f64.exists():
                    _write(f64, n, False)
                _alternate(f64, n, args.rounds)
            return 0
        for n in args.rows:
            f64, f32 = tmp / f"preds_{n}.parquet", tmp / f"preds_{n}_f32.parquet"
            for path, single in ((f64, False), (f32, True)):
                if not path.exists():
                    _write(path, n, single)
            hand = _run([sys.executable, "-c", HAND_MINMAX, str(f64)])
            row(n, "hand-written DuckDB bucket query: count, sums of p and p^2, min and max (floor)", hand)
            sums = _run([sys.executable, "-c", HAND_SUMS, str(f64)])
            row(n, "hand-written DuckDB bucket query: count, sums of p and p^2 only", sums)
            row(n, "the same query after `import pandas, pyarrow, narwhals` (the floor of a command returning "
                   "pandas tables)", _run([sys.executable, "-c", HAND_SUMS_IMPORTS, str(f64)]),
                note="ratio to the sums-only query: see --rounds")
            if n == args.rows[0]:
                row(n, "import calibviz.cli (fixed cost per process)",
                    _run([sys.executable, "-c", "import calibviz.cli"]))
            scan = _metrics(f64, "--engine", "duckdb", "--metrics", BINNED)
            memory = None
            if n <= 10_000_000:
                memory = _metrics(f64, "--metrics", BINNED)
                row(n, "in memory: `calibviz metrics` binned panel", memory)
            row(n, "scan duckdb: binned panel, uniform bins", scan, memory["values"] if memory else None, memory,
                note=f"{scan['wall'] / hand['wall']:.2f}x the bucket query's wall ({scan['wall'] / sums['wall']:.2f}x "
                     f"the sums-only query's), {scan['cpu'] / hand['cpu']:.2f}x its CPU")
            ip = _in_process(f64)
            steps = ", ".join(f"{k} {ip[k]:.3f} s" for k in ("open", "first", "metrics"))
            rows_out.append(f"| {n:.0e} | in one process (warm): hand query {ip['hand']:.3f} s; binned-panel scan "
                            f"{ip['scan']:.3f} s ({steps}); `import calibviz` {ip['import']:.3f} s | | | | | | "
                            f"scan {ip['ratio']:.2f}x the hand query (median of 8 alternating rounds, "
                            f"{ip['ratio_range'][0]:.2f}-{ip['ratio_range'][1]:.2f}), its first pass "
                            f"{ip['first'] / ip['hand']:.2f}x |")
            print(rows_out[-1], flush=True)
            em = _metrics(f64, "--engine", "duckdb", "--metrics", BINNED, "--binning", "equal_mass")
            row(n, "scan duckdb: binned panel, equal-mass bins", em, None, memory)
            row(n, "scan duckdb: float32 scores, binned panel", _metrics(f32, "--engine", "duckdb", "--metrics",
                                                                         BINNED))
            full = _metrics(f64, "--engine", "duckdb")
            row(n, "scan duckdb: default panel (TCE PAVA-BC, smECE)", full)
            ref = _metrics(f64, "--engine", "duckdb", reference=200)
            row(n, "scan duckdb: default panel with the calibrated-model reference (the command's default, "
                   "200 redraws)", ref, full["values"],
                note=f"the reference adds {ref['wall'] - full['wall']:.2f} s wall")
            if args.intervals:
                ci = ("--ci", str(args.intervals))
                for work, base, extra in (("binned panel", scan, ("--metrics", BINNED)), ("default panel", full, ())):
                    r = _metrics(f64, "--engine", "duckdb", *extra, *ci)
                    row(n, f"scan duckdb: {work} + {args.intervals} bootstrap resamples", r, base["values"],
                        note=f"intervals add {r['wall'] - base['wall']:.2f} s wall, {r['cpu'] - base['cpu']:.2f} s "
                             "CPU")
            pol = _metrics(f64, "--engine", "polars", "--metrics", BINNED)
            row(n, "scan polars: binned panel", pol, scan["values"])
            if args.spark:
                sp = _metrics(f64, "--engine", "spark", "--metrics", BINNED)
                row(n, "scan spark local[2]: binned panel", sp, scan["values"])
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    print()
    print("| rows | work | wall (s) | CPU (s) | peak RSS (MB) | speed-up vs in memory | max rel. diff | note |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(rows_out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
