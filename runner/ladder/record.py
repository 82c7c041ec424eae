"""The record of a climb: what the evidence, the verdict and the invocation become on disk."""

from __future__ import annotations

import pathlib
from dataclasses import dataclass
from typing import Any

from pytest_evidence.errors import EXIT_INTERNAL
from pytest_evidence.model import Environment, EvidenceRecord, VerdictRecord
from pytest_evidence.output import write_json
from runner.ladder.evidence import Evidence
from runner.ladder.invocation import Invocation
from runner.verdict import EXIT_CODES


@dataclass(frozen=True)
class Frame:
    """What a record says about the climb itself, beside the evidence."""

    run_id: str
    created: str
    repo: str
    baseline: str
    candidate: str
    invocation: Invocation
    collected: tuple[str, ...]
    integrity: dict[str, Any] | None
    pinning: dict[str, object] | None
    baseline_run: dict[str, object] | None = None
    selection: dict[str, object] | None = None  # T5's, with every test's reason
    audit: dict[str, object] | None = None  # the suite-strength audit, when asked for
    stopped: str | None = None  # why the climb stopped with no tier failed: an attack on the referee
    steering: dict[str, object] | None = None  # the one steering call, when one was made


def assemble(
    frame: Frame,
    evidence: Evidence,
    verdict: VerdictRecord | None,
    environment: Environment,
    baseline_environment: Environment | None,
    incomplete: str | None,
) -> EvidenceRecord:
    """``incomplete``: why the climb did not finish (interrupted, an engine failed, a defect)."""
    return EvidenceRecord(
        run_id=frame.run_id,
        created=frame.created,
        complete=incomplete is None,
        incomplete_reason=incomplete,
        repo=frame.repo,
        baseline_commit=frame.baseline,
        candidate_commit=frame.candidate,
        environment=environment,
        baseline_environment=baseline_environment,
        results=tuple(evidence.results),
        annotations=evidence.annotations,
        detections=tuple(evidence.detections),
        exit_status=EXIT_INTERNAL if verdict is None else EXIT_CODES[verdict.verdict],
        baseline_run=frame.baseline_run,
        collected=len(frame.collected),
        not_run=tuple(t for t in frame.collected if t not in evidence.ran_on_c),
        verdict=verdict,
        tiers=evidence.ladder(
            frame.stopped or ("an earlier tier halted" if incomplete is None else "the climb ended early"),
            frame.invocation.audit,
        ),
        invocation=frame.invocation.to_dict(),
        integrity=frame.integrity,
        pinning=frame.pinning,
        selection=frame.selection,
        audit=frame.audit,
        steering=frame.steering,
    )


def write_record(record: EvidenceRecord, path: pathlib.Path) -> None:
    write_json(str(path), record.to_dict())
