"""Collecting C's suite, and T3: the reproducers on B (with C's tests) and on C, like for like.

Reproducers are the ``--reproducer`` ids, else the tests the candidate added or changed (by AST,
per test function, inherited mixin methods included). A suite pytest cannot collect at all is the
candidate's doing only when B's collects.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from pytest_evidence import gitops, overlay
from pytest_evidence.errors import BadInput, EvidenceError, ToolFailed
from pytest_evidence.model import Detection, DetectionKind, Observation, Origin, Role, Tier, TierStatus
from pytest_evidence.store import SuiteRun
from runner import pyscan
from runner.ladder import judge
from runner.ladder.static import PYTHON_FILES
from runner.pytest_run import PytestRun

if TYPE_CHECKING:
    from runner.ladder.climb import Ladder


def matches(specs: Sequence[str], ids: Sequence[str]) -> list[str]:
    """Collected ids a node-id spec names: itself, its parametrizations, or the tests of a class."""
    return [t for t in ids if any(t == s or t.startswith(s + "[") or t.startswith(s + "::") for s in specs)]


UNRUNNABLE = {
    "missing_module": "fails on C importing a module neither the checkout nor the target environment has; "
    "not evidence either way",
    "setup_error": "errors in setup or collection on C exactly as on B: its body ran on neither side; "
    "not evidence either way",
}


def owns(ladder: Ladder) -> Callable[[str], bool]:
    """Whether a top-level module name belongs to the candidate's checkout (under an import root)."""
    roots = ladder.target.roots(ladder.co.c_dir)
    return lambda name: any((r / name).is_dir() or (r / (name + ".py")).is_file() for r in roots)


def collect(ladder: Ladder) -> Mapping[str, list[str]] | None:
    """Collect C's suite (``ladder.collected``); its markers, or None when T3 already failed."""
    co, sides = ladder.co, ladder.sides
    start = ladder.enter(Tier.T3)
    sides.plan = overlay.plan(str(co.c_dir), co.baseline, PYTHON_FILES)
    run = sides.pytest(co.c_dir, None, answer=False, reruns=0, collect_only=True)
    named = (*ladder.invocation.reproducers, *ladder.invocation.expected_changes)
    if run.content.collected is None:
        on_b = sides.pytest(co.baseline_with_tests(sides.plan), None, answer=False, reruns=0, collect_only=True)
        if on_b.content.collected is not None:
            note = "the candidate's suite does not collect (pytest exit %d: %s); B's does" % (run.exit_code, run.said)
            ladder.tier(Tier.T3, TierStatus.FAILED, start, 0, 0, len(on_b.content.collected), note)
            return None
        # C's tests do not collect on B either: one of its test modules may end the collection.
        own = sides.pytest(co.b_dir, None, answer=False, reruns=0, collect_only=True)
        killers = [f for f in sorted(sides.plan.changed) if _kills_collection(ladder, f)]
        if own.content.collected is None or not killers:
            raise ToolFailed("pytest cannot collect the suite on B or on C (exit %d): %s" % (run.exit_code, run.said))
        _killed(ladder, start, killers, named, run.exit_code)
        return None
    if not run.content.finished:
        message = "the candidate's collection process died (exit %d) before reporting" % run.exit_code
        ladder.evidence.detect([Detection(DetectionKind.CRASH, message)])
    ladder.collected = list(run.content.collected)
    unknown = [s for s in named if not matches([s], ladder.collected)]
    broken = _unmatched(ladder, run, unknown)
    if broken:
        # pytest's collection ended early, before the reproducer: it crashed there.
        ladder.evidence.detect(
            Detection(DetectionKind.CRASH, "%s does not collect on C: %s" % (s, m), s, s.split("::", 1)[0])
            for s, m in broken.items()
        )
        note = "".join("reproducer %s does not collect on C (%s); " % item for item in broken.items()).rstrip("; ")
        ladder.tier(Tier.T3, TierStatus.FAILED, start, len(broken), 0, len(ladder.collected), note)
        return None
    if not ladder.collected:
        ladder.evidence.detect([Detection(DetectionKind.EMPTY_COLLECTION, "the candidate's suite collects no test")])
    if ladder.evidence.has(DetectionKind.TAMPER):
        # What the tampering was for: does the candidate's own tree collect anything at all?
        own = sides.pytest(co.submitted_dir, None, answer=False, reruns=0, collect_only=True)
        if not own.content.collected:
            message = "as submitted, the candidate's suite collects no test; the tiers ran the trusted tests"
            ladder.evidence.detect([Detection(DetectionKind.EMPTY_COLLECTION, message)])
    return run.content.markers


def _unmatched(ladder: Ladder, run: PytestRun, unknown: Sequence[str]) -> dict[str, str]:
    """What became of each named test C's collection does not list; returns the ones pytest's
    collection broke down before (a crash: T3 fails), ``spec -> why``.

    Its module does not collect: it runs at T3 all the same, its module's collection error its
    outcome on each side (``ladder.uncollected``). The tested tree defines it and pytest did not
    collect it for an ordinary reason (a module-level skip, a name pytest does not collect): not
    evidence either way (``unrunnable_test``, ``not_collected``). Only the candidate's tree as
    submitted defines it: the reapplied trusted tests removed it (``reproducer_lost_to_tamper``).
    Nobody wrote it: the caller named a test that does not exist -- bad input.
    """
    co, broken = ladder.co, {}
    abnormal = run.exit_code not in (0, 5) or not run.content.finished
    errored = {nodeid.split("::", 1)[0] for nodeid in run.content.collect_errors}
    for spec in unknown:
        if spec.split("::", 1)[0] in errored:
            ladder.uncollected.append(spec)
        elif _defines(ladder, co.tested, spec):
            if abnormal:
                broken[spec] = "the collection ended abnormally (pytest exit %d: %s)" % (run.exit_code, run.said)
            else:
                message = "defined but not collected by pytest (a module-level skip, or a name it does not collect)"
                ladder.evidence.detect(
                    [Detection(DetectionKind.UNRUNNABLE_TEST, message, spec, detail="not_collected")]
                )
        elif _defines(ladder, co.candidate, spec):
            message = (
                "%s is in the candidate's tree but not in the tests that ran: the trusted tests laid back over "
                "its tampered file removed it" % spec
            )
            ladder.evidence.detect(
                [Detection(DetectionKind.REPRODUCER_LOST_TO_TAMPER, message, spec, spec.split("::", 1)[0])]
            )
        else:
            raise BadInput("no collected test matches %s" % spec)
    return broken


def _kills_collection(ladder: Ladder, path: str) -> bool:
    """Whether collecting ``path`` alone ends pytest before it reports what it collected."""
    alone = ladder.sides.pytest(ladder.co.c_dir, [path], answer=False, reruns=0, collect_only=True)
    return alone.content.collected is None


def _killed(ladder: Ladder, start: float, killers: Sequence[str], named: Sequence[str], exit_code: int) -> None:
    """T3 fails: a test module of the candidate's ends pytest's collection (``os._exit``,
    ``SystemExit``, a segfault at import); a reproducer in it is a ``crash``, never an unknown id."""
    ladder.evidence.detect(
        Detection(DetectionKind.CRASH, "%s ends pytest's collection at import (exit %d)" % (f, exit_code), None, f)
        for f in killers
    )
    ladder.evidence.detect(
        Detection(DetectionKind.CRASH, "%s: its module ends pytest's collection at import" % s, s, s.split("::")[0])
        for s in named
        if s.split("::", 1)[0] in killers
    )
    note = "the candidate's test module(s) %s end pytest's collection at import (exit %d)" % (
        ", ".join(killers),
        exit_code,
    )
    ladder.tier(Tier.T3, TierStatus.FAILED, start, len(killers), 0, None, note)


def _defines(ladder: Ladder, commit: str, spec: str) -> bool:
    """Whether ``commit`` (the candidate as submitted, or as tested) defines the test ``spec`` names."""
    path, _, rest = spec.partition("::")
    try:
        tree = pyscan.parse(gitops.show(str(ladder.co.repo), commit, path))
    except EvidenceError:
        return False
    names = tuple(re.sub(r"\[.*$", "", part) for part in rest.split("::")) if rest else ()
    return tree is not None and bool(names) and names in pyscan.definitions(tree)


def authored(ladder: Ladder) -> Callable[[str], bool]:
    """Whether the candidate itself added or changed a test, in the tree it submitted.

    The trusted tests laid over the candidate (``--tests-from``) run, but they are the harness's
    tests, not the candidate's evidence: a fix that brings no test of its own has no reproducer
    unless the harness designates one (``--reproducer``).
    """
    co = ladder.co
    blobs = gitops.blobs(str(co.repo), co.candidate)

    def read(path: str) -> bytes | None:
        return gitops.git(["cat-file", "blob", blobs[path]], cwd=str(co.repo)).stdout if path in blobs else None

    plan = overlay.plan_between(str(co.repo), co.baseline, co.candidate, PYTHON_FILES)
    own = overlay.OriginResolver(str(co.repo), plan, "", read)
    return lambda test_id: own.origin(test_id) in (Origin.ADDED, Origin.CHANGED)


def reproducers(ladder: Ladder, resolver: overlay.OriginResolver, baseline: Callable[[], SuiteRun | None]) -> None:
    """T3. ``baseline`` gives B's stored suite run, asked for only for declared expected changes."""
    start = ladder.enter(Tier.T3)
    c_suite, invocation, sides = ladder.collected, ladder.invocation, ladder.sides
    assert sides.plan is not None
    designated = matches(invocation.reproducers, c_suite) + [
        s for s in invocation.reproducers if s in ladder.uncollected
    ]
    expected = matches(invocation.expected_changes, c_suite)
    expected += [s for s in invocation.expected_changes if s in ladder.uncollected]
    # Tests in changed test files, and tests that inherit a method a changed file defines:
    # their B result must come from B with C's test files, not from B's own suite.
    in_changed_files = [
        t
        for t in c_suite
        if t.split("::", 1)[0] in sides.plan.changed or resolver.origin(t) in (Origin.ADDED, Origin.CHANGED)
    ]
    ids = list(dict.fromkeys([*designated, *expected, *in_changed_files]))
    new = [t for t in in_changed_files if resolver.origin(t) in (Origin.ADDED, Origin.CHANGED) and t not in expected]
    mine = authored(ladder)
    chosen = designated or [t for t in new if mine(t)]
    if not ids:
        note = "no reproducer: none designated, and the candidate added or changed no test"
        ladder.tier(Tier.T3, TierStatus.INCONCLUSIVE, start, 0, 0, len(c_suite), note)
        return
    c_run = sides.run_c(ids)
    b_run = sides.run_b(ids)
    # New evidence counts only once it is stable: each new or designated test runs again on each side.
    fresh = [t for t in ids if (t in designated or t in new) and c_run.observation(t) is not None]
    if fresh and invocation.stability_runs > 1:
        sides.steady(ids, fresh, c_run, b_run)
    ladder.measure_baseline()
    b_obs: dict[str, Observation | None] = {t: b_run.observation(t) for t in ids}
    if expected:
        suite = baseline()
        b_obs.update({t: None if suite is None else suite.results.get(t) for t in expected})
    typed, not_run, unstable = sides.type(
        ids, c_run, b_obs, resolver.origin, designated=designated, expected=expected, exclusive=bool(designated)
    )
    ladder.evidence.add(typed.results, typed.annotations, typed.detections)
    if not designated:  # a changed test of the candidate's that passes on B guards behaviour: not a reproducer
        regression = {r.test_id for r in typed.results if r.role is Role.REGRESSION}
        chosen = [t for t in chosen if t not in regression]
    lacking = judge.unrunnable(typed, chosen, owns(ladder))
    ladder.evidence.detect(
        Detection(DetectionKind.UNRUNNABLE_TEST, UNRUNNABLE[why], t, detail=why) for t, why in lacking.items()
    )
    chosen = [t for t in chosen if t not in lacking]
    unrun = judge.unrun(not_run, c_run.budget_exhausted, sides.sandbox.tier_budget, c_run.exit_code)
    status, note = unrun or judge.reproducer_tier(typed, chosen, expected, fresh)
    if not chosen and new and status is TierStatus.INCONCLUSIVE:
        note = (
            "no reproducer: the candidate added or changed no test; the %d new test(s) of the trusted tests ran "
            "and are recorded, and count as evidence only when designated with --reproducer" % len(new)
        )
    ladder.tier(
        Tier.T3,
        status,
        start,
        len(ids),
        len(ids) - len(not_run) - len(unstable),
        len(c_suite),
        note,
        not_run=[*not_run, *unstable],
    )
