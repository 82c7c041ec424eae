"""What the run-time check of the test frameworks' objects (``pytest_evidence/originals.py``)
costs a runner test process, against plain pytest in the same run.

Usage: python benchmarks/bench_framework_watch.py [--runs N] [--tests N]

A generated suite of trivial tests (``_suite.trivial_suite``: about 1 ms a test, where a per-test
cost shows most) is run, interleaved, as plain pytest (``-p no:evidence``), as a runner test
process streams it (``--evidence-record-mode``) with the check, the same with its per-test look
made a no-op (the snapshot, the finder and the looks at collection's and at the session's end
kept), and without the check. The last two are the check taken apart, not configurations the
plugin offers: a helper plugin of this directory (``_watch_off.py``) changes the registered
check object for them. Prints each configuration's median wall and CPU time and its ratio to
plain pytest.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import tempfile

from _suite import PYTEST, report, timed, trivial_suite

HERE = pathlib.Path(__file__).resolve().parent
RECORD = ["--evidence-record-mode", "--evidence-stream"]

CONFIGURATIONS = {
    "plain pytest": ["-p", "no:evidence"],
    "record mode, the check": [],
    "record mode, no per-test look": ["-p", "_watch_off", "--watch-off=per-test"],
    "record mode, no check": ["-p", "_watch_off", "--watch-off=all"],
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--tests", type=int, default=2000)
    args = parser.parse_args()
    work = pathlib.Path(tempfile.mkdtemp(prefix="bench-watch-"))
    suite = work / "suite"
    trivial_suite(suite, tests=args.tests)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")])))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # the suite's and the plugin's bytecode cached, as installed

    def command(name: str) -> list[str]:
        stream = [] if name == "plain pytest" else [*RECORD, str(work / "s.jsonl")]
        return [*PYTEST, "-p", "no:xdist", *stream, *CONFIGURATIONS[name]]

    for name in CONFIGURATIONS:  # one unmeasured run each: bytecode written
        timed(command(name), suite, env)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in CONFIGURATIONS}
    names = list(CONFIGURATIONS)
    for run in range(args.runs):
        for name in names if run % 2 == 0 else names[::-1]:
            times[name].append(timed(command(name), suite, env))
    report("%d trivial tests, %d interleaved runs each" % (args.tests, args.runs), times, "plain pytest")


if __name__ == "__main__":
    main()
