"""What makes a reproducer blind, read from the code (T3, once the reproducers are known).

A reproducer that fails on B and passes on C proves the fix only if it could have failed on a
wrong one. These shapes make sure it cannot, and all are ``weak_reproducer`` detections with their
line (``runner.blindness`` holds the rules and their limits):

* ``always_equal`` -- an ``__eq__`` true whatever it is given (or ``mock.ANY`` compared), in the
  lines the candidate wrote or in the reproducers' own code: every comparison the test makes
  holds; ``value_equality``, a ``str`` subclass (or another value type's) with its own ``__eq__``.
* ``reads_caller_frame`` -- library code the candidate wrote reads its callers' variables, where
  the test keeps the answer it expects.
* ``special_cased_input`` -- a branch the candidate wrote that fires on a literal of the
  reproducer's, new to the file, and hands back a fixed answer: the fix is the test's input.

Each blocks certification (the verdict is INCONCLUSIVE); neither fails T3, which says what the
tests did. The third shape, code asking whether it runs under a test framework, does not need
the reproducers and is found with the other library-code scans (``interference``).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_evidence import overlay
from pytest_evidence.model import Detection, DetectionKind
from runner import blindness, pyscan
from runner.diff import Diff, FileKind

if TYPE_CHECKING:
    from runner.ladder.climb import Ladder


def scan(ladder: Ladder, diff: Diff, reproducing: Sequence[str]) -> None:
    """Record the blinding shapes around ``reproducing``, the tests that prove the fix."""
    if not reproducing:
        return
    names: dict[str, set[tuple[str, ...]]] = {}
    for test_id in reproducing:
        path, defined = overlay.split_test_id(test_id)
        names.setdefault(path, set()).add(defined)
    changed = {c.path: c for c in diff.files}
    seen: list[blindness.Finding] = []
    heard: set[object] = set()
    for path, tests in sorted(names.items()):
        tree = _parse(ladder, path)
        if tree is None:
            continue
        heard |= blindness.reproducer_literals(tree, tests)
        # The reproducers' own code, and what the candidate wrote in their file (a helper class).
        lines = {n for node in _tests(tree, tests) for n in range(node.lineno, (node.end_lineno or node.lineno) + 1)}
        lines |= set(changed[path].c_lines) if path in changed else set()
        seen += blindness.always_equal(tree, lines, path)
    for change in diff.of_kind(FileKind.SOURCE):
        tree = _parse(ladder, change.path) if change.status != "D" else None
        if tree is None:
            continue
        seen += blindness.always_equal(tree, change.c_lines, change.path)
        seen += blindness.reads_caller_frame(tree, change.c_lines, change.path)
        if not blindness.heard_on(tree, change.c_lines, heard):
            continue  # the candidate wrote none of the reproducers' literals here: nothing special-cased
        before = pyscan.parse(change.b_source.encode()) if change.b_source else None
        old = blindness.literals(before) if before is not None else set()
        seen += blindness.special_cased_input(tree, change.c_lines, old, heard, change.path)
    ladder.evidence.detect(
        Detection(
            DetectionKind.WEAK_REPRODUCER,
            "%s:%d: %s" % (f.path, f.line, f.message),
            None,
            f.path,
            f.line,
            f.detail,
        )
        for f in seen
    )


def _parse(ladder: Ladder, path: str) -> ast.Module | None:
    found = ladder.co.c_dir / path
    return pyscan.parse(found.read_bytes()) if found.is_file() else None


def _tests(tree: ast.Module, names: set[tuple[str, ...]]) -> list[ast.stmt]:
    defined = pyscan.definitions(tree)
    return [node for n in names if isinstance(node := defined.get(n), ast.stmt)]
