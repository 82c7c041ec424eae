"""One pytest process in a checkout, with the plugin in record mode; read back its stream.

The runner never parses pytest's text. It hands the node ids to run in a file
(``--evidence-select``), starts pytest in the target interpreter inside the sandbox, and reads the
observations, dependencies, module origins and refused network attempts the plugin streamed.

The stream comes back over a private channel (``pytest_evidence.channel``): an unnamed file the
child inherits as a descriptor, and a key it inherits through a pipe its plugin empties and
closes before any conftest. No path of the stream is on the child's command line or in its
environment; every line carries an HMAC tag under the key, and the runner trusts nothing else the
process wrote. A line that breaks the format -- a bad tag, a gap in the numbering, a second
result, anything after ``session_finish`` -- is ``content.forgery``. The command line is the
same on B and on C: no argument names a checkout or a side (the descriptor numbers are fixed).

Every finished test is in the stream whatever happens to the process. A process that dies on
its own (``os._exit``, a segfault, the OOM killer) -- or exits 0 having reported fewer tests than
it collected -- makes the test that was running a ``crash``; one killed because the tier's time
budget ran out leaves it, and the rest, not run (a ``timeout`` instead when no per-test timeout
could be installed: then the budget is the only thing that notices a hang).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import pathlib
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_evidence import stream
from pytest_evidence.channel import PrivateChannel
from pytest_evidence.inject import INJECT_PLUGIN, PYTEST_LAUNCH
from pytest_evidence.model import Detection, DetectionKind, Failure, FailureKind, Observation, Outcome
from pytest_evidence.replay import observation_for
from pytest_evidence.sockguard import LOG_VARIABLE, read_log
from runner.sandbox import Sandbox
from runner.target import Target


@dataclass(frozen=True)
class PytestRun:
    content: stream.StreamContent
    exit_code: int
    duration: float
    stderr_tail: str
    budget_exhausted: bool
    command: tuple[str, ...]

    def tamper(self, side: str) -> Detection | None:
        """The stream's first line the plugin did not write, as the ``tamper`` detection
        (``stream_forged``) the record carries, or None. Check it before ``answered``: a forged
        first line leaves nothing read."""
        if self.content.forgery is None:
            return None
        return Detection(
            DetectionKind.TAMPER,
            "the result stream of a test process on %s has a line its plugin did not write (%s)"
            % (side, self.content.forgery),
            detail="stream_forged",
        )

    @property
    def answered(self) -> bool:
        """The plugin started and reported: whatever happened next, the stream says it."""
        return self.content.started is not None

    @property
    def said(self) -> str:
        """pytest's own complaint: its ``error:`` line, else the last line it wrote."""
        lines = [ln.strip() for ln in self.stderr_tail.splitlines() if ln.strip()]
        flagged = [ln for ln in lines if "error:" in ln.lower()]
        return (flagged or lines or ["no message"])[-1 if not flagged else 0]

    def observation(self, test_id: str) -> Observation | None:
        """The outcome of ``test_id``: its result, else a collection error of its file, else None."""
        return observation_for(test_id, self.content)


def run(
    target: Target,
    checkout: pathlib.Path,
    test_ids: Sequence[str] | None,
    *,
    sandbox: Sandbox,
    reruns: int,
    deps: bool = False,
    watch: Sequence[str] = (),
    collect_only: bool = False,
) -> PytestRun:
    """Run ``test_ids`` (None: the whole suite as the repository configures it) in ``checkout``."""
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="evidence-pytest-"))
    budget = sandbox.tier_budget
    channel = PrivateChannel()
    try:
        cmd = [
            target.python,
            *PYTEST_LAUNCH,
            *INJECT_PLUGIN,
            "--evidence-record-mode",
            *channel.args(),
            f"--evidence-reruns={reruns}",
            "-p",
            "no:cacheprovider",
            "--continue-on-collection-errors",
            "-q",
            "-rN",
            *sandbox.pytest_args(),
        ]
        if deps:
            cmd.append("--evidence-deps=.")  # the checkout (the working directory), not its name
        # Always given, empty when nothing is watched: whether it is there must not say which side runs.
        (scratch / "watch.txt").write_text("".join(name + "\n" for name in watch))
        cmd.append(f"--evidence-watch={scratch / 'watch.txt'}")
        if collect_only:
            cmd.append("--collect-only")
        cmd.extend(target.pytest_args)
        if test_ids is not None:
            (scratch / "select.txt").write_text("\n".join(test_ids) + "\n")
            cmd.append(f"--evidence-select={scratch / 'select.txt'}")
            files = sorted({t.split("::", 1)[0] for t in test_ids})
            cmd.extend(f for f in files if (checkout / f).exists())
        start = time.perf_counter()
        exhausted = False
        attempts_log = scratch / "subprocess-attempts.log"  # what the tests' Python subprocesses attempted
        with subprocess.Popen(
            cmd,
            cwd=checkout,
            env={**sandbox.environ(target.env(checkout), scratch / "home"), LOG_VARIABLE: str(attempts_log)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            # Kept through the sandbox's preexec (it runs before the descriptors are closed) at
            # the same numbers, which the channel fixed.
            pass_fds=channel.pass_fds,
            preexec_fn=sandbox.preexec,
            start_new_session=True,  # one process group: a kill takes the tests' own children too
        ) as proc:
            channel.started()
            try:
                _, stderr = proc.communicate(timeout=budget)
            except subprocess.TimeoutExpired:
                _kill_group(proc.pid)
                _, stderr = proc.communicate()
                exhausted = True
            except BaseException:  # Ctrl-C or SIGTERM: no test process outlives the runner
                _kill_group(proc.pid)
                proc.wait()
                raise
        content = _relative(channel.read(), checkout)
        content.network.extend(read_log(str(attempts_log)))  # what Python subprocesses attempted
    finally:
        channel.close()
        shutil.rmtree(scratch, ignore_errors=True)
    if exhausted and not sandbox.test_timeout_held:
        _mark_running(
            content,
            Outcome.TIMEOUT,
            Failure(FailureKind.TIMEOUT, "the test process outran the tier's budget of %ss and was killed" % budget),
        )
    elif not exhausted and (not content.finished or proc.returncode == 0) and not collect_only:
        how = "signal %d" % -proc.returncode if proc.returncode < 0 else "exit code %d" % proc.returncode
        _mark_running(
            content, Outcome.CRASH, Failure(FailureKind.CRASH, "the test process died (%s) in this test" % how)
        )
    tail = "\n".join((stderr or "").strip().splitlines()[-40:])
    return PytestRun(content, proc.returncode, round(time.perf_counter() - start, 3), tail, exhausted, tuple(cmd))


def _relative(content: stream.StreamContent, checkout: pathlib.Path) -> stream.StreamContent:
    """Failures located in the repository, not in a temporary worktree that is gone by the time
    anyone reads the record -- and alike on B and on C, so the two sides compare."""
    prefixes = sorted({str(checkout) + os.sep, os.path.realpath(checkout) + os.sep}, key=len, reverse=True)

    def strip(text: str) -> str:
        for prefix in prefixes:
            text = text.replace(prefix, "")
        return text

    def local(failure: Failure | None) -> Failure | None:
        if failure is None:
            return None
        return dataclasses.replace(
            failure,
            message=strip(failure.message),
            path=None if failure.path is None else strip(failure.path),
            excerpt=strip(failure.excerpt),
        )

    content.results = {t: dataclasses.replace(o, failure=local(o.failure)) for t, o in content.results.items()}
    content.collect_errors = {n: f for n, f in ((n, local(f)) for n, f in content.collect_errors.items()) if f}
    return content


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):  # it may have ended on its own meanwhile
        os.killpg(pid, signal.SIGKILL)


def _mark_running(content: stream.StreamContent, outcome: Outcome, failure: Failure) -> None:
    """The first collected test without a result was running when the process ended."""
    for test_id in content.collected or []:
        if test_id not in content.results:
            content.results[test_id] = Observation(test_id, outcome, 0.0, failure, "", (outcome,))
            return
