"""How often a calibrated model's diagram leaves its band: binned (each bin's band vs the band for all bins) and
CORP (the paper's pointwise consistency band vs the simultaneous one), and the simultaneous band's power.

    python benchmarks/bench_bands.py --diagram binned --scores beta --n 2000 --bins 15 --reps 1000
    python benchmarks/bench_bands.py --diagram corp --scores beta --n 20000 --reps 400
    python benchmarks/bench_bands.py --diagram corp --scores beta --n 5000 --power 0.8 --reps 200
    python benchmarks/bench_bands.py --diagram grid --classes 10 --n 5000 --reps 200
    python benchmarks/bench_bands.py --diagram classes --classes 10 --n 5000 --reps 200 [--metric top_label_ece]
    python benchmarks/bench_bands.py --diagram mean-gap --scores beta --n 2000 --reps 1000

``grid``: the multiclass small multiples (class-wise and per predicted class), some bin of some panel outside its
bin's own band (before) or the band at alpha / K (now). ``classes``: the class ranking, the rule before (a class
named "the worst calibrated class" whatever its value: always) against some class with ``p_adjusted <= alpha``
(:func:`calibviz.multiclass.class_ranking` with ``class_reference_draws(K)`` redraws). ``mean-gap``: the Data page's
sentence, before (a direction whenever the gap is not 0.0 points) against :func:`calibviz.overview.mean_gap_test`.
Multiclass logs: softmax of N(0, s^2) logits (s = 1.5 for K <= 3, else 2), y ~ Categorical(P).

Each replication draws a calibrated log (p from ``--scores``, y ~ Bernoulli(p); ``--power g`` draws y ~
Bernoulli(p^g) instead: a miscalibrated model) and records whether the observed rates (binned: uniform bins, the
table of :func:`calibviz.reliability_table`) or the PAV curve (CORP: :func:`calibviz.metrics.corp_table`,
``--resamples`` curves, 100 as the dashboard) leave the band somewhere, at ``--alpha`` (0.05: 95% bands).

Scores: ``beta`` Beta(2, 5); ``uniform`` U(0, 1); ``rare`` 10^U(-4, -1.5); ``ties`` Beta(2, 5) rounded to 2
decimals. Reported: the share of logs outside each band (binomial standard error).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import calibviz as cv  # noqa: E402
from calibviz.binning import Uniform  # noqa: E402
from calibviz.metrics import corp_table  # noqa: E402
from calibviz.multiclass import (class_ranking, class_reference_draws, classwise_tables,  # noqa: E402
                                 per_class_top_label_tables)
from calibviz.overview import mean_gap_test  # noqa: E402


def scores(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "beta":
        return rng.beta(2, 5, n)
    if kind == "uniform":
        return rng.uniform(size=n)
    if kind == "rare":
        return 10 ** rng.uniform(-4, -1.5, n)
    if kind == "ties":
        return np.round(rng.beta(2, 5, n), 2)
    raise SystemExit(f"unknown --scores {kind!r}")


def outside(value, low, high) -> bool:
    return bool(((value < low - 1e-12) | (value > high + 1e-12)).any())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--diagram", choices=("binned", "corp", "grid", "classes", "mean-gap"), default="binned")
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--metric", default="classwise_ece")
    ap.add_argument("--scores", default="beta")
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--bins", type=int, default=15)
    ap.add_argument("--resamples", type=int, default=100)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--power", type=float, default=1.0)
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    before = after = 0
    t0 = time.perf_counter()
    for r in range(a.reps):
        if a.diagram in ("grid", "classes"):
            K = a.classes
            logits = rng.normal(size=(a.n, K)) * (1.5 if K <= 3 else 2.0)
            P = np.exp(logits)
            P /= P.sum(axis=1, keepdims=True)
            y = (rng.uniform(size=a.n)[:, None] > P.cumsum(axis=1)).sum(axis=1).clip(0, K - 1)
            if a.diagram == "grid":
                tabs = [*classwise_tables(y, P, alpha=a.alpha).values(),
                        *per_class_top_label_tables(y, P, alpha=a.alpha).values()]
                before += any(outside(t.obs_rate, t.accept_low, t.accept_high) for t in tabs)
                after += any(outside(t.obs_rate, t.band_low, t.band_high) for t in tabs)
            else:
                t = class_ranking(y, P, metric=a.metric, n_resamples=0, random_state=r,
                                  n_reference=class_reference_draws(K, a.alpha))
                before += 1
                after += bool((t["p_adjusted"] <= a.alpha).any())
            continue
        p = scores(a.scores, a.n, rng)
        y = (rng.uniform(size=a.n) < p ** a.power).astype(np.int64)
        if a.diagram == "mean-gap":
            before += round(abs(p.mean() - y.mean()) * 100, 1) > 0
            after += mean_gap_test(y, p, random_state=r).p_value <= a.alpha
        elif a.diagram == "binned":
            t = cv.reliability_table(y, p, binning=Uniform(a.bins), alpha=a.alpha, test=None)
            before += outside(t.obs_rate, t.accept_low, t.accept_high)
            after += outside(t.obs_rate, t.band_low, t.band_high)
        else:
            kw = dict(n_resamples=a.resamples, level=1 - a.alpha, random_state=r)
            tp = corp_table(y, p, **kw)
            ts = corp_table(y, p, coverage="simultaneous", **kw)
            before += outside(tp.cep, tp.consistency_low, tp.consistency_high)
            after += outside(ts.cep, ts.consistency_low, ts.consistency_high)
    what = "calibrated" if a.power == 1 else f"y ~ Bernoulli(p^{a.power:g})"
    old, new = {"binned": ("each bin's band", "band for all bins"), "corp": ("pointwise band", "simultaneous band"),
                "grid": ("each bin's band", "band at alpha / K"),
                "classes": ("'worst class' named", "class beyond chance"),
                "mean-gap": ("direction by sign", "direction beyond chance")}[a.diagram]
    if a.diagram in ("grid", "classes"):
        a.scores = f"K={a.classes}" + (f" {a.metric}" if a.diagram == "classes" else "")
    for name, k in ((old, before), (new, after)):
        e = k / a.reps
        print(f"{a.diagram} {a.scores} n={a.n} ({what}, {a.reps} logs): {name} "
              f"{100 * e:.1f}% ± {100 * np.sqrt(e * (1 - e) / a.reps):.1f}")
    print(f"{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
