"""Reapplying trusted tests one test at a time: the trusted test module, plus what the candidate
added to it that passes the integrity rules.

Laying a whole trusted file back over a tampered one also removed the reproducer the candidate
had added to that file, and a designated reproducer then vanished. ``merge_tests`` keeps the
trusted file as it is and appends the candidate's new tests, classes, fixtures and helpers (and
the imports they need); anything hostile, skipped, or that would take over the trusted tests
stays out. Where no merge is sound, the trusted file is laid alone and the candidate's new tests
in it are ``dropped``.
"""

from __future__ import annotations

import ast
import builtins
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pytest_evidence import syntax
from runner import pyscan

_MODULE_WIDE = frozenset({"pytestmark", "pytest_plugins", "collect_ignore", "collect_ignore_glob"})


@dataclass(frozen=True)
class Merged:
    """The trusted file with the candidate's acceptable new tests (None: remove the file)."""

    content: bytes | None
    kept: frozenset[str] = frozenset()
    dropped: frozenset[str] = frozenset()


def _lines_of(text: str) -> list[str]:
    return io.StringIO(text, newline="").readlines()


def _start(node: ast.AST) -> int:
    lines: list[int] = [d.lineno for d in getattr(node, "decorator_list", [])]
    return min([*lines, int(getattr(node, "lineno", 1))])


def _segment(lines: Sequence[str], node: ast.AST) -> list[str]:
    """The source lines of ``node``, decorators included, each ending with a newline."""
    found = list(lines[_start(node) - 1 : getattr(node, "end_lineno", None) or _start(node)])
    if found and not found[-1].endswith(("\n", "\r")):
        found[-1] += "\n"
    return found


def _alone(node: ast.stmt, siblings: Sequence[ast.stmt]) -> bool:
    """Whether ``node``'s lines hold no other statement of its body (``x = 1; os._exit(0)``)."""
    first, last = _start(node), node.end_lineno or node.lineno
    return not any(o is not node and _start(o) <= last and (o.end_lineno or o.lineno) >= first for o in siblings)


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _rough_tests(path: str, text: str, naming: pyscan.Naming, known: set[tuple[str, ...]]) -> frozenset[str]:
    """Test ids a file that does not parse seems to add (read line by line)."""
    rough = pyscan.rough_definitions(text)
    found = set()
    for key, what in rough.items():
        if key in known or what != "def" or not naming.test_name(key[-1], len(key) > 1):
            continue
        if len(key) == 1 or rough.get(key[:1]) == "testcase" or naming.test_class_name(key[0]):
            found.add("::".join((path, *key)))
    return frozenset(found)


def merge_tests(
    path: str,
    trusted: bytes | None,
    candidate: bytes,
    baseline: bytes | None,
    naming: pyscan.Naming = pyscan.DEFAULT_NAMING,
) -> Merged:
    """The trusted version of a test file plus what the candidate added that the rules allow.

    New top-level functions, classes and fixtures, and new methods in a class the trusted file
    has, are carried over as the candidate wrote them (decorators included), with the import
    statements and plain assignments they need; a definition that is hostile (a hook, a rewrite of
    ``sys.modules``, a patch of pytest, ending the session), carries a skip or xfail, or is a
    fixture that would take over the trusted tests, is not. Everything the trusted file has stays
    as the trusted file has it. Where the merge is impossible -- a version does not parse, a new
    definition clashes with a name the trusted file binds, the result does not check out -- the
    trusted file is laid alone and every test the candidate added there is dropped.
    """
    c_tree = pyscan.parse(candidate)
    b_tree = pyscan.parse(baseline) if baseline is not None else None
    if trusted is not None:
        t_tree = pyscan.parse(trusted)
    else:  # a new file has nothing trusted to start from; one the trusted source deleted stays deleted
        t_tree = ast.Module(body=[], type_ignores=[]) if baseline is None else None
    b_defs = pyscan.definitions(b_tree) if b_tree else {}
    t_defs = pyscan.definitions(t_tree) if t_tree else {}
    if c_tree is None:
        text = candidate.decode("utf-8", "replace")
        return Merged(trusted, dropped=_rough_tests(path, text, naming, {*b_defs, *t_defs}))
    c_defs = pyscan.definitions(c_tree)
    new = {k for k in c_defs if k not in b_defs and k not in t_defs}
    tops = sorted(k for k in new if k[:-1] not in new)
    mine = frozenset(i for k in tops for i in naming.test_ids(path, c_defs, k))
    fallback = Merged(trusted, dropped=mine)
    if t_tree is None:
        return fallback
    built = _build(path, trusted or b"", t_tree, t_defs, candidate, c_tree, c_defs, new, naming)
    if built is None:
        return fallback
    text, carried = built
    kept = frozenset(i for k in carried for i in naming.test_ids(path, c_defs, k))
    content = text.encode("utf-8", "surrogateescape") if (text or trusted is not None) else None
    return Merged(content, kept, mine - kept)


def _build(
    path: str,
    trusted: bytes,
    t_tree: ast.Module,
    t_defs: Mapping[tuple[str, ...], ast.AST],
    candidate: bytes,
    c_tree: ast.Module,
    c_defs: Mapping[tuple[str, ...], ast.AST],
    new: set[tuple[str, ...]],
    naming: pyscan.Naming,
) -> tuple[str, list[tuple[str, ...]]] | None:
    """The merged text and the keys of the carried definitions; None where the merge is impossible."""
    c_lines = _lines_of(candidate.decode("utf-8", "surrogateescape"))
    t_lines = _lines_of(trusted.decode("utf-8", "surrogateescape"))
    bound = pyscan.bindings(t_tree.body)
    requested = pyscan.requested_fixtures(t_tree, naming)
    aliases = pyscan.framework_names(c_tree)

    def rejected(node: ast.stmt, siblings: Sequence[ast.stmt], top_level: bool) -> bool:
        if any(pyscan.hostile([node], top_level=top_level, aliases=aliases)) or pyscan.skips(node):
            return True
        if not _alone(node, siblings):
            return True
        fixture = pyscan.fixture_name(node)
        return fixture is not None and (pyscan.is_autouse(node) or fixture in requested)

    carried: list[tuple[str, ...]] = []
    tail: list[ast.stmt] = []  # what goes after the trusted text, in the candidate's order
    assigns: list[ast.stmt] = []
    imports: list[ast.Import | ast.ImportFrom] = []
    t_dumps = {ast.dump(n) for n in t_tree.body}
    for node in c_tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if (node.name,) not in new:
                continue
            if node.name in bound:
                return None  # a clash: the trusted tests would see the candidate's definition
            if not rejected(node, c_tree.body, top_level=True):
                carried.append((node.name,))
                tail.append(node)
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and ast.dump(node) not in t_dumps:
            imports.append(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and ast.dump(node) not in t_dumps:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            if len(names) == len(targets) and not any(
                n in bound or n in _MODULE_WIDE or n.startswith("__") for n in names
            ):
                if not rejected(node, c_tree.body, top_level=True):
                    assigns.append(node)
    inserts: list[tuple[tuple[str, ...], ast.stmt]] = []
    for key in sorted(new):
        parent = key[:-1]
        if not parent or parent in new:
            continue
        t_cls, c_cls, method = t_defs.get(parent), c_defs.get(parent), c_defs[key]
        if not isinstance(t_cls, ast.ClassDef) or not isinstance(c_cls, ast.ClassDef):
            continue  # its class is the trusted source's to delete
        if key[-1] in pyscan.bindings(t_cls.body):
            return None
        assert isinstance(method, ast.stmt)
        if not rejected(method, c_cls.body, top_level=False):
            carried.append(key)
            inserts.append((parent, method))
    needed: set[str] = set()
    for node in [*tail, *(n for _, n in inserts)]:
        needed |= pyscan.used_names(node)
    chosen: list[ast.stmt] = []
    grew = True
    while grew:  # the assignments the carried code reads, and what they read
        grew = False
        for assign in assigns:
            stored = {t.id for t in syntax.walk(assign) if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)}
            if assign not in chosen and stored & needed:
                chosen.append(assign)
                needed |= pyscan.used_names(assign)
                grew = True
    provided = {getattr(n, "name", "") for n in tail} | {
        t.id for n in chosen for t in syntax.walk(n) if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)
    }
    trimmed: dict[int, ast.stmt] = {}
    star = False
    for imp in imports:
        if isinstance(imp, ast.ImportFrom) and imp.module == "__future__":
            continue
        keep = []
        for alias in imp.names:
            if alias.name == "*":
                star = True
                continue
            name = alias.asname or (alias.name if isinstance(imp, ast.ImportFrom) else alias.name.split(".")[0])
            if name not in needed:
                continue
            how = pyscan.bindings([_only(imp, alias)])[name]
            if name in bound and not how <= bound[name]:
                return None  # the trusted tests would see another object under that name
            if name not in bound or (isinstance(imp, ast.Import) and "." in alias.name):
                keep.append(alias)
                provided.add(name)
        if keep:
            trimmed[id(imp)] = _only(imp, *keep)
    if star and needed - provided - set(bound) - _BUILTINS:
        return None  # what the candidate's star import provides cannot be told
    order = {id(n): i for i, n in enumerate(c_tree.body)}
    statements = sorted([*tail, *chosen, *(n for n in imports if id(n) in trimmed)], key=lambda n: order[id(n)])
    blocks = []
    for node in statements:
        if id(node) in trimmed:
            blocks.append(ast.unparse(trimmed[id(node)]) + "\n")
        else:
            blocks.append("".join(_segment(c_lines, node)))
    after: dict[int, list[tuple[int, list[str]]]] = {}
    for parent, node in inserts:
        t_cls = t_defs[parent]
        assert isinstance(t_cls, ast.ClassDef)
        if t_cls.body[0].lineno == t_cls.lineno or t_cls.end_lineno is None:
            return None  # a one-line class: nowhere to put a method
        indent = _indent(t_lines[_start(t_cls.body[0]) - 1])
        snippet = _segment(c_lines, node)
        theirs = _indent(snippet[0])
        if theirs != indent:
            snippet = [indent + ln[len(theirs) :] if ln.startswith(theirs) else ln for ln in snippet]
        after.setdefault(t_cls.end_lineno, []).append((len(parent), ["\n", *snippet]))
    out: list[str] = []
    for number, line in enumerate(t_lines, start=1):
        out.append(line)
        for _, snippet in sorted(after.get(number, []), key=lambda item: -item[0]):
            if not out[-1].endswith(("\n", "\r")):
                out[-1] += "\n"
            out.extend(snippet)
    text = "".join(out)
    if blocks:
        if text and not text.endswith(("\n", "\r")):
            text += "\n"
        text += ("\n\n" if text.strip() else "") + "\n\n".join(blocks)
    if not _checks_out(text, t_tree, t_defs, c_defs, carried, [*chosen, *trimmed.values()]):
        return None
    return text, carried


_BUILTINS = frozenset(dir(builtins))


def _only(imp: ast.Import | ast.ImportFrom, *aliases: ast.alias) -> ast.Import | ast.ImportFrom:
    if isinstance(imp, ast.Import):
        return ast.Import(names=list(aliases))
    return ast.ImportFrom(module=imp.module, names=list(aliases), level=imp.level)


def _checks_out(
    text: str,
    t_tree: ast.Module,
    t_defs: Mapping[tuple[str, ...], ast.AST],
    c_defs: Mapping[tuple[str, ...], ast.AST],
    carried: Sequence[tuple[str, ...]],
    statements: Sequence[ast.stmt],
) -> bool:
    """The merged text parses, holds every trusted definition and statement as the trusted file has
    it, and every carried definition as the candidate wrote it."""
    merged = pyscan.parse(text.encode("utf-8", "surrogateescape"))
    if merged is None:
        return False
    m_defs = pyscan.definitions(merged)
    for key, node in t_defs.items():
        if key not in m_defs:
            return False
        ours = m_defs[key]
        if isinstance(node, ast.ClassDef) and isinstance(ours, ast.ClassDef):
            ours, node = pyscan.class_shell(ours), pyscan.class_shell(node)
        if ast.dump(ours) != ast.dump(node):
            return False
    for key in carried:
        for sub, node in c_defs.items():
            if sub[: len(key)] == key and (sub not in m_defs or ast.dump(m_defs[sub]) != ast.dump(node)):
                return False
    expected = [ast.dump(n) for n in pyscan.module_level(t_tree)] + [ast.dump(n) for n in statements]
    return sorted(ast.dump(n) for n in pyscan.module_level(merged)) == sorted(expected)


# -- pytest settings -------------------------------------------------------------------------------


def added_tests(path: str, baseline: bytes | None, candidate: bytes, naming: pyscan.Naming) -> set[str]:
    """Node ids of the tests the candidate added to a file it left otherwise alone."""
    old = pyscan.parse(baseline) if baseline is not None else None
    new = pyscan.parse(candidate)
    if new is None or (baseline is not None and old is None):
        return set()
    b_defs = pyscan.definitions(old) if old else {}
    c_defs = pyscan.definitions(new)
    fresh = {k for k in c_defs if k not in b_defs}
    return {i for k in fresh if k[:-1] not in fresh for i in naming.test_ids(path, c_defs, k)}
