"""Spark engine in local mode (local[2], 127.0.0.1, UI off, one session per test run): the numbers of DuckDB."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import urllib.parse
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import calibviz as cv
from calibviz.binning import EqualMass, Uniform
from calibviz.scan import SCAN_METRICS

pytest.importorskip("pyspark")
if shutil.which("java") is None:  # pragma: no cover - scripts/test.sh installs Debian's JRE
    pytest.skip("Spark needs Java (apt-get install openjdk-17-jre-headless)", allow_module_level=True)

pytestmark = pytest.mark.slow


#: warnings raised while the session started (the first session of the test run: one per run)
STARTUP_WARNINGS: list = []


@pytest.fixture(scope="module")
def spark():
    from calibviz.scan.spark_engine import session

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s = session()
    STARTUP_WARNINGS.extend(str(w.message) for w in caught)
    yield s
    s.stop()


def test_local_session_is_quiet(spark):
    """The session calibviz starts runs its driver JVM with calibviz's log configuration (errors only), and
    PySpark's warning about the pandas version does not reach the user."""
    jvm_conf = spark.sparkContext._jvm.java.lang.System.getProperty("log4j2.configurationFile")
    assert jvm_conf is not None and jvm_conf.startswith("file:")
    config = Path(urllib.parse.unquote(urllib.parse.urlparse(jvm_conf).path))
    assert config.name == "spark_log4j2.properties" and "rootLogger.level = fatal" in config.read_text()
    assert not [m for m in STARTUP_WARNINGS if "pandas" in m], STARTUP_WARNINGS


@pytest.fixture(scope="module")
def hive(tmp_path_factory):
    rng = np.random.default_rng(11)
    n = 60_000
    p = rng.beta(2, 4, n)
    p[: n // 4] = np.round(p[: n // 4], 2)
    df = pd.DataFrame({"y": (rng.uniform(size=n) < p).astype(np.int64), "p": p, "w": rng.exponential(size=n)})
    df.loc[df.index % 31 == 0, "w"] = 0.0
    root = tmp_path_factory.mktemp("spark") / "logs"
    for day in range(3):
        part = root / f"day={day}"
        part.mkdir(parents=True)
        df.iloc[day::3].to_parquet(part / "part-0.parquet")
    return str(root), df


def test_spark_equals_duckdb(spark, hive):
    path, df = hive
    a = cv.scan(path, engine="spark", weight="w")
    b = cv.scan(path, engine="duckdb", weight="w")
    assert a.n == b.n == int((df.w > 0).sum())
    np.testing.assert_allclose(a.metrics(SCAN_METRICS)["value"], b.metrics(SCAN_METRICS)["value"], rtol=1e-9)
    for scheme in (Uniform(15), EqualMass(10)):
        ta, tb = a.reliability_table(scheme), b.reliability_table(scheme)
        np.testing.assert_array_equal(ta[["n", "positives", "rejected"]], tb[["n", "positives", "rejected"]])
        np.testing.assert_allclose(ta[["mean_pred", "obs_rate", "lower", "upper"]],
                                   tb[["mean_pred", "obs_rate", "lower", "upper"]], rtol=1e-9)
    want = cv.reliability_table(df.y, df.p, binning=EqualMass(10), sample_weight=df.w)
    np.testing.assert_allclose(a.reliability_table(EqualMass(10))["mean_pred"], want["mean_pred"], rtol=1e-9)
    # log loss's reference: its centre from the bucket moments and the tails' filtered pass, on Spark too
    from calibviz.metrics import calibrated_expectation
    from calibviz.scan.reference import _log_loss_expectation

    keep = df.w > 0
    assert _log_loss_expectation(a) == pytest.approx(calibrated_expectation("log_loss", df.p[keep],
                                                                            sample_weight=df.w[keep]), rel=1e-9)


def test_spark_cells_of_full_buckets_equal_duckdb(spark, tmp_path, monkeypatch):
    """Above the exact limit (lowered here) PAVA-BC fits on the cells of full buckets: Spark's cell pass puts every
    row in the cell DuckDB puts it in, so TCE, its bins and the calibrated-model reference are the same."""
    from calibviz.binning import PAVABC
    from calibviz.scan import aggregate, refine

    monkeypatch.setattr(refine, "EXACT_BLOCK_ROWS", 1_000)
    rng = np.random.default_rng(12)
    n = 40_000
    p = np.r_[rng.uniform(0.30, 0.31, n // 2), rng.beta(2, 5, n // 2)]
    p[:10] = 1.0
    df = pd.DataFrame({"y": (rng.uniform(size=n) < p).astype(np.int64), "p": p})
    path = tmp_path / "cells.parquet"
    df.to_parquet(path)
    a, b = cv.scan(str(path), engine="spark"), cv.scan(str(path), engine="duckdb")
    a._ensure_ranges()
    level = refine.full_bucket_levels(a._fine_atoms())
    assert level.max() == 6 and (level > 0).sum() > 100
    cells = [aggregate.cell_table(s._frame, s._roles, level).sort_values(["_b", "_c", "_y"]).reset_index(drop=True)
             for s in (a, b)]
    np.testing.assert_array_equal(cells[0][["_b", "_c", "_y", "n"]], cells[1][["_b", "_c", "_y", "n"]])
    np.testing.assert_allclose(cells[0][["swp", "pmin", "pmax", "sll"]], cells[1][["swp", "pmin", "pmax", "sll"]],
                               rtol=1e-12)
    for scheme in (PAVABC(), PAVABC(500, 4_000)):
        assert a.tce(scheme) == b.tce(scheme)
        np.testing.assert_array_equal(a.reliability_table(scheme)["n"], b.reliability_table(scheme)["n"])
    ra, rb = (s.metrics(["tce"], n_reference=19, random_state=0).iloc[0] for s in (a, b))
    assert ra["p_value"] == rb["p_value"] and ra["null_mean"] == pytest.approx(rb["null_mean"], rel=1e-12)


def test_spark_dataframe_sql_and_bad_rows(spark, hive):
    path, df = hive
    sdf = spark.read.parquet(path)
    s = cv.scan(sdf, weight="w")
    assert s.engine == "spark"
    assert s.metric("brier")[0] == pytest.approx(cv.metrics.brier_score(df.y, df.p, sample_weight=df.w), rel=1e-9)
    sdf.createOrReplaceTempView("logs")
    bad = cv.scan("SELECT y, CASE WHEN day = 1 AND p < 0.1 THEN p + 2 ELSE p END AS p FROM logs", engine="spark")
    n_bad = int(((np.arange(len(df)) % 3 == 1) & (df.p.to_numpy() < 0.1)).sum())
    with pytest.raises(cv.InputError, match=f"outside it in {n_bad} rows"):
        bad.metrics(["ece"])


def test_spark_plain_first_pass_steps_aside_for_bad_scores(spark, tmp_path):
    """The plain first pass casts floor(p 2^16) to an integer key: under Spark's ANSI mode a NaN or infinite score
    makes the cast fail, without it the key is cast but the sums are not finite. Either way the pass returns None
    and the validating pass names the rows; on clean rows it is the validating pass's table."""
    from calibviz.scan import aggregate

    rng = np.random.default_rng(5)
    df = pd.DataFrame({"y": rng.integers(0, 2, 5_000), "p": rng.uniform(size=5_000)})
    df.loc[:3, "p"] = [0.0, 1.0, -0.0, 0.5]
    clean = tmp_path / "clean.parquet"
    df.to_parquet(clean)
    s = cv.scan(str(clean), engine="spark")
    plain = aggregate._plain_fine_table(s._frame, s._roles, True)
    full = aggregate._validating_fine_table(s._frame, s._roles)
    plain, full = (t.sort_values(["_b", "_y"]).reset_index(drop=True) for t in (plain, full))
    np.testing.assert_array_equal(plain[["_b", "_y", "n"]].to_numpy(), full[["_b", "_y", "n"]].to_numpy())
    np.testing.assert_allclose(plain[["swp", "swpp", "pmin", "pmax"]].to_numpy(np.float64),
                               full[["swp", "swpp", "pmin", "pmax"]].to_numpy(np.float64), rtol=1e-12, atol=0)
    # the log loss of confident mistakes: one CASE per row in the plain pass, the filtered pass after the other
    tails = aggregate._tail_groups(plain["_b"].to_numpy(), plain["_y"].to_numpy())
    full = aggregate.with_tail_losses(full, s._frame, s._roles)
    plain = aggregate._derive(plain)
    assert tails.sum() > 0 and not plain["sll"].isna().any()
    np.testing.assert_allclose(plain["sll"], full["sll"], rtol=1e-12, atol=0)
    for name, value in (("missing", None), ("nan", np.nan), ("inf", np.inf), ("-inf", -np.inf)):
        path = tmp_path / f"{name}.parquet"
        df.assign(p=df.p.where(df.index != 7, value)).to_parquet(path)
        s = cv.scan(str(path), engine="spark")
        assert aggregate._plain_fine_table(s._frame, s._roles, False) is None, name
        assert aggregate._plain_fine_table(s._frame, s._roles, True) is None, name
        with pytest.raises(cv.InputError, match="1 row"):
            s.metrics(["ece"])


def test_spark_reads_a_file_named_with_wildcard_characters_as_named(spark, tmp_path):
    rng = np.random.default_rng(6)
    p = rng.uniform(size=2_000)
    df = pd.DataFrame({"y": (rng.uniform(size=2_000) < p).astype(np.int64), "p": p})
    df.to_parquet(tmp_path / "run[1]{a}.parquet")
    df.assign(p=0.9).to_parquet(tmp_path / "run1a.parquet")
    got = cv.scan(str(tmp_path / "run[1]{a}.parquet"), engine="spark").metrics(["ece"])["value"].iloc[0]
    assert got == pytest.approx(cv.metrics.ece(df.y, df.p), rel=1e-9)


def test_spark_reads_a_column_only_later_files_have(spark, tmp_path):
    rng = np.random.default_rng(7)
    for i, name in enumerate(("a", "b")):
        p = rng.uniform(size=300)
        df = pd.DataFrame({"y": (rng.uniform(size=300) < p).astype(np.int64), "p": p})
        (df.assign(model="m") if i else df).to_parquet(tmp_path / f"{name}.parquet")
    with pytest.raises(cv.InputError, match="the model column 'model' is empty in 300 rows"):
        cv.scan(str(tmp_path), engine="spark")


def test_spark_types_hive_partitions_as_duckdb_types_them(spark, tmp_path):
    """Spark's partition inference read models '001', '1' and '1.0' as one 1.0 and pooled them (a review)."""
    rng = np.random.default_rng(9)
    for fmt in ("parquet", "csv"):
        for i, name in enumerate(("001", "1", "1.0")):
            p = rng.uniform(size=300)
            df = pd.DataFrame({"y": (rng.uniform(size=300) < p ** (1 + i)).astype(np.int64), "p": p})
            (tmp_path / fmt / f"model={name}" / "day=7").mkdir(parents=True)
            path = tmp_path / fmt / f"model={name}" / "day=7" / f"part.{fmt}"
            df.to_parquet(path) if fmt == "parquet" else df.to_csv(path, index=False)
        got = cv.scan(str(tmp_path / fmt), model="model", engine="spark")
        want = cv.scan(str(tmp_path / fmt), model="model")
        assert sorted(got.models) == sorted(want.models) == ["001", "1", "1.0"]
        for name in want.models:
            assert got.models[name].metric("ece")[0] == pytest.approx(want.models[name].metric("ece")[0], rel=1e-9)
        assert str(dict(got._frame.collect_schema())["day"]) == "Int64"


def test_spark_multiclass_confidence_view(spark, tmp_path):
    from tests.test_scan import _multiclass

    path = str(tmp_path / "mc.parquet")
    _multiclass(5_000).to_parquet(path)
    a, b = cv.scan(path, engine="spark"), cv.scan(path, engine="duckdb")
    assert not a.is_binary
    assert a.metric("ece")[0] == pytest.approx(b.metric("ece")[0], rel=1e-9)


def test_spark_variable_ranking_equals_in_memory(spark, tmp_path):
    """VECE from scans (calibviz.scan.variables): Spark runs the same aggregation as DuckDB and Polars."""
    from calibviz.variables import variable_ranking

    rng = np.random.default_rng(4)
    n = 8_000
    p = rng.beta(2, 3, n)
    df = pd.DataFrame({"p": p, "age": np.round(rng.uniform(20, 80, n), 1),
                       "city": rng.choice(["a", "b", "c", None], n, p=[.5, .3, .15, .05]), "w": rng.uniform(.5, 2, n)})
    df["y"] = (rng.uniform(size=n) < np.clip(p + np.where(df.age > 50, .15, -.1), 0, 1)).astype(int)
    path = str(tmp_path / "vece.parquet")
    df.to_parquet(path)
    got = cv.scan(path, engine="spark", label="y", probs="p", weight="w").variable_ranking(["age", "city"])
    want = variable_ranking(df[["age", "city"]], df.y, df.p, sample_weight=df.w)
    assert got["feature"].tolist() == want["feature"].tolist() == ["age", "city"]
    np.testing.assert_allclose(got[["vece", "vece_low", "vece_high"]], want[["vece", "vece_low", "vece_high"]],
                               rtol=1e-9)
    assert got["n_bins"].tolist() == want["n_bins"].tolist() and got.loc[1, "level_at_max_vce"] == \
        want.loc[1, "level_at_max_vce"]


def test_spark_files_whose_column_types_differ_are_one_input_error(spark, tmp_path):
    """y is int64 in one file and double in the other: Spark's task fails in the JVM (a Py4JJavaError), reported
    as the InputError that names the file and column (it was an internal error with Java's stack on stderr)."""
    rng = np.random.default_rng(3)
    p = rng.uniform(size=400)
    y = (rng.uniform(size=400) < p).astype(np.int64)
    pd.DataFrame({"y": y[:200], "p": p[:200]}).to_parquet(tmp_path / "a.parquet")
    pd.DataFrame({"y": y[200:].astype(float), "p": p[200:]}).to_parquet(tmp_path / "b.parquet")
    with pytest.raises(cv.InputError, match=r"Spark cannot read the rows: .*Parquet column \[y\].* different types"):
        cv.scan(str(tmp_path), engine="spark").metrics(["ece"], n_reference=0)


def test_spark_widens_narrower_integer_and_float_columns_of_some_files(spark, tmp_path):
    """int8 labels and float32 scores in one file, int64 and float64 in the other: DuckDB's values (README)."""
    rng = np.random.default_rng(8)
    p = rng.uniform(size=600)
    y = (rng.uniform(size=600) < p).astype(np.int64)
    pd.DataFrame({"y": y[:400], "p": p[:400]}).to_parquet(tmp_path / "a.parquet")
    pd.DataFrame({"y": y[400:].astype(np.int8), "p": p[400:].astype(np.float32)}).to_parquet(tmp_path / "b.parquet")
    keys = ["ece", "brier", "log_loss"]
    got = cv.scan(str(tmp_path), engine="spark").metrics(keys, n_reference=0)["value"]
    want = cv.scan(str(tmp_path), engine="duckdb").metrics(keys, n_reference=0)["value"]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_spark_reads_a_csv_padded_with_spaces_as_in_memory(spark, tmp_path):
    """'y, p' with ' 0.298': Spark's CSV reader kept the spaces (a column named ' p' of text) unless told."""
    rng = np.random.default_rng(5)
    p = rng.uniform(size=300).round(4)
    y = (rng.uniform(size=300) < p).astype(int)
    path = tmp_path / "padded.csv"
    path.write_text("y, p\n" + "".join(f"{a}, {b}\n" for a, b in zip(y, p)))
    got = cv.scan(str(path), engine="spark").metrics(["ece", "brier"])["value"].to_numpy()
    want = cv.scan(str(path), engine="duckdb").metrics(["ece", "brier"])["value"].to_numpy()
    np.testing.assert_allclose(got, want, rtol=1e-9)


def test_spark_reads_csv_null_texts_as_missing_as_in_memory(spark, tmp_path):
    """'NA', 'N/A', 'NULL' in a CSV: Spark's reader takes one null text, so 'NA' made a score column text ("a
    non-numeric value") and a numeric feature a category, where memory, DuckDB and Polars read missing values.
    Spark now types the text it reads as the in-memory reader does: the same error, the same variable ranking."""
    rng = np.random.default_rng(8)
    n = 3000
    p = rng.uniform(size=n)
    y = np.where(rng.uniform(size=n) < p, "yes", "no")
    income = np.round(rng.uniform(1000, 9000, n), 1).astype(str)
    income[::25] = "NA"
    income[1::50] = "NULL"
    visits = rng.integers(0, 9, n).astype(str)
    visits[3::40] = "N/A"
    segment = rng.choice(list("abc"), n)
    frame = pd.DataFrame({"y": y, "p": p.round(5), "segment": segment, "income": income, "visits": visits,
                          "flag": rng.choice(["true", "false"], n)})
    path = tmp_path / "na.csv"
    frame.to_csv(path, index=False)
    from calibviz.variables import variable_ranking

    preds = cv.load_predictions(str(path), positive="yes")
    assert preds.features["income"].dtype == np.float64 and preds.features["visits"].isna().sum() == len(range(3, n, 40))
    want = variable_ranking(preds.features, preds.y, preds.y_prob, n_resamples=0).set_index("feature")
    s = cv.scan(str(path), positive="yes", engine="spark")
    got = s.variable_ranking(["segment", "income", "visits"], n_resamples=0).set_index("feature")
    assert got.loc["income", "type"] == want.loc["income", "type"] == "numeric"
    np.testing.assert_allclose(got.loc[["segment", "income", "visits"], "vece"],
                               want.loc[["segment", "income", "visits"], "vece"], rtol=1e-9)
    np.testing.assert_allclose(s.metrics(["ece", "brier"])["value"].to_numpy(),
                               cv.scan(str(path), positive="yes").metrics(["ece", "brier"])["value"].to_numpy(),
                               rtol=1e-9)
    scores = frame.assign(p=frame.p.astype(str))
    scores.loc[[4, 8], "p"] = ["NA", "N/A"]
    scores.to_csv(path, index=False)
    with pytest.raises(cv.InputError, match=r"'p' hold missing, NaN or infinite values in 2 rows; fill or drop"):
        cv.scan(str(path), positive="yes", engine="spark").metrics(["ece"])
    scores.loc[9, "p"] = "high"  # a word stays text: the scan names it
    scores.to_csv(path, index=False)
    with pytest.raises(cv.InputError, match=r"probability column 'p' of .* holds non-numeric values in 1 row, e.g. "
                                            r"'high'"):
        cv.scan(str(path), positive="yes", engine="spark").metrics(["ece"])


def test_spark_drops_the_invalid_rows_duckdb_drops(spark, tmp_path):
    """drop_invalid on Spark: the same note and numbers as DuckDB (rows of no model, an empty score, a negative
    weight)."""
    rng = np.random.default_rng(3)
    n = 4_000
    p = rng.beta(2, 5, n)
    df = pd.DataFrame({"model": np.where(np.arange(n) % 2, "a", "b"), "y": (rng.random(n) < p).astype(np.int64),
                       "p": p, "weight": rng.uniform(0.5, 2, n)})
    df.loc[[3, 5], "p"] = np.nan
    df.loc[7, "weight"] = -1.0
    df.loc[[10, 12], "model"] = None
    path = tmp_path / "log.parquet"
    df.to_parquet(path)
    s, d = (cv.scan(str(path), engine=e, drop_invalid=True) for e in ("spark", "duckdb"))
    for name in ("a", "b"):
        a, b = s.models[name], d.models[name]
        assert a.notes == b.notes and "dropped" in a.notes[-1]
        np.testing.assert_allclose(a.metrics(metrics=("ece", "brier"))["value"].to_numpy(float),
                                   b.metrics(metrics=("ece", "brier"))["value"].to_numpy(float), rtol=1e-9)


#: a file Spark cannot read: not Parquet (no "PAR1" magic number at its tail)
_NOT_PARQUET = b"these bytes are no Parquet file " * 40


def test_spark_errors_are_one_line_in_sparks_words(spark, tmp_path):
    """A parse error's text opens with an empty line (the message was "the Spark SQL query failed:" and nothing);
    a file Spark cannot read said only Py4J's "An error occurred while calling o40.parquet". Now: the line that
    names Spark's error class, the position in the query, the cause of a file that is not Parquet (read by a
    query: a file by path is checked before Spark reads it)."""
    cases = {"SELECT * FROM 'x.parquet'":  # DuckDB's quoted path
             r"^the Spark SQL query failed: \[PARSE_SYNTAX_ERROR\] Syntax error at or near ''x\.parquet''.* "
             r"\(line 1, pos 14\)$",
             "SELECT 1 AS y, 0.5 AS p; DROP TABLE IF EXISTS zz":
             r"^the Spark SQL query failed: \[PARSE_SYNTAX_ERROR\] Syntax error at or near 'DROP'.* "
             r"\(line 1, pos 25\)$",
             "SELECT * FROM nosuch_table":
             r"^the Spark SQL query failed: \[TABLE_OR_VIEW_NOT_FOUND\] The table or view `nosuch_table` cannot be "
             r"found\..* \(line 1, pos 14\)$",
             "SELECT y FROM (SELECT 1 AS x)":
             r"^the Spark SQL query failed: \[UNRESOLVED_COLUMN\.WITH_SUGGESTION\] .*name `y` cannot be resolved.* "
             r"\(line 1, pos 7\)$"}
    bad = tmp_path / "x.parquet"
    bad.write_bytes(_NOT_PARQUET)
    # a local file is checked for Parquet's markers before any engine reads it (io.readers.check_parquet_marks)
    cases[str(bad)] = (r"^'.*x\.parquet' is no complete Parquet file .*Write it again, or leave it out \(it starts as "
                       r"text: if it is a CSV file, name it \.csv\)\.$")
    # a query that reads the file itself: the cause is the JVM's, not in the AnalysisException's text
    cases[f"SELECT * FROM parquet.`{bad}`"] = (r"^the Spark SQL query failed: "
                                               r"\[FAILED_TO_CREATE_PLAN_FOR_DIRECT_QUERY\] .*\(caused by: .*is not a "
                                               r"Parquet file\.")
    for source, message in cases.items():
        with pytest.raises(cv.InputError, match=message) as caught:
            cv.scan(source, engine="spark")
        said = str(caught.value)
        assert "\n" not in said and "SQLSTATE" not in said and "An error occurred" not in said, said


def _env():
    """The environment of a child Python that imports this checkout's calibviz, whatever its working folder."""
    root = str(Path(__file__).resolve().parents[1])
    return dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))


def _cli(args, cwd):
    return subprocess.Popen([sys.executable, "-m", "calibviz", *args], cwd=cwd, env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


#: the JVM's own line (Spark 4 asks for the module): README, 'Running against a cluster'
_JVM_LINE = "WARNING: Using incubator modules: jdk.incubator.vector"


def test_spark_cli_errors_print_one_line_and_no_java_stack(tmp_path):
    """PySpark 4 logs every AnalysisException it raises as a JSON record with the whole Java stack trace on stderr
    (its Python-side SQLQueryContextLogger), before calibviz's one line: the session calibviz starts silences it.
    The commands run side by side (a JVM each)."""
    (tmp_path / "x.parquet").write_bytes(_NOT_PARQUET)
    runs = {"nosuch": (["metrics", "SELECT * FROM nosuch", "--engine", "spark"], "[TABLE_OR_VIEW_NOT_FOUND]"),
            "parse": (["metrics", "SELECT * FROM 'x.parquet'", "--engine", "spark"], "[PARSE_SYNTAX_ERROR]"),
            "file": (["metrics", "x.parquet", "--engine", "spark"], "is no complete Parquet file")}
    procs = {name: _cli(args, tmp_path) for name, (args, _) in runs.items()}
    for name, proc in procs.items():
        out, err = proc.communicate(timeout=300)
        lines = [line for line in err.splitlines() if line.strip() and line != _JVM_LINE]
        assert proc.returncode == 2 and out == "", (name, err[:2000])
        assert "at org.apache" not in err and '"logger"' not in err and "Traceback" not in err, (name, err[:2000])
        assert len(lines) == 1 and lines[0].startswith("calibviz: error: "), (name, err[:2000])
        assert runs[name][1] in lines[0], (name, lines[0])


def test_a_users_own_session_keeps_pysparks_logging(tmp_path):
    """calibviz quiets PySpark's loggers only for the session it starts: a session the user built keeps the user's
    logging (README, 'Running against a cluster'), here PySpark's own record of the failed query."""
    pytest.importorskip("pyspark.logger")  # PySpark 4: the loggers
    code = ("from pyspark.sql import SparkSession\n"
            "spark = (SparkSession.builder.master('local[1]').config('spark.driver.host', '127.0.0.1')"
            ".config('spark.driver.bindAddress', '127.0.0.1').config('spark.ui.enabled', 'false').getOrCreate())\n"
            "import calibviz as cv\n"
            "try:\n    cv.scan('SELECT * FROM nosuch', engine='spark')\n"
            "except cv.InputError as e:\n    print(e)\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=_env(), capture_output=True, text=True,
                          timeout=300)
    assert proc.stdout.startswith("the Spark SQL query failed: [TABLE_OR_VIEW_NOT_FOUND]"), proc.stderr[-2000:]
    assert '"logger": "SQLQueryContextLogger"' in proc.stderr
