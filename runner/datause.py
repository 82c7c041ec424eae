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
``exec``); so is a patch of the data, an existing class or a test module that nothing undoes
(``mock.patch.object(...).start()``: it outlives the new test into the existing ones), and an
existing class handed whole to a function the candidate added. An honest reproducer reads a
table; one that needs more says so with ``--expected-change path::NAME``.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

from pytest_evidence import syntax
from runner import pyscan, reaching

#: Methods that change a container in place, called on it or as ``list.pop(CASES)``.
CHANGING = pyscan.IN_PLACE | {
    "sort",
    "reverse",
    "intersection_update",
    "difference_update",
    "symmetric_difference_update",
    *("__%s__" % m for m in ("init", "setattr", "delattr", "setstate", "iadd", "isub", "imul", "ior", "iand", "ixor")),
}
#: The types whose methods ``CHANGING`` names, as a function is called through them.
_TYPES = frozenset({"list", "dict", "set", "bytearray", "deque", "collections.deque", "OrderedDict"})
#: Functions that change what they are given in place, by the last part of their name (they
#: are imported bare too: ``from heapq import heappop``): a table handed to one is changed.
#: Not a prefix of a module: ``collections.Counter``, ``heapq.nsmallest``, ``bisect.bisect``
#: read what they are given.
MUTATORS = frozenset(
    {"heappush", "heappop", "heapify", "heapreplace", "heappushpop", "insort", "insort_left", "insort_right"}
    | {"shuffle", "setitem", "delitem", "iadd", "iconcat", "isub", "imul", "ior", "iand", "ixor"}
)
#: Methods of a container that read it.
READING_METHODS = frozenset({"copy", "index", "count", "keys", "values", "items", "get"})
#: Methods handing back an item of a container: ``BYOP.get("double")`` is part of ``BYOP``.
ITEM_METHODS = frozenset({"get", "values", "items", "setdefault", "__getitem__"})
#: Calls whose value is what they are given (``typing.cast(list, CASES)``,
#: ``contextlib.nullcontext(CASES)``), or an item of it or an iterator over it (``max(CASES,
#: [])``, ``enumerate(ROWS)``): handed a table, their value is followed as the table or as an
#: item of it. Not any call: a value made from a table (``PrettyTable(HEADER)``) is the
#: project's own object, whose methods (``add_row``) do not change the table.
HANDING_BACK = frozenset({"typing.cast", "cast", "contextlib.nullcontext", "nullcontext"})
ITEMS_BACK = frozenset(
    {"max", "min", "next", "iter", "reversed", "enumerate", "zip", "filter", "map", "random.choice", "random.sample"}
    | {"itertools.chain", "itertools.islice", "itertools.cycle", "functools.reduce"}
)
#: Calls whose value is a new container the module's tests may iterate, besides ``CONTAINERS``.
BUILDERS = frozenset({"sorted", "copy.copy", "copy.deepcopy", "json.load", "json.loads", "yaml.safe_load", "yaml.load"})
#: Calls that reach a module's namespace (``globals()``) or run code in it (``exec(code)``).
NAMESPACE = frozenset({"globals", "locals", "vars", "exec", "eval"})
#: Calls reaching every loaded module, the test modules among them, without naming one.
SCANS = frozenset({"sys.modules.values", "sys.modules.items", "sys.modules.copy", "gc.get_objects", "gc.get_referrers"})
#: Calls that set or delete an attribute by a computed name: judged by what they are given.
SETTERS = frozenset({"setattr", "delattr"})
#: ``unittest.mock.patch``'s patchers besides itself, and a ``MonkeyPatch``'s methods: each
#: puts a value in place of an attribute or an item until something undoes it.
PATCHERS = frozenset({"object", "dict", "multiple"})
PATCHING_METHODS = frozenset({"setattr", "setitem", "delattr", "delitem"})
#: pytest-mock's fixtures of a scope wider than a test: a patch through one is undone when its
#: class, module, package or session ends -- after the existing tests that read the data.
WIDE_MOCKERS = frozenset({"class_mocker", "module_mocker", "package_mocker", "session_mocker"})
#: Values that are a new mutable container: a table the tests iterate.
CONTAINERS = frozenset({"list", "dict", "set", "defaultdict", "OrderedDict", "deque", "collections.OrderedDict"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
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
    of them is handed to code nobody reviewed; ``fresh``: per class, the names its ``__init__``
    or xunit setup binds on ``self`` to a new container (``self.created = []``), which each test's
    instance holds as its own; ``shared``: the classes whose instances share the class's data (a
    test class: no ``__init__`` or decorator of its own, no base but the module's own classes,
    ``object`` or a ``TestCase`` -- not a pydantic model or a helper that copies its defaults).

    Only a table -- a list, dict or set display or comprehension, a container made by its
    constructor, or what the module's own statements fill in place -- is judged by every use: a
    table is what a test iterates for its cases, and what an alias or a helper trims unseen."""

    names: frozenset[str] = frozenset()
    modules: Mapping[str, Data] | None = None
    members: Mapping[str, frozenset[str]] | None = None
    readers: frozenset[str] = frozenset()
    loose: frozenset[str] = frozenset()
    added: frozenset[str] = frozenset()
    fresh: Mapping[str, frozenset[str]] | None = None
    shared: frozenset[str] = frozenset()

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
            {**(self.fresh or {}), **(other.fresh or {})} or None,
            self.shared | other.shared,
        )


def module_data(tree: ast.Module) -> Data:
    """What ``tree`` (the baseline's test module) holds as its tests' data: the tables its
    module-level statements other than imports bind, the other names they bind (``loose``), and
    each class's class-level tables."""
    level = [n for n in pyscan.module_level(tree) if not isinstance(n, (ast.Import, ast.ImportFrom))]
    imported = set(pyscan.bindings([n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]))
    functions = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    readers = frozenset(f.name for f in functions)
    makers = frozenset(f.name for f in functions if _makes_container(f))
    tables = _tables(level, frozenset(), makers) - imported  # ``os.environ[...] = ...``: a module's
    classes = [c for c in tree.body if isinstance(c, ast.ClassDef)]
    members = {c.name: _tables([s for s in c.body if not isinstance(s, _DEFS)], tables, makers) for c in classes}
    unittest = _unittest(classes)
    fresh = {c.name: _fresh(c, c.name in unittest) for c in classes}
    loose = frozenset(pyscan.bindings(level)) - tables
    members = _inherited(classes, members, lambda c: {name for s in c.body for name in _bound_by(s)})
    return Data(
        tables,
        None,
        members,
        readers,
        loose,
        fresh=_inherited(classes, fresh, lambda c: _own_setup(c, fresh)),
        shared=_shared(classes),
    )


def _inherited(
    classes: Sequence[ast.ClassDef], held: dict[str, frozenset[str]], hides: Callable[[ast.ClassDef], set[str]]
) -> dict[str, frozenset[str]]:
    """Each class's ``held`` names with its bases' in the module, but what ``hides`` says it binds
    itself: a class attribute is shared with every subclass (``TestAgain(TestTable)``'s
    ``cases`` is ``TestTable``'s list, and ``TestAgain.cases.pop()`` trimmed it, CERTIFIED)."""
    grew = True
    while grew:
        grew = False
        for node in classes:
            for base in (pyscan.dotted(b, calls=False) or "" for b in node.bases):
                more = held.get(base, frozenset()) - hides(node) - held[node.name]
                if base != node.name and more:
                    held[node.name] |= more
                    grew = True
    return held


#: The methods pytest runs before each test of any class, and unittest's (its ``TestCase``'s).
_SETUPS = frozenset({"setup_method"})
_UNITTEST_SETUPS = frozenset({"setUp", "__init__"})
#: Decorators and bases (by their last name) of classes that copy their defaults into each
#: instance: a dataclass, an attrs class, a pydantic model or settings.
_COPIERS = frozenset(
    {"dataclass", "s", "attrs", "define", "frozen", "mutable", "BaseModel", "BaseSettings", "RootModel"}
)


def _own_setup(node: ast.ClassDef, fresh: Mapping[str, frozenset[str]]) -> set[str]:
    """Every name any class's setup makes fresh, where ``node`` has a setup of its own that does
    not call its base's; none otherwise."""
    setups = [m for m in node.body if isinstance(m, _DEFS) and m.name in _SETUPS | _UNITTEST_SETUPS]
    calls_base = all(
        any(
            isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr == m.name
            for c in syntax.walk(m)
        )
        for m in setups
    )  # ``super().setUp()``, ``Base.setUp(self)``
    return set() if calls_base else {name for names in fresh.values() for name in names}


def _derived(classes: Sequence[ast.ClassDef], direct: Callable[[ast.ClassDef, list[str]], bool]) -> set[str]:
    """The classes ``direct`` says so of (given each one's base names), and those deriving from
    one of them through the module's classes."""
    found: set[str] = set()
    grew = True
    while grew:
        grew = False
        for node in (c for c in classes if c.name not in found):
            bases = [pyscan.dotted(b, calls=False) or "" for b in node.bases]
            if direct(node, bases) or any(b in found for b in bases):
                found.add(node.name)
                grew = True
    return found


def _unittest(classes: Sequence[ast.ClassDef]) -> set[str]:
    """The classes deriving from a ``TestCase``, directly or through the module's classes."""
    return _derived(classes, lambda node, bases: any(b.endswith("TestCase") for b in bases))


def _fresh(node: ast.ClassDef, unittest: bool) -> frozenset[str]:
    """The names the setup run before each of ``node``'s tests (``setup_method``; a
    ``TestCase``'s ``setUp`` and ``__init__``) binds on ``self`` to a new container of literals
    (``self.created = []``): each test's instance holds its own. Not a copy of the class's
    (``list(self.cases)``: its items are the class's) nor an alias of it (``self.CASES``)."""
    found = set()
    names = _SETUPS | (_UNITTEST_SETUPS if unittest else frozenset())
    for method in (m for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))):
        if method.name not in names:
            continue
        for sub in (n for n in syntax.walk(method) if isinstance(n, (ast.Assign, ast.AnnAssign))):
            targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
            if sub.value is not None and _new_container(sub.value):
                found |= {t.attr for t in targets if isinstance(t, ast.Attribute) and pyscan.dotted(t.value) == "self"}
    return frozenset(found)


#: What a new container of literals holds: literals, and the builtin types a ``defaultdict`` is given.
_LITERAL = (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.Constant, ast.UnaryOp, ast.expr_context, ast.unaryop)
_TYPES_GIVEN = frozenset({"list", "dict", "set", "int", "float", "str", "bool", "tuple"})


def _new_container(value: ast.expr) -> bool:
    """A display of literals, or a container's constructor given nothing or literals
    (``defaultdict(list)``): nothing in it is another object's, the class's list among them."""
    if isinstance(value, ast.Call):
        if pyscan.dotted(value.func, calls=False) not in CONTAINERS:
            return False
        parts = [*value.args, *(k.value for k in value.keywords)]
    elif isinstance(value, (ast.List, ast.Set, ast.Dict)):
        parts = [value]
    else:
        return False
    return all(
        isinstance(n, _LITERAL) or (isinstance(n, ast.Name) and n.id in _TYPES_GIVEN)
        for part in parts
        for n in syntax.walk(part)
    )


def _shared(classes: Sequence[ast.ClassDef]) -> frozenset[str]:
    """The classes whose instances share the class's attributes as they are: all but one with
    an ``__init__`` of its own, or made by a library that copies its defaults into each instance
    (``_COPIERS``: a dataclass, an attrs class, a pydantic model), or deriving from one of the
    module's that is."""

    def copies(node: ast.ClassDef, bases: list[str]) -> bool:
        marks = [
            pyscan.dotted(d.func if isinstance(d, ast.Call) else d, calls=False) or "" for d in node.decorator_list
        ]
        own_init = any(isinstance(m, _DEFS) and m.name == "__init__" for m in node.body)
        return own_init or any(n.rpartition(".")[2] in _COPIERS for n in [*marks, *bases])

    copying = _derived(classes, copies)
    return frozenset(c.name for c in classes if c.name not in copying)


def _makes_container(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether ``function`` returns a container it builds (``return [(4, 8)]``): what a module
    binds by calling it is a table. Not a factory of the module's (``_make_parser()``): a
    parser, a client, an app, whose methods tests call as they please."""
    returned = [n.value for n in _own_body(function) if isinstance(n, ast.Return)]
    return any(_container(value, frozenset(), frozenset()) for value in returned)


def _tables(body: Sequence[ast.stmt], tables: frozenset[str], makers: frozenset[str]) -> frozenset[str]:
    """The names ``body`` binds to a container (``_container``), or changes in place itself.
    ``tables``: the module's, which a class body may bind again (``more = CASES``); ``makers``:
    the module's functions returning a container they build."""
    found: set[str] = set()
    for node in body:
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        pairs: list[tuple[ast.expr, ast.expr | None]] = [(t, value) for t in getattr(node, "targets", [])]
        if isinstance(node, ast.AnnAssign):
            pairs = [(node.target, value)]
        for target, made in list(pairs):  # ``CASES, OTHER = [...], []``
            if isinstance(target, ast.Tuple) and isinstance(made, ast.Tuple) and len(target.elts) == len(made.elts):
                pairs += zip(target.elts, made.elts, strict=True)
        for target, made in pairs:
            if isinstance(target, ast.Name) and _container(made, tables | found, makers):
                found.add(target.id)
        for sub in syntax.walk(node):
            changed = _changed_root(sub)
            while isinstance(changed, (ast.Attribute, ast.Subscript)):
                changed = changed.value
            if isinstance(changed, ast.Name):
                found.add(changed.id)
    return frozenset(found)


def _container(value: ast.expr | None, tables: frozenset[str], makers: frozenset[str]) -> bool:
    """Whether ``value`` is a container the tests may iterate for their cases: a display or a
    comprehension; made by a container's constructor, ``sorted``, a copy, a loader or the
    module's own function building one (``_load()``, ``makers``); combined from one (``[...] +
    [...]``); either branch of a conditional; a table by another name (``more = CASES`` in a class body). Built any of
    these ways, an alias of it, or a helper handed it, trims it as well as a display's."""
    if isinstance(value, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)):
        return True
    if isinstance(value, ast.Name):
        return value.id in tables
    if isinstance(value, ast.Call):
        func = pyscan.dotted(value.func, calls=False)
        return func in CONTAINERS or func in BUILDERS or func in makers
    parts: list[ast.expr] = []
    if isinstance(value, ast.BinOp):
        parts = [value.left, value.right]
    elif isinstance(value, ast.IfExp):
        parts = [value.body, value.orelse]
    elif isinstance(value, ast.BoolOp):
        parts = list(value.values)
    return any(_container(part, tables, makers) for part in parts)


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
    first.heirs = _heirs(nodes, data)
    walks: dict[str | None, _Walk] = {owner: first}
    module = set(data.names | data.loose | data.readers)
    mine_of = {id(n): (owners or {}).get(id(n), owner) for n in nodes}
    plain = [(_Plain().visit(copy.deepcopy(n)), mine_of[id(n)]) for n in nodes]
    at_module = [n for n, mine in plain if mine is None]
    first.scopes = reaching.Scopes([n for n, _ in plain], at_module)
    known = -1
    while known != len(first.tables):  # aliases bound anywhere, before any use is judged
        known = len(first.tables)  # (``_setup()`` binding ``global _c`` is defined below its caller)
        first.alias(at_module, module)
        first.follow(at_module, module)
        for node, mine in plain:
            walk = walks.get(mine) or walks.setdefault(mine, first.sharing(mine))
            for function in (n for n in syntax.walk(node) if isinstance(n, _SCOPES)):
                body = function.body if isinstance(function.body, list) else [function.body]
                walk.alias(body, module - _locals(function))
                walk.follow(body, module - _locals(function))
    for node, mine in plain:
        walk = walks.get(mine) or walks.setdefault(mine, first.sharing(mine))
        names = module
        if mine is not None and not isinstance(node, _DEFS):
            names = module | (data.members or {}).get(mine, frozenset())
        for found in walk.visit(node, names, module, None):
            if (found.line, found.name) not in seen:  # ``CASES.pop()``: one use, said once
                seen.add((found.line, found.name))
                yield replace(found, owner=mine)


def _test_module(name: str) -> bool:
    """Whether a module of that name is one pytest's default ``python_files`` collects."""
    return name.startswith("test") or name.endswith("_test")


def _heirs(nodes: Sequence[ast.AST], data: Data) -> dict[str, tuple[str, frozenset[str]]]:
    """The classes ``nodes`` define deriving, directly or through each other, from an existing
    class with data: each one's name, that class and what the new one binds itself. Its
    attributes reach the data as the base's do: ``class _K(TestTable): pass`` then
    ``_K.cases.pop()`` trimmed the base's cases, CERTIFIED."""
    members = data.members or {}
    modules = data.modules or {}
    new = [n for node in nodes for n in syntax.walk(node) if isinstance(n, ast.ClassDef) and n.name not in members]
    heirs: dict[str, tuple[str, frozenset[str]]] = {}

    def reached(node: ast.ClassDef) -> tuple[str, frozenset[str]] | None:
        for base in (pyscan.dotted(b, calls=False) or "" for b in node.bases):
            module, _, cls = base.rpartition(".")
            if members.get(base) or (module in modules and (modules[module].members or {}).get(cls)):
                return base, frozenset()
            if base in heirs:
                return heirs[base]
        return None

    grew = True
    while grew:
        grew = False
        for node in (n for n in new if n.name not in heirs):
            found = reached(node)
            if found is not None:
                own = {name for s in node.body for name in _bound_by(s)}
                heirs[node.name] = (found[0], found[1] | own)
                grew = True
    return heirs


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
        if _this_module(node.value) and node.attr == "__dict__":  # its names as a dict: ``globals()``
            return ast.copy_location(ast.Call(ast.Name("globals", ast.Load()), [], []), node)
        if _this_module(node.value):
            return ast.copy_location(ast.Name(node.attr, node.ctx), node)
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        """``globals().get("CASES")``."""
        self.generic_visit(node)
        func, key = node.func, node.args[0] if node.args else None
        if isinstance(func, ast.Attribute) and func.attr == "get" and _namespace(func.value):
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                return ast.copy_location(ast.Name(key.value, ast.Load()), node)
        return node


def _namespace(expr: ast.expr) -> bool:
    """``globals()``, ``locals()``, ``vars()``, a frame's ``f_globals``: the module's names as a dict."""
    if isinstance(expr, ast.Attribute):
        return expr.attr == "f_globals"  # ``sys._getframe().f_globals``, ``inspect.currentframe()...``
    if not isinstance(expr, ast.Call) or expr.args or expr.keywords:
        return False
    return pyscan.dotted(expr.func, calls=False) in ("globals", "locals", "vars")


def _this_module(expr: ast.expr) -> bool:
    """``sys.modules[__name__]``, ``sys.modules.get(__name__)``, ``import_module(__name__)``,
    and a test's ``request.module``."""
    if pyscan.dotted(expr, calls=False) == "request.module":
        return True
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
        self.scopes = reaching.Scopes([], [])  # the walked code's: each node's parent, each name's bindings
        # each binding of a name to a table (a ``Name`` stored, a parameter handed one): the table,
        # and whether it is an item of it (``for row in ROWS``) rather than it
        self.tables: dict[int, tuple[str, bool]] = {}
        self.binding: set[int] = set()  # the statements binding them: no finding, their names are judged
        self.followed: set[int] = set()  # the arguments handed to an added function: judged in it, not here
        self.own: frozenset[str] = frozenset()  # in a class the candidate added: what its body binds
        # a class the candidate added deriving from an existing one with data: that class, and
        # what the new one binds itself (``_K.cases`` is ``TestTable.cases`` unless ``_K`` binds ``cases``)
        self.heirs: Mapping[str, tuple[str, frozenset[str]]] = {}

    def sharing(self, owner: str | None) -> _Walk:
        """A walk of ``owner``'s code that knows what this one found: scopes, aliases."""
        other = _Walk(self.data, owner)
        other.scopes, other.tables = self.scopes, self.tables
        other.binding, other.followed = self.binding, self.followed
        other.heirs = self.heirs
        return other

    def alias(self, stmts: Sequence[ast.AST], names: set[str]) -> None:
        """Names ``stmts`` bind to a table, plainly (``cases = CASES``, ``c = cases``), found
        before their scope is walked (a function defined above the alias may use it): each such
        binding is the table (``tables``), and the uses it reaches (``reaching``) are judged as
        the table's -- reading through a local name is what tests do; ``_c.pop()`` through it is
        what a candidate trimming the table did."""
        grew = True
        module = self.data.names | self.data.loose | self.data.readers
        while grew:
            grew = False
            for stmt in stmts:
                for sub in _own_nodes(stmt):
                    target = sub.target if isinstance(sub, ast.AugAssign) else None
                    kept = self._alias(target) if isinstance(target, ast.Name) else None
                    if target is not None and kept is not None and id(target) not in self.tables:
                        self.tables[id(target)] = kept  # ``c += []``: what it was, changed in place
                        grew = True
                    for binder, targets, value, items in _binds(sub):
                        table = None if id(binder) in self.binding else self._table(value, names)
                        if table is not None and all(isinstance(t, ast.Name) for t in targets):
                            for target in (t for t in targets if isinstance(t, ast.Name)):
                                if target.id not in module or self.scopes.scope(target)[0] is not None:
                                    self.tables[id(target)] = (table, items or self._part(value))
                            self.binding.add(id(binder))
                            grew = True

    def follow(self, stmts: Sequence[ast.AST], names: set[str]) -> None:
        """The parameters of the functions the candidate added in ``stmts`` (at module level, or
        in a function's body) that it calls with a table (``_check_all(CASES)``): aliases in the
        function's body, judged by their uses there -- a helper reading the cases, as tests
        share them, is no finding; one trimming them is, where it does. Only where the call
        surely runs that code: not a decorated function (its name is the decorator's value) but
        under ``contextlib.contextmanager`` and the like, which call it with what they are given;
        nor a name bound otherwise too (``_h = list.pop`` after the ``def``)."""
        functions = [n for n in stmts if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        self._fixtures(functions, names)
        patched = self._patched()
        for stmt in stmts:
            for call in (c for c in syntax.walk(stmt) if isinstance(c, ast.Call)):
                if any(isinstance(a, ast.Starred) for a in call.args):
                    continue
                if not isinstance(call.func, ast.Name) or call.func.id in patched:
                    continue
                bound = [b.node for b in self.scopes.reaching(call.func)]
                called = [f for f in functions if any(f is b for b in bound) and _plain_decorators(f)]
                if len(called) == len(bound):  # every definition that may be it: which runs depends on when
                    for target in called:
                        self._hand(target, call, names)

    def _inherited(self, node: ast.ClassDef, seen: set[int]) -> set[str]:
        """What the bases of ``node`` the walked code defines bind in their bodies: a method a
        new class inherits from a class the candidate wrote is the candidate's too."""
        found: set[str] = set()
        for base in (b for b in node.bases if isinstance(b, ast.Name)):
            scope, _ = self.scopes.scope(base)
            for binding in self.scopes.bindings(scope).get(base.id, []):
                if isinstance(binding.node, ast.ClassDef) and id(binding.node) not in seen:
                    seen.add(id(binding.node))
                    found |= {name for s in binding.node.body for name in _bound_by(s)}
                    found |= self._inherited(binding.node, seen)
        return found

    def _patched(self) -> set[str]:
        """Names of the walked code's functions it may not follow: one whose name is used but to
        call it, or to hand it to a call that only calls it (``map(_check, ...)``,
        ``pytest.raises(E, _check, ...)``) -- held, aliased, handed to ``setattr`` or to a
        helper, its attribute set: what it is when called is not surely its ``def`` -- and every
        one where the code reaches a function's code or globals (``__code__``, ``__globals__``)
        or a star import may rebind it."""
        nodes = [n for root in self.scopes.roots for n in syntax.walk(root)]
        names = {d.name for d in nodes if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef))}
        found: set[str] = set()
        for node in nodes:
            if isinstance(node, ast.Name) and node.id in names and isinstance(node.ctx, ast.Load):
                call = self.scopes.up.get(id(node))
                called = isinstance(call, ast.Call) and (
                    call.func is node or pyscan.dotted(call.func, calls=False) in CALLING
                )
                if not called:
                    found.add(node.id)
            elif isinstance(node, ast.ImportFrom) and node.names[0].name == "*":
                found |= names
            elif (isinstance(node, ast.Attribute) and node.attr in _INNARDS) or (
                isinstance(node, ast.Constant) and node.value in _INNARDS
            ):
                found |= names
        return found

    def _hand(self, target: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call, names: set[str]) -> None:
        """``target``'s parameters the table ``call`` hands it binds: aliases in its body. A
        keyword naming none of them (``**kw``) is not followed: the call hands it on unseen."""
        args = target.args
        by_keyword = {a.arg: a for a in [*args.args, *args.kwonlyargs]}
        given = [*zip([*args.posonlyargs, *args.args], call.args, strict=False)]
        given += [(by_keyword[k.arg], k.value) for k in call.keywords if k.arg in by_keyword]
        for param, arg in given:
            table = self._table(arg, names)
            if table is not None:
                self.tables[id(param)] = (table, self._part(arg))
                self.followed.add(id(arg))

    def _fixtures(self, defs: Sequence[ast.FunctionDef | ast.AsyncFunctionDef], names: set[str]) -> None:
        """A fixture the candidate added returning or yielding a table (``return CASES``): the
        parameters requesting it in the functions the candidate added are the table, judged by
        their uses there. An existing test requesting it by name is ``_takeovers``'s. Not
        followed where added code asks for it by name (``request.getfixturevalue("cases")``, or
        a computed name): its value reaches what no parameter shows."""
        keys = {self._asked(n) for s in self.scopes.roots for n in syntax.walk(s) if _names_getfixturevalue(n)}
        given: dict[str, str] = {}
        for fixture in defs:
            name = pyscan.fixture_name(fixture)
            if name in keys or None in keys:  # a computed name may be any fixture's
                continue
            values = [n.value for n in _own_body(fixture) if isinstance(n, (ast.Return, ast.Yield)) and n.value]
            for value in values:
                table = self._table(value, names) if name is not None else None
                if name is not None and table is not None:
                    given[name] = table
                    self.followed.add(id(value))
        requesting = (
            n
            for s in self.scopes.roots
            for n in syntax.walk(s)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
        )
        for function in requesting:
            for param in [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]:
                if param.arg in given:
                    self.tables[id(param)] = (given[param.arg], False)

    def _asked(self, node: ast.AST) -> str | None:
        """The fixture ``node`` (naming ``getfixturevalue``) asks for, when it is called at once
        with a name (``request.getfixturevalue("cases")``); None: any fixture (``g =
        request.getfixturevalue``, a computed name)."""
        call = self.scopes.up.get(id(node))
        if not isinstance(call, ast.Call) or call.func is not node or not call.args:
            return None
        key = call.args[0]
        return key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None

    def _alias(self, node: ast.Name) -> tuple[str, bool] | None:
        """The table ``node`` is by a binding that may reach it, and whether it is an item of the
        table (every such binding an item's) rather than it; None when none does."""
        found = [self.tables[id(b.node)] for b in self.scopes.reaching(node) if id(b.node) in self.tables]
        if not found:
            return None
        return found[0][0], all(part for _, part in found)

    def _rebound(self, node: ast.Name) -> bool:
        """Whether ``node``, a name stored or deleted, is a name its scope binds to a table (an
        alias bound again: ``cases = cases[:1]``, an item's ``n += 1``), not the module's table."""
        scope, _ = self.scopes.scope(node)
        return any(id(b.node) in self.tables for b in self.scopes.bindings(scope).get(node.id, []))

    def _part(self, expr: ast.expr) -> bool:
        """Whether ``expr`` is an item of a table rather than one: ``CASES[0]``, ``BYOP.get(k)``."""
        if isinstance(expr, ast.Name):
            alias = self._alias(expr)
            return alias is not None and alias[1]
        if isinstance(expr, ast.Call):
            item = isinstance(expr.func, ast.Attribute) and expr.func.attr in ITEM_METHODS
            return item or pyscan.dotted(expr.func, calls=False) in ITEMS_BACK
        return isinstance(expr, ast.Subscript)

    def _table(self, expr: ast.expr, names: set[str]) -> str | None:
        """The table ``expr`` is or is part of, by the name it is known by (``CASES``,
        ``self.cases``), or None: an item of it (``CASES[0]``, ``BYOP.get("double")``), either
        branch of a conditional, what a call handed it may hand back (``_passed_on``)."""
        if isinstance(expr, ast.Name):
            alias = self._alias(expr)
            if alias is not None:
                return alias[0]
            return expr.id if expr.id in names and expr.id in self.data.names else None
        if isinstance(expr, ast.Attribute):
            return self._member(expr)
        parts: list[ast.expr] = []
        if isinstance(expr, ast.Subscript):
            parts = [expr.value]
        elif isinstance(expr, ast.IfExp):
            parts = [expr.body, expr.orelse]
        elif isinstance(expr, ast.BoolOp):
            parts = list(expr.values)
        elif isinstance(expr, ast.NamedExpr):
            parts = [expr.value]
        elif isinstance(expr, ast.Call):
            parts = _passed_on(expr)
        return next((t for t in (self._table(part, names) for part in parts) if t is not None), None)

    def _added(self, parent: ast.AST | None) -> bool:
        """Whether ``parent`` calls code the candidate added: a function of its at module level
        (``data.added``), a method of it (``_keep.append``, ``self._trim``) -- not of a module it
        imports (``json.dumps``, ``pytest.mark.parametrize``) -- or a function or lambda its own
        code binds in a function (a nested ``def trim(c)``)."""
        if not isinstance(parent, ast.Call):
            return False
        func = pyscan.dotted(parent.func, calls=False)
        head, _, rest = func.partition(".")
        if head in ("self", "cls"):  # a callable stored on it is called itself (``self.trim(...)``)
            return rest.split(".")[0] in self.data.added | self.own or (
                "." not in rest and self._stored(rest, frozenset())
            )
        if func in self.data.added:
            return True
        root = parent.func
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name) or not func:
            return False
        scope, _ = self.scopes.scope(root)
        bound = self.scopes.bindings(scope).get(root.id, [])
        if scope is None and root.id not in self.data.added:
            return False
        return any(self._candidates(b, method=bool(rest)) for b in bound)

    def _candidates(self, binding: reaching.Binding, method: bool, seen: frozenset[int] = frozenset()) -> bool:
        """Whether what ``binding`` binds is the candidate's code to call (``method``: a method
        of it): a ``def``, a class, a lambda; a container it made (``_keep.append``) or an
        object its own code made (``client.post`` of ``client = _Client()``); called itself, a
        value held that may be any callable (``f = list.pop``, ``L = list``, ``f = _trim``, an
        imported name), what a call made from one (``functools.partial(list.pop)``, its own
        factory's closure, ``Mock(side_effect=list.pop)``), what a loop, ``with`` or pattern
        binds, a helper's parameter; any object whose attributes the walked code sets
        (``m.side_effect = list.pop``). Not a test's or fixture's parameter, nor what a
        library made from readers (``log = logging.getLogger()``, ``operator.itemgetter(0)``,
        ``Mock()``)."""
        statement = binding.statement
        if isinstance(binding.node, _DEFS):
            return True
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            return not method  # an imported name held and called: any function
        if id(binding.node) in seen:
            return False
        seen = seen | {id(binding.node)}
        if not method and isinstance(binding.node, (ast.Name, ast.arg)) and self._configured(binding.node):
            return True
        if statement is None:
            return not method and self._unknown(binding.node, seen)
        parent = self.scopes.up.get(id(binding.node))
        value = parent.value if isinstance(parent, ast.NamedExpr) else getattr(statement, "value", None)
        if isinstance(statement, (ast.For, ast.AsyncFor)) and isinstance(statement.iter, (ast.Tuple, ast.List)):
            return any(self._held(e, method, seen) for e in statement.iter.elts)
        if isinstance(statement, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.Match)) or value is None:
            return not method  # what an iterable, a context or a subject hands: any callable
        return self._held(value, method, seen)

    def _held(self, value: ast.expr, method: bool, seen: frozenset[int]) -> bool:
        """``_candidates`` for a value bound plainly."""
        if isinstance(value, ast.Constant):
            return False
        if isinstance(value, ast.Starred):
            return self._held(value.value, method, seen)
        if isinstance(value, ast.Call):
            return self._made(value, method, seen)
        if not isinstance(value, (ast.Name, ast.Attribute)):
            return True  # a lambda, a display, an item of one: code or a holder the candidate wrote
        dotted = pyscan.dotted(value, calls=False).removeprefix("builtins.")
        head, _, rest = dotted.partition(".")
        if head in ("self", "cls"):
            return rest.split(".")[0] in self.data.added | self.own or ("." not in rest and self._stored(rest, seen))
        if dotted in _TYPES or head in _TYPES or _mutator(dotted):
            return True  # ``L = list``, ``f = list.pop``, ``f = heapq.heappop``
        root, bound = self._rooted(value)
        if root is None:
            return True
        return any(self._candidates(b, method or bool(rest), seen) for b in bound)

    def _made(self, call: ast.Call, method: bool, seen: frozenset[int]) -> bool:
        """``_candidates`` for what ``call`` made. Called itself, it is candidate code unless a
        known reader factory made it from readers (``operator.itemgetter(0)``, ``Mock()``,
        ``functools.partial(sorted, ...)``, ``mocker.stub()``): a value any other call made may be
        any function (``eval("list.pop")``, the candidate's own ``make()``). Its methods called,
        it is the candidate's when the candidate's own function or class made it, it is a
        container (``_keep = list()``), or a holder was handed candidate code
        (``SimpleNamespace(trim=list.pop)``); not a library's object (``log.info``)."""
        target = self._resolved(call.func)
        if not method:
            if target == "functools.partial" and call.args:
                return any(self._held(a, False, seen) for a in call.args)
            if target in READER_FACTORIES:
                given = [k.value for k in call.keywords if k.arg in ("side_effect", "wraps", None)]
                return any(self._held(a, False, seen) for a in [*call.args[1:], *given])
            return True
        if _container(call, frozenset(), frozenset()):
            return True
        if target in HOLDERS:
            return any(self._held(a, False, seen) for a in [*call.args, *(k.value for k in call.keywords)])
        root, bound = self._rooted(call.func)
        if root is None:
            return not isinstance(_base(call.func), ast.Call)  # ``(lambda: ...)()``; a call's call: a library's
        return any(isinstance(b.node, _DEFS) for b in bound)  # ``_Client()``, ``_make()``

    def _rooted(self, expr: ast.expr) -> tuple[ast.Name | None, list[reaching.Binding]]:
        """The name at the root of ``expr`` (``a`` of ``a.b.c``) and its scope's bindings of it;
        None and none when the root is no name."""
        root = _base(expr)
        if not isinstance(root, ast.Name):
            return None, []
        scope, _ = self.scopes.scope(root)
        return root, self.scopes.bindings(scope).get(root.id, [])

    def _resolved(self, func: ast.expr) -> str:
        """``func``'s dotted name with its root resolved through the import binding it
        (``ag`` of ``from operator import attrgetter as ag`` is ``operator.attrgetter``), or as
        written; a fixture parameter named ``mocker`` (or ``module_mocker``...) stays so."""
        dotted = pyscan.dotted(func, calls=False)
        root, bound = self._rooted(func)
        if root is None:
            return dotted
        rest = dotted[len(root.id) :]
        for binding in bound:
            statement = binding.statement
            if isinstance(statement, ast.ImportFrom):
                for alias in statement.names:
                    if (alias.asname or alias.name) == root.id:
                        return "%s.%s%s" % (statement.module or "", alias.name, rest)
            elif isinstance(statement, ast.Import):
                for alias in statement.names:
                    if alias.asname == root.id:
                        return alias.name + rest
        if (root.id == "mocker" or root.id in WIDE_MOCKERS) and all(b.statement is None for b in bound):
            return dotted  # pytest-mock's fixture
        return dotted if all(isinstance(b.statement, (ast.Import, ast.ImportFrom)) for b in bound) else ""

    def _stored(self, attr: str, seen: frozenset[int]) -> bool:
        """Whether the walked code stores on ``self`` or ``cls`` under ``attr`` a value that may
        be candidate code (``self.trim = list.pop`` in a ``setup_method``; not ``self.encode =
        repr``), or sets it by a computed name."""
        for root in self.scopes.roots:
            for node in syntax.walk(root):
                if isinstance(node, ast.Assign):
                    for target in node.targets:
                        if isinstance(target, ast.Attribute) and pyscan.dotted(target.value, calls=False) in (
                            "self",
                            "cls",
                        ):
                            if target.attr == attr and self._held(node.value, False, seen):
                                return True
                elif isinstance(node, ast.Call) and pyscan.dotted(node.func, calls=False) == "setattr":
                    key = node.args[1] if len(node.args) > 2 else None
                    if not (isinstance(key, ast.Constant) and key.value != attr):
                        return True
        return False

    def _configured(self, node: ast.Name | ast.arg) -> bool:
        """Whether the walked code sets an attribute of the name ``node`` binds, or configures it
        (``m.side_effect = list.pop``, ``m.configure_mock(...)``): what it does when called is
        not what made it."""
        name = node.id if isinstance(node, ast.Name) else node.arg
        for root in self.scopes.roots:
            for sub in syntax.walk(root):
                if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == name:
                    stored = not isinstance(sub.ctx, ast.Load) and sub.attr != "return_value"
                    if stored or sub.attr == "configure_mock":
                        return True
                elif isinstance(sub, ast.Call) and pyscan.dotted(sub.func, calls=False) in SETTERS and sub.args:
                    if isinstance(sub.args[0], ast.Name) and sub.args[0].id == name:
                        return True  # ``setattr(m, "side_effect", list.pop)``
        return False

    def _unknown(self, node: ast.AST, seen: frozenset[int]) -> bool:
        """Whether ``node``, bound with no statement of its own, may be any callable: a
        comprehension's variable (judged by the items it loops over), a parameter of a helper
        the walked code defines (a lambda, a function neither a test nor a fixture: its
        callers hand it anything), or one with a default (judged by the default)."""
        up = self.scopes.up.get(id(node))
        while up is not None and not isinstance(up, (ast.comprehension, ast.arguments)):
            up = self.scopes.up.get(id(up))
        if isinstance(up, ast.comprehension):
            items = up.iter.elts if isinstance(up.iter, (ast.Tuple, ast.List)) else None
            return True if items is None else any(self._held(e, False, seen) for e in items)
        if not isinstance(up, ast.arguments) or not isinstance(node, ast.arg):
            return False
        positional = [*up.posonlyargs, *up.args]
        defaults = dict(zip(positional[len(positional) - len(up.defaults) :], up.defaults, strict=True))
        defaults.update((a, d) for a, d in zip(up.kwonlyargs, up.kw_defaults, strict=True) if d is not None)
        if node in defaults:
            return self._held(defaults[node], False, seen)
        function = self.scopes.up.get(id(up))
        if isinstance(function, ast.Lambda):
            return True
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return False
        holder = self.scopes.up.get(id(function))  # a test pytest collects: at module level or in a ``Test`` class
        collected = holder is None or (isinstance(holder, ast.ClassDef) and holder.name.startswith("Test"))
        return not (collected and function.name.startswith("test")) and pyscan.fixture_name(function) is None

    def visit(self, node: ast.AST, names: set[str], outer: set[str], parent: ast.AST | None) -> Iterator[Misuse]:
        """``names``: the module's visible here; ``outer``: visible in a function defined here."""
        if isinstance(node, _SCOPES):
            for part in _header(node):  # decorators, defaults, annotations: run where it is defined
                yield from self.visit(part, names, outer, node)
            inner = outer - _locals(node)
            body = node.body if isinstance(node.body, list) else [node.body]
            self.alias(body, inner)
            self.follow(body, inner)
            for stmt in body:
                yield from self.visit(stmt, inner, inner, node)
            return
        if isinstance(node, ast.ClassDef):
            for part in [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]:
                yield from self.visit(part, names, outer, node)
            own = set(pyscan.bindings([s for s in node.body if not isinstance(s, _DEFS)]))
            own |= {s.name for s in node.body if isinstance(s, _DEFS)}
            inside = self.sharing(self._heir(node))  # ``self.cases`` of a subclass is its base's
            if node.name not in (self.data.members or {}):  # a new class: ``self._trim`` is its own
                inside.own = frozenset(own | self._inherited(node, set()))
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
            node, parent = parent, self.scopes.up.get(id(parent))
        if isinstance(parent, ast.IfExp):  # its test: read
            return node, ast.Expr(node)
        return node, parent

    def _heir(self, node: ast.ClassDef) -> str | None:
        """The existing class whose data ``self.X`` reaches in ``node``'s methods: ``node``
        itself, or the first of its bases that holds data (a class attribute is shared with
        every subclass: ``self.cases.pop()`` in one trims the base's)."""
        members = self.data.members or {}
        if node.name in self.heirs:
            return node.name  # a class the candidate derived from one (``_heirs``): ``_member`` follows it
        for name in [node.name, *(pyscan.dotted(b, calls=False) for b in node.bases)]:
            if members.get(name):
                return name
        return self.owner if node.name == self.owner else None

    def _judge(self, node: ast.AST, names: set[str], parent: ast.AST | None) -> Iterator[Misuse]:
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.expr) and _this_module(node):  # not an attribute of it: ``_Plain`` took those
            place = self._place(node, parent)
            how = _use(*place, self._added(place[1]))
            if how is not None and how != "hands it to a computed callable":  # ``loadTestsFromModule``
                yield Misuse(line, "sys.modules", "%s: the module itself, its names out of sight" % how)
        held = self._held_whole(node, parent)
        if held is not None:
            yield Misuse(line, *held)
        alias = self._alias(node) if isinstance(node, ast.Name) else None
        if isinstance(node, ast.Name) and alias is None and isinstance(self.scopes.scope(node)[0], _COMPREHENSIONS):
            pass  # a comprehension's own variable (``[CASES for CASES in ...]``), not the module's
        elif isinstance(node, ast.Name) and (alias is not None or node.id in names):
            table = alias[0] if alias is not None else node.id if node.id in self.data.names else None
            part = alias is not None and alias[1]
            if table is None and isinstance(node.ctx, ast.Load):
                return  # no table: read and handed on as tests do; changes are judged below
            grown = isinstance(parent, ast.AugAssign) and not part  # ``c += [...]``: in place
            if not isinstance(node.ctx, ast.Load) and not grown and self._rebound(node):
                return  # an alias bound again (``cases = cases[:1]``, an item's ``n += 1``): the table is as it was
            place = self._place(node, parent)
            if id(place[1]) in self.binding and isinstance(node.ctx, ast.Load):
                return  # an alias bound (``alias``): its uses are judged
            if id(node) not in self.followed:
                yield from _judged(node, table or node.id, place, self._added(place[1]), part)
        elif isinstance(node, ast.Attribute):
            name = self._member(node)
            place = self._place(node, parent)
            if name is not None and not (id(place[1]) in self.binding and isinstance(node.ctx, ast.Load)):
                yield from _judged(node, name, place, self._added(place[1]))
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

    def _held_whole(self, node: ast.AST, parent: ast.AST | None) -> tuple[str, str] | None:
        """An existing test class (``Test*``, as pytest's default ``python_classes`` finds it)
        or another test module (``_whole_holder``) holding data, bound to a name, put in a
        container, returned or made a default (``K = TestTable``, ``[TestTable]``): what holds
        the data, held where the check does not follow it (``K.cases.pop()``) -- its name and
        how; None where it is called (a new instance bound to a name is followed: ``_instance``),
        subclassed, reached through its attributes, handed to a function, or put in a tuple for
        ``isinstance``. A helper class of the tests (a fake, a
        view: ``[int, Money]`` in a parametrization) is a value the tests hand around."""
        if not isinstance(node, (ast.Name, ast.Attribute, ast.Call)) or _this_module(node):
            return None
        if isinstance(node, ast.Name) and node.id != "cls" and self.scopes.scope(node)[0] is not None:
            return None  # a name its function binds, not the module's class
        holder = self._whole_holder(node)
        if holder is None or not self._holds_data(holder):
            return None  # no test class or module, or one holding no data (``Class1`` as a flag's value)
        value, up = self._place(node, parent)
        if isinstance(up, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and up.value is value:
            how = "binds it to another name"
        elif (isinstance(up, (ast.Return, ast.Yield)) and up.value is value) or (
            isinstance(up, ast.Lambda) and up.body is value
        ):
            how = "hands it back"
        elif isinstance(up, _SCOPES) and any(value is d for d in [*up.args.defaults, *up.args.kw_defaults]):
            how = "makes it a default"
        elif isinstance(up, ast.Dict) and any(value is v for v in up.values):
            how = "holds it in a dict"
        elif isinstance(up, (ast.List, ast.Tuple, ast.Set)):
            outer = self.scopes.up.get(id(up))
            func = pyscan.dotted(outer.func, calls=False) if isinstance(outer, ast.Call) else ""
            if func in ("isinstance", "issubclass"):
                return None
            how = "holds it in a %s" % type(up).__name__.lower()
        else:
            return None
        return holder, "%s, out of the check's sight" % how

    def _computed(self, call: ast.Call, names: set[str], parent: ast.AST | None) -> Iterator[Misuse]:
        """A call reaching the module's names by a computed key: ``globals()`` (or ``vars()``)
        used as more than a read -- an item set, a method that changes it, an alias --
        ``exec(code)`` in the module's namespace; ``setattr``/``delattr``/``vars`` on the data,
        an existing class or another test module."""
        func = pyscan.dotted(call.func, calls=False)
        line = call.lineno
        given = len(call.args) + len(call.keywords)
        if func in ("globals", "locals") or (func == "vars" and not given):
            place = self._place(call, parent)
            how = _use(*place, self._added(place[1]))
            if how is not None:
                yield Misuse(line, func, "%s: the module's names, by a computed key (%s)" % (how, func))
        elif func in ("exec", "eval") and given < 2:
            yield Misuse(line, func, "runs code in the module's namespace (%s)" % func)
        elif (func in SETTERS or func == "vars") and call.args and self._holder(call.args[0], names):
            yield Misuse(line, func, "sets or deletes an attribute of the tests' data by a computed key (%s)" % func)
        elif self._patching(call) and not self._undone(call, parent):
            target = _patch_target(call)
            patched = None if target is None else self._patched_data(target, call, names)
            if patched is not None:
                wide = _wide_mocker(self._resolved(call.func))
                until = "past the test that made it" if wide else "where nothing undoes it"
                yield Misuse(line, patched, "patches it %s (%s)" % (until, func or ast.unparse(call.func)))
        elif func == "getattr" and len(call.args) >= 2 and self._holder(call.args[0], names):
            reached = _getattr(call)
            name = None if reached is None else self._member(reached)
            how = "reads an attribute by a computed key" if reached is None else None
            if name is not None:
                place = self._place(call, parent)
                how = _use(*place, self._added(place[1]))
            elif reached is not None and reached.attr not in READING_METHODS:  # ``getattr(CASES, "pop")()``
                name = self._table(call.args[0], names)
                how = None if name is None else "reaches its attribute %s" % reached.attr
            if how is not None:
                yield Misuse(line, name or func, "%s (getattr)" % how)
        elif self._written(call):
            held = next((h for h in (self._whole_holder(a) for a in _arguments(call)) if h is not None), None)
            if held is not None:
                what = func or "a computed callable"
                yield Misuse(line, held, "hands it whole to a function the candidate wrote (%s)" % what)

    def _patching(self, call: ast.Call) -> bool:
        """Whether ``call`` patches until undone: ``unittest.mock``'s patchers, by their import
        (``from unittest import mock``, ``patch as P``) or a name bound to one (``p =
        mock.patch.object``), and a ``pytest.MonkeyPatch()``'s methods -- not pytest's
        ``monkeypatch`` fixture or pytest-mock's ``mocker`` (a parameter: undone after the test;
        ``module_mocker`` and the like are not: ``WIDE_MOCKERS``), nor any other object's
        ``patch`` or ``setattr`` (an HTTP client's ``client.patch(URL)``)."""
        resolved = self._resolved(call.func)
        if _mock_patcher(resolved) or (_wide_mocker(resolved) and (self.owner or not resolved.startswith("class_"))):
            return True  # ``class_mocker`` outside a class is pytest's function-scoped fallback
        if isinstance(call.func, ast.Attribute) and call.func.attr in PATCHING_METHODS:
            return self._monkeypatch(call.func.value)
        if isinstance(call.func, ast.Name):
            values = [v for v in self._values(call.func) if v is not None]
            return bool(values) and all(_mock_patcher(self._resolved(v)) for v in values)
        return False

    def _bound(self, name: ast.Name) -> list[reaching.Binding]:
        """The bindings of ``name`` in the scope that binds it."""
        scope, _ = self.scopes.scope(name)
        return self.scopes.bindings(scope).get(name.id, [])

    def _values(self, name: ast.Name) -> list[ast.expr | None]:
        """What each binding of ``name`` binds it to (None: not a plain assignment)."""
        return [
            b.statement.value if isinstance(b.statement, (ast.Assign, ast.AnnAssign)) else None
            for b in self._bound(name)
        ]

    def _monkeypatch(self, expr: ast.expr) -> bool:
        """Whether ``expr`` is a ``pytest.MonkeyPatch()`` made here (or bound to one) and not
        one a ``with`` undoes (``with pytest.MonkeyPatch.context() as mp``: ``_undone``)."""
        if isinstance(expr, ast.Call):
            return self._resolved(expr.func).split(".")[-1] == "MonkeyPatch"
        if isinstance(expr, ast.Name):
            values = self._values(expr)
            contexts = [
                item.context_expr
                for b in self._bound(expr)
                if isinstance(b.statement, (ast.With, ast.AsyncWith))
                for item in b.statement.items
                if item.optional_vars is b.node
            ]
            made = any(isinstance(v, ast.Call) and self._monkeypatch(v) for v in values)
            return made or any(_monkeypatch_context(c) for c in contexts)
        return False

    def _undone(self, call: ast.Call, parent: ast.AST | None) -> bool:
        """Whether the patch ``call`` makes is undone where its test ends: a ``with`` item (one
        whose body yields, only in a function-scoped fixture or a test), a decorator, a patcher
        bound to a name its scope enters with ``with`` or stops (``self.addCleanup(p.stop)``),
        a ``MonkeyPatch`` its scope undoes, or a method of one a ``with`` made, called inside it.
        Started (``.start()``) or entered by hand and left so, it outlives the new test into the
        existing ones that read the data."""
        if _wide_mocker(self._resolved(call.func)):  # its fixture undoes it, after its class or module
            return self._released("", call, ("stopall",))
        if isinstance(parent, ast.withitem):
            return parent.context_expr is call and self._closes(call)
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return call in parent.decorator_list
        method = isinstance(call.func, ast.Attribute) and call.func.attr in PATCHING_METHODS
        receiver = call.func.value if isinstance(call.func, ast.Attribute) and method else None
        if isinstance(receiver, ast.Name):  # ``mp.setattr``: ``mp.undo()``, or inside ``with ... as mp``
            return self._released(receiver.id, call, ("undo",)) or self._inside_context(receiver, call)
        if self._released("", call, ("stopall",)):  # ``self.addCleanup(mock.patch.stopall)``
            return True
        if isinstance(parent, ast.Assign) and len(parent.targets) == 1:  # ``p = ...``, ``self._p = ...``
            name = pyscan.dotted(parent.targets[0], calls=False)
            return bool(name) and self._released(name, call, ("stop", "__exit__"))
        return False

    def _closes(self, node: ast.AST) -> bool:
        """Whether the ``with`` holding ``node`` ends within the test: no ``yield`` in its body,
        or one in a fixture of function scope that is not autouse."""
        statement = self.scopes.up.get(id(self.scopes.up.get(id(node))))
        if not isinstance(statement, (ast.With, ast.AsyncWith)):
            return True
        if not any(isinstance(n, (ast.Yield, ast.YieldFrom)) for b in statement.body for n in syntax.walk(b)):
            return True
        function = self._enclosing(statement)
        if function is None or not pyscan.is_fixture(function):
            return False
        settings = [k for d in function.decorator_list if isinstance(d, ast.Call) for k in d.keywords]
        scoped = any(
            k.arg == "scope" and not (isinstance(k.value, ast.Constant) and k.value.value == "function")
            for k in settings
        )
        autouse = any(
            k.arg == "autouse" and not (isinstance(k.value, ast.Constant) and not k.value.value) for k in settings
        )
        return not scoped and not autouse

    def _enclosing(self, node: ast.AST) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The function ``node`` is in, if any."""
        up = self.scopes.up.get(id(node))
        while up is not None and not isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef)):
            up = self.scopes.up.get(id(up))
        return up

    def _released(self, name: str, call: ast.Call, methods: tuple[str, ...]) -> bool:
        """Whether the scope of ``call`` enters ``name`` in a ``with``, decorates a definition
        with it, or reaches one of its ``methods`` (``p.stop``, handed to ``addCleanup`` or
        called; ``mp.undo()``); ``name`` "" reaches them on anything (``mock.patch.stopall``).
        An attribute (``self._p``) is released anywhere in the class of ``call``'s method:
        ``tearDown`` stops what ``setUp`` started."""
        function = self._enclosing(call)
        scope: ast.AST | None = function
        if function is not None and "." in name:
            scope = self.scopes.up.get(id(function))
        body = getattr(scope, "body", None) if scope is not None else self.scopes.roots
        for node in (n for stmt in body or [] for n in syntax.walk(stmt)):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in methods
                and (not name or pyscan.dotted(node.value, calls=False) == name)
            ):
                return True
            if name and isinstance(node, ast.withitem) and pyscan.dotted(node.context_expr, calls=False) == name:
                return True
            if (
                name
                and isinstance(node, _DEFS)
                and any(pyscan.dotted(d, calls=False) == name for d in node.decorator_list)
            ):
                return True  # ``EMPTY = mock.patch(...)`` then ``@EMPTY``: undone around each call
        return False

    def _inside_context(self, name: ast.Name, call: ast.Call) -> bool:
        """Whether ``name`` is bound by a ``with ... as`` around ``call`` to a ``MonkeyPatch``
        context (``pytest.MonkeyPatch.context()``, the ``monkeypatch`` fixture's ``context()``)."""
        node: ast.AST | None = call
        while node is not None:
            if isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    bound = isinstance(item.optional_vars, ast.Name) and item.optional_vars.id == name.id
                    if bound and _monkeypatch_context(item.context_expr):
                        return True
            node = self.scopes.up.get(id(node))
        return False

    def _patched_data(self, target: ast.expr, call: ast.Call, names: set[str]) -> str | None:
        """The tests' data a patcher's ``target`` reaches, as a declarable name (``TestTable``,
        ``TestTable.cases``, ``CASES``), or how (``globals``, ``__name__``); None for anything
        else (the project's code, a value of the module's that is no table)."""
        if _namespace(target):
            return "globals"
        whole = self._whole_holder(target)
        if whole is not None:
            attribute = call.args[1] if len(call.args) > 1 else None
            if isinstance(attribute, ast.Constant) and isinstance(attribute.value, str):
                return "%s.%s" % (whole, attribute.value)
            return whole
        table = self._table(target, names)
        if table is not None:
            return table
        if any(isinstance(n, ast.Name) and n.id == "__name__" for n in syntax.walk(target)):
            return "__name__"
        text = target.value if isinstance(target, ast.Constant) and isinstance(target.value, str) else None
        if text is None:
            return None
        head, _, last = text.rpartition(".")
        members = self.data.members or {}
        owner = head.rpartition(".")[2]
        if head and (last in self.data.names or last in members) and _test_module(owner):
            return last  # ``tests.test_calc.CASES``; not ``myapp.urls.ROUTES``, the project's own
        if head and owner in members:
            return "%s.%s" % (owner, last)
        parts = text.split(".")  # ``"tests.test_tables.CASES"``: another test module, whole or an attribute of it
        reached = next((i for i in range(1, len(parts) + 1) if ".".join(parts[:i]) in (self.data.modules or {})), None)
        return None if reached is None else ".".join(parts[reached - 1 :])

    def _member(self, node: ast.Attribute) -> str | None:
        """The dotted name when ``node`` is data reached through an attribute: ``module.X`` or
        ``module.Class.X`` of another test module's, ``self.X``, ``cls.X``, ``Class.X`` of an
        existing class's -- or of a class the candidate derived from one (``heirs``), where the
        subclass does not bind ``X`` itself; None otherwise."""
        made = self._instance(node.value) if isinstance(node.value, ast.Name) else None
        per_test = isinstance(node.value, ast.Name) and self._selfish(node.value, set())  # not ``type(self)``
        prefix = "self" if per_test else made or _holder_name(node.value)
        name = self.owner if prefix in ("self", "cls", "super") else prefix
        heir = self.heirs.get(name or "")
        through = made is not None  # an instance, or a subclass the candidate wrote
        if heir is not None and node.attr not in heir[1]:
            prefix = name = heir[0]  # named by the class it reaches, as ``--expected-change`` declares it
            through = True
        if through and not isinstance(node.ctx, ast.Load):
            return None  # set on the instance or the new subclass: the class's own is as it was
        if through and isinstance(node.value, ast.Name) and self._set_before(node.value, node.attr):
            return None  # ``t.cases = list(t.cases)`` before it: the instance's (the subclass's) own
        if per_test and node.attr in (self.data.fresh or {}).get(name or "", ()):
            return None  # made again for each test's instance by its ``__init__`` or setup
        modules = self.data.modules or {}
        if prefix in modules and node.attr in modules[prefix].names:
            return "%s.%s" % (prefix, node.attr)
        holder, _, cls = prefix.rpartition(".")
        if holder in modules and node.attr in (modules[holder].members or {}).get(cls, ()):
            return "%s.%s" % (prefix, node.attr)  # ``test_tables.TestDoubles.cases``
        if name is not None and node.attr in (self.data.members or {}).get(name, ()):
            return "%s.%s" % (prefix, node.attr)
        return None

    def _selfish(self, name: ast.Name, seen: set[int]) -> bool:
        """Whether ``name`` is the instance a method of a class runs on: ``self``, the method's
        first parameter by any name (``def test_x(this)``), or a name every binding of which is
        one (``s = self``) -- ``s.cases.pop()`` trimmed the class's list, CERTIFIED."""
        if name.id == "self":
            return True
        bindings = self._bound(name)
        if not bindings or id(name) in seen:
            return False
        seen.add(id(name))
        for binding in bindings:
            up = self.scopes.up.get(id(binding.node))
            if isinstance(binding.node, ast.arg) and isinstance(up, ast.arguments):
                function = self.scopes.up.get(id(up))
                holder = self.scopes.up.get(id(function))
                method = isinstance(holder, ast.ClassDef) or (holder is None and self.owner is not None)
                if not (method and [*up.posonlyargs, *up.args][:1] == [binding.node]):
                    return False
                if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                    pyscan.dotted(d, calls=False) == "staticmethod" for d in function.decorator_list
                ):
                    return False
                continue
            value = _bound_value(binding, up)
            if not (isinstance(value, ast.Name) and self._selfish(value, seen)):
                return False
        return True

    def _instance(self, name: ast.Name) -> str | None:
        """The class every binding of ``name`` makes a new instance of (``t = TestTable()``, a
        parameter defaulting to one), where that class holds data: an instance's attributes are
        its class's until set on it (``t.cases.pop()`` trims ``TestTable.cases``); None for
        anything else. The instance itself is a value like any other (``case.run(result)``)."""
        made = set()
        bindings = self._bound(name)
        for binding in bindings:
            value = _bound_value(binding, self.scopes.up.get(id(binding.node)))
            func = value.func if isinstance(value, ast.Call) else None
            if not isinstance(func, (ast.Name, ast.Attribute)):
                return None
            holder = self._whole_holder(func)
            if holder is None or not self._holds_data(holder) or holder not in self.data.shared:
                return None  # an instance holding copies of its class's values (``__init__``, a model)
            made.add(pyscan.dotted(func, calls=False))
        return made.pop() if len(made) == 1 else None

    def _set_before(self, name: ast.Name, attr: str) -> bool:
        """Whether a statement of the scope binding ``name`` -- in its body itself, not under an
        ``if`` or in a nested function -- sets its attribute ``attr`` (``t.cases = ...``) after
        the name's last binding and before this use: from there on it is the instance's (or the
        new subclass's) own. A change before it (``t.cases.pop(); t.cases = []``) is the class's."""
        scope, _ = self.scopes.scope(name)
        body = self.scopes.roots if scope is None else getattr(scope, "body", [])
        here = (name.lineno, name.col_offset)
        bound = max((_at(b.node) for b in self._bound(name) if _at(b.node) <= here), default=(0, 0))
        for stmt in body if isinstance(body, list) else []:
            targets = (
                stmt.targets
                if isinstance(stmt, ast.Assign)
                else [stmt.target]
                if isinstance(stmt, ast.AnnAssign)
                else []
            )
            if bound < _at(stmt) < here and any(
                isinstance(t, ast.Attribute)
                and t.attr == attr
                and isinstance(t.value, ast.Name)
                and t.value.id == name.id
                for t in targets
            ):
                return True
        return False

    def _holds_data(self, holder: str) -> bool:
        """Whether ``holder`` (``_whole_holder``'s) is a test class with data of its own, or a test
        module (``test_tables``) or one's test class (``test_tables.TestDoubles``) with data."""
        modules = self.data.modules or {}
        if holder in modules:
            return bool(modules[holder])
        module, _, name = holder.rpartition(".")
        members = (modules[module].members if module in modules else self.data.members) or {}
        return name.startswith("Test") and bool(members.get(name))

    def _whole_holder(self, expr: ast.expr) -> str | None:
        """The existing class (``TestTable``; ``cls``, ``type(self)``, ``self.__class__`` in its
        methods), other test module or this module ``expr`` is -- not an attribute or item of
        one: what holds the data, and the tests, whole."""
        if _this_module(expr):
            return "sys.modules"
        name = pyscan.dotted(expr, calls=False)
        if self.owner is not None and (name in ("cls", "self.__class__") or _type_of_self(expr)):
            return self.owner
        if isinstance(expr, ast.Name) and (
            expr.id in (self.data.members or {}) or expr.id in (self.data.modules or {})
        ):
            return expr.id
        if isinstance(expr, ast.Name) and expr.id in self.heirs:
            return self.heirs[expr.id][0]  # ``K = _K``, ``_K`` a subclass the candidate wrote
        if not isinstance(expr, ast.Attribute):
            return None
        modules = self.data.modules or {}
        module = modules.get(_holder_name(expr.value))
        if name in modules or (module is not None and expr.attr in (module.members or {})):
            return name  # ``tests.test_tables`` imported so; ``tt.TestDoubles``, another test module's class
        return None

    def _written(self, call: ast.Call) -> bool:
        """Whether ``call`` calls a function or class the candidate wrote in the module (a
        ``def``, a ``class``, a lambda bound to a name) -- not an import."""
        if not isinstance(call.func, ast.Name) or call.func.id not in self.data.added:
            return False
        bound = self._bound(call.func)
        own = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        lambdas = [
            b for b in bound if isinstance(b.statement, ast.Assign) and isinstance(b.statement.value, ast.Lambda)
        ]
        return bool(bound) and all(isinstance(b.statement, own) for b in bound if b not in lambdas)

    def _holder(self, expr: ast.expr, names: set[str]) -> bool:
        """Whether ``expr`` is the data, an existing class, another test module, this module, or
        reaches into one."""
        if _this_module(expr) or self._root(expr, names) is not None:
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
            if isinstance(expr, ast.Call):  # ``getattr(TestTable, "cases").pop()``, ``typing.cast(list, CASES).pop()``
                return next((r for r in (self._root(p, names) for p in _passed_on(expr)) if r is not None), None)
            if isinstance(expr, ast.Attribute):
                found = self._member(expr)
                if found is not None:
                    return found
            if isinstance(expr, ast.Name):
                alias = self._alias(expr)
                return alias[0] if alias is not None else expr.id if expr.id in names else None
            if not isinstance(expr, (ast.Attribute, ast.Subscript)):
                return None
            expr = expr.value


def _binds(node: ast.AST) -> Iterator[tuple[ast.AST, list[ast.expr], ast.expr, bool]]:
    """What ``node`` binds plainly to a value: the node binding (``_Walk.binding``), its targets,
    the value, and whether they are bound to its items (a loop's targets) rather than to it."""
    if isinstance(node, ast.Assign):
        yield node, list(node.targets), node.value, False
    elif isinstance(node, ast.NamedExpr):
        yield node, [node.target], node.value, False
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        for item in node.items:
            if item.optional_vars is not None:  # ``with contextlib.nullcontext(CASES) as c``
                yield item, list(_targets(item.optional_vars)), item.context_expr, False
    elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
        yield node, list(_targets(node.target)), node.iter, True


#: Decorators calling the function they decorate with what its callers give: followed through.
PASSING = frozenset(
    {"contextlib.contextmanager", "contextmanager", "contextlib.asynccontextmanager", "asynccontextmanager"}
)


def _bound_value(binding: reaching.Binding, up: ast.AST | None) -> ast.expr | None:
    """The value ``binding`` binds its name to: a plain assignment's (one name, a walrus) or a
    parameter's default; None for anything else (a loop, an unpacking, an import)."""
    statement, node = binding.statement, binding.node
    if isinstance(up, ast.NamedExpr):
        return up.value
    if isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value is not None:
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        return statement.value if targets == [node] else None
    if isinstance(node, ast.arg) and isinstance(up, ast.arguments):
        positional = [*up.posonlyargs, *up.args]
        defaults = dict(zip(positional[len(positional) - len(up.defaults) :], up.defaults, strict=True))
        defaults.update((a, d) for a, d in zip(up.kwonlyargs, up.kw_defaults, strict=True) if d is not None)
        return defaults.get(node)
    return None


def _plain_decorators(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return all(pyscan.dotted(d, calls=False) in PASSING for d in function.decorator_list)


#: Calls that only call a function they are given: handed one, it is still what its ``def`` says.
CALLING = frozenset({"map", "filter", "sorted", "min", "max", "pytest.raises", "pytest.warns", "raises", "warns"})
#: A function's innards: code reaching them may make any function run other code.
_INNARDS = frozenset({"__code__", "__globals__", "__closure__", "__defaults__", "__kwdefaults__"})


def _bound_by(statement: ast.stmt) -> set[str]:
    """The names a class-level statement binds."""
    if isinstance(statement, _DEFS):
        return {statement.name}
    return set(pyscan.bindings([statement]))


def _base(expr: ast.expr) -> ast.expr:
    """What ``expr``'s attributes hang from: ``a`` of ``a.b.c``."""
    while isinstance(expr, ast.Attribute):
        expr = expr.value
    return expr


#: Factories making a callable that only reads what it is given -- from the arguments their
#: ``_made`` judges (a mock's ``side_effect``, ``wraps``): by the name they resolve to.
READER_FACTORIES = frozenset(
    {"operator.itemgetter", "functools.lru_cache", "functools.cache", "mocker.stub", "mocker.Mock"}
    | {"%s.%s" % (m, c) for m in ("unittest.mock", "mock") for c in ("Mock", "MagicMock", "AsyncMock")}
    | {"%s.%s" % (m, c) for m in ("unittest.mock", "mock") for c in ("NonCallableMock", "create_autospec")}
    | {"mocker.MagicMock", "mocker.AsyncMock", "mocker.create_autospec"}
)
#: Library calls whose objects hold what they are given as attributes or items.
HOLDERS = frozenset({"types.SimpleNamespace", "SimpleNamespace", "dict", "type", "collections.namedtuple"})


def _names_getfixturevalue(node: ast.AST) -> bool:
    """``request.getfixturevalue``, or its name in a string (``getattr(request, "getfixturevalue")``)."""
    if isinstance(node, ast.Attribute):
        return node.attr == "getfixturevalue"
    return isinstance(node, ast.Constant) and node.value == "getfixturevalue"


def _targets(target: ast.expr) -> Iterator[ast.expr]:
    """The names an unpacking target binds (``n, (a, *rest)``); anything else as it is."""
    if isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _targets(element)
    elif isinstance(target, ast.Starred):
        yield from _targets(target.value)
    else:
        yield target


def _passed_on(call: ast.Call) -> list[ast.expr]:
    """What a call's value may be or hold, of what it is given: ``getattr``'s attribute, the
    container an item method reads (``BYOP.get(k)``), the arguments of a call handing them
    back (``HANDING_BACK``, ``ITEMS_BACK``)."""
    reached = _getattr(call)
    if reached is not None:
        return [reached]
    if isinstance(call.func, ast.Attribute) and call.func.attr in ITEM_METHODS:
        unbound = pyscan.dotted(call.func.value, calls=False) in _TYPES  # ``dict.get(GROUPS, k)``
        return call.args[:1] if unbound else [call.func.value]
    if pyscan.dotted(call.func, calls=False) not in HANDING_BACK | ITEMS_BACK:
        return []
    return _arguments(call)


def _arguments(call: ast.Call) -> list[ast.expr]:
    """Every value ``call`` is given, positionally (unpacked too) or by keyword."""
    return [a.value if isinstance(a, ast.Starred) else a for a in call.args] + [k.value for k in call.keywords]


def _mock_patcher(resolved: str) -> bool:
    """Whether the import-resolved name is one of ``unittest.mock``'s patchers."""
    head, _, last = resolved.rpartition(".")
    if last == "patch":
        return head in ("unittest.mock", "mock")
    return last in PATCHERS and head.rpartition(".")[0] in ("unittest.mock", "mock") and head.endswith(".patch")


def _wide_mocker(resolved: str) -> bool:
    """Whether the resolved name is a patcher of one of pytest-mock's ``WIDE_MOCKERS``."""
    root, _, rest = resolved.partition(".")
    return root in WIDE_MOCKERS and rest in ("patch", *("patch.%s" % p for p in PATCHERS))


def _patch_like(call: ast.Call, mocks: Collection[str]) -> bool:
    """Whether ``call`` may patch what a dotted string names: a mock patcher (``patch``,
    ``patch.dict``, ``patch.multiple``; by any name ``mocks`` holds: ``patch as P``, ``p =
    mock.patch``) or a ``MonkeyPatch`` method given one (``mp.setattr("tests.test_tables.CASES",
    [])``, ``pytest.MonkeyPatch().setattr(...)``); which of them patch until undone,
    ``_Walk._patching`` decides."""
    func = call.func
    parts = pyscan.dotted(func, calls=False).split(".")
    last = func.attr if isinstance(func, ast.Attribute) else parts[-1]
    return "patch" in parts[-2:] or last in PATCHING_METHODS or parts[0] in mocks


def _mock_names(tree: ast.AST) -> set[str]:
    """Names ``tree`` binds to ``unittest.mock`` (or ``mock``), to what it imports from it, or
    to an attribute of one (``p = mock.patch``)."""
    found: set[str] = set()
    for node in syntax.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.asname or a.name.split(".")[0] for a in node.names if a.name in ("mock", "unittest.mock")}
        elif isinstance(node, ast.ImportFrom) and node.module in ("mock", "unittest.mock"):
            found |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module == "unittest":
            found |= {a.asname or a.name for a in node.names if a.name == "mock"}
    for node in syntax.walk(tree):
        if isinstance(node, ast.Assign) and pyscan.dotted(node.value, calls=False).split(".")[0] in found:
            found |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return found


def _patch_target(call: ast.Call) -> ast.expr | None:
    """What a patcher patches: its first argument, or ``target=`` (``in_dict=``: ``patch.dict``)."""
    if call.args:
        return call.args[0]
    return next((k.value for k in call.keywords if k.arg in ("target", "in_dict")), None)


def _monkeypatch_context(expr: ast.expr) -> bool:
    """``pytest.MonkeyPatch.context()`` or the ``monkeypatch`` fixture's ``context()``: a
    ``MonkeyPatch`` undone where the ``with`` ends, and not after."""
    if not isinstance(expr, ast.Call):
        return False
    return pyscan.dotted(expr.func, calls=False).endswith(("MonkeyPatch.context", "monkeypatch.context"))


def _type_of_self(expr: ast.expr) -> bool:
    """``type(self)``: the class of the method's object."""
    if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "type"):
        return False
    return len(expr.args) == 1 and isinstance(expr.args[0], ast.Name) and expr.args[0].id == "self"


def _mutator(func: str) -> bool:
    """Whether calling ``func`` changes what it is given: ``list.pop``, ``heapq.heappop``,
    ``operator.delitem`` -- not ``monkeypatch.setitem``, which pytest undoes after the test."""
    head, _, last = func.removeprefix("builtins.").rpartition(".")
    if head in _TYPES:
        return last in CHANGING
    return last in MUTATORS and head.split(".")[0] != "monkeypatch"


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
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in CHANGING:
        return node.func.value
    return None


def _getattr(call: ast.Call) -> ast.Attribute | None:
    """``X.name`` for ``getattr(X, "name"[, default])``; None for any other call."""
    if pyscan.dotted(call.func, calls=False) != "getattr" or len(call.args) < 2:
        return None
    key = call.args[1]
    if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
        return None
    return ast.copy_location(ast.Attribute(call.args[0], key.value, ast.Load()), call)


def _at(node: ast.AST) -> tuple[int, int]:
    """Where ``node`` starts: line, then column (two statements on one line: ``t = X(); t.a = []``)."""
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


def _holder_name(expr: ast.expr) -> str:
    """The dotted name of what holds an attribute, the instance's class spelled as the instance
    (``type(self)``, ``self.__class__`` as ``self``), a new instance as its class
    (``TestTable().cases`` is the class's list, also named by a walrus); "" for anything else."""
    if isinstance(expr, ast.NamedExpr):
        expr = expr.value
    if isinstance(expr, ast.Call) and pyscan.dotted(expr.func, calls=False) == "type" and len(expr.args) == 1:
        expr = expr.args[0]
    if isinstance(expr, ast.Call):
        expr = expr.func
    name = pyscan.dotted(expr, calls=False)
    return name[: -len(".__class__")] if name.endswith(".__class__") else name


def _judged(
    node: ast.expr, name: str, place: tuple[ast.expr, ast.AST | None], added: bool, part: bool = False
) -> Iterator[Misuse]:
    """``node`` naming the data ``name`` (or an item of it: ``part``), its value ending up at
    ``place`` (``_Walk._place``), which may call code the candidate added (``added``)."""
    line = getattr(node, "lineno", 0)
    if not isinstance(getattr(node, "ctx", None), ast.Load):
        yield Misuse(line, name, "rebinds or deletes it")
        return
    how = _item_use(*place) if part else _use(*place, added)
    if how is not None:
        yield Misuse(line, name, how)


def _item_use(node: ast.expr, parent: ast.AST | None) -> str | None:
    """None when ``node``, an item of a table (``row`` of ``for row in ROWS``), is only read
    where it is: an item is a value of any type (a string's ``.upper()``), held and handed on
    as tests do; only setting into it, a method changing a container, or a mutator changes it."""
    if (
        isinstance(parent, (ast.Subscript, ast.Attribute))
        and node is parent.value
        and not isinstance(parent.ctx, ast.Load)
    ):
        return "sets or deletes an item or attribute of it"  # not as a key: ``seen[n] = ...``
    if isinstance(parent, ast.Attribute) and parent.attr in CHANGING:
        return "reaches its attribute %s" % parent.attr
    changed = parent.args[0] if isinstance(parent, ast.Call) and parent.args else None  # not ``heappush(heap, n)``
    if changed is node and isinstance(parent, ast.Call) and _mutator(pyscan.dotted(parent.func, calls=False)):
        return "hands it to %s" % pyscan.dotted(parent.func, calls=False)
    return None


def _use(node: ast.expr, parent: ast.AST | None, added: bool) -> str | None:
    """None when ``node``'s place in ``parent`` only reads it; else what it does. ``added``:
    ``parent`` calls code the candidate added (``_Walk._added``)."""
    if isinstance(parent, ast.Starred):
        return None  # unpacked into a display or a call's arguments: a copy (judged as the call)
    if isinstance(parent, ast.Dict) and node in parent.values and parent.keys[parent.values.index(node)] is None:
        return None  # ``{**DEFAULTS, "x": 1}``: unpacked into a new dict
    if isinstance(parent, (ast.For, ast.AsyncFor, ast.comprehension)) and node is parent.iter:
        return None
    if isinstance(parent, ast.YieldFrom):
        return None  # its items handed out, one by one, as a loop over it reads them
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
        beside = [pyscan.dotted(a, calls=False) for a in parent.args if a is not node]
        if func and not added and not _mutator(func) and not any(_mutator(b) for b in beside if b):
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
    nodes = [sub for stmt in body for sub in _own_nodes(stmt)]
    own = {
        id(n) for c in nodes if isinstance(c, ast.comprehension) for n in syntax.walk(c.target)
    }  # the comprehension's
    for sub in nodes:
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)) and id(sub) not in own:
            found.add(sub.id)
        elif isinstance(sub, (ast.Import, ast.ImportFrom)):
            found |= {(a.asname or a.name).split(".")[0] for a in sub.names}
        elif isinstance(sub, _DEFS):
            found.add(sub.name)
        elif isinstance(sub, (ast.Global, ast.Nonlocal)):
            declared |= set(sub.names)
    return found - declared


def _own_body(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> Iterator[ast.AST]:
    """What a function's body holds, not entering the scopes it defines."""
    for stmt in function.body if isinstance(function.body, list) else [function.body]:
        yield from _own_nodes(stmt)


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
    mocks = _mock_names(tree)
    for node in syntax.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                stem = alias.name.split(".")[-1]
                if stem in modules:  # reached as ``tests.test_tables.CASES`` without an as-name
                    bound[alias.asname or alias.name] = modules[stem]
        elif isinstance(node, ast.ImportFrom):
            stem = (node.module or "").split(".")[-1]
            for alias in node.names:
                name = alias.asname or alias.name
                if alias.name == "*" and stem in modules:  # every name of it, bound here by its own
                    names |= modules[stem].names
                    members.update(modules[stem].members or {})
                elif alias.name in modules:  # ``from tests import test_tables``
                    bound[name] = modules[alias.name]
                elif stem in modules and alias.name in modules[stem].names:
                    names.add(name)
                elif stem in modules and alias.name in (modules[stem].members or {}):
                    members[name] = (modules[stem].members or {})[alias.name]
        elif isinstance(node, ast.Call) and _patch_like(node, mocks):
            target = _patch_target(node)  # ``patch("tests.test_tables.CASES")``: the module reached by its name
            text = target.value if isinstance(target, ast.Constant) else None
            parts = text.split(".") if isinstance(text, str) else []
            at = next((i for i, part in enumerate(parts) if part in modules), None)
            if at is not None:
                bound.setdefault(".".join(parts[: at + 1]), modules[parts[at]])
    return Data(frozenset(names), bound or None, members or None)


def string_reach(tree: ast.AST, stems: Mapping[str, Data]) -> Iterator[Misuse]:
    """A test module reached by its name in a string (``sys.modules["test_tables"]``,
    ``importlib.import_module("tests.test_tables")``, ``pytest.importorskip(...)``): its data,
    out of any name's sight; and the loaded modules scanned (``sys.modules.values()``) where
    the same function reaches attributes by a computed name or by a test module's data name
    (``getattr(m, "CASES")``, ``m.CASES``), which reach every test module without naming one.
    A scan alone is what honest tests do: a fixture restoring ``sys.modules.copy()``, a leak
    test counting ``gc.get_objects()``."""
    scanning = [n for n in syntax.walk(tree) if isinstance(n, ast.Call) and pyscan.dotted(n.func, calls=False) in SCANS]
    if scanning:
        data_names = {n for stem in stems for n in {*stems[stem].names, *(stems[stem].members or {})}}
        yield from _scans(tree, scanning, data_names)
    for node in syntax.walk(tree):
        key: ast.expr | None = None
        if isinstance(node, ast.Subscript) and pyscan.dotted(node.value, calls=False) == "sys.modules":
            key = node.slice
        elif isinstance(node, ast.Call) and node.args:
            func = pyscan.dotted(node.func, calls=False)
            if func.split(".")[-1] in ("import_module", "__import__", "importorskip") or func == "sys.modules.get":
                key = node.args[0]
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            stem = key.value.split(".")[-1]
            if stem in stems and not stem.startswith("__"):
                yield Misuse(getattr(node, "lineno", 0), key.value, "names a test module by a string")


def _scans(tree: ast.AST, scanning: Sequence[ast.Call], data_names: Collection[str]) -> Iterator[Misuse]:
    """The scans of ``scanning`` whose function (or ``tree``, outside any) reaches attributes by
    a computed name or by one of ``data_names``."""
    within: dict[int, list[ast.AST]] = {}
    for scope in [tree, *(n for n in syntax.walk(tree) if isinstance(n, _SCOPES))]:
        nodes = list(_own_body(scope) if isinstance(scope, _SCOPES) else _own_nodes(scope))
        within.update((id(n), nodes) for n in nodes)
    for call in scanning:
        nodes = within[id(call)]
        computed = any(
            isinstance(n, ast.Call) and pyscan.dotted(n.func, calls=False) in {"getattr", "hasattr", "vars", *SETTERS}
            for n in nodes
        )
        named = any(isinstance(n, ast.Attribute) and (n.attr in data_names or n.attr == "__dict__") for n in nodes)
        if computed or named:
            yield Misuse(call.lineno, pyscan.dotted(call.func, calls=False), "scans the loaded modules")
