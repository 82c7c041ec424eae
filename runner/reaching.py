"""Which bindings of a name may reach a use of it: Python's scopes, then the order of statements.

``runner.datause`` follows a table through the names added code binds to it (``c = CASES``,
``for row in ROWS``, a helper's parameter). Kept by name alone, a name once bound to a table
stayed the table everywhere: a comprehension's ``c`` made a later ``c = {}; c['x'] = 1`` a
finding, and a helper's parameter named ``CASES`` made the module's own table an alias of
itself, so ``global CASES; CASES = CASES[:1]`` in a test was no finding (a review's probes). So a
use is resolved as Python resolves it -- to the scope that binds the name -- and, in that scope,
to the bindings that may have run last before it. One that surely runs between (a statement
before it in the same block, the target of a loop around it) hides those before it; a loop
brings one bound later in its body round again. Where the order says nothing -- a use from a
nested function, which runs when it is called, or a comprehension's own names -- every binding
of the scope may reach it: a table is followed rather than lost.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from pytest_evidence import syntax

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_HEADED = (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)  # bind in their header, for their body
Scope = ast.AST | None  # a function, lambda, comprehension or class; None for the module


@dataclass(frozen=True)
class Binding:
    """``node`` (a ``Name`` stored, a parameter's ``arg``, a ``def`` or an import) binds the name
    from ``after`` on; ``statement`` is the statement that binds it (None for a parameter,
    bound before the body runs). ``anywhere``: bound by a nested function declaring the name
    ``global`` or ``nonlocal``, whenever it is called -- before any use, hiding none."""

    node: ast.AST
    after: tuple[int, int]
    statement: ast.stmt | None
    anywhere: bool = False


class Scopes:
    """The scopes of ``roots`` (code walked together), and the bindings each holds.
    ``module``: the roots at module level, whose bindings are the module's."""

    def __init__(self, roots: Sequence[ast.AST], module: Sequence[ast.AST]) -> None:
        self.up: dict[int, ast.AST | None] = {}
        for root in roots:
            self.up.setdefault(id(root), None)
            for parent in syntax.walk(root):
                for child in ast.iter_child_nodes(parent):
                    # an argument by keyword belongs to its call, as ``datause`` walks it
                    for node in [child.value] if isinstance(child, ast.keyword) else [child]:
                        self.up[id(node)] = parent
        self.roots = roots
        self.module = module
        self._bound: dict[int, dict[str, list[Binding]]] = {}

    def scope(self, node: ast.Name) -> tuple[Scope, bool]:
        """The scope binding ``node``'s name, and whether ``node`` is in a scope nested in it (a
        free variable: read when its function runs, after any of the scope's bindings)."""
        name, nested = node.id, False
        child: ast.AST = node
        up = self.up.get(id(node))
        below: ast.AST = node
        while up is not None:
            if isinstance(up, _COMPREHENSIONS):
                first = up.generators[0]
                if not (child is first and below is first.iter):  # the first iterable: the scope outside
                    if name in _comprehension_names(up):
                        return up, nested
                    nested = True
            elif isinstance(up, _FUNCTIONS) and _in_body(child, up):
                if name in self.bindings(up):
                    return up, nested
                nested = True
            elif isinstance(up, ast.ClassDef) and any(s is child for s in up.body) and not nested:
                if name in self.bindings(up):
                    return up, False
            below, child, up = child, up, self.up.get(id(up))
        return None, nested

    def bindings(self, scope: Scope) -> dict[str, list[Binding]]:
        """Every binding of each name ``scope`` binds itself (its ``global`` names are the
        module's), in no particular order."""
        key = id(scope)
        if key not in self._bound:
            self._bound[key] = self._collect(scope)
        return self._bound[key]

    def reaching(self, node: ast.Name) -> list[Binding]:
        """The bindings of ``node``'s name that may be the last to run before it."""
        scope, nested = self.scope(node)
        every = self.bindings(scope).get(node.id, [])
        if nested or isinstance(scope, _COMPREHENSIONS):
            return every
        at = (node.lineno, node.col_offset)
        return [b for b in every if self._reaches(b, node, at, every)]

    def _reaches(self, binding: Binding, node: ast.AST, at: tuple[int, int], every: list[Binding]) -> bool:
        if binding.anywhere:
            return True
        statement = binding.statement
        if statement is not None and binding.after > at and self._inside(node, statement):
            # in its own statement, where Python's order of evaluation is not the text's -- but
            # an assignment's value runs before its target is bound
            value = getattr(statement, "value", None)
            assigned = isinstance(statement, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and not isinstance(
                self.up.get(id(binding.node)), ast.NamedExpr
            )
            return not (assigned and value is not None and self._inside(node, value))
        hiding = [k for k in every if k is not binding and not k.anywhere and k.after <= at]
        if binding.after <= at:  # none bound since that surely runs before ``node``
            return not any(binding.after < k.after and self._dominates(k, node) for k in hiding)
        for loop in self._loops(node):  # bound later in a loop around it: the next round brings it
            if self._inside(binding.node, loop) and not any(
                self._inside(k.node, loop) and self._dominates(k, node) for k in hiding
            ):
                return True
        return False

    def _dominates(self, binding: Binding, node: ast.AST) -> bool:
        """Whether ``binding`` surely runs before ``node`` once ``node``'s block runs: a parameter;
        one in the head of a statement whose block holds it (a loop's or ``with``'s target, a
        ``:=`` in an ``if``'s test); a statement before it in a block holding it."""
        statement = binding.statement
        if statement is None:
            return True
        if not self._evaluated(binding.node, statement):
            return False
        held = [s for b in _blocks(statement) for s in b]
        if not self._inside(binding.node, statement, through=held) and self._inside(node, statement):
            runs = [statement.body, statement.orelse] if isinstance(statement, ast.If) else _blocks(statement)[:1]
            return any(self._inside(node, statement, through=b) for b in runs)
        parent = self.up.get(id(statement))
        blocks: list[Sequence[ast.AST]] = [self.module] if parent is None else [*_blocks(parent)]
        block = next((b for b in blocks if any(s is statement for s in b)), [])
        later = block[next((i + 1 for i, s in enumerate(block) if s is statement), len(block)) :]
        below: ast.AST | None = node
        while below is not None and below is not parent:
            if any(s is below for s in later):
                return True
            below = self.up.get(id(below))
        return False

    def _evaluated(self, node: ast.AST, statement: ast.stmt) -> bool:
        """Whether ``node`` is surely evaluated when ``statement`` runs: not in an operand of
        ``and``/``or`` but the first, a branch of a conditional expression, an ``assert``'s
        message, a comprehension or a lambda, a ``case``'s pattern or guard."""
        child, up = node, self.up.get(id(node))
        while up is not None and child is not statement:
            if isinstance(up, ast.BoolOp) and child is not up.values[0]:
                return False
            if isinstance(up, ast.IfExp) and child is not up.test:
                return False
            if isinstance(up, ast.Assert) and child is up.msg:
                return False
            if isinstance(up, (*_COMPREHENSIONS, ast.Lambda)):
                return False
            if isinstance(up, ast.match_case) and all(child is not s for s in up.body):
                return False  # a pattern binds only if it matches, a guard runs only then
            child, up = up, self.up.get(id(up))
        return True

    def _loops(self, node: ast.AST) -> Iterator[ast.AST]:
        """The loops whose body holds ``node`` -- or whose test, run again after each round -- in
        its function."""
        child, up = node, self.up.get(id(node))
        while up is not None and not isinstance(up, (*_FUNCTIONS, ast.ClassDef)):
            if isinstance(up, _LOOPS) and (any(s is child for s in up.body) or child is getattr(up, "test", None)):
                yield up
            child, up = up, self.up.get(id(up))

    def _inside(self, node: ast.AST, outer: ast.AST, through: Sequence[ast.AST] | None = None) -> bool:
        """Whether ``node`` is ``outer`` or within it (within one of ``through``, its children)."""
        child, up = node, self.up.get(id(node))
        if through is None and node is outer:
            return True
        while up is not None:
            if up is outer:
                return through is None or any(s is child for s in through)
            child, up = up, self.up.get(id(up))
        return False

    def _collect(self, scope: Scope) -> dict[str, list[Binding]]:
        found: dict[str, list[Binding]] = {}
        if isinstance(scope, _COMPREHENSIONS):
            for generator in scope.generators:
                for target in (n for n in syntax.walk(generator.target) if isinstance(n, ast.Name)):
                    found.setdefault(target.id, []).append(Binding(target, (0, 0), None))
            return found
        if isinstance(scope, _FUNCTIONS):
            args = scope.args
            start = (scope.lineno, scope.col_offset)
            for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
                if arg is not None:
                    found.setdefault(arg.arg, []).append(Binding(arg, start, None))
        if isinstance(scope, ast.ClassDef):
            roots: Sequence[ast.AST] = scope.body
        elif isinstance(scope, _FUNCTIONS):
            roots = scope.body if isinstance(scope.body, list) else [scope.body]
        else:
            roots = self.module
        declared: set[str] = set()
        for root in roots:
            for node, statement in _own(root, root if isinstance(root, ast.stmt) else None):
                for name, binder in _binds(node):
                    parent = self.up.get(id(binder))
                    if statement is None or (isinstance(parent, ast.AnnAssign) and parent.value is None):
                        continue  # ``c: list`` binds nothing
                    after = _after(parent if isinstance(parent, ast.NamedExpr) else binder, statement)
                    found.setdefault(name, []).append(Binding(binder, after, statement))
                if isinstance(node, (ast.Global, ast.Nonlocal)):
                    declared |= set(node.names)
                if isinstance(node, _COMPREHENSIONS):  # its ``:=`` binds here, whenever it runs
                    for walrus in _comprehension_walruses(node):
                        found.setdefault(walrus.id, []).append(Binding(walrus, (0, 0), None, anywhere=True))
        found = {k: v for k, v in found.items() if k not in declared}
        kind = ast.Global if scope is None else ast.Nonlocal
        inner = self.roots if scope is None else roots  # a method of another class may declare it ``global``
        for function in (
            n for root in inner for n in syntax.walk(root) if isinstance(n, _FUNCTIONS) and n is not scope
        ):
            names = {name for n in _own_body(function) if isinstance(n, kind) for name in n.names}
            for node in _own_body(function):  # bound from inside it, whenever it is called
                for name, binder in _binds(node):
                    if name in names and (kind is ast.Global or name in found):
                        found.setdefault(name, []).append(Binding(binder, (0, 0), None, anywhere=True))
        return found


def _binds(node: ast.AST) -> Iterator[tuple[str, ast.AST]]:
    if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
        yield node.id, node
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield node.name, node
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        for alias in node.names:
            yield (alias.asname or alias.name).split(".")[0], node
    elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:  # ``case x:``
        yield node.name, node
    elif isinstance(node, ast.MatchMapping) and node.rest:
        yield node.rest, node


def _after(binder: ast.AST, statement: ast.stmt) -> tuple[int, int]:
    """Where a binding takes effect: after its statement, or -- the target of a loop or of a
    ``with``, a ``:=`` -- after the target itself, before what it binds for runs."""
    end = binder if isinstance(statement, _HEADED) or isinstance(binder, ast.NamedExpr) else statement
    return (getattr(end, "end_lineno", 0) or 0, getattr(end, "end_col_offset", 0) or 0)


def _own(node: ast.AST, statement: ast.stmt | None) -> Iterator[tuple[ast.AST, ast.stmt | None]]:
    """``node`` and what it holds with the statement each is in, not entering nested scopes
    (a definition's name is bound here; its body is its own)."""
    yield node, statement
    if isinstance(node, (*_FUNCTIONS, ast.ClassDef, *_COMPREHENSIONS)):
        return
    for child in ast.iter_child_nodes(node):
        yield from _own(child, child if isinstance(child, ast.stmt) else statement)


def _own_body(function: ast.AST) -> Iterator[ast.AST]:
    body = getattr(function, "body", [])
    for stmt in body if isinstance(body, list) else [body]:
        yield from (node for node, _ in _own(stmt, None))


def _comprehension_walruses(node: ast.AST) -> Iterator[ast.Name]:
    """The targets of the ``:=`` in a comprehension, nested ones included, not in a lambda or
    function: they bind the scope around the comprehension."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.NamedExpr) and isinstance(child.target, ast.Name):
            yield child.target
        if not isinstance(child, _FUNCTIONS):
            yield from _comprehension_walruses(child)


def _comprehension_names(node: ast.AST) -> set[str]:
    assert isinstance(node, _COMPREHENSIONS)
    return {n.id for g in node.generators for n in syntax.walk(g.target) if isinstance(n, ast.Name)}


def _in_body(child: ast.AST, function: ast.AST) -> bool:
    """Whether ``child`` of ``function`` is its body, not a default, decorator or annotation
    (evaluated where the function is defined)."""
    body = getattr(function, "body", None)
    return child is body or (isinstance(body, list) and any(s is child for s in body))


def _blocks(node: ast.AST) -> list[list[ast.stmt]]:
    """The statement lists of ``node``: a body, ``else``, ``finally`` (a handler's and a case's
    are their own bodies)."""
    lists = [getattr(node, field, None) for field in ("body", "orelse", "finalbody")]
    return [value for value in lists if isinstance(value, list)]
