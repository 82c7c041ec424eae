"""The runner end to end on the built-in example: every candidate gets the verdict it deserves."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import tempfile

import jsonschema
import pytest
from conftest import Record

from pytest_evidence.errors import EXIT_BAD_INPUT
from runner import example_repo
from runner.cli import _command_word, _parser, main


@pytest.fixture(scope="module")
def certified(example_certified: dict[str, tuple[int, pathlib.Path, Record]]) -> dict[str, tuple[int, Record]]:
    return {name: (code, doc) for name, (code, _path, doc) in example_certified.items()}


@pytest.mark.parametrize("name", list(example_repo.EXPECTED))
def test_candidate_gets_its_verdict(certified: dict[str, tuple[int, Record]], schema: Record, name: str) -> None:
    code, doc = certified[name]
    jsonschema.validate(doc, schema)
    verdict, tier = example_repo.EXPECTED[name]
    assert (doc["verdict"]["verdict"], doc["verdict"]["halted_at"]) == (verdict, tier), doc["verdict"]
    assert code == {"CERTIFIED": 0, "REJECTED": 1, "INCONCLUSIVE": 3}[verdict] == doc["exit_status"]
    assert doc["summary"]["typing_failures"] == 0 and doc["summary"]["evidence_typing_coverage"] == 1.0
    if tier is not None:
        halted = [t["tier"] for t in doc["tiers"] if t["status"] in ("failed", "inconclusive")]
        assert halted[0] == tier
        assert all(t["status"] == "not_run" for t in doc["tiers"] if t["tier"] > tier)


@pytest.mark.parametrize("name", list(example_repo.EXPECTED_DETECTIONS))
def test_adversarial_candidate_leaves_its_named_detection(certified: dict[str, tuple[int, Record]], name: str) -> None:
    _, doc = certified[name]
    kind, detail = example_repo.EXPECTED_DETECTIONS[name]
    assert any(d["kind"] == kind and d["detail"] == detail for d in doc["detections"]), doc["detections"]
    assert doc["verdict"]["verdict"] != "CERTIFIED"


def test_tampered_tests_are_replaced_by_the_trusted_ones(
    certified: dict[str, tuple[int, Record]], tmp_path: pathlib.Path
) -> None:
    _, doc = certified["conftest-tamper"]
    assert doc["integrity"]["removed"] == ["tests/conftest.py"] and doc["integrity"]["trusted"] == "baseline"
    assert doc["integrity"]["tested_commit"] != doc["candidate_commit"]
    hook = next(d for d in doc["detections"] if d["detail"] == "hook")
    assert (hook["path"], hook["line"]) == ("tests/conftest.py", 5)
    assert {r["role"] for r in doc["results"]} == {"STATIC_GATE"}  # an attack stops the climb: no test ran
    # climbing on (--full), the trusted tests run in place of the tampered ones
    repo = example_repo.build(tmp_path / "shop")
    out = tmp_path / "full.json"
    assert main(["certify", *repo.certify_args("skip-tamper", out), "--full"]) == 1
    skip = json.loads(out.read_text())
    assert skip["integrity"]["reapplied"] == ["tests/test_price.py"]
    flip = next(r for r in skip["results"] if r["test_id"].endswith("test_large_order_discount"))
    assert flip["candidate_result"] == "fail"  # the skip was taken away: the regression shows
    assert skip["verdict"]["halted_at"] == "T4"


def test_every_test_process_is_pinned_the_same_way(certified: dict[str, tuple[int, Record]]) -> None:
    _, doc = certified["honest-fix"]
    pin = doc["pinning"]
    assert pin["seed"] == doc["invocation"]["seed"] and pin["hashseed"] == pin["seed"] % 2**32
    assert pin["network"] in ("netns", "socket_guard") and pin["home"] == "temporary"
    assert set(pin["plugins"]) == {"pytest-timeout", "pytest-randomly"}
    if pin["network"] == "netns":
        assert pin["missing"] == []  # the store hidden too: the example's default one
    else:
        assert [m for m in pin["missing"] if m.startswith("network namespace")]
    assert doc["baseline_environment"]["fingerprint"] == doc["environment"]["fingerprint"]
    assert "http_proxy" in pin["scrubbed"] and "PYTEST_ADDOPTS" in pin["scrubbed"]


def test_syntax_error_is_stopped_at_t0_with_nothing_else_run(certified: dict[str, tuple[int, Record]]) -> None:
    _, doc = certified["syntax-error"]
    assert {r["role"] for r in doc["results"]} == {"STATIC_GATE"}
    bad = [r for r in doc["results"] if r["candidate_result"] == "fail"]
    assert bad[0]["failure"]["kind"] == "syntax_error" and bad[0]["failure"]["path"] == "shop/price.py"
    assert bad[0]["failure"]["line"] == 4


def test_lint_warning_is_recorded_and_passes_through(certified: dict[str, tuple[int, Record]]) -> None:
    _, doc = certified["lint-warning"]
    t1 = next(t for t in doc["tiers"] if t["tier"] == "T1")
    assert t1["status"] == "passed"
    assert any(f["code"] == "F401" and not f["hard"] for f in t1["findings"])


def test_undefined_name_is_a_hard_finding(certified: dict[str, tuple[int, Record]]) -> None:
    _, doc = certified["undefined-name"]
    t1 = next(t for t in doc["tiers"] if t["tier"] == "T1")
    assert [f["code"] for f in t1["findings"] if f["hard"]] == ["F821"]


def test_regression_is_typed_and_names_the_neighbour(certified: dict[str, tuple[int, Record]]) -> None:
    _, doc = certified["regression"]
    flipped = [r for r in doc["results"] if r["baseline_result"] == "pass" and r["candidate_result"] == "fail"]
    assert [r["test_id"] for r in flipped] == ["tests/test_price.py::test_large_order_discount"]
    assert flipped[0]["role"] == "REGRESSION" and flipped[0]["affected_by_change"] is True
    assert flipped[0]["failure"]["path"] == "tests/test_price.py"  # in the repository, not a gone worktree
    assert "evidence-runner-" not in flipped[0]["failure"]["excerpt"]
    flip = doc["annotations"][flipped[0]["test_id"]]["flip"]  # it holds like for like
    assert (flip["baseline_full_suite"], flip["baseline_same_selection"]) == ("pass", "pass")
    assert flip["rests_on"].startswith("regression: passes on B in the C run's selection")


def test_honest_fix_evidence(certified: dict[str, tuple[int, Record]]) -> None:
    _, doc = certified["honest-fix"]
    repro = next(r for r in doc["results"] if r["test_id"].endswith("test_ten_items_get_discount"))
    assert (repro["role"], repro["baseline_result"], repro["candidate_result"], repro["bug_discriminating"]) == (
        "BUG_REPRODUCTION",
        "fail",
        "pass",
        True,
    )
    assert doc["collected"] == 6 and doc["not_run"] == []


def test_demo_prints_the_table_and_leaves_nothing_behind(
    capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # this process's temp dirs
    monkeypatch.setenv("TMPDIR", str(scratch))  # and its children's
    assert main(["demo", "--candidates", "honest-fix,no-fix,vacuous"]) == 0
    out = capsys.readouterr().out
    assert "[1/3] honest-fix:" in out and "[3/3] vacuous:" in out and "lint-warning" not in out
    assert "CERTIFIED" in out and "REJECTED" in out and "INCONCLUSIVE" in out
    assert list(scratch.iterdir()) == []
    assert main(["demo", "--candidates", "no-such"]) == EXIT_BAD_INPUT


def test_unknown_command_is_bad_input() -> None:
    assert main(["frobnicate"]) == EXIT_BAD_INPUT


def test_no_record_points_into_a_removed_worktree(certified: dict[str, tuple[int, Record]]) -> None:
    """Failure locations are repository-relative: a reader can open them after the run."""
    for name, (_code, doc) in certified.items():
        assert "evidence-runner-" not in json.dumps(doc), name
        located = [r["failure"]["path"] for r in doc["results"] if r["failure"] and r["failure"]["path"]]
        located += [a["baseline_failure"]["path"] for a in doc["annotations"].values() if a.get("baseline_failure")]
        assert all(not p.startswith("/") for p in located if p), (name, located)


def test_a_command_imports_only_its_own_module() -> None:
    """Every certify a harness starts pays the runner's imports: the A/B harness, the batch
    executors, the exports and pytest itself stay out of a certify's process."""
    probe = (
        "import sys\n"
        "from runner import cli\n"
        "cli._parser(cli._command_word(['certify', '--repo', '.']))\n"
        "import runner.certify\n"
        "heavy = ('runner.ab_cmd', 'runner.batch_cmd', 'runner.steer_cmd', 'runner.exports.junit', 'pytest')\n"
        "print(','.join(m for m in heavy if m in sys.modules))\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == ""


@pytest.mark.parametrize(
    "argv",
    [
        ["certify", "--repo", "r", "--baseline", "HEAD~1", "--candidate", "HEAD", "--out", "o.json", "--full"],
        ["certify-batch", "--repo", "r", "--baseline", "B", "--candidates", "c.txt", "--out", "d", "--jobs", "2"],
        ["audit", "--repo", "r", "--rev", "HEAD"],
        ["report", "e.json", "--junit", "j.xml"],
        ["flaky", "clear", "tests/test_a.py::test_a"],
        ["receipts", "reconcile", "abc", "--rerun"],
        ["demo", "--keep"],
    ],
)
def test_the_command_alone_parses_as_the_whole_command_line(argv: list[str]) -> None:
    assert _parser(_command_word(argv)).parse_known_args(argv) == _parser().parse_known_args(argv)


def test_a_certify_loads_no_pytest_of_its_own() -> None:
    """pytest runs in the test processes, never in the runner: its import (about 60 ms, half of
    it JUnit's renderer through ``_pytest.junitxml``) was on every certify's path, for option
    names and a renderer no one asked for."""
    loaded = (
        "import argparse, pathlib, sys\n"
        "from runner import certify, cli, report_cmd\n"
        "from pytest_evidence import options\n"  # what a test process's channel names its options by
        "none = argparse.Namespace(**dict.fromkeys(report_cmd.EXPORTS))\n"
        "assert report_cmd.export(None, none, pathlib.Path('e.json'), step_summary=False) == []\n"
        "print(sorted(m for m in ('pytest', '_pytest.junitxml', '_pytest.main') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", loaded], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
