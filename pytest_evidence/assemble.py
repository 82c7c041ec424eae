"""``type_evidence``: pairs of observations become typed results, annotations and detections.

Pure and deterministic: the same observations always give the same record. The plugin calls it
after its baseline replay; the runner calls it for every tier. No result is typed by hand
anywhere else.

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Callable, Collection, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from pytest_evidence.model import (
    Annotation,
    Detection,
    DetectionKind,
    Failure,
    FailureKind,
    Observation,
    Origin,
    Outcome,
    Role,
    ValidationResult,
    assign_role,
    classify,
    is_bug_discriminating,
)


@dataclass(frozen=True)
class Typed:
    """The typed half of a record: what ``type_evidence`` returns."""

    results: Tuple[ValidationResult, ...]
    annotations: Dict[str, Annotation]
    detections: Tuple[Detection, ...]


def flake_digest(obs: Observation) -> str:
    """12 hex of the sha256 of the first failure message: the message part of a signature."""
    text = "" if obs.failure is None else (obs.failure.excerpt or obs.failure.message)
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:12]


def flake_rows(
    run_id: str, side: str, observations: Iterable[Optional[Observation]], now: str
) -> List[Tuple[str, str, str, str, str, str]]:
    """Ledger rows (``test_id, run_id, side, sequence, digest, created``) for the tests that flipped."""
    flaky = Outcome.FLAKY
    return [
        (o.test_id, run_id, side, ",".join(a.value for a in o.attempts), flake_digest(o), now)
        for o in observations
        if o is not None and o.outcome is flaky
    ]


#: How a quarantine an earlier run made begins its failure message (the detection repeats it).
_QUARANTINED_SINCE = "quarantined since run "

#: How the failure of a test whose outcome the referee's own marks changed begins (the runner's
#: stability runs, ``runner.ladder.sides``; the detection and the verdict repeat it).
MARKS_MOVED = "its outcome changed with the referee's own marks"


def moved_by_marks(failure: Optional[Failure]) -> bool:
    """A test's failure saying it is flaky because the marks changed: the candidate's code or
    test reads the referee."""
    return failure is not None and failure.message.startswith(MARKS_MOVED)


def quarantine(obs: Optional[Observation], quarantined: Mapping[str, Sequence[str]]) -> Optional[Observation]:
    """A test quarantined by an earlier run is never green: whatever it did now, it is ``flaky``."""
    if obs is None or obs.test_id not in quarantined or obs.outcome is Outcome.FLAKY:
        return obs
    first = quarantined[obs.test_id][0].split(":", 1)[0]
    failure = Failure(
        FailureKind.FLAKY,
        "%s%s (outcome now: %s); clear it with: evidence-runner flaky clear %s"
        % (_QUARANTINED_SINCE, first, obs.outcome.value, obs.test_id),
    )
    return Observation(obs.test_id, Outcome.FLAKY, obs.duration, failure, obs.stdout_summary, obs.attempts)


def type_evidence(
    candidate: Sequence[Observation],
    baseline: Optional[Mapping[str, Optional[Observation]]],
    origin_of: Callable[[str], Origin],
    designated: Collection[str],
    expected_change: Collection[str],
    candidate_commit: Optional[str],
    exit_code: Optional[int],
    flaky_history: Mapping[str, Sequence[str]],
    affected: Callable[[str], Optional[bool]],
    exclusive: bool = False,
) -> Typed:
    """Type every candidate observation; ``baseline`` is ``None`` when no B run was asked for.

    ``exclusive``: reproducers were designated, and only they are reproducers (``assign_role``).
    """
    results: List[ValidationResult] = []
    annotations: Dict[str, Annotation] = {}
    detections: List[Detection] = []
    untyped: Dict[str, List[str]] = {}
    replayed = baseline is not None
    unknown = Origin.UNKNOWN
    for obs in candidate:
        tid = obs.test_id
        outcome = obs.outcome
        b_obs = baseline.get(tid) if baseline is not None else None
        b_out = None if b_obs is None else b_obs.outcome
        origin = origin_of(tid) if replayed else unknown
        role, reason = assign_role(origin, tid in designated, tid in expected_change, b_out, replayed, exclusive)
        if reason is not None:
            untyped.setdefault(reason, []).append(tid)
        # Without a B outcome there is no cell of the B/C table, and nothing discriminates.
        bc_class = None if b_out is None else classify(b_out, outcome)
        results.append(
            ValidationResult(
                test_id=tid,
                role=role,
                candidate_commit=candidate_commit,
                baseline_result=b_out,
                candidate_result=outcome,
                duration=obs.duration,
                exit_code=exit_code,
                flaky_history=tuple(flaky_history.get(tid, ())),
                affected_by_change=affected(tid),
                bug_discriminating=False if b_out is None else is_bug_discriminating(b_out, outcome),
                stdout_summary=obs.stdout_summary,
                failure=obs.failure,
            )
        )
        annotations[tid] = Annotation(
            origin=origin,
            bc_class=bc_class,
            typing_failure=reason,
            attempts=obs.attempts,
            baseline_failure=None if b_obs is None else b_obs.failure,
        )
        if b_obs is not None or outcome in _NOTABLE:
            detections.extend(_detections_of(obs, b_obs, role))
    for reason, ids in sorted(untyped.items()) if replayed else ():  # no baseline: the summary says so once
        detections.append(
            Detection(
                DetectionKind.TYPING_FAILURE,
                "%d result(s) untyped: %s (first: %s)" % (len(ids), reason, ", ".join(ids[:3])),
            )
        )
    return Typed(tuple(results), annotations, tuple(detections))


#: Outcomes that are a detection whatever the other side did (``_detections_of``).
_NOTABLE = frozenset({Outcome.FLAKY, Outcome.TIMEOUT, Outcome.CRASH})


def _detections_of(obs: Observation, b_obs: Optional[Observation], role: Optional[Role]) -> List[Detection]:
    """Detections of one test; none unless a side is ``_NOTABLE`` or B has an observation."""
    found: List[Detection] = []
    tid = obs.test_id
    for side, o in (("candidate", obs), ("baseline", b_obs)):
        if o is None:
            continue
        if o.outcome is Outcome.FLAKY:
            message = "quarantined on the %s: attempts %s" % (side, ", ".join(a.value for a in o.attempts))
            if o.failure is not None and o.failure.message.startswith(_QUARANTINED_SINCE):
                message += "; not by this run: " + o.failure.message  # which run, and how to clear it
            elif o.failure is not None and moved_by_marks(o.failure):
                message += "; " + o.failure.message
            found.append(Detection(DetectionKind.FLAKY_QUARANTINED, message, tid))
        elif o.outcome is Outcome.TIMEOUT:
            found.append(Detection(DetectionKind.TIMEOUT, "timed out on the %s" % side, tid))
        elif o.outcome is Outcome.CRASH:
            found.append(Detection(DetectionKind.CRASH, "crashed on the %s" % side, tid))
    if role is Role.BUG_REPRODUCTION and b_obs is not None and b_obs.outcome is Outcome.PASS:
        found.append(
            Detection(
                DetectionKind.REPRODUCER_NOT_FAILING_ON_BASELINE,
                "reproducer passes on the baseline too: it is no evidence that a bug is fixed",
                tid,
            )
        )
    return found


def network_detections(attempts: Sequence[Tuple[Optional[str], str, bool]], side: str) -> List[Detection]:
    """One detection per (test, address) the network guard saw on ``side``: ``network_blocked``
    for a refused attempt, ``network_attempt`` for an allowed loopback one."""
    return [
        Detection(
            DetectionKind.NETWORK_BLOCKED,
            "%s tried to reach %s on %s; tests run without network" % (test_id or "collection", address, side),
            test_id,
        )
        if blocked
        else Detection(
            DetectionKind.NETWORK_ATTEMPT,
            "%s connected to %s on %s (loopback: allowed)" % (test_id or "collection", address, side),
            test_id,
            detail="loopback",
        )
        for test_id, address, blocked in attempts
    ]


def empty_collection(collected: int, selected: int, outcomes: Sequence[Outcome]) -> Optional[Detection]:
    """The empty-green check: nothing collected, all deselected, or everything skipped."""
    if collected == 0:
        return Detection(DetectionKind.EMPTY_COLLECTION, "no tests were collected")
    if selected == 0:
        return Detection(DetectionKind.EMPTY_COLLECTION, "all %d collected tests were deselected" % collected)
    if outcomes and all(o in (Outcome.SKIPPED, Outcome.XFAILED) for o in outcomes):
        return Detection(
            DetectionKind.EMPTY_COLLECTION, "all %d tests that ran were skipped or xfailed" % len(outcomes)
        )
    return None
