"""pytest's own ``--junitxml`` with evidence on: each testcase carries what its result proved.

B is replayed after the last test, so the properties reach the file only at the session's end;
these tests read the file pytest left behind and compare it with the record of the same run.
"""

from __future__ import annotations

import json
import pathlib
import xml.etree.ElementTree as ET

import pytest
from conftest import GitRepo, Record, RunEvidence, fix

TYPED = ["role", "bc_class", "bug_discriminating", "baseline_result", "origin"]


def cases_in(path: pathlib.Path) -> dict[str, list[tuple[str, str]]]:
    """Each testcase's properties, in order, by test name."""
    return {
        case.get("name", ""): [(p.get("name", ""), p.get("value", "")) for p in case.iterfind("properties/property")]
        for case in ET.parse(path).getroot().iter("testcase")
    }


def typed(doc: Record, test_id: str) -> list[tuple[str, str]]:
    """What the record says of ``test_id``, as property values (JSON scalars without quotes)."""
    (result,) = [r for r in doc["results"] if r["test_id"] == test_id]
    ann = doc["annotations"][test_id]
    values = [result["role"], ann["bc_class"], result["bug_discriminating"], result["baseline_result"], ann["origin"]]
    return [(name, json.dumps(value).strip('"')) for name, value in zip(TYPED, values, strict=True)]


def test_junitxml_testcases_carry_the_typing_against_the_baseline(
    shop_repo: tuple[GitRepo, str], run_evidence: RunEvidence, tmp_path_factory: pytest.TempPathFactory
) -> None:
    repo, base = shop_repo
    fix(repo)
    xml = tmp_path_factory.mktemp("junit") / "junit.xml"
    result, doc = run_evidence(f"--baseline={base}", f"--junitxml={xml}")
    assert result.ret == 0
    cases = cases_in(xml)
    assert cases["test_ten_items_get_discount"] == [
        ("role", "BUG_REPRODUCTION"),
        ("bc_class", "bug-discriminating"),
        ("bug_discriminating", "true"),
        ("baseline_result", "fail"),
        ("origin", "added"),
    ]
    assert len(cases) == len(doc["results"]) == 3
    for res in doc["results"]:
        assert cases[res["test_id"].split("::")[-1]] == typed(doc, res["test_id"])
    assert dict(cases["test_small_order"])["bc_class"] == "regression-only"
    result.stdout.fnmatch_lines(["*generated xml file: *junit.xml*"])


def test_a_test_s_own_properties_and_the_junit_prefix_are_kept(
    shop_repo: tuple[GitRepo, str], run_evidence: RunEvidence, tmp_path_factory: pytest.TempPathFactory
) -> None:
    repo, base = shop_repo
    fix(repo)
    repo.write({"tests/test_noted.py": "def test_noted(record_property):\n    record_property('ticket', 42)\n"})
    xml = tmp_path_factory.mktemp("junit") / "junit.xml"
    _result, doc = run_evidence(
        f"--baseline={base}", f"--junitxml={xml}", "--junit-prefix=shop", "-o", "junit_family=xunit1"
    )
    root = ET.parse(xml).getroot()
    (case,) = [c for c in root.iter("testcase") if c.get("name") == "test_noted"]
    assert case.get("classname") == "shop.tests.test_noted"
    assert len(case.findall("properties")) == 1  # one element, the test's own entry first
    got = [(p.get("name"), p.get("value")) for p in case.iterfind("properties/property")]
    assert got == [("ticket", "42"), *typed(doc, "tests/test_noted.py::test_noted")]
    assert dict(got)["role"] == "BUG_REPRODUCTION" and dict(got)["baseline_result"] == "pass"


def test_without_evidence_junitxml_gets_no_properties(
    shop_repo: tuple[GitRepo, str], pytester: pytest.Pytester
) -> None:
    repo, _base = shop_repo
    fix(repo)
    xml = pytester.path.parent / f"{pytester.path.name}-junit.xml"
    result = pytester.runpytest(f"--junitxml={xml}")
    assert result.ret == 0
    root = ET.parse(xml).getroot()
    assert len(list(root.iter("testcase"))) == 3
    assert root.find(".//properties") is None
