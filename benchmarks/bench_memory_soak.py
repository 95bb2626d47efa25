"""Soak test of the dashboard's memory (issue #16 part 6): upload distinct large files in turn and watch the
resident memory of the server process level off instead of growing with every upload.

Runs the real pages with Streamlit's AppTest in this process (the server's caches are process-wide, as in
`streamlit run`), uploads N distinct CSV files of R rows, opens the Reliability page after each, and prints the
resident set size after each upload with the bytes held by the computation cache. The caches are bounded
(CALIBVIZ_CACHE_MB for computed results; at most 2 raw and 4 parsed uploads), so PASS when the resident memory
after the last upload exceeds that after the first by at most the cache budget plus the two largest parsed
uploads and 150 MB of allocator slack.

    CALIBVIZ_CACHE_MB=64 python benchmarks/bench_memory_soak.py [--files 10] [--rows 300000]
"""
from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from streamlit.testing.v1 import AppTest

from calibviz.ui import compute

ROOT = Path(__file__).resolve().parents[1]


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=10)
    ap.add_argument("--rows", type=int, default=300_000)
    args = ap.parse_args(argv)
    rss = []
    for i in range(args.files):
        rng = np.random.default_rng(i)
        p = rng.beta(2, 5, args.rows)
        csv = pd.DataFrame({"label": (rng.random(args.rows) < p).astype(np.int8), "p": p.round(6),
                            "x": rng.normal(size=args.rows).round(4)}).to_csv(index=False).encode()
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600).run()  # a new session each time
        t0 = time.perf_counter()
        at.file_uploader(key="cv_upload").set_value((f"file{i}.csv", csv, "text/csv"))
        at.run()
        at.switch_page("pages/1_Reliability.py").run()
        assert not at.exception, [e.value for e in at.exception]
        del at, csv
        gc.collect()
        rss.append(rss_mb())
        held = compute._lru().bytes / 2**20
        print(f"upload {i + 1:2d}: {time.perf_counter() - t0:6.1f} s, RSS {rss[-1]:7.0f} MB, "
              f"computation cache {held:5.0f} MB", flush=True)
    upload_mb = args.rows * 64 / 2**20  # a parsed upload: labels, probabilities (n x 2), features, bins
    allowed = compute.CACHE_BYTES / 2**20 + 2 * upload_mb + 150
    growth = rss[-1] - rss[0]
    verdict = "PASS" if growth <= allowed else "FAIL"
    print(f"growth after the first upload: {growth:+.0f} MB over {len(rss) - 1} more uploads "
          f"(bound {allowed:.0f} MB) -> {verdict}")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
