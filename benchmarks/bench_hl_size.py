"""Size of Hosmer-Lemeshow on its own (``cv.metrics.hosmer_lemeshow``) where its groups expect few events.

Run: nice -n 5 python benchmarks/bench_hl_size.py [--reps 1000] [--rows 300 2000] [--redraws 199]

Calibrated logs (p ~ Beta(0.5, 20), y ~ Bernoulli(p); scores near 0, as rare-event models give them): the share
flagged at the 5% level by the chi-square reference (``reference="chi2"``, ``chi2_p_value``) and by the default
``reference="auto"``, which reads the statistic against label redraws where a group expects fewer than
``HL_MIN_EXPECTED`` events (a review's simulation found the chi-square at 9-10% there). Each log gets its own data
seed and its own redraw seed: one redraw seed for every log measures one fixed set of redraws, not the test's
size (``calibviz/seeding.py``). 95% Wilson intervals. Prints a Markdown table.
"""
from __future__ import annotations

import argparse

import numpy as np
from scipy import stats

import calibviz as cv


def _wilson(k: int, n: int) -> str:
    lo, hi = stats.binomtest(k, n).proportion_ci(method="wilson")
    return f"{100 * k / n:.1f}% ({100 * lo:.1f}-{100 * hi:.1f})"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--rows", type=int, nargs="+", default=[300, 2000])
    ap.add_argument("--redraws", type=int, default=199)
    args = ap.parse_args(argv)
    print("| rows | logs | min expected events (median) | chi-square reference | `reference=\"auto\"` (redraws) |")
    print("|---|---|---|---|---|")
    for n in args.rows:
        chi2_hits = auto_hits = 0
        least = []
        for i in range(args.reps):
            rng = np.random.default_rng([i, n, 777])  # the data's seed, apart from the redraws'
            p = rng.beta(0.5, 20, n)
            y = (rng.random(n) < p).astype(int)
            r = cv.metrics.hosmer_lemeshow(y, p, n_redraws=args.redraws, random_state=[i, n, 1])
            chi2_hits += r.chi2_p_value <= 0.05
            auto_hits += r.p_value <= 0.05
            least.append(r.min_expected)
        print(f"| {n:,} | {args.reps:,} | {np.median(least):.2g} | {_wilson(chi2_hits, args.reps)} | "
              f"{_wilson(auto_hits, args.reps)} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
