"""The exports of a finished record -- Markdown, JUnit XML, SWE-bench's files -- and ``report``.

Each export is rendered from real records of the built-in example (``example_records``: a fix, a
regression, a falsified fix, an attack, a flake) and checked against what the record says, computed
here from the record's own results, never from the export's code.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import xml.etree.ElementTree as ET
from typing import Any

import pytest
from conftest import EXPORTED, Record
from markdown_it import MarkdownIt

from pytest_evidence.model import BCClass, Detection, DetectionKind, EvidenceRecord, Outcome, TierStatus, Verdict
from runner.cli import main
from runner.exports import junit, markdown, swebench

Records = dict[str, tuple[pathlib.Path, Record]]

#: GitHub-flavoured enough for the checks: CommonMark with tables.
GFM = MarkdownIt("commonmark").enable("table")


def load(example_records: Records, name: str) -> tuple[pathlib.Path, EvidenceRecord]:
    path, doc = example_records[name]
    return path, EvidenceRecord.from_dict(doc)


def code_spans(text: str) -> list[str]:
    """The contents of every inline code span of ``text``, as a Markdown reader parses them."""
    return [c.content for t in GFM.parse(text) for c in t.children or () if c.type == "code_inline"]


def with_results(record: EvidenceRecord, **outcomes: Outcome) -> EvidenceRecord:
    """``record`` with the candidate outcome of each named test (last id part) replaced."""
    changed = tuple(
        dataclasses.replace(r, candidate_result=outcomes.get(r.test_id.split("::")[-1], r.candidate_result))
        for r in record.results
    )
    return dataclasses.replace(record, results=changed)


# -- Markdown -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", EXPORTED)
def test_markdown_says_the_verdict_and_fits_one_screen(example_records: Records, name: str) -> None:
    path, record = load(example_records, name)
    text = markdown.render(record, str(path))
    lines = text.splitlines()
    assert len(lines) <= 30
    assert record.verdict is not None
    assert f"**{record.verdict.verdict.value}**" in lines[0]
    assert str(path) in code_spans(lines[-1])
    rows = [line for line in lines if line.startswith("| T") or line.startswith("| audit")]
    assert [row.split(" | ")[0][2:] for row in rows] == [t.tier.value for t in record.tiers]
    html = GFM.render(text)
    assert html.count("<tr>") == len(record.tiers) + 1  # a real table: header and one row per tier
    assert "**Proved:**" in lines[2] and "**Not proved:**" in lines[2]
    clean = (
        record.verdict.verdict is Verdict.CERTIFIED
        and record.complete
        and not record.not_run
        and all(t.status is not TierStatus.NOT_RUN for t in record.tiers)
        and all(r.role is not None for r in record.results)
        and all(a.bc_class is not BCClass.NO_FIX for a in record.annotations.values())
    )
    assert lines[2].endswith("**Not proved:** nothing left open.") == clean
    if record.verdict.verdict is not Verdict.CERTIFIED:  # why not, in the verdict's own first words
        assert all(reason.split(":")[0] in lines[2] for reason in record.verdict.reasons[:2])


def test_markdown_names_the_bug_discriminating_test(example_records: Records) -> None:
    path, record = load(example_records, "honest-fix")
    (fixed,) = [r["test_id"] for r in example_records["honest-fix"][1]["results"] if r["bug_discriminating"]]
    text = markdown.render(record, str(path))
    (line,) = [line for line in text.splitlines() if line.startswith("**Bug-discriminating")]
    assert code_spans(line) == [fixed]


def test_markdown_names_the_regression_at_its_file_and_line(example_records: Records) -> None:
    path, doc = example_records["regression"]
    (regressed,) = [
        r for r in doc["results"] if doc["annotations"].get(r["test_id"], {}).get("bc_class") == "regression"
    ]
    where = "%s:%d" % (regressed["failure"]["path"], regressed["failure"]["line"])
    text = markdown.render(EvidenceRecord.from_dict(doc), str(path))
    (line,) = [line for line in text.splitlines() if regressed["test_id"] in line and line.startswith("- ")]
    assert code_spans(line) == [regressed["test_id"], where]
    assert "regression" in line
    assert "**{verdict}** at {halted_at}".format(**doc["verdict"]) in text.splitlines()[0]


def test_markdown_lists_detections_with_their_place(example_records: Records) -> None:
    path, record = load(example_records, "conftest-tamper")
    text = markdown.render(record, str(path))
    spans = code_spans(text)
    for det in record.detections:
        assert det.path is not None and det.line is not None
        assert f"{det.path}:{det.line}" in spans


def test_markdown_of_a_plugin_record_claims_no_verdict(example_records: Records) -> None:
    path, record = load(example_records, "honest-fix")
    assert record.candidate_commit is not None
    plugin = dataclasses.replace(record, verdict=None, tiers=(), candidate_commit=record.candidate_commit + "+dirty")
    text = markdown.render(plugin, str(path))
    assert "**NO VERDICT**" in text.splitlines()[0]
    assert code_spans(text.splitlines()[0])[0] == record.candidate_commit[:12] + "+dirty"
    assert "no verdict: a plugin record" in text
    assert "<table>" not in GFM.render(text)


def test_markdown_caps_long_lists_and_escapes_what_the_record_says(example_records: Records) -> None:
    path, record = load(example_records, "regression")
    weird = "tests/test_x.py::test_odd[`a`|*b*]"
    regressed = next(r for r in record.results if r.candidate_result is Outcome.FAIL)
    results = record.results + tuple(dataclasses.replace(regressed, test_id=f"{weird}-{i}") for i in range(9))
    noise = tuple(
        Detection(DetectionKind.TIMEOUT, "timed out | *twice* <b>%d</b>" % i, test_id=weird) for i in range(7)
    )
    text = markdown.render(dataclasses.replace(record, results=results, detections=noise), str(path))
    assert len(text.splitlines()) <= 30
    assert "- and 8 more" in text  # 10 failing: 2 shown
    assert "- and 5 more" in text  # 7 detections: 2 shown
    spans = code_spans(text)
    assert f"{weird}-0" in spans and weird in spans  # backticks and | survive inside the code span
    html = GFM.render(text)
    assert "<b>" not in html and "<em>" not in html  # the record's text is never markup
    assert "timed out | *twice* &lt;b&gt;0&lt;/b&gt;" in html


# -- JUnit XML ----------------------------------------------------------------------------------


#: The child pytest's junitxml writes for a candidate outcome (none for pass and xpassed).
CHILD = {
    "fail": "failure",
    "flaky": "failure",
    "error": "error",
    "timeout": "error",
    "crash": "error",
    "skipped": "skipped",
    "xfailed": "skipped",
}


def expected_properties(doc: Record, result: Record) -> dict[str, str]:
    """The record's values for a testcase, spelled as JSON scalars without quotes."""
    ann = doc["annotations"].get(result["test_id"], {})
    raw = {
        "role": result["role"],
        "bc_class": ann.get("bc_class"),
        "bug_discriminating": result["bug_discriminating"],
        "baseline_result": result["baseline_result"],
        "origin": ann.get("origin"),
    }
    return {k: json.dumps(v).strip('"') for k, v in raw.items()}


def properties(element: ET.Element) -> dict[str, str]:
    return {p.get("name", ""): p.get("value", "") for p in element.findall("properties/property")}


@pytest.mark.parametrize("name", EXPORTED)
def test_junit_has_one_testcase_per_result_with_the_record_s_properties(example_records: Records, name: str) -> None:
    _path, doc = example_records[name]
    root = ET.fromstring(junit.render(EvidenceRecord.from_dict(doc)))
    assert root.tag == "testsuites"
    cases = list(root.iter("testcase"))
    assert len(cases) == len(doc["results"])
    gates = [r for r in doc["results"] if r["role"] == "STATIC_GATE"]
    tests = [r for r in doc["results"] if r["role"] != "STATIC_GATE"]
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert set(suites) == {"tests", "static gates"}
    for suite, results in ((suites["tests"], tests), (suites["static gates"], gates)):
        assert properties(suite) == {
            "verdict": doc["verdict"]["verdict"],
            "halted_at": doc["verdict"]["halted_at"] or "null",
            "schema_version": doc["schema_version"],
            "candidate_commit": doc["candidate_commit"],
            "baseline_commit": doc["baseline_commit"],
        }
        found = suite.findall("testcase")
        assert [c.get("name") for c in found] == [r["test_id"].split("::")[-1] for r in results]
        assert [properties(c) for c in found] == [expected_properties(doc, r) for r in results]
        children = [CHILD.get(r["candidate_result"]) for r in results]
        assert suite.get("tests") == str(len(results))
        assert suite.get("failures") == str(children.count("failure"))
        assert suite.get("skipped") == str(children.count("skipped"))
        for case, result, tag in zip(found, results, children, strict=True):
            assert [c.tag for c in case if c.tag != "system-out"] == ["properties", *([tag] if tag else [])]
            if tag is not None:
                assert case[1].get("message") == result["failure"]["message"]
    assert root.get("tests") == str(len(doc["results"]))


def test_junit_names_a_test_as_pytest_does_and_survives_control_characters(example_records: Records) -> None:
    _path, record = load(example_records, "regression")
    first = next(r for r in record.results if r.test_id.startswith("tests/test_price.py::"))
    odd = dataclasses.replace(first, test_id="tests/sub/test_y.py::TestK::test_z[a::b]", stdout_summary="\x1b[31mred")
    root = ET.fromstring(junit.render(dataclasses.replace(record, results=(odd,))))
    (case,) = root.iter("testcase")
    assert (case.get("classname"), case.get("name")) == ("tests.sub.test_y.TestK", "test_z[a::b]")
    assert case.findtext("system-out") == "#x1B[31mred"


# -- SWE-bench ----------------------------------------------------------------------------------

REPORT_KEYS = ["patch_is_None", "patch_exists", "patch_successfully_applied", "resolved", "tests_status"]
STATUS_KEYS = ["FAIL_TO_PASS", "PASS_TO_PASS", "FAIL_TO_FAIL", "PASS_TO_FAIL"]


@pytest.mark.parametrize("name", EXPORTED)
def test_swebench_lists_are_the_b_c_cells(example_records: Records, name: str) -> None:
    _path, doc = example_records[name]
    got = swebench.files(EvidenceRecord.from_dict(doc), "shop__shop-1")
    assert set(got) == {"FAIL_TO_PASS.json", "PASS_TO_PASS.json", "report.json"}
    results = doc["results"]
    assert got["FAIL_TO_PASS.json"] == [
        r["test_id"] for r in results if r["baseline_result"] in ("fail", "error") and r["candidate_result"] == "pass"
    ]
    assert got["PASS_TO_PASS.json"] == [
        r["test_id"] for r in results if r["baseline_result"] == "pass" and r["candidate_result"] == "pass"
    ]
    (instance,) = got["report.json"]
    assert instance == "shop__shop-1"
    entry = got["report.json"][instance]
    ran = [r for r in results if r["role"] != "STATIC_GATE"]
    assert list(entry) == (REPORT_KEYS if ran else REPORT_KEYS[:4])
    assert (entry["patch_is_None"], entry["patch_exists"], entry["patch_successfully_applied"]) == (
        False,
        True,
        bool(ran),
    )
    if ran:
        assert list(entry["tests_status"]) == STATUS_KEYS
        assert all(list(v) == ["success", "failure"] for v in entry["tests_status"].values())
    json.dumps(got)  # every document is JSON as it stands


def test_swebench_resolved_follows_swebench_s_rule(example_records: Records) -> None:
    verdicts = {}
    for name in ("honest-fix", "regression", "no-fix", "conftest-tamper"):
        _path, doc = example_records[name]
        entry = swebench.files(EvidenceRecord.from_dict(doc), name)["report.json"][name]
        verdicts[name] = entry["resolved"]
        if name == "regression":
            (regressed,) = [
                r["test_id"]
                for r in doc["results"]
                if (r["baseline_result"], r["candidate_result"]) == ("pass", "fail")
            ]
            assert entry["tests_status"]["PASS_TO_PASS"]["failure"] == [regressed]
        if name == "no-fix":
            (reproducer,) = [r["test_id"] for r in doc["results"] if r["role"] == "BUG_REPRODUCTION"]
            assert entry["tests_status"]["FAIL_TO_PASS"] == {"success": [], "failure": [reproducer]}
    assert verdicts == {"honest-fix": True, "regression": False, "no-fix": False, "conftest-tamper": False}


def test_swebench_reads_outcomes_as_its_log_parser_would(example_records: Records) -> None:
    """xfail passes and skip is kept (SWE-bench's own rule); xpass, flaky and timeout fail."""
    _path, record = load(example_records, "honest-fix")
    graded = with_results(
        record,
        test_ten_items_get_discount=Outcome.XFAILED,
        test_cart_total=Outcome.SKIPPED,
        test_small_order_has_no_discount=Outcome.FLAKY,
        test_large_order_discount=Outcome.XPASSED,
        test_total_small=Outcome.TIMEOUT,
    )
    status = swebench.report(graded)["tests_status"]
    tail = {k: [t.split("::")[-1] for t in v] for k, v in status["PASS_TO_PASS"].items()}
    assert status["FAIL_TO_PASS"]["success"] == ["tests/test_boundary.py::test_ten_items_get_discount"]
    assert tail == {
        "success": ["test_cart_total", "test_cli_prints_the_total"],
        "failure": ["test_small_order_has_no_discount", "test_large_order_discount", "test_total_small"],
    }
    assert swebench.report(graded)["resolved"] is False
    assert swebench.files(graded, "i")["FAIL_TO_PASS.json"] == []  # an xfail is no B/C fix


# -- evidence-runner report ---------------------------------------------------------------------


def test_report_writes_every_export(
    example_records: Records, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, doc = example_records["honest-fix"]
    summary = tmp_path / "step-summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    md, xml, out = tmp_path / "summary.md", tmp_path / "junit.xml", tmp_path / "swebench"
    args = ["report", str(path), "--markdown", str(md), "--junit", str(xml), "--swebench", str(out)]
    assert main([*args, "--instance-id", "shop__shop-1"]) == 0
    record = EvidenceRecord.from_dict(doc)
    assert md.read_text() == markdown.render(record, str(path))
    assert summary.read_text() == "earlier step\n" + md.read_text() + "\n"
    assert len(list(ET.fromstring(xml.read_text()).iter("testcase"))) == len(doc["results"])
    written: dict[str, Any] = {p.name: json.loads(p.read_text()) for p in out.iterdir()}
    assert written == swebench.files(record, "shop__shop-1")


def test_report_instance_id_needs_swebench(example_records: Records, tmp_path: pathlib.Path) -> None:
    path, _doc = example_records["honest-fix"]
    assert main(["report", str(path), "--instance-id", "x", "--markdown", str(tmp_path / "m.md")]) == 2
    assert not (tmp_path / "m.md").exists()
