"""Benchmark: how far a scan's TCE lies from the paper's TCE above the exact limit (issue #13).

Run: nice -n 10 python benchmarks/bench_tce_grid.py [--logs 20] [--settings A B C D E F G] [--grid cells|buckets]

Above ``calibviz.scan.refine.EXACT_BLOCK_ROWS`` rows a scan fits PAVA-BC on groups of scores and tests every row
at its own score. ``--grid cells`` (the default) measures the scan itself (``cv.scan`` of the log in memory, DuckDB):
its groups are 2^-16 buckets, the full ones split into cells down to 2^-22
(``calibviz.scan.refine.full_bucket_levels``). ``--grid buckets`` measures the scans before the cells, whole 2^-16
buckets only, by its in-memory equivalent: PAVA-BC fitted on the scores rounded down to the grid gives the blocks,
every row is binned by its bucket's block (tests/test_scan.py checks the scan's statistic against such an in-memory
computation). Either is compared with ``cv.metrics.tce`` (PAVA-BC on the exact scores) on simulated logs,
y ~ Bernoulli(r):

* A: p ~ Beta(2, 5), r = p (2x10^6 rows); E: the same scores rounded to 6 decimals;
* B: p ~ U(0.30, 0.31), r = p; C: the same, r = p + 0.003 (miscalibrated);
* D: 90% of rows as B, 10% as A; F: as B on 5x10^6 rows; G: p ~ U(0.30, 0.33), r = p (between A's and B's
  fullness);

each with the default PAVA-BC (N/20, N/5) and with bins of N/100 to N/10 rows. It prints, per setting and bins,
the share of PAVA-BC's minimum bin size (n_min) that the fullest group (bucket or cell) of several scores holds (what
:data:`calibviz.scan.GRID_DISTANCES` keys the panel's note on), and the median and largest distance in percentage
points.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

import calibviz as cv
from calibviz.binning import PAVABC, Custom

SETTINGS = {"A": 2_000_000, "B": 2_000_000, "C": 2_000_000, "D": 2_000_000, "E": 2_000_000, "F": 5_000_000,
            "G": 2_000_000}


def grid_tce(y, p, scheme) -> float:
    """TCE with PAVA-BC fitted on the scores rounded down to the 2^-16 grid, each row tested at its own score."""
    grid = np.floor(p * 2 ** 16) / 2 ** 16  # exact: a power-of-two scale
    sizes = scheme.fit(grid, y).counts  # a bucket is one tie: never split
    starts = np.sort(grid)[np.cumsum(sizes)[:-1]]
    return cv.metrics.tce(y, p, binning=Custom(np.r_[0.0, starts, 1.0]))


def simulate(setting: str, n: int, seed: int):
    rng = np.random.default_rng(seed)
    if setting in ("A", "E"):
        p = rng.beta(2, 5, n)
        p = np.round(p, 6) if setting == "E" else p
        r = p
    elif setting in ("B", "C", "F"):
        p = rng.uniform(0.30, 0.31, n)
        r = p + (0.003 if setting == "C" else 0.0)
    elif setting == "G":
        p = rng.uniform(0.30, 0.33, n)
        r = p
    else:  # D
        p = np.where(rng.random(n) < 0.9, rng.uniform(0.30, 0.31, n), rng.beta(2, 5, n))
        r = p
    return (rng.random(n) < r).astype(np.int8), p


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--logs", type=int, default=20)
    ap.add_argument("--settings", nargs="+", default=list(SETTINGS))
    ap.add_argument("--grid", choices=("cells", "buckets"), default="cells")
    args = ap.parse_args(argv)
    group = "group" if args.grid == "cells" else "bucket"
    print(f"| setting | n | bins | logs | fullest {group} / minimum bin size | median distance | largest | logs > 1 point "
          "| median TCE | s per log |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for setting in args.settings:
        n = SETTINGS[setting]
        logs = args.logs if n <= 2_000_000 else max(1, args.logs // 2)
        for name, scheme in (("N/20, N/5", PAVABC()), ("N/100, N/10", PAVABC(n // 100, n // 10))):
            d, share, value, t0 = [], [], [], time.perf_counter()
            for i in range(logs):
                y, p = simulate(setting, n, 1000 * ord(setting) + i)
                exact = cv.metrics.tce(y, p, binning=scheme)
                if args.grid == "cells":
                    s = cv.scan(pd.DataFrame({"y": y, "p": p}))
                    got, fullest = s.tce(scheme), s._fullest_group()[0]
                else:
                    got = grid_tce(y, p, scheme)
                    fullest = np.bincount(np.floor(p * 2 ** 16).astype(np.int64)).max()
                d.append(abs(got - exact))
                value.append(exact)
                share.append(fullest / scheme.constraints(n)[0])
            print(f"| {setting} | {n:.0e} | {name} | {logs} | {100 * np.median(share):.2g}% | {np.median(d):.3f} | "
                  f"{max(d):.2f} | {sum(x > 1 for x in d)} | {np.median(value):.1f} | "
                  f"{(time.perf_counter() - t0) / logs:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
