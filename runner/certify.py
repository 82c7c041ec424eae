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
from runner.sandbox import DEFAULT_SEED, DEFAULT_TEST_TIMEOUT
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
    parser.add_argument(
        "--tests-from",
        metavar="REV|PATCH",
        default=None,
        help="the trusted tests: a revision, or a test patch onto the baseline (default: the baseline's)",
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
        "--tier-budget",
        "--timeout",
        dest="tier_budget",
        type=_seconds,
        default=900.0,
        metavar="S",
        help="time budget of one tier's pytest process; what it leaves unrun is recorded (default 900; 0: none)",
    )
    parser.add_argument(
        "--test-timeout",
        type=_seconds,
        default=DEFAULT_TEST_TIMEOUT,
        metavar="S",
        help="per-test timeout through pytest-timeout, outcome `timeout` (default %g; 0: none)" % DEFAULT_TEST_TIMEOUT,
    )
    parser.add_argument(
        "--seed",
        type=_natural,
        default=DEFAULT_SEED,
        metavar="N",
        help="seed of pytest-randomly and PYTHONHASHSEED, the same on B and C (default %d)" % DEFAULT_SEED,
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


def _seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a number of seconds" % value) from None
    if seconds < 0:
        raise argparse.ArgumentTypeError("%s: seconds cannot be negative" % value)
    return seconds


def _natural(value: str) -> int:
    if not value.isdigit():
        raise argparse.ArgumentTypeError("%r is not a whole number >= 0" % value)
    return int(value)


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
        tier_budget=args.tier_budget or None,
        test_timeout=args.test_timeout or None,
        seed=args.seed,
        integration_marker=args.integration_marker,
        integration_globs=tuple(args.integration_glob) or ("*integration*",),
        tests_from=args.tests_from,
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
