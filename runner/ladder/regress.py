"""T4-T7: what the change may have broken, against B's stored suite run, flips confirmed like for like.

B's whole suite runs once per B and is stored (``baseline_suite``); each tier runs on C only the
tests no earlier tier ran. A test that fails on C where B's full run did not fail it is run again
on B in the C run's own selection, order and seed before it counts (``judge.Confirmation``).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from pytest_evidence import overlay
from pytest_evidence.model import Detection, DetectionKind, Observation, Outcome, Tier, TierStatus
from pytest_evidence.store import SuiteRun
from runner import baseline_suite, receipts
from runner.diff import Diff
from runner.importgraph import ImportGraph
from runner.ladder import judge
from runner.pytest_run import PytestRun
from runner.selection import integration_tests, select_impacted_tests

if TYPE_CHECKING:
    from runner.ladder.climb import Ladder


def suite_of_b(ladder: Ladder) -> baseline_suite.BaselineSuite:
    """B's suite run: reused when stored under this key, run now (receipted) otherwise."""
    target, sides = ladder.target, ladder.sides
    env = target.environment()
    key = baseline_suite.cache_key(
        ladder.co.repo, ladder.co.baseline, env, target, ladder.invocation.reruns, sides.sandbox.identity()
    )
    binding = receipts.Binding(
        kind="suite",
        repo=sides.repo_key,
        ref=ladder.co.baseline,
        head=ladder.co.baseline,
        checkout=sides.repo_key,
        env_fingerprint=env.fingerprint,
        command="pytest suite on B, cache key %s" % key,
    )

    def intent(receipt: str) -> None:
        ladder.open_receipt = receipt

    got = baseline_suite.baseline_suite(
        ladder.store, key, binding, target, ladder.co.b_dir, ladder.invocation.reruns, sides.sandbox, intent
    )
    ladder.open_receipt = None
    ladder.baseline_run = {"suite": got.how, "receipt": got.receipt, "note": got.note, "cache_key": key}
    if got.suite is None:
        ladder.evidence.detect([Detection(DetectionKind.RECEIPT_HELD, got.note)])
    else:
        ladder.measure_baseline()
        ladder.evidence.attempts["B"].update((t, a) for t, found in got.suite.network.items() for a in found)
    ladder.progress("baseline suite on B: %s (%s)" % (got.how, got.note))
    return got


def tiers(
    ladder: Ladder,
    diff: Diff,
    markers: Mapping[str, list[str]],
    resolver: overlay.OriginResolver,
    suite: SuiteRun | None,
) -> None:
    """T4-T7 in order, each stopping the climb on failure (``suite`` None: its receipt is held)."""
    c_dir, c_suite, invocation = ladder.co.c_dir, ladder.collected, ladder.invocation
    if suite is None:
        start = time.perf_counter()
        for tier in (Tier.T4, Tier.T5, Tier.T6, Tier.T7):
            note = "no baseline suite: its receipt is held"
            ladder.tier(tier, TierStatus.INCONCLUSIVE, start, 0, 0, len(c_suite), note)
        return
    roots = [str(r.relative_to(c_dir)) if r != c_dir else "" for r in ladder.target.roots(c_dir)]
    graph = ImportGraph(c_dir, roots)
    selection = select_impacted_tests(c_suite, suite, diff, graph)
    t6 = integration_tests(
        c_suite, markers, invocation.integration_marker, invocation.integration_globs, diff, graph, roots
    )
    plan = [
        (Tier.T4, list(selection.t4), "tests reaching a changed function on B"),
        (Tier.T5, list(selection.t5), "the affected regression set"),
        (Tier.T6, t6, "integration tests of the touched packages"),
        (Tier.T7, c_suite, "the full suite"),
    ]
    for tier, ids, what in plan:
        if ladder.halted():
            return
        _tier(ladder, tier, ids, what, suite, resolver)


def _tier(
    ladder: Ladder, tier: Tier, ids: Sequence[str], what: str, suite: SuiteRun, resolver: overlay.OriginResolver
) -> None:
    start = ladder.enter(tier)
    sides, suite_size = ladder.sides, len(ladder.collected)
    todo = [t for t in ids if t not in ladder.evidence.ran_on_c]
    if not todo:
        why = "nothing new to run" if ids else "no test selected"
        ladder.tier(tier, TierStatus.SKIPPED, start, len(ids), 0, suite_size, "%s: %s" % (what, why))
        return
    c_run = sides.run_c(todo)
    baseline: dict[str, Observation | None] = {t: suite.results.get(t) for t in todo}
    confirmed = _confirm(ladder, todo, c_run, baseline)
    typed, not_run, unstable = sides.type(todo, c_run, baseline, resolver.origin, affected=tier is not Tier.T7)
    annotations = {
        t: dataclasses.replace(a, flip=confirmed[t].to_dict()) if t in confirmed else a
        for t, a in typed.annotations.items()
    }
    detections = list(typed.detections) + [
        Detection(DetectionKind.ORDER_DEPENDENT, c.rests_on, t) for t, c in confirmed.items() if c.order_dependent
    ]
    if tier is Tier.T7:
        detections += [
            Detection(DetectionKind.SELECTION_GAP, "a PASS->FAIL flip escaped T4-T6", r.test_id)
            for r in typed.results
            if r.baseline_result is Outcome.PASS and r.candidate_result in judge.C_FAILING
        ]
    ladder.evidence.add(typed.results, annotations, detections)
    unrun = judge.unrun(not_run, c_run.budget_exhausted, sides.sandbox.tier_budget, c_run.exit_code)
    status, note = judge.regression_tier(typed.results, what, tier is not Tier.T7, unrun)
    ladder.tier(
        tier,
        status,
        start,
        len(ids),
        len(todo) - len(not_run) - len(unstable),
        suite_size,
        note,
        not_run=[*not_run, *unstable],
    )


def _confirm(
    ladder: Ladder, todo: Sequence[str], c_run: PytestRun, baseline: dict[str, Observation | None]
) -> dict[str, judge.Confirmation]:
    """Run every suspected flip's selection on B like for like; its B result replaces the full run's."""
    suspects = judge.suspects(todo, {t: c_run.observation(t) for t in todo}, baseline)
    if not suspects:
        return {}
    same = ladder.sides.run_b(todo)
    confirmed = {}
    for tid in suspects:
        full, like = baseline.get(tid), same.observation(tid)
        confirmed[tid] = judge.Confirmation(
            None if full is None else full.outcome, None if like is None else like.outcome, len(todo)
        )
        if like is not None:
            baseline[tid] = like
    ladder.progress(
        "like-for-like B run of %d test(s): %s"
        % (len(todo), "; ".join("%s %s" % (t, c.rests_on.split(":")[0]) for t, c in confirmed.items()))
    )
    return confirmed
