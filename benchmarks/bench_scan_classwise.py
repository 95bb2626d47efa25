"""Class-wise ECE intervals on multiclass scans (calibviz.scan.classwise): coverage and cost.

Run: nice -n 10 python benchmarks/bench_scan_classwise.py [--reps 200] [--sizes 5000,50000] [--classes 4]
     [--resamples 200] [--power 1.4] [--seed-base 1000]
     python benchmarks/bench_scan_classwise.py --timing [--rows 1000000] [--classes 10] [--engine duckdb]
     python benchmarks/bench_scan_classwise.py --reference-size [--reps 200] [--sizes 5000] [--classes 4]
     [--redraws 200] [--compare 20]
     python benchmarks/bench_scan_classwise.py --class-test [--reps 200] [--sizes 3000] [--classes 4] [--compare 20]

Coverage: ``--reps`` logs of each size from the model of tests/test_scan_classwise.py (truth T ~ Dirichlet(1)
over K classes, y ~ T, predictions T^power renormalised: overconfident for power > 1; a calibrated model's
class-wise ECE is 0, on the boundary, where no interval covers), each scanned from a DataFrame by DuckDB with
``s.metrics(["classwise_ece"], n_resamples=B)``; the population value is the binned gap of T - P on 2·10^6
draws of the truth (no label noise). Prints the share of 95% intervals holding it, its Monte Carlo standard
error, misses above / below, and the interval method used.

Size of the weighted calibrated-model reference (``--reference-size``): ``--reps`` calibrated logs (P ~
Dirichlet(0.7), y ~ P) per weight law, lognormal(0, 1.5) and ``exp(3 max P) x Exponential(1)`` (heavy weights on
confident rows), scanned with weights; prints the share of p-values at most 0.05 and 0.01 (a false alarm rate:
nominal 5% and 1%, lower is conservative), the mean p-value, and for the first ``--compare`` logs the mean
difference to ``consistency_test``'s per-row weighted redraws of the same rows.

Size of the per-class test of the class ranking (``--class-test``): ``--reps`` calibrated logs per size (P ~
Dirichlet(0.7), y ~ P; unweighted and lognormal(0, 1.5) weights), ranked with
``calibviz.scan.tables.class_ranking(scan, n_reference=class_reference_draws(K))``: the share of logs with some
class's adjusted p-value at most 0.05 (the sentence "One-vs-rest ECE beyond what a calibrated model shows"), and
the same for the in-memory ranking's per-row redraws of the first ``--compare`` logs.

Timing (``--timing``): writes a Parquet log of ``--rows`` rows and K classes (Dirichlet(0.5) truth: many
distinct cell tuples), then times the first pass, the extra cell-tuple pass and 200 resamples of the draw.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import calibviz as cv  # noqa: E402
from calibviz.binning import Uniform  # noqa: E402
from calibviz.scan import classwise as cw  # noqa: E402


def model(n, K, seed, power, alpha=1.0):
    rng = np.random.default_rng(seed)
    T = rng.dirichlet(np.full(K, alpha), n)
    y = (T.cumsum(axis=1) < rng.uniform(size=(n, 1))).sum(axis=1)
    P = T ** power
    P /= P.sum(axis=1, keepdims=True)
    return y, P, T


def frame(y, P):
    classes = [f"c{k}" for k in range(P.shape[1])]
    return pd.DataFrame({"label": np.array(classes)[y], **{f"p_{c}": P[:, k] for k, c in enumerate(classes)}})


def population(K, power, n_bins=15, n=2_000_000, seed=99) -> float:
    _, P, T = model(n, K, seed, power)
    total = 0.0
    for k in range(K):
        b = Uniform(n_bins).fit(P[:, k]).index
        total += np.abs(np.bincount(b, T[:, k] - P[:, k], minlength=n_bins)).sum() / n
    return total / K


def coverage(args) -> None:
    truth = population(args.classes, args.power)
    print(f"K = {args.classes}, power {args.power}: population class-wise ECE {truth:.5f}")
    for n in [int(v) for v in args.sizes.split(",")]:
        hits = above = below = 0
        methods = set()
        t0 = time.perf_counter()
        for r in range(args.reps):
            y, P, _ = model(n, args.classes, args.seed_base + r, args.power)
            t = cv.scan(frame(y, P)).metrics(["classwise_ece"], n_resamples=args.resamples, random_state=r).iloc[0]
            hits += t["low"] <= truth <= t["high"]
            above += t["low"] > truth
            below += t["high"] < truth
            methods.add(t["interval"])
        c = hits / args.reps
        print(f"n = {n}: coverage {100 * c:.1f}% ({hits}/{args.reps}, MC se {100 * np.sqrt(c * (1 - c) / args.reps):.1f}); "
              f"intervals above the value {above}, below {below}; method {sorted(methods)}; "
              f"{time.perf_counter() - t0:.0f} s", flush=True)


def weighted_calibrated(n, K, seed, law):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.full(K, 0.7), n)
    y = (P.cumsum(axis=1) < rng.uniform(size=(n, 1))).sum(axis=1)
    w = rng.lognormal(0.0, 1.5, n) if law == "lognormal" else np.exp(3 * P.max(axis=1)) * rng.exponential(size=n)
    return y, P, w


def reference_size(args) -> None:
    from calibviz.metrics import consistency_test

    for n in [int(v) for v in args.sizes.split(",")]:
        for law in ("lognormal", "correlated"):
            t0 = time.perf_counter()
            ps, diffs = [], []
            for r in range(args.reps):
                y, P, w = weighted_calibrated(n, args.classes, args.seed_base + r, law)
                df = frame(y, P).assign(w=w)
                p = cw.classwise_reference(cw.cell_table(cv.scan(df, weight="w"), "uniform"), args.redraws, r)[3]
                ps.append(p)
                if r < args.compare:
                    want = consistency_test(y, P, metric="classwise_ece", n_resamples=args.redraws, random_state=r,
                                            sample_weight=w)
                    diffs.append(p - want.p_value)
            ps = np.array(ps)
            a5, a1 = np.mean(ps <= 0.05), np.mean(ps <= 0.01)
            print(f"n = {n}, K = {args.classes}, weights {law}: p <= 0.05 in {100 * a5:.1f}% "
                  f"(MC se {100 * np.sqrt(0.05 * 0.95 / args.reps):.1f}), p <= 0.01 in {100 * a1:.1f}%, mean p "
                  f"{ps.mean():.3f}; scan minus per-row p over {len(diffs)} logs: mean {np.mean(diffs):+.3f}, "
                  f"range {min(diffs):+.3f} to {max(diffs):+.3f}; {time.perf_counter() - t0:.0f} s", flush=True)


def class_test_size(args) -> None:
    from calibviz.multiclass import class_ranking, class_reference_draws
    from calibviz.scan import tables

    K = args.classes
    R = class_reference_draws(K)
    print("| rows | K | weights | logs | some class flagged (scan) | in memory (first logs) | time |")
    print("|---|---|---|---|---|---|---|", flush=True)
    for n in [int(v) for v in args.sizes.split(",")]:
        for law in ("none", "lognormal"):
            t0 = time.perf_counter()
            hits, mem = 0, []
            for r in range(args.reps):
                y, P, w = weighted_calibrated(n, K, args.seed_base + r, "lognormal")
                w = None if law == "none" else w
                df = frame(y, P) if w is None else frame(y, P).assign(w=w)
                s = cv.scan(df, weight=None if w is None else "w")
                ranking = tables.class_ranking(s, Uniform(15), n_reference=R, random_state=r)
                hits += bool((ranking["p_adjusted"] <= 0.05).any())
                if r < args.compare:
                    m = class_ranking(y, P, sample_weight=w, n_resamples=0, n_reference=R, random_state=r)
                    mem.append(bool((m["p_adjusted"] <= 0.05).any()))
            print(f"| {n:,} | {K} | {law} | {args.reps} | {hits}/{args.reps} = {100 * hits / args.reps:.1f}% | "
                  f"{sum(mem)}/{len(mem)} | {time.perf_counter() - t0:.0f} s |", flush=True)


def timing(args) -> None:
    y, P, _ = model(args.rows, args.classes, 0, 1.3, alpha=0.5)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "log.parquet")
        frame(y, P).to_parquet(path)
        s = cv.scan(path, engine=args.engine)
        t0 = time.perf_counter()
        _ = s.n
        t1 = time.perf_counter()
        table = cw.cell_table(s, Uniform(15))
        t2 = time.perf_counter()
        cw.classwise_distribution(table, 200, random_state=0)
        t3 = time.perf_counter()
    print(f"{args.rows} rows, K = {args.classes}, {args.engine}: first pass {t1 - t0:.2f} s, cell-tuple pass "
          f"{t2 - t1:.2f} s ({table.n_groups} tuples), 200 resamples {t3 - t2:.2f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timing", action="store_true")
    ap.add_argument("--reference-size", action="store_true", help="false-alarm rate of the weighted reference")
    ap.add_argument("--class-test", action="store_true", help="false-alarm rate of the class ranking's test")
    ap.add_argument("--redraws", type=int, default=200)
    ap.add_argument("--compare", type=int, default=20)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--sizes", default="5000,50000")
    ap.add_argument("--classes", type=int, default=None)
    ap.add_argument("--resamples", type=int, default=200)
    ap.add_argument("--power", type=float, default=1.4)
    ap.add_argument("--seed-base", type=int, default=1000)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--engine", default="duckdb")
    args = ap.parse_args()
    if args.timing:
        args.classes = args.classes or 10
        timing(args)
    elif args.class_test:
        args.classes = args.classes or 4
        args.sizes = args.sizes if args.sizes != "5000,50000" else "3000"
        class_test_size(args)
    elif args.reference_size:
        args.classes = args.classes or 4
        args.sizes = args.sizes if args.sizes != "5000,50000" else "5000"
        reference_size(args)
    else:
        args.classes = args.classes or 4
        coverage(args)


if __name__ == "__main__":
    main()
