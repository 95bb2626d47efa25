"""Size of the scans' verdicts on calibrated logs at large N: does the 2^-16 score grid, the bucket-level
calibrated-model reference or the weighted draws of :mod:`calibviz.scan.reference` raise false alarms where
``bench_scan_reference.py`` (2x10^4 rows, exact blocks) does not go: above 2^20 rows, on tied scores, in a
narrow score range, with heavy-tailed weights and rare events?

Each replication writes a calibrated log (y ~ Bernoulli(p) exactly) to Parquet and runs what
``calibviz metrics FILE --engine duckdb`` runs: ``cv.scan(path).metrics(None, n_reference=R, random_state=seed)``
(the default panel, its redraws, no bootstrap: intervals do not change verdicts). A log is flagged when the
panel's Holm-adjusted verdict says "evidence" for any metric (what the command prints); the raw per-metric rates
are reported too. ``--metrics tce`` runs TCE alone (its unadjusted verdict: the Test-based page's headline).

    python benchmarks/bench_scan_size_large.py --regime ties --rows 1000000 --reps 100
    python benchmarks/bench_scan_size_large.py --regime rare_weighted --rows 1200000 --reps 100 --metrics tce

Prints one line per replication and, at the end, the rates with exact (Clopper-Pearson) 95% intervals.
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np
import pandas as pd
from scipy.stats import beta as beta_dist

import calibviz as cv
from calibviz.panel import DEFAULT_BINARY_METRICS, DEFAULT_MULTICLASS_METRICS, redraws_for

#: Tied scores, some on uniform bin edges (1/15, 0.2, 1/3, 0.8) and at exactly 0 and 1 (labels then certain).
TIES = np.array([0.0, 1 / 15, 0.1, 0.2, 0.25, 0.3, 1 / 3, 0.4, 0.45, 0.5, 0.6, 2 / 3, 0.75, 0.8, 0.9, 1.0])
REGIMES = ("beta", "ties", "narrow", "narrow_ties", "rare", "weighted", "weighted_ties", "rare_weighted",
           "rare_mix_weighted", "multiclass")


def calibrated_log(regime: str, n: int, rng, weights: str = "lognormal") -> pd.DataFrame:
    """A calibrated log of ``n`` rows: scores of the regime, labels drawn from them, weights (log-normal(0, 1.5)
    or exponential) where the regime has them."""
    if regime == "multiclass":
        P = rng.dirichlet(np.full(4, 0.7), n)
        y = (P.cumsum(axis=1) > rng.uniform(size=(n, 1))).argmax(axis=1)
        return pd.DataFrame({"label": np.array(list("abcd"))[y], **{f"p_{c}": P[:, i] for i, c in enumerate("abcd")}})
    w = None
    if regime in ("beta", "weighted"):
        p = rng.beta(2, 5, n)
    elif regime in ("ties", "weighted_ties"):
        share = np.ones(TIES.size)
        share[[0, -1]] = 0.3
        p = rng.choice(TIES, n, p=share / share.sum())
    elif regime == "narrow":
        p = rng.uniform(0.30, 0.31, n)
    elif regime == "narrow_ties":
        p = rng.choice(np.array([0.30, 0.3025, 0.305, 0.3075, 0.31]), n)
    elif regime == "rare_mix_weighted":  # half rare events, half Beta(2, 5)
        p = np.where(rng.uniform(size=n) < 0.5, 10.0 ** rng.uniform(-5.0, -1.0, n), rng.beta(2, 5, n))
    else:  # rare events: scores from 1e-5 (weighted) or 1e-4 to 1e-1.5
        p = 10.0 ** (rng.uniform(-5.0, -1.0, n) if regime == "rare_weighted" else rng.uniform(-4.0, -1.5, n))
    if _weighted(regime):
        w = rng.lognormal(0.0, 1.5, n) if weights == "lognormal" else rng.exponential(size=n)
    out = pd.DataFrame({"y": (rng.uniform(size=n) < p).astype(np.int8), "p": p})
    if w is not None:
        out["w"] = w
    return out


def _weighted(regime: str) -> bool:
    return regime.startswith("weighted") or regime.endswith("_weighted")


def clopper_pearson(k: int, n: int) -> tuple[float, float]:
    lo = beta_dist.ppf(0.025, k, n - k + 1) if k else 0.0
    hi = beta_dist.ppf(0.975, k + 1, n - k) if k < n else 1.0
    return float(lo), float(hi)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--regime", choices=REGIMES, required=True)
    ap.add_argument("--rows", type=float, default=1e6)
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--seed-base", type=int, default=0)
    ap.add_argument("--metrics", default="", help="comma-separated metrics (default: the default panel)")
    ap.add_argument("--redraws", type=int, default=0, help="calibrated-model redraws (default: the panel's)")
    ap.add_argument("--weights", choices=("lognormal", "exponential"), default="lognormal",
                    help="the weights of the weighted regimes")
    args = ap.parse_args()
    n = int(args.rows)
    keys = (tuple(args.metrics.split(",")) if args.metrics else
            DEFAULT_MULTICLASS_METRICS if args.regime == "multiclass" else DEFAULT_BINARY_METRICS)
    redraws = args.redraws or redraws_for(keys, 0.05)
    flagged, raw = 0, {}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "log.parquet")
        for r in range(args.reps):
            seed = args.seed_base + r
            calibrated_log(args.regime, n, np.random.default_rng(seed), args.weights).to_parquet(path)
            start = time.perf_counter()
            weight = "w" if _weighted(args.regime) else None
            panel = cv.scan(path, weight=weight).metrics(list(keys) if args.metrics else None, n_reference=redraws,
                                                         random_state=seed)
            said = panel["verdict"].astype(str).str.startswith("evidence")  # not "no evidence of ..."
            flagged += bool(said.any())
            for key, p in zip(panel["metric"], panel["p_value"]):
                if np.isfinite(p):
                    raw.setdefault(key, []).append(p <= 0.05)
            print(f"seed {seed}: {time.perf_counter() - start:.1f} s, flagged {bool(said.any())}", flush=True)
    lo, hi = clopper_pearson(flagged, args.reps)
    print(f"\n{args.regime}, {n:,} rows, {args.reps} logs, {redraws} redraws: any verdict of evidence "
          f"{flagged}/{args.reps} = {flagged / args.reps:.1%} (95% CI {lo:.1%}-{hi:.1%})")
    for key, hits in raw.items():
        lo, hi = clopper_pearson(int(sum(hits)), len(hits))
        print(f"  {key}: raw p <= 0.05 in {sum(hits)}/{len(hits)} = {np.mean(hits):.1%} ({lo:.1%}-{hi:.1%})")


if __name__ == "__main__":
    main()
