"""The certification ladder T0-T7: cheapest checks first, halt at the first failing tier.

Once T0 has parsed the candidate, and before anything runs its code, ``verify_test_integrity``
compares its protected files with B's and lays the trusted tests over it, and its library code is
scanned for interference with the test run. Each tier produces typed results (through ``type_evidence``,
never by hand) and a ``TierRecord``. Tests run in the target interpreter through the plugin in
record mode (``pytest_run``), every process pinned the same way (``sandbox``); B's results for
unchanged tests come from the baseline suite run, stored once per B and receipted
(``baseline_suite``); reproducers run on B with C's test files laid over it. Tests quarantined as
flaky by any earlier run of this repository stay ``flaky`` until cleared.
"""

from __future__ import annotations

import datetime
import json
import os
import pathlib
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_evidence import overlay
from pytest_evidence.assemble import Typed, flake_rows, network_detections, quarantine, type_evidence
from pytest_evidence.model import (
    FAILING,
    Annotation,
    BCClass,
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
    ValidationResult,
)
from pytest_evidence.store import Store, SuiteRun
from runner import baseline_suite, gates, integrity, interference, pytest_run, receipts
from runner.checkout import Checkouts
from runner.diff import Diff, FileKind, compute
from runner.errors import BadInput
from runner.importgraph import ImportGraph
from runner.sandbox import DEFAULT_SEED, DEFAULT_TEST_TIMEOUT, Sandbox, lockfile_digest, pin_environment
from runner.selection import integration_tests, select_impacted_tests
from runner.target import Target
from runner.verdict import EXIT_CODES, decide

PYTHON_FILES = ("test_*.py", "*_test.py")
USAGE_ERROR = 4  # pytest.ExitCode.USAGE_ERROR, without importing pytest's API for one number
#: Outcomes on C that fail a test tier (a quarantined flake is judged separately).
C_FAILING = FAILING | {Outcome.TIMEOUT, Outcome.CRASH}


@dataclass(frozen=True)
class Options:
    reproducers: tuple[str, ...] = ()
    expected_changes: tuple[str, ...] = ()
    full: bool = False
    reruns: int = 2
    tier_budget: float | None = 900.0
    test_timeout: float | None = DEFAULT_TEST_TIMEOUT
    seed: int = DEFAULT_SEED
    integration_marker: str = "integration"
    integration_globs: tuple[str, ...] = ("*integration*",)
    tests_from: str | None = None  # a revision or a test patch holding the trusted tests


@dataclass
class _State:
    results: list[ValidationResult] = field(default_factory=list)
    annotations: dict[str, Annotation] = field(default_factory=dict)
    detections: list[Detection] = field(default_factory=list)
    tiers: list[TierRecord] = field(default_factory=list)
    ran_on_c: set[str] = field(default_factory=set)
    halted: bool = False


def _matches(specs: Sequence[str], ids: Sequence[str]) -> list[str]:
    return [t for t in ids if any(t == s or t.startswith(s + "[") or t.startswith(s + "::") for s in specs)]


class Ladder:
    def __init__(
        self,
        co: Checkouts,
        target: Target,
        store: Store,
        options: Options,
        progress: Callable[[str], None] = lambda _m: None,
    ) -> None:
        self.co = co
        self.target = target
        self.store = store
        self.options = options
        self.progress = progress
        self.run_id = uuid.uuid4().hex[:16]
        self.state = _State()
        self.watch: list[str] = []  # changed modules, whose import origin every C run reports
        self.outside: set[str] = set()
        self.repo_key = os.path.realpath(co.repo)
        self.held = store.quarantined(self.repo_key)  # as it stood before this climb
        self._sandbox: Sandbox | None = None
        self.b_environment: Environment | None = None

    @property
    def sandbox(self) -> Sandbox:
        """Pinned once, when the first candidate code is about to run (T0 and T1 never need it)."""
        if self._sandbox is None:
            self._sandbox = pin_environment(
                self.target,
                self.co.scratch,
                self.options.seed,
                self.options.test_timeout,
                self.options.tier_budget,
                integrity.disabled_plugins(self.co.c_dir, self.target.pytest_args),
            )
            for missing in self._sandbox.missing:
                self.progress("pinning: missing %s" % missing)
        return self._sandbox

    def _pytest(self, checkout: pathlib.Path, ids: Sequence[str] | None, **kwargs: Any) -> pytest_run.PytestRun:
        run = pytest_run.run(self.target, checkout, ids, sandbox=self.sandbox, **kwargs)
        side = "B" if checkout.name.startswith("B") else "C"  # worktrees B, B-with-C-tests, C, C-as-submitted
        self._add((), {}, [d for d in network_detections(run.content.network, side) if d not in self.state.detections])
        return run

    # -- bookkeeping ---------------------------------------------------------------------------

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
        self.state.tiers.append(
            TierRecord(tier, status, duration, selected, run, suite_size, note, tuple(findings), tuple(not_run))
        )
        self.progress("%s %s: %s" % (tier.value, status.value, note))
        if status in (TierStatus.FAILED, TierStatus.INCONCLUSIVE) and not self.options.full:
            self.state.halted = True

    def _halted(self) -> bool:
        return self.state.halted

    def _add(
        self,
        results: Sequence[ValidationResult],
        annotations: Mapping[str, Annotation] = {},
        detections: Sequence[Detection] = (),
    ) -> None:
        self.state.results.extend(results)
        self.state.annotations.update(annotations)
        self.state.detections.extend(detections)

    def _run_c(self, ids: Sequence[str]) -> pytest_run.PytestRun:
        run = self._pytest(self.co.c_dir, ids, reruns=self.options.reruns, watch=self.watch)
        self.state.ran_on_c.update(t for t in ids if run.observation(t) is not None)
        self._ledger(run, "C")
        self._provenance(run.content.module_origins, "the tests")
        return run

    def _ledger(self, run: pytest_run.PytestRun, side: str) -> None:
        now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        rows = flake_rows(self.run_id, side, run.content.results.values(), now)
        if rows:
            self.store.quarantine(self.repo_key, rows)

    def _type(
        self,
        ids: Sequence[str],
        c_run: pytest_run.PytestRun,
        baseline: Mapping[str, Observation | None],
        origin_of: Callable[[str], Origin],
        designated: Sequence[str] = (),
        expected: Sequence[str] = (),
        affected: bool = True,
    ) -> tuple[Typed, list[str]]:
        """Typed results of the tests that reported, and the ids that did not run at all."""
        candidate = [quarantine(c_run.observation(t), self.held) for t in ids]
        return (
            type_evidence(
                candidate=[o for o in candidate if o is not None],
                baseline={t: quarantine(o, self.held) for t, o in baseline.items()},
                origin_of=origin_of,
                designated=set(designated),
                expected_change=set(expected),
                candidate_commit=self.co.candidate,
                exit_code=c_run.exit_code,
                flaky_history=self.store.flake_history(self.repo_key, ids),
                affected=lambda _t: affected,
            ),
            [t for t, o in zip(ids, candidate, strict=True) if o is None],
        )

    def _unrun(self, run: pytest_run.PytestRun, not_run: Sequence[str]) -> tuple[TierStatus, str] | None:
        """A tier whose tests did not all run proves nothing about the ones left out."""
        if not not_run:
            return None
        if run.budget_exhausted:
            return TierStatus.INCONCLUSIVE, "the tier's budget of %ss ran out: %d selected test(s) did not run" % (
                self.sandbox.tier_budget,
                len(not_run),
            )
        return TierStatus.FAILED, "%d selected test(s) did not run: the test process ended early (exit %d)" % (
            len(not_run),
            run.exit_code,
        )

    # -- the climb -----------------------------------------------------------------------------

    def climb(self) -> EvidenceRecord:
        started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        diff = compute(str(self.co.repo), self.co.baseline, self.co.candidate, PYTHON_FILES)
        self._static(Tier.T0, gates.parse_gate(self.co.read_candidate, _present(diff), self.co.candidate))
        integrity: dict[str, object] | None = None
        if not self._halted():
            # After the cheapest rung, before anything runs the candidate's code: a patch T0
            # rejects costs no more than it did, and every later tier sees the trusted tests.
            self._add((), {}, interference.scan(self.co.read_candidate, diff))
            integrity = self._integrity()
            if self.co.tested != self.co.candidate:
                diff = compute(str(self.co.repo), self.co.baseline, self.co.tested, PYTHON_FILES)
            py = [p for p in _present(diff) if p.endswith(".py")]
            self._static(Tier.T1, gates.lint_gate(self.co.c_dir, py, self.co.candidate))
        if not self._halted():
            self._t2([f.path for f in diff.of_kind(FileKind.SOURCE) if f.status != "D"])
        c_suite: list[str] = []
        markers: Mapping[str, list[str]] = {}
        if not self._halted():
            collect = self._pytest(self.co.c_dir, None, reruns=0, collect_only=True)
            if collect.exit_code == USAGE_ERROR and collect.content.collected is None:
                lines = collect.stderr_tail.splitlines()
                said = next((ln.strip() for ln in lines if ": error:" in ln), lines[-1] if lines else "no message")
                raise BadInput("pytest refused its command line in the candidate's checkout: %s" % said)
            if not collect.content.finished:
                message = "the candidate's collection process died (exit %d) before reporting" % collect.exit_code
                self._add((), {}, [Detection(DetectionKind.CRASH, message)])
            c_suite = list(collect.content.collected or [])
            markers = collect.content.markers
            if any(d.kind is DetectionKind.TAMPER for d in self.state.detections):
                self._as_submitted()
            self._tests(diff, c_suite, markers)
        for tier in Tier:
            if not any(t.tier is tier for t in self.state.tiers):
                self.state.tiers.append(TierRecord(tier, TierStatus.NOT_RUN, 0.0, 0, 0, None, "an earlier tier halted"))
        self.state.tiers.sort(key=lambda t: t.tier.value)
        # Measured again only if candidate code ran: it may have changed what is installed.
        env_c = self._environment(self.co.tested, fresh=self._sandbox is not None)
        env_b = self.b_environment
        if env_b is not None and env_b.fingerprint != env_c.fingerprint:
            self._add((), {}, [Detection(DetectionKind.ENVIRONMENT_DRIFT, _drift(env_b, env_c))])
        verdict = decide(self.state.tiers, self.state.results, self.state.detections)
        return EvidenceRecord(
            run_id=self.run_id,
            created=started,
            complete=True,
            repo=str(self.co.repo),
            baseline_commit=self.co.baseline,
            candidate_commit=self.co.candidate,
            environment=env_c,
            baseline_environment=env_b,
            results=tuple(self.state.results),
            annotations=self.state.annotations,
            detections=tuple(self.state.detections),
            exit_status=EXIT_CODES[verdict.verdict],
            baseline_run=None,
            collected=len(c_suite),
            not_run=tuple(t for t in c_suite if t not in self.state.ran_on_c),
            verdict=verdict,
            tiers=tuple(self.state.tiers),
            invocation={
                "python": self.target.python,
                "pytest_args": list(self.target.pytest_args),
                "pythonpath": list(self.target.pythonpath),
                "reruns": self.options.reruns,
                "tier_budget": self.options.tier_budget,
                "timeout": self.options.tier_budget,  # the 1.1 name of the tier budget
                "test_timeout": self.options.test_timeout,
                "seed": self.options.seed,
                "reproducers": list(self.options.reproducers),
                "expected_changes": list(self.options.expected_changes),
                "full": self.options.full,
                "integration_marker": self.options.integration_marker,
                "integration_globs": list(self.options.integration_globs),
                "tests_from": self.options.tests_from,
            },
            integrity=integrity,
            pinning=None if self._sandbox is None else self._sandbox.to_dict(),
        )

    def _as_submitted(self) -> None:
        """What the tampering was for: does the candidate's own tree collect anything at all?"""
        own = self._pytest(self.co.submitted_dir, None, reruns=0, collect_only=True)
        if not own.content.collected:
            message = "as submitted, the candidate's suite collects no test; the tiers ran the trusted tests"
            self._add((), {}, [Detection(DetectionKind.EMPTY_COLLECTION, message)])

    def _environment(self, commit: str, fresh: bool = False) -> Environment:
        """The target's fingerprint with the lock and requirements files of ``commit`` folded in."""
        return self.target.environment(fresh).with_lockfiles(lockfile_digest(str(self.co.repo), commit))

    def _integrity(self) -> dict[str, object]:
        """verify_test_integrity, before anything runs; the tests then run on the trusted ones."""
        trusted, label = self.co.trusted_tests(self.options.tests_from)
        report = integrity.verify_test_integrity(
            str(self.co.repo),
            self.co.baseline,
            trusted,
            self.co.candidate,
            PYTHON_FILES,
            self.options.expected_changes,
        )
        self._add((), {}, report.detections)
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

    def _static(self, tier: Tier, gate: gates.GateResult) -> None:
        start = time.perf_counter()
        self._add(gate.results)
        status = TierStatus.PASSED if gate.passed else TierStatus.FAILED
        if not gate.results:
            status = TierStatus.SKIPPED
        self._tier(tier, status, start, len(gate.results), len(gate.results), None, gate.note, gate.findings)

    def _t2(self, sources: Sequence[str]) -> None:
        start = time.perf_counter()
        gate, origins = gates.type_gate(
            self.co.c_dir, sources, self.co.candidate, self.target, self.co.b_dir, self.sandbox
        )
        self.watch = sorted(origins)
        self._provenance(origins, "the import probe")
        self._add(gate.results)
        status = TierStatus.SKIPPED if not gate.results else (TierStatus.PASSED if gate.passed else TierStatus.FAILED)
        self._tier(Tier.T2, status, start, len(gate.results), len(gate.results), None, gate.note, gate.findings)

    def _provenance(self, origins: Mapping[str, str | None], seen_by: str) -> None:
        """A changed module imported from outside C's checkout voids what the tests say about C."""
        checkout = os.path.realpath(self.co.c_dir) + os.sep
        for module, origin in sorted(origins.items()):
            if origin and not os.path.realpath(origin).startswith(checkout) and module not in self.outside:
                self.outside.add(module)
                message = "%s was imported from %s, not from the checkout %s (seen by %s)" % (
                    module,
                    origin,
                    self.co.c_dir,
                    seen_by,
                )
                self._add((), {}, [Detection(DetectionKind.IMPORT_OUTSIDE_CHECKOUT, message)])

    def _tests(self, diff: Diff, c_suite: list[str], markers: Mapping[str, list[str]]) -> None:
        c_dir = self.co.c_dir
        roots = [str(r.relative_to(c_dir)) if r != c_dir else "" for r in self.target.roots(c_dir)]
        if not c_suite:
            self._add((), {}, [Detection(DetectionKind.EMPTY_COLLECTION, "the candidate's suite collects no test")])
        plan = overlay.plan(str(self.co.c_dir), self.co.baseline, PYTHON_FILES)
        resolver = overlay.OriginResolver(str(self.co.c_dir), plan, "")
        asked: list[baseline_suite.BaselineSuite] = []

        def baseline() -> SuiteRun | None:
            if not asked:
                asked.append(self._baseline_suite())
            return asked[0].suite

        self._t3(plan, resolver, c_suite, baseline)
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
        graph = ImportGraph(self.co.c_dir, roots)
        selection = select_impacted_tests(c_suite, suite, diff, graph)
        t6 = integration_tests(
            c_suite, markers, self.options.integration_marker, self.options.integration_globs, diff, graph, roots
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
            self._test_tier(tier, ids, what, suite, resolver, len(c_suite))

    def _baseline_suite(self) -> baseline_suite.BaselineSuite:
        env = self.target.environment()
        key = baseline_suite.cache_key(
            self.co.repo, self.co.baseline, env, self.target, self.options.reruns, self.sandbox.identity()
        )
        binding = receipts.Binding(
            kind="suite",
            repo=self.repo_key,
            ref=self.co.baseline,
            head=self.co.baseline,
            checkout=self.repo_key,
            env_fingerprint=env.fingerprint,
            command="pytest suite on B, cache key %s" % key,
        )
        got = baseline_suite.baseline_suite(
            self.store, key, binding, self.target, self.co.b_dir, self.options.reruns, self.sandbox
        )
        if got.suite is None:
            self._add((), {}, [Detection(DetectionKind.RECEIPT_HELD, got.note)])
        else:
            self.b_environment = self._environment(self.co.baseline)
        self.progress("baseline suite on B: %s (%s)" % (got.how, got.note))
        return got

    def _t3(
        self,
        plan: overlay.OverlayPlan,
        resolver: overlay.OriginResolver,
        c_suite: list[str],
        baseline: Callable[[], SuiteRun | None],
    ) -> None:
        start = time.perf_counter()
        designated = _matches(self.options.reproducers, c_suite)
        expected = _matches(self.options.expected_changes, c_suite)
        unknown = [s for s in (*self.options.reproducers, *self.options.expected_changes) if not _matches([s], c_suite)]
        if unknown:
            raise BadInput("no collected test matches %s" % ", ".join(unknown))
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
        c_run = self._run_c(ids)
        b_tree = self.co.baseline_with_tests(plan)
        b_run = self._pytest(b_tree, ids, reruns=self.options.reruns)
        self._ledger(b_run, "B")
        if self.b_environment is None:
            self.b_environment = self._environment(self.co.baseline)
        b_obs: dict[str, Observation | None] = {t: b_run.observation(t) for t in ids}
        if expected:
            suite = baseline()
            b_obs.update({t: None if suite is None else suite.results.get(t) for t in expected})
        typed, not_run = self._type(ids, c_run, b_obs, resolver.origin, designated=reproducers, expected=expected)
        self._add(typed.results, typed.annotations, typed.detections)
        status, note = self._unrun(c_run, not_run) or self._judge_t3(typed, reproducers, expected)
        self._tier(Tier.T3, status, start, len(ids), len(ids) - len(not_run), len(c_suite), note, not_run=not_run)

    def _judge_t3(self, typed: Typed, reproducers: Sequence[str], expected: Sequence[str]) -> tuple[TierStatus, str]:
        by_id = {r.test_id: r for r in typed.results}
        classes = {t: typed.annotations[t].bc_class for t in by_id}
        reproducers = [t for t in reproducers if t in by_id]
        for tid in reproducers:
            if classes.get(tid) is BCClass.NO_FIX:
                return TierStatus.FAILED, "no-fix: reproducer %s fails on B and on C" % tid
            if classes.get(tid) is BCClass.REGRESSION or by_id[tid].candidate_result in C_FAILING:
                return TierStatus.FAILED, "reproducer %s fails on C (%s)" % (tid, by_id[tid].candidate_result.value)
        for tid in expected:
            if by_id[tid].candidate_result is not Outcome.PASS:
                return TierStatus.FAILED, "expected change %s does not pass on C" % tid
        flip = self._flip(typed)
        if flip:
            return TierStatus.FAILED, flip
        quarantined = [t for t in reproducers if Outcome.FLAKY in (by_id[t].candidate_result, by_id[t].baseline_result)]
        if quarantined:
            return TierStatus.INCONCLUSIVE, "reproducer %s is quarantined as flaky" % quarantined[0]
        if not reproducers:
            return TierStatus.INCONCLUSIVE, "no reproducer: the changed tests are all unchanged functions"
        if not any(by_id[t].bug_discriminating for t in reproducers):
            return TierStatus.INCONCLUSIVE, "no reproducer fails on B: nothing shows the bug fixed"
        n = sum(by_id[t].bug_discriminating for t in reproducers)
        return TierStatus.PASSED, "%d of %d reproducer(s) bug-discriminating" % (n, len(reproducers))

    def _flip(self, typed: Typed) -> str | None:
        for res in typed.results:
            if res.baseline_result is Outcome.PASS and res.candidate_result in C_FAILING:
                return "regression: %s passes on B, %s on C" % (res.test_id, res.candidate_result.value)
            if res.baseline_result is None and res.candidate_result in C_FAILING:
                return "%s %s on C and has no baseline result" % (res.test_id, res.candidate_result.value)
        return None

    def _test_tier(
        self,
        tier: Tier,
        ids: Sequence[str],
        what: str,
        suite: SuiteRun,
        resolver: overlay.OriginResolver,
        suite_size: int,
    ) -> None:
        start = time.perf_counter()
        todo = [t for t in ids if t not in self.state.ran_on_c]
        if not todo:
            self._tier(tier, TierStatus.SKIPPED, start, len(ids), 0, suite_size, "%s: nothing new to run" % what)
            return
        c_run = self._run_c(todo)
        typed, not_run = self._type(todo, c_run, suite.results, resolver.origin, affected=tier is not Tier.T7)
        detections = list(typed.detections)
        flip = self._flip(typed)
        if tier is Tier.T7:
            for res in typed.results:
                if res.baseline_result is Outcome.PASS and res.candidate_result in C_FAILING:
                    detections.append(
                        Detection(DetectionKind.SELECTION_GAP, "a PASS->FAIL flip escaped T4-T6", res.test_id)
                    )
        self._add(typed.results, typed.annotations, detections)
        quarantined = [r.test_id for r in typed.results if r.candidate_result is Outcome.FLAKY and tier is not Tier.T7]
        unrun = self._unrun(c_run, not_run)
        if flip:
            status, note = TierStatus.FAILED, flip
        elif unrun:
            status, note = unrun
        elif quarantined:
            status, note = TierStatus.INCONCLUSIVE, "obligation test %s is quarantined as flaky" % quarantined[0]
        else:
            both = sum(1 for r in typed.results if r.baseline_result in FAILING and r.candidate_result in FAILING)
            status, note = (
                TierStatus.PASSED,
                "%s: %d run, no flip%s" % (what, len(todo), "; %d already failing on B" % both if both else ""),
            )
        self._tier(tier, status, start, len(ids), len(todo) - len(not_run), suite_size, note, not_run=not_run)


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


def write_record(record: EvidenceRecord, path: pathlib.Path) -> None:
    """Write atomically (a reader never sees half a record), compact: it is a machine interface."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(record.to_dict(), separators=(",", ":")) + "\n")
    tmp.replace(path)
