"""Generated suites for the benchmarks: deterministic, built in a temp dir, committed to git."""

from __future__ import annotations

import os
import pathlib
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from runner.example_repo import GIT_IDENTITY

GIT_ENV = dict(os.environ, **GIT_IDENTITY)


def git(root: pathlib.Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, env=GIT_ENV, capture_output=True, text=True, check=True
    ).stdout.strip()


def trivial_suite(root: pathlib.Path, tests: int = 2000, per_file: int = 100) -> str:
    """``tests`` trivial tests over a small package, committed; returns the commit sha."""
    (root / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pkg" / "__init__.py").write_text("def add(a, b):\n    return a + b\n")
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\npythonpath = ["."]\n')
    for f in range(tests // per_file):
        body = ["from pkg import add\n"]
        for t in range(per_file):
            body.append("\ndef test_%d_%d():\n    assert add(%d, 1) == %d\n" % (f, t, t, t + 1))
        (root / "tests" / ("test_gen_%02d.py" % f)).write_text("".join(body))
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "suite")
    return git(root, "rev-parse", "HEAD")


def timed(cmd: Sequence[str], cwd: pathlib.Path) -> tuple[float, float]:
    """``(wall seconds, CPU seconds)`` of one run; CPU (user+sys of the child and its children)
    is the steadier figure on a shared 2-core machine."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit("benchmark failed (%d): %s\n%s" % (proc.returncode, " ".join(cmd), proc.stderr[-2000:]))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def report(title: str, times: dict[str, list[tuple[float, float]]], reference: str) -> None:
    """Print median wall and CPU time per configuration, with ratios to ``reference``."""
    ref_wall = statistics.median(w for w, _ in times[reference])
    ref_cpu = statistics.median(c for _, c in times[reference])
    print(title)
    print("%-40s %9s %7s %9s %7s" % ("configuration", "wall s", "ratio", "CPU s", "ratio"))
    for name, samples in times.items():
        wall = statistics.median(w for w, _ in samples)
        cpu = statistics.median(c for _, c in samples)
        print("%-40s %9.3f %6.3fx %9.3f %6.3fx" % (name, wall, wall / ref_wall, cpu, cpu / ref_cpu))


PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider"]
