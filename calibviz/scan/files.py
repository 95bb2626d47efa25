"""The files a path, a glob or a directory names, found without loops, repeats or silent gaps.

Python's ``glob.glob(recursive=True)`` follows links into directories, so a
link back to a parent (``logs/latest -> .``) made ``logs/**/*.parquet`` grow
without end (a review: one thread at full CPU and a gigabyte of paths a
minute, the page waiting for ever), and a link beside its target
(``logs/latest -> 2024-01``) matched every file twice, so the scan counted
their rows twice with no word. ``Path.rglob`` skipped a directory it may not
list without a word, so a scan analysed part of the log. Here every real
directory is listed at most once per position in the pattern, a file reached
by two names is read once (under a name reached without a link; the scan's
notes say which were left out), hidden names of a directory are said, and a
directory that cannot be listed is an error that names it. The standard
library has no loop-safe glob (``glob`` gained no such option up to 3.13),
hence this module.
"""
from __future__ import annotations

import fnmatch
import glob as _glob
import os
from pathlib import Path

from ..errors import InputError

__all__ = ["MAX_FILES", "DATA_SUFFIXES", "Outside", "glob_base", "matched_files", "unreadable_note"]

#: Most files one source may name: a log of 10^10 rows in files of 10^5 rows is 10^5 files.
MAX_FILES = 200_000
#: The names of the data files of a directory (a .tar.gz or .json.gz beside them is not one: it read as CSV).
DATA_SUFFIXES = (".parquet", ".pq", ".csv", ".tsv", ".csv.gz", ".tsv.gz")


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


def _is_link(entry) -> bool:
    try:
        return entry.is_symlink()
    except OSError:
        return False


def _is_file(path: str) -> bool:
    try:
        return os.path.isfile(path)
    except OSError:
        return False


def glob_base(text: str) -> tuple[str, tuple]:
    """(the fixed directory of a glob, its components from the first with a wildcard on).

    >>> glob_base("/data/logs/day=*/*.parquet")
    ('/data/logs', ('day=*', '*.parquet'))
    >>> glob_base("*.csv")
    ('.', ('*.csv',))
    """
    parts = Path(text).parts
    fixed = next((i for i, q in enumerate(parts) if _glob.has_magic(q)), len(parts))
    return (str(Path(*parts[:fixed])) if fixed else os.curdir), parts[fixed:]


class Outside(InputError):
    """A directory a path's matches would be listed from lies outside the allowed directories (``path``)."""

    def __init__(self, path: str):
        super().__init__(path)
        self.path = path


class _Walk:
    """One walk of a glob's components (``*`` and ``?`` skip hidden names unless the component starts with '.',
    ``**`` is zero or more directories, as glob's). Names reached without a link are walked first, those behind a
    link after them, and each real directory is listed at most once per component: of a directory reached both
    directly and through a link (``logs/current -> model=b``, ``logs/_aliases/b -> ../model=b``) the direct name is
    kept, whose hive keys the engines read (a link's name broke the partitioning, a review), and a link back to a
    parent ends. ``within``: a test of real paths; a directory that fails it raises :class:`Outside` before it is
    listed (the allowed roots: a link to '/' walked the whole disk). ``suffixes``: the files kept (a directory's
    data files), counted against :data:`MAX_FILES` after that filter."""

    def __init__(self, parts: tuple, within=None, suffixes=None, count_hidden=False):
        self.parts, self.within, self.suffixes = parts, within, suffixes
        self.files: list = []  # (name, reached through a link)
        self.repeats: list = []  # (directory name left out, the name it was listed under)
        self.hidden: set = set()  # hidden names left out where ``count_hidden`` (a directory source)
        self.count_hidden = count_hidden
        self.seen: dict = {}

    def run(self, base: str) -> "_Walk":
        stacks = ([(base, 0)], [])  # walked without a link, then behind one
        for linked, stack in enumerate(stacks):
            while stack:
                path, k = stack.pop()
                self._visit(path, k, bool(linked), stacks)
        return self

    def _visit(self, path: str, k: int, linked: bool, stacks) -> None:
        parts = self.parts
        if k == len(parts):
            if _is_file(path) and (self.suffixes is None or path.lower().endswith(self.suffixes)):
                self.files.append((path, linked or os.path.islink(path)))
                if len(self.files) > MAX_FILES:
                    raise InputError(f"the path names more than {MAX_FILES:,} files; name fewer (a narrower "
                                     "glob, or one directory of the log at a time).")
            return
        key = (os.path.realpath(path), k)
        if key in self.seen:  # a link back to a directory already listed here: the same files again, or a loop
            self.repeats.append((path, self.seen[key]))
            return
        self.seen[key] = path
        is_dir = os.path.isdir(path)
        if self.within is not None and is_dir and not self.within(key[0]):
            raise Outside(path)
        part = parts[k]

        def push(entry, j):  # an entry behind a link waits for every name reached without one
            stacks[linked or _is_link(entry)].append((os.path.join(path, entry.name), j))

        if part == "**":
            if not is_dir:  # '**' is directories: a file before it ('logs/*/**') is no match
                return
            stacks[linked].append((path, k + 1))  # zero directories
            entries = self._shown(_entries(path), part)
            for e in reversed(entries):
                if _is_dir(e):
                    push(e, k)
                elif k + 1 == len(parts):  # a last '**' names the files at every depth too, as glob's does
                    push(e, k + 1)
        elif _glob.has_magic(part):
            entries = self._shown(_entries(path), part)
            for e in reversed([e for e in entries if fnmatch.fnmatch(e.name, part)]):
                push(e, k + 1)
        else:
            stacks[linked].append((os.path.join(path, part), k + 1))

    def _shown(self, entries: list, part: str) -> list:
        """The entries a wildcard component sees: hidden names only where it starts with '.'."""
        if part.startswith("."):
            return entries
        shown = [e for e in entries if not e.name.startswith(".")]
        if self.count_hidden and len(shown) < len(entries):
            self.hidden.update(e.path for e in entries if e.name.startswith(".")
                               and (_is_dir(e) or e.name.lower().endswith(self.suffixes or ())))
        return shown


def matched_files(text: str, within=None) -> tuple[list[str], list[tuple[str, str]], list[str]]:
    """(files, repeats, hidden) that a file path, a glob or a directory names; files in sorted order.

    A directory stands for its data files at any depth (:data:`DATA_SUFFIXES`),
    hidden names left out as Spark and Arrow leave them out (``hidden`` lists
    them, for a note); a glob, or a directory named with a trailing separator
    after a wildcard (``logs/*/``: each directory it matches), as glob's rules.
    A file or directory reached by two names (a link) is read once, under a
    name reached without a link where it has one; ``repeats`` lists (name left
    out, name kept). A directory that cannot be listed raises
    :class:`~calibviz.InputError`; one whose real path fails ``within`` raises
    :class:`Outside`.

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp(); _ = open(os.path.join(d, "a.parquet"), "wb").write(b"PAR1")
    >>> os.symlink(d, os.path.join(d, "loop"))  # a link back to its own directory
    >>> files, repeats, hidden = matched_files(os.path.join(d, "**", "*.parquet"))
    >>> [os.path.relpath(f, d) for f in files], [os.path.relpath(a, d) for a, _ in repeats]
    (['a.parquet'], ['loop'])
    """
    path = Path(text)
    if path.is_file():
        return [str(text)], [], []
    if path.is_dir():
        walk = _Walk(("**", "*"), within, DATA_SUFFIXES, count_hidden=True).run(str(text))
    elif _glob.has_magic(str(text)):
        base, parts = glob_base(str(text))
        directories = str(text).endswith(("/", os.sep))  # 'logs/*/': the directories it matches, as sources
        walk = _Walk(parts + (("**", "*") if directories else ()), within, DATA_SUFFIXES if directories else None,
                     count_hidden=directories).run(base)
        if base == os.curdir and not str(text).startswith(os.curdir + os.sep):  # a relative glob names them so
            walk.files = [(os.path.relpath(f, os.curdir), linked) for f, linked in walk.files]
            walk.repeats = [(os.path.relpath(a, os.curdir), os.path.relpath(b, os.curdir)) for a, b in walk.repeats]
    else:
        return [], [], []
    files, repeats = _once(walk.files)
    return files, walk.repeats + repeats, sorted(walk.hidden)


def _once(found: list) -> tuple[list[str], list[tuple[str, str]]]:
    """Each file once, under a name reached without a link where it has one: real paths are only resolved where
    a link was met (resolving every name cost ~70% of a walk of 20,000 files, a review)."""
    if not any(linked for _, linked in found):
        return sorted({f for f, _ in found}), []
    names: dict = {}  # real path: [(reached through a link, name)]
    for f, linked in sorted(set(found), key=lambda t: (t[1], t[0])):
        names.setdefault(os.path.realpath(f), []).append(f)
    kept = {reach[0]: reach[1:] for reach in names.values()}
    return sorted(kept), [(f, k) for k, left in kept.items() for f in left]


def unreadable_note(path: str) -> str:
    """' (<dir> cannot be read)' for a path under a directory that exists but may not be listed or entered,
    else '': "no file matches" alone misled where the file exists but its directory is closed to the reader."""
    parent = Path(path).parent
    while parent != parent.parent and not parent.exists():
        parent = parent.parent
    if parent.is_dir() and not os.access(parent, os.R_OK | os.X_OK):
        return f" ({str(parent)!r} cannot be read by this process)"
    return ""
