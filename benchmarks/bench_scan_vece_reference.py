"""Benchmark: size of a scan's VECE reference (Scan.variable_ranking's p-values) on calibrated logs.

Run: nice -n 5 python benchmarks/bench_scan_vece_reference.py [--reps 200] [--cases small rare ...]

A scan has no rows to redraw: its VECE reference (:func:`calibviz.stats.cumulant_abs_sum_p`) draws each bin's
sum of w (error - predicted error) from the bin's null variance and third cumulant (Gaussian where no bin is
skewed, the in-memory ranking's law and random numbers; else a shifted gamma per bin). The in-memory ranking
(:func:`calibviz.variables.variable_ranking`) redraws the rows' outcomes where a bin is skewed or the data are
small. This script draws calibrated logs (y ~ Bernoulli(p)) with a numeric feature ``age``, an integer feature
``tenure`` (ties) and a categorical ``region`` (4 levels and a rare one), ranks them both ways, and reports per
case: the share of logs with some variable's Holm-adjusted p-value at most 0.05 (the sentence "VECE beyond what a
calibrated model shows"), per-variable rejection rates of the raw p-values, and the mean and mean absolute
difference of the scan's p-values from the in-memory ones.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

CASES = {  # rows, score law, weights
    "small": (300, (2, 5), None),
    "beta": (2000, (2, 5), None),
    "rare": (2000, (0.5, 20), None),
    "rare_small": (500, (0.5, 20), None),
    "weighted": (2000, (2, 5), "lognormal"),
    "large": (50_000, (2, 5), None),
}
FEATURES = ["age", "tenure", "region"]


def _log(n: int, law, weights, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    p = rng.beta(*law, n)
    df = pd.DataFrame({"p": p, "y": (rng.random(n) < p).astype(int), "age": rng.uniform(20, 80, n),
                       "tenure": rng.integers(0, 40, n),
                       "region": rng.choice(["north", "south", "east", "west", "isles"], n,
                                            p=[0.3, 0.3, 0.2, 0.17, 0.03])})
    if weights == "lognormal":
        df["w"] = rng.lognormal(0.0, 1.0, n)
    return df


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    ap.add_argument("--seed-base", type=int, default=70_000)
    args = ap.parse_args(argv)

    import calibviz as cv
    from calibviz.variables import variable_ranking

    print("| case | rows | logs | some variable flagged (scan) | (in memory) | raw p <= 0.05 per variable, scan "
          "(age, tenure, region) | in memory | scan p - in-memory p: mean, mean abs. | time |", flush=True)
    print("|---|---|---|---|---|---|---|---|---|", flush=True)
    for case in args.cases:
        n, law, weights = CASES[case]
        flagged, raw, diffs, methods = {"scan": 0, "mem": 0}, {"scan": [], "mem": []}, [], {}
        t0 = time.time()
        for r in range(args.reps):
            df = _log(n, law, weights, args.seed_base + r)
            w = "w" if weights else None
            s = cv.scan(df, label="y", probs="p", weight=w, features=FEATURES)
            rs = s.variable_ranking(FEATURES, n_resamples=0, random_state=r).set_index("feature")
            rm = variable_ranking(df[FEATURES], df["y"].to_numpy(), df["p"].to_numpy(), n_resamples=0,
                                  sample_weight=None if w is None else df["w"].to_numpy(),
                                  random_state=r).set_index("feature")
            for key, t in (("scan", rs), ("mem", rm)):
                flagged[key] += bool((t["p_adjusted"] <= 0.05).any())
                raw[key].append([float(t.loc[f, "p_value"]) <= 0.05 for f in FEATURES])
            diffs.append((rs.loc[FEATURES, "p_value"] - rm.loc[FEATURES, "p_value"]).to_numpy())
        d = np.concatenate(diffs)
        per = {k: ", ".join(f"{100 * v:.1f}%" for v in np.mean(raw[k], axis=0)) for k in raw}
        print(f"| {case} | {n:,} | {args.reps} | {flagged['scan']}/{args.reps} = {100 * flagged['scan'] / args.reps:.1f}% "
              f"| {100 * flagged['mem'] / args.reps:.1f}% | {per['scan']} | {per['mem']} | {d.mean():+.4f}, "
              f"{np.abs(d).mean():.4f} | {time.time() - t0:.0f} s |", flush=True)


if __name__ == "__main__":
    main()
