"""Dashboard: a large data source opened by path (never uploaded), analysed with cv.scan.

Whoever runs the server decides which directories a path may reach:
``CALIBVIZ_SCAN_ROOTS`` (directories separated by ``os.pathsep``). Without it
nothing can be opened by path; a path, glob or directory outside them (``..``,
symlinks and glob matches included) is refused before anything is read
(:func:`calibviz.scan.source.check_allowed`). SQL is not accepted here: a
DuckDB query can read any file the server can.
"""
from __future__ import annotations

import os
import re
import threading
import weakref
from contextlib import contextmanager

import streamlit as st

from ..errors import InputError
from ..scan.aggregate import TEXT_IN_NUMBERS_FIX, TEXT_IN_NUMBERS_FIX_FORM, TYPES_DIFFER_FIX, TYPES_DIFFER_FIX_FORM
from ..scan.source import ENGINES, SQL_HINT, check_allowed
from .text import md

__all__ = ["ROOTS_ENV", "STATE_KEYS", "scan_lock", "scan_work", "reopen_needed", "reopen_if_changed", "allowed_roots",
           "open_scan", "open_model", "current_scan", "current_scan_id", "scan_identity", "source_form", "LINK_KEYS",
           "link_params", "open_from_link", "report_command", "shell_lines"]

ROOTS_ENV = "CALIBVIZ_SCAN_ROOTS"
_KEY = "cv_scan"
#: How the session's file was opened (the form's fields as typed): what a link carries to open it again.
_HOW = _KEY + "_how"
#: The models of the opened file whose rows failed when it was opened (:func:`open_model`).
_FAILED = _KEY + "_failed"
#: The URL parameters of an opened file (:func:`link_params`).
LINK_KEYS = ("open", "engine", "label", "probs", "weight", "positive", "per_model", "renormalize", "drop_invalid",
             "analyse")


#: The session state of an opened file: what a refused session file leaves as it was (:mod:`calibviz.ui.session`).
STATE_KEYS = (_KEY, _KEY + "_id", _HOW, _FAILED, "cv_scan_model", "cv_scan_active", "cv_scan_pick_error",
              "w_scan_pick", "w_scan_model")


def allowed_roots() -> list[str]:
    """The directories the server allows, from ``CALIBVIZ_SCAN_ROOTS`` (empty: none)."""
    raw = os.environ.get(ROOTS_ENV, "")
    return [r for r in raw.split(os.pathsep) if r.strip()]


#: Models of a long log tried on opening, each one pass, until one reads (:func:`open_model`): a few, as a log whose
#: rows fail everywhere costs a pass per try before its error.
OPEN_TRIES = 3


def open_scan(path: str, engine: str = "duckdb", **roles):
    """Check ``path`` against the allowed roots, then open it lazily (cv.scan) and read its first model's bucket
    table once (:func:`open_model`: the first model whose rows pass)."""
    return open_model(path, engine, **roles)[0]


def open_model(path: str, engine: str = "duckdb", **roles):
    """(scan, failed): the scan of the first model of ``path`` whose rows pass their checks (one pass each, up to
    :data:`OPEN_TRIES` models), and ``[(model, InputError)]`` of the models before it that did not. A log whose
    first model (in sorted order) had 5 bad rows could not be opened at all, its good models with it (a
    walk-through). Raises the first model's error when none of those tried reads."""
    from ..scan import scan

    path = path.strip()
    check_allowed(path, allowed_roots())
    s = scan(path, engine=engine, **{k: v for k, v in roles.items() if v})  # renormalize=False: the default
    from .source import checked_model

    failed = []
    for name in list(s.models)[:OPEN_TRIES]:
        checked = checked_model(s, name)
        if not isinstance(checked, InputError):
            return checked, failed
        failed.append((name, checked))
    raise failed[0][1]


def current_scan():
    """The scan opened on this session, or None."""
    return st.session_state.get(_KEY)


_LOCKS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_LOCKS_GUARD = threading.Lock()


def scan_lock(scan) -> threading.RLock:
    """The lock of an opened file's scan (its models and views share its engine connection).

    Two script runs of one session can overlap: a rerun requested while the previous run waits in the engine can
    start in a new thread before the old one reaches a point where it stops. A DuckDB connection refuses a second
    call while one runs ("connection is busy with another call"): a walk-through met it as "This view could not be
    computed ... a bug". Work on the scan holds this lock (:func:`scan_work`), so the second run waits for the
    first one's query instead; re-entrant, as page code nests calls.
    """
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(scan, threading.RLock())


#: Seconds a run waits for the previous run's work on the same file before it says so and stops: an engine call
#: that never returns (a stalled network mount) kept every later run waiting under "Running..." with no word.
SCAN_WAIT_SECONDS = 120


@contextmanager
def scan_work():
    """Hold the session's opened file (:func:`scan_lock`) for a block of work on it; nothing without one. A run
    that cannot have it within :data:`SCAN_WAIT_SECONDS` says why and stops (the earlier run goes on)."""
    scan = current_scan()
    if scan is None:
        yield
        return
    lock = scan_lock(scan)
    if not lock.acquire(timeout=SCAN_WAIT_SECONDS):
        st.warning(f"The opened file is still busy with an earlier request of this session (over "
                   f"{SCAN_WAIT_SECONDS} s). Wait, then change a control or press R to see the result; if it never "
                   "ends (a stalled disk or network share), reload the page and open the file again.",
                   icon=":material/hourglass_top:")
        st.stop()
    try:
        yield
    finally:
        lock.release()


def scan_identity(path: str, engine: str, roles: dict, files=None) -> str:
    """What the cached results of an opened file are keyed on: its path, engine, column roles and every matched
    file's device, inode, size and modification time (a file rewritten in place, or swapped for a link to another
    file of the same size and time, is a new source). ``files``: the matches of ``path`` where they are known
    (:func:`calibviz.scan.source.check_allowed` returns them), so that every run walks the tree once.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "a.csv"; _ = f.write_text("y,p\\n1,0.5\\n")
    >>> a = scan_identity(str(f), "duckdb", {}); b = scan_identity(str(f), "polars", {})
    >>> a.startswith("scan:"), a == scan_identity(str(f), "duckdb", {}), a == b
    (True, True, False)
    """
    import hashlib

    from ..scan.files import matched_files

    if files is None:
        files = matched_files(path)[0]
    # the inode says where a name leads, from the stat already made (a realpath per file tripled the cost of a run's
    # check on 20,000 files, a review)
    stamp = [(f, st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size) for f, st in ((f, os.stat(f)) for f in files)]
    text = repr((path, engine, sorted((k, v) for k, v in roles.items() if v), stamp))
    return "scan:" + hashlib.sha256(text.encode()).hexdigest()[:20]


def current_scan_id() -> str | None:
    """The identity (:func:`scan_identity`) of the scan opened on this session."""
    return st.session_state.get(_KEY + "_id")


def source_form() -> None:
    """The path / engine / column-role form; opens the scan on submit, shows errors with st.error."""
    roots = allowed_roots()
    if not roots:
        st.info(f"Opening files by path is off on this server. Whoever runs it can allow directories with the "
                f"environment variable {ROOTS_ENV} (e.g. `{ROOTS_ENV}=/data/logs calibviz app`).")
        return
    # a code span shows its text as written (escapes would show as backslashes); a root holding a backtick,
    # which would close the span, is shown as escaped plain text instead
    st.caption("Allowed directories: " + ", ".join(md(r) if "`" in r else f"`{r}`" for r in roots))
    _show_opened_fields()
    with st.form("cv_scan_form"):
        path = st.text_input("Path, glob or directory", key="w_scan_path",
                             help="A Parquet or CSV file, a glob such as /data/logs/*.parquet, or a directory "
                                  "(hive partitions included) under the allowed directories. Nothing is uploaded: "
                                  "the server streams the file.")
        cols = st.columns(5)
        engine = cols[0].selectbox("Engine", ENGINES, key="w_scan_engine",
                                   help="DuckDB (embedded, default), Polars, or Spark (local or your cluster).")
        label = cols[1].text_input("Label column", key="w_scan_label", help="Detected when empty.")
        probs = cols[2].text_input("Probability columns", key="w_scan_probs",
                                   help="Detected when empty. Several, comma-separated: the class columns of one "
                                        "model, or one model per column with the box below ticked.")
        weight = cols[3].text_input("Weight column", key="w_scan_weight", help="Optional.")
        # a label column of words (churn / stay) with one probability column names no positive class by itself
        positive = cols[4].text_input("Positive class", key="w_scan_positive",
                                      help="The label whose probability a single probability column holds (e.g. "
                                           "churn); detected when empty where the labels tell it (0/1, no/yes).")
        ticks = st.columns(3)
        per_model = ticks[0].checkbox("One model per column", key="w_scan_per_model",
                                      help="Each probability column is one model's P(positive class).")
        renormalize = ticks[1].checkbox("Renormalise rows", key="w_scan_renormalize",
                                        help="Divide each row of class columns by its sum: for probabilities "
                                             "rounded so that rows sum to 0.99 or 1.01. Rows summing to 0 are "
                                             "refused; sums far from 1 get a note.")
        drop_invalid = ticks[2].checkbox("Drop invalid rows", key="w_scan_drop_invalid",
                                         help="Leave out rows with an empty label, probability, weight or model "
                                              "name, and rows with wrong values (a probability outside [0, 1], a "
                                              "label outside the classes, ...) while they are under 5% of the "
                                              "rows; a note counts them.")
        submitted = st.form_submit_button("Open")
    if submitted and not path.strip():
        st.warning("Type the path of a Parquet or CSV file, a glob or a directory under the allowed directories, "
                   "then press Open.", icon=":material/edit:")
    if submitted and path.strip():
        try:
            _open_into_state(dict(open=path, engine=engine, label=label, probs=probs, weight=weight,
                                  positive=positive, per_model=per_model, renormalize=renormalize,
                                  drop_invalid=drop_invalid))
        except (InputError, OSError) as err:
            before = current_scan()  # kept: say so, or its results below read as the refused path's (a walk-through)
            kept = f" The file opened before, {md(before.source)}, stays open below." if before is not None else ""
            st.error(md(_in_form_words(err)) + kept, icon=":material/error:")
        else:
            st.session_state.pop("cv_lost_link", None)  # a link's file that could not be opened: answered
            st.rerun()  # the sidebar, drawn before this form, names the file just opened


def _show_opened_fields() -> None:
    """Fill the form with the fields of the session's file when the page is drawn anew (Streamlit forgets a
    form's values when another page was shown, or when a link opened the file): the form says what is open."""
    how = st.session_state.get(_HOW)
    if not how or current_scan() is None or "w_scan_path" in st.session_state:
        return
    for field, key in (("open", "path"), ("engine", "engine"), ("label", "label"), ("probs", "probs"),
                       ("weight", "weight"), ("positive", "positive"), ("per_model", "per_model"),
                       ("renormalize", "renormalize"), ("drop_invalid", "drop_invalid")):
        st.session_state[f"w_scan_{key}"] = how.get(field, "" if field == "positive" else False)


def _open_into_state(how: dict) -> None:
    """Open the file of the form's fields ``how`` (path ``open``, ``engine``, ``label``, ``probs``, ``weight``,
    ``positive``, ``per_model``, ``renormalize``, ``drop_invalid``) and make it the session's; raises :class:`~calibviz.InputError`
    and keeps the previous file."""
    how = {k: v.strip() if isinstance(v, str) else v for k, v in how.items()}
    roles = _roles(how)
    with st.spinner("Aggregating the file (one pass; a log of several models: one per model until one reads)..."):
        # the identity first: a file written during the pass then reads as changed on the next run, rather than
        # its new identity standing for the old rows
        files = check_allowed(how["open"], allowed_roots())  # before anything touches the path
        ident = scan_identity(how["open"], how["engine"], roles, files)
        opened, failed = open_model(how["open"], how["engine"], **roles)
    st.session_state[_KEY], st.session_state[_KEY + "_id"], st.session_state[_HOW] = opened, ident, how
    st.session_state["cv_scan_model"] = opened.name  # a new file: its first model that reads
    # and no model picked on the previous file's pickers (their state outlived it: a second file opened on the
    # first file's pick, a model whose rows fail, a review)
    for key in ("w_scan_model", "w_scan_pick"):
        st.session_state.pop(key, None)
    st.session_state.pop("cv_scan_pick_error", None)  # and no word of the previous file's models
    st.session_state[_FAILED] = [name for name, _ in failed]  # for the report's command line
    if failed:  # said where a picked model's failure is said (the sidebar's picker)
        from .source import cannot_analyse

        st.session_state["cv_scan_pick_error"] = " ".join(cannot_analyse(name, err) for name, err in failed)


def _roles(how: dict) -> dict:
    """The :func:`calibviz.scan` roles of the form's fields."""
    return dict(label=how["label"] or None, probs=probs_role(how["probs"], how["per_model"]),
                weight=how["weight"] or None, positive=how.get("positive") or None,
                renormalize=bool(how.get("renormalize")), drop_invalid=bool(how.get("drop_invalid")))


def _identity_now(how: dict) -> str | None:
    """The opened file's identity as it is on disk now (:func:`scan_identity`), or None where it no longer resolves
    under the allowed directories or cannot be read. The roots first: a file swapped for a link that leads out,
    with its target's size and time, kept the identity and the pages read through the link (a review)."""
    try:
        files = check_allowed(how["open"], allowed_roots())
        return scan_identity(how["open"], how["engine"], _roles(how), files)  # the fields as stored: stripped
    except (InputError, OSError):
        return None


def reopen_needed() -> bool:
    """Whether the session's opened file changed on disk since it was opened, or no longer resolves under the
    allowed directories (a file swapped for a link that leads out): then :func:`reopen_if_changed` must run before
    anything reads it (a callback that reads first ran engine passes on such a link's target, a review)."""
    how, scan = st.session_state.get(_HOW), current_scan()
    return bool(how) and scan is not None and _identity_now(how) != st.session_state.get(_KEY + "_id")


def reopen_if_changed() -> str | None:
    """Open the session's file again when its files changed on disk since it was opened (their sizes and
    modification times, :func:`scan_identity`); the sentence that says so, else None.

    The scan keeps the first pass of the rows it read: a file rewritten in place went on showing its old numbers
    under the same path, with no word (a walk-through). A file that can no longer be read is closed, and the pages
    go back to the data in memory: its old numbers are not shown as the file's.
    """
    how, scan = st.session_state.get(_HOW), current_scan()
    if not how or scan is None or _identity_now(how) == st.session_state.get(_KEY + "_id"):
        return None
    picked, picked_here = st.session_state.get("cv_scan_model"), st.session_state.get("w_scan_model")
    try:
        _open_into_state(how)
    except (InputError, OSError) as err:
        for key in STATE_KEYS:
            st.session_state.pop(key, None)
        return (f"The opened file {md(how['open'])} changed on disk and can no longer be read "
                f"({md(_in_form_words(err).rstrip('.'))}); it is closed, and the pages show the data in memory.")
    if picked in current_scan().models:
        st.session_state["cv_scan_model"] = picked
    if picked_here in current_scan().models:  # the Large data page's own picker keeps its model too
        st.session_state["w_scan_model"] = picked_here
    return (f"The opened file {md(how['open'])} changed on disk since it was opened; it was read again, and the "
            "pages show its current rows.")


def link_params(analysed: bool) -> dict[str, str]:
    """The URL parameters that open the session's file again: its path (``open``) and the form's other fields
    where they differ from the defaults, and ``analyse=1`` while every binned page analyses it (``analysed``).
    Empty without an opened file. A link opens the file on the server that serves it, under that server's allowed
    directories (:func:`open_from_link`): it carries a path, never data."""
    how = st.session_state.get(_HOW)
    if not how or current_scan() is None:
        return {}
    return {"open": how["open"], "engine": how["engine"] if how["engine"] != ENGINES[0] else "",
            "label": how["label"], "probs": how["probs"], "weight": how["weight"], "positive": how.get("positive", ""),
            "per_model": "1" if how["per_model"] else "", "renormalize": "1" if how.get("renormalize") else "",
            "drop_invalid": "1" if how.get("drop_invalid") else "", "analyse": "1" if analysed else ""}


def _scan_format() -> str:
    """'csv' or 'parquet': the format of the session's opened file."""
    from ..scan.source import files_of

    return files_of(st.session_state[_HOW]["open"])[1]


def report_command() -> str | None:
    """The command line that writes the HTML report of the session's opened file, with the form's fields (None
    without one, and with 'One model per column', which has no option of the command line: a command that
    detected the columns itself failed on names such as score_a, a review). Models whose rows failed when the file
    was opened are left out by a query (the command reports every model and stopped at them, a walk-through)."""
    import shlex

    from ..report import settings_options  # the report module only when its command is shown
    from .settings import panel_config, settings

    how = st.session_state.get(_HOW)
    if not how or current_scan() is None or how.get("per_model"):  # no option for one model per column
        return None
    source, engine = shlex.quote(how["open"]), how["engine"]
    failed = st.session_state.get(_FAILED) or []
    model = current_scan().mapping.model
    if failed and model:  # the command reports every model: leave out those whose rows fail (a walk-through)
        read = "read_csv" if _scan_format() == "csv" else "read_parquet"
        quoted = ", ".join("'" + str(m).replace("'", "''") + "'" for m in failed)
        column = model if re.fullmatch(r"[A-Za-z_]\w*", model) else '"' + model.replace('"', '""') + '"'
        query = (f"SELECT * FROM {read}('" + how["open"].replace("'", "''") + "', union_by_name = true) WHERE "
                 f"{column} NOT IN ({quoted})")
        # in double quotes (its own quotes are single): readable, where shlex quoted each of them
        source = '"' + re.sub(r'(["$`\\])', r"\\\1", query) + '"'
        engine = "duckdb"  # a query runs on DuckDB
    options = ["-o", "report.html", "--engine", engine]
    for field in ("label", "weight", "positive"):
        if how.get(field):
            options += [f"--{field}", how[field]]
    if how.get("probs"):
        options += ["--probs", *[c.strip() for c in how["probs"].split(",") if c.strip()]]
    if how.get("renormalize"):
        options.append("--renormalize")
    if how.get("drop_invalid"):
        options.append("--drop-invalid")
    # the sidebar's bins, alpha, metrics and bootstrap, as the report built on the Report page records them (the
    # command dropped them, a walk-through)
    s = settings()
    metrics = tuple(s["metrics"]) or None if current_scan().is_binary else None
    options += settings_options(panel_config(s), metrics, int(s["boot"]), int(s["seed"]))
    return shell_lines(["calibviz", "report", source] + [shlex.quote(w) for w in options])


def shell_lines(words: list[str], width: int = 64) -> str:
    """A shell command of quoted ``words`` on lines of about ``width`` characters, continued by a backslash and
    broken only between options (an option and its values stay on one line). Wrapped by the browser, the one-line
    command broke inside options ("--ci 100 -" / "-seed 0", a browser check).

    >>> print(shell_lines(["calibviz", "report", "f.csv", "-o", "r.html", "--bins", "15", "--alpha", "0.1"], 30))
    calibviz report f.csv \\
        -o r.html --bins 15 \\
        --alpha 0.1
    """
    units = [" ".join(words[:3])]
    for w in words[3:]:
        if w.startswith("--") or w == "-o":
            units.append(w)
        else:
            units[-1] += " " + w
    lines = [units[0]]
    for unit in units[1:]:
        if len(lines) > 1 and len(lines[-1]) + 1 + len(unit) <= width:
            lines[-1] += " " + unit
        else:
            lines.append(unit)
    return " \\\n    ".join(lines)


def open_from_link(params) -> str | None:
    """Open the file a link names (the parameters of :func:`link_params`, e.g. ``st.query_params``), as the form
    would, with the same checks of the allowed directories; None when done, else why it could not be."""
    engine = params.get("engine") or ENGINES[0]
    if engine not in ENGINES:
        return f"its engine {engine!r} is none of {', '.join(ENGINES)}."
    how = dict(open=params.get("open", ""), engine=engine, label=params.get("label", ""),
               probs=params.get("probs", ""), weight=params.get("weight", ""), positive=params.get("positive", ""),
               per_model=params.get("per_model") == "1",
               renormalize=params.get("renormalize") == "1", drop_invalid=params.get("drop_invalid") == "1")
    try:
        _open_into_state(how)
    except (InputError, OSError) as err:
        return _in_form_words(err)
    return None


def probs_role(text: str, per_model: bool):
    """The ``probs`` of :func:`calibviz.scan` from the form's comma-separated columns.

    Examples
    --------
    >>> probs_role(" ", False), probs_role("p", False), probs_role("p_a, p_b", False)
    (None, 'p', ['p_a', 'p_b'])
    >>> probs_role("p, p_bad", True)
    {'p': ['p'], 'p_bad': ['p_bad']}
    """
    names = [c.strip() for c in text.split(",") if c.strip()]
    if not names:
        return None
    twice = sorted({c for c in names if names.count(c) > 1})
    if twice:
        raise InputError(f"Probability columns: {', '.join(map(repr, twice))} "
                         f"{'is' if len(twice) == 1 else 'are'} typed twice; type each column once.")
    if per_model:
        return {c: [c] for c in names}
    return names[0] if len(names) == 1 else names


def _in_form_words(err: InputError | OSError) -> str:
    """An error in the words of this form: the fix of ambiguous probability columns (the error's ``hint``) is
    named by the form's fields, not by the upload page's column mapping panel. A file system error between the
    checks and the read (a file removed, a permission) is said in one line."""
    if isinstance(err, OSError):
        return f"the file cannot be read on this server ({err.strerror or type(err).__name__})."
    hint = err.hint or {}
    if hint.get("per_model") and hint.get("probs"):
        cols = list(hint["probs"])
        return (f"The probability columns are ambiguous: {', '.join(map(repr, cols))}. Type {cols[0]} in "
                f"Probability columns to read one model, or {', '.join(cols)} with 'One model per column' "
                "ticked to read one model per column.")
    # the upload page's panel is the column mapping; here the same fields are this form's; no SQL here
    return (err.ui_message.replace(SQL_HINT, ".").replace("in the column mapping", "in this form")
            .replace("one model per column", "One model per column")
            .replace(TEXT_IN_NUMBERS_FIX, TEXT_IN_NUMBERS_FIX_FORM).replace(TYPES_DIFFER_FIX, TYPES_DIFFER_FIX_FORM))
