"""A killed pytest loses no finished result; an interrupted session writes an incomplete record."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import Record

from pytest_evidence.stream import read


def test_kill_9_keeps_every_finished_result_in_the_stream(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_killed="""
        import os, signal

        def test_one():
            pass

        def test_two():
            assert 0

        def test_three():
            os.kill(os.getpid(), signal.SIGKILL)

        def test_four():
            pass
        """
    )
    stream = pytester.path / "s.jsonl"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "evidence", f"--evidence-stream={stream}", "--evidence-reruns=0"],
        cwd=pytester.path,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == -9
    content = read(str(stream))
    assert {t.split("::")[-1]: o.outcome.value for t, o in content.results.items()} == {
        "test_one": "pass",
        "test_two": "fail",
    }
    assert content.collected is not None and len(content.collected) == 4
    assert not content.finished


@pytest.mark.parametrize(
    "death",
    [
        "os._exit(3)",
        "import ctypes; ctypes.string_at(0)",  # a segfault
        "os.abort()",
    ],
    ids=["os._exit", "segfault", "abort"],
)
def test_a_process_that_dies_in_a_test_keeps_every_result_before_it(pytester: pytest.Pytester, death: str) -> None:
    pytester.makepyfile(
        test_dying=f"""
        import os

        def test_one():
            pass

        def test_two():
            assert 0

        def test_three():
            {death}

        def test_four():
            pass
        """
    )
    stream = pytester.path / "s.jsonl"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "evidence", f"--evidence-stream={stream}", "-p", "no:faulthandler"],
        cwd=pytester.path,
        capture_output=True,
        text=True,
    )
    assert proc.returncode != 0
    content = read(str(stream))
    assert content.forgery is None and not content.finished
    assert {t.split("::")[-1]: o.outcome.value for t, o in content.results.items()} == {
        "test_one": "pass",
        "test_two": "fail",
    }


def test_a_result_is_in_the_stream_before_the_next_test_starts(pytester: pytest.Pytester) -> None:
    """Nothing the crash-safety rests on waits for the session's end or for a buffer to fill: each
    test reads the stream and finds every test before it there, reruns and all."""
    stream = pytester.path / "s.jsonl"
    pytester.makepyfile(
        test_seen=f"""
        import json

        STREAM = {str(stream)!r}
        tries = []

        def streamed():
            with open(STREAM) as fh:
                return [json.loads(line) for line in fh.read().splitlines()]

        def results():
            return {{doc["test_id"].split("::")[-1]: doc["outcome"] for doc in streamed() if doc["type"] == "result"}}

        def test_a():
            assert results() == {{}}

        def test_b():
            assert results() == {{"test_a": "pass"}}

        def test_flip():
            tries.append(1)
            assert len(tries) > 1  # fails, then passes on the rerun: flaky

        def test_c():
            assert results() == {{"test_a": "pass", "test_b": "pass", "test_flip": "flaky"}}
            assert streamed()[-1]["type"] == "result"
        """
    )
    result = pytester.runpytest_subprocess("-p", "evidence", f"--evidence-stream={stream}")
    assert result.parseoutcomes() == {"passed": 3, "flaky": 1}
    content = read(str(stream))
    assert content.forgery is None and content.finished and len(content.results) == 4


def test_interrupted_session_writes_an_incomplete_record(pytester: pytest.Pytester, schema: Record) -> None:
    import jsonschema

    pytester.makepyfile(
        test_interrupt="""
        def test_one():
            pass

        def test_two():
            raise KeyboardInterrupt

        def test_three():
            pass
        """
    )
    out = pytester.path / "e.json"
    result = pytester.runpytest_subprocess("-p", "evidence", f"--evidence-out={out}")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, schema)
    assert doc["complete"] is False and doc["incomplete_reason"] == "interrupted"
    assert [r["test_id"].split("::")[-1] for r in doc["results"]] == ["test_one"]
    assert doc["not_run"] == ["test_interrupt.py::test_two", "test_interrupt.py::test_three"]
    assert os.path.exists(out.with_suffix(".jsonl"))
