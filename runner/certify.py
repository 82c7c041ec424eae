"""``evidence-runner certify``: checkouts, the ladder, the record, the exit code."""

from __future__ import annotations

import argparse
import os
import pathlib
import posixpath
import sys
from collections.abc import Callable, Sequence

from pytest_evidence import gitops
from pytest_evidence import store as evidence_store
from pytest_evidence.errors import BadInput, InternalError, Interrupted
from pytest_evidence.model import EvidenceRecord
from pytest_evidence.output import check_writable, write_json
from pytest_evidence.store import Store
from runner import ablation, crash_report, mutants, naive, receipts, report_cmd, tools
from runner.checkout import Checkouts, checkouts, raise_swallowed_interrupt
from runner.ladder import Invocation, Ladder, strength, write_record
from runner.meanwhile import Meanwhile
from runner.parallel import MIN_TESTS
from runner.sandbox import DEFAULT_SEED, DEFAULT_TEST_TIMEOUT
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
        help="an existing test (or test class) C changes on purpose, or path::NAME, a module-level name of a "
        "test module whose data C changes on purpose (repeatable)",
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
        help="passed to every pytest run (repeatable); or put pytest's arguments after --, "
        "as in: certify ... -- -o addopts= -p no:xdist",
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
        "--allow-new-network",
        action="store_true",
        help="a loopback connect attempt C makes where B did not (same test) is recorded, not blocking",
    )
    parser.add_argument(
        "--jobs",
        type=_jobs,
        default=1,
        metavar="N",
        help="processes B's suite run may use, with pytest-xdist when the target has it and the suite has at "
        "least %d tests (default 1: serial; at most the machine's cores are useful)" % MIN_TESTS,
    )
    parser.add_argument(
        "--stability-runs",
        type=int,
        default=3,
        choices=range(1, 11),
        metavar="K",
        help="run each test the candidate adds, and each reproducer, K times on B and on C before its class "
        "is final (one that timed out on B waits there once); a flip within a side is flaky, and the first "
        "run per side changes the referee's seeds "
        "(1-10, default 3)",
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
        help="seed of pytest-randomly and PYTHONHASHSEED, the same on B and C, in every run after the first of "
        "the candidate's code, whose seed is drawn from the run id (default %d)" % DEFAULT_SEED,
    )
    parser.add_argument(
        "--testexec",
        choices=naive.TESTEXECS,
        default=None,
        help="17battery: the ladder (default); pytestbool: the naive judge the battery is measured against -- one "
        "pytest run with the trusted tests, the exit code is the verdict (default: $TESTEXEC, else 17battery)",
    )
    parser.add_argument(
        "--ablate",
        action="append",
        default=[],
        choices=ablation.BUILT,
        metavar="MECHANISM",
        help="remove a mechanism, for the A/B harness's ablations only (repeatable; %s; docs/ab.md)"
        % ", ".join(ablation.BUILT),
    )
    add_audit_arguments(parser)
    parser.add_argument("--audit", action="store_true", help="run the suite-strength audit as a tier after T5")
    parser.add_argument(
        "--min-kill-rate",
        type=rate,
        default=None,
        metavar="R",
        help="with --audit: a kill rate under R (0-1) makes the verdict inconclusive (default: off)",
    )
    parser.add_argument(
        "--integration-marker",
        default="integration",
        metavar="NAME",
        help="the marker of integration tests, which T6 runs (default: integration)",
    )
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
    report_cmd.add_export_arguments(parser)
    parser.set_defaults(passthrough=[])


def add_audit_arguments(parser: argparse.ArgumentParser) -> None:
    """What ``certify --audit`` and ``audit`` share."""
    parser.add_argument(
        "--critical",
        action="append",
        default=[],
        metavar="MODULE",
        help="a module (dotted, or a path) whose every function is audited (repeatable)",
    )
    parser.add_argument(
        "--audit-mutants",
        type=_jobs,
        default=30,
        metavar="N",
        help="at most N mutants, a sample seeded by --seed, every function represented (default 30)",
    )
    parser.add_argument(
        "--audit-budget",
        type=_seconds,
        default=300.0,
        metavar="S",
        help="time budget of the audit; mutants it leaves unrun are counted as not run (default 300; 0: none)",
    )


def rate(value: str) -> float:
    try:
        rate = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a kill rate between 0 and 1" % value) from None
    if not 0 <= rate <= 1:
        raise argparse.ArgumentTypeError("%s: a kill rate is between 0 and 1" % value)
    return rate


def _seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a number of seconds" % value) from None
    if seconds < 0:
        raise argparse.ArgumentTypeError("%s: seconds cannot be negative" % value)
    return seconds


def _jobs(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError("%r is not a number of processes >= 1" % value)
    return int(value)


def _natural(value: str) -> int:
    if not value.isdigit():
        raise argparse.ArgumentTypeError("%r is not a whole number >= 0" % value)
    return int(value)


def default_store(repo: pathlib.Path) -> pathlib.Path:
    """The plugin's default store too (``pytest_evidence.store.default_store``): one quarantine, one history."""
    return pathlib.Path(evidence_store.default_store(str(repo)))


def invocation(args: argparse.Namespace) -> Invocation:
    python = args.python or sys.executable
    how = Invocation(
        python=os.path.abspath(python) if os.sep in python else python,  # the tests run in other dirs
        pytest_args=(*args.pytest_arg, *args.passthrough),
        pythonpath=tuple(args.pythonpath),
        reproducers=tuple(args.reproducer),
        expected_changes=tuple(args.expected_change),
        full=args.full,
        reruns=args.reruns,
        stability_runs=args.stability_runs,
        tier_budget=args.tier_budget or None,
        test_timeout=args.test_timeout or None,
        seed=args.seed,
        integration_marker=args.integration_marker,
        integration_globs=tuple(args.integration_glob) or ("*integration*",),
        tests_from=args.tests_from,
        allow_new_network=args.allow_new_network,
        jobs=args.jobs,
        audit=args.audit,
        audit_mutants=args.audit_mutants,
        audit_budget=args.audit_budget or None,
        min_kill_rate=args.min_kill_rate,
        critical=tuple(args.critical),
        ablate=tuple(args.ablate),
    )
    return ablation.applied(how)


def run(args: argparse.Namespace, progress: Callable[[str], None]) -> tuple[int, str, EvidenceRecord | None]:
    """Certify; returns ``(exit code, one-line verdict, the record)`` (no record: the naive judge's).

    Everything the user can get wrong is checked first (bad input, exit 2, nothing written).
    From the first tier on, every ending writes a record: a verdict, or ``complete: false`` with
    the reason -- an engine that stopped answering, an interrupt, a defect of the runner.
    """
    how = invocation(args)
    check_writable(str(args.out), "--out", create_parents=False)
    report_cmd.check(args)
    if testexec(args) == "pytestbool":
        if any(getattr(args, o) is not None for o in report_cmd.EXPORTS):
            raise BadInput("--testexec pytestbool writes no evidence to export: drop %s" % report_cmd.asked(args))
        return (*_naive(args, how), None)
    tools.require()
    if how.min_kill_rate is not None and not how.audit:
        raise BadInput("--min-kill-rate needs --audit")
    if how.critical and not how.audit:
        raise BadInput("--critical needs --audit")
    if how.audit:
        mutants.require()
    target_checked = how.target.check_meanwhile()
    said = _Held(progress, target_checked)
    try:
        record = _climb(args, how, said)
        target_checked()
    except BadInput:
        target_checked()  # an interpreter that cannot run the plugin is said first, as when checked before all
        raise
    finally:
        said.release()
    write_record(record, args.out)
    written = report_cmd.export(record, args, args.out, step_summary=True)
    if written:
        progress("wrote %s" % ", ".join(written))
    verdict = record.verdict
    assert verdict is not None
    where, reason = "", verdict.reasons[0]
    if verdict.halted_at is not None:  # "REJECTED at T3: no-fix: ...", the tier said once
        where = " at %s" % verdict.halted_at.value
        reason = reason.removeprefix("%s: " % verdict.halted_at.value)
    return EXIT_CODES[verdict.verdict], "%s%s: %s" % (verdict.verdict.value, where, reason), record


class _Held:
    """Progress lines held until every check running beside the climb has passed: bad input it
    finds (an interpreter that cannot run the plugin, pytest arguments pytest refuses) is then the
    one line said, as when those were checked before any tier."""

    def __init__(self, progress: Callable[[str], None], *checks: Meanwhile[object]) -> None:
        self._progress = progress
        self._checks = list(checks)
        self._lines: list[str] = []

    def also(self, check: Meanwhile[object]) -> None:
        self._checks.append(check)

    def __call__(self, line: str) -> None:
        self._lines.append(line)
        self.release()

    def release(self) -> None:
        """Say the lines held, if every check has passed by now."""
        if all(check.passed() for check in self._checks):
            for line in self._lines:
                self._progress(line)
            self._lines.clear()


def _climb(args: argparse.Namespace, how: Invocation, progress: _Held) -> EvidenceRecord:
    """The checkouts, the store and the climb; every ending from the first tier on writes a record."""
    with checkouts(args.repo, args.baseline, args.candidate, args.patch) as co:
        _check_pythonpath(co, how.pythonpath)
        if how.critical:
            roots = how.target.relative_roots(co.c_dir)
            strength.critical_paths(str(co.c_dir), how.critical, roots)  # a typo is bad input, before any tier
        trusted, _ = co.trusted_tests(how.tests_from)
        if how.tests_from is not None and trusted == co.candidate:
            progress(
                "--tests-from %s is the candidate itself: its test changes are trusted, not checked" % how.tests_from
            )
        if how.stability_runs == 1:
            progress(
                "--stability-runs 1: new tests run once per side, with the referee's marks changed; "
                "a flaky one is not seen"
            )
        args_checked = co.beside(how.target.check_pytest_args_meanwhile(lambda: co.b_dir))
        progress.also(args_checked)
        store_path = args.store or default_store(co.repo)
        with Store(str(store_path), option="--store") as store:
            store.check_writable()
            ladder = Ladder(co, store, how, progress, before_tests=args_checked)
            try:
                record = ladder.climb()
                args_checked()
                raise_swallowed_interrupt()
            except KeyboardInterrupt:
                write_record(ladder.record(incomplete="interrupted", judged=False), args.out)
                raise Interrupted(_interrupted(ladder, co.repo, args.out, store.path)) from None
            except BadInput:
                raise
            except Exception as exc:
                trace = crash_report.write(exc)
                reason = "internal error: %s: %s; traceback in %s" % (type(exc).__name__, exc, trace)
                write_record(ladder.record(incomplete=reason, judged=False), args.out)
                raise InternalError("%s; the record of what ran is %s" % (reason, args.out)) from exc
    return record


def testexec(args: argparse.Namespace) -> str:
    """``--testexec``, else ``$TESTEXEC``, else the battery; anything else is bad input."""
    chosen = args.testexec or os.environ.get("TESTEXEC") or "17battery"
    if chosen not in naive.TESTEXECS:
        raise BadInput("TESTEXEC=%s is not one of %s" % (chosen, ", ".join(naive.TESTEXECS)))
    return chosen


def _naive(args: argparse.Namespace, how: Invocation) -> tuple[int, str]:
    """The naive judge: no ladder, no store, one pytest run; the record says what ran, untyped."""
    how.target.check()
    with checkouts(args.repo, args.baseline, args.candidate, args.patch) as co:
        code, doc = naive.judge(co, how.target, how.tests_from, args.out)
    write_json(str(args.out), doc)
    return code, "%s (pytestbool): %s" % (doc["verdict"]["verdict"], doc["verdict"]["reasons"][0])


def _interrupted(ladder: Ladder, repo: pathlib.Path, out: pathlib.Path, store: str) -> str:
    said = "interrupted; temporary worktrees removed; the record of what ran is %s" % out
    if ladder.open_receipt:
        said += "; baseline receipt %s is held, reconcile it with: %s" % (
            ladder.open_receipt,
            receipts.reconcile_hint(ladder.open_receipt, os.path.realpath(repo), store),
        )
    return said


def _check_pythonpath(co: Checkouts, roots: Sequence[str]) -> None:
    """Every ``--pythonpath`` must be a directory of B or of C: a typo is not a failing tier."""
    for root in roots:
        root = posixpath.normpath(root)
        if root != "." and not any(gitops.is_directory(str(co.repo), rev, root) for rev in (co.baseline, co.candidate)):
            raise BadInput("--pythonpath %s is a directory in neither the baseline nor the candidate" % root)
