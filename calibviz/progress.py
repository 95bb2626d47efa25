"""Progress of long work on a terminal: the ``progress(done, total)`` callbacks of the library, drawn on stderr.

The library reports progress through plain callbacks (``progress=`` of
:func:`calibviz.metrics.bootstrap`, :func:`calibviz.panel.metric_panel`,
:func:`calibviz.report.build_report`, ...). :class:`TerminalProgress` is the
command line's view of them: one line on stderr per step, drawn only once the
step has run longer than ``delay`` seconds (a quick command prints nothing
extra), redrawn in place on a terminal (carriage return) and closed with the
step's duration. A background ticker keeps the elapsed time moving for steps
that report no fractions (loading a file, fitting a curve).

Whether anything is drawn (:func:`progress_enabled`): never with ``--quiet``;
otherwise when stderr is a terminal, so pipes, CI logs and redirected output
stay clean. ``CALIBVIZ_PROGRESS=always`` / ``never`` overrides the terminal
test (e.g. ``always`` in a CI job that wants a heartbeat in its log: lines
are then written one per update, at most every ``interval`` seconds, instead
of being redrawn).
"""
from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from typing import Callable, TextIO

__all__ = ["TerminalProgress", "progress_enabled", "ENV", "DELAY", "format_seconds"]

#: Environment variable overriding the terminal test: "always" (or 1/yes) / "never" (or 0/no).
ENV = "CALIBVIZ_PROGRESS"
#: A step is drawn once it has run this many seconds: shorter work stays silent.
DELAY = 2.0


def progress_enabled(quiet: bool = False, stream: TextIO | None = None) -> bool:
    """Whether the command line draws progress on ``stream`` (stderr by default).

    ``quiet`` wins; then :data:`ENV` ("always"/"never"); else only when ``stream`` is a terminal.

    Examples
    --------
    >>> import io
    >>> progress_enabled(stream=io.StringIO())      # not a terminal
    False
    >>> progress_enabled(quiet=True, stream=sys.stderr)
    False
    """
    if quiet:
        return False
    stream = sys.stderr if stream is None else stream
    choice = os.environ.get(ENV, "").strip().lower()
    if choice in ("always", "1", "yes", "true", "on"):
        return True
    if choice in ("never", "0", "no", "false", "off"):
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # a closed or exotic stream
        return False


def format_seconds(seconds: float) -> str:
    """``"7 s"``, ``"1 min 05 s"``.

    Examples
    --------
    >>> format_seconds(7.4), format_seconds(65)
    ('7 s', '1 min 05 s')
    """
    s = int(round(seconds))
    return f"{s} s" if s < 60 else f"{s // 60} min {s % 60:02d} s"


class TerminalProgress:
    """Steps of a command with their progress on a terminal line.

    Use :meth:`step` as a context manager around each piece of work; it
    yields a ``progress(done, total)`` callback to pass to the library::

        with TerminalProgress(enabled=progress_enabled(args.quiet)) as bar:
            with bar.step("model a: metrics") as progress:
                metric_panel(..., progress=progress)

    Nothing is written while a step is younger than ``delay`` seconds, nor
    at all when ``enabled`` is False. A drawn step ends with a line
    ``calibviz: <label>: done in 12 s``.

    Parameters
    ----------
    enabled : bool
        Usually :func:`progress_enabled`.
    stream : file-like, optional
        Default ``sys.stderr`` (looked up when drawing, so redirection works).
    delay : float, optional
        Default :data:`DELAY` (2 s).
        Seconds a step runs before its line appears.
    interval : float, optional
        Seconds between redraws: 0.2 on a terminal (redrawn in place), 5 when
        forced onto a non-terminal (one line per update).
    tty : bool, optional
        Redraw in place with carriage returns (default: ``stream.isatty()``).
    clock : callable, default time.monotonic

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> with TerminalProgress(enabled=True, stream=out, delay=0, interval=0, tty=False) as bar:
    ...     with bar.step("bootstrap") as progress:
    ...         progress(50, 200)
    >>> out.getvalue().splitlines()[0].startswith("calibviz: bootstrap 25% (50/200)")
    True
    >>> out.getvalue().splitlines()[-1].startswith("calibviz: bootstrap: done in")
    True
    """

    PREFIX = "calibviz: "

    def __init__(self, enabled: bool = True, *, stream: TextIO | None = None, delay: float | None = None,
                 interval: float | None = None, tty: bool | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.enabled = bool(enabled)
        self._stream = stream
        self.delay = float(DELAY if delay is None else delay)
        if tty is None:
            try:
                tty = bool(self.stream.isatty())
            except (AttributeError, ValueError):
                tty = False
        self.tty = tty
        self.interval = float(interval) if interval is not None else (0.2 if tty else 5.0)
        self.clock = clock
        self._lock = threading.Lock()
        self._label: str | None = None
        self._fraction: tuple[int, int] | None = None
        self._start = 0.0
        self._last_draw: float | None = None
        self._drawn = False
        self._width = 0
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    @property
    def stream(self) -> TextIO:
        return sys.stderr if self._stream is None else self._stream

    # ------------------------------------------------------------------ context

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._end_step(failed=exc[0] is not None)
        return False

    # ------------------------------------------------------------------ steps

    def step(self, label: str) -> "_Step":
        """A context manager for one step; it yields the ``progress(done, total)`` callback."""
        return _Step(self, label)

    def _begin_step(self, label: str) -> None:
        self._end_step()
        with self._lock:
            self._label, self._fraction, self._start = label, None, self.clock()
            self._last_draw, self._drawn = None, False
        if self.enabled and self.delay > 0:
            # a heartbeat for steps that report no fractions (loading, fitting, label redraws)
            self._stop.clear()
            self._ticker = threading.Thread(target=self._tick, name="calibviz-progress", daemon=True)
            self._ticker.start()

    def _end_step(self, failed: bool = False) -> None:
        if self._ticker is not None:
            self._stop.set()
            self._ticker.join()
            self._ticker = None
        with self._lock:
            if self._label is not None and self._drawn:
                what = "stopped after" if failed else "done in"
                self._write((self._label, f": {what} {format_seconds(self.clock() - self._start)}"), final=True)
            self._label, self._drawn = None, False

    def __call__(self, done: int, total: int) -> None:
        """The ``progress(done, total)`` callback of the current step."""
        if not self.enabled or self._label is None:
            return
        with self._lock:
            self._fraction = (int(done), int(total))
            self._maybe_draw(force_final=done >= total > 0)

    def _tick(self) -> None:
        while not self._stop.wait(min(self.interval, 1.0) or 0.2):
            with self._lock:
                if self._label is not None:
                    self._maybe_draw()

    def _maybe_draw(self, force_final: bool = False) -> None:
        now = self.clock()
        elapsed = now - self._start
        if elapsed < self.delay:
            return
        if self._last_draw is not None and now - self._last_draw < self.interval and not force_final:
            return
        self._last_draw = now
        self._drawn = True
        self._write(self._line(elapsed))

    def _line(self, elapsed: float) -> tuple[str, str]:
        """(label, status) of the current step."""
        if self._fraction is None:
            return self._label or "", f" ... {format_seconds(elapsed)}"
        done, total = self._fraction
        share = done / total if total > 0 else 0.0
        status = f" {100 * share:.0f}% ({done:,}/{total:,}), {format_seconds(elapsed)}"
        if 0 < share < 1:
            status += f", about {format_seconds(elapsed * (1 - share) / share)} left"
        return self._label or "", status

    def _write(self, text, final: bool = False) -> None:
        label, status = (text, "") if isinstance(text, str) else text
        line = self.PREFIX + label + status
        if self.tty:  # a redrawn line must not wrap: shorten the label, keep the numbers
            room = shutil.get_terminal_size((100, 24)).columns - 1
            if len(line) > room:
                keep = max(8, room - len(self.PREFIX) - len(status) - 1)
                line = self.PREFIX + label[:keep] + "…" + status
        try:
            if self.tty:
                pad = max(0, self._width - len(line))
                self.stream.write("\r" + line + " " * pad + ("\n" if final else ""))
                self._width = 0 if final else len(line)
            else:
                self.stream.write(line + "\n")
            self.stream.flush()
        except (OSError, ValueError):  # a closed pipe must not end the computation
            self.enabled = False


class _Step:
    def __init__(self, owner: TerminalProgress, label: str):
        self.owner, self.label = owner, label

    def __enter__(self) -> TerminalProgress:
        self.owner._begin_step(self.label)
        return self.owner

    def __exit__(self, *exc):
        self.owner._end_step(failed=exc[0] is not None)
        return False
