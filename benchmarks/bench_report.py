"""Report and CLI: build time of the HTML report per demo, its size against the naive way of sharing figures,
and `calibviz metrics` end to end against a hand-written sklearn script (the peer a CI user would otherwise write).

Run: python benchmarks/bench_report.py   (prints a Markdown table; one run, same machine for both sides)
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import calibviz as cv
from calibviz import figures
from calibviz.report import build_report

PEER_SCRIPT = """
import numpy as np, pandas as pd
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss, log_loss
df = pd.read_csv({path!r})
y, p = df["label"].to_numpy(), df["p_readmit"].to_numpy()
obs, pred = calibration_curve(y, p, n_bins=15)
counts = np.histogram(p, bins=np.linspace(0, 1, 16))[0]
counts = counts[counts > 0]
print(np.sum(counts * np.abs(obs - pred)) / counts.sum(), brier_score_loss(y, p), log_loss(y, p))
"""


def timed(fn, repeat=1):
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main() -> None:
    rows = []
    for name in cv.demo_datasets():
        models = cv.load_demo_models(name)
        t0, page = timed(lambda: build_report(models, n_resamples=0, source=name))
        t200, _ = timed(lambda: build_report(models, n_resamples=200, source=name))
        # naive sharing: every figure as its own self-contained HTML (plotly.js in each)
        n_figs = page.count('class="plotly-graph-div"')
        p = next(iter(models.values()))
        v = cv.reduce.views(p, "binary" if p.is_binary else "confidence")[0]
        one = figures.reliability_diagram(v.y, v.p).to_html(include_plotlyjs=True, full_html=True)
        rows.append((f"report {name} ({len(models)} model(s), {n_figs} figures), 0 resamples", f"{t0:.1f} s",
                     "", ""))
        rows.append((f"report {name}, 200 resamples", f"{t200:.1f} s", "", ""))
        rows.append((f"report {name}: file size", f"{len(page) / 1e6:.1f} MB",
                     f"{n_figs} separate figure HTML files: {n_figs * len(one) / 1e6:.1f} MB",
                     f"{n_figs * len(one) / len(page):.1f}x smaller"))
    src = cv.demo_path("hospital_readmission")
    with tempfile.TemporaryDirectory() as tmp:
        peer = Path(tmp) / "peer.py"
        peer.write_text(PEER_SCRIPT.format(path=str(src)))
        t_peer, _ = timed(lambda: subprocess.run([sys.executable, str(peer)], check=True, capture_output=True), 3)
        t_cli, _ = timed(lambda: subprocess.run([sys.executable, "-m", "calibviz", "metrics", "hospital_readmission",
                                                 "--metrics", "ece,brier,log_loss", "--format", "json"],
                                                check=True, capture_output=True), 3)
        t_full, _ = timed(lambda: subprocess.run([sys.executable, "-m", "calibviz", "metrics", "hospital_readmission"],
                                                 check=True, capture_output=True), 3)
    rows.append(("`calibviz metrics` ECE+Brier+log loss, N=20,000, process end to end", f"{t_cli:.2f} s",
                 f"sklearn script (calibration_curve + brier + log_loss) {t_peer:.2f} s", f"{t_peer / t_cli:.2f}x"))
    rows.append(("`calibviz metrics` default panel (7 metrics incl. TCE, smECE), end to end", f"{t_full:.2f} s",
                 "", ""))
    print("| work | calibviz | peer | ratio |\n|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()
