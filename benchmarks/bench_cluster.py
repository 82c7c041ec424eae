"""certify-batch on a simulated cluster: a local Ray of N workers judging real cases' candidates.

Usage: python benchmarks/bench_cluster.py [--cases ID,ID] [--workers 1,2,4] [--out FILE.json]

The candidates are those the A/B harness derives from each shared-corpus case (``runner.ab.derive``:
the real fix, the fix without its test, the test without the fix, the fix plus a skip marker, the
fix plus a weakened assertion), judged as the A/B battery judges them (the real fix's tests
trusted, FAIL_TO_PASS designated). Per case and worker count, one ``certify-batch --executor ray
--jobs N`` with a fresh store, so each batch builds B once, serially, before any task. Where
throughput stops growing is read from three figures measured in the same run: *B* is the wall
time of a batch of one candidate that T0 rejects (a syntax error: B's build plus one
interpreter's worth of checks), *ladder* is the seconds the candidates' ladders took (the
records' tier durations, summed), and *efficiency* is ladder / ((wall - B) x workers): the share of
the workers' time that went into the ladders' tiers, the rest being each certify's work
outside them (worktrees, pinning, the record), Ray, shipping and the driver.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import shutil
import sys
import tempfile
from typing import Any

from _corpus import cases, prepare
from bench_batch import run_batch
from bench_corpus import broken

from runner.ab import derive


def options(built: Any) -> list[str]:
    """certify's options for every candidate of the case, as the A/B battery gives them."""
    words = built.certify_args("-", pathlib.Path("-"), pathlib.Path("-"))
    for flag in ("--repo", "--baseline", "--candidate", "--out", "--store"):
        at = words.index(flag)
        del words[at : at + 2]
    return [*words[1:], *("--reproducer=%s" % t for t in built.fail_to_pass)]


def measure(case: dict[str, Any], workers: list[int]) -> dict[str, Any]:
    work = pathlib.Path(tempfile.mkdtemp(prefix="bench-cluster-"))
    try:
        built = prepare(case, work)
        found, _missing = derive.candidates(built)
        words = options(built)
        b = run_batch(built.path, built.baseline, [broken(built)], words, 1, work, "b-only")
        row: dict[str, Any] = {"case": case["id"], "candidates": len(found), "b_seconds": b["wall_seconds"]}
        row["workers"] = []
        for n in workers:
            got = run_batch(built.path, built.baseline, [c.sha for c in found], words, n, work, "ray-%d" % n, "ray")
            judging = max(got["wall_seconds"] - b["wall_seconds"], 1e-9)
            got["efficiency"] = round(got["ladder_seconds"] / (judging * n), 2)
            row["workers"].append(got)
            print(
                "%s, %d worker(s): %.1f certifications per hour (%.1f s; B %.1f s; ladders %.1f s; efficiency %.2f)"
                % (
                    case["id"],
                    n,
                    got["per_hour"],
                    got["wall_seconds"],
                    b["wall_seconds"],
                    got["ladder_seconds"],
                    got["efficiency"],
                ),
                flush=True,
            )
        return row
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--cases", default="parse-1.22.2-1.22.3,tinydb-4.8.1-4.8.2", help="shared-corpus case ids")
    parser.add_argument("--workers", default="1,2,4", help="local Ray sizes (default 1,2,4)")
    parser.add_argument("--out", type=pathlib.Path, help="write the figures as JSON here too")
    args = parser.parse_args()
    wanted = args.cases.split(",")
    rows = [measure(c, [int(n) for n in args.workers.split(",")]) for c in cases(None) if c["id"] in wanted]
    if args.out:
        args.out.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
    raise SystemExit(main())
