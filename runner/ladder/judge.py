"""The ladder's rules: what a tier's typed results mean for the patch. Pure: no I/O, no process.

The climb (``climb``) runs engines and hands their typed results here; every decision a tier
makes -- pass, fail, inconclusive, which flip counts -- is one of these functions, so each rule is
unit-tested without a repository.
"""

from __future__ import annotations

import os
import pathlib
import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from pytest_evidence.assemble import Typed, moved_by_marks
from pytest_evidence.model import (
    FAILING,
    BCClass,
    Detection,
    DetectionKind,
    Failure,
    FailureKind,
    Observation,
    Origin,
    Outcome,
    TierStatus,
    ValidationResult,
)

#: Outcomes on C that fail a test tier (a quarantined flake is judged separately).
C_FAILING = FAILING | {Outcome.TIMEOUT, Outcome.CRASH}

#: Outcomes on C that say nothing of a test B passes: its body did not run, or its failure was
#: expected. A pass turned into one of these is evidence lost, not a flip (``silenced``).
C_SILENT = frozenset({Outcome.SKIPPED, Outcome.XFAILED})

#: Outcomes of a test whose body ran and passed: ``xpassed`` is a pass under a non-strict xfail.
PASSED = frozenset({Outcome.PASS, Outcome.XPASSED})

#: B outcomes that had something to lose: a pass, or a flake (it passes at times; silent on C, it
#: never runs there at all).
B_PASSING = PASSED | {Outcome.FLAKY}

Judgement = tuple[TierStatus, str]

#: How a failing outcome on C reads in a sentence ("passes on B, fails on C").
_FAILS = {Outcome.FAIL: "fails", Outcome.ERROR: "errors", Outcome.TIMEOUT: "times out", Outcome.CRASH: "crashes"}


def _fails(outcome: Outcome) -> str:
    return _FAILS.get(outcome, "is %s" % outcome.value)


_MISSING = re.compile(r"No module named '([A-Za-z0-9_.]+)'")
_CANNOT_IMPORT = re.compile(r"cannot import name '[^']+' from '([A-Za-z0-9_.]+)'")


def missing_module(result: ValidationResult) -> str | None:
    """The top-level module a failing result could not import (``ModuleNotFoundError``), if any."""
    if result.candidate_result not in FAILING or result.failure is None:
        return None
    found = _MISSING.search(result.failure.message)
    return found.group(1).split(".")[0] if found else None


def falsifying(obs: Observation | None, quarantined: Mapping[str, Sequence[str]], b_collected: Collection[str]) -> bool:
    """Whether a reproducer's first runs already fail T3, whatever further runs would say.

    It failed on C in every attempt and was attempted more than once -- the flake policy reran it
    and it failed each time; a single timeout, crash or failure (``--reruns 0``) is not enough --
    it is quarantined neither by an earlier run nor by B's run just now (a reproducer flaky on B
    is quarantined on C too), it is not a missing module (which B's result can make not evidence
    either way, ``unrunnable``), and B's collection of the same files has the same id (an id
    that changes between collections is the stability runs' to name). Such a failure is a no-fix
    when B fails it too and a flip when B passes it: T3 fails on either, so the stability runs
    could only add cost. What they would still have found: a failure that repeats within one
    process but not across processes, which is then a failure, not a flake
    (``reproduce.reproducers``, docs/referee.md).
    """
    if obs is None or obs.test_id in quarantined or obs.test_id not in b_collected or obs.outcome is not Outcome.FAIL:
        return False
    if len(obs.attempts) < 2 or any(a is not Outcome.FAIL for a in obs.attempts):
        return False
    return obs.failure is None or _MISSING.search(obs.failure.message) is None


def lost_from(before: Sequence[str], after: Collection[str]) -> list[str]:
    """The ids of ``before`` that ``after`` lacks and does not replace, in ``before``'s order.

    A parametrized test whose ids are made from values the fix changes (``test_size[3]`` becomes
    ``test_size[4]``) is replaced when ``after`` holds at least as many ids of the same function;
    fewer is a value dropped -- a test lost, as a function that is gone is."""
    kept = Counter(t.partition("[")[0] for t in after)
    had = Counter(t.partition("[")[0] for t in before)
    return [t for t in before if t not in after and kept[t.partition("[")[0]] < had[t.partition("[")[0]]]


def unrunnable(typed: Typed, ids: Sequence[str], owned: Callable[[str], bool]) -> dict[str, str]:
    """Tests among ``ids`` that cannot run here, and why: not evidence either way.

    ``missing_module``: it fails on C importing a module the checkout does not have, and B either
    has no result for it or failed it too -- a case for a C module this Python was built without.
    ``setup_error``: it errors in setup or collection on C exactly as on B (a fixture pytest cannot
    find, a module neither side imports) -- its body ran on neither side, so it cannot say whether
    the bug is fixed. A test that fails importing a name or module of the candidate's own code
    (the reproducer of a fix that was never written) is neither: it is a real failure.
    """
    found = {}
    for res in typed.results:
        if res.test_id not in ids:
            continue
        module = missing_module(res)
        b_failure = typed.annotations[res.test_id].baseline_failure
        lacking = _CANNOT_IMPORT.search(res.failure.message) if res.failure is not None else None
        imported = module or (lacking.group(1) if lacking else None)
        if imported is not None and owned(imported.split(".")[0]):
            continue  # what it imports is the candidate's own code, which lacks it: a real failure
        if module is not None:
            if res.baseline_result is None or res.baseline_result in FAILING:
                found[res.test_id] = "missing_module"
        elif (
            res.candidate_result is Outcome.ERROR
            and res.baseline_result is Outcome.ERROR
            and res.failure is not None
            and res.failure.kind in (FailureKind.SETUP_ERROR, FailureKind.COLLECTION_ERROR)
            and b_failure is not None
            and b_failure.message == res.failure.message
        ):
            found[res.test_id] = "setup_error"
    return found


def static_tier(passed: bool, checked: int) -> TierStatus:
    """T0-T2: nothing to check is ``skipped``; any hard finding fails."""
    if not checked:
        return TierStatus.SKIPPED
    return TierStatus.PASSED if passed else TierStatus.FAILED


def unrun(not_run: Sequence[str], budget_exhausted: bool, budget: float | None, exit_code: int) -> Judgement | None:
    """A tier whose tests did not all run proves nothing about the ones left out."""
    if not not_run:
        return None
    if budget_exhausted:
        return TierStatus.INCONCLUSIVE, "the tier's budget of %ss ran out: %d selected test(s) did not run" % (
            budget,
            len(not_run),
        )
    return TierStatus.FAILED, "%d selected test(s) did not run: the test process ended early (exit %d)" % (
        len(not_run),
        exit_code,
    )


def flip(results: Sequence[ValidationResult]) -> str | None:
    """The first result that fails on C while B, run like for like, did not fail it."""
    for res in results:
        if res.baseline_result is Outcome.PASS and res.candidate_result in C_FAILING:
            return "regression: %s passes on B, %s on C" % (res.test_id, _fails(res.candidate_result))
        if res.baseline_result is None and res.candidate_result in C_FAILING:
            return "%s %s on C and has no baseline result" % (res.test_id, _fails(res.candidate_result))
    return None


def silenced(results: Sequence[ValidationResult]) -> list[Detection]:
    """``empty_collection`` (``skipped_on_c``) for each test B passes (or xpasses) and C skips or
    expects to fail -- B and C run with the same tests, so the candidate's code made it so: a skip
    condition or ``importorskip`` reading what it changed. The test-level twin of a module that
    stops being collected (``not_collected``): nothing says it still passes, so it cannot be
    certified."""
    return [
        _lost(r.test_id, "passes on B and is %s on C" % r.candidate_result.value)
        for r in results
        if r.baseline_result in B_PASSING and r.candidate_result in C_SILENT
    ]


@dataclass(frozen=True)
class Replaced:
    """A parametrized function's ids C no longer collects, excused as values the fix renamed."""

    passing: tuple[str, ...]  # those B passed
    silent: int  # how many B did not pass: as many new ids silent on C replace them


def silent_replacements(results: Sequence[ValidationResult], replaced: Mapping[str, Replaced]) -> list[Detection]:
    """``skipped_on_c`` for the new parametrizations of a function whose ids B passed and C lost
    (``replaced``): C collects as many ids of it, so the loss was excused as values the fix
    changed -- on the condition that what replaced them proves something. Skipped or xfailed on C
    (an empty parameter set, a renamed value whose body skips), with no B result or silent on B
    too (T3, where the reproducer's file may rename and silence on both sides), they do not,
    beyond as many as replace ids B did not pass either (a platform-only value renamed)."""
    silent: dict[str, list[ValidationResult]] = {}
    for r in results:
        fn = r.test_id.partition("[")[0]
        if (
            (r.baseline_result is None or r.baseline_result in C_SILENT)
            and r.candidate_result in C_SILENT
            and fn in replaced
        ):
            silent.setdefault(fn, []).append(r)
    what = "replaces %s (passing on B) and is %s on C"
    return [
        _lost(r.test_id, what % (replaced[fn].passing[0], r.candidate_result.value))
        for fn, found in silent.items()
        if len(found) > replaced[fn].silent
        for r in found
    ]


def _lost(test_id: str, what: str) -> Detection:
    return Detection(
        DetectionKind.EMPTY_COLLECTION,
        "%s %s: nothing says it still passes" % (test_id, what),
        test_id,
        detail="skipped_on_c",
    )


def failing_on_c(results: Sequence[ValidationResult]) -> str | None:
    """The first result failing on C: all a judge without types or without B can see (the A/B
    harness's ``typing`` and ``baseline-replay`` ablations), a failure B had too included."""
    for res in results:
        if res.candidate_result in C_FAILING:
            return "%s %s on C (judged on C's outcomes alone)" % (res.test_id, _fails(res.candidate_result))
    return None


def suspects(
    ids: Sequence[str], candidate: Mapping[str, Observation | None], baseline: Mapping[str, Observation | None]
) -> list[str]:
    """Tests that look like flips against the stored full B run: failing on C, not failing on B;
    or passing on B and silent on C (``silenced``).

    The full B run is not like for like (another selection, another order): each of these must be
    run again on B with the C run's selection, order and seed before it counts.
    """
    found = []
    for tid in ids:
        c, b = candidate.get(tid), baseline.get(tid)
        if c is None:
            continue
        if c.outcome in C_FAILING and (b is None or b.outcome not in FAILING):
            found.append(tid)
        elif c.outcome in C_SILENT and b is not None and b.outcome in B_PASSING:
            found.append(tid)
    return found


@dataclass(frozen=True)
class Confirmation:
    """What a suspected flip rests on: B in the full suite run, and B in C's own selection."""

    full_suite: Outcome | None
    same_selection: Outcome | None
    selection_size: int
    silent: bool = False  # skipped or xfailed on C (``C_SILENT``), not failing: evidence lost
    apart: Outcome | None = None  # on C once more, the whole suite collected, run on its own
    apart_b: Outcome | None = None  # on B likewise: an order-dependent suspect's (``broken_apart``)
    in_order: Outcome | None = None  # on C after the tests before it in B's full run (``broken_in_order``)
    in_order_b: Outcome | None = None  # on B likewise
    settling: bool = False  # the runs above were made: an order-dependent flip left unsettled is no pass

    @property
    def order_dependent(self) -> bool:
        """Passes on B in the full run and fails on B in C's selection: the order did it -- unless
        the test fails on C where B passes it, on its own (``broken_apart``) or after the tests
        before it in B's full run (``broken_in_order``)."""
        return (
            self.full_suite in PASSED
            and self.same_selection in FAILING
            and not self.broken_apart
            and not self.broken_in_order
        )

    @property
    def broken_in_order(self) -> bool:
        """Fails on B in the C run's selection -- and on its own too, needing a test before it
        as in B's full run, or passing there, where nothing those tests set up is there to get
        wrong -- yet run after the tests before it in B's full run it passes on B and fails on
        C: the candidate broke it. Excused as order-dependent, a candidate breaking what such a
        test checks was CERTIFIED (reviews' probes, 2026-12-05: the test setting up what it
        checks in its module, then in an earlier one)."""
        return self.in_order_b in PASSED and self.in_order in C_FAILING

    @property
    def settled_apart(self) -> bool:
        """Passes on each side on its own: what failed it on both sides in the C run's
        selection was the order. Not when B fails it on its own: then it needs a test before it,
        and C passing it alone -- where nothing set up what it checks -- says nothing of C in
        the state B's full run checked it in (a review's probe: C's function right when nothing
        is registered and wrong otherwise was excused)."""
        return self.apart_b in PASSED and self.apart in PASSED

    @property
    def unsettled(self) -> bool:
        """Order-dependent, and no run shows C passing it where B passes it too: in B's order
        (after the tests before it in B's full run), or, where that run was not
        made or B fails it there (not the order B passed it in), on its own. The run in B's
        order comes first: passing on its own on both sides says nothing of C in the state the
        tests before it leave (a review's probe: C's ``lookup`` right on an empty registry and
        wrong after a test registers was excused). Unsettled, the referee cannot tell the
        order's doing from the candidate's, and a question it cannot answer is never a pass."""
        settled = self.in_order in PASSED if self.in_order_b in PASSED else self.settled_apart
        return self.settling and self.order_dependent and not settled

    @property
    def broken_apart(self) -> bool:
        """Fails on B too in the C run's selection, so the session's order could explain its
        failure on C; yet run on its own, each side collecting the whole suite, it passes on B
        and fails on C: the candidate broke it whatever the order -- excused as order-dependent,
        a candidate breaking a test an earlier group also upsets was certified."""
        return (
            self.full_suite in PASSED
            and self.same_selection in FAILING
            and self.apart_b in PASSED
            and self.apart in C_FAILING
        )

    @property
    def silenced_on_both(self) -> bool:
        """Silent on C, and on B too in C's selection with C's tests, though it passes in B's own
        full run: the selection or the candidate's tests silence it -- a new test file setting
        the flag a ``skipif`` reads, a test that skips unless another ran first. Either way the
        certification never ran its body on C: evidence lost all the same."""
        return self.silent and self.full_suite in B_PASSING and self.same_selection in C_SILENT

    @property
    def found_apart(self) -> bool:
        """Silenced on both sides in the C run's selection, and passing on C once more, collected
        with the whole suite (the candidate's test files imported, as in B's full run) and run on
        its own: the session's order silenced it -- what an earlier group's tests left behind --
        and not C, nor the candidate's tests, which a collection of the whole suite imports."""
        return self.silenced_on_both and self.apart in PASSED

    def lost(self, test_id: str, origin: Origin) -> list[Detection]:
        """The ``skipped_on_c`` detection a test silenced on both sides is (``silenced_on_both``) --
        unless its own definition changed (``origin``): then the skip is the test's own, which the
        integrity check judged, or which the trusted tests brought (a test the fix's test patch
        retires with ``skip()``)."""
        if not self.silenced_on_both or self.found_apart or origin in (Origin.ADDED, Origin.CHANGED):
            return []
        return [_lost(test_id, "(%s)" % self.rests_on)]

    @property
    def rests_on(self) -> str:
        if self.same_selection in PASSED and self.silent:
            return "evidence lost: passes on B in the C run's selection, order and seed; skipped or xfailed on C"
        if self.found_apart:
            assert self.same_selection is not None and self.apart is not None
            return (
                "evidence found apart: %s on B too in the C run's selection, with C's tests, yet %s on C collected "
                "with the whole suite and run on its own: the session's order silenced it"
                % (self.same_selection.value, self.apart.value)
            )
        if self.silenced_on_both and self.same_selection is not None:
            return (
                "evidence lost: passes in B's full run; %s on B too in the C run's selection, with C's tests: "
                "the selection or the candidate's tests silence it" % self.same_selection.value
            )
        if self.same_selection is Outcome.PASS:
            return "regression: passes on B in the C run's selection, order and seed"
        if self.broken_apart:
            assert self.apart is not None
            return (
                "regression apart: fails on B too in the C run's selection, yet passes on B and %s on C, each "
                "collected with the whole suite and run on its own" % _fails(self.apart)
            )
        if self.broken_in_order:
            assert self.in_order is not None
            return (
                "regression in B's order: fails on B too in the C run's selection%s, yet passes on B "
                "and %s on C after the tests before it in B's full run"
                % (" and on its own" if self.apart_b in FAILING else "", _fails(self.in_order))
            )
        if self.order_dependent:
            runs = [
                "%s, %s on B and %s on C" % (where, "none" if b is None else b.value, "none" if c is None else c.value)
                for where, b, c in (
                    ("on its own", self.apart_b, self.apart),
                    ("after the tests before it in B's full run", self.in_order_b, self.in_order),
                )
                if b is not None or c is not None
            ]
            head = "order_dependent, unsettled" if self.unsettled else "order_dependent"
            tail = "; ".join(runs) + (": no run shows C passing it where B passes it" if self.unsettled else "")
            return "%s: passes in B's full run, fails on B in the C run's selection too%s" % (
                head,
                "; " + tail if tail else "",
            )
        if self.same_selection is None:
            return "unconfirmed: B did not report it in the C run's selection; judged on B's full run"
        return "not a flip: %s on B in the C run's selection" % self.same_selection.value

    def to_dict(self) -> dict[str, object]:
        return {
            "baseline_full_suite": None if self.full_suite is None else self.full_suite.value,
            "baseline_same_selection": None if self.same_selection is None else self.same_selection.value,
            "selection_size": self.selection_size,
            "rests_on": self.rests_on,
        }


def reproducer_tier(
    typed: Typed, designated: Sequence[str], expected: Sequence[str], fresh: Sequence[str] = (), bare: bool = False
) -> Judgement:
    """T3: the reproducers on B (with C's tests) and on C, in the same selection. ``fresh``: the
    new and designated tests whose stability was checked. ``bare``: judged on C's outcomes
    alone (an ablation): reproducers that pass on C pass, whatever B did."""
    by_id = {r.test_id: r for r in typed.results}
    classes = {} if bare else {t: typed.annotations[t].bc_class for t in by_id}
    designated = [t for t in designated if t in by_id]
    for tid in designated:
        if classes.get(tid) is BCClass.NO_FIX:
            return TierStatus.FAILED, "no-fix: reproducer %s fails on B and on C" % tid
        if classes.get(tid) is BCClass.REGRESSION or by_id[tid].candidate_result in C_FAILING:
            return TierStatus.FAILED, "reproducer %s fails on C (%s)" % (tid, by_id[tid].candidate_result.value)
    for tid in expected:
        if by_id[tid].candidate_result is not Outcome.PASS:
            return TierStatus.FAILED, "expected change %s does not pass on C" % tid
    flipped = failing_on_c(typed.results) if bare else flip(typed.results)
    if flipped:
        return TierStatus.FAILED, flipped
    # A flaky reproducer, or a flaky new test beside it, is evidence of nothing: never green.
    watched = [t for t in dict.fromkeys([*designated, *fresh]) if t in by_id]
    quarantined = [t for t in watched if Outcome.FLAKY in (by_id[t].candidate_result, by_id[t].baseline_result)]
    if quarantined:
        what = "reproducer" if quarantined[0] in designated else "test"
        failure = by_id[quarantined[0]].failure
        if failure is not None and moved_by_marks(failure):
            return TierStatus.INCONCLUSIVE, "%s %s: %s" % (what, quarantined[0], failure.message)
        return TierStatus.INCONCLUSIVE, "%s %s is quarantined as flaky" % (what, quarantined[0])
    if not designated:
        return TierStatus.INCONCLUSIVE, (
            "no reproducer: none designated, and no test the candidate added or changed is left to run "
            "(tests laid back from the trusted source and declared expected changes are not reproducers)"
        )
    if bare:
        return TierStatus.PASSED, "%d reproducer(s) pass on C (judged on C's outcomes alone)" % len(designated)
    if not any(by_id[t].bug_discriminating for t in designated):
        note = "no reproducer fails on B: nothing shows the bug fixed"
        hung = sum(by_id[t].baseline_result is Outcome.TIMEOUT for t in designated)
        if hung:
            note += "; %d timed out on B, which is no failure: add one that fails on B within its time" % hung
        return TierStatus.INCONCLUSIVE, note
    n = sum(by_id[t].bug_discriminating for t in designated)
    return TierStatus.PASSED, "%d of %d reproducer(s) bug-discriminating" % (n, len(designated))


def unsettled(confirmed: Mapping[str, Confirmation]) -> Judgement | None:
    """A tier holding an order-dependent flip no run settled (``Confirmation.unsettled``)."""
    left = [t for t, c in confirmed.items() if c.unsettled]
    if not left:
        return None
    return TierStatus.INCONCLUSIVE, "order-dependent flip of %s could not be settled: %s" % (
        left[0],
        confirmed[left[0]].rests_on,
    )


def regression_tier(
    results: Sequence[ValidationResult], what: str, obligation: bool, unrun_: Judgement | None, bare: bool = False
) -> Judgement:
    """T4-T7: a like-for-like flip fails; unrun tests or a quarantined obligation prove nothing.
    ``bare``: judged on C's outcomes alone (an ablation): any failure on C fails."""
    flipped = failing_on_c(results) if bare else flip(results)
    if flipped:
        return TierStatus.FAILED, flipped
    if unrun_:
        return unrun_
    quarantined = [r.test_id for r in results if r.candidate_result is Outcome.FLAKY] if obligation else []
    if quarantined:
        return TierStatus.INCONCLUSIVE, "obligation test %s is quarantined as flaky" % quarantined[0]
    both = 0 if bare else sum(1 for r in results if r.baseline_result in FAILING and r.candidate_result in FAILING)
    return TierStatus.PASSED, "%s: %d run, no flip%s" % (
        what,
        len(results),
        "; %d already failing on B" % both if both else "",
    )


def steady(runs: Sequence[Observation | None], side: str) -> Observation | None:
    """One test's outcome over its stability runs on one side: the first run's, unless the runs
    disagree -- then ``flaky``, with every attempt, and never evidence of anything."""
    seen = [o for o in runs if o is not None]
    if not seen:
        return None
    first = seen[0]
    outcomes = [o.outcome for o in seen]
    if len(seen) < 2 or len(set(outcomes)) == 1:
        return first
    failure = Failure(
        FailureKind.FLAKY,
        "its outcome changed across %d runs on %s (%s): quarantined, not evidence"
        % (len(seen), side, ", ".join(o.value for o in outcomes)),
    )
    attempts = tuple(a for o in seen for a in o.attempts)
    return Observation(first.test_id, Outcome.FLAKY, first.duration, failure, first.stdout_summary, attempts)


#: The first port of Linux's default ephemeral range: a server on port 0 gets one of these, and
#: a different one in every run.
EPHEMERAL_PORTS = 32768


def endpoint(address: str) -> str:
    """What two attempts must share to be the same: the host, and the port unless ephemeral."""
    host, _, rest = address.partition(" ")[0].rpartition(":")
    return host if not rest.isdigit() or int(rest) >= EPHEMERAL_PORTS else "%s:%s" % (host, rest)


def network_attempts(
    b: Iterable[tuple[str | None, str]], c: Iterable[tuple[str | None, str]], allow_new: bool
) -> list[Detection]:
    """``network_attempt`` detections, one per side and endpoint, from the allowed (loopback)
    attempts each side made. An endpoint C reached that no B run reached is ``new_on_c``: the
    patch makes the code reach for a service the tests cannot see, and that blocks certification
    unless allowed (``new_on_c_allowed``). Endpoints, not tests, are compared: a session fixture's
    server is charged to whichever test first used it, and that differs between selections."""
    seen_on_b = {endpoint(a) for _, a in b}
    by_endpoint: dict[tuple[str, str, str], list[tuple[str | None, str]]] = {}
    for side, attempts in (("B", b), ("C", c)):
        for test_id, address in sorted(attempts, key=lambda ta: (ta[0] or "", ta[1])):
            new = side == "C" and endpoint(address) not in seen_on_b
            detail = ("new_on_c_allowed" if allow_new else "new_on_c") if new else "loopback"
            by_endpoint.setdefault((side, endpoint(address), detail), []).append((test_id, address))
    why = {
        "loopback": "allowed",
        "new_on_c": "no B run reached it: blocks certification (--allow-new-network)",
        "new_on_c_allowed": "no B run reached it; allowed by --allow-new-network",
    }
    found = []
    for (side, where, detail), seen in sorted(by_endpoint.items()):
        (test_id, address), more = seen[0], len(seen) - 1
        message = "%s connected to %s on %s%s (%s)" % (
            test_id or "collection",
            address if not more else where,
            side,
            " (and %d more attempt(s))" % more if more else "",
            why[detail],
        )
        found.append(Detection(DetectionKind.NETWORK_ATTEMPT, message, test_id, detail=detail))
    return found


@dataclass(frozen=True)
class BSide:
    """What B's runs tell of the test frameworks' objects: the names they found replaced (test id
    or None, name), the tests they ran, and the candidate's test modules they could not collect."""

    found: Collection[tuple[str | None, str]]
    ran: Collection[str]
    uncollected: Collection[str] = ()


def framework_replacements(
    vouching: Iterable[tuple[str | None, str]],
    c: Iterable[tuple[str | None, str]],
    b: BSide,
    by_c: Collection[str],
) -> list[Detection]:
    """A ``source_interference`` detection for each test framework's object C's runs found
    replaced (``originals``) and none of B's runs that ``vouching`` holds did: whatever spelling
    did it, every test that runs through it may report what it was made to. Names, not tests,
    are compared: an import-time replacement is seen wherever the module is first imported, and
    a framework plugin or library that replaces one on purpose does on B too.

    ``replaces_test_framework`` (an attack: REJECTED) where C's code did it; where B's side
    cannot say whose code did, ``framework_replaced_unattributed`` (INCONCLUSIVE: no cheat is
    certified, and the honest projects a review saw rejected are not):

    - ``vouching`` holds another object of its module: B's code replaces that module's objects
      on purpose (pytest-mock wraps ``unittest.mock``'s asserts, ``AsyncMock``'s since a commit
      of its own), and a change to which it replaces cannot be told from a cheat;
    - what was put in its place was written in no file C added or changed (``by_c``: the names
      whose replacement was, or where it could not be read: ``authorship``) and either B's runs
      found it replaced by the end of collection too -- C's tests reach B's code that replaces
      it (``nest_asyncio.apply()`` at a new test module's import) -- or B could not compare: it
      was found by the end of collection and a test module of C's did not collect on B, or once
      a test was over that never ran on B (its module failed to import there, as a fix's new
      test often does).
    """
    vouched = {name for _, name in vouching}
    modules = {_module(name) for name in vouched}
    on_b_by_collection = {name for test_id, name in b.found if test_id is None}

    def unattributed(name: str, test_id: str | None) -> str | None:
        """Why B's side cannot say whose code replaced ``name``; None: C's did."""
        if _module(name) in modules:
            return "B's runs found other objects of %s replaced, by code that replaces them on purpose" % _module(name)
        if name in by_c:
            return None
        if name in on_b_by_collection:
            return "B's runs of C's tests found it replaced by the end of collection too, by code C's tests reach"
        if test_id is None and b.uncollected:
            return "%s did not collect on B: nothing to compare it with" % ", ".join(sorted(b.uncollected))
        if test_id is not None and test_id not in b.ran:
            return "%s never ran on B: nothing to compare it with" % test_id
        return None

    first: dict[str, str | None] = {}
    for test_id, name in sorted(c, key=lambda tn: (tn[1], tn[0] is not None, tn[0] or "")):
        if name not in vouched:
            first.setdefault(name, test_id)
    found = []
    for name, test_id in sorted(first.items()):
        when = "by the end of collection" if test_id is None else "once %s was over" % test_id
        message = "the test framework's %s was replaced on C (found %s); " % (name, when)
        why = unattributed(name, test_id)
        if why is not None:
            message += "%s; the referee cannot say whose, and what the tests report through it is not evidence" % why
            found.append(
                Detection(DetectionKind.SOURCE_INTERFERENCE, message, test_id, detail="framework_replaced_unattributed")
            )
            continue
        message += (
            "no B run found it replaced%s: what every test that runs through it asserts or reports can change"
            % (", and what was put in its place was written by C" if name in by_c else "")
        )
        found.append(Detection(DetectionKind.SOURCE_INTERFERENCE, message, test_id, detail="replaces_test_framework"))
    return found


def written_by_c(origin: str | None, c_dir: str, written: Collection[str]) -> bool:
    """Whether ``origin`` (``authorship``) is a file C added or changed (``written``) in its
    checkout ``c_dir``, code compiled from a string (``<string>``) or what no file could be read
    from (``<unattributable>``) -- a frozen module's ``<frozen os>`` is the standard library's."""
    if origin is None:
        return False
    if origin.startswith("<"):
        return not origin.startswith("<frozen ")
    path = os.path.relpath(os.path.realpath(origin), os.path.realpath(c_dir))
    return not path.startswith(os.pardir) and pathlib.PurePath(path).as_posix() in written


def _module(name: str) -> str:
    """The module a replaced object's dotted name is found in: the names before the first class
    (capitalised: ``unittest.mock`` of ``unittest.mock.AsyncMock.assert_awaited_with``), or before
    the last name. A lower-case class (``unittest.mock._patch``) counts as a module of its own:
    the module a name is said to be in is never wider than its own."""
    parts = name.split(".")
    first_class = next((i for i, part in enumerate(parts) if i and part[:1].isupper()), len(parts) - 1)
    return ".".join(parts[:first_class])
