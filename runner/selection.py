"""``select_impacted_tests``: the smallest safe set of tests for a change, and why each test is in it or not.

Safety before smallness. T4 is precise: tests whose run on B reached a definition holding a
changed line (``impact.changed_spans``). T5 is safe: it uses what B's run recorded per test --
functions reached, files opened -- and follows by name what the record cannot see
(``impact``): a test is in T5 when it reached a changed function, read a changed module-level
name or fixture (it reached a definition that mentions one), opened a changed file, or when the
record cannot answer for it -- module-level code with side effects (every test importing the
module), shared fixtures, setups and hooks (every test they apply to), tests without baseline or
dependency data, changed test files. Configuration, conftest and manifest changes select the
whole suite. Module-level code that only calls what may run changed code is settled by B's
record of the module's import (``SuiteRun.imports``), when it has one: what those calls ran on
B, judged as a test's record is.

A changed data file that no test opened on B selects nothing more: T7, the full suite, judges
it. Every test of the suite gets a reason: why it is in T5 (``Selection.reasons``), or why it was
left out (``Selection.left_out``).

B's Python files are read from ``graph``'s checkout (C's, identical to B's outside the diff) and,
for a changed file, from the diff (``FileChange.b_source``).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pytest_evidence import overlay
from pytest_evidence.store import SuiteRun
from runner.codeindex import Project
from runner.diff import Diff, FileKind
from runner.impact import Impact, changed_spans, first_reached, first_read, impact
from runner.importgraph import ImportGraph, module_of

LEFT_OUT = (
    "reached no changed function, read no changed name, opened no changed file on B, "
    "and imports no module whose change the record cannot follow"
)


@dataclass(frozen=True)
class Selection:
    """T4 and T5 over the suite, and a reason for every test of it."""

    t4: tuple[str, ...]
    t5: tuple[str, ...]
    reasons: Mapping[str, str]  # test id in T5 -> why it is in
    whole_suite: bool  # configuration, a conftest or a manifest changed
    suite_size: int
    left_out: Mapping[str, str]  # test id not in T5 -> why it is out


def _project(diff: Diff, graph: ImportGraph) -> Project:
    """B's Python files: C's checkout outside the diff, the diff's B text inside it."""
    changed = {c.path: c for c in diff.files}

    def read(path: str) -> str | None:
        if path in changed:
            return changed[path].b_source
        try:
            return (graph.checkout / path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    deleted = [c.path for c in diff.of_kind(FileKind.SOURCE, FileKind.TEST) if c.status == "D"]
    return Project([*graph.files, *deleted], read)


class _Judge:
    """Why one test is in T5, from the change's ``impact``."""

    def __init__(self, found: Impact, baseline: SuiteRun, diff: Diff, graph: ImportGraph) -> None:
        self.baseline, self.graph, self.impact = baseline, graph, found
        self.changed = {c.path for c in diff.files}
        self.fallback, self.scopes = dict(found.fallback), dict(found.scopes)
        ran = {m: why for m, (keys, files) in sorted(baseline.imports.items()) if (why := self.ran(keys, files))}
        self.recorded(ran)
        for module, entries in sorted(found.at_import.items()):
            # settled by a clean record, while no import ran changed code: state an import left
            # behind (a registry, a mode) may steer another's calls elsewhere on C
            if ran or module not in baseline.imports:
                for (kind, key), why in entries:
                    (self.fallback if kind == "fallback" else self.scopes).setdefault(key, why)
        self.imported(baseline.imports)
        # a test file the selection cannot read as Python (a changed ``.py`` one is read as code)
        self.changed_tests = {c.path for c in diff.of_kind(FileKind.TEST) if not c.path.endswith(".py")}
        gone = [p for p in found.fallback if not (graph.checkout / p).is_file()]
        self.deleted = {m: p for p in gone if (m := module_of(p, graph.roots)) is not None}
        self.closures: dict[str, str | None] = {}

    def reason(self, tid: str) -> str | None:
        path = tid.split("::", 1)[0]
        if tid not in self.baseline.results or self.baseline.results[tid] is None:
            return "no baseline data for this test (new, or collected on C only)"
        if tid not in self.baseline.functions:
            return "no dependency data for this test (recorded under another tracer?)"
        if path in self.changed_tests:
            return "its test file changed"
        for scope, why in sorted(self.scopes.items()):
            if path == scope or (path.startswith(scope) and (scope == "" or scope.endswith("/"))):
                return why
        opened = sorted(self.changed.intersection(self.baseline.files.get(tid, ())))
        if opened:
            return "opened changed file %s on B" % opened[0]
        return first_read(self.baseline.functions[tid], self.impact.readers) or self.own(tid) or self.imports(path)

    def own(self, tid: str) -> str | None:
        """Whether the test's class changed or may run changed code -- pytest itself makes the
        class, under its bases, marks and setups, which no test's code names -- or its function's
        name is bound anew (``test_x = _check``, an import of another ``test_x``)."""
        path, names = overlay.split_test_id(tid)
        if not names:
            return None
        top, method = names[0], len(names) > 1
        why = (self.impact.bound if method else self.impact.rebound).get(path, {}).get(top)
        return "its %s %s changed: %s" % ("class" if method else "name", top, why) if why is not None else None

    def imports(self, path: str) -> str | None:
        """Whether ``path`` (or a conftest or a package ``__init__`` above it) imports a module that falls back."""
        if path not in self.closures:
            packages = self.graph.packages_of(path)  # one the candidate deleted stood there on B
            closure = self.graph.closure([path, *self.graph.conftests_for(path), *packages]) | set(packages)
            hit = sorted(closure & self.fallback.keys())
            if not hit:
                imported = {name for f in closure for name in self.graph.imports(f)}
                hit = [
                    p for m, p in sorted(self.deleted.items()) if any(n == m or n.startswith(m + ".") for n in imported)
                ]
            self.closures[path] = "imports %s: %s" % (hit[0], self.fallback[hit[0]]) if hit else None
        return self.closures[path]

    def ran(self, keys: Sequence[str], files: Sequence[str]) -> str | None:
        """What changed a record of B shows run or opened, judged as a test's record is."""
        opened = sorted(self.changed.intersection(files))
        found = first_reached(keys, self.impact.spans)
        return (
            ("ran changed %s" % found if found else None)
            or first_read(keys, self.impact.readers)
            or ("opened changed file %s" % opened[0] if opened else None)
        )

    def recorded(self, ran: Mapping[str, str]) -> None:
        """Each module whose import on B ran changed code (``ran``: what) falls back -- whatever
        the name analysis thought of its code: a callable handed on and called by another
        module's import, a metaclass calling a changed method for a subclass made elsewhere, a
        module imported by a string, show there. Collection itself (``""``: a conftest's hook at
        the session's start, a thread) and a plugin apply to every test. Where no import ran
        changed code, a module whose record is clean needs no fallback for what its code called
        (``Impact.at_import``): the code is B's and unchanged (a changed statement that calls is a
        side effect), so on C it calls the same and runs the same."""
        for module, what in sorted(ran.items()):
            if not module:
                self.scopes.setdefault("", "collection %s on B, outside any module's import" % what)
            elif module in self.impact.plugins:
                self.scopes.setdefault(
                    "", "pytest plugin %s may apply to any test: its import %s on B" % (module, what)
                )
            else:
                self.fallback.setdefault(module, "its import %s on B" % what)

    def imported(self, imports: Mapping[str, tuple[Sequence[str], Sequence[str]]]) -> None:
        """A module whose import on B imported one that falls back falls back too: the import
        graph may not see it (a module imported by a string), its importers must run all the same.
        A record holds ``path:0`` for each module whose top-level code ran during it."""
        for module, (keys, _) in sorted(imports.items()):
            for key in keys:
                inner = key[:-2] if key.endswith(":0") else None
                if module and inner and inner != module and inner in self.fallback:
                    why = "its import imported %s on B, which falls back" % inner
                    if module in self.impact.plugins:
                        self.scopes.setdefault("", "pytest plugin %s may apply to any test: %s" % (module, why))
                    else:
                        self.fallback.setdefault(module, why)
                    break


def test_files(suite_ids: Iterable[str]) -> frozenset[str]:
    """The files a collection's tests are in: what the change's impact is judged for."""
    return frozenset(t.split("::", 1)[0] for t in suite_ids)


def impact_on(files: frozenset[str], diff: Diff, graph: ImportGraph) -> Impact:
    """The change's impact on B's Python files, for a suite of tests in ``files`` (``test_files``):
    the costly part of a selection, and the only one that needs no stored run."""
    return impact(diff, _project(diff, graph), files, graph)


def select_impacted_tests(
    suite_ids: Sequence[str], baseline: SuiteRun, diff: Diff, graph: ImportGraph, found: Impact | None = None
) -> Selection:
    """T4's and T5's tests; ``found``: ``impact_on`` this suite's ``test_files``, if already known."""
    spans = changed_spans(diff)
    reasons: dict[str, str] = {}
    t4 = []
    for tid in suite_ids:
        reached = first_reached(baseline.functions.get(tid, ()), spans)
        if reached is not None:
            t4.append(tid)
            reasons[tid] = "reached changed function %s" % reached
    left_out: dict[str, str] = {}
    judge = None
    if not diff.selects_everything:
        found = found if found is not None else impact_on(test_files(suite_ids), diff, graph)
        judge = _Judge(found, baseline, diff, graph)
    for tid in suite_ids:
        if tid in reasons:
            continue
        why = judge.reason(tid) if judge is not None else "pytest configuration, a conftest or a manifest changed"
        if why is None:
            left_out[tid] = LEFT_OUT
        else:
            reasons[tid] = why
    t5 = tuple(t for t in suite_ids if t in reasons)
    return Selection(tuple(t4), t5, reasons, diff.selects_everything, len(suite_ids), left_out)


def top_level(path: str, roots: Sequence[str]) -> str:
    """The top-level package (or module file) ``path`` belongs to, under its import root."""
    for root in sorted(roots, key=len, reverse=True):
        prefix = root.rstrip("/") + "/" if root else ""
        if path.startswith(prefix):
            return path[len(prefix) :].split("/")[0]
    return path.split("/")[0]


def integration_tests(
    suite_ids: Sequence[str],
    markers: Mapping[str, Sequence[str]],
    marker: str,
    globs: Sequence[str],
    diff: Diff,
    graph: ImportGraph,
    roots: Sequence[str],
) -> list[str]:
    """T6: integration tests (by marker or path glob) that reach a top-level package the change touches."""
    packages = {top_level(c.path, roots) for c in diff.of_kind(FileKind.SOURCE)}
    chosen = []
    for tid in suite_ids:
        path = tid.split("::", 1)[0]
        if marker not in markers.get(tid, ()) and not any(fnmatch.fnmatch(path, g) for g in globs):
            continue
        reached = {top_level(f, roots) for f in graph.closure([path, *graph.conftests_for(path)])}
        if packages & reached:
            chosen.append(tid)
    return chosen
