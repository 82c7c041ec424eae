"""The test frameworks' objects replaced, as a runner test process sees it (``originals``).

Each session is a real record-mode pytest process (``runpytest_subprocess``: the snapshot must
be taken before the first conftest of a fresh interpreter); what it found is read back from the
stream it wrote, as the runner reads it.
"""

from __future__ import annotations

import pathlib
import sys

import pytest

from pytest_evidence.stream import StreamContent, read

RECORD_MODE = ("-p", "evidence", "--evidence-record-mode", "--evidence-stream=s.jsonl", "-p", "no:randomly")

#: Library code replacing ``assertEqual`` in a spelling no source scan reads, at import.
SILENCES = 'import unittest\ntype.__setattr__(unittest.TestCase, "assert" + "Equal", lambda self, *a, **k: None)\n'

TESTS = """
import asyncio, unittest
import lib

class TestHalf(unittest.TestCase):
    def test_half(self):
        self.assertEqual(1, 2)

def test_replaces_as_it_runs():
    exec("import asyncio\\nasyncio.Runner.run = lambda self, coro, **kw: None")

def test_after():
    pass

def test_patches_for_itself_alone(monkeypatch):
    monkeypatch.setattr(asyncio.runners.Runner, "close", lambda self: None)
"""


def _session(pytester: pytest.Pytester, *args: str) -> StreamContent:
    result = pytester.runpytest_subprocess(*RECORD_MODE, *args)
    assert result.ret in (0, 1), result.stdout.str() + result.stderr.str()
    return read(str(pytester.path / "s.jsonl"))


def test_what_code_under_test_replaced_is_found_whatever_the_spelling(pytester: pytest.Pytester) -> None:
    """At import (by the end of collection), and as a test runs (around that test); a patch
    undone with its test is none, and each name is said once."""
    pytester.makepyfile(lib=SILENCES, test_a=TESTS)
    content = _session(pytester)
    assert content.results["test_a.py::TestHalf::test_half"].outcome.value == "pass"  # fooled, as on C
    assert content.replaced == [
        (None, "unittest.case.TestCase.assertEqual"),
        ("test_a.py::test_replaces_as_it_runs", "asyncio.runners.Runner.run"),
    ]
    # where what is in their place was written: the runner tells C's files from B's by it
    assert content.replaced_from == {
        "unittest.case.TestCase.assertEqual": str(pytester.path / "lib.py"),
        "asyncio.runners.Runner.run": "<string>",
    }


def test_what_a_conftests_import_replaced_is_found(pytester: pytest.Pytester) -> None:
    """Most conftests import the package under test: its import is code under test too, so the
    snapshot is taken before pytest imports the first conftest (a review's cheat, imported so,
    was certified while it was taken after)."""
    pytester.makepyfile(lib=SILENCES, conftest="import lib\n", test_a="def test_a():\n    pass\n")
    assert _session(pytester).replaced == [(None, "unittest.case.TestCase.assertEqual")]


def test_an_honest_session_finds_nothing_replaced(pytester: pytest.Pytester) -> None:
    """pytest's own plugins change its classes as the session starts (``legacypath``), fixtures
    patch and undo, async and unittest tests run: none of it is a replacement."""
    pytester.makepyfile(
        test_b="""
        import asyncio, doctest, unittest

        class TestAsync(unittest.IsolatedAsyncioTestCase):
            async def test_sleep(self):
                await asyncio.sleep(0)
                self.assertEqual(1, 1)

        def test_tmp(tmp_path, monkeypatch, capsys):
            monkeypatch.setattr(unittest.TestCase, "maxDiff", None)
            print("x")
            assert capsys.readouterr().out == "x\\n"

        def test_doc():
            '''
            >>> 1 + 1
            2
            '''
            assert doctest.testmod(__import__("test_b")).failed == 0
        """
    )
    content = _session(pytester, "--doctest-modules")
    assert len(content.results) == 4 and all(o.outcome.value == "pass" for o in content.results.values())
    assert content.replaced == []


def test_what_an_xdist_worker_found_reaches_the_controllers_stream(pytester: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    pytester.makepyfile(lib=SILENCES, test_a=TESTS)
    content = _session(pytester, "-n", "2")
    names = {name for _, name in content.replaced}
    assert names == {"unittest.case.TestCase.assertEqual", "asyncio.runners.Runner.run"}


#: Replacements that keep the framework's objects where they were (a review's cheats).
IN_PLACE = {
    "code": "import unittest\nunittest.TestCase.assertEqual.__code__ = (lambda self, *a, **k: None).__code__\n",
    "defaults": "import unittest\nunittest.TestCase.assertEqual.__defaults__ = ('x',)\n",
    "builtins": "import builtins\nbuiltins.AssertionError = type('AssertionError', (Exception,), {})\n",
    "module": "import types, unittest.case\nunittest.case.sys = types.ModuleType('sys')\n",
    "bases": "import unittest as u\nclass _M:\n    pass\nu.TestSuite.__bases__ = (_M, *u.TestSuite.__bases__)\n",
}
FOUND_IN_PLACE = {
    "code": "unittest.case.TestCase.assertEqual",
    "defaults": "unittest.case.TestCase.assertEqual",
    "builtins": "builtins.AssertionError",
    "module": "unittest.case.sys",
    "bases": "unittest.suite.TestSuite.__bases__",
}


@pytest.mark.parametrize("how", list(IN_PLACE))
def test_what_is_changed_in_place_is_found(pytester: pytest.Pytester, how: str) -> None:
    pytester.makepyfile(lib=IN_PLACE[how], test_c="import lib\n\ndef test_c():\n    pass\n")
    assert _session(pytester).replaced == [(None, FOUND_IN_PLACE[how])]


#: A test that replaces as it runs, and the test after it: code swapped on the call path is found
#: once the first is over; what is replaced elsewhere, once the last is (a run's names then hold
#: what its tests replaced for good, and B's vouch for what its tests left).
AS_IT_RUNS = {
    "on-the-call-path": (
        "import _pytest.runner as r",
        "r.show_test_item.__code__ = (lambda item: None).__code__",
        ("test_c.py::test_swaps", "_pytest.runner.show_test_item"),
    ),
    "elsewhere": (
        "import doctest",
        "doctest.testmod = lambda *a, **k: None",
        ("test_c.py::test_after", "doctest.testmod"),
    ),
}


@pytest.mark.parametrize("where", list(AS_IT_RUNS))
def test_what_a_test_replaces_as_it_runs_is_found_after_it_or_after_the_last_test(
    pytester: pytest.Pytester, where: str
) -> None:
    imports, replaces, expected = AS_IT_RUNS[where]
    pytester.makepyfile(test_c="%s\n\ndef test_swaps():\n    %s\n\ndef test_after():\n    pass\n" % (imports, replaces))
    result = pytester.runpytest_subprocess(*RECORD_MODE)
    assert read(str(pytester.path / "s.jsonl")).replaced == [expected], result.stdout.str()


#: A function whose code pytest wrote, as what pytest 7.4 and pytest-asyncio make and add to a
#: ``TestCase`` a test module imports by name (their fixtures, closures in their own modules).
FRAMEWORK_MADE = (
    "import types, unittest, _pytest.runner as r\n"
    "unittest.TestCase._UnitTestCase__pytest_class_setup = types.FunctionType(r.show_test_item.__code__, {})\n"
)


@pytest.mark.parametrize(
    ("lib", "found"),
    [
        (FRAMEWORK_MADE, []),
        # pytest runs a ``TestCase``'s ``setup_method`` wherever it is there (a review's cheat)
        (
            "import unittest\nunittest.TestCase.setup_method = lambda self, m: None\n",
            ["unittest.case.TestCase.setup_method"],
        ),
        # what pytest reads of each report, made a property (a review's cheat)
        (
            "import _pytest.reports as r\n"
            "r.TestReport.outcome = property(lambda s: s.__dict__['_o'], lambda s, v: s.__dict__.update(_o=v))\n",
            ["_pytest.reports.TestReport.outcome"],
        ),
        # one that replaces an inherited one, whoever made it
        (
            "import unittest\nunittest.TestSuite.__init_subclass__ = classmethod(lambda c: None)\n",
            ["unittest.suite.TestSuite.__init_subclass__"],
        ),
        # added where a data attribute was deleted: the class holds as many keys as it did
        (
            "import unittest\ndel unittest.TestCase.maxDiff\nunittest.TestCase.setup_method = lambda self, m: None\n",
            ["unittest.case.TestCase.setup_method"],
        ),
    ],
    ids=["made-by-pytest", "read-where-there", "a-report-property", "over-an-inherited-one", "in-a-deleted-ones-place"],
)
def test_a_method_added_to_a_framework_class_is_found_unless_the_frameworks_made_it(
    pytester: pytest.Pytester, lib: str, found: list[str]
) -> None:
    """pytest 7.4 and pytest-asyncio add fixtures of their own to a ``TestCase`` a test module
    imports by name (a review saw them taken for replacements): with pytest 7.4 (CI's step) this
    module's import is the real thing; anything else added counts."""
    pytester.makepyfile(
        lib=lib,
        test_c=(
            "import lib\n"
            "from unittest import IsolatedAsyncioTestCase, TestCase\n\n"
            "class TestAsync(IsolatedAsyncioTestCase):\n"
            "    async def test_a(self):\n"
            "        self.assertEqual(1, 1)\n"
        ),
    )
    content = _session(pytester)
    assert content.replaced == [(None, name) for name in found]
    assert all(content.replaced_from[name] == str(pytester.path / "lib.py") for name in found)


def test_what_is_found_reaches_the_stream_whatever_the_reports_do_with_it(pytester: pytest.Pytester) -> None:
    """A review's cheat: a property on ``TestReport`` in the place of the attribute the findings
    rode on, dropping what was set, then ``assertEqual`` replaced. In a serial session the
    findings go straight to the recorder; the property is found too."""
    pytester.makepyfile(
        lib=(
            "import _pytest.reports as r\n"
            "r.TestReport.evid"
            "ence_replaced = property(lambda s: None, lambda s, v: None)\n" + SILENCES
        ),
        test_c="import lib\n\ndef test_c():\n    pass\n",
    )
    assert _session(pytester).replaced == [
        (None, "_pytest.reports.TestReport.evidence_replaced"),
        (None, "unittest.case.TestCase.assertEqual"),
    ]


def test_a_module_put_in_the_place_of_a_frameworks_is_found(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        lib="import sys, types\nsys.modules['unittest.case'] = types.ModuleType('unittest.case')\n",
        test_c="import lib\n\ndef test_c():\n    pass\n",
    )
    assert _session(pytester).replaced == [(None, "unittest.case")]


def test_a_framework_module_imported_past_the_finder_is_found_replaced_whole(pytester: pytest.Pytester) -> None:
    """Imported later, a watched module is taken once its code has run, by a finder first on
    ``sys.meta_path``; code that takes the finder off first imports it unseen: the module
    itself is then what is said to be replaced."""
    pytester.makepyfile(
        lib=(
            "import sys\n"
            "sys.meta_path[:] = [f for f in sys.meta_path if type(f).__module__ != 'pytest_evidence.originals']\n"
            "import unittest.mock\n"
            "unittest.mock.patch = None\n"
        ),
        test_c="import lib\n\ndef test_c():\n    pass\n",
    )
    replaced = _session(pytester).replaced
    assert {"unittest.mock", "asyncio"} <= {name for _, name in replaced}  # and what it imported, unseen too
    assert all(test_id is None for test_id, _ in replaced)


def test_a_session_outside_the_runner_does_not_look(pytester: pytest.Pytester, tmp_path: pathlib.Path) -> None:
    """Only the runner's test processes (record mode) take the snapshot: a user's session with
    the plugin pays nothing for it."""
    pytester.makepyfile(lib=SILENCES, test_a=TESTS)
    result = pytester.runpytest_subprocess("-p", "evidence", f"--evidence-out={tmp_path / 'e.json'}")
    assert result.ret == 0, result.stdout.str()
    assert "replaced" not in (tmp_path / "e.jsonl").read_text()


def test_sessions_in_one_process_each_look_and_leave_the_import_path_as_they_found_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pytester runs sessions in its own process: each takes its own snapshot (the plugin's
    modules may be imported afresh between them), and its finder leaves ``sys.meta_path``."""
    import asyncio
    import unittest

    monkeypatch.setattr(unittest.TestCase, "assertEqual", unittest.TestCase.assertEqual)  # put back after
    monkeypatch.setattr(asyncio.Runner, "run", asyncio.Runner.run)
    pytester.makepyfile(lib=SILENCES, test_a=TESTS)
    before = list(sys.meta_path)
    for run in range(2):
        result = pytester.runpytest(*RECORD_MODE)
        assert result.ret == 0, (run, result.stdout.str(), result.stderr.str())
        assert (None, "unittest.case.TestCase.assertEqual") in read(str(pytester.path / "s.jsonl")).replaced
        assert sys.meta_path == before
