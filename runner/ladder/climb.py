"""The climb: cheapest rung first, stop at the first one that fails. Mechanism, not policy.

Once T0 has parsed the candidate, and before anything runs its code, ``verify_test_integrity``
compares its protected files with B's and lays the trusted tests over it, and its library code is
scanned for interference with the test run. Each rung runs an engine, types what it answered
(``type_evidence``, never by hand) and hands the typed results to a rule in ``judge``; the
accumulated ``Evidence`` becomes the record (``record``). Tests run in the target interpreter
through ``sides``, every process pinned alike; B's results for unchanged tests come from the
baseline suite run, stored once per B and receipted (``baseline_suite``), and any flip against it
is run again on B in the C run's own selection, order and seed before it counts.

An engine that ends without a usable answer (``ToolFailed``) ends the climb: its rung is an
``error`` and the record says the climb is incomplete and why.
"""

from __future__ import annotations

import dataclasses
import datetime
import time
import uuid
from collections.abc import Callable, Mapping, Sequence

from pytest_evidence import overlay
from pytest_evidence.errors import BadInput, ToolFailed
from pytest_evidence.model import (
    Detection,
    DetectionKind,
    Environment,
    EvidenceRecord,
    Finding,
    Observation,
    Origin,
    Outcome,
    Tier,
    TierRecord,
    TierStatus,
)
from pytest_evidence.store import Store, SuiteRun
from runner import baseline_suite, gates, integrity, interference, receipts
from runner.checkout import Checkouts
from runner.diff import Diff, FileKind, compute
from runner.importgraph import ImportGraph
from runner.ladder import judge, record
from runner.ladder.evidence import Evidence
from runner.ladder.invocation import Invocation
from runner.ladder.sides import Sides
from runner.pytest_run import PytestRun
from runner.sandbox import lockfile_digest
from runner.selection import integration_tests, select_impacted_tests
from runner.verdict import decide

PYTHON_FILES = ("test_*.py", "*_test.py")


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def matches(specs: Sequence[str], ids: Sequence[str]) -> list[str]:
    """Collected ids a node-id spec names: itself, its parametrizations, or the tests of a class."""
    return [t for t in ids if any(t == s or t.startswith(s + "[") or t.startswith(s + "::") for s in specs)]


class Ladder:
    def __init__(
        self,
        co: Checkouts,
        store: Store,
        invocation: Invocation,
        progress: Callable[[str], None] = lambda _m: None,
    ) -> None:
        self.co = co
        self.store = store
        self.invocation = invocation
        self.target = invocation.target
        self.progress = progress
        self.run_id = uuid.uuid4().hex[:16]
        self.started = _now()
        self.evidence = Evidence()
        self.sides = Sides(co, store, invocation, self.evidence, self.run_id, progress)
        self.collected: list[str] = []
        self.integrity: dict[str, object] | None = None
        self.trusted: frozenset[str] = frozenset()  # files laid from a trusted source other than B
        self.b_environment: Environment | None = None
        self.open_receipt: str | None = None  # a receipt whose intent this climb wrote, not yet completed
        self._rung = Tier.T0
        self._rung_started = time.perf_counter()

    # -- bookkeeping ---------------------------------------------------------------------------

    def _enter(self, tier: Tier) -> float:
        """The rung now running: an engine failure from here on is this rung's error."""
        self._rung, self._rung_started = tier, time.perf_counter()
        return self._rung_started

    def _tier(
        self,
        tier: Tier,
        status: TierStatus,
        started: float,
        selected: int,
        run: int,
        suite_size: int | None,
        note: str,
        findings: Sequence[Finding] = (),
        not_run: Sequence[str] = (),
    ) -> None:
        duration = round(time.perf_counter() - started, 3)
        self.evidence.tier(
            TierRecord(tier, status, duration, selected, run, suite_size, note, tuple(findings), tuple(not_run))
        )
        self.progress("%s %s: %s" % (tier.value, status.value, note))

    def _halted(self) -> bool:
        return self.evidence.halted(self.invocation.full)

    # -- the record ----------------------------------------------------------------------------

    def climb(self) -> EvidenceRecord:
        try:
            self._climb()
        except ToolFailed as exc:
            message = "%s [%s]" % (exc, exc.slug)
            self._tier(self._rung, TierStatus.ERROR, self._rung_started, 0, 0, None, message)
            return self.record(incomplete="%s did not finish: %s" % (self._rung.value, message))
        return self.record()

    def record(self, incomplete: str | None = None, judged: bool = True) -> EvidenceRecord:
        """The record of what the climb established; ``judged=False``: no verdict (it was cut short).

        The candidate's environment is measured again only if candidate code ran in a climb that
        ended on its own: it may have changed what is installed.
        """
        env_c = self._environment(self.co.tested, fresh=self.sides.pinned and judged)
        if self.sides.pinned:
            env_c = dataclasses.replace(env_c, injected=self.sides.sandbox.injected_versions())
        env_b = self.b_environment
        if env_b is not None and env_b.fingerprint != env_c.fingerprint:
            self.evidence.detect([Detection(DetectionKind.ENVIRONMENT_DRIFT, _drift(env_b, env_c))])
        verdict = decide(self.evidence.tiers, self.evidence.results, self.evidence.detections) if judged else None
        frame = record.Frame(
            run_id=self.run_id,
            created=self.started,
            repo=str(self.co.repo),
            baseline=self.co.baseline,
            candidate=self.co.candidate,
            invocation=self.invocation,
            collected=tuple(self.collected),
            integrity=self.integrity,
            pinning=self.sides.sandbox.to_dict() if self.sides.pinned else None,
        )
        return record.assemble(frame, self.evidence, verdict, env_c, env_b, incomplete)

    def _environment(self, commit: str, fresh: bool = False) -> Environment:
        """The target's fingerprint with the lock and requirements files of ``commit`` folded in."""
        return self.target.environment(fresh).with_lockfiles(lockfile_digest(str(self.co.repo), commit))

    # -- the climb -----------------------------------------------------------------------------

    def _climb(self) -> None:
        diff = compute(str(self.co.repo), self.co.baseline, self.co.candidate, PYTHON_FILES)
        self._static(Tier.T0, lambda: gates.parse_gate(self.co.read_candidate, _present(diff), self.co.candidate))
        if self._halted():
            return
        # After the cheapest rung, before anything runs the candidate's code: a patch T0 rejects
        # costs no more than it did, and every later tier sees the trusted tests.
        self._enter(Tier.T1)
        self.evidence.detect(interference.scan(self.co.read_candidate, diff))
        self.integrity = self._integrity()
        if self.co.tested != self.co.candidate:
            diff = compute(str(self.co.repo), self.co.baseline, self.co.tested, PYTHON_FILES)
        py = [p for p in _present(diff) if p.endswith(".py")]
        self._static(
            Tier.T1, lambda: gates.lint_gate(self.co.c_dir, py, self.co.candidate, lambda: self.co.b_dir, self.trusted)
        )
        if self._halted():
            return
        self._t2([f.path for f in diff.of_kind(FileKind.SOURCE) if f.status != "D"])
        if self._halted():
            return
        start = self._enter(Tier.T3)
        self.sides.plan = overlay.plan(str(self.co.c_dir), self.co.baseline, PYTHON_FILES)
        collect = self.sides.pytest(self.co.c_dir, None, answer=False, reruns=0, collect_only=True)
        if collect.content.collected is None:
            self._uncollectable(collect, start)
            return
        if not collect.content.finished:
            message = "the candidate's collection process died (exit %d) before reporting" % collect.exit_code
            self.evidence.detect([Detection(DetectionKind.CRASH, message)])
        self.collected = list(collect.content.collected)
        named = (*self.invocation.reproducers, *self.invocation.expected_changes)
        unknown = [s for s in named if not matches([s], self.collected)]
        if unknown:
            raise BadInput("no collected test matches %s" % ", ".join(unknown))
        if self.evidence.has(DetectionKind.TAMPER):
            self._as_submitted()
        self._tests(diff, collect.content.markers)

    def _uncollectable(self, collect: PytestRun, start: float) -> None:
        """pytest could not collect C's suite at all: the candidate's doing only if B's collects."""
        assert self.sides.plan is not None
        on_b = self.sides.pytest(
            self.co.baseline_with_tests(self.sides.plan), None, answer=False, reruns=0, collect_only=True
        )
        if on_b.content.collected is None:
            raise ToolFailed(
                "pytest cannot collect the suite on B or on C (exit %d): %s" % (collect.exit_code, collect.said)
            )
        note = "the candidate's suite does not collect (pytest exit %d: %s); B's does" % (
            collect.exit_code,
            collect.said,
        )
        self._tier(Tier.T3, TierStatus.FAILED, start, 0, 0, len(on_b.content.collected), note)

    def _as_submitted(self) -> None:
        """What the tampering was for: does the candidate's own tree collect anything at all?"""
        own = self.sides.pytest(self.co.submitted_dir, None, answer=False, reruns=0, collect_only=True)
        if not own.content.collected:
            message = "as submitted, the candidate's suite collects no test; the tiers ran the trusted tests"
            self.evidence.detect([Detection(DetectionKind.EMPTY_COLLECTION, message)])

    def _integrity(self) -> dict[str, object]:
        """verify_test_integrity, before anything runs; the tests then run on the trusted ones."""
        trusted, label = self.co.trusted_tests(self.invocation.tests_from)
        report = integrity.verify_test_integrity(
            str(self.co.repo),
            self.co.baseline,
            trusted,
            self.co.candidate,
            PYTHON_FILES,
            self.invocation.expected_changes,
        )
        self.evidence.detect(report.detections)
        self.trusted = report.trusted
        if report.lay:
            self.co.lay(report.lay)
            self.progress(
                "integrity: %d tamper finding(s); %d protected file(s) laid from %s"
                % (len(report.detections), len(report.lay), label)
            )
        return {
            "trusted": label,
            "protected": report.protected,
            "reapplied": sorted(p for p, blob in report.lay.items() if blob is not None),
            "removed": sorted(p for p, blob in report.lay.items() if blob is None),
            "tested_commit": self.co.tested,
        }

    def _static(self, tier: Tier, run: Callable[[], gates.GateResult]) -> None:
        start = self._enter(tier)
        gate = run()
        self.evidence.add(gate.results)
        status = judge.static_tier(gate.passed, len(gate.results))
        self._tier(tier, status, start, len(gate.results), len(gate.results), None, gate.note, gate.findings)

    def _t2(self, sources: Sequence[str]) -> None:
        origins: dict[str, str | None] = {}

        def gate() -> gates.GateResult:
            result, found = gates.type_gate(
                self.co.c_dir, sources, self.co.candidate, self.target, lambda: self.co.b_dir, self.sides.sandbox
            )
            origins.update(found)
            return result

        self._static(Tier.T2, gate)
        self.sides.watch = sorted(origins)
        self.sides.provenance(origins, "the import probe")

    # -- the test tiers ------------------------------------------------------------------------

    def _tests(self, diff: Diff, markers: Mapping[str, list[str]]) -> None:
        c_dir = self.co.c_dir
        c_suite = self.collected
        assert self.sides.plan is not None
        roots = [str(r.relative_to(c_dir)) if r != c_dir else "" for r in self.target.roots(c_dir)]
        if not c_suite:
            self.evidence.detect([Detection(DetectionKind.EMPTY_COLLECTION, "the candidate's suite collects no test")])
        resolver = overlay.OriginResolver(str(c_dir), self.sides.plan, "")
        asked: list[baseline_suite.BaselineSuite] = []

        def baseline() -> SuiteRun | None:
            if not asked:
                asked.append(self._baseline_suite())
            return asked[0].suite

        self._t3(resolver, baseline)
        if self._halted():
            return
        suite = baseline()
        if suite is None:
            start = time.perf_counter()
            for tier in (Tier.T4, Tier.T5, Tier.T6, Tier.T7):
                self._tier(
                    tier, TierStatus.INCONCLUSIVE, start, 0, 0, len(c_suite), "no baseline suite: its receipt is held"
                )
            return
        graph = ImportGraph(c_dir, roots)
        selection = select_impacted_tests(c_suite, suite, diff, graph)
        t6 = integration_tests(
            c_suite, markers, self.invocation.integration_marker, self.invocation.integration_globs, diff, graph, roots
        )
        tiers = [
            (Tier.T4, list(selection.t4), "tests reaching a changed function on B"),
            (Tier.T5, list(selection.t5), "the affected regression set"),
            (Tier.T6, t6, "integration tests of the touched packages"),
            (Tier.T7, c_suite, "the full suite"),
        ]
        for tier, ids, what in tiers:
            if self._halted():
                return
            self._regression_tier(tier, ids, what, suite, resolver)

    def _baseline_suite(self) -> baseline_suite.BaselineSuite:
        env = self.target.environment()
        key = baseline_suite.cache_key(
            self.co.repo,
            self.co.baseline,
            env,
            self.target,
            self.invocation.reruns,
            self.sides.sandbox.identity(),
        )
        binding = receipts.Binding(
            kind="suite",
            repo=self.sides.repo_key,
            ref=self.co.baseline,
            head=self.co.baseline,
            checkout=self.sides.repo_key,
            env_fingerprint=env.fingerprint,
            command="pytest suite on B, cache key %s" % key,
        )

        def intent(receipt: str) -> None:
            self.open_receipt = receipt

        got = baseline_suite.baseline_suite(
            self.store,
            key,
            binding,
            self.target,
            self.co.b_dir,
            self.invocation.reruns,
            self.sides.sandbox,
            intent,
        )
        self.open_receipt = None
        if got.suite is None:
            self.evidence.detect([Detection(DetectionKind.RECEIPT_HELD, got.note)])
        else:
            self.b_environment = self._environment(self.co.baseline)
        self.progress("baseline suite on B: %s (%s)" % (got.how, got.note))
        return got

    def _t3(self, resolver: overlay.OriginResolver, baseline: Callable[[], SuiteRun | None]) -> None:
        start = self._enter(Tier.T3)
        c_suite = self.collected
        assert self.sides.plan is not None
        plan = self.sides.plan
        designated = matches(self.invocation.reproducers, c_suite)
        expected = matches(self.invocation.expected_changes, c_suite)
        # Tests in changed test files, and tests that inherit a method a changed file defines:
        # their B result must come from B with C's test files, not from B's own suite.
        in_changed_files = [
            t
            for t in c_suite
            if t.split("::", 1)[0] in plan.changed or resolver.origin(t) in (Origin.ADDED, Origin.CHANGED)
        ]
        ids = list(dict.fromkeys([*designated, *expected, *in_changed_files]))
        reproducers = designated or [
            t for t in in_changed_files if resolver.origin(t) in (Origin.ADDED, Origin.CHANGED) and t not in expected
        ]
        if not ids:
            self._tier(
                Tier.T3,
                TierStatus.INCONCLUSIVE,
                start,
                0,
                0,
                len(c_suite),
                "no reproducer: none designated, and the candidate added or changed no test",
            )
            return
        c_run = self.sides.run_c(ids)
        b_run = self.sides.run_b(ids)
        if self.b_environment is None:
            self.b_environment = self._environment(self.co.baseline)
        b_obs: dict[str, Observation | None] = {t: b_run.observation(t) for t in ids}
        if expected:
            suite = baseline()
            b_obs.update({t: None if suite is None else suite.results.get(t) for t in expected})
        typed, not_run = self.sides.type(ids, c_run, b_obs, resolver.origin, designated=reproducers, expected=expected)
        self.evidence.add(typed.results, typed.annotations, typed.detections)
        unrun = judge.unrun(not_run, c_run.budget_exhausted, self.sides.sandbox.tier_budget, c_run.exit_code)
        status, note = unrun or judge.reproducer_tier(typed, reproducers, expected)
        self._tier(Tier.T3, status, start, len(ids), len(ids) - len(not_run), len(c_suite), note, not_run=not_run)

    def _regression_tier(
        self,
        tier: Tier,
        ids: Sequence[str],
        what: str,
        suite: SuiteRun,
        resolver: overlay.OriginResolver,
    ) -> None:
        start = self._enter(tier)
        suite_size = len(self.collected)
        todo = [t for t in ids if t not in self.evidence.ran_on_c]
        if not todo:
            why = "nothing new to run" if ids else "no test selected"
            self._tier(tier, TierStatus.SKIPPED, start, len(ids), 0, suite_size, "%s: %s" % (what, why))
            return
        c_run = self.sides.run_c(todo)
        baseline: dict[str, Observation | None] = {t: suite.results.get(t) for t in todo}
        confirmed = self._confirm(todo, c_run, baseline)
        typed, not_run = self.sides.type(todo, c_run, baseline, resolver.origin, affected=tier is not Tier.T7)
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
        self.evidence.add(typed.results, annotations, detections)
        unrun = judge.unrun(not_run, c_run.budget_exhausted, self.sides.sandbox.tier_budget, c_run.exit_code)
        status, note = judge.regression_tier(typed.results, what, tier is not Tier.T7, unrun)
        self._tier(tier, status, start, len(ids), len(todo) - len(not_run), suite_size, note, not_run=not_run)

    def _confirm(
        self, todo: Sequence[str], c_run: PytestRun, baseline: dict[str, Observation | None]
    ) -> dict[str, judge.Confirmation]:
        """Run every suspected flip's selection on B like for like; its B result replaces the full run's."""
        suspects = judge.suspects(todo, {t: c_run.observation(t) for t in todo}, baseline)
        if not suspects:
            return {}
        same = self.sides.run_b(todo)
        confirmed = {}
        for tid in suspects:
            full, like = baseline.get(tid), same.observation(tid)
            confirmed[tid] = judge.Confirmation(
                None if full is None else full.outcome, None if like is None else like.outcome, len(todo)
            )
            if like is not None:
                baseline[tid] = like
        self.progress(
            "like-for-like B run of %d test(s): %s"
            % (len(todo), "; ".join("%s %s" % (t, c.rests_on.split(":")[0]) for t, c in confirmed.items()))
        )
        return confirmed


def _present(diff: Diff) -> list[str]:
    return [f.path for f in diff.files if f.status != "D"]


def _drift(b: Environment, c: Environment) -> str:
    parts = [
        "%s %s -> %s" % (name, getattr(b, name), getattr(c, name))
        for name in ("python", "implementation", "platform", "pytest", "distributions", "lockfiles")
        if getattr(b, name) != getattr(c, name)
    ]
    return "B ran in environment %s, C in %s: %s" % (
        b.fingerprint[:12],
        c.fingerprint[:12],
        "; ".join(parts) or "installed distributions changed",
    )
