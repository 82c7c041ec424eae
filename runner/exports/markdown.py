"""The Markdown summary of a record: read in ten seconds, on one screen (30 lines at most).

It is what a CI job shows on its page (``$GITHUB_STEP_SUMMARY``) and what a reviewer pastes into
a pull request, so it says only what decides: the verdict, in one sentence what was proved and what
was not, the ladder as a table, the tests that show the bug fixed, what fails on C and what was
detected -- each with its file and line --, and where the whole record is. Lists are capped (the
record holds the rest), so the summary stays one screen whatever the run.

GitHub-flavoured Markdown, no emoji: a status is a word. Text from the record never becomes markup:
test ids and paths are code spans (with a fence longer than any backtick run inside), other text is
backslash-escaped, and table cells escape ``|``, which GitHub reads as a column even in a code span.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pytest_evidence.model import FAILING, BCClass, EvidenceRecord, Role, TierStatus, ValidationResult, Verdict

#: Items a list shows; past it, one fewer and "and N more", so a list is never longer.
SHOWN = 3

#: A failing result's B/C class, as the list of failures says it.
FAILING_AS = {
    BCClass.REGRESSION: "regression (passes on B)",
    BCClass.NO_FIX: "no fix (fails on B too)",
}

_MARKUP = re.compile(r"([\\`*_\[\]<>|~&#])")


def render(record: EvidenceRecord, record_path: str) -> str:
    """The summary of ``record``; ``record_path`` is where the reader finds the whole record."""
    sections = [
        [_title(record)],
        ["**Proved:** %s. **Not proved:** %s." % (_proved(record), _open(record))],
        _ladder(record),
        [_discriminating(record)],
        _failing(record),
        _detections(record),
        ["Record: %s" % _code(record_path)],
    ]
    return "\n\n".join("\n".join(lines) for lines in sections if lines) + "\n"


def _title(record: EvidenceRecord) -> str:
    verdict = record.verdict
    if verdict is None:
        status = "**%s**" % ("NO VERDICT" if record.complete else "INCOMPLETE")
    else:
        status = "**%s**" % verdict.verdict.value
        status += "" if verdict.halted_at is None else " at %s" % verdict.halted_at.value
    versus = "" if record.baseline_commit is None else " against baseline %s" % _code(record.baseline_commit[:12])
    candidate = "the working tree" if record.candidate_commit is None else _code(_short(record.candidate_commit))
    return "### pytest-evidence: %s \u2014 candidate %s%s" % (status, candidate, versus)


def _short(commit: str) -> str:
    """12 hex of a commit, keeping the ``+dirty`` a plugin record's candidate may carry."""
    sha, plus, state = commit.partition("+")
    return sha[:12] + plus + state


def _proved(record: EvidenceRecord) -> str:
    tests = [r for r in record.results if r.role is not Role.STATIC_GATE]
    fixed = sum(1 for r in tests if r.bug_discriminating)
    kept = sum(1 for r in tests if _class(record, r) is BCClass.REGRESSION_ONLY)
    said = []
    if fixed:
        said.append("%d test(s) fail on B and pass on C" % fixed)
    if kept:
        said.append("%d pass on both (behaviour kept)" % kept)
    return _text(", ".join(said) or "nothing \u2014 no test fails on B and passes on C")


def _open(record: EvidenceRecord) -> str:
    said = []
    if record.verdict is None:
        said.append("no verdict: a plugin record, not a climb of the ladder")
    elif record.verdict.verdict is not Verdict.CERTIFIED:
        reasons = list(record.verdict.reasons)
        said += reasons[:2] + (["%d more reason(s)" % (len(reasons) - 2)] if len(reasons) > 2 else [])
    unrun = [t.tier.value for t in record.tiers if t.status is TierStatus.NOT_RUN]
    if unrun:
        said.append("%s not run" % ", ".join(unrun))
    failing = sum(1 for r in record.results if _class(record, r) is BCClass.NO_FIX)
    if failing:
        said.append("%d test(s) fail on B and on C" % failing)
    untyped = sum(1 for r in record.results if r.role is None)
    if untyped:
        said.append("%d result(s) untyped" % untyped)
    if record.not_run:
        said.append("%d collected test(s) gave no result" % len(record.not_run))
    if not record.complete:
        said.append("the record is incomplete (%s)" % (record.incomplete_reason or "no reason given"))
    return _text("; ".join(said) or "nothing left open")


def _ladder(record: EvidenceRecord) -> list[str]:
    if not record.tiers:
        return []
    rows = ["| tier | status | selected / run | seconds |", "|---|---|---|---|"]
    for tier in record.tiers:
        cells = (tier.tier.value, tier.status.value, "%d / %d" % (tier.selected, tier.run), "%.2f" % tier.duration)
        rows.append("| %s |" % " | ".join(_cell(c) for c in cells))
    return rows


def _discriminating(record: EvidenceRecord) -> str:
    names = [_code(r.test_id) for r in record.results if r.bug_discriminating]
    shown = _capped(names)
    return "**Bug-discriminating (fail on B, pass on C):** %s" % (", ".join(shown) if shown else "none")


def _failing(record: EvidenceRecord) -> list[str]:
    """What fails on C, regressions first, each with the class and the file and line it failed at."""
    failing = [r for r in record.results if r.candidate_result in FAILING]
    failing.sort(key=lambda r: _class(record, r) is not BCClass.REGRESSION)
    items = []
    for result in failing:
        cls = _class(record, result)
        what = "fails" if cls is None else FAILING_AS.get(cls, "fails")
        where = None if result.failure is None else _where(result.failure.path, result.failure.line)
        items.append("%s \u2014 %s%s" % (_code(result.test_id), _text(what), "" if where is None else ", at " + where))
    return _listed("**Failing on C:**", items)


def _detections(record: EvidenceRecord) -> list[str]:
    items = []
    for det in record.detections:
        where = _where(det.path, det.line) or (None if det.test_id is None else _code(det.test_id))
        items.append("%s%s: %s" % (_code(det.kind.value), "" if where is None else " " + where, _text(det.message)))
    return _listed("**Detections:**", items)


def _class(record: EvidenceRecord, result: ValidationResult) -> BCClass | None:
    annotation = record.annotations.get(result.test_id)
    return None if annotation is None else annotation.bc_class


def _where(path: str | None, line: int | None) -> str | None:
    if path is None:
        return None
    return _code(path if line is None else "%s:%d" % (path, line))


def _listed(heading: str, items: Sequence[str]) -> list[str]:
    return [heading] + ["- " + item for item in _capped(items)] if items else []


def _capped(items: Sequence[str]) -> list[str]:
    if len(items) <= SHOWN:
        return list(items)
    return [*items[: SHOWN - 1], "and %d more" % (len(items) - SHOWN + 1)]


def _code(text: str) -> str:
    """``text`` as one inline code span, whatever backticks it holds."""
    text = " ".join(text.split("\n"))
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return "%s%s%s%s%s" % (fence, pad, text, pad, fence)


def _text(text: str) -> str:
    """``text`` on one line with every character Markdown would read as markup escaped."""
    return _MARKUP.sub(r"\\\1", " ".join(text.split("\n")))


def _cell(text: str) -> str:
    return text.replace("|", "\\|")
