"""``--baseline=REV``: results typed against B, with C's test files laid over B.

A test is bug evidence only when it fails on B and passes on C; these tests build real git
repositories with a buggy B and check the typing, the cache and the bad-input errors.
"""

from __future__ import annotations

import json

import pytest
from conftest import BUGGY, EXISTING_TESTS, NEW_TEST, GitRepo, Record, RunEvidence, by_name, fix

from pytest_evidence.model import Failure, FailureKind, Outcome
from pytest_evidence.replay import observation_for
from pytest_evidence.stream import StreamContent


def test_new_failing_on_b_test_is_bug_discriminating(shop_repo: tuple[GitRepo, str], run_evidence: RunEvidence) -> None:
    repo, base = shop_repo
    fix(repo)
    result, doc = run_evidence(f"--baseline={base}")
    assert result.ret == 0
    res = by_name(doc)
    new = res["test_ten_items_get_discount"]
    assert (new["role"], new["baseline_result"], new["candidate_result"], new["bug_discriminating"]) == (
        "BUG_REPRODUCTION",
        "fail",
        "pass",
        True,
    )
    assert new["candidate_commit"].endswith("+dirty")
    for name in ("test_small_order", "test_large_order"):
        assert (res[name]["role"], res[name]["baseline_result"], res[name]["candidate_result"]) == (
            "REGRESSION",
            "pass",
            "pass",
        )
        assert res[name]["bug_discriminating"] is False
    ann = doc["annotations"]["tests/test_boundary.py::test_ten_items_get_discount"]
    assert ann["bc_class"] == "bug-discriminating" and ann["origin"] == "added"
    assert ann["baseline_failure"]["kind"] == "assertion"
    # located in the repository, not in B's temporary worktree (gone once the run ends)
    assert ann["baseline_failure"]["path"] == "tests/test_boundary.py"
    assert "evidence-baseline-" not in json.dumps(doc)
    assert doc["baseline_commit"] == base
    assert doc["summary"]["evidence_typing_coverage"] == 1.0
    assert doc["baseline_run"]["overlay"] == ["tests/test_boundary.py"]
    result.stdout.fnmatch_lines(
        [
            "B/C classes: bug-discriminating 1, regression-only 2",
            "  bug-discriminating: tests/test_boundary.py::test_ten_items_get_discount",
            "  regression-only: tests/test_shop.py::test_large_order, tests/test_shop.py::test_small_order",
            "*bug-discriminating: 1 of 3 passing result(s)*",
        ]
    )


def test_second_run_against_the_same_b_does_not_run_b(
    shop_repo: tuple[GitRepo, str], run_evidence: RunEvidence
) -> None:
    repo, base = shop_repo
    fix(repo)
    # Count executions on B: the test appends to a file outside both trees.
    counter = repo.path.parent / f"{repo.path.name}-count.txt"
    count_test = f"def test_count():\n    with open({str(counter)!r}, 'a') as fh:\n        fh.write('x')\n"
    repo.write({"tests/test_count.py": count_test})
    _, first = run_evidence(f"--baseline={base}")
    assert counter.read_text() == "xx"  # once on B, once on C
    assert first["baseline_run"]["executed"] == 4 and first["baseline_run"]["cached"] == 0
    _, second = run_evidence(f"--baseline={base}")
    assert counter.read_text() == "xxx"  # C only
    assert second["baseline_run"]["executed"] == 0 and second["baseline_run"]["cached"] == 4
    assert by_name(second)["test_ten_items_get_discount"]["bug_discriminating"] is True


def test_changing_a_test_file_invalidates_the_cache(shop_repo: tuple[GitRepo, str], run_evidence: RunEvidence) -> None:
    repo, base = shop_repo
    fix(repo)
    run_evidence(f"--baseline={base}")
    repo.write({"tests/test_boundary.py": NEW_TEST + "\n\ndef test_more():\n    assert True\n"})
    _, doc = run_evidence(f"--baseline={base}")
    assert doc["baseline_run"]["executed"] == 4


def test_test_module_that_cannot_import_on_b_gives_error_not_abort(
    git_repo: GitRepo, run_evidence: RunEvidence
) -> None:
    base = git_repo.commit(
        "B",
        {
            "lib.py": "def old():\n    return 1\n",
            "test_old.py": "from lib import old\n\ndef test_old():\n    assert old() == 1\n",
        },
    )
    git_repo.write(
        {
            "lib.py": "def old():\n    return 1\n\ndef new():\n    return 2\n",
            "test_new.py": "from lib import new\n\ndef test_new():\n    assert new() == 2\n",
        }
    )
    _, doc = run_evidence(f"--baseline={base}")
    res = by_name(doc)
    assert res["test_old"]["baseline_result"] == "pass"
    assert res["test_new"]["baseline_result"] == "error" and res["test_new"]["bug_discriminating"] is True
    failure = doc["annotations"]["test_new.py::test_new"]["baseline_failure"]
    assert failure["kind"] == "collection_error" and "new" in failure["message"]


def test_reproducer_option_designates_an_existing_test(
    shop_repo: tuple[GitRepo, str], run_evidence: RunEvidence
) -> None:
    repo, base = shop_repo
    fix(repo)
    _, doc = run_evidence(f"--baseline={base}", "--reproducer=tests/test_shop.py::test_small_order")
    small = by_name(doc)["test_small_order"]
    assert small["role"] == "BUG_REPRODUCTION" and small["bug_discriminating"] is False
    kinds = {(d["kind"], d["test_id"]) for d in doc["detections"]}
    assert ("reproducer_not_failing_on_baseline", "tests/test_shop.py::test_small_order") in kinds


def test_changed_existing_test_that_passes_on_b_guards_behaviour(
    shop_repo: tuple[GitRepo, str], run_evidence: RunEvidence
) -> None:
    repo, base = shop_repo
    repo.write(
        {"tests/test_shop.py": (repo.path / "tests/test_shop.py").read_text().replace("== 0.0", "== 0.0 or True")}
    )
    _, doc = run_evidence(f"--baseline={base}")
    small = by_name(doc)["test_small_order"]
    assert small["role"] == "REGRESSION" and small["baseline_result"] == "pass"
    assert doc["annotations"]["tests/test_shop.py::test_small_order"]["origin"] == "changed"
    assert doc["summary"]["typing_failures"] == 0
    assert not [d for d in doc["detections"] if d["kind"] == "reproducer_not_failing_on_baseline"]


STRONGER = EXISTING_TESTS.replace("(50) == 0.10", "(50) == 0.10\n    assert bulk_discount(10) == 0.10")


def test_changed_existing_test_that_fails_on_b_and_passes_on_c_is_the_reproducer(
    shop_repo: tuple[GitRepo, str], run_evidence: RunEvidence
) -> None:
    """SWE-bench's FAIL_TO_PASS: the fix strengthens an existing test, and that test proves it."""
    repo, base = shop_repo
    repo.write({"shop.py": BUGGY.replace("qty > 10", "qty >= 10"), "tests/test_shop.py": STRONGER})
    _, doc = run_evidence(f"--baseline={base}")
    large = by_name(doc)["test_large_order"]
    assert large["role"] == "BUG_REPRODUCTION" and large["bug_discriminating"] is True
    assert doc["annotations"]["tests/test_shop.py::test_large_order"]["origin"] == "changed"
    assert doc["summary"]["typing_failures"] == 0


def test_designation_is_exclusive(shop_repo: tuple[GitRepo, str], run_evidence: RunEvidence) -> None:
    """With --reproducer, a changed test failing on B is not a reproducer unless named."""
    repo, base = shop_repo
    repo.write(
        {
            "shop.py": BUGGY.replace("qty > 10", "qty >= 10"),
            "tests/test_shop.py": STRONGER,
            "tests/test_boundary.py": NEW_TEST,
        }
    )
    _, doc = run_evidence(f"--baseline={base}", "--reproducer=tests/test_boundary.py::test_ten_items_get_discount")
    assert by_name(doc)["test_ten_items_get_discount"]["role"] == "BUG_REPRODUCTION"
    assert by_name(doc)["test_large_order"]["role"] is None
    assert doc["summary"]["typing_failures"] == 1


def test_no_fix_is_classified(shop_repo: tuple[GitRepo, str], run_evidence: RunEvidence) -> None:
    repo, base = shop_repo
    repo.write({"tests/test_boundary.py": NEW_TEST})
    result, doc = run_evidence(f"--baseline={base}")
    assert result.ret == 1
    assert doc["annotations"]["tests/test_boundary.py::test_ten_items_get_discount"]["bc_class"] == "no-fix"
    assert doc["summary"]["bug_discriminating"] == 0


def test_working_tree_is_untouched(shop_repo: tuple[GitRepo, str], run_evidence: RunEvidence) -> None:
    repo, base = shop_repo
    fix(repo)
    before = repo.git("status", "--porcelain")
    run_evidence(f"--baseline={base}")
    after = [line for line in repo.git("status", "--porcelain").splitlines() if "evidence.json" not in line]
    assert after == before.splitlines()  # the store lives in the git directory
    assert repo.git("worktree", "list").count("\n") == 0  # only the main worktree remains


@pytest.mark.parametrize(
    ("setup", "args", "message"),
    [
        ("repo", ["--baseline=no-such-rev"], "*unknown revision 'no-such-rev'*[[]unknown-revision]"),
        ("plain", ["--baseline=HEAD"], "*is not inside a git repository*[[]not-a-git-repo]"),
        (
            "repo",
            ["--reproducer=tests/test_shop.py::test_nope"],
            "*--reproducer names no collected test: tests/test_shop.py::test_nope*",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_4(
    pytester: pytest.Pytester, shop_repo: tuple[GitRepo, str], setup: str, args: list[str], message: str
) -> None:
    repo, _ = shop_repo
    if setup == "plain":
        import shutil

        shutil.rmtree(repo.path / ".git")
    result = pytester.runpytest_subprocess("-p", "evidence", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert "Traceback" not in result.stderr.str()


def test_overlay_conflict_is_a_clear_error(git_repo: GitRepo, pytester: pytest.Pytester) -> None:
    base = git_repo.commit("B", {"tests/data/test_x.py": "def test_x():\n    pass\n"})
    git_repo.git("rm", "-q", "-r", "tests/data")
    git_repo.write({"tests/data": "now a file\n", "tests/test_y.py": "def test_y():\n    pass\n"})
    result = pytester.runpytest_subprocess("-p", "evidence", f"--baseline={base}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*cannot lay test file tests/data over baseline*it is a directory there*"])


def test_loaded_by_module_path_where_the_entry_point_also_exists(
    shop_repo: tuple[GitRepo, str], pytester: pytest.Pytester, schema: Record
) -> None:
    """How the runner injects the plugin into an environment that may have it installed."""
    import json

    import jsonschema

    repo, base = shop_repo
    fix(repo)
    out = repo.path / "e.json"
    result = pytester.runpytest_subprocess(
        "-p", "no:evidence", "-p", "pytest_evidence.plugin", f"--baseline={base}", f"--evidence-out={out}"
    )
    assert result.ret == 0, result.stderr.str()
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, schema)
    assert doc["summary"]["bug_discriminating"] == 1


@pytest.mark.parametrize(
    ("erroring", "errors"),
    [
        ("", ["t/test_m.py::TestA::test_x", "t/test_m.py::test_y", "u/test_n.py::test_z", "t/test_mm.py::test_w"]),
        ("t", ["t/test_m.py::TestA::test_x", "t/test_m.py::test_y", "t/test_mm.py::test_w"]),
        ("t/test_m.py", ["t/test_m.py::TestA::test_x", "t/test_m.py::test_y"]),
        ("t/test_m.py::TestA", ["t/test_m.py::TestA::test_x"]),
        ("t/test_m.py::TestSuite", []),
    ],
    ids=["session", "directory", "module", "its-class", "another-class"],
)
def test_a_collection_error_stands_for_the_tests_its_collector_holds(erroring: str, errors: list[str]) -> None:
    """A test with no result gets its collector's error -- a module's holds all its tests, a
    class's only its own: markdown's ``TestSuite``, imported from unittest, erroring under a
    strict warning filter, is no error of the module's other tests."""
    content = StreamContent(collect_errors={erroring: Failure(FailureKind.COLLECTION_ERROR, "boom")})
    ids = ["t/test_m.py::TestA::test_x", "t/test_m.py::test_y", "u/test_n.py::test_z", "t/test_mm.py::test_w"]
    found = {t: observation_for(t, content) for t in ids}
    assert [t for t, o in found.items() if o is not None] == errors
    assert {(o.outcome, o.failure and o.failure.message) for o in found.values() if o is not None} <= {
        (Outcome.ERROR, "boom")
    }
