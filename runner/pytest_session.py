"""A grouped session: one pytest process that collects once and runs the runner's groups in order.

Every test process a climb starts on either side is one of these (``--evidence-control``, the
plugin's ``groups``): it collects, waits for the plan -- groups of node ids, in the order they are
to run -- and after each group writes a signed ``barrier`` line and waits for ``go`` or ``stop``.
The runner decides between groups from what the stream says, so the ladder's tiers T4-T7 cost
one collection and one interpreter on C instead of one per tier, and the climb still stops at the
first failing tier.

The same command line on B and on C: a like-for-like confirmation on B is a grouped session too,
over the same suite, with the C group's ids in the C group's order.

Each wait has the tier's budget. A process that overruns it is killed; one that dies on its own
ends the session: the group that was running gets what ``pytest_run`` gives any process that ended
(the running test a ``crash`` or a ``timeout``, the rest not run), and no later group runs here.
"""

from __future__ import annotations

import collections
import json
import os
import pathlib
import select
import subprocess
import threading
import time
from collections.abc import Sequence

from pytest_evidence.channel import fixed_number
from pytest_evidence.model import FAILING, Outcome
from runner.pytest_run import Launch, PytestProcess, PytestRun
from runner.sandbox import Sandbox
from runner.target import Target
from runner.terminal.activity import ACTIVITY

#: How often a wait looks at whether the process is still there (its wake pipe may be held open
#: by a child it started).
_POLL = 0.2


def _readable(fds: Sequence[int], timeout: float) -> list[int]:
    """Those of ``fds`` ready to read, or closed at the other end, within ``timeout`` seconds.
    ``poll``, not ``select``: a runner holding many descriptors (a batch of climbs, a harness's
    own files) hands a session numbers at or above 1024, which ``select`` cannot watch."""
    poller = select.poll()
    for fd in fds:
        poller.register(fd, select.POLLIN)
    return [fd for fd, _events in poller.poll(timeout * 1000)]


def _exit_fd(pid: int) -> int:
    """A descriptor that becomes readable when process ``pid`` ends (Linux's pidfd), so a wait
    sees the end at once rather than at its next poll; -1 where there is none."""
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return -1
    try:
        fd: int = opener(pid)
    except OSError:  # a kernel before 5.3, or a sandbox that refuses the call
        return -1
    return fd  # close-on-exec, as every pidfd is


class SessionEnded(Exception):
    """The process is gone; ``run`` is everything it said."""

    def __init__(self, run: PytestRun) -> None:
        super().__init__("the pytest process ended (exit %d)" % run.exit_code)
        self.run = run


class GroupedSession:
    def __init__(
        self,
        target: Target,
        checkout: pathlib.Path,
        files: Sequence[str] | None,
        *,
        sandbox: Sandbox,
        reruns: int,
        watch: Sequence[str],
        one_budget: bool = False,
    ) -> None:
        """``one_budget``: its groups are one tier's (T3's, one per changed test file), and share
        one tier budget, counted from the first group's start; otherwise each group is a tier of
        its own, with a budget of its own."""
        self.budget = sandbox.tier_budget
        self._one_budget = one_budget
        self._groups_deadline: float | None = None
        commands_r, self._commands = os.pipe()
        self._wake, wake_w = os.pipe()
        child = [fixed_number(commands_r), fixed_number(wake_w)]
        os.set_inheritable(self._commands, False)
        os.set_inheritable(self._wake, False)
        control = "--evidence-control=%d,%d" % tuple(child)
        try:
            launch = Launch(reruns, files, watch, [control])
            self.process = PytestProcess(target, checkout, sandbox, launch, pass_fds=child)
        except BaseException:
            for fd in (*child, self._commands, self._wake):
                os.close(fd)
            raise
        for fd in child:
            os.close(fd)
        self._stderr: collections.deque[str] = collections.deque(maxlen=200)
        self._drain = threading.Thread(target=self._read_stderr, daemon=True)
        self._drain.start()
        self._pending = b""
        self._open = True  # the wake pipe still has a writer
        self._exited = _exit_fd(self.process.proc.pid)
        self.groups: list[list[str]] = []
        self._group = -1
        self._view: PytestRun | None = None  # at the end of collection
        self.final: PytestRun | None = None

    def _read_stderr(self) -> None:
        assert self.process.proc.stderr is not None
        for line in self.process.proc.stderr:
            self._stderr.append(line)

    # -- the conversation ----------------------------------------------------------------------

    def collected(self) -> PytestRun:
        """Wait until collection is over: its view (``content.collected``); ``SessionEnded`` when
        the process ended instead (it could not collect, or was killed for its budget). Asked
        again, the same answer: a session started beside others is waited for before any of them
        runs a test, and again when its own turn comes."""
        if self._view is None:
            if self.final is not None:  # ended before it collected: the same ending again
                raise SessionEnded(self.final)
            self._await("ready")
            content = self.process.content()
            self._view = PytestRun(content, 0, self.process.elapsed(), self._said(), False, self.process.command)
        return self._view

    def view(self) -> PytestRun:
        """``collected``'s view, or the ended process's run when it ended before it collected."""
        try:
            return self.collected()
        except SessionEnded as ended:
            return ended.run

    def plan(self, groups: Sequence[Sequence[str]], once: Sequence[str] = ()) -> None:
        """Send the groups to run; ``once``: tests whose failure is not rerun in this process (the
        runner repeats them in further processes)."""
        self.groups = [list(g) for g in groups]
        ACTIVITY.expect(sum(len(g) for g in self.groups))
        self._send(json.dumps({"groups": self.groups, "once": list(once)}))

    def group(self, number: int) -> PytestRun:
        """Wait for group ``number``'s barrier (``go`` first, for any group but the first): its view,
        or ``SessionEnded`` with the group as the run order of the ended process."""
        if number > 0:
            self._send("go")
        self._group = number
        started = time.perf_counter()
        if self._one_budget and self._groups_deadline is None and self.budget is not None:
            self._groups_deadline = time.monotonic() + self.budget
        self._await("barrier %d" % number, self._groups_deadline)
        content = self.process.content()
        ids = self.groups[number]
        if len(content.barriers) <= number and content.forgery is None:
            content.forgery = "woken at the barrier of group %d, which the stream does not have" % number
        seen = [content.results[t].outcome for t in ids if t in content.results]
        failed = any(o in FAILING or o in (Outcome.CRASH, Outcome.TIMEOUT) for o in seen)
        content.exit_status = 5 if not ids else 1 if failed else 0  # as pytest would exit on this group alone
        duration = round(time.perf_counter() - started, 3)
        return PytestRun(content, content.exit_status, duration, self._said(), False, self.process.command)

    def close(self) -> PytestRun:
        """Stop the session (if it still runs) and wait for it: the whole process's run."""
        if self.final is None:
            try:
                os.close(self._commands)  # end of commands: the plugin stops after its barrier
                self._commands = -1
                self._await("exit")
            except SessionEnded:
                pass
        assert self.final is not None
        return self.final

    # -- waiting -------------------------------------------------------------------------------

    def _send(self, line: str) -> None:
        try:
            os.write(self._commands, (line + "\n").encode("utf-8"))
        except OSError:  # the process is gone: the wait that follows says how it ended
            pass

    def _await(self, word: str, deadline: float | None = None) -> None:
        """Block until the plugin wakes the runner with ``word``; ``SessionEnded`` if the process
        ends first (killed at ``deadline``, else at the budget counted from now)."""
        if deadline is None:
            deadline = None if self.budget is None else time.monotonic() + self.budget
        proc = self.process.proc
        while True:
            if word.encode() + b"\n" in self._pending:
                self._pending = self._pending.split(word.encode() + b"\n", 1)[1]
                return
            watched = [fd for fd in (self._wake if self._open else -1, self._exited) if fd >= 0]
            if watched:
                ready = _readable(watched, _POLL)
                if self._wake in ready:
                    chunk = os.read(self._wake, 4096)
                    self._pending += chunk
                    self._open = bool(chunk)
                    if chunk:
                        continue
            else:  # every writer closed it, and the process's end cannot be watched: wait for it
                try:
                    proc.wait(_POLL)
                except subprocess.TimeoutExpired:
                    pass
            if proc.poll() is not None:
                self._end(False)
            if deadline is not None and time.monotonic() > deadline:
                self.process.confined.stop()
                self._end(True)

    def _end(self, exhausted: bool) -> None:
        self._reap()
        order = None if self._group < 0 else self.groups[self._group]
        self.final = self.process.ended("".join(self._stderr), exhausted, order)
        raise SessionEnded(self.final)

    def _reap(self) -> None:
        self.process.proc.wait()
        self.process.confined.end_left()  # what it left running holds its stderr, which the drain reads to the end
        self._drain.join()
        assert self.process.proc.stderr is not None
        self.process.proc.stderr.close()

    def _said(self) -> str:
        return "".join(list(self._stderr)[-40:])

    def __enter__(self) -> GroupedSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.discard()

    def discard(self) -> None:
        """Whatever happened, no process outlives its session."""
        if self.final is None:
            self.process.confined.stop()
            self._reap()
            self.process.release()
        for fd in (self._commands, self._wake, self._exited):
            if fd >= 0:
                os.close(fd)
        self._commands = self._wake = self._exited = -1
