"""The command line: exit codes, JSON/CSV output, --fail-above gates, the bad-input catalogue, --help."""
from __future__ import annotations

import io
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import calibviz as cv
from calibviz.cli import JSON_FIELDS, _as_options, main, parse_threshold
from calibviz.panel import PanelConfig, metric_panel

from .conftest import BAD, ROOT, bad_catalogue

CATALOGUE = bad_catalogue()


def run(argv, capsys):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def assert_one_line_error(code, err):
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("calibviz: error:"), err
    assert "Traceback" not in err


# ---------------------------------------------------------------- metrics


def test_metrics_table_exit_0(capsys):
    code, out, err = run(["metrics", "hospital_readmission"], capsys)
    assert code == 0 and err == ""
    assert out.splitlines()[0].split()[:3] == ["model", "metric", "value"]
    assert "TCE" in out and "percentage points" in out


def test_metrics_json_schema_and_values(capsys):
    code, out, _ = run(["metrics", "hospital_readmission", "--metrics", "ece,tce,hosmer_lemeshow", "--ci", "20",
                        "--seed", "3", "--binning", "equal_mass", "--bins", "10", "--format", "json"], capsys)
    assert code == 0
    records = json.loads(out)
    assert isinstance(records, list) and len(records) == 3
    types = {"model": str, "metric": str, "label": str, "unit": str, "reading": str}
    for r in records:
        assert tuple(r) == JSON_FIELDS
        for key in ("value", "low", "high", "p_value"):
            assert r[key] is None or isinstance(r[key], float)
        for key, t in types.items():
            assert isinstance(r[key], t)
    p = cv.load_demo("hospital_readmission")
    panel = metric_panel(p.y, p.y_prob, metrics=("ece", "tce", "hosmer_lemeshow"), n_resamples=20, random_state=3,
                         config=PanelConfig(binning="equal_mass", n_bins=10))
    for r, row in zip(records, panel.itertuples()):
        assert r["metric"] == row.metric and r["value"] == pytest.approx(row.value)
    assert records[0]["low"] == pytest.approx(panel.loc[0, "low"])
    # p-values against a calibrated model with the same predictions, beside every metric
    for r, row in zip(records, panel.itertuples()):
        assert r["p_value"] == pytest.approx(row.p_value) and r["verdict"] == row.verdict
        assert r["null_low"] == pytest.approx(row.null_low) and r["null_high"] == pytest.approx(row.null_high)
    assert records[2]["low"] is None and 0 <= records[2]["p_value"] <= 1  # a test: p-value, no interval
    # the redraws behind each p-value: the default 200 for ECE and TCE, none for Hosmer-Lemeshow's own test
    assert [r["n_redraws"] for r in records] == [200, 200, 0]
    assert records[1]["unit"] == "percent" and records[0]["model"] == "hospital_readmission"


def test_metrics_json_multiclass_and_several_models(capsys):
    code, out, _ = run(["metrics", "cifar10_resnet50", "--format", "json"], capsys)
    assert code == 0
    assert [r["metric"] for r in json.loads(out)] == ["confidence_ece", "top_label_ece", "top_label_mce",
                                                      "classwise_ece"]
    code, out, _ = run(["metrics", "loan_recalibration", "--metrics", "ece", "--format", "json"], capsys)
    assert [r["model"] for r in json.loads(out)] == ["raw", "recalibrated"]


def test_metrics_table_shows_one_sided_bounds(capsys):
    """MCE's interval is an upper bound (low = -inf; JSON null): the table says "at most", as the dashboard does."""
    p = cv.load_demo("hospital_readmission")
    panel = metric_panel(p.y, p.y_prob, metrics=("ece", "mce"), n_resamples=20, random_state=3)
    assert np.isneginf(panel.loc[1, "low"])
    code, out, _ = run(["metrics", "hospital_readmission", "--metrics", "ece,mce", "--ci", "20", "--seed", "3",
                        "--reference", "0"], capsys)
    assert code == 0
    mce = next(line for line in out.splitlines() if line.split()[1:2] == ["MCE"])
    assert f"at most {panel.loc[1, 'high']:.4f}" in mce, mce
    ece = next(line for line in out.splitlines() if line.split()[1:2] == ["ECE"])
    assert f"{panel.loc[0, 'low']:.4f} – {panel.loc[0, 'high']:.4f}" in ece, ece


def test_metrics_table_marks_a_p_value_that_is_a_bound(capsys):
    """The hospital demo's ECE is far above every redraw: p = 1/201 is the smallest 200 redraws give, a bound,
    printed "≤ 0.005" as the reading says; Hosmer-Lemeshow's own p-value is not a bound."""
    code, out, _ = run(["metrics", "hospital_readmission", "--metrics", "ece,hosmer_lemeshow"], capsys)
    assert code == 0
    ece = next(line for line in out.splitlines() if line.split()[1:2] == ["ECE"])
    assert "≤ 0.005" in ece and "p ≤ 0.005: none of 200 redraws" in ece, ece
    hl = next(line for line in out.splitlines() if "Hosmer" in line)
    assert "< 0.001" in hl and "≤" not in hl, hl  # chi2's own p-value, far below what the redraws could give
    code, _, err = run(["metrics", "hospital_readmission", "--metrics", "ece", "--fail-p-below", "ece=0.01"], capsys)
    assert code == 1 and "gives p ≤ 0.005 <= 0.01" in err, err  # the gate says so too


def test_metrics_csv(capsys):
    code, out, _ = run(["metrics", "loan_recalibration", "--metrics", "ece,brier", "--format", "csv"], capsys)
    assert code == 0
    df = pd.read_csv(io.StringIO(out))
    assert tuple(df.columns) == JSON_FIELDS and len(df) == 4
    assert df["low"].isna().all()  # no --ci: no intervals


def test_metrics_on_a_file_with_mapping(tmp_path, capsys):
    rng = np.random.default_rng(0)
    p = rng.uniform(size=300)
    path = tmp_path / "preds.csv"
    pd.DataFrame({"outcome_flag": rng.binomial(1, p), "score_a": p}).to_csv(path, index=False)
    code, out, _ = run(["metrics", str(path), "--label", "outcome_flag", "--probs", "score_a", "--metrics", "ece",
                        "--format", "json"], capsys)
    assert code == 0
    preds = cv.load_predictions(path, label="outcome_flag", probs="score_a")
    assert json.loads(out)[0]["value"] == pytest.approx(cv.metrics.ece(preds.y, preds.y_prob))


@pytest.mark.parametrize("gate, code", [("ece=0.5", 0), ("ECE=0.01", 1), ("smECE=0.001", 1), ("tce=100", 0)])
def test_fail_above_exit_codes(gate, code, capsys):
    got, out, err = run(["metrics", "hospital_readmission", "--metrics", "ece", "--fail-above", gate], capsys)
    assert got == code
    if code:
        assert "threshold exceeded" in err and "hospital_readmission" in err
    else:
        assert err == ""
    # the gated metric is computed even when --metrics omits it
    key = parse_threshold(gate)[0]
    assert cv.panel.BINARY_METRICS[key].label in out


def test_fail_above_names_every_failing_model(capsys):
    code, _, err = run(["metrics", "loan_recalibration", "--fail-above", "ece=0.001", "--fail-above", "brier=1"],
                       capsys)
    assert code == 1
    lines = err.strip().splitlines()
    assert len(lines) == 2 and "model raw" in lines[0] and "model recalibrated" in lines[1]


@pytest.mark.parametrize("gate", ["ece", "ece=", "=0.1", "ece=abc", "ece=nan", "accuracy=0.1", "ece=inf"])
def test_fail_above_parsing_errors(gate, capsys):
    code, out, err = run(["metrics", "hospital_readmission", "--fail-above", gate], capsys)
    assert_one_line_error(code, err)
    assert out == ""


def test_fail_above_metric_of_the_other_kind(capsys):
    # a binary name without one multiclass counterpart: the error names the metric to write
    code, _, err = run(["metrics", "cifar10_resnet50", "--fail-above", "mce=0.05"], capsys)
    assert_one_line_error(code, err)
    assert "top_label_mce" in err
    code, _, err = run(["metrics", "hospital_readmission", "--fail-above", "top_label_ece=0.05"], capsys)
    assert_one_line_error(code, err)


@pytest.mark.parametrize("argv", [
    ["metrics", "hospital_readmission", "--alpha", "1.5"],
    ["metrics", "hospital_readmission", "--alpha", "0.6"],  # a one-sided verdict at 0.6 flags median values
    # 200 redraws give p >= 1/201: a gate at 0.001 could never fire (a CI gate that silently passes)
    ["metrics", "hospital_readmission", "--fail-p-below", "ece=0.001", "--reference", "200"],
    ["metrics", "hospital_readmission", "--bins", "0"],
    ["metrics", "hospital_readmission", "--ci", "-1"],
    ["metrics", "hospital_readmission", "--n-min", "500", "--n-max", "100"],
    ["metrics", "hospital_readmission", "--metrics", "accuracy"],
    ["metrics", "cifar10_resnet50", "--metrics", "ece"],
    ["metrics"],
    ["metrics", "no_such_file.csv"],
    ["report", "no_such_file.csv", "-o", "x.html"],
    ["report", "hospital_readmission", "-o", "/no/such/folder/x.html"],
    ["report", "hospital_readmission", "--metrics", "nope"],
])
def test_bad_options_one_line_exit_2(argv, capsys):
    code, out, err = run(argv, capsys)
    assert_one_line_error(code, err)


def test_argparse_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as info:
        main(["metrics", "hospital_readmission", "--binning", "weird"])
    assert info.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_metrics_list(capsys):
    code, out, _ = run(["metrics", "--list"], capsys)
    assert code == 0 and "smooth_ece" in out and "classwise_tce" in out


# ---------------------------------------------------------------- report


def test_report_writes_a_file(tmp_path, capsys):
    out = tmp_path / "r.html"
    code, stdout, err = run(["report", "cifar10_resnet50", "-o", str(out), "--ci", "0", "--binning", "equal_mass",
                             "--bins", "10", "--title", "CIFAR review"], capsys)
    assert code == 0 and stdout == "" and err.startswith(f"wrote {out}")
    page = out.read_text()
    assert "<title>CIFAR review</title>" in page and "Top-label diagram" in page
    assert "equal_mass, 10 bins" in page
    # the regenerate commands write to the file this command wrote, not to a placeholder name
    assert f"calibviz report cifar10_resnet50 -o {out} --binning equal_mass --bins 10" in page
    assert f"write_report(cv.load_demo_models(&#x27;cifar10_resnet50&#x27;), &#x27;{out}&#x27;" in page


def test_report_on_a_file_keeps_the_mapping(tmp_path, capsys):
    rng = np.random.default_rng(2)
    p = rng.uniform(size=300)
    src = tmp_path / "scores.csv"
    pd.DataFrame({"truth": rng.binomial(1, p), "s": p}).to_csv(src, index=False)
    out = tmp_path / "r.html"
    assert main(["report", str(src), "-o", str(out), "--label", "truth", "--probs", "s", "--ci", "0"]) == 0
    page = out.read_text()
    assert f"calibviz report {src} -o {out} --label truth --probs s" in page


# ---------------------------------------------------------------- the bad-input catalogue


def _catalogue_args(name):
    case = CATALOGUE[name]
    args = []
    for k, v in case["kwargs"].items():
        if k == "max_bytes":
            pytest.skip("max_bytes is a library option")
        args += [f"--{k}", str(v)]
    return [str(BAD / name)] + args


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_catalogue_through_metrics(name, capsys):
    code, out, err = run(["metrics"] + _catalogue_args(name), capsys)
    assert_one_line_error(code, err)
    assert _as_options(CATALOGUE[name]["expect"]) in err and out == ""  # the fixes in options' words


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_catalogue_through_report(name, tmp_path, capsys):
    out = tmp_path / "r.html"
    code, _, err = run(["report"] + _catalogue_args(name) + ["-o", str(out)], capsys)
    assert_one_line_error(code, err)
    assert _as_options(CATALOGUE[name]["expect"]) in err and not out.exists()


# ---------------------------------------------------------------- help, other commands, console entry


@pytest.mark.parametrize("command", [[], ["metrics"], ["report"], ["info"], ["app"], ["demos"]])
def test_help_everywhere(command, capsys):
    with pytest.raises(SystemExit) as info:
        main(command + ["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: calibviz")
    if command and command[0] in ("metrics", "report", "info", "app"):
        assert "example" in out


def test_demos_and_info_still_work(capsys):
    assert main(["demos"]) == 0
    assert "cifar10_resnet50" in capsys.readouterr().out
    code, out, _ = run(["info", "cifar10_resnet50", "--format", "json"], capsys)
    assert code == 0 and json.loads(out)[0]["classes"] == 10


def test_python_dash_m_entry(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "calibviz", "metrics", "hospital_readmission", "--metrics", "ece",
                           "--format", "json", "--fail-above", "ece=0.001"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 1
    assert json.loads(proc.stdout)[0]["metric"] == "ece"
    assert proc.stderr.startswith("calibviz: threshold exceeded: ECE of model hospital_readmission")
    bad = subprocess.run([sys.executable, "-m", "calibviz", "metrics", str(BAD / "empty.csv")],
                         capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr


def test_console_entry_returns_main_status_and_freezes_the_collector_for_exit(tmp_path):
    """``calibviz`` / ``python -m calibviz`` run cli.run: main's exit status, then gc.freeze (shutdown skips the
    collector's walk over the libraries' objects, ~0.1 s); main itself, which tests call, leaves the collector."""
    code = ("import gc, sys; import calibviz.cli as c; sys.argv = ['calibviz', 'metrics', '/nonexistent.csv']; "
            "status = c.run(); print(status, gc.get_freeze_count() > 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.stdout.split() == ["2", "True"] and proc.stderr.startswith("calibviz: error: file not found")
    # after a scan the DuckDB connection is closed before the freeze (its __del__ would not run at exit)
    rng = np.random.default_rng(0)
    log = tmp_path / "log.parquet"
    pd.DataFrame({"y": rng.integers(0, 2, 500), "p": rng.uniform(size=500)}).to_parquet(log)
    scan = code.replace("'metrics', '/nonexistent.csv'", f"'metrics', {str(log)!r}, '--engine', 'duckdb', "
                        "'--metrics', 'ece', '--reference', '0', '--format', 'json'")
    scan += "; from calibviz.scan import duckdb_engine as e; print(e._CON is None)"
    proc = subprocess.run([sys.executable, "-c", scan], capture_output=True, text=True, timeout=300)
    assert proc.stdout.split()[-3:] == ["0", "True", "True"], proc.stderr
    proc = subprocess.run([sys.executable, "-c", code.replace("c.run()", "c.main()")], capture_output=True,
                          text=True, timeout=300)
    assert proc.stdout.split() == ["2", "False"]


def test_metrics_fail_p_below_gates_on_evidence_of_miscalibration(capsys):
    # hospital demo: miscalibrated (ECE p-value at its floor 1/201); the loan demo's recalibrated model is not
    code, _, err = run(["metrics", "hospital_readmission", "--metrics", "ece", "--fail-p-below", "ece=0.01"], capsys)
    assert code == 1 and "its own test against a calibrated model" in err
    # 200 redraws cannot give p <= 0.001: the gate passed silently on this miscalibrated model; now an explicit
    # --reference 200 is refused, the default draws what the gate needs (999), and with enough redraws it fires
    code, out, err = run(["metrics", "hospital_readmission", "--metrics", "ece", "--fail-p-below", "ece=0.001",
                          "--reference", "200", "--format", "json"], capsys)
    assert code == 2 and "can never fire with --reference 200" in err and "--reference 999" in err
    code, out, err = run(["metrics", "hospital_readmission", "--metrics", "ece", "--fail-p-below", "ece=0.001",
                          "--format", "json"], capsys)
    assert code == 1 and json.loads(out)[0]["n_redraws"] == 999, err
    code, out, err = run(["metrics", "hospital_readmission", "--metrics", "ece", "--fail-p-below", "ece=0.001",
                          "--reference", "999", "--format", "json"], capsys)
    assert code == 1 and "its own test against a calibrated model" in err
    code, _, err = run(["metrics", "hospital_readmission", "--fail-p-below", "ece=2"], capsys)
    assert code == 2 and "in (0, 1)" in err
    code, _, err = run(["metrics", "hospital_readmission", "--fail-p-below", "ece=0.01", "--reference", "0"], capsys)
    assert code == 2 and "--reference" in err


def test_several_p_gates_say_what_they_mean_together(capsys):
    """Each --fail-p-below check holds its level, the command fails when any fires: when one fires among several,
    stderr gives the combined bound (the sum of the levels) and the per-check level that keeps the command at P."""
    code, _, err = run(["metrics", "hospital_readmission", "--metrics", "ece,tce", "--fail-p-below", "ece=0.05",
                        "--fail-p-below", "tce=0.01"], capsys)
    assert code == 1
    assert ("note: 2 --fail-p-below checks ran (metrics x models); the command fails when any fires, so a calibrated "
            "model fails one of them with a probability of up to 0.06 (the sum of their levels). To keep the whole "
            "command at a level P, give each check P / 2 (e.g. 0.05 / 2 = 0.025).") in err
    code, _, err = run(["metrics", "hospital_readmission", "--metrics", "ece", "--fail-p-below", "ece=0.05"], capsys)
    assert code == 1 and "checks ran" not in err  # one check: nothing to add


def test_internal_error_is_one_line_exit_3_and_debug_shows_the_traceback(capsys, monkeypatch):
    import calibviz.cli as cli

    def broken(args):
        raise TypeError("unexpected column type list<int64>")

    monkeypatch.setattr(cli, "_cmd_demos", broken)
    code, out, err = run(["demos"], capsys)
    assert code == 3 and out == "" and err.count("\n") == 1
    assert err.startswith("calibviz: internal error: TypeError: unexpected column type") and "--debug" in err
    with pytest.raises(TypeError):
        main(["--debug", "demos"])


def test_model_names_with_escape_sequences_are_printed_inert(tmp_path, capsys):
    rng = np.random.default_rng(0)
    n = 200
    frame = pd.DataFrame({"y": rng.integers(0, 2, 2 * n), "p": rng.random(2 * n),
                          "model": ["a\x1b]0;pwned\x07\x1b[2J"] * n + ["b"] * n})
    path = tmp_path / "m.csv"
    frame.to_csv(path, index=False)
    for argv in (["info", str(path)], ["metrics", str(path), "--metrics", "ece", "--reference", "0"]):
        code, out, err = run(argv, capsys)
        assert code == 0, err
        assert "\x1b" not in out and "\x07" not in out and "a?]0;pwned??[2J" in out


def test_a_gate_on_an_undefined_metric_is_not_met(tmp_path, capsys):
    """ICI is undefined on two distinct scores: a gate on it cannot pass (exit 1, the reason on stderr), and the
    other metrics are still printed."""
    path = tmp_path / "two_scores.csv"
    pd.DataFrame({"y": [0] * 48 + [1] * 12 + [0] * 12 + [1] * 28, "p": [0.2] * 60 + [0.7] * 40}).to_csv(path,
                                                                                                      index=False)
    code, out, err = run(["metrics", str(path), "--reference", "0", "--fail-above", "ici=0.05",
                          "--fail-above", "ece=0.5"], capsys)
    assert code == 1
    assert "threshold not met (no value to check): ICI of model two_scores is undefined" in err
    assert "distinct predictions" in err and "ECE" in out
    code, _, err = run(["metrics", str(path), "--reference", "0", "--fail-above", "ece=0.5"], capsys)
    assert code == 0 and err == ""


def test_fail_p_below_on_a_metric_without_a_test_is_a_usage_error(capsys):
    code, _, err = run(["metrics", "hospital_readmission", "--fail-p-below", "auc=0.05"], capsys)
    assert code == 2 and "auc has no test against a calibrated model" in err


def test_library_warnings_read_as_one_line(monkeypatch, capsys):
    import warnings

    from calibviz import cli

    def warns(args):
        warnings.warn("bootstrap: the metric was undefined\n on 3 of 200 resamples", RuntimeWarning)
        return 0

    monkeypatch.setattr(cli, "_cmd_demos", warns)
    code, _, err = run(["demos"], capsys)
    assert code == 0
    assert err == "calibviz: warning: bootstrap: the metric was undefined on 3 of 200 resamples\n"


def test_reading_options_are_refused_with_an_engine_not_ignored(capsys):
    code, _, err = run(["metrics", "hospital_readmission", "--engine", "duckdb", "--delimiter", ";"], capsys)
    assert_one_line_error(code, err)
    assert "--delimiter: reading options of the in-memory path, not available with --engine" in err


def test_a_reader_that_leaves_early_ends_the_command_quietly():
    """``calibviz metrics ... | head -3``: when the reader of the output leaves, writing raises BrokenPipeError,
    which the command reported as "internal error ... a bug in calibviz" with exit code 3 (an adversarial
    review). It now stops quietly, as Unix tools do."""
    code = ("import os, sys\n"
            "r, w = os.pipe(); os.close(r); os.dup2(w, 1)\n"  # stdout: a pipe whose reader is gone
            "from calibviz.cli import run\n"
            "sys.argv = ['calibviz', 'metrics', 'hospital_readmission', '--format', 'json', '--reference', '0',\n"
            "            '--metrics', 'ece']\n"
            "sys.exit(run())\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("argv, says", [
    (["metrics", "hospital_readmission", "--bins", "abc"], "argument --bins: invalid int value: 'abc'"),
    (["metrics", "hospital_readmission", "--engine", "nope"], "argument --engine: invalid choice: 'nope'"),
    (["recalibrate", "hospital_readmission"], "the following arguments are required"),
])
def test_usage_errors_are_one_line(capsys, argv, says):
    """argparse printed the whole usage before its error (13-16 lines); the CLI's rule is one line, exit 2."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    err = capsys.readouterr().err
    assert info.value.code == 2 and err.count("\n") == 1 and err.endswith("--help)\n"), err
    assert says.split(":")[0] in err


@pytest.mark.parametrize("option, value, says", [("--port", "99999", "is not a TCP port"),
                                                 ("--port", "-1", "is not a TCP port"),
                                                 ("--address", "999.1.1.1", "is not a valid address")])
def test_app_refuses_a_port_or_address_streamlit_cannot_bind(capsys, option, value, says):
    """They reached Streamlit, which printed a traceback (OverflowError, socket.gaierror)."""
    code, _, err = run(["app", option, value], capsys)
    assert code == 2 and says in err and err.count("\n") == 1


@pytest.mark.parametrize("argv, says", [
    (["metrics", "hospital_readmission", "--cross-fit", "3"], "--cross-fit sets the folds of --recalibrate"),
    (["metrics", "hospital_readmission", "--database", "x.duckdb"], "--database is the DuckDB database"),
    (["report", "hospital_readmission", "-o", "r.html", "--database", "x.duckdb"], "add --engine duckdb"),
])
def test_options_that_act_only_with_another_are_refused_without_it(capsys, argv, says):
    """They were ignored in silence (a robustness review)."""
    code, _, err = run(argv, capsys)
    assert code == 2 and says in err and err.count("\n") == 1


def test_an_empty_metrics_list_says_so(capsys):
    code, _, err = run(["metrics", "hospital_readmission", "--metrics", ""], capsys)
    assert code == 2 and "--metrics is empty" in err


def test_a_streamed_log_is_checked_before_its_metric_list(tmp_path, capsys):
    """Labels a, b, c against columns p_a, p_b with --metrics confidence_ece: the scan said "none of the metrics
    applies to binary data" before reading the rows; memory names the label outside the classes (a review)."""
    rng = np.random.default_rng(5)
    p = rng.uniform(size=400)
    pd.DataFrame({"label": rng.choice(["a", "b", "c"], 400), "p_a": 1 - p, "p_b": p}).to_parquet(
        tmp_path / "mc.parquet")
    for engine in ([], ["--engine", "duckdb"]):
        code, _, err = run(["metrics", str(tmp_path / "mc.parquet"), "--metrics", "confidence_ece", "--reference",
                            "0", *engine], capsys)
        assert_one_line_error(code, err)
        assert "labels 'c' in" in err and "not among the classes" in err, err


@pytest.mark.parametrize("engine", [None, "duckdb"])
def test_a_log_of_one_class_is_analysed_and_its_note_reaches_the_command_line_and_the_report(tmp_path, capsys,
                                                                                           engine):
    """A day of a log without positives, predicted at 20% on average: refused ("calibration needs examples of at
    least two classes") while it is plain miscalibration. Now the metrics come with the note, on stderr after the
    scan's first pass (a scan knows the classes present only then) and in the report's model section."""
    rng = np.random.default_rng(3)
    p = rng.uniform(0.1, 0.3, 400)
    path = tmp_path / "day.csv"
    pd.DataFrame({"y": np.zeros(400, int), "p": p}).to_csv(path, index=False)
    extra = ["--engine", engine] if engine else []
    code, out, err = run(["metrics", str(path), "--metrics", "ece,brier", "--reference", "50", "--format", "json",
                          *extra], capsys)
    values = {r["metric"]: r["value"] for r in json.loads(out)}
    assert code == 0 and values["brier"] == pytest.approx(np.mean(p ** 2), rel=1e-9)
    assert "only class 0 occurs in the labels (no row of class 1)" in err, err
    report = tmp_path / "r.html"
    code, out, err = run(["report", str(path), "-o", str(report), "--metrics", "ece", "--reference", "50", *extra],
                         capsys)
    assert code == 0 and "Note: only class 0 occurs in the labels (no row of class 1)" in report.read_text()


def test_an_infinite_value_is_a_value_for_the_table_the_csv_and_the_gates(tmp_path, capsys):
    """Hosmer-Lemeshow is infinite where a group of predictions of exactly 0 holds an event: the table said 'n/a',
    the CSV was empty and --fail-above said "no value to check ... undefined" (an audit); infinity exceeds 30."""
    rng = np.random.default_rng(2)
    p = np.r_[np.zeros(40), rng.uniform(0.2, 0.8, 160)]
    y = np.r_[np.ones(1, int), np.zeros(39, int), (rng.random(160) < p[40:]).astype(int)]
    path = tmp_path / "zeros.csv"
    pd.DataFrame({"y": y, "p": p}).to_csv(path, index=False)
    args = ["metrics", str(path), "--metrics", "hosmer_lemeshow", "--reference", "0"]
    code, out, err = run(args + ["--fail-above", "hosmer_lemeshow=30"], capsys)
    assert code == 1 and "Hosmer-Lemeshow of model zeros = inf exceeds 30" in err and "no value" not in err, err
    assert out.splitlines()[1].split()[2] == "inf"
    code, out, err = run(args + ["--format", "csv"], capsys)
    assert pd.read_csv(io.StringIO(out))["value"].iloc[0] == np.inf
    code, out, err = run(args + ["--format", "json"], capsys)
    assert json.loads(out)[0]["value"] is None and json.loads(out)[0]["reading"].startswith("Infinite")


def test_the_suggested_tab_delimiter_can_be_typed(tmp_path, capsys):
    """The error said "pass --delimiter '\\t'" and typing it gave "delimiter must be a single character ... got
    '\\\\t'" (a review): the option takes backslash-t and the word tab."""
    path = tmp_path / "tab.csv"
    path.write_text("y\tp\n" + "1\t0.7\n0\t0.2\n" * 10)
    code, out, err = run(["metrics", str(path), "--delimiter", ",", "--metrics", "ece", "--reference", "0"], capsys)
    assert code == 2 and "pass --delimiter '\\t'" in err, err
    for typed in ("\\t", "tab"):
        code, out, err = run(["metrics", str(path), "--delimiter", typed, "--metrics", "ece", "--reference", "0"],
                             capsys)
        assert code == 0 and "ECE" in out, err
