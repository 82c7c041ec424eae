"""How T3's further stability runs settle a new test's outcome (``runner.ladder.sides``): pure
logic over runs made up here. End to end, with real processes, in ``test_one_session.py``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from pytest_evidence.model import Failure, FailureKind, Observation, Outcome
from pytest_evidence.stream import StreamContent
from runner.ladder.sides import marks_moved, settled, steadied
from runner.pytest_run import PytestRun

P, F, FLAKY = Outcome.PASS, Outcome.FAIL, Outcome.FLAKY


def seen(outcome: Outcome | None, test_id: str = "t") -> Observation | None:
    return None if outcome is None else Observation(test_id, outcome, 0.0, None, "", (outcome,))


@pytest.mark.parametrize(
    ("first", "apart", "in_order", "expected"),
    [
        (P, [P, P], [], P),
        (F, [F, F], [], F),
        (P, [F, F], [P, P], P),  # alone it fails: it needs the tests before it, no flake
        (P, [F, P], [P, P], FLAKY),  # alone it flips: a flake whatever T3's order says
        (P, [F, F], [None, None], FLAKY),  # the runs in order never reached it: alone counts
        (P, [F, F], [P, F], FLAKY),
        (FLAKY, [P, P], [], FLAKY),  # flipped in process in its first run
        (P, [None, P], [P, P], P),
        (None, [None, None], [None, None], None),
    ],
    ids=[
        "steady-pass",
        "steady-fail",
        "needs-its-neighbours",
        "flips-alone",
        "order-never-reached",
        "flips-in-order",
        "flaky-first",
        "an-alone-run-ended-before-it",
        "never-observed",
    ],
)
def test_a_new_tests_outcome_on_one_side(
    first: Outcome | None, apart: list[Outcome | None], in_order: list[Outcome | None], expected: Outcome | None
) -> None:
    got = settled(seen(first), [seen(o) for o in apart], [seen(o) for o in in_order], "C")
    assert (None if got is None else got.outcome) == expected


def run(results: Mapping[str, Outcome], collected: Sequence[str], finished: bool = True) -> PytestRun:
    observed = {t: seen(o, t) for t, o in results.items()}
    content = StreamContent(
        started={},
        collected=list(collected),
        results={t: o for t, o in observed.items() if o is not None},
        exit_status=0 if finished else None,
    )
    return PytestRun(content, 0, 0.0, "", False, ())


IDS = ["p", "t", "n"]


@pytest.mark.parametrize("stage", ["alone", "in-order"])
def test_a_new_test_a_further_c_run_did_not_collect_leaves_cs_first_run(stage: str) -> None:
    """Its id changes between collections: whichever further run missed it -- alone, or in T3's
    order while another run in order passed it -- it is judged on neither side, and C's first
    run no longer holds it (``type`` then names it ``unstable_test_id``)."""
    firsts = {"C": run({"p": P, "t": P, "n": P}, IDS), "B": run({"p": P, "t": F, "n": P}, IDS)}
    missed = run({"p": P, "n": P}, ["p", "n"])
    if stage == "alone":
        alone_runs = {"C": [missed, run({"t": P, "n": P}, IDS)], "B": [run({"t": F, "n": P}, IDS)] * 2}
        in_order: dict[str, list[PytestRun]] = {"C": [], "B": []}
    else:
        alone_runs = {"C": [run({"t": F, "n": P}, IDS)] * 2, "B": [run({"t": F, "n": P}, IDS)] * 2}
        in_order = {"C": [missed, run({"p": P, "t": P, "n": P}, IDS)], "B": [run({"p": P, "t": F, "n": P}, IDS)] * 2}
    judged = steadied(["t"], firsts, alone_runs, in_order)
    assert judged == {"C": {}, "B": {}}
    assert "t" not in firsts["C"].content.results and firsts["C"].content.collected == ["p", "n"]


def test_a_further_run_that_ended_early_does_not_say_an_id_moved() -> None:
    """A run that did not end normally (a crash, the budget) missing the test says nothing of
    its id: the test is judged, on what the runs observed."""
    firsts = {"C": run({"p": P, "t": P, "n": P}, IDS)}
    crashed = run({"p": P}, ["p", "n"], finished=False)
    judged = steadied(["t"], firsts, {"C": [crashed, run({"t": P, "n": P}, IDS)]}, {"C": []})
    observed = judged["C"]["t"]
    assert observed is not None and observed.outcome is P
    assert firsts["C"].content.collected == IDS


@pytest.mark.parametrize(
    ("first", "apart", "in_order", "moved"),
    [
        (P, [F, F], [], True),  # without the marks (the first run) it passed, with them it failed
        (F, [P, P], [P, P], True),  # alone and in T3's order, with the marks, it passed
        (P, [F, F], [P, F], False),  # in order with the marks it flips: a flake of its own
        (P, [F, P], [], False),  # a test that counts its runs: the runs with the marks disagree
        (P, [F, F, F], [], True),
        (P, [P, F], [], False),  # the runs with the marks disagree, one with the first run
        (P, [F, None], [], True),  # one run with the marks ended before it, the other failed it
        (P, [None, None], [], False),  # no run with the marks reached it
        (None, [F], [], False),  # the run without them never reached it
        (FLAKY, [F, F], [], False),  # the first run flipped in process: a flake whatever the marks
        (P, [P, P], [], False),
    ],
    ids=[
        "alone",
        "alone-and-in-order",
        "flips-in-order",
        "counts-its-runs",
        "thrice",
        "disagree-with-marks",
        "one-reached",
        "unreached",
        "first-unreached",
        "first-flaky",
        "same",
    ],
)
def test_a_flaky_test_is_said_moved_by_the_marks_only_when_they_alone_changed_it(
    first: Outcome | None, apart: list[Outcome | None], in_order: list[Outcome | None], moved: bool
) -> None:
    flaky = Observation("t", FLAKY, 0.0, None, "", (P, F))
    got = marks_moved(flaky, seen(first), [seen(o) for o in apart], [seen(o) for o in in_order], "C")
    assert got.outcome is FLAKY
    message = got.failure.message if got.failure is not None else ""
    assert message.startswith("its outcome changed with the referee's own marks on C") is moved


def test_a_side_whose_first_run_kept_the_marks_is_never_said_moved_by_them() -> None:
    """``steadied``: only on a side in ``varied`` did the first run change them."""
    alone_runs = {"C": [run({"t": F, "n": P}, ["t", "n"]), run({"t": F, "n": P}, ["t", "n"])], "B": []}
    none: dict[str, list[PytestRun]] = {"C": [], "B": []}
    for varied, said in (({"C"}, True), (set(), False)):
        firsts = {"C": run({"t": P, "n": P}, ["t", "n"]), "B": run({"t": F, "n": P}, ["t", "n"])}
        c = steadied(["t"], firsts, alone_runs, none, varied)["C"]["t"]
        assert c is not None and c.outcome is FLAKY and c.failure is not None
        assert c.failure.message.startswith("its outcome changed with the referee's own marks") is said


def test_a_test_moved_by_the_marks_shows_where_it_failed() -> None:
    flaky = Observation("t", FLAKY, 0.0, None, "", (F, P))
    failing = Observation("t", F, 0.0, Failure(FailureKind.ASSERTION, "assert 1 == 2", "t.py", 3, "> x"), "", (F,))
    got = marks_moved(flaky, failing, [seen(P), seen(P)], [], "C").failure
    assert got is not None and (got.path, got.line, got.excerpt) == ("t.py", 3, "assert 1 == 2\n> x")
    assert got.message.startswith("its outcome changed with the referee's own marks on C: pass with them, fail with")
