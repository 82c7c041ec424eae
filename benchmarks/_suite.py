"""Generated suites for the benchmarks: deterministic, built in a temp dir, committed to git."""

from __future__ import annotations

import compileall
import json
import os
import pathlib
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from runner.example_repo import GIT_IDENTITY

GIT_ENV = dict(os.environ, **GIT_IDENTITY)
ROOT = pathlib.Path(__file__).resolve().parent.parent


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


def timed(cmd: Sequence[str], cwd: pathlib.Path, env: Mapping[str, str] | None = None) -> tuple[float, float]:
    """``(wall seconds, CPU seconds)`` of one run; CPU (user+sys of the child and its children)
    is the steadier figure on a shared 2-core machine."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
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


# ``evidence-runner`` of this checkout in its own process, which reports its resource usage at its
# end: CPU of itself and of every test process it waited for, its own peak RSS and the largest
# child's (a pytest session, or an xdist worker of B's suite run).
_WRAPPER = """
import json, os, resource, sys
from runner.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
with open(os.environ["BENCH_RUSAGE"], "w") as fh:
    json.dump({"cpu_self": me.ru_utime + me.ru_stime, "cpu_children": kids.ru_utime + kids.ru_stime,
               "maxrss_self_kb": me.ru_maxrss, "maxrss_children_kb": kids.ru_maxrss}, fh)
sys.exit(code)
"""


@dataclass(frozen=True)
class Certified:
    exit: int
    wall: float
    cpu: float  # the runner's and its test processes' user + system seconds
    maxrss_runner_mb: float
    maxrss_child_mb: float  # the largest test process
    record: dict[str, Any]
    stderr: str  # the runner's progress lines (which test killed each mutant, say)


#: The checkouts whose own modules this process has byte-compiled (``_compiled``).
_COMPILED: set[pathlib.Path] = set()


def _compiled(root: pathlib.Path) -> None:
    """Byte-compile the runner and the plugin of the checkout ``root``, once per process: an
    installed wheel has its bytecode, while a checkout's goes stale at each commit and, under
    ``PYTHONDONTWRITEBYTECODE`` (as on the development machines), every runner start compiled
    its modules again -- about 0.1 s a certify, and more for whichever of two trees measured
    side by side was compiled last (``docs/benchmarks.md``, "One interpreter start less")."""
    if root not in _COMPILED:
        for package in ("runner", "pytest_evidence"):
            compileall.compile_dir(str(root / package), quiet=1)
        _COMPILED.add(root)


def certify(args: Sequence[str], root: pathlib.Path = ROOT) -> Certified:
    """``evidence-runner ARGS`` (``certify --out FILE ...``) of this checkout (or of the checkout
    ``root``: a worktree of another commit, measured side by side), measured, its modules
    compiled as an installed runner's are."""
    _compiled(root)
    out = pathlib.Path(args[args.index("--out") + 1])
    usage = out.with_suffix(".rusage.json")
    env = dict(os.environ, BENCH_RUSAGE=str(usage), PYTHONPATH=str(root))
    start = time.perf_counter()
    # In ``root``: ``python -c`` puts its working directory first on sys.path, before PYTHONPATH,
    # so run from this checkout's root it imported this checkout's runner whatever ``root`` said.
    proc = subprocess.run([sys.executable, "-c", _WRAPPER, *args], env=env, capture_output=True, text=True, cwd=root)
    wall = time.perf_counter() - start
    if not out.exists():
        raise SystemExit("certify wrote no record (exit %d): %s" % (proc.returncode, proc.stderr[-2000:]))
    use = json.loads(usage.read_text())
    return Certified(
        proc.returncode,
        wall,
        use["cpu_self"] + use["cpu_children"],
        use["maxrss_self_kb"] / 1024,
        use["maxrss_children_kb"] / 1024,
        json.loads(out.read_text()),
        proc.stderr,
    )


def t5_fraction(record: dict[str, Any]) -> tuple[int | None, int | None]:
    """(T5 selected, suite size) from the record's tiers; None where T5 made no selection."""
    tiers = {t["tier"]: t for t in record["tiers"]}
    t5 = tiers.get("T5") or {}
    size = t5.get("suite_size") or (record.get("selection") or {}).get("suite_size")
    return t5.get("selected"), size


def gaps(record: dict[str, Any]) -> int:
    """Flips the selection missed: ``selection_gap`` detections."""
    return sum(1 for d in record["detections"] if d["kind"] == "selection_gap")
