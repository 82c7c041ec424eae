"""The doctests of a source file's docstrings, compared between B and C.

A suite run with ``--doctest-modules`` tests the examples in the code's own docstrings. Those
are tests in a source file, which the candidate owns: editing an expected output to what a
regression returns, or adding ``# doctest: +SKIP``, hid the regression and was CERTIFIED, the
doctest read as unchanged (an independent check, pydash). Here an existing docstring's examples
are compared as ``doctest`` parses them -- source, expected output, directives -- so rewrapped
prose around them is no change, and a function the candidate removed takes its doctest with it
(that loss is judged where the collection is: ``reproduce.lost_tests``).
"""

from __future__ import annotations

import ast
import doctest
import posixpath
from collections.abc import Collection, Iterator
from dataclasses import dataclass

from runner import pyscan

#: What ``doctest`` parses out of one docstring: each example's source, expected output,
#: directives and expected exception message -- everything that decides whether it passes.
Examples = tuple[tuple[str, str, tuple[tuple[int, bool], ...], str | None], ...]


@dataclass(frozen=True)
class Edited:
    """A docstring B had examples in, whose examples C changed; ``test_id`` is pytest's id of its
    doctest, what ``--expected-change`` declares it by."""

    qualname: str
    line: int
    test_id: str


def edited(path: str, baseline: bytes, candidate: bytes, files: Collection[str]) -> list[Edited]:
    """The docstrings of ``path`` that hold examples on B and other examples (or none) on C,
    where C still defines what the docstring documents. ``files``: the candidate's tree, to
    name the module as pytest imports it (its package's ``__init__.py`` files)."""
    old, new = _docstrings(baseline), _docstrings(candidate)
    module = module_name(path, files)
    return [
        Edited(name, new[name][0], "%s::%s" % (path, ".".join(filter(None, (module, name)))))
        for name, (_, examples) in old.items()
        if examples and name in new and new[name][1] != examples
    ]


def module_name(path: str, files: Collection[str]) -> str:
    """The dotted name pytest's default import mode gives ``path``: up through every directory
    holding an ``__init__.py``, from the first that holds none (``src/pkg/mod.py`` -> ``pkg.mod``)."""
    parts = [posixpath.splitext(posixpath.basename(path))[0]]
    directory = posixpath.dirname(path)
    while directory and posixpath.join(directory, "__init__.py") in files:
        parts.insert(0, posixpath.basename(directory))
        directory = posixpath.dirname(directory)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def _docstrings(source: bytes) -> dict[str, tuple[int, Examples]]:
    """Every module, class and function doctest reads in ``source`` by qualified name ("" for
    the module), with its line and its docstring's examples (empty: no docstring, or no example
    in it). Of definitions sharing a name -- a property's getter and setter, overloads, the
    branches of an ``if`` -- the last with a docstring is the one whose docstring runs."""
    tree = pyscan.parse(source)
    if tree is None:
        return {}
    found: dict[str, tuple[int, Examples]] = {}
    for name, line, node in _definitions(tree, ""):
        if name not in found or _docstring(node):
            found[name] = (line, _examples(node))
    return found


def _definitions(node: ast.AST, prefix: str) -> Iterator[tuple[str, int, ast.AST]]:
    """``node`` and the classes and functions doctest's finder reaches from it: a module's and
    a class's own, in compound statements too (``if``, ``try``, ``with``); not those inside a
    function, which it never runs."""
    yield prefix, getattr(node, "lineno", 1), node
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return
    for child in _statements(getattr(node, "body", [])):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield from _definitions(child, "%s.%s" % (prefix, child.name) if prefix else child.name)


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """``body``'s statements, with those of its compound statements' blocks in their place."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith)):
            yield from _statements([*stmt.body, *getattr(stmt, "orelse", [])])
        elif isinstance(stmt, ast.Try):
            blocks = [*stmt.body, *(s for h in stmt.handlers for s in h.body), *stmt.orelse, *stmt.finalbody]
            yield from _statements(blocks)


def _examples(node: ast.AST) -> Examples:
    """The examples of ``node``'s docstring as they decide a run: the source as Python reads it
    (``f(1,2)`` reformatted to ``f(1, 2)`` is the same example), the expected output with its
    whitespace normalised where the example says ``NORMALIZE_WHITESPACE``, the directives."""
    text = _docstring(node)
    if not text:
        return ()
    try:
        found = doctest.DocTestParser().get_examples(text)
    except ValueError:  # doctest cannot parse it: it errors at collection whatever it says
        return ()
    return tuple((_source(e.source), _want(e), tuple(sorted(e.options.items())), e.exc_msg) for e in found)


def _docstring(node: ast.AST) -> str | None:
    if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    return ast.get_docstring(node, clean=False)


def _source(code: str) -> str:
    try:
        return ast.dump(ast.parse(code))
    except SyntaxError:
        return code


def _want(example: doctest.Example) -> str:
    if example.options.get(doctest.NORMALIZE_WHITESPACE):
        return " ".join(example.want.split())
    return example.want
