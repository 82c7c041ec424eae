"""The verdict, by rules over what the ladder recorded. Pure: no I/O, no model.

CERTIFIED only if every tier that ran passed, at least one result is bug-discriminating and no
blocking detection was made. A failed tier makes the patch REJECTED (naming the first), and so
does an attack on the referee -- tampering with the protected tests, or library code that reaches
into pytest or kills the test process -- whatever the tiers say (the climb stops at an attack the
integrity check or the source scan finds, unless ``--full``). Otherwise
a tier that could not prove its point, a tier whose engine failed to answer (``error``: never a
pass), or a blocking detection makes it INCONCLUSIVE.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_evidence.errors import EXIT_CERTIFIED, EXIT_INCONCLUSIVE, EXIT_REJECTED
from pytest_evidence.model import (
    Detection,
    DetectionKind,
    TierRecord,
    TierStatus,
    ValidationResult,
    Verdict,
    VerdictRecord,
)
from runner.interference import is_attack, is_blinding

#: Detections that forbid certification even when every tier passed.
BLOCKING = frozenset(
    {
        DetectionKind.EMPTY_COLLECTION,
        DetectionKind.TAMPER,
        DetectionKind.ENVIRONMENT_DRIFT,
        DetectionKind.IMPORT_OUTSIDE_CHECKOUT,
        DetectionKind.RECEIPT_HELD,
        DetectionKind.NETWORK_BLOCKED,  # a result obtained while the code reached for the network
        DetectionKind.WEAK_REPRODUCER,  # the reproducer would pass on a wrong fix too
    }
)


#: Detections that are attacks on the referee by themselves.
ATTACKS = frozenset({DetectionKind.TAMPER, DetectionKind.REPRODUCER_LOST_TO_TAMPER})


def blocks(detection: Detection) -> bool:
    """Forbids certification: a blocking kind, or a loopback attempt only C made (not allowed)."""
    new_attempt = detection.kind is DetectionKind.NETWORK_ATTEMPT and detection.detail == "new_on_c"
    return detection.kind in BLOCKING or new_attempt or is_blinding(detection)


def rejects(detection: Detection) -> bool:
    """An attack on the referee: the patch is rejected whatever the tests say."""
    return detection.kind in ATTACKS or is_attack(detection)


EXIT_CODES = {
    Verdict.CERTIFIED: EXIT_CERTIFIED,
    Verdict.REJECTED: EXIT_REJECTED,
    Verdict.INCONCLUSIVE: EXIT_INCONCLUSIVE,
}


def decide(
    tiers: Sequence[TierRecord],
    results: Sequence[ValidationResult],
    detections: Sequence[Detection],
    bare: bool = False,
) -> VerdictRecord:
    """``bare``: the tiers were judged on C's outcomes alone (the A/B harness's ``typing`` and
    ``baseline-replay`` ablations), so no result can be bug-discriminating and none is asked for."""
    failed = [t for t in tiers if t.status is TierStatus.FAILED]
    attacks = [d for d in detections if rejects(d)]
    if failed or attacks:
        # An attack on the referee comes first: it is what a reviewer must see before any tier.
        reasons = ["%s: %s" % (d.kind.value, d.message) for d in attacks]
        reasons += ["%s: %s" % (t.tier.value, t.note) for t in failed]
        return VerdictRecord(Verdict.REJECTED, failed[0].tier if failed else None, tuple(reasons))
    inconclusive = [t for t in tiers if t.status in (TierStatus.INCONCLUSIVE, TierStatus.ERROR)]
    blocking = [d for d in detections if blocks(d)]
    if inconclusive or blocking:
        reasons = ["%s: %s" % (t.tier.value, t.note) for t in inconclusive]
        reasons += ["%s: %s" % (d.kind.value, d.message) for d in blocking]
        return VerdictRecord(Verdict.INCONCLUSIVE, inconclusive[0].tier if inconclusive else None, tuple(reasons))
    if bare:
        return VerdictRecord(Verdict.CERTIFIED, None, ("every tier passed, judged on C's outcomes alone (ablated)",))
    if not any(r.bug_discriminating for r in results):
        return VerdictRecord(Verdict.INCONCLUSIVE, None, ("no result is bug-discriminating",))
    return VerdictRecord(Verdict.CERTIFIED, None, ("every tier passed; the bug fix is demonstrated on B and C",))
