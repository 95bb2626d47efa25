"""Benchmark: multiclass metrics on CIFAR-100 (10^4 x 100) and on N = 10^6, K = 100.

Compares calibviz with a straightforward reference implementation written
plainly below (boolean masks, loops over classes and bins, as in the paper's
description), in the same run. Prints a Markdown table of times and ratios.

    python benchmarks/bench_multiclass.py [--big-n 1000000] [--repeat 3]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from calibviz.binning import Uniform
from calibviz.metrics import (
    canonical_ece,
    classwise_ece,
    classwise_tce,
    confidence_ece,
    top_label_ece,
    top_label_mce,
)
from calibviz.multiclass import class_ranking, top_label_table

ROOT = Path(__file__).resolve().parents[1]
B = 15


# ----------------------------------------------------------------------------
# straightforward reference implementation


def ref_bin(p):
    return np.minimum((p * B).astype(int), B - 1)


def ref_conf_ece(y, P):
    c, h = P.argmax(1), P.max(1)
    z = (c == y).astype(float)
    b = ref_bin(h)
    total = 0.0
    for j in range(B):
        m = b == j
        if m.any():
            total += m.sum() * abs(z[m].mean() - h[m].mean())
    return total / len(y)


def ref_tl_ece(y, P):
    c, h = P.argmax(1), P.max(1)
    z = (c == y).astype(float)
    b = ref_bin(h)
    total = 0.0
    for lab in range(P.shape[1]):
        for j in range(B):
            m = (c == lab) & (b == j)
            if m.any():
                total += m.sum() * abs(z[m].mean() - h[m].mean())
    return total / len(y)


def ref_tl_mce(y, P, reduce):
    c, h = P.argmax(1), P.max(1)
    z = (c == y).astype(float)
    b = ref_bin(h)
    out = 0.0
    for j in range(B):
        inb = b == j
        if not inb.any():
            continue
        d = 0.0
        for lab in range(P.shape[1]):
            m = inb & (c == lab)
            if m.any():
                dev = abs(z[m].mean() - h[m].mean())
                if reduce == "cell":
                    out = max(out, dev)
                d += m.sum() * dev
        if reduce == "bin":
            out = max(out, d / inb.sum())
    return out


def ref_cw_ece(y, P):
    total = 0.0
    for lab in range(P.shape[1]):
        p = P[:, lab]
        t = (y == lab).astype(float)
        b = ref_bin(p)
        for j in range(B):
            m = b == j
            if m.any():
                total += m.sum() * abs(t[m].mean() - p[m].mean())
    return total / len(y) / P.shape[1]


# ----------------------------------------------------------------------------


def softmax(z):
    z = np.asarray(z, dtype=np.float64)
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def timed(f, repeat):
    best, value = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        value = f()
        best = min(best, time.perf_counter() - t0)
    return best, value


def run(name, y, P, repeat, rows, with_slow):
    uni = Uniform(B)
    cases = [
        ("confidence_ece", lambda: confidence_ece(y, P, binning=uni), lambda: ref_conf_ece(y, P)),
        ("top_label_ece", lambda: top_label_ece(y, P, binning=uni), lambda: ref_tl_ece(y, P)),
        ("top_label_mce (bin)", lambda: top_label_mce(y, P, binning=uni), lambda: ref_tl_mce(y, P, "bin")),
        ("top_label_mce (cell)", lambda: top_label_mce(y, P, binning=uni, reduce="cell"), lambda: ref_tl_mce(y, P, "cell")),
        ("classwise_ece", lambda: classwise_ece(y, P, binning=uni), lambda: ref_cw_ece(y, P)),
        ("top_label_table", lambda: top_label_table(y, P, binning=uni), None),
        ("canonical_ece (uniform, 10 bins)", lambda: canonical_ece(y, P), None),
    ]
    if with_slow:
        cases += [
            ("class_ranking CW-ECE, 200 resamples", lambda: class_ranking(y, P, n_resamples=200), None),
            ("class_ranking TL-ECE, 200 resamples", lambda: class_ranking(y, P, metric="top_label_ece", n_resamples=200), None),
            ("classwise_tce (PAVA-BC)", lambda: classwise_tce(y, P), None),
        ]
    total = 0.0
    for label, ours, ref in cases:
        t_ours, v_ours = timed(ours, repeat)
        if label in ("confidence_ece", "top_label_ece", "top_label_mce (bin)", "top_label_mce (cell)", "classwise_ece"):
            total += t_ours
        if ref is None:
            rows.append(f"| {name} | {label} | {t_ours:.3f} | - | - | - |")
            continue
        t_ref, v_ref = timed(ref, 1)
        same = "yes" if abs(v_ours - v_ref) <= 1e-12 else f"NO ({v_ours:.6g} vs {v_ref:.6g})"
        rows.append(f"| {name} | {label} | {t_ours:.3f} | {t_ref:.3f} | {t_ref / t_ours:.0f}x | {same} |")
    rows.append(f"| {name} | **the five ECE/MCE metrics together** | **{total:.3f}** | | | |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--big-n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rows = [
        "| data | computation | calibviz (s) | reference loops (s) | speed-up | same value |",
        "|---|---|---|---|---|---|",
    ]
    f = np.load(ROOT / "tests" / "data" / "cifar" / "cifar100_resnet50.npz")
    y, P = f["test_labels"].astype(np.int64), softmax(f["test_logits"])
    run("CIFAR-100 ResNet-50 (10^4 x 100)", y, P, args.repeat, rows, with_slow=True)

    rng = np.random.default_rng(0)
    n, K = args.big_n, 100
    logits = rng.normal(size=(n, K)) * 3
    P = softmax(logits)
    del logits
    y = (rng.random(n)[:, None] > np.cumsum(P, axis=1)).sum(axis=1).clip(0, K - 1)
    run(f"synthetic N={n:.0e}, K={K}", y, P, 1, rows, with_slow=False)
    print("\n".join(rows))


if __name__ == "__main__":
    main()
