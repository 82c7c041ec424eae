"""The shared parse (``pytest_evidence.syntax``): one tree per text, and the same tree
``ast.parse`` would give -- readers that hold a file's bytes and readers that hold its decoded
text share it only where the two parse alike."""

from __future__ import annotations

import ast
import gc
import pathlib
import weakref

import pytest

from pytest_evidence import syntax


@pytest.fixture(autouse=True)
def empty(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts from an empty memo (other tests' parses are not its business)."""
    monkeypatch.setattr(syntax, "_trees", type(syntax._trees)())
    monkeypatch.setattr(syntax, "_held", 0)


def test_a_text_is_parsed_once_and_its_bytes_share_the_tree() -> None:
    text = "def f(x):\n    return 'é' + x\n"
    tree = syntax.parse(text)
    assert syntax.parse(text) is tree
    assert syntax.parse(text.encode("utf-8")) is tree
    assert ast.dump(tree) == ast.dump(ast.parse(text))


@pytest.mark.parametrize(
    "data",
    [
        b"# coding: latin-1\ns = '\xc3\xa9'\n",  # the cookie decides how the bytes read
        b"#!/usr/bin/env python\n# vim: set fileencoding=latin-1 :\ns = '\xc3\xa9'\n",  # on line 2
        b"\r# coding: latin-1\rs = '\xc3\xa9'\r",  # lines that a bare carriage return ends
        b"\xef\xbb\xbfs = '\xc3\xa9'\n",  # a byte-order mark, which the bytes' parse skips
    ],
    ids=["cookie", "cookie-second-line", "cookie-after-cr", "bom"],
)
def test_utf8_bytes_that_do_not_read_as_their_text_keep_a_tree_of_their_own(data: bytes) -> None:
    """Each is valid UTF-8, and ``ast.parse`` reads the bytes and their decoded text apart."""
    tree = syntax.parse(data)
    assert ast.dump(tree) == ast.dump(ast.parse(data))
    text = data.decode("utf-8")
    try:
        expected = ast.dump(ast.parse(text))
    except SyntaxError:  # the mark, read as text, is a character Python does not take
        with pytest.raises(SyntaxError):
            syntax.parse(text)
    else:
        assert expected != ast.dump(tree)
        assert ast.dump(syntax.parse(text)) == expected


def test_a_text_that_does_not_parse_raises_each_time_and_is_not_kept() -> None:
    for _ in range(2):
        with pytest.raises(SyntaxError):
            syntax.parse("def f(:\n")
    assert not syntax._trees


def test_the_memo_keeps_the_most_recently_used_texts_within_its_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(syntax, "LIMIT", 30)
    first = syntax.parse("a = 1\n" * 3)  # 18 characters
    syntax.parse("b = 2\n" * 2)  # 12: 30 held, at the limit
    assert syntax.parse("a = 1\n" * 3) is first  # used again: now the most recent
    syntax.parse("c = 3\n")  # 6 more: the least recently used text goes
    assert syntax._held <= 30
    assert syntax.parse("a = 1\n" * 3) is first
    assert [key[1] for key in syntax._trees] == [b"c = 3\n", b"a = 1\n" * 3]


def test_walk_yields_what_ast_walk_yields_in_its_order() -> None:
    """The scans' ``walk`` stands in for ``ast.walk`` everywhere: over every module of this
    project -- every statement and expression kind it writes -- the same nodes in the same
    order (an analysis that keeps the last of several bindings depends on it)."""
    root = pathlib.Path(__file__).resolve().parent.parent
    paths = sorted([*root.glob("runner/**/*.py"), *root.glob("pytest_evidence/*.py")])
    assert len(paths) > 50
    for path in paths:
        tree = ast.parse(path.read_bytes())
        assert [id(n) for n in syntax.walk(tree)] == [id(n) for n in ast.walk(tree)], path
    odd = ast.parse(
        "match v:\n    case [1, *rest] if (y := rest):\n        pass\n    case {'k': K(a=b)}:\n        pass\n"
        "try:\n    pass\nexcept* ValueError as e:\n    f = lambda *a, k=1, **kw: [i async for i in a]\n"
        "async def g():\n    async with a as (b, c):\n        await d\n"
        "x: 'int' = {**m, 'n': f'{z!r:>{w}}'}\n"
    )
    assert [id(n) for n in syntax.walk(odd)] == [id(n) for n in ast.walk(odd)]


def test_a_kept_trees_nodes_are_listed_once_and_go_with_the_tree() -> None:
    """The scans walk a kept tree many times: its nodes are listed once, as ``ast.walk`` gives
    them, and the list holds no reference that keeps the tree alive once the memo lets it go."""
    source = "def f(x):\n    return [y for y in x if y]\n" * 3
    tree = syntax.parse(source)
    assert [id(n) for n in syntax.walk(tree)] == [id(n) for n in ast.walk(tree)]
    assert [id(n) for n in syntax.walk(tree)] == [id(n) for n in ast.walk(tree)]  # from the list
    assert tree in syntax._walked
    gone = weakref.ref(tree)
    del tree
    syntax._trees.clear()
    gc.collect()
    assert gone() is None


def test_a_tree_parse_did_not_make_is_walked_afresh_each_time() -> None:
    """Another's tree may be modified between walks: the second walk sees the change."""
    tree = ast.parse("a = 1\n")
    assert len(list(syntax.walk(tree))) == len(list(ast.walk(tree)))
    tree.body.append(ast.parse("b = 2\n").body[0])
    assert [id(n) for n in syntax.walk(tree)] == [id(n) for n in ast.walk(tree)]
    assert tree not in syntax._walked
