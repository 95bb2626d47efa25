"""Benchmark: the VECE ranking of a scan (Scan.variable_ranking, issue #13) against the in-memory ranking.

Run: nice -n 5 python benchmarks/bench_scan_variables.py [--rows 10000000] [--keep DIR]

Writes a Parquet file of ``rows`` rows (p, y, a numeric feature ``age`` and a
text feature ``region`` of 50 levels) with DuckDB, then times, each in its own
process (wall, CPU of the process incl. engine threads, peak RSS):

* the in-memory path: ``cv.load_predictions`` + ``calibviz.variables.variable_ranking``
  (which also fits the LOESS curves of max-VCE; skipped above 10^7 rows);
* ``cv.scan(FILE).variable_ranking(["age", "region"])`` on DuckDB and on Polars
  (the first pass, which validates the rows and every other result shares, is
  timed apart);
* a hand-written DuckDB query computing only the sums the ranking needs
  (age's range, its 2^16 bucket sums, the level sums): the floor.

Prints a Markdown table and the largest relative difference of VECE and its
interval between every scan and the in-memory ranking.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_TIMED = r"""
import json, resource, sys, time
t0, c0 = time.time(), time.process_time()
{body}
print(json.dumps(dict(wall=time.time() - t0, cpu=time.process_time() - c0, extra=extra,
                      rss=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)))
"""

CASES = {
    "in memory: load + variable_ranking": """
import calibviz as cv
from calibviz.variables import variable_ranking
pr = cv.load_predictions(sys.argv[1], label="y", probs="p")
r = variable_ranking(pr.features[["age", "region"]], pr.y, pr.y_prob).set_index("feature")
extra = {k: r.loc[k, ["vece", "vece_low", "vece_high"]].tolist() for k in r.index}
""",
    "scan, DuckDB": """
import calibviz as cv
s = cv.scan(sys.argv[1], label="y", probs="p", engine="duckdb"); s._fine()
t1, c1 = time.time(), time.process_time()
r = s.variable_ranking(["age", "region"]).set_index("feature")
extra = {k: r.loc[k, ["vece", "vece_low", "vece_high"]].tolist() for k in r.index}
extra["ranking"] = [time.time() - t1, time.process_time() - c1]
""",
    "scan, Polars": """
import calibviz as cv
s = cv.scan(sys.argv[1], label="y", probs="p", engine="polars"); s._fine()
t1, c1 = time.time(), time.process_time()
r = s.variable_ranking(["age", "region"]).set_index("feature")
extra = {k: r.loc[k, ["vece", "vece_low", "vece_high"]].tolist() for k in r.index}
extra["ranking"] = [time.time() - t1, time.process_time() - c1]
""",
    "hand-written DuckDB sums": """
import duckdb
con = duckdb.connect(); con.execute("SET enable_progress_bar = false")
f = sys.argv[1]
lo, hi = con.execute("SELECT min(age), max(age) FROM read_parquet(?)", [f]).fetchall()[0]
g = "(1 - CASE WHEN p > 0.5 THEN p ELSE 1 - p END) - CASE WHEN (p > 0.5) = (y = 1) THEN 0 ELSE 1 END"
s = 65536 / (hi * 0.5 - lo * 0.5)
con.execute(f"SELECT least(greatest(floor((age * 0.5 - {lo} * 0.5) * {s}), 0), 65535) AS k, count(*), sum({g}), "
            f"sum(({g}) ^ 2), min(age), max(age) FROM read_parquet(?) GROUP BY ALL", [f]).fetchall()
con.execute(f"SELECT region, count(*), sum({g}), sum(({g}) ^ 2) FROM read_parquet(?) GROUP BY ALL", [f]).fetchall()
extra = {}
""",
}


def _write(path: Path, rows: int) -> None:
    import duckdb

    duckdb.sql(f"""COPY (SELECT p, (random() < least(greatest(p + CASE WHEN age > 60 THEN 0.1 ELSE -0.05 END, 0), 1))
                          ::TINYINT AS y, age, 'r' || lpad(CAST(floor(random() * 50) AS INT)::VARCHAR, 2, '0') AS region
                   FROM (SELECT random() AS p, 18 + 72 * random() AS age FROM range({rows})))
                   TO '{path}' (FORMAT PARQUET)""")


def _run(name: str, path: Path) -> dict:
    code = _TIMED.format(body=CASES[name])
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, cwd=ROOT,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--keep", help="write the file here and keep it")
    args = ap.parse_args(argv)
    tmp = Path(args.keep or tempfile.mkdtemp(prefix="calibviz_vece_"))
    tmp.mkdir(parents=True, exist_ok=True)
    path = tmp / f"vece_{args.rows}.parquet"
    if not path.exists():
        _write(path, args.rows)
    try:
        res = {}
        for name in CASES:
            if name.startswith("in memory") and args.rows > 10_000_000:
                continue
            res[name] = _run(name, path)
        print(f"\n{args.rows:,} rows, features age (numeric) and region (50 levels)\n")
        print("| path | wall s | CPU s | ranking after the first pass: wall / CPU s | peak RSS GB |")
        print("|---|---:|---:|---:|---:|")
        for name, r in res.items():
            rank = r["extra"].get("ranking")
            after = f"{rank[0]:.2f} / {rank[1]:.2f}" if rank else ""
            print(f"| {name} | {r['wall']:.2f} | {r['cpu']:.2f} | {after} | {r['rss'] / 1024:.2f} |")
        mem = res.get("in memory: load + variable_ranking")
        if mem:
            for name in ("scan, DuckDB", "scan, Polars"):
                diff = max(abs(a / b - 1) for k in ("age", "region")
                           for a, b in zip(res[name]["extra"][k], mem["extra"][k]))
                print(f"\n{name}: largest relative difference of VECE and its interval to memory: {diff:.1e}")
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
