"""How often the Variables page shows a miscalibrated range along a variable for a calibrated model, and power.

    python benchmarks/bench_variable_ranges.py --scores beta --variable score --kind error --n 5000 --reps 400
    python benchmarks/bench_variable_ranges.py --scores rare --variable score --kind rate --n 2000 --reps 400
    python benchmarks/bench_variable_ranges.py --scores beta --variable score --kind rate --n 5000 --shift 0.05

Each replication draws a calibrated log (y ~ Bernoulli(p) given everything; ``--shift d`` adds d to the true
probability where the variable is above its median: power) and computes the page's curves
(:func:`calibviz.variables.variable_curves`, span 0.75, 200 grid points, alpha 0.05). Two rules from the same
curves: the rule before (a range wherever the two pointwise bands do not overlap) and the page's
(:func:`calibviz.variables.disagreement_ranges`: grid points whose difference is beyond a calibrated model's,
adjusted for the whole curve).

Scores: ``beta`` p ~ Beta(2, 5); ``rare`` p = 10^U(-4, -1.5) (a handful of events per log); ``multiclass``
3 classes, softmax of normal logits (sd 1.5), y ~ Categorical(P) (kind error only); ``coin`` p = 0.1 or 0.9 at
random, y ~ Bernoulli(0.5) (miscalibrated, but observed and predicted rates agree along every variable: a rate
range there is a false reading of direction).
Variables: ``score`` logit(p) (or the first logit) plus N(0, 1) noise; ``noise`` N(0, 1) independent of
everything; ``age`` integers 18-90 independent of everything (ties).

Reported: the share of logs with any range (binomial standard error) for both rules, the mean of the curve's
p-value and the share of its null curves drawn by redrawing outcomes.

``--levels K``: a categorical column of K equally likely levels independent of everything (``--shift d`` adds d
to the true probability in the first level) and the per-level table of :func:`calibviz.variables.subgroup_table`:
the rule before (some level's 95% Wilson interval of its observed rate excludes its mean prediction) against the
page's (some level's ``p_adjusted <= 0.05``, the levels judged together).

    python benchmarks/bench_variable_ranges.py --levels 8 --scores beta --kind rate --n 2000 --reps 400
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calibviz.variables import disagreement_ranges, subgroup_table, variable_curves, variable_ranking  # noqa: E402


def draw(scores: str, variable: str, n: int, shift: float, rng: np.random.Generator):
    if scores == "multiclass":
        logits = rng.normal(size=(n, 3)) * 1.5
        prob = np.exp(logits)
        prob /= prob.sum(axis=1, keepdims=True)
        score = logits[:, 0]
    else:
        if scores == "coin":  # miscalibrated but not along any variable: rate 0.5 against 0.1 or 0.9
            prob = rng.choice([0.1, 0.9], n)
            x = {"score": rng.normal(size=n), "noise": rng.normal(size=n),
                 "age": np.round(rng.uniform(18, 90, n))}[variable]
            return x, (rng.uniform(size=n) < 0.5).astype(np.int64), prob
        prob = rng.beta(2, 5, n) if scores == "beta" else 10 ** rng.uniform(-4, -1.5, n)
        score = np.log(prob / (1 - prob))
    x = {"score": score + rng.normal(size=n), "noise": rng.normal(size=n),
         "age": np.round(rng.uniform(18, 90, n))}[variable]
    if scores == "multiclass":
        truth = prob.copy()
        if shift:
            up = x > np.median(x)
            truth[up, 0] = np.minimum(truth[up, 0] + shift, 1.0)
            truth[up] /= truth[up].sum(axis=1, keepdims=True)
        y = (rng.uniform(size=(n, 1)) > truth.cumsum(axis=1)).sum(axis=1)
        return x, y, prob
    truth = np.clip(prob + shift * (x > np.median(x)), 0.0, 1.0)
    return x, (rng.uniform(size=n) < truth).astype(np.int64), prob


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scores", choices=["beta", "rare", "multiclass", "coin"], default="beta")
    ap.add_argument("--variable", choices=["score", "noise", "age"], default="score")
    ap.add_argument("--kind", choices=["error", "rate"], default="error")
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--shift", type=float, default=0.0)
    ap.add_argument("--seed-base", type=int, default=0)
    ap.add_argument("--levels", type=int, default=0)
    ap.add_argument("--top-of", type=int, default=0,
                    help="draw this many noise variables and test the curves of the one with the largest VECE, "
                         "adjusted for them (family), as the page and the report do")
    args = ap.parse_args()
    before = after = redrawn = 0
    p_values = []
    t0 = time.perf_counter()
    for r in range(args.reps):
        rng = np.random.default_rng(args.seed_base + r)
        if args.levels:
            x, y, prob = draw(args.scores, args.variable, args.n, 0.0, rng)
            g = rng.integers(0, args.levels, args.n)
            if args.shift:
                truth = np.clip(prob + args.shift * (g == 0), 0.0, 1.0)
                y = (rng.uniform(size=args.n) < truth).astype(np.int64)
            t = subgroup_table(g, y, prob, kind=args.kind, n_resamples=0)
            before += bool(((t["observed_low"] > t["predicted"]) | (t["observed_high"] < t["predicted"])).any())
            after += bool((t["p_adjusted"] <= 0.05).any())
            p_values.append(t.attrs["p_value"])
            redrawn += t.attrs["method"] == "redraws"
            continue
        x, y, prob = draw(args.scores, args.variable, args.n, args.shift, rng)
        family = 1
        if args.top_of:
            import pandas as pd
            feats = pd.DataFrame({f"n{j}": rng.normal(size=args.n) for j in range(args.top_of)})
            top = variable_ranking(feats, y, prob, n_resamples=0)["feature"].iloc[0]
            x, family = feats[top].to_numpy(), args.top_of
        c = variable_curves(x, y, prob, kind=args.kind, span=0.75, alpha=0.05, family=family)
        a = c[c["curve"] == c["curve"].iloc[0]].reset_index(drop=True)
        b = c[c["curve"] != c["curve"].iloc[0]].reset_index(drop=True)
        before += bool(((a["lower"] > b["upper"]) | (b["lower"] > a["upper"])).any())
        after += len(disagreement_ranges(c)) > 0
        p_values.append(c.attrs["p_value"])
        redrawn += c.attrs["method"] == "redraws"
    reps = args.reps

    def rate(k):
        f = k / reps
        return f"{100 * f:.1f}% ± {100 * math.sqrt(f * (1 - f) / reps):.1f}"

    what = (f"{args.levels} levels" if args.levels else
            f"top of {args.top_of} noise variables" if args.top_of else args.variable)
    print(f"| {args.scores} | {what} | {args.kind} | {args.n:,} | {args.shift:g} | {reps} | {rate(before)} | "
          f"**{rate(after)}** | {np.mean(p_values):.3f} | {redrawn / reps:.0%} | "
          f"{(time.perf_counter() - t0) / reps:.2f} |")


if __name__ == "__main__":
    main()
