"""The closing report of a record, for a person: the ladder, the tests that prove the fix, what
broke and where, the record's path, and one sentence saying what was proved and what was not.

It fits 80 columns (rich folds only inside a column) and names tests, because a count
("regression 1") sends the reader to the JSON. Read off the record only, so
``evidence-runner report RECORD`` prints what ``certify`` printed.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from pytest_evidence.model import (
    BCClass,
    Detection,
    EvidenceRecord,
    Failure,
    TierStatus,
    ValidationResult,
    Verdict,
)
from runner.terminal.live import say

#: Tests named per list before "and N more".
CAP = 10

_STYLE = {
    TierStatus.PASSED: "green",
    TierStatus.FAILED: "red",
    TierStatus.INCONCLUSIVE: "yellow",
    TierStatus.ERROR: "red",
}


def show(console: Console, record: EvidenceRecord, path: str) -> None:
    console.print(ladder_table(record))
    for title, lines in sections(record):
        console.print(Text(title, style="bold"))
        for line in lines:
            say(console, line)
    say(console, "record: %s" % path, indent="")
    console.print(Text(""))
    say(console, sentence(record), indent="", style=_verdict_style(record))


def ladder_table(record: EvidenceRecord) -> Table:
    table = Table(title="the ladder", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("tier", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("sel/run", justify="right", no_wrap=True)
    table.add_column("s", justify="right", no_wrap=True)
    table.add_column("note", overflow="fold", ratio=1)
    halted = record.verdict.halted_at if record.verdict else None
    for tier in record.tiers:
        mark = " <" if tier.tier is halted else ""
        table.add_row(
            tier.tier.value + mark,
            Text(tier.status.value, style=_STYLE.get(tier.status, "dim")),
            "-" if tier.status is TierStatus.NOT_RUN else "%d/%d" % (tier.selected, tier.run),
            "%.1f" % tier.duration,
            Text(tier.note),
        )
    return table


def sections(record: EvidenceRecord) -> list[tuple[str, list[str]]]:
    """The named lists, each capped; an empty list is left out."""
    found = []
    proving = [r.test_id for r in record.results if r.bug_discriminating]
    if proving:
        found.append(("bug-discriminating (fail on B, pass on C):", capped(proving)))
    broken = [r for r in record.results if _bc(record, r) is BCClass.REGRESSION]
    if broken:
        found.append(("regressions (pass on B, fail on C):", capped([_located(r.test_id, r.failure) for r in broken])))
    failing = [r.test_id for r in record.results if _bc(record, r) is BCClass.NO_FIX]
    if failing:
        found.append(("failing on B and on C (neither fixed nor broken by the patch):", capped(failing)))
    if record.detections:
        found.append(("detections:", capped([detection_line(d) for d in record.detections])))
    return found


def capped(lines: Sequence[str], cap: int = CAP) -> list[str]:
    if len(lines) <= cap:
        return list(lines)
    return [*lines[:cap], "and %d more" % (len(lines) - cap)]


def detection_line(detection: Detection) -> str:
    """The detection's kind, the test it is about (ten of one kind said nothing apart without
    it), its message, and where."""
    where = ""
    if detection.path:
        where = " (%s%s)" % (detection.path, "" if detection.line is None else ":%d" % detection.line)
    return "%s%s: %s%s%s" % (
        detection.kind.value,
        "" if detection.detail is None else "/" + detection.detail,
        "" if detection.test_id is None else detection.test_id + ": ",
        detection.message,
        where,
    )


def sentence(record: EvidenceRecord) -> str:
    """The verdict in one sentence: what was proved, and what was not."""
    if record.verdict is None:
        return "NO VERDICT: the run did not finish (%s); nothing is proved" % (record.incomplete_reason or "unknown")
    verdict = record.verdict
    at = " at %s" % verdict.halted_at.value if verdict.halted_at else ""
    reason = verdict.reasons[0]
    if verdict.halted_at and reason.startswith(verdict.halted_at.value + ": "):
        reason = reason[len(verdict.halted_at.value) + 2 :]  # the rung is named once
    head = "%s%s: %s" % (verdict.verdict.value, at, reason)
    proving = sum(1 for r in record.results if r.bug_discriminating)
    kept = sum(1 for r in record.results if _bc(record, r) is BCClass.REGRESSION_ONLY)
    unrun = [t.tier.value for t in record.tiers if t.status is TierStatus.NOT_RUN]
    if verdict.verdict is Verdict.CERTIFIED:
        proved = "proved: %d test(s) fail on B and pass on C, %d more pass on both" % (proving, kept)
        gaps = []
        failing = sum(1 for r in record.results if _bc(record, r) is BCClass.NO_FIX)
        if failing:
            gaps.append("%d test(s) fail on B and on C, listed above" % failing)
        if record.detections:
            gaps.append("it carries %d detection(s), listed above" % len(record.detections))
        if record.audit is None:
            gaps.append("the suite's strength was not audited (--audit)")
        return "%s. %s; not proved: %s." % (head, proved, "; ".join(gaps) if gaps else "nothing left open")
    if verdict.verdict is Verdict.REJECTED:
        rest = "; not run: %s" % ", ".join(unrun) if unrun else ""
        return "%s. The patch is falsified%s." % (head, rest)
    return "%s. Nothing is proved either way%s." % (head, "; not run: %s" % ", ".join(unrun) if unrun else "")


def _bc(record: EvidenceRecord, result: ValidationResult) -> BCClass | None:
    annotation = record.annotations.get(result.test_id)
    return None if annotation is None else annotation.bc_class


def _located(test_id: str, failure: Failure | None) -> str:
    if failure is None or failure.path is None:
        return test_id
    return "%s (%s%s)" % (test_id, failure.path, "" if failure.line is None else ":%d" % failure.line)


def _verdict_style(record: EvidenceRecord) -> str:
    if record.verdict is None:
        return "bold yellow"
    return {Verdict.CERTIFIED: "bold green", Verdict.REJECTED: "bold red"}.get(record.verdict.verdict, "bold yellow")
