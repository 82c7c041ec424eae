"""Every way a plugin session ends: bad input leaves nothing behind, anything else leaves a record.

Defect classes: Ctrl-C during the replay on B lost the record; a locked store lost the results; an
unknown ``--reproducer`` wrote a record saying nothing was collected; bad input left an empty
stream file; the plugin's own stream inside the repository marked the candidate ``+dirty``; an
``--evidence-out`` naming a directory ended in a traceback.
"""

from __future__ import annotations

import gc
import json
import signal
import sqlite3
import sys

import jsonschema
import pytest
from conftest import NEW_TEST, GitRepo, Record, RunEvidence, fix, interrupt

from pytest_evidence import gitops
from pytest_evidence.store import Store


def _one_error_line(result: pytest.RunResult, needle: str) -> None:
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [ln for ln in result.stderr.lines if ln.startswith("ERROR: evidence: ")]
    assert len(errors) == 1 and needle in errors[0], result.stderr.str()
    assert "Traceback" not in result.stderr.str() + result.stdout.str()


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--baseline=no-such-rev"], "unknown revision 'no-such-rev' in "),
        (["--reproducer=tests/test_shop.py::test_nope"], "--reproducer names no collected test"),
        (["--evidence-reruns=9"], "--evidence-reruns must be between 0 and 5, not 9 [bad-input]"),
    ],
)
def test_bad_input_leaves_no_record_and_no_stream(
    pytester: pytest.Pytester, shop_repo: tuple[GitRepo, str], args: list[str], needle: str
) -> None:
    result = pytester.runpytest_subprocess("-p", "evidence", "--evidence-out=e.json", *args)
    _one_error_line(result, needle)
    assert not (pytester.path / "e.json").exists() and not (pytester.path / "e.jsonl").exists()


def test_an_evidence_out_that_is_a_directory_is_one_line(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_x():\n    pass\n")
    (pytester.path / "reports").mkdir()
    result = pytester.runpytest_subprocess("-p", "evidence", "--evidence-out=reports")
    _one_error_line(result, "reports is a directory, not a file [bad-input]")


def test_the_plugins_own_files_do_not_make_the_candidate_dirty(
    shop_repo: tuple[GitRepo, str], run_evidence: RunEvidence
) -> None:
    repo, base = shop_repo
    fix(repo)
    head = repo.commit("C")
    _, doc = run_evidence(f"--baseline={base}", "--evidence-store=evidence-store.sqlite3")
    assert doc["candidate_commit"] == head  # evidence.json, evidence.jsonl and the store are its own


def test_ctrl_c_during_the_replay_on_b_writes_the_record_of_what_ran(
    pytester: pytest.Pytester, shop_repo: tuple[GitRepo, str], schema: Record
) -> None:
    repo, base = shop_repo
    started = pytester.path.parent / "replay-started"
    slow = NEW_TEST + (
        "\n\nimport pathlib, time\n\n\ndef test_slow_on_b():\n"
        "    if 'evidence-baseline-' in __file__:\n"
        f"        pathlib.Path({str(started)!r}).touch()\n"
        "        time.sleep(60)\n"
    )
    fix(repo)
    repo.write({"tests/test_boundary.py": slow})
    out = pytester.path / "e.json"
    cmd = [sys.executable, "-m", "pytest", "-p", "evidence", f"--baseline={base}", f"--evidence-out={out}"]
    code, stdout, stderr = interrupt(cmd, started, signal.SIGINT, cwd=pytester.path)
    assert code == pytest.ExitCode.INTERRUPTED, stdout + stderr
    assert "Traceback" not in stdout + stderr
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, schema)
    assert doc["complete"] is False and doc["baseline_run"]["skipped"] == "interrupted"
    assert doc["incomplete_reason"] == "the baseline replay did not finish: interrupted"
    assert {r["candidate_result"] for r in doc["results"]} == {"pass"} and len(doc["results"]) == 4
    assert all(r["baseline_result"] is None for r in doc["results"])
    assert "the baseline replay did not finish: interrupted" in stdout
    assert repo.git("worktree", "list").count("\n") == 0


def test_a_locked_store_costs_the_ledger_not_the_record(
    pytester: pytest.Pytester, shop_repo: tuple[GitRepo, str], schema: Record
) -> None:
    store = pytester.path / "store.sqlite3"
    Store(str(store)).close()
    holder = sqlite3.connect(str(store), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process is writing, and does not let go
    try:
        result = pytester.runpytest_subprocess(
            "-p", "evidence", f"--evidence-store={store}", "--evidence-store-timeout=0.2", "--evidence-out=e.json"
        )
    finally:
        holder.rollback()
        holder.close()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    doc = json.loads((pytester.path / "e.json").read_text())
    jsonschema.validate(doc, schema)
    assert {r["candidate_result"] for r in doc["results"]} == {"pass"} and len(doc["results"]) == 2
    (detection,) = [d for d in doc["detections"] if d["kind"] == "store_unavailable"]
    assert "is locked by another process" in detection["message"] and "--evidence-store" in detection["message"]
    assert doc["exit_status"] == 4
    result.stdout.fnmatch_lines(["*is locked by another process*the record was written without it"])


def test_the_candidates_state_is_read_from_one_status_without_touching_the_index(git_repo: GitRepo) -> None:
    root = str(git_repo.path)
    assert gitops.head_state(root) is None  # no commit yet
    head = git_repo.commit("B", {"a.py": "A = 1\n", "b.py": "B = 1\n"})
    assert gitops.head_state(root) == head
    (git_repo.path / "my record.json").write_text("{}")
    mine = [str(git_repo.path / "my record.json")]
    assert gitops.head_state(root, mine) == head
    assert gitops.head_state(root) == head + "+dirty"
    git_repo.git("mv", "a.py", "renamed.py")  # a rename's original path is a field of its own
    assert gitops.head_state(root, mine) == head + "+dirty"
    git_repo.git("mv", "renamed.py", "a.py")
    index = git_repo.path / ".git" / "index"
    before = index.read_bytes()
    (git_repo.path / "b.py").write_text("B = 2\n")  # a plain status would refresh the index here
    assert gitops.head_state(root, mine) == head + "+dirty"
    assert index.read_bytes() == before


def test_the_collector_paused_for_the_record_is_on_again_after_it(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("import gc\n\ndef test_x():\n    assert gc.isenabled()\n")
    result = pytester.runpytest_inprocess("-p", "evidence", "--evidence-out=e.json", "-p", "no:randomly")
    assert result.ret == 0
    assert json.loads((pytester.path / "e.json").read_text())["results"][0]["candidate_result"] == "pass"
    assert gc.isenabled()
