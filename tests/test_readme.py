"""Every example of the README runs as written: the Python blocks, and the `calibviz ...` shell lines that need
no file of the user's (demo names, `demos`, `--help`)."""
from __future__ import annotations

import re
import shlex

import pytest

import calibviz as cv
from calibviz.cli import main as cli_main

from .conftest import ROOT

README = (ROOT / "README.md").read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", README, flags=re.S)
SHELL_LINES = [line.strip() for block in re.findall(r"```bash\n(.*?)```", README, flags=re.S)
               for line in block.splitlines() if line.strip().startswith("calibviz ")]


def _runnable(line: str) -> bool:
    """Lines that need no user file and start no server."""
    argv = shlex.split(line, comments=True)[1:]
    if not argv or argv[0] == "app":
        return False
    if argv[0] in ("info", "metrics", "report") and not any(a.startswith("-") for a in argv[1:2]):
        return len(argv) > 1 and argv[1] in cv.demo_datasets()
    return True


COMMANDS = [line for line in SHELL_LINES if _runnable(line)]


def test_readme_has_examples():
    assert BLOCKS
    # every subcommand of the CLI sections has a runnable example
    assert {shlex.split(c)[1] for c in COMMANDS} >= {"demos", "info", "metrics", "report"}


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_python_block_runs(code, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    exec(compile(code, "README.md", "exec"), {})
    assert capsys.readouterr().out  # the examples print what they show


@pytest.mark.parametrize("line", COMMANDS, ids=[f"cmd{i}" for i in range(len(COMMANDS))])
def test_readme_shell_example_runs(line, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    argv = shlex.split(line, comments=True)[1:]
    assert cli_main(argv) == 0, line
    out = capsys.readouterr()
    assert out.out or out.err
    if "-o" in argv:
        written = tmp_path / argv[argv.index("-o") + 1]
        if argv[0] == "report":
            assert written.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
        else:  # recalibrate: the predictions file with the new columns
            assert written.stat().st_size > 0
