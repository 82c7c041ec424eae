"""``evidence-runner certify``: checkouts, the ladder, the record, the exit code."""

from __future__ import annotations

import argparse
import pathlib
from collections.abc import Callable

from pytest_evidence import gitops
from pytest_evidence.errors import EvidenceError
from pytest_evidence.store import Store
from runner.checkout import checkouts
from runner.errors import BadInput
from runner.ladder import Ladder, Options, write_record
from runner.target import Target
from runner.verdict import EXIT_CODES


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repo", required=True, type=pathlib.Path, help="the git repository")
    parser.add_argument("--baseline", required=True, metavar="REV", help="the buggy baseline B")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--candidate", metavar="REV", help="the candidate C as a commit")
    which.add_argument("--patch", type=pathlib.Path, metavar="FILE", help="the candidate C as a patch onto B")
    parser.add_argument(
        "--reproducer",
        action="append",
        default=[],
        metavar="NODEID",
        help="a test that reproduces the bug (repeatable; default: the tests C adds or changes)",
    )
    parser.add_argument(
        "--expected-change",
        action="append",
        default=[],
        metavar="NODEID",
        help="an existing test C changes on purpose (repeatable)",
    )
    parser.add_argument("--full", action="store_true", help="climb every tier even after a failure")
    parser.add_argument("--out", required=True, type=pathlib.Path, help="where to write the evidence record")
    parser.add_argument(
        "--python",
        default=None,
        metavar="PATH",
        help="interpreter of the repository's tests (default: the runner's own)",
    )
    parser.add_argument(
        "--pytest-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="passed to every pytest run, e.g. --pytest-arg=-o --pytest-arg=addopts= (repeatable)",
    )
    parser.add_argument(
        "--pythonpath",
        action="append",
        default=[],
        metavar="DIR",
        help="import root relative to the checkout (repeatable; default: the root, and src/)",
    )
    parser.add_argument(
        "--reruns",
        type=int,
        default=2,
        choices=range(6),
        metavar="N",
        help="re-run a failing test at most N times (0-5, default 2)",
    )
    parser.add_argument(
        "--timeout", type=float, default=900.0, metavar="S", help="kill a pytest process after S seconds (default 900)"
    )
    parser.add_argument("--integration-marker", default="integration", metavar="NAME")
    parser.add_argument(
        "--integration-glob",
        action="append",
        default=[],
        metavar="GLOB",
        help="path glob of integration tests (repeatable; default *integration*)",
    )
    parser.add_argument(
        "--store",
        type=pathlib.Path,
        default=None,
        help="the evidence store (default: evidence/store.sqlite3 in the repository's git dir)",
    )


def default_store(repo: pathlib.Path) -> pathlib.Path:
    common = gitops.git(["rev-parse", "--git-common-dir"], cwd=str(repo)).stdout.decode().strip()
    return (repo / common / "evidence" / "store.sqlite3").resolve()


def run(args: argparse.Namespace, progress: Callable[[str], None]) -> tuple[int, str]:
    """Certify; returns ``(exit code, one-line verdict)``."""
    import sys

    target = Target(
        python=args.python or sys.executable, pythonpath=tuple(args.pythonpath), pytest_args=tuple(args.pytest_arg)
    )
    target.check()
    options = Options(
        reproducers=tuple(args.reproducer),
        expected_changes=tuple(args.expected_change),
        full=args.full,
        reruns=args.reruns,
        timeout=args.timeout,
        integration_marker=args.integration_marker,
        integration_globs=tuple(args.integration_glob) or ("*integration*",),
    )
    with checkouts(args.repo, args.baseline, args.candidate, args.patch) as co:
        try:
            store_path = args.store or default_store(co.repo)
            with Store(str(store_path)) as store:
                record = Ladder(co, target, store, options, progress).climb()
        except EvidenceError as exc:
            raise BadInput(str(exc)) from None
    write_record(record, args.out)
    verdict = record.verdict
    assert verdict is not None
    where = " at %s" % verdict.halted_at.value if verdict.halted_at else ""
    return EXIT_CODES[verdict.verdict], "%s%s: %s" % (verdict.verdict.value, where, verdict.reasons[0])
