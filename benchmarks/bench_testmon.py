"""pytest-testmon on the same diffs as bench_corpus.py, for a side-by-side selection table.

Usage: python benchmarks/bench_testmon.py [--cases ID,ID]

Per case: pytest-testmon (installed into the case's venv) records on B with ``--testmon``, the
working tree moves to C, and ``--testmon`` runs again; the tests it lets run are counted from this
project's plugin stream (record mode alongside), never from pytest's text. Reported: how many
tests testmon selected, and whether every FAIL_TO_PASS test of the case was among them.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

from _corpus import cases, prepare
from _suite import git

ROOT = pathlib.Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", default="")
    args = parser.parse_args()
    wanted = [c for c in args.cases.split(",") if c]
    for case in cases():
        if wanted and case["id"] not in wanted:
            continue
        work = pathlib.Path(tempfile.mkdtemp(prefix="bench-testmon-"))
        repo = prepare(case, work)
        subprocess.run([str(repo.python), "-m", "pip", "install", "-q", "pytest-testmon"], check=True)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(repo.path / case["pythonpath_root"]), str(ROOT)]))
        # testmon needs pytest's cache provider (it reads --lf): the case's "-p no:cacheprovider" goes.
        own = [a for a in case["test_command"] if a not in ("-p", "no:cacheprovider")]
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
        missed = [t for t in case["fail_to_pass"] if t not in ran]
        print(json.dumps({"case": case["id"], "testmon_selected": len(ran), "f2p_missed": len(missed)}), flush=True)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
