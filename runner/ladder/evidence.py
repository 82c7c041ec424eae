"""What a climb has established so far: typed results, annotations, detections and tier records.

The climb only appends; the judges only read. Keeping the accumulation in one place is what lets
an interrupted or failed climb still write the record of everything it had established.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from pytest_evidence.model import (
    Annotation,
    Detection,
    DetectionKind,
    Tier,
    TierRecord,
    TierStatus,
    ValidationResult,
)

#: Tier statuses that stop the climb (unless ``--full``).
HALTING = frozenset({TierStatus.FAILED, TierStatus.INCONCLUSIVE, TierStatus.ERROR})


@dataclass
class Evidence:
    results: list[ValidationResult] = field(default_factory=list)
    annotations: dict[str, Annotation] = field(default_factory=dict)
    detections: list[Detection] = field(default_factory=list)
    tiers: list[TierRecord] = field(default_factory=list)
    ran_on_c: set[str] = field(default_factory=set)
    # the tests B's runs reported a result for (a collection error of a test's module is none)
    ran_on_b: set[str] = field(default_factory=set)
    # allowed (loopback) connect attempts per side: (test id or None, address)
    attempts: dict[str, set[tuple[str | None, str]]] = field(default_factory=lambda: {"B": set(), "C": set()})
    # the test frameworks' objects found replaced per side: (test id or None, dotted name)
    replaced: dict[str, set[tuple[str | None, str]]] = field(default_factory=lambda: {"B": set(), "C": set()})
    # ... and by B's stored suite run, once it is known
    replaced_by_suite: set[tuple[str | None, str]] | None = None
    # ... and, for C's, the files what was in each one's place was written in (``authorship``)
    replaced_from_c: dict[str, set[str | None]] = field(default_factory=dict)
    # the test modules B's runs could not collect (their import failed there)
    uncollected_on_b: set[str] = field(default_factory=set)

    def add(
        self,
        results: Sequence[ValidationResult] = (),
        annotations: Mapping[str, Annotation] | None = None,
        detections: Iterable[Detection] = (),
    ) -> None:
        self.results.extend(results)
        self.annotations.update(annotations or {})
        self.detect(detections)

    def detect(self, detections: Iterable[Detection]) -> None:
        """Add detections; one already recorded (the same attempt seen by two runs) is kept once."""
        for detection in detections:
            if detection not in self.detections:
                self.detections.append(detection)

    def has(self, kind: DetectionKind) -> bool:
        return any(d.kind is kind for d in self.detections)

    def tier(self, record: TierRecord) -> None:
        self.tiers.append(record)

    def halted(self, full: bool) -> bool:
        return not full and any(t.status in HALTING for t in self.tiers)

    def ladder(self, why_not_run: str, audit: bool = False) -> tuple[TierRecord, ...]:
        """Every rung in order; the ones never reached say ``why_not_run``. The audit is a rung only
        when it was asked for (``audit``)."""
        reached = {t.tier for t in self.tiers}
        order = [t for t in Tier if t is not Tier.AUDIT or audit]
        rungs = list(self.tiers) + [
            TierRecord(tier, TierStatus.NOT_RUN, 0.0, 0, 0, None, why_not_run) for tier in order if tier not in reached
        ]
        return tuple(sorted(rungs, key=lambda t: list(Tier).index(t.tier)))
