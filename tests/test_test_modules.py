"""What the runner takes for a test module is what pytest takes for one: ``python_files`` as the
project configures it, and any file named on pytest's command line, whatever its name.

Found on real fixes (humanfriendly's ``humanfriendly/tests.py``, set by ``python_files``; jsonpatch's
``tests.py``, named by the test command): with only pytest's default patterns the runner took
these for source files, so B ran its own old test module (the fix's reproducer passed on B:
INCONCLUSIVE) or T3 found no file to collect (no reproducer: INCONCLUSIVE).
"""

from __future__ import annotations

import pathlib
from typing import Any

import pytest
from conftest import Repo, certify, validate

from runner import config_policy

BUGGY = {"calc/__init__.py": "", "calc/ops.py": "def half(n):\n    return n // 2 + 1\n"}
FIXED = {"calc/ops.py": "def half(n):\n    return n // 2\n"}
TESTS_B = "from calc.ops import half\n\n\ndef test_odd():\n    assert half(3) >= 1\n"
TESTS_C = TESTS_B + "\n\ndef test_even():\n    assert half(4) == 2\n"


def test_named_files_are_the_python_files_the_arguments_name() -> None:
    args = ["-p", "no:randomly", "--ignore=x.py", "tests.py", "pkg/checks.py::Case::test_a", "-q", "pkg"]
    assert config_policy.named_files(args) == ("tests.py", "pkg/checks.py")


def test_test_modules_are_configured_patterns_and_named_files() -> None:
    files = {"setup.cfg": b"[tool:pytest]\npython_files = calc/tests.py check_*.py\n"}
    assert config_policy.test_modules(files.get, ["tests.py"]) == ("calc/tests.py", "check_*.py", "tests.py")
    assert config_policy.test_modules({}.get, []) == config_policy.DEFAULT_PYTHON_FILES


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
