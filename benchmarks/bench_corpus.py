"""The ladder on real bug-fix cases: selection safety and precision, cost against a naive run.

Usage: python benchmarks/bench_corpus.py [--cases ID,ID] [--out FILE.json]

Per case (see _corpus.py for how B and C are made), in the same run:

* naive: plain ``pytest`` of C's whole suite once (the case's own test command), wall time;
* certify --full: every tier climbed; the T5 selection (fraction of the suite), whether any
  PASS->FAIL flip was seen at T7 only (``selection_gap``: safety), whether every FAIL_TO_PASS test
  of the case came out bug-discriminating, the verdict, wall time;
* T0-falsifiable: C with a syntax error added to its first changed source file, certified
  (default halting), wall time against the naive run.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time
from typing import Any

from _corpus import CaseRepo, measure_cases, prepare
from _suite import git

from runner.cli import main as runner_main


def _naive(repo: CaseRepo) -> float:
    root = repo.case["pythonpath_root"]
    env = dict(os.environ, PYTHONPATH=str(repo.path / root), PYTHONHASHSEED="0")
    git(repo.path, "checkout", "-q", repo.candidate)
    start = time.perf_counter()
    subprocess.run(
        [str(repo.python), "-m", "pytest", *repo.case["test_command"]], cwd=repo.path, env=env, capture_output=True
    )
    elapsed = time.perf_counter() - start
    git(repo.path, "checkout", "-q", "main")
    return elapsed


def _certify(repo: CaseRepo, candidate: str, out: pathlib.Path, *extra: str) -> tuple[int, float, dict[str, Any]]:
    args = [*repo.certify_args(candidate, out, out.parent / "store.sqlite3"), *extra]
    start = time.perf_counter()
    code = runner_main(args)
    return code, time.perf_counter() - start, json.loads(out.read_text())


def _broken(repo: CaseRepo) -> str:
    """C plus a syntax error in its first changed source file: a T0-falsifiable candidate."""
    changed = git(repo.path, "diff", "--name-only", repo.baseline, repo.candidate).split()
    source = next(p for p in changed if p.endswith(".py") and "test" not in p)
    git(repo.path, "checkout", "-q", repo.candidate)
    with open(repo.path / source, "a") as fh:
        fh.write("\ndef broken(:\n    pass\n")
    git(repo.path, "commit", "-q", "-am", "C with a syntax error")
    sha = git(repo.path, "rev-parse", "HEAD")
    git(repo.path, "checkout", "-q", "main")
    return sha


def measure(case: dict[str, Any]) -> dict[str, Any]:
    work = pathlib.Path(tempfile.mkdtemp(prefix="bench-corpus-"))
    repo = prepare(case, work)
    naive = _naive(repo)
    code, full_s, doc = _certify(repo, repo.candidate, work / "full.json", "--full")
    tiers = {t["tier"]: t for t in doc["tiers"]}
    by_id = {r["test_id"]: r for r in doc["results"]}
    f2p = case["fail_to_pass"]
    gaps = [d for d in doc["detections"] if d["kind"] == "selection_gap"]
    _, t0_s, t0_doc = _certify(repo, _broken(repo), work / "t0.json")
    return {
        "case": case["id"],
        "suite": tiers["T7"]["suite_size"],
        "t4_selected": tiers["T4"]["selected"],
        "t5_selected": tiers["T5"]["selected"],
        "t5_fraction": round(tiers["T5"]["selected"] / max(1, tiers["T7"]["suite_size"] or 1), 3),
        "selection_gaps": len(gaps),
        "f2p_discriminating": sum(1 for t in f2p if by_id.get(t, {}).get("bug_discriminating")),
        "f2p": len(f2p),
        "verdict": doc["verdict"]["verdict"],
        "halted_at": doc["verdict"]["halted_at"],
        "exit": code,
        "naive_s": round(naive, 2),
        "certify_full_s": round(full_s, 2),
        "t0_verdict": "%s at %s" % (t0_doc["verdict"]["verdict"], t0_doc["verdict"]["halted_at"]),
        "t0_s": round(t0_s, 2),
        "t0_speedup": round(naive / t0_s, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", default="", help="comma-separated case ids (default: all)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    rows = measure_cases(args.cases, measure)
    if args.out:
        pathlib.Path(args.out).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
    main()
