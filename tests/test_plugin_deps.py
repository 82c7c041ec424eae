"""Per-test dependency recording: what each test reached and opened, with each engine.

Selection is only as safe as this data: a test that calls a changed function must show it, and
one that does not must not (or the selection is merely the whole suite).
"""

from __future__ import annotations

import pathlib
import re
import sys
import types

import pytest

from pytest_evidence.deps import choose_engine, source_of
from pytest_evidence.stream import read

LIB = "def helper(x):\n    return x + 1\n\n\ndef unused():\n    return 0\n"
TESTS = """
from lib import helper

def test_calls_helper():
    assert helper(1) == 2

def test_reads_data():
    with open("data.txt") as fh:
        assert fh.read() == "hi\\n"
"""


def _recording(pytester: pytest.Pytester, stream: pathlib.Path, engine: str = "tracer") -> list[str]:
    """A record-mode session's arguments: the stream, and dependencies recorded by ``engine``."""
    deps = [f"--evidence-deps={pytester.path}", f"--evidence-deps-engine={engine}"]
    return ["-p", "evidence", "--evidence-record-mode", f"--evidence-stream={stream}", *deps]


@pytest.mark.parametrize("engine", ["tracer", "coverage"])
def test_each_engine_records_calls_and_opened_files(pytester: pytest.Pytester, engine: str) -> None:
    if engine == "coverage":
        pytest.importorskip("coverage")
    pytester.makeini("[pytest]\npythonpath = .\n")  # an ini, not -o: pytest 7 reads pythonpath too early for -o
    pytester.makepyfile(lib=LIB, test_deps=TESTS)
    (pytester.path / "data.txt").write_text("hi\n")
    stream = pytester.path / "s.jsonl"
    result = pytester.runpytest_subprocess(*_recording(pytester, stream, engine))
    assert result.ret == 0
    content = read(str(stream))
    calls = content.functions["test_deps.py::test_calls_helper"]
    lib_keys = {k for k in calls if k.startswith("lib.py:")}
    # the tracer records the def line of each function started; coverage.py the lines run
    assert lib_keys == ({"lib.py:1"} if engine == "tracer" else {"lib.py:2"})
    assert not any(k.startswith("lib.py:") for k in content.functions["test_deps.py::test_reads_data"])
    assert content.files["test_deps.py::test_reads_data"] == ["data.txt"]
    assert content.files["test_deps.py::test_calls_helper"] == []


def test_a_session_killed_mid_run_leaves_no_coverage_data_behind(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hang's timeout kills the process: coverage.py's data must not be a file it would leave."""
    pytest.importorskip("coverage")
    tmp = pytester.path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    pytester.makeini("[pytest]\npythonpath = .\n")
    pytester.makepyfile(
        lib=LIB, test_killed="import os, signal\n\ndef test_killed():\n    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    result = pytester.runpytest_subprocess(*_recording(pytester, pytester.path / "s.jsonl", "coverage"))
    assert result.ret == -9
    assert not list(tmp.iterdir())
    assert not list(pytester.path.glob(".coverage*"))


@pytest.mark.parametrize("requested", ["auto", "coverage"])
def test_a_coverage_older_than_5_is_not_used(monkeypatch: pytest.MonkeyPatch, requested: str) -> None:
    """coverage.py 4 has no per-test contexts, and its ``data_file=None`` means ``.coverage``."""
    old = types.ModuleType("coverage")
    old.__dict__.update(version_info=(4, 5, 4, "final", 0), __version__="4.5.4")
    monkeypatch.setitem(sys.modules, "coverage", old)
    monkeypatch.delattr(sys, "monitoring", raising=False)  # where it exists, auto never asks coverage.py
    if requested == "auto":
        assert choose_engine("auto") == "settrace"
    else:
        with pytest.raises(pytest.UsageError, match=re.escape("coverage.py 4.5.4 is older than 5.0")):
            choose_engine("coverage")


@pytest.mark.parametrize("when", ["before", "during"])
def test_a_test_under_another_tracer_gets_no_function_data(pytester: pytest.Pytester, when: str) -> None:
    """Never fight coverage.py or a debugger for ``sys.settrace``: the test is left unknown."""
    if choose_engine("tracer") == "monitoring":
        pytest.skip("sys.monitoring engines coexist with other tracers; this is the settrace rule")
    pytester.makeini("[pytest]\npythonpath = .\n")
    pytester.makepyfile(
        lib=LIB,
        test_deps="""
        import sys
        from lib import helper

        def test_traced_by_someone_else():
            assert helper(1) == 2
        """,
    )
    if when == "before":  # a tracer already installed when the phase starts
        pytester.makeconftest("""
            import sys
            import pytest

            @pytest.hookimpl(hookwrapper=True, tryfirst=True)
            def pytest_runtest_call(item):
                sys.settrace(lambda *a: None)
                yield
                sys.settrace(None)
            """)
    else:  # the test replaces the tracer itself, as a debugger would
        pytester.makepyfile(
            test_deps="""
            import sys
            from lib import helper

            def test_traced_by_someone_else():
                sys.settrace(lambda *a: None)
                assert helper(1) == 2
            """
        )
    stream = pytester.path / "s.jsonl"
    pytester.runpytest_subprocess(*_recording(pytester, stream))
    content = read(str(stream))
    assert "test_deps.py::test_traced_by_someone_else" in content.results
    assert "test_deps.py::test_traced_by_someone_else" not in content.functions  # unknown, so always selected


def test_three_sessions_in_one_process_each_record_their_own_dependencies(pytester: pytest.Pytester) -> None:
    """The recorder gives back what it took (the monitoring tool id, the audit hook's attention)."""
    import sys

    pytester.makeini("[pytest]\npythonpath = .\n")
    pytester.makepyfile(lib=LIB, test_deps=TESTS)
    (pytester.path / "data.txt").write_text("hi\n")
    for run in range(3):
        stream = pytester.path / ("s%d.jsonl" % run)
        result = pytester.runpytest(*_recording(pytester, stream))
        assert result.ret == 0, (run, result.stdout.str())
        content = read(str(stream))
        assert "lib.py:1" in content.functions["test_deps.py::test_calls_helper"], run
        assert content.files["test_deps.py::test_reads_data"] == ["data.txt"], run
    if hasattr(sys, "monitoring"):
        assert sys.monitoring.get_tool(3) is None and sys.monitoring.get_tool(4) is None


def test_a_module_read_from_its_bytecode_counts_as_its_source_opened(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A test importing a module as it runs opens the source in the session that compiles it, and
    the bytecode in the next one: both record the source, as the runner's later sessions on a
    checkout (or xdist workers) read what an earlier one wrote."""
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    pytester.makeini("[pytest]\npythonpath = .\n")
    pytester.makepyfile(lazy="VALUE = 1\n", test_lazy="def test_imports():\n    import lazy\n\n    assert lazy.VALUE\n")
    recorded = []
    for run in ("compiles", "reads"):
        stream = pytester.path / ("%s.jsonl" % run)
        assert pytester.runpytest_subprocess(*_recording(pytester, stream)).ret == 0
        recorded.append(read(str(stream)).files["test_lazy.py::test_imports"])
    assert list((pytester.path / "__pycache__").glob("lazy.*.pyc"))  # the second session had bytecode to read
    assert recorded == [["lazy.py"], ["lazy.py"]]


def test_the_source_of_a_bytecode_file() -> None:
    for cached in ("m.cpython-311.pyc", "m.cpython-311-pytest-8.3.5.pyc", "m.cpython-38.pyc.140234"):
        assert source_of("/r/pkg/__pycache__/" + cached) == "/r/pkg/m.py"
    assert source_of("/r/pkg/data.json") == "/r/pkg/data.json"
    assert source_of("/r/__pycache__.txt") == "/r/__pycache__.txt"


def test_the_same_function_in_two_files_is_keyed_by_each_file(pytester: pytest.Pytester) -> None:
    """Code objects compare equal across files: a vendored copy must not take the other's key,
    whichever ran first -- a change to the second would be reached by no test (a review's probe)."""
    pytester.makeini("[pytest]\npythonpath = .\n")
    same = "def scale(x):\n    return x * 2\n"
    pytester.makepyfile(
        legacy=same,
        impl=same,
        test_both=(
            "import impl\nimport legacy\n\n\ndef test_legacy():\n    assert legacy.scale(1) == 2\n\n\n"
            "def test_impl():\n    assert impl.scale(1) == 2\n"
        ),
    )
    stream = pytester.path / "s.jsonl"
    assert pytester.runpytest_subprocess("-p", "no:randomly", *_recording(pytester, stream)).ret == 0
    functions = read(str(stream)).functions
    assert [k for k in functions["test_both.py::test_legacy"] if not k.startswith("test_")] == ["legacy.py:1"]
    assert [k for k in functions["test_both.py::test_impl"] if not k.startswith("test_")] == ["impl.py:1"]
