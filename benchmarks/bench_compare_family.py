"""How often Compare calls equal models different somewhere on its page: each difference alone, and judged together.

    python benchmarks/bench_compare_family.py --scenario overconfident --models 2 --reps 300
    python benchmarks/bench_compare_family.py --scenario exchangeable --models 3 --reps 200
    python benchmarks/bench_compare_family.py --scenario worse --reps 200          # power: B truly worse calibrated

Each replication draws one test set and scores ``--models`` models on it, then calls
:func:`calibviz.compare.compare_models` with the Compare page's defaults (the default metric set, 100 paired
bootstrap resamples, the first model as reference; the calibrated-model reference of the calibration errors with
200 label redraws, where the page draws what each metric's panel draws, 200 or more). The page computes one metric
at a time and judges them joined, which gives the same table (tests/test_compare.py). The same table gives both rules: ``verdict_alone`` (each difference read alone, the rule
before the family adjustment) and ``verdict`` (Holm over the differences shown together,
:func:`calibviz.compare.family_verdicts`).

Scenarios (the models are exchangeable, so every metric has the same population value for all of them):

- ``exchangeable``: y ~ Bernoulli(mean of k uniforms); model j predicts E[y | u_j] = u_j / k + (k - 1) / (2k),
  all perfectly calibrated;
- ``overconfident``: the same models with their logits doubled (all equally miscalibrated);
- ``worse`` (power, 2 models): A as in ``exchangeable``; B is A's own prediction with its logit times ``--factor``
  (over-confident, worse on every calibration error and on the scores): the share of replications in which B
  is called worse on at least one metric, and per metric.

Reported: the share of replications with at least one "better" or "worse" (binomial standard error), per rule,
and each metric's rate per rule.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calibviz.compare import compare_models  # noqa: E402
from calibviz.panel import DEFAULT_BINARY_METRICS, PanelConfig  # noqa: E402


def _logit_scaled(p: np.ndarray, factor: float) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-factor * np.log(p / (1.0 - p))))


def draw(scenario: str, n: int, k: int, rng: np.random.Generator, factor: float = 1.25) -> dict:
    """{model name: (y, p)} of one replication."""
    u = rng.uniform(size=(k, n))
    y = (rng.uniform(size=n) < u.mean(axis=0)).astype(np.int64)
    preds = u / k + (k - 1) / (2 * k)
    if scenario == "overconfident":
        preds = _logit_scaled(preds, 2.0)
    if scenario == "worse":
        preds = np.vstack([preds[0], _logit_scaled(preds[0], factor)])
    return {chr(ord("A") + j): (y, preds[j]) for j in range(preds.shape[0])}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenario", choices=("exchangeable", "overconfident", "worse"), default="overconfident")
    ap.add_argument("--models", type=int, default=2)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--resamples", type=int, default=100, help="the Compare page's default")
    ap.add_argument("--reference", type=int, default=200, help="label redraws of the calibration gate")
    ap.add_argument("--metrics", default=",".join(DEFAULT_BINARY_METRICS))
    ap.add_argument("--factor", type=float, default=1.25, help="``worse``: B's logit is A's times this")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    k = 2 if args.scenario == "worse" else args.models
    metrics = tuple(m for m in args.metrics.split(",") if m)
    call = ("worse",) if args.scenario == "worse" else ("better", "worse")
    any_alone = any_family = 0
    per_alone, per_family = dict.fromkeys(metrics, 0), dict.fromkeys(metrics, 0)
    n_tests = set()
    t0 = time.perf_counter()
    for rep in range(args.reps):
        models = draw(args.scenario, args.n, k, np.random.default_rng([args.seed, rep, 13]), args.factor)
        t = compare_models(models, metrics=metrics, config=PanelConfig(), n_resamples=args.resamples,
                           random_state=rep, n_reference=args.reference)
        t = t[~t["is_reference"]]
        alone, family = t["verdict_alone"].isin(call), t["verdict"].isin(call)
        any_alone += bool(alone.any())
        any_family += bool(family.any())
        for m in metrics:
            per_alone[m] += bool(alone[t["metric"] == m].any())
            per_family[m] += bool(family[t["metric"] == m].any())
        n_tests.update(t["n_tests"].unique().tolist())

    def rate(x: int) -> str:
        p = x / args.reps
        return f"{100 * p:.1f}% ± {100 * math.sqrt(p * (1 - p) / args.reps):.1f}"

    what = "B called worse" if args.scenario == "worse" else "any better/worse"
    print(f"scenario {args.scenario}, {k} models, n = {args.n}, {args.reps} replications, B = {args.resamples}, "
          f"differences judged together {max(n_tests)}, {time.perf_counter() - t0:.0f} s\n")
    print(f"| rule | {what} | " + " | ".join(metrics) + " |\n|---|---|" + "---|" * len(metrics))
    print(f"| each difference alone | {rate(any_alone)} | "
          + " | ".join(f"{100 * per_alone[m] / args.reps:.1f}%" for m in metrics) + " |")
    print(f"| judged together (Holm) | {rate(any_family)} | "
          + " | ".join(f"{100 * per_family[m] / args.reps:.1f}%" for m in metrics) + " |")


if __name__ == "__main__":
    main()
