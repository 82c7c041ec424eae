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
from collections.abc import Callable, Sequence
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from pytest_evidence.errors import BadInput
from runner import certify, example_repo
from runner.terminal import live
from runner.terminal.live import say


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--keep", action="store_true", help="keep the example repository and records")
    parser.add_argument(
        "--candidates",
        metavar="NAME,NAME",
        help="certify only these candidates of the example (default: all sixteen; names as the table prints them)",
    )


def certify_candidate(
    repo: example_repo.ExampleRepo,
    name: str,
    out: pathlib.Path,
    store: pathlib.Path | None,
    *extra: str,
    progress: Callable[[str], None] = lambda _m: None,
) -> tuple[int, dict[str, Any]]:
    """``certify`` one candidate of the example (``extra``: more certify arguments; ``store``
    None: the example repository's default store, the one test processes cannot reach)."""
    parser = argparse.ArgumentParser()
    certify.add_arguments(parser)
    args = parser.parse_args([*repo.certify_args(name, out, store), *extra])
    code, _line, _record = certify.run(args, progress)
    return code, json.loads(out.read_text())


def chosen(names: str | None) -> list[str]:
    """The candidates ``--candidates`` names (all when None); an unknown name is bad input."""
    if names is None:
        return list(example_repo.CANDIDATES)
    picked = [n.strip() for n in names.split(",") if n.strip()]
    unknown = [n for n in picked if n not in example_repo.CANDIDATES]
    if unknown or not picked:
        raise BadInput(
            "--candidates %s: not a candidate of the example (they are: %s)"
            % (",".join(unknown) or names, ", ".join(example_repo.CANDIDATES))
        )
    return picked


def run(keep: bool, console: Console, names: Sequence[str] = tuple(example_repo.CANDIDATES)) -> int:
    """Each candidate in turn, its progress live, its verdict as soon as it has one; then the
    verdicts side by side in a table narrow enough for 80 columns."""
    work = pathlib.Path(tempfile.mkdtemp(prefix="evidence-demo-"))
    try:
        repo = example_repo.build(work / "shop")
        say(
            console,
            "example repository %s: B = %s, %d candidates; B's suite runs once and is reused"
            % (repo.path, repo.baseline[:12], len(repo.candidates)),
            indent="",
        )
        table = Table(title="evidence-runner certify, per candidate", box=box.SIMPLE_HEAD)
        for column in ("candidate", "verdict", "exit", "halted"):
            table.add_column(column, no_wrap=True)
        count = len(names)
        for number, name in enumerate(names, 1):
            what = example_repo.CANDIDATES[name][0]
            say(console, "[%d/%d] %s: %s" % (number, count, name, what), indent="")
            with live.Display(console):
                code, doc = certify_candidate(repo, name, work / f"{name}.json", None)
            verdict = doc["verdict"]
            style = {"CERTIFIED": "green", "REJECTED": "red"}.get(verdict["verdict"], "yellow")
            at = " at %s" % verdict["halted_at"] if verdict["halted_at"] else ""
            say(console, "-> %s%s: %s" % (verdict["verdict"], at, verdict["reasons"][0]), style=style)
            table.add_row(name, Text(verdict["verdict"], style=style), str(code), verdict["halted_at"] or "-")
        console.print(table)
        if keep:
            say(
                console,
                "kept: %s (evidence records: *.json; render one: evidence-runner report FILE)" % work,
                indent="",
            )
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0
