"""The suite-strength audit on real bug-fix cases: what it costs, what it finds on honest fixes.

Usage: python benchmarks/bench_audit.py [--corpus FILE] [--cases ID,ID] [--out FILE.json]

Per case (see _corpus.py for how B and C are made), in the same run; every certify is
``evidence-runner`` of this checkout in its own process (``_suite.certify``):

* naive: plain ``pytest`` of C's whole suite once (``bench_corpus.naive``), wall and CPU;
* plain: certify the real release (C) without ``--audit``, fresh store (B's suite run happens
  now). The static weak-evidence scans run here too: ``weak_reproducer`` (``always_equal``,
  ``special_cased_input``) and ``source_interference`` (``detects_test_run``) -- on an honest
  fix, any of them is a false positive, listed with its message, file and line;
* audit at 1 and 2 jobs: certify C again with ``--audit`` (default limits: 30 mutants and 300 s
  per question, the default --seed), same store (B's run reused), ``--jobs 1`` then ``--jobs 2``: verdict and
  reasons, the audit tier (status, note, duration), ``audit.suite`` (mutants run and killed, kill
  rate, seconds, mutants per second, budget exhausted, each function's kill rate and why its
  survivors survived), ``audit.reproducer`` (run, killed), ``weak_reproducer`` detections, and
  what killed each mutant (the runner's progress lines: a test, "collection", "time limit").

One JSON row per case, then a summary: verdicts with and without the audit, mutants, the overall
kill rate, mutants per second at 1 and 2 jobs, audit seconds against the naive run.
"""

from __future__ import annotations

import collections
import json
import pathlib
import re
import shutil
import sys
import tempfile
from typing import Any

from _corpus import prepare, run_cli
from _suite import certify
from bench_corpus import naive, verdict

JOBS = (1, 2)

#: Weak evidence: every ``weak_reproducer`` (``always_equal``, ``special_cased_input``,
#: ``survives_mutants``) and ``source_interference`` ``detects_test_run``. On an honest fix, each
#: is a false positive.
WEAK_KINDS = frozenset({"weak_reproducer"})
WEAK_DETAILS = frozenset({("source_interference", "detects_test_run")})

#: ``mutant PATH:LINE STATUS (BY)``, the runner's progress line for one mutant (on stderr).
MUTANT_LINE = re.compile(r"^\s*mutant (?P<where>\S+:\d+) (?P<status>killed|survived|not_run) \((?P<by>.*)\)\s*$")

ROWS: list[dict[str, Any]] = []


def weak(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The record's weak-evidence detections, with where they point."""
    return [
        {k: d.get(k) for k in ("kind", "detail", "path", "line", "message")}
        for d in record["detections"]
        if d["kind"] in WEAK_KINDS or (d["kind"], d.get("detail")) in WEAK_DETAILS
    ]


def killers(stderr: str, tried: int) -> tuple[dict[str, int], dict[str, int]]:
    """What became of each mutant tried, from the progress lines: killed by a "test",
    "collection" or "time limit", or survived and why; for the suite question (the first
    ``tried`` lines: it runs first, and a mutant of a unit no test reaches, or one left unrun,
    prints none) and for the reproducer question (the rest)."""
    counted: list[collections.Counter[str]] = [collections.Counter(), collections.Counter()]
    seen = 0
    for line in stderr.splitlines():
        m = MUTANT_LINE.match(line)
        if not m:
            continue
        by = m["by"]
        key = (
            "killed: " + (by if by in ("collection", "time limit") else "test")
            if m["status"] == "killed"
            else ("%s: %s" % (m["status"], by))
        )
        counted[seen >= tried][key] += 1
        seen += 1
    suite, reproducer = (dict(sorted(c.items())) for c in counted)
    return suite, reproducer


def audited(record: dict[str, Any], wall: float, cpu: float, stderr: str) -> dict[str, Any]:
    tiers = {t["tier"]: t for t in record["tiers"]}
    tier = tiers.get("audit") or {}
    found = record.get("audit") or {}
    suite = found.get("suite") or {}
    reproducer = found.get("reproducer")
    tried = sum(f["run"] for f in suite.get("functions", []) if f["tests"])
    by_suite, by_reproducer = killers(stderr, tried)
    return {
        "verdict": verdict(record),
        "reasons": (record["verdict"] or {}).get("reasons"),
        "s": round(wall, 2),
        "cpu": round(cpu, 2),
        "tier": {k: tier.get(k) for k in ("status", "note", "duration", "selected", "run")} if tier else None,
        "mutants_run": suite.get("mutants_run"),
        "killed": suite.get("killed"),
        "kill_rate": suite.get("kill_rate"),
        "suite_s": suite.get("seconds"),
        "mutants_per_second": suite.get("mutants_per_second"),
        "budget_exhausted": suite.get("budget_exhausted"),
        "functions": [
            {
                "at": "%s::%s" % (f["path"], f["function"]),
                "tests": f["tests"],
                "mutants": f["mutants"],
                "run": f["run"],
                "killed": f["killed"],
                "kill_rate": f["kill_rate"],
                "survived_why": dict(collections.Counter(s["why"] for s in f["survivors"])),
            }
            for f in suite.get("functions", [])
        ],
        "modules": suite.get("modules"),
        "reproducer": None
        if reproducer is None
        else {k: reproducer.get(k) for k in ("mutants", "run", "killed")} | {"tests": len(reproducer["tests"])},
        "reproducer_survivors": None if reproducer is None else reproducer.get("survivors", [])[:3],
        "by": by_suite,
        "reproducer_by": by_reproducer,
        "weak": weak(record),
    }


def measure(case: dict[str, Any]) -> dict[str, Any]:
    work = pathlib.Path(tempfile.mkdtemp(prefix="bench-audit-"))
    try:
        repo = prepare(case, work)
        store = work / "store.sqlite3"
        naive_s, naive_cpu = naive(repo)
        plain = certify(repo.certify_args(repo.candidate, work / "plain.json", store))
        runs = {}
        for jobs in JOBS:
            args = [*repo.certify_args(repo.candidate, work / ("audit-%d.json" % jobs), store)]
            done = certify([*args, "--audit", "--jobs", str(jobs)])
            runs[jobs] = audited(done.record, done.wall, done.cpu, done.stderr)
        one = runs[JOBS[0]]
        tier_s = (one["tier"] or {}).get("duration")
        row = {
            "case": case["id"],
            "naive_s": round(naive_s, 2),
            "naive_cpu": round(naive_cpu, 2),
            "verdict": verdict(plain.record),
            "reasons": (plain.record["verdict"] or {}).get("reasons"),
            "plain_s": round(plain.wall, 2),
            "plain_weak": weak(plain.record),
            "f2p_discriminating": sum(
                1
                for r in plain.record["results"]
                if r.get("bug_discriminating") and r["test_id"] in set(case["fail_to_pass"])
            ),
            "bug_discriminating": sum(1 for r in plain.record["results"] if r.get("bug_discriminating")),
            "f2p": len(case["fail_to_pass"]),
            "audit_s_ratio": None if tier_s is None else round(tier_s / naive_s, 2),
            "same_kills": [runs[j]["killed"] for j in JOBS].count(one["killed"]) == len(JOBS),
            **{"jobs%d" % j: runs[j] for j in JOBS},
        }
        ROWS.append(row)
        return row
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _rate(num: float, den: float) -> float | None:
    return None if not den else round(num / den, 3)


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    one = [r["jobs1"] for r in rows]
    out: dict[str, Any] = {
        "cases": len(rows),
        "verdicts": dict(collections.Counter(r["verdict"] for r in rows)),
        **{
            "verdicts_audit_jobs%d" % j: dict(collections.Counter(r["jobs%d" % j]["verdict"] for r in rows))
            for j in JOBS
        },
        "mutants_run": sum(a["mutants_run"] or 0 for a in one),
        "killed": sum(a["killed"] or 0 for a in one),
        "kill_rate": _rate(sum(a["killed"] or 0 for a in one), sum(a["mutants_run"] or 0 for a in one)),
        "budget_exhausted": [r["case"] for r in rows if r["jobs1"]["budget_exhausted"]],
        "weak_detections": {
            r["case"]: r["plain_weak"] + r["jobs1"]["weak"] for r in rows if r["plain_weak"] or r["jobs1"]["weak"]
        },
        "naive_s": round(sum(r["naive_s"] for r in rows), 2),
    }
    for j in JOBS:
        audits = [r["jobs%d" % j] for r in rows]
        out["mutants_per_second_jobs%d" % j] = _rate(
            sum(a["mutants_run"] or 0 for a in audits), sum(a["suite_s"] or 0 for a in audits)
        )
        tier_s = sum((a["tier"] or {}).get("duration") or 0 for a in audits)
        out["audit_s_jobs%d" % j] = round(tier_s, 2)
        out["audit_to_naive_jobs%d" % j] = _rate(tier_s, out["naive_s"])
    return out


def main() -> None:
    run_cli(measure)
    if ROWS:
        print(json.dumps({"summary": summary(ROWS)}), flush=True)


if __name__ == "__main__":
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
    main()
