"""A tool that fails to answer is never a pass: each engine's failure path, end to end.

ruff, mypy, the import probe, pytest and git each end without a usable answer here; the tier
that asked is an ``error``, the verdict INCONCLUSIVE (exit 3), the record incomplete with the
tool's own words. A failure the candidate caused (its code breaks collection, or kills the import)
is the candidate's, and rejects.
"""

from __future__ import annotations

import pathlib
import threading
from typing import Any

import jsonschema
import pytest
from conftest import FIX, PKG, Record, Repo, certify

from pytest_evidence import gitops
from pytest_evidence.errors import GitFailed


def _tier(doc: Record, name: str) -> Record:
    return next(t for t in doc["tiers"] if t["tier"] == name)


def _errored(code: int, doc: Record | None, tier: str, words: str, schema: Record) -> None:
    assert doc is not None
    jsonschema.validate(doc, schema)
    rung = _tier(doc, tier)
    assert (code, doc["verdict"]["verdict"], rung["status"]) == (3, "INCONCLUSIVE", "error"), rung
    assert words in rung["note"], rung["note"]
    assert doc["complete"] is False and doc["incomplete_reason"].startswith("%s did not finish" % tier)
    later = [t["status"] for t in doc["tiers"] if t["tier"] > tier]
    assert set(later) <= {"not_run"}


def test_ruff_that_cannot_read_its_configuration_is_a_t1_error(
    repo: Repo, tmp_path: pathlib.Path, schema: Record
) -> None:
    base = repo.commit({**PKG, "pyproject.toml": PKG["pyproject.toml"] + '\n[tool.ruff]\nline-length = "wide"\n'})
    cand = repo.commit(FIX)
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    _errored(code, doc, "T1", "ruff ended (exit 2) without an answer", schema)


def test_mypy_that_cannot_start_is_a_t2_error(repo: Repo, tmp_path: pathlib.Path, schema: Record) -> None:
    config = '\n[tool.mypy]\nplugins = ["no_such_mypy_plugin"]\n'
    base = repo.commit({**PKG, "pyproject.toml": PKG["pyproject.toml"] + config})
    cand = repo.commit(FIX)
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    _errored(code, doc, "T2", "no_such_mypy_plugin", schema)


def test_an_import_probe_that_dies_before_importing_anything_is_a_t2_error(
    repo: Repo, tmp_path: pathlib.Path, schema: Record
) -> None:
    # The checkout's root is on the path: its sitecustomize runs at interpreter start, in B too.
    base = repo.commit(
        {**PKG, "sitecustomize.py": "import os, sys\nif 'pytest' not in sys.modules:\n    os._exit(7)\n"}
    )
    cand = repo.commit(FIX)
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    _errored(code, doc, "T2", "the import probe ended (exit 7: no output) before importing anything", schema)


def test_a_module_that_kills_the_import_probe_is_the_candidates_failure(repo: Repo, tmp_path: pathlib.Path) -> None:
    base = repo.commit(PKG)
    cand = repo.commit({**FIX, "calc/ops.py": "import os\nos._exit(0)\n" + FIX["calc/ops.py"]})
    # os._exit is an attack the source scan sees: --full climbs on to the import probe
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand, "--full")
    assert doc is not None and code == 1
    t2 = _tier(doc, "T2")
    assert (
        t2["status"] == "failed"
        and "calc/ops.py: the import probe ended (exit 0: no output) while importing it" in t2["note"]
    )


def test_pytest_that_collects_nothing_on_b_or_c_is_a_t3_error(
    repo: Repo, tmp_path: pathlib.Path, schema: Record
) -> None:
    config = '[tool.pytest.ini_options]\ntestpaths = ["tests"]\naddopts = "-p no_such_plugin_module"\n'
    base = repo.commit({**PKG, "pyproject.toml": config})
    cand = repo.commit(FIX)
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    _errored(code, doc, "T3", "no_such_plugin_module", schema)


def test_a_candidate_that_breaks_collection_is_rejected(repo: Repo, tmp_path: pathlib.Path) -> None:
    conftest = "from calc.ops import double\n\nTWO = double(1)\n"
    base = repo.commit({**PKG, "tests/conftest.py": conftest})
    broken = FIX["calc/ops.py"].replace("def double", "def twice")
    cand = repo.commit({**FIX, "calc/ops.py": broken})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert doc is not None and code == 1
    t3 = _tier(doc, "T3")
    assert t3["status"] == "failed" and "the candidate's test files (tests/test_half.py) do not collect" in t3["note"]
    assert "B's do" in t3["note"] and doc["complete"] is True


def test_git_failing_mid_climb_is_an_error_of_the_tier_that_asked(
    repo: Repo, tmp_path: pathlib.Path, schema: Record, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = repo.commit(PKG)
    cand = repo.commit(FIX)
    real = gitops.add_worktree

    def failing(root: str, commit: str, dest: str) -> None:
        if commit == cand:  # C's worktree, made when T1 lints its files
            raise GitFailed("git worktree failed: fatal: could not create work tree dir (simulated)")
        real(root, commit, dest)

    monkeypatch.setattr(gitops, "add_worktree", failing)
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    _errored(code, doc, "T1", "could not create work tree dir", schema)
    assert doc is not None and "[git-failed]" in _tier(doc, "T1")["note"]


def test_git_failing_while_b_with_c_tests_is_made_ahead_is_an_error_of_t3(
    repo: Repo, tmp_path: pathlib.Path, schema: Record, monkeypatch: pytest.MonkeyPatch
) -> None:
    """B with C's tests is checked out in a thread once T1 passed (``check_out_b_ahead``) and
    laid in another once the overlay is planned (``lay_over_b_ahead``): what fails there is the
    error of the tier that asks for the tree, and nothing is left behind."""
    base = repo.commit(PKG)
    cand = repo.commit(FIX)
    real = gitops.add_worktree

    def failing(root: str, commit: str, dest: str) -> None:
        if threading.current_thread().name in ("b-checkout", "b-with-c-tests"):
            raise GitFailed("git worktree failed: fatal: could not create work tree dir (simulated)")
        real(root, commit, dest)

    monkeypatch.setattr(gitops, "add_worktree", failing)
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    _errored(code, doc, "T3", "could not create work tree dir", schema)
    assert repo.git("worktree", "list").count("\n") == 0  # only the main worktree remains


def test_a_worktree_git_made_as_the_climb_was_interrupted_is_removed(
    repo: Repo, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C or SIGTERM the moment git finished a worktree, before the runner knew of it: it is
    removed with the others, not left to ``git worktree list`` (an independent review, by a git
    slowed down and a SIGTERM during its checkout)."""
    base = repo.commit(PKG)
    cand = repo.commit(FIX)
    real = gitops.add_worktree

    def interrupted(root: str, commit: str, dest: str) -> None:
        real(root, commit, dest)
        raise KeyboardInterrupt

    monkeypatch.setattr(gitops, "add_worktree", interrupted)
    code, _ = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert code == 4
    assert repo.git("worktree", "list").count("\n") == 0  # only the main worktree remains


def test_a_sigterm_cpython_swallowed_still_interrupts_the_climb(
    repo: Repo, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A SIGTERM whose ``KeyboardInterrupt`` lands in an at-fork hook, as a process starts, is
    "ignored" by CPython; the climb then went on to a verdict, exit 0 (an independent review).
    It is raised again at the climb's next step."""
    import signal

    from runner.ladder import static

    base = repo.commit(PKG)
    cand = repo.commit(FIX)
    real = static.lint

    def swallowed(*args: Any) -> None:
        try:
            signal.raise_signal(signal.SIGTERM)
        except KeyboardInterrupt:  # what an at-fork hook does with it
            pass
        real(*args)

    monkeypatch.setattr(static, "lint", swallowed)
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert doc is not None
    assert (code, doc["complete"], doc["incomplete_reason"]) == (4, False, "interrupted")
    assert repo.git("worktree", "list").count("\n") == 0


def test_mypy_that_answers_with_notes_only_is_an_answer(repo: Repo, tmp_path: pathlib.Path) -> None:
    """mypy's JSON output exits 1 on a lone note (marshmallow 4.3.1): that is an answer, not a failure."""
    untyped = "\n\ndef legacy(x):\n    y: int = 1\n    return x + y\n"
    base = repo.commit({**PKG, "pyproject.toml": PKG["pyproject.toml"] + "\n[tool.mypy]\n"})
    cand = repo.commit({**FIX, "calc/ops.py": FIX["calc/ops.py"] + untyped})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert doc is not None
    t2 = _tier(doc, "T2")
    assert (code, t2["status"]) == (0, "passed"), t2
    assert [f["code"] for f in t2["findings"]] == ["annotation-unchecked"]
