"""Benchmark: CORP curve and decomposition, consistency bands, AUC with DeLong's interval.

Run: nice -n 5 python benchmarks/bench_corp.py [--quick]
Times calibviz against the peers a user would otherwise call, on the same
data in the same run, checks that the values agree, and prints a Markdown
table with ratios and PASS/FAIL against the targets of issue #12 (DESIGN.md
§7): CORP curve + decomposition at N = 10^6 in under 1 s (peer:
model-diagnostics' ``decompose``, isotonic regression by scikit-learn);
consistency bands with 200 resamples at N = 10^5 in under 10 s (peer: the
loop a user would write, y* ~ Bernoulli(p) and scikit-learn's
IsotonicRegression per resample, timed on 20 resamples and extrapolated);
AUC with DeLong interval at N = 10^6 in under 2 s (peer: scikit-learn's
``roc_auc_score``, which gives no interval). Each timing is the best of 3.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calibviz.metrics import auc_delong, corp_decomposition, corp_table  # noqa: E402


def _data(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    p = rng.beta(2, 3, n)
    y = (rng.random(n) < 0.5 + 0.8 * (p - 0.5)).astype(np.int8)  # mildly over-confident
    return y, p


def _best(fn, repeat: int = 3):
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return out, best


def _naive_bands(y, p, n_resamples, seed=0):
    """A user's consistency band: redraw y* ~ Bernoulli(p), refit isotonic regression, take quantiles."""
    from sklearn.isotonic import IsotonicRegression

    rng = np.random.default_rng(seed)
    xs = np.unique(p)
    fits = np.empty((n_resamples, xs.shape[0]))
    for r in range(n_resamples):
        ystar = (rng.random(p.shape[0]) < p).astype(float)
        fits[r] = IsotonicRegression(out_of_bounds="clip").fit(p, ystar).predict(xs)
    return np.quantile(fits, [0.05, 0.95], axis=0)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="10x smaller data, 50 band resamples")
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    rows = []

    # 1. CORP curve + decomposition, N = 10^6
    from model_diagnostics.scoring import SquaredError, decompose

    n = 10**6 // scale
    y, p = _data(n)
    (d, t_dec) = _best(lambda: corp_decomposition(y, p))
    (tab, t_tab) = _best(lambda: corp_table(y, p, bands=None))
    ref, t_md = _best(lambda: decompose(y.astype(float), p, scoring_function=SquaredError()), repeat=1)
    r = ref.row(0, named=True)
    diff = max(abs(d.mcb - r["miscalibration"]), abs(d.dsc - r["discrimination"]), abs(d.unc - r["uncertainty"]))
    rows.append((f"CORP decomposition (Brier), N = {n:,}", t_dec, "model-diagnostics decompose", t_md,
                 f"max abs diff {diff:.1e}", t_dec < 1.0))
    rows.append((f"CORP curve table (PAV + decomposition), N = {n:,}", t_tab, "model-diagnostics decompose", t_md,
                 f"{tab.attrs['n_blocks']} blocks", t_tab < 1.0))

    # 2. consistency bands, 200 resamples, N = 10^5
    n = 10**5 // scale
    R = 50 if args.quick else 200
    y, p = _data(n, 1)
    for resample_x in (True, False):
        tb, t_band = _best(lambda: corp_table(y, p, bands=("consistency",), n_resamples=R, random_state=0,
                                              resample_predictions=resample_x), repeat=1)
        label = "predictions resampled (reliabilitydiag)" if resample_x else "predictions fixed"
        if resample_x:
            _, t_naive20 = _best(lambda: _naive_bands(y, p, 20), repeat=1)
            t_naive = t_naive20 * R / 20
        rows.append((f"consistency band, {R} resamples, N = {n:,}, {label}", t_band,
                     f"loop of sklearn IsotonicRegression (20 timed, x{R // 20})", t_naive, "", t_band < 10.0))

    # 3. AUC with DeLong interval, N = 10^6
    from sklearn.metrics import roc_auc_score

    n = 10**6 // scale
    y, p = _data(n, 2)
    a, t_auc = _best(lambda: auc_delong(y, p))
    sk, t_sk = _best(lambda: roc_auc_score(y, p))
    rows.append((f"AUC + DeLong 95% interval, N = {n:,}", t_auc, "sklearn roc_auc_score (no interval)", t_sk,
                 f"AUC abs diff {abs(a.auc - sk):.1e}", t_auc < 2.0))

    print("| work | calibviz (s) | peer | peer (s) | peer / calibviz | check | target |")
    print("|---|---|---|---|---|---|---|")
    for work, t, peer, tp, check, ok in rows:
        print(f"| {work} | {t:.3f} | {peer} | {tp:.3f} | {tp / t:.1f}x | {check} | {'PASS' if ok else 'FAIL'} |")


if __name__ == "__main__":
    main()
