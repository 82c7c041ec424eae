"""``--evidence-collect``: a session collects the listed test files only, whatever else it is told.

The runner's reproducer sessions pass the operator's pytest arguments unchanged, and those often
name the whole suite; the scope keeps pytest from importing any test module outside the list.
Modules that would fail to import prove it: collecting one would be a collection error.
"""

from __future__ import annotations

import pytest
from conftest import RunEvidence

#: A suite where importing anything but ``tests/test_a.py`` and ``tests/deep/test_c.py`` fails.
SUITE = {
    "tests/test_a.py": "def test_one():\n    pass\n\n\ndef test_two():\n    pass\n",
    "tests/test_broken.py": "raise RuntimeError('imported a module outside the scope')\n",
    "tests/deep/test_c.py": "def test_three():\n    pass\n",
    "tests/deep/test_d.py": "raise RuntimeError('imported a module outside the scope')\n",
    "tests/other/conftest.py": "raise RuntimeError('loaded a conftest outside the scope')\n",
    "tests/other/test_e.py": "def test_e():\n    pass\n",
}


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    for path, text in SUITE.items():
        pytester.path.joinpath(path).parent.mkdir(parents=True, exist_ok=True)
        pytester.path.joinpath(path).write_text(text)
    return pytester


def test_the_suite_named_on_the_command_line_is_collected_only_where_listed(
    suite: pytest.Pytester, run_evidence: RunEvidence
) -> None:
    (suite.path / "collect.txt").write_text("tests/test_a.py\ntests/deep/test_c.py\n")
    result, record = run_evidence("--evidence-collect=collect.txt", "tests", subprocess=True)
    result.assert_outcomes(passed=3)
    assert record["collected"] == 3
    assert sorted(r["test_id"] for r in record["results"]) == [
        "tests/deep/test_c.py::test_three",
        "tests/test_a.py::test_one",
        "tests/test_a.py::test_two",
    ]


def test_without_the_scope_the_same_command_collects_the_modules_outside_it(
    suite: pytest.Pytester, run_evidence: RunEvidence
) -> None:
    """The fixture's traps go off when nothing prunes them: the test above is not vacuous."""
    result, _ = run_evidence("tests", subprocess=True)
    assert result.ret != 0
    assert "outside the scope" in result.stdout.str()  # pytest 7 stops at the conftest, 8 goes on


def test_a_package_on_the_way_keeps_its_setup_and_its_package_fixtures(
    pytester: pytest.Pytester, run_evidence: RunEvidence
) -> None:
    """pytest 7 builds a Package node only when its __init__.py is not ignored: without it, the
    package's setup_module never ran and an honest reproducer failed on both sides."""
    pytester.path.joinpath("tests").mkdir()
    pytester.path.joinpath("tests/__init__.py").write_text(
        "import os\n\n\ndef setup_module(module):\n    os.environ['EVIDENCE_PACKAGE_SET_UP'] = '1'\n"
    )
    pytester.path.joinpath("tests/test_a.py").write_text(
        "import os\n\n\ndef test_package_set_up():\n    assert os.environ.get('EVIDENCE_PACKAGE_SET_UP') == '1'\n"
    )
    (pytester.path / "collect.txt").write_text("tests/test_a.py\n")
    result, record = run_evidence("--evidence-collect=collect.txt", "tests", subprocess=True)
    result.assert_outcomes(passed=1)
    assert [r["candidate_result"] for r in record["results"]] == ["pass"]


def test_an_empty_list_collects_nothing_and_says_so(suite: pytest.Pytester, run_evidence: RunEvidence) -> None:
    (suite.path / "collect.txt").write_text("")
    result, record = run_evidence("--evidence-collect=collect.txt", "tests")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    assert record["collected"] == 0 and record["results"] == []
    assert [d["kind"] for d in record["detections"]] == ["empty_collection"]


def test_an_unreadable_list_is_a_usage_error(suite: pytest.Pytester) -> None:
    result = suite.runpytest_subprocess("-p", "evidence", "--evidence-collect=missing.txt", "tests")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--evidence-collect*missing.txt*No such file or directory*"])
    assert "Traceback" not in result.stderr.str()
