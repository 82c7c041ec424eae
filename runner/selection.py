"""``select_impacted_tests``: the smallest safe set of tests for a change, and why each test is in it or not.

Safety before smallness. T4 is precise: tests whose run on B reached a definition holding a
changed line (``impact.changed_spans``). T5 is safe: it uses what B's run recorded per test --
functions reached, files opened -- and follows by name what the record cannot see
(``impact``): a test is in T5 when it reached a changed function, read a changed module-level
name or fixture (it reached a definition that mentions one), opened a changed file, or when the
record cannot answer for it -- module-level code with side effects (every test importing the
module), shared fixtures, setups and hooks (every test they apply to), tests without baseline or
dependency data, changed test files. Configuration, conftest and manifest changes select the
whole suite.

A changed data file that no test opened on B selects nothing more: T7, the full suite, judges
it. Every test of the suite gets a reason: why it is in T5 (``Selection.reasons``), or why it was
left out (``Selection.left_out``).

B's Python files are read from ``graph``'s checkout (C's, identical to B's outside the diff) and,
for a changed file, from the diff (``FileChange.b_source``).
"""

from __future__ import annotations

import fnmatch
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from pytest_evidence import overlay
from pytest_evidence.store import SuiteRun
from runner.codeindex import Project
from runner.diff import Diff, FileKind, Span
from runner.impact import Impact, changed_spans, impact
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


def _reaching(spans: Mapping[str, tuple[Span, ...]]) -> Callable[[Sequence[str]], str | None]:
    """The first changed definition one of a test's recorded keys lies in, as
    ``path::qualname``. Each key is placed once for the whole suite: its tests reach mostly the
    same functions (click 8.3.2's 1,383 tests record 74,000 keys)."""

    @functools.cache
    def place(key: str) -> str | None:
        path, _, line = key.rpartition(":")
        for span in spans.get(path, ()):
            if span.start <= int(line) <= span.end:
                return "%s::%s" % (path, span.qualname)
        return None

    return lambda functions: next((found for found in map(place, functions) if found is not None), None)


def _read(functions: Sequence[str], readers: Mapping[str, Mapping[int, tuple[str, str]]]) -> str | None:
    for key in functions:
        path, _, line = key.rpartition(":")
        found = readers.get(path, {}).get(int(line))
        if found is not None:
            return "read changed %s via %s::%s" % (found[1], path, found[0])
    return None


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
        for scope, why in sorted(self.impact.scopes.items()):
            if path == scope or (path.startswith(scope) and (scope == "" or scope.endswith("/"))):
                return why
        opened = sorted(self.changed.intersection(self.baseline.files.get(tid, ())))
        if opened:
            return "opened changed file %s on B" % opened[0]
        return _read(self.baseline.functions[tid], self.impact.readers) or self.own(tid) or self.imports(path)

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
            hit = sorted(closure & self.impact.fallback.keys())
            if not hit:
                imported = {name for f in closure for name in self.graph.imports(f)}
                hit = [
                    p for m, p in sorted(self.deleted.items()) if any(n == m or n.startswith(m + ".") for n in imported)
                ]
            self.closures[path] = "imports %s: %s" % (hit[0], self.impact.fallback[hit[0]]) if hit else None
        return self.closures[path]


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
    reached_by = _reaching(changed_spans(diff))
    reasons: dict[str, str] = {}
    t4 = []
    for tid in suite_ids:
        reached = reached_by(baseline.functions.get(tid, ()))
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
