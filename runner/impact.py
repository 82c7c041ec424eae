"""What a change reaches beyond the functions it edits: names, code run at import, shared fixtures.

B's record says which functions each test reached. What it cannot say is followed here, by name
(``names``), over B's Python files (``codeindex.Project``), to a fixpoint. Names belong to a
module: a bare name read in ``pkg/n.py`` is ``pkg/n.py``'s global, ``from pkg.m import X`` takes
``pkg/m.py``'s ``X`` (a module outside the project never changes), while an attribute or a
dotted string may name any module's or object's (``names.Reads``).

* *changed names*: module-level and class-level names whose binding the diff changed
  (``modchange``), and the names bound from them, below;
* *tainted* names: functions holding a changed line, and those that read a changed name or a
  tainted name -- calling one may run changed code (a dunder method taints its class);
* *module-level code* (a statement, a class-body statement, a definition's header) that reads a
  changed name, or calls something while naming a tainted function: a pure binding makes the
  names it binds changed (tainted, for a tainted function); anything else makes its module *fall
  back*: every test that imports it runs (every test, when the module is a pytest plugin). In a
  test file the whole file runs, in a conftest every test under its directory, as they do when
  such code binds a name pytest reads (``pytestmark``, ``pytest_plugins``, ...);
* *shared definitions* (``codeindex``) that hold a changed line or read a changed name or a
  tainted one: a fixture's name becomes a *changed fixture* (a test that requests it reads it);
  an autouse fixture, a setup or a hook selects every test it applies to.

A diff's own side effects (a module added, deleted, unparsable, or changed beyond its names) make
its module fall back. A changed test module is read as code like a source module; what pytest
applies to its tests unnamed (``testchange``) is a side effect of it.
"""

from __future__ import annotations

import ast
import builtins
import enum
import posixpath
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass

from pytest_evidence import syntax
from runner.codeindex import STAR, Definition, Project
from runner.diff import Diff, FileKind, Span
from runner.importgraph import ImportGraph
from runner.names import (
    CREATION_HOOKS,
    STORING,
    Imported,
    Reads,
    Unit,
    closures,
    outside_closures,
    passes_through,
    reads,
    returned_parameters,
)
from runner.pyscan import dotted, is_main_guard
from runner.testchange import CALLED_UNASKED, PYTEST_NAMES


@dataclass(frozen=True)
class Impact:
    spans: Mapping[str, tuple[Span, ...]]  # path -> definitions on B that hold a changed line (T4)
    fallback: Mapping[str, str]  # module path -> why every test importing it runs
    scopes: Mapping[str, str]  # test file path, conftest directory + "/", or "" (all) -> why all its tests run
    readers: Mapping[str, Mapping[int, tuple[str, str]]]  # path -> line on B -> (definition, what it reads)
    bound: Mapping[str, Mapping[str, str]]  # path -> module-level name changed or tainted there -> why
    rebound: Mapping[str, Mapping[str, str]]  # path -> module-level name changed there -> why


def changed_spans(diff: Diff) -> dict[str, tuple[Span, ...]]:
    """Definitions on B holding a changed line, or running one outside their own body, per Python
    file (a test module's too: a test whose own code changed reached a changed definition)."""
    found: dict[str, tuple[Span, ...]] = {}
    for change in diff.of_kind(FileKind.SOURCE, FileKind.TEST):
        if change.b_spans or change.executors:
            found[change.path] = tuple(dict.fromkeys((*change.b_spans, *change.executors)))
    return found


def scope_of(path: str, test_files: Collection[str]) -> str | None:
    """The tests a file's own code applies to: a test file's, a conftest's directory's, or None."""
    if path in test_files:
        return path
    if posixpath.basename(path) == "conftest.py":
        parent = posixpath.dirname(path)
        return parent + "/" if parent else ""
    return None


class _Names:
    """Names that changed (or may run changed code): each module's globals, names reached as
    attributes of an object (class-level names, methods), and all of them. ``objects`` is what
    an attribute of an object may be: for a changed name, any (a module may be passed around as
    an object); for a tainted one, a method."""

    def __init__(self, objects_any: bool) -> None:
        self.by_module: dict[str, dict[str, str]] = {}
        self.members: dict[str, str] = {}
        self.anywhere: dict[str, str] = {}
        self.objects = self.anywhere if objects_any else self.members

    def add(self, path: str, name: str, label: str) -> None:
        self.by_module.setdefault(path, {}).setdefault(name, label)
        self.anywhere.setdefault(name, label)

    def member(self, name: str, label: str) -> None:
        self.members.setdefault(name, label)
        self.anywhere.setdefault(name, label)

    def of(self, path: str) -> Mapping[str, str]:
        return self.by_module.get(path, {})

    def size(self) -> int:
        return len(self.anywhere) + len(self.members) + sum(len(v) for v in self.by_module.values())


class _Outside(enum.Enum):
    """Where a dotted base that is no project module points."""

    OBJECT = "an object: any class-level name or method"
    UNKNOWN = "a module of the project that is not found: any name"
    EXTERNAL = "a module outside the project: it does not change"


class _Walk:
    """The fixpoint's state; every set only grows, so it ends."""

    def __init__(self, diff: Diff, project: Project, test_files: Collection[str], graph: ImportGraph) -> None:
        self.project, self.test_files, self.graph = project, test_files, graph
        self.spans = changed_spans(diff)
        self.changed = _Names(objects_any=True)
        self.tainted = _Names(objects_any=False)
        self.factories = _Names(objects_any=False)  # functions whose changed code only the closures they return hold
        self.fixtures: dict[str, str] = {}
        # per function node, the closures it returns and what calling it reads (``makes``): the
        # fixpoint asks again on every pass
        self._closures: dict[ast.AST, tuple[frozenset[str], Reads]] = {}
        # whether some file may run code of its own when a class statement creates a subclass of
        # its base (``inert_base``); a file that does not parse may hold anything
        self.creation_hooks = self.named({*CREATION_HOOKS, "metaclass"})
        self.fallback: dict[str, str] = {}
        self.scopes: dict[str, str] = {}
        self.plugins: set[str] = set()
        self._aliases: dict[str, dict[str, str]] = {}
        self._bases: dict[tuple[str, str], str | _Outside] = {}
        for change in diff.of_kind(FileKind.SOURCE, FileKind.TEST):
            for name in sorted(change.names):
                self.changed.add(change.path, name, "%s::%s" % (change.path, name))
            if any(n.startswith("pytest_") for n in change.names):
                self.plugins.add(change.path)
            if change.side_effects:
                self.fall_back(change.path, "; ".join(change.side_effects))

    def named(self, words: Collection[str]) -> bool:
        """Whether some file's code names one of ``words`` (not a comment or a docstring); a file
        that does not parse may hold anything."""
        indexes = [self.project.index(path) for path in self.project.mentioning(words)]
        return any(index is None or not index.named.isdisjoint(words) for index in indexes)

    def size(self) -> tuple[int, ...]:
        names = self.changed.size(), self.tainted.size(), self.factories.size()
        return (*names, len(self.fixtures), len(self.fallback), len(self.scopes))

    def fall_back(self, path: str, why: str) -> None:
        """Every test importing ``path`` runs; every test, when it is a plugin. A test module's
        fixtures and hooks apply to its own tests and its importers' only."""
        index = self.project.index(path)
        if path not in self.test_files and (path in self.plugins or (index is not None and index.plugin)):
            self.scopes.setdefault("", "pytest plugin %s may apply to any test: %s" % (path, why))
        else:
            self.fallback.setdefault(path, why)

    def settle(self) -> None:
        while True:
            before = self.size()
            words = {*self.changed.anywhere, *self.tainted.anywhere, *self.factories.anywhere, *self.fixtures, STAR}
            for path in sorted({*self.project.mentioning(words), *self.spans}):
                index = self.project.index(path)
                if index is None:
                    continue
                spans = self.spans.get(path, ())
                for definition in index.definitions:
                    if not definition.words.isdisjoint(words) or spans:
                        self.definition(path, definition, words)
                for unit in index.units:
                    self.imports(path, unit)
                    if not unit.reads.words.isdisjoint(words):
                        self.unit(path, unit)
            if self.size() == before:
                return

    # -- where a name read in a file points ------------------------------------------------------

    def aliases(self, path: str) -> dict[str, str]:
        """Names ``path`` binds to a module (``import a.b as c``, ``from a import b``): name -> module."""
        if path not in self._aliases:
            found: dict[str, str] = {}
            index = self.project.index(path)
            for imported in index.imports if index is not None else ():
                if not imported.name:
                    whole = imported.bound != imported.module.split(".")[0]
                    found.setdefault(imported.bound, imported.module if whole else imported.bound)
                elif imported.name != STAR:
                    module = self.graph.absolute(path, imported.module, imported.level)
                    candidate = "%s.%s" % (module, imported.name) if module else imported.name
                    if candidate in self.graph.module_file:
                        found.setdefault(imported.bound, candidate)
            self._aliases[path] = found
        return self._aliases[path]

    def module(self, name: str) -> str | _Outside:
        """The project file of the module ``name``, or where else it points."""
        if name in self.graph.module_file:
            return self.graph.module_file[name]
        parts = name.split(".")
        if any(".".join(parts[:i]) in self.graph.module_file for i in range(1, len(parts))):
            return _Outside.OBJECT  # a name inside a project module: a class's attribute
        return _Outside.UNKNOWN if self.graph.owns(name) else _Outside.EXTERNAL

    def source(self, path: str, imported: Imported) -> str | _Outside:
        """Where the module an import in ``path`` names points."""
        return self.module(self.graph.absolute(path, imported.module, imported.level))

    def base(self, path: str, base: str) -> str | _Outside:
        """Where ``base`` in ``base.attr``, read in ``path``, points."""
        if (path, base) not in self._bases:
            first, _, rest = base.partition(".")
            module = self.aliases(path).get(first)
            found = _Outside.OBJECT if module is None else self.module(module + "." + rest if rest else module)
            self._bases[path, base] = found
        return self._bases[path, base]

    def lookup(self, names: _Names, path: str, r: Reads, strings: bool) -> list[str]:
        """The labels of ``names`` that ``r``, read in ``path``, reads, sorted by name."""
        hit = {n: names.of(path)[n] for n in r.names & names.of(path).keys()}
        pairs = [(self.base(path, base), attr) for base, attr in r.qualified]
        pairs += [(self.source(path, i), i.name) for i in r.imported if i.name not in ("", STAR)]
        pairs += [(_Outside.OBJECT, attr) for attr in r.attributes]
        pairs += [(_Outside.UNKNOWN, s) for s in r.strings] if strings else []
        for where, name in pairs:
            if where is _Outside.OBJECT:
                found: Mapping[str, str] = names.objects
            elif where is _Outside.UNKNOWN:
                found = names.anywhere
            elif where is _Outside.EXTERNAL:
                continue
            else:
                found = names.of(where)
            if name in found:
                hit.setdefault(name, found[name])
        return [hit[n] for n in sorted(hit)]

    def read(self, path: str, r: Reads, requests: bool = False) -> list[str]:
        """What ``r`` reads of the changed names and fixtures (by string, or by parameter when
        ``requests``: a definition's own), as reasons say it."""
        fixtures = sorted(((r.parameters if requests else frozenset()) | r.strings) & self.fixtures.keys())
        return self.lookup(self.changed, path, r, True) + ["fixture %s" % self.fixtures[f] for f in fixtures]

    # -- the rules -------------------------------------------------------------------------------

    def taint(self, path: str, d: Definition) -> None:
        """Code may run ``d`` by its name: a module's global, or an object's attribute for a
        method; a dunder method (``__init__``) by its class's name too. A function nested in
        another runs only through it: the outer one is tainted, holding or reading what it does."""
        parts = d.qualname.split(".")
        label = "%s::%s" % (path, d.qualname)
        if d.kind == "function" and len(parts) == 1:
            self.tainted.add(path, parts[0], label)
        elif d.kind == "method":
            self.tainted.member(parts[-1], label)
            if parts[-1].startswith("__") and parts[-1].endswith("__"):
                if len(parts) == 2:
                    self.tainted.add(path, parts[0], label)
                else:
                    self.tainted.member(parts[-2], label)
            owner = ".".join(parts[:-1])
            if _special(parts[-1]) and not self.created_plainly(path, owner):
                self.fall_back(
                    path, "%s may run changed code, and the metaclass making %s may call it" % (label, owner)
                )

    def memoised(self, path: str, node: ast.AST) -> bool:
        """Whether a memoising decorator keeps ``node``'s result (under its imported name too:
        ``from functools import lru_cache as memo``)."""
        index = self.project.index(path)
        renamed = {i.bound: i.name for i in index.imports if i.name} if index is not None else {}
        decorators = node.decorator_list if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else []
        for decorator in decorators:
            first, _, rest = dotted(decorator).partition(".")
            if (rest or renamed.get(first, first)).rpartition(".")[2] in _MEMOISING:
                return True
        return False

    def created_plainly(self, path: str, qualname: str) -> bool:
        """Whether the class statement ``qualname`` calls none of its own methods: no keyword,
        and bases of the ancestry ``_plain`` allows (an ``Enum``'s metaclass calls ``__init__``
        and ``_generate_next_value_`` of the class it makes, member by member)."""
        index = self.project.index(path)
        found = [d.node for d in index.definitions if d.qualname == qualname] if index is not None else []
        node = found[0] if found else None
        if not isinstance(node, ast.ClassDef) or node.keywords:
            return False
        bases = [b.value if isinstance(b, ast.Subscript) else b for b in node.bases]
        return all(self._plain(path, dotted(b, calls=False), frozenset(), abstract=True) for b in bases)

    def definition(self, path: str, d: Definition, words: Collection[str]) -> None:
        named = not d.words.isdisjoint(words)  # else its code need not be read
        read = self.read(path, d.reads, requests=True) if named else []
        runs = self.runs(path, d.reads) if named else []
        held = [s for s in self.spans.get(path, ()) if d.start <= s.start and s.end <= d.end]
        holds = bool(held)
        if not d.shared and (read or runs or held) and self.makes(path, d, held):
            self.factories.add(path, d.name, "%s::%s" % (path, d.qualname))
        elif read or runs or (holds and d.kind != "class"):
            self.taint(path, d)
        if (read or runs or holds) and self.memoised(path, d.node):
            why = "memoised %s::%s may run changed code: B's record has it for its first caller only"
            self.fall_back(path, why % (path, d.qualname))
        if not d.shared or not (read or runs or holds):
            return
        where = "%s::%s" % (path, d.qualname)
        cause = "reads changed %s" % read[0] if read else "may run changed %s" % runs[0] if runs else ""
        cause = cause or "holds a changed line"
        if not d.autouse:
            self.fixtures.setdefault(d.name, "%s (%s that %s)" % (where, d.shared, cause))
            return
        scope = scope_of(path, self.test_files)
        why = "%s %s runs for every test it applies to and %s" % (d.shared, where, cause)
        if scope == path:  # a test module's applies where it is imported too, anywhere once loaded as a plugin
            self.fallback.setdefault(path, why)
            scope = "" if self.loaded_as_plugin(path) else scope
        self.scopes.setdefault("" if scope is None else scope, why)

    def loaded_as_plugin(self, path: str) -> bool:
        """Whether a ``pytest_plugins`` of the project may name the module ``path``."""
        name = posixpath.basename(path).removesuffix(".py")
        return any(name in self.project.words(p) for p in self.project.mentioning({"pytest_plugins"}))

    def runs(self, path: str, r: Reads) -> list[str]:
        """What ``r`` may run of the changed code: tainted names, and factories (their products)."""
        return self.lookup(self.tainted, path, r, False) + self.lookup(self.factories, path, r, False)

    def makes(self, path: str, d: Definition, held: Collection[Span]) -> bool:
        """Whether the module-level function ``d`` holds, reads or may run changed code only in
        closures it returns (``_comparator`` returning its ``wrapper``): calling it runs none of
        it, what it returns may."""
        if d.kind != "function" or "." in d.qualname or not isinstance(d.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return False
        known = self._closures.get(d.node)
        if known is None:
            deferred = closures(d.node)
            known = self._closures[d.node] = (deferred, reads(*outside_closures(d.node)) if deferred else Reads())
        deferred, own = known
        inner = ["%s.%s" % (d.qualname, name) for name in deferred]
        if not inner or not all(any(s.qualname == n or s.qualname.startswith(n + ".") for n in inner) for s in held):
            return False
        return not self.read(path, own, requests=True) and not self.runs(path, own)

    def imports(self, path: str, u: Unit) -> None:
        """``from m import X`` binds ``m``'s ``X``: changed or tainted in ``m``, so here (an
        import nested in an ``if`` or a ``try`` too)."""
        for imported in u.binding.imports | u.reads.imported:
            if not imported.name:
                continue  # ``import m`` binds the module: its attributes are read through it
            where = self.source(path, imported)
            if where is _Outside.EXTERNAL:
                continue
            for names in (self.changed, self.tainted, self.factories):
                found = names.anywhere if isinstance(where, _Outside) else names.of(where)
                wanted = found.keys() if imported.name == STAR else {imported.name} & found.keys()
                for got in sorted(wanted):
                    names.add(path, got if imported.name == STAR else imported.bound, found[got])

    def _function(self, path: str, func: ast.expr) -> Definition | None:
        """The project's module-level function that the callee ``func``, in ``path``, names."""
        name = dotted(func, calls=False)
        base, _, attr = name.rpartition(".")
        where: str | _Outside = path
        if base:
            where = self.base(path, base)
        else:
            index = self.project.index(path)
            for imported in index.imports if index is not None else ():
                if imported.bound == name and imported.name not in ("", STAR):
                    where, attr = self.source(path, imported), imported.name
        index = self.project.index(where) if isinstance(where, str) and attr else None
        found = [d for d in index.definitions if d.qualname == attr] if index is not None else []
        once = index is not None and len(_binders(index.units, attr)) == 1
        return found[0] if len(found) == 1 and once and found[0].kind == "function" else None

    def inert_base(self, path: str, u: Unit, base: ast.AST) -> bool:
        """Whether creating ``u``'s class runs nothing of its tainted ``base``: the statement has
        no decorator (``dataclass`` and ``total_ordering`` read the class's attributes, and so
        run a descriptor's ``__get__``), keyword or call (no effect), no file of the project
        names a class-creation hook (``__set_name__`` too: a value of the new class's body is
        given the class; a fourth review found 18 ways around the body check that allowed
        it) or a metaclass in its code (``codeindex.named``), and the base is a project class
        whose ancestry is project classes, ``object``, the built-in classes and
        ``typing.Generic``."""
        if u.binding.effect or u.decorators or self.creation_hooks:
            return False
        return self._plain(path, dotted(base, calls=False), frozenset(), abstract=False)

    def _plain(self, path: str, name: str, seen: frozenset[str], abstract: bool) -> bool:
        """Whether ``name``, read in ``path``, is a class of the ancestry ``inert_base`` allows,
        or ``created_plainly`` (``abstract``: the abstract bases of ``abc``, ``collections.abc``
        and ``typing`` too, whose metaclasses call no method of the class they make -- but read
        its attributes, running a descriptor's ``__get__``)."""
        index = self.project.index(path)
        if index is None or not name:
            return False
        if name == "object":
            return True
        first, _, rest = name.partition(".")
        module, wanted = "", name
        for imported in index.imports:
            if imported.bound != first:
                continue
            module = self.graph.absolute(path, imported.module, imported.level)
            wanted = ".".join(p for p in (imported.name, rest) if p)
        if module and module not in self.graph.module_file:
            if abstract and module.split(".")[0] in _ABSTRACT:
                return True
            return (module, wanted) in _INERT_OUTSIDE  # outside the project: typing's Generic
        if not module and name in _BUILTIN_CLASSES and not any(name in u.binding.names for u in index.units):
            return True  # made by ``type``, which calls nothing of a class's
        where = self.graph.module_file[module] if module else path
        found = self.project.index(where)
        key = "%s::%s" % (where, wanted)
        for d in found.definitions if found is not None and key not in seen else ():
            if d.qualname == wanted and isinstance(d.node, ast.ClassDef):
                if d.node.keywords or d.node.decorator_list:
                    return False
                bases = [b.value if isinstance(b, ast.Subscript) else b for b in d.node.bases]
                return all(self._plain(where, dotted(b, calls=False), seen | {key}, abstract) for b in bases)
        binders = _binders(found.units, wanted) if found else []
        if key in seen or len(binders) != 1 or len(binders[0].code) != 1:
            return False
        return self._passed(where, binders[0].code[0], seen | {key}, abstract)

    def _passed(self, path: str, statement: ast.AST, seen: frozenset[str], abstract: bool) -> bool:
        """Whether ``statement`` binds a class of the ancestry ``_plain`` allows by calling a
        project function that returns only what it is given, or ``object``
        (``names.returned_parameters``), with such classes only: tinydb's ``TableBase =
        with_typehint(Table)`` is ``Table`` or ``object``."""
        value = statement.value if isinstance(statement, (ast.Assign, ast.AnnAssign)) else None
        if not isinstance(value, ast.Call) or self.lookup(self.tainted, path, reads(value.func), False):
            return False
        callee = self._function(path, value.func)
        node = callee.node if callee is not None else None
        given = [*value.args, *(k.value for k in value.keywords)]
        return (
            isinstance(node, ast.FunctionDef)
            and not node.decorator_list
            and returned_parameters(node) is not None
            and all(isinstance(a, (ast.Name, ast.Attribute)) for a in given)
            and all(self._plain(path, dotted(a, calls=False), seen, abstract) for a in given)
        )

    def contained(self, path: str, u: Unit) -> bool:
        """Whether running ``u`` runs none of the tainted names it reads. Each must stand where it
        is only handed on: a base of the class it creates (while no class-creation hook is
        tainted), an index without a call (``Type[Table]``: the subscripted object gets it, as a
        dict gets a key), or an argument of a project function that is not tainted, not
        decorated, and only returns or tests its parameters (``with_typehint(Table)``), or of a
        built-in container's storing method (``SCOPE.update(...)``, ``SCOPE`` bound to displays
        only), by position or keyword, or an element of a display -- whose result must then
        stand so too, or be bound, or be dropped. At module level, what a lambda's body reads
        runs when the lambda is called: the lambda is what must stand so (in a class body, the
        metaclass or ``__init_subclass__`` may call it). A method read through such a container
        is the built-in one. What ``u`` binds may then hold a tainted name: calling it may run
        changed code, importing it does not."""
        parents = dict(_with_parents(u.code))
        indexed = {id(n) for n in _indices(u.code)}
        index = self.project.index(path)
        literals = index.literals if index is not None else frozenset()

        def builtin(func: ast.AST) -> bool:
            """``func`` is a method of a container the file binds to displays only."""
            return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in literals

        def handed_on(node: ast.AST) -> bool:
            parent = parents[node]
            if parent is None:
                return any(node is b for b in u.bases) and self.inert_base(path, u, node)
            if isinstance(parent, (ast.Assign, ast.AnnAssign, ast.Expr)) and node is parent.value:
                return True
            if isinstance(parent, ast.AnnAssign) and node is parent.annotation and not u.scope:
                return True  # stored in the module's ``__annotations__`` (a class's: ``__init_subclass__`` may read)
            if isinstance(parent, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
                return handed_on(parent)  # a display holds its elements, calling none
            if isinstance(parent, ast.keyword):
                parent = parents[parent]  # a class statement's keyword has none: the metaclass gets it
                if not isinstance(parent, ast.Call) or u.scope:
                    return False  # a class body's value goes to the class's maker: not followed
            elif not isinstance(parent, ast.Call) or not any(node is a for a in parent.args):
                return False
            if builtin(parent.func):
                return isinstance(parent.func, ast.Attribute) and parent.func.attr in STORING and handed_on(parent)
            callee = self._function(path, parent.func)
            if callee is None or not isinstance(callee.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return False
            if (
                u.scope
                and index is not None
                and any(d.qualname == "%s.%s" % (u.scope, callee.name) for d in index.definitions)
            ):
                return False  # in a class body, the class's own helper of that name is the one called
            if callee.node.decorator_list or self.lookup(self.tainted, path, reads(parent.func), False):
                return False
            return passes_through(callee.node) and handed_on(parent)

        for node, parent in parents.items():
            if (
                not isinstance(node, (ast.Name, ast.Attribute))
                or not isinstance(node.ctx, ast.Load)
                or id(node) in indexed
                or builtin(node)
                or (isinstance(parent, ast.Attribute) and builtin(parent) and parent.attr in STORING)
            ):
                continue  # a built-in method, or the container a storing method fills
            if self.lookup(self.tainted, path, reads(node), False):
                if not handed_on(node):
                    return False
            elif self.lookup(self.factories, path, reads(node), False):
                applied = parent is None and any(node is x for x in u.decorators)
                called = isinstance(parent, ast.Call) and node is parent.func and handed_on(parent)
                if not (applied or called or handed_on(node)):  # a factory aliased is tainted
                    return False
        return True

    def bind_tainted(self, path: str, u: Unit, label: str, names: Collection[str] | None = None) -> None:
        """What ``u`` binds (or ``names``, the containers it fills) may run changed code when
        called: a module-level name by its name, a class-level one as an attribute (a dunder: by
        its class's name too, as ``taint``)."""
        scope = u.scope.split(".") if u.scope else []
        for name in sorted(u.binding.names if names is None else names):
            own = bool(scope) and scope[-1] == name  # a class's own header binds the class
            inside = scope[:-1] if own else scope  # the classes the name is an attribute of
            if inside:
                self.tainted.member(name, label)
            else:
                self.tainted.add(path, name, label)
            if inside and name.startswith("__") and name.endswith("__"):
                if len(inside) == 1:
                    self.tainted.add(path, inside[0], label)
                else:
                    self.tainted.member(inside[-1], label)

    def unasked(self, path: str, u: Unit) -> bool:
        """Whether ``u`` binds what is called with no caller in the code: a setup, a teardown or a
        hook pytest calls, a name pytest reads, a module's ``__getattr__`` or ``__dir__`` (an
        import of a missing name calls it), a special name of a class its metaclass may call
        (an ``Enum``'s ``_generate_next_value_ = lambda ...``)."""
        for name in u.binding.names:
            if name in PYTEST_NAMES or name.startswith(CALLED_UNASKED):
                return True
            if not u.scope and name in ("__getattr__", "__dir__"):
                return True
            if u.scope and _special(name) and not self.created_plainly(path, u.scope):
                return True
        return False

    def unit(self, path: str, u: Unit) -> None:
        read = self.read(path, u.reads)
        # a definition's header that calls nothing only stores what it reads (defaults, annotations);
        # any other statement may hand a tainted name on (``Alias = Table``, ``MAKE = lambda: f()``)
        # to code that calls it later at import
        stores = u.function and not u.binding.runs
        ran = [] if stores or any(is_main_guard(c) for c in u.code) else self.runs(path, u.reads)
        if not read and not ran:
            return
        if ran and (not read or not u.binding.effect) and not self.unasked(path, u) and self.contained(path, u):
            self.bind_tainted(path, u, ran[0])
            self.bind_tainted(path, u, ran[0], _filled(u.code, u.scope))  # the containers it fills
            if not read:
                return
            ran = []  # what it names of the tainted is handed on; it binds from what it read
        cause = "reads changed %s" % read[0] if read else "calls %s, which may run changed code" % ran[0]
        bound = u.binding.names | set(u.scope.split(".") if u.scope else ())
        scope = scope_of(path, self.test_files)
        pure = not ran and not u.binding.effect
        effect = ": %s" % u.binding.effect if u.binding.effect else ""
        if scope is not None and (not pure or bound & PYTEST_NAMES):
            self.scopes.setdefault(scope, "module-level code of %s (line %d) %s%s" % (path, u.start, cause, effect))
        elif not pure:
            self.fall_back(path, "its module-level code (line %d) %s%s" % (u.start, cause, effect))
        else:
            for name in sorted(bound):
                self.changed.add(path, name, "%s::%s (bound from %s)" % (path, name, read[0].split(" (")[0]))

    def readers(self) -> dict[str, dict[int, tuple[str, str]]]:
        """Lines on B whose innermost definition reads a changed name or requests a changed fixture."""
        found: dict[str, dict[int, tuple[str, str]]] = {}
        wanted = {*self.changed.anywhere, *self.fixtures}
        for path in self.project.mentioning(wanted):
            index = self.project.index(path)
            if index is None:
                continue
            for at, d in enumerate(index.definitions):
                read = self.read(path, d.reads, requests=True) if not d.words.isdisjoint(wanted) else []
                if not read:
                    continue
                lines = found.setdefault(path, {})
                for line in range(d.start, d.end + 1):
                    if index.innermost[line] == at:
                        lines[line] = (d.qualname, read[0])
        return found


def _with_parents(nodes: Collection[ast.AST]) -> Iterator[tuple[ast.AST, ast.AST | None]]:
    """Each node under ``nodes`` with the node holding it (None for ``nodes`` themselves)."""
    todo: list[tuple[ast.AST, ast.AST | None]] = [(n, None) for n in nodes]
    while todo:
        node, parent = todo.pop()
        yield node, parent
        todo.extend((child, node) for child in ast.iter_child_nodes(node))


#: Subscripted names whose index is a type, held and never called (``Type[Table]``).
_GENERICS = frozenset(
    {
        *("Type", "Optional", "Union", "List", "Dict", "Set", "FrozenSet", "Tuple", "Callable", "ClassVar"),
        *("Final", "Annotated", "Iterable", "Iterator", "Sequence", "Mapping", "type", "list", "dict"),
        *("set", "frozenset", "tuple"),
    }
)


def _binders(units: Collection[Unit], name: str) -> list[Unit]:
    """The module-level units binding ``name`` (an ``__all__`` lists names, binding none)."""
    return [u for u in units if not u.scope and name in u.binding.names and "__all__" not in u.binding.names]


#: Decorators that keep a function's result: later callers never run its body.
_MEMOISING = frozenset({"cache", "lru_cache", "cached_property"})


#: The built-in classes, made by ``type``.
_BUILTIN_CLASSES = frozenset(n for n, v in vars(builtins).items() if isinstance(v, type) and type(v) is type)


def _special(name: str) -> bool:
    """A dunder or a sunder (``_missing_``): a name the language or a metaclass calls."""
    return len(name) > 2 and name.startswith("_") and name.endswith("_")


#: Standard-library modules whose abstract bases' metaclasses call nothing of a class's.
#: The modules of the abstract bases whose metaclasses call no method of the class they make.
_ABSTRACT = frozenset({"abc", "collections", "io", "numbers", "typing", "typing_extensions"})
#: The classes outside the project a tainted base may derive from: ``Generic`` reads nothing of
#: a new class's but its bases. Not ``abc``'s: ``ABCMeta`` gets each name a base left abstract
#: from the new class, running a descriptor's ``__get__`` (a fourth review's probe), and a
#: class method over a property (3.9-3.12) calls the property's getter.
_INERT_OUTSIDE = frozenset({("typing", "Generic"), ("typing_extensions", "Generic")})


def _filled(nodes: Collection[ast.AST], scope: str) -> set[str]:
    """The names a storing method is called on (``SCOPE`` in ``SCOPE.update(...)``), and a
    module's ``__annotations__`` that an annotation at module level fills: code reading them
    later at import (``[k() for k in __annotations__.values()]``) calls what they hold."""
    found = set()
    for node in nodes:
        if isinstance(node, ast.AnnAssign) and not scope:
            found.add("__annotations__")
        for sub in syntax.walk(node):
            func = sub.func if isinstance(sub, ast.Call) else None
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.attr in STORING:
                found.add(func.value.id)
    return found


def _indices(nodes: Collection[ast.AST]) -> Iterator[ast.AST]:
    """What stands in the index of a typing generic or a built-in type, where it calls nothing --
    nor subscripts anything else (``Optional[Table[int]]`` runs ``Table.__class_getitem__``)."""
    for node in nodes:
        for sub in syntax.walk(node):
            if isinstance(sub, ast.Subscript) and _generic(sub):
                inside = list(syntax.walk(sub.slice))
                if not any(
                    isinstance(n, ast.Call) or (isinstance(n, ast.Subscript) and not _generic(n)) for n in inside
                ):
                    yield from inside


def _generic(node: ast.Subscript) -> bool:
    return dotted(node.value, calls=False).rpartition(".")[2] in _GENERICS


def impact(diff: Diff, project: Project, test_files: Collection[str], graph: ImportGraph) -> Impact:
    """The fixpoint over ``project`` (B's Python files); ``test_files`` hold the suite's tests, and
    ``graph`` says which file a module name is."""
    walk = _Walk(diff, project, test_files, graph)
    walk.settle()
    bound: dict[str, dict[str, str]] = {}
    for names in (walk.factories, walk.tainted, walk.changed):  # a changed name's own label wins
        for path, held in names.by_module.items():
            bound.setdefault(path, {}).update(held)
    return Impact(walk.spans, walk.fallback, walk.scopes, walk.readers(), bound, walk.changed.by_module)
