"""What the candidate changed, relative to B: files by kind, and symbols by AST.

A changed line is attributed to the innermost function or class whose span (decorators
included) holds it, on B's side and on C's side; a changed line outside every definition is a
module-level change. B's spans are what the per-test dependency data recorded on B is matched
against.
"""

from __future__ import annotations

import ast
import enum
import fnmatch
import posixpath
import re
from dataclasses import dataclass

from pytest_evidence import gitops, overlay

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
    tree = ast.parse(source)
    found: list[Span] = []

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                start = min([node.lineno] + [d.lineno for d in node.decorator_list])
                name = prefix + node.name
                found.append(Span(name, start, node.end_lineno or node.lineno))
                walk(node.body, name + ".")

    walk(tree.body, "")
    return found


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


def _hunk_lines(patch: str) -> tuple[set[int], set[int]]:
    old: set[int] = set()
    new: set[int] = set()
    for line in patch.splitlines():
        m = _HUNK.match(line)
        if not m:
            continue
        a, b = int(m.group(1)), int(m.group(2) or "1")
        c, d = int(m.group(3)), int(m.group(4) or "1")
        old.update(range(a, a + b) if b else (a, a + 1))  # a pure insertion touches both neighbours
        new.update(range(c, c + d) if d else (c, c + 1))
    return old, new


def compute(repo: str, b: str, c: str, python_files: tuple[str, ...]) -> Diff:
    out = gitops.git(["diff", "--name-status", "-z", "--no-renames", b, c], cwd=repo).stdout.decode()
    parts = [p for p in out.split("\0") if p]
    changes: list[FileChange] = []
    for status, path in zip(parts[0::2], parts[1::2], strict=True):
        kind = kind_of(path, python_files)
        change = FileChange(path, status[0], kind)
        if kind is FileKind.SOURCE and path.endswith(".py"):
            change = _symbols(repo, b, c, change)
        changes.append(change)
    return Diff(tuple(changes))


def _source(repo: str, commit: str, path: str) -> str:
    return gitops.show(repo, commit, path).decode("utf-8", "replace")


def _safe_definitions(source: str) -> list[Span] | None:
    try:
        return definitions(source)
    except (SyntaxError, ValueError):
        return None


def _symbols(repo: str, b: str, c: str, change: FileChange) -> FileChange:
    if change.status == "A":
        text = _source(repo, c, change.path)
        added = _safe_definitions(text) or []
        every = frozenset(range(1, text.count("\n") + 2))
        return FileChange(change.path, "A", change.kind, (), tuple(added), True, every)
    if change.status == "D":
        deleted = _safe_definitions(_source(repo, b, change.path)) or []
        return FileChange(change.path, "D", change.kind, tuple(deleted), (), True)
    patch = gitops.git(["diff", "-U0", b, c, "--", change.path], cwd=repo).stdout.decode("utf-8", "replace")
    old_lines, new_lines = _hunk_lines(patch)
    b_defs = _safe_definitions(_source(repo, b, change.path))
    c_defs = _safe_definitions(_source(repo, c, change.path))
    written = frozenset(new_lines)
    if b_defs is None or c_defs is None:  # unparsable on one side: everything in it counts as changed
        return FileChange(
            change.path, change.status, change.kind, tuple(b_defs or ()), tuple(c_defs or ()), True, written
        )
    b_spans, b_module = attribute(old_lines, b_defs)
    c_spans, c_module = attribute(new_lines, c_defs)
    return FileChange(change.path, change.status, change.kind, b_spans, c_spans, b_module or c_module, written)
