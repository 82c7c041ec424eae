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
import os
import pathlib
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_evidence import locate, stream
from pytest_evidence.channel import PrivateChannel
from pytest_evidence.inject import INJECT_PLUGIN, RECORD_LAUNCH
from pytest_evidence.model import Detection, DetectionKind, Failure, FailureKind, Observation, Outcome
from pytest_evidence.replay import observation_for
from pytest_evidence.sockguard import LOG_VARIABLE, read_log
from runner import leases, netns
from runner.sandbox import Sandbox
from runner.target import Target
from runner.terminal.activity import ACTIVITY


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
        """pytest's own complaint: argparse's ``error:`` line (``unrecognized arguments: ...``,
        which follows pytest's usage banner), else its first other ``error:`` line, else the last
        line it wrote."""
        lines = [ln.strip() for ln in self.stderr_tail.splitlines() if ln.strip()]
        flagged = [ln for ln in lines if ": error: " in ln]
        flagged = flagged or [ln for ln in lines if "error:" in ln.lower() and not ln.startswith("ERROR: usage:")]
        return (flagged or lines or ["no message"])[-1 if not flagged else 0]

    def observation(self, test_id: str) -> Observation | None:
        """The outcome of ``test_id``: its result, else a collection error of its file, else None."""
        return observation_for(test_id, self.content)


@dataclass(frozen=True)
class Launch:
    """What one pinned pytest process is asked to do. ``files``: the test files to collect (those
    that exist in the checkout), None for the suite as the repository configures it; ``select``:
    the node ids to run, in this order (``--evidence-select``); ``extra``: further options."""

    reruns: int
    files: Sequence[str] | None
    watch: Sequence[str] = ()
    extra: Sequence[str] = ()
    select: Sequence[str] | None = None


def command(
    target: Target,
    checkout: pathlib.Path,
    scratch: pathlib.Path,
    channel: PrivateChannel,
    sandbox: Sandbox,
    launch: Launch,
) -> list[str]:
    """The command line of one pinned pytest process."""
    reruns, watch, select, files = launch.reruns, launch.watch, launch.select, launch.files
    cmd = [
        target.python,
        *RECORD_LAUNCH,
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
        *launch.extra,
    ]
    # Always given, empty when nothing is watched: whether it is there must not say which side runs.
    (scratch / "watch.txt").write_text("".join(name + "\n" for name in watch))
    cmd.append(f"--evidence-watch={scratch / 'watch.txt'}")
    if select is not None:
        (scratch / "select.txt").write_text("\n".join(select) + "\n")
        cmd.append(f"--evidence-select={scratch / 'select.txt'}")
    cmd.extend(target.pytest_args)
    if files is not None:
        present = [f for f in files if (checkout / f).exists()]
        # The operator's arguments may name the whole suite (``tests``): collect these files only.
        (scratch / "collect.txt").write_text("".join(f + "\n" for f in present))
        cmd.append(f"--evidence-collect={scratch / 'collect.txt'}")
        cmd.extend(present)
    return cmd


def files_of(test_ids: Sequence[str]) -> list[str]:
    return sorted({t.split("::", 1)[0] for t in test_ids})


class PytestProcess:
    """One pinned pytest process and its private channel: started, then read once it ended."""

    def __init__(
        self, target: Target, checkout: pathlib.Path, sandbox: Sandbox, launch: Launch, pass_fds: Sequence[int] = ()
    ) -> None:
        """Start pytest as ``command`` puts it; ``pass_fds``: descriptors the child keeps beside
        the channel's."""
        self.checkout = checkout
        self.sandbox = sandbox
        # What ``release`` lets go: the channel, then the scratch (a killed runner's is the next
        # one's to remove). Let go here already if the process does not start.
        self._held = contextlib.ExitStack()
        try:
            self.scratch = self._held.enter_context(leases.leased("evidence-pytest-", behind=True))
            self.channel = self._held.enter_context(PrivateChannel())
            self.attempts_log = self.scratch / "subprocess-attempts.log"  # the tests' Python subprocesses' attempts
            self.started = time.perf_counter()
            self.command = tuple(command(target, checkout, self.scratch, self.channel, sandbox, launch))
            self.proc = subprocess.Popen(
                self.command,
                cwd=checkout,
                env={
                    **sandbox.environ(target.env(checkout, bytecode=True), self.scratch),
                    LOG_VARIABLE: str(self.attempts_log),
                },
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
                # Kept through the sandbox's preexec (it runs before the descriptors are closed) at
                # the same numbers, which the channel fixed.
                pass_fds=(*self.channel.pass_fds, *pass_fds),
                preexec_fn=sandbox.preexec,
                # one process group either way: a kill takes the tests' own children too
                start_new_session=sandbox.session_leader,
            )
        except BaseException:
            self._held.close()
            raise
        self.channel.started()
        ACTIVITY.attach(self.channel.fileno())
        # one process group either way: a kill takes the tests' own children, and what left it
        # ends with the namespace
        self.confined = netns.Confined(
            self.proc, lambda: os.killpg(self.proc.pid, signal.SIGKILL), sandbox.network == "netns"
        )

    def content(self) -> stream.StreamContent:
        """What the stream says now, failures located in the repository."""
        return locate.content(self.channel.read(), str(self.checkout))

    def ended(self, stderr: str, exhausted: bool, order: Sequence[str] | None, collect_only: bool = False) -> PytestRun:
        """The process is over: its final content, the test that was running marked (``order``: the
        ids in the order the process ran them; None: its collection's order)."""
        try:
            content = self.content()
            content.network.extend(read_log(str(self.attempts_log)))
        finally:
            self.release()
        code = self.proc.returncode
        collected = content.collected or []
        if order is None:
            order = collected
        else:
            known = set(collected)
            order = [t for t in order if t in known]
        if exhausted and not self.sandbox.test_timeout_held:
            failure = Failure(
                FailureKind.TIMEOUT,
                "the test process outran the tier's budget of %ss and was killed" % self.sandbox.tier_budget,
            )
            _mark_running(content, order, Outcome.TIMEOUT, failure)
        elif not exhausted and (not content.finished or code == 0) and not collect_only:
            how = "signal %d" % -code if code < 0 else "exit code %d" % code
            _mark_running(
                content,
                order,
                Outcome.CRASH,
                Failure(FailureKind.CRASH, "the test process died (%s) in this test" % how),
            )
        return PytestRun(content, code, self.elapsed(), _tail(stderr), exhausted, self.command)

    def elapsed(self) -> float:
        return round(time.perf_counter() - self.started, 3)

    def release(self) -> None:
        self.confined.end_left()
        ACTIVITY.detach(self.channel.fileno())
        self._held.close()


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
    files: Sequence[str] | None = None,
    extra: Sequence[str] = (),
) -> PytestRun:
    """Run ``test_ids`` (None: every test ``files`` hold, or the whole suite as the repository
    configures it) in ``checkout``."""

    options = [*extra, "--evidence-deps=."] if deps else [*extra]  # the checkout (the working directory)
    if collect_only:
        options.append("--collect-only")
    files = files if test_ids is None else files_of(test_ids)
    process = PytestProcess(target, checkout, sandbox, Launch(reruns, files, watch, options, test_ids))
    with process.proc as proc:
        try:
            _, stderr, exhausted = process.confined.read(sandbox.tier_budget)
        except BaseException:  # Ctrl-C or SIGTERM: the process was stopped; its scratch goes
            proc.wait()
            process.release()
            raise
    return process.ended(stderr, exhausted, test_ids, collect_only)


def _tail(stderr: str) -> str:
    return "\n".join(stderr.strip().splitlines()[-40:])


def _mark_running(content: stream.StreamContent, order: Sequence[str], outcome: Outcome, failure: Failure) -> None:
    """The first test of the run order without a result was running when the process ended."""
    for test_id in order:
        if test_id not in content.results:
            content.results[test_id] = Observation(test_id, outcome, 0.0, failure, "", (outcome,))
            return
