"""The A/B measures, decision rule, ablation rule and report (spec 17 §7), on hand-built arm runs.

The battery's records are built with the model's own dataclasses in the shape ``evidence-runner
demo`` writes for its honest fix -- a static gate, a reproducer failing on B and passing on C,
regression tests passing on both, the ladder's tiers with T5 selecting part of the suite -- and
are checked against the shipped record schema. The naive arm's records are what the plugin writes
for one plain pytest run without a baseline: outcomes, no role, no B result. Every expected value
is worked out by hand in the comment beside it.

The corpus: one held-out case ``h1`` (fix, test-without-fix, fix-plus-skip) and one tuning case
``t1`` (fix, fix-plus-weakened-assert), each answered by both arms.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import jsonschema
import pytest

from pytest_evidence.model import (
    Annotation,
    Detection,
    DetectionKind,
    Environment,
    EvidenceRecord,
    Failure,
    FailureKind,
    Origin,
    Outcome,
    Role,
    Tier,
    TierRecord,
    TierStatus,
    ValidationResult,
    Verdict,
    VerdictRecord,
    classify,
    is_bug_discriminating,
)
from runner.ab import measure, report
from runner.ab.measure import (
    ArmMeasures,
    CostOrdering,
    Price,
    Ratio,
    ablation,
    ablation_on,
    decide,
    decide_on,
    measures,
)

Run = dict[str, Any]

GATE = "T0::parse::pkg/parse.py"
REPRO = "tests/test_parse.py::test_issue_1234"
REG1 = "tests/test_parse.py::test_plain"
REG2 = "tests/test_cli.py::test_cli"
LADDER = (Tier.T0, Tier.T1, Tier.T2, Tier.T3, Tier.T4, Tier.T5, Tier.T6, Tier.T7)
ENV = Environment("f" * 64, "3.11.7", "CPython", "linux", "8.3.0", 10)
TAMPERING = ("fix-plus-skip", "fix-plus-weakened-assert")
#: (test id, role, B, C, attempts on C) -- one result of a battery record.
Spec = tuple[str, Role | None, Outcome | None, Outcome, tuple[Outcome, ...]]

FAILURE_KIND = {
    Outcome.FAIL: FailureKind.ASSERTION,
    Outcome.TIMEOUT: FailureKind.TIMEOUT,
    Outcome.SKIPPED: FailureKind.SKIPPED,
    Outcome.FLAKY: FailureKind.FLAKY,
}


def _failure(outcome: Outcome) -> Failure | None:
    return None if outcome is Outcome.PASS else Failure(FAILURE_KIND[outcome], outcome.value)


def _result(test_id: str, role: Role | None, b: Outcome | None, c: Outcome) -> ValidationResult:
    discriminating = b is not None and is_bug_discriminating(b, c)
    code = 0 if c is Outcome.PASS else 1
    return ValidationResult(test_id, role, "c" * 40, b, c, 0.01, code, (), True, discriminating, "", _failure(c))


def _tiers(halt: Tier | None, t5_selected: int) -> tuple[TierRecord, ...]:
    """T0-T7: passed up to ``halt`` (failed there), not run after it; T5 selects from a suite of 6."""
    tiers = []
    for tier in LADDER:
        after = halt is not None and LADDER.index(tier) > LADDER.index(halt)
        status = TierStatus.NOT_RUN if after else TierStatus.FAILED if tier is halt else TierStatus.PASSED
        selected = t5_selected if tier is Tier.T5 else 1
        suite = None if tier in (Tier.T0, Tier.T1, Tier.T2) else 6
        tiers.append(TierRecord(tier, status, 0.1, 0 if after else selected, 0 if after else 1, suite, status.value))
    return tuple(tiers)


def _audit(kill_rate: float) -> dict[str, Any]:
    """A suite-strength audit as ``--audit`` writes it, with 10 mutants."""
    killed = round(kill_rate * 10)
    suite = {
        "engine": "mutmut",
        "seed": 0,
        "max_mutants": 10,
        "budget": None,
        "seconds": 1.0,
        "budget_exhausted": False,
        "mutants_run": 10,
        "killed": killed,
        "kill_rate": kill_rate,
        "mutants_per_second": 10.0,
        "functions": [],
        "modules": {"pkg/parse.py": {"run": 10, "killed": killed, "kill_rate": kill_rate}},
    }
    return {"suite": suite, "reproducer": None}


def battery_record(
    specs: tuple[Spec, ...],
    verdict: Verdict,
    halt: Tier | None = None,
    detections: tuple[Detection, ...] = (),
    t5_selected: int = 3,
    kill_rate: float | None = None,
    steering: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A runner record (schema 1.6) with B replayed: what ``certify`` writes for one candidate."""
    annotations = {
        test_id: Annotation(
            Origin.ADDED if role is Role.BUG_REPRODUCTION else Origin.UNCHANGED,
            None if b is None else classify(b, c),
            None,
            attempts,
        )
        for test_id, role, b, c, attempts in specs
    }
    record = EvidenceRecord(
        run_id="0123456789abcdef",
        created="2026-01-01T00:00:00Z",
        complete=True,
        repo="/repo",
        baseline_commit="b" * 40,
        candidate_commit="c" * 40,
        environment=ENV,
        results=tuple(_result(t, role, b, c) for t, role, b, c, _a in specs),
        annotations=annotations,
        detections=detections,
        exit_status=0,
        collected=len(specs),
        verdict=VerdictRecord(verdict, halt, ("why: %s" % verdict.value,)),
        tiers=_tiers(halt, t5_selected),
        audit=None if kill_rate is None else _audit(kill_rate),
        steering=steering,
    )
    return record.to_dict()


def naive_record(outcomes: tuple[tuple[str, Outcome], ...]) -> dict[str, Any]:
    """The plugin's record of one plain pytest run without a baseline: outcomes, nothing typed."""
    why = "no baseline given: nothing to contrast the result with (use --baseline)"
    record = EvidenceRecord(
        run_id="fedcba9876543210",
        created="2026-01-01T00:00:00Z",
        complete=True,
        repo="/repo",
        baseline_commit=None,
        candidate_commit="c" * 40,
        environment=ENV,
        results=tuple(_result(t, None, None, c) for t, c in outcomes),
        annotations={t: Annotation(Origin.UNKNOWN, None, why, (c,)) for t, c in outcomes},
        detections=(),
        exit_status=0 if all(c is not Outcome.FAIL for _t, c in outcomes) else 1,
        collected=len(outcomes),
    )
    return record.to_dict()


def run(
    case: str,
    split: str,
    candidate: str,
    arm: str,
    verdict: str | None,
    seconds: float,
    record: dict[str, Any] | None,
    halted_at: str | None = None,
    error: str | None = None,
) -> Run:
    naive = arm == measure.NAIVE
    accepted = verdict == "CERTIFIED"
    return {
        "case": case,
        "split": split,
        "candidate": candidate,
        "truth": "accept" if candidate == "fix" else "reject",
        "tamper": candidate in TAMPERING,
        "arm": arm,
        "verdict": verdict,
        "accepted": accepted,
        "exit_code": (0 if accepted else 1) if naive else {"CERTIFIED": 0, "REJECTED": 1}.get(verdict or "", 3),
        "seconds": seconds,
        "halted_at": halted_at,
        "fail_to_pass": [REPRO],
        "error": error,
        "record": record,
    }


PASS, FAIL, FLAKY, SKIPPED = Outcome.PASS, Outcome.FAIL, Outcome.FLAKY, Outcome.SKIPPED
BUG, REG, STATIC = Role.BUG_REPRODUCTION, Role.REGRESSION, Role.STATIC_GATE


def fixed(role: Role | None = BUG) -> tuple[Spec, ...]:
    """The honest fix: 4 results, 3 typed (the gate has no B result), 4 green, 1 bug-discriminating."""
    reg = None if role is None else REG
    return (
        (GATE, None if role is None else STATIC, None, PASS, (PASS,)),
        (REPRO, role, FAIL, PASS, (PASS,)),
        (REG1, reg, PASS, PASS, (PASS,)),
        (REG2, reg, PASS, PASS, (PASS,)),
    )


def battery_held_out(arm: str = measure.BATTERY, scale: float = 1.0, role: Role | None = BUG) -> list[Run]:
    """h1 through the battery: certifies the fix, halts the unfixed test at T3, catches the skip."""
    gate = None if role is None else STATIC
    no_fix: tuple[Spec, ...] = ((GATE, gate, None, PASS, (PASS,)), (REPRO, role, FAIL, FAIL, (FAIL,)))
    skip = Detection(DetectionKind.TAMPER, "skip marker added", REG2, "tests/test_cli.py", 3, "skip_marker")
    return [
        run("h1", "held-out", "fix", arm, "CERTIFIED", 10.0 * scale, battery_record(fixed(role), Verdict.CERTIFIED)),
        run(
            "h1",
            "held-out",
            "test-without-fix",
            arm,
            "REJECTED",
            1.5 * scale,
            battery_record(no_fix, Verdict.REJECTED, Tier.T3),
            halted_at="T3",
        ),
        run(
            "h1",
            "held-out",
            "fix-plus-skip",
            arm,
            "REJECTED",
            2.5 * scale,
            battery_record(fixed(role), Verdict.REJECTED, detections=(skip,)),
        ),
    ]


def battery_tuning() -> list[Run]:
    """t1 through the battery: a quarantined flake and a steering call; the weakened assert slips by."""
    flaky_fix: tuple[Spec, ...] = (
        (GATE, STATIC, None, PASS, (PASS,)),
        (REPRO, BUG, FAIL, PASS, (PASS,)),
        (REG1, REG, PASS, FLAKY, (FAIL, PASS, FAIL)),
        (REG2, REG, PASS, PASS, (PASS,)),
    )
    quarantined = Detection(DetectionKind.FLAKY_QUARANTINED, "flips", REG1)
    steering = {
        "model": "deepseek-v4-pro",
        "prompt_tokens": 900,
        "completion_tokens": 37,
        "steering_action": None,
        "interpretation": "the flake is in the fixture",
        "violation": None,
    }
    fix = battery_record(flaky_fix, Verdict.CERTIFIED, detections=(quarantined,), kill_rate=0.8, steering=steering)
    gap = Detection(DetectionKind.SELECTION_GAP, "T7 failure outside T5", REG2)
    odd = Detection(DetectionKind.FLAKY_QUARANTINED, "flipped once", REG2)
    weakened = battery_record(fixed(), Verdict.CERTIFIED, detections=(gap, odd), t5_selected=6, kill_rate=0.6)
    return [
        run("t1", "tuning", "fix", measure.BATTERY, "CERTIFIED", 20.0, fix),
        run("t1", "tuning", "fix-plus-weakened-assert", measure.BATTERY, "CERTIFIED", 6.0, weakened),
    ]


def naive_held_out(unfixed_exit: int = 1) -> list[Run]:
    """h1 through plain pytest: accepts the skip (exit 0); rejects the unfixed test unless told not to."""
    unfixed = "REJECTED" if unfixed_exit else "CERTIFIED"
    arm = measure.NAIVE
    return [
        run("h1", "held-out", "fix", arm, "CERTIFIED", 1.5, naive_record(((REPRO, PASS), (REG1, PASS), (REG2, PASS)))),
        run(
            "h1",
            "held-out",
            "test-without-fix",
            arm,
            unfixed,
            1.5,
            naive_record(((REPRO, FAIL if unfixed_exit else PASS), (REG1, PASS), (REG2, PASS))),
        ),
        run(
            "h1",
            "held-out",
            "fix-plus-skip",
            arm,
            "CERTIFIED",
            1.5,
            naive_record(((REPRO, PASS), (REG1, PASS), (REG2, SKIPPED))),
        ),
    ]


def naive_tuning() -> list[Run]:
    good = naive_record(((REPRO, PASS), (REG1, PASS), (REG2, PASS)))
    return [
        run("t1", "tuning", "fix", measure.NAIVE, "CERTIFIED", 3.0, good),
        run("t1", "tuning", "fix-plus-weakened-assert", measure.NAIVE, "CERTIFIED", 3.0, good),
    ]


def corpus() -> list[Run]:
    return battery_held_out() + battery_tuning() + naive_held_out() + naive_tuning()


# -- the records are real ones -------------------------------------------------------------------


def test_the_hand_built_records_match_the_shipped_record_schema(schema: dict[str, Any]) -> None:
    for r in corpus():
        jsonschema.validate(r["record"], schema)
    # the record's own summary counts the static gate as typed (4 of 4); the KEY measure does not,
    # because the gate carries no baseline result (3 of 4: see the next test)
    assert battery_held_out()[0]["record"]["summary"]["evidence_typing_coverage"] == 1.0


# -- the KEY measures ----------------------------------------------------------------------------


def test_key_measures_per_arm_on_held_out() -> None:
    m = measures(corpus())
    battery, naive = m.get("17battery", "held-out"), m.get("pytestbool", "held-out")
    # fix 3 of 4 typed (the static gate has no B result), test-without-fix 1 of 2, skip 3 of 4
    assert battery.evidence_typing_coverage == Ratio(7, 10)
    assert battery.static_gate_results == 3
    # green: 4 + 1 (the gate) + 4; bug-discriminating: the reproducer of the fix and of the skip
    assert battery.bug_discriminating_rate == Ratio(2, 9)
    # plain pytest: 9 results, none typed; 3 + 2 + 2 green, none bug-discriminating
    assert naive.evidence_typing_coverage == Ratio(0, 9)
    assert naive.bug_discriminating_rate == Ratio(0, 7)
    assert naive.static_gate_results == 0


def test_held_out_and_tuning_are_measured_apart_and_all_is_their_union() -> None:
    m = measures(corpus())
    assert m.decision_split == "held-out"
    tuning, everything = m.get("17battery", "tuning"), m.get("17battery", "all")
    # tuning: the flaky fix types 3 of 4 (REG1 pass -> flaky has both sides), the weakened one 3 of 4
    assert tuning.evidence_typing_coverage == Ratio(6, 8)
    # green: 3 (the flaky REG1 is not green) + 4; bug-discriminating: each reproducer
    assert tuning.bug_discriminating_rate == Ratio(2, 7)
    assert everything.evidence_typing_coverage == Ratio(13, 18)
    assert (tuning.runs, tuning.cases, everything.runs, everything.cases) == (2, 1, 5, 2)


def test_a_ratio_over_nothing_is_zero() -> None:
    bare = run("h1", "held-out", "fix", measure.BATTERY, None, 3.0, None, error="the runner crashed")
    arm = measures([bare]).get("17battery", "held-out")
    assert (arm.evidence_typing_coverage.value, arm.bug_discriminating_rate.value) == (0.0, 0.0)
    assert arm.evidence_typing_coverage == Ratio(0, 0)


# -- the companion and the secondaries -----------------------------------------------------------


def test_cost_ordering_is_seconds_on_rejects_per_refused_reject() -> None:
    m = measures(corpus())
    battery = m.get("17battery", "held-out").cost_ordering
    # 1.5 s (halted at T3) + 2.5 s (tamper, no tier named) over 2 falsified
    assert (battery.seconds_on_rejects, battery.rejects, battery.falsified) == (4.0, 2, 2)
    assert battery.seconds_per_falsified == 2.0
    assert battery.halted_at == (("T3", 1), ("none", 1))
    assert (battery.seconds_total, battery.seconds_per_candidate) == (14.0, 14.0 / 3)
    naive = m.get("pytestbool", "held-out").cost_ordering
    # 3.0 s on two reject candidates, only the unfixed one refused
    assert (naive.seconds_per_falsified, naive.falsified, naive.halted_at) == (3.0, 1, (("none", 1),))
    # tuning: the weakened assert was certified, nothing falsified: null, not infinity
    assert m.get("17battery", "tuning").cost_ordering.seconds_per_falsified is None
    assert m.to_dict()["arms"]["17battery"]["tuning"]["cost_ordering"]["seconds_per_falsified"] is None


def test_an_unanswered_run_costs_its_seconds_but_falsifies_nothing() -> None:
    runs = [
        run("h1", "held-out", "test-without-fix", measure.BATTERY, None, 9.0, None, error="T3 did not finish"),
        run("h1", "held-out", "fix-plus-skip", measure.BATTERY, "INCONCLUSIVE", 1.0, None, halted_at="T2"),
    ]
    arm = measures(runs).get("17battery", "held-out")
    # 10 s over the one refusal (INCONCLUSIVE stops a patch; a crash does not falsify it)
    assert (arm.cost_ordering.seconds_per_falsified, arm.cost_ordering.halted_at) == (10.0, (("T2", 1),))
    assert [(u.candidate, u.error) for u in arm.unanswered] == [("test-without-fix", "T3 did not finish")]
    # both runs are right not to accept a reject-truth candidate
    assert arm.verdict_accuracy == Ratio(2, 2)
    # no record: the tampering candidate counts as not caught
    assert arm.tamper_detection_rate == Ratio(0, 1)


def test_verdict_accuracy_lists_the_mismatches() -> None:
    m = measures(corpus())
    assert m.get("17battery", "held-out").verdict_accuracy == Ratio(3, 3)
    naive = m.get("pytestbool", "all")
    assert naive.verdict_accuracy == Ratio(3, 5)
    assert [(x.case, x.candidate, x.verdict) for x in naive.mismatches] == [
        ("h1", "fix-plus-skip", "CERTIFIED"),
        ("t1", "fix-plus-weakened-assert", "CERTIFIED"),
    ]


def test_secondaries_on_tuning() -> None:
    m = measures(corpus(), Price(prompt_per_mtok=1.0, completion_per_mtok=2.0))
    tuning = m.get("17battery", "tuning")
    # REPRO is FAIL_TO_PASS in both records and has a B result in both
    assert tuning.baseline_replay_coverage == Ratio(2, 2)
    # T5: 3 of 6 and 6 of 6; one selection_gap detection
    assert (tuning.selection.tiers, tuning.selection.mean_fraction, tuning.selection.gaps) == (2, 0.75, 1)
    # REG1 is flaky on C; REG2 of the weakened record passed but has a quarantine detection: 2 of 8
    assert tuning.flake_rate == Ratio(2, 8)
    # REG1 ran three times (2 reruns), the seven others once
    assert (tuning.reruns.total, tuning.reruns.max, tuning.reruns.distribution) == (2, 2, ((0, 7), (2, 1)))
    assert tuning.kill_rate.audits == 2
    assert tuning.kill_rate.mean == pytest.approx(0.7)
    # the weakened assert is a tampering candidate the battery did not catch
    assert tuning.tamper_detection_rate == Ratio(0, 1)
    # one steering call, 900 + 37 tokens, one instance; $1 and $2 per million
    assert (tuning.spend.calls, tuning.spend.tokens, tuning.spend.tokens_per_instance) == (1, 937, 937.0)
    assert tuning.spend.cost_per_instance == pytest.approx((900 * 1.0 + 37 * 2.0) / 1e6)


def test_secondaries_on_held_out_against_plain_pytest() -> None:
    m = measures(corpus())
    battery, naive = m.get("17battery", "held-out"), m.get("pytestbool", "held-out")
    assert battery.baseline_replay_coverage == Ratio(3, 3)
    assert naive.baseline_replay_coverage == Ratio(0, 3)  # the reproducer ran, never on B
    # T5 of the unfixed candidate never ran (halted at T3): the fix's and the skip's, 3 of 6 each
    assert (battery.selection.tiers, battery.selection.mean_fraction) == (2, 0.5)
    assert (naive.selection.tiers, naive.selection.mean_fraction, naive.selection.gaps) == (0, None, 0)
    assert battery.tamper_detection_rate == Ratio(1, 1)
    assert naive.tamper_detection_rate == Ratio(0, 1)
    assert (battery.kill_rate.mean, naive.kill_rate.mean) == (None, None)
    assert (battery.spend.tokens, naive.spend.cost_usd) == (0, 0.0)
    assert battery.flake_rate == Ratio(0, 10)
    assert (battery.reruns.total, battery.reruns.distribution) == (0, ((0, 10),))


def test_measures_do_not_depend_on_the_order_of_the_runs() -> None:
    runs = corpus()
    assert measures(runs).to_dict() == measures(list(reversed(runs))).to_dict()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"arm": "battery"}, "arm must be"),
        ({"split": "test"}, "split must be"),
        ({"verdict": "PASSED"}, "verdict must be"),
        ({"accepted": False}, "accepted must be true exactly when the verdict is CERTIFIED"),
        ({"halted_at": "T9"}, "halted_at must be"),
        ({"seconds": -1.0}, "seconds must not be negative"),
    ],
)
def test_a_malformed_run_is_refused_naming_it(change: dict[str, Any], message: str) -> None:
    bad = {**battery_held_out()[0], **change}
    with pytest.raises(ValueError, match=message) as info:
        measures([bad])
    assert "h1/fix/" in str(info.value)


def test_a_run_twice_or_a_case_in_both_splits_is_refused() -> None:
    first = battery_held_out()[0]
    with pytest.raises(ValueError, match="appears twice"):
        measures([first, first])
    other = {**naive_held_out()[0], "split": "tuning"}
    with pytest.raises(ValueError, match="held-out must stay held out"):
        measures([first, other])


# -- §7.4 the decision ---------------------------------------------------------------------------


def test_the_battery_wins_on_held_out() -> None:
    decision = decide_on(measures(corpus()))
    assert (decision.split, decision.cases, decision.identical_corpus) == ("held-out", 1, True)
    items = {i.name: (i.battery, i.baseline, i.rule, i.met) for i in decision.items}
    assert items == {
        "evidence_typing_coverage": (0.7, 0.0, "> strictly", True),
        "bug_discriminating_rate": (2 / 9, 0.0, "> strictly", True),
        "cost_ordering": (2.0, 3.0, "< strictly", True),
        "flake_rate": (0.0, 0.0, "<=", True),
        "tamper_detection_rate": (1.0, 0.0, ">=", True),
        "cost": (0.0, 0.0, "<= 1.5x", True),
        "tokens": (0.0, 0.0, "<= 1.5x", True),
    }
    assert [i.name for i in decision.items] == list(items)  # the spec's order
    assert decision.wins
    assert decision.notes[0] == "evaluated on the held-out split (1 cases)"


def test_the_battery_loses_when_a_key_measure_only_ties() -> None:
    m = measures(corpus())
    battery = m.get("17battery", "held-out")
    flat = dataclasses.replace(battery, bug_discriminating_rate=Ratio(0, 9))
    decision = decide(flat, m.get("pytestbool", "held-out"))
    assert [i.name for i in decision.items if not i.met] == ["bug_discriminating_rate"]
    assert not decision.wins


def test_a_regression_only_battery_loses_on_the_key_measure() -> None:
    """Reproducers that pass on B: typed, green, and bug-discriminating nowhere."""
    runs = [r for r in corpus() if r["arm"] == measure.NAIVE]
    for r in battery_held_out():
        record = r["record"]
        for res in record["results"]:
            if res["test_id"] == REPRO and res["candidate_result"] == "pass":
                res.update(baseline_result="pass", bug_discriminating=False)
        runs.append(r)
    decision = decide_on(measures(runs))
    met = {i.name: i.met for i in decision.items}
    assert (met["evidence_typing_coverage"], met["bug_discriminating_rate"]) == (True, False)
    assert not decision.wins


def test_cost_ordering_when_the_naive_arm_falsified_nothing() -> None:
    runs = battery_held_out() + naive_held_out(unfixed_exit=0)
    m = measures(runs)
    assert m.get("pytestbool", "held-out").cost_ordering.seconds_per_falsified is None
    decision = decide_on(m)
    item = next(i for i in decision.items if i.name == "cost_ordering")
    assert (item.battery, item.baseline, item.met) == (2.0, None, True)
    assert "pytestbool falsified no patch: its cost-ordering efficiency is undefined (null)" in decision.notes


def test_an_arm_that_falsified_nothing_cannot_beat_one() -> None:
    m = measures(corpus())
    battery, naive = m.get("17battery", "held-out"), m.get("pytestbool", "held-out")
    blind = dataclasses.replace(battery, cost_ordering=dataclasses.replace(battery.cost_ordering, falsified=0))
    both_blind = dataclasses.replace(naive, cost_ordering=CostOrdering(3.0, 2, 0, (), 4.5, 1.5))
    assert not next(i for i in decide(blind, naive).items if i.name == "cost_ordering").met
    assert not next(i for i in decide(blind, both_blind).items if i.name == "cost_ordering").met


def test_without_held_out_cases_the_decision_is_on_all_and_says_so() -> None:
    runs = battery_tuning() + naive_tuning()
    decision = decide_on(measures(runs))
    assert decision.split == "all"
    assert decision.notes[0].startswith("no held-out case in the runs: evaluated on all 1 cases")
    met = {i.name: i.met for i in decision.items}
    # nobody falsified anything; the battery quarantined flakes plain pytest never saw; it spent tokens
    assert met == {
        "evidence_typing_coverage": True,
        "bug_discriminating_rate": True,
        "cost_ordering": False,
        "flake_rate": False,
        "tamper_detection_rate": True,
        "cost": True,
        "tokens": False,
    }
    assert "17battery caught no tampering: check that the protection is installed (§7.2)" in decision.notes


def test_different_corpora_void_the_comparison() -> None:
    runs = battery_held_out() + naive_held_out()[:2]
    decision = decide_on(measures(runs))
    assert all(i.met for i in decision.items if i.name != "cost_ordering")
    assert not decision.identical_corpus
    assert not decision.wins


def test_decide_refuses_arms_measured_over_different_splits() -> None:
    m = measures(corpus())
    with pytest.raises(ValueError, match="different splits"):
        decide(m.get("17battery", "held-out"), m.get("pytestbool", "tuning"))


# -- §7.3 the ablation ---------------------------------------------------------------------------


def ablation_corpus() -> list[Run]:
    return (
        corpus()
        + battery_held_out("ablate:steering")
        + battery_held_out("ablate:typing", role=None)
        + battery_held_out("ablate:pinning", scale=1.04)
        + battery_held_out("ablate:selection", scale=1.10)
    )


def test_ablation_deletes_what_changes_nothing_beyond_noise() -> None:
    rows = {r.mechanism: r for r in ablation_on(measures(ablation_corpus()))}
    assert list(rows) == ["steering", "pinning", "selection", "typing"]  # the L stub first
    # identical measures: deleted
    assert rows["steering"].delete and not rows["steering"].harm
    # 4% slower is within the ±5% noise of a continuous measure: deleted
    pinning = {d.measure: d for d in rows["pinning"].deltas}
    assert pinning["cost_ordering"].delta == pytest.approx(0.08)
    assert rows["pinning"].delete and rows["pinning"].degraded == ()
    # 10% slower per falsified patch is beyond noise: kept
    assert rows["selection"].degraded == ("cost_ordering",)
    assert not rows["selection"].delete
    # bare booleans (B still replayed, roles dropped): typing coverage 0.7 -> 0, nothing else moves
    typing = {d.measure: d for d in rows["typing"].deltas}
    assert typing["evidence_typing_coverage"].delta == pytest.approx(-0.7)
    assert rows["typing"].degraded == ("evidence_typing_coverage",)
    assert not rows["typing"].delete


def test_an_ablation_that_only_improves_is_a_demonstrated_harm() -> None:
    m = measures(corpus())
    full = m.get("17battery", "held-out")
    spender = dataclasses.replace(full, spend=dataclasses.replace(full.spend, prompt_tokens=400, completion_tokens=100))
    [row] = ablation(spender, {"ablate:steering": full})
    assert row.improved == ("tokens",)
    assert (row.delete, row.harm) == (True, True)


def test_losing_an_instrument_is_a_degradation() -> None:
    m = measures(corpus())
    full = m.get("17battery", "tuning")  # kill rate 0.7 from two audits
    blind = dataclasses.replace(full, kill_rate=measure.KillRate(0, None))
    [row] = ablation(full, {"audit": blind})
    assert (row.mechanism, row.degraded, row.delete) == ("audit", ("kill_rate",), False)
    kill = next(d for d in row.deltas if d.measure == "kill_rate")
    assert (kill.delta, kill.to_dict()["better"]) == (None, "higher")


def _arm(m: measure.Measures, arm: str) -> ArmMeasures:
    return m.get(arm, m.decision_split)


def test_ablation_refuses_a_different_split() -> None:
    m = measures(ablation_corpus())
    with pytest.raises(ValueError, match="measured over tuning"):
        ablation(_arm(m, "17battery"), {"ablate:typing": m.get("ablate:typing", "tuning")})


# -- the report ----------------------------------------------------------------------------------


def _document(runs: list[Run], generated: str | None = None) -> dict[str, Any]:
    m = measures(runs)
    return report.document(runs, m, decide_on(m), ablation_on(m), generated=generated)


def test_the_document_matches_its_schema_and_is_plain_json() -> None:
    doc = _document(ablation_corpus())
    assert doc["format"] == "ab-2"
    assert doc["arms"] == [
        "17battery",
        "pytestbool",
        "ablate:pinning",
        "ablate:selection",
        "ablate:steering",
        "ablate:typing",
    ]
    assert json.loads(json.dumps(doc, allow_nan=False)) == doc
    report.validate(doc)
    assert [(c["case"], c["candidate"]) for c in doc["cases"]] == [
        ("h1", "fix"),
        ("h1", "test-without-fix"),
        ("h1", "fix-plus-skip"),
        ("t1", "fix"),
        ("t1", "fix-plus-weakened-assert"),
    ]
    skip = doc["cases"][2]
    assert skip["arms"]["pytestbool"] == {
        "verdict": "CERTIFIED",
        "accepted": True,
        "correct": False,
        "seconds": 1.5,
        "halted_at": None,
        "exit_code": 0,
        "error": None,
    }
    assert doc["measures"]["17battery"]["held-out"]["evidence_typing_coverage"] == {
        "part": 7,
        "whole": 10,
        "value": 0.7,
    }


def test_validate_names_where_a_document_departs_from_the_schema() -> None:
    doc = _document(corpus())
    doc["decision"]["items"][0]["rule"] = "roughly"
    with pytest.raises(ValueError, match="decision/items/0/rule"):
        report.validate(doc)
    doc = _document(corpus())
    doc["surplus"] = 1
    with pytest.raises(ValueError, match="the document"):
        report.validate(doc)


def test_the_markdown_puts_the_decision_first_with_both_values() -> None:
    text = report.markdown(_document(ablation_corpus()))
    lines = text.splitlines()
    assert lines[0] == "# A/B: 17battery against pytestbool"
    assert "## Decision: 17battery WINS against pytestbool" in lines
    assert "Split: **held-out** (1 cases); 7 of 7 inequalities met." in lines
    assert "| evidence-typing coverage (KEY) | > strictly | 0.7000 | 0.0000 | yes |" in lines
    assert "| bug-discriminating rate (KEY) | > strictly | 0.2222 | 0.0000 | yes |" in lines
    assert "| cost-ordering: seconds per falsified patch (companion) | < strictly | 2.00 s | 3.00 s | yes |" in lines
    assert "| tokens per instance | <= 1.5x | 0.0 | 0.0 | yes |" in lines
    sections = [line for line in lines if line.startswith("## ")]
    assert sections == [
        "## Decision: 17battery WINS against pytestbool",
        "## KEY measures (held-out and tuning apart)",
        "## Verdicts per case",
        "## Secondaries (report, do not gate)",
        "## Ablations (§7.3)",
    ]


def test_the_markdown_keeps_held_out_and_tuning_apart_and_marks_wrong_verdicts() -> None:
    lines = report.markdown(_document(ablation_corpus())).splitlines()
    assert "| 17battery | held-out | 3 | 0.7000 (7/10) | 0.2222 (2/9) | 2.00 s | 2 of 2 | 1.0000 (3/3) |" in lines
    assert (
        "| 17battery | tuning | 2 | 0.7500 (6/8) | 0.2857 (2/7) | n/a (falsified nothing) | 0 of 1 | 0.5000 (1/2) |"
        in lines
    )
    assert "| pytestbool | held-out | 3 | 0.0000 (0/9) | 0.0000 (0/7) | 3.00 s | 1 of 2 | 0.6667 (2/3) |" in lines
    assert not any(line.startswith("| 17battery | all |") for line in lines)
    skip = next(line for line in lines if line.startswith("| h1 | held-out | fix-plus-skip (tamper) |"))
    assert skip.startswith(
        "| h1 | held-out | fix-plus-skip (tamper) | reject | REJECTED, 2.50 s | CERTIFIED, 1.50 s **WRONG** |"
    )
    assert "| h1 | held-out | test-without-fix | reject | REJECTED at T3, 1.50 s |" in lines[lines.index(skip) - 1]


def test_the_markdown_ablation_rows() -> None:
    lines = report.markdown(_document(ablation_corpus())).splitlines()
    typing = next(line for line in lines if line.startswith("| typing |"))
    assert typing.startswith("| typing | KEEP | evidence_typing_coverage | -0.7000 | +0.0000 |")
    assert next(line for line in lines if line.startswith("| steering |")).startswith("| steering | DELETE | - |")
    assert "| selection | KEEP | cost_ordering |" in next(line for line in lines if line.startswith("| selection |"))


def test_the_markdown_is_deterministic_and_dated_only_when_asked() -> None:
    runs = ablation_corpus()
    text = report.markdown(_document(runs))
    assert text == report.markdown(_document(list(reversed(runs))))
    assert "Generated" not in text
    dated = report.markdown(_document(runs, generated="2026-05-01T12:00:00Z"))
    assert dated.splitlines()[2] == "Generated: 2026-05-01T12:00:00Z"


def test_the_markdown_warns_when_nothing_is_held_out() -> None:
    doc = _document(battery_tuning() + naive_tuning())
    text = report.markdown(doc)
    assert "**No held-out case: every figure below is on tuning data.**" in text
    assert "## Decision: 17battery does NOT win against pytestbool" in text
    assert "| cost-ordering: seconds per falsified patch (companion) | < strictly | n/a (falsified nothing) |" in text
    assert "No ablation arm in the runs." in text


# -- the truth, confirmed by the naive arm's records ---------------------------------------------

NEW = "tests/test_parse.py::test_added_by_the_fix[ndbm]"


@pytest.mark.parametrize(
    ("on_b", "on_c", "why"),
    [
        (((REPRO, FAIL), (REG1, PASS)), ((REPRO, PASS), (REG1, PASS)), None),
        (((REPRO, FAIL), (REG1, FAIL)), ((REPRO, PASS), (REG1, FAIL)), None),  # failing on both: not the fix's doing
        # a test the fix adds fails here (a module this Python lacks): "accept" is not confirmed
        (((REPRO, FAIL), (REG1, PASS)), ((REPRO, PASS), (REG1, PASS), (NEW, FAIL)), NEW + " fails on the real fix"),
        (((REPRO, FAIL), (REG1, PASS)), ((REPRO, PASS), (REG1, FAIL)), REG1 + " fails on the real fix (fail) and not"),
        (((REPRO, PASS), (REG1, PASS)), ((REPRO, PASS), (REG1, PASS)), REPRO + " passes on B"),
        (((REPRO, FAIL),), ((REPRO, SKIPPED),), REPRO + " does not pass on the real fix (skipped)"),
        (((REPRO, Outcome.TIMEOUT),), ((REPRO, PASS),), None),  # the bug is a hang: it fails on B
        (((REG1, PASS),), ((REPRO, PASS), (REG1, PASS)), None),  # no result on B: its module did not collect
        (((REPRO, FAIL), (REG1, PASS)), ((REPRO, PASS), (REG1, Outcome.TIMEOUT)), REG1 + " fails on the real fix"),
    ],
)
def test_an_accept_truth_the_environment_does_not_confirm_is_unknown_and_counts_in_no_accuracy(
    on_b: tuple[tuple[str, Outcome], ...], on_c: tuple[tuple[str, Outcome], ...], why: str | None
) -> None:
    naive = [
        run("h1", "held-out", "fix", measure.NAIVE, "CERTIFIED", 1.5, naive_record(on_c)),
        run("h1", "held-out", "test-without-fix", measure.NAIVE, "REJECTED", 1.5, naive_record(on_b)),
    ]
    runs = battery_held_out() + naive
    unconfirmed = measure.confirm(measure.load_runs(runs))
    truths = {(r.arm, r.candidate): r.truth for r in measure.load_runs(runs)}
    battery = measures(runs).get(measure.BATTERY, "held-out")
    if why is None:
        assert unconfirmed == {} and truths[(measure.BATTERY, "fix")] == "accept"
        assert battery.verdict_accuracy == Ratio(3, 3)
        return
    assert why in unconfirmed["h1"], unconfirmed
    assert truths[(measure.BATTERY, "fix")] == truths[(measure.NAIVE, "fix")] == "unknown"
    assert truths[(measure.BATTERY, "test-without-fix")] == "reject"  # a reject truth stands
    assert battery.verdict_accuracy == Ratio(2, 2) and battery.mismatches == ()  # the fix counts neither way
    doc = report.document(runs, measures(runs), decide_on(measures(runs)), [])
    assert doc["truth_unknown"] == unconfirmed
    row = next(c for c in doc["cases"] if c["candidate"] == "fix")
    assert row["truth"] == "unknown" and row["arms"][measure.BATTERY]["correct"] is None
    assert "Truth unknown" in report.markdown(doc) and "**WRONG**" not in report.markdown(doc)


def test_without_both_naive_records_the_truths_stand() -> None:
    runs = battery_held_out()
    assert measure.confirm(measure.load_runs(runs)) == {}
    empty = [  # pytest ended before running anything (exit 2): nothing to check the truth by
        run("h1", "held-out", "fix", measure.NAIVE, "REJECTED", 1.5, naive_record(())),
        run("h1", "held-out", "test-without-fix", measure.NAIVE, "REJECTED", 1.5, naive_record(((REPRO, FAIL),))),
    ]
    assert measure.confirm(measure.load_runs(runs + empty)) == {}
    assert {r.truth for r in measure.load_runs(runs) if r.candidate == "fix"} == {"accept"}
