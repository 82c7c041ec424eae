"""The ladder on real bug-fix cases: cost against a naive run, selection precision and safety.

Usage: python benchmarks/bench_corpus.py [--corpus FILE] [--cases ID,ID] [--out FILE.json]

Per case (see _corpus.py for how B and C are made), in the same run; every certify is
``evidence-runner`` of this checkout in its own process (``_suite.certify``: wall, CPU of the
runner and its test processes, peak RSS of the runner and of its largest test process):

* naive: plain ``pytest`` of C's whole suite once (the case's own test command);
* cold: certify the real release (C) with a fresh store: B's suite run happens now;
* warm: certify C again with the same store: B's stored suite run is reused;
* amortised: warm + (cold - warm) / 10, B's run shared by ten candidates; ratio to naive;
* T5: selected / suite size from the warm record, ``selection_gap`` detections (a PASS->FAIL flip
  first seen at T7), whether every FAIL_TO_PASS test of the case came out bug-discriminating;
  ``whole_suite`` is the record's: true only where T5 fell back to the suite as a whole (a
  configuration, a conftest or a manifest changed) -- a fraction of 1.0 beside false means every
  test was selected for a reason of its own (``selection.selected`` says which);
* no fix: C's tests on B's sources ("the test without the fix"), same store: verdict, halting
  tier, time against the naive run;
* T0: C with a syntax error added to its first changed source file, time against the naive run;
* ``--testmon``: pytest-testmon's selection on the same diff (``bench_testmon.selection``), beside
  T5's: how many tests each selects, and whether T5 selects fewer where testmon selects less
  than the suite (target (c) of issue 10);
* ``--overhead N``: the plugin's overhead (target (d)): C's suite under plain pytest and under
  ``-p evidence`` (no baseline, the record written), N rounds interleaved after one unmeasured run
  of each, medians and their ratio.

With both, one run gives every ratio of issue 10's targets (a)-(d) per case, side by side with
plain pytest and pytest-testmon, and the verdicts.
"""

from __future__ import annotations

import json
import os
import pathlib
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from typing import Any

import bench_testmon
from _corpus import CaseRepo, cli_parser, prepare, run_cli
from _suite import ROOT, certify, gaps, git, t5_fraction, timed

CANDIDATES = 10  # candidates sharing one B in the amortised figure


def naive(repo: CaseRepo) -> tuple[float, float]:
    """(wall, CPU) seconds of one plain pytest run of C's whole suite."""
    root = repo.pythonpath
    env = dict(os.environ, PYTHONPATH=str(repo.path / root), PYTHONHASHSEED="0")
    git(repo.path, "checkout", "-q", repo.candidate)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([str(repo.python), "-m", "pytest", *repo.test_command], cwd=repo.path, env=env, capture_output=True)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    git(repo.path, "checkout", "-q", "main")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def broken(repo: CaseRepo) -> str:
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


def verdict(record: dict[str, Any]) -> str:
    v = record["verdict"] or {"verdict": "INCOMPLETE", "halted_at": None}
    return "%s at %s" % (v["verdict"], v["halted_at"]) if v["halted_at"] else v["verdict"]


def overhead(repo: CaseRepo, rounds: int, work: pathlib.Path) -> dict[str, Any]:
    """(d): C's suite under plain pytest and under ``-p evidence``, interleaved; medians."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(repo.path / repo.pythonpath), str(ROOT)]))
    plain = [str(repo.python), "-m", "pytest", *repo.test_command]
    evidence = [*plain, "-p", "pytest_evidence.plugin", f"--evidence-out={work / 'd.json'}"]
    configs = {"plain": plain, "evidence": evidence}
    git(repo.path, "checkout", "-q", repo.candidate)
    try:
        for cmd in configs.values():
            timed(cmd, repo.path, env)  # unmeasured: both start from the same caches
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in configs}
        for _ in range(rounds):
            for name, cmd in configs.items():
                times[name].append(timed(cmd, repo.path, env))
    finally:
        git(repo.path, "checkout", "-q", "main")
    wall = {name: statistics.median(w for w, _ in runs) for name, runs in times.items()}
    cpu = {name: statistics.median(c for _, c in runs) for name, runs in times.items()}
    return {
        "overhead_plain_s": round(wall["plain"], 3),
        "overhead_evidence_s": round(wall["evidence"], 3),
        "overhead_ratio": round(wall["evidence"] / wall["plain"], 3),
        "overhead_ratio_cpu": round(cpu["evidence"] / cpu["plain"], 3),
    }


def beside_testmon(t5: int | None, suite: int | None, testmon: int) -> str:
    """Whether T5 selects fewer tests than testmon, where testmon selects less than the suite."""
    if t5 is None or suite is None:
        return "n/a (no T5 selection)"
    if testmon >= suite:
        return "n/a (testmon: whole suite)"
    return "yes" if t5 < testmon else "no"


def measure(case: dict[str, Any], testmon: bool = False, rounds: int = 0) -> dict[str, Any]:
    work = pathlib.Path(tempfile.mkdtemp(prefix="bench-corpus-"))
    try:
        repo = prepare(case, work)
        store = work / "store.sqlite3"
        naive_s, naive_cpu = naive(repo)
        cold = certify(repo.certify_args(repo.candidate, work / "cold.json", store))
        warm = certify(repo.certify_args(repo.candidate, work / "warm.json", store))
        no_fix = certify(
            repo.certify_args(repo.commit_from("C's tests alone", repo.changed_paths()[0]), work / "nofix.json", store)
        )
        t0 = certify(repo.certify_args(broken(repo), work / "t0.json", store))
        selected, size = t5_fraction(warm.record)
        by_id = {r["test_id"]: r for r in warm.record["results"]}
        f2p = case["fail_to_pass"]
        amortised = warm.wall + (cold.wall - warm.wall) / CANDIDATES
        amortised_cpu = warm.cpu + (cold.cpu - warm.cpu) / CANDIDATES
        tiers = {t["tier"]: t for t in warm.record["tiers"]}
        extra: dict[str, Any] = {}
        if testmon:
            extra.update(bench_testmon.selection(repo, work))
            extra["testmon_fraction"] = round(extra["testmon_selected"] / size, 3) if size else None
            extra["t5_below_testmon"] = beside_testmon(selected, size, extra["testmon_selected"])
        if rounds:
            extra.update(overhead(repo, rounds, work))
        return {
            "case": case["id"],
            "suite": size,
            "t4_selected": tiers["T4"]["selected"],
            "t5_selected": selected,
            "t5_fraction": round(selected / size, 3) if selected is not None and size else None,
            "whole_suite": (warm.record.get("selection") or {}).get("whole_suite"),
            "selection_gaps": gaps(cold.record) + gaps(warm.record),
            "f2p_discriminating": sum(1 for t in f2p if by_id.get(t, {}).get("bug_discriminating")),
            "f2p": len(f2p),
            "verdict_cold": verdict(cold.record),
            "verdict": verdict(warm.record),
            "reasons": (warm.record["verdict"] or {}).get("reasons"),
            "baseline_processes": (cold.record.get("baseline_run") or {}).get("processes"),
            "naive_s": round(naive_s, 2),
            "naive_cpu": round(naive_cpu, 2),
            "cold_s": round(cold.wall, 2),
            "cold_cpu": round(cold.cpu, 2),
            "warm_s": round(warm.wall, 2),
            "warm_cpu": round(warm.cpu, 2),
            "amortised_s": round(amortised, 2),
            "ratio": round(amortised / naive_s, 2),
            "ratio_cpu": round(amortised_cpu / naive_cpu, 2),
            "no_fix": verdict(no_fix.record),
            "no_fix_s": round(no_fix.wall, 2),
            "no_fix_cpu": round(no_fix.cpu, 2),
            "no_fix_ratio": round(no_fix.wall / naive_s, 2),
            "t0": verdict(t0.record),
            "t0_s": round(t0.wall, 2),
            "warm_tiers": {t["tier"]: round(t["duration"] or 0, 2) for t in warm.record["tiers"]},
            "no_fix_tiers": {t["tier"]: round(t["duration"] or 0, 2) for t in no_fix.record["tiers"]},
            "rss_runner_mb": round(max(cold.maxrss_runner_mb, warm.maxrss_runner_mb), 1),
            "rss_child_cold_mb": round(cold.maxrss_child_mb, 1),
            "rss_child_warm_mb": round(warm.maxrss_child_mb, 1),
            **extra,
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = cli_parser()
    parser.add_argument("--testmon", action="store_true", help="pytest-testmon's selection beside T5's")
    parser.add_argument("--overhead", type=int, default=0, metavar="N", help="N rounds of plain vs -p evidence")
    args = parser.parse_args()
    rows = run_cli(lambda case: measure(case, args.testmon, args.overhead), args)
    print(json.dumps(summary(rows)))


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Issue 10's targets over the cases measured: (a) and (b) as totals against the plain runs
    and as medians per case, (c) T5's median fraction, its gaps and the cases where it selects
    fewer tests than testmon, (d) the median overhead; and the verdicts."""
    naive = sum(r["naive_s"] for r in rows) or 1.0
    found: dict[str, Any] = {
        "cases": len(rows),
        "a_honest_amortised": round(sum(r["amortised_s"] for r in rows) / naive, 2),
        "a_median": round(statistics.median(r["ratio"] for r in rows), 3),
        "b_no_fix": round(sum(r["no_fix_s"] for r in rows) / naive, 2),
        "b_median": round(statistics.median(r["no_fix_ratio"] for r in rows), 3),
        "c_t5_median": round(statistics.median(1.0 if r["t5_fraction"] is None else r["t5_fraction"] for r in rows), 3),
        "c_selection_gaps": sum(r["selection_gaps"] for r in rows),
        "verdicts": dict(Counter("%s / %s" % (r["verdict_cold"], r["verdict"]) for r in rows)),
        "no_fix_verdicts": dict(Counter(r["no_fix"] for r in rows)),
    }
    if "testmon_selected" in rows[0]:
        judged = [r["t5_below_testmon"] for r in rows if not r["t5_below_testmon"].startswith("n/a")]
        fractions = [r["testmon_selected"] / r["suite"] for r in rows if r["suite"]]
        found["c_testmon_median"] = round(statistics.median(fractions), 3) if fractions else None
        found["c_below_testmon"] = "%d of %d" % (judged.count("yes"), len(judged))
    if "overhead_ratio" in rows[0]:
        found["d_overhead_median"] = round(statistics.median(r["overhead_ratio"] for r in rows), 3)
    return found


if __name__ == "__main__":
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
    main()
