"""One parse per source text: a climb's analyses read the same files again and again.

A certify parses a changed or test file in several analyses -- the diff's symbols, T1's
interference scan, T3's test origins, T5's import graph and code index, the blind-reproducer
scan. On click's 8.4.1 release that was 195 parses of 63 texts, 1.8 s of the runner's time,
three quarters of it parsing a text again. Every reader only walks the trees (none assigns to a
node), so one tree serves every reader of the same text.

Some readers hold a file's bytes (read from disk), others its text (decoded from ``git show``).
Bytes in UTF-8 with no byte-order mark and no coding cookie parse exactly as their decoded text
does, so the two share a tree; any other ``bytes`` are parsed as Python reads a file (the cookie
decides) and any other ``str`` as given, each apart. A text that does not parse is not kept:
each caller sees its own ``SyntaxError``. The memo is bounded by the source it holds, the
least recently used text going first, so a process that certifies many candidates does not grow
with them. The ahead thread parses beside the climb: one lock guards the bookkeeping, never a parse.

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

import ast
import collections
import itertools
import re
import threading
import weakref
from typing import Iterator, Optional, Tuple, Type, Union

#: At most this much source (characters or bytes) is kept parsed; a tree takes about thirty
#: times the memory of its text (about 60 MB at the limit).
LIMIT = 2 * 1024 * 1024

#: PEP 263's coding declaration, looked for in the first two lines.
_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=]")
_LINES = re.compile(rb"\r\n|\r|\n")

_Key = Tuple[str, Union[bytes, str]]

_trees: collections.OrderedDict[_Key, ast.Module] = collections.OrderedDict()
_held = 0
_lock = threading.Lock()
#: What ``walk`` goes into by default: every kind of node.
_EVERY = (ast.AST,)
#: The trees ``parse`` keeps (shared, never modified), each with its nodes in ``walk``'s order once
#: ``walk`` listed them -- the module itself left out: a value that holds its key keeps it alive
#: for good -- for as long as the tree lives.
_walked: weakref.WeakKeyDictionary[ast.AST, Optional[Tuple[ast.AST, ...]]] = weakref.WeakKeyDictionary()


def parse(source: Union[bytes, str]) -> ast.Module:
    """``ast.parse(source)``, once per text; the tree must not be modified."""
    global _held
    key = _key(source)
    with _lock:
        tree = _trees.get(key)
        if tree is not None:
            _trees.move_to_end(key)
            return tree
    tree = ast.parse(source)
    if len(key[1]) > LIMIT:
        return tree
    with _lock:
        if key not in _trees:
            _trees[key] = tree
            _walked[tree] = None
            _held += len(key[1])
        while _held > LIMIT:
            (_, old), _ = _trees.popitem(last=False)
            _held -= len(old)
    return tree


def _key(source: Union[bytes, str]) -> _Key:
    """``("utf-8", bytes)`` for a text whose bytes and decoded form parse alike, else its type."""
    if isinstance(source, str):
        try:
            data = source.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: no file's bytes decode to it
            return ("str", source)
    else:
        try:
            data = source
            data.decode("utf-8")
        except UnicodeDecodeError:
            return ("bytes", source)
    head = _LINES.split(data, 2)[:2]  # as Python finds lines: a bare "\r" ends one too
    if data.startswith(b"\xef\xbb\xbf") or any(_COOKIE.match(line) for line in head):
        return (type(source).__name__, source)
    return ("utf-8", data)


def walk(node: ast.AST, into: Tuple[Type[ast.AST], ...] = _EVERY) -> Iterator[ast.AST]:
    """Every node under ``node``, ``node`` first, in ``ast.walk``'s order, at half its cost: the
    referee's scans walk each tree many times over (on click's 8.4.1 release, two million field
    reads through ``ast.walk``'s two generators per node), and this reads the fields directly.
    ``into``: the kinds of node gone into (the import scan walks what holds statements only).

    The nodes of a whole tree ``parse`` keeps are listed once, and kept as long as the tree: the
    blind-reproducer and interference scans walk each test module about fifteen times (click
    8.3.2's, 420,000 nodes a certify), and no reader modifies such a tree. A tree of anyone
    else's is walked afresh each time: it may be modified between walks."""
    with _lock:
        kept = into is _EVERY and node in _walked
        found = _walked.get(node)
    if not kept:
        return _walk(node, into)
    if found is None:
        found = tuple(_walk(node, into))[1:]
        with _lock:
            _walked[node] = found
    return itertools.chain((node,), found)


def _walk(node: ast.AST, into: Tuple[Type[ast.AST], ...]) -> Iterator[ast.AST]:
    todo = collections.deque([node])
    while todo:
        node = todo.popleft()
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                todo.extend(item for item in value if isinstance(item, into))
            elif isinstance(value, into):
                todo.append(value)
        yield node
