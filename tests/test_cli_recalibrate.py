"""`calibviz recalibrate` and `calibviz metrics --recalibrate`, end to end."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import calibviz as cv
from calibviz.cli import RECALIBRATION_FIELDS, main
from calibviz.recalibration import cross_fit, from_dict, get_recalibrator

from .conftest import ROOT


def run(argv, capsys):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def assert_one_line_error(code, err):
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("calibviz: error:"), err


def test_recalibrate_writes_rows_columns_and_map(tmp_path, capsys):
    out, mp = tmp_path / "out.parquet", tmp_path / "map.json"
    code, _, err = run(["recalibrate", "hospital_readmission", "--method", "isotonic", "-o", str(out),
                        "--map", str(mp)], capsys)
    assert code == 0, err
    assert "Brier score" in err and "out-of-fold" in err
    df = pd.read_parquet(out)
    raw = pd.read_csv(cv.demo_path("hospital_readmission"))
    assert list(df.columns[: len(raw.columns)]) == list(raw.columns) and len(df) == len(raw)
    pd.testing.assert_frame_equal(df[raw.columns], raw, check_dtype=False)
    preds = cv.load_demo("hospital_readmission")
    cf = cross_fit("isotonic", preds.y, preds.y_prob)  # same folds (seed 0)
    np.testing.assert_allclose(df["isotonic__p"], cf.y_prob)
    np.testing.assert_array_equal(df["isotonic__fold"], cf.fold)
    m = from_dict(json.loads(mp.read_text()))
    np.testing.assert_allclose(m.predict(preds.y_prob), cf.final.predict(preds.y_prob))
    np.testing.assert_allclose(m.predict(preds.y_prob),
                               get_recalibrator("isotonic").fit(preds.y_prob, preds.y).predict(preds.y_prob))


def test_recalibrate_multiclass_csv_options_and_split(tmp_path, capsys):
    out = tmp_path / "cifar.csv"
    code, _, err = run(["recalibrate", "cifar10_resnet50", "--method", "temperature", "-o", str(out),
                        "--cross-fit", "3"], capsys)
    assert code == 0, err
    df = pd.read_csv(out)
    preds = cv.load_demo("cifar10_resnet50")
    cols = [f"temperature:p_{c}" for c in preds.classes]
    assert all(c in df.columns for c in cols)
    np.testing.assert_allclose(df[cols].sum(axis=1), 1.0)
    # a user split and venn_abers intervals
    rng = np.random.default_rng(0)
    p = rng.uniform(size=600)
    frame = pd.DataFrame({"label": (rng.uniform(size=600) < p ** 2).astype(int), "p": p,
                          "split": np.where(np.arange(600) < 400, "calibration", "test")})
    src = tmp_path / "in.csv"
    frame.to_csv(src, index=False)
    code, _, err = run(["recalibrate", str(src), "--method", "venn_abers", "-o", str(tmp_path / "va.csv"),
                        "--split-column", "split"], capsys)
    assert code == 0, err
    va = pd.read_csv(tmp_path / "va.csv")
    assert va["venn_abers__p"].iloc[:400].isna().all() and va["venn_abers__p"].iloc[400:].notna().all()
    assert (va["venn_abers__p0"].iloc[400:] <= va["venn_abers__p1"].iloc[400:]).all()
    assert (va["venn_abers__fold"].iloc[:400] == -1).all()
    code, _, err = run(["recalibrate", str(src), "--method", "platt", "-o", str(tmp_path / "x.csv"),
                        "--split-column", "split", "--cross-fit", "3"], capsys)  # it was ignored in silence
    assert code == 2 and "give one of them" in err
    code, _, err = run(["recalibrate", str(src), "--method", "histogram_binning", "--option", "n_bins=7",
                        "-o", str(tmp_path / "hb.csv"), "--map", str(tmp_path / "hb.json")], capsys)
    assert code == 0, err
    assert len(json.loads((tmp_path / "hb.json").read_text())["state"]["binary"]["values"]) == 7


def test_recalibrate_multiclass_venn_abers_writes_the_intervals(tmp_path, capsys):
    out = tmp_path / "va_mc.csv"
    code, _, err = run(["recalibrate", "cifar10_resnet50", "--method", "venn_abers", "--multiclass", "classwise",
                        "-o", str(out), "--cross-fit", "2"], capsys)
    assert code == 0, err
    df = pd.read_csv(out)
    classes = cv.load_demo("cifar10_resnet50").classes
    for c in classes:  # each class's one-vs-rest interval
        assert (df[f"venn_abers:p0_{c}"] <= df[f"venn_abers:p1_{c}"]).all()
    np.testing.assert_allclose(df[[f"venn_abers:p_{c}" for c in classes]].sum(axis=1), 1.0)


def test_recalibrate_bad_input_is_one_line(tmp_path, capsys):
    code, _, err = run(["recalibrate", "hospital_readmission", "--method", "platt", "-o", str(tmp_path / "x.xlsx")],
                       capsys)
    assert_one_line_error(code, err)
    code, _, err = run(["recalibrate", "hospital_readmission", "--method", "platt", "-o", str(tmp_path / "o.csv"),
                        "--option", "wings=2"], capsys)
    assert_one_line_error(code, err)
    code, _, err = run(["recalibrate", "hospital_readmission", "--method", "platt", "-o", str(tmp_path / "o.csv"),
                        "--split-column", "nope"], capsys)
    assert_one_line_error(code, err)
    code, _, err = run(["recalibrate", "hospital_readmission", "--method", "platt", "-o",
                        str(tmp_path / "missing" / "o.csv")], capsys)
    assert_one_line_error(code, err)


def test_metrics_recalibrate_json_before_after(capsys):
    code, out, err = run(["metrics", "loan_recalibration", "--model-column", "model", "--recalibrate", "platt",
                          "--metrics", "ece", "--ci", "20", "--reference", "20", "--format", "json"], capsys)
    if code == 2:  # the demo is wide format: no model column to name
        code, out, err = run(["metrics", "loan_recalibration", "--recalibrate", "platt", "--metrics", "ece",
                              "--ci", "20", "--reference", "20", "--format", "json"], capsys)
    assert code == 0, err
    records = json.loads(out)
    assert set(records[0]) == set(RECALIBRATION_FIELDS)
    raw = [r for r in records if r["model"] == "raw" and r["metric"] == "ece"][0]
    assert raw["after"] < raw["before"] and raw["diff_low"] > 0 and raw["improved"]
    assert raw["after_null_low"] is not None and raw["scheme"] == "cross-fit (5 folds)"
    assert raw["after_n_redraws"] == 20  # the redraws behind after_p_value (1/21 would be a bound)
    assert {r["metric"] for r in records} == {"ece", "brier", "log_loss"}


def test_metrics_recalibrate_subprocess_table():
    res = subprocess.run([sys.executable, "-m", "calibviz", "metrics", "hospital_readmission", "--recalibrate",
                          "beta", "--metrics", "ece", "--reference", "10"], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[0].split()[:3] == ["model", "method", "metric"]
    assert "out-of-fold" in res.stdout


@pytest.mark.parametrize("bad", [["--recalibrate", "magic"], ["--recalibrate", "platt", "--cross-fit", "1"]])
def test_metrics_recalibrate_bad_options(bad, capsys):
    with pytest.raises(SystemExit) if bad[1] == "magic" else _nullcontext():
        code, _, err = run(["metrics", "hospital_readmission", *bad], capsys)
        assert_one_line_error(code, err)


class _nullcontext:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_recalibrate_long_format_weights_and_per_model_maps(tmp_path, capsys):
    rng = np.random.default_rng(4)
    n = 500
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p ** 1.3).astype(int)
    df = pd.concat([pd.DataFrame({"model": "a", "label": y, "p": p, "w": rng.integers(0, 3, n)}),
                    pd.DataFrame({"model": "b", "label": y, "p": np.clip(p * 1.1, 0, 1), "w": rng.integers(0, 3, n)})])
    src = tmp_path / "long.csv"
    df.to_csv(src, index=False)
    code, _, err = run(["recalibrate", str(src), "--method", "beta", "--weight", "w", "-o", str(tmp_path / "o.csv"),
                        "--map", str(tmp_path / "m.json")], capsys)
    assert code == 0, err
    out = pd.read_csv(tmp_path / "o.csv")
    assert out.groupby("model").size().to_dict() == {"a": n, "b": n}
    data = json.loads((tmp_path / "m.json").read_text())
    models = cv.load_models(src, weight="w")
    for name in ("a", "b"):
        m = from_dict(data, model=name)
        pr = models[name]
        ref = get_recalibrator("beta").fit(pr.y_prob, pr.y, sample_weight=pr.weights)
        np.testing.assert_allclose(m.predict(pr.y_prob), ref.predict(pr.y_prob))
    with pytest.raises(cv.InputError, match="one map per model"):
        from_dict(data)
    assert f"on {int((df['w'][:n] > 0).sum()):,} out-of-fold rows" in err


def test_recalibrate_refuses_to_overwrite_its_input(tmp_path):
    """-o naming the input file overwrote the original predictions (an adversarial review)."""
    import numpy as np
    import pandas as pd

    from calibviz.cli import main

    rng = np.random.default_rng(0)
    p = rng.uniform(size=300)
    path = tmp_path / "preds.parquet"
    pd.DataFrame({"y": (rng.random(300) < p).astype(int), "p": p}).to_parquet(path)
    before = path.read_bytes()
    assert main(["recalibrate", str(path), "--method", "platt", "-o", str(path)]) == 2
    assert path.read_bytes() == before


def test_metrics_recalibrate_reads_its_difference_at_one_minus_alpha(capsys):
    """'improved' comes from the before - after interval: at --alpha 0.01 it is the 99% interval, as the
    Recalibrate page reads it (the command line read 95% at every alpha), and the table names its level."""
    common = ["metrics", "hospital_readmission", "--recalibrate", "platt", "--metrics", "ece", "--ci", "50",
              "--reference", "20", "--seed", "4"]
    rows = {}
    for alpha in ("0.05", "0.01"):
        code, out, err = run(common + ["--alpha", alpha, "--format", "json"], capsys)
        assert code == 0, err
        rows[alpha] = next(r for r in json.loads(out) if r["metric"] == "ece")
    assert rows["0.05"]["diff"] == rows["0.01"]["diff"]
    assert rows["0.01"]["diff_low"] < rows["0.05"]["diff_low"] and rows["0.01"]["diff_high"] > rows["0.05"]["diff_high"]
    code, out, err = run(common + ["--alpha", "0.01"], capsys)
    assert code == 0 and "99% interval" in out.splitlines()[0], out


def test_an_infinite_value_before_recalibration_is_inf_in_the_table_and_the_csv(tmp_path, capsys):
    """Hosmer-Lemeshow is infinite where predictions of exactly 0 hold an event: the --recalibrate table said
    'n/a' where `metrics` now says 'inf' (a review)."""
    rng = np.random.default_rng(2)
    p = np.r_[np.zeros(40), rng.uniform(0.2, 0.8, 360)]
    y = np.r_[np.ones(1, int), np.zeros(39, int), (rng.random(360) < p[40:]).astype(int)]
    path = tmp_path / "zeros.csv"
    pd.DataFrame({"y": y, "p": p}).to_csv(path, index=False)
    args = ["metrics", str(path), "--recalibrate", "isotonic", "--metrics", "hosmer_lemeshow", "--reference", "0"]
    assert main(args) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if "Hosmer-Lemeshow" in line)
    assert row.split()[3] == "inf", row
    assert main(args + ["--format", "csv"]) == 0
    import io
    table = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert table.loc[table["metric"] == "hosmer_lemeshow", "before"].iloc[0] == np.inf
    assert main(args + ["--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["before"] is None  # JSON has no infinity
