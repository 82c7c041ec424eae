"""Empty green: a run that executed nothing must never read as success when evidence was asked.

pytest exits 0 when every test was skipped or deselected; an agent reading that exit code
would call the patch verified. The record flags ``empty_collection`` and, when a baseline or a
reproducer was named, the exit status is 5.
"""

from __future__ import annotations

import pytest
from conftest import GitRepo, Record, RunEvidence


def _kinds(doc: Record) -> list[str]:
    return [d["kind"] for d in doc["detections"]]


def test_nothing_collected(pytester: pytest.Pytester, run_evidence: RunEvidence) -> None:
    pytester.makepyfile(test_nothing="x = 1\n")
    result, doc = run_evidence()
    assert "empty_collection" in _kinds(doc)
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED


def test_all_skipped_is_flagged_and_fails_with_a_reproducer(
    pytester: pytest.Pytester, run_evidence: RunEvidence
) -> None:
    pytester.makepyfile("import pytest\n\n@pytest.mark.skip\ndef test_a():\n    pass\n")
    result, doc = run_evidence()
    assert "empty_collection" in _kinds(doc) and result.ret == 0  # nothing asked, pytest's own status
    result, doc = run_evidence("--reproducer=test_all_skipped_is_flagged_and_fails_with_a_reproducer.py::test_a")
    assert "empty_collection" in _kinds(doc)
    assert result.ret == 5 and doc["exit_status"] == 5
    result.stdout.fnmatch_lines(["*empty_collection: all 1 tests that ran were skipped or xfailed*"])


def test_all_deselected_with_a_baseline(git_repo: GitRepo, run_evidence: RunEvidence) -> None:
    base = git_repo.commit("B", {"test_a.py": "def test_a():\n    pass\n"})
    result, doc = run_evidence(f"--baseline={base}", "-k", "no_such_test")
    assert "empty_collection" in _kinds(doc)
    assert result.ret != 0
