"""Source that fights the referee: the candidate's library code acting on the test run itself.

Only the lines the candidate wrote are scanned. Each finding is a ``source_interference``
detection with its file and line; the ones that can only be attacks (``ATTACKS``: reaching into
pytest's internals, ending the process with ``os._exit``) reject the patch, the others are left
for the reviewer, who may know the library ships a pytest plugin or patches builtins on purpose.
"""

from __future__ import annotations

from collections.abc import Callable

from pytest_evidence.model import Detection, DetectionKind
from runner import pyscan
from runner.diff import Diff, FileKind

ATTACKS = frozenset({"pytest_internals", "os_exit", "startup_hook"})

#: Modules Python runs at start-up from anywhere on ``sys.path``: before pytest, before the
#: plugin reads its key -- in every test process, since the checkout is on the path.
STARTUP_MODULES = frozenset({"sitecustomize.py", "usercustomize.py"})


def scan(read: Callable[[str], bytes], diff: Diff) -> list[Detection]:
    found = [
        Detection(
            DetectionKind.SOURCE_INTERFERENCE,
            "%s: runs at interpreter start-up in every test process, before the test plugin" % change.path,
            None,
            change.path,
            None,
            "startup_hook",
        )
        for change in diff.files
        if change.status != "D" and change.path.rsplit("/", 1)[-1] in STARTUP_MODULES
    ]
    for change in diff.of_kind(FileKind.SOURCE):
        if change.status == "D" or not change.path.endswith(".py"):
            continue
        tree = pyscan.parse(read(change.path))
        if tree is None:  # T0 reports it
            continue
        for hit in pyscan.interference(tree, set(change.c_lines)):
            found.append(
                Detection(
                    DetectionKind.SOURCE_INTERFERENCE,
                    "%s:%d: %s" % (change.path, hit.line, hit.message),
                    None,
                    change.path,
                    hit.line,
                    hit.detail,
                )
            )
    return found


def is_attack(detection: Detection) -> bool:
    return detection.kind is DetectionKind.SOURCE_INTERFERENCE and detection.detail in ATTACKS
