"""The CLI on the layouts people export (#14 part 3): never advice that makes a wrong number."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from calibviz.cli import main


def _two_models(tmp_path):
    """y_true and one positive-class column per model (scikit-learn export), rows that do not sum to 1."""
    rng = np.random.default_rng(0)
    n = 300
    p = rng.uniform(0.02, 0.98, n)
    y = rng.binomial(1, p)
    q = np.clip(p + rng.normal(0, 0.15, n), 0, 1)
    path = tmp_path / "export.csv"
    pd.DataFrame({"y_true": y, "logreg_proba": p, "rf_proba": q}).to_csv(path, index=False)
    return path, y, p, q


def test_explicit_columns_of_two_models_exit_2_with_the_right_advice(tmp_path, capsys):
    path, *_ = _two_models(tmp_path)
    for extra in ([], ["--renormalize"]):  # before: the advice --renormalize gave ECE 0.389 with exit 0
        code = main(["metrics", str(path), "--probs", "logreg_proba", "rf_proba", "--ci", "0", "--reference", "0",
                     *extra])
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
        assert "renormalize" not in err and "one model per column" in err
        assert "columns named <model>_proba are detected" in err


def test_detected_one_model_per_column(tmp_path, capsys):
    path, y, p, q = _two_models(tmp_path)
    code = main(["metrics", str(path), "--metrics", "ece,brier", "--ci", "0", "--reference", "0",
                 "--format", "json"])
    out = capsys.readouterr().out
    assert code == 0
    rows = {(r["model"], r["metric"]): r["value"] for r in json.loads(out)}
    assert set(m for m, _ in rows) == {"logreg", "rf"}
    assert rows[("logreg", "brier")] == pytest.approx(np.mean((p - y) ** 2), abs=1e-12)
    assert rows[("rf", "brier")] == pytest.approx(np.mean((q - y) ** 2), abs=1e-12)
