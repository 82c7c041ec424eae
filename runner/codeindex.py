"""B's Python files as the selection reads them: definitions with what they read, and the
module-level units (``names.units``) that run at import.

A recorded key ``path:line`` (a code object's first line, or any executed line under coverage.py)
is attributed to the innermost definition holding the line. Some definitions run once for many
tests, so the record holds them for one test only: *shared* definitions -- a fixture scoped wider
than a function, a module or class setup (``setup_module``, ``setUpClass``, ...) and a pytest hook
(a ``pytest_*`` function in a conftest, named as one of pytest's hooks, or marked ``hookimpl``).
A file that defines a hook or a fixture is a *plugin*: pytest may load it without any test
importing it.

Files are read on demand: a file is parsed only once one of the names the selection follows
occurs in its text, and a definition's code is walked only once one occurs in its lines.
"""

from __future__ import annotations

import ast
import functools
import posixpath
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace

import _pytest.hookspec

from pytest_evidence import syntax
from runner.names import (
    DefNode,
    Imported,
    Reads,
    Unit,
    defined,
    first_line,
    header,
    imports,
    literal_names,
    local_names,
    own_code,
    reads,
    units,
)
from runner.pyscan import dotted

_IDENTIFIER = re.compile(r"[^\W\d]\w*")
_STAR_IMPORT = re.compile(r"\bimport\s+\*")
#: What runs a string as code.
_RUNS_TEXT = frozenset({"exec", "eval", "compile", "builtins.exec", "builtins.eval", "builtins.compile"})

#: The word a file holds when it star-imports: what it binds is named in another file.
STAR = "*"
#: The hooks pytest itself specifies.
HOOKS = frozenset(name for name in dir(_pytest.hookspec) if name.startswith("pytest_"))
_SETUPS = frozenset(
    {
        *("setup_module", "teardown_module", "setUpModule", "tearDownModule"),
        *("setup_class", "teardown_class", "setUpClass", "tearDownClass"),
    }
)


@dataclass(frozen=True)
class Definition:
    qualname: str
    start: int
    end: int
    kind: str  # "function", "method" (a function in a class body) or "class"
    words: frozenset[str]  # the identifiers in its lines: a superset of what ``reads`` names
    shared: str  # why it runs once for many tests ("": each test that needs it reaches it)
    autouse: bool  # it applies to every test in its scope without being named
    node: DefNode = field(compare=False, repr=False)

    @property
    def name(self) -> str:
        return self.qualname.rpartition(".")[2]

    @functools.cached_property
    def reads(self) -> Reads:
        """What its own code reads (``names.own_code``), and the fixtures it requests; a
        function's bare names less its locals (``names.local_names``)."""
        found = reads(*own_code(self.node))
        if isinstance(self.node, ast.ClassDef):
            return found
        outside = reads(*header(self.node)).names  # its defaults and decorators read the module's
        return replace(found, names=found.names - (local_names(self.node) - outside))


@dataclass(frozen=True)
class FileIndex:
    definitions: tuple[Definition, ...]
    units: tuple[Unit, ...]
    imports: tuple[Imported, ...]  # every import in the file, wherever it stands
    innermost: tuple[int, ...]  # per line (index 0 unused): the innermost definition holding it, -1 none
    plugin: bool  # it defines a pytest hook or a fixture
    literals: frozenset[str] = frozenset()  # names bound to built-in containers only (``names.literal_names``)
    named: frozenset[str] = frozenset()  # the words its code names (``named``): not its comments or docstrings


def _constant(node: ast.expr) -> str:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else "dynamically"


def _is_hook(node: DefNode, conftest: bool) -> bool:
    if isinstance(node, ast.ClassDef) or not node.name.startswith("pytest_"):
        return False
    marked = any(dotted(d).rpartition(".")[2] == "hookimpl" for d in node.decorator_list)
    return conftest or marked or node.name in HOOKS


def shared(node: DefNode, conftest: bool, aliases: Mapping[str, ast.expr] | None = None) -> tuple[str, bool]:
    """``(why it runs once for many tests, whether it applies unnamed)``; ``("", False)`` if not.
    ``aliases``: the file's ``fixture_aliases``."""
    if isinstance(node, ast.ClassDef):
        return "", False
    if _is_hook(node, conftest):
        return "pytest hook", True
    if node.name in _SETUPS:
        return "module or class setup", True
    for decorator in (_aliased(d, aliases or {}) for d in node.decorator_list):
        if dotted(decorator).rpartition(".")[2] not in _FIXTURE:
            continue
        scope, autouse = "function", False
        if isinstance(decorator, ast.Call):
            if decorator.args:
                scope = _constant(decorator.args[0])
            for keyword in decorator.keywords:
                if keyword.arg == "scope":
                    scope = _constant(keyword.value)
                elif keyword.arg == "autouse":
                    autouse = not (isinstance(keyword.value, ast.Constant) and not keyword.value.value)
        if scope != "function":
            return "%s-scoped fixture" % scope, autouse
    return "", False


_FIXTURE = ("fixture", "yield_fixture")


def _is_fixture(node: DefNode, aliases: Mapping[str, ast.expr]) -> bool:
    return any(dotted(_aliased(d, aliases)).rpartition(".")[2] in _FIXTURE for d in node.decorator_list)


def fixture_aliases(tree: ast.Module) -> dict[str, ast.expr]:
    """Module-level names bound to pytest's fixture decorator, or to a call of it, and what they
    stand for: ``once = pytest.fixture(scope="module", autouse=True)`` makes ``@once`` a
    module-scoped autouse fixture; ``from pytest import fixture as fx`` makes ``@fx`` one."""
    found: dict[str, ast.expr] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
            if isinstance(target, ast.Name) and dotted(statement.value).rpartition(".")[2] in _FIXTURE:
                found[target.id] = statement.value
        for imported in imports(statement) if isinstance(statement, ast.ImportFrom) else ():
            if imported.name in _FIXTURE and imported.bound != imported.name:
                found[imported.bound] = ast.Name(imported.name, ast.Load())
    return found


def _aliased(decorator: ast.expr, aliases: Mapping[str, ast.expr]) -> ast.expr:
    """``decorator`` with an alias of the fixture decorator replaced by what it stands for."""
    name = decorator.func if isinstance(decorator, ast.Call) else decorator
    target = aliases.get(dotted(name, calls=False)) if isinstance(name, ast.Name) else None
    if target is None:
        return decorator
    if isinstance(decorator, ast.Call):  # ``@fx(scope=...)``: the call, under the decorator's own name
        return ast.Call(target, decorator.args, decorator.keywords)
    return target


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement in ``body``, nested ones included (an import stands anywhere)."""
    for node in body:
        yield node
        for _, value in ast.iter_fields(node):
            for item in value if isinstance(value, list) else ():
                if isinstance(item, ast.stmt):
                    yield from _statements([item])
                elif isinstance(item, (ast.ExceptHandler, ast.match_case)):
                    yield from _statements(item.body)


def index_source(text: str, conftest: bool = False) -> FileIndex | None:
    """The index of one file's text; None when it does not parse."""
    try:
        tree = syntax.parse(text)
    except (SyntaxError, ValueError):
        return None
    lines = text.splitlines()
    nodes = list(syntax.walk(tree))
    found: list[Definition] = []
    classes: set[str] = set()
    plugin = False
    aliases = fixture_aliases(tree)
    for qualname, node in defined(tree):
        why, autouse = shared(node, conftest, aliases)
        start, end = first_line(node), node.end_lineno or node.lineno
        words = frozenset(_IDENTIFIER.findall("\n".join(lines[start - 1 : end])))
        if isinstance(node, ast.ClassDef):
            kind = "class"
            classes.add(qualname)
        else:
            kind = "method" if qualname.rpartition(".")[0] in classes else "function"
        found.append(Definition(qualname, start, end, kind, words, why, autouse, node))
        plugin = plugin or _is_hook(node, conftest) or _is_fixture(node, aliases)
    innermost = [-1] * (len(lines) + 2)
    for at, definition in enumerate(found):  # outer before inner: the inner one writes last
        for line in range(definition.start, min(definition.end, len(innermost) - 1) + 1):
            innermost[line] = at
    every = tuple(i for node in _statements(tree.body) for i in imports(node))
    return FileIndex(
        tuple(found), tuple(units(tree)), every, tuple(innermost), plugin, literal_names(nodes), named(nodes)
    )


def named(nodes: Sequence[ast.AST]) -> frozenset[str]:
    """The identifiers the code of a file's ``nodes`` (``ast.walk``'s) holds -- names,
    attributes, parameters, keywords, imported names -- and the words of its string values
    (``setattr(cls, "__init_subclass__", f)`` names a hook too). A comment or a string standing
    alone as a statement (a docstring) names nothing at run time: ``# ABCMeta as metaclass`` in a
    comment is no metaclass -- unless the file may run text as code (``exec(__doc__)``)."""
    alone: set[int] = set()
    found: set[str] = set()
    unsaid: set[str] = set()  # the words of the strings standing alone
    runs_text = False
    for node in nodes:  # ``ast.walk``'s, breadth first: an ``Expr`` comes before the string it holds
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            alone.add(id(node.value))
        elif isinstance(node, (ast.Name, ast.Attribute)) and not runs_text:
            runs_text = dotted(node) in _RUNS_TEXT
        words = unsaid if id(node) in alone else found
        for _, value in ast.iter_fields(node):
            for text in value if isinstance(value, list) else [value]:
                if isinstance(text, str):
                    words.update(_IDENTIFIER.findall(text))
    return frozenset(found | unsaid if runs_text else found)


class Project:
    """B's Python files, read through ``read`` (None: not on B, or not to be read as B's)."""

    def __init__(self, paths: Iterable[str], read: Callable[[str], str | None]) -> None:
        self._read = read
        self._paths = sorted(set(paths))
        self._words: dict[str, frozenset[str]] = {}
        self._indexes: dict[str, FileIndex | None] = {}

    def words(self, path: str) -> frozenset[str]:
        """The identifiers in a file's text, and ``STAR`` if it star-imports."""
        if path not in self._words:
            text = self._read(path) or ""
            star = {STAR} if _STAR_IMPORT.search(text) else set()
            self._words[path] = frozenset(_IDENTIFIER.findall(text)) | star
        return self._words[path]

    def mentioning(self, words: Collection[str]) -> list[str]:
        """Files whose text holds one of ``words`` as an identifier (a superset of the AST's)."""
        wanted = frozenset(words)
        return [p for p in self._paths if not self.words(p).isdisjoint(wanted)]

    def index(self, path: str) -> FileIndex | None:
        if path not in self._indexes:
            text = self._read(path)
            conftest = posixpath.basename(path) == "conftest.py"
            self._indexes[path] = index_source(text, conftest) if text is not None else None
        return self._indexes[path]
