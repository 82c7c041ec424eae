"""Real bug-fix cases from ../shared/corpus, built by ``runner.ab.corpus`` (the A/B harness's).

The repository has two commits: B's sdist as released, then C's fix laid over it -- C's changed
Python sources (packaging files left out) and C's test paths -- the shape of a real fix commit.
A ``--corpus`` of ``commit`` cases (a public repository's buggy and fixed commits, ``docs/ab.md``)
works alike: every script reads a case's import root and test command from the built repository
(``CaseRepo.pythonpath``, ``CaseRepo.test_command``), which both formats fill.
Downloads and venvs are cached under ``benchmarks/.cache`` (ignored by git; ``EVIDENCE_BENCH_CACHE``
names another directory, for a checkout that should stay as it is); the package index -- and, for
a ``commit`` case, its repository's URL -- is the only network used.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
from collections.abc import Callable
from typing import Any

from _suite import ROOT  # noqa: F401 - first: it puts this checkout's packages first on sys.path

from pytest_evidence.errors import BadInput, EvidenceError
from runner.ab import corpus
from runner.ab.corpus import Built as CaseRepo

__all__ = ["CaseRepo"]

HERE = pathlib.Path(__file__).resolve().parent
CACHE = pathlib.Path(os.environ.get("EVIDENCE_BENCH_CACHE", HERE / ".cache"))
CORPUS = pathlib.Path(os.environ.get("EVIDENCE_CORPUS", HERE.parent.parent / "shared" / "corpus"))


def cases(path: pathlib.Path | None = None) -> list[dict[str, Any]]:
    """The corpus's cases; a corpus that cannot be read ends the benchmark with its one line."""
    try:
        return corpus.load(path or CORPUS / "cases.jsonl")
    except BadInput as exc:
        print(exc.line(pathlib.Path(sys.argv[0]).name), file=sys.stderr)
        raise SystemExit(exc.exit_code) from None


def cli_parser() -> argparse.ArgumentParser:
    """The options every per-case benchmark shares: ``--corpus``, ``--cases``, ``--out``."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", default=None, help="a cases.jsonl (default: ../shared/corpus)")
    parser.add_argument("--cases", default="", help="comma-separated case ids (default: all)")
    parser.add_argument("--out", default=None)
    return parser


def run_cli(
    measure: Callable[[dict[str, Any]], dict[str, Any]], args: argparse.Namespace | None = None
) -> list[dict[str, Any]]:
    """``measure`` the cases the command line names (``args``: parsed by a ``cli_parser`` the
    script added options to; default: the shared options alone); the rows, also in ``--out``."""
    args = args if args is not None else cli_parser().parse_args()
    rows = measure_cases(args.cases, measure, pathlib.Path(args.corpus) if args.corpus else None)
    if args.out:
        pathlib.Path(args.out).write_text(json.dumps(rows, indent=1) + "\n")
    return rows


def measure_cases(
    selection: str, measure: Callable[[dict[str, Any]], dict[str, Any]], corpus: pathlib.Path | None = None
) -> list[dict[str, Any]]:
    """``measure`` each case of ``corpus`` (default: the shared one) named in ``selection``
    (comma-separated ids; empty: all), printing rows (lists, such as test ids, go to ``--out`` only)."""
    wanted = [c for c in selection.split(",") if c]
    chosen = cases(corpus)
    unknown = sorted(set(wanted) - {case["id"] for case in chosen})
    if unknown:  # before any case runs: a typo must not cost a long run its last case
        raise SystemExit("%s: no case %s in the corpus" % (pathlib.Path(sys.argv[0]).name, ", ".join(unknown)))
    rows = []
    for case in chosen:
        if wanted and case["id"] not in wanted:
            continue
        rows.append(measure(case))
        print(json.dumps({k: v for k, v in rows[-1].items() if not isinstance(v, list)}), flush=True)
    return rows


def prepare(case: dict[str, Any], work: pathlib.Path) -> CaseRepo:
    """The case's repository (``runner.ab.corpus``), venvs and sdists cached in ``CACHE``. A case
    that cannot be built (a repository that cannot be cloned, a package the index does not have)
    ends the benchmark with one line naming it: a figure without the case would read as complete."""
    try:
        return corpus.build(case, work, CACHE)
    except EvidenceError as exc:
        print("%s: case %s: %s" % (pathlib.Path(sys.argv[0]).name, case["id"], exc), file=sys.stderr)
        raise SystemExit(exc.exit_code) from None
