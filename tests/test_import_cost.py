"""`import calibviz` stays light: every CLI command pays it (calibviz._lazy)."""
import subprocess
import sys


def test_cli_import_does_not_load_scipy_stats_or_optimize():
    code = ("import sys, calibviz.cli; "
            "print(sorted(m for m in ('scipy.stats', 'scipy.optimize', 'scipy.interpolate', 'statsmodels', "
            "'plotly', 'streamlit') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_lazy_names_resolve_to_the_real_objects():
    from scipy import stats

    from calibviz import stats as cv_stats
    from calibviz.metrics import binned

    assert binned.chi2.sf(3.0, 2) == stats.chi2.sf(3.0, 2)
    assert cv_stats.student_t.ppf(0.975, 10) == stats.t.ppf(0.975, 10)
