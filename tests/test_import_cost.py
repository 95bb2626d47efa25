"""`import calibviz` stays light: every CLI command pays it (calibviz._lazy)."""
import subprocess
import sys


def test_cli_import_does_not_load_scipy():
    code = ("import sys, calibviz.cli; "
            "print(sorted(m for m in ('scipy', 'scipy.special', 'scipy.stats', 'scipy.optimize', 'scipy.interpolate', 'statsmodels', "
            "'plotly', 'streamlit') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_lazy_names_resolve_to_the_real_objects():
    from scipy import stats

    from calibviz import stats as cv_stats
    from calibviz.metrics import binned

    assert binned.chi2.sf(3.0, 2) == stats.chi2.sf(3.0, 2)
    assert cv_stats.student_t.ppf(0.975, 10) == stats.t.ppf(0.975, 10)


def test_boost_binomial_ufuncs_equal_scipy_stats():
    """The binomial ufuncs loaded on first use give scipy.stats.binom's numbers (pmf, cdf, sf), edges included."""
    import numpy as np
    from scipy import stats

    from calibviz import stats as cv_stats

    x = np.array([-1.0, 0.0, 3.0, 7.0, 10.0, 11.0])
    n = np.full(6, 10.0)
    p = np.array([0.3, 0.0, 0.5, 1.0, 0.9, 0.2])
    assert cv_stats._boost_binom() is not None
    np.testing.assert_array_equal(cv_stats._pmf(x, n, p), stats.binom.pmf(x, n, p))
    np.testing.assert_array_equal(cv_stats._cdf(x, n, p), stats.binom.cdf(x, n, p))
    np.testing.assert_array_equal(cv_stats._sf(x, n, p), stats.binom.sf(x, n, p))
