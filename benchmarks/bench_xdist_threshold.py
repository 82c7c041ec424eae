"""When does pytest-xdist pay for B's suite run? Serial against ``-n 2 --dist loadfile``, measured.

Usage: python benchmarks/bench_xdist_threshold.py [--runs N] [--sizes 100,250,...] [--cost-ms 0,2]

B's suite run is the runner's one process without barriers (``runner.parallel``). Each generated
suite (``--cost-ms`` of CPU work per test, in files of 50) runs through the runner's own pinned
process (``runner.pytest_run.run``: record mode, per-test dependencies, the sandbox), serially and
on two workers, interleaved; the script prints the median wall time of each and their ratio, and
the smallest size at which two workers win by at least 10% -- the threshold ``runner.parallel``
uses, written down with this command in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import tempfile
import time

from _suite import git

from runner import pytest_run
from runner.parallel import xdist_args
from runner.sandbox import pin_environment
from runner.target import Target


def suite(root: pathlib.Path, tests: int, cost_ms: float) -> None:
    (root / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    work = "    end = time.process_time() + %r\n    while time.process_time() < end:\n        pass\n" % (cost_ms / 1000)
    (root / "pkg" / "__init__.py").write_text("import time\n\n\ndef add(a, b):\n%s    return a + b\n" % work)
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\npythonpath = ["."]\n')
    for f in range((tests + 49) // 50):
        body = ["from pkg import add\n"]
        for t in range(min(50, tests - 50 * f)):
            body.append("\ndef test_%d_%d():\n    assert add(%d, 1) == %d\n" % (f, t, t, t + 1))
        (root / "tests" / ("test_gen_%03d.py" % f)).write_text("".join(body))
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "suite")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sizes", default="100,250,500,1000,2000")
    parser.add_argument("--cost-ms", default="0,2")
    args = parser.parse_args()
    target = Target(sys.executable, (".",), ())
    if not target.has_xdist:
        raise SystemExit("pytest-xdist is not installed here")
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="bench-xdist-"))
    sandbox = pin_environment(target, tier_budget=900.0)
    print("%8s %8s %10s %10s %7s" % ("cost ms", "tests", "serial s", "-n 2 s", "ratio"))
    for cost in (float(c) for c in args.cost_ms.split(",")):
        threshold = None
        for size in (int(s) for s in args.sizes.split(",")):
            root = scratch / ("suite-%g-%d" % (cost, size))
            suite(root, size, cost)
            times: dict[str, list[float]] = {"serial": [], "xdist": []}
            for _ in range(args.runs):
                for name, extra in (("serial", []), ("xdist", ["-n", "2", "--dist", "loadfile"])):
                    start = time.perf_counter()
                    run = pytest_run.run(target, root, None, sandbox=sandbox, reruns=2, deps=True, extra=extra)
                    times[name].append(time.perf_counter() - start)
                    if len(run.content.results) != size:
                        raise SystemExit("%s run of %d tests reported %d" % (name, size, len(run.content.results)))
            serial, xdist = statistics.median(times["serial"]), statistics.median(times["xdist"])
            print("%8g %8d %10.2f %10.2f %6.2fx" % (cost, size, serial, xdist, xdist / serial))
            if threshold is None and xdist <= 0.9 * serial:
                threshold = size
        print("cost %g ms: two workers win by 10%% from %s tests" % (cost, threshold or "no size measured"))
    print(
        "runner.parallel.MIN_TESTS today: %d (xdist_args(True, 2, n) = %s)" % (_min_tests(), xdist_args(True, 2, 10**6))
    )


def _min_tests() -> int:
    from runner.parallel import MIN_TESTS

    return MIN_TESTS


if __name__ == "__main__":
    main()
