"""The runner's command line and the built-in example, end to end on a real git repository."""

from __future__ import annotations

import pathlib

import pytest

from runner import demo, example_repo
from runner.cli import main
from runner.errors import EXIT_BAD_INPUT, EXIT_INTERNAL


def test_example_candidates_get_the_evidence_they_deserve(tmp_path: pathlib.Path) -> None:
    repo = example_repo.build(tmp_path / "shop")
    got = demo.evidence_per_candidate(repo, tmp_path)
    summary = {name: doc["summary"] for name, (_code, doc) in got.items()}
    assert got["honest-fix"][0] == 0 and summary["honest-fix"]["bug_discriminating"] == 1
    assert summary["honest-fix"]["by_class"]["regression"] == 0
    assert summary["no-fix"]["by_class"]["no-fix"] == 1 and got["no-fix"][0] == 1
    assert summary["vacuous"]["bug_discriminating"] == 0
    assert summary["vacuous"]["detections"]["reproducer_not_failing_on_baseline"] == 1
    assert summary["regression"]["by_class"]["regression"] == 1
    assert summary["flaky-fix"]["detections"]["flaky_quarantined"] >= 1
    assert "empty_collection" in summary["empty"]["detections"] and got["empty"][0] == 5
    assert repo.path.joinpath(".git").is_dir() and not list(tmp_path.glob("evidence-baseline-*"))


def test_demo_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "honest-fix" in out and "empty_collection" in out


def test_certify_is_not_built_and_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certify"]) == EXIT_INTERNAL
    assert "not built" in capsys.readouterr().err


def test_unknown_command_is_bad_input() -> None:
    assert main(["frobnicate"]) == EXIT_BAD_INPUT
