"""The files a scan's path names (calibviz.scan.files): as glob finds them, without loops, repeats or gaps."""
import glob
import os

import numpy as np
import pandas as pd
import pytest

import calibviz as cv
from calibviz.scan import files as scan_files
from calibviz.scan.files import matched_files
from calibviz.scan.source import check_allowed

ROWS = 2000


@pytest.fixture()
def log(tmp_path):
    rng = np.random.default_rng(3)
    p = rng.beta(2, 5, ROWS)
    return pd.DataFrame({"y": rng.binomial(1, p), "p": p})


def test_matches_are_globs_on_a_tree_without_links(tmp_path, monkeypatch):
    for name in ["a.parquet", "b.csv", ".hidden.parquet", "x/c.parquet", "x/y/d.parquet", "x/.h/e.parquet",
                 "z[1].parquet", "z1.parquet"]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"PAR1")
    monkeypatch.chdir(tmp_path)
    for pattern in ["*.parquet", "**/*.parquet", "x/**/*.parquet", "*/*.parquet", "**/.*.parquet", "?.csv",
                    "x/**", "z[0-9].parquet", "**/d.parquet", str(tmp_path / "**" / "*.parquet")]:
        expected = sorted(f for f in glob.glob(pattern, recursive=True) if os.path.isfile(f))
        assert matched_files(pattern)[:2] == (expected, []), pattern
    # a file's own name, brackets included, is that file, as in memory (not the glob's z1.parquet)
    assert matched_files("z[1].parquet")[:2] == (["z[1].parquet"], [])


def test_a_link_back_to_a_parent_ends_and_counts_each_row_once(tmp_path, log):
    root = tmp_path / "loop"
    root.mkdir()
    log.to_parquet(root / "a.parquet")
    os.symlink(".", root / "s1")
    os.symlink(".", root / "s2")
    # glob.glob(recursive=True) grows 2^depth paths here: the page waited for ever
    for source in [root / "**" / "*.parquet", root / "**" / "*.csv", root, root / ("*/" * 16 + "*.parquet")]:
        files, repeats, _ = matched_files(str(source))
        assert len({os.path.realpath(f) for f in files}) == len(files) <= 1
        assert repeats
    s = cv.scan(str(root / "**" / "*.parquet"))
    assert s.n == ROWS
    assert any("link" in n and "counted once" in n for n in s.notes)


def test_a_link_beside_its_target_is_read_once_and_said(tmp_path, log):
    (tmp_path / "logs" / "2024-01").mkdir(parents=True)
    log.to_parquet(tmp_path / "logs" / "2024-01" / "a.parquet")
    os.symlink("2024-01", tmp_path / "logs" / "latest")
    log.to_parquet(tmp_path / "logs" / "b.parquet")
    os.symlink("b.parquet", tmp_path / "logs" / "newest.parquet")
    for source in [tmp_path / "logs", tmp_path / "logs" / "*" / "*.parquet", tmp_path / "logs" / "**" / "*.parquet"]:
        s = cv.scan(str(source))
        expected = 2 * ROWS if source.name == "logs" or "**" in str(source) else ROWS
        assert s.n == expected, source
        (note,) = [n for n in s.notes if "link" in n]
        assert "counted once" in note and ("latest" in note or "newest" in note)
    # the rows of a file named twice are those of the file read once
    once = cv.scan(str(tmp_path / "logs" / "2024-01" / "a.parquet")).metrics(["ece", "brier"])
    twice = cv.scan(str(tmp_path / "logs" / "*" / "*.parquet")).metrics(["ece", "brier"])
    np.testing.assert_allclose(twice["value"], once["value"], rtol=1e-12)


def test_a_directory_that_cannot_be_listed_is_named_not_skipped(tmp_path, log, monkeypatch):
    (tmp_path / "logs" / "sub").mkdir(parents=True)
    log.to_parquet(tmp_path / "logs" / "a.parquet")
    log.to_parquet(tmp_path / "logs" / "sub" / "b.parquet")
    closed = str(tmp_path / "logs" / "sub")
    real_scandir = os.scandir

    def scandir(path="."):  # as for a server that does not run as root (chmod 000 does not stop root)
        if os.path.abspath(path) == closed:
            raise PermissionError(13, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(scan_files.os, "scandir", scandir)
    for source in [tmp_path / "logs", tmp_path / "logs" / "**" / "*.parquet", tmp_path / "logs" / "*" / "*.parquet"]:
        with pytest.raises(cv.InputError, match=r"sub' cannot be read \(Permission denied\): its files would be "
                                                r"left out"):
            cv.scan(str(source))
    # a file inside it (which this process cannot see): 'no file matches' alone misled where the file exists
    monkeypatch.setattr(scan_files.os, "access", lambda path, mode: os.path.abspath(path) != closed)
    with pytest.raises(cv.InputError, match=r"no file matches .*c.parquet' \('.*sub' cannot be read by this "
                                            r"process\)"):
        cv.scan(closed + "/c.parquet")


def test_too_many_files_are_refused_with_the_limit(tmp_path, log, monkeypatch):
    for k in range(4):
        log.to_parquet(tmp_path / f"part-{k}.parquet")
    monkeypatch.setattr(scan_files, "MAX_FILES", 3)
    with pytest.raises(cv.InputError, match="names more than 3 files; name fewer"):
        cv.scan(str(tmp_path / "*.parquet"))


def test_allowed_roots_follow_links_once_and_refuse_one_that_leads_out(tmp_path, monkeypatch):
    root = tmp_path / "data"
    (root / "logs").mkdir(parents=True)
    (root / "logs" / "a.parquet").write_bytes(b"PAR1")
    os.symlink(".", root / "logs" / "again")
    check_allowed(str(root / "logs" / "**" / "*.parquet"), [str(root)])  # ends: each directory listed once
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "s.parquet").write_bytes(b"PAR1")
    os.symlink(tmp_path / "secret", root / "logs" / "elsewhere")
    # refused at the link, before the tree behind it is walked (a link to '/' walked the whole disk and named a
    # directory of /proc it could not list, a review)
    for source in [root / "logs", root / "logs" / "**" / "*.parquet", root / "logs" / "*" / "*.parquet"]:
        with pytest.raises(cv.InputError, match=r"elsewhere' \(matched by .*\) is a link that resolves outside the "
                                                r"directories"):
            check_allowed(str(source), [str(root)])
    os.unlink(root / "logs" / "elsewhere")
    (tmp_path / "secret" / "deeper").mkdir()
    os.symlink(tmp_path / "secret" / "deeper", root / "logs" / "elsewhere")
    listed, real_entries = [], scan_files._entries
    monkeypatch.setattr(scan_files, "_entries", lambda d: listed.append(os.path.realpath(d)) or real_entries(d))
    with pytest.raises(cv.InputError, match="is a link that resolves outside"):
        check_allowed(str(root / "logs" / "**" / "*.parquet"), [str(root)])
    assert not any(p.startswith(str(tmp_path / "secret")) for p in listed), listed


def test_a_link_beside_a_hive_partition_keeps_the_partitions_name(tmp_path, log):
    """logs/current -> model=b: the link's name was kept (it sorts first) and broke the engines' hive partitions
    (a review). The direct name is kept, so 'model' is still a column of every row."""
    for m in "ab":
        (tmp_path / "logs" / f"model={m}").mkdir(parents=True)
        log.to_parquet(tmp_path / "logs" / f"model={m}" / "part.parquet")
    os.symlink("model=b", tmp_path / "logs" / "current")
    for engine in ("duckdb", "polars"):
        s = cv.scan(str(tmp_path / "logs"), engine=engine)
        assert sorted(s.models) == ["a", "b"] and sum(m.n for m in s.models.values()) == 2 * ROWS
        assert any("'" + str(tmp_path / "logs" / "current") + "'" in n for n in s.notes)


def test_a_last_double_star_names_directories_as_glob_does(tmp_path):
    (tmp_path / "logs" / "sub").mkdir(parents=True)
    for name in ["logs/a.csv", "logs/sub/b.csv", "logs/.x.parquet"]:
        (tmp_path / name).write_text("y,p\n1,0.5\n")
    for pattern in ["logs/*/**", "logs/a.csv/**", "logs/.*/**", "logs/**"]:
        full = str(tmp_path / pattern)
        expected = sorted(f for f in glob.glob(full, recursive=True) if os.path.isfile(f))
        assert matched_files(full)[0] == expected, pattern


def test_a_link_elsewhere_in_the_tree_never_takes_a_partitions_place(tmp_path, log, monkeypatch):
    """logs/_aliases/current -> ../model=b sorts before model=b: the walk reached it first and kept the link's
    name, and DuckDB refused the hive partitions (a review). Names reached without a link are walked first."""
    for m in "ab":
        (tmp_path / "logs" / f"model={m}").mkdir(parents=True)
        log.to_parquet(tmp_path / "logs" / f"model={m}" / "part.parquet")
    (tmp_path / "logs" / "_aliases").mkdir()
    os.symlink("../model=b", tmp_path / "logs" / "_aliases" / "current")
    os.symlink("../model=a/part.parquet", tmp_path / "logs" / "_aliases" / "a.parquet")
    files, repeats, _ = matched_files(str(tmp_path / "logs"))
    assert [os.path.relpath(f, tmp_path / "logs") for f in files] == ["model=a/part.parquet", "model=b/part.parquet"]
    assert {os.path.relpath(a, tmp_path / "logs") for a, _ in repeats} == {"_aliases/current", "_aliases/a.parquet"}
    assert sorted(cv.scan(str(tmp_path / "logs")).models) == ["a", "b"]
    # under a root that is itself a link (/data -> /mnt/data), the names without links in them are still kept
    os.symlink(tmp_path / "logs", tmp_path / "linked_root")
    files, _, _ = matched_files(str(tmp_path / "linked_root"))
    assert [os.path.relpath(f, tmp_path / "linked_root") for f in files] == ["model=a/part.parquet",
                                                                              "model=b/part.parquet"]


def test_hidden_names_of_a_directory_are_said_and_a_trailing_separator_names_directories(tmp_path, log):
    (tmp_path / "logs" / ".ipynb_checkpoints").mkdir(parents=True)
    (tmp_path / "logs" / "d").mkdir()
    log.to_parquet(tmp_path / "logs" / "d" / "a.parquet")
    log.to_parquet(tmp_path / "logs" / ".ipynb_checkpoints" / "a.parquet")  # a copy: its rows would count twice
    log.to_parquet(tmp_path / "logs" / "top.parquet")
    s = cv.scan(str(tmp_path / "logs"))
    assert s.n == 2 * ROWS
    assert any("hidden name (starting with '.', e.g. '" in n and ".ipynb_checkpoints') is not read" in n
               for n in s.notes), s.notes
    # 'logs/*/': the directories the glob matches, each standing for its data files (not logs/top.parquet)
    assert cv.scan(str(tmp_path / "logs" / "*") + os.sep).n == ROWS


def test_a_glob_that_starts_with_a_comment_like_path_is_no_query():
    from calibviz.io.readers import is_sql

    for path in ["/*/2024/*/with_labels.parquet", "/*/*/from/x.parquet", "select_model.parquet", "values.csv"]:
        assert not is_sql(path), path
    for query in ["-- last week\nSELECT 1", "/* all */ select 1", "  WITH t AS (SELECT 1) SELECT * FROM t",
                  "from preds", "(SELECT 1)"]:
        assert is_sql(query), query


def test_a_file_named_through_a_link_with_glob_characters_is_checked_whole(tmp_path):
    """'root/d[1]/secret.csv' with d[1] -> an outside directory: a file named directly is not walked, and the
    check read only the part before the first glob character (the engine then read the outside file, a review)."""
    (tmp_path / "root").mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "secret.csv").write_text("y,p\n1,0.5\n0,0.2\n1,0.9\n")
    os.symlink(tmp_path / "out", tmp_path / "root" / "d[1]")
    os.symlink(tmp_path / "out" / "secret.csv", tmp_path / "root" / "f[1].csv")
    for path in ["d[1]/secret.csv", "d[1]//secret.csv", "./d[1]/./secret.csv", "f[1].csv/", "f[1].csv"]:
        with pytest.raises(cv.InputError, match="outside the directories this server may read"):
            check_allowed(str(tmp_path / "root") + "/" + path, [str(tmp_path / "root")])
