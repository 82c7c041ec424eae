"""Throughput of ``certify-batch`` on this machine: certifications per hour for 1, 2 and 4 jobs,
on local processes and on a local Ray of as many CPUs, beside naive full runs per hour (``certify
--testexec pytestbool``, one after another), and the cost per candidate as the batch grows (B's
suite run amortised over it). Each figure is measured in the same run, on the built-in example's
candidates (all sixteen, or the first ``--candidates N``), each batch with a fresh store (so B's
suite run is part of its cost) and, on Ray, a Ray of its own (so Ray's start is too).

    python benchmarks/bench_batch.py [--jobs 1,2,4] [--executors local,ray] [--candidates N]
                                     [--sizes 1,4,16] [--out batch.json]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
import time
from typing import Any

from _suite import ROOT  # noqa: F401 - first: it puts this checkout's packages first on sys.path

from runner import example_repo


def batch(
    repo: example_repo.ExampleRepo, names: list[str], jobs: int, work: pathlib.Path, tag: str, executor: str = "local"
) -> dict[str, Any]:
    """One batch of the example's candidates ``names``."""
    return run_batch(repo.path, repo.baseline, [repo.candidates[n] for n in names], [], jobs, work, tag, executor)


def run_batch(
    repo: pathlib.Path,
    baseline: str,
    revisions: list[str],
    options: list[str],
    jobs: int,
    work: pathlib.Path,
    tag: str,
    executor: str = "local",
) -> dict[str, Any]:
    """One ``certify-batch`` of ``revisions`` (``options``: certify's, for every candidate) into a
    directory of its own (``tag``: a reused one would resume, not run), with a fresh store."""
    listed = work / ("cands-%s.txt" % tag)
    listed.write_text("\n".join(revisions) + "\n")
    out = work / ("out-%s" % tag)
    cmd = [sys.executable, "-m", "runner.cli", "certify-batch", "--repo", str(repo), "--baseline", baseline]
    cmd += ["--candidates", str(listed), "--out", str(out), "--jobs", str(jobs), "--store", str(out) + ".sqlite3"]
    cmd += ["--executor", executor, *options]
    started = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if proc.returncode not in (0, 1, 3):
        raise SystemExit("certify-batch failed (%d): %s" % (proc.returncode, proc.stderr[-2000:]))
    doc = json.loads((out / "batch.json").read_text())
    return {
        "executor": executor,
        "jobs": jobs,
        "candidates": len(revisions),
        "wall_seconds": round(wall, 2),
        "per_hour": round(3600 * len(revisions) / wall, 1),
        "seconds_per_candidate": round(wall / len(revisions), 2),
        "ladder_seconds": round(sum(r["ladder_seconds"] or 0.0 for r in doc["ranking"]), 2),
        "verdicts": doc["verdicts"],
    }


def naive(repo: example_repo.ExampleRepo, names: list[str], work: pathlib.Path) -> dict[str, Any]:
    started = time.perf_counter()
    for name in names:
        cmd = [sys.executable, "-m", "runner.cli", "certify", "--testexec", "pytestbool"]
        cmd += repo.certify_args(name, work / ("naive-%s.json" % name))
        subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    return {"candidates": len(names), "wall_seconds": round(wall, 2), "per_hour": round(3600 * len(names) / wall, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--jobs", default="1,2,4", help="worker counts to measure (default 1,2,4)")
    parser.add_argument("--executors", default="local", help="local, ray or local,ray (default local; ray: the extra)")
    parser.add_argument("--candidates", type=int, help="the example's first N candidates only (default: all)")
    parser.add_argument(
        "--sizes", default="1,4,16", help="batch sizes for the cost per candidate, at 2 local jobs ('': none)"
    )
    parser.add_argument("--out", type=pathlib.Path, help="write the figures as JSON here too")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp:
        work = pathlib.Path(tmp)
        repo = example_repo.build(work / "shop")
        names = list(example_repo.CANDIDATES)[: args.candidates]
        found: dict[str, Any] = {"candidates": len(names)}
        found["naive"] = naive(repo, names, work)
        print("naive, one after another: %(per_hour)s per hour (%(wall_seconds)s s)" % found["naive"], flush=True)
        found["jobs"] = []
        for jobs in (int(j) for j in args.jobs.split(",")):
            for executor in args.executors.split(","):
                row = batch(repo, names, jobs, work, "%s-jobs-%d" % (executor, jobs), executor)
                found["jobs"].append(row)
                print(
                    "batch, %(executor)s, %(jobs)d worker(s): %(per_hour)s certifications per hour "
                    "(%(wall_seconds)s s)" % row,
                    flush=True,
                )
        found["sizes"] = []
        for size in (int(s) for s in args.sizes.split(",") if s):
            row = batch(repo, names[:size], 2, work, "size-%d" % size)
            found["sizes"].append(row)
            print("batch of %(candidates)d on 2 jobs: %(seconds_per_candidate)s s per candidate" % row, flush=True)
    if args.out:
        args.out.write_text(json.dumps(found, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
