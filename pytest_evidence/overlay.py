"""What "run on B" means: B's source with the candidate's test files laid over it.

This module decides which files are test files, which of them the candidate added, changed or
deleted relative to the baseline, whether they can be laid over B's tree, and -- per test
function, by comparing ASTs -- whether a test is new, changed or untouched. The last answer is
the input of role assignment, so it is computed from source, never from a test's name.

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

import ast
import fnmatch
import functools
import hashlib
import os
import posixpath
from dataclasses import dataclass
from typing import Callable, Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from pytest_evidence import gitops, syntax
from pytest_evidence.errors import OverlayConflict
from pytest_evidence.model import Origin

#: Directory names whose whole content counts as test material (fixtures, data, helpers).
TEST_DIRS = frozenset({"tests", "test", "testing"})


def is_test_file(path: str, python_files: Sequence[str]) -> bool:
    """True for conftest files, files matching ``python_files`` and anything under a test dir."""
    if posixpath.basename(path) == "conftest.py":
        return True
    if any(part in TEST_DIRS for part in path.split("/")[:-1]):
        return True
    return named_by(path, python_files)


def named_by(path: str, python_files: Sequence[str]) -> bool:
    """Whether a ``python_files`` pattern names ``path`` (relative to the root), as pytest matches
    one: a pattern with a ``/`` the path's last parts (``pkg/tests.py`` names
    ``src/pkg/tests.py`` too), any other the file's name (``test_*.py``). A pattern starting with
    ``/`` is no pytest pattern: it is a file named on pytest's command line, that path only
    (``/tests.py``: the root's ``tests.py``, not ``calc/tests.py``)."""
    name = posixpath.basename(path)
    for pattern in python_files:
        if pattern.startswith("/"):
            hit = path == pattern[1:]
        elif "/" in pattern:
            hit = fnmatch.fnmatch(path, pattern) or fnmatch.fnmatch(path, "*/" + pattern)
        else:
            hit = fnmatch.fnmatch(name, pattern)
        if hit:
            return True
    return False


@dataclass(frozen=True)
class OverlayPlan:
    """The test files to lay over B (``path -> blob sha``) and the ones to delete from it."""

    baseline_commit: str
    baseline_tree: str
    changed: Mapping[str, str]
    added: Tuple[str, ...]
    deleted: Tuple[str, ...]

    def digest(self) -> str:
        """Identity of the overlay: part of the baseline cache key."""
        h = hashlib.sha256()
        for path, sha in sorted(self.changed.items()):
            h.update(("%s\0%s\n" % (path, sha)).encode("utf-8", "surrogateescape"))
        for path in self.deleted:
            h.update(("-%s\n" % path).encode("utf-8", "surrogateescape"))
        return h.hexdigest()


def plan(root: str, baseline_commit: str, python_files: Sequence[str]) -> OverlayPlan:
    """Compare the working tree's test files with the baseline's and check they can be laid."""
    base = gitops.blobs(root, baseline_commit)
    current: Dict[str, str] = {}
    for path in gitops.worktree_files(root):
        if is_test_file(path, python_files):
            with open(os.path.join(root, path), "rb") as fh:
                current[path] = gitops.blob_sha(fh.read())
    changed = {p: sha for p, sha in current.items() if base.get(p) != sha}
    added = tuple(sorted(p for p in changed if p not in base))
    deleted = tuple(sorted(p for p in base if is_test_file(p, python_files) and p not in current))
    _check_layable(changed, base, baseline_commit)
    return OverlayPlan(
        baseline_commit=baseline_commit,
        baseline_tree=gitops.tree_of(root, baseline_commit),
        changed=changed,
        added=added,
        deleted=deleted,
    )


def plan_between(root: str, baseline_commit: str, commit: str, python_files: Sequence[str]) -> OverlayPlan:
    """The same comparison between two commits, from git's objects (nothing is laid)."""
    base = gitops.blobs(root, baseline_commit)
    current = {p: sha for p, sha in gitops.blobs(root, commit).items() if is_test_file(p, python_files)}
    changed = {p: sha for p, sha in current.items() if base.get(p) != sha}
    return OverlayPlan(
        baseline_commit=baseline_commit,
        baseline_tree=gitops.tree_of(root, baseline_commit),
        changed=changed,
        added=tuple(sorted(p for p in changed if p not in base)),
        deleted=tuple(sorted(p for p in base if is_test_file(p, python_files) and p not in current)),
    )


def _check_layable(changed: Iterable[str], base: Mapping[str, str], commit: str) -> None:
    """A file cannot be laid where B has a directory, nor under a path that is a file in B."""
    base_dirs = set()
    for path in base:
        parts = path.split("/")
        for i in range(1, len(parts)):
            base_dirs.add("/".join(parts[:i]))
    for path in changed:
        if path in base_dirs:
            raise OverlayConflict(
                "cannot lay test file %s over baseline %s: it is a directory there" % (path, commit[:12])
            )
        parts = path.split("/")
        for i in range(1, len(parts)):
            prefix = "/".join(parts[:i])
            if prefix in base:
                raise OverlayConflict(
                    "cannot lay test file %s over baseline %s: %s is a file there" % (path, commit[:12], prefix)
                )


def apply(plan_: OverlayPlan, source_root: str, dest_root: str) -> None:
    """Copy the candidate's test files into B's checkout and remove the ones it deleted."""
    for path in sorted(plan_.changed):
        dest = os.path.join(dest_root, path)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(os.path.join(source_root, path), "rb") as src, open(dest, "wb") as out:
            out.write(src.read())
    for path in plan_.deleted:
        target = os.path.join(dest_root, path)
        if os.path.exists(target):
            os.remove(target)


@functools.lru_cache(maxsize=64)
def _definitions(source: bytes) -> Optional[Dict[Tuple[str, ...], str]]:
    """``qualname parts -> digest of the definition's AST`` for every function and class, a
    function's folding in the data it reads (``_data``).

    Kept per text, and read only: a climb asks it of the same test files from the tests it
    runs and from the candidate's own tree, and dumping every definition's tree costs more than
    parsing it."""
    try:
        tree = syntax.parse(source)
    except (SyntaxError, ValueError):
        return None
    found: Dict[Tuple[str, ...], str] = {}
    lines = source.splitlines()
    module = _data(tree.body, lines)
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    context = _Context(module, classes, lines)
    for node in tree.body:
        if isinstance(node, _DEFINITIONS):  # module-level code is no test's: never dumped whole
            _digest(node, (), found, context, _Around())
    return found


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
#: Nodes binding a name held as a string, not as an ``ast.Name``: ``except E as e``, a ``match``
#: statement's capture patterns (Python 3.10+).
#: A tree's function nodes (by ``id``) and their scopes, each scanned once.
_Scopes = Dict[int, "_Scope"]
_NAMED = (ast.ExceptHandler, *(getattr(ast, n) for n in ("MatchAs", "MatchStar", "MatchMapping") if hasattr(ast, n)))


class _Context:
    """What a test file's definitions may read outside themselves: the module's bindings, its
    classes (a base's class-level data is read through ``self``), its lines (a statement too
    deep to dump is taken by its text)."""

    def __init__(self, module: Dict[str, str], classes: Dict[str, ast.ClassDef], lines: List[bytes]) -> None:
        self.module = module
        self.classes = classes
        self.lines = lines
        self._own: Dict[int, Dict[str, str]] = {}
        self.scopes: _Scopes = {}  # the tree's functions' scopes, each scanned once (``_function_scope``)

    def members(self, node: ast.ClassDef) -> Tuple[Dict[str, str], Set[str]]:
        """``name -> digest`` of what ``node``'s body binds, and what the bases of it this file
        defines at module level bind (walked up, the nearest binding first): ``self.cases`` of a
        subclass is its base's; and the names of those classes, through which a method reads
        them as through ``self``."""
        merged: Dict[str, str] = {}
        seen: Dict[int, str] = {}
        todo = [node]
        while todo:
            cls = todo.pop(0)
            if id(cls) in seen:
                continue
            seen[id(cls)] = cls.name
            for name, digest in self._bindings(cls).items():
                merged.setdefault(name, digest)
            todo += [self.classes[b.id] for b in cls.bases if isinstance(b, ast.Name) and b.id in self.classes]
        return merged, set(seen.values())

    def _bindings(self, cls: ast.ClassDef) -> Dict[str, str]:
        if id(cls) not in self._own:
            self._own[id(cls)] = _data(cls.body, self.lines)
        return self._own[id(cls)]


@dataclass(frozen=True)
class _Around:
    """What encloses a definition. ``classes``: the class-level bindings of its enclosing classes,
    outermost first, bases in the file included; ``names``: those classes' names; ``in_class``:
    it is defined in the last one's body, so its decorators and defaults read that body's names;
    ``marks``: its classes' decorators, which mark or parametrize it as its own would;
    ``inherited``: the module-level names those read, and ``pytestmark``; ``hidden``: what its
    enclosing functions bind, which it reads from them, not the module."""

    classes: Tuple[Dict[str, str], ...] = ()
    names: FrozenSet[str] = frozenset()
    in_class: bool = False
    marks: Tuple[str, ...] = ()
    inherited: FrozenSet[str] = frozenset(["pytestmark"])
    hidden: FrozenSet[str] = frozenset()

    def enter(self, node: ast.AST, context: _Context) -> _Around:
        """What encloses the definitions in ``node``'s body."""
        if isinstance(node, ast.ClassDef):
            members, names = context.members(node)
            marks = (*self.marks, *(ast.dump(d) for d in node.decorator_list))
            inherited = self.inherited | (_free(node.decorator_list, context.scopes) - self.hidden)
            return _Around((*self.classes, members), self.names | names, True, marks, inherited, self.hidden)
        local = _function_scope(node, context.scopes).local()
        return _Around(self.classes, self.names, False, self.marks, self.inherited, self.hidden | local)


def _digest(
    node: ast.AST, prefix: Tuple[str, ...], found: Dict[Tuple[str, ...], str], context: _Context, around: _Around
) -> str:
    """The digest of ``node``'s whole tree, and -- for a definition -- of every definition in its
    body (into functions too: a factory that defines a test class per parameter, lark's
    ``_make_full_earley_test``, holds methods the suite collects under other names), kept in
    ``found``. A definition's digest folds in its inner definitions' digests instead of dumping
    their trees again: a class is dumped once, not once more per method it holds. A function's
    folds in what it reads from outside itself (``_read_outside``)."""
    if not isinstance(node, _DEFINITIONS):
        return ast.dump(node)
    key = (*prefix, node.name)
    inner = around.enter(node, context)
    parts = [type(node).__name__]
    for field, value in ast.iter_fields(node):
        if field == "body":
            parts.append("body=[%s]" % ", ".join(_digest(child, key, found, context, inner) for child in value))
        elif isinstance(value, list):
            parts.append("%s=[%s]" % (field, ", ".join(_dump(v) for v in value)))
        else:
            parts.append("%s=%s" % (field, _dump(value)))
    if not isinstance(node, ast.ClassDef):
        parts += _read_outside(node, context, around)
    digest = hashlib.sha256(("(%s)" % ", ".join(parts)).encode()).hexdigest()
    found[key] = digest
    return digest


def _read_outside(node: ast.AST, context: _Context, around: _Around) -> List[str]:
    """What a function reads from outside itself, as bound there: its classes' decorators; the
    module-level bindings of the names it neither binds itself nor reads from an enclosing
    function, and of those its classes' decorators read (a class parametrized over a table,
    ``pytestmark``); the class-level bindings of what it reads through ``self``, ``cls`` or one
    of its classes' names, their bases in this file included, and -- defined in a class body --
    of the names its decorators and defaults read there and of the class's ``pytestmark``.

    A test reading a table the fix's test patch grew (cssutils' ``TestTokenizer.testsall``) is a
    changed test, though its own lines are as they were. One with a local, or an attribute of
    something else, named like a module-level name the candidate added is not: failing on both
    sides for its environment, it was taken for the fix's failing reproducer (a review's probe)."""
    module = ((_free([node], context.scopes) | around.inherited) - around.hidden) & context.module.keys()
    found = ["@%s" % mark for mark in around.marks]
    found += ["0:%s=%s" % (n, context.module[n]) for n in sorted(module)]
    through = _through_class(node, around.names)
    for i, members in enumerate(around.classes, 1):
        read = through
        if around.in_class and i == len(around.classes):
            read = through | _free(_evaluated_around(node), context.scopes) | {"pytestmark"}
        found += ["%d:%s=%s" % (i, n, members[n]) for n in sorted(read & members.keys())]
    return found


def _data(body: Sequence[ast.stmt], lines: List[bytes]) -> Dict[str, str]:
    """``name -> digest`` of what a module or class body binds outside its definitions: the
    statements binding it, or for an import the one name it imports (``from m import a, b``
    grown by ``c`` for a new test changes neither ``a`` nor ``b``). A statement nested too deep
    for ``ast.dump`` (a data table, or a candidate's trap) is taken by its text."""
    found: Dict[str, List[str]] = {}
    for stmt in body:
        if isinstance(stmt, _DEFINITIONS):
            continue
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            module = stmt.module if isinstance(stmt, ast.ImportFrom) else None
            level = stmt.level if isinstance(stmt, ast.ImportFrom) else 0
            for alias in stmt.names:
                bound = alias.asname or alias.name.split(".")[0]
                # ``import a.b`` binds ``a`` as ``import a`` does: the module ``a``, whatever else it loads
                what = alias.name if alias.asname or isinstance(stmt, ast.ImportFrom) else bound
                entry = repr((module, level, what, alias.asname))
                if entry not in found.setdefault(bound, []):
                    found[bound].append(entry)
            continue
        try:
            dumped = ast.dump(stmt)
        except RecursionError:
            dumped = repr(lines[stmt.lineno - 1 : getattr(stmt, "end_lineno", None) or stmt.lineno])
        for sub in syntax.walk(stmt):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)):
                found.setdefault(sub.id, []).append(dumped)
    return {n: hashlib.sha256("\n".join(d).encode()).hexdigest() for n, d in found.items()}


class _Scope:
    """The names one scope's code reads and binds, as Python resolves them: a name bound anywhere
    in a function -- a parameter, an assignment, loop, ``with`` or ``except`` target, an import,
    an inner definition -- is its own throughout it, unless declared ``global`` or ``nonlocal``;
    a comprehension's variables are the comprehension's; an inner scope's free names are read
    by the scope around it -- past a class body (``past``): a method, or a comprehension in the
    class body, does not see the names the class binds. ``scopes``: the scopes of the tree's
    functions already scanned."""

    def __init__(self, scopes: _Scopes, klass: bool = False) -> None:
        self.read: Set[str] = set()
        self.bound: Set[str] = set()
        self.declared: Set[str] = set()
        self.past: Set[str] = set()
        self.klass = klass
        self.scopes = scopes

    def local(self) -> Set[str]:
        return self.bound - self.declared

    def free(self) -> Set[str]:
        return (self.read - self.local()) | self.past

    def scan(self, node: ast.AST) -> None:
        if isinstance(node, ast.Name):
            (self.read if isinstance(node.ctx, ast.Load) else self.bound).add(node.id)
            return
        if isinstance(node, (*_FUNCTIONS, ast.ClassDef, *_COMPREHENSIONS)):
            if isinstance(node, _DEFINITIONS):
                self.bound.add(node.name)
            for part in _evaluated_around(node):
                self.scan(part)
            (self.past if self.klass else self.read).update(_inside(node, self.scopes))
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            self.bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            self.declared |= set(node.names)
        elif isinstance(node, _NAMED):
            self.bound |= {v for v in (getattr(node, "name", None), getattr(node, "rest", None)) if v}
        for child in ast.iter_child_nodes(node):
            self.scan(child)


def _free(nodes: Iterable[ast.AST], scopes: _Scopes) -> Set[str]:
    """The names ``nodes``, code of one scope, read from the scopes around it."""
    scope = _Scope(scopes)
    for node in nodes:
        scope.scan(node)
    return scope.free()


def _evaluated_around(node: ast.AST) -> List[ast.AST]:
    """The parts of a scope's node evaluated in the scope around it: a function's decorators,
    defaults and annotations, a class's decorators and bases, a comprehension's first iterable."""
    if isinstance(node, _COMPREHENSIONS):
        return [node.generators[0].iter]
    if isinstance(node, ast.ClassDef):
        return [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]
    assert isinstance(node, _FUNCTIONS)
    args = node.args
    parts: List[Optional[ast.AST]] = [*args.defaults, *args.kw_defaults]
    if not isinstance(node, ast.Lambda):
        parts += [*node.decorator_list, node.returns, *(a.annotation for a in _parameters(args))]
    return [p for p in parts if p is not None]


def _inside(node: ast.AST, scopes: _Scopes) -> Set[str]:
    """The free names of a function's, class's or comprehension's own code."""
    if isinstance(node, _FUNCTIONS):
        return _function_scope(node, scopes).free()
    scope = _Scope(scopes, klass=isinstance(node, ast.ClassDef))
    if isinstance(node, ast.ClassDef):
        for stmt in node.body:
            scope.scan(stmt)
        return scope.free()
    assert isinstance(node, _COMPREHENSIONS)
    for field in ("elt", "key", "value"):
        if hasattr(node, field):
            scope.scan(getattr(node, field))
    for i, generator in enumerate(node.generators):
        for part in [generator.target, *generator.ifs, *([generator.iter] if i else [])]:
            scope.scan(part)
    return scope.free()


def _function_scope(node: ast.AST, scopes: _Scopes) -> _Scope:
    """The scope of a function's own code, scanned once per tree: a method is read for what it
    reads from outside and for what it binds, and an inner function again for each function
    around it -- a third of the cost of the digests of a test file, before this was kept."""
    assert isinstance(node, _FUNCTIONS)
    known = scopes.get(id(node))  # the tree is alive while its digests are made: ids are its nodes'
    if known is not None:
        return known
    scope = _Scope(scopes)
    scope.bound |= {a.arg for a in _parameters(node.args)}
    for stmt in node.body if isinstance(node.body, list) else [node.body]:
        scope.scan(stmt)
    scopes[id(node)] = scope
    return scope


def _parameters(args: ast.arguments) -> List[ast.arg]:
    extra = [a for a in (args.vararg, args.kwarg) if a is not None]
    return [*getattr(args, "posonlyargs", []), *args.args, *args.kwonlyargs, *extra]


def _through_class(node: ast.AST, classes: FrozenSet[str]) -> Set[str]:
    """The attributes ``node`` reads through ``self``, ``cls``, ``type(self)``, ``super()`` or
    the name of one of ``classes``: what a class body binds (``self.cases``), not an attribute
    of anything else (``os.path``, ``Path.cwd``)."""
    return {s.attr for s in syntax.walk(node) if isinstance(s, ast.Attribute) and _is_class(s.value, classes)}


def _is_class(value: ast.AST, classes: FrozenSet[str]) -> bool:
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ("type", "super"):
        return not value.args or _is_class(value.args[0], classes)
    if isinstance(value, ast.Attribute) and value.attr == "__class__":
        return _is_class(value.value, classes)
    return isinstance(value, ast.Name) and (value.id in ("self", "cls") or value.id in classes)


def _dump(value: object) -> str:
    return ast.dump(value) if isinstance(value, ast.AST) else repr(value)


def split_test_id(test_id: str) -> Tuple[str, Tuple[str, ...]]:
    """``"a/test_x.py::C::test_f[1]"`` -> ``("a/test_x.py", ("C", "test_f"))``. The parameters
    are cut before the names are split: an id may hold ``::`` (``test_url[http://[::1]/]``, an
    IPv6 address), which made a name of half of it and left the test without an origin."""
    path, _, rest = test_id.partition("::")
    names = rest.split("[", 1)[0].split("::")
    return path, tuple(n for n in names if n and n != "()")


def _compare(old: Dict[Tuple[str, ...], str], new: Dict[Tuple[str, ...], str], names: Tuple[str, ...]) -> Origin:
    if names not in old and names not in new:
        names = _made_from(names, new) or _made_from(names, old) or names
    if names not in old:
        return Origin.ADDED if names in new else Origin.UNKNOWN
    return Origin.UNCHANGED if old.get(names) == new.get(names) else Origin.CHANGED


def _made_from(names: Tuple[str, ...], defined: Dict[Tuple[str, ...], str]) -> Optional[Tuple[str, ...]]:
    """The definition a test defined by neither version was made from at import time, by a
    decorator that names each test it makes after it: ``parameterized.expand``'s
    ``test_f_0_case``, ``ddt``'s ``test_f_1_value``, ``parameterized_class``'s ``TestX_0`` -- each
    part the definition's own or begun by it and ``_``; the longest such. None: none fits (a
    name made otherwise stays of unknown origin)."""
    same = [key for key in defined if len(key) == len(names)]
    fits = [key for key in same if all(n == d or n.startswith(d + "_") for n, d in zip(names, key))]  # noqa: B905 - same length
    return max(fits, key=lambda key: sum(map(len, key)), default=None)


class OriginResolver:
    """Answers "is this test new, changed or untouched since the baseline?" per test id.

    ``prefix`` maps node-id paths (relative to pytest's rootdir) onto paths relative to the git
    root. ``read`` gives the candidate's version of a file (default: the file under ``root``), so
    the question can be asked of a commit as well as of a working tree. Parsed files are cached:
    a suite asks about the same file once per test.
    """

    def __init__(
        self, root: str, plan_: OverlayPlan, prefix: str, read: Optional[Callable[[str], Optional[bytes]]] = None
    ) -> None:
        self._root = root
        self._plan = plan_
        self._prefix = prefix
        self._read = read or self._from_disk
        self._cache: Dict[str, Tuple[Optional[Dict[Tuple[str, ...], str]], Optional[Dict[Tuple[str, ...], str]]]] = {}
        self._current_cache: Dict[str, Optional[Dict[Tuple[str, ...], str]]] = {}
        self._texts: Dict[str, Optional[bytes]] = {}

    def origin(self, test_id: str) -> Origin:
        rel, names = split_test_id(test_id)
        path = self._path(rel)
        if path in self._plan.added:
            return Origin.ADDED
        inherited = self._inherited(path, names)
        if inherited is not None:
            return inherited
        if path not in self._plan.changed:
            return Origin.UNCHANGED
        old, new = self._parsed(path)
        if old is None or new is None or not names:
            return Origin.UNKNOWN
        return _compare(old, new, names)

    def read_ahead(self, paths: Iterable[str]) -> None:
        """Read now the files ``origin`` will read for tests in ``paths`` (node-id paths): each
        of them, and every changed test file a method may be inherited from. Every answer is
        then judged from these texts, whatever a test process writes into the tree afterwards;
        ``parse_ahead`` parses them (for a caller with time on its hands -- the runner, while
        test processes start and collect)."""
        for rel in paths:
            self._text(self._path(rel))
        for path in self._changed_python():
            self._text(path)

    def parse_ahead(self) -> None:
        """Parse what ``read_ahead`` read, so that the tests' origins need not wait for it."""
        for path in list(self._texts):
            self._current(path)
        for path in self._changed_python():
            self._parsed(path)

    def _changed_python(self) -> List[str]:
        return [p for p in sorted(self._plan.changed) if p.endswith(".py")]

    def _inherited(self, path: str, names: Tuple[str, ...]) -> Optional[Origin]:
        """A test method its class gets from elsewhere: a base or a class factory in a changed file.

        ``tests/test_lru.py::LRUCacheTest::test_copy`` may be defined by a mixin in
        ``tests/__init__.py``, and ``tests/__main__.py::TestFullEarleyBasic::test_x`` by a class
        made inside a factory function of ``tests/test_parser.py``; the origin is that
        definition's. When several definitions of the method match, any change among them makes
        the test changed (it is then run on B and on C, never assumed untouched). None when the
        method is defined where the test id says, or in no changed test file.
        """
        if len(names) < 2 or not path.endswith(".py"):
            return None
        here = self._current(path)
        if here is None or names in here:
            return None
        found = set()
        for other in self._changed_python():
            old, new = self._parsed(other)
            if new is None:
                continue
            for key in new:
                if len(key) >= 2 and key[-1] == names[-1]:
                    found.add(Origin.ADDED if old is None or other in self._plan.added else _compare(old, new, key))
        for origin in (Origin.CHANGED, Origin.ADDED, Origin.UNCHANGED):
            if origin in found:
                return origin
        return None

    def _path(self, rel: str) -> str:
        """A node-id path as a path from the git root."""
        return posixpath.normpath(posixpath.join(self._prefix, rel)) if self._prefix else rel

    def _from_disk(self, path: str) -> Optional[bytes]:
        try:
            with open(os.path.join(self._root, path), "rb") as fh:
                return fh.read()
        except OSError:
            return None

    def _text(self, path: str) -> Optional[bytes]:
        """The candidate's version of ``path``, read once: every answer about it is from one text."""
        if path not in self._texts:
            self._texts[path] = self._read(path)
        return self._texts[path]

    def _current(self, path: str) -> Optional[Dict[Tuple[str, ...], str]]:
        if path not in self._current_cache:
            data = self._text(path)
            self._current_cache[path] = None if data is None else _definitions(data)
        return self._current_cache[path]

    def _parsed(self, path: str) -> Tuple[Optional[Dict[Tuple[str, ...], str]], Optional[Dict[Tuple[str, ...], str]]]:
        if path not in self._cache:
            added = path in self._plan.added
            old = None if added else _definitions(gitops.show(self._root, self._plan.baseline_commit, path))
            data = self._text(path)
            self._cache[path] = (old, None if data is None else _definitions(data))
        return self._cache[path]
