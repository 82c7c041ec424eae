"""SWE-bench's files for a record: the ``FAIL_TO_PASS`` / ``PASS_TO_PASS`` lists and ``report.json``.

Followed: SWE-bench's ``swebench/harness/grading.py`` (``get_eval_report``,
``get_eval_tests_report``, ``get_resolution_status``, ``test_passed``/``test_maintained``/
``test_failed``), its ``constants`` (``TestStatus``) and ``log_parsers/python.py``
(``parse_log_pytest``), repository SWE-bench/SWE-bench.

**The lists** (``FAIL_TO_PASS.json``, ``PASS_TO_PASS.json``) are the cells of the record's B/C table
(``pytest_evidence.model.classify``), in the record's order: ``FAIL_TO_PASS`` the tests that fail or
error on B and pass on C -- the bug-discriminating ones --, ``PASS_TO_PASS`` those that pass on
both. They are what an instance built from this candidate would list, C playing SWE-bench's gold
patch. A side that is neither a plain pass nor a fail/error (skipped, xfailed, xpassed, timeout,
crash, a quarantined flake) or a missing B result (static gates) puts a test in neither list.

**report.json** grades C the way ``get_eval_report`` grades a prediction: ``{instance_id:
{"patch_is_None", "patch_exists", "patch_successfully_applied", "resolved", "tests_status"}}``, in
that order. What C had to do comes from B and the roles, never from C's own outcome -- else every
candidate would grade itself resolved:

=================  ==============================================================================
``FAIL_TO_PASS``   fails or errors on B, and is a reproducer or an expected change (C must make it
                   pass) or passes on C (a bug-discriminating test it fixed)
``PASS_TO_PASS``   passes on B: C must keep it passing
``FAIL_TO_FAIL``   fails or errors on B, is neither of the above: an existing test already broken,
                   graded like SWE-bench's ``calculate_to_fail`` (passing on C is extra credit)
``PASS_TO_FAIL``   always empty: nothing in a record is expected to start failing (as in every
                   report ``get_eval_report`` writes, which leaves both ``*_TO_FAIL`` empty)
=================  ==============================================================================

C's outcome counts as SWE-bench's log parser would have seen it: ``pass`` is ``PASSED``,
``xfailed`` ``XFAIL`` (a pass, by ``test_passed``), ``skipped`` ``SKIPPED`` (a failure for
``FAIL_TO_PASS``, kept -- a success -- for ``PASS_TO_PASS``, by ``test_maintained``), ``fail``
``FAILED``, ``error`` ``ERROR``, ``timeout`` ``FAILED`` (pytest-timeout fails the test), a
quarantined ``flaky`` ``FAILED`` (quarantined is never green); ``xpassed`` and ``crash`` are absent
from the parser's map (it has no XPASS status; a crashed process prints no line), which
``test_failed`` counts as failure. A test whose B outcome is none of pass/fail/error is in no list.

``patch_is_None`` is false and ``patch_exists`` true: a record is always of a candidate.
``patch_successfully_applied`` is true when C's tests ran at all (the record holds a pytest
result); a ladder stopped before any test ran -- a static gate, an attack on the referee -- is what
SWE-bench sees when the log holds no test output: false, ``resolved`` false, no ``tests_status``.
``resolved`` is SWE-bench's FULL resolution: no ``FAIL_TO_PASS`` and no ``PASS_TO_PASS`` failure
(an empty list counts as all passed).

**resolved is not our verdict, and never overrides it.** It sees only the results the record holds,
none of the detections (tamper, flaky, empty collection, network), the static gates or the tiers
that did not run, and SWE-bench counts an empty ``FAIL_TO_PASS`` as resolved -- so a candidate
INCONCLUSIVE for a flaky reproducer, or one that proves nothing, can read ``resolved: true``; and a
CERTIFIED candidate can read ``resolved: false`` where SWE-bench reads an outcome more harshly than
the B/C table (a test passing on B and xpassing on C is a failure there, no regression here). The
verdict in the record is the answer; report.json is for harnesses that only speak SWE-bench.
"""

from __future__ import annotations

from typing import Any

from pytest_evidence.model import FAILING, BCClass, EvidenceRecord, Outcome, Role, ValidationResult, classify

FAIL_TO_PASS = "FAIL_TO_PASS"
PASS_TO_PASS = "PASS_TO_PASS"
FAIL_TO_FAIL = "FAIL_TO_FAIL"
PASS_TO_FAIL = "PASS_TO_FAIL"

#: The list files: each is the tests of one B/C cell.
LISTS = {FAIL_TO_PASS: BCClass.BUG_DISCRIMINATING, PASS_TO_PASS: BCClass.REGRESSION_ONLY}

#: C outcomes SWE-bench's ``test_passed`` accepts (``PASSED``, ``XFAIL``).
PASSED = frozenset({Outcome.PASS, Outcome.XFAILED})
#: ... and ``test_maintained`` (``SKIPPED`` too), for ``PASS_TO_PASS``.
MAINTAINED = PASSED | {Outcome.SKIPPED}

#: Roles that oblige C to make a test failing on B pass.
MUST_PASS = frozenset({Role.BUG_REPRODUCTION, Role.EXPECTED_CHANGE})


def files(record: EvidenceRecord, instance_id: str) -> dict[str, Any]:
    """``{file name: JSON document}``: the two lists and ``report.json`` keyed by ``instance_id``."""
    found: dict[str, Any] = {
        name + ".json": [r.test_id for r in record.results if classify(r.baseline_result, r.candidate_result) is cell]
        for name, cell in LISTS.items()
    }
    found["report.json"] = {instance_id: report(record)}
    return found


def report(record: EvidenceRecord) -> dict[str, Any]:
    """One instance's entry of ``report.json``, as ``get_eval_report`` builds it."""
    tests = [r for r in record.results if r.role is not Role.STATIC_GATE]
    entry: dict[str, Any] = {
        "patch_is_None": False,
        "patch_exists": True,
        "patch_successfully_applied": bool(tests),
        "resolved": False,
    }
    if not tests:
        return entry
    status: dict[str, dict[str, list[str]]] = {
        name: {"success": [], "failure": []} for name in (FAIL_TO_PASS, PASS_TO_PASS, FAIL_TO_FAIL, PASS_TO_FAIL)
    }
    for result in tests:
        expected = _expected(result)
        if expected is not None:
            accepted = MAINTAINED if expected == PASS_TO_PASS else PASSED
            status[expected]["success" if result.candidate_result in accepted else "failure"].append(result.test_id)
    entry["resolved"] = not status[FAIL_TO_PASS]["failure"] and not status[PASS_TO_PASS]["failure"]
    entry["tests_status"] = status
    return entry


def _expected(result: ValidationResult) -> str | None:
    """The list of the instance C is graded against that ``result`` belongs to (see above)."""
    baseline = result.baseline_result
    if baseline is Outcome.PASS:
        return PASS_TO_PASS
    if baseline in FAILING:
        if result.role in MUST_PASS or result.candidate_result is Outcome.PASS:
            return FAIL_TO_PASS
        return FAIL_TO_FAIL
    return None
