"""How often a calibrated model's diagram leaves its band: binned (each bin's band vs the band for all bins) and
CORP (the paper's pointwise consistency band vs the simultaneous one), and the simultaneous band's power.

    python benchmarks/bench_bands.py --diagram binned --scores beta --n 2000 --bins 15 --reps 1000
    python benchmarks/bench_bands.py --diagram corp --scores beta --n 20000 --reps 400
    python benchmarks/bench_bands.py --diagram corp --scores beta --n 5000 --power 0.8 --reps 200

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
    ap.add_argument("--diagram", choices=("binned", "corp"), default="binned")
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
        p = scores(a.scores, a.n, rng)
        y = (rng.uniform(size=a.n) < p ** a.power).astype(np.int64)
        if a.diagram == "binned":
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
    old = "each bin's band" if a.diagram == "binned" else "pointwise band"
    new = "band for all bins" if a.diagram == "binned" else "simultaneous band"
    for name, k in ((old, before), (new, after)):
        e = k / a.reps
        print(f"{a.diagram} {a.scores} n={a.n} ({what}, {a.reps} logs): outside the {name} "
              f"{100 * e:.1f}% ± {100 * np.sqrt(e * (1 - e) / a.reps):.1f}")
    print(f"{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
