"""What each checkout module's import ran (``importdeps``): recorded from before the first
conftest to the end of collection, per module, and never half.

The runner settles questions about code run at import with this record (``runner.selection``):
a module missing from it must mean "not recorded", never "ran nothing".
"""

from __future__ import annotations

import pathlib
import sys

import pytest

from pytest_evidence import deps
from pytest_evidence.stream import read

PKG = (
    "def helper():\n    return inner()\n\n\ndef inner():\n    return 1\n\n\n"
    "def untouched():\n    return 2\n\n\nVALUE = helper()\n"
)
DATA = (
    "import json\n\n\ndef load():\n    with open('data.json') as fh:\n        return json.load(fh)\n\n\nDATA = load()\n"
)
TEST = (
    "import data\nimport pkg\n\n\ndef make():\n    return pkg.inner()\n\n\nX = make()\n\n\n"
    "def test_a():\n    assert pkg.VALUE == 1\n"
)


@pytest.fixture(autouse=True)
def _not_a_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """This suite may itself run in an xdist worker: the sessions it starts must not think so."""
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)


def _project(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\npythonpath = .\n")
    pytester.makepyfile(pkg=PKG, data=DATA, conftest="import pkg\n", test_a=TEST)
    (pytester.path / "data.json").write_text('{"a": 1}\n')


def _args(pytester: pytest.Pytester, stream: pathlib.Path, *extra: str) -> list[str]:
    deps_args = [f"--evidence-deps={pytester.path}", *extra]
    return ["-p", "evidence", "-p", "no:randomly", "--evidence-record-mode", f"--evidence-stream={stream}", *deps_args]


@pytest.mark.parametrize("engine", ["tracer", "coverage"])
def test_each_modules_import_is_recorded_apart_from_the_conftests_on(pytester: pytest.Pytester, engine: str) -> None:
    """``pkg`` is imported by the conftest, before any plugin is configured; ``test_a`` calls
    ``pkg.inner`` at import and imports ``data`` first, which opens a data file at import: what a
    module's import runs counts for each module being imported. Whatever engine records the tests,
    the imports are the plugin's own tracer's, and the tests keep their engine."""
    if engine == "coverage":
        pytest.importorskip("coverage")
    _project(pytester)
    stream = pytester.path / "s.jsonl"
    result = pytester.runpytest_subprocess(*_args(pytester, stream, f"--evidence-deps-engine={engine}"))
    assert result.ret == 0, result.stdout.str()
    imports = read(str(stream)).imports
    data, pkg = ["data.py:0", "data.py:4"], ["pkg.py:0", "pkg.py:1", "pkg.py:5"]
    assert imports == {
        "conftest.py": (["conftest.py:0", *pkg], []),  # pkg's import ran inside the conftest's
        "pkg.py": (pkg, []),  # its top-level code (line 0), helper and inner
        "data.py": (data, ["data.json"]),
        "test_a.py": ([*data, "pkg.py:5", "test_a.py:0", "test_a.py:5"], ["data.json"]),
    }
    test_keys = read(str(stream)).functions["test_a.py::test_a"]
    assert test_keys == (["test_a.py:13"] if engine == "coverage" else ["test_a.py:12"])  # a line, or a def


def test_what_no_name_shows_is_recorded_for_the_module_whose_import_ran_it(pytester: pytest.Pytester) -> None:
    """A module imported by a string counts for its importer; a ``.py`` file read as data is
    opened, through a loader's ``get_data`` too (the import system's own reads are not); a class
    body is its module's own code; pytest calling an ``ids`` function counts for the test file it
    collects; a thread started at import runs outside every import: collection's entry, ``""``."""
    pytester.makeini("[pytest]\npythonpath = .\n")
    pytester.makepyfile(
        impl="def scale(x):\n    return x * 2\n",
        lazy="from impl import scale\n\nVALUE = scale(3)\n",
        loader=(
            "import importlib\nimport inspect\nimport pkgutil\nimport threading\n\nimport impl\n\n\n"
            "class Table:\n    ROWS = 1\n\n\n"
            "LAZY = importlib.import_module('lazy')\nSOURCE = inspect.getsource(impl.scale)\n"
            "DATA = pkgutil.get_data('impl', 'data.txt')\n"
            "worker = threading.Thread(target=impl.scale, args=(1,))\nworker.start()\nworker.join()\n"
        ),
        test_loader=(
            "import pytest\n\nimport loader\nfrom impl import scale\n\n\n"
            "@pytest.mark.parametrize('x', [1], ids=scale)\ndef test_value(x):\n    assert loader.LAZY.VALUE == 6\n"
        ),
    )
    (pytester.path / "data.txt").write_text("data\n")
    stream = pytester.path / "s.jsonl"
    assert pytester.runpytest_subprocess(*_args(pytester, stream)).ret == 0
    imports = read(str(stream)).imports
    keys, files = imports["loader.py"]
    assert "lazy.py:0" in keys and "impl.py:1" in keys  # lazy's import and the scale(3) it ran
    assert "loader.py:9" not in keys  # class Table's body
    assert files == ["data.txt", "impl.py"]  # get_data and getsource; importing impl, lazy, loader read none
    assert imports["lazy.py"] == (["impl.py:1", "lazy.py:0"], [])
    assert imports[""][0] == ["impl.py:1"]  # scale, in the thread
    assert "impl.py:1" in imports["test_loader.py"][0]  # scale as the ids function


def test_the_same_function_in_two_files_is_keyed_by_each_file(pytester: pytest.Pytester) -> None:
    """Code objects compare equal across files: a vendored copy must not take the other's key."""
    pytester.makeini("[pytest]\npythonpath = .\n")
    same = "def scale(x):\n    return x * 2\n"
    pytester.makepyfile(
        legacy=same,
        impl=same,
        first="import legacy\n\nA = legacy.scale(1)\n",
        second="import impl\n\nB = impl.scale(1)\n",
        test_both="import first\nimport second\n\n\ndef test_both():\n    assert first.A == second.B\n",
    )
    stream = pytester.path / "s.jsonl"
    assert pytester.runpytest_subprocess(*_args(pytester, stream)).ret == 0
    imports = read(str(stream)).imports
    assert imports["first.py"][0] == ["first.py:0", "legacy.py:0", "legacy.py:1"]
    assert imports["second.py"][0] == ["impl.py:0", "impl.py:1", "second.py:0"]


def test_nothing_is_recorded_when_another_tracer_takes_over(pytester: pytest.Pytester) -> None:
    """A conftest setting its own tracer: half a record would say "ran nothing" of what it missed."""
    _project(pytester)
    pytester.makepyfile(conftest="import sys\n\nimport pkg\n\nsys.settrace(None)\n")
    stream = pytester.path / "s.jsonl"
    assert pytester.runpytest_subprocess(*_args(pytester, stream)).ret == 0
    content = read(str(stream))
    assert content.imports == {}
    assert "test_a.py::test_a" in content.results


def test_an_xdist_session_records_the_controllers_imports_only(pytester: pytest.Pytester) -> None:
    """The workers collect, and their reports carry each test's record but no import's; what the
    controller itself imported (the conftest, and ``pkg`` through it) is recorded whole."""
    _project(pytester)
    stream = pytester.path / "s.jsonl"
    result = pytester.runpytest_subprocess(*_args(pytester, stream, "-n", "2"))
    assert result.ret == 0, result.stdout.str()
    content = read(str(stream))
    pkg = ["pkg.py:0", "pkg.py:1", "pkg.py:5"]
    assert content.imports == {"conftest.py": (["conftest.py:0", *pkg], []), "pkg.py": (pkg, [])}
    assert content.functions["test_a.py::test_a"] == ["test_a.py:12"]


def test_sessions_in_one_process_leave_no_tracer_or_listener_behind(pytester: pytest.Pytester) -> None:
    """pytester's inline sessions share this process: a tracer left set would trace this suite,
    and a session stopped by a usage error before collection must stop its recorder too."""
    _project(pytester)
    for run in range(2):
        stream = pytester.path / ("s%d.jsonl" % run)
        result = pytester.runpytest(*_args(pytester, stream, "--evidence-deps-engine=tracer"))
        assert result.ret == 0, result.stdout.str()
        assert "test_a.py:5" in read(str(stream)).imports["test_a.py"][0], run
    bad = pytester.runpytest(*_args(pytester, pytester.path / "bad.jsonl", "--evidence-reruns=-1"))
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    if sys.gettrace() is None:  # under a debugger or coverage run of this suite, nothing was started
        assert deps._AUDITED == []
    assert sys.gettrace() is None or "ImportRecorder" not in repr(sys.gettrace())
