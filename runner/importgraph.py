"""The static import graph of a checkout: which project files a file reaches through imports.

Static and conservative: every ``import`` statement counts, wherever it stands (inside a
function, under ``if TYPE_CHECKING``), because selection must over-approximate. Importing
``a.b.c`` also executes ``a/__init__.py`` and ``a/b/__init__.py``, so those count too.
"""

from __future__ import annotations

import ast
import os
import pathlib
from collections.abc import Iterable, Sequence

from pytest_evidence import syntax
from runner.pyscan import import_statements

SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".venv",
        "venv",
        "env",
        ".tox",
        ".nox",
        "node_modules",
        "build",
        "dist",
        "__pycache__",
        ".eggs",
        "site-packages",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
    }
)


def python_files(checkout: pathlib.Path) -> list[str]:
    found = []
    for dirpath, dirnames, filenames in os.walk(checkout):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.endswith(".egg-info"))
        rel = os.path.relpath(dirpath, checkout)
        for name in sorted(filenames):
            if name.endswith(".py"):
                found.append(name if rel == "." else "%s/%s" % (rel.replace(os.sep, "/"), name))
    return found


def module_of(path: str, roots: Sequence[str]) -> str | None:
    """Dotted module name of ``path`` under the first import root that holds it."""
    if not path.endswith(".py"):
        return None
    for root in sorted(roots, key=len, reverse=True):  # "src" before ""
        prefix = root.rstrip("/") + "/" if root else ""
        if path.startswith(prefix):
            parts = path[len(prefix) : -3].split("/")
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if parts and all(p.isidentifier() for p in parts):
                return ".".join(parts)
    return None


#: Top-level files that are tools of the repository, not modules of its library.
TOOL_SCRIPTS = frozenset(
    {"setup", "conftest", "noxfile", "toxfile", "tasks", "fabfile", "dodo", "runtests", "hatch_build", "bootstrap"}
)


def owned_module(checkout: pathlib.Path, path: str, roots: Sequence[str]) -> str | None:
    """The module name of ``path`` if the repository's library owns it, else None.

    Owned: a module inside a package (every directory from its import root down holds an
    ``__init__.py``), or a top-level module at an import root that is not one of the
    repository's tool scripts. ``docs/conf.py``, ``setup.py``, scripts and examples are not
    owned: importing them runs a build or needs tools the tests never install.
    """
    name = module_of(path, roots)
    if name is None:
        return None
    parts = name.split(".")
    root = path[: len(path) - len("/".join(parts)) - (len("/__init__.py") if path.endswith("__init__.py") else 3)]
    base = checkout / root if root else checkout
    packages = parts if path.endswith("__init__.py") else parts[:-1]
    if not packages:
        return None if parts[0] in TOOL_SCRIPTS else name
    for depth in range(1, len(packages) + 1):
        if not (base.joinpath(*packages[:depth]) / "__init__.py").is_file():
            return None
    return name


class ImportGraph:
    def __init__(self, checkout: pathlib.Path, roots: list[str]) -> None:
        self.checkout = checkout
        self.roots = roots
        self.files = python_files(checkout)
        self.module_file: dict[str, str] = {}
        for path in self.files:
            name = module_of(path, roots)
            if name is not None and name not in self.module_file:
                self.module_file[name] = path
        self.file_module = {v: k for k, v in self.module_file.items()}
        self._parts = {part for name in self.module_file for part in name.split(".")}
        self._edges: dict[str, set[str]] = {}

    def absolute(self, path: str, module: str, level: int) -> str:
        """The dotted name ``from {"." * level}{module} import ...`` means in ``path``."""
        if not level:
            return module
        me = self.file_module.get(path, "")
        package = me if path.endswith("__init__.py") else me.rpartition(".")[0]
        parts = package.split(".") if package else []
        parts = parts[: len(parts) - (level - 1)] if level > 1 else parts
        return ".".join(p for p in [*parts, module] if p)

    def owns(self, name: str) -> bool:
        """Whether ``name`` may be one of the project's modules (its first part names one of
        them, or a part of one: a test directory on ``sys.path`` imports ``conftest``)."""
        return name.split(".")[0] in self._parts

    def imports(self, path: str) -> set[str]:
        """Dotted names ``path`` imports (``from a import b``: ``a`` and ``a.b``), wherever the
        statement stands."""
        try:
            tree = syntax.parse((self.checkout / path).read_bytes())
        except (SyntaxError, ValueError, OSError):
            return set()
        names: set[str] = set()
        for node in import_statements(tree):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = self.absolute(path, node.module or "", node.level)
                names.add(base)
                names.update("%s.%s" % (base, alias.name) if base else alias.name for alias in node.names)
        return names

    def edges(self, path: str) -> set[str]:
        """Project files ``path`` imports directly (parent packages included)."""
        if path not in self._edges:
            found = set()
            for name in self.imports(path):
                parts = name.split(".")
                for i in range(1, len(parts) + 1):
                    target = self.module_file.get(".".join(parts[:i]))
                    if target is not None and target != path:
                        found.add(target)
            self._edges[path] = found
        return self._edges[path]

    def closure(self, starts: Iterable[str]) -> set[str]:
        """Every project file reachable from ``starts`` (the starts included)."""
        seen = set()
        todo = [s for s in starts if s in self.files or (self.checkout / s).is_file()]
        while todo:
            path = todo.pop()
            if path in seen:
                continue
            seen.add(path)
            todo.extend(self.edges(path) - seen)
        return seen

    @staticmethod
    def packages_of(path: str) -> list[str]:
        """Where the ``__init__.py`` of every directory above a file stands, innermost first,
        whether it is there or not: pytest imports a package's before the test modules it
        collects under it (a directory without one in between does not stop it)."""
        parts = path.split("/")[:-1]
        return ["/".join([*parts[:i], "__init__.py"]) for i in range(len(parts), 0, -1)]

    def conftests_for(self, path: str) -> list[str]:
        """conftest.py files that apply to a test file: its directory and every parent."""
        parts = path.split("/")[:-1]
        found = []
        for i in range(len(parts) + 1):
            candidate = "/".join([*parts[:i], "conftest.py"])
            if (self.checkout / candidate).is_file():
                found.append(candidate)
        return found
