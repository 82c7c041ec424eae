"""What a change to a test module does to tests that do not name what changed.

A test module is read as code like any other (``modchange``): a test whose own function changed
reached a changed definition, one that calls a changed helper or reads a changed constant of
its module is found through B's record, one whose class changed is found by its id. What pytest
itself applies by name, never by a test's code, is not: a fixture (``autouse``, or one
overriding a conftest's of that name), a setup or teardown function, a hook
(``pytest_generate_tests``), ``pytestmark``. A change to one of these is a *side effect* of the
module: all its tests run.
"""

from __future__ import annotations

import ast
from collections.abc import Collection

from runner.names import MARKS, defined
from runner.pyscan import dotted

#: Module-level names pytest reads from a test module or conftest.
PYTEST_NAMES = frozenset({"pytestmark", "pytest_plugins", "collect_ignore", "collect_ignore_glob", "__test__"})
#: Name prefixes of functions pytest calls unasked: setup and teardown (xunit, unittest, nose), hooks.
CALLED_UNASKED = ("setup", "teardown", "setUp", "tearDown", "asyncSetUp", "asyncTearDown", "pytest_")


def applied_unnamed(b_tree: ast.Module, c_tree: ast.Module, names: Collection[str]) -> tuple[str, ...]:
    """Side effects of a test module's changed ``names`` (``modchange``), judged on both sides:
    a name pytest reads, a setup, teardown or hook name (defined or assigned), or a function
    decorated by anything but pytest's marks (a fixture, whatever its name and decorator)."""
    found = ["%s changed: pytest reads it for every test of the module" % n for n in sorted(PYTEST_NAMES & set(names))]
    found += ["%s changed: pytest calls it unasked" % n for n in sorted(names) if n.startswith(CALLED_UNASKED)]
    for side, tree in (("B", b_tree), ("C", c_tree)):
        for qualname, node in defined(tree):
            if isinstance(node, ast.ClassDef) or node.name not in names:
                continue
            if not all(dotted(d).startswith(MARKS) for d in node.decorator_list):
                found.append(
                    "%s changed (on %s): a decorated function, which pytest may apply unnamed" % (qualname, side)
                )
    return tuple(dict.fromkeys(found))
