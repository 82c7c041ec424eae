"""From pytest's phase reports to one ``Observation`` per test.

pytest reports setup, call and teardown separately; evidence needs one outcome per test. The
merge is pure: it reads the reports (which may have crossed an xdist wire, so only their
serialisable attributes are used) and never the item.

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

import re
from typing import Any, List, Optional, Sequence, Tuple

from pytest_evidence.model import Failure, FailureKind, Observation, Outcome, bounded

#: Attribute the flake policy sets on the reports it logs: the outcome of every attempt.
ATTEMPTS_ATTR = "evidence_attempts"
#: Attribute carrying ``(functions, files)`` on a test's teardown report (``deps``; it survives xdist).
DEPS_ATTR = "evidence_deps"
#: Attribute carrying the test frameworks' objects found replaced since the last test, on a
#: test's teardown report: ``[[name, "collection" | "test"], ...]`` (``originals``).
REPLACED_ATTR = "evidence_replaced"

_EXCERPT_LIMIT = 1500
_TIMEOUT_MARK = "Timeout"


def _crash(report: Any) -> Tuple[str, Optional[str], Optional[int]]:
    """``(message, path, line)`` of a report's failure, whatever shape its longrepr has."""
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # a skip: (path, lineno, reason)
        return str(longrepr[2]), str(longrepr[0]), int(longrepr[1])
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None:
        return str(crash.message), str(crash.path), int(crash.lineno)
    text = str(longrepr) if longrepr is not None else ""
    lines = text.strip().splitlines()
    return (lines[-1] if lines else ""), None, None


#: From a native traceback's header, the run of frames of pytest's and pluggy's own that leads
#: to a frame of anyone else's (which must follow: a traceback with none stays whole).
_LEADING_RUNNER_FRAMES = re.compile(
    r"^(Traceback \(most recent call last\):\n)"
    r'(?:  File "[^\n]*[\\/](?:_pytest|pluggy)[\\/][^\n]*\n(?:    [^\n]*\n)*)+'
    r'(?=  File "(?![^\n]*[\\/](?:_pytest|pluggy)[\\/]))',
    re.MULTILINE,
)


def _from_the_test(text: str) -> str:
    """A native traceback's text without the frames of pytest and pluggy that lead to the
    test's: from pytest 8 on, ``--tb=native`` starts at the top of pytest's own call (eight of a
    failing test's nine frames). Each traceback of a chain loses its leading run of such frames,
    unless it holds no other frame (a failure of pytest's own stays whole)."""
    return _LEADING_RUNNER_FRAMES.sub(r"\1", text)


def failure_of(report: Any, kind: FailureKind) -> Failure:
    message, path, line = _crash(report)
    text = _from_the_test(getattr(report, "longreprtext", "") or "")
    tail = "\n".join(text.splitlines()[-30:])
    return Failure(
        kind=kind,
        message=message.strip().splitlines()[0][:500] if message.strip() else kind.value,
        path=path,
        line=line,
        excerpt=bounded(tail, _EXCERPT_LIMIT),
    )


def _call_failure_kind(report: Any) -> FailureKind:
    message = _crash(report)[0]
    if message.startswith("Failed: " + _TIMEOUT_MARK):
        return FailureKind.TIMEOUT
    if message.startswith("AssertionError") or message.startswith("assert "):
        return FailureKind.ASSERTION
    return FailureKind.EXCEPTION


def _plain_pass(reports: Sequence[Any]) -> bool:
    """Setup, call and teardown, each passed, the call not an xfail: most tests, decided at once."""
    if len(reports) != 3:
        return False
    setup, call, teardown = reports
    return (
        setup.outcome == "passed"  # what ``report.passed`` says
        and call.outcome == "passed"
        and teardown.outcome == "passed"
        and setup.when == "setup"
        and call.when == "call"
        and teardown.when == "teardown"
        and not hasattr(call, "wasxfail")
    )


def merge(reports: Sequence[Any]) -> Tuple[Outcome, Optional[Failure]]:
    """Fold a test's phase reports into one outcome and its diagnostic. A test may report its
    call more than once: each subtest (``self.subTest`` in a ``unittest.TestCase``, pytest's
    ``subtests`` fixture) is a call report of its own, logged as it ends, before the test's.
    One failed fails the test: on pytest 9 a ``TestCase`` whose subtest fails still reports its
    own call as passed, and that report, taken last, made a broken function's test a pass."""
    if _plain_pass(reports):
        return Outcome.PASS, None
    outcome: Optional[Outcome] = None
    failure: Optional[Failure] = None
    for rep in reports:
        wasxfail = hasattr(rep, "wasxfail")
        if rep.when == "setup":
            if rep.failed:
                outcome, failure = Outcome.ERROR, failure_of(rep, FailureKind.SETUP_ERROR)
            elif rep.skipped:
                outcome = Outcome.XFAILED if wasxfail else Outcome.SKIPPED
                failure = failure_of(rep, FailureKind.XFAILED if wasxfail else FailureKind.SKIPPED)
        elif rep.when == "call":
            if outcome in (Outcome.FAIL, Outcome.TIMEOUT):
                continue  # a subtest failed before the test's own report: the test failed
            if rep.passed:
                outcome = Outcome.XPASSED if wasxfail else Outcome.PASS
                failure = Failure(FailureKind.XPASSED, str(rep.wasxfail)) if wasxfail else None
            elif rep.failed:
                kind = _call_failure_kind(rep)
                outcome = Outcome.TIMEOUT if kind is FailureKind.TIMEOUT else Outcome.FAIL
                failure = failure_of(rep, kind)
            else:
                outcome = Outcome.XFAILED if wasxfail else Outcome.SKIPPED
                failure = failure_of(rep, FailureKind.XFAILED if wasxfail else FailureKind.SKIPPED)
        elif rep.when == "teardown":
            if rep.failed and outcome in (None, Outcome.PASS, Outcome.XPASSED):
                outcome, failure = Outcome.ERROR, failure_of(rep, FailureKind.TEARDOWN_ERROR)
        elif rep.failed:  # xdist's "???" report for an item whose worker died
            outcome, failure = Outcome.CRASH, failure_of(rep, FailureKind.CRASH)
    if outcome is None:
        return Outcome.CRASH, Failure(FailureKind.CRASH, "no phase of the test reported an outcome")
    return outcome, failure


def captured(reports: Sequence[Any]) -> str:
    """Captured stdout, stderr and log of every phase, bounded for ``stdout_summary``."""
    chunks: List[str] = []
    for rep in reports:
        for title, content in getattr(rep, "sections", ()):
            if title.startswith("Captured") and content:
                chunks.append("--- %s ---\n%s" % (title, content.rstrip("\n")))
    return bounded("\n".join(chunks)) if chunks else ""


#: ``Outcome(value)`` for the values an attempt list holds; and the one-attempt tuples.
_OUTCOMES = {o.value: o for o in Outcome}
_SINGLE = {o.value: (o,) for o in Outcome}


def _attempts_of(raw: Sequence[Any]) -> Tuple[Outcome, ...]:
    """The flake policy's ``evidence_attempts`` (outcome values) as outcomes; ``Outcome(v)`` for
    each, and its ``ValueError`` for a value that is none."""
    if len(raw) == 1:
        single = _SINGLE.get(raw[0])
        if single is not None:
            return single
    return tuple(_OUTCOMES.get(a) or Outcome(a) for a in raw)


def observe(test_id: str, reports: Sequence[Any]) -> Observation:
    """One test's ``Observation``: merged outcome, total duration, attempts, bounded output."""
    outcome, failure = merge(reports)
    raw = None
    for rep in reversed(reports):  # the last report that carries the attempts says them
        raw = getattr(rep, ATTEMPTS_ATTR, None)
        if raw:
            break
    attempts = _attempts_of(raw) if raw else ()
    if len(attempts) > 1 and len(set(attempts)) > 1:
        first = failure
        outcome = Outcome.FLAKY
        failure = Failure(
            FailureKind.FLAKY,
            "outcome changed across attempts: %s" % ", ".join(a.value for a in attempts),
            None if first is None else first.path,
            None if first is None else first.line,
            "" if first is None else first.message,
        )
    total = 0.0
    for rep in reports:
        total += float(getattr(rep, "duration", 0.0) or 0.0)
    duration = round(total, 6)
    return Observation(
        test_id=test_id,
        outcome=outcome,
        duration=duration,
        failure=failure,
        stdout_summary=captured(reports),
        attempts=attempts or (outcome,),
    )
