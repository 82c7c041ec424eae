"""What a falsified patch costs (issue 10, target (b)): a no-fix candidate against one plain run.

Usage: python benchmarks/bench_refutation.py [--corpus FILE] [--cases ID,ID] [--repeats N]
       [--before DIR] [--honest] [--out FILE.json]

Per case (``_corpus.py`` builds B and C), all in the same run: *naive* is one plain pytest run of
C's whole suite (the case's own test command); *no fix* is ``evidence-runner certify`` of C's
tests on B's sources ("the test without the fix"), which the ladder must reject at T3, each from
a fresh store. Each is run ``--repeats`` times, interleaved, and the medians are compared. With
``--before DIR`` (a worktree of an older commit) that checkout's runner judges the same candidate
in the same rounds, the two trees taking turns to go first, so a change to the ladder is measured
side by side with what it replaced.

``--honest`` judges the real fix (C) instead, warm (target (a) without B's share): each runner
first certifies it once into its own store, unmeasured, so B's suite run is stored, and every
measured round reuses it.

``--designate`` names the case's FAIL_TO_PASS tests with ``--reproducer``, as a harness that
knows them does (SWE-bench); without it the reproducers are the tests the candidate changed.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import shutil
import statistics
import sys
import tempfile
from typing import Any

from _corpus import measure_cases, prepare
from _suite import ROOT, certify
from bench_corpus import naive, verdict


def measure(
    case: dict[str, Any], repeats: int, runners: dict[str, pathlib.Path], honest: bool, designate: bool
) -> dict[str, Any]:
    work = pathlib.Path(tempfile.mkdtemp(prefix="bench-refutation-"))
    try:
        repo = prepare(case, work)
        judged_commit = repo.candidate if honest else repo.commit_from("C's tests alone", repo.changed_paths()[0])

        designated = ["--reproducer=%s" % t for t in case["fail_to_pass"]] if designate else []

        def args(out: pathlib.Path, store: pathlib.Path) -> list[str]:
            return [*repo.certify_args(judged_commit, out, store), *designated]

        def store(name: str, i: int) -> pathlib.Path:
            # honest: one store per runner, B's run stored by a first certify; else nothing carried
            return work / ("store-%s.sqlite3" % name if honest else "store-%s-%d.sqlite3" % (name, i))

        if honest:
            for name, root in runners.items():
                certify(args(work / ("%s-cold.json" % name), store(name, 0)), root)
        plain: list[tuple[float, float]] = []
        judged: dict[str, list[Any]] = {name: [] for name in runners}
        for i in range(repeats):
            plain.append(naive(repo))
            # the tree that goes first in a round runs on a colder machine: alternate who does
            order = list(runners.items())[:: -1 if i % 2 else 1]
            for name, root in order:
                out = work / ("%s-%d.json" % (name, i))
                judged[name].append(certify(args(out, store(name, i)), root))
        naive_s = statistics.median(w for w, _ in plain)
        row: dict[str, Any] = {
            "case": case["id"],
            "repeats": repeats,
            "naive_s": round(naive_s, 2),
            "naive_cpu": round(statistics.median(c for _, c in plain), 2),
        }
        for name, runs in judged.items():
            wall = statistics.median(r.wall for r in runs)
            t3 = [next((t["duration"] for t in r.record["tiers"] if t["tier"] == "T3"), None) or 0.0 for r in runs]
            row[name] = {
                "verdicts": sorted({verdict(r.record) for r in runs}),
                "wall_s": round(wall, 2),
                "cpu_s": round(statistics.median(r.cpu for r in runs), 2),
                "t3_s": round(statistics.median(t3), 2),
                "ratio": round(wall / naive_s, 2),
            }
        return row
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", default=None, help="a cases.jsonl (default: ../shared/corpus)")
    parser.add_argument("--cases", default="", help="comma-separated case ids (default: all)")
    parser.add_argument("--repeats", type=int, default=3, help="rounds per case (medians; default 3)")
    parser.add_argument("--before", default=None, help="a checkout of an older commit, judged side by side")
    parser.add_argument("--honest", action="store_true", help="judge the real fix, warm, instead of the no-fix")
    parser.add_argument("--designate", action="store_true", help="name the case's FAIL_TO_PASS with --reproducer")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    runners = {"after": ROOT, **({"before": pathlib.Path(args.before).resolve()} if args.before else {})}
    rows = measure_cases(
        args.cases,
        lambda case: measure(case, args.repeats, runners, args.honest, args.designate),
        pathlib.Path(args.corpus) if args.corpus else None,
    )
    if args.out:
        pathlib.Path(args.out).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
    main()
