"""What code a candidate added to the tests may do with the existing tests' data: read it, never hold it.

An existing test's data -- a table at module level (``CASES = [...]``), a class attribute
(``cases = [...]`` read as ``self.cases``) -- is part of the test: trimmed of the case a broken
function fails, the test passes on C and nothing flips. Statements that rebind or change the
table by name were caught; a review then found a dozen ways around that (``_c = CASES;
_c.pop()``, ``list.pop(CASES)``, ``operator.delitem``, ``globals()['CASES']``, a walrus, a new
class body, a decorator or a default of a new function, a new ``setup_method``, a new test file
importing the test module). So the rule is about *uses*, not statements: in every line the
candidate added -- at module level, in a new definition (its decorators, defaults and body: a
test's body runs before other tests read the table too), in a new test file importing a test
module -- a reference to the data must be a pure read: iterated, compared, indexed, copied,
combined into a new value, or handed to a function that only reads (``len``, ``sorted``,
``pytest.mark.parametrize``, ``pytest.param``, a function the baseline's test module itself
defines). Anything else -- bound to another name, handed to any other function, a method other
than a reading one, an item or attribute set -- may change it, and is a finding; so is reaching
the module's names dynamically (``globals()``, ``vars()``, ``setattr``, ``sys.modules``,
``exec``). An honest reproducer reads a table; one that needs more says so with
``--expected-change path::NAME``.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

from runner import pyscan

#: Functions that change what they are given in place: a table handed to one is changed.
MUTATORS = ("list.", "dict.", "set.", "bytearray.", "operator.", "collections.", "heapq.", "bisect.", "random.shuffle")
#: Methods of a container that read it.
READING_METHODS = frozenset({"copy", "index", "count", "keys", "values", "items", "get"})
#: Calls that reach a module's namespace (``globals()``) or run code in it (``exec(code)``).
NAMESPACE = frozenset({"globals", "locals", "vars", "exec", "eval"})
#: Calls that set or delete an attribute by a computed name: judged by what they are given.
SETTERS = frozenset({"setattr", "delattr"})
#: Values that are a new mutable container: a table the tests iterate.
CONTAINERS = frozenset({"list", "dict", "set", "defaultdict", "OrderedDict", "deque", "collections.OrderedDict"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass(frozen=True)
class Misuse:
    line: int
    name: str
    how: str
    owner: str | None = None  # the existing class whose code it is in


@dataclass(frozen=True)
class Data:
    """The existing tests' data as the added code may name it.

    ``names``: module-level names holding it (and names imported from another test module that
    hold its data); ``modules``: a name bound to another test module, with the names of its data
    (``test_tables.CASES``); ``members``: an existing class's name with its class-level data
    (``self.cases`` in its methods, ``TestTable.cases`` anywhere; every class has an entry: an
    attribute of it set is a change of it); ``readers``: the baseline's own functions of the
    module, which may be handed the data -- and may not be changed in place
    (``double.__defaults__ = ...``); ``loose``: module-level names of values that are no table
    (``BASE = os.path.dirname(__file__)``, ``Cache = LRUCache``: a call's result, a name):
    handed anywhere, as tests do, but not rebound or changed in place; ``added``: names the
    candidate's code binds (its new functions, a new member as ``NAME``): a table handed to one
    of them is handed to code nobody reviewed.

    Only a table -- a list, dict or set display or comprehension, a container made by its
    constructor, or what the module's own statements fill in place -- is judged by every use: a
    table is what a test iterates for its cases, and what an alias or a helper trims unseen."""

    names: frozenset[str] = frozenset()
    modules: Mapping[str, Data] | None = None
    members: Mapping[str, frozenset[str]] | None = None
    readers: frozenset[str] = frozenset()
    loose: frozenset[str] = frozenset()
    added: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.names or self.modules or self.members or self.loose)

    def __or__(self, other: Data) -> Data:
        return Data(
            self.names | other.names,
            {**(self.modules or {}), **(other.modules or {})} or None,
            {**(self.members or {}), **(other.members or {})} or None,
            self.readers | other.readers,
            self.loose | other.loose,
            self.added | other.added,
        )


def module_data(tree: ast.Module) -> Data:
    """What ``tree`` (the baseline's test module) holds as its tests' data: the tables its
    module-level statements other than imports bind, the other names they bind (``loose``), and
    each class's class-level tables."""
    level = [n for n in pyscan.module_level(tree) if not isinstance(n, (ast.Import, ast.ImportFrom))]
    imported = set(pyscan.bindings([n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]))
    tables = _tables(level) - imported  # ``os.environ[...] = ...``: a module, not the tests' data
    members = {
        c.name: _tables([s for s in c.body if not isinstance(s, _DEFS)])
        for c in tree.body
        if isinstance(c, ast.ClassDef)
    }
    readers = frozenset(n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
    loose = frozenset(pyscan.bindings(level)) - tables
    return Data(tables, None, members, readers, loose)


def _tables(body: Sequence[ast.stmt]) -> frozenset[str]:
    """The names ``body`` binds to a new mutable container, or changes in place itself."""
    found: set[str] = set()
    for node in body:
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        mutable = isinstance(value, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp))
        if isinstance(value, ast.Call) and pyscan.dotted(value.func, calls=False) in CONTAINERS:
            mutable = True
        if mutable:
            found |= set(pyscan.bindings([node]))
        for sub in ast.walk(node):
            changed = _changed_root(sub)
            while isinstance(changed, (ast.Attribute, ast.Subscript)):
                changed = changed.value
            if isinstance(changed, ast.Name):
                found.add(changed.id)
    return frozenset(found)


def misuses(
    nodes: Sequence[ast.AST], data: Data, owner: str | None = None, owners: Mapping[int, str] | None = None
) -> Iterator[Misuse]:
    """Every use in ``nodes`` (added code, walked whole) of ``data`` that is not a pure read.
    ``owner``: the existing class ``nodes`` belong to (added methods or class-level statements),
    whose members ``self.X``/``cls.X`` -- and, in its body, its bare class-level names -- are data;
    ``owners``: the same, node by node (by ``id``), for nodes of several classes and the module
    walked together: an alias bound at module level is seen wherever it is used."""
    seen: set[tuple[int, str]] = set()
    first = _Walk(data, owner)
    walks: dict[str | None, _Walk] = {owner: first}
    module = set(data.names | data.loose | data.readers)
    mine_of = {id(n): (owners or {}).get(id(n), owner) for n in nodes}
    plain = [(_Plain().visit(copy.deepcopy(n)), mine_of[id(n)]) for n in nodes]
    first.alias([n for n, mine in plain if mine is None], module)
    for node, mine in plain:
        walk = walks.get(mine) or walks.setdefault(mine, first.sharing(mine))
        names = module
        if mine is not None and not isinstance(node, _DEFS):
            names = module | (data.members or {}).get(mine, frozenset())
        for found in walk.visit(node, names, module, None):
            if (found.line, found.name) not in seen:  # ``CASES.pop()``: one use, said once
                seen.add((found.line, found.name))
                yield replace(found, owner=mine)


class _Plain(ast.NodeTransformer):
    """The module's own names as names, however reached: ``globals()["CASES"]``,
    ``sys.modules[__name__].CASES``, ``importlib.import_module(__name__).CASES`` are ``CASES``."""

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        self.generic_visit(node)
        key = node.slice
        if _namespace(node.value) and isinstance(key, ast.Constant) and isinstance(key.value, str):
            return ast.copy_location(ast.Name(key.value, node.ctx), node)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if _this_module(node.value):
            return ast.copy_location(ast.Name(node.attr, node.ctx), node)
        return node


def _namespace(expr: ast.expr) -> bool:
    """``globals()``, ``locals()``, ``vars()``: the module's names as a dict."""
    if not isinstance(expr, ast.Call) or expr.args or expr.keywords:
        return False
    return pyscan.dotted(expr.func, calls=False) in ("globals", "locals", "vars")


def _this_module(expr: ast.expr) -> bool:
    """``sys.modules[__name__]``, ``sys.modules.get(__name__)``, ``import_module(__name__)``."""
    if isinstance(expr, ast.Subscript):
        own = pyscan.dotted(expr.value, calls=False) == "sys.modules"
        return own and isinstance(expr.slice, ast.Name) and expr.slice.id == "__name__"
    if isinstance(expr, ast.Call) and expr.args and isinstance(expr.args[0], ast.Name):
        func = pyscan.dotted(expr.func, calls=False)
        by_name = func == "sys.modules.get" or func.split(".")[-1] == "import_module"
        return by_name and expr.args[0].id == "__name__"
    return False


class _Walk:
    """One walk of added code, with the data names visible bare at each point: a function's own
    names hide the module's in its body, a class body's hide them in that body (not in its
    methods, which see the module's again)."""

    def __init__(self, data: Data, owner: str | None) -> None:
        self.data = data
        self.owner = owner
        self.up: dict[int, ast.AST | None] = {}  # each visited node's parent: ``_place`` climbs it
        self.aliases: dict[str, str] = {}  # a name bound to a table in a function or at module level: the table
        self.binding: set[int] = set()  # the statements binding them: no finding, their names are judged

    def sharing(self, owner: str | None) -> _Walk:
        """A walk of ``owner``'s code that knows what this one found: parents, aliases."""
        other = _Walk(self.data, owner)
        other.up, other.aliases, other.binding = self.up, self.aliases, self.binding
        return other

    def alias(self, stmts: Sequence[ast.AST], names: set[str]) -> None:
        """Names ``stmts`` bind to a table, plainly (``cases = CASES``, ``c = cases``), found
        before their scope is walked (a function defined above the alias may use it): added to
        ``names``, and judged by their uses as the table is -- reading through a local name is
        what tests do; ``_c.pop()`` through it is what a candidate trimming the table did."""
        grew = True
        while grew:
            grew = False
            for stmt in stmts:
                for sub in _own_nodes(stmt):
                    if not isinstance(sub, ast.Assign) or id(sub) in self.binding:
                        continue
                    targets = [t.id for t in sub.targets if isinstance(t, ast.Name)]
                    table = self._table(sub.value, names)
                    if len(targets) == len(sub.targets) and table is not None:
                        names.update(targets)
                        self.aliases.update(dict.fromkeys(targets, table))
                        self.binding.add(id(sub))
                        grew = True

    def _table(self, expr: ast.expr, names: set[str]) -> str | None:
        """The table ``expr`` is, by the name it is known by (``CASES``, ``self.cases``), or None."""
        if isinstance(expr, ast.Name) and expr.id in names:
            return self.aliases.get(expr.id) or (expr.id if expr.id in self.data.names else None)
        return _member(expr, self.data, self.owner) if isinstance(expr, ast.Attribute) else None

    def visit(self, node: ast.AST, names: set[str], outer: set[str], parent: ast.AST | None) -> Iterator[Misuse]:
        """``names``: visible here; ``outer``: visible in a function defined here."""
        self.up[id(node)] = parent
        if isinstance(node, _SCOPES):
            for part in _header(node):  # decorators, defaults, annotations: run where it is defined
                yield from self.visit(part, names, outer, node)
            inner = outer - _locals(node)
            body = node.body if isinstance(node.body, list) else [node.body]
            self.alias(body, inner)
            for stmt in body:
                yield from self.visit(stmt, inner, inner, node)
            return
        if isinstance(node, ast.ClassDef):
            for part in [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]:
                yield from self.visit(part, names, outer, node)
            own = set(pyscan.bindings([s for s in node.body if not isinstance(s, _DEFS)]))
            own |= {s.name for s in node.body if isinstance(s, _DEFS)}
            inside = self.sharing(self._heir(node))  # ``self.cases`` of a subclass is its base's
            for stmt in node.body:
                yield from inside.visit(stmt, names - own, names, node)
            return
        yield from self._judge(node, names, parent)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.keyword):  # an argument by keyword is judged with its call
                yield from self.visit(child.value, names, outer, node)
            else:
                yield from self.visit(child, names, outer, node)

    def _place(self, node: ast.expr, parent: ast.AST | None) -> tuple[ast.expr, ast.AST | None]:
        """Where ``node``'s value ends up: through ``and``/``or`` and a conditional expression's
        branches, which hand on an operand itself (``x = CASES or []`` holds the table; ``assert
        CASES and ...`` reads it)."""
        while isinstance(parent, ast.BoolOp) or (isinstance(parent, ast.IfExp) and node is not parent.test):
            node, parent = parent, self.up.get(id(parent))
        if isinstance(parent, ast.IfExp):  # its test: read
            return node, ast.Expr(node)
        return node, parent

    def _heir(self, node: ast.ClassDef) -> str | None:
        """The existing class whose data ``self.X`` reaches in ``node``'s methods: ``node``
        itself, or the first of its bases that holds data (a class attribute is shared with
        every subclass: ``self.cases.pop()`` in one trims the base's)."""
        members = self.data.members or {}
        for name in [node.name, *(pyscan.dotted(b, calls=False) for b in node.bases)]:
            if members.get(name):
                return name
        return self.owner if node.name == self.owner else None

    def _judge(self, node: ast.AST, names: set[str], parent: ast.AST | None) -> Iterator[Misuse]:
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Name) and node.id in names:
            table = node.id in self.data.names or node.id in self.aliases
            if not table and isinstance(node.ctx, ast.Load):
                return  # no table: read and handed on as tests do; changes are judged below
            if id(parent) in self.binding and (isinstance(node.ctx, ast.Load) or node.id in self.aliases):
                return  # an alias bound (``alias``): its uses are judged
            yield from _judged(node, self.aliases.get(node.id, node.id), self._place(node, parent), self.data)
        elif isinstance(node, ast.Attribute):
            name = _member(node, self.data, self.owner)
            if name is not None and not (id(parent) in self.binding and isinstance(node.ctx, ast.Load)):
                yield from _judged(node, name, self._place(node, parent), self.data)
            elif not isinstance(node.ctx, ast.Load) and self._holder(node.value, names):
                yield Misuse(line, pyscan.dotted(node, calls=False) or node.attr, "sets or deletes an attribute of it")
            if node.attr == "__dict__" and self._holder(node.value, names):
                yield Misuse(line, "__dict__", "reaches names by a computed key (__dict__)")
        elif isinstance(node, ast.Call):
            yield from self._computed(node, names, parent)
        changed = _changed_root(node)
        root = None if changed is None else self._root(changed, names)
        if root is not None:
            yield Misuse(line, root, "changes what it holds")

    def _computed(self, call: ast.Call, names: set[str], parent: ast.AST | None) -> Iterator[Misuse]:
        """A call reaching the module's names by a computed key: ``globals()`` (or ``vars()``)
        used as more than a read -- an item set, a method that changes it, an alias --
        ``exec(code)`` in the module's namespace; ``setattr``/``delattr``/``vars`` on the data,
        an existing class or another test module."""
        func = pyscan.dotted(call.func, calls=False)
        line = call.lineno
        given = len(call.args) + len(call.keywords)
        if func in ("globals", "locals") or (func == "vars" and not given):
            how = _use(*self._place(call, parent), self.data)
            if how is not None:
                yield Misuse(line, func, "%s: the module's names, by a computed key (%s)" % (how, func))
        elif func in ("exec", "eval") and given < 2:
            yield Misuse(line, func, "runs code in the module's namespace (%s)" % func)
        elif (func in SETTERS or func == "vars") and call.args and self._holder(call.args[0], names):
            yield Misuse(line, func, "sets or deletes an attribute of the tests' data by a computed key (%s)" % func)
        elif func == "getattr" and len(call.args) >= 2 and self._holder(call.args[0], names):
            reached = _getattr(call)
            name = None if reached is None else _member(reached, self.data, self.owner)
            how = "reads an attribute by a computed key" if reached is None else None
            if name is not None:
                how = _use(*self._place(call, parent), self.data)
            if how is not None:
                yield Misuse(line, name or func, "%s (getattr)" % how)

    def _holder(self, expr: ast.expr, names: set[str]) -> bool:
        """Whether ``expr`` is the data, an existing class, another test module, or reaches into one."""
        if self._root(expr, names) is not None:
            return True
        while isinstance(expr, (ast.Attribute, ast.Subscript)):
            expr = expr.value
        if not isinstance(expr, ast.Name):
            return False
        return expr.id in (self.data.members or {}) or expr.id in (self.data.modules or {})

    def _root(self, expr: ast.expr, names: set[str]) -> str | None:
        """The data ``expr`` reaches into (an item of an item of ``CASES``, an attribute of
        ``self.cases``), or a function of the baseline's changed in place; None for anything else."""
        while True:
            if isinstance(expr, ast.Call):
                reached = _getattr(expr)  # ``getattr(TestTable, "cases").pop()``
                if reached is None:
                    return None
                expr = reached
            if isinstance(expr, ast.Attribute):
                found = _member(expr, self.data, self.owner)
                if found is not None:
                    return found
            if isinstance(expr, ast.Name):
                return self.aliases.get(expr.id, expr.id) if expr.id in names else None
            if not isinstance(expr, (ast.Attribute, ast.Subscript)):
                return None
            expr = expr.value


def _header(node: ast.AST) -> list[ast.AST]:
    """What a definition evaluates where it is defined: decorators, defaults, annotations."""
    assert isinstance(node, _SCOPES)
    args = node.args
    parts: list[ast.AST] = [*args.defaults, *(d for d in args.kw_defaults if d is not None)]
    if not isinstance(node, ast.Lambda):
        parts += [*node.decorator_list, *([node.returns] if node.returns else [])]
        every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
        parts += [a.annotation for a in every if a is not None and a.annotation is not None]
    return parts


def _changed_root(node: ast.AST) -> ast.expr | None:
    """What a nested item or attribute store, delete or in-place method call changes, as the
    expression it reaches through (``CASES[0]`` of ``CASES[0][1] = x``, ``CASES[0]`` of
    ``CASES[0].append(x)``); the caller finds the data at its root."""
    if isinstance(node, (ast.Attribute, ast.Subscript)) and not isinstance(node.ctx, ast.Load):
        return node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in pyscan.IN_PLACE:
        return node.func.value
    return None


def _member(node: ast.Attribute, data: Data, owner: str | None) -> str | None:
    """The dotted name when ``node`` is data reached through an attribute: ``module.X`` or
    ``module.Class.X`` of another test module's, ``self.X``, ``cls.X``, ``Class.X`` of an
    existing class's; None otherwise."""
    prefix = _holder_name(node.value)
    modules = data.modules or {}
    if prefix in modules and node.attr in modules[prefix].names:
        return "%s.%s" % (prefix, node.attr)
    holder, _, cls = prefix.rpartition(".")
    if holder in modules and node.attr in (modules[holder].members or {}).get(cls, ()):
        return "%s.%s" % (prefix, node.attr)  # ``test_tables.TestDoubles.cases``
    members = data.members or {}
    name = owner if prefix in ("self", "cls") else prefix
    if name is not None and node.attr in members.get(name, ()):
        return "%s.%s" % (prefix, node.attr)
    return None


def _getattr(call: ast.Call) -> ast.Attribute | None:
    """``X.name`` for ``getattr(X, "name"[, default])``; None for any other call."""
    if pyscan.dotted(call.func, calls=False) != "getattr" or len(call.args) < 2:
        return None
    key = call.args[1]
    if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
        return None
    return ast.copy_location(ast.Attribute(call.args[0], key.value, ast.Load()), call)


def _holder_name(expr: ast.expr) -> str:
    """The dotted name of what holds an attribute, the instance's class spelled as the instance
    (``type(self)``, ``self.__class__`` as ``self``); "" for anything else."""
    if isinstance(expr, ast.Call) and pyscan.dotted(expr.func, calls=False) == "type" and len(expr.args) == 1:
        expr = expr.args[0]
    name = pyscan.dotted(expr, calls=False)
    return name[: -len(".__class__")] if name.endswith(".__class__") else name


def _judged(node: ast.expr, name: str, place: tuple[ast.expr, ast.AST | None], data: Data) -> Iterator[Misuse]:
    """``node`` naming the data ``name``, its value ending up at ``place`` (``_Walk._place``)."""
    line = getattr(node, "lineno", 0)
    if not isinstance(getattr(node, "ctx", None), ast.Load):
        yield Misuse(line, name, "rebinds or deletes it")
        return
    how = _use(*place, data)
    if how is not None:
        yield Misuse(line, name, how)


def _use(node: ast.expr, parent: ast.AST | None, data: Data) -> str | None:
    """None when ``node``'s place in ``parent`` only reads it; else what it does."""
    if isinstance(parent, ast.Starred):
        return None  # unpacked into a display or a call's arguments: a copy (judged as the call)
    if isinstance(parent, (ast.For, ast.AsyncFor, ast.comprehension)) and node is parent.iter:
        return None
    if isinstance(parent, (ast.Compare, ast.BinOp, ast.UnaryOp, ast.FormattedValue, ast.Assert, ast.If, ast.While)):
        return None
    if isinstance(parent, ast.Expr):
        return None
    if isinstance(parent, ast.Subscript) and node is parent.value:
        return None if isinstance(parent.ctx, ast.Load) else "sets or deletes an item of it"
    if isinstance(parent, ast.Attribute):
        if isinstance(parent.ctx, ast.Load) and parent.attr in READING_METHODS:
            return None
        return "reaches its attribute %s" % parent.attr
    if isinstance(parent, ast.Call) and node is not parent.func:
        func = pyscan.dotted(parent.func, calls=False)
        added = func in data.added or (func.split(".", 1)[-1] in data.added and func.startswith(("self.", "cls.")))
        if func and not added and not func.startswith(MUTATORS):
            return None  # the project's code, pytest's, a reader: handed a table, as tests do
        return "hands it to %s" % (func or "a computed callable")
    if isinstance(parent, ast.Call):
        return None  # calling it: a function of the baseline's, as its tests do
    if isinstance(parent, ast.ClassDef) and node in parent.bases:
        return None  # a class made from it: its own attributes are its own
    return "holds it (%s)" % type(parent).__name__ if parent is not None else "holds it"


def _locals(scope: ast.AST) -> set[str]:
    """Names a function or lambda binds itself (parameters, assignments, imports, nested
    definitions) and does not declare ``global``: in its body they are not the module's."""
    assert isinstance(scope, _SCOPES)
    args = scope.args
    found = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    found |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    declared: set[str] = set()
    body = scope.body if isinstance(scope.body, list) else [scope.body]
    for stmt in body:
        for sub in _own_nodes(stmt):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)):
                found.add(sub.id)
            elif isinstance(sub, (ast.Import, ast.ImportFrom)):
                found |= {(a.asname or a.name).split(".")[0] for a in sub.names}
            elif isinstance(sub, _DEFS):
                found.add(sub.name)
            elif isinstance(sub, (ast.Global, ast.Nonlocal)):
                declared |= set(sub.names)
    return found - declared


def _own_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """``node`` and what it holds, not entering nested scopes (their names are their own)."""
    yield node
    if isinstance(node, (*_SCOPES, ast.ClassDef)):
        return
    for child in ast.iter_child_nodes(node):
        yield from _own_nodes(child)


def imported_data(tree: ast.Module, modules: Mapping[str, Data]) -> Data:
    """What ``tree`` (a new or changed test file) binds of other test modules' data: a module
    (``import test_tables``, ``from tests import test_tables as t``), a name of its data or a
    class holding some (``from test_tables import CASES, TestDoubles``). ``modules``: each
    existing test module's data by its file's stem."""
    names: set[str] = set()
    bound: dict[str, Data] = {}
    members: dict[str, frozenset[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                stem = alias.name.split(".")[-1]
                if stem in modules:  # reached as ``tests.test_tables.CASES`` without an as-name
                    bound[alias.asname or alias.name] = modules[stem]
        elif isinstance(node, ast.ImportFrom):
            stem = (node.module or "").split(".")[-1]
            for alias in node.names:
                name = alias.asname or alias.name
                if alias.name in modules:  # ``from tests import test_tables``
                    bound[name] = modules[alias.name]
                elif stem in modules and alias.name in modules[stem].names:
                    names.add(name)
                elif stem in modules and alias.name in (modules[stem].members or {}):
                    members[name] = (modules[stem].members or {})[alias.name]
    return Data(frozenset(names), bound or None, members or None)


def string_reach(tree: ast.AST, stems: Collection[str]) -> Iterator[Misuse]:
    """A test module reached by its name in a string (``sys.modules["test_tables"]``,
    ``importlib.import_module("tests.test_tables")``): its data, out of any name's sight."""
    for node in ast.walk(tree):
        key: ast.expr | None = None
        if isinstance(node, ast.Subscript) and pyscan.dotted(node.value, calls=False) == "sys.modules":
            key = node.slice
        elif isinstance(node, ast.Call) and node.args:
            func = pyscan.dotted(node.func, calls=False)
            if func.split(".")[-1] in ("import_module", "__import__") or func == "sys.modules.get":
                key = node.args[0]
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            stem = key.value.split(".")[-1]
            if stem in stems and not stem.startswith("__"):
                yield Misuse(getattr(node, "lineno", 0), key.value, "names a test module by a string")
