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
