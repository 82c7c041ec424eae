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

from pytest_evidence.deps import choose_engine
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
