"""CI check: on Python 3.12+, three sessions in one process each record their own dependencies.

Usage: <python 3.12+ with pytest>/bin/python .ci/monitoring_check.py

The dependency recorder uses ``sys.monitoring`` there, whose tool ids are few and global: a
recorder that kept its id made the third in-process session fail. Run with only pytest
installed; the plugin comes from this checkout (``PYTHONPATH``).
"""

from __future__ import annotations

import json
import pathlib
import sys
import tempfile

import pytest

LIB = "def helper(x):\n    return x + 1\n"
TESTS = "from lib import helper\n\n\ndef test_calls_helper():\n    assert helper(1) == 2\n"


def main() -> int:
    if not hasattr(sys, "monitoring"):
        print("SKIP: Python %d.%d has no sys.monitoring" % sys.version_info[:2])
        return 0
    work = pathlib.Path(tempfile.mkdtemp(prefix="monitoring-check-"))
    (work / "lib.py").write_text(LIB)
    (work / "test_deps.py").write_text(TESTS)
    (work / "pytest.ini").write_text("[pytest]\npythonpath = .\n")
    for run in range(3):
        stream = work / ("s%d.jsonl" % run)
        code = pytest.main(
            [
                "-q",
                "-p",
                "pytest_evidence.plugin",
                "--evidence-record-mode",
                "--evidence-stream=%s" % stream,
                "--evidence-deps=%s" % work,
                "--evidence-deps-engine=tracer",
                "--rootdir=%s" % work,
                str(work),
            ]
        )
        lines = [json.loads(line) for line in stream.read_text().splitlines()]
        deps = [d for d in lines if d["type"] == "deps" and d["test_id"].endswith("test_calls_helper")]
        if code != 0 or not deps or "lib.py:1" not in deps[0]["functions"]:
            print("FAIL: session %d exited %s and recorded %s" % (run + 1, code, deps))
            return 1
    if sys.monitoring.get_tool(3) is not None or sys.monitoring.get_tool(4) is not None:
        print("FAIL: a monitoring tool id is still taken after the sessions")
        return 1
    print("ok: three in-process sessions under Python %d.%d recorded their own dependencies" % sys.version_info[:2])
    return 0


if __name__ == "__main__":
    sys.exit(main())
