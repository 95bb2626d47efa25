"""The report's recalibration section (#15 part 5)."""
from __future__ import annotations

import html
import re

import pytest

import calibviz as cv
from calibviz.cli import main
from calibviz.report import build_report, report_contents


def test_report_recalibration_section_binary():
    models = cv.load_demo_models("hospital_readmission")
    page = build_report(models, n_resamples=10, n_reference=10, recalibration=["platt", "venn_abers"],
                        source="hospital_readmission")
    assert 'id="recalibration-0"' in page and "Recalibration: hospital_readmission" in page
    section = page[page.index('id="recalibration-0"'):page.index('id="reproducibility"')]
    assert "cross-fit (5 folds)" in section and "loss gained" in section
    assert "Before − after" in section and "calibrated model would show" in section
    assert "Platt scaling: p&#x27; = sigmoid(" in section or "Platt scaling: p' = sigmoid(" in html.unescape(section)
    call = html.unescape(re.search(r'<pre id="python-call">(.*?)</pre>', page, re.S).group(1))
    compile(call, "<report>", "exec")
    assert "recalibration=['platt', 'venn_abers']" in call
    assert "--recalibrate platt --recalibrate venn_abers" in page
    assert "Recalibration (out-of-fold before/after)" in report_contents(models, ["platt"])
    assert "Recalibration" not in " ".join(report_contents(models))


def test_report_recalibration_multiclass_and_cli(tmp_path, capsys):
    out = tmp_path / "r.html"
    code = main(["report", "cifar10_resnet50", "-o", str(out), "--ci", "0", "--reference", "5",
                 "--recalibrate", "temperature"])
    assert code == 0, capsys.readouterr().err
    page = out.read_text(encoding="utf-8")
    assert 'id="recalibration-0"' in page and "Temperature scaling: T = " in page
    with pytest.raises(cv.InputError, match="unknown recalibration method"):
        build_report(cv.load_demo("hospital_readmission"), n_resamples=0, recalibration=["magic"])
