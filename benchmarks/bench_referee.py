"""What the network namespace and the integrity scan cost when certifying real bug fixes.

Usage: python benchmarks/bench_referee.py [--cases ID,ID] [--repeats N]

Per case (see _corpus.py for how B and C are made), in the same process and interleaved:

* referee: ``certify`` as shipped -- every test process in a fresh network namespace, the
  protected files compared with B's before anything runs;
* bare: the same ``certify`` with the namespace switched off (the in-process socket guard still
  runs, as it does wherever namespaces are forbidden) and the integrity check replaced by one
  that finds nothing.

Each mode has its own store, warmed by one discarded run, so both reuse their B suite and the
timed runs compare the same work. The ratio is total referee time over total bare time.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import tempfile
import time
from typing import Any

from _corpus import CaseRepo, measure_cases, prepare

from runner import integrity, netns
from runner.cli import main as runner_main

_REAL_CHECK = integrity.verify_test_integrity


def _nothing_found(*_args: Any, **_kwargs: Any) -> integrity.IntegrityReport:
    return integrity.IntegrityReport((), {}, 0)


def _mode(referee: bool) -> None:
    integrity.verify_test_integrity = _REAL_CHECK if referee else _nothing_found
    netns._AVAILABLE[:] = [] if referee else [False]


def _certify(repo: CaseRepo, out: pathlib.Path, store: pathlib.Path) -> float:
    args = repo.certify_args(repo.candidate, out, store)
    start = time.perf_counter()
    runner_main(args)
    return time.perf_counter() - start


def measure(case: dict[str, Any], repeats: int) -> dict[str, Any]:
    work = pathlib.Path(tempfile.mkdtemp(prefix="bench-referee-"))
    repo = prepare(case, work)
    times: dict[str, list[float]] = {"referee": [], "bare": []}
    for warm in (True, *([False] * repeats)):
        for name in ("bare", "referee"):
            _mode(name == "referee")
            elapsed = _certify(repo, work / ("%s.json" % name), work / ("%s.sqlite3" % name))
            if not warm:
                times[name].append(elapsed)
    _mode(True)
    doc = json.loads((work / "referee.json").read_text())
    return {
        "case": case["id"],
        "verdict": doc["verdict"]["verdict"],
        "network": doc["pinning"]["network"] if doc["pinning"] else None,
        "bare_s": round(sum(times["bare"]), 3),
        "referee_s": round(sum(times["referee"]), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", default="", help="comma-separated case ids (default: all)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rows = measure_cases(args.cases, lambda case: measure(case, args.repeats))
    bare = sum(r["bare_s"] for r in rows)
    referee = sum(r["referee_s"] for r in rows)
    print(
        "cases: %d  bare: %.2f s  referee: %.2f s  ratio referee/bare: %.3f"
        % (len(rows), bare, referee, referee / bare)
    )


if __name__ == "__main__":
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
    main()
