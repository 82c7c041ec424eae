"""JUnit XML of an evidence record, for CI tools that read nothing else (Jenkins, GitLab, GitHub
test reporters).

The common Jenkins/pytest shape: ``<testsuites>`` holding two ``<testsuite>`` -- ``tests`` (every
pytest result) and ``static gates`` (T0-T2's checks, each a testcase ``T1.ruff`` / ``shop/price.py``)
-- each with one ``<testcase classname name time>`` per result of ``record.results``, named as
``pytest --junitxml`` names the same test, so a dashboard lines the two up. A testcase carries
``<properties>``: ``role``, ``bc_class``, ``bug_discriminating``, ``baseline_result``, ``origin`` --
what the result proved, which a JUnit reader otherwise flattens to pass/fail -- with the values the
plugin writes on its own ``--junitxml`` (``pytest_evidence.junit_properties``). Each suite carries
the record's ``verdict``, ``halted_at``, ``schema_version``, ``candidate_commit`` and
``baseline_commit``: a green suite under a REJECTED verdict is still REJECTED.

Candidate outcomes become the child pytest would write: ``fail`` and ``flaky`` (quarantined: never
green) a ``<failure>``; ``error``, ``timeout`` and ``crash`` (the test did not finish) an
``<error>``; ``skipped`` and ``xfailed`` a ``<skipped>``; ``pass`` and ``xpassed`` (pytest's
non-strict xpass passes) none. Built with ElementTree; text from the record passes pytest's own
escape of characters XML cannot hold (a colour code in captured output would make it unreadable).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence

from _pytest.junitxml import bin_xml_escape

from pytest_evidence.junit_properties import XML_DECLARATION, property_value, result_properties, testcase_key
from pytest_evidence.model import EvidenceRecord, Outcome, Role, ValidationResult

#: The child element of a non-passing candidate outcome.
CHILD = {
    Outcome.FAIL: "failure",
    Outcome.FLAKY: "failure",
    Outcome.ERROR: "error",
    Outcome.TIMEOUT: "error",
    Outcome.CRASH: "error",
    Outcome.SKIPPED: "skipped",
    Outcome.XFAILED: "skipped",
}

#: Suite attribute counting each child (``tests`` counts every testcase).
COUNTED = {"failure": "failures", "error": "errors", "skipped": "skipped"}


def render(record: EvidenceRecord) -> str:
    """The JUnit document of ``record``, with its XML declaration."""
    suites = ET.Element("testsuites", name="pytest-evidence")
    gates = [r for r in record.results if r.role is Role.STATIC_GATE]
    tests = [r for r in record.results if r.role is not Role.STATIC_GATE]
    for name, results in (("tests", tests), ("static gates", gates)):
        suites.append(_suite(record, name, results))
    _count(suites, list(suites))
    ET.indent(suites)
    return XML_DECLARATION + "\n" + ET.tostring(suites, encoding="unicode") + "\n"


def _suite(record: EvidenceRecord, name: str, results: Sequence[ValidationResult]) -> ET.Element:
    suite = ET.Element("testsuite", name=name, timestamp=record.created)
    verdict = record.verdict
    _properties(
        suite,
        [
            (key, property_value(value))
            for key, value in (
                ("verdict", None if verdict is None else verdict.verdict),
                ("halted_at", None if verdict is None else verdict.halted_at),
                ("schema_version", record.schema_version),
                ("candidate_commit", record.candidate_commit),
                ("baseline_commit", record.baseline_commit),
            )
        ],
    )
    for result in results:
        suite.append(_testcase(record, result))
    _count(suite, suite.findall("testcase"))
    return suite


def _testcase(record: EvidenceRecord, result: ValidationResult) -> ET.Element:
    classname, name = testcase_key(result.test_id)
    case = ET.Element("testcase", classname=bin_xml_escape(classname), name=name, time="%.3f" % result.duration)
    _properties(case, result_properties(result, record.annotations.get(result.test_id)))
    tag = CHILD.get(result.candidate_result)
    if tag is not None:
        failure = result.failure
        child = ET.SubElement(
            case,
            tag,
            message=bin_xml_escape(result.candidate_result.value if failure is None else failure.message),
            type=result.candidate_result.value if failure is None else failure.kind.value,
        )
        if failure is not None:
            child.text = bin_xml_escape(failure.excerpt or failure.message)
    if result.stdout_summary:
        ET.SubElement(case, "system-out").text = bin_xml_escape(result.stdout_summary)
    return case


def _properties(parent: ET.Element, properties: Sequence[tuple[str, str]]) -> None:
    node = ET.SubElement(parent, "properties")
    for name, value in properties:
        ET.SubElement(node, "property", name=name, value=bin_xml_escape(value))


def _count(parent: ET.Element, children: Sequence[ET.Element]) -> None:
    """``tests``, ``failures``, ``errors``, ``skipped`` and ``time`` of ``parent`` from its
    ``children`` (testcases, or the suites of ``<testsuites>``)."""
    totals = dict.fromkeys(("tests", "failures", "errors", "skipped"), 0)
    seconds = 0.0
    for child in children:
        if child.tag == "testcase":
            totals["tests"] += 1
            for grandchild in child:
                if grandchild.tag in COUNTED:
                    totals[COUNTED[grandchild.tag]] += 1
        else:
            for key in totals:
                totals[key] += int(child.get(key, "0"))
        seconds += float(child.get("time", "0"))
    for key, value in totals.items():
        parent.set(key, str(value))
    parent.set("time", "%.3f" % seconds)
