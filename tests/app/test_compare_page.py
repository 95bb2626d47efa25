"""AppTest of the Compare page (better and worse, the chosen reference in the table and the URL, intervals on
request, numeric tables) and of the leaderboard on the Data page."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import calibviz as cv
import calibviz.compare
from calibviz.ui.blocks import table_height

from streamlit.testing.v1 import AppTest

from .helpers import ROOT, assert_clean, shown, upload

pytestmark = [pytest.mark.apptest, pytest.mark.usefixtures("clear_streamlit_caches")]


def app() -> AppTest:
    # several models and their references per run: more than helpers.TIMEOUT on a loaded 2-core machine
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)


def _frame(n: int, n_models: int = 3, seed: int = 0) -> pd.DataFrame:
    """One probability column per model: a calibrated one, an overconfident one (clearly worse calibrated),
    a blurred one (worse AUC), then more calibrated ones with their own noise."""
    rng = np.random.default_rng(seed)
    z = rng.normal(-0.5, 1.5, n)
    sig = lambda t: 1 / (1 + np.exp(-t))  # noqa: E731
    df = pd.DataFrame({"y_true": (rng.uniform(size=n) < sig(z)).astype(int), "good__p": sig(z),
                       "overconfident__p": sig(2.5 * z), "blurred__p": sig(z + rng.normal(0, 2.0, n))})
    for i in range(3, n_models):
        df[f"other{i}__p"] = sig(z + rng.normal(0, 0.5, n))
    return df


def _compare(df: pd.DataFrame, **query):
    at = app()
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    upload(at, "models.csv", df.to_csv(index=False).encode())
    assert_clean(at)
    at.switch_page("pages/5_Compare.py").run()
    assert_clean(at)
    assert not at.error, [e.value for e in at.error]
    return at


def _sentences(at) -> list[str]:
    """The bulleted sentences, without the bullet and the bold marks."""
    return [shown(m)[2:].replace("**", "") for m in at.markdown if m.value.startswith("- ")]


def _table(at, label: str = "Value") -> pd.DataFrame:
    """The per-metric table of the first metric (ECE with the sidebar's metrics set to ece,brier)."""
    return next(d.value for d in at.dataframe if "Versus the reference" in d.value.columns)


def test_better_and_worse_against_the_chosen_reference():
    at = _compare(_frame(3000), metrics="ece,brier", boot="50")
    # the sidebar's one-model picker is hidden here: the reference picker chooses
    assert "w_model" not in [sb.key for sb in at.selectbox] and "w_ref" in [sb.key for sb in at.selectbox]
    lines = _sentences(at)
    assert any(s.startswith("overconfident is worse than good on ECE") for s in lines), lines
    assert any(s.startswith("overconfident is worse than good on Brier score") for s in lines), lines
    # computed metric by metric, judged together: 2 metrics x 2 models
    assert all("adjusted for 4 differences)" in s for s in lines if " is worse than " in s), lines
    ece = _table(at)
    assert {"p", "p adjusted"} <= set(ece.columns)
    assert ece["Model"].tolist() == ["good", "overconfident", "blurred"]
    assert ece.loc[ece["Model"] == "good", "Versus the reference"].item() == "reference"
    assert ece.loc[ece["Model"] == "good", ["Difference", "Difference low", "Difference high"]].isna().all(axis=None)
    for col in ("Value", "95% low", "95% high", "Difference", "Difference low", "Difference high"):
        assert ece[col].dtype == np.float64, col  # numbers, sorted as numbers
    before = ece.set_index("Model")["Difference"]
    # the reference is the user's: the table, the sentences and the link follow
    at.selectbox(key="w_ref").set_value("overconfident").run()
    assert_clean(at)
    assert at.query_params["ref"] in ("overconfident", ["overconfident"])
    lines = _sentences(at)
    assert any(s.startswith("good is better than overconfident on ECE") for s in lines), lines
    after = _table(at).set_index("Model")
    assert after.loc["overconfident", "Versus the reference"] == "reference"
    assert after.loc["good", "Difference"] == pytest.approx(-before["overconfident"])
    assert "against **overconfident**" in " ".join(c.value for c in at.caption) or any(
        "overconfident" in s.value for s in at.subheader)


def test_verdicts_follow_the_sidebars_level():
    """The Compare page's verdicts are tests at the sidebar's alpha, read from intervals at 1 - alpha (as the
    diagrams' intervals are): at alpha = 0.1 the caption and the sentences say 90%, and the table equals
    compare_models at confidence 0.9."""
    df = _frame(2000, seed=3)
    at = _compare(df, metrics="ece,brier", boot="50", alpha="0.1")
    captions = " ".join(c.value for c in at.caption)
    assert "p-value adjusted by Holm's method is at most 0.1," in captions, captions
    lines = _sentences(at)
    verdicts = [s for s in lines if " is worse than " in s or " is better than " in s]
    assert verdicts and all("90% interval" in s for s in verdicts), lines
    ece = _table(at)
    models = {c[:-3]: (df["y_true"].to_numpy(), df[c].to_numpy()) for c in df.columns if c.endswith("__p")}
    expected = calibviz.compare.compare_models(models, metrics=("ece",), n_resamples=50, confidence=0.9,
                                               config=cv.panel.PanelConfig(alpha=0.1))
    np.testing.assert_allclose(ece["Difference low"].to_numpy(dtype=float)[1:], expected["diff_low"].to_numpy()[1:])


def test_reference_from_a_link():
    at = _compare(_frame(2000), metrics="ece", boot="0", ref="blurred")
    t = _table(at).set_index("Model")
    assert t.loc["blurred", "Versus the reference"] == "reference"
    assert t.loc["good", "Versus the reference"] == "not tested"  # no resamples: values only
    assert not _sentences(at) or not any(" is worse than " in s for s in _sentences(at))


def test_tce_in_percent_and_the_table_fits_its_rows():
    at = _compare(_frame(2000), metrics="tce", boot="0")
    el = next(d for d in at.dataframe if "Versus the reference" in d.value.columns)
    assert '"%.2f%%"' in el.proto.columns and '"%+.2f pp"' in el.proto.columns  # TCE's numbers are percentages
    assert el.value["Value"].dtype == np.float64 and el.value["Value"].max() > 1  # stored in percent units
    # (AppTest does not expose a dataframe's height; the page passes table_height(rows))
    assert table_height(3) == 38 + 35 * 3 and table_height(35) == table_height(25)


def test_no_bootstrap_until_requested(monkeypatch):
    calls = []
    real = calibviz.compare._resampled
    monkeypatch.setattr(calibviz.compare, "_resampled", lambda *a, **k: calls.append(1) or real(*a, **k))
    # 5 models x 2,100 rows x 500 resamples = 5.25e6 resampled rows: above the page's budget (5e6)
    at = _compare(_frame(2_100, n_models=5), metrics="ece,brier", boot="500")
    assert not calls
    t = _table(at)
    assert t["95% low"].isna().all() and set(t["Versus the reference"]) == {"reference", "not tested"}
    assert at.button(key="compare_boot")
    at.button(key="compare_boot").click().run(timeout=300)
    assert_clean(at)
    assert calls
    t = _table(at)
    assert t["95% low"].notna().all() and t.loc[t["Model"] == "overconfident", "Versus the reference"].item() == "worse"
    assert any(s.startswith("overconfident is worse than good on ECE") for s in _sentences(at))


def test_leaderboard_on_the_data_page():
    at = app()
    at.run()
    assert not any(s.value == "All models" for s in at.subheader)  # one model: no leaderboard
    at.selectbox(key="cv_demo_pick").set_value("loan_recalibration").run()
    assert_clean(at)
    assert any(s.value == "All models" for s in at.subheader)
    board = next(d.value for d in at.dataframe if "Model" in d.value.columns and "ECE" in d.value.columns)
    assert board["Model"].tolist() == ["raw", "recalibrated"]
    assert board["ECE"].dtype == np.float64 and board["TCE"].dtype == np.float64
    m = cv.load_demo_models("loan_recalibration")
    assert board["ECE"].tolist() == pytest.approx([cv.metrics.ece(p.y, p.y_prob) for p in m.values()])


def test_the_decomposition_caption_counts_the_rows_of_a_model():
    """On large data the MCB-DSC whiskers wait; the caption names the models and the rows each has (it said
    "100,000 rows" of a 50,000-row file of two models, a walk-through)."""
    # 5 models x 2,100 rows x 500 resamples: above the page's budget, as test_no_bootstrap_until_requested
    at = _compare(_frame(2_100, n_models=5), metrics="ece,brier", boot="500")
    captions = [c.value for c in at.caption if c.value.startswith("Bootstrap intervals of the decomposition")]
    assert captions == ["Bootstrap intervals of the decomposition are left out on 5 models of 2,100 rows until "
                        "requested."]


def test_the_data_summary_names_the_model_it_is_about():
    """With several models the calibration-in-the-large sentence names the selected one (it said "the model")."""
    at = app().run()
    upload(at, "models.csv", _frame(1_000, n_models=3).to_csv(index=False).encode())
    assert_clean(at)
    said = [shown(m) for m in at.markdown if shown(m).startswith("On average the model")]
    assert said and said[0].startswith("On average the model “good” "), said
