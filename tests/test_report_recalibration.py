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


def test_report_reads_recalibration_and_comparison_at_one_minus_alpha():
    """The before - after and the comparison's differences decide "improved" and better / worse: at alpha = 0.01
    the report reads them at 99%, as the Recalibrate and Compare pages do (it read 95% at every alpha)."""
    from calibviz.panel import PanelConfig

    models = cv.load_demo_models("loan_recalibration")
    page = html.unescape(build_report(models, config=PanelConfig(alpha=0.01), n_resamples=10, n_reference=10,
                                      recalibration=["platt"], metrics=("ece",), source="loan_recalibration"))
    recal = page[page.index('id="recalibration-0"'):page.index('id="reproducibility"')]
    assert "99%" in recal and "95%" not in recal
    compare = page[page.index('id="compare"'):page.index('id="model-0"')]
    assert "99%" in compare
