"""T4-T7: what the change may have broken, against B's stored suite run, flips confirmed like for like.

B's whole suite runs once per B and is stored (``baseline_suite``). On C the four tiers are one
grouped session (``pytest_session``): it collects the suite once, the whole plan is computed from
that collection, the diff and B's stored run, and each tier is a group running only the tests no
earlier tier ran, the climb deciding at each barrier. A test that fails on C where B's full run
did not fail it is run again on B -- a grouped session over the same suite, the C session's
groups through the test's own, in their order and seed -- before it counts (``judge.Confirmation``).
"""

from __future__ import annotations

import dataclasses
import pathlib
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING

from pytest_evidence import overlay
from pytest_evidence.model import Detection, DetectionKind, Observation, Origin, Outcome, Tier, TierStatus
from pytest_evidence.store import SuiteRun
from runner import ablation, baseline_suite, compiled
from runner.diff import Diff
from runner.importgraph import ImportGraph
from runner.ladder import ahead, judge, reproduce, strength
from runner.parallel import xdist_args
from runner.pytest_run import PytestRun
from runner.selection import integration_tests, select_impacted_tests
from runner.terminal.activity import ACTIVITY, BASELINE_PHASE

if TYPE_CHECKING:
    from runner.ladder.climb import Ladder


def suite_of_b(ladder: Ladder, tests: int) -> baseline_suite.BaselineSuite:
    """B's suite run: reused when stored under this key, run now (receipted) otherwise -- on
    several processes when the suite (``tests``, C's collection; 0: not known) is large enough."""
    target, sides = ladder.target, ladder.sides

    def intent(receipt: str) -> None:
        ladder.open_receipt = receipt

    parallel = xdist_args(target.has_xdist, ladder.invocation.jobs, tests)
    began = time.perf_counter()
    with ACTIVITY.during(BASELINE_PHASE):
        key, got = baseline_suite.recorded(
            ladder.store,
            sides.repo_key,
            ladder.co.baseline,
            target,
            ladder.invocation.reruns,
            sides.sandbox,
            ladder.co.b_dir,
            intent,
            parallel,
        )
    ladder.open_receipt = None
    if got.how == "run now" and sides.sandbox.bytecode is not None:
        compiled.harvest(target, ladder.co.b_dir, sides.sandbox.bytecode)
    ended = time.perf_counter()
    ladder.baseline_spent = (began, ended)
    ladder.baseline_run = {
        "suite": got.how,
        "receipt": got.receipt,
        "note": got.note,
        "cache_key": key,
        "seconds": round(ended - began, 3),
    }
    if got.how == "run now":
        ladder.baseline_run["processes"] = int(parallel[1]) if parallel else 1
    if got.suite is None:
        ladder.evidence.detect([Detection(DetectionKind.RECEIPT_HELD, got.note)])
    else:
        ladder.measure_baseline()
        ladder.evidence.attempts["B"].update((t, a) for t, found in got.suite.network.items() for a in found)
        ladder.evidence.replaced_by_suite = set(got.suite.replaced)
        ladder.evidence.ran_on_b.update(t for t, seen in got.suite.results.items() if seen is not None)
    ladder.progress("baseline suite on B: %s (%s)" % (got.how, got.note))
    return got


def tiers(
    ladder: Ladder, diff: Diff, resolver: overlay.OriginResolver, baseline: Callable[[int], SuiteRun | None]
) -> None:
    """T4-T7 in one grouped session on C, each stopping the climb on failure. ``baseline`` gives
    B's stored suite run (None: its receipt is held), asked for once C's suite is collected."""
    c_dir, sides = ladder.co.c_dir, ladder.sides
    start = ladder.enter(Tier.T4)
    with sides.suite_session() as session:
        view = session.view()
        if not reproduce.suite_collected(ladder, start, view):
            sides.checked(session.close(), c_dir, answer=False)
            return
        ladder.sized()
        ahead.settle(ladder)  # B's suite may run now: not beside the analysis
        suite = baseline(len(ladder.collected))
        if suite is None:
            sides.checked(session.close(), c_dir)
            for tier in (Tier.T4, Tier.T5, Tier.T6, Tier.T7):
                note = "no baseline suite: its receipt is held"
                ladder.tier(tier, TierStatus.INCONCLUSIVE, start, 0, 0, len(ladder.collected), note)
            return
        if reproduce.lost_tests(ladder, start, view, suite, diff):
            sides.checked(session.close(), c_dir, answer=False)
            return
        plan = _plan(ladder, diff, view.content.markers, suite)
        session.plan([todo for _, _, _, todo in plan if todo])  # a tier runs only what no earlier tier ran
        number = 0
        lost: dict[str, tuple[judge.Confirmation, Origin]] = {}
        for tier, ids, what, todo in plan:
            if ladder.halted():
                break
            if tier is Tier.T6 and ladder.invocation.audit:  # while C's session waits at T5's barrier
                strength.tier(ladder, diff, suite)
                if ladder.halted():
                    break
            if tier is not Tier.T4:
                start = ladder.enter(tier)
            if not todo:
                why = "nothing new to run" if ids else "no test selected"
                ladder.tier(tier, TierStatus.SKIPPED, start, len(ids), 0, len(ladder.collected), "%s: %s" % (what, why))
                continue
            if session.final is not None:
                note = "%s: the session ended before this tier (exit %d)" % (what, session.final.exit_code)
                ladder.tier(tier, TierStatus.INCONCLUSIVE, start, len(ids), 0, len(ladder.collected), note)
                continue
            run = sides.group(session, number, "C")
            lost.update(
                _tier(ladder, tier, ids, session.groups[: number + 1], what, run, suite, resolver, start, number)
            )
            number += 1
        sides.checked(session.close(), c_dir)
    _seek_apart(ladder, lost)
    ladder.evidence.detect(judge.silent_replacements(ladder.evidence.results, ladder.replaced))


def _seek_apart(ladder: Ladder, lost: Mapping[str, tuple[judge.Confirmation, Origin]]) -> None:
    """Evidence the session's order lost, sought once more on C. A test silenced on both sides in
    the C run's selection (``judge.Confirmation.silenced_on_both``) may be silenced by what the
    tests of an earlier group left behind in the same process: the lost tests run once more on C,
    alone in one group of a new session that collects the whole suite -- the candidate's test
    files imported, as in B's full run, so a test file silencing another at import silences it
    there too. One that passes there is evidence found (``found_apart``); one still silent is
    evidence lost. Not sought once a tier failed: the verdict is decided, the losses stand."""
    if lost and not ladder.halted():
        ids = list(lost)
        ladder.progress("%d test(s) silenced in the session's order: run again on C, on their own" % len(ids))
        run = _alone(ladder, ladder.co.c_dir, ids)
        found = {t: run.observation(t) for t in ids}
    else:
        found = {}
    for tid, (confirmation, origin) in lost.items():
        seen = found.get(tid)
        again = dataclasses.replace(confirmation, apart=None if seen is None else seen.outcome)
        ladder.evidence.annotations[tid] = dataclasses.replace(ladder.evidence.annotations[tid], flip=again.to_dict())
        ladder.evidence.detect(again.lost(tid, origin))


def _alone(ladder: Ladder, checkout: pathlib.Path, ids: Sequence[str]) -> PytestRun:
    """``ids`` on ``checkout``, alone in one group of a new session that collects the whole
    suite: the test files of the side imported, as in a full run, and no other test run before
    them in the process."""
    with ladder.sides.session(checkout, None) as session:
        return ladder.sides.only_group(session, checkout, ids)


def _plan(
    ladder: Ladder, diff: Diff, markers: Mapping[str, list[str]], suite: SuiteRun
) -> list[tuple[Tier, list[str], str, list[str]]]:
    """The whole plan before C runs a test: each tier, the tests it selects, what they are, and
    the ones it runs -- those no earlier tier (T3's session included) ran, and the tests before
    them in their modules (``in_place``)."""
    c_dir, c_suite, invocation = ladder.co.c_dir, ladder.collected, ladder.invocation
    roots = ladder.target.relative_roots(c_dir)
    graph = ImportGraph(c_dir, roots)
    selection = select_impacted_tests(c_suite, suite, diff, graph, ahead.taken(ladder, c_suite, graph))
    ladder.selection = {
        "whole_suite": selection.whole_suite,
        "suite_size": selection.suite_size,
        "selected": _by_reason(selection.reasons),
        "left_out": _by_reason(selection.left_out),
    }
    t6 = integration_tests(
        c_suite, markers, invocation.integration_marker, invocation.integration_globs, diff, graph, roots
    )
    if invocation.ablated("selection"):  # the A/B harness's ablation: no tier selects, T7 runs all
        selection = dataclasses.replace(selection, t4=(), t5=())
        t6 = []
    done = set(ladder.evidence.ran_on_c)
    plan = []
    for tier, ids, what in (
        (Tier.T4, list(selection.t4), "tests reaching a changed function on B"),
        (Tier.T5, list(selection.t5), "the affected regression set"),
        (Tier.T6, t6, "integration tests of the touched packages"),
        (Tier.T7, list(c_suite), "the full suite"),
    ):
        todo = in_place([t for t in ids if t not in done], c_suite, done)
        done.update(todo)
        plan.append((tier, ids, what, todo))
    return plan


def in_place(wanted: Sequence[str], suite: Sequence[str], done: Collection[str]) -> list[str]:
    """``wanted`` with every test before one of them in its module that no earlier group ran,
    in the suite's order: so each module's tests run in the order a plain run gives them, only
    split across groups. A test a tier selects ran first, alone, and the tests before it in its
    module after it at T7: one passing on C only when they have not run -- right on an empty
    registry, wrong once a test before it registered -- was certified, though a plain ``pytest``
    on C fails it (a probe, 2026-12-05). What this costs is an earlier tier's size, not a test
    run twice: a module's tests run once each, as before."""
    chosen = set(wanted)
    last: dict[str, int] = {}
    for index, test_id in enumerate(suite):
        if test_id in chosen:
            last[test_id.split("::", 1)[0]] = index
    found = [t for index, t in enumerate(suite) if t not in done and index <= last.get(t.split("::", 1)[0], -1)]
    placed = set(found)
    return found + [t for t in wanted if t not in placed]  # one the collection lacks: its tier says so


def _settle_order(
    ladder: Ladder,
    confirmed: dict[str, judge.Confirmation],
    baseline: dict[str, Observation | None],
    b_order: Sequence[str],
) -> None:
    """Each flip that fails on B too in the C run's selection (``order_dependent``) run again on
    each side, until a run shows where C stands: first on its own (``_alone``: one that passes on
    B and fails on C so is the candidate's, ``judge.Confirmation.broken_apart``); then, for one
    not passing alone on both sides or coming after other tests -- a test needing a test before
    it, or checking what they set up -- after the tests before it in B's full run (``b_order``),
    one process per side for all of them (``broken_in_order``). B's order, not C's
    collection: a test the candidate added before it could leave C the state that hides what
    it broke. B's outcome where it passes is the one it is judged against; a flip no run
    settles leaves the tier inconclusive (``judge.unsettled``). One silent on C (skipped,
    xfailed) is settled too: its body never ran on C, and the order excuses it only where it
    passes there. Processes only when the session's order upset a test on both sides."""
    ids = [t for t, c in confirmed.items() if c.order_dependent]
    if not ids:
        return
    ladder.progress("%d flip(s) failing on B too in the session's order: run on each side, on their own" % len(ids))
    on_b, on_c = _alone(ladder, ladder.sides.b_dir, ids), _alone(ladder, ladder.co.c_dir, ids)
    for tid in ids:
        b, c = on_b.observation(tid), on_c.observation(tid)
        confirmed[tid] = dataclasses.replace(
            confirmed[tid],
            apart_b=None if b is None else b.outcome,
            apart=None if c is None else c.outcome,
            settling=True,
        )
        if confirmed[tid].broken_apart:
            baseline[tid] = b
    suspects = _unsettled(ids, confirmed, b_order)
    if suspects:
        run = _in_b_order(b_order, ladder.collected, suspects)
        ladder.progress("%s: run on each side after the tests before them in B's full run" % ", ".join(suspects))
        on_b, on_c = _alone(ladder, ladder.sides.b_dir, run), _alone(ladder, ladder.co.c_dir, run)
        for tid in suspects:
            b, c = on_b.observation(tid), on_c.observation(tid)
            confirmed[tid] = dataclasses.replace(
                confirmed[tid], in_order_b=None if b is None else b.outcome, in_order=None if c is None else c.outcome
            )
            if confirmed[tid].broken_in_order:
                baseline[tid] = b
    for tid in ids:
        ladder.progress("%s: %s" % (tid, confirmed[tid].rests_on.split(":")[0]))


def _unsettled(ids: Sequence[str], confirmed: Mapping[str, judge.Confirmation], b_order: Sequence[str]) -> list[str]:
    """The suspects a run in B's order may settle: those not passing on each side on their
    own, and those that do but come after other tests in B's full run (``b_order``) -- alone,
    nothing those tests set up was there, and C may break only what they set up
    (``judge.Confirmation.unsettled``; a review's probes: a test checking a table only once
    another registered, in its module or an earlier one). B's first test, passing alone on
    both sides, is settled: alone is its order."""
    first = b_order[0] if b_order else None
    return [t for t in ids if confirmed[t].order_dependent and (t != first or not confirmed[t].settled_apart)]


def _in_b_order(b_order: Sequence[str], collected: Sequence[str], suspects: Sequence[str]) -> list[str]:
    """B's full run's tests in its order through the last of ``suspects``: only those C
    collects too, as both sides run C's test files -- and none B did not have."""
    on_c = set(collected)
    tests = [t for t in b_order if t in on_c]
    at = {t: i for i, t in enumerate(tests)}
    last = max((at[t] for t in suspects if t in at), default=len(tests) - 1)
    return tests[: last + 1]


def _by_reason(reasons: Mapping[str, str]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for test_id, why in reasons.items():
        grouped.setdefault(why, []).append(test_id)
    return grouped


def _tier(
    ladder: Ladder,
    tier: Tier,
    ids: Sequence[str],
    through: Sequence[Sequence[str]],
    what: str,
    c_run: PytestRun,
    suite: SuiteRun,
    resolver: overlay.OriginResolver,
    start: float,
    group: int,
) -> dict[str, tuple[judge.Confirmation, Origin]]:
    """Record the tier; the tests it found silenced on both sides (evidence lost, unless found
    apart: ``_seek_apart``), with their origin."""
    sides, suite_size, todo = ladder.sides, len(ladder.collected), through[-1]
    baseline: dict[str, Observation | None] = {t: suite.results.get(t) for t in todo}
    confirmed = _confirm(ladder, through, c_run, baseline, suite.collected) if sides.replayed else {}
    typed, not_run, unstable = sides.type(todo, c_run, baseline, resolver.origin, affected=tier is not Tier.T7)
    annotations = {
        t: dataclasses.replace(a, flip=confirmed[t].to_dict()) if t in confirmed else a
        for t, a in typed.annotations.items()
    }
    detections = list(typed.detections) + [
        Detection(DetectionKind.ORDER_DEPENDENT, c.rests_on, t) for t, c in confirmed.items() if c.order_dependent
    ]
    selected = set(ids)
    gaps = [
        r.test_id
        for r in typed.results
        if r.baseline_result is Outcome.PASS
        and r.candidate_result in judge.C_FAILING
        and (tier is Tier.T7 or r.test_id not in selected)  # run only as one before a selected test
    ]
    detections += [Detection(DetectionKind.SELECTION_GAP, "a PASS->FAIL flip escaped T4-T6", t) for t in gaps]
    ladder.evidence.add(typed.results, annotations, detections)
    unrun = judge.unrun(not_run, c_run.budget_exhausted, sides.sandbox.tier_budget, c_run.exit_code)
    unrun = unrun or judge.unsettled(confirmed)
    bare = ablation.bare(ladder.invocation)
    status, note = judge.regression_tier(typed.results, what, tier is not Tier.T7, unrun, bare)
    ladder.tier(
        tier,
        status,
        start,
        len(ids),
        len(todo) - len(not_run) - len(unstable),
        suite_size,
        note,
        not_run=[*not_run, *unstable],
        group=("suite", group),
    )
    origins = {t: typed.annotations[t].origin for t in confirmed}
    return {t: (c, origins[t]) for t, c in confirmed.items() if c.lost(t, origins[t])}


def _confirm(
    ladder: Ladder,
    through: Sequence[Sequence[str]],
    c_run: PytestRun,
    baseline: dict[str, Observation | None],
    b_order: Sequence[str],
) -> dict[str, judge.Confirmation]:
    """Run every suspected flip's selection on B like for like; its B result replaces the full
    run's. ``through``: the C session's groups up to the suspects' own, the last: the tests of
    the earlier groups ran in the same process on C before them, and what they leave behind (a
    module reloaded, a patch not undone) is part of the C run's order -- B runs them too, in the
    same groups and order. ``b_order``: B's full run's collection, where an order-dependent
    flip is settled (``_settle_order``)."""
    todo = through[-1]
    suspects = judge.suspects(todo, {t: c_run.observation(t) for t in todo}, baseline)
    if not suspects:
        return {}
    same = ladder.sides.replay_b(through)
    confirmed = {}
    for tid in suspects:
        full, like, on_c = baseline.get(tid), same.observation(tid), c_run.observation(tid)
        confirmed[tid] = judge.Confirmation(
            None if full is None else full.outcome,
            None if like is None else like.outcome,
            len(todo),
            silent=on_c is not None and on_c.outcome in judge.C_SILENT,
        )
        if like is not None:
            baseline[tid] = like
    ladder.progress(
        "like-for-like B run of %d test(s): %s"
        % (len(todo), "; ".join("%s %s" % (t, c.rests_on.split(":")[0]) for t, c in confirmed.items()))
    )
    _settle_order(ladder, confirmed, baseline, b_order)
    return confirmed
