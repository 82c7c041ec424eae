"""``evidence-runner audit``: the suite-strength audit of one revision, on its own.

The functions the revision changed (against its first parent), and every function of each
``--critical`` module, are mutated; each mutant runs against the tests the revision's own
recorded suite run saw reach that function -- the run is made once per tree and environment
and kept in the store, like B's. Kill rates are printed with every survivor, written to
``--out`` and stored, so the history of a module's kill rate is there for the next audit.
Exit 0, or 3 when ``--min-kill-rate`` is not met; 2 for bad input.
"""

from __future__ import annotations

import argparse
import datetime
import os
import pathlib
import sys
from collections.abc import Callable, Sequence
from typing import Any

from pytest_evidence import gitops
from pytest_evidence.errors import EXIT_CERTIFIED, EXIT_INCONCLUSIVE, BadInput
from pytest_evidence.output import check_writable, write_json
from pytest_evidence.store import Store, SuiteRun
from runner import audit, baseline_cmd, baseline_suite, config_policy, integrity, mutants, tools
from runner.checkout import checkouts
from runner.diff import compute
from runner.ladder import strength
from runner.parallel import xdist_args
from runner.sandbox import DEFAULT_SEED, DEFAULT_TEST_TIMEOUT, Sandbox, pin_environment
from runner.target import Target

#: The format of ``--out``.
AUDIT_FORMAT = "audit-1"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from runner import certify

    parser.add_argument("--repo", required=True, type=pathlib.Path, help="the git repository")
    parser.add_argument("--rev", required=True, metavar="REV", help="the revision to audit")
    certify.add_audit_arguments(parser)
    parser.add_argument("--min-kill-rate", type=certify.rate, default=None, metavar="R", help="exit 3 under it (0-1)")
    parser.add_argument("--out", type=pathlib.Path, default=None, metavar="FILE", help="write the audit as JSON")
    parser.add_argument("--python", default=None, metavar="PATH", help="interpreter of the repository's tests")
    parser.add_argument(
        "--pytest-arg", action="append", default=[], metavar="ARG", help="passed to every pytest run (repeatable)"
    )
    parser.add_argument(
        "--pythonpath", action="append", default=[], metavar="DIR", help="import root relative to the checkout"
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, metavar="N", help="seed of the sample and the runs")
    parser.add_argument("--jobs", type=int, default=1, metavar="N", help="mutants run at once (default 1)")
    parser.add_argument("--store", type=pathlib.Path, default=None, help="the evidence store")


def run(args: argparse.Namespace, store_path: pathlib.Path, say: Callable[[str], None]) -> tuple[int, str]:
    if args.jobs < 1:
        raise BadInput("--jobs must be 1 or more, not %d" % args.jobs)
    if args.out is not None:
        check_writable(str(args.out), "--out", create_parents=False)
    python = args.python or sys.executable
    target = Target(
        os.path.abspath(python) if os.sep in python else python, tuple(args.pythonpath), tuple(args.pytest_arg)
    )
    tools.require()
    mutants.require()
    target.check()
    root = baseline_cmd.repo_root(args.repo)
    rev = gitops.resolve_commit(root, args.rev)
    parent = _parent(root, rev)
    if parent is None and not args.critical:
        raise BadInput("%s has no parent, so it changes nothing to audit: name modules with --critical" % args.rev)
    with (
        checkouts(pathlib.Path(root), parent or rev, rev, None) as co,
        Store(str(store_path), option="--store") as store,
    ):
        store.check_writable()
        sandbox = pin_environment(
            target,
            args.seed,
            DEFAULT_TEST_TIMEOUT,
            None,
            integrity.disabled_plugins(co.c_dir, target.pytest_args),
        )
        roots = target.relative_roots(co.c_dir)
        paths = strength.critical_paths(str(co.c_dir), args.critical, roots)  # bad input before any run
        suite = _recorded(store, root, rev, target, sandbox, co.c_dir, args.jobs, say)
        if suite is None:
            return EXIT_INCONCLUSIVE, "HELD: the revision's recorded suite run has a receipt without completion"
        passing = [t for t in suite.collected if (o := suite.results.get(t)) is not None and o.outcome.value == "pass"]
        units = []
        if parent is not None:
            diff = compute(root, parent, rev, config_policy.test_modules_at(root, rev, target.pytest_args))
            units = strength.changed_units(
                diff, lambda p: (co.c_dir / p).read_text(encoding="utf-8"), suite, passing, recorded_on_c=True
            )
        if paths:
            read = {p: (co.c_dir / p).read_text(encoding="utf-8") for p in paths}
            named = {(u.path, u.function) for u in units}
            units += [
                u for u in strength.critical_units(read, read, suite, passing) if (u.path, u.function) not in named
            ]
        found = audit.mutants_of(co.c_dir, units)
        if not any(found):
            raise BadInput(
                "nothing to mutate: %s changes no function%s"
                % (args.rev, " and the --critical modules define none" if args.critical else "")
            )
        limits = audit.Limits(args.seed, args.audit_mutants, args.audit_budget or None, args.jobs)
        with audit.Lab(co.c_dir, co.scratch, target, sandbox, args.jobs) as lab:
            result = audit.audit(lab, units, found, limits, say)
        history = store.kill_rates(root)
        now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        store.add_kill_rates(
            root, rev, [(u.path, u.function, u.run, u.killed, args.seed, now) for u in result.units if u.run]
        )
    before = _before(history, result)
    document = {
        "format": AUDIT_FORMAT,
        "repo": root,
        "rev": rev,
        "parent": parent,
        "audit": result.to_dict(),
        "before": before,
    }
    if args.out is not None:
        write_json(str(args.out), document)
    for line in report(result, before):
        say(line)
    rate = result.kill_rate
    said = "kill rate %s: %d of %d mutant(s) killed in %d function(s)" % (
        "n/a" if rate is None else "%.0f%%" % (rate * 100),
        result.killed,
        result.run,
        len(result.units),
    )
    if args.min_kill_rate is not None and (rate is None or rate < args.min_kill_rate):
        return EXIT_INCONCLUSIVE, "WEAK: %s, under --min-kill-rate %g" % (said, args.min_kill_rate)
    return EXIT_CERTIFIED, "AUDITED: %s" % said


def _parent(root: str, rev: str) -> str | None:
    proc = gitops.git(["rev-parse", "--verify", "--quiet", rev + "^1"], cwd=root, check=False)
    found = proc.stdout.decode().strip()
    return found if proc.returncode == 0 and found else None


def _recorded(
    store: Store,
    root: str,
    rev: str,
    target: Target,
    sandbox: Sandbox,
    checkout: pathlib.Path,
    jobs: int,
    say: Callable[[str], None],
) -> SuiteRun | None:
    """The revision's suite run with per-test dependencies: stored once per tree and environment."""
    parallel = xdist_args(target.has_xdist, jobs, 0)
    _, got = baseline_suite.recorded(store, root, rev, target, 0, sandbox, checkout, parallel=parallel)
    say("recorded suite run of %s: %s (%s)" % (rev[:12], got.how, got.note))
    return got.suite


def _before(history: Sequence[dict[str, Any]], result: audit.Audit) -> dict[str, Any]:
    """Each audited module's last stored kill rate before this audit: a fall shows."""
    last: dict[str, dict[str, Any]] = {}
    for row in history:
        entry = last.setdefault(row["path"], {"commit": row["commit"], "run": 0, "killed": 0})
        if entry["commit"] != row["commit"]:
            entry.update(commit=row["commit"], run=0, killed=0)
        entry["run"] += row["run"]
        entry["killed"] += row["killed"]
    modules = result.modules()
    return {
        path: {"commit": e["commit"], "kill_rate": round(e["killed"] / e["run"], 4) if e["run"] else None}
        for path, e in sorted(last.items())
        if path in modules
    }


def report(result: audit.Audit, before: dict[str, Any]) -> list[str]:
    """The audit, one line per function and module, then every survivor as its diff."""
    lines = []
    for u in result.units:
        rate = "n/a" if u.kill_rate is None else "%3.0f%%" % (u.kill_rate * 100)
        lines.append("%s %s::%s  %d/%d killed, %d test(s)" % (rate, u.path, u.function, u.killed, u.run, u.tests))
    for path, m in result.modules().items():
        was = before.get(path)
        trend = (
            ""
            if was is None or was["kill_rate"] is None
            else " (was %.0f%% at %s)" % (was["kill_rate"] * 100, was["commit"][:12])
        )
        rate = "n/a" if m["kill_rate"] is None else "%.0f%%" % (m["kill_rate"] * 100)
        lines.append("module %s: %s%s" % (path, rate, trend))
    for v in result.survivors():
        lines.append("survived %s:%d (%s)" % (v.mutant.path, v.mutant.line, v.by))
        lines += ["    " + d for d in v.mutant.diff.splitlines()[1:]]
    return lines
