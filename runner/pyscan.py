"""AST questions the referee asks of Python source: is this a skip, an assertion, a hook, an attack?

Shared by the test-integrity check (what did the candidate do to the tests) and the source
interference scan (what does the candidate's library code do to the test framework). Pure: it
reads source text and answers with line numbers, never imports or runs anything.
"""

from __future__ import annotations

import ast
import fnmatch
import re
import unittest
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from pytest_evidence import syntax

#: Decorators and calls that turn a test into a non-test.
SKIP_NAMES = frozenset({"skip", "skipif", "xfail", "importorskip", "skipTest", "skipUnless", "expectedFailure"})
#: Methods that change a mapping in place (applied to ``sys.modules``: swapping the code under test).
SUT_MUTATORS = frozenset({"__setitem__", "__delitem__", "update", "pop", "setdefault", "clear", "popitem"})
#: Calls that end a pytest session (or its whole process) from inside a test file.
PROCESS_EXITS = frozenset({"os._exit", "pytest.exit", "sys.exit", "os.kill", "os.abort"})
COMPARISONS = frozenset({"__eq__", "__ne__", "__hash__"})
ASSERTING_CALLS = frozenset({"raises", "warns", "approx", "fail"})


@dataclass(frozen=True)
class Hit:
    """One finding in source: a detail slug, the line, and a sentence for the reader."""

    detail: str
    line: int
    message: str


def dotted(node: ast.AST, calls: bool = True) -> str:
    """``pytest.mark.skip`` for the expression ``pytest.mark.skip`` (and, with ``calls``, for
    ``pytest.mark.skip(...)``); "" for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value, calls)
        return base + "." + node.attr if base else ""
    if calls and isinstance(node, ast.Call):
        return dotted(node.func)
    return ""


#: What holds statements: statements, their exception handlers and match cases.
_STATEMENT_HOLDERS = (ast.stmt, ast.excepthandler, ast.match_case)


def import_statements(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements anywhere in ``tree``, in ``ast.walk``'s order. Only what holds
    statements is walked -- an import is a statement, never part of an expression -- which is a
    tenth of a module's nodes: the import graph asks this of every file of a checkout."""
    for node in syntax.walk(tree, into=_STATEMENT_HOLDERS):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node


def import_aliases(tree: ast.AST) -> dict[str, str]:
    """Local names bound by imports anywhere in the tree, each with the dotted name it stands for.

    The ``mock`` backport counts as ``unittest.mock``; ``from m import *`` binds ``*m``.
    """
    found: dict[str, str] = {}
    for node in import_statements(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    found[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    found[top] = top
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                if alias.name == "*":
                    found["*" + normal_module(node.module)] = node.module
                else:
                    found[alias.asname or alias.name] = node.module + "." + alias.name
    return found


def normal_module(name: str) -> str:
    """``unittest.mock`` for the ``mock`` backport's names; any other name as it is."""
    return "unittest." + name if name == "mock" or name.startswith("mock.") else name


def canonical(node: ast.AST, aliases: Mapping[str, str]) -> str:
    """The dotted name an expression stands for, through the file's imports: ``environ.get`` after
    ``from os import environ`` is ``os.environ.get``; "" for what is not a dotted name."""
    name = dotted(node, calls=False)
    if not name:
        return ""
    head, dot, rest = name.partition(".")
    return normal_module(aliases.get(head, head) + dot + rest)


def parse(source: bytes) -> ast.Module | None:
    try:
        return syntax.parse(source)
    except (SyntaxError, ValueError):
        return None


def definitions(tree: ast.Module) -> dict[tuple[str, ...], ast.AST]:
    """Every function and class, by qualified name parts (methods under their class)."""
    found: dict[tuple[str, ...], ast.AST] = {}

    def walk(body: list[ast.stmt], prefix: tuple[str, ...]) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                key = (*prefix, node.name)
                found[key] = node
                if isinstance(node, ast.ClassDef):
                    walk(node.body, key)

    walk(tree.body, ())
    return found


def doctest_owner(tree: ast.Module, path: str, name: str) -> bool:
    """Whether the module at ``path`` still holds what pytest's doctest item ``name`` was the
    docstring of. The name is the module's dotted name (how it was imported: some tail of the
    path) then the object's qualified name: ``calc.ops.Ops.half`` in ``src/calc/ops.py``. The
    module itself always exists; a function or class must be defined under that name, at any
    depth of ``if``/``try``/``with`` blocks. An entry of ``__test__`` is a test and nothing else:
    it is never gone with code."""
    if ".__test__." in name:
        return True
    parts = [p for p in re.sub(r"\.py$", "", path).split("/") if p]
    if parts and parts[-1] == "__init__":
        parts.pop()
    defined = _reachable_definitions(tree.body, ())
    for start in range(len(parts)):
        module = ".".join(parts[start:])
        if name == module:
            return True
        if name.startswith(module + ".") and tuple(name[len(module) + 1 :].split(".")) in defined:
            return True
    return False


def _reachable_definitions(body: Sequence[ast.stmt], prefix: tuple[str, ...]) -> set[tuple[str, ...]]:
    """What a module or class body defines as attributes, by qualified name parts: functions and
    classes, also inside ``if``/``try``/``with``/loop blocks (a fallback import, a version
    check), which run at the same level."""
    found: set[tuple[str, ...]] = set()
    for node in _at_level(body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add((*prefix, node.name))
            if isinstance(node, ast.ClassDef):
                found |= _reachable_definitions(node.body, (*prefix, node.name))
    return found


def _at_level(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements a module or class body runs at its own level: its own, and those of its
    ``if``/``try``/``with``/loop/``match`` blocks -- not what a function or class body holds."""
    for node in body:
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            yield from _at_level(getattr(node, field, []))
        for clause in (*getattr(node, "handlers", ()), *getattr(node, "cases", ())):
            yield from _at_level(clause.body)


def _matches(name: str, patterns: Sequence[str]) -> bool:
    """pytest's rule for ``python_classes`` / ``python_functions``: a prefix, or a glob pattern."""
    return any(name.startswith(p) or (any(c in p for c in "*?[") and fnmatch.fnmatch(name, p)) for p in patterns)


@dataclass(frozen=True)
class Naming:
    """Which definitions are tests: ``python_functions`` and ``python_classes`` of the trusted config."""

    functions: tuple[str, ...] = ("test",)
    classes: tuple[str, ...] = ("Test",)

    def test_name(self, name: str, method: bool = False) -> bool:
        """A test function's name (a method's also by unittest's ``test`` prefix)."""
        return _matches(name, self.functions) or (method and name.startswith("test"))

    def is_test(self, key: tuple[str, ...], node: ast.AST) -> bool:
        """A test function or method."""
        return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and self.test_name(key[-1], len(key) > 1)

    def test_class_name(self, name: str) -> bool:
        return _matches(name, self.classes)

    def is_test_class(self, node: ast.AST) -> bool:
        """A class pytest collects: named by ``python_classes``, or a ``unittest.TestCase``."""
        if not isinstance(node, ast.ClassDef):
            return False
        return self.test_class_name(node.name) or any(dotted(b).endswith("TestCase") for b in node.bases)

    def test_ids(self, path: str, defs: Mapping[tuple[str, ...], ast.AST], key: tuple[str, ...]) -> set[str]:
        """Node ids (``path::name``, ``path::Class::name``) of the tests at or under ``key``."""
        found = set()
        for sub, node in defs.items():
            if sub[: len(key)] != key or not self.is_test(sub, node):
                continue
            if all(self.is_test_class(defs[sub[:i]]) for i in range(1, len(sub))):
                found.add("::".join((path, *sub)))
        return found


DEFAULT_NAMING = Naming()


def is_fixture(node: ast.AST) -> bool:
    decorators = getattr(node, "decorator_list", [])
    return any(dotted(d).split(".")[-1] in ("fixture", "yield_fixture") for d in decorators)


def fixture_name(node: ast.AST) -> str | None:
    """The name a fixture is requested by (``name=`` of its decorator, else the function's), or None."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or not is_fixture(node):
        return None
    for deco in node.decorator_list:
        if isinstance(deco, ast.Call) and dotted(deco.func).split(".")[-1] in ("fixture", "yield_fixture"):
            for kw in deco.keywords:
                if kw.arg == "name" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
                    return kw.value.value
    return node.name


def is_autouse(node: ast.AST) -> bool:
    for deco in getattr(node, "decorator_list", []):
        if isinstance(deco, ast.Call) and dotted(deco.func).split(".")[-1] in ("fixture", "yield_fixture"):
            for kw in deco.keywords:
                if kw.arg == "autouse" and not (isinstance(kw.value, ast.Constant) and not kw.value.value):
                    return True
    return False


def requested_fixtures(tree: ast.Module, naming: Naming = DEFAULT_NAMING) -> set[str]:
    """Fixture names the module's tests and fixtures request: their parameters, ``usefixtures`` marks."""
    found: set[str] = set()
    for key, node in definitions(tree).items():
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
            naming.is_test(key, node) or is_fixture(node)
        ):
            args = node.args
            found.update(a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs))
    for node in syntax.walk(tree):
        if isinstance(node, ast.Call) and dotted(node.func).split(".")[-1] == "usefixtures":
            found.update(a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str))
    return found - {"self", "cls", "request"}


def bindings(body: Sequence[ast.stmt]) -> dict[str, set[str]]:
    """Names a module (or class) body binds outside its definitions, each with what binds it.

    An import binds ``import:module:name``; anything else (an assignment, a loop, ``with``)
    ``assign``. Statements nested in ``if``/``try``/``with``/``for`` count: they run at import.
    """
    found: dict[str, set[str]] = {}

    def add(name: str, how: str) -> None:
        found.setdefault(name, set()).add(how)

    def targets(node: ast.AST) -> None:
        for sub in syntax.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                add(sub.id, "assign")

    def walk(stmts: Sequence[ast.stmt]) -> None:
        for node in stmts:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    name = alias.asname or alias.name.split(".")[0]
                    add(name, "import:%s" % (alias.name if alias.asname else name))
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    module = "." * node.level + (node.module or "")
                    add(alias.asname or alias.name, "import:%s:%s" % (module, alias.name))
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    targets(target)
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)):
                for item in [node.target] if isinstance(node, (ast.For, ast.AsyncFor)) else node.items:
                    targets(item)
                walk(node.body)
                walk(getattr(node, "orelse", []))
            elif isinstance(node, ast.If):
                walk(node.body)
                walk(node.orelse)
            elif isinstance(node, ast.Try):
                walk(node.body)
                walk(node.orelse)
                walk(node.finalbody)
                for handler in node.handlers:
                    walk(handler.body)
            elif isinstance(node, (ast.Expr, ast.Return)):
                targets(node)  # walrus

    walk(body)
    return found


def used_names(node: ast.AST) -> set[str]:
    """Names ``node`` reads (the base of ``a.b.c`` is ``a``)."""
    return {sub.id for sub in syntax.walk(node) if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load)}


_ROUGH = re.compile(r"^(?P<indent>[ \t]*)(?:async[ \t]+)?(?P<what>def|class)[ \t]+(?P<name>\w+)(?P<rest>.*)$")


def rough_definitions(text: str) -> dict[tuple[str, ...], str]:
    """Functions, classes and their methods found line by line in source that does not parse.

    Values say ``def``, ``class`` or ``testcase`` (a class naming ``TestCase`` among its bases).
    Good enough to name the tests a broken file meant to add; never used to judge one.
    """
    found: dict[tuple[str, ...], str] = {}
    cls: str | None = None
    for line in text.splitlines():
        match = _ROUGH.match(line)
        if match is None:
            if line.strip() and not line[0].isspace() and not line.lstrip().startswith(("#", "@")):
                cls = None
            continue
        if not match["indent"]:
            cls = match["name"] if match["what"] == "class" else None
            kind = "testcase" if match["what"] == "class" and "TestCase" in match["rest"] else match["what"]
            found[(match["name"],)] = kind
        elif cls is not None and match["what"] == "def":
            found[(cls, match["name"])] = "def"
    return found


def skips(node: ast.AST) -> int:
    """Skip, skipif, xfail and importorskip marks, decorators and calls in or on ``node``."""
    count = 0
    for sub in syntax.walk(node):
        if isinstance(sub, ast.Attribute):  # pytest.mark.skip, with or without a call
            parts = dotted(sub).split(".")
            count += parts[-1] in SKIP_NAMES and "mark" in parts
        elif isinstance(sub, ast.Call):  # pytest.skip(), pytest.importorskip(), unittest.skip("...")
            parts = dotted(sub.func).split(".")
            count += parts[-1] in SKIP_NAMES and "mark" not in parts
    for deco in getattr(node, "decorator_list", []):  # @skip, @unittest.expectedFailure
        parts = dotted(deco).split(".")
        count += not isinstance(deco, ast.Call) and parts[-1] in SKIP_NAMES and "mark" not in parts
    return count


def assertions(node: ast.AST) -> int:
    """``assert`` statements, ``self.assert*`` calls and ``pytest.raises``-like checks."""
    count = 0
    for sub in syntax.walk(node):
        if isinstance(sub, ast.Assert):
            count += 1
        elif isinstance(sub, ast.Call):
            last = dotted(sub.func).split(".")[-1]
            count += last.startswith("assert") or last in ASSERTING_CALLS
    return count


def module_level(tree: ast.Module) -> list[ast.stmt]:
    """Statements at module level that are not definitions: imports, assignments, calls."""
    return [n for n in tree.body if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]


def _touches_sys_modules(node: ast.AST) -> bool:
    def is_sys_modules(n: ast.AST) -> bool:
        return dotted(n) == "sys.modules"

    for sub in syntax.walk(node):
        if isinstance(sub, (ast.Assign, ast.AugAssign, ast.Delete)):
            targets = sub.targets if isinstance(sub, (ast.Assign, ast.Delete)) else [sub.target]
            if any(isinstance(t, ast.Subscript) and is_sys_modules(t.value) for t in targets):
                return True
        if isinstance(sub, ast.Call):
            func = sub.func
            if isinstance(func, ast.Attribute) and func.attr in SUT_MUTATORS and is_sys_modules(func.value):
                return True
            if dotted(func).split(".")[-1] in ("setitem", "delitem") and any(is_sys_modules(a) for a in sub.args):
                return True
            if dotted(func) == "patch.dict" or dotted(func).endswith("mock.patch.dict"):
                if sub.args and is_sys_modules(sub.args[0]):
                    return True
    return False


def _imports_pytest_internals(node: ast.AST) -> int | None:
    """Line of an import of pytest internals, else None."""
    for sub in syntax.walk(node):
        if isinstance(sub, ast.Import) and any(a.name.split(".")[0] == "_pytest" for a in sub.names):
            return sub.lineno
        if isinstance(sub, ast.ImportFrom) and (sub.module or "").split(".")[0] == "_pytest":
            return sub.lineno
    return None


#: The test frameworks whose objects decide what an assertion or an outcome says: code that
#: assigns onto one (``unittest.TestCase.assertEqual = ...``) changes every test of the session.
TEST_FRAMEWORKS = frozenset({"pytest", "_pytest", "unittest", "doctest", "pluggy"})
#: What the async plugins run every async test through -- pytest-asyncio's ``asyncio.Runner``
#: (before 1.0, the loop's ``run_until_complete``), anyio's test runners, pytest-trio -- and
#: their own modules: code that assigns onto one rewrites each async test's outcome (an
#: independent check's ``asyncio.Runner.run`` swallowing ``AssertionError`` certified a no-fix).
ASYNC_TEST_RUNNERS = (
    "asyncio.Runner",
    "asyncio.runners",
    "asyncio.BaseEventLoop",
    "asyncio.base_events",
    "asyncio.SelectorEventLoop",
    "asyncio.selector_events",
    "asyncio.unix_events",
    "asyncio.proactor_events",
    "asyncio.AbstractEventLoop",
    "asyncio.events.AbstractEventLoop",
    "pytest_asyncio",
    "anyio.pytest_plugin",
    "anyio._backends",
    "pytest_trio",
)
#: ``unittest`` settings that shape a failure's message only (``TestCase.maxDiff``,
#: ``TestCase.longMessage``, ``unittest.util._MAX_LENGTH``).
_DISPLAY_SETTINGS = frozenset({"maxDiff", "longMessage", "_MAX_LENGTH"})
#: Calls that set, delete or patch an attribute or item of their first argument (by the name's
#: end: ``setattr``, ``monkeypatch.setattr``, ``mock.patch.object``, ``mocker.patch.object``).
_SETTERS = frozenset({"setattr", "delattr", "setitem", "delitem"})
_PATCHERS = ("patch.object", "patch.multiple")
#: What a ``unittest.TestCase`` asserts and runs with: a test class B had that gains one of these,
#: or code that writes one onto ``self``, ``cls`` or ``type(self)``, changes what its tests assert.
TESTCASE_MACHINERY = frozenset(
    {n for n in dir(unittest.TestCase) if n.startswith(("assert", "fail"))}
    | {"failureException", "run", "_callTestMethod", "_callSetUp", "_callTearDown"}
    # the aliases Python 3.12 removed, so that the runner's own version does not change the answer
    | {"assertEquals", "assertNotEquals", "assertAlmostEquals", "assertNotAlmostEquals", "assert_"}
    | {"failUnless", "failIf", "failUnlessEqual", "failIfEqual", "failUnlessRaises"}
    | {"failUnlessAlmostEqual", "failIfAlmostEqual", "assertRegexpMatches", "assertNotRegexpMatches"}
    | {"assertRaisesRegexp", "assertDictContainsSubset"}
)


def _framework(name: str, mock: bool = True) -> bool:
    """A name under a test framework or an async test runner; under ``unittest.mock`` only with
    ``mock``."""
    if any(name == r or name.startswith(r + ".") for r in ASYNC_TEST_RUNNERS):
        return True
    return name.split(".")[0] in TEST_FRAMEWORKS and (mock or not (name + ".").startswith("unittest.mock."))


def _text(node: ast.AST | None) -> str:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""


def framework_object(node: ast.AST, aliases: Mapping[str, str]) -> str:
    """The dotted name of the test framework's object ``node`` stands for ("" for any other): a
    name the file's imports or assignments bind (``framework_names``; a parameter or a local
    named ``doctest`` is not the module), ``sys.modules[...]``, ``importlib.import_module(...)``,
    ``__import__(...)``, ``getattr(X, "name")``, ``vars(X)`` and ``X.__dict__`` (X itself:
    writing into them writes onto X)."""
    name = dotted(node, calls=False)
    if name:
        if name.split(".")[0] not in aliases:
            return ""
        name = canonical(node, aliases)
        name = name[: -len(".__dict__")] if name.endswith(".__dict__") else name
        return name if _framework(name) else ""
    if isinstance(node, ast.Attribute):
        base = framework_object(node.value, aliases)
        return "" if not base else base if node.attr == "__dict__" else base + "." + node.attr
    if isinstance(node, ast.Subscript) and canonical(node.value, aliases) == "sys.modules":
        key = _text(node.slice)
        return key if _framework(key) else ""
    if isinstance(node, ast.Call) and node.args:
        func = canonical(node.func, aliases)
        if func in ("importlib.import_module", "__import__"):
            key = _text(node.args[0])
            return key if _framework(key) else ""
        if func == "vars":
            return framework_object(node.args[0], aliases)
        if func == "getattr" and len(node.args) > 1:
            base, attr = framework_object(node.args[0], aliases), _text(node.args[1])
            return base + "." + attr if base and attr else ""
    return ""


def _bound_pairs(node: ast.AST) -> Iterator[tuple[ast.expr, ast.expr]]:
    """``(target, value)`` of what ``node`` binds plainly: ``a = b = v``, ``a, b = v, w``, an
    annotated assignment, a walrus."""
    if isinstance(node, ast.Assign):
        for target in node.targets:
            if isinstance(target, (ast.Tuple, ast.List)) and isinstance(node.value, (ast.Tuple, ast.List)):
                if len(target.elts) == len(node.value.elts):
                    yield from zip(target.elts, node.value.elts, strict=True)
            else:
                yield target, node.value
    elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
        yield node.target, node.value


def framework_names(tree: ast.AST) -> dict[str, str]:
    """``import_aliases``, and the names a plain assignment binds to a framework's object anywhere
    in the tree (``TC = unittest.TestCase``, also through one such name)."""
    aliases = import_aliases(tree)
    for _ in range(2):
        for node in syntax.walk(tree):
            for target, value in _bound_pairs(node):
                if isinstance(target, ast.Name) and framework_object(value, aliases):
                    aliases[target.id] = framework_object(value, aliases)
    return aliases


def _patched(call: ast.Call) -> Iterator[tuple[ast.expr | None, str, str]]:
    """What a setter or patcher call writes onto: ``(object, attribute, "")``, or ``(None, "",
    dotted)`` given a dotted string (``monkeypatch.setattr("unittest.TestCase.x", f)``); its
    arguments by position or by keyword (``target=``, ``name=``, ``attribute=``). A mutating
    method of ``vars(X)`` or ``X.__dict__`` (``vars(unittest.case).update(TestCase=F)``) writes
    onto X."""
    func = dotted(call.func)
    keywords = {k.arg: k.value for k in call.keywords if k.arg}
    first = call.args[0] if call.args else keywords.get("target")
    second = call.args[1] if len(call.args) > 1 else keywords.get("name", keywords.get("attribute"))
    setter = func.split(".")[-1] in _SETTERS or func.endswith(_PATCHERS)
    if first is not None and (setter or func.split(".")[-1] == "patch"):
        if _text(first):  # a dotted string: ``monkeypatch.setattr("m.X.y", f)``, ``mock.patch("m.X")``
            yield None, "", _text(first)
        elif setter:
            yield first, _text(second), ""
    if isinstance(call.func, ast.Attribute) and call.func.attr in SUT_MUTATORS:
        held = call.func.value
        if (isinstance(held, ast.Call) and dotted(held.func) == "vars") or (
            isinstance(held, ast.Attribute) and held.attr == "__dict__"
        ):
            yield held, "", ""


def _written(node: ast.AST) -> Iterator[tuple[ast.expr | None, str, str]]:
    """What ``node`` writes onto: an assignment's or a deletion's targets, a call's (``_patched``)."""
    targets: list[ast.expr] = []
    if isinstance(node, (ast.Assign, ast.Delete)):
        targets = list(node.targets)
    elif isinstance(node, ast.AugAssign) or (isinstance(node, ast.AnnAssign) and node.value is not None):
        targets = [node.target]
    elif isinstance(node, ast.Call):
        yield from _patched(node)
    while targets:
        target = targets.pop()
        if isinstance(target, (ast.Tuple, ast.List)):
            targets.extend(target.elts)
        elif isinstance(target, ast.Starred):
            targets.append(target.value)
        elif isinstance(target, ast.Attribute):
            yield target.value, target.attr, ""
        elif isinstance(target, ast.Subscript):
            yield target.value, _text(target.slice), ""


def _undone_at_test_end(nodes: Sequence[ast.AST]) -> set[int]:
    """Calls among ``nodes`` whose patch ends with the test that makes it: a patcher as a
    decorator or a ``with`` item, the ``monkeypatch`` and ``mocker`` fixtures' setters."""
    found: set[int] = set()
    for node in nodes:
        for sub in syntax.walk(node):
            if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found.update(id(d) for d in sub.decorator_list)
            elif isinstance(sub, (ast.With, ast.AsyncWith)):
                found.update(id(item.context_expr) for item in sub.items)
            elif isinstance(sub, ast.Call) and dotted(sub.func).split(".")[0] in ("monkeypatch", "mocker"):
                found.add(id(sub))
    return found


def _own_instance(node: ast.expr | None) -> bool:
    """``self``, ``cls``, ``type(self)``, ``self.__class__``: the test class itself."""
    if isinstance(node, ast.Name):
        return node.id in ("self", "cls")
    if isinstance(node, ast.Call) and dotted(node.func) == "type" and len(node.args) == 1:
        return _own_instance(node.args[0])
    return isinstance(node, ast.Attribute) and node.attr == "__class__" and _own_instance(node.value)


def framework_patches(nodes: Sequence[ast.AST], aliases: Mapping[str, str], test_code: bool = False) -> Iterator[Hit]:
    """Statements among ``nodes`` (and within them) that assign, delete or patch an attribute or
    item of a test framework's object: an assertion method made to pass, an outcome rewritten.
    ``unittest``'s message settings (``_DISPLAY_SETTINGS``) are left alone. Detail
    ``patches_pytest`` for pytest's objects, ``patches_test_framework`` for the others'.

    ``test_code``: in a test file, a patch undone when its test ends (``_undone_at_test_end``:
    ``@mock.patch("pytest.main")`` in a test of a tool that runs pytest) reaches that test alone,
    and ``unittest.mock``'s objects are left out (``mock`` is as often a test's own name, ``with
    mock.patch(...) as mock``); a ``TestCase``'s assertion written onto ``self``, ``cls`` or
    ``type(self)`` (``self.assertEqual = ...``) counts.

    Not caught: a write through a name bound other than by a plain assignment (a parameter, a
    loop variable, a container, a class attribute, a function's return), ``exec`` and other code
    built from strings, ``object.__setattr__`` and ``type.__setattr__``, and a framework's
    object reached through another module (``somelib.unittest``)."""
    undone = _undone_at_test_end(nodes) if test_code else set()
    for node in nodes:
        for sub in syntax.walk(node):
            if id(sub) in undone:
                continue
            for target, attr, named in _written(sub):
                name = named if named else framework_object(target, aliases) if target is not None else ""
                if test_code and attr in TESTCASE_MACHINERY and _own_instance(target):
                    name = "unittest.TestCase"
                if not _framework(name, mock=not test_code) or (
                    attr in _DISPLAY_SETTINGS and name.startswith("unittest.")
                ):
                    continue
                shown = name + "." + attr if attr and not named else name
                detail = "patches_pytest" if name.split(".")[0] in ("pytest", "_pytest") else "patches_test_framework"
                message = "writes onto the test framework's %s: what every test asserts or reports can change"
                yield Hit(detail, getattr(sub, "lineno", 1), message % shown)
                break


def hostile(nodes: list[ast.stmt], top_level: bool, aliases: Mapping[str, str] | None = None) -> Iterator[Hit]:
    """What a test file may not do: define hooks, load plugins, patch pytest or another test
    framework, rewrite sys.modules.

    ``top_level`` says ``nodes`` are a module's own statements (where a hook or ``pytest_plugins``
    takes effect), rather than statements inside a test; ``aliases``: the whole file's
    ``framework_names`` (the imports may be outside ``nodes``).
    """
    if aliases is None:
        aliases = framework_names(ast.Module(body=list(nodes), type_ignores=[]))
    for node in nodes:
        if top_level and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("pytest_"):
            yield Hit("hook", node.lineno, "defines the pytest hook %s" % node.name)
        if top_level and isinstance(node, ast.Assign):
            if any(isinstance(t, ast.Name) and t.id == "pytest_plugins" for t in node.targets):
                yield Hit("hook", node.lineno, "loads plugins with pytest_plugins")
        line = _imports_pytest_internals(node)
        if line is not None:
            yield Hit("patches_pytest", line, "imports pytest internals")
        yield from framework_patches([node], aliases, test_code=True)
        if not top_level and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name in TESTCASE_MACHINERY:
                message = "defines %s in a test class the tests had: every test of it asserts or runs through it"
                yield Hit("patches_test_framework", node.lineno, message % node.name)
        if _touches_sys_modules(node):
            yield Hit("sys_modules", getattr(node, "lineno", 1), "rewrites sys.modules")
        for sub in syntax.walk(node):
            if isinstance(sub, ast.Call) and dotted(sub.func) in PROCESS_EXITS:
                yield Hit("ends_session", sub.lineno, "calls %s, ending the test run early" % dotted(sub.func))


def patches_code_under_test(tree: ast.Module, nodes: Sequence[ast.stmt], own: frozenset[str]) -> Iterator[Hit]:
    """Statements among a test file's module-level ``nodes`` that change the project's own code
    at import: assigning, deleting or ``setattr``-ing an attribute or item of what the file
    imported from the project (``own``: its top-level packages and modules), or changing one in
    place (``CODECS.pop(...)``). A test that needs the code changed changes it in a fixture
    (``monkeypatch``), undone after it; at import the change reaches tests the file does not own,
    on B with C's tests as on C, so their failures read as order effects and their skips as no
    flip. No test file of the 82 corpus releases does it."""
    imported = _imported_from(tree, own)
    for node in _at_level(nodes):
        targets: list[ast.expr] = []
        if isinstance(node, (ast.Assign, ast.Delete)):
            targets = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            call = node.value
            if isinstance(call.func, ast.Name) and call.func.id in ("setattr", "delattr") and call.args:
                targets = [ast.Attribute(call.args[0], "", ast.Store())]
            elif isinstance(call.func, ast.Attribute) and call.func.attr in IN_PLACE:
                # ``ops.CODECS.pop(...)``; not ``registry.add(...)``: a module's own function may be named so
                targets = [call.func.value] if not isinstance(call.func.value, ast.Name) else []
        for target in targets:
            name = _root(target)
            if name is not None and name in imported:
                yield Hit(
                    "patches_code_under_test",
                    node.lineno,
                    "changes %s, imported from the project, at import: every test of the session sees it"
                    % imported[name],
                )
                break


#: Methods that change a container in place.
IN_PLACE = SUT_MUTATORS | {"append", "extend", "insert", "remove", "add", "discard"}


def _imported_from(tree: ast.Module, own: frozenset[str]) -> dict[str, str]:
    """Module-level names the file binds by importing from the project: name -> what it is."""
    found: dict[str, str] = {}
    for node in _at_level(tree.body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in own:
                    found[alias.asname or alias.name.split(".")[0]] = alias.name
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] in own:
            for alias in node.names:
                found[alias.asname or alias.name] = "%s.%s" % (node.module, alias.name)
    return found


def _root(node: ast.expr) -> str | None:
    """``ops`` for ``ops.double``, ``c.CODECS['x']``; None for a bare name (rebinding is no change)."""
    if not isinstance(node, (ast.Attribute, ast.Subscript)):
        return None
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def is_main_guard(node: ast.AST) -> bool:
    """``if __name__ == "__main__":`` (either way round) without an ``else``: it never runs on import."""
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare) or node.orelse:
        return False
    test = node.test
    parts = [test.left, *test.comparators]
    return (
        len(parts) == 2
        and isinstance(test.ops[0], ast.Eq)
        and any(dotted(p) == "__name__" for p in parts)
        and any(isinstance(p, ast.Constant) and p.value == "__main__" for p in parts)
    )


def interference(tree: ast.Module, lines: set[int]) -> Iterator[Hit]:
    """Library code that fights the referee, on the candidate's changed ``lines`` only.

    ``pytest_internals``, ``os_exit`` and ``patches_test_framework`` can only be attacks on the
    test run; the rest are recorded for the reviewer (a library may legitimately ship a pytest
    plugin).
    """
    for hit in framework_patches([tree], framework_names(tree)):
        if hit.line in lines:
            message = "%s, from library code" % hit.message
            yield Hit("patches_test_framework", hit.line, message)
    not_at_import: set[int] = set()  # inside a function, or under ``if __name__ == "__main__":``
    for node in syntax.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) or is_main_guard(node):
            not_at_import.update(id(sub) for sub in syntax.walk(node) if sub is not node)
    for node in syntax.walk(tree):
        line = getattr(node, "lineno", None)
        if line is None or line not in lines:
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for name in names:
                top = name.split(".")[0]
                if top == "_pytest":
                    yield Hit("pytest_internals", line, "imports pytest internals (%s) in library code" % name)
                elif top == "pytest" or name.startswith("unittest.mock") or name == "mock":
                    yield Hit("test_framework_import", line, "imports %s in library code" % name)
            if isinstance(node, ast.ImportFrom) and node.module == "unittest":
                if any(a.name == "mock" for a in node.names):
                    yield Hit("test_framework_import", line, "imports unittest.mock in library code")
        elif isinstance(node, ast.Call):
            name = dotted(node.func)
            if name in ("os._exit", "_exit", "posix._exit"):
                yield Hit("os_exit", line, "calls os._exit, which ends a test process without a report")
            elif name in ("sys.exit", "exit", "quit") and id(node) not in not_at_import:
                yield Hit("exit_at_import", line, "calls %s at import time" % name)
            elif name == "setattr" and node.args and dotted(node.args[0]) in ("builtins", "__builtins__"):
                yield Hit("builtins_patch", line, "patches builtins")
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                base = t.value if isinstance(t, (ast.Attribute, ast.Subscript)) else None
                if base is not None and dotted(base) in ("builtins", "__builtins__"):
                    yield Hit("builtins_patch", line, "patches builtins")


def class_shell(node: ast.AST) -> ast.AST:
    """A class without its methods: its decorators and class-level statements (``pytestmark``)."""
    assert isinstance(node, ast.ClassDef)
    body = [s for s in node.body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    return ast.ClassDef(
        name=node.name, bases=node.bases, keywords=node.keywords, body=body, decorator_list=node.decorator_list
    )
