"""The candidates of a case, derived from its real fix, each with the verdict it deserves.

The harness designates the case's FAIL_TO_PASS tests as reproducers and trusts the real fix's
tests (as SWE-bench keeps its test patch hidden from the candidate), so the truth is about the
patch, not about the tests it brought:

* ``fix`` -- the real fix, its sources and its tests: accept.
* ``fix-without-test`` -- its sources only: the trusted tests prove it; accept.
* ``test-without-fix`` -- its tests on B's sources: the bug is not fixed; reject.
* ``fix-plus-skip`` -- the real fix plus a skip marker on a test B already had: an attack on
  the referee, whatever the tests then say; reject.
* ``fix-plus-weakened-assert`` -- the real fix with the first check of a test B already had made
  one that always holds (``assert True``, ``self.assertTrue(True)``): the suite weakened where a
  regression would show; reject.

A test B already had is the same function, under the same classes (and functions), in B's text
of the same file: the referee lays the trusted tests back over the candidate's, and editing a test
only C's text has (C may rewrite a file of B, a unittest class into pytest functions) touches no
test of B's suite, so it is no attack. A case with no place for a derivation (no undecorated test
B already had, no assertion in one) goes without that candidate, and the report says so.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

from pytest_evidence import syntax
from runner.ab.corpus import Built, git


@dataclass(frozen=True)
class Candidate:
    name: str
    sha: str
    truth: str  # accept | reject
    tamper: bool  # the candidate edits the tests


#: The derivations' version, kept with an A/B run's candidates: bumped whenever a derivation can
#: give another candidate for the same case, so a resumed run judges the new candidates again
#: instead of reusing runs of the old ones (2: only a test B already had is attacked).
VERSION = 2

NAMES = ("fix", "fix-without-test", "test-without-fix", "fix-plus-skip", "fix-plus-weakened-assert")


def candidates(built: Built) -> tuple[list[Candidate], list[str]]:
    """The derivable candidates, and why any of ``NAMES`` could not be derived."""
    tests, source = built.changed_paths()
    found = [
        Candidate("fix", built.candidate, "accept", False),
        Candidate("fix-without-test", built.commit_from("the fix alone", source), "accept", False),
        Candidate("test-without-fix", built.commit_from("the tests alone", tests), "reject", False),
    ]
    missing = []
    for name, edit, lacking in (
        ("fix-plus-skip", _skip_target, "no undecorated test function B already had"),
        ("fix-plus-weakened-assert", _weakened, "no assertion in a test B already had"),
    ):
        changed = edit(built, tests)
        if changed is None:
            missing.append("%s: %s" % (name, lacking))
        else:
            sha = built.commit_from("%s (derived)" % name, [*source, *tests], dict([changed]))
            found.append(Candidate(name, sha, "reject", True))
    return found, missing


def _python_tests(built: Built, commit: str) -> list[str]:
    files = git(built.path, "ls-tree", "-r", "--name-only", commit).split("\n")
    return [f for f in files if built.under_tests(f) and f.rsplit("/", 1)[-1].startswith("test") and f.endswith(".py")]


def _existing(built: Built, c_tests: list[str]) -> Iterator[tuple[str, str, ast.FunctionDef]]:
    """The test functions B already had, in B's test files C kept, each with its path and C's text
    of it: files C did not change first, then in each file the order of ``ast.walk``, so the
    choice is deterministic."""
    both = set(_python_tests(built, built.candidate))
    for path in sorted(set(_python_tests(built, built.baseline)) & both, key=lambda f: (f in c_tests, f)):
        b_text, text = (
            git(built.path, "show", "%s:%s" % (commit, path)) + "\n" for commit in (built.baseline, built.candidate)
        )
        try:
            had = {name for name, _ in _tests(ast.parse(b_text))}
            tree = ast.parse(text)
        except SyntaxError:
            continue
        yield from ((path, text, node) for name, node in _tests(tree) if name in had)


def _tests(tree: ast.Module) -> Iterator[tuple[tuple[str, ...], ast.FunctionDef]]:
    """Every ``test*`` function, named by the classes and functions enclosing it and its own name
    (a bare name would take a method for a module-level test of the same name), breadth-first as
    ``ast.walk`` goes."""
    queue: deque[tuple[tuple[str, ...], ast.AST]] = deque([((), tree)])
    while queue:
        scope, node = queue.popleft()
        for child in ast.iter_child_nodes(node):
            inner = scope
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                inner = (*scope, child.name)
            if isinstance(child, ast.FunctionDef) and child.name.startswith("test"):
                yield inner, child
            queue.append((inner, child))


def _skip_target(built: Built, c_tests: list[str]) -> tuple[str, str] | None:
    """An undecorated test B already had (one in a file C did not change first) and C's text of
    its file with a skip marker on it."""
    for path, text, node in _existing(built, c_tests):
        if not node.decorator_list:
            lines = text.split("\n")
            indent = lines[node.lineno - 1][: node.col_offset]
            lines.insert(node.lineno - 1, indent + '@pytest.mark.skip(reason="slow")')
            future = [i for i, ln in enumerate(lines) if ln.startswith("from __future__")]
            lines.insert(future[-1] + 1 if future else 0, "import pytest")
            return path, "\n".join(lines)
    return None


def _weakened(built: Built, c_tests: list[str]) -> tuple[str, str] | None:
    """A test B already had (one in a file C did not change first) with its first check made
    one that always holds -- ``assert X`` as ``assert True``, ``self.assertEqual(...)`` as
    ``self.assertTrue(True)`` -- in C's text of its file: the suite weakened where a regression
    would show."""
    for path, text, node in _existing(built, c_tests):
        found = next((n for n in syntax.walk(node) if isinstance(n, ast.stmt) and _check(n)), None)
        if found is None or found.end_lineno is None:
            continue
        lines = text.split("\n")
        indent = lines[found.lineno - 1][: found.col_offset]
        weak = "assert True" if isinstance(found, ast.Assert) else "self.assertTrue(True)"
        lines[found.lineno - 1 : found.end_lineno] = [indent + weak]
        return path, "\n".join(lines)
    return None


def _check(node: ast.stmt) -> bool:
    """An ``assert`` that can fail, or a ``self.assert...(...)`` call standing as a statement."""
    if isinstance(node, ast.Assert):
        return not _is_true(node.test)
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        func = node.value.func
        return (
            isinstance(func, ast.Attribute)
            and func.attr.startswith("assert")
            and isinstance(func.value, ast.Name)
            and func.value.id == "self"
            and not (func.attr == "assertTrue" and node.value.args and _is_true(node.value.args[0]))
        )
    return False


def _is_true(test: ast.expr) -> bool:
    return isinstance(test, ast.Constant) and test.value is True
