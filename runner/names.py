"""What Python code reads and binds, by name: the vocabulary of the selection's name analysis.

B's per-test record says which functions a test reached, not which module-level values it read
nor what ran at import. The selection bridges that by name: a function that reads ``X`` may read
a module-level ``X``; a module-level statement that reads ``X`` binds its own names from it.
What code reads comes in three kinds (``Reads``): a bare name is a global of its own module; an
attribute (``m.X``, ``self.X``) and a dotted string (``getattr(m, "X")``, ``mock.patch("m.X")``)
may be any module's or object's -- a coincidence of names over-selects, it never hides a reader.

A statement is a *pure binding* when running it does nothing but bind names: assignments to
plain names, imports, definitions whose decorators only wrap (``property``, ``dataclass``, ...),
constants and docstrings, and ``if``/``try`` blocks made of those. Anything else -- a call that
is not a known pure constructor, an assignment to an attribute or an item, a star import, a
loop, ``with``, ``global`` -- may act beyond the names it binds: it has a side effect.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias

from pytest_evidence import syntax
from runner.pyscan import dotted, is_main_guard

DefNode: TypeAlias = "ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef"

#: Calls that build a value and do nothing else, so a statement calling only these still only binds.
PURE_CALLS = frozenset(
    {
        *("dict", "list", "set", "frozenset", "tuple", "str", "int", "float", "bool", "bytes", "complex"),
        *("range", "object", "slice", "len", "sorted", "reversed", "min", "max", "sum", "abs", "any", "all"),
        *("enumerate", "zip", "map", "filter", "isinstance", "issubclass", "getattr", "hasattr", "repr", "type"),
        *("re.compile", "TypeVar", "typing.TypeVar", "ParamSpec", "typing.ParamSpec", "NewType", "typing.NewType"),
        *("cast", "typing.cast", "namedtuple", "collections.namedtuple", "NamedTuple", "typing.NamedTuple"),
        *("TypedDict", "typing.TypedDict", "field", "dataclasses.field", "partial", "functools.partial"),
        *("Path", "pathlib.Path", "os.path.join", "os.path.dirname", "os.path.abspath", "os.path.basename"),
        *("os.environ.get", "os.getenv", "logging.getLogger", "MappingProxyType", "types.MappingProxyType"),
        *("Decimal", "decimal.Decimal", "timedelta", "datetime.timedelta"),
    }
)

#: Decorators that wrap what they decorate and register it nowhere.
PURE_DECORATORS = frozenset(
    {
        *("staticmethod", "classmethod", "property", "abstractmethod", "abc.abstractmethod"),
        *("cache", "functools.cache", "lru_cache", "functools.lru_cache", "cached_property"),
        *("functools.cached_property", "total_ordering", "functools.total_ordering", "dataclass"),
        *("dataclasses.dataclass", "overload", "typing.overload", "final", "typing.final", "override"),
        *("typing.override", "typing_extensions.final", "typing_extensions.override", "runtime_checkable"),
        *("typing.runtime_checkable", "contextmanager", "contextlib.contextmanager", "asynccontextmanager"),
        *("contextlib.asynccontextmanager", "unique", "enum.unique", "singledispatch", "functools.singledispatch"),
        *("fixture", "pytest.fixture"),
    }
)

_PROPERTY_PARTS = frozenset({"setter", "getter", "deleter"})
_DOTTED_STRING = re.compile(r"[^\W\d]\w*(?:\.[^\W\d]\w*)*")


@dataclass(frozen=True)
class Imported:
    """One name an import binds: ``from {"." * level}{module} import {name} as {bound}``
    (``name`` "" for ``import module``, "*" for a star import)."""

    module: str
    level: int
    name: str
    bound: str


@dataclass(frozen=True)
class Reads:
    """What code may read: bare names (globals of its own module, or locals, or builtins);
    attributes of a dotted base (``m.X``: ``("m", "X")``; the base may be a module); what the
    imports among them take (``from m import X`` reads ``m``'s ``X``); attributes of anything
    else (``f().X``); the parts of strings that are dotted names; and parameter names (the
    fixtures a test or a fixture requests)."""

    names: frozenset[str] = frozenset()
    qualified: frozenset[tuple[str, str]] = frozenset()
    imported: frozenset[Imported] = frozenset()
    attributes: frozenset[str] = frozenset()
    strings: frozenset[str] = frozenset()
    parameters: frozenset[str] = frozenset()
    words: frozenset[str] = frozenset()  # every identifier above: what a name must be among to be read


def _conditions(mark: ast.Call) -> Iterator[ast.expr]:
    """The string conditions of a ``skipif`` or ``xfail`` mark as code: pytest evaluates them in
    the test module's globals (``"not flags.ENABLED"`` reads ``flags``)."""
    given = [*mark.args, *(k.value for k in mark.keywords if k.arg == "condition")]
    for condition in given:
        if isinstance(condition, ast.Constant) and isinstance(condition.value, str):
            try:
                yield ast.parse(condition.value.strip(), mode="eval").body
            except (SyntaxError, ValueError):
                continue


def reads(*nodes: ast.AST, annotations: bool = True, strings_read: bool = True) -> Reads:
    """What ``nodes`` read: names and attributes loaded (a store is not a read; ``X += 1`` is
    both), what an import inside them takes, ``global`` names, strings that are dotted names
    (``usefixtures("db")``, ``mock.patch("pkg.m.X")``), and parameters. Annotations are not read
    when ``annotations`` is False (``from __future__ import annotations``), strings when
    ``strings_read`` is False (an ``__all__`` entry names a binding; it reads no value). A
    ``skipif`` or ``xfail`` condition given as a string reads what its code reads."""
    names: set[str] = set()
    qualified: set[tuple[str, str]] = set()
    imported: set[Imported] = set()
    attributes: set[str] = set()
    strings: set[str] = set()
    parameters: set[str] = set()

    def attribute(node: ast.Attribute) -> None:
        base = dotted(node.value, calls=False)
        if base:
            qualified.add((base, node.attr))
        else:
            attributes.add(node.attr)

    todo = list(nodes)
    while todo:
        sub = todo.pop()
        if isinstance(sub, ast.Name) and not isinstance(sub.ctx, ast.Store):
            names.add(sub.id)
        elif isinstance(sub, ast.Attribute) and not isinstance(sub.ctx, ast.Store):
            attribute(sub)
        elif isinstance(sub, ast.AugAssign):
            names.update(_target_names(sub.target))
            if isinstance(sub.target, ast.Attribute):
                attribute(sub.target)
        elif isinstance(sub, (ast.Import, ast.ImportFrom)):
            imported.update(imports(sub))
        elif isinstance(sub, (ast.Global, ast.Nonlocal)):
            names.update(sub.names)
        elif isinstance(sub, ast.arg):
            parameters.add(sub.arg)
        elif (
            strings_read
            and isinstance(sub, ast.Constant)
            and isinstance(sub.value, str)
            and _DOTTED_STRING.fullmatch(sub.value)
        ):
            strings.update(sub.value.split("."))
        if isinstance(sub, ast.Call) and dotted(sub.func).rpartition(".")[2] in ("skipif", "xfail"):
            todo.extend(_conditions(sub))
        for attr, value in ast.iter_fields(sub):
            if annotations or attr not in ("annotation", "returns"):
                todo.extend(v for v in (value if isinstance(value, list) else [value]) if isinstance(v, ast.AST))
    words = {*names, *(a for _, a in qualified), *(i.name for i in imported), *attributes, *strings, *parameters}
    return Reads(
        frozenset(names),
        frozenset(qualified),
        frozenset(imported),
        frozenset(attributes),
        frozenset(strings),
        frozenset(parameters),
        frozenset(words),
    )


#: Methods of the built-in containers that store what they are given, calling none of it.
STORING = frozenset({"append", "extend", "add", "insert", "update", "setdefault"})
#: What builds a built-in container or a literal, and nothing else.
_DISPLAYS = (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp, ast.SetComp, ast.DictComp, ast.Constant)
_BUILDERS = frozenset({"dict", "list", "set", "tuple", "frozenset"})


def literal_names(nodes: Sequence[ast.AST]) -> frozenset[str]:
    """Names that every binding among ``nodes`` (a file's, ``ast.walk``'s) binds to a display or
    a literal (``SCOPE = {...}``, and no other assignment, parameter, import or definition of that
    name anywhere in the file): a method read through one is the built-in container's
    (``SCOPE.update``), no project code."""
    literal_targets: set[int] = set()
    for node in nodes:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = node.value
            built = isinstance(value, ast.Call) and dotted(value.func) in _BUILDERS
            if len(targets) == 1 and isinstance(targets[0], ast.Name) and (isinstance(value, _DISPLAYS) or built):
                literal_targets.add(id(targets[0]))
    literal: set[str] = set()
    other: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            (literal if id(node) in literal_targets else other).add(node.id)
        elif isinstance(node, ast.arg):
            other.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            other.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            other.update(a.asname or a.name.split(".")[0] for a in node.names)
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
            other.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            other.update(node.names)
    return frozenset(literal - other)


def parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    args = node.args
    return {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if a}


def returned_parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str] | None:
    """The parameters ``node`` may return, when every ``return`` of its own gives one of them
    (passed, never a default, never ``*args``) or ``object``: tinydb's ``with_typehint(base)``
    returns ``base`` or ``object``. None when it may return anything else (a parameter it
    rebinds too), or is a generator or a coroutine function (its call returns no argument of
    its)."""
    if isinstance(node, ast.AsyncFunctionDef):
        return None
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    defaulted = {a.arg for a in positional[len(positional) - len(args.defaults) :]}
    defaulted |= {a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None}
    starred = {a.arg for a in (args.vararg, args.kwarg) if a}
    found: set[str] = set()
    todo: list[ast.AST] = list(node.body)
    while todo:
        child = todo.pop()
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue  # a nested scope's returns and yields are its own
        todo.extend(ast.iter_child_nodes(child))
        if isinstance(child, (ast.Yield, ast.YieldFrom)):
            return None
        if not isinstance(child, ast.Return):
            continue
        value = child.value
        if not isinstance(value, ast.Name) or value.id in defaulted | starred:
            return None
        if value.id != "object":
            found.add(value.id)
    rebound = {n.id for n in syntax.walk(node) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    return frozenset(found) if found <= parameters(node) and not found & rebound else None


def local_names(node: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """Names ``node``'s own scope binds -- parameters, assignment and loop targets, imports,
    nested definitions, ``except ... as`` -- less those it declares ``global``: a bare name among
    them is a local (or, read in a nested function, a closure's), never a module-level name."""
    found = parameters(node)
    declared: set[str] = set()
    todo: list[ast.AST] = list(node.body)
    while todo:
        sub = todo.pop()
        if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(sub.name)
            todo.extend(header(sub))  # its body is a scope of its own
            continue
        if isinstance(sub, ast.Lambda):
            todo.extend([*sub.args.defaults, *(d for d in sub.args.kw_defaults if d)])
            continue
        if isinstance(sub, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            todo.append(sub.generators[0].iter)  # its targets are its own; its first iterable is ours
            continue
        if isinstance(sub, ast.Global):
            declared.update(sub.names)
        elif isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)):
            found.add(sub.id)
        elif isinstance(sub, (ast.Import, ast.ImportFrom)):
            found.update(a.asname or a.name.split(".")[0] for a in sub.names if a.name != "*")
        elif isinstance(sub, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and sub.name:
            found.add(sub.name)
        elif isinstance(sub, ast.MatchMapping) and sub.rest:
            found.add(sub.rest)
        todo.extend(ast.iter_child_nodes(sub))
    return frozenset(found - declared)


def own_code(node: DefNode) -> list[ast.AST]:
    """What a definition's own code object runs: a function's whole subtree (nested functions
    included: they run only if it runs); a class's header and body, its methods by their headers
    (a method is a definition of its own)."""
    if not isinstance(node, ast.ClassDef):
        return [node]
    found: list[ast.AST] = list(header(node))
    for stmt in node.body:
        if isinstance(stmt, ast.ClassDef):
            found.extend(own_code(stmt))
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.extend(header(stmt))
        else:
            found.append(stmt)
    return found


def first_line(node: DefNode) -> int:
    """Where a definition starts: its first decorator, as the recorder and ``diff.definitions`` count."""
    return min([node.lineno] + [d.lineno for d in node.decorator_list])


def header_end(node: DefNode) -> int:
    """The last line of a definition's header: what runs when it is defined, not when it is called."""
    return max([node.lineno] + [part.end_lineno or part.lineno for part in header(node)])


def header(node: DefNode) -> list[ast.expr | ast.arg | ast.keyword]:
    """What runs when a definition is defined: decorators, and bases and keywords of a class, or
    defaults and annotations of a function (its parameters too, for their line span)."""
    if isinstance(node, ast.ClassDef):
        return [*node.decorator_list, *node.bases, *node.keywords]
    args = node.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, *(a for a in (args.vararg, args.kwarg) if a)]
    return [*node.decorator_list, *every, *_evaluated(node)]


def _evaluated(node: ast.FunctionDef | ast.AsyncFunctionDef, annotations: bool = True) -> list[ast.expr]:
    """A function's defaults and annotations: evaluated when it is defined."""
    args = node.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, *(a for a in (args.vararg, args.kwarg) if a)]
    defaults = [d for d in (*args.defaults, *args.kw_defaults) if d is not None]
    if not annotations:
        return defaults
    hints = [a.annotation for a in every if a.annotation is not None]
    return [*defaults, *hints, *([node.returns] if node.returns else [])]


def defined(tree: ast.Module) -> list[tuple[str, DefNode]]:
    """Every function and class with its qualified name (``Box.grow``); outer before inner.

    Only definitions directly in a module, class or function body count, as the recorder's keys
    are matched against them (``diff.definitions``).
    """
    found: list[tuple[str, DefNode]] = []

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found.append((prefix + node.name, node))
                walk(node.body, prefix + node.name + ".")

    walk(tree.body, "")
    return found


@dataclass(frozen=True)
class Binding:
    """What running one statement does: the names it binds, and whether it may do more."""

    names: frozenset[str]
    effect: str = ""  # why running it may act beyond ``names`` ("": a pure binding)
    runs: bool = False  # it calls something when it runs (a call, a decorator, a base class's hooks)
    imports: frozenset[Imported] = frozenset()  # of an import: what it binds, name by name


@dataclass(frozen=True)
class Unit:
    """A statement that runs when its module or class body runs; a definition by its header.

    ``start``-``end`` are the lines whose change changes it. ``scope`` is the class it belongs
    to: the class whose body holds it, or whose header it is ("" at module level).
    """

    start: int
    end: int
    scope: str
    reads: Reads  # what running it reads (an import's names: ``binding.imports``)
    binding: Binding
    function: bool = False  # a function's header: the function's own span holds it too
    code: tuple[ast.AST, ...] = field(default=(), compare=False, repr=False)  # what running it evaluates
    bases: tuple[ast.expr, ...] = field(default=(), compare=False, repr=False)  # a class header's bases
    decorators: tuple[ast.expr, ...] = field(default=(), compare=False, repr=False)  # a definition's


def units(tree: ast.Module) -> list[Unit]:
    """The module-level units of ``tree``: its statements, and the bodies of its classes split
    statement by statement (a class body runs at import too)."""
    lazy = any(
        isinstance(s, ast.ImportFrom) and s.module == "__future__" and any(a.name == "annotations" for a in s.names)
        for s in tree.body
    )
    found: list[Unit] = []

    def walk(body: list[ast.stmt], owner: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                qualname = owner + "." + node.name if owner else node.name
                head = Binding(frozenset({node.name}), _class_header_effect(node), bool(header(node)))
                code = tuple(header(node))
                found.append(
                    Unit(
                        first_line(node),
                        header_end(node),
                        qualname,
                        reads(*code),
                        head,
                        code=code,
                        bases=tuple(node.bases),
                        decorators=tuple(node.decorator_list),
                    )
                )
                walk(node.body, qualname)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                code = (*node.decorator_list, *_evaluated(node, not lazy))
                span = (first_line(node), header_end(node))
                unit = Unit(
                    *span, owner, reads(*code), binding(node), True, code, decorators=tuple(node.decorator_list)
                )
                found.append(unit)
            else:
                bound = binding(node)
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    read = Reads()
                else:  # ``__all__`` lists names for a star import: changing what they hold changes no entry
                    read = reads(node, annotations=not lazy, strings_read="__all__" not in bound.names)
                found.append(Unit(node.lineno, node.end_lineno or node.lineno, owner, read, bound, code=(node,)))

    walk(tree.body, "")
    return found


#: Calls that copy a function's metadata onto a wrapper, calling neither.
_WRAPS = frozenset({"wraps", "functools.wraps", "update_wrapper", "functools.update_wrapper"})
#: Calls that bind arguments for a later call, making none.
_PARTIAL = frozenset({"partial", "functools.partial"})


def _pairs(body: list[ast.stmt], deferred: frozenset[str]) -> Iterator[tuple[ast.AST, ast.AST]]:
    """``(parent, child)`` under ``body``; of a function named in ``deferred``, its header only
    (its body runs when it is called, not here)."""
    todo: list[ast.AST] = list(body)
    for stmt in body:
        yield stmt, stmt
    while todo:
        parent = todo.pop()
        children: list[ast.AST] = list(ast.iter_child_nodes(parent))
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and parent.name in deferred:
            children = list(header(parent))
        for child in children:
            yield parent, child
            todo.append(child)


def closures(node: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """Functions defined in ``node``'s body that its own code only returns (``return wrapper``):
    calling ``node`` defines them and runs none of their bodies."""
    deferred = frozenset(s.name for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)))
    while deferred:  # a closure that code outside the deferred ones uses is not deferred; to a fixpoint
        used = {
            c.id
            for p, c in _pairs(node.body, deferred)
            if isinstance(c, ast.Name)
            and c.id in deferred
            and isinstance(c.ctx, ast.Load)
            and not isinstance(p, ast.Return)
        }
        if not used:
            return deferred
        deferred -= used
    return deferred


def outside_closures(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.AST]:
    """What calling ``node`` runs, and its header: its code but the bodies of its ``closures``."""
    deferred = closures(node)
    own: list[ast.AST] = list(header(node))
    for stmt in node.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name in deferred:
            own.extend(header(stmt))
        else:
            own.append(stmt)
    return own


def passes_through(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether calling ``node`` runs nothing of what it is given: its code only returns or tests
    its parameters (``return base``, ``if x is None``), hands them to ``functools.wraps``, or
    uses them in the closures it returns (a decorator: they run when the closure does). Any
    other use -- a call, an attribute, an argument passed on, a value stored -- may run them."""
    params = parameters(node)
    pairs = list(_pairs(node.body, closures(node)))
    parents = {id(child): parent for parent, child in pairs}
    for parent, child in pairs:
        if not (isinstance(child, ast.Name) and child.id in params and isinstance(child.ctx, ast.Load)):
            continue
        tested = isinstance(parent, (ast.If, ast.IfExp, ast.While)) and child is parent.test
        identity = isinstance(parent, ast.Compare) and all(isinstance(o, (ast.Is, ast.IsNot)) for o in parent.ops)
        negated = isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)
        wrapped = isinstance(parent, ast.Call) and dotted(parent.func) in _WRAPS and child in parent.args
        call = parents.get(id(parent)) if isinstance(parent, ast.keyword) else parent
        bound = isinstance(call, ast.Call) and dotted(call.func) in _PARTIAL and child is not call.func
        later = bound and isinstance(parents.get(id(call)), ast.Return)  # ``return partial(f, x)``
        if not (tested or identity or negated or wrapped or later or isinstance(parent, (ast.Return, ast.BoolOp))):
            return False
    return True


def binding(node: ast.stmt) -> Binding:
    """What running the statement ``node`` binds, and what else it may do."""
    effect, runs = _judge(node)
    return Binding(_bound(node), effect, runs, imports(node))


def imports(node: ast.AST) -> frozenset[Imported]:
    """What an import binds, name by name: an import line that gains or loses a name rebinds
    only that name."""
    if isinstance(node, ast.Import):
        return frozenset(Imported(a.name, 0, "", a.asname or a.name.split(".")[0]) for a in node.names)
    if isinstance(node, ast.ImportFrom):
        module, level = node.module or "", node.level
        return frozenset(Imported(module, level, a.name, a.asname or a.name.rstrip("*")) for a in node.names)
    return frozenset()


def _target_names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for element in target.elts for n in _target_names(element)]
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    return []


def _plain(target: ast.expr) -> bool:
    """A target made of names only (no attribute, no item)."""
    if isinstance(target, ast.Name):
        return True
    if isinstance(target, (ast.Tuple, ast.List)):
        return all(_plain(e) for e in target.elts)
    return isinstance(target, ast.Starred) and _plain(target.value)


def _bound(node: ast.stmt) -> frozenset[str]:
    found: set[str] = set()
    if isinstance(node, ast.Import):
        found.update(a.asname or a.name.split(".")[0] for a in node.names)
    elif isinstance(node, ast.ImportFrom):
        found.update(a.asname or a.name for a in node.names if a.name != "*")
    elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Delete)):
        targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
        found.update(n for t in targets for n in _target_names(t))
        if "__all__" in found and not isinstance(node, ast.Delete) and node.value is not None:
            found.update(reads(node.value).strings)  # a star import binds what ``__all__`` names
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        found.add(node.name)
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
        found.add("__doc__")
    elif isinstance(node, ast.If) and not is_main_guard(node):
        found.update(n for s in (*node.body, *node.orelse) for n in _bound(s))
    elif isinstance(node, ast.Try):
        found.update(h.name for h in node.handlers if h.name)
        blocks = [*node.body, *node.orelse, *node.finalbody, *(s for h in node.handlers for s in h.body)]
        found.update(n for s in blocks for n in _bound(s))
    return frozenset(found)


def _executed(node: ast.AST) -> Iterator[ast.AST]:
    """``node`` and its subtree, except the bodies of lambdas (they run when called)."""
    yield node
    for child in [node.args] if isinstance(node, ast.Lambda) else ast.iter_child_nodes(node):
        yield from _executed(child)


def _calls(*nodes: ast.AST) -> tuple[str, bool]:
    """``(effect, runs)`` of evaluating ``nodes``: the first call that is not a pure constructor."""
    runs = False
    for node in nodes:
        for sub in _executed(node):
            if isinstance(sub, ast.Call):
                runs = True
                name = dotted(sub.func)
                owner = sub.func.value if isinstance(sub.func, ast.Attribute) else None
                if isinstance(owner, ast.Constant) and isinstance(owner.value, (str, bytes)):
                    continue  # a method of a text literal (``"|".join(...)``) builds a value
                if name not in PURE_CALLS:
                    return "calls %s()" % (name or "an expression"), True
    return "", runs


def _decorated(node: DefNode) -> str:
    """Why a definition's decorators may do more than wrap it ("" when they do not)."""
    for decorator in node.decorator_list:
        name = dotted(decorator)
        pure = name in PURE_DECORATORS or name.rpartition(".")[2] in _PROPERTY_PARTS or name.startswith(MARKS)
        if isinstance(decorator, ast.Call) and any(k.arg == "autouse" for k in decorator.keywords):
            pure = False  # an autouse fixture applies to tests that never name it
        if not pure or (isinstance(decorator, ast.Call) and _calls(*decorator.args, *decorator.keywords)[0]):
            return "decorated by @%s" % (name or "an expression")
    return ""


#: Methods that run when a class is created (a changed one is a side effect of its module).
CREATION_HOOKS = frozenset({"__init_subclass__", "__set_name__", "__mro_entries__", "__prepare__", "__class_getitem__"})

#: pytest's marks: applying one stores it on the function or class, for pytest to read.
MARKS = ("pytest.mark.",)


def _class_header_effect(node: ast.ClassDef) -> str:
    if node.keywords:
        return "class %s keyword %s=" % (node.name, node.keywords[0].arg or "**")
    return _decorated(node) or _calls(*node.bases)[0]


def _first(judged: list[tuple[str, bool]]) -> tuple[str, bool]:
    return next((e for e, _ in judged if e), ""), any(r for _, r in judged)


def _judge(node: ast.stmt) -> tuple[str, bool]:
    """``(effect, runs)`` of running the statement ``node``."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        effect, runs = _calls(*_evaluated(node))
        return _decorated(node) or effect, runs or bool(node.decorator_list)
    if isinstance(node, ast.ClassDef):
        return _first([(_class_header_effect(node), bool(header(node))), *(_judge(s) for s in node.body)])
    if isinstance(node, (ast.Import, ast.Pass)):
        return "", False
    if isinstance(node, ast.ImportFrom):
        return ("star import from %s" % (node.module or "."), True) if node.names[0].name == "*" else ("", False)
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if not all(_plain(t) for t in targets):
            return "assigns to an attribute or an item", _calls(node)[1]
        return _calls(*(n for n in (node.value, getattr(node, "annotation", None)) if n is not None))
    if isinstance(node, ast.Delete):
        return ("", False) if all(_plain(t) for t in node.targets) else ("deletes an attribute or an item", False)
    if isinstance(node, ast.Expr):
        if isinstance(node.value, ast.Constant):
            return "", False
        effect, _ = _calls(node.value)
        return effect or "evaluates an expression", True
    if isinstance(node, ast.If):
        if is_main_guard(node):
            return "", False
        return _first([_calls(node.test), *(_judge(s) for s in (*node.body, *node.orelse))])
    if isinstance(node, ast.Try):
        types = [_calls(h.type) for h in node.handlers if h.type is not None]
        blocks = [*node.body, *node.orelse, *node.finalbody, *(s for h in node.handlers for s in h.body)]
        return _first([*types, *(_judge(s) for s in blocks)])
    return "runs a %s statement" % type(node).__name__.lower(), True
