"""How often a panel flags a calibrated model, with single verdicts and with the tests judged together (Holm).

Every log is drawn calibrated (``y ~ Bernoulli(p)``, ``p ~ Beta(2, 5)``; multiclass: ``y ~ Categorical(P)``,
``P ~ Dirichlet``), or miscalibrated for the power rows (true risk ``p ** gamma``). For each log the panel is
computed once; its ``p_value`` column gives the verdicts single tests would give (``p <= alpha``) and its
``p_adjusted`` column the panel's (Holm, :func:`calibviz.panel.family_verdicts`), so both rates come from the same
logs. Reported: the share of logs with at least one "evidence of miscalibration", with its binomial standard
error, and each metric's single rejection rate.

    python benchmarks/bench_family.py --logs 400 --n 2000           # default binary panel, in memory
    python benchmarks/bench_family.py --case headline --logs 400     # the Data page's three headline metrics
    python benchmarks/bench_family.py --case multiclass --logs 200
    python benchmarks/bench_family.py --case scan --logs 200 --n 20000
    python benchmarks/bench_family.py --gamma 1.3 --logs 200         # power: a model that over-predicts
"""
from __future__ import annotations

import argparse
import math
import time

import numpy as np
import pandas as pd

import calibviz as cv
from calibviz.panel import metric_panel

CASES = {
    "default": None,  # the default binary panel
    "headline": ("ece", "tce", "smooth_ece"),
    "full": ("ece", "ace", "mce", "rmsce", "debiased_ece", "tce", "smooth_ece", "brier", "brier_reliability",
             "log_loss", "hosmer_lemeshow", "spiegelhalter_z", "calibration_intercept"),
    "multiclass": None,
    "scan": None,
}


def one_log(case: str, n: int, gamma: float, rng, seed: int, n_reference: int, classes: int) -> pd.DataFrame:
    if case == "multiclass":
        P = rng.dirichlet(np.ones(classes), n)
        true = P ** gamma
        true /= true.sum(axis=1, keepdims=True)
        y = (rng.random(n)[:, None] > np.cumsum(true, axis=1)).sum(axis=1)
        return metric_panel(y, P, n_resamples=0, n_reference=n_reference, random_state=seed)
    p = rng.beta(2, 5, n)
    y = (rng.random(n) < p ** gamma).astype(np.int64)
    if case == "scan":
        n_reference = cv.panel.redraws_for(None, 0.05) if n_reference is None else n_reference
        return cv.scan(pd.DataFrame({"y": y, "p": p})).metrics(n_reference=n_reference, random_state=seed)
    metrics = CASES[case] or cv.panel.DEFAULT_BINARY_METRICS
    return metric_panel(y, p, metrics=metrics, n_resamples=0, n_reference=n_reference, random_state=seed)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--case", choices=sorted(CASES), default="default")
    ap.add_argument("--logs", type=int, default=400)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--gamma", type=float, default=1.0, help="true risk p ** gamma (1: calibrated)")
    ap.add_argument("--classes", type=int, default=3)
    ap.add_argument("--reference", type=int, default=None,
                    help="label redraws (default: metric_panel's, 200 raised to what the tests together need)")
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    single_any = holm_any = 0
    per_metric: dict[str, int] = {}
    t0 = time.perf_counter()
    for r in range(a.logs):
        t = one_log(a.case, a.n, a.gamma, rng, a.seed * 100_003 + r, a.reference, a.classes)
        tested = np.isfinite(t["p_value"].to_numpy(float))
        single = tested & (t["p_value"].to_numpy(float) <= a.alpha)
        single_any += bool(single.any())
        holm_any += bool((t["verdict"] == "evidence of miscalibration").any())
        for m in t.loc[single, "metric"]:
            per_metric[m] = per_metric.get(m, 0) + 1
    dt = (time.perf_counter() - t0) / a.logs

    def rate(k):
        q = k / a.logs
        return f"{100 * q:.1f}% (± {100 * math.sqrt(q * (1 - q) / a.logs):.1f})"

    redraws = int(t.loc[t["n_redraws"] > 0, "n_redraws"].max()) if (t["n_redraws"] > 0).any() else 0
    print(f"case {a.case}, n = {a.n}, gamma = {a.gamma:g}, {a.logs} logs, {redraws} redraws, {dt:.2f} s per log, "
          f"tests: {', '.join(t.loc[tested, 'metric'])}")
    print(f"  any single verdict at {a.alpha:g}: {rate(single_any)}")
    print(f"  any verdict of the panel (Holm): {rate(holm_any)}")
    print("  single rejection rates: " + ", ".join(f"{m} {rate(k)}" for m, k in sorted(per_metric.items())))


if __name__ == "__main__":
    main()
