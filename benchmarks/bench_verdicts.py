"""Each case's real fix certified once, from a fresh store: the verdict, and how many of its
FAIL_TO_PASS tests came out bug-discriminating.

Usage: python benchmarks/bench_verdicts.py [--corpus FILE] [--cases ID,ID] [--out FILE.json] [--default-store]

The cheapest check that a change to the referee left the verdicts on real fixes right: one
certify per case (``bench_corpus.py``'s cold honest run, without the no-fix, T0 and warm runs
beside it), the record's first reason for each one that is not CERTIFIED. ``--default-store``:
the case repository's own store, which the test processes see covered (a mount namespace), rather
than one beside the record, which they can reach; the record's ``pinning.missing`` is printed.
"""

from __future__ import annotations

import pathlib
import shutil
import tempfile
from typing import Any

from _corpus import cli_parser, prepare, run_cli
from _suite import certify


def measure(case: dict[str, Any], default_store: bool = False) -> dict[str, Any]:
    work = pathlib.Path(tempfile.mkdtemp(prefix="bench-verdicts-"))
    try:
        repo = prepare(case, work)
        args = repo.certify_args(repo.candidate, work / "record.json", work / "store.sqlite3")
        if default_store:
            at = args.index("--store")
            del args[at : at + 2]
        done = certify(args)
        verdict = done.record["verdict"] or {}
        wanted = set(case["fail_to_pass"])
        found = sum(1 for r in done.record["results"] if r["test_id"] in wanted and r.get("bug_discriminating"))
        return {
            "case": case["id"],
            "verdict": verdict.get("verdict"),
            "halted_at": verdict.get("halted_at"),
            "wall": round(done.wall, 1),
            "fail_to_pass_discriminating": "%d/%d" % (found, len(wanted)),
            "reason": "" if verdict.get("verdict") == "CERTIFIED" else (verdict.get("reasons") or [""])[0],
            "missing": "; ".join(done.record["pinning"]["missing"]) if done.record["pinning"] else "",
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = cli_parser()
    parser.add_argument("--default-store", action="store_true", help="the case repository's own store (covered)")
    args = parser.parse_args()
    rows = run_cli(lambda case: measure(case, args.default_store), args)
    counts: dict[str, int] = {}
    for row in rows:
        counts[str(row["verdict"])] = counts.get(str(row["verdict"]), 0) + 1
    print("verdicts: %s" % ", ".join("%s %d" % kv for kv in sorted(counts.items())))


if __name__ == "__main__":
    main()
