"""The HTML report of a streamed source (calibviz.report_scan, ``calibviz report --engine``).

The report of a scan must show the same numbers as the in-memory report of the
same file (the metric table and the per-bin tables are built by the same
code, from sums instead of rows), say which sections need the rows instead of
leaving a silent gap, refuse bad input with one line, and never load the file
whole.
"""
from __future__ import annotations

import html
import re

import numpy as np
import pandas as pd
import pytest

import calibviz as cv
from calibviz.cli import main
from calibviz.report import build_report
from calibviz.report_scan import UNAVAILABLE, build_scan_report

N = 20_000


def _binary(n=N, seed=3):
    """Scores on a 10^-4 grid (TCE's PAVA-BC bins then equal the in-memory ones), a miscalibrated model,
    one numeric and one categorical feature."""
    rng = np.random.default_rng(seed)
    p = np.round(rng.beta(2, 5, n), 4)
    age = rng.uniform(20, 80, n)
    region = rng.choice(["north", "south", "east"], n)
    rate = np.clip(p * np.where(age > 50, 1.3, 0.9), 0, 1)
    return pd.DataFrame({"y": (rng.uniform(size=n) < rate).astype(np.int64), "p": p, "age": age, "region": region})


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    path = tmp_path_factory.mktemp("scan_report") / "preds.parquet"
    _binary().to_parquet(path)
    memory = build_report(cv.load_models(str(path)), n_resamples=0, n_reference=0, source=str(path))
    return str(path), memory


def _metric_rows(page: str) -> dict:
    """{metric label: (value, interval, calibrated-model range)} of every metric table of a report page."""
    cells = re.findall(r'<tr><td title="[^"]*">([^<]*)</td><td class="num">([^<]*)</td><td class="num">([^<]*)</td>'
                       r'<td class="num">([^<]*)</td>', page)
    return {html.unescape(label): (value, interval, null) for label, value, interval, null in cells}


def _section(page: str, start: str, end: str = "</details>") -> str:
    i = page.index(start)
    return page[i:page.index(end, i)]


def _vece(page: str, feature: str) -> str:
    return re.search(rf"<td>{feature}</td>\s*<td>[a-z]+</td>\s*<td>([^<]*)</td>", page).group(1)


@pytest.mark.parametrize("engine", ["duckdb", "polars"])
def test_scan_report_shows_the_in_memory_numbers(binary, engine):
    path, memory = binary
    page = build_scan_report(cv.scan(path, engine=engine), n_resamples=0, n_reference=0, source=path)
    got, want = _metric_rows(page), _metric_rows(memory)
    common = [k for k, v in got.items() if v[0]]
    assert {"ECE", "ACE", "MCE", "TCE", "Brier score", "Log loss"} <= set(common)
    for label in common:
        assert got[label][0] == want[label][0], label
    # the per-bin tables (uniform bins, PAVA-BC bins of TCE) print the same numbers
    for start in ("<summary>Per-bin table (uniform bins;", "<summary>Per-bin table (PAVA-BC bins)"):
        assert _section(page, start) == _section(memory, start)
    # variables ranked by VECE: the same values
    for feature in ("age", "region"):
        assert _vece(page, feature) == _vece(memory, feature)
    assert re.search(r"<td>20,000</td>", _section(page, "<h3>Data</h3>", "</table>"))


def test_row_based_sections_say_why_they_are_missing(binary):
    path, _ = binary
    page = build_scan_report(cv.scan(path), n_resamples=0, n_reference=0, source=path)
    for key in ("corp", "violins", "curves"):
        assert html.escape(UNAVAILABLE[key], quote=True) in page
    assert page.count('class="unavailable"') == 3
    assert "Test-based reliability diagram (TCE)" in page and "Variables ranked by VECE" in page
    assert "--engine duckdb" in page and "cv.scan(" in page  # the regenerate commands stream too


def test_the_calibrated_reference_and_intervals_are_in_the_metric_table(binary):
    path, _ = binary
    page = build_scan_report(cv.scan(path), n_resamples=20, n_reference=50, source=path)
    rows = _metric_rows(page)
    low, high = (float(x) for x in rows["ECE"][2].split(" – "))
    assert 0 < low < high < float(rows["ECE"][0])  # miscalibrated: ECE above what a calibrated model shows
    assert " – " in rows["ECE"][1]  # a bootstrap interval
    assert "50 redraws of the labels per score bucket" in page
    # the caption says how a scan's intervals are made: buckets, not rows (it said "rows resampled")
    assert "Poisson bootstrap of the score buckets (20 resamples" in page and "rows resampled" not in page


def test_library_report_accepts_a_scan(binary, tmp_path):
    path, _ = binary
    out = cv.report.write_report(cv.scan(path), tmp_path / "r.html", n_resamples=0, n_reference=0)
    page = out.read_text(encoding="utf-8")
    assert html.escape(UNAVAILABLE["corp"], quote=True) in page
    # the regenerate call writes the file written (a review: report.html)
    assert f"write_report(models, &#x27;{tmp_path / 'r.html'}&#x27;" in page
    with pytest.raises(cv.InputError, match="recalibration needs the rows"):
        build_report(cv.scan(path), recalibration=["platt"], n_resamples=0)
    contents = cv.report.report_contents(cv.scan(path))  # the dashboard lists them before building
    assert "CORP reliability diagram (positive class): not available on a streamed source" in contents
    assert "Variables ranked by VECE" in contents and contents[-1] == "Reproducibility"


def test_multiclass_and_several_models(tmp_path):
    rng = np.random.default_rng(5)
    n = 12_000
    P = np.round(rng.dirichlet(np.full(3, 0.8), n), 3)
    P[:, 2] = np.round(1 - P[:, :2].sum(axis=1), 3)
    P = P[P[:, 2] >= 0]
    y = (rng.random(len(P))[:, None] > P.cumsum(axis=1)).sum(axis=1).clip(0, 2)
    df = pd.DataFrame({"label": np.array(["a", "b", "c"])[y], "p_a": P[:, 0], "p_b": P[:, 1], "p_c": P[:, 2]})
    path = str(tmp_path / "mc.parquet")
    df.to_parquet(path)
    page = build_scan_report(cv.scan(path), n_resamples=0, n_reference=0, source=path)
    memory = build_report(cv.load_models(path), n_resamples=0, n_reference=0, source=path)
    got, want = _metric_rows(page), _metric_rows(memory)
    for label in ("Confidence ECE", "Top-label ECE", "Top-label MCE", "Class-wise ECE"):
        assert got[label][0] == want[label][0], label
    assert "Top-label diagram" in page and "Class ranking" in page
    assert "the classes were not tested one by one" in page  # n_reference=0: no per-class test, as in memory
    tested = build_scan_report(cv.scan(path), n_resamples=0, source=path)  # the default reference
    # a calibrated model: the class-wise ECE verdict finds no evidence, so the ranking names no class (a gate)
    assert "No class is singled out: Class-wise ECE finds no evidence of miscalibration" in tested
    assert "not tested one by one" not in tested
    assert _section(page, "<summary>Per-bin top-label table") == _section(memory, "<summary>Per-bin top-label table")
    # two models in long format: overlay and values side by side; no verdicts, said so
    rng = np.random.default_rng(6)
    p = np.round(rng.uniform(0.05, 0.95, 5_000), 3)
    yy = (rng.uniform(size=5_000) < p).astype(int)
    evil = "<img src=x onerror=alert(1)>"  # names from the data are escaped everywhere
    long = pd.concat([pd.DataFrame({"model": "m1", "y": yy, "p": p}),
                      pd.DataFrame({"model": evil, "y": yy, "p": np.round(p ** 1.5, 3)})])
    lpath = str(tmp_path / "long.parquet")
    long.to_parquet(lpath)
    page = build_scan_report(cv.scan(lpath).models, n_resamples=0, n_reference=0, source=lpath)
    assert 'id="compare"' in page and html.escape(UNAVAILABLE["compare"], quote=True) in page
    assert 'href="#model-1"' in page and "Model: " + html.escape(evil) in page
    assert "<img" not in page


def _fail_if_called(name):
    def fail(*args, **kwargs):
        raise AssertionError(f"{name} was called: the file was loaded whole")
    return fail


@pytest.mark.parametrize("engine", ["duckdb", "polars"])
def test_cli_report_engine_never_loads_the_file(binary, tmp_path, monkeypatch, capsys, engine):
    import pyarrow.parquet

    import calibviz.cli
    import calibviz.io

    path, _ = binary
    for owner, name in ((pd, "read_parquet"), (pd, "read_csv"), (pyarrow.parquet, "read_table"),
                        (calibviz.io, "load_models"), (calibviz.io, "read_table"), (calibviz.cli, "_load")):
        monkeypatch.setattr(owner, name, _fail_if_called(f"{owner.__name__}.{name}"))
    out = tmp_path / "r.html"
    assert main(["report", path, "-o", str(out), "--engine", engine, "--ci", "10", "--reference", "20",
                 "--label", "y", "--probs", "p"]) == 0
    page = out.read_text(encoding="utf-8")
    ece = _metric_rows(page)["ECE"]
    assert ece[0] and " – " in ece[1] and " – " in ece[2]  # value, --ci interval, --reference range
    assert 'class="unavailable"' in page
    assert f"--engine {engine}" in page and "--label y --probs p" in page
    assert f"-o {out} " in page  # regenerates the file this command wrote


@pytest.mark.parametrize("case, args, message", [
    ("missing", ["{dir}/none.parquet"], "no file matches"),
    ("column", ["{path}", "--label", "nope"], "label column 'nope' is not in"),
    ("range", ["{bad}"], r"probabilities must lie in \[0, 1\]"),
    ("recalibrate", ["{path}", "--recalibrate", "platt"], "--recalibrate cannot be combined with --engine"),
])
def test_cli_report_engine_bad_input_is_one_line(binary, tmp_path, capsys, case, args, message):
    path, _ = binary
    bad = tmp_path / "bad.parquet"
    df = _binary(2_000)
    df.loc[[5, 17], "p"] = [1.2, -0.1]
    df.to_parquet(bad)
    argv = ["report", *(a.format(dir=tmp_path, path=path, bad=bad) for a in args), "-o", str(tmp_path / "r.html"),
            "--engine", "duckdb"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("calibviz: error: ") and err.count("\n") == 1, err
    assert re.search(message, err)
    assert not (tmp_path / "r.html").exists()


def test_the_variables_headline_is_the_in_memory_test(binary):
    """The summary names variables only by VECE's calibrated-model test, as the in-memory report does (20,000 rows:
    both draw the Gaussian reference from one seed, so the sentence is the same); no untested 'largest' line."""
    path, memory = binary
    page = build_scan_report(cv.scan(path), n_resamples=0, n_reference=0, source=path)
    pattern = r"(?:VECE beyond what a calibrated model shows|No variable's VECE is beyond)[^<]*(?:<b>[^<]*</b>[^<]*)*"
    got, want = re.search(pattern, page), re.search(pattern, memory)
    assert got is not None and want is not None
    assert got.group(0) == want.group(0)
    assert "not tested against a calibrated model" not in page
