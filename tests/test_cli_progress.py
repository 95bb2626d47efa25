"""CLI progress on stderr (calibviz.progress) and --fail-above gates mapped on multiclass data."""
from __future__ import annotations

import io
import os
import json

import numpy as np
import pandas as pd
import pytest

import calibviz as cv
from calibviz import metrics as M
from calibviz import progress as P
from calibviz.cli import gate_metric, main
from calibviz.panel import metric_panel


class FakeTTY(io.StringIO):
    def isatty(self):
        return True


@pytest.fixture
def no_delay(monkeypatch):
    """Steps drawn at once (the 2 s delay would make the tests slow), environment override cleared, a terminal
    120 columns wide (lines are cut to the width; pytest's workers see none and fall back to 80)."""
    monkeypatch.setattr(P, "DELAY", 0.0)
    monkeypatch.delenv(P.ENV, raising=False)
    monkeypatch.setenv("COLUMNS", "120")


def _run(argv, monkeypatch, stderr):
    out = io.StringIO()
    monkeypatch.setattr("sys.stdout", out)
    monkeypatch.setattr("sys.stderr", stderr)
    code = main(argv)
    return code, out.getvalue(), stderr.getvalue()


ARGS = ["metrics", "hospital_readmission", "--metrics", "ece,brier", "--ci", "20", "--reference", "20"]


def test_progress_on_a_terminal(monkeypatch, no_delay):
    code, out, err = _run(ARGS, monkeypatch, FakeTTY())
    assert code == 0
    frames = err.split("\r")
    assert any("model hospital_readmission: 2 metrics, 20 bootstrap resamples" in f and "%" in f for f in frames)
    # the fractions count bootstrap resamples and label redraws: 2 x 20 + 2 x 20
    assert any("100% (80/80)" in f for f in frames), frames[-3:]
    assert err.endswith("\n") and "done in" in frames[-1]
    assert "calibviz:" not in out and out.splitlines()[0].split()[:3] == ["model", "metric", "value"]


def test_progress_forced_on_a_pipe_writes_lines(monkeypatch, no_delay):
    monkeypatch.setenv(P.ENV, "always")
    code, _, err = _run(ARGS + ["--format", "json"], monkeypatch, io.StringIO())
    assert code == 0
    lines = err.splitlines()
    assert "\r" not in err and lines and all(line.startswith("calibviz: ") for line in lines)
    assert any("(80/80)" in line for line in lines)


@pytest.mark.parametrize("case", ["quiet", "pipe", "never"])
def test_no_progress_when_quiet_or_not_a_terminal(monkeypatch, no_delay, case):
    stream = io.StringIO() if case == "pipe" else FakeTTY()
    argv = ARGS + (["--quiet"] if case == "quiet" else [])
    if case == "never":
        monkeypatch.setenv(P.ENV, "never")
    code, out, err = _run(argv, monkeypatch, stream)
    assert code == 0 and err == "" and "ECE" in out


def test_quick_steps_print_nothing_with_the_default_delay(monkeypatch):
    monkeypatch.delenv(P.ENV, raising=False)
    code, _, err = _run(["metrics", "hospital_readmission", "--metrics", "brier", "--reference", "0"], monkeypatch,
                        FakeTTY())
    assert code == 0 and err == ""


def test_report_progress(monkeypatch, no_delay, tmp_path):
    out = tmp_path / "r.html"
    code, _, err = _run(["report", "loan_recalibration", "-o", str(out), "--ci", "0", "--reference", "0"],
                        monkeypatch, FakeTTY())
    assert code == 0 and out.exists()
    frames = err.split("\r")
    assert any(f.startswith("calibviz: building the report of 2 models") and "%" in f for f in frames)
    assert "wrote" in frames[-1]


def test_terminal_progress_fits_the_line_and_reports_failures(monkeypatch):
    monkeypatch.setattr(P.shutil, "get_terminal_size", lambda fallback=None: os.terminal_size((60, 24)))
    s = FakeTTY()
    bar = P.TerminalProgress(enabled=True, stream=s, delay=0, interval=0)
    with pytest.raises(RuntimeError):
        with bar.step("a very long label that would wrap the terminal line of sixty columns"):
            bar(1, 4)
            raise RuntimeError("boom")
    frames = [f for f in s.getvalue().split("\r") if f]
    assert all(len(f.rstrip("\n ")) <= 59 and "…" in f for f in frames), frames
    assert "25% (1/4)" in frames[0] and "stopped after" in frames[-1]


def test_metric_panel_progress_counts_the_reference():
    d = cv.load_demo("hospital_readmission")
    seen = []
    metric_panel(d.y, d.y_prob, metrics=("ece", "calibration_slope"), n_resamples=10, n_reference=15,
                 progress=lambda a, b: seen.append((a, b)))
    # ECE: 10 resamples + 15 redraws; slope: Wald interval and Wald test (no resampling)
    assert {t for _, t in seen} == {25} and seen[-1] == (25, 25)
    assert [a for a, _ in seen] == sorted(a for a, _ in seen)


# ---------------------------------------------------------------- gates on multiclass data


def _multiclass_file(tmp_path):
    rng = np.random.default_rng(5)
    n, k = 1500, 3
    logits = rng.normal(size=(n, k)) * 2
    P_ = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    y = np.array([rng.choice(k, p=np.sqrt(r) / np.sqrt(r).sum()) for r in P_])  # over-confident model
    df = pd.DataFrame(P_, columns=[f"p_{c}" for c in "abc"])
    df["y"] = np.array(list("abc"))[y]
    path = tmp_path / "mc.csv"
    df.to_csv(path, index=False)
    return path, y, P_


def test_fail_above_ece_on_multiclass_gates_confidence_ece(monkeypatch, tmp_path):
    path, y, P_ = _multiclass_file(tmp_path)
    value = M.confidence_ece(y, P_)  # independent: the library's confidence ECE on the same 15 uniform bins
    assert 0.02 < value < 0.5
    base = ["metrics", str(path), "--ci", "0", "--reference", "0", "--quiet", "--format", "json"]
    code, out, err = _run(base + ["--fail-above", f"ece={value + 0.01:.4f}"], monkeypatch, io.StringIO())
    assert code == 0, err
    assert "note: ece is a binary metric" in err and "confidence_ece" in err and err.count("\n") == 1
    records = json.loads(out)  # stdout stays clean JSON
    assert any(r["metric"] == "confidence_ece" and r["value"] == pytest.approx(value) for r in records)
    code, _, err = _run(base + ["--fail-above", f"ece={value - 0.01:.4f}"], monkeypatch, io.StringIO())
    assert code == 1 and "threshold exceeded: Confidence ECE" in err


def test_fail_above_tce_maps_to_classwise_tce_and_mce_names_the_metric(monkeypatch, tmp_path):
    path, *_ = _multiclass_file(tmp_path)
    base = ["metrics", str(path), "--ci", "0", "--reference", "0", "--quiet"]
    code, _, err = _run(base + ["--fail-above", "tce=100"], monkeypatch, io.StringIO())
    assert code == 0 and "classwise_tce" in err
    code, _, err = _run(base + ["--fail-above", "mce=0.1"], monkeypatch, io.StringIO())
    assert code == 2 and err.count("\n") == 1 and "top_label_mce" in err
    code, _, err = _run(base + ["--fail-above", "ace=0.1"], monkeypatch, io.StringIO())
    assert code == 2 and "--binning equal_mass" in err


def test_gate_metric():
    assert gate_metric("ece", True) == "ece" and gate_metric("ece", False) == "confidence_ece"
    assert gate_metric("tce", False) == "classwise_tce" and gate_metric("auc", False) == "auc"
    with pytest.raises(cv.InputError, match="top_label_mce"):
        gate_metric("mce", False)
    with pytest.raises(cv.InputError, match="binary data"):
        gate_metric("confidence_ece", True)
