"""What the runner is doing now: the phase, and how many tests the running pytest has finished.

The climb names its phase (a rung, B's suite run); every test process attaches its channel while
it runs. The count is read from the stream's new bytes only, unchecked -- it feeds a progress
display, never a verdict, which reads the stream with its key, every line checked. One
process-wide instance, like a logger: the climb's callers need not thread a display through every
layer that starts pytest, and a runner with no display pays one lock and an offset per poll.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

#: The phase of B's suite run (the other phases are the rungs' names).
BASELINE_PHASE = "B"

_RESULT = b'"type":"result"'
_COLLECTED = b'"type":"collected"'


@dataclass(frozen=True)
class Snapshot:
    phase: str
    phase_seconds: float
    done: int  # results the running test process has streamed
    total: int | None  # tests it was asked to run (its plan), else collected; None: not known yet


class _Tally:
    """A growing stream, read from where the last look stopped."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.offset = 0
        self.partial = b""
        self.done = 0
        self.collected: int | None = None
        self.planned: int | None = None

    def update(self) -> None:
        while True:
            try:
                chunk = os.pread(self.fd, 1 << 20, self.offset)
            except OSError:
                return
            if not chunk:
                return
            self.offset += len(chunk)
            *lines, self.partial = (self.partial + chunk).split(b"\n")
            for line in lines:
                if _RESULT in line:
                    self.done += 1
                elif _COLLECTED in line:
                    try:
                        self.collected = len(json.loads(line)["test_ids"])
                    except (ValueError, KeyError, TypeError):
                        pass


class Activity:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._phase = ""
        self._since = time.monotonic()
        self._tally: _Tally | None = None

    def phase(self, label: str) -> None:
        with self._lock:
            self._phase, self._since = label, time.monotonic()

    @contextlib.contextmanager
    def during(self, label: str) -> Iterator[None]:
        """A phase inside another (B's suite run inside T4): the outer one resumes after it."""
        with self._lock:
            outer = self._phase, self._since
        self.phase(label)
        try:
            yield
        finally:
            with self._lock:
                self._phase, self._since = outer

    def attach(self, fd: int) -> None:
        """A test process started, streaming into ``fd`` (readable at any offset)."""
        with self._lock:
            self._tally = _Tally(fd)

    def detach(self, fd: int) -> None:
        """The process's channel is about to close: stop reading ``fd`` before its number is reused."""
        with self._lock:
            if self._tally is not None and self._tally.fd == fd:
                self._tally = None

    def expect(self, total: int) -> None:
        """The running process was given ``total`` tests to run (a grouped session's plan)."""
        with self._lock:
            if self._tally is not None:
                self._tally.planned = total

    def snapshot(self) -> Snapshot:
        with self._lock:
            tally = self._tally
            if tally is not None:
                tally.update()
            return Snapshot(
                self._phase,
                time.monotonic() - self._since,
                0 if tally is None else tally.done,
                None if tally is None else tally.planned if tally.planned is not None else tally.collected,
            )


ACTIVITY = Activity()
