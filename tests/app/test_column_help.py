"""Header tooltips of the dashboard's tables (calibviz.ui.columns): every explained name is a column of a library
table (no stale or misspelt entry), names that mean different things in different tables are not explained, a
caller's own column configuration wins, and a page's table carries the tooltips."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import calibviz as cv
from calibviz.metrics.corp import corp_table
from calibviz.multiclass import class_ranking, top_label_table
from calibviz.ui.columns import COLUMN_HELP, column_help
from calibviz.variables import variable_ranking

from .helpers import app, assert_clean


def _library_columns() -> set[str]:
    rng = np.random.default_rng(0)
    p = rng.uniform(0.05, 0.95, 400)
    y = (rng.uniform(size=400) < p).astype(int)
    P = rng.dirichlet([1, 1, 1], 400)
    k = (rng.random(400)[:, None] > P.cumsum(1)).sum(1).clip(0, 2)
    features = pd.DataFrame({"age": rng.uniform(20, 80, 400), "sex": rng.choice(["f", "m"], 400)})
    tables = [cv.reliability_table(y, p), top_label_table(k, P),
              corp_table(y, p, n_resamples=20, bands=("consistency", "confidence")),
              class_ranking(k, P), variable_ranking(features, y, p, n_resamples=20)]
    return {c for t in tables for c in t.columns}


def test_every_explained_name_is_a_column_of_a_library_table():
    assert set(COLUMN_HELP) <= _library_columns(), set(COLUMN_HELP) - _library_columns()
    # names of several meanings (rows of a bin or of a class; a metric's value or a ranking's) stay unexplained
    assert not {"n", "value", "low", "high", "label", "weight"} & set(COLUMN_HELP)


def test_column_help_leaves_the_callers_columns_alone():
    config = column_help(["mean_pred", "obs_rate", "n", 3], given={"obs_rate": "Observed"})
    assert set(config) == {"mean_pred"}


@pytest.mark.apptest
def test_the_per_bin_table_explains_its_headers():
    at = app().run()
    at.switch_page("pages/1_Reliability.py").run()
    assert_clean(at)
    table = next(d for d in at.dataframe if "mean_pred" in d.value.columns)
    config = json.loads(table.proto.columns)
    assert config["mean_pred"]["help"] == COLUMN_HELP["mean_pred"]
    assert config["gap"]["help"].startswith("obs_rate - mean_pred")
    assert "n" not in config
