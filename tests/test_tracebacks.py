"""A failure's traceback costs the runner's processes a line a frame, not pytest's walk of each module."""

from __future__ import annotations

import pytest
from conftest import RunEvidence, by_name

from pytest_evidence.reports import _from_the_test
from pytest_evidence.stream import read

#: A deep failure (a recursion), in a function and in a unittest case (whose failure pytest hands
#: over late), one that is shallow, and one a fixture raises from deep down.
TESTS = """
import unittest

import pytest

def recurse(n):
    return recurse(n + 1)

def down(n):
    if n == 0:
        raise ValueError("bottom")
    down(n - 1)

@pytest.fixture
def deep_setup():
    down(110)

def test_deep():
    recurse(0)

def test_shallow():
    assert 1 == 2

def test_deep_setup(deep_setup):
    pass

class Case(unittest.TestCase):
    def test_deep_case(self):
        recurse(0)
"""

#: Notes the style each failure was formatted in, by test (run with no reruns: one attempt each).
STYLES = """
import pathlib
import pytest

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        with pathlib.Path(__file__).with_name("styles.txt").open("a") as fh:
            fh.write("%s %s\\n" % (item.name, type(report.longrepr.reprtraceback).__name__))
"""


def _styles(pytester: pytest.Pytester) -> dict[str, str]:
    lines = (pytester.path / "styles.txt").read_text().splitlines()
    return dict(line.split() for line in lines)


def test_the_runners_processes_format_every_failure_natively(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_tb=TESTS)
    pytester.makeconftest(STYLES)
    stream = pytester.path / "s.jsonl"
    result = pytester.runpytest_subprocess(
        "-p", "evidence", "--evidence-record-mode", f"--evidence-stream={stream}", "--evidence-reruns=0"
    )
    assert result.ret == 1, result.stdout.str()
    assert _styles(pytester) == {
        "test_deep": "ReprTracebackNative",
        "test_shallow": "ReprTracebackNative",
        "test_deep_setup": "ReprTracebackNative",
        "test_deep_case": "ReprTracebackNative",
    }
    results = read(str(stream)).results
    deep = results["test_tb.py::test_deep"].failure
    assert deep is not None and deep.message.startswith("RecursionError")
    assert "Previous line repeated" in deep.excerpt  # Python's formatter folds the repeated frames
    setup = results["test_tb.py::test_deep_setup"].failure
    assert setup is not None and "ValueError: bottom" in setup.excerpt
    shallow = results["test_tb.py::test_shallow"].failure
    # the message is pytest's crash line in every style; the excerpt ends with Python's own lines
    assert shallow is not None and shallow.message == "assert 1 == 2"
    assert shallow.excerpt.endswith("AssertionError: assert 1 == 2")
    # from the test's own frame: pytest 8+ formats from the top of its call, those frames dropped
    assert shallow.excerpt.startswith('Traceback (most recent call last):\n  File "')
    assert 'test_tb.py", line' in shallow.excerpt.splitlines()[1]
    assert "_pytest" not in shallow.excerpt and "pluggy" not in shallow.excerpt
    assert pytester.parseconfig().option.tbstyle == "auto"


def test_a_users_session_keeps_pytests_style_however_deep(pytester: pytest.Pytester, run_evidence: RunEvidence) -> None:
    pytester.makepyfile(test_tb=TESTS)
    pytester.makeconftest(STYLES)
    result, doc = run_evidence("--evidence-reruns=0", subprocess=True)
    assert set(_styles(pytester).values()) == {"ReprTraceback"}
    assert by_name(doc)["test_deep"]["failure"]["message"].startswith("RecursionError")
    result.stdout.fnmatch_lines(["*def recurse(n):*"])  # pytest's long style, with the source


#: pytest's "incremental" recipe: a conftest's own report maker, answering nothing, notes a failed step.
INCREMENTAL = """
import pytest

def pytest_runtest_makereport(item, call):
    if "incremental" in item.keywords and call.excinfo is not None:
        item.parent._previousfailed = item

def pytest_runtest_setup(item):
    previous = getattr(item.parent, "_previousfailed", None)
    if "incremental" in item.keywords and previous is not None:
        pytest.xfail("previous test failed (%s)" % previous.name)
"""
STEPS = """
import pytest

def recurse(n):
    return recurse(n + 1)

@pytest.mark.incremental
class TestSteps:
    def test_one(self):
        recurse(0)

    def test_two(self):
        pass
"""


def test_a_conftests_own_report_maker_still_sees_a_deep_failure(pytester: pytest.Pytester) -> None:
    """The native style is switched on, not answered with: the conftest's implementation runs."""
    pytester.makeconftest(INCREMENTAL)
    pytester.makeini("[pytest]\nmarkers = incremental\n")
    pytester.makepyfile(test_steps=STEPS)
    stream = pytester.path / "s.jsonl"
    result = pytester.runpytest_subprocess(
        "-p",
        "no:randomly",
        "-p",
        "evidence",
        "--evidence-record-mode",
        f"--evidence-stream={stream}",
        "--evidence-reruns=0",
    )  # no reruns: the recipe would xfail the failed step's own rerun
    result.assert_outcomes(failed=1, xfailed=1)
    one = read(str(stream)).results["test_steps.py::TestSteps::test_one"].failure
    assert one is not None and "Previous line repeated" in one.excerpt  # formatted natively all the same


CHAINED = """Traceback (most recent call last):
  File "/v/site-packages/_pytest/runner.py", line 341, in from_call
    result = func()
             ^^^^^^
  File "/v/site-packages/pluggy/_hooks.py", line 512, in __call__
    return self._hookexec(self.name, self._hookimpls.copy(), kwargs, firstresult)
  File "/r/test_a.py", line 3, in test_x
    open("missing")
FileNotFoundError: [Errno 2] No such file or directory: 'missing'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/v/site-packages/_pytest/python.py", line 159, in pytest_pyfunc_call
    result = testfunction(**testargs)
  File "/r/test_a.py", line 5, in test_x
    raise ValueError("no file")
  File "/v/site-packages/_pytest/outcomes.py", line 9, in fail
    raise Failed
ValueError: no file"""

PYTESTS_OWN = """Traceback (most recent call last):
  File "/v/site-packages/_pytest/fixtures.py", line 1, in getfixturevalue
    raise LookupError
LookupError"""


def test_an_excerpt_starts_at_the_tests_frame_in_each_traceback_of_a_chain() -> None:
    trimmed = _from_the_test(CHAINED)
    assert "runner.py" not in trimmed and "pluggy" not in trimmed and "python.py" not in trimmed
    assert trimmed.count('File "/r/test_a.py"') == 2
    assert 'outcomes.py", line 9, in fail' in trimmed  # after the test's frame: kept
    assert "During handling of the above exception" in trimmed
    assert trimmed.endswith("ValueError: no file")
    assert _from_the_test(PYTESTS_OWN) == PYTESTS_OWN  # no frame of the test's: kept whole
    assert _from_the_test("E   assert 1 == 2\nfoo") == "E   assert 1 == 2\nfoo"  # pytest's style untouched
