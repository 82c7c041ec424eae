"""Progress while the runner works: a live status line on a terminal, plain lines in a log.

On a terminal, rich's ``Live`` redraws one line -- the rung, tests done of those the running
process was given, seconds in the rung, seconds in all -- and each event prints above it. Off a
terminal (a CI log) nothing is redrawn: events are lines, a new phase is a line, and a phase that
runs long gets a line every ``HEARTBEAT`` seconds, so a log is never silent for minutes and never
holds a control character. Phase lines start with the first event: certify holds its events until
the checks it runs beside the first tiers have answered, and a run those end as bad input logs its
one error line and nothing else.
"""

from __future__ import annotations

import textwrap
import threading
import time
from types import TracebackType

from rich.console import Console
from rich.live import Live
from rich.text import Text

from runner.terminal.activity import ACTIVITY, BASELINE_PHASE, Activity, Snapshot

#: What each phase is, as a reader knows it (the keys are the rungs' names).
PHASES = {
    "T0": "T0 parse",
    "T1": "T1 lint (ruff)",
    "T2": "T2 types (mypy)",
    "T3": "T3 reproducers on B and C",
    "T4": "T4 impacted tests",
    "T5": "T5 affected regression set",
    "audit": "audit: mutants of the changed code",
    "T6": "T6 integration tests",
    "T7": "T7 full suite",
    BASELINE_PHASE: "B: the baseline suite, recorded",
}

#: Seconds between progress lines of one long phase, off a terminal.
HEARTBEAT = 30.0
#: Seconds between looks at the phase, off a terminal.
TICK = 1.0


def say(console: Console, message: str, indent: str = "  ", style: str = "") -> None:
    """One event, wrapped at the console's width between words only: a test id or a path longer
    than a line stays whole (a reader copies it), and nothing is wrapped again by rich."""
    lines = textwrap.wrap(
        message,
        width=max(console.width, 40),
        initial_indent=indent,
        subsequent_indent=indent + "  ",
        break_long_words=False,
        break_on_hyphens=False,
    )
    for line in lines or [indent]:
        console.print(Text(line, style=style), soft_wrap=True, highlight=False)


def describe(snap: Snapshot, total_seconds: float) -> str:
    """One status line (at most ~70 characters for the fixed part: the phase names are short)."""
    if not snap.phase:
        return "starting (%.0fs)" % total_seconds
    tests = ""
    if snap.total:
        tests = " | %d/%d tests" % (min(snap.done, snap.total), snap.total)
    elif snap.done:
        tests = " | %d tests" % snap.done
    return "%s%s | %.0fs (%.0fs in all)" % (
        PHASES.get(snap.phase, snap.phase),
        tests,
        snap.phase_seconds,
        total_seconds,
    )


class Display:
    """``with Display(console) as d: work(d.event)`` -- ``event`` is the climb's ``progress``."""

    def __init__(self, console: Console, activity: Activity = ACTIVITY) -> None:
        self.console = console
        self.activity = activity
        self.started = time.monotonic()
        self._live: Live | None = None
        self._stop = threading.Event()
        self._said = threading.Event()
        self._ticker: threading.Thread | None = None

    def event(self, message: str) -> None:
        say(self.console, message)
        self._said.set()  # after the line: the ticker's first phase line must not come before it

    def _status(self) -> Text:
        return Text(describe(self.activity.snapshot(), time.monotonic() - self.started), style="cyan")

    def _log(self) -> None:
        """Off a terminal: a line when the phase changes, and a heartbeat while it runs long."""
        shown, last = "", time.monotonic()
        while not self._stop.wait(TICK):
            snap = self.activity.snapshot()
            if not self._said.is_set():
                continue
            if snap.phase != shown or time.monotonic() - last >= HEARTBEAT:
                shown, last = snap.phase, time.monotonic()
                if snap.phase:
                    self.event("... " + describe(snap, time.monotonic() - self.started))

    def __enter__(self) -> Display:
        self.activity.phase("")  # a run starts in no phase, whatever an earlier one ended in
        if self.console.is_terminal:
            self._live = Live(get_renderable=self._status, console=self.console, refresh_per_second=4, transient=True)
            self._live.start()
        else:
            self._ticker = threading.Thread(target=self._log, daemon=True)
            self._ticker.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        if self._live is not None:
            self._live.stop()
