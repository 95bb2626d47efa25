"""Benchmark: smooth ECE vs relplot.smECE, and the bootstrap of ECE.

Run: python benchmarks/bench_smooth.py [--quick]
Times calibviz and the peer in the same run on the same data and prints a
Markdown table (values, absolute difference, time ratio). Targets
(DESIGN.md §7): smECE at N = 10^7 >= 10x faster than relplot.smECE with the
same value to 1e-3.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calibviz.metrics import bootstrap, ece, smooth_ece  # noqa: E402


def _data(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    p = rng.beta(2, 2, n)
    # mildly over-confident: true rates pulled towards 0.5
    y = (rng.random(n) < 0.5 + 0.8 * (p - 0.5)).astype(np.float64)
    return y, p


def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="N = 10^5 and 10^6 only, 200 resamples")
    args = parser.parse_args()
    import relplot

    sizes = [10**5, 10**6] if args.quick else [10**6, 10**7]
    rows = []
    for n in sizes:
        y, p = _data(n)
        # cold: the first call on this data (allocation, page faults included); warm: best of 3
        ours, t_cold = _timed(lambda: smooth_ece(y, p))
        t_warm = min(_timed(lambda: smooth_ece(y, p))[1] for _ in range(3))
        theirs, t_peer = _timed(lambda: relplot.smECE(p, y))
        rows.append(
            f"| smECE, N={n:.0e} | {t_cold:.3f} (warm {t_warm:.3f}) | relplot.smECE | {t_peer:.2f} "
            f"| {t_peer / t_cold:.0f}x | {ours:.5f} vs {theirs:.5f}, diff {abs(ours - theirs):.1e} |"
        )

    n_boot = 10**5
    n_res = 200 if args.quick else 1000
    y, p = _data(n_boot, seed=1)
    res, t_boot = _timed(lambda: bootstrap(ece, y, p, n_resamples=n_res, random_state=0))
    res_w, t_boot_w = _timed(lambda: bootstrap(ece, y, p, n_resamples=n_res, random_state=0, resample="weights"))
    rows.append(
        f"| bootstrap ECE (15 uniform bins), {n_res} resamples, N={n_boot:.0e} | {t_boot:.2f} | | | | "
        f"ECE {res.estimate:.4f}, 95% CI [{res.low:.4f}, {res.high:.4f}] |"
    )
    rows.append(
        f"| same, resample=\"weights\" (multinomial counts as sample_weight) | {t_boot_w:.2f} | | | | "
        f"CI [{res_w.low:.4f}, {res_w.high:.4f}] |"
    )
    print("| work | calibviz (s) | peer | peer (s) | speed-up | values |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
