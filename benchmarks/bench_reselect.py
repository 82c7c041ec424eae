"""T5's selection before and after a change to the analysis, from one stored B run per case.

Usage: python benchmarks/bench_reselect.py --before DIR [--corpus FILE] [--cases ID,ID] [--out FILE.json]

Per case (``_corpus.py`` builds B and C): the runner of ``--before`` (a worktree of an older
commit) certifies the real fix from a fresh store, which stores B's suite run and gives the
older T5 in its record; then this checkout's ``select_impacted_tests`` selects again, in this
process, from that same stored run, C's same suite and the same diff. What differs is the
analysis alone, not the recording, the machine or the suite's luck. Reported per case: the
suite, T5 before and after, and the record's flips (``regression`` and ``selection_gap``
detections: tests whose outcome changed from B) that the new selection leaves out -- T7 would
find them, as selection gaps.

The first line per case checks the method: this checkout, given the before-runner's inputs,
must reproduce the before record's selection when the analysis did not change (run with
``--before`` pointing at this checkout's own commit).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import shutil
import sqlite3
import tempfile
from typing import Any

from _corpus import measure_cases, prepare
from _suite import certify

from pytest_evidence.store import Store
from runner.config_policy import test_modules_at
from runner.diff import compute
from runner.importgraph import ImportGraph
from runner.selection import select_impacted_tests

#: Detections that are a test's outcome changing from B: what a selection must not leave out.
FLIPS = frozenset({"regression", "selection_gap"})


def measure(case: dict[str, Any], before: pathlib.Path) -> dict[str, Any]:
    work = pathlib.Path(tempfile.mkdtemp(prefix="bench-reselect-"))
    try:
        repo = prepare(case, work)
        store_path = work / "store.sqlite3"
        record = certify(repo.certify_args(repo.candidate, work / "cold.json", store_path), before).record
        row: dict[str, Any] = {"case": case["id"], "verdict": record["verdict"]["verdict"]}
        old = record.get("selection")
        if not old:
            return {**row, "t5_before": None, "note": "no T5 selection in the record (halted before it)"}
        suite_ids = [t for group in ("selected", "left_out") for ids in old[group].values() for t in ids]
        with sqlite3.connect(store_path) as db:  # one suite run: the fresh store's only one
            (key,) = db.execute("SELECT cache_key FROM suite_runs").fetchone()
        suite = Store(str(store_path)).suite_lookup(key)
        assert suite is not None
        modules = test_modules_at(str(repo.path), repo.candidate, repo.pytest_args)
        diff = compute(str(repo.path), repo.baseline, repo.candidate, modules)
        root = "" if repo.pythonpath == "." else repo.pythonpath
        new = select_impacted_tests(suite_ids, suite, diff, ImportGraph(repo.path, [root]))
        flipped = {d.get("test_id") for d in record["detections"] if d["kind"] in FLIPS}
        return {
            **row,
            "suite": len(suite_ids),
            "t5_before": sum(len(ids) for ids in old["selected"].values()),
            "t5_after": len(new.t5),
            "flips": len(flipped),
            "flips_left_out": len(flipped - set(new.t5)),
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", required=True, help="a worktree of the commit whose runner records and selects")
    parser.add_argument("--corpus", default=None, help="a cases.jsonl (default: ../shared/corpus)")
    parser.add_argument("--cases", default="", help="comma-separated case ids (default: all)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    before = pathlib.Path(args.before).resolve()
    corpus = pathlib.Path(args.corpus) if args.corpus else None
    rows = measure_cases(args.cases, lambda case: measure(case, before), corpus)
    if args.out:
        pathlib.Path(args.out).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
