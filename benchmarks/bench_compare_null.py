"""How often does Compare call two equally good models different? (false alarm rate of the paired verdict)

    python benchmarks/bench_compare_null.py [--n 2000] [--reps 200] [--resamples 200]

Two models scored on the same rows whose metrics have the same population
value, so that a sound test at level 5% says "better" or "worse" in at most
~5% of the replications:

- ``exchangeable`` (both calibrated): y ~ Bernoulli((u1 + u2) / 2) with u1, u2 ~ U(0, 1);
  model A predicts E[y | u1] = u1/2 + 1/4, model B E[y | u2] = u2/2 + 1/4.
  Both perfectly calibrated, same distribution of predictions: every metric
  (ECE, ACE, MCE, TCE, smECE, Brier, log loss, AUC) has the same population
  value for both.
- ``overconfident`` (exchangeable, equally miscalibrated): the same two models with logit x 2
  (equally miscalibrated).
- ``sharp_vs_coarse`` (both calibrated): A as above; B = E[y | u1 > 1/2] (two
  values, 0.375 and 0.625). Both perfectly calibrated (population ECE 0 for
  any bins), but a binned ECE of finite data is biased upward by the noise
  of many small bins (A), hardly at all for two large ones (B): the test of
  the *calibration errors* must not call A worse. Brier, log loss and AUC
  differ truly here (A discriminates better) and are not reported.

Each replication draws new data and compares A with B exactly as
:func:`calibviz.compare.compare_models` does (the same resamples for both
models, each metric's interval method); the percentile interval of the same
resampled differences is shown beside it for comparison. calibviz takes the
union of the basic and the percentile interval for every metric (both must
exclude 0; for the nearly unbiased scores they almost coincide): the basic interval alone
over-rejects exchangeable near-calibrated models, the percentile interval
alone over-rejects sharp vs coarse calibrated models; and both do when the
two models are calibrated with different sharpness, hence the second
condition of calibviz's verdict on calibration errors: the model found worse
must show evidence of miscalibration against its own calibrated reference
(consistency resampling, 200 label redraws). "basic alone" and "percentile
alone" are the bare intervals (no second condition).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calibviz import metrics as M  # noqa: E402
from calibviz.compare import (CALIBRATION_ERRORS, NO_VERDICT, _interval, _resampled, _span, calibration_gate,  # noqa: E402
                              difference_verdict)
from calibviz.metrics.resampling import interval_from_distribution  # noqa: E402
from calibviz.panel import BINARY_METRICS, PanelConfig  # noqa: E402

METRICS = ("ece", "ace", "mce", "tce", "smooth_ece", "brier", "log_loss", "auc")
CALIBRATION = ("ece", "ace", "mce", "tce", "smooth_ece")
SCENARIOS = ("exchangeable", "overconfident", "sharp_vs_coarse")
N_REFERENCE = 200  # label redraws of the calibrated-model reference (the dashboard's default)


def scenario(name: str, n: int, rng: np.random.Generator):
    u1, u2 = rng.uniform(size=n), rng.uniform(size=n)
    y = (rng.uniform(size=n) < (u1 + u2) / 2).astype(np.int64)
    a, b = u1 / 2 + 0.25, u2 / 2 + 0.25
    if name == "overconfident":
        sharpen = lambda p: 1 / (1 + np.exp(-2 * np.log(p / (1 - p))))  # noqa: E731
        a, b = sharpen(a), sharpen(b)
    elif name == "sharp_vs_coarse":
        b = np.where(u1 > 0.5, 0.625, 0.375)
    return y, a, b


def called_different(key: str, y, a, b, cfg: PanelConfig, n_resamples: int, seed: int) -> np.ndarray:
    """[calibviz's verdict, basic interval alone, percentile alone] say better/worse for model b against a."""
    if key == "auc":
        r = M.delong_test(y, a, b)
        return np.array([difference_verdict(r.low, r.high, key) in ("better", "worse")] * 3)
    spec = BINARY_METRICS[key]
    mat = _resampled(spec, cfg, [(y, a, None), (y, b, None)], n_resamples, seed, lambda k: None)
    est = float(spec.compute(y, b, None, cfg) - spec.compute(y, a, None, cfg))
    dist = mat[1] - mat[0]
    basic = interval_from_distribution(dist, est, method="basic")
    pct = interval_from_distribution(dist, est, method="percentile")
    excludes0 = lambda lo, hi: bool(lo > 0 or hi < 0)  # noqa: E731
    verdict = difference_verdict(*_interval(dist, est, 0.95, _span(key)), key)
    if verdict in ("better", "worse") and key in CALIBRATION_ERRORS:  # as compare_models: the worse model must
        worse = b if verdict == "worse" else a                          # show evidence of miscalibration itself
        if calibration_gate(key, y, worse, None, cfg, N_REFERENCE, seed) > cfg.alpha:
            verdict = "no clear difference"
    out = [verdict in ("better", "worse"), excludes0(basic.low, basic.high), excludes0(pct.low, pct.high)]
    return np.array(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--resamples", type=int, default=200)
    ap.add_argument("--metrics", default=",".join(METRICS), help="comma-separated subset of " + ",".join(METRICS))
    ap.add_argument("--scenarios", default=",".join(SCENARIOS), help="comma-separated subset of " + ",".join(SCENARIOS))
    args = ap.parse_args()
    wanted = [m for m in args.metrics.split(",") if m]
    scenarios = [x for x in args.scenarios.split(",") if x]
    cfg = PanelConfig()
    t0 = time.perf_counter()
    print(f"n = {args.n}, {args.reps} replications, B = {args.resamples}, 95% intervals; share of replications "
          "in which B is called better or worse than A (target: at most ~5%; Monte Carlo s.e. ~"
          f"{100 * np.sqrt(0.05 * 0.95 / args.reps):.1f} points at 5%)\n")
    print("| scenario | metric | calibviz's interval | rate | basic alone | percentile alone |\n|---|---|---|---|---|---|")
    for name in SCENARIOS:
        if name not in scenarios:
            continue
        keys = [k for k in (CALIBRATION if name == "sharp_vs_coarse" else METRICS) if k in wanted]
        hits = {k: np.zeros(3) for k in keys}
        for rep in range(args.reps):
            y, a, b = scenario(name, args.n, np.random.default_rng([rep, 11]))
            for k in keys:
                hits[k] += called_different(k, y, a, b, cfg, args.resamples, rep)
        for k in keys:
            method = "no verdict" if k in NO_VERDICT else {"auc": "DeLong (paired)"}.get(k, "basic ∪ percentile")
            chosen, basic, pct = 100 * hits[k] / args.reps
            alone = " | |" if k == "auc" else f" {basic:.1f}% | {pct:.1f}% |"
            print(f"| {name} | {BINARY_METRICS[k].label} | {method} | {chosen:.1f}% |{alone}", flush=True)
    print(f"\n{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
