"""The test processes of one climb: C, and B with C's (trusted) tests laid over it, pinned alike.

Every pytest process of a climb starts here, so every one of them runs in the same sandbox (seed,
network, per-test timeout, guard plugins), reports its refused network attempts, feeds the flake
ledger, and says where the changed modules were imported from. A process that ends without a
usable answer is a ``ToolFailed``: the tier that asked is an error, never a pass.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import os
import pathlib
import random
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from pytest_evidence import gitops, overlay
from pytest_evidence.assemble import (
    MARKS_MOVED,
    Typed,
    flake_rows,
    moved_by_marks,
    network_detections,
    quarantine,
    type_evidence,
)
from pytest_evidence.errors import ToolFailed
from pytest_evidence.model import Detection, DetectionKind, Failure, FailureKind, Observation, Origin, Outcome
from pytest_evidence.store import Store, default_store
from runner import ablation, compiled, integrity, pytest_run
from runner.checkout import Checkouts, raise_swallowed_interrupt
from runner.ladder import judge
from runner.ladder.evidence import Evidence
from runner.ladder.invocation import Invocation
from runner.pytest_session import GroupedSession, SessionEnded
from runner.sandbox import Sandbox, pin_environment, unpinned


class Sides:
    def __init__(
        self,
        co: Checkouts,
        store: Store,
        invocation: Invocation,
        evidence: Evidence,
        run_id: str,
        progress: Callable[[str], None],
    ) -> None:
        self.co = co
        self.store = store
        self.invocation = invocation
        self.target = invocation.target
        self.evidence = evidence
        self.run_id = run_id
        self.progress = progress
        self.repo_key = os.path.realpath(co.repo)
        # Quarantined before this climb, and joined by every flip this climb sees: a test that
        # flipped at T3 is flaky at T7 too, whatever it does there.
        self.held = store.quarantined(self.repo_key)
        self.held_before = frozenset(self.held)
        self.flipped_on_c: set[str] = set()  # tests this climb's runs on C put in the ledger
        # C's fresh tests whose outcome the referee's marks changed (``moved_by_marks``): flaky
        # on C for the rest of this climb. Not in the flake ledger -- the candidate's code reads
        # the marks, the test is not flaky by itself, and held there it would hold every later
        # candidate's run of it -- nor on B, which did not move.
        self.marked: dict[str, Observation] = {}
        # The seed of T3's first runs, which change the referee's marks (``first_box``): drawn
        # from the run id, which no candidate can know ahead (a fixed one, a patch could accept too).
        self.varied_seed = _varied_seed(run_id, invocation.seed)
        self.varied_sides: set[str] = set()  # the sides whose T3 first run changed the marks
        self.watch: list[str] = []  # changed modules, whose import origin every C run reports
        self.plan: overlay.OverlayPlan | None = None  # C's test files against B, once planned
        self._outside: set[str] = set()
        self._sandbox: Sandbox | None = None
        self._suite: GroupedSession | None = None  # C's T4-T7 session, started ahead of its turn

    @property
    def pinned(self) -> bool:
        """Whether any candidate code has run (T0 and T1 never pin)."""
        return self._sandbox is not None

    @property
    def sandbox(self) -> Sandbox:
        """Pinned once, when the first candidate code is about to run."""
        if self._sandbox is None and self.invocation.ablated("pinning"):
            self._sandbox = unpinned(self.invocation.seed, self.invocation.tier_budget)
        if self._sandbox is None:
            store, elsewhere = self._store_dir()
            self._sandbox = pin_environment(
                self.target,
                self.invocation.seed,
                self.invocation.test_timeout,
                self.invocation.tier_budget,
                integrity.disabled_plugins(self.co.c_dir, self.target.pytest_args),
                store,
                compiled.location(self.co.repo),
                self._repository(),
            )
            if elsewhere is not None:
                self._sandbox = replace(self._sandbox, in_reach=elsewhere)
            for missing in self._sandbox.unmet:
                self.progress("pinning: missing %s" % missing)
        return self._sandbox

    def _repository(self) -> tuple[str, ...]:
        """The user's work tree and the repository's git directory (outside it for a worktree)."""
        common = gitops.common_dir(str(self.co.repo))
        return (str(self.co.repo), *([common] if common else []))

    def _store_dir(self) -> tuple[str | None, str | None]:
        """The store's directory to hide from the test processes, or why it is not hidden: only
        the default one (``evidence`` in the repository's git directory) holds nothing else --
        a store named elsewhere may sit beside what the tests need."""
        store = os.path.realpath(self.store.path)
        default = os.path.dirname(os.path.realpath(default_store(str(self.co.repo))))
        if os.path.dirname(store) == default:
            return default, None
        return None, "the evidence store %s is not the default one: test processes can reach it" % self.store.path

    def first_box(self, side: str) -> Sandbox:
        """The sandbox where ``side``'s code runs first -- T2's import probe, T3's first run --
        with the referee's marks changed (``Sandbox.vary``). C's code runs there before it runs
        anywhere with them, so a patch switched on by a mark -- and kept on by what it leaves
        behind, a file beside its module or in the temporary directory -- is off there, as in
        production: its reproducer fails, and T3 with it. B's first run is C's like for like.
        Every later run has the marks, as B's stored suite run had them."""
        box = self.sandbox.vary(self.varied_seed)
        if box is not self.sandbox:
            self.varied_sides.add(side)
        return box

    def pytest(
        self, checkout: pathlib.Path, ids: Sequence[str] | None, answer: bool = True, **kwargs: Any
    ) -> pytest_run.PytestRun:
        """One pinned pytest process (a collection, or B's whole suite); ``answer``: a process that
        reported nothing is a ``ToolFailed``."""
        return self.checked(
            pytest_run.run(self.target, checkout, ids, sandbox=self.sandbox, **kwargs), checkout, answer
        )

    def checked(self, run: pytest_run.PytestRun, checkout: pathlib.Path, answer: bool = True) -> pytest_run.PytestRun:
        """What every ended process tells besides its results: a forged stream, network attempts,
        the test frameworks' objects it found replaced."""
        raise_swallowed_interrupt()
        side = self.co.side(checkout)
        forged = run.tamper(side)
        self.evidence.detect([forged] if forged is not None else [])
        self.evidence.detect(network_detections([a for a in run.content.network if a[2]], side))
        self.evidence.attempts[side].update((t, address) for t, address, blocked in run.content.network if not blocked)
        self.evidence.replaced[side].update(run.content.replaced)
        if side == "B":
            self.evidence.ran_on_b.update(run.content.results)
            self.evidence.uncollected_on_b.update(run.content.collect_errors)
        else:
            for name, origin in run.content.replaced_from.items():
                self.evidence.replaced_from_c.setdefault(name, set()).add(origin)
        if answer and not run.answered and forged is None:  # a forgery is the answer: REJECTED
            raise ToolFailed("pytest ended (exit %d) without reporting on %s: %s" % (run.exit_code, side, run.said))
        if side == "C":
            self.provenance(run.content.module_origins, "the tests")
        return run

    def session(
        self,
        checkout: pathlib.Path,
        files: Sequence[str] | None,
        reruns: int | None = None,
        one_budget: bool = False,
        sandbox: Sandbox | None = None,
    ) -> GroupedSession:
        """A grouped session (``files``: the test files it collects; None: the whole suite), with
        the same arguments on either side -- C's watch list included: an argument that differed
        between the sides would tell a test its side. ``reruns``: the flake policy's in-process
        reruns of a failure (None: the invocation's); ``one_budget``: its groups are one tier's;
        ``sandbox``: another than the climb's (``Sandbox.vary``)."""
        reruns = self.invocation.reruns if reruns is None else reruns
        sandbox = self.sandbox if sandbox is None else sandbox
        return GroupedSession(
            self.target, checkout, files, sandbox=sandbox, reruns=reruns, watch=self.watch, one_budget=one_budget
        )

    def group(self, session: GroupedSession, number: int, side: str) -> pytest_run.PytestRun:
        """Group ``number`` of ``session``: its view at the barrier, or the ended process's run."""
        ids = session.groups[number]
        try:
            run = session.group(number)
            forged = run.tamper(side)
            self.evidence.detect([forged] if forged is not None else [])
        except SessionEnded as ended:
            run = ended.run
        if side == "C":
            self.evidence.ran_on_c.update(t for t in ids if run.observation(t) is not None)
        self.ledger([run.observation(t) for t in ids], side)
        return run

    @staticmethod
    def all_collected(sessions: Iterable[GroupedSession]) -> None:
        """Wait until each of ``sessions`` collected, or ended trying (its turn says which):
        processes started together start and collect side by side, and their tests then run with
        no other process of the climb busy beside them -- one side's tests at a time, never under
        the load of another's collection."""
        for session in sessions:
            try:
                session.collected()
            except SessionEnded:
                pass

    def only_group(self, session: GroupedSession, checkout: pathlib.Path, ids: Sequence[str]) -> pytest_run.PytestRun:
        """``ids``, the one group of ``session`` on ``checkout``: the whole process's run."""
        self.first_group(session, [ids], self.co.side(checkout))
        return self.checked(session.close(), checkout)

    @property
    def replayed(self) -> bool:
        """Whether tests run on B at all: not when the A/B harness ablates the B/C contrast."""
        return not self.invocation.ablated("baseline-replay")

    @property
    def b_dir(self) -> pathlib.Path:
        """B with C's test files laid over it: where every test runs on B."""
        assert self.plan is not None, "the overlay is planned before anything runs on B"
        assert self.replayed, "no test runs on B when baseline replay is ablated"
        return self.co.baseline_with_tests(self.plan)

    def replay_b(self, groups: Sequence[Sequence[str]]) -> pytest_run.PytestRun:
        """``groups`` on B with C's test files laid over it, in one grouped session, one after
        the other: a C session's groups through the one whose flips are confirmed."""
        with self.session(self.b_dir, None) as session:
            self.first_group(session, groups, "B")
            for number in range(1, len(groups)):
                if session.final is not None:
                    break
                self.group(session, number, "B")
            return self.checked(session.close(), self.b_dir)

    def suite_ahead(self) -> GroupedSession:
        """C's T4-T7 session, started now, ahead of its turn (``suite_session`` takes it)."""
        assert self._suite is None, "one suite session per climb"
        self._suite = self._suite_of_c()
        return self._suite

    def suite_session(self) -> GroupedSession:
        """C's T4-T7 session: the one started ahead, else a new one."""
        session, self._suite = self._suite, None
        return session if session is not None else self._suite_of_c()

    def _suite_of_c(self) -> GroupedSession:
        """A session of C's whole suite, which imports every module: the bytecode B's suite run
        compiled goes first into C's checkout for the files C did not change (``compiled``)."""
        if self.sandbox.bytecode is not None:
            compiled.seed(self.target, self.co.c_dir, self.sandbox.bytecode)
        return self.session(self.co.c_dir, None)

    def release(self) -> None:
        """End the suite session started ahead if the climb halted before its turn."""
        if self._suite is not None:
            self._suite.discard()
            self._suite = None

    def first_session(self, side: str, files: Sequence[str]) -> GroupedSession:
        """T3's grouped session on ``side`` (B: with C's test files laid over it), collecting
        ``files``, within one tier's budget, the referee's marks changed (``first_box``)."""
        checkout = self.co.c_dir if side == "C" else self.b_dir
        return self.session(checkout, files, one_budget=True, sandbox=self.first_box(side))

    def first_group(
        self, session: GroupedSession, groups: Sequence[Sequence[str]], side: str, once: Sequence[str] = ()
    ) -> pytest_run.PytestRun:
        """Collect, plan ``groups`` (on B, a C session's: like for like) and run the first on
        ``side``: its view at the barrier, or the ended process's run. ``once``: tests the
        stability runs will repeat, whose failure is not rerun in process (``steady``)."""
        try:
            session.collected()
        except SessionEnded as ended:
            return ended.run
        session.plan(groups, once)
        return self.group(session, 0, side)

    def ledger(self, observations: Iterable[Observation | None], side: str) -> None:
        if self.invocation.ablated("flake-policy"):  # the A/B harness's ablation: nothing quarantined
            return
        now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        rows = flake_rows(self.run_id, side, observations, now)
        if rows:
            self.store.quarantine(self.repo_key, rows)
        if side == "C":
            self.flipped_on_c.update(row[0] for row in rows)
        for test_id, run_id, row_side, seq, digest, _ in rows:
            self.held.setdefault(test_id, []).append("%s:%s:%s:%s" % (run_id, row_side, seq, digest))

    def forget_attacked(self) -> None:
        """The candidate attacked the referee: what its code made flip on C says nothing about
        the tests, and held in the ledger it made the next honest candidate INCONCLUSIVE (a
        review's). The quarantines this climb began on C end, by this run; written when they
        were, so a climb cut short before its verdict leaves them standing."""
        now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        for test_id in sorted(self.flipped_on_c - self.held_before):
            self.store.clear_quarantine(self.repo_key, test_id, now, by=self.run_id)

    def steady(
        self,
        ids: Sequence[str],
        files: Sequence[str],
        fresh: Sequence[str],
        c_first: pytest_run.PytestRun,
        b_first: pytest_run.PytestRun | None,
        beside: Sequence[GroupedSession] = (),
        then: Callable[[], None] = lambda: None,
    ) -> None:
        """Run the ``fresh`` tests of T3's selection ``ids`` again, collecting ``files`` (a
        module's import-time effects reach every test), in ``stability_runs`` - 1 further runs per
        side; a fresh test whose outcome differs between a side's runs is ``flaky`` in that side's
        first run (quarantined, never evidence). The further runs interleave B and C in an order
        drawn from the run id, so a test that counts its runs in shared state cannot pass on C and
        fail on B by design. They do not rerun a failure in process: each is itself a repeat, and
        a failure that passes in any of them makes the test flaky just as an in-process rerun
        would -- at a third of the cost of a failing reproducer on B, where failing is what it
        should do.

        The further runs first run the fresh tests alone (``alone``): the tests between them are
        most of a changed file's and cost most of the time, and a test whose outcome they do not
        change gives its first run's outcome again. When any fresh test, on either side, gives
        another outcome there than in its first run (or none where it had one) while its runs
        alone agree among themselves -- a test that depends on what ran before it, or a flake --
        every fresh test runs again on both sides, in ``ids``' order through the test after the
        last fresh one (``through``), as many times; those runs decide (``settled``), T3's order
        being what the first runs ran: a test the tests before it make pass is no flake. Runs
        alone that disagree among themselves, or a first run flaky in process, make it flaky
        without them.

        A test that timed out in B's first run (``waited``) is left out of B's runs alone: a
        timeout is neither a pass nor a failure (``classify`` gives it no class), so no repeat on
        B can make a fresh one evidence of a fix or of a regression, and each would wait out the
        per-test timeout again -- three timeouts for every certify of a fix of a hang. What its
        repeats could still find is a flake of B's own (a hang in one run, a pass or a quick
        failure in another), which would hold T3 inconclusive and quarantine the test: not
        looked for. Its B outcome is its first run's. Where it is a fresh test's next, another
        stands in for it or it stays (``alone``); C repeats it as any other, and in T3's order
        (``through``) it runs on both sides.

        The first runs changed the referee's marks (``first_box``) and the further runs have
        them: a fresh test whose further runs agree on an outcome its first run did not give runs
        again with and without them (``confirm_marks``) and, when the difference repeats, is
        flaky for this climb only, said moved by the marks (``marks_moved``), out of the ledger.

        A fresh test that a further C run, ended normally, did not collect has an id that changes
        from one collection to the next: it leaves C's first run too, as never collected, and
        ``type`` names it ``unstable_test_id``. ``b_first`` None: B does not run (baseline replay
        ablated), and C's further runs still do. ``beside``: sessions started with the further
        runs alone, which collect before any of their tests runs too; ``then`` is called once all
        have collected, before any test runs (work to do beside the runs)."""
        firsts = {"C": c_first} if b_first is None else {"C": c_first, "B": b_first}
        varied = self.varied_sides.intersection(firsts)
        apart = {"C": alone(ids, fresh)}
        if b_first is not None:
            apart["B"] = alone(ids, fresh, self.waited(b_first, ids))
        alone_runs = self.further(apart, files, beside, then)
        in_order: dict[str, list[pytest_run.PytestRun]] = {side: [] for side in firsts}
        still = [t for t in fresh if t not in _moving(fresh, alone_runs["C"])]
        if any(
            _unsettled(first, alone_runs[side], [t for t in still if t in apart[side]], side)
            for side, first in firsts.items()
        ):
            in_order = self.further({side: through(ids, fresh) for side in firsts}, files)
        before = {side: {t: first.observation(t) for t in fresh} for side, first in firsts.items()}
        for side, outcomes in steadied(fresh, firsts, alone_runs, in_order, varied).items():
            suspects = {t: o for t, o in outcomes.items() if o is not None and moved_by_marks(o.failure)}
            if suspects:
                again = self.confirm_marks(side, alone(ids, list(suspects)), files)
                for t, moved in suspects.items():
                    kept = _confirmed(moved, before[side][t], *(r.observation(t) for r in again))
                    outcomes[t] = firsts[side].content.results[t] = kept
            self.ledger([o for o in outcomes.values() if o is None or not moved_by_marks(o.failure)], side)
            if side == "C":
                self.marked.update((t, o) for t, o in outcomes.items() if o is not None and moved_by_marks(o.failure))

    def confirm_marks(self, side: str, ids: Sequence[str], files: Sequence[str]) -> list[pytest_run.PytestRun]:
        """``ids`` once more on ``side`` with the marks and once without (in an order drawn from
        the run id), started together: a difference the marks made once must be made again, or
        it was a flake that landed in the run that changed them (click 8.4.1's racy pager test
        under load did so about one certify in two, when the varied run was the last)."""
        checkout = self.co.c_dir if side == "C" else self.b_dir
        boxes = [self.sandbox, self.sandbox.vary(self.varied_seed)]
        order = [0, 1] if random.Random(self.run_id + side).random() < 0.5 else [1, 0]
        with contextlib.ExitStack() as stack:
            sessions = {i: stack.enter_context(self.session(checkout, files, 0, sandbox=boxes[i])) for i in order}
            self.all_collected(sessions.values())
            runs = {i: self.only_group(sessions[i], checkout, ids) for i in order}
        return [runs[0], runs[1]]

    def waited(self, first: pytest_run.PytestRun, ids: Sequence[str]) -> set[str]:
        """The tests of ``ids`` whose ``first`` run ended in a per-test timeout that waited: a
        second or more, pytest-timeout in force (then the tier's budget marks no test; a message
        alone is the test's to write)."""
        if not self.sandbox.test_timeout_held:
            return set()
        observed = (first.observation(t) for t in ids)
        return {o.test_id for o in observed if o is not None and o.outcome is Outcome.TIMEOUT and o.duration >= 1.0}

    def further(
        self,
        ids: Mapping[str, Sequence[str]],
        files: Sequence[str],
        beside: Sequence[GroupedSession] = (),
        then: Callable[[], None] = lambda: None,
    ) -> dict[str, list[pytest_run.PytestRun]]:
        """``stability_runs`` - 1 further runs on each side of ``ids`` (side: its tests; none on a
        side given none), with the marks, in an order drawn from the run id, none rerunning a
        failure in process (``steady``)."""
        schedule = [side for side, some in ids.items() if some] * (self.invocation.stability_runs - 1)
        random.Random(self.run_id).shuffle(schedule)
        again: dict[str, list[pytest_run.PytestRun]] = {side: [] for side in ids}
        checkouts = [self.co.c_dir if side == "C" else self.b_dir for side in schedule]
        with contextlib.ExitStack() as stack:
            # Each further run is a process start and a collection before its tests: the
            # processes start and collect together, and run their tests one at a time in order.
            sessions = [stack.enter_context(self.session(checkout, files, 0)) for checkout in checkouts]
            self.all_collected([*sessions, *beside])
            then()
            for side, checkout, session in zip(schedule, checkouts, sessions, strict=True):
                again[side].append(self.only_group(session, checkout, ids[side]))
        return again

    def pinning(self) -> dict[str, Any] | None:
        """The record's ``pinning`` (None: no candidate code ran); its ``varied`` None when no
        T3 first run changed the marks."""
        if not self.pinned:
            return None
        varied = {"seed": self.varied_seed, "sides": sorted(self.varied_sides)}
        return {**self.sandbox.to_dict(), "varied": varied if self.varied_sides else None}

    def type(
        self,
        ids: Sequence[str],
        c_run: pytest_run.PytestRun,
        baseline: Mapping[str, Observation | None] | None,
        origin_of: Callable[[str], Origin],
        designated: Sequence[str] = (),
        expected: Sequence[str] = (),
        affected: bool = True,
        exclusive: bool = False,
    ) -> tuple[Typed, list[str], list[str]]:
        """Typed results of the tests that reported; the ids the process left unrun; unstable ids.

        ``baseline`` None: no B outcome to contrast with, as when baseline replay is ablated (then
        a stored B outcome given is not used either). The ``typing`` ablation strips the types.

        A selected id that a process which ended normally never collected did not go missing
        because the process died: its id changed between collections (a timestamp or a random
        value in a parametrization), so it cannot be selected at all. It is an
        ``unstable_test_id`` detection, not an early end.
        """
        candidate = [self.moved(quarantine(c_run.observation(t), self.held)) for t in ids]
        absent = [t for t, o in zip(ids, candidate, strict=True) if o is None]
        seen = set(c_run.content.collected or ())
        normal = c_run.content.finished and not c_run.budget_exhausted
        unstable = [t for t in absent if normal and t not in seen]
        self.evidence.detect(
            Detection(
                DetectionKind.UNSTABLE_TEST_ID,
                "not collected when its tier ran: its id changes from one collection to the next, "
                "so it cannot be selected and did not run",
                t,
            )
            for t in unstable
        )
        replay = None if baseline is None or not self.replayed else baseline
        typed = type_evidence(
            candidate=[o for o in candidate if o is not None],
            baseline=None if replay is None else {t: quarantine(o, self.held) for t, o in replay.items()},
            origin_of=origin_of,
            designated=set(designated),
            expected_change=set(expected),
            candidate_commit=self.co.candidate,
            exit_code=c_run.exit_code,
            flaky_history=self.store.flake_history(self.repo_key, ids),
            affected=lambda _t: affected,
            exclusive=exclusive,
        )
        if self.invocation.ablated("typing"):
            typed = ablation.untyped(typed)
        else:
            self.evidence.detect(judge.silenced(typed.results))
        return typed, [t for t in absent if t not in unstable], unstable

    def moved(self, observation: Observation | None) -> Observation | None:
        """C's ``observation``, flaky whatever it says if the marks moved its test at T3."""
        marked = None if observation is None else self.marked.get(observation.test_id)
        if observation is None or marked is None or observation.outcome is Outcome.FLAKY:
            return observation
        return replace(observation, outcome=Outcome.FLAKY, failure=marked.failure)

    def provenance(self, origins: Mapping[str, str | None], seen_by: str) -> None:
        """A changed module imported from outside C's checkout voids what the tests say about C."""
        checkout = os.path.realpath(self.co.c_dir) + os.sep
        for module, origin in sorted(origins.items()):
            if origin and not os.path.realpath(origin).startswith(checkout) and module not in self._outside:
                self._outside.add(module)
                message = "%s was imported from %s, not from the checkout %s (seen by %s)" % (
                    module,
                    origin,
                    self.co.c_dir,
                    seen_by,
                )
                self.evidence.detect([Detection(DetectionKind.IMPORT_OUTSIDE_CHECKOUT, message)])


def alone(ids: Sequence[str], fresh: Collection[str], waited: Collection[str] = ()) -> list[str]:
    """Each of ``fresh`` with the test after it in ``ids``, in ``ids``' order: pytest tears a
    test's fixtures down as its next test needs (``nextitem``), so with the next test kept a
    fresh test's teardown is the one its first run had, teardown errors included.

    ``waited``: tests left out (each timed out in this side's first run, ``Sides.waited``). A
    fresh test among them is not run; where one is a fresh test's next, the first test after it
    not left out stands in -- when pytest tears the fresh test's fixtures down alike before
    either (``_parents``: the same ones in common); where none does, it stays and runs."""
    keep = set()
    for i, f in enumerate(ids):
        if f not in fresh or f in waited:
            continue
        keep.add(f)
        after = ids[i + 1 : i + 2]
        if after and after[0] in waited:
            stand_in = next((t for t in ids[i + 2 :] if t not in waited), None)
            after = [stand_in] if stand_in is not None and _common(f, stand_in) == _common(f, after[0]) else after
        keep.update(after)
    return [t for t in ids if t in keep]


def _parents(test_id: str) -> list[str]:
    """The nodes above a test, as pytest sets them up and tears them down: its directories, its
    module, its classes (a parametrization's brackets may hold anything)."""
    path, names = overlay.split_test_id(test_id)
    return [*path.split("/"), *names[:-1]]


def _common(a: str, b: str) -> int:
    """How many of ``a``'s parents pytest keeps when ``b`` runs next: the ones they share."""
    above, below = _parents(a), _parents(b)
    return next((i for i, (x, y) in enumerate(zip(above, below, strict=False)) if x != y), min(len(above), len(below)))


def through(ids: Sequence[str], fresh: Collection[str]) -> list[str]:
    """``ids`` through the test after the last of ``fresh``: later tests cannot change a fresh
    test's outcome, the next one can, by what pytest tears down before it."""
    end = max((i for i, t in enumerate(ids) if t in fresh), default=len(ids) - 1)
    return list(ids[: end + 2])


def steadied(
    fresh: Sequence[str],
    firsts: Mapping[str, pytest_run.PytestRun],
    alone_runs: Mapping[str, Sequence[pytest_run.PytestRun]],
    in_order: Mapping[str, Sequence[pytest_run.PytestRun]],
    varied: Collection[str] = (),
) -> dict[str, dict[str, Observation | None]]:
    """Each fresh test's outcome on each side (``settled``), written into that side's first run.
    A fresh test that a further C run, ended normally, did not collect -- alone or in order --
    leaves C's first run instead, as never collected, and is judged on neither side. On the
    sides in ``varied``, the first run changed the referee's marks (``Sides.first_box``) and the
    further runs had them: a flaky test whose further runs agreed and whose first run did not
    says so (``marks_moved``)."""
    moving = _moving(fresh, [*alone_runs["C"], *in_order["C"]])
    c_first = firsts["C"]
    for t in moving:
        c_first.content.results.pop(t, None)
    if moving and c_first.content.collected is not None:
        c_first.content.collected = [t for t in c_first.content.collected if t not in moving]
    judged = {}
    for side, first in firsts.items():
        outcomes = {}
        for t in (t for t in fresh if t not in moving):
            apart = [r.observation(t) for r in alone_runs[side]]
            ordered = [r.observation(t) for r in in_order[side]]
            outcome = settled(first.observation(t), apart, ordered, side)
            if side in varied and outcome is not None and outcome.outcome is Outcome.FLAKY:
                outcome = marks_moved(outcome, first.observation(t), apart, ordered, side)
            outcomes[t] = outcome
        first.content.results.update({t: o for t, o in outcomes.items() if o is not None})
        judged[side] = outcomes
    return judged


def settled(
    first: Observation | None,
    apart: Sequence[Observation | None],
    in_order: Sequence[Observation | None],
    side: str,
) -> Observation | None:
    """One fresh test's outcome on one side, from its first run, its runs alone and its runs in
    T3's order. The runs in order decide with the first, T3's order being what the first run
    ran -- unless none of them reached the test (none made, or each ended before it), or the runs
    alone disagree among themselves, a flake whatever the order: then the runs alone count too."""
    runs = [first, *in_order]
    if all(o is None for o in in_order) or _flaky(judge.steady(apart, side)):
        runs += apart
    return judge.steady(runs, side)


CHANGED_MARKS = "another seed and no parent-death signal"


def marks_moved(
    flaky: Observation,
    first: Observation | None,
    apart: Sequence[Observation | None],
    in_order: Sequence[Observation | None],
    side: str,
) -> Observation:
    """``flaky`` said to be moved by the referee's marks when every further run, alone or in
    T3's order, all with the marks, gave one outcome, and the first run, which changed them
    (``Sides.first_box``), steadily gave another: the patch or the test reads the referee, and
    no outcome of its is evidence. A test whose runs with the marks disagree among themselves --
    one that counts its runs, one that needs its neighbours -- or whose first run flipped in
    process is a flake of its own. Still ``flaky``: an honest test that reads the hash or random
    seed is as flaky under plain pytest, which draws them anew."""
    marked = [o for o in (*apart, *in_order) if o is not None]
    agreed = {o.outcome for o in marked}
    if first is None or first.outcome is Outcome.FLAKY or len(agreed) != 1 or first.outcome in agreed:
        return flaky
    message = "%s on %s: %s with them, %s with %s (%s); not evidence, held for this run only" % (
        MARKS_MOVED,
        side,
        agreed.pop().value,
        first.outcome.value,
        CHANGED_MARKS,
        "the code or the test reads them, or depends on the hash or random seed",
    )
    # Where the failing side of the change failed, for whoever reads why.
    failed = next((o.failure for o in (first, *marked) if o.failure), None)
    if failed is None:
        return replace(flaky, failure=Failure(FailureKind.FLAKY, message))
    excerpt = "\n".join(filter(None, [failed.message, failed.excerpt]))
    return replace(flaky, failure=Failure(FailureKind.FLAKY, message, failed.path, failed.line, excerpt))


def _confirmed(
    moved: Observation, first: Observation | None, pinned: Observation | None, varied: Observation | None
) -> Observation:
    """``moved`` (``marks_moved``) as it stands once its test ran again with the marks
    (``pinned``) and without (``varied``): moved still when the run without them gave its first
    run's outcome again and the run with them another; else a flake of its own, held in the
    flake ledger like any other."""
    if first is not None and pinned is not None and varied is not None:
        if varied.outcome is first.outcome and pinned.outcome is not varied.outcome:
            return moved
    message = "its outcome changed across its runs (%s), but not again when the run that changed the " % (
        ", ".join(a.value for a in moved.attempts)
    )
    failure = Failure(FailureKind.FLAKY, message + "referee's marks was repeated: quarantined, not evidence")
    return replace(moved, failure=failure)


def _varied_seed(run_id: str, pinned: int) -> int:
    """A seed from the run id's digits, any but the pinned one's hash seed."""
    seed = int(hashlib.sha256(run_id.encode()).hexdigest(), 16) % 2**32
    return seed if seed != pinned % 2**32 else (seed + 1) % 2**32


def _moving(fresh: Iterable[str], c_runs: Iterable[pytest_run.PytestRun]) -> set[str]:
    """The fresh tests that a C run, ended normally, did not collect: ids that change between
    collections."""
    normal = [set(r.content.collected or ()) for r in c_runs if r.content.finished and not r.budget_exhausted]
    return {t for t in fresh if any(t not in collected for collected in normal)}


def _unsettled(
    first: pytest_run.PytestRun, apart: Sequence[pytest_run.PytestRun], fresh: Iterable[str], side: str
) -> bool:
    """Whether the runs ``apart`` leave a fresh test's stability to T3's order to decide: they
    agree among themselves, and give another outcome than ``first`` -- or one where it has none,
    or none where it has one (a run ended before it). A test flaky in its first run, or across
    the runs apart, is flaky whatever T3's order would say."""
    for t in fresh:
        observed = [first.observation(t), *(r.observation(t) for r in apart)]
        if _flaky(observed[0]) or _flaky(judge.steady(observed[1:], side)):
            continue
        if len({None if o is None else o.outcome for o in observed}) > 1:
            return True
    return False


def _flaky(observation: Observation | None) -> bool:
    return observation is not None and observation.outcome is Outcome.FLAKY
