"""AST questions the referee asks of Python source: is this a skip, an assertion, a hook, an attack?

Shared by the test-integrity check (what did the candidate do to the tests) and the source
interference scan (what does the candidate's library code do to the test framework). Pure: it
reads source text and answers with line numbers, never imports or runs anything.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

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


def dotted(node: ast.AST) -> str:
    """``pytest.mark.skip`` for the expression ``pytest.mark.skip``; "" for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return base + "." + node.attr if base else ""
    if isinstance(node, ast.Call):
        return dotted(node.func)
    return ""


def parse(source: bytes) -> ast.Module | None:
    try:
        return ast.parse(source)
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


def is_test(key: tuple[str, ...], node: ast.AST) -> bool:
    """A test function or method, as pytest's and unittest's default naming finds them."""
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and key[-1].startswith("test")


def is_fixture(node: ast.AST) -> bool:
    decorators = getattr(node, "decorator_list", [])
    return any(dotted(d).split(".")[-1] in ("fixture", "yield_fixture") for d in decorators)


def skips(node: ast.AST) -> int:
    """Skip, skipif, xfail and importorskip marks, decorators and calls in or on ``node``."""
    count = 0
    for sub in ast.walk(node):
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
    for sub in ast.walk(node):
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

    for sub in ast.walk(node):
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


def _patches_pytest(node: ast.AST) -> int | None:
    """Line of an import of pytest internals or an assignment onto pytest, else None."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Import) and any(a.name.split(".")[0] == "_pytest" for a in sub.names):
            return sub.lineno
        if isinstance(sub, ast.ImportFrom) and (sub.module or "").split(".")[0] == "_pytest":
            return sub.lineno
        if isinstance(sub, (ast.Assign, ast.AugAssign)):
            targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
            for t in targets:
                if isinstance(t, ast.Attribute) and dotted(t).split(".")[0] in ("pytest", "_pytest"):
                    return sub.lineno
        if isinstance(sub, ast.Call) and dotted(sub.func).split(".")[-1] == "setattr" and sub.args:
            if dotted(sub.args[0]).split(".")[0] in ("pytest", "_pytest"):
                return sub.lineno
    return None


def hostile(nodes: list[ast.stmt], top_level: bool) -> Iterator[Hit]:
    """What a test file may not do: define hooks, load plugins, patch pytest, rewrite sys.modules.

    ``top_level`` says ``nodes`` are a module's own statements (where a hook or ``pytest_plugins``
    takes effect), rather than statements inside a test.
    """
    for node in nodes:
        if top_level and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("pytest_"):
            yield Hit("hook", node.lineno, "defines the pytest hook %s" % node.name)
        if top_level and isinstance(node, ast.Assign):
            if any(isinstance(t, ast.Name) and t.id == "pytest_plugins" for t in node.targets):
                yield Hit("hook", node.lineno, "loads plugins with pytest_plugins")
        line = _patches_pytest(node)
        if line is not None:
            yield Hit("patches_pytest", line, "imports pytest internals or assigns onto pytest")
        if _touches_sys_modules(node):
            yield Hit("sys_modules", getattr(node, "lineno", 1), "rewrites sys.modules")
        for sub in ast.walk(node):
            if isinstance(sub, ast.Call) and dotted(sub.func) in PROCESS_EXITS:
                yield Hit("ends_session", sub.lineno, "calls %s, ending the test run early" % dotted(sub.func))


def _is_main_guard(node: ast.AST) -> bool:
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    parts = [node.test.left, *node.test.comparators]
    return any(dotted(p) == "__name__" for p in parts) and any(
        isinstance(p, ast.Constant) and p.value == "__main__" for p in parts
    )


def interference(tree: ast.Module, lines: set[int]) -> Iterator[Hit]:
    """Library code that fights the referee, on the candidate's changed ``lines`` only.

    ``pytest_internals`` and ``os_exit`` can only be attacks on the test run; the rest are
    recorded for the reviewer (a library may legitimately ship a pytest plugin).
    """
    not_at_import: set[int] = set()  # inside a function, or under ``if __name__ == "__main__":``
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) or _is_main_guard(node):
            not_at_import.update(id(sub) for sub in ast.walk(node) if sub is not node)
    for node in ast.walk(tree):
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
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in (
            "__eq__",
            "__hash__",
            "__ne__",
        ):
            body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
            if len(body) == 1 and isinstance(body[0], ast.Return) and isinstance(body[0].value, ast.Constant):
                yield Hit(
                    "constant_comparison",
                    line,
                    "%s returns the constant %r: every comparison gives the same answer"
                    % (node.name, body[0].value.value),
                )
