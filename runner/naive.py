"""``TESTEXEC=pytestbool``: the naive judge the battery must beat -- run pytest, read the exit code.

The spec's baseline (§7): on each candidate, one pytest run of the whole suite with the trusted
tests laid over it, and the exit code is the verdict -- exit 0 accepts. No evidence typing, no
baseline replay, no selection, no flake policy, no tamper protection, no pinning, no audit. The
plugin rides along only to write down what ran (outcomes, untyped), so the A/B harness can count
what a bare boolean leaves unproved; it changes nothing of the run.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import time
from typing import Any

from pytest_evidence import gitops, overlay
from pytest_evidence.errors import EXIT_CERTIFIED, EXIT_REJECTED, ToolFailed
from pytest_evidence.inject import PYTEST_LAUNCH
from runner import config_policy
from runner.checkout import Checkouts
from runner.target import Target

TESTEXECS = ("17battery", "pytestbool")


def judge(co: Checkouts, target: Target, tests_from: str | None, out: pathlib.Path) -> tuple[int, dict[str, Any]]:
    """The exit code of one pytest run of C with the trusted tests, and the record of it."""
    trusted, label = co.trusted_tests(tests_from)
    changed = gitops.git(["diff", "--name-only", co.baseline, trusted], cwd=str(co.repo)).stdout.decode().split()
    modules = config_policy.test_modules_at(str(co.repo), trusted, target.pytest_args)
    tests = [p for p in changed if overlay.is_test_file(p, modules)]
    present = set(gitops.git(["ls-tree", "-r", "--name-only", trusted], cwd=str(co.repo)).stdout.decode().split())
    co.lay({p: gitops.show(str(co.repo), trusted, p) if p in present else None for p in tests})
    written = co.scratch / "pytestbool.json"
    command = [
        target.python,
        *PYTEST_LAUNCH,
        *("-p", "no:evidence", "-p", "pytest_evidence.plugin", "--evidence-out=%s" % written),
        *target.pytest_args,
    ]
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=co.c_dir, env=target.env(co.c_dir), capture_output=True, text=True)
    seconds = round(time.perf_counter() - start, 3)
    if not written.is_file():
        raise ToolFailed("pytest exited %d without a record: %s" % (proc.returncode, proc.stderr.strip()[-500:]))
    doc: dict[str, Any] = json.loads(written.read_text())
    code = EXIT_CERTIFIED if proc.returncode == 0 else EXIT_REJECTED
    doc["verdict"] = {
        "verdict": "CERTIFIED" if code == EXIT_CERTIFIED else "REJECTED",
        "halted_at": None,
        "reasons": ["pytestbool: the exit code is the verdict; pytest exited %d in %.2fs" % (proc.returncode, seconds)],
    }
    doc["invocation"] = {
        "testexec": "pytestbool",
        "python": target.python,
        "pytest_args": list(target.pytest_args),
        "pythonpath": list(target.pythonpath),
        "tests_from": label,
    }
    return code, doc
