"""Size of the calibrated-model reference of weighted scans (issue #13), by simulation.

Run: nice -n 5 python benchmarks/bench_scan_reference.py [--rows 5000] [--reps 300] [--compare 40]

A scan has no rows to redraw: per score bucket it draws the weight of its positives
as a scaled Beta with the exact mean and variance of the per-row draw
(:func:`calibviz.scan.reference.positive_weight`; TCE: the coupled draw of
:func:`~calibviz.scan.reference.weighted_positives`). This checks, on logs of a
*calibrated* model (y ~ Bernoulli(p), p ~ Beta(2, 5), or with ``--scores near0``
p = 10^U(-4, -1.5)) with exponential or log-normal(0, 1.5) weights (or none: ``--laws none``), that

* the share of logs flagged at level 5% stays at or below 5% (with a 95%
  Clopper-Pearson interval) for ECE, ACE, MCE, the Brier reliability, TCE, smECE, the Brier
  score, debiased ECE and log loss (the Brier score, smECE and log loss: the bucket redraws of
  :func:`calibviz.scan.reference._bucket_null`; debiased ECE the equal-mass bins' draws); ``--keys`` picks some;
* the p-values agree with :func:`calibviz.panel.metric_panel`'s per-row
  weighted redraws on the same logs (``--compare`` of them; both use 200
  redraws, so two independent p-values differ by ~0.03 from Monte Carlo alone).

With ``--in-memory R``, also R further logs (seeds 30,000 + r) through the in-memory per-row weighted
redraws alone (:func:`calibviz.metrics.consistency_test`, ``method="exact"``), log-normal weights: their size
by itself, at a replication that the scan's comparison cannot afford.

With ``--multiclass R``, also R calibrated multiclass logs (4 classes, Dirichlet(0.7)
probabilities, 30,000 rows): the share flagged by the references of confidence ECE and
top-label ECE and MCE (:func:`calibviz.scan.reference.top_label_reference`).

Prints Markdown tables.
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import pandas as pd
from scipy import stats

import calibviz as cv
from calibviz.panel import metric_panel

KEYS = ["ece", "ace", "mce", "brier_reliability", "tce", "smooth_ece", "brier", "debiased_ece", "log_loss"]


def _log(n: int, seed: int, weights: str, scores: str = "beta"):
    rng = np.random.default_rng(seed)
    # "near0": a rare-event model, p = 10^U(-4, -1.5), where a score bucket holds scores of several orders of
    # magnitude (the regime in which the first weighted draw's variance was off by factors 0.46 to 2.8)
    p = rng.beta(2, 5, n) if scores == "beta" else 10.0 ** rng.uniform(-4.0, -1.5, n)
    y = (rng.uniform(size=n) < p).astype(int)
    if weights == "none":
        return y, p, None
    w = rng.exponential(size=n) if weights == "exponential" else rng.lognormal(0.0, 1.5, n)
    return y, p, w


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=5000)
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--compare", type=int, default=40, help="logs also run through metric_panel (per-row redraws)")
    ap.add_argument("--redraws", type=int, default=200)
    ap.add_argument("--multiclass", type=int, default=0, metavar="R", help="also R calibrated multiclass logs")
    ap.add_argument("--skip-weighted", action="store_true")
    ap.add_argument("--laws", nargs="+", default=["exponential", "lognormal"], choices=["exponential", "lognormal", "none"],
                    help="weight laws; none: unweighted logs (at 10^6 rows and more a score bucket holds many distinct "
                         "scores, where the references' bucket-level draws and TCE's bucket-level decisions differ "
                         "most from the rows')")
    ap.add_argument("--seed-base", type=int, default=10_000, help="log r is drawn from seed base + r")
    ap.add_argument("--scores", choices=["beta", "near0"], default="beta",
                    help="scores of the weighted logs: Beta(2, 5), or 10^U(-4, -1.5) (a rare-event model)")
    ap.add_argument("--in-memory", type=int, default=0, metavar="R",
                    help="also R logs through the in-memory per-row reference alone (log-normal weights)")
    ap.add_argument("--keys", nargs="+", default=KEYS, choices=KEYS, help="the metrics to check (default: all)")
    args = ap.parse_args(argv)
    keys = args.keys
    lines = []
    for weights in () if args.skip_weighted else args.laws:
        t0 = time.perf_counter()
        flagged = {k: 0 for k in keys}
        diffs = {k: [] for k in keys}
        for r in range(args.reps):
            y, p, w = _log(args.rows, args.seed_base + r, weights, args.scores)
            log = pd.DataFrame({"y": y, "p": p}) if w is None else pd.DataFrame({"y": y, "p": p, "weight": w})
            got = cv.scan(log).metrics(
                keys, n_reference=args.redraws, random_state=r).set_index("metric")
            for k in keys:
                flagged[k] += int(got.loc[k, "p_value"] <= 0.05)
            if r < args.compare:
                want = metric_panel(y, p, metrics=keys, sample_weight=w, n_resamples=0, n_reference=args.redraws,
                                    random_state=r).set_index("metric")
                for k in keys:
                    diffs[k].append(float(got.loc[k, "p_value"] - want.loc[k, "p_value"]))
        for k in keys:
            f = flagged[k]
            ci = stats.binomtest(f, args.reps).proportion_ci(0.95)
            d = np.asarray(diffs[k])
            compared = f"{d.mean():+.3f} | {np.abs(d).mean():.3f}" if d.size else "not compared | "
            lines.append(f"| {weights} | {k} | {f}/{args.reps} = {f / args.reps:.3f} | "
                         f"{ci.low:.3f} - {ci.high:.3f} | {compared} |")
        print(f"{weights}: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    if lines:
        print(f"\nCalibrated logs of {args.rows} rows (scores {args.scores}, seeds {args.seed_base} + r), "
              f"{args.reps} per weight law, "
              f"{args.redraws} redraws; "
              f"p-values compared with metric_panel on the first {args.compare}.\n")
        print("| weights | metric | flagged at 5% | 95% CI | mean p-value difference (scan - rows) | "
              "mean abs. difference |")
        print("|---|---|---|---|---|---|")
        print("\n".join(lines))
    if args.in_memory:
        keys = ["ece", "ace", "mce", "brier_reliability"]
        flagged = {k: 0 for k in keys}
        for r in range(args.in_memory):
            y, p, w = _log(args.rows, 30_000 + r, "lognormal")
            for k in keys:
                res = cv.metrics.consistency_test(y, p, metric=k, sample_weight=w, n_resamples=args.redraws,
                                                  random_state=r, method="exact")
                flagged[k] += int(res.p_value <= 0.05)
        print(f"\nIn-memory per-row weighted reference alone: {args.in_memory} calibrated logs of {args.rows} rows, "
              f"log-normal(0, 1.5) weights, {args.redraws} redraws:\n")
        print("| metric | flagged at 5% | 95% CI |")
        print("|---|---|---|")
        for k in keys:
            ci = stats.binomtest(flagged[k], args.in_memory).proportion_ci(0.95)
            print(f"| {k} | {flagged[k]}/{args.in_memory} = {flagged[k] / args.in_memory:.3f} | "
                  f"{ci.low:.3f} - {ci.high:.3f} |")
    if args.multiclass:
        keys = ["confidence_ece", "top_label_ece", "top_label_mce"]
        flagged = {k: 0 for k in keys}
        for r in range(args.multiclass):
            rng = np.random.default_rng(20_000 + r)
            P = rng.dirichlet(np.full(4, 0.7), 30_000)
            y = (P.cumsum(axis=1) > rng.uniform(size=(P.shape[0], 1))).argmax(axis=1)
            df = pd.DataFrame(P, columns=["p_a", "p_b", "p_c", "p_d"]).assign(label=np.array(list("abcd"))[y])
            got = cv.scan(df).metrics(keys, n_reference=args.redraws, random_state=r).set_index("metric")
            for k in keys:
                flagged[k] += int(got.loc[k, "p_value"] <= 0.05)
        print(f"\nCalibrated multiclass logs (4 classes, 30,000 rows), {args.multiclass} logs, {args.redraws} "
              "redraws:\n")
        print("| metric | flagged at 5% | 95% CI |")
        print("|---|---|---|")
        for k in keys:
            ci = stats.binomtest(flagged[k], args.multiclass).proportion_ci(0.95)
            print(f"| {k} | {flagged[k]}/{args.multiclass} = {flagged[k] / args.multiclass:.3f} | "
                  f"{ci.low:.3f} - {ci.high:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
