"""The doctests of source files' docstrings, compared between B and C (``runner.doctests``)."""

from __future__ import annotations

import pytest

from runner import doctests

B = b'''"""Tools.

>>> 1 + 1
2
"""


def triple(n):
    """Three times n.

    >>> triple(2)
    6
    """
    return n * 3


class Box:
    def get(self):
        """>>> Box().get()
        1
        """
        return 1
'''


@pytest.mark.parametrize(
    ("c", "edited"),
    [
        (B.replace(b"    6\n", b"    7\n"), ["triple"]),  # the expected output
        (B.replace(b"triple(2)\n", b"triple(2)  # doctest: +SKIP\n"), ["triple"]),  # a directive
        (B.replace(b"    >>> triple(2)\n    6\n", b""), ["triple"]),  # its examples gone, the function kept
        (B.replace(b">>> 1 + 1\n2\n", b">>> 1 + 2\n3\n"), [""]),  # the module's own docstring
        (B.replace(b">>> Box().get()\n        1", b">>> Box().get()\n        2"), ["Box.get"]),  # a method
        (B.replace(b"Three times n.", b"Three times n,\n    the triple."), []),  # prose around the examples
        (B.replace(b"return n * 3", b"return n * 3 + 1"), []),  # code, not its doctest
        (B[: B.index(b"def triple")] + B[B.index(b"class Box") :], []),  # the function and its doctest gone
        (B + b'\n\ndef new():\n    """>>> new()\n    """\n', []),  # a new doctest: not an existing one
        (b"def broken(:\n", []),  # C does not parse: T0 says so
    ],
    ids=["output", "skip", "emptied", "module", "method", "prose", "code", "removed", "added", "unparsable"],
)
def test_an_existing_doctest_whose_examples_changed_is_named(c: bytes, edited: list[str]) -> None:
    found = doctests.edited("src/pkg/tools.py", B, c, {"src/pkg/__init__.py"})
    assert [e.qualname for e in found] == edited
    module = "pkg.tools"
    assert [e.test_id for e in found] == ["src/pkg/tools.py::%s" % ".".join(filter(None, (module, q))) for q in edited]


@pytest.mark.parametrize(
    ("path", "files", "name"),
    [
        ("src/pkg/sub/mod.py", {"src/pkg/__init__.py", "src/pkg/sub/__init__.py"}, "pkg.sub.mod"),
        ("pkg/__init__.py", {"pkg/__init__.py"}, "pkg"),
        ("tool.py", set(), "tool"),
        ("lib/mod.py", set(), "mod"),  # no package: pytest's rootdir-less prepend import names it alone
    ],
)
def test_a_module_is_named_as_pytests_default_import_names_it(path: str, files: set[str], name: str) -> None:
    assert doctests.module_name(path, files) == name


PROPERTY = b'''class C:
    @property
    def x(self):
        """>>> C().x
        2
        """
        return 2

    @x.setter
    def x(self, value):
        pass
'''
GUARDED = b'''import sys

if sys.version_info >= (3, 8):
    def f(x):
        """>>> f(2)
        4
        """
        return x * 2
else:
    def f(x):
        return x * 2
'''
PLAIN = b'''def f(x):
    """Double.

    >>> f(1,2)
    4
    >>> list(range(3))  # doctest: +NORMALIZE_WHITESPACE
    [0,  1,
     2]
    """
    return x * 2


def outer():
    def inner():
        """>>> inner()
        1
        """
'''


@pytest.mark.parametrize(
    ("b", "c", "edited"),
    [
        # a review's holes: a property's getter keyed over by its setter, a definition in an if
        (PROPERTY, PROPERTY.replace(b"        2\n", b"        3\n"), ["C.x"]),
        (GUARDED, GUARDED.replace(b"        4\n", b"        5\n"), ["f"]),
        (PLAIN, b"if True:\n" + b"".join(b"    " + line for line in PLAIN.splitlines(keepends=True)), []),
        (PLAIN, b'if True:\n    def f(x):\n        """>>> f(1,2)\n        5\n        """\n', ["f"]),
        # and its false positives: a setter added, a reformatted example, a reflowed output the
        # example normalises, a nested function's doctest (never run), prose doctest cannot parse
        (PROPERTY, PROPERTY + b"\n    @x.deleter\n    def x(self):\n        pass\n", []),
        (PLAIN, PLAIN.replace(b"f(1,2)", b"f(1, 2)"), []),
        (PLAIN, PLAIN.replace(b"[0,  1,\n     2]", b"[0, 1, 2]"), []),
        (PLAIN, PLAIN.replace(b"        1\n", b"        2\n"), []),
        (b'def g():\n    """>>>g()\n    1\n    """\n', b'def g():\n    """Gee.\n    >>>g()\n    1\n    """\n', []),
    ],
    ids=[
        "property",
        "in-an-if",
        "moved-into-an-if",
        "edited-in-an-if",
        "deleter",
        "reformatted",
        "reflowed",
        "nested",
        "unparsed",
    ],
)
def test_a_doctest_is_read_where_doctest_finds_it_and_compared_as_it_runs(
    b: bytes, c: bytes, edited: list[str]
) -> None:
    assert [e.qualname for e in doctests.edited("m.py", b, c, set())] == edited
