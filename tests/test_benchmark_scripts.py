"""The benchmark scripts as an evaluator runs them on cases of their own: bad input is one line."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

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
