"""Candidates in parallel, each its own ``evidence-runner certify`` process.

A process per candidate is the isolation: its own worktrees, network namespace, temporary HOME
and seeds, as when certified alone -- so the records are the same -- and a crash, a hang or a
kill costs that candidate only. A thread per slot waits on its process; nothing is scheduled or
queued here beyond ``concurrent.futures``.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass

from runner.batch.candidates import Candidate
from runner.sandbox import dies_with_parent

#: The memory one certify is given room for when ``--jobs`` is not named (its test processes included).
MEMORY_PER_JOB = 1536 * 1024 * 1024


def default_jobs() -> int:
    """As many candidates at once as there are cores, and as memory holds."""
    from runner.parallel import cores

    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            fields = dict(line.split(":", 1) for line in fh)
        available = int(fields["MemAvailable"].split()[0]) * 1024
    except (OSError, KeyError, ValueError):
        return cores()
    return max(1, min(cores(), available // MEMORY_PER_JOB))


@dataclass(frozen=True)
class Finished:
    """How one candidate's certify ended."""

    exit_code: int | None  # None: killed at the timeout, or it never ended (``error`` says why)
    seconds: float
    error: str | None = None  # why there is no exit code, when not the timeout (a lost Ray task)


def certify_one(
    command: Sequence[str],
    log: pathlib.Path,
    timeout: float | None,
    module: bool = True,
    cwd: str | None = None,
) -> Finished:
    """Run one certify (``module``: ``command`` is the runner's; else the interpreter's own
    arguments) in ``cwd`` (None: this one); the log takes its output. At ``timeout`` its whole
    process group is killed."""
    started = time.perf_counter()
    with open(log, "w", encoding="utf-8") as fh:
        proc = subprocess.Popen(
            [sys.executable, *(("-m", "runner.cli") if module else ()), *command],
            stdout=fh,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a kill takes its pytest processes too
            cwd=cwd,
            # certify is sent SIGTERM (and cleans up as on Ctrl-C) when what started it dies --
            # the batch, or the Ray worker of its task: a killed worker leaves no certify running.
            preexec_fn=dies_with_parent(signal.SIGTERM),
            env={**os.environ, "COLUMNS": "100"},
        )
        code: int | None = None
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pass  # killed below: no exit code
        finally:
            if code is None:  # the timeout, or an interrupt of the batch: the whole group goes
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    return Finished(code, time.perf_counter() - started)


def run(
    todo: Sequence[tuple[Candidate, Sequence[str], pathlib.Path]],
    jobs: int,
    timeout: float | None,
    done: Callable[[Candidate, Finished], None],
) -> None:
    """Certify every ``(candidate, certify command, log)``, ``jobs`` at a time; ``done`` as each ends."""
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(certify_one, command, log, timeout): cand for cand, command, log in todo}
        for future in as_completed(futures):
            done(futures[future], future.result())
