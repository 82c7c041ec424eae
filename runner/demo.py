"""``evidence-runner demo``: certify every candidate of the built-in example, no repository needed.

Builds the example repository (a bug at B, one commit per candidate) in a temp dir, runs the same
``certify`` a user runs on each candidate, and prints the verdict table. All candidates share one
B, so the baseline suite runs once and is reused by every later candidate.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import shutil
import tempfile
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from runner import certify, example_repo


def certify_candidate(
    repo: example_repo.ExampleRepo, name: str, out: pathlib.Path, store: pathlib.Path, *extra: str
) -> tuple[int, dict[str, Any]]:
    """``certify`` one candidate of the example (``extra``: more certify arguments)."""
    parser = argparse.ArgumentParser()
    certify.add_arguments(parser)
    args = parser.parse_args([*repo.certify_args(name, out, store), *extra])
    code, _line = certify.run(args, lambda _m: None)
    return code, json.loads(out.read_text())


def run(keep: bool, console: Console) -> int:
    work = pathlib.Path(tempfile.mkdtemp(prefix="evidence-demo-"))
    try:
        repo = example_repo.build(work / "shop")
        console.print(
            "example repository %s: B = %s, %d candidates" % (repo.path, repo.baseline[:12], len(repo.candidates)),
            markup=False,
        )
        table = Table(title="evidence-runner certify, per candidate")
        for column in ("candidate", "verdict", "halted", "why"):
            table.add_column(column, overflow="fold")
        for name in example_repo.CANDIDATES:
            code, doc = certify_candidate(repo, name, work / f"{name}.json", work / "store.sqlite3")
            verdict = doc["verdict"]
            style = {"CERTIFIED": "green", "REJECTED": "red"}.get(verdict["verdict"], "yellow")
            table.add_row(
                name,
                "[%s]%s[/] (exit %d)" % (style, verdict["verdict"], code),
                verdict["halted_at"] or "-",
                Text(verdict["reasons"][0]),  # test ids hold brackets: never markup
            )
        console.print(table)
        for name, (what, _files, _deleted) in example_repo.CANDIDATES.items():
            console.print("  %-18s %s" % (name, what), highlight=False, markup=False)
        if keep:
            console.print("kept: %s (evidence records: *.json)" % work, markup=False)
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0
