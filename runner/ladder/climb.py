"""The climb: cheapest rung first, stop at the first one that fails. Mechanism, not policy.

The rungs live beside this module -- ``static`` (T0-T2 and the integrity check between T0 and
T1), ``reproduce`` (collection and T3), ``regress`` (B's suite and T4-T7) -- and every decision a
rung makes is a rule in ``judge``. The ``Ladder`` only sequences them, keeps what they established
(``Evidence``), remembers which rung is running, and turns all of it into the record.

An engine that ends without a usable answer (``ToolFailed``) ends the climb, and so does a store
another process locks mid-climb: the running rung is an ``error`` and the record says the climb
is incomplete and why.
"""

from __future__ import annotations

import dataclasses
import datetime
import time
import uuid
from collections.abc import Callable, Sequence

from pytest_evidence import overlay
from pytest_evidence.errors import StoreError, ToolFailed
from pytest_evidence.model import (
    Detection,
    DetectionKind,
    Environment,
    EvidenceRecord,
    Finding,
    Tier,
    TierRecord,
    TierStatus,
)
from pytest_evidence.store import Store, SuiteRun
from runner import ablation, baseline_suite
from runner.checkout import Checkouts, raise_swallowed_interrupt
from runner.diff import compute
from runner.ladder import ahead, judge, record, regress, reproduce, static
from runner.ladder.evidence import Evidence
from runner.ladder.invocation import Invocation
from runner.ladder.sides import Sides
from runner.sandbox import lockfile_digest
from runner.terminal.activity import ACTIVITY
from runner.verdict import decide, rejects


def rung_seconds(started: float, now: float, aside: tuple[float, float] | None) -> float:
    """A rung's duration, from ``started`` to ``now``, less what of it the span ``aside`` took:
    obtaining B's suite run, when the rung (T3 or T4) was the one to ask for it. That run serves
    every candidate against B and is reported once, as ``baseline_run``'s ``seconds``; counted
    in the rung, T4 against a fresh B and against a stored one read as one tier at two prices."""
    spent = 0.0
    if aside is not None:
        spent = max(0.0, min(aside[1], now) - max(aside[0], started))
    return round(now - started - spent, 3)


class Ladder:
    def __init__(
        self,
        co: Checkouts,
        store: Store,
        invocation: Invocation,
        progress: Callable[[str], None] = lambda _m: None,
        before_tests: Callable[[], None] = lambda: None,
    ) -> None:
        """``before_tests``: what must be settled before the first test process starts (the
        operator's pytest arguments, checked beside the static tiers); it raises ``BadInput``."""
        self.co = co
        self.before_tests = before_tests
        self.store = store
        self.invocation = invocation
        self.target = invocation.target
        self.progress = progress
        self.run_id = uuid.uuid4().hex[:16]
        self.started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        self.evidence = Evidence()
        self.sides = Sides(co, store, invocation, self.evidence, self.run_id, progress)
        self.test_modules: tuple[str, ...] = ()  # what pytest takes for a test module (``static.test_modules``)
        self.written: frozenset[str] = frozenset()  # the files C added or changed
        self.collected: list[str] = []
        self.uncollected: list[str] = []  # named tests whose module does not collect on C
        self.replaced: dict[str, judge.Replaced] = {}  # renamed parametrizations, by function (``lost_tests``)
        self.integrity: dict[str, object] | None = None
        self.trusted: frozenset[str] = frozenset()  # files laid from a trusted source other than B
        self.b_environment: Environment | None = None
        self.open_receipt: str | None = None  # a receipt whose intent this climb wrote, not yet completed
        self.baseline_run: dict[str, object] | None = None  # how B's suite was obtained
        self.baseline_spent: tuple[float, float] | None = None  # when: no tier's time (``tier``)
        self.selection: dict[str, object] | None = None  # T5's selection, every test with its reason
        self.ahead: ahead.Ahead | None = None  # T5's impact, computed beside T3's stability runs
        self.audit: dict[str, object] | None = None  # the audit tier's kill rates and reproducer check
        self.stopped: str | None = None  # why the climb stopped with no tier failed: an attack
        self._rung = Tier.T0
        self._rung_started = time.perf_counter()

    # -- what the rungs call -------------------------------------------------------------------

    def enter(self, tier: Tier) -> float:
        """The rung now running: an engine failure from here on is this rung's error."""
        raise_swallowed_interrupt()
        self._rung, self._rung_started = tier, time.perf_counter()
        ACTIVITY.phase(tier.value)
        return self._rung_started

    def tier(
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
        group: tuple[str, int] | None = None,
    ) -> None:
        """Record a rung; ``group``: the grouped session and group it ran as (its boundary)."""
        duration = rung_seconds(started, time.perf_counter(), self.baseline_spent)
        where = None if group is None else {"session": group[0], "group": group[1]}
        self.evidence.tier(
            TierRecord(tier, status, duration, selected, run, suite_size, note, tuple(findings), tuple(not_run), where)
        )
        self.progress("%s %s: %s" % (tier.value, status.value, note))

    def halted(self) -> bool:
        return self.evidence.halted(self.invocation.full)

    def sized(self) -> None:
        """The suite is collected now: T3, which ran before (on its own files), learns its size."""
        self.evidence.tiers = [
            dataclasses.replace(t, suite_size=len(self.collected)) if t.tier is Tier.T3 else t
            for t in self.evidence.tiers
        ]

    def measure_baseline(self) -> None:
        """B's environment, once B has run: what ``environment_drift`` compares C's with."""
        if self.b_environment is None:
            self.b_environment = self._with_lockfiles(self.target.environment(), self.co.baseline)

    # -- the climb -----------------------------------------------------------------------------

    def climb(self) -> EvidenceRecord:
        try:
            try:
                self._climb()
            finally:  # before the record, which measures C's environment again
                self.sides.release()
        except (ToolFailed, StoreError) as exc:  # an engine, or the store, stopped answering mid-climb
            message = "%s [%s]" % (exc, exc.slug)
            self.tier(self._rung, TierStatus.ERROR, self._rung_started, 0, 0, None, message)
            return self.record(incomplete="%s did not finish: %s" % (self._rung.value, message))
        return self.record()

    def _climb(self) -> None:
        self.test_modules = static.test_modules(self)
        diff = compute(str(self.co.repo), self.co.baseline, self.co.candidate, self.test_modules)
        self.written = frozenset(f.path for f in diff.files if f.status != "D")
        static.parse(self, diff)
        if self.halted():
            return
        diff = static.protect(self, diff)
        attacks = [d for d in self.evidence.detections if rejects(d)]
        if attacks and not self.invocation.full:
            # REJECTED whatever the tiers would say: climbing on pays for nothing (--full climbs on).
            kinds = ", ".join(sorted({d.detail or d.kind.value for d in attacks}))
            self.stopped = "not run: the candidate attacked the referee (%s), REJECTED whatever the tiers say" % kinds
            self.progress("stopped: the candidate attacked the referee (%s)" % kinds)
            if self.invocation.reproducers:  # else a mistyped id would go unsaid under the verdict
                named = ", ".join(self.invocation.reproducers)
                self.progress("--reproducer %s not checked: the climb stopped at the attack" % named)
            self.before_tests()
            reproduce.tampered_collection(self)  # what the tampering was for: does its tree collect anything?
            return
        static.lint(self, diff)
        if self.halted():
            return
        if self.sides.replayed:
            self.co.check_out_b_ahead()
        static.types(self, diff)
        if self.halted():
            return
        self.before_tests()
        self.sides.plan = overlay.plan(str(self.co.c_dir), self.co.baseline, self.test_modules)
        if self.sides.replayed:
            self.co.lay_over_b_ahead(self.sides.plan)
        resolver = overlay.OriginResolver(str(self.co.c_dir), self.sides.plan, "")
        asked: list[baseline_suite.BaselineSuite] = []

        def suite(tests: int = 0) -> SuiteRun | None:
            """B's stored suite run, obtained once (``tests``: the suite's size, when known)."""
            if not asked:
                asked.append(regress.suite_of_b(self, tests))
            return asked[0].suite

        reproduce.reproducers(self, diff, resolver, suite)
        if self.halted():
            return
        regress.tiers(self, diff, resolver, suite)

    # -- the record ----------------------------------------------------------------------------

    def record(self, incomplete: str | None = None, judged: bool = True) -> EvidenceRecord:
        """The record of what the climb established; ``judged=False``: no verdict (it was cut short).

        The candidate's environment is measured again only if candidate code ran in a climb that
        ended on its own: it may have changed what is installed.
        """
        if self.sides.pinned and judged:
            measured, unanswered = self.target.environment_after_tests()
        else:
            measured, unanswered = self.target.environment(), None
        env_c = self._with_lockfiles(measured, self.co.tested)
        if unanswered:
            why = "after C's code ran, the target could not be described: %s" % unanswered
            self.evidence.detect([Detection(DetectionKind.ENVIRONMENT_DRIFT, why)])
        env_b = self.b_environment
        if self.sides.pinned:
            injected = self.sides.sandbox.injected_versions()
            env_c = dataclasses.replace(env_c, injected=injected)
            env_b = env_b and dataclasses.replace(env_b, injected=injected)
        if env_b is not None and env_b.fingerprint != env_c.fingerprint:
            self.evidence.detect([Detection(DetectionKind.ENVIRONMENT_DRIFT, _drift(env_b, env_c))])
        attempts = self.evidence.attempts
        # Without the B/C contrast (an ablation) no endpoint is known to be new on C.
        allow = self.invocation.allow_new_network or not self.sides.replayed
        self.evidence.detect(judge.network_attempts(attempts["B"], attempts["C"], allow))
        if self.sides.replayed:  # without B's runs, nothing found replaced is known to be C's doing
            self.evidence.detect(self._framework_replacements())
        bare = ablation.bare(self.invocation)
        verdict = decide(self.evidence.tiers, self.evidence.results, self.evidence.detections, bare) if judged else None
        if verdict is not None and any(rejects(d) for d in self.evidence.detections):
            self.sides.forget_attacked()
        frame = record.Frame(
            run_id=self.run_id,
            created=self.started,
            repo=str(self.co.repo),
            baseline=self.co.baseline,
            candidate=self.co.candidate,
            invocation=self.invocation,
            collected=tuple(self.collected),
            integrity=self.integrity,
            pinning=self.sides.pinning(),
            baseline_run=self.baseline_run,
            selection=self.selection,
            audit=self.audit,
            stopped=self.stopped,
        )
        return record.assemble(frame, self.evidence, verdict, env_c, env_b, incomplete)

    def _framework_replacements(self) -> list[Detection]:
        """The test frameworks' objects C's runs found replaced that no B run vouches for
        (``judge.framework_replacements``). Where B's own suite on B's code ran, it alone vouches
        for what was replaced by the end of collection: B's runs of C's new test files would
        vouch for what those files replace as they are imported (a review's cheat put it
        there). What B's runs found as a test ran vouches too -- library code an honest new test
        reaches on both sides -- unless what C had in its place was written in C's own files (a
        review's cheat replaced it in C's library and had a new test replace it on B as well)."""
        replaced, suite = self.evidence.replaced, self.evidence.replaced_by_suite
        origins = self.evidence.replaced_from_c  # where C's ran, its checkout was made
        c_dir = str(self.co.c_dir) if origins else ""
        by_c = {n for n, at in origins.items() if any(judge.written_by_c(o, c_dir, self.written) for o in at)}
        runs = {(t, n) for t, n in replaced["B"] if n not in by_c and (t is not None or suite is None)}
        uncollected = {m for m in self.evidence.uncollected_on_b if m.split("::", 1)[0] in self.written}
        b_side = judge.BSide(replaced["B"], self.evidence.ran_on_b, uncollected)
        return judge.framework_replacements((suite or set()) | runs, replaced["C"], b_side, by_c)

    def _with_lockfiles(self, environment: Environment, commit: str) -> Environment:
        """The target's fingerprint with the lock and requirements files of ``commit`` folded in."""
        return environment.with_lockfiles(lockfile_digest(str(self.co.repo), commit))


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
