"""The benchmark scripts as an evaluator runs them on cases of their own: bad input is one line."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
from importlib.util import cache_from_source

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_a_case_that_cannot_be_built_ends_the_benchmark_with_one_line(tmp_path: pathlib.Path) -> None:
    """A ``commit`` case whose repository cannot be cloned ended ``bench_verdicts.py`` and
    ``bench_corpus.py`` with a traceback (an independent check, without the mirror mapping)."""
    case = {
        "format": "commit",
        "id": "gone-1",
        "repo": str(tmp_path / "no-such-repository"),
        "buggy": "0" * 40,
        "fixed": "1" * 40,
        "tests": ["tests"],
        "fail_to_pass": ["tests/test_x.py::test_x"],
        "deps": [],
        "pythonpath": ".",
        "test_command": ["tests"],
    }
    corpus = tmp_path / "cases.jsonl"
    corpus.write_text(json.dumps(case) + "\n")
    proc = subprocess.run(
        [sys.executable, "benchmarks/bench_verdicts.py", "--corpus", str(corpus)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "EVIDENCE_BENCH_CACHE": str(tmp_path / "cache"), "HOME": str(tmp_path)},
    )
    assert proc.returncode == 3, proc.stderr
    assert "Traceback" not in proc.stderr
    [line] = proc.stderr.splitlines()
    assert line.startswith("bench_verdicts.py: case gone-1: git clone ") and "no-such-repository" in line


def test_a_measured_checkout_is_byte_compiled_once_as_an_installed_runner_is(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checkout's bytecode goes stale at each commit, and under ``PYTHONDONTWRITEBYTECODE``
    every runner start the benchmarks measure compiled its modules again, which an installed
    wheel never does: ``certify`` compiles the measured checkout's runner and plugin first,
    once per process, stale bytecode included."""
    monkeypatch.setattr(sys, "path", [str(ROOT / "benchmarks"), *sys.path])  # _suite puts ROOT first too
    import _suite

    monkeypatch.setattr(_suite, "_COMPILED", set())
    modules = [tmp_path / "runner" / "cli.py", tmp_path / "pytest_evidence" / "plugin.py", tmp_path / "other" / "x.py"]
    for module in modules:
        module.parent.mkdir(parents=True)
        module.write_text("X = 1\n")
    stale = pathlib.Path(cache_from_source(str(modules[0])))
    stale.parent.mkdir()
    stale.write_bytes(b"stale")
    _suite._compiled(tmp_path)
    assert [pathlib.Path(cache_from_source(str(m))).is_file() for m in modules] == [True, True, False]
    assert stale.read_bytes() != b"stale"
    stale.unlink()
    _suite._compiled(tmp_path)  # once per process: the tree is not walked again
    assert not stale.exists()
