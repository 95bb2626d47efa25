"""Recalibration speed: fitting and cross-fitting every method at n = 10^6, against the peers a user would call.

Run: ``nice -n 5 python benchmarks/bench_recalibration.py [--n 1000000] [--classes 100] [--quick]``.
Targets (issue #15): fit and 5-fold cross-fit each under 5 s at n = 10^6 binary; temperature scaling at
10^6 x 100 classes under 10 s. Peers on the same data: scikit-learn (CalibratedClassifierCV sigmoid on
logit(p), IsotonicRegression), statsmodels Logit, betacal, venn-abers (O(k^2) worst case: timed at a smaller n
and said so), scipy minimize_scalar for temperature.
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np
from scipy.special import expit, logit, softmax

from calibviz.recalibration import cross_fit, get_recalibrator


CPU = {}  # label -> CPU seconds (user + system, all threads) of the last timed call with that label


def timed(fn, repeat=1, label=None):
    """Best wall time over ``repeat`` calls; the CPU time of that call goes to CPU[label] (on the shared machine
    the wall time grows with the other jobs' load, the CPU time much less)."""
    best = np.inf
    out = None
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        wall = time.perf_counter() - t
        if wall < best:
            best = wall
            if label is not None:
                CPU[label] = time.process_time() - c
    return best, out


def binary_data(n, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.001, 0.999, n)
    y = (rng.uniform(size=n) < expit(0.3 + 1.5 * logit(p))).astype(int)
    return p, y


def peers(method, p, y):
    """(name, seconds) of the peer that fits the same map, or None."""
    if method == "platt":
        from sklearn.base import BaseEstimator, ClassifierMixin
        from sklearn.calibration import CalibratedClassifierCV
        from sklearn.frozen import FrozenEstimator

        class Scores(ClassifierMixin, BaseEstimator):
            def fit(self, X, y):
                self.classes_ = np.array([0, 1])
                return self

            def decision_function(self, X):
                return logit(X[:, 0])

            def predict(self, X):
                return (X[:, 0] > 0.5).astype(int)

        est = Scores().fit(p[:, None], y)
        t, _ = timed(label="peer", fn=lambda: CalibratedClassifierCV(FrozenEstimator(est), method="sigmoid", ensemble=False)
                     .fit(p[:, None], y))
        return "sklearn CalibratedClassifierCV(sigmoid)", t
    if method == "isotonic":
        from sklearn.isotonic import IsotonicRegression

        t, _ = timed(lambda: IsotonicRegression(out_of_bounds="clip").fit(p, y), label="peer")
        return "sklearn IsotonicRegression", t
    if method == "beta":
        from betacal import BetaCalibration

        t, _ = timed(lambda: BetaCalibration("abm").fit(p, y), label="peer")
        return "betacal BetaCalibration(abm)", t
    if method == "temperature":
        import statsmodels.api as sm

        t, _ = timed(lambda: sm.Logit(y, logit(p)[:, None]).fit(disp=0), label="peer")
        return "statsmodels Logit (no intercept)", t
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--classes", type=int, default=100)
    ap.add_argument("--quick", action="store_true", help="n = 10^5 and 10^5 x 20")
    args = ap.parse_args()
    n = 100_000 if args.quick else args.n
    p, y = binary_data(n)
    print(f"binary, n = {n:,}")
    print(f"load average at start: {os.getloadavg()[0]:.1f} (2 cores)")
    print(f"{'method':20s} {'fit wall/CPU':>14s} {'cross-fit (5) wall/CPU':>24s}  peer")
    for method in ("platt", "isotonic", "beta", "temperature", "histogram_binning", "venn_abers"):
        t_fit, _ = timed(lambda: get_recalibrator(method).fit(p, y), label="fit")
        t_cf, _ = timed(lambda: cross_fit(method, y, p, n_splits=5), label="cf")
        peer = peers(method, p, y)
        text = (f"{peer[0]} {peer[1]:.2f} s / CPU {CPU['peer']:.2f} s (fit ratio {peer[1] / t_fit:.2f}x)"
                if peer else "")
        print(f"{method:20s} {t_fit:6.2f}s/{CPU['fit']:5.2f}s {t_cf:15.2f}s/{CPU['cf']:6.2f}s  {text}", flush=True)
    # venn-abers package: O(k^2) in the worst case, so at a smaller n
    from venn_abers import VennAbers

    m = 20_000
    ps, ys = p[:m], y[:m]
    t_peer, _ = timed(lambda: VennAbers().fit(np.column_stack([1 - ps, ps]), ys))
    t_ours, _ = timed(lambda: get_recalibrator("venn_abers").fit(ps, ys))
    print(f"venn_abers at n = {m:,}: calibviz {t_ours:.3f} s, venn-abers package {t_peer:.2f} s "
          f"(ratio {t_peer / t_ours:.0f}x)")

    K = 20 if args.quick else args.classes
    rng = np.random.default_rng(1)
    Z = rng.normal(size=(n, K)).astype(np.float64) * 2
    yk = (Z + rng.gumbel(size=(n, K))).argmax(1)  # labels ~ softmax(Z)
    P = softmax(1.7 * Z, axis=1)
    del Z
    t_fit, mt = timed(lambda: get_recalibrator("temperature").fit(P, yk), label="fit")
    print(f"temperature, {n:,} x {K}: fit {t_fit:.2f} s / CPU {CPU['fit']:.2f} s (T = {mt.temperature:.10f})",
          flush=True)
    t_cf, cf = timed(lambda: cross_fit("temperature", yk, P, n_splits=5), label="cf")
    print(f"temperature, {n:,} x {K}: cross-fit (5 folds + final) {t_cf:.2f} s / CPU {CPU['cf']:.2f} s "
          f"(final T = {cf.final.temperature:.10f})", flush=True)
    from scipy.optimize import minimize_scalar

    zl = np.log(P)
    rows = np.arange(n)

    def nll(T):
        s = zl / T
        mx = s.max(1)
        return float(np.mean(np.log(np.exp(s - mx[:, None]).sum(1)) + mx - s[rows, yk]))

    t_peer, r = timed(lambda: minimize_scalar(nll, bounds=(0.05, 20), method="bounded"), label="peer")
    print(f"peer: scipy minimize_scalar on the NLL {t_peer:.2f} s / CPU {CPU['peer']:.2f} s (T = {r.x:.10f}; "
          f"fit ratio {t_peer / t_fit:.1f}x)")
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
