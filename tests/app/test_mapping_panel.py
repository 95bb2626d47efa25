"""The Data page's column mapping panel: 'Drop invalid rows' (calibviz.io.cleaning), whose tick box the error of a
log with a few empty scores names and preselects; the fields it fills when the detection fails."""
import numpy as np
import pandas as pd

from tests.app.helpers import app, assert_clean, metric_values, shown, upload


def test_a_log_with_empty_scores_loads_after_ticking_drop_invalid_rows():
    rng = np.random.default_rng(0)
    p = rng.beta(2, 5, 3_000)
    df = pd.DataFrame({"y": (rng.random(3_000) < p).astype(int), "p": p})
    df.loc[[3, 7], "p"] = np.nan
    at = app().run()
    before = metric_values(at)
    upload(at, "log.csv", df.to_csv(index=False).encode())
    assert_clean(at)
    message = shown(at.error[0])
    assert "hold NaN or infinite values in 2 rows" in message
    assert "tick 'Drop invalid rows' in the column mapping" in message and "drop_invalid" not in message
    assert metric_values(at) == before  # the demo stays
    box = next(c for c in at.checkbox if c.label == "Drop invalid rows")
    assert box.value  # preselected by the error's hint
    at.button(key=next(b.key for b in at.button if b.label == "Apply mapping")).click().run()
    assert_clean(at)
    assert not at.error, [shown(e) for e in at.error]
    assert metric_values(at)["Rows"] == "2,998"
    page = " ".join(shown(x) for x in [*at.info, *at.caption, *at.markdown, *at.warning])
    assert "dropped 2 of 3,000 rows as asked (drop invalid rows)" in page
    assert at.session_state["cv_source"]["options"]["drop_invalid"] is True


def test_a_failed_detection_still_fills_the_probability_columns_by_name():
    """A 3-class label beside one 'p' column: the error speaks of 'a single probability column', and the mapping
    panel below showed an empty Probability columns field (a walk-through); it now names 'p'."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"label": rng.choice(["dog", "cat", "bird"], 300), "p": rng.random(300)})
    at = app().run()
    upload(at, "three.csv", df.to_csv(index=False).encode())
    assert_clean(at)
    assert "single probability column" in shown(at.error[0])
    field = next(m for m in at.multiselect if m.label == "Probability columns")
    assert field.value == ["p"]
