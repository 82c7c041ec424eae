"""Whether B's suite run is spread over processes with pytest-xdist, and how.

B's suite run is the one test process of a climb without barriers -- the whole suite, recorded
once per B -- so it is where parallelism pays without a scheduler of our own (the grouped C
session stays serial: ``docs/runner.md``, "One session per side"). Two workers cost an
interpreter start and a collection each, and under xdist the per-test dependency data must ride
on the reports, which only the plugin's own tracer can do (coverage.py's engine is out). Measured
on this project's 2-core machine (``benchmarks/bench_xdist_threshold.py``, ``docs/benchmarks.md``)
two workers never won by 10% up to 2,000 tests; with 2 ms of work per test they broke even at
2,000. So ``--jobs`` defaults to 1, and a larger ``--jobs`` applies from ``MIN_TESTS`` tests.

``--dist loadfile``: every test of a file runs on one worker, in the file's order, so tests that
lean on an earlier test of their module (module state, a class attribute) see what they see in a
serial run; ``loadscope`` would split a module's classes between workers.
"""

from __future__ import annotations

import os

#: Measured, not guessed: docs/benchmarks.md, "When xdist pays for B's suite run".
MIN_TESTS = 2000


def cores() -> int:
    """The cores this process may use: the most ``--jobs`` can ask for usefully."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def xdist_args(has_xdist: bool, jobs: int, tests: int) -> list[str]:
    """pytest's arguments for B's suite run of ``tests`` tests on at most ``jobs`` processes."""
    if not has_xdist or jobs < 2 or tests < MIN_TESTS:
        return []
    return ["-n", str(jobs), "--dist", "loadfile"]
