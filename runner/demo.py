"""``evidence-runner demo``: the evidence core on the built-in example, no repository needed.

Builds the example repository in a temp dir, runs ``pytest -p evidence --baseline=B`` on each
candidate commit and prints what each run proved. It runs the same plugin a user runs; nothing
here types a result.
"""

from __future__ import annotations

import json
import pathlib
import shutil
import subprocess
import sys
import tempfile
from typing import Any

from rich.console import Console
from rich.table import Table

from runner import example_repo


def _certify_with_plugin(repo: example_repo.ExampleRepo, name: str, out: pathlib.Path) -> tuple[int, dict[str, Any]]:
    subprocess.run(["git", "checkout", "-q", repo.candidates[name]], cwd=repo.path, check=True)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "evidence",
            f"--baseline={repo.baseline}",
            f"--evidence-out={out}",
            "-q",
            "-p",
            "no:randomly",
        ],
        cwd=repo.path,
        capture_output=True,
        text=True,
    )
    if not out.exists():
        raise RuntimeError("pytest wrote no evidence record for %s: %s" % (name, proc.stderr.strip()[-500:]))
    return proc.returncode, json.loads(out.read_text())


def _counts(counts: dict[str, int]) -> str:
    return ", ".join("%s %d" % (k, v) for k, v in counts.items() if v) or "-"


def evidence_per_candidate(
    repo: example_repo.ExampleRepo, records: pathlib.Path
) -> dict[str, tuple[int, dict[str, Any]]]:
    """Run the plugin against B on every candidate of the example: ``name -> (exit, record)``."""
    return {name: _certify_with_plugin(repo, name, records / f"{name}.json") for name in example_repo.CANDIDATES}


def run(keep: bool, console: Console) -> int:
    work = pathlib.Path(tempfile.mkdtemp(prefix="evidence-demo-"))
    try:
        repo = example_repo.build(work / "shop")
        console.print("example repository with B = %s and %d candidates" % (repo.baseline[:12], len(repo.candidates)))
        table = Table(title="pytest -p evidence --baseline=B, per candidate")
        for column in ("candidate", "exit", "bug-discr.", "B/C classes", "detections"):
            table.add_column(column)
        for name, (code, doc) in evidence_per_candidate(repo, work).items():
            summary = doc["summary"]
            table.add_row(
                name,
                str(code),
                str(summary["bug_discriminating"]),
                _counts(summary["by_class"]),
                _counts(summary["detections"]),
            )
        console.print(table)
        for name, (what, _files, _deleted) in example_repo.CANDIDATES.items():
            console.print("  %-11s %s" % (name, what))
        if keep:
            console.print("kept: %s (evidence records: *.json)" % work)
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0
