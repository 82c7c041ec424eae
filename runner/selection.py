"""``select_impacted_tests``: the smallest safe set of tests for a change, and why each is in it.

Safety before smallness. T4 is precise: tests whose run on B reached a changed function or
method. T5 is safe: T4, plus tests whose file (or conftest) statically imports a changed module,
tests that opened a changed data file on B, tests the candidate added or changed, and every test
the baseline knows nothing about. A change to pytest configuration, a conftest or a dependency
manifest selects the whole suite.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pytest_evidence.store import SuiteRun
from runner.diff import Diff, FileKind
from runner.importgraph import ImportGraph


@dataclass(frozen=True)
class Selection:
    t4: tuple[str, ...]
    t5: tuple[str, ...]
    reasons: Mapping[str, str]  # test id -> why it is in T5
    whole_suite: bool
    suite_size: int


def _reached(functions: Sequence[str], spans: Mapping[str, list[tuple[int, int]]]) -> bool:
    for key in functions:
        path, _, line = key.rpartition(":")
        for start, end in spans.get(path, ()):
            if start <= int(line) <= end:
                return True
    return False


def select_impacted_tests(suite_ids: Sequence[str], baseline: SuiteRun, diff: Diff, graph: ImportGraph) -> Selection:
    spans: dict[str, list[tuple[int, int]]] = {}
    for change in diff.of_kind(FileKind.SOURCE):
        spans.setdefault(change.path, []).extend((s.start, s.end) for s in change.b_spans)
    changed_sources = {c.path for c in diff.of_kind(FileKind.SOURCE)}
    changed_other = {c.path for c in diff.files if c.kind in (FileKind.DATA, FileKind.SOURCE)}
    changed_tests = {c.path for c in diff.of_kind(FileKind.TEST)}
    reasons: dict[str, str] = {}
    t4 = []
    for tid in suite_ids:
        if _reached(baseline.functions.get(tid, ()), spans):
            t4.append(tid)
            reasons[tid] = "reached a changed function on B"
    closures: dict[str, set[str]] = {}
    for tid in suite_ids:
        if tid in reasons:
            continue
        path = tid.split("::", 1)[0]
        if diff.selects_everything:
            reasons[tid] = "pytest configuration, conftest or dependency manifest changed"
        elif tid not in baseline.results or baseline.results[tid] is None:
            reasons[tid] = "no baseline data for this test"
        elif tid not in baseline.functions:
            reasons[tid] = "no dependency data for this test (recorded under another tracer?)"
        elif path in changed_tests:
            reasons[tid] = "its test file changed"
        elif changed_other & set(baseline.files.get(tid, ())):
            reasons[tid] = "opened a changed file on B"
        else:
            if path not in closures:
                closures[path] = graph.closure([path, *graph.conftests_for(path)])
            hit = closures[path] & changed_sources
            if hit:
                reasons[tid] = "imports changed module %s" % sorted(hit)[0]
    t5 = tuple(t for t in suite_ids if t in reasons)
    return Selection(tuple(t4), t5, reasons, diff.selects_everything, len(suite_ids))


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
