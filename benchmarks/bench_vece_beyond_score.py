"""Benchmark: how often the Variables page names a variable "beyond the score's miscalibration" when nothing
varies along it (the size of ``p_varies``, :func:`calibviz.variables.variable_ranking`), and how often a calibrated
model's reference (``p_value``) flags the same variables.

Run: nice -n 5 python benchmarks/bench_vece_beyond_score.py [--logs 300] [--rows 5000] [--laws shift multi ...]

Each log has three variables unrelated to the outcome (a uniform, a normal, a 4-level category); the model is
miscalibrated along its score only:

* ``shift``: binary, P(y = 1) = expit(logit p - 0.3), p ~ Beta(2, 5);
* ``under``: binary, expit(logit p + 0.4);
* ``weighted``: ``shift`` with log-normal(0, 0.7) weights;
* ``rare``: ``shift`` with p ~ Beta(0.5, 30);
* ``multi``: 4 classes, softmax of N(0, 1.5^2) logits, outcomes from the logits times 0.7 (over-confident);
* ``multical``: the same, calibrated.

Prints, per law and variable, the share of raw p-values at or below 0.05 and 0.2 with exact 95% intervals, for
``p_varies`` and for ``p_value``, and the share of logs where the page names some variable (``p_varies_adjusted``
<= 0.05 among those with ``p_adjusted`` <= 0.05).
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import expit, logit, softmax

from calibviz.variables import variable_ranking

LAWS = ("shift", "under", "weighted", "rare", "multi", "multical")


def _log(law: str, n: int, rng):
    X = pd.DataFrame({"age": rng.uniform(20, 80, n), "noise": rng.normal(size=n),
                      "site": rng.choice(list("abcd"), n)})
    w = None
    if law.startswith("multi"):
        z = rng.normal(size=(n, 4)) * 1.5
        truth = softmax(z * (1.0 if law == "multical" else 0.7), axis=1)
        y = (rng.uniform(size=(n, 1)) > truth.cumsum(axis=1)).sum(axis=1)
        return X, y, softmax(z, axis=1), w
    p = rng.beta(0.5, 30, n) if law == "rare" else rng.beta(2, 5, n)
    y = (rng.uniform(size=n) < expit(logit(p) + (0.4 if law == "under" else -0.3))).astype(int)
    if law == "weighted":
        w = rng.lognormal(0, 0.7, n)
    return X, y, p, w


def _share(hits: int, total: int) -> str:
    lo, hi = stats.binomtest(hits, total).proportion_ci(method="exact")
    return f"{hits / total:.3f} ({lo:.3f}-{hi:.3f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--logs", type=int, default=300)
    ap.add_argument("--rows", type=int, default=5000)
    ap.add_argument("--laws", nargs="+", default=list(LAWS), choices=LAWS)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    print("| law | variable | p_varies <= 0.05 | p_varies <= 0.2 | p_value <= 0.05 | page names a variable | seconds |")
    print("|---|---|---|---|---|---|---|")
    for k, law in enumerate(args.laws):
        rng = np.random.default_rng([args.seed, k])
        raw, named, t0 = {}, 0, time.perf_counter()
        for r in range(args.logs):
            X, y, prob, w = _log(law, args.rows, rng)
            rank = variable_ranking(X, y, prob, sample_weight=w, n_resamples=0, random_state=r)
            named += bool(((rank["p_adjusted"] <= 0.05) & (rank["p_varies_adjusted"] <= 0.05)).any())
            for f, pv, pc in zip(rank["feature"], rank["p_varies"], rank["p_value"]):
                raw.setdefault(f, []).append((pv, pc))
        took = time.perf_counter() - t0
        for f, v in raw.items():
            v = np.array(v, dtype=float)
            print(f"| {law} | {f} | {_share(int((v[:, 0] <= 0.05).sum()), len(v))} | "
                  f"{_share(int((v[:, 0] <= 0.2).sum()), len(v))} | {_share(int((v[:, 1] <= 0.05).sum()), len(v))} | "
                  f"{_share(named, args.logs)} | {took:.0f} |")


if __name__ == "__main__":
    main()
