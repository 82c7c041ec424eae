"""One pytest process in a checkout, with the plugin in record mode; read back its stream.

The runner never parses pytest's text. It hands the node ids to run in a file
(``--evidence-select``), starts pytest in the target interpreter, and reads the observations,
dependencies and module origins the plugin streamed. A process that has to be killed (it outran
its time limit) still leaves every finished test in the stream; the test that was running is a
``timeout`` and the rest are reported as not run.
"""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_evidence import stream
from pytest_evidence.model import Failure, FailureKind, Observation, Outcome
from pytest_evidence.replay import INJECT_PLUGIN, observation_for
from runner.target import Target


@dataclass(frozen=True)
class PytestRun:
    content: stream.StreamContent
    exit_code: int
    duration: float
    stderr_tail: str
    timed_out: bool
    command: tuple[str, ...]

    def observation(self, test_id: str) -> Observation | None:
        """The outcome of ``test_id``: its result, else a collection error of its file, else None."""
        return observation_for(test_id, self.content)


def run(
    target: Target,
    checkout: pathlib.Path,
    test_ids: Sequence[str] | None,
    *,
    reruns: int,
    deps: bool = False,
    watch: Sequence[str] = (),
    collect_only: bool = False,
    timeout: float | None = None,
) -> PytestRun:
    """Run ``test_ids`` (None: the whole suite as the repository configures it) in ``checkout``."""
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="evidence-pytest-"))
    stream_path = scratch / "stream.jsonl"
    cmd = [
        target.python,
        "-m",
        "pytest",
        *INJECT_PLUGIN,
        "--evidence-record-mode",
        f"--evidence-stream={stream_path}",
        f"--evidence-reruns={reruns}",
        "-p",
        "no:cacheprovider",
        "--continue-on-collection-errors",
        "-q",
        "-rN",
    ]
    if deps:
        cmd.append(f"--evidence-deps={checkout}")
    if watch:
        (scratch / "watch.txt").write_text("\n".join(watch) + "\n")
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
    timed_out = False
    try:
        with subprocess.Popen(
            cmd, cwd=checkout, env=target.env(checkout), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        ) as proc:
            try:
                _, stderr = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                _, stderr = proc.communicate()
                timed_out = True
            except BaseException:  # Ctrl-C or SIGTERM: no test process outlives the runner
                proc.kill()
                proc.wait()
                raise
        content = stream.read(str(stream_path))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if timed_out:
        _mark_timeout(content, timeout)
    tail = "\n".join((stderr or "").strip().splitlines()[-20:])
    return PytestRun(content, proc.returncode, round(time.perf_counter() - start, 3), tail, timed_out, tuple(cmd))


def _mark_timeout(content: stream.StreamContent, limit: float | None) -> None:
    """The first collected test without a result was running when the process was killed."""
    for test_id in content.collected or []:
        if test_id not in content.results:
            content.results[test_id] = Observation(
                test_id,
                Outcome.TIMEOUT,
                float(limit or 0),
                Failure(FailureKind.TIMEOUT, "the test process outran its limit of %ss and was killed" % limit),
                "",
                (Outcome.TIMEOUT,),
            )
            return
