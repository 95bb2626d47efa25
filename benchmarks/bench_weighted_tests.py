"""Size of the weighted goodness-of-fit tests on calibrated models, by simulation.

Run: nice -n 5 python benchmarks/bench_weighted_tests.py [--reps 300] [--rows 20000] [--laws ...] [--scores ...]

Hosmer-Lemeshow, Spiegelhalter's Z and the Wald tests of the calibration intercept and slope, on logs of a
calibrated model (p ~ Beta(2, 5), y ~ Bernoulli(p)) with sample weights of several laws: the share of logs
flagged at the 5% level, with a 95% Clopper-Pearson interval. A weight is one observation's (calibviz's
convention: each row's outcome is drawn once), so the tests' variances carry w^2; reading the weights as counts
of identical rows (variances with w) flagged up to 100% of these logs (the run before the fix is in
benchmarks/README.md).

``--scores`` draws the scores from other laws, rounded as score logs often are: near 0 with two decimals, a third
of the scores are exactly 0.00 (the offset fit of the intercept once diverged on them: every log flagged).

Prints a Markdown table.
"""
from __future__ import annotations

import argparse
import sys
import warnings

import numpy as np
from scipy import stats

import calibviz as cv

LAWS = {
    "none": lambda rng, p: None,
    "lognormal(0, 0.7)": lambda rng, p: rng.lognormal(0.0, 0.7, p.size),
    "exponential": lambda rng, p: rng.exponential(size=p.size),
    "grows with p": lambda rng, p: np.exp(4.0 * p) * rng.lognormal(0.0, 0.5, p.size),
    "lognormal(0, 1.5)": lambda rng, p: rng.lognormal(0.0, 1.5, p.size),
}
SCORES = {
    "beta(2, 5)": lambda rng, n: rng.beta(2, 5, n),
    "beta(2, 5), 2 decimals": lambda rng, n: np.round(rng.beta(2, 5, n), 2),
    "beta(0.3, 5), 2 decimals": lambda rng, n: np.round(rng.beta(0.3, 5, n), 2),  # ~36% exactly 0
    "beta(5, 0.3), 2 decimals": lambda rng, n: np.round(rng.beta(5, 0.3, n), 2),  # ~36% exactly 1
}
TESTS = ("hosmer_lemeshow", "spiegelhalter_z", "calibration_intercept", "calibration_slope")


def _p_values(y, p, w) -> list[float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        fit = cv.metrics.calibration_intercept_slope(y, p, sample_weight=w)
    return [cv.metrics.hosmer_lemeshow(y, p, sample_weight=w).p_value,
            cv.metrics.spiegelhalter_z(y, p, sample_weight=w).p_value, fit.intercept_p_value, fit.slope_p_value]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--rows", type=int, default=20_000)
    ap.add_argument("--laws", nargs="+", default=list(LAWS), choices=list(LAWS))
    ap.add_argument("--scores", nargs="+", default=["beta(2, 5)"], choices=list(SCORES))
    ap.add_argument("--seed-base", type=int, default=1000)
    args = ap.parse_args(argv)
    print(f"Calibrated logs of {args.rows} rows, {args.reps} per weight law (seeds {args.seed_base} + r):\n")
    print("| scores | weights | " + " | ".join(TESTS) + " |")
    print("|---|---|" + "---|" * len(TESTS))
    for scores, law in ((s, w) for s in args.scores for w in args.laws):
        flagged = np.zeros(len(TESTS), dtype=int)
        for r in range(args.reps):
            rng = np.random.default_rng(args.seed_base + r)
            p = SCORES[scores](rng, args.rows)
            y = (rng.uniform(size=args.rows) < p).astype(int)
            flagged += np.asarray(_p_values(y, p, LAWS[law](rng, p))) <= 0.05
        cells = []
        for f in flagged:
            ci = stats.binomtest(int(f), args.reps).proportion_ci(0.95)
            cells.append(f"{f / args.reps:.3f} ({ci.low:.3f} - {ci.high:.3f})")
        print(f"| {scores} | {law} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
