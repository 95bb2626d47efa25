"""Variables page: categorical columns ranked with the numeric ones, readable per-level table, a diagram per level."""
from __future__ import annotations

import pytest

from .helpers import app, assert_clean, figures, shown

pytestmark = [pytest.mark.apptest, pytest.mark.usefixtures("clear_streamlit_caches")]


def _page():
    at = app()
    at.query_params["data"] = "hospital_readmission"
    at.run()
    at.switch_page("pages/4_Variables.py").run()
    assert_clean(at)
    return at


def test_ranking_includes_categorical_columns_and_levels_read_well():
    at = _page()
    bars = [f["data"][0] for f in figures(at) if f["data"] and f["data"][0].get("orientation") == "h"][0]
    assert {"ward", "sex", "age", "bmi"} <= set(bars["y"])  # numeric and categorical on one scale
    ward = bars["hovertext"][bars["y"].index("ward")]
    assert "over its levels" in ward and "in level" in ward
    [sb for sb in at.selectbox if sb.label == "Variable"][0].set_value("ward").run()
    assert_clean(at)
    table = at.dataframe[0].value
    assert list(table.columns[:5]) == ["Level", "Rows", "Share of rows", "Observed rate", "Mean prediction"]
    assert not any("_" in c for c in table.columns)  # no raw headers (observed_low, ece_high)
    assert table["Rows"].sum() == 20000
    levels = [f for f in figures(at) if any("% of rows" in a.get("text", "") for a in f["layout"].get("annotations", []))]
    assert len(levels) == 1
    panels = [a["text"].split("<br>")[0] for a in levels[0]["layout"]["annotations"] if "% of rows" in a["text"]]
    assert set(panels) == set(table["Level"])  # one diagram per level
    assert sum(1 for t in levels[0]["data"] if t.get("error_y")) == len(panels)
    assert any("One reliability diagram per level" in c.value for c in at.caption)


def test_variables_at_the_overall_gap_are_explained():
    """Five demo variables share VECE 0.0237: the model's overall over-confidence, which bounds every VECE from
    below; the page says so instead of leaving five equal bars unexplained, and the verdict lists them apart from
    age by the test beyond the score's miscalibration (a gap at the floor may still vary along a variable)."""
    at = _page()
    floor = [shown(c) for c in at.caption if shown(c).startswith("No variable's VECE can fall below the overall gap")]
    # no direction is read from the gap's sign
    assert floor and "confident" not in floor[0] and "however much the gap varies along it" in floor[0]
    assert "Data page" not in floor[0]  # it tests another gap (the rate of 1s), not confidence against accuracy
    named = floor[0].split("varies along it: ")[-1].split(". Whether")[0]
    assert all(f in named for f in ("length_of_stay", "prior_admissions", "bmi", "ward", "sex")) and "age" not in named
    verdict = [shown(m) for m in at.markdown if shown(m).startswith("VECE beyond what a calibrated model shows")]
    assert verdict and "**age**" in verdict[0]
    apart = verdict[0].split("Of these, ")[-1].split("; along ")[-1]
    assert apart.startswith(("length_of_stay", "prior_admissions", "bmi", "ward", "sex"))
    assert all(f in apart for f in ("length_of_stay", "prior_admissions", "bmi", "ward", "sex")) and "age" not in apart


def test_largest_disagreement_is_said_first():
    import calibviz as cv
    from calibviz.variables import disagreement_ranges, variable_curves

    d = cv.load_demo("hospital_readmission")
    ranges = disagreement_ranges(variable_curves(d.features["age"], d.y, d.y_prob, scale="percent"))
    big, first = ranges["max_difference"].max(), ranges["max_difference"].iloc[0]
    assert big > first + 1
    at = _page()
    texts = [shown(m) for m in at.markdown]
    largest = [t for t in texts if t.startswith("Largest disagreement: age")]
    assert largest and f"{big:.1f} percentage points" in largest[0]
    top = [t for t in texts if t.startswith("**age** shows the largest")]
    assert top and f"({big:.1f} percentage points)" in top[0]  # the ranking's max-VCE and the largest range agree


def test_a_calibrated_model_gets_no_range_and_the_curve_p_value():
    """A calibrated upload: the page says no range is beyond what a calibrated model shows, with the curve's
    p-value (computed independently of the page by variable_curves on the same rows)."""
    import numpy as np
    import pandas as pd

    from calibviz.variables import variable_curves

    from .helpers import upload

    rng = np.random.default_rng(21)
    p = rng.beta(2, 5, 3000)
    y = rng.binomial(1, p)
    x = np.log(p / (1 - p)) + rng.normal(size=3000)
    at = app().run()
    upload(at, "calibrated.csv", pd.DataFrame({"label": y, "p": p, "score_age": x}).to_csv(index=False).encode())
    at.switch_page("pages/4_Variables.py").run()
    assert_clean(at)
    expected = variable_curves(x, y, p, kind="error", span=0.75, alpha=0.05)
    assert expected.attrs["p_value"] > 0.05
    texts = [shown(m) for m in at.markdown]
    said = [t for t in texts if t.startswith("No range of")]
    assert said and f"p = {expected.attrs['p_value']:.2g} along the whole curve" in said[0]
    assert not [t for t in texts if t.startswith("Largest disagreement")]


def test_the_largest_range_is_not_repeated_among_the_others():
    """The largest range is said once ("Largest disagreement: ..."); the list below holds the other ranges (a
    walk-through read the same sentence twice)."""
    import calibviz as cv
    from calibviz.variables import disagreement_ranges, variable_curves

    d = cv.load_demo("hospital_readmission")
    ranges = disagreement_ranges(variable_curves(d.features["age"], d.y, d.y_prob, scale="percent"))
    assert len(ranges) > 1
    texts = [shown(m) for m in _page().markdown]
    largest = [t for t in texts if t.startswith("Largest disagreement: age")][0]
    others = [t for t in texts if t.startswith("Also:")]
    assert others and largest.split(": ", 1)[1] not in others[0]
    assert others[0].count("\n- ") == len(ranges) - 1
