"""The files a path, a glob or a directory names, found without loops, repeats or silent gaps.

Python's ``glob.glob(recursive=True)`` follows links into directories, so a
link back to a parent (``logs/latest -> .``) made ``logs/**/*.parquet`` grow
without end (a review: one thread at full CPU and a gigabyte of paths a
minute, the page waiting for ever), and a link beside its target
(``logs/latest -> 2024-01``) matched every file twice, so the scan counted
their rows twice with no word. ``Path.rglob`` skipped a directory it may not
list without a word, so a scan analysed part of the log. Here every real
directory is listed at most once per position in the pattern, a file reached
by two names is read once (the first name in sorted order; the scan's notes
say which were left out), and a directory that cannot be listed is an error
that names it. The standard library has no loop-safe glob (``glob`` gained
no such option up to 3.13), hence this module.
"""
from __future__ import annotations

import fnmatch
import glob as _glob
import os
from pathlib import Path

from ..errors import InputError

__all__ = ["MAX_FILES", "DATA_SUFFIXES", "Outside", "matched_files", "unreadable_note"]

#: Most files one source may name: a log of 10^10 rows in files of 10^5 rows is 10^5 files.
MAX_FILES = 200_000
#: The names of the data files of a directory (a .tar.gz or .json.gz beside them is not one: it read as CSV).
DATA_SUFFIXES = (".parquet", ".csv", ".tsv", ".csv.gz", ".tsv.gz")


def _entries(directory: str) -> list:
    """The entries of a directory, or an error naming it where it cannot be listed."""
    try:
        with os.scandir(directory) as it:
            return sorted(it, key=lambda e: e.name)
    except (PermissionError, NotADirectoryError, FileNotFoundError) as exc:
        if isinstance(exc, PermissionError):
            raise InputError(f"{directory!r} cannot be read ({exc.strerror}): its files would be left out of the "
                             "scan. Give the reader access to it, or name the files outside it.") from None
        return []


def _is_dir(entry) -> bool:
    try:
        return entry.is_dir()  # follows links: a link to a directory is walked (once per real directory)
    except OSError:
        return False


def _is_file(path: str) -> bool:
    try:
        return os.path.isfile(path)
    except OSError:
        return False


def _in_order(entries: list) -> list:
    """Entries by name, those that are no link first: of a directory reached both directly and through a link
    (``logs/current -> model=b``), the direct name is kept, whose hive keys the engines read (the link's name broke
    the partitioning, a review)."""
    return sorted(entries, key=lambda e: (e.is_symlink(), e.name))


def _walk(base: str, parts: tuple, out: list, repeats: list, within=None) -> None:
    """Append to ``out`` the files under ``base`` that ``parts`` (glob components) match, as glob does (``*``
    and ``?`` skip hidden names unless the component starts with '.', ``**`` is zero or more directories), each
    real directory listed at most once per component; a directory reached again through a link is appended to
    ``repeats`` as (its name, the name it was listed under). ``within``: a test of real paths; a directory that
    fails it is not listed but raises :class:`Outside` (the allowed roots: a link to '/' walked the whole disk)."""
    seen: dict = {}
    stack = [(base, 0)]
    while stack:
        path, k = stack.pop()
        if k == len(parts):
            if _is_file(path):
                out.append(path)
                if len(out) > MAX_FILES:
                    raise InputError(f"the path names more than {MAX_FILES:,} files; name fewer (a narrower glob, "
                                     "or one directory of the log at a time).")
            continue
        key = (os.path.realpath(path), k)
        if key in seen:  # a link back to a directory already listed here: the same files again, or a loop
            repeats.append((path, seen[key]))
            continue
        seen[key] = path
        if within is not None and os.path.isdir(path) and not within(key[0]):
            raise Outside(path)
        part = parts[k]
        if part == "**":
            if not os.path.isdir(path):  # '**' is directories: a file before it ('logs/*/**') is no match
                continue
            stack.append((path, k + 1))  # zero directories
            entries = [e for e in _in_order(_entries(path)) if not e.name.startswith(".")]
            stack.extend((os.path.join(path, e.name), k) for e in reversed(entries) if _is_dir(e))
            if k + 1 == len(parts):  # a last '**' names the files at every depth too, as glob's does
                stack.extend((os.path.join(path, e.name), k + 1) for e in reversed(entries) if not _is_dir(e))
        elif _glob.has_magic(part):
            names = [e.name for e in _in_order(_entries(path))]
            if not part.startswith("."):
                names = [n for n in names if not n.startswith(".")]
            stack.extend((os.path.join(path, n), k + 1) for n in reversed(fnmatch.filter(names, part)))
        else:
            stack.append((os.path.join(path, part), k + 1))


class Outside(InputError):
    """A directory a path's matches would be listed from lies outside the allowed directories (``path``)."""

    def __init__(self, path: str):
        super().__init__(path)
        self.path = path


def matched_files(text: str, within=None) -> tuple[list[str], list[tuple[str, str]]]:
    """(files, repeats) that a file path, a glob or a directory names, in sorted order.

    A directory stands for its data files at any depth (:data:`DATA_SUFFIXES`).
    A file or directory reached by two names (a link) is read once, under a
    name without links where it has one, else the first in sorted order;
    ``repeats`` lists (name left out, name kept). A directory that cannot be
    listed raises :class:`~calibviz.InputError`; one whose real path fails
    ``within`` raises :class:`Outside`.

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp(); _ = open(os.path.join(d, "a.parquet"), "wb").write(b"PAR1")
    >>> os.symlink(d, os.path.join(d, "loop"))  # a link back to its own directory
    >>> files, repeats = matched_files(os.path.join(d, "**", "*.parquet"))
    >>> [os.path.relpath(f, d) for f in files], [os.path.relpath(a, d) for a, _ in repeats]
    (['a.parquet'], ['loop'])
    """
    path = Path(text)
    if path.is_file():
        return [str(text)], []
    found: list = []
    repeats: list = []  # (name left out, name kept): directories through links here, then files
    if path.is_dir():
        _walk(str(text), ("**", "*"), found, repeats, within)
        found = [f for f in found if f.lower().endswith(DATA_SUFFIXES)]
    elif _glob.has_magic(str(text)):
        parts = path.parts
        fixed = next(i for i, q in enumerate(parts) if _glob.has_magic(q))
        base = str(Path(*parts[:fixed])) if fixed else os.curdir
        _walk(base, parts[fixed:], found, repeats, within)
        if not fixed:  # a relative glob names its matches relative, as glob does
            found = [os.path.relpath(f, os.curdir) for f in found]
            repeats = [(os.path.relpath(a, os.curdir), os.path.relpath(b, os.curdir)) for a, b in repeats]
    names: dict = {}  # real path: the names that reach it
    for f in sorted(set(found)):
        names.setdefault(os.path.realpath(f), []).append(f)
    files = []
    for real, reach in names.items():
        direct = [f for f in reach if os.path.realpath(f) == os.path.abspath(f)]
        kept = (direct or reach)[0]
        files.append(kept)
        repeats.extend((f, kept) for f in reach if f != kept)
    return sorted(files), repeats


def unreadable_note(path: str) -> str:
    """' (<dir> cannot be read)' for a path under a directory that exists but may not be listed or entered,
    else '': "no file matches" alone misled where the file exists but its directory is closed to the reader."""
    parent = Path(path).parent
    while parent != parent.parent and not parent.exists():
        parent = parent.parent
    if parent.is_dir() and not os.access(parent, os.R_OK | os.X_OK):
        return f" ({str(parent)!r} cannot be read by this process)"
    return ""
