"""Rerun-until-green is p-hacking: a test whose outcome flips is quarantined, never a pass."""

from __future__ import annotations

import pytest
from conftest import GitRepo, RunEvidence, by_name

from runner.cli import main

FLIP = """
import pathlib
P = pathlib.Path(__file__).with_name("flip.txt")

def test_flip():
    n = int(P.read_text()) if P.exists() else 0
    P.write_text(str(n + 1))
    assert n % 2 == 1
"""


def test_flipping_test_is_quarantined_and_not_green(pytester: pytest.Pytester, run_evidence: RunEvidence) -> None:
    pytester.makepyfile(test_flaky=FLIP)
    result, doc = run_evidence("--evidence-reruns=2")
    flip = by_name(doc)["test_flip"]
    assert flip["candidate_result"] == "flaky" and flip["failure"]["kind"] == "flaky"
    assert doc["annotations"]["test_flaky.py::test_flip"]["attempts"] == ["fail", "pass"]
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # quarantine is not a pass
    result.stdout.fnmatch_lines(["*1 flaky*"])
    assert [d["kind"] for d in doc["detections"]].count("flaky_quarantined") == 1


def test_flake_signature_is_carried_into_later_runs(pytester: pytest.Pytester, run_evidence: RunEvidence) -> None:
    pytester.makepyfile(test_flaky=FLIP)
    _, first = run_evidence()
    assert by_name(first)["test_flip"]["flaky_history"] == []
    _, second = run_evidence()
    history = by_name(second)["test_flip"]["flaky_history"]
    assert len(history) == 1
    run_id, side, sequence, digest = history[0].split(":")
    assert (run_id, side, sequence) == (first["run_id"], "C", "fail,pass") and len(digest) == 12


def test_consistent_failure_uses_every_rerun_and_stays_a_failure(
    pytester: pytest.Pytester, run_evidence: RunEvidence
) -> None:
    pytester.makepyfile("def test_always():\n    assert 0\n")
    _, doc = run_evidence("--evidence-reruns=3")
    assert by_name(doc)["test_always"]["candidate_result"] == "fail"
    assert (
        doc["annotations"]["test_consistent_failure_uses_every_rerun_and_stays_a_failure.py::test_always"]["attempts"]
        == ["fail"] * 4
    )


#: Fails on every attempt, saying which; the conftest notes each attempt's traceback style.
COUNTED = """
import pathlib
P = pathlib.Path(__file__).with_name("count.txt")

def test_always():
    n = int(P.read_text()) if P.exists() else 0
    P.write_text(str(n + 1))
    assert n == -1, "attempt %d" % (n + 1)
"""
STYLES = """
import pathlib
import pytest

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed:
        with pathlib.Path(__file__).with_name("styles.txt").open("a") as fh:
            fh.write(type(report.longrepr.reprtraceback).__name__ + " ")
"""


def test_a_consistent_failure_is_reported_with_its_first_attempt_and_only_that_one_formatted_in_full(
    pytester: pytest.Pytester, run_evidence: RunEvidence
) -> None:
    pytester.makepyfile(test_counted=COUNTED)
    pytester.makeconftest(STYLES)
    result, doc = run_evidence("--evidence-reruns=2")
    always = by_name(doc)["test_always"]
    assert always["candidate_result"] == "fail" and "attempt 1" in always["failure"]["message"], always
    assert doc["annotations"]["test_counted.py::test_always"]["attempts"] == ["fail"] * 3
    styles = (pytester.path / "styles.txt").read_text().split()
    assert styles == ["ReprTraceback", "ReprTracebackNative", "ReprTracebackNative"], styles
    result.stdout.fnmatch_lines(["*assert n == -1*"])  # the terminal shows pytest's own long style
    assert pytester.parseconfig().option.tbstyle == "auto"


def test_passing_tests_are_never_rerun(pytester: pytest.Pytester, run_evidence: RunEvidence) -> None:
    pytester.makepyfile("def test_ok():\n    pass\n")
    _, doc = run_evidence("--evidence-reruns=5")
    assert next(iter(doc["annotations"].values()))["attempts"] == ["pass"]


def test_a_quarantine_outlives_the_run_that_saw_the_flip(pytester: pytest.Pytester, run_evidence: RunEvidence) -> None:
    pytester.makepyfile(test_flaky=FLIP)
    run_evidence()
    pytester.makepyfile(test_flaky="def test_flip():\n    pass\n")  # steady now: still not green
    result, doc = run_evidence()
    flip = by_name(doc)["test_flip"]
    assert flip["candidate_result"] == "flaky" and "flaky clear test_flaky.py::test_flip" in flip["failure"]["message"]
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    # the last line says why the exit is not 0, not just "1 passed"
    assert "1 quarantined as flaky (exit 1)" in result.stdout.lines[-1], result.stdout.lines[-1]


def test_the_runner_finds_the_plugins_quarantine_with_no_store_named(
    git_repo: GitRepo, run_evidence: RunEvidence, capsys: pytest.CaptureFixture[str]
) -> None:
    git_repo.commit("a flaky test", {"test_flaky.py": FLIP})
    run_evidence()
    assert (git_repo.path / ".git" / "evidence" / "store.sqlite3").is_file()  # in the git dir, not the tree
    capsys.readouterr()
    assert main(["flaky", "list", "--repo", str(git_repo.path)]) == 0
    assert "test_flaky.py::test_flip  quarantined by run" in capsys.readouterr().out
