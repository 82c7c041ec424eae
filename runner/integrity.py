"""``verify_test_integrity``: the candidate may not edit its own referee.

The protected set is what pytest collects under the *trusted* configuration, and what decides how
it runs: test files (``python_files`` under ``testpaths``), data and helper files under test
directories there, every ``conftest.py``, the pytest settings wherever pytest reads them, and the
local plugins the configuration loads. The candidate's edits to it are compared with the baseline
B and the trusted source, from git objects only (no checkout needed, so a patch T0 stops still
pays for none):

* what B had and the candidate deleted or changed -- a test, a fixture, a helper, a conftest, a
  data file -- is ``tamper``, named by file, line and ``detail``;
* what the candidate added is allowed as a reproducer, unless it is a conftest, a hook, a
  ``pytest_plugins`` line, a patch of pytest, a rewrite of ``sys.modules``, a new fixture that
  takes over existing tests (autouse, or a name they request), a definition that shadows a name
  the tests import (or, in a changed file, a skip mark at module level);
* pytest settings are judged key by key (``runner.config_policy``): tightening is recorded as
  ``config_changed`` and allowed, loosening is ``tamper`` (``pytest_config``), anything else is
  laid back and recorded as ``config_changed``.

Then the trusted versions are laid over the candidate -- test by test, not file by file: a
tampered test file becomes the trusted file plus the candidate's new tests, classes, fixtures and
the imports they need (``runner.merge.merge_tests``), so a reproducer written next to a tampered test still
runs; a shared configuration file gets back only its pytest section. Given ``--tests-from`` (a
revision or a test patch, as SWE-bench keeps its test patch away from the model) the trusted
version of every file that source changed is laid the same way. The report says which of the
candidate's new tests run as it wrote them (``kept``) and which the reapplication dropped
(``dropped``).
"""

from __future__ import annotations

import ast
import pathlib
import posixpath
import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from pytest_evidence import gitops, overlay, syntax
from pytest_evidence.model import Detection, DetectionKind
from runner import config_policy, datause, doctests, pyscan
from runner.merge import added_tests, merge_tests

#: Files that may hold pytest configuration, and the section that does (ini files).


Tamper = Callable[[str, "int | None", str], Detection]


@dataclass(frozen=True)
class IntegrityReport:
    """What the check found, and what to lay over the candidate.

    ``lay`` maps a path to the contents to write over C's worktree, or None to remove the file.
    ``kept`` and ``dropped`` are pytest node ids (``path::name``, ``path::Class::name``; no
    parameters) of the tests the candidate added -- not B's, not the trusted source's -- in
    protected files: ``kept`` run as the candidate wrote them, ``dropped`` were removed by the
    reapplication of the trusted tests (a hostile or skipped definition, or a file that could not
    be merged). Both go to the record's ``integrity``; a designated reproducer the candidate wrote
    that did not survive is ``reproducer_lost_to_tamper`` (``ladder.reproduce``).
    """

    detections: tuple[Detection, ...]
    lay: Mapping[str, bytes | None]
    protected: int
    trusted: frozenset[str] = frozenset()  # files the trusted source changed: not the candidate's code
    kept: frozenset[str] = frozenset()
    dropped: frozenset[str] = frozenset()


def disabled_plugins(root: pathlib.Path, args: Sequence[str]) -> set[str]:
    """Plugin names ``-p no:NAME`` switches off, in the configuration files at ``root`` or ``args``."""
    words = list(args)
    for name in config_policy.PRECEDENCE:
        path = root / name
        if path.is_file():
            words += config_policy.addopts(name, path.read_bytes())
    found = set()
    for i, word in enumerate(words):
        value = words[i + 1] if word == "-p" and i + 1 < len(words) else word[2:] if word.startswith("-p") else ""
        if value.startswith("no:"):
            found.add(value[3:])
    return found


def _plugin_paths(read: Callable[[str], bytes | None], paths: Sequence[str]) -> set[str]:
    """Local modules a configuration loads (``-p NAME`` in addopts, ``pytest_plugins``)."""
    names: set[str] = set()
    for path in paths:
        base = posixpath.basename(path)
        if config_policy.is_config(path):
            words = config_policy.addopts(path, read(path))
            for i, word in enumerate(words):
                if word == "-p" and i + 1 < len(words):
                    names.add(words[i + 1])
                elif word.startswith("-p") and len(word) > 2:
                    names.add(word[2:])
        elif base == "conftest.py":
            tree = pyscan.parse(read(path) or b"")
            for node in tree.body if tree else []:
                if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "pytest_plugins" for t in node.targets
                ):
                    try:
                        value = ast.literal_eval(node.value)
                    except ValueError:
                        continue
                    names.update([value] if isinstance(value, str) else [str(v) for v in value])
    found = set()
    for name in names:
        stem = name.replace(".", "/")
        for root in ("", "src/"):
            found.update({root + stem + ".py", root + stem + "/__init__.py"})
    return found


def _kind(
    path: str, collect: config_policy.Collection, plugins: set[str], test_dirs: Collection[str] | None
) -> str | None:
    """What a protected file is (``conftest``, ``config``, ``plugin``, ``test``, ``data``); None: not protected.

    Test modules are those the trusted ``python_files`` name under the trusted ``testpaths``;
    everything under a test directory (``tests/``, ``test/``, ``testing/``) that shares a tree
    with ``testpaths`` is test material too. Conftests and pytest settings are protected where
    pytest reads them: at the root, in any directory it walks collecting (under or above a
    testpath), and in any directory that holds test files (``test_dirs``; None while those are
    being found).
    """
    name = posixpath.basename(path)
    if name == "conftest.py" or config_policy.is_config(path):
        where = posixpath.dirname(path)
        if test_dirs is None or (where and where not in test_dirs and not collect.near_testpaths(where)):
            return None
        return "conftest" if name == "conftest.py" else "config"
    if path in plugins:
        return "plugin"
    if path.endswith(".py") and overlay.named_by(path, collect.python_files) and collect.under_testpaths(path):
        return "test"
    if overlay.named_by(path, collect.by_path):  # collected by name: no pattern or testpath applies
        return "test"
    directory = _test_dir(path)
    if directory is not None and collect.near_testpaths(directory):
        return "test" if path.endswith(".py") else "data"
    return None


def _ancestors(paths: Iterable[str]) -> set[str]:
    """Every directory that holds one of ``paths``, at any depth (the root excluded)."""
    found: set[str] = set()
    for path in paths:
        where = posixpath.dirname(path)
        while where and where not in found:
            found.add(where)
            where = posixpath.dirname(where)
    return found


def _test_dir(path: str) -> str | None:
    """The outermost test directory holding ``path`` (``pkg/tests`` for ``pkg/tests/data/x``)."""
    parts = path.split("/")
    for i, part in enumerate(parts[:-1]):
        if part in overlay.TEST_DIRS:
            return "/".join(parts[: i + 1])
    return None


class _Check:
    def __init__(
        self,
        read: Callable[[str, str], bytes | None],
        baseline: str,
        trusted: str,
        candidate: str,
        expected: Sequence[str],
        naming: pyscan.Naming = pyscan.DEFAULT_NAMING,
        own: frozenset[str] = frozenset(),
    ) -> None:
        self.read = read
        self.b, self.t, self.c = baseline, trusted, candidate
        self.expected = {overlay.split_test_id(e) for e in expected}
        self.naming = naming
        self.own = own  # the project's importable top-level names (``_own_modules``)
        self.test_modules: Mapping[str, datause.Data] = {}  # B's test modules by stem (``_TestModules``)
        self.classes: set[str] = set()  # the classes of the B test module being judged
        self.module_names: frozenset[str] = frozenset()  # and its module-level data

    def file(self, path: str, kind: str) -> Iterator[Detection]:
        """What the candidate did to one protected file (not a configuration: see ``_Config``)."""
        b, t, c = (self.read(rev, path) for rev in (self.b, self.t, self.c))

        def tamper(detail: str, line: int | None, message: str) -> Detection:
            return Detection(DetectionKind.TAMPER, "%s: %s" % (path, message), None, path, line, detail)

        if c == b or (c is None and t is None):  # left as B had it, or deleted as the trusted source does:
            return  # what the trusted source changed is laid back over it, untouched by the candidate
        if c is None:
            if b is None:  # only the trusted source has it: nothing of B's was deleted
                return
            yield tamper("deleted_test" if kind == "test" else "deleted_fixture", None, "deleted by the candidate")
            return
        if b is None:
            if kind == "conftest":
                yield tamper("new_conftest", 1, "a new conftest.py changes how every test below it runs")
            if kind in ("test", "conftest"):
                tree = pyscan.parse(c)
                aliases = pyscan.framework_names(tree) if tree else {}
                for hit in pyscan.hostile(tree.body if tree else [], top_level=True, aliases=aliases):
                    yield tamper(hit.detail, hit.line, hit.message)
                for hit in pyscan.patches_code_under_test(tree, tree.body, self.own) if tree else ():
                    yield tamper(hit.detail, hit.line, hit.message)
                if tree is not None:
                    yield from self._reaches_other_tests(tree, tamper)
            if kind == "test" and t is not None and c != t and path.endswith(".py"):
                yield from self._test_file(path, None, t, c, tamper)  # a trusted new file, bent
            return
        if kind == "test":
            yield from self._test_file(path, b, t, c, tamper)
        else:
            detail = {"conftest": "conftest", "plugin": "plugin"}.get(kind, "fixture_data")
            message = "changed by the candidate (tests that need it come with --tests-from REV: trusted, not checked)"
            if kind == "conftest" and _collect_ignore(b) != _collect_ignore(c):
                message = "changes collect_ignore, hiding test files from collection"
            yield tamper(detail, None, message)
            if kind == "conftest":
                yield from self._new_hooks(b, c, tamper)

    def _reaches_other_tests(self, tree: ast.Module, tamper: Tamper) -> Iterator[Detection]:
        """A new file doing more than read another test module's data (``import test_tables;
        test_tables.CASES[:] = ...``): it runs at collection, on C and on B alike -- no flip."""
        data = datause.imported_data(tree, self.test_modules)
        found = list(datause.misuses(tree.body, data | datause.Data(added=_bound(tree.body)))) if data else []
        found += datause.string_reach(tree, self.test_modules)
        for hit in found:
            message = "%s: %s, the data of an existing test module" % (hit.how, hit.name)
            yield tamper("modified_helper", hit.line, message)

    def _new_hooks(self, b: bytes, c: bytes, tamper: Tamper) -> Iterator[Detection]:
        old, new = pyscan.parse(b), pyscan.parse(c)
        before = {ast.dump(n) for n in old.body} if old else set()
        added = [n for n in new.body if ast.dump(n) not in before] if new else []
        for hit in pyscan.hostile(added, top_level=True, aliases=pyscan.framework_names(new) if new else {}):
            yield tamper(hit.detail, hit.line, hit.message)

    def _test_file(
        self,
        path: str,
        b: bytes | None,
        t: bytes | None,
        c: bytes,
        tamper: Tamper,
    ) -> Iterator[Detection]:
        """Every test, fixture and helper B had, and every one the trusted source added, as the
        candidate left it: deleted, skipped, weakened or changed is tamper. What it added may not
        take over the existing tests."""
        old = pyscan.parse(b) if b is not None else None
        new = pyscan.parse(c)
        if b is not None and old is None:
            return
        if new is None:
            yield tamper("modified_test", None, "no longer parses")
            return
        trusted = pyscan.parse(t) if t is not None else None
        b_defs = pyscan.definitions(old) if old else {}
        c_defs = pyscan.definitions(new)
        t_defs = pyscan.definitions(trusted) if trusted else {}
        for key, node in b_defs.items():
            if key not in c_defs:
                if t is None or key in t_defs:
                    label = ".".join(key)
                    yield tamper(self._deleted(key, node), getattr(node, "lineno", None), "%s deleted" % label)
                continue
            if key in t_defs and ast.dump(c_defs[key]) == ast.dump(t_defs[key]):
                continue
            yield from self._changed(path, key, node, c_defs[key], tamper, "the baseline")
        for key, node in t_defs.items():
            # What the trusted source added: the candidate may not skip it. Any other difference
            # may be the candidate's own test of the same name; the trusted version runs anyway.
            if key not in b_defs and key in c_defs:
                found = self._changed(path, key, node, c_defs[key], tamper, "the trusted tests")
                yield from (d for d in found if d.detail == "skip_marker")
        if old is None:
            # A trusted new file the candidate also wrote: the trusted file is laid over it, its
            # statements and all; the candidate's own are not B's data, whatever they say.
            return
        yield from self._module_data(path, old, trusted, new, tamper)
        added = _added(old, trusted, new)
        values = _values(pyscan.module_level(new), new)
        for node in added:
            if pyscan.skips(node):
                yield tamper("skip_marker", node.lineno, "a module-level skip, xfail or importorskip")
            elif _marking(node, values) and (path, ("pytestmark",)) not in self.expected:
                message = "a module-level pytestmark (line %d) %s (declare it with --expected-change %s::pytestmark)"
                yield tamper("modified_fixture", node.lineno, message % (node.lineno, _marking(node, values), path))
        new_defs = [n for key, n in c_defs.items() if len(key) == 1 and key not in b_defs]
        methods = [n for key, n in c_defs.items() if len(key) > 1 and key not in b_defs and key[:-1] in b_defs]
        aliases = pyscan.framework_names(new)
        for hit in pyscan.hostile([*added, *new_defs], top_level=True, aliases=aliases):  # type: ignore[list-item]
            yield tamper(hit.detail, hit.line, hit.message)
        for hit in pyscan.patches_code_under_test(new, added, self.own):
            yield tamper(hit.detail, hit.line, hit.message)
        for hit in pyscan.hostile(methods, top_level=False, aliases=aliases):  # type: ignore[arg-type]
            yield tamper(hit.detail, hit.line, hit.message)
        fresh = [
            (k, n)
            for k, n in c_defs.items()
            if k not in b_defs and k not in t_defs and (len(k) == 1 or k[:-1] in b_defs)
        ]
        yield from self._takeovers(old, trusted, fresh, tamper)
        yield from self._uses(path, old, trusted, new, fresh, tamper)

    def _uses(
        self,
        path: str,
        old: ast.Module,
        trusted: ast.Module | None,
        new: ast.Module,
        fresh: Sequence[tuple[tuple[str, ...], ast.AST]],
        tamper: Tamper,
    ) -> Iterator[Detection]:
        """What the candidate added to an existing test module -- every statement and definition
        B does not hold as it is (a definition another of the same name hides still ran its
        decorators), and in an existing class, every member and class-level statement --
        doing more than read its tests' data (``runner.datause``); and what runs around the
        existing tests uninvited: a new xunit setup or teardown, a member named like the
        class's data (a ``property`` read as ``self.cases``)."""
        data = datause.module_data(old) | (datause.module_data(trusted) if trusted else datause.Data())
        data |= datause.imported_data(new, self.test_modules)
        b_classes = {n.name: n for n in old.body if isinstance(n, ast.ClassDef)}
        known = Counter(ast.dump(n) for n in [*old.body, *(trusted.body if trusted else [])])
        top = _unaccounted(new.body, known)
        data |= datause.Data(added=_bound(top) | {k[-1] for k, _ in fresh})
        groups: list[tuple[Sequence[ast.AST], str | None]] = []
        for node in top:
            b_class = b_classes.get(node.name) if isinstance(node, ast.ClassDef) else None
            if not isinstance(node, ast.ClassDef) or b_class is None:
                groups.append(([node], None))
                continue
            groups.append(([*node.decorator_list, *node.bases, *(k.value for k in node.keywords)], None))
            members = _unaccounted(node.body, Counter(ast.dump(s) for s in b_class.body))
            if _reshaped(b_class, node):  # its class-level statements are reported (or declared) already
                members = [m for m in members if isinstance(m, _DEFS)]
            groups.append((members, node.name))
            held = (data.members or {}).get(node.name, frozenset())
            for member in members:
                if isinstance(member, _DEFS) and member.name in held and (path, (node.name,)) not in self.expected:
                    message = "%s.%s, a new definition, hides the class's data of that name (declare it with "
                    message += "--expected-change %s::%s)" % (path, node.name)
                    yield tamper("modified_helper", member.lineno, message % (node.name, member.name))
        self.classes = set(b_classes)
        self.module_names = data.names | data.loose
        mine = {ast.dump(n) for n in pyscan.module_level(new)}
        replaced = set(pyscan.bindings([n for n in pyscan.module_level(old) if ast.dump(n) not in mine]))
        owners = {id(n): owner for nodes, owner in groups if owner is not None for n in nodes}
        for found in datause.misuses([n for nodes, _ in groups for n in nodes], data, owners=owners):
            if found.name in replaced:
                continue  # its own statement changed: ``_module_data`` said so
            detection = self._misuse(path, found, found.owner, tamper)
            if detection is not None:
                yield detection
        for hit in (m for nodes, _ in groups for n in nodes for m in datause.string_reach(n, self.test_modules)):
            yield tamper("modified_helper", hit.line, "added code (line %d) %s: %s" % (hit.line, hit.how, hit.name))
        for key, definition in fresh:
            if key[-1] in XUNIT and (path, key) not in self.expected:
                where = "the existing tests of %s" % key[0] if len(key) > 1 else "every existing test of the module"
                message = "a new %s runs around %s (declare it with --expected-change %s::%s)"
                line = getattr(definition, "lineno", None)
                yield tamper("modified_fixture", line, message % (key[-1], where, path, "::".join(key)))

    def _misuse(self, path: str, found: datause.Misuse, owner: str | None, tamper: Tamper) -> Detection | None:
        """A finding of ``datause``, unless declared: a table by its name (``path::CASES``), a
        class's data by the class (``path::TestTable``). Another module's data, or names reached
        by a computed key, cannot be declared: nothing says what they reach."""
        head, _, attr = found.name.partition(".")
        if not attr and owner is not None and head not in self.module_names:
            key: tuple[str, ...] | None = (owner,)  # a class-level name, bare in the class's body
        elif not attr:
            key = (head,)
        elif head in ("self", "cls") and owner is not None:
            key = (owner,)
        elif head in self.classes:
            key = (head,)
        else:
            key = None
        dynamic = found.name in datause.NAMESPACE | datause.SETTERS | {"__dict__", "sys.modules"}
        if key is not None and not dynamic and (path, key) in self.expected:
            return None
        message = "added code (line %d) %s: %s, which the existing tests read" % (found.line, found.how, found.name)
        if key is not None and not dynamic:
            message += " (declare it with --expected-change %s::%s)" % (path, "::".join(key))
        return tamper("modified_helper", found.line, message)

    def _module_data(
        self, path: str, old: ast.Module | None, trusted: ast.Module | None, new: ast.Module, tamper: Tamper
    ) -> Iterator[Detection]:
        """Module-level statements of ``old`` (B's, or a trusted new file's) the candidate changed
        or removed: the tests' data (``CASES = [...]``, read by an unchanged test) edited is a
        test edited -- trimmed of the case a broken function fails, the test passes on C (a
        probe: CERTIFIED, with no detection). Allowed: what the trusted source changed so, an
        import still importing all it did (a new test needs more), a docstring, and a name
        declared with ``--expected-change path::NAME``."""
        if old is None:
            return
        mine = {ast.dump(n) for n in pyscan.module_level(new)}
        theirs = {ast.dump(n) for n in pyscan.module_level(trusted)} if trusted is not None else set()
        imported = {a for n in pyscan.module_level(new) for a in _aliases(n)}
        for node in pyscan.module_level(old):
            if ast.dump(node) in mine or _docstring(node) or (_aliases(node) and _aliases(node) <= imported):
                continue
            names = sorted(pyscan.bindings([node]))
            if trusted is not None and ast.dump(node) not in theirs:
                bound = [n for n in pyscan.module_level(new) if not set(names).isdisjoint(pyscan.bindings([n]))]
                if all(ast.dump(n) in theirs for n in bound):
                    continue  # the trusted source changed it, and the candidate left it so
            if names and all((path, (n,)) in self.expected for n in names):
                continue
            what, name = ("binding %s" % ", ".join(names), names[0]) if names else ("code", "NAME")
            message = "module-level %s (line %d) differs from the baseline (declare it with --expected-change %s::%s)"
            yield tamper("modified_helper", node.lineno, message % (what, node.lineno, path, name))
        moved = _in_order(pyscan.module_level(old), pyscan.module_level(new))
        if moved is not None and (trusted is None or ast.dump(trusted) == ast.dump(old)):  # not the trusted order
            names = sorted(pyscan.bindings([moved])) or sorted(_changed_in_place(moved)) or ["NAME"]
            if (path, (names[0],)) not in self.expected:
                line = next(n.lineno for n in pyscan.module_level(new) if ast.dump(n) == ast.dump(moved))
                message = "module-level code of line %d runs out of the baseline's order (declare it with "
                message += "--expected-change %s::%s)" % (path, names[0])
                yield tamper("modified_helper", line, message % line)
        yield from self._data_rebound(path, old, trusted, new, tamper)

    def _data_rebound(
        self, path: str, old: ast.Module, trusted: ast.Module | None, new: ast.Module, tamper: Tamper
    ) -> Iterator[Detection]:
        """Module-level statements the candidate added that rebind what ``old`` binds at its own
        level -- a name its tests read (``CASES = [...]`` again, ``CASES += ...``, ``double =
        abs``): the table an unchanged test reads, replaced without touching its statement. An
        import binding a name to what ``old`` bound it to is no rebinding (``import os.path``
        beside ``import os``), nor is what the trusted source added so. What added code does
        with the data it does not rebind is ``_uses``'s."""
        level = pyscan.module_level(old)
        held = pyscan.bindings(level)
        for name in (k[0] for k in pyscan.definitions(old) if len(k) == 1):
            held.setdefault(name, set()).add("def")
        mine = {ast.dump(n) for n in pyscan.module_level(new)}
        replaced = set(pyscan.bindings([n for n in level if ast.dump(n) not in mine]))  # ``_module_data``'s
        for node in _added(old, trusted, new):
            rebound = pyscan.bindings([node])
            hit = sorted(
                n
                for n, how in rebound.items()
                if n in held
                and not (isinstance(node, (ast.Import, ast.ImportFrom)) and how <= held[n])
                and (path, (n,)) not in self.expected
                and n not in replaced
            )
            if hit:
                message = "module-level code (line %d) rebinds %s, which the existing tests read " % (
                    node.lineno,
                    ", ".join(hit),
                )
                yield tamper(
                    "modified_helper",
                    node.lineno,
                    message + "(declare it with --expected-change %s::%s)" % (path, hit[0]),
                )

    def _takeovers(
        self,
        old: ast.Module,
        trusted: ast.Module | None,
        fresh: Sequence[tuple[tuple[str, ...], ast.AST]],
        tamper: Tamper,
    ) -> Iterator[Detection]:
        """New definitions that change what the existing tests run: a fixture they get, a name they use."""
        bound = pyscan.bindings(old.body)
        requested = pyscan.requested_fixtures(old, self.naming)
        if trusted is not None:
            for name, how in pyscan.bindings(trusted.body).items():
                bound.setdefault(name, set()).update(how)
            requested |= pyscan.requested_fixtures(trusted, self.naming)
        for key, node in fresh:
            line = getattr(node, "lineno", None)
            if len(key) == 1 and key[0] in bound:
                message = "%s redefines a name the existing tests import or assign" % key[0]
                yield tamper("modified_helper", line, message)
            fixture = pyscan.fixture_name(node)
            if fixture is not None and pyscan.is_autouse(node):
                message = "the new autouse fixture %s runs around the existing tests" % fixture
                yield tamper("modified_fixture", line, message)
            elif fixture is not None and fixture in requested:
                message = "the new fixture %s replaces the one the existing tests request" % fixture
                yield tamper("modified_fixture", line, message)

    def _changed(
        self, path: str, key: tuple[str, ...], node: ast.AST, mine: ast.AST, tamper: Tamper, against: str
    ) -> Iterator[Detection]:
        """``mine`` against the version it must equal (``node``, from B or from the trusted tests)."""
        if ast.dump(mine) == ast.dump(node):
            return
        label = ".".join(key)
        line = getattr(mine, "lineno", None)
        if isinstance(node, ast.ClassDef):
            if pyscan.skips(pyscan.class_shell(mine)) > pyscan.skips(pyscan.class_shell(node)):
                yield tamper("skip_marker", line, "%s gains a skip or xfail mark" % label)
            elif _reshaped(node, mine) and (path, key) not in self.expected:
                # its attributes are its tests' data (``cases = [...]`` read by ``self.cases``)
                detail = "modified_test" if self.naming.is_test_class(node) else "modified_helper"
                message = "%s's bases, decorators or class-level statements differ from %s (declare it with " % (
                    label,
                    against,
                )
                yield tamper(detail, line, message + "--expected-change %s::%s)" % (path, "::".join(key)))
        elif pyscan.skips(mine) > pyscan.skips(node):
            yield tamper("skip_marker", line, "%s gains a skip, skipif, xfail or importorskip" % label)
        elif self.naming.is_test(key, node):
            if (path, key) in self.expected:
                return
            if pyscan.assertions(mine) < pyscan.assertions(node):
                yield tamper("weakened_assertion", line, "%s checks less than in %s" % (label, against))
            else:
                yield tamper(
                    "modified_test",
                    line,
                    "%s differs from %s (declare it with --expected-change; a strengthened test that shows the bug: "
                    "with --reproducer too)" % (label, against),
                )
        else:
            detail = "modified_fixture" if pyscan.is_fixture(node) else "modified_helper"
            yield tamper(detail, line, "%s differs from %s" % (label, against))

    def _deleted(self, key: tuple[str, ...], node: ast.AST) -> str:
        if self.naming.is_test(key, node) or isinstance(node, ast.ClassDef):
            return "deleted_test"
        return "deleted_fixture"


def _collect_ignore(data: bytes | None) -> list[str]:
    tree = pyscan.parse(data or b"")
    return [
        ast.dump(node)
        for node in (tree.body if tree else [])
        if any(
            isinstance(sub, ast.Name) and sub.id in ("collect_ignore", "collect_ignore_glob")
            for sub in syntax.walk(node)
        )
    ]


# -- test-level reapplication ----------------------------------------------------------------------

#: Module-level names a carried statement may never bind: they act on every test of the module.


def _settings_findings(
    read: Callable[[str, str], bytes | None],
    baseline: str,
    trusted: str,
    candidate: str,
    paths: Sequence[str],
) -> tuple[list[Detection], dict[str, bytes | None]]:
    """Each configuration's pytest settings, key by key: what the candidate tightened is allowed,
    what it loosened is tamper, anything else is laid back. Only the pytest section is laid back."""
    detections: list[Detection] = []
    lay: dict[str, bytes | None] = {}

    def settings(rev: str, path: str | None) -> config_policy.Settings | None:
        return None if path is None else config_policy.read(path, read(rev, path))

    def effective(rev: str) -> tuple[str | None, config_policy.Settings]:
        return config_policy.effective(lambda p: read(rev, p))

    def lay_back(files: Sequence[str]) -> bool:
        spliced = True
        for path in files:
            mine = read(candidate, path)
            content, alone = config_policy.lay_back(path, mine, read(trusted, path))
            spliced = spliced and alone
            if content != mine:
                lay[path] = content
        return spliced

    def judge(
        where: str,
        old: config_policy.Settings | None,
        new: config_policy.Settings | None,
        base: config_policy.Settings | None,
        files: Sequence[str],
    ) -> None:
        found = config_policy.classify(old, new)
        if not found.changes:
            return
        if not config_policy.classify(base, new).changes:  # the candidate left it as B had it
            lay_back(files)
            return
        spliced = lay_back(files) if found.lay_back else True
        whole = "" if spliced else " (its pytest settings could not be laid back alone: the whole trusted file was)"
        Change = config_policy.Change
        if found.loosened:
            detections.append(
                Detection(
                    DetectionKind.TAMPER,
                    "%s: pytest settings loosened: %s%s" % (where, "; ".join(found.reasons(Change.LOOSENED)), whole),
                    None,
                    where,
                    None,
                    "pytest_config",
                )
            )
        fate = {
            Change.UNKNOWN: "changed: laid back to the trusted settings",
            Change.TIGHTENED: "tightened: allowed" if not found.lay_back else "tightened, but laid back with the rest",
        }
        for change in found.changes:  # one per key: ``detail`` names it
            if change.change is Change.LOOSENED:
                continue
            message = "%s: pytest setting %s %s (%s)%s" % (where, change.key, fate[change.change], change.reason, whole)
            detail = re.sub(r"[^a-z_]+", "_", change.key.lower()).strip("_") or "unparseable"
            detections.append(Detection(DetectionKind.CONFIG_CHANGED, message, None, where, None, detail))

    (_, b_set), (t_path, t_set), (c_path, c_set) = effective(baseline), effective(trusted), effective(candidate)
    handled: set[str] = set()
    moved_cleanly = False
    if t_path != c_path:  # the candidate moved the settings to another file (or the trusted source did)
        handled = {p for p in (t_path, c_path) if p is not None}
        moved_cleanly = not config_policy.classify(t_set, c_set).changes
        where = c_path or t_path
        assert where is not None
        judge(where, t_set, c_set, b_set, sorted(handled))
    for path in paths:  # each file against its own trusted version too: which file pytest reads varies
        old, new = settings(trusted, path), settings(candidate, path)
        if old is None and new is not None and posixpath.dirname(path):
            # pytest takes its rootdir and settings from the nearest configuration above the tests
            message = "%s: a new pytest configuration below the root: pytest would read it instead" % path
            detections.append(Detection(DetectionKind.TAMPER, message, None, path, None, "pytest_config"))
            lay[path] = read(trusted, path)
        elif old != new and not (path in handled and (not moved_cleanly or path == c_path or not (new and new.values))):
            # A clean move leaves the old file without settings; any it keeps are judged as changed
            # (a copy in a file only newer pytest reads, and the loosened original for older ones).
            judge(path, old, new, settings(baseline, path), [path])
    return detections, lay


def _own_modules(paths: Iterable[str]) -> frozenset[str]:
    """The project's importable top-level names, from its Python files that are not tests: the
    first component of each path, or the second under ``src/`` (a package under another
    directory of ``--pythonpath`` is not seen: its changes go unflagged, never falsely flagged)."""
    found = set()
    for path in paths:
        parts = path.split("/")
        if not path.endswith(".py") or any(part in overlay.TEST_DIRS for part in parts[:-1]):
            continue
        name = parts[1] if parts[0] == "src" and len(parts) > 2 else parts[0]
        found.add(name[: -len(".py")] if name.endswith(".py") else name)
    return frozenset(found)


def verify_test_integrity(
    repo: str,
    baseline: str,
    trusted: str,
    candidate: str,
    python_files: Sequence[str],
    expected: Sequence[str] = (),
    pytest_args: Sequence[str] = (),
) -> IntegrityReport:
    """Compare the candidate's protected files with B's (and the trusted source's); plan the lay.

    ``python_files`` applies where the trusted configuration does not set its own. Where the
    suite runs the docstrings' examples (``--doctest-modules`` in the trusted ``addopts`` or in
    ``pytest_args``), an existing doctest the candidate edited in a source file is a changed test
    too (``_edited_doctests``).
    """
    trees = {rev: gitops.blobs(repo, rev) for rev in {baseline, trusted, candidate}}

    contents: dict[str, bytes] = {}

    def read(rev: str, path: str) -> bytes | None:
        blob = trees[rev].get(path)
        if blob is None:
            return None
        if blob not in contents:  # B and the trusted source often share a blob: read it once
            contents[blob] = gitops.git(["cat-file", "blob", blob], cwd=repo).stdout
        return contents[blob]

    _, trusted_settings = config_policy.effective(lambda p: read(trusted, p))
    collect = config_policy.collection(trusted_settings, python_files)
    naming = pyscan.Naming(collect.python_functions, collect.python_classes)
    plugins = _plugin_paths(lambda p: read(baseline, p), sorted(trees[baseline]))
    plugins |= _plugin_paths(lambda p: read(trusted, p), sorted(trees[trusted]))
    paths = sorted(set().union(*trees.values()))
    own = _own_modules(p for p in trees[candidate] if _kind(p, collect, plugins, None) is None)
    check = _Check(read, baseline, trusted, candidate, expected, naming, own)
    b_tests = [p for p in trees[baseline] if p.endswith(".py") and _kind(p, collect, plugins, None) == "test"]
    check.test_modules = _TestModules(lambda p: read(baseline, p), b_tests)
    detections: list[Detection] = []
    lay: dict[str, bytes | None] = {}
    kept: set[str] = set()
    dropped: set[str] = set()
    configs: list[str] = []
    protected = 0
    test_dirs = _ancestors(p for p in paths if _kind(p, collect, plugins, None) == "test")
    for path in paths:
        kind = _kind(path, collect, plugins, test_dirs)
        if kind is None:
            continue
        protected += 1
        if kind == "config":
            configs.append(path)
            continue
        b_sha, t_sha, c_sha = (trees[rev].get(path) for rev in (baseline, trusted, candidate))
        if c_sha == t_sha:
            continue
        found = _once(check.file(path, kind))
        detections.extend(found)
        c = read(candidate, path)
        if kind == "test" and path.endswith(".py") and c is not None:
            if t_sha == b_sha and not found:
                kept |= added_tests(path, read(baseline, path), c, naming)
                continue
            merged = merge_tests(path, read(trusted, path), c, read(baseline, path), naming)
            kept |= merged.kept
            dropped |= merged.dropped
            if merged.content != c:
                lay[path] = merged.content
            continue
        final = t_sha if t_sha != b_sha else (b_sha if found else c_sha)
        if final != c_sha:
            lay[path] = read(trusted if final == t_sha else baseline, path)
    if config_policy.doctest_modules(trusted_settings, pytest_args):
        sources = [
            p
            for p in paths
            if p.endswith(".py") and collect.under_testpaths(p) and _kind(p, collect, plugins, test_dirs) is None
        ]
        detections.extend(_edited_doctests(read, (baseline, trusted, candidate), sources, trees[candidate], expected))
    found_settings, laid_settings = _settings_findings(read, baseline, trusted, candidate, configs)
    detections.extend(found_settings)
    lay.update(laid_settings)
    changed_by_trusted = frozenset(
        p for p in paths if trusted != baseline and trees[trusted].get(p) != trees[baseline].get(p)
    )
    return IntegrityReport(tuple(detections), lay, protected, changed_by_trusted, frozenset(kept), frozenset(dropped))


def _edited_doctests(
    read: Callable[[str, str], bytes | None],
    revisions: tuple[str, str, str],
    sources: Sequence[str],
    files: Collection[str],
    expected: Sequence[str],
) -> Iterator[Detection]:
    """An existing doctest of a source file whose examples the candidate changed: the trusted
    source's own change of it, or one declared with ``--expected-change`` (pytest's id of the
    doctest), is not the candidate's doing."""
    declared = {overlay.split_test_id(e) for e in expected}
    for path in sources:
        b, t, c = (read(rev, path) for rev in revisions)
        if b is None or c is None or b == c:
            continue
        trusted_as_c: set[str] = set()  # changed by the trusted source, and left so by the candidate
        if t is not None and t != b:
            unlike_c = {e.qualname for e in doctests.edited(path, t, c, files)}
            trusted_as_c = {e.qualname for e in doctests.edited(path, b, t, files)} - unlike_c
        for found in doctests.edited(path, b, c, files):
            if overlay.split_test_id(found.test_id) in declared or found.qualname in trusted_as_c:
                continue
            message = "the doctest of %s differs from the baseline (declare it with --expected-change %s)" % (
                found.qualname or "the module",
                found.test_id,
            )
            yield Detection(DetectionKind.TAMPER, "%s: %s" % (path, message), None, path, found.line, "modified_test")


def _aliases(node: ast.stmt) -> set[tuple[str, int, str, str | None]]:
    """What an import statement binds, each as (module, level, name, as-name)."""
    if isinstance(node, ast.Import):
        return {("", 0, a.name, a.asname) for a in node.names}
    if isinstance(node, ast.ImportFrom):
        return {(node.module or "", node.level, a.name, a.asname) for a in node.names}
    return set()


#: What pytest runs around a module's or a class's tests without their asking (xunit style).
XUNIT = frozenset(
    {
        "setup_module", "teardown_module", "setup_function", "teardown_function", "setUpModule",
        "tearDownModule", "setup_class", "teardown_class", "setup_method", "teardown_method",
        "setUp", "tearDown", "setUpClass", "tearDownClass", "asyncSetUp", "asyncTearDown",
        "setup", "teardown",
    }
)  # fmt: skip


def _added(old: ast.Module, trusted: ast.Module | None, new: ast.Module) -> list[ast.stmt]:
    """``new``'s module-level statements that ``old`` (or the trusted file) does not account
    for, counted: a statement of B's run once more (``CASES = []`` again after B filled it) is
    added code too."""
    left = Counter(ast.dump(n) for n in pyscan.module_level(old))
    if trusted is not None:
        left |= Counter(ast.dump(n) for n in pyscan.module_level(trusted))
    return _unaccounted(pyscan.module_level(new), left)


def _marking(node: ast.stmt, values: Mapping[str, ast.expr] | None = None) -> str | None:
    """What ``node`` does to every test of its module or class through ``pytestmark``, when more
    than plain marks (``pytest.mark.filterwarnings(...)``, a list of such; skips are judged
    apart): a ``usefixtures`` mark -- written there, or by a name ``values`` binds to one
    (``pytestmark = USE``) -- runs fixtures around them as an autouse fixture would; a value the
    check cannot read (``getattr(pytest.mark, "usefixtures")("fx")``, ``_marks()``), or marks
    changed other than by binding them (``pytestmark.append(...)``), may too."""
    values = values or {}
    if isinstance(node, _DEFS) or not any(isinstance(n, ast.Name) and n.id == "pytestmark" for n in syntax.walk(node)):
        return None
    inner = [s for field in ("body", "orelse", "finalbody") for s in getattr(node, field, [])]
    inner += [s for h in getattr(node, "handlers", []) for s in h.body]
    if inner:  # ``if sys.version_info >= ...:`` around it: the statements it runs, its head apart
        head = [c for c in ast.iter_child_nodes(node) if c not in inner and not isinstance(c, ast.ExceptHandler)]
        if any(isinstance(n, ast.Name) and n.id == "pytestmark" for h in head for n in syntax.walk(h)):
            return "marks every existing test with what the check cannot read"
        return next((found for found in (_marking(s, values) for s in inner) if found), None)
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
    bound = len(targets) == 1 and isinstance(targets[0], ast.Name) and targets[0].id == "pytestmark"
    value = getattr(node, "value", None)
    if _uses_fixtures(value if bound and value is not None else node, values, set()):
        return "runs fixtures around every existing test, as an autouse fixture would"
    if not bound or not isinstance(value, ast.expr) or not _plain_marks(value, values, set()):
        return "marks every existing test with what the check cannot read"
    return None


def _uses_fixtures(value: ast.AST, values: Mapping[str, ast.expr], seen: set[str]) -> bool:
    """Whether ``value`` names a ``usefixtures`` mark, itself or through a name ``values`` binds."""
    for node in syntax.walk(value):
        if isinstance(node, ast.Attribute) and node.attr == "usefixtures":
            return True
        if isinstance(node, ast.Name) and node.id in values and node.id not in seen:
            if _uses_fixtures(values[node.id], values, seen | {node.id}):
                return True
    return False


def _plain_marks(value: ast.expr, values: Mapping[str, ast.expr], seen: set[str]) -> bool:
    """``pytest.mark.NAME``, called or not, a list, tuple or sum of them, ``pytestmark`` itself,
    or a name ``values`` binds to such (``MARKS = [pytest.mark.slow]``)."""
    if isinstance(value, (ast.List, ast.Tuple)):
        return all(_plain_marks(v, values, seen) for v in value.elts)
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        return _plain_marks(value.left, values, seen) and _plain_marks(value.right, values, seen)
    if isinstance(value, ast.Name):
        if value.id in values and value.id not in seen:
            return _plain_marks(values[value.id], values, seen | {value.id})
        return value.id == "pytestmark"
    mark = value.func if isinstance(value, ast.Call) else value
    return isinstance(mark, ast.Attribute) and pyscan.dotted(mark.value, calls=False).endswith("mark")


def _values(nodes: Sequence[ast.stmt], tree: ast.Module) -> dict[str, ast.expr]:
    """What ``nodes`` (``tree``'s module-level statements) bind a name to plainly (``USE =
    pytest.mark.usefixtures("x")``), for each name ``tree`` uses nowhere else but as
    ``pytestmark``'s value: one changed or bound again
    (``MARKS.append(...)``, ``MARKS += [...]``, ``global MARKS``, an import) is no value the
    check can read."""
    found: dict[str, ast.expr] = {}
    targets: set[int] = set()
    twice: set[str] = set()  # bound again: which value ``pytestmark`` took depends on where
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if node.targets[0].id in found:
                twice.add(node.targets[0].id)
            found[node.targets[0].id] = node.value
            targets.add(id(node.targets[0]))
    for name in twice:
        found.pop(name)
    plain = _in_marks(tree)
    for sub in syntax.walk(tree):
        if _reaches_names(sub):
            return {}  # ``sys.modules[__name__].MARKS.append(...)``, a star import: any name
        named = list(sub.names) if isinstance(sub, (ast.Global, ast.Nonlocal)) else []
        named += [(a.asname or a.name) for a in sub.names] if isinstance(sub, (ast.Import, ast.ImportFrom)) else []
        named += [sub.name] if isinstance(sub, (ast.MatchAs, ast.MatchStar, ast.ExceptHandler)) and sub.name else []
        if isinstance(sub, ast.Name) and id(sub) not in targets and id(sub) not in plain:
            value = found.get(sub.id)  # a single mark is immutable; a list of them is not
            mark = isinstance(value, (ast.Attribute, ast.Call)) and _plain_marks(value, {}, set())
            if not (mark and isinstance(sub.ctx, ast.Load)):  # one mark read (``@SLOW``) changes nothing
                named.append(sub.id)
        for name in named:
            found.pop(name, None)
    return found


def _reaches_names(node: ast.AST) -> bool:
    """Whether ``node`` may reach the module's names without naming them: a star import,
    ``globals()``/``vars()``, ``__dict__``, ``sys.modules``."""
    if isinstance(node, ast.ImportFrom):
        return any(a.name == "*" for a in node.names)
    if isinstance(node, ast.Call):
        return pyscan.dotted(node.func, calls=False) in ("globals", "vars", "locals")
    if isinstance(node, ast.Attribute):
        return node.attr == "__dict__" or pyscan.dotted(node, calls=False) == "sys.modules"
    return False


def _in_marks(tree: ast.Module) -> set[int]:
    """The names in the values ``pytestmark`` is bound to (``pytestmark = MARKS``, ``[*MARKS,
    ...]``, ``MARKS + [...]``), as such: read there, they change nothing."""
    found: set[int] = set()
    for node in syntax.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else []
        if any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in targets):
            todo: list[ast.AST] = [node.value]  # type: ignore[attr-defined]
            while todo:
                part = todo.pop()
                if isinstance(part, ast.Name):
                    found.add(id(part))
                elif isinstance(part, (ast.List, ast.Tuple, ast.BinOp, ast.Starred)):
                    todo.extend(ast.iter_child_nodes(part))
    return found


def _bound(nodes: Sequence[ast.stmt]) -> frozenset[str]:
    """The names ``nodes`` bind at their own level: definitions and what statements bind."""
    defs = {n.name for n in nodes if isinstance(n, _DEFS)}
    return frozenset(defs | set(pyscan.bindings([n for n in nodes if not isinstance(n, _DEFS)])))


def _once(detections: Iterable[Detection]) -> list[Detection]:
    """One finding per line and kind: several checks may see the same statement (``CASES =
    []`` rebinds the table and is added code reaching it); the first says it."""
    seen: set[tuple[int | None, str | None]] = set()
    found = []
    for detection in detections:
        key = (detection.line, detection.detail)
        if key not in seen:
            seen.add(key)
            found.append(detection)
    return found


def _unaccounted(nodes: Sequence[ast.stmt], left: Counter[str]) -> list[ast.stmt]:
    """``nodes`` less one of each statement ``left`` counts (its dump)."""
    found = []
    for node in nodes:
        key = ast.dump(node)
        if left[key] > 0:
            left[key] -= 1
        else:
            found.append(node)
    return found


def _in_order(old: Sequence[ast.stmt], new: Sequence[ast.stmt]) -> ast.stmt | None:
    """The first statement of ``old`` (kept in ``new``, no import, no docstring) that ``new``
    runs out of ``old``'s order, or None: ``CASES.clear()`` moved after the line that fills the
    table trims it with every statement kept."""
    kept = {ast.dump(n) for n in new}
    wanted = [
        n for n in old if ast.dump(n) in kept and not isinstance(n, (ast.Import, ast.ImportFrom)) and not _docstring(n)
    ]
    order = iter(ast.dump(n) for n in new)
    for node in wanted:
        key = ast.dump(node)
        if not any(d == key for d in order):
            return node
    return None


class _TestModules(Mapping[str, datause.Data]):
    """B's test modules' data by the stem of their file (``test_tables``), each parsed when a
    file importing it is judged: most candidates import none."""

    def __init__(self, read: Callable[[str], bytes | None], paths: Iterable[str]) -> None:
        self._read = read
        self._paths: dict[str, list[str]] = {}
        for path in paths:
            self._paths.setdefault(posixpath.basename(path)[: -len(".py")], []).append(path)
        self._data: dict[str, datause.Data] = {}

    def __getitem__(self, stem: str) -> datause.Data:
        if stem not in self._data:
            found = datause.Data()
            for path in self._paths[stem]:
                tree = pyscan.parse(self._read(path) or b"")
                found |= datause.module_data(tree) if tree is not None else datause.Data()
            self._data[stem] = found
        return self._data[stem]

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)


def _changed_in_place(node: ast.stmt) -> set[str]:
    """The names whose item or attribute ``node`` sets or deletes, or which it changes through a
    method that changes a container in place (``CASES.pop()``) or ``setattr``/``delattr``."""
    found: set[str] = set()
    for sub in syntax.walk(node):
        targets: list[ast.expr] = []
        if isinstance(sub, (ast.Assign, ast.Delete)):
            targets = list(sub.targets)
        elif isinstance(sub, (ast.AugAssign, ast.AnnAssign)):
            targets = [sub.target]
        elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id in ("setattr", "delattr"):
            targets = [ast.Attribute(sub.args[0], "", ast.Store())] if sub.args else []
        elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in pyscan.IN_PLACE:
            targets = [ast.Attribute(sub.func.value, "", ast.Store())]
        for target in targets:
            while isinstance(target, (ast.Attribute, ast.Subscript, ast.Starred)):
                target = target.value
            if isinstance(target, ast.Name) and not isinstance(node, (ast.Import, ast.ImportFrom)):
                found.add(target.id)
    return found


def _docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _reshaped(old: ast.AST, new: ast.AST) -> bool:
    """Whether the class ``new`` changes what ``old``'s tests read at the class's own level: its
    bases, keywords or decorators, a class-level statement changed or gone, or one added that
    rebinds or changes in place what ``old`` bound there, or binds ``pytestmark`` to more than
    plain marks (``_marking``: ``usefixtures`` runs a fixture around every test of the class).
    A statement binding a new name -- a new test method's own data -- is none of these."""
    assert isinstance(old, ast.ClassDef) and isinstance(new, ast.ClassDef)

    def head(c: ast.ClassDef) -> list[str]:
        return [ast.dump(n) for n in (*c.bases, *c.keywords, *c.decorator_list)]

    def level(c: ast.ClassDef) -> list[ast.stmt]:
        return [s for s in c.body if not isinstance(s, _DEFS) and not _docstring(s)]

    before, after = level(old), level(new)
    kept = {ast.dump(s) for s in before}
    if head(old) != head(new) or not kept <= {ast.dump(s) for s in after}:
        return True
    bound = set(pyscan.bindings(before))
    added = [s for s in after if ast.dump(s) not in kept]
    return any(bound & (set(pyscan.bindings([s])) | _changed_in_place(s)) or _marking(s) for s in added)


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
