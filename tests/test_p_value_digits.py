"""How p-values and bounds on them are printed (calibviz.stats.p_value_digits, bound_digits; tables, readings,
the CLI and the report all go through calibviz.panel.format_p_value)."""
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, strategies as st

from calibviz.panel import format_adjusted_p, format_p_value, p_value_words
from calibviz.stats import bound_digits, p_value_digits


@pytest.mark.parametrize("p, shown", [(0.104, "0.104"), (0.0995, "0.0995"), (0.0504, "0.0504"), (0.0496, "0.0496"),
                                      (0.05, "0.05"), (0.1, "0.1"), (0.23, "0.23"), (0.0123, "0.012"),
                                      (1.0, "1"), (0.9996, "0.9996"), (0.00104, "0.00104")])
def test_two_digits_unless_they_would_print_a_level(p, shown):
    assert p_value_digits(p) == shown


def test_a_p_value_next_to_alpha_reads_on_its_side_of_it():
    """p = 0.104 printed "0.1" beside α = 0.1 and the verdict "no evidence" (a walk-through); 2/201 printed
    "0.01", the level it is evidence at."""
    assert p_value_words(0.104) == "p = 0.104" and p_value_words(2 / 201) == "p = 0.00995"


@given(st.floats(0.001, 1.0))
def test_the_printed_value_is_never_a_level_it_is_not(p):
    """Levels are one-digit values (the dashboard's 0.001, 0.01, 0.05, 0.1; any --alpha such as 0.2): a p-value
    prints as one only when it (nearly) is one."""
    text = format_p_value(p)
    if len(text.replace(".", "").lstrip("0")) < 2:
        assert abs(p - float(text)) < 1e-7 * p
    assert abs(float(text) - p) <= 0.05 * p  # and two significant digits at least


@given(st.integers(1, 100), st.integers(1, 100_000))
def test_a_bound_is_rounded_up(k, r):
    bound = k / (r + 1)
    assert Fraction(bound_digits(bound)) >= Fraction(bound) * (1 - Fraction(1, 10**12))


def test_bounds_in_tables():
    assert format_p_value(1 / 201, 200) == "≤ 0.005"  # 0.004975: rounding up gives the round value
    assert format_adjusted_p(2 / 2401, 1 / 2401, 2400) == "≤ 0.00084"  # 0.000833, not "≤ 0.00083"
    assert format_adjusted_p(np.nan, 0.1) == ""
