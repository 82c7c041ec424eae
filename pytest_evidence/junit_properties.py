"""Evidence on pytest's own ``--junitxml``: each testcase carries what its result proved.

With evidence on, every testcase of the JUnit file gets the properties ``role``, ``bc_class``,
``bug_discriminating``, ``baseline_result`` and ``origin`` -- the same ones, with the same values,
as the runner's JUnit export (``runner/exports/junit.py`` builds its testcases from
``result_properties`` and ``testcase_key`` here), so a CI dashboard reads one vocabulary whichever
side wrote the file.

When they can be written. pytest's ``LogXML`` turns a test into its ``<testcase>`` element at the
test's teardown report, folding in ``report.user_properties`` then, and writes the file in its
(unordered) ``pytest_sessionfinish``. The typing is not known then: B is replayed after the last
test, in the ``Finisher``'s ``trylast`` ``pytest_sessionfinish`` -- which runs after ``LogXML`` has
written the file. A report-time hook (``record_property``, ``user_properties``) would have nothing
to say, and no plain ``pytest_sessionfinish`` can sit between the two. So ``JunitProperties`` wraps
``pytest_sessionfinish`` (innermost wrapper: ``trylast``), and once every implementation has run
-- the record typed, the file written -- it adds the properties to that file and replaces it
atomically, before the terminal summary names it. A testcase is matched to its result by the
``classname`` and ``name`` pytest derived from the node id, computed with pytest's own functions.

Registered beside the ``Finisher`` (never on an xdist worker, which writes no JUnit file); inert
when ``--junitxml`` was not given. Standard library and pytest only, Python 3.8 syntax.

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

import enum
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING, Any, Dict, Generator, List, Mapping, Optional, Tuple

import pytest
from _pytest.junitxml import bin_xml_escape, mangle_test_address, xml_key

from pytest_evidence.model import Annotation, ValidationResult
from pytest_evidence.output import write_text

if TYPE_CHECKING:
    from pytest_evidence.finish import Finisher

#: What pytest writes before the document (``LogXML.pytest_sessionfinish``), kept as it was.
XML_DECLARATION = '<?xml version="1.0" encoding="utf-8"?>'


def property_value(value: Any) -> str:
    """A record value as a JUnit property's ``value``: the JSON spelling of a scalar without its
    quotes (``BUG_REPRODUCTION``, ``true``, ``null``), so a reader compares it with the record's."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, enum.Enum):
        return str(value.value)
    return str(value)


def result_properties(result: ValidationResult, annotation: Optional[Annotation]) -> List[Tuple[str, str]]:
    """The properties of one result's testcase, in this order; a result with no annotation (a
    static gate) has no B/C class and no origin."""
    values = (
        ("role", result.role),
        ("bc_class", None if annotation is None else annotation.bc_class),
        ("bug_discriminating", result.bug_discriminating),
        ("baseline_result", result.baseline_result),
        ("origin", None if annotation is None else annotation.origin),
    )
    return [(name, property_value(value)) for name, value in values]


def testcase_key(test_id: str, prefix: Optional[str] = None) -> Tuple[str, str]:
    """``(classname, name)`` of a test id's testcase exactly as pytest's junitxml spells them
    (``--junit-prefix`` included): the file's path dotted, ``.py`` dropped, parameters kept."""
    names = mangle_test_address(test_id)
    classnames = names[:-1]
    if prefix:
        classnames.insert(0, prefix)
    return ".".join(classnames), bin_xml_escape(names[-1])


def add_properties(testcase: ET.Element, properties: List[Tuple[str, str]]) -> None:
    """Append ``properties`` to the testcase's ``<properties>``, made its first child if it has
    none (the schema's order; a test's own ``record_property`` entries stay first)."""
    node = testcase.find("properties")
    if node is None:
        node = ET.Element("properties")
        testcase.insert(0, node)
    for name, value in properties:
        ET.SubElement(node, "property", name=name, value=value)


def annotate(path: str, prefix: Optional[str], record: Mapping[str, Any]) -> None:
    """Add each result's properties to its testcases in the JUnit file at ``path`` (a test split
    into a failure and a teardown error has two), and replace the file atomically."""
    annotations = record["annotations"]
    typed: Dict[Tuple[str, str], List[Tuple[str, str]]] = {}
    for doc in record["results"]:
        result = ValidationResult.from_dict(doc)
        ann = annotations.get(result.test_id)
        typed[testcase_key(result.test_id, prefix)] = result_properties(
            result, None if ann is None else Annotation.from_dict(ann)
        )
    root = ET.parse(path).getroot()
    for testcase in root.iter("testcase"):
        found = typed.get((testcase.get("classname", ""), testcase.get("name", "")))
        if found is not None:
            add_properties(testcase, found)
    write_text(path, XML_DECLARATION + ET.tostring(root, encoding="unicode"))


class JunitProperties:
    """Adds the record's per-test properties to pytest's JUnit file, once both exist."""

    def __init__(self, finisher: Finisher) -> None:
        self.finisher = finisher

    @pytest.hookimpl(hookwrapper=True, trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> Generator[None, Any, None]:
        outcome = yield
        xml = session.config.stash.get(xml_key, None)
        record = self.finisher.record
        # No --junitxml, a refused session, or a session end that raised: nothing to annotate.
        if xml is None or record is None or outcome.excinfo is not None:
            return
        annotate(xml.logfile, xml.prefix, record)
