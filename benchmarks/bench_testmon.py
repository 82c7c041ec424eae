"""pytest-testmon on the same diffs as bench_corpus.py, for a side-by-side selection table.

Usage: python benchmarks/bench_testmon.py [--corpus FILE] [--cases ID,ID] [--out FILE.json]

Per case: pytest-testmon records on B with ``--testmon``, the working tree moves to C, and
``--testmon`` runs again; the tests it lets run are counted from this project's plugin stream
(record mode alongside), never from pytest's text. Reported: how many tests testmon selected
(and, in ``--out``, their ids, to set beside T5's), of how many collected on C (the suite), and
whether every FAIL_TO_PASS test of the case was among them. ``bench_corpus.py --testmon`` runs
the same measurement beside the certifies of each case, in one run.

testmon and coverage.py are installed apart from the case's venv (``pip install --target``, no
dependency resolution) and put on the path of testmon's runs only: the venv that the certifies
and the plain runs use stays as the case pinned it, and pip never replaces its pytest.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
from typing import Any

from _corpus import CACHE, CaseRepo, prepare, run_cli
from _suite import git

ROOT = pathlib.Path(__file__).resolve().parent.parent
_ID = re.compile(r"^\S+\.py(::\S.*|: \d+)$")
#: What testmon needs beside pytest (pytest-testmon 2.2 asks for coverage>=6,<8).
PACKAGES = ("pytest-testmon", "coverage>=6,<8")


def site(python: pathlib.Path) -> pathlib.Path:
    """testmon's own directory for the venv of ``python``, made once (``complete`` marks a
    finished install, as the venvs' own mark does)."""
    target = CACHE / ("testmon-" + python.parent.parent.name)
    if not (target / "complete").exists():
        shutil.rmtree(target, ignore_errors=True)
        cmd = [str(python), "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), *PACKAGES]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit("cannot install %s for %s: %s" % (" ".join(PACKAGES), python, proc.stderr[-800:]))
        (target / "complete").write_text("")
    return target


def selection(repo: CaseRepo, work: pathlib.Path) -> dict[str, Any]:
    """testmon's selection on ``repo``'s C after recording on its B; the working tree is left on
    ``main``. ``work``: a directory for the streams."""
    case = repo.case
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(site(repo.python)), str(repo.path / repo.pythonpath), str(ROOT)]),
    )
    # testmon needs pytest's cache provider (it reads --lf): the case's "-p no:cacheprovider" goes.
    own = [a for a in repo.test_command if a not in ("-p", "no:cacheprovider")]
    base = [
        str(repo.python),
        "-m",
        "pytest",
        "-p",
        "no:evidence",
        "-p",
        "pytest_evidence.plugin",
        "--evidence-record-mode",
        "--testmon",
        *own,
    ]
    try:
        git(repo.path, "checkout", "-q", repo.baseline)
        subprocess.run([*base, f"--evidence-stream={work / 'b.jsonl'}"], cwd=repo.path, env=env, capture_output=True)
        git(repo.path, "checkout", "-q", repo.candidate)
        proc = subprocess.run(
            [*base, f"--evidence-stream={work / 'c.jsonl'}"], cwd=repo.path, env=env, capture_output=True, text=True
        )
        if not (work / "c.jsonl").exists():
            raise SystemExit("testmon run on C failed: %s" % (proc.stdout + proc.stderr)[-1500:])
        ran = set()
        with open(work / "c.jsonl") as fh:
            for line in fh:
                doc = json.loads(line)
                if doc["type"] == "result":
                    ran.add(doc["test_id"])
        collected = subprocess.run(
            [str(repo.python), "-m", "pytest", "-p", "no:evidence", "--collect-only", "-q", *own],
            cwd=repo.path,
            env=env,
            capture_output=True,
            text=True,
        ).stdout
    finally:
        git(repo.path, "checkout", "-q", "main")
    # "-q" lists node ids; the case's own "-q" makes it "-qq": "path.py: N" per file
    suite = sum(1 if "::" in ln else int(ln.rsplit(": ", 1)[1]) for ln in collected.splitlines() if _ID.match(ln))
    missed = [t for t in case["fail_to_pass"] if t not in ran]
    return {
        "testmon_selected": len(ran),
        "testmon_suite": suite,
        "testmon_f2p_missed": len(missed),
        "testmon_ids": sorted(ran),
    }


def measure(case: dict[str, Any]) -> dict[str, Any]:
    work = pathlib.Path(tempfile.mkdtemp(prefix="bench-testmon-"))
    try:
        return {"case": case["id"], **selection(prepare(case, work), work)}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    run_cli(measure)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
