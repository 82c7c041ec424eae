"""The audit tier (``--audit``, after T5): is green worth anything?

Two questions, both by mutants of the candidate's code (``runner.audit``):

* **Suite strength** -- would the tests that reach a changed function notice if it were wrong?
  Every changed function (and every function of a ``--critical`` module) is mutated, and the
  tests B's run saw reach it (for a function B did not have: T5's selection) run against each
  mutant. Kill rates go to the record and the store; under ``--min-kill-rate`` the tier is
  INCONCLUSIVE with the survivors as its reason.
* **Reproducer strength** -- would the reproducer notice if the fix were not really a fix?
  Mutants of the lines the candidate wrote run against the bug-discriminating tests until one
  is killed. None killed: ``weak_reproducer``, and the patch is not certified on it.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, cast

from pytest_evidence import gitops, syntax
from pytest_evidence.errors import BadInput, EvidenceError
from pytest_evidence.model import Detection, DetectionKind, Outcome, Tier, TierStatus
from pytest_evidence.store import SuiteRun
from runner import audit
from runner.diff import Diff, FileKind, Span
from runner.names import defined, first_line

if TYPE_CHECKING:
    from runner.ladder.climb import Ladder


def definitions(source: str) -> dict[str, Span]:
    """Every function and class of a module by qualname, from its first decorator to its last line."""
    try:
        tree = syntax.parse(source)
    except SyntaxError:
        return {}
    return {name: Span(name, first_line(node), node.end_lineno or node.lineno) for name, node in defined(tree)}


def own_lines(spans: Sequence[Span], lines: Iterable[int]) -> dict[Span, frozenset[int]]:
    """Each of ``lines`` under the innermost of ``spans`` holding it: a method's lines are the
    method's, not also its class's. ``spans`` must be every definition of the file: a class that
    changed owns its body's own statements, never its unchanged methods."""
    found: dict[Span, set[int]] = {}
    for n in lines:
        holding = [s for s in spans if s.start <= n <= s.end]
        if holding:
            found.setdefault(min(holding, key=lambda s: s.end - s.start), set()).add(n)
    return {s: frozenset(found[s]) for s in spans if s in found}


def reaching(suite: SuiteRun, ids: Sequence[str], path: str, span: Span | None) -> list[str]:
    """The tests of ``ids`` whose recorded run reached ``span`` of ``path`` (in ``suite``'s tree)."""
    if span is None:
        return []
    inside = {"%s:%d" % (path, n) for n in range(span.start, span.end + 1)}
    return [t for t in ids if not inside.isdisjoint(suite.functions.get(t, ()))]


def changed_units(
    diff: Diff,
    read: Callable[[str], str],
    suite: SuiteRun,
    ids: Sequence[str],
    recorded_on_c: bool,
    fallback: Sequence[str] = (),
    unseen: Sequence[str] = (),
) -> list[audit.Unit]:
    """Every changed function of the diff's source files, with the tests reaching it.

    ``recorded_on_c``: ``suite`` was recorded on the tree the units are mutated in (the audit
    command); else on B, whose version of each function (same qualname) is matched. ``read``
    gives a file of the tree mutated, whose every definition decides which lines a changed one
    owns. Tests B's
    run cannot speak for (``unseen``: new tests, changed test files) are added to every unit,
    and a function B did not have is reached by ``fallback`` (T5's selection)."""
    found = []
    for change in diff.of_kind(FileKind.SOURCE):
        if change.status == "D" or not change.path.endswith(".py"):
            continue
        b_spans = {s.qualname: s for s in change.b_spans}
        changed = {s.qualname for s in change.c_spans}
        whole = {n for s in change.c_spans for n in range(s.start, s.end + 1)}
        owned = own_lines(list(definitions(read(change.path)).values()), whole)
        for span, lines in ((s, ls) for s, ls in owned.items() if s.qualname in changed):
            recorded = span if recorded_on_c else b_spans.get(span.qualname)
            if not recorded_on_c and span.qualname not in b_spans:
                tests = list(fallback)
            else:
                reached = set(reaching(suite, ids, change.path, recorded)) | set(unseen)
                tests = [t for t in ids if t in reached]
            found.append(audit.Unit(change.path, span.qualname, lines, tuple(tests)))
    return found


def critical_units(
    read_c: Mapping[str, str], read_recorded: Mapping[str, str], suite: SuiteRun, ids: Sequence[str]
) -> list[audit.Unit]:
    """Every definition of each ``--critical`` module (``read_c``: path -> the source mutated;
    ``read_recorded``: path -> the source ``suite`` was recorded on), with the tests reaching it."""
    found = []
    for path, source in sorted(read_c.items()):
        recorded, mine = definitions(read_recorded.get(path, "")), definitions(source)
        whole = {n for s in mine.values() for n in range(s.start, s.end + 1)}
        for span, lines in own_lines(list(mine.values()), whole).items():
            tests = reaching(suite, ids, path, recorded.get(span.qualname))
            found.append(audit.Unit(path, span.qualname, lines, tuple(tests)))
    return found


def critical_paths(checkout: str, modules: Sequence[str], roots: Sequence[str]) -> list[str]:
    """``--critical`` names (a dotted module or a path) as repository-relative files; an unknown
    one is bad input."""
    found = []
    for name in modules:
        candidates = [name] if name.endswith(".py") else []
        dotted = name.replace(".", "/")
        for root in roots:
            prefix = root + "/" if root else ""
            candidates += [prefix + dotted + ".py", prefix + dotted + "/__init__.py"]
        hit = next((c for c in candidates if os.path.isfile(os.path.join(checkout, c))), None)
        if hit is None:
            raise BadInput("--critical %s is neither a module nor a file of the checkout" % name)
        found.append(hit)
    return found


def tier(ladder: Ladder, diff: Diff, suite: SuiteRun) -> None:
    """The audit tier: suite strength over the changed (and critical) functions, reproducer
    strength over the changed lines; recorded, kill rates stored."""
    start = ladder.enter(Tier.AUDIT)
    how, co, sides = ladder.invocation, ladder.co, ladder.sides
    # Only tests that pass on the unmutated code can tell a mutant from it.
    passed = {r.test_id for r in ladder.evidence.results if r.candidate_result is Outcome.PASS}
    ids = [t for t in ladder.collected if t in passed]
    selected, unseen = (list(filter(passed.__contains__, found)) for found in _selected(ladder, diff))

    def read(path: str) -> str:
        return (co.c_dir / path).read_text(encoding="utf-8")

    units = changed_units(diff, read, suite, ids, False, selected, unseen)
    if how.critical:
        roots = ladder.target.relative_roots(co.c_dir)
        paths = critical_paths(str(co.c_dir), how.critical, roots)
        read_c = {p: (co.c_dir / p).read_text(encoding="utf-8") for p in paths}
        read_b = {p: _at(ladder, co.baseline, p) for p in paths}
        named = {(u.path, u.function) for u in units}
        units += [u for u in critical_units(read_c, read_b, suite, ids) if (u.path, u.function) not in named]
    found = audit.mutants_of(co.c_dir, units)
    strength_units = _writes(diff, ladder)
    if not any(found) and not strength_units:
        ladder.tier(Tier.AUDIT, TierStatus.SKIPPED, start, 0, 0, None, "no changed function to mutate")
        return
    with audit.Lab(co.c_dir, co.scratch, ladder.target, sides.sandbox, how.jobs) as lab:
        suite_audit = audit.audit(lab, units, found, how.limits(), ladder.progress)
        reproducer = _reproducer_strength(ladder, lab, strength_units)
    ladder.audit = {"suite": suite_audit.to_dict(), "reproducer": reproducer}
    _store(ladder, suite_audit)
    status, note = _status(suite_audit, how.min_kill_rate, reproducer)
    ladder.tier(Tier.AUDIT, status, start, suite_audit.run, suite_audit.run, None, note)


#: T5's reasons for a test whose run on B says nothing about what it reaches on C.
UNSEEN = ("no baseline data", "no dependency data", "its test file changed")


def _selected(ladder: Ladder, diff: Diff) -> tuple[list[str], list[str]]:
    """T5's selection in collection order, and the part of it B's run cannot speak for: by its
    reason, or a test of a changed test module (its run on B was of other code)."""
    selected = cast("dict[str, list[str]]", (ladder.selection or {}).get("selected", {}))
    why = {t: reason for reason, ids in selected.items() for t in ids}
    chosen = [t for t in ladder.collected if t in why]
    edited = {c.path for c in diff.of_kind(FileKind.TEST)}
    return chosen, [t for t in chosen if why[t].startswith(UNSEEN) or t.split("::", 1)[0] in edited]


def _at(ladder: Ladder, commit: str, path: str) -> str:
    try:
        return gitops.show(str(ladder.co.repo), commit, path).decode("utf-8", errors="replace")
    except EvidenceError:
        return ""


#: Methods whose mutants test the comparison, not the fix: an always-true ``__eq__`` mutated to
#: False makes any test comparing the object fail, whatever the fix computes (``always_equal``
#: is the static check for those).
COMPARATORS = frozenset({"__eq__", "__ne__", "__hash__", "__lt__", "__le__", "__gt__", "__ge__", "__repr__", "__str__"})


def _writes(diff: Diff, ladder: Ladder) -> list[audit.Unit]:
    """The lines the candidate wrote in each changed function (comparators aside), tested by
    its bug-discriminating tests."""
    proving = tuple(r.test_id for r in ladder.evidence.results if r.bug_discriminating)
    found = []
    for change in diff.of_kind(FileKind.SOURCE):
        if change.status == "D" or not change.path.endswith(".py"):
            continue
        changed = {s.qualname for s in change.c_spans}
        every = list(definitions((ladder.co.c_dir / change.path).read_text(encoding="utf-8")).values())
        for span, lines in own_lines(every, change.c_lines).items():
            if span.qualname in changed and span.qualname.rpartition(".")[2] not in COMPARATORS:
                found.append(audit.Unit(change.path, span.qualname, lines, proving))
    return found


def _reproducer_strength(ladder: Ladder, lab: audit.Lab, units: Sequence[audit.Unit]) -> dict[str, object] | None:
    """Mutants of the candidate's own lines against the bug-discriminating tests, until one is killed."""
    if not units or not units[0].tests:
        return None
    how = ladder.invocation
    found = audit.mutants_of(ladder.co.c_dir, units)
    if not any(found):
        return {"mutants": 0, "run": 0, "killed": 0, "untested": 0, "tests": list(units[0].tests), "survivors": []}
    checked = audit.audit(lab, units, found, how.limits(workers=1), ladder.progress, until_killed=True)
    survivors = checked.survivors()
    # A mutant that broke the tests' import is killed by no test: it says nothing of the reproducer.
    telling, noticed = checked.run - checked.untested, checked.killed - checked.untested
    summary = {
        "mutants": sum(len(m) for m in found),
        "run": checked.run,
        "killed": noticed,
        "untested": checked.untested,
        "tests": list(units[0].tests),
        "survivors": [{"path": v.mutant.path, "line": v.mutant.line, "diff": v.mutant.diff} for v in survivors][
            : audit.SURVIVORS_SHOWN
        ],
    }
    if telling and not noticed:
        first = survivors[0].mutant
        message = (
            "no bug-discriminating test (%s) notices any of %d mutant(s) of the lines the fix wrote, e.g. %s:%d: %s"
            % (", ".join(units[0].tests), telling, first.path, first.line, first.diff.splitlines()[-1].strip())
        )
        ladder.evidence.detect(
            [Detection(DetectionKind.WEAK_REPRODUCER, message, None, first.path, first.line, "survives_mutants")]
        )
    return summary


def _status(
    suite_audit: audit.Audit, minimum: float | None, reproducer: Mapping[str, object] | None
) -> tuple[TierStatus, str]:
    rate = suite_audit.kill_rate
    said = "kill rate %s over %d mutant(s) of %d function(s)" % (
        "n/a" if rate is None else "%.0f%%" % (rate * 100),
        suite_audit.run,
        len(suite_audit.units),
    )
    telling = 0 if reproducer is None else cast(int, reproducer["run"]) - cast(int, reproducer["untested"])
    if reproducer is not None and telling and not reproducer["killed"]:
        said += "; the reproducer kills none of %d mutant(s) of the fixed lines" % telling
    if minimum is not None and (rate is None or rate < minimum):
        survivors = suite_audit.survivors()
        shown = "; ".join(
            "%s:%d %s" % (v.mutant.path, v.mutant.line, v.mutant.diff.splitlines()[-1].strip()) for v in survivors[:3]
        )
        return TierStatus.INCONCLUSIVE, "%s, under --min-kill-rate %.0f%%; survivors: %s" % (
            said,
            minimum * 100,
            shown or "none run",
        )
    return TierStatus.PASSED, said


def _store(ladder: Ladder, suite_audit: audit.Audit) -> None:
    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    ladder.store.add_kill_rates(
        ladder.sides.repo_key,
        ladder.co.candidate,
        [(u.path, u.function, u.run, u.killed, suite_audit.limits.seed, now) for u in suite_audit.units if u.run],
    )
