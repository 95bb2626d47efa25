"""Benchmark: the calibrated-model reference (consistency resampling).

Run: python benchmarks/bench_consistency.py [--quick]
Times ``metrics.consistency_test`` against the loop a user would otherwise
write (draw y* ~ Bernoulli(p), call the metric), on the same data in the same
run, and prints a Markdown table with PASS/FAIL against the targets
(DESIGN.md §7 and the issue): 1000 resamples of ECE (Uniform 15 bins) at
N = 10^6 in under 5 s; TCE (PAVA-BC default bins) at N = 10^5 with 200
resamples in under 30 s. The exact per-row path is timed on fewer resamples
and extrapolated linearly (its cost per resample is constant).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calibviz.metrics import consistency_test, ece  # noqa: E402


def _data(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    p = rng.beta(2, 2, n)
    # mildly over-confident: true rates pulled towards 0.5
    y = (rng.random(n) < 0.5 + 0.8 * (p - 0.5)).astype(np.int8)
    return y, p


def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def _naive_loop(y, p, n_resamples, seed=0):
    """What a user would write: one Bernoulli draw per row and one metric call per resample."""
    rng = np.random.default_rng(seed)
    return np.array([ece((rng.random(p.shape[0]) < p).astype(np.int8), p) for _ in range(n_resamples)])


def _range(res) -> str:
    return f"null mean {res.null_mean:.5f}, 95% [{res.null_low:.5f}, {res.null_high:.5f}]"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="N = 10^5 for ECE, 50 TCE resamples")
    args = parser.parse_args()
    rows, verdicts = [], []

    n = 10**5 if args.quick else 10**6
    y, p = _data(n)
    R = 1000
    fast, t_fast = _timed(lambda: consistency_test(y, p, metric="ece", n_resamples=R, random_state=0))
    ok = t_fast < 5.0
    verdicts.append(ok)
    rows.append(
        f"| ECE Uniform(15), N={n:,}, {R} resamples, method=\"auto\" ({fast.method}) | {t_fast:.2f} | "
        f"< 5 s: {'PASS' if ok else 'FAIL'} | ECE {fast.statistic:.5f}, {_range(fast)}, p = {fast.p_value:.3f} |"
    )
    r_exact = 100

    def extrapolated(**kw):
        """(result, time for R resamples, measured time): set-up + per-resample cost from runs of 10 and 100."""
        _, t10 = _timed(lambda: consistency_test(y, p, metric="ece", n_resamples=10, random_state=1, **kw))
        res, t100 = _timed(lambda: consistency_test(y, p, metric="ece", n_resamples=r_exact, random_state=1, **kw))
        per = max(t100 - t10, 0.0) / (r_exact - 10)
        return res, t100 + per * (R - r_exact), t100

    exact, t_exact, m_exact = extrapolated(method="exact")
    rows.append(
        f"| same, method=\"exact\" (per-row draws, bins fitted once), extrapolated from {r_exact} | "
        f"{t_exact:.2f} (measured {m_exact:.2f} for {r_exact}) | | {_range(exact)} |"
    )
    r_naive = 20
    naive, t_naive = _timed(lambda: _naive_loop(y, p, r_naive))
    rows.append(
        f"| peer: loop of y* draws + `ece` calls, extrapolated from {r_naive} | "
        f"{t_naive * R / r_naive:.2f} (measured {t_naive:.2f}) | | speed-up of auto: "
        f"{t_naive * R / r_naive / t_fast:.0f}x |"
    )
    w = np.random.default_rng(2).uniform(0.5, 2.0, n)
    weighted, t_w, m_w = extrapolated(sample_weight=w)
    rows.append(
        f"| ECE with sample weights (always exact), extrapolated from {r_exact} | "
        f"{t_w:.2f} (measured {m_w:.2f} for {r_exact}) | | {_range(weighted)} |"
    )

    n_tce = 10**5
    R_tce = 50 if args.quick else 200
    y, p = _data(n_tce, seed=4)
    res, t_tce = _timed(lambda: consistency_test(y, p, metric="tce", n_resamples=R_tce, random_state=0))
    t_200 = t_tce * 200 / R_tce
    ok = t_200 < 30.0
    verdicts.append(ok)
    rows.append(
        f"| TCE PAVA-BC, N={n_tce:,}, {R_tce} resamples ({res.method}, PAVA-BC refitted per resample) | "
        f"{t_tce:.2f}{'' if R_tce == 200 else f' (x 200/{R_tce}: {t_200:.2f})'} | "
        f"< 30 s for 200: {'PASS' if ok else 'FAIL'} | TCE {res.statistic:.2f}%, null mean {res.null_mean:.2f}%, "
        f"95% [{res.null_low:.2f}, {res.null_high:.2f}], p = {res.p_value:.3f} |"
    )

    print("| work | calibviz (s) | target | values |")
    print("|---|---|---|---|")
    print("\n".join(rows))
    print()
    print("ALL PASS" if all(verdicts) else "SOME TARGET FAILED")


if __name__ == "__main__":
    main()
