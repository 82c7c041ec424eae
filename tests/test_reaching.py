"""``runner.reaching``: which bindings of a name may be the last to run before a use of it.

Pure logic over source text: each case marks a use with ``#<`` and names the lines of the
bindings that may reach it.
"""

from __future__ import annotations

import ast

import pytest

from runner.reaching import Scopes


def _reaching(source: str, name: str) -> list[int]:
    """The lines of the bindings reaching the use of ``name`` on the line marked ``#<``."""
    tree = ast.parse(source)
    line = next(i for i, text in enumerate(source.splitlines(), 1) if text.rstrip().endswith("#<"))
    use = next(
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) and n.lineno == line
    )
    return sorted(getattr(b.node, "lineno", 0) for b in Scopes(tree.body, tree.body).reaching(use))


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("c = 1\nc = 2\nc #<\n", [2]),  # the later statement hides the earlier
        ("c = 1\nif x:\n    c = 2\nc #<\n", [1, 3]),  # a branch may not run
        ("c = 1\nif x:\n    c = 2\nelse:\n    c = 3\nc #<\n", [1, 3, 5]),  # branches, each maybe
        ("c = 1\ntry:\n    c = 2\nexcept E:\n    pass\nc #<\n", [1, 3]),
        ("c = 1\nfor i in x:\n    c #<\n    c = 2\n", [1, 4]),  # the next round brings it
        ("for c in x:\n    c #<\n    c = 2\n", [1]),  # the loop's target runs first each round
        ("c = 1\nwith f() as c:\n    c #<\n", [2]),
        ("c = 1\ny = [c for c in x]\nc #<\n", [1]),  # a comprehension's names are its own
        ("c = 1\n\n\ndef f():\n    c #<\n\n\nc = 2\n", [1, 8]),  # a free name: read when called
        ("c = 1\n\n\ndef f(c):\n    c #<\n", [4]),  # a parameter
        ("def f():\n    global c\n    c = 2\n\n\nc = 1\nc #<\n", [3, 6]),  # bound in the module by f
        ("c = 1\nc = c + 1 #<\n", [1]),  # the value is read before the target is bound
        ("c = 1\nif (c := 2):\n    c #<\n", [2]),
    ],
)
def test_the_bindings_that_reach_a_use(source: str, found: list[int]) -> None:
    assert _reaching(source, "c") == found
