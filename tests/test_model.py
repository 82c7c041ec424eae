"""The model's pure logic: the B/C table, role assignment, the contract's shape, round trips."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest
from conftest import Record

from pytest_evidence.model import (
    RESULT_FIELDS,
    STANDING,
    Annotation,
    BCClass,
    Detection,
    DetectionKind,
    Environment,
    EvidenceRecord,
    Failure,
    FailureKind,
    Observation,
    Origin,
    Outcome,
    Role,
    ValidationResult,
    assign_role,
    bounded,
    classify,
    is_bug_discriminating,
)

P, F, E = Outcome.PASS, Outcome.FAIL, Outcome.ERROR


@pytest.mark.parametrize(
    ("b", "c", "cls"),
    [
        (F, P, BCClass.BUG_DISCRIMINATING),
        (E, P, BCClass.BUG_DISCRIMINATING),
        (P, P, BCClass.REGRESSION_ONLY),
        (F, F, BCClass.NO_FIX),
        (E, F, BCClass.NO_FIX),
        (P, F, BCClass.REGRESSION),
        (P, E, BCClass.REGRESSION),
        (None, P, None),
        (Outcome.SKIPPED, P, None),
        (F, Outcome.FLAKY, None),
        (Outcome.TIMEOUT, P, None),
    ],
)
def test_bc_table(b: Outcome | None, c: Outcome, cls: BCClass | None) -> None:
    assert classify(b, c) is cls
    assert is_bug_discriminating(b, c) is (cls is BCClass.BUG_DISCRIMINATING)


@pytest.mark.parametrize(
    ("origin", "designated", "baseline", "replayed", "exclusive", "role"),
    [
        (Origin.ADDED, False, F, True, False, Role.BUG_REPRODUCTION),
        (Origin.ADDED, False, P, True, False, Role.BUG_REPRODUCTION),  # no designation: new tests reproduce
        (Origin.ADDED, False, P, True, True, Role.REGRESSION),  # beside designated reproducers: a new test
        (Origin.ADDED, False, F, True, True, Role.BUG_REPRODUCTION),
        (Origin.UNCHANGED, False, P, True, False, Role.REGRESSION),
        (Origin.UNCHANGED, True, F, True, False, Role.BUG_REPRODUCTION),
        # a changed test that B passes (an unchanged sibling parametrization): not a reproducer
        (Origin.CHANGED, False, P, True, False, Role.REGRESSION),
        (Origin.CHANGED, False, P, True, True, Role.REGRESSION),
        (Origin.CHANGED, False, F, True, False, Role.BUG_REPRODUCTION),  # FAIL_TO_PASS (or no fix)
        (Origin.CHANGED, False, F, True, True, None),  # designation is exclusive: it must be named
        (Origin.UNKNOWN, False, P, True, False, None),
        (Origin.ADDED, False, None, True, False, None),
        (Origin.UNKNOWN, False, None, False, False, None),
        (Origin.UNKNOWN, True, None, False, False, Role.BUG_REPRODUCTION),
    ],
)
def test_role_assignment(
    origin: Origin, designated: bool, baseline: Outcome | None, replayed: bool, exclusive: bool, role: Role | None
) -> None:
    got, reason = assign_role(origin, designated, False, baseline, replayed, exclusive)
    assert got is role
    assert (reason is None) is (role is not None), "an untyped result always says why"


def test_validation_result_has_exactly_the_contract_fields_in_order() -> None:
    contract = (
        "test_id role candidate_commit baseline_result candidate_result duration exit_code flaky_history "
        "affected_by_change bug_discriminating stdout_summary failure"
    ).split()
    assert tuple(f.name for f in dataclasses.fields(ValidationResult)) == RESULT_FIELDS == tuple(contract)
    assert {r.value for r in Role} == {"BUG_REPRODUCTION", "REGRESSION", "EXPECTED_CHANGE", "STATIC_GATE"}


def _record() -> EvidenceRecord:
    failure = Failure(FailureKind.ASSERTION, "AssertionError: boom", "tests/t.py", 3, "assert 0")
    results = (
        ValidationResult("t.py::a", Role.BUG_REPRODUCTION, "abc", F, P, 0.5, 0, (), None, True, "out", None),
        ValidationResult("t.py::b", None, "abc", None, F, 0.1, 1, ("r:C:fail,pass:0123",), False, False, "", failure),
    )
    annotations = {
        "t.py::a": Annotation(Origin.ADDED, BCClass.BUG_DISCRIMINATING, None, (P,), failure),
        "t.py::b": Annotation(Origin.UNKNOWN, None, "no baseline", (F, F), None),
    }
    env = Environment("0" * 64, "3.11.7", "CPython", "linux-x86_64", "9.0", 10)
    return EvidenceRecord(
        run_id="r",
        created="2026-01-01T00:00:00+00:00",
        complete=True,
        repo="/r",
        baseline_commit="b",
        candidate_commit="abc",
        environment=env,
        results=results,
        annotations=annotations,
        detections=(Detection(DetectionKind.TYPING_FAILURE, "1 untyped"),),
        exit_status=1,
        baseline_run={"executed": 2},
        collected=2,
        not_run=(),
    )


def test_record_round_trips_through_json(schema: Record) -> None:
    import jsonschema

    record = _record()
    doc = json.loads(json.dumps(record.to_dict()))
    jsonschema.validate(doc, schema)
    assert EvidenceRecord.from_dict(doc) == record
    assert doc["summary"]["bug_discriminating_rate"] == 1.0
    assert doc["summary"]["evidence_typing_coverage"] == 0.5


def test_record_of_another_schema_version_is_refused() -> None:
    doc = _record().to_dict()
    doc["schema_version"] = "0.9"
    with pytest.raises(ValueError, match=r"schema_version '0\.9'"):
        EvidenceRecord.from_dict(doc)


def test_schema_rejects_a_bug_discriminating_claim_without_the_contrast(schema: Record) -> None:
    import jsonschema

    doc = _record().to_dict()
    doc["results"][1]["bug_discriminating"] = True
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, schema)


def test_bounded_keeps_head_and_tail() -> None:
    text = "HEAD" + "x" * 10_000 + "TAIL"
    cut = bounded(text, 200)
    assert len(cut) == 200 and cut.startswith("HEAD") and cut.endswith("TAIL")
    assert bounded("short", 200) == "short"


def test_model_and_plugin_import_nothing_heavy() -> None:
    """The model must load in old target environments: no pytest, no runner dependencies."""
    code = (
        "import sys, pytest_evidence.model\n"
        "heavy = [m for m in ('pytest', '_pytest', 'rich', 'jsonschema', 'runner') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
        "import pytest_evidence.plugin\n"
        "heavy = [m for m in ('rich', 'jsonschema', 'runner', 'coverage', 'mutmut') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("name", ["evidence-honest-fix.json", "certify-honest-fix.json"])
def test_shipped_example_records_are_valid(schema: Record, name: str) -> None:
    import json
    import pathlib

    import jsonschema

    path = pathlib.Path(__file__).parent.parent / "examples" / name
    doc = json.loads(path.read_text())
    jsonschema.validate(doc, schema)
    assert EvidenceRecord.from_dict(doc).to_dict()["results"] == doc["results"]
    assert doc["summary"]["bug_discriminating"] == 1


def test_of_two_results_of_one_test_id_the_failure_stands() -> None:
    """Items sharing an id are one test (``Observation.and_then``): a failure in any stands, the
    earlier of two alike; a pass only when both passed; durations add up; the standing item's
    attempts are kept (two items' outcomes are no flip)."""

    def seen(outcome: Outcome, message: str = "") -> Observation:
        failure = Failure(FailureKind.ASSERTION, message) if message else None
        return Observation("t.cases::case", outcome, 0.25, failure, "", (outcome,))

    first, second = seen(Outcome.FAIL, "first"), seen(Outcome.FAIL, "second")
    assert first.and_then(second).failure == first.failure
    assert seen(Outcome.PASS).and_then(first) == dataclasses.replace(first, duration=0.5)
    assert first.and_then(seen(Outcome.PASS)) == dataclasses.replace(first, duration=0.5)
    assert seen(Outcome.PASS).and_then(seen(Outcome.SKIPPED)).outcome is Outcome.PASS
    assert seen(Outcome.CRASH).and_then(seen(Outcome.PASS)).outcome is Outcome.CRASH
    assert seen(Outcome.ERROR).and_then(seen(Outcome.TIMEOUT)).attempts == (Outcome.ERROR,)
    assert set(STANDING) == set(Outcome)
