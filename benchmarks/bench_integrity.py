"""The integrity check alone on each case's real fix, its test changes taken as the candidate's own.

Usage: python benchmarks/bench_integrity.py [--corpus FILE] [--cases ID,ID] [--out FILE.json]
       [--before TREE]

A certify of a corpus case trusts the release's own tests (``--tests-from``, as a harness keeps
its test patch), so the integrity check never judges them there. Here it does: B -> C with no
trusted tests, as a coding agent's candidate is judged. A release is honest, so what the check
finds on its test changes is what an honest fix would be told to declare -- the measure of a
stricter check's cost. ``--before TREE`` (a checkout of an earlier commit) runs the same check
of that tree beside this one's, on the same repository, and prints what each finds that the
other does not.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
from typing import Any

from _corpus import cli_parser, prepare, run_cli

from runner.integrity import verify_test_integrity

PYTHON_FILES = ("test_*.py", "*_test.py")

#: The check of another checkout, in a process of its own: its ``runner`` first on the path.
_OTHER = """
import json, sys
from runner.integrity import verify_test_integrity
report = verify_test_integrity(sys.argv[1], sys.argv[2], sys.argv[2], sys.argv[3], tuple(sys.argv[4:]))
print(json.dumps([[d.detail, d.path, d.line, d.message] for d in report.detections]))
"""


def findings(repo: pathlib.Path, baseline: str, candidate: str, tree: pathlib.Path | None) -> list[list[Any]]:
    """``[detail, path, line, message]`` of each finding, by this checkout or ``tree``'s."""
    if tree is None:
        report = verify_test_integrity(str(repo), baseline, baseline, candidate, PYTHON_FILES)
        return [[d.detail, d.path, d.line, d.message] for d in report.detections]
    proc = subprocess.run(
        [sys.executable, "-c", _OTHER, str(repo), baseline, candidate, *PYTHON_FILES],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(tree)},
        cwd=tree,  # ``-c`` puts the working directory first on the path
        check=True,
    )
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def _key(finding: list[Any]) -> tuple[Any, ...]:
    return tuple(finding[:3])  # detail, path, line: a message may be reworded


def measurer(before: pathlib.Path | None) -> Any:
    def measure(case: dict[str, Any]) -> dict[str, Any]:
        work = pathlib.Path(tempfile.mkdtemp(prefix="bench-integrity-"))
        try:
            repo = prepare(case, work)
            now = findings(repo.path, repo.baseline, repo.candidate, None)
            row: dict[str, Any] = {"case": case["id"], "findings": len(now), "found": now}
            if before is not None:
                then = findings(repo.path, repo.baseline, repo.candidate, before)
                row["before"] = len(then)
                row["only_now"] = [f for f in now if _key(f) not in {_key(g) for g in then}]
                row["only_before"] = [f for f in then if _key(f) not in {_key(g) for g in now}]
                row["more"], row["fewer"] = len(row["only_now"]), len(row["only_before"])
            return row
        finally:
            shutil.rmtree(work, ignore_errors=True)

    return measure


def main() -> None:
    parser: argparse.ArgumentParser = cli_parser()
    parser.add_argument("--before", default=None, help="a checkout of an earlier commit, checked beside this one")
    args = parser.parse_args()
    before = pathlib.Path(args.before).resolve() if args.before else None
    rows = run_cli(measurer(before), args)
    clean = sum(1 for r in rows if not r["findings"])
    print("releases: %d, with no finding: %d" % (len(rows), clean))
    if before is not None:
        changed = [r["case"] for r in rows if r["more"] or r["fewer"]]
        print("findings differ from --before on %d: %s" % (len(changed), ", ".join(changed) or "none"))
        newly = [r["case"] for r in rows if r["more"] and not r["before"]]
        print("releases with no finding before that have one now: %s" % (", ".join(newly) or "none"))


if __name__ == "__main__":
    main()
