"""What the runner takes for a test module is what pytest takes for one: ``python_files`` as the
project configures it, and any file named on pytest's command line, whatever its name.

Found on real fixes (humanfriendly's ``humanfriendly/tests.py``, set by ``python_files``; jsonpatch's
``tests.py``, named by the test command): with only pytest's default patterns the runner took
these for source files, so B ran its own old test module (the fix's reproducer passed on B:
INCONCLUSIVE) or T3 found no file to collect (no reproducer: INCONCLUSIVE).
"""

from __future__ import annotations

import pathlib
from collections.abc import Callable
from typing import Any

import pytest
from conftest import Repo, certify, validate

from pytest_evidence import overlay
from runner import config_policy

BUGGY = {"calc/__init__.py": "", "calc/ops.py": "def half(n):\n    return n // 2 + 1\n"}
FIXED = {"calc/ops.py": "def half(n):\n    return n // 2\n"}
TESTS_B = "from calc.ops import half\n\n\ndef test_odd():\n    assert half(3) >= 1\n"
TESTS_C = TESTS_B + "\n\ndef test_even():\n    assert half(4) == 2\n"


def test_named_files_are_the_python_files_the_arguments_name() -> None:
    args = ["-p", "no:randomly", "--ignore=x.py", "--ignore", "y.py", "./tests.py", "pkg/checks.py::Case::test_a", "-q"]
    assert config_policy.named_files([*args, "pkg"]) == ("tests.py", "pkg/checks.py")
    assert config_policy.named_files([]) == ()


def _read(files: dict[str, bytes]) -> Callable[[str], bytes | None]:
    return lambda path: files.get(path)


def test_test_modules_are_configured_patterns_and_files_collected_by_path() -> None:
    files = {"setup.cfg": b"[tool:pytest]\npython_files = calc/tests.py check_*.py\ntestpaths = checks.py\n"}
    assert config_policy.test_modules(_read(files), ["tests.py"]) == (
        "calc/tests.py",
        "check_*.py",
        "/checks.py",
        "/tests.py",
    )
    assert config_policy.test_modules(_read({}), []) == config_policy.DEFAULT_PYTHON_FILES


@pytest.mark.parametrize(
    ("path", "named"),
    [
        ("tests.py", True),  # /tests.py: the root's file, named on the command line
        ("calc/tests.py", False),  # not that one
        ("src/humanfriendly/tests.py", True),  # humanfriendly/tests.py ends the path, as in pytest
        ("humanfriendly/tests.py", True),
        ("other/tests.py", False),
        ("pkg/test_x.py", True),
    ],
)
def test_patterns_name_paths_as_pytest_does(path: str, named: bool) -> None:
    assert overlay.named_by(path, ["/tests.py", "humanfriendly/tests.py", "test_*.py"]) is named


@pytest.mark.parametrize(
    ("module", "config", "args"),
    [
        ("calc/tests.py", {"setup.cfg": "[tool:pytest]\npython_files = calc/tests.py\n"}, ()),
        ("tests.py", {}, ("--pytest-arg", "tests.py")),
    ],
    ids=["configured", "named-on-the-command-line"],
)
def test_a_fix_whose_tests_live_in_a_module_pytest_is_told_of_is_certified(
    repo: Repo,
    tmp_path: pathlib.Path,
    schema: dict[str, Any],
    module: str,
    config: dict[str, str],
    args: tuple[str, ...],
) -> None:
    base = repo.commit({**BUGGY, **config, module: TESTS_B})
    fix = repo.commit({**FIXED, module: TESTS_C})
    reproducer = "%s::test_even" % module
    how = ("--baseline", base, "--candidate", fix, "--reproducer", reproducer, *args)
    code, doc = certify(repo, tmp_path / "e.json", *how)
    assert doc is not None, code
    validate(doc, schema)
    assert doc["verdict"]["verdict"] == "CERTIFIED", doc["verdict"]
    (res,) = [r for r in doc["results"] if r["test_id"] == reproducer]
    assert (res["baseline_result"], res["candidate_result"], res["bug_discriminating"]) == ("fail", "pass", True)


def test_a_fix_whose_tests_pytest_is_not_told_of_says_where_they_are(repo: Repo, tmp_path: pathlib.Path) -> None:
    """The candidate's test is in ``tests.py``, which pytest's default ``python_files`` does not
    collect: "the candidate added or changed no test" was false (an independent check,
    nameparser), and said nothing of the way out."""
    base = repo.commit({**BUGGY, "tests.py": TESTS_B})
    fix = repo.commit({**FIXED, "tests.py": TESTS_C})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", fix)
    assert code == 3 and doc is not None and doc["verdict"]["verdict"] == "INCONCLUSIVE", doc and doc["verdict"]
    (t3,) = [t for t in doc["tiers"] if t["tier"] == "T3"]
    assert t3["note"].startswith("no reproducer: none designated, and the candidate's tests are in tests.py, ")
    assert "name it as a pytest argument (-- tests.py)" in t3["note"]


def test_a_candidate_that_changes_nothing_says_so(repo: Repo, tmp_path: pathlib.Path) -> None:
    """``--candidate`` naming B (an empty patch) said "the candidate added or changed no test (name
    one with --reproducer)": a way out that leads nowhere (an independent check)."""
    base = repo.commit({**BUGGY, "tests/test_b.py": TESTS_B})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", base)
    assert code == 3 and doc is not None and doc["verdict"]["verdict"] == "INCONCLUSIVE", doc and doc["verdict"]
    (t3,) = [t for t in doc["tiers"] if t["tier"] == "T3"]
    assert (
        t3["note"]
        == "no reproducer: the candidate changes nothing -- its tree is the baseline's, so there is no fix to show"
    )


def test_a_fix_whose_new_tests_do_not_collect_on_c_says_why(repo: Repo, tmp_path: pathlib.Path) -> None:
    """The new test module imports a package the target environment lacks: "the candidate added
    or changed no test" was false beside it (a review's), and said nothing of the way out."""
    base = repo.commit({**BUGGY, "tests/test_b.py": TESTS_B})
    fix = repo.commit({**FIXED, "tests/test_new.py": "import not_installed_anywhere\n\n\n" + TESTS_C})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", fix)
    assert code == 3 and doc is not None and doc["verdict"]["verdict"] == "INCONCLUSIVE", doc and doc["verdict"]
    (t3,) = [t for t in doc["tiers"] if t["tier"] == "T3"]
    assert t3["note"].startswith(
        "no reproducer: none designated, and the candidate's tests in tests/test_new.py do "
    ), t3
    assert "No module named 'not_installed_anywhere'" in t3["note"] and "--reproducer NODEID" in t3["note"]


#: The fix breaks ``test_guard`` (half(3) is 1 now), and the candidate skips it.
GUARD = "def test_guard():\n    assert half(3) == 2\n"
GUARDED = TESTS_B + "\n\n" + GUARD
SKIPPED = "import pytest\n" + TESTS_C + "\n\n@pytest.mark.skip(reason='slow')\n" + GUARD


@pytest.mark.parametrize(
    "config",
    [
        {},
        {"setup.cfg": "[tool:pytest]\npython_files = check_*.py\n"},
        {"setup.cfg": "[tool:pytest]\ntestpaths = tests\n", "tests/test_x.py": "def test_x():\n    pass\n"},
    ],
    ids=["no-config", "own-python_files", "testpaths"],
)
def test_a_module_named_on_the_command_line_is_protected_whatever_the_configuration(
    repo: Repo, tmp_path: pathlib.Path, schema: dict[str, Any], config: dict[str, str]
) -> None:
    """pytest collects a file it is given by name whatever ``python_files`` and ``testpaths`` say,
    so a skip marker put in it is tampering there too."""
    base = repo.commit({**BUGGY, **config, "extra.py": GUARDED})
    cand = repo.commit({**FIXED, "extra.py": SKIPPED})
    how = ("--baseline", base, "--candidate", cand, "--reproducer", "extra.py::test_even", "--pytest-arg", "extra.py")
    code, doc = certify(repo, tmp_path / "e.json", *how)
    assert doc is not None, code
    validate(doc, schema)
    assert doc["verdict"]["verdict"] == "REJECTED", doc["verdict"]
    assert ("tamper", "skip_marker") in [(d["kind"], d["detail"]) for d in doc["detections"]]
