"""The ladder's rules, without a repository: each judge is a pure function of typed results."""

from __future__ import annotations

import dataclasses
import pathlib
from collections.abc import Mapping

import pytest

from pytest_evidence.assemble import Typed, type_evidence
from pytest_evidence.model import (
    BCClass,
    DetectionKind,
    Failure,
    FailureKind,
    Observation,
    Origin,
    Outcome,
    Role,
    Tier,
    TierRecord,
    TierStatus,
    ValidationResult,
    Verdict,
)
from runner import ablation
from runner.ladder import judge
from runner.ladder.evidence import Evidence
from runner.verdict import blocks, decide, rejects

P, F, E, T, K = Outcome.PASS, Outcome.FAIL, Outcome.ERROR, Outcome.TIMEOUT, Outcome.FLAKY


def _obs(tid: str, outcome: Outcome) -> Observation:
    return Observation(tid, outcome, 0.0, None, "", (outcome,))


def _typed(pairs: Mapping[str, tuple[Outcome | None, Outcome]], origin: Origin = Origin.ADDED) -> Typed:
    return type_evidence(
        candidate=[_obs(t, c) for t, (_b, c) in pairs.items()],
        baseline={t: None if b is None else _obs(t, b) for t, (b, _c) in pairs.items()},
        origin_of=lambda _t: origin,
        designated=set(),
        expected_change=set(),
        candidate_commit="c",
        exit_code=0,
        flaky_history={},
        affected=lambda _t: True,
    )


@pytest.mark.parametrize(
    ("pairs", "status", "words"),
    [
        ({"r": (F, P)}, TierStatus.PASSED, "1 of 1 reproducer(s) bug-discriminating"),
        ({"r": (F, F)}, TierStatus.FAILED, "no-fix: reproducer r"),
        ({"r": (P, F)}, TierStatus.FAILED, "reproducer r fails on C"),
        ({"r": (F, T)}, TierStatus.FAILED, "reproducer r fails on C (timeout)"),
        ({"r": (P, P)}, TierStatus.INCONCLUSIVE, "no reproducer fails on B: nothing shows the bug fixed"),
        ({"r": (T, P)}, TierStatus.INCONCLUSIVE, "fixed; 1 timed out on B, which is no failure: add one that fails"),
        ({"r": (F, K)}, TierStatus.INCONCLUSIVE, "reproducer r is quarantined as flaky"),
        ({"r": (E, P), "s": (P, F)}, TierStatus.FAILED, "regression: s passes on B"),
    ],
)
def test_reproducer_tier(pairs: dict[str, tuple[Outcome, Outcome]], status: TierStatus, words: str) -> None:
    got = judge.reproducer_tier(_typed(pairs), ["r"], [])
    assert got[0] is status and words in got[1], got


def test_a_reproducer_tier_without_reproducers_proves_nothing() -> None:
    assert judge.reproducer_tier(_typed({"x": (P, P)}), [], [])[0] is TierStatus.INCONCLUSIVE


def _result(tid: str, b: Outcome | None, c: Outcome) -> ValidationResult:
    return ValidationResult(tid, Role.REGRESSION, "c", b, c, 0.0, 0, (), True, False, "", None)


def test_regression_tier() -> None:
    ok = judge.regression_tier([_result("a", P, P), _result("b", F, F)], "the set", True, None)
    assert ok == (TierStatus.PASSED, "the set: 2 run, no flip; 1 already failing on B")
    assert judge.regression_tier([_result("a", P, F)], "x", True, None)[0] is TierStatus.FAILED
    assert (
        judge.regression_tier([_result("a", None, E)], "x", True, None)[1] == "a errors on C and has no baseline result"
    )
    flaky = [_result("a", P, K)]
    assert judge.regression_tier(flaky, "x", True, None)[0] is TierStatus.INCONCLUSIVE
    assert judge.regression_tier(flaky, "x", False, None)[0] is TierStatus.PASSED  # T7: not an obligation
    unrun = judge.unrun(["z"], True, 30.0, -9)
    assert unrun is not None and judge.regression_tier([_result("a", P, P)], "x", True, unrun) == unrun
    assert judge.unrun(["z"], False, None, 1) == (
        TierStatus.FAILED,
        "1 selected test(s) did not run: the test process ended early (exit 1)",
    )
    assert judge.unrun([], True, 1.0, 0) is None


def test_suspects_are_c_failures_b_did_not_fail_and_b_passes_c_silenced() -> None:
    S, X = Outcome.SKIPPED, Outcome.XFAILED
    c = {t: _obs(t, o) for t, o in {"a": F, "b": F, "c": P, "d": T, "e": S, "f": X, "g": S, "h": S, "i": X}.items()}
    b = {"a": _obs("a", P), "b": _obs("b", F), "c": _obs("c", P), "d": None}
    b |= {"e": _obs("e", P), "f": _obs("f", P), "g": _obs("g", S), "h": None, "i": _obs("i", Outcome.XPASSED)}
    assert judge.suspects(list(c), c, b) == ["a", "d", "e", "f", "i"]


@pytest.mark.parametrize(
    ("full", "same", "lost", "rests_on"),
    [
        (P, P, False, "evidence lost: passes on B in the C run's selection"),
        (P, Outcome.SKIPPED, True, "evidence lost: passes in B's full run; skipped on B too"),
        (Outcome.XPASSED, Outcome.XFAILED, True, "evidence lost: passes in B's full run; xfailed on B too"),
        (Outcome.SKIPPED, Outcome.SKIPPED, False, "not a flip"),
    ],
)
def test_a_silenced_suspect_is_lost_when_b_passes_it_in_either_run(
    full: Outcome, same: Outcome, lost: bool, rests_on: str
) -> None:
    got = judge.Confirmation(full, same, 3, silent=True)
    assert got.silenced_on_both is lost and got.rests_on.startswith(rests_on)
    assert not judge.Confirmation(full, same, 3).silenced_on_both  # failing on C: a flip's business
    # a test whose own definition changed carries its own skip: judged by the integrity check
    assert len(got.lost("t", Origin.UNCHANGED)) == int(lost)
    assert got.lost("t", Origin.CHANGED) == got.lost("t", Origin.ADDED) == []


def test_a_parametrization_replacing_one_b_passed_must_not_be_silent_on_c() -> None:
    S = Outcome.SKIPPED
    pairs = {"m::f[new]": (None, S), "m::f[ok]": (None, P), "m::g[x]": (None, S), "m::f[old2]": (P, S)}
    typed = _typed({**pairs, "m::f[both]": (S, S)})
    found = judge.silent_replacements(typed.results, {"m::f": judge.Replaced(("m::f[old]",), 1)})
    assert [(d.test_id, d.detail) for d in found] == [("m::f[new]", "skipped_on_c"), ("m::f[both]", "skipped_on_c")]
    typed = _typed(pairs)
    found = judge.silent_replacements(typed.results, {"m::f": judge.Replaced(("m::f[old]",), 0)})
    assert [(d.test_id, d.detail) for d in found] == [("m::f[new]", "skipped_on_c")]
    assert "replaces m::f[old] (passing on B) and is skipped on C" in found[0].message
    # as many silent new ids as B's own silent ones that went are a renaming, not a loss
    assert judge.silent_replacements(typed.results, {"m::f": judge.Replaced(("m::f[old]",), 1)}) == []


def test_a_test_is_lost_unless_its_parametrizations_are_replaced() -> None:
    before = ["m::f[1]", "m::f[2]", "m::f[3]", "m::g", "m::h[a]", "m::k"]
    assert judge.lost_from(before, {"m::f[1]", "m::f[2]", "m::f[4]", "m::k"}) == ["m::g", "m::h[a]"]
    assert judge.lost_from(before, {"m::f[1]", "m::f[2]", "m::k", "m::g", "m::h[b]"}) == ["m::f[3]"]
    assert judge.lost_from(before, {"m::f[9]", "m::f[8]", "m::f[7]", "m::f[6]", "m::g", "m::h[b]", "m::k"}) == []


def test_a_test_b_passes_and_c_skips_or_xfails_is_evidence_lost() -> None:
    S, X, XP = Outcome.SKIPPED, Outcome.XFAILED, Outcome.XPASSED
    pairs = {"a": (P, S), "b": (P, X), "c": (S, S), "d": (None, S), "e": (P, XP), "f": (F, S), "g": (P, P)}
    typed = _typed({**pairs, "h": (XP, X), "i": (K, S)})
    found = judge.silenced(typed.results)
    assert [(d.kind, d.test_id, d.detail) for d in found] == [
        (DetectionKind.EMPTY_COLLECTION, "a", "skipped_on_c"),
        (DetectionKind.EMPTY_COLLECTION, "b", "skipped_on_c"),
        (DetectionKind.EMPTY_COLLECTION, "h", "skipped_on_c"),  # xpassed on B: its body passed
        (DetectionKind.EMPTY_COLLECTION, "i", "skipped_on_c"),  # flaky on B: it passes at times
    ]
    assert "a passes on B and is skipped on C" in found[0].message
    # it blocks certification: every tier passing is not enough
    tiers = [TierRecord(t, TierStatus.PASSED, 0.0, 1, 1, None, "") for t in Tier]
    discriminating = dataclasses.replace(_result("r", F, P), bug_discriminating=True)
    assert decide(tiers, [discriminating], found).verdict is Verdict.INCONCLUSIVE


@pytest.mark.parametrize(
    ("full", "same", "order_dependent", "rests_on"),
    [
        (P, P, False, "regression"),
        (P, F, True, "order_dependent"),
        (P, E, True, "order_dependent"),
        (None, F, False, "not a flip"),
        (P, None, False, "unconfirmed"),
    ],
)
@pytest.mark.parametrize("silent", [False, True])
def test_a_flip_rests_on_b_in_the_same_selection(
    full: Outcome | None, same: Outcome | None, order_dependent: bool, rests_on: str, silent: bool
) -> None:
    got = judge.Confirmation(full, same, 3, silent=silent)
    if silent and rests_on == "regression":
        rests_on = "evidence lost"
    assert got.order_dependent is order_dependent and got.rests_on.startswith(rests_on)
    assert got.to_dict()["selection_size"] == 3


@pytest.mark.parametrize(
    ("apart_b", "apart", "broken", "rests_on"),
    [
        (P, F, True, "regression apart: fails on B too in the C run's selection, yet passes on B and fails on C"),
        (P, T, True, "regression apart"),  # a timeout on C is a failure there
        (
            P,
            P,
            False,
            "order_dependent: passes in B's full run, fails on B in the C run's selection too; "
            "on its own, pass on B and pass on C",
        ),
        (F, F, False, "order_dependent"),  # fails on B on its own too: it needs an earlier test
        (None, F, False, "order_dependent"),  # B did not report it apart: the order's doing, as before
        (P, None, False, "order_dependent"),
    ],
)
def test_an_order_dependent_flip_that_holds_apart_is_the_candidates(
    apart_b: Outcome | None, apart: Outcome | None, broken: bool, rests_on: str
) -> None:
    """Failing on B too in the C run's selection, a flip is excused by the order -- unless, run
    on its own on each side, it passes on B and fails on C."""
    got = judge.Confirmation(P, F, 3, apart=apart, apart_b=apart_b)
    assert got.broken_apart is broken and got.order_dependent is not broken
    assert got.rests_on.startswith(rests_on)
    assert not judge.Confirmation(None, F, 3, apart=F, apart_b=P).broken_apart  # no B pass to lose


@pytest.mark.parametrize(
    ("alone", "in_order", "settled", "rests_on"),
    [
        # each side passes it on its own: the session's order did it
        ((P, P), (None, None), "excused", "order_dependent: passes in B's full run"),
        # ... unless, after the tests before it in B's full run, B passes it and C does not: alone,
        # nothing they set up was there for C to get wrong (a review's probe)
        ((P, P), (P, F), "regression", "regression in B's order"),
        ((P, P), (P, Outcome.SKIPPED), "inconclusive", "order_dependent, unsettled"),
        ((P, P), (P, P), "excused", "order_dependent: passes in B's full run"),
        # B fails it after them: not the order B passed it in; alone settles it
        ((P, P), (F, F), "excused", "order_dependent: passes in B's full run"),
        # it needs a test before it in B's full run; after them B passes it and C does not: C broke it
        ((F, F), (P, F), "regression", "regression in B's order: fails on B too in the C run's selection"),
        ((F, F), (P, T), "regression", "regression in B's order"),
        # after the tests before it, both pass it: settled
        ((F, F), (P, P), "excused", "order_dependent: passes in B's full run, fails on B in the C run's selection"),
        # no run shows C passing it: a question the referee cannot answer
        ((F, F), (F, F), "inconclusive", "order_dependent, unsettled"),
        ((None, None), (None, None), "inconclusive", "order_dependent, unsettled"),
        ((F, F), (None, F), "inconclusive", "order_dependent, unsettled"),
        # C passes it there, but B does not: not the order B passed it in, nothing settled
        ((F, F), (F, P), "inconclusive", "order_dependent, unsettled"),
        ((F, F), (None, P), "inconclusive", "order_dependent, unsettled"),
        # C passes it on its own where B does not: it needs a test before it, and alone says
        # nothing of C in the state B's full run checked it in (a review's probe) ...
        ((F, P), (None, None), "inconclusive", "order_dependent, unsettled"),
        ((None, P), (None, None), "inconclusive", "order_dependent, unsettled"),
        # ... which the run after the tests before it in B's full run settles
        ((F, P), (P, F), "regression", "regression in B's order"),
        ((F, P), (P, P), "excused", "order_dependent: passes in B's full run"),
        # silent on C after the tests before it: its body never ran there
        ((F, F), (P, Outcome.SKIPPED), "inconclusive", "order_dependent, unsettled"),
    ],
)
def test_an_order_dependent_flip_is_excused_only_where_c_passes_it(
    alone: tuple[Outcome | None, Outcome | None],
    in_order: tuple[Outcome | None, Outcome | None],
    settled: str,
    rests_on: str,
) -> None:
    """A test that needs an earlier test of its module fails on B on its own too: the run on its
    own says nothing, and the flip was excused -- a candidate breaking what it checks was
    CERTIFIED. It is settled after the tests before it in B's full run; unsettled, no pass."""
    got = judge.Confirmation(
        P, F, 3, apart_b=alone[0], apart=alone[1], in_order_b=in_order[0], in_order=in_order[1], settling=True
    )
    assert got.rests_on.startswith(rests_on), got.rests_on
    assert got.broken_in_order is (settled == "regression")
    assert got.order_dependent is (settled != "regression")
    assert got.unsettled is (settled == "inconclusive")
    verdict = judge.unsettled({"t": got})
    assert (verdict is not None and verdict[0] is TierStatus.INCONCLUSIVE) is (settled == "inconclusive")
    assert not dataclasses.replace(got, settling=False).unsettled  # not settled by runs never made


def test_an_unsettled_flip_names_the_test_and_what_was_run() -> None:
    """The tier's note says which flip was left open and every run that was made for it."""
    settled = judge.Confirmation(P, F, 3, apart_b=F, apart=F, in_order_b=P, in_order=P, settling=True)
    left = judge.Confirmation(P, F, 3, apart_b=F, apart=F, in_order_b=F, in_order=F, settling=True)
    assert judge.unsettled({"a": settled}) is None
    status, note = judge.unsettled({"a": settled, "b": left}) or (None, "")
    assert status is TierStatus.INCONCLUSIVE
    assert note == (
        "order-dependent flip of b could not be settled: order_dependent, unsettled: passes in B's full run, "
        "fails on B in the C run's selection too; on its own, fail on B and fail on C; after the tests before it "
        "in B's full run, fail on B and fail on C: no run shows C passing it where B passes it"
    )
    assert left.to_dict()["rests_on"] == note.partition("could not be settled: ")[2]  # the record says it too


@pytest.mark.parametrize(("apart", "settled"), [(P, True), (Outcome.SKIPPED, False), (None, False)])
def test_an_order_dependent_flip_silent_on_c_is_excused_only_where_c_passes_it(
    apart: Outcome | None, settled: bool
) -> None:
    """Skipped on C in the session, failing on B in its selection: no run on C ran its body, so
    the order excuses it only once C passes it where B does -- here, on its own."""
    got = judge.Confirmation(P, F, 3, silent=True, apart_b=P, apart=apart, settling=True)
    assert got.order_dependent and got.unsettled is not settled
    assert (judge.unsettled({"t": got}) is None) is settled


def test_static_tier_and_the_halting_statuses() -> None:
    assert judge.static_tier(True, 0) is TierStatus.SKIPPED
    assert judge.static_tier(False, 2) is TierStatus.FAILED
    ev = Evidence()
    ev.tier(TierRecord(Tier.T0, TierStatus.PASSED, 0.0, 1, 1, None, ""))
    assert not ev.halted(full=False)
    ev.tier(TierRecord(Tier.T1, TierStatus.ERROR, 0.0, 0, 0, None, "ruff ended"))
    assert ev.halted(full=False) and not ev.halted(full=True)
    ladder = ev.ladder("an earlier tier halted")
    assert [t.status for t in ladder][:3] == [TierStatus.PASSED, TierStatus.ERROR, TierStatus.NOT_RUN]


def test_an_engine_error_is_never_a_pass() -> None:
    tiers = [TierRecord(t, TierStatus.PASSED, 0.0, 1, 1, None, "") for t in Tier]
    tiers[2] = TierRecord(Tier.T2, TierStatus.ERROR, 0.0, 0, 0, None, "mypy ended (exit 2) without an answer")
    discriminating = dataclasses.replace(_result("r", F, P), bug_discriminating=True)
    assert decide(tiers[:2] + tiers[3:], [discriminating], []).verdict is Verdict.CERTIFIED
    got = decide(tiers, [discriminating], [])
    assert (got.verdict, got.halted_at) == (Verdict.INCONCLUSIVE, Tier.T2)
    assert got.reasons[0] == "T2: mypy ended (exit 2) without an answer"


def test_classes_come_from_the_table() -> None:
    typed = _typed({"a": (F, P), "b": (P, F)})
    assert typed.annotations["a"].bc_class is BCClass.BUG_DISCRIMINATING
    assert typed.annotations["b"].bc_class is BCClass.REGRESSION


def test_a_test_that_cannot_run_here_is_not_evidence_either_way() -> None:
    def obs(tid: str, outcome: Outcome, message: str, kind: FailureKind = FailureKind.EXCEPTION) -> Observation:
        return Observation(tid, outcome, 0.0, Failure(kind, message), "", (outcome,))

    missing = "ModuleNotFoundError: No module named '%s'"
    fixture = "fixture 'test_codec' not found"
    pairs = {
        "env": (None, obs("env", F, missing % "_dbm")),
        "same-on-b": (obs("same-on-b", F, missing % "yaml.cyaml"), obs("same-on-b", F, missing % "yaml.cyaml")),
        "broke-it": (obs("broke-it", P, ""), obs("broke-it", F, missing % "requests")),  # C broke it: a flip
        "ours": (None, obs("ours", F, missing % "calc.newmod")),  # the checkout's own module
        "assertion": (obs("assertion", F, "assert 3 == 2"), obs("assertion", F, "assert 3 == 2")),  # a no-fix
        "no-fixture": (
            obs("no-fixture", E, fixture, FailureKind.SETUP_ERROR),
            obs("no-fixture", E, fixture, FailureKind.SETUP_ERROR),
        ),
        "new-setup-error": (obs("new-setup-error", P, ""), obs("new-setup-error", E, fixture, FailureKind.SETUP_ERROR)),
    }
    typed = type_evidence(
        candidate=[c for _b, c in pairs.values()],
        baseline={t: b for t, (b, _c) in pairs.items()},
        origin_of=lambda _t: Origin.ADDED,
        designated=set(pairs),
        expected_change=set(),
        candidate_commit="c",
        exit_code=1,
        flaky_history={},
        affected=lambda _t: True,
    )
    got = judge.unrunnable(typed, list(pairs), lambda name: name == "calc")
    assert got == {"env": "missing_module", "same-on-b": "missing_module", "no-fixture": "setup_error"}


def test_network_attempts_compare_endpoints_not_tests_and_collapse_ephemeral_ports() -> None:
    b = {("tests/test_a.py::test_server", "127.0.0.1:45001")}
    c = {
        ("tests/test_b.py::test_other", "127.0.0.1:51234"),  # the same test server, another port and test
        ("tests/test_half.py::test_half", "127.0.0.1:8765"),  # a fixed port no B run reached
    }
    found = judge.network_attempts(b, c, allow_new=False)
    details = sorted((d.message.split(" on ")[1][0], d.detail) for d in found)
    assert details == [("B", "loopback"), ("C", "loopback"), ("C", "new_on_c")]
    new = next(d for d in found if d.detail == "new_on_c")
    assert new.test_id == "tests/test_half.py::test_half" and "127.0.0.1:8765" in new.message
    assert {d.detail for d in judge.network_attempts(b, c, allow_new=True)} == {"loopback", "new_on_c_allowed"}


def test_a_framework_object_replaced_counts_only_where_no_b_run_found_it_replaced() -> None:
    """Names, not tests, are compared; a name found by collection's end is charged to no test,
    and one found both then and around a test is said once, at collection."""
    b = {("tests/test_a.py::test_a", "asyncio.base_events.BaseEventLoop.run_forever")}
    c = {
        (None, "asyncio.base_events.BaseEventLoop.run_forever"),  # the project's own, on B too
        ("tests/test_b.py::test_b", "unittest.case.TestCase.assertEqual"),
        (None, "unittest.case.TestCase.assertEqual"),
        ("tests/test_half.py::test_half", "asyncio.runners.Runner.run"),
    }
    found = judge.framework_replacements(b, c, judge.BSide(b, {"tests/test_half.py::test_half"}), ())
    assert [(d.test_id, d.detail) for d in found] == [
        ("tests/test_half.py::test_half", "replaces_test_framework"),
        (None, "replaces_test_framework"),
    ]
    assert "asyncio.runners.Runner.run" in found[0].message
    assert "once tests/test_half.py::test_half was over" in found[0].message
    assert "by the end of collection" in found[1].message
    assert all(rejects(d) for d in found)
    assert judge.framework_replacements(c, c, judge.BSide(c, ()), ()) == []


AFTER_N = ("tests/test_n.py::test_n", "asyncio.runners.run")
BY_COLLECTION = (None, "asyncio.runners.run")


@pytest.mark.parametrize(
    ("vouching", "b", "c", "why", "unless_by_c"),
    [
        # a new test module imports B's code that replaces it (or replaces it itself): on B too
        ((), judge.BSide({BY_COLLECTION}, {AFTER_N[0]}), AFTER_N, "found it replaced by the end of collection", True),
        # B's code wraps other objects of the module on purpose (pytest-mock's asserts)
        (
            {(None, "asyncio.runners.Runner")},
            judge.BSide((), {AFTER_N[0]}),
            AFTER_N,
            "other objects of asyncio.runners replaced",
            False,  # the project's own code, changed: which it wraps is what changed
        ),
        # the test it was found after failed to import on B: nothing to compare with
        ((), judge.BSide((), {"tests/test_a.py::test_a"}), AFTER_N, "tests/test_n.py::test_n never ran on B", True),
        # found as C collected, and a module of C's tests did not collect on B
        ((), judge.BSide((), (), {"tests/test_n.py"}), BY_COLLECTION, "tests/test_n.py did not collect on B", True),
    ],
)
def test_a_framework_object_replaced_where_b_cannot_say_whose_code_did_it_is_inconclusive(
    vouching: set[tuple[str | None, str]], b: judge.BSide, c: tuple[str | None, str], why: str, unless_by_c: bool
) -> None:
    """Not an attack for sure, so no REJECTED; never evidence, so no CERTIFIED either -- unless
    what was put in its place was written in a file C added or changed (``unless_by_c``)."""
    (found,) = judge.framework_replacements(vouching, {c}, b, ())
    assert found.detail == "framework_replaced_unattributed" and why in found.message, found.message
    assert not rejects(found) and blocks(found)
    (by_c,) = judge.framework_replacements(vouching, {c}, b, {"asyncio.runners.run"})
    assert by_c.detail == ("replaces_test_framework" if unless_by_c else "framework_replaced_unattributed")
    (attack,) = judge.framework_replacements((), {c}, judge.BSide((), {"tests/test_n.py::test_n"}), ())
    assert attack.detail == "replaces_test_framework"


def test_b_code_replacing_objects_of_a_module_on_purpose_leaves_cs_changes_there_unattributed() -> None:
    """A review's: pytest-mock wrapped ``NonCallableMock``'s asserts on B, and a commit of its own
    wrapped ``AsyncMock``'s too -- another class of the same module. Another module of the same
    package is not vouched for so."""
    b = {(None, "unittest.mock.NonCallableMock.assert_called_with")}
    c = {(None, "unittest.mock.AsyncMock.assert_awaited_with"), (None, "unittest.case.TestCase.assertEqual")}
    found = judge.framework_replacements(b, c, judge.BSide(b, ()), {n for _, n in c})
    assert [(d.detail, d.message.split("'s ")[1].split(" ")[0]) for d in found] == [
        ("replaces_test_framework", "unittest.case.TestCase.assertEqual"),
        ("framework_replaced_unattributed", "unittest.mock.AsyncMock.assert_awaited_with"),
    ]


def test_what_c_wrote_is_a_file_it_added_or_changed_in_its_checkout_or_code_from_a_string(
    tmp_path: pathlib.Path,
) -> None:
    written = {"calc/ops.py", "tests/test_new.py"}
    c_dir = str(tmp_path)
    assert judge.written_by_c(str(tmp_path / "calc" / "ops.py"), c_dir, written)
    assert judge.written_by_c(str(tmp_path / "tests" / "test_new.py"), c_dir, written)
    assert judge.written_by_c("<string>", c_dir, written)
    assert judge.written_by_c("<unattributable>", c_dir, written)  # a callable instance, a forged file
    assert not judge.written_by_c(str(tmp_path / "calc" / "nested.py"), c_dir, written)  # unchanged since B
    assert not judge.written_by_c("/usr/lib/python3.11/asyncio/tasks.py", c_dir, written)
    assert not judge.written_by_c("<frozen os>", c_dir, written)
    assert not judge.written_by_c(None, c_dir, written)


@pytest.mark.parametrize(
    ("outcome", "attempts", "message", "held", "on_b", "falsified"),
    [
        (F, (F, F, F), "assert 3 == 2", False, True, True),
        (F, (F,), "assert 3 == 2", False, True, False),  # --reruns 0: one failure is not yet a refutation
        (T, (T,), "Timeout", False, True, False),  # never rerun in process: the stability runs decide
        (Outcome.CRASH, (Outcome.CRASH,), "the process died", False, True, False),
        (P, (P,), "", False, True, False),
        (K, (F, P), "passed on its second attempt", False, True, False),
        (E, (E, E, E), "fixture 'db' not found", False, True, False),  # a setup error: maybe not evidence
        (F, (F, F, F), "ModuleNotFoundError: No module named 'numpy'", False, True, False),  # this Python lacks it
        (F, (F, F, F), "assert 3 == 2", True, True, False),  # quarantined (by B's run, or earlier)
        (F, (F, F, F), "assert 3 == 2", False, False, False),  # B's collection has another id: unstable
    ],
)
def test_a_reproducer_failing_on_c_refutes_the_patch_before_the_stability_runs(
    outcome: Outcome, attempts: tuple[Outcome, ...], message: str, held: bool, on_b: bool, falsified: bool
) -> None:
    obs = Observation("t::r", outcome, 0.0, Failure(FailureKind.ASSERTION, message) if message else None, "", attempts)
    quarantined = {"t::r": ["run1:B:1:abc"]} if held else {}
    assert judge.falsifying(obs, quarantined, {"t::r"} if on_b else {"t::r[1701]"}) is falsified
    assert judge.falsifying(None, {}, {"t::r"}) is False
    if falsified:  # and T3 fails on it whatever B says: a no-fix, or a flip
        for b in (F, P, None):
            typed = _typed({"t::r": (b, outcome)})
            assert judge.reproducer_tier(typed, ["t::r"], [])[0] is TierStatus.FAILED, b


@pytest.mark.parametrize(
    ("pairs", "status", "words"),
    [
        ({"r": (P, P)}, TierStatus.PASSED, "1 reproducer(s) pass on C (judged on C's outcomes alone)"),
        ({"r": (F, F)}, TierStatus.FAILED, "reproducer r fails on C (fail)"),
        ({"r": (F, P), "s": (F, F)}, TierStatus.FAILED, "s fails on C (judged on C's outcomes alone)"),
        ({"r": (F, K)}, TierStatus.INCONCLUSIVE, "reproducer r is quarantined as flaky"),
    ],
)
def test_a_bare_reproducer_tier_sees_only_c(
    pairs: dict[str, tuple[Outcome, Outcome]], status: TierStatus, words: str
) -> None:
    """The ablations' judge: a reproducer passing on B too passes, a failure B had too fails."""
    got = judge.reproducer_tier(_typed(pairs), ["r"], [], bare=True)
    assert got[0] is status and words in got[1], got


def test_a_bare_regression_tier_fails_on_any_failure_on_c() -> None:
    had = [_result("a", P, P), _result("b", F, F)]
    assert judge.regression_tier(had, "x", True, None)[0] is TierStatus.PASSED
    assert judge.regression_tier(had, "x", True, None, bare=True) == (
        TierStatus.FAILED,
        "b fails on C (judged on C's outcomes alone)",
    )
    assert judge.regression_tier([_result("a", F, P)], "x", True, None, bare=True) == (
        TierStatus.PASSED,
        "x: 1 run, no flip",
    )


def test_a_bare_verdict_certifies_without_a_bug_discriminating_result() -> None:
    passed = [TierRecord(Tier.T3, TierStatus.PASSED, 0.0, 1, 1, None, "ok")]
    results = [_result("a", P, P)]
    assert decide(passed, results, []).verdict is Verdict.INCONCLUSIVE
    assert decide(passed, results, [], bare=True).verdict is Verdict.CERTIFIED
    failed = [TierRecord(Tier.T7, TierStatus.FAILED, 0.0, 1, 1, None, "b fail on C")]
    assert decide(failed, results, [], bare=True).verdict is Verdict.REJECTED


def test_untyped_results_keep_b_outcome_and_lose_every_type() -> None:
    """The ``typing`` ablation's record: bare booleans, with B's outcome still there (B ran)."""
    typed = _typed({"t": (P, P)})
    assert typed.results[0].role is Role.BUG_REPRODUCTION and typed.annotations["t"].bc_class is not None
    assert [d.kind for d in typed.detections] == [DetectionKind.REPRODUCER_NOT_FAILING_ON_BASELINE]
    bare = ablation.untyped(typed)
    (res,) = bare.results
    assert (res.role, res.bug_discriminating, res.baseline_result) == (None, False, P)
    assert bare.annotations["t"].bc_class is None and bare.detections == ()
