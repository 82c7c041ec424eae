"""``--evidence-control R,W``: one session runs the groups of tests the runner sends, a barrier after each.

The runner climbs its ladder (T4-T7) in one pytest process per side instead of one per tier: the
process collects once, says so, and receives the whole plan -- the tiers as ordered groups of node
ids, and the tests to run ``once`` (no in-process rerun of a failure: the runner repeats them in
further processes). After each group it writes a ``barrier`` line to the signed stream and waits for the
runner's word: ``go`` runs the next group, ``stop`` (or the runner gone) ends the session, which
then finishes as any pytest session does (fixtures torn down, ``session_finish`` streamed).

Why the plan comes whole and not a group at a time: the last test of a group is run with the
next group's first test as ``nextitem``, so session- and module-scoped fixtures live on across a
barrier exactly as they would in one plain run; when the runner stops the climb instead, pytest's
own session teardown releases them.

The descriptors carry no evidence. ``R`` brings commands, ``W`` only wakes the runner: what a
group did is read from the signed stream, never from this pipe, so a test that writes to it can
at worst wake the runner early (and be caught by the missing barrier line), never speak for the
plugin. Both are kept from the tests' subprocesses.

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

import json
import os
from typing import Dict, List, Optional, Tuple

import pytest

from pytest_evidence.errors import BadInput
from pytest_evidence.flake import ONCE
from pytest_evidence.recorder import Recorder


def descriptors(option: str, value: str) -> Tuple[int, int]:
    """``R,W`` checked (``BadInput``): two inherited descriptors, one to read and one to write."""
    parts = value.split(",")
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise BadInput("%s expects two descriptor numbers R,W, not %r" % (option, value))
    read_fd, write_fd = int(parts[0]), int(parts[1])
    for fd in (read_fd, write_fd):
        try:
            os.fstat(fd)
        except OSError as exc:
            raise BadInput("%s: descriptor %d: %s" % (option, fd, exc.strerror)) from None
        os.set_inheritable(fd, False)
    return read_fd, write_fd


class GroupedRun:
    """The session's test loop, replaced: the runner's groups, in its order, with barriers."""

    def __init__(self, recorder: Recorder, read_fd: int, write_fd: int) -> None:
        self.recorder = recorder
        self._read_fd = read_fd
        self._write_fd = write_fd
        self._buffer = b""

    def _command(self) -> Optional[str]:
        """The runner's next line, or None when it closed the pipe (it is gone: stop)."""
        while b"\n" not in self._buffer:
            chunk = os.read(self._read_fd, 1 << 16)
            if not chunk:
                return None
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode("utf-8")

    def _wake(self, word: str) -> None:
        try:
            os.write(self._write_fd, (word + "\n").encode("ascii"))
        except OSError:  # the runner is gone; the command read that follows says stop
            pass

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Optional[bool]:
        if session.config.option.collectonly:
            return None
        self._wake("ready")
        command = self._command()
        plan = {} if command is None else json.loads(command)
        groups: List[List[str]] = plan.get("groups", [])
        by_id: Dict[str, List[pytest.Item]] = {}
        for item in session.items:  # items may share an id: each runs where the id is planned
            by_id.setdefault(item.nodeid, []).append(item)
        for test_id in plan.get("once", ()):
            for item in by_id.get(test_id, ()):
                item.stash[ONCE] = True
        runs = [[item for t in group for item in by_id.get(t, ())] for group in groups]
        for number, items in enumerate(runs):
            following = next((group[0] for group in runs[number + 1 :] if group), None)
            for index, item in enumerate(items):
                nextitem = items[index + 1] if index + 1 < len(items) else following
                item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
                if session.shouldfail:
                    raise session.Failed(session.shouldfail)
                if session.shouldstop:
                    raise session.Interrupted(session.shouldstop)
            self.recorder.barrier(number, len(items))
            self._wake("barrier %d" % number)
            if number + 1 < len(runs) and self._command() != "go":
                break
        return True

    def pytest_unconfigure(self) -> None:
        for fd in (self._read_fd, self._write_fd):
            try:
                os.close(fd)
            except OSError:
                pass
