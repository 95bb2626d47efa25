"""Benchmark: the test-based reliability diagram (TCE diagram) at N = 10^6.

Target (issue "Figures"): a TCE diagram for N = 10^6 serialises to < 2 MB of
JSON and builds in < 2 s. Compared in the same run with what a user would
otherwise do:

* plotly's own ``go.Violin`` trace per bin, which ships every prediction to
  the browser (JSON size grows with N);
* matplotlib's ``violinplot`` (the TCE reference code draws the diagram this
  way; its KDE evaluates every point at 100 grid values per bin).

Run: python benchmarks/bench_figures.py
"""
from __future__ import annotations

import time

import numpy as np
import plotly.graph_objects as go

from calibviz import figures
from calibviz.binning import PAVABC
from calibviz.distributions import bin_distributions
from calibviz.summary import reliability_table

N = 1_000_000


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def best_of(fn, repeat=3):
    best, out = float("inf"), None
    for _ in range(repeat):
        out, t = timed(fn)
        best = min(best, t)
    return out, best


def data(kind, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.beta(2, 5, N)
    truth = p if kind == "calibrated" else np.clip(p + 0.05, 0, 1)
    return (rng.uniform(size=N) < truth).astype(np.int8), p


def main():
    rows = []
    for kind in ("miscalibrated (+0.05)", "calibrated"):
        y, p = data("calibrated" if kind == "calibrated" else "shifted")
        # end to end: fit PAVA-BC once, reliability table with TCE, violins, figure, JSON
        fig, t_e2e = timed(lambda: figures.tce_diagram(y, p))  # one cold run: the conservative number
        js, t_json = best_of(lambda: fig.to_json(), repeat=3)
        # the figure alone, from precomputed table + densities
        scheme = PAVABC()
        bins = scheme.fit(p, y)
        table = reliability_table(y, p, binning=scheme)
        dists, t_dens = best_of(lambda: bin_distributions(p, bins.index))
        _, t_fig = best_of(lambda: figures.tce_diagram(table=table, distributions=dists))
        rows.append((kind, len(table), t_e2e, t_fig, t_dens, t_json, len(js)))

    # peers on the miscalibrated data
    y, p = data("shifted")
    bins = PAVABC().fit(p, y)
    order = np.argsort(bins.index, kind="stable")
    groups = np.split(p[order], np.flatnonzero(np.diff(bins.index[order])) + 1)

    def plotly_violins():
        f = go.Figure([go.Violin(y=g, x=np.full(g.size, i + 1), points=False, spanmode="hard")
                       for i, g in enumerate(groups)])
        return f.to_json()

    peer_json, t_peer_plotly = timed(plotly_violins)

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def mpl_violins():
        fig, ax = plt.subplots()
        ax.violinplot(groups, showmeans=True, showextrema=True)
        fig.canvas.draw()
        plt.close(fig)

    _, t_peer_mpl = timed(mpl_violins)

    print(f"## Figures\n\n`python benchmarks/bench_figures.py` (2 vCPU, one run; peers timed in the same run). "
          f"TCE diagram, PAVA-BC bins, N = {N:,}.\n")
    print("| data | bins | end to end (s) | figure from table (s) | violin densities (s) | to_json (s) | JSON size | target |")
    print("|---|---|---|---|---|---|---|---|")
    for kind, b, e2e, tf, td, tj, size in rows:
        ok = "PASS" if size < 2e6 and e2e < 2 else ("JSON PASS, time MISSED" if size < 2e6 else "MISSED")
        print(f"| {kind} | {b} | {e2e:.2f} | {tf:.3f} | {td:.2f} | {tj:.3f} | {size / 1e3:.0f} kB | "
              f"< 2 MB, < 2 s: {ok} |")
    size0 = rows[0][6]
    print("\n| peer (same bins, miscalibrated data) | time (s) | JSON size | calibviz vs peer |")
    print("|---|---|---|---|")
    print(f"| plotly go.Violin per bin (ships all {N:,} points) | {t_peer_plotly:.2f} (build + to_json) | "
          f"{len(peer_json) / 1e6:.1f} MB | {len(peer_json) / size0:.0f}x smaller JSON; figure + to_json "
          f"{t_peer_plotly / (rows[0][3] + rows[0][5]):.1f}x faster |")
    print(f"| matplotlib violinplot (TCE reference rendering, KDE on all points) | {t_peer_mpl:.2f} | (PNG) | "
          f"densities + figure {t_peer_mpl / (rows[0][4] + rows[0][3]):.1f}x faster |")


if __name__ == "__main__":
    main()
