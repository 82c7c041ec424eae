"""What the candidate changed, relative to B: files by kind, and symbols by AST.

A changed line is attributed to the innermost function or class whose span (decorators
included) holds it, on B's side and on C's side; a changed line outside every definition is a
module-level change. B's spans are what the per-test dependency data recorded on B is matched
against. For a changed source file, ``modchange`` also says which names the change rebound, what
it may do beyond them, and which definitions run a changed line outside their own body; and B's
text of the file is kept, for the selection to read what B's tests reached.
"""

from __future__ import annotations

import ast
import enum
import fnmatch
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass

from pytest_evidence import gitops, overlay, syntax
from runner.modchange import module_change
from runner.names import defined, first_line, header_end
from runner.testchange import applied_unnamed

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")

CONFIG_FILES = frozenset({"conftest.py", "pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml"})
MANIFEST_PATTERNS = (
    "requirements*.txt",
    "requirements/*.txt",
    "constraints*.txt",
    "setup.py",
    "Pipfile",
    "Pipfile.lock",
    "poetry.lock",
    "uv.lock",
    "pdm.lock",
    "environment.yml",
)


class FileKind(str, enum.Enum):
    SOURCE = "source"
    TEST = "test"
    CONFIG = "pytest-config"
    MANIFEST = "manifest"
    DATA = "data"


def kind_of(path: str, python_files: tuple[str, ...]) -> FileKind:
    name = posixpath.basename(path)
    if name in CONFIG_FILES:
        return FileKind.CONFIG
    if any(fnmatch.fnmatch(path, p) or fnmatch.fnmatch(name, p) for p in MANIFEST_PATTERNS):
        return FileKind.MANIFEST
    if overlay.is_test_file(path, python_files):
        return FileKind.TEST
    if path.endswith(".py"):
        return FileKind.SOURCE
    return FileKind.DATA


@dataclass(frozen=True)
class Span:
    qualname: str
    start: int
    end: int


@dataclass(frozen=True)
class FileChange:
    path: str
    status: str  # A, M or D
    kind: FileKind
    b_spans: tuple[Span, ...] = ()  # changed definitions on B (what B's dependency data can hit)
    c_spans: tuple[Span, ...] = ()  # changed definitions on C
    module_level: bool = False
    c_lines: frozenset[int] = frozenset()  # lines the candidate wrote (all of an added file)
    names: frozenset[str] = frozenset()  # module-level and class-level names whose binding changed
    side_effects: tuple[str, ...] = ()  # why the change may act beyond ``names`` and the spans
    executors: tuple[Span, ...] = ()  # definitions on B that run a changed line outside their own body
    b_source: str | None = None  # B's text of a changed Python file, source or test (None: added, or not Python)


@dataclass(frozen=True)
class Diff:
    files: tuple[FileChange, ...]

    def of_kind(self, *kinds: FileKind) -> list[FileChange]:
        return [f for f in self.files if f.kind in kinds]

    @property
    def selects_everything(self) -> bool:
        """pytest configuration, conftest files or dependency manifests changed: the whole suite."""
        return bool(self.of_kind(FileKind.CONFIG, FileKind.MANIFEST))


def definitions(source: str) -> list[Span]:
    """Every function and class with its span, decorators included; outer before inner."""
    return _spans(syntax.parse(source))


def _spans(tree: ast.Module) -> list[Span]:
    return [Span(name, first_line(node), node.end_lineno or node.lineno) for name, node in defined(tree)]


def attribute(lines: set[int], spans: list[Span]) -> tuple[tuple[Span, ...], bool]:
    """The innermost definitions holding ``lines``, and whether any line is at module level."""
    hit: dict[str, Span] = {}
    module_level = False
    for line in sorted(lines):
        holders = [s for s in spans if s.start <= line <= s.end]
        if holders:
            inner = max(holders, key=lambda s: s.start)
            hit[inner.qualname] = inner
        else:
            module_level = True
    return tuple(sorted(hit.values(), key=lambda s: s.start)), module_level


def _hunks(patch: str) -> list[tuple[int, int, int, int]]:
    """Each hunk of a ``-U0`` patch: start and count of its lines on B, then on C."""
    found = []
    for line in patch.splitlines():
        m = _HUNK.match(line)
        if m:
            found.append((int(m.group(1)), int(m.group(2) or "1"), int(m.group(3)), int(m.group(4) or "1")))
    return found


def _hunk_lines(patch: str, neighbours: bool = True) -> tuple[set[int], set[int]]:
    """Lines the patch touches on each side; a pure insertion or deletion touches both
    neighbours on the side that lost or gained nothing, unless ``neighbours`` is False."""
    old: set[int] = set()
    new: set[int] = set()
    for a, b, c, d in _hunks(patch):
        old.update(range(a, a + b) if b or not neighbours else (a, a + 1))
        new.update(range(c, c + d) if d or not neighbours else (c, c + 1))
    return old, new


def _body_holding(first: int, last: int, tree: ast.Module) -> str | None:
    """The innermost definition whose body (after its header) holds lines ``first``-``last``."""
    found = None
    for name, node in defined(tree):  # outer before inner: the last to hold them is the innermost
        if header_end(node) < first and last <= (node.end_lineno or node.lineno):
            found = name
    return found


def _new_definitions(first: int, last: int, c_tree: ast.Module, on_b: Mapping[str, Span]) -> bool:
    """Whether C's lines ``first``-``last`` hold whole definitions B does not have, and beside them
    only blank lines and comments: no statement of the module's own, no line of B's code."""
    spans = [s for s in _spans(c_tree) if s.start <= last and first <= s.end]
    if not spans or any(s.qualname in on_b or s.start < first or s.end > last for s in spans):
        return False
    held = {line for s in spans for line in range(s.start, s.end + 1)}
    definitions = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    statements = [
        (first_line(node) if isinstance(node, definitions) else node.lineno, node.end_lineno or node.lineno)
        for node in c_tree.body
    ]
    return all(
        line in held or not any(start <= line <= end for start, end in statements) for line in range(first, last + 1)
    )


def insertions_held(patch: str, b_defs: list[Span], c_tree: ast.Module) -> tuple[set[int], tuple[Span, ...]]:
    """B's lines the patch touches, and the definitions on B whose bodies got a pure insertion.

    A pure insertion touches no line of B: the lines on either side of it stand for it. Where
    the inserted lines lie in the body of a definition B has too (lines appended to a method),
    that definition alone changed -- its neighbour after it, a blank line of the class around it
    or the next method, did not: humanfriendly's fix appends an assertion to one test method,
    and the neighbours made its whole test class changed, every test of it reaching it. Where
    they are whole new definitions (a helper inserted between two functions), no definition of
    B's changed: the function after it stood for the insertion, and every test reaching it was
    selected (an independent check, mistune). What binds the new names is the module's change
    (``modchange``)."""
    on_b = {s.qualname: s for s in b_defs}
    lines: set[int] = set()
    held: dict[str, Span] = {}
    for a, b, c, d in _hunks(patch):
        name = _body_holding(c, c + d - 1, c_tree) if not b and d else None
        if name in on_b:
            held[name] = on_b[name]
        elif not b and d and _new_definitions(c, c + d - 1, c_tree, on_b):
            continue
        else:
            lines.update(range(a, a + b) if b else (a, a + 1))
    return lines, tuple(held.values())


def compute(repo: str, b: str, c: str, python_files: tuple[str, ...]) -> Diff:
    out = gitops.diff(repo, ["--name-status", "-z", "--no-renames", b, c]).decode()
    parts = [p for p in out.split("\0") if p]
    changes = [
        FileChange(path, status[0], kind_of(path, python_files))
        for status, path in zip(parts[0::2], parts[1::2], strict=True)
    ]
    read = [ch for ch in changes if ch.kind in (FileKind.SOURCE, FileKind.TEST) and ch.path.endswith(".py")]
    # Both sides of every such file, and the modified ones' patches, each in one git process.
    gitops.show_ahead(repo, [(side, ch.path) for ch in read for side in _sides(ch.status, b, c)])
    patched = gitops.patches(repo, b, c, [ch.path for ch in read if ch.status not in "AD"])
    symbols = {ch.path: _symbols(repo, b, c, ch, patched.get(ch.path)) for ch in read}
    return Diff(tuple(symbols.get(ch.path, ch) for ch in changes))


def _sides(status: str, b: str, c: str) -> tuple[str, ...]:
    """The commits holding a file of this status: an added one is on C alone, a deleted on B."""
    return (c,) if status == "A" else (b,) if status == "D" else (b, c)


def _source(repo: str, commit: str, path: str) -> str:
    return gitops.show(repo, commit, path).decode("utf-8", "replace")


def _parsed(source: str) -> ast.Module | None:
    try:
        return syntax.parse(source)
    except (SyntaxError, ValueError):
        return None


def _symbols(repo: str, b: str, c: str, change: FileChange, patch: str | None) -> FileChange:
    """``patch``: the file's ``git diff -U0`` when read ahead (``gitops.patches``)."""
    path, status, kind = change.path, change.status, change.kind
    if status == "A":
        text = _source(repo, c, path)
        tree = _parsed(text)
        every = frozenset(range(1, text.count("\n") + 2))
        added = tuple(_spans(tree)) if tree else ()
        return FileChange(path, "A", kind, (), added, True, every, side_effects=("a new module",))
    if status == "D":
        text = _source(repo, b, path)
        tree = _parsed(text)
        deleted = tuple(_spans(tree)) if tree else ()
        return FileChange(path, "D", kind, deleted, (), True, side_effects=("a deleted module",), b_source=text)
    if patch is None:
        patch = gitops.diff(repo, ["-U0", b, c, "--", path]).decode("utf-8", "replace")
    new_lines = _hunk_lines(patch)[1]
    b_text, c_text = _source(repo, b, path), _source(repo, c, path)
    b_tree, c_tree = _parsed(b_text), _parsed(c_text)
    written = frozenset(new_lines)
    if b_tree is None or c_tree is None:  # unparsable on one side: everything in it counts as changed
        side = "B" if b_tree is None else "C"
        b_all, c_all = tuple(_spans(b_tree)) if b_tree else (), tuple(_spans(c_tree)) if c_tree else ()
        why = ("it does not parse on %s" % side,)
        return FileChange(path, status, kind, b_all, c_all, True, written, side_effects=why, b_source=b_text)
    b_defs = _spans(b_tree)
    touched, held = insertions_held(patch, b_defs, c_tree)
    b_spans, b_module = attribute(touched, b_defs)
    b_spans = tuple(sorted(dict.fromkeys((*b_spans, *held)), key=lambda span: span.start))
    c_spans, c_module = attribute(new_lines, _spans(c_tree))
    module = module_change(b_tree, c_tree, *_hunk_lines(patch, neighbours=False))
    executors = tuple(s for s in b_defs if s.qualname in module.executors)
    effects = module.side_effects
    if kind is FileKind.TEST:
        effects += applied_unnamed(b_tree, c_tree, module.names)
    return FileChange(
        path,
        status,
        kind,
        b_spans,
        c_spans,
        b_module or c_module,
        written,
        module.names,
        effects,
        executors,
        b_text,
    )
