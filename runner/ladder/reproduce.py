"""T3: the reproducers on B (with C's tests) and on C, like for like; and what a collection says.

Reproducers are the ``--reproducer`` ids, else the tests the candidate added or changed (by AST,
per test function, inherited mixin methods included). T3's session collects only the files that
can hold them (``t3_files``), so a patch its reproducers falsify never pays for collecting the
suite. A collection pytest cannot finish is the candidate's doing only when B's finishes.
"""

from __future__ import annotations

import ast
import contextlib
import pathlib
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_evidence import gitops, overlay
from pytest_evidence.assemble import Typed
from pytest_evidence.errors import BadInput, EvidenceError, ToolFailed
from pytest_evidence.model import Detection, DetectionKind, Failure, Observation, Origin, Role, Tier, TierStatus
from pytest_evidence.replay import holds
from pytest_evidence.store import SuiteRun
from runner import ablation, config_policy, pyscan
from runner.diff import Diff, FileKind
from runner.importgraph import ImportGraph, python_files
from runner.ladder import ahead, blind, judge
from runner.pytest_run import PytestRun
from runner.pytest_session import GroupedSession, SessionEnded

if TYPE_CHECKING:
    from runner.ladder.climb import Ladder


#: T3's note when there is no test to prove the fix with. A test made from a data file the
#: candidate added (a parametrize over a directory) is no test it added: naming it is the way.
NO_REPRODUCER = (
    "no reproducer: none designated, and the candidate added or changed no test (name one with --reproducer NODEID)"
)


def no_reproducer(ladder: Ladder, diff: Diff, errors: Mapping[str, Failure] | None = None) -> str:
    """``NO_REPRODUCER``, or -- when the candidate's tests are in a file the suite's
    configuration does not collect (``tests.py`` beside pytest's ``test_*.py``: a file named for
    tests, holding some) -- that, and how to name it: the candidate did add a test, and the
    suite never runs it. A candidate that changes nothing says so: its tree is B's (an empty
    patch, or ``--candidate`` naming B's tree). So does one whose test modules do not collect on
    C (``errors``, C's collection errors): a review read "added or changed no test" beside a new
    test module that failed to import a package missing from the target environment."""
    if not diff.files:
        return "no reproducer: the candidate changes nothing -- its tree is the baseline's, so there is no fix to show"
    written = {f.path for f in diff.files if f.status != "D"}
    broken = sorted(nodeid for nodeid in errors or {} if nodeid.split("::", 1)[0] in written)
    if errors and broken:
        return (
            "no reproducer: none designated, and the candidate's tests in %s do not collect on C (%s): make them "
            "import, or name a test with --reproducer NODEID" % (", ".join(broken), errors[broken[0]].message)
        )
    named = [f.path for f in diff.of_kind(FileKind.SOURCE) if f.status != "D" and "test" in f.path.rpartition("/")[2]]
    unseen = [path for path in named if _holds_tests(ladder.co.c_dir / path)]  # not a library's ``test_connection``
    if not unseen:
        return NO_REPRODUCER
    return (
        "no reproducer: none designated, and the candidate's tests are in %s, which the suite's configuration "
        "does not collect (python_files): name it as a pytest argument (-- %s), or a test with --reproducer NODEID"
        % (", ".join(unseen), unseen[0])
    )


def _holds_tests(path: pathlib.Path) -> bool:
    """Whether the Python file defines a test as pytest's default names find them: a ``test*``
    function, or a ``test*`` method of a ``Test*`` class or a ``TestCase``."""
    tree = pyscan.parse(path.read_bytes()) if path.is_file() else None
    for node in tree.body if tree is not None else []:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            return True
        if isinstance(node, ast.ClassDef) and (
            node.name.startswith("Test") or any(pyscan.dotted(b, calls=False).endswith("TestCase") for b in node.bases)
        ):
            if any(
                isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test") for n in node.body
            ):
                return True
    return False


def matches(specs: Sequence[str], ids: Sequence[str]) -> list[str]:
    """Collected ids a node-id spec names: itself, its parametrizations, or the tests of a class."""
    return [t for t in ids if any(t == s or t.startswith(s + "[") or t.startswith(s + "::") for s in specs)]


UNRUNNABLE = {
    "missing_module": "fails on C importing a module neither the checkout nor the target environment has; "
    "not evidence either way",
    "setup_error": "errors in setup or collection on C exactly as on B: its body ran on neither side; "
    "not evidence either way",
}


def owns(ladder: Ladder) -> Callable[[str], bool]:
    """Whether a top-level module name belongs to the candidate's checkout (under an import root)."""
    roots = ladder.target.roots(ladder.co.c_dir)
    return lambda name: any((r / name).is_dir() or (r / (name + ".py")).is_file() for r in roots)


def t3_files(ladder: Ladder) -> list[str]:
    """The test files T3 collects: the named tests' files, the test files the candidate added or
    changed, and the test files that import one of those (a test class inheriting a changed
    mixin). Nothing else: a patch that fails at T3 pays for its reproducers only."""
    co, sides = ladder.co, ladder.sides
    assert sides.plan is not None

    def read(path: str) -> bytes | None:
        found = co.c_dir / path
        return found.read_bytes() if found.is_file() else None

    # Only what the suite's own collection reaches: a file the suite's arguments name is collected
    # wherever it is; any other, under ``testpaths`` only. A file a reproducer names is collected
    # there whatever its name: a doctest module, or a collector's (a conftest's
    # ``pytest_collect_file``: docopt-ng's data cases, a ``check_*.py`` module). pytest collects a
    # ``.py`` file named on its command line as a test module even where the suite's patterns
    # would not: the named test then runs though the suite may not have it -- it was named.
    settings = config_policy.effective(read)[1]
    collect = config_policy.collection(settings)
    by_path = [p for p in ladder.test_modules if p.startswith("/")]  # ``config_policy.Collection.by_path``
    named = {s.split("::", 1)[0] for s in (*ladder.invocation.reproducers, *ladder.invocation.expected_changes)}

    def collected(path: str) -> bool:
        by_pattern = overlay.named_by(path, ladder.test_modules) and collect.under_testpaths(path)
        return by_pattern or (path in named and collect.under_testpaths(path)) or overlay.named_by(path, by_path)

    changed = set(sides.plan.changed)
    roots = ladder.target.relative_roots(co.c_dir)
    tests = [f for f in python_files(co.c_dir) if collected(f)]
    # Test modules import their helpers the way pytest puts them on the path: from the first
    # directory above them without an __init__.py (``from tests import Mixin``, ``from . import``).
    graph = ImportGraph(co.c_dir, sorted({*roots, *(_basedir(co.c_dir, f) for f in tests)}))
    inheriting = {f for f in tests if changed & graph.edges(f)}
    return sorted(f for f in named | changed | inheriting if collected(f))


def _basedir(checkout: pathlib.Path, path: str) -> str:
    """The directory pytest's ``prepend`` import mode puts on ``sys.path`` for the test file
    ``path``: the first one above it that is not a package."""
    parts = path.split("/")[:-1]
    while parts and (checkout.joinpath(*parts) / "__init__.py").is_file():
        parts.pop()
    return "/".join(parts)


def collection(
    ladder: Ladder, tier: Tier, start: float, run: PytestRun, files: Sequence[str] | None
) -> list[str] | None:
    """The ids a grouped session on C collected (``files``: what it was given; None: the whole
    suite), or None when the tier already failed because they do not collect (recorded)."""
    co, sides = ladder.co, ladder.sides
    assert sides.plan is not None
    if run.content.collected is not None:
        return list(run.content.collected)
    what = "suite does not" if files is None else "test files (%s) do not" % ", ".join(files)
    # B only collects here (no test runs, so the baseline-replay ablation asks it too): a
    # collection that fails on both sides is the environment's, never the candidate's.
    b_tests = co.baseline_with_tests(sides.plan)
    on_b = sides.pytest(b_tests, None, answer=False, reruns=0, collect_only=True, files=files)
    if on_b.content.collected is not None:
        note = "the candidate's %s collect (pytest exit %d: %s); B's do" % (what, run.exit_code, run.said)
        ladder.tier(tier, TierStatus.FAILED, start, 0, 0, len(on_b.content.collected), note)
        return None
    # C's tests do not collect on B either: one of its test modules may end the collection.
    own = sides.pytest(co.b_dir, None, answer=False, reruns=0, collect_only=True)
    killers = [f for f in sorted(sides.plan.changed) if _kills_collection(ladder, f)]
    if own.content.collected is None or not killers:
        raise ToolFailed("pytest cannot collect the suite on B or on C (exit %d): %s" % (run.exit_code, run.said))
    named = (*ladder.invocation.reproducers, *ladder.invocation.expected_changes)
    _killed(ladder, tier, start, killers, named, run.exit_code)
    return None


def suite_collected(ladder: Ladder, start: float, run: PytestRun) -> bool:
    """The suite session collected (``ladder.collected``), and an empty collection says so;
    False when T4 already failed because the suite does not collect."""
    collected = collection(ladder, Tier.T4, start, run, None)
    if collected is None:
        return False
    ladder.collected = collected
    if not collected:
        ladder.evidence.detect([Detection(DetectionKind.EMPTY_COLLECTION, "the candidate's suite collects no test")])
    return True


def lost_tests(ladder: Ladder, start: float, run: PytestRun, suite: SuiteRun, diff: Diff) -> bool:
    """Whether T4 ended (recorded) because of tests C's collection lost. Like for like, B
    collects the whole suite with C's tests, as C did, when C's collection has errors or lacks
    tests of B's stored run: a test module erroring on C but not on B was broken by the
    candidate (``crash``, ``collection_error``: T4 fails, its passing tests would drop out of
    the suite unseen); a module erroring on B too, or only when collected alone, is the
    environment's -- unless B's own stored run passed tests under the erroring node (the module,
    or the class of it that errors) that C lacks: then C's tests break it (``not_collected``). A
    test B passed that C does not collect (a module-level skip on a changed flag, ``__test__``, a
    base gaining ``__init__``) is collected empty on C
    (``empty_collection``, ``not_collected``): nothing says it still passes -- unless C collects
    at least as many parametrizations of its function as B (ids made from values the fix
    changes: renamed, not dropped, ``judge.lost_from``; ``ladder.replaced`` keeps them, and what
    replaced them must not be silent, ``judge.silent_replacements``), or it is a doctest of a
    source file the candidate changed whose function or class is gone from it
    (``_doctests_kept``). When B cannot collect the suite at all, the loss cannot be judged: T4
    is inconclusive."""
    sides = ladder.sides
    assert sides.plan is not None
    on_c = set(ladder.collected)
    sources = {c.path for c in diff.files if c.kind is not FileKind.TEST}
    nodes = {n: f for n, f in run.content.collect_errors.items() if n not in ("", ".")}
    errored = {n.split("::", 1)[0]: f for n, f in nodes.items()}
    kept = _doctests_kept(ladder.co.c_dir)
    lost = set(judge.lost_from(suite.collected, on_c))
    gone = [t for t in suite.collected if t not in on_c and not any(holds(n, t) for n in nodes)]
    missing = {t for t in gone if t in lost and _passed(suite, t) and (t.split("::", 1)[0] not in sources or kept(t))}
    ladder.replaced = _replaced([t for t in gone if t not in lost and "[" in t], suite)
    if not errored and not missing:
        return False
    on_b = sides.pytest(ladder.co.baseline_with_tests(sides.plan), None, answer=False, reruns=0, collect_only=True)
    if on_b.content.collected is None:
        note = "C's collection lost tests of B's run, and B with the same tests does not collect (pytest exit %d: %s)"
        ladder.tier(
            Tier.T4, TierStatus.INCONCLUSIVE, start, 0, 0, len(ladder.collected), note % (on_b.exit_code, on_b.said)
        )
        return True
    b_errored = {n.split("::", 1)[0] for n in on_b.content.collect_errors}
    vanished: dict[str, list[str]] = {}
    for t in judge.lost_from(on_b.content.collected, on_c):
        if t in missing:
            vanished.setdefault(t.split("::", 1)[0], []).append(t)
    ladder.evidence.detect(
        Detection(
            DetectionKind.EMPTY_COLLECTION,
            "%d test(s) of %s that B collects with the same tests are not collected on C (%s): nothing says "
            "they still pass" % (len(ids), path, ", ".join(ids[:3]) + (", ..." if len(ids) > 3 else "")),
            path=path,
            detail="not_collected",
        )
        for path, ids in sorted(vanished.items())
    )
    # What an erroring node takes along: the tests under it that B's own run passed and C lacks --
    # all of a module's, none when only a class of it errors that held no test (a ``TestSuite``
    # imported from unittest, under ``filterwarnings = error``).
    passed_on_b = Counter(n for t in lost if _passed(suite, t) for n in nodes if holds(n, t))
    ladder.evidence.detect(
        Detection(
            DetectionKind.EMPTY_COLLECTION,
            "%s does not collect on C, nor on B with C's tests (%s); B's own run passed %d of its tests: the "
            "candidate's tests break it, and nothing says they still pass" % (n, nodes[n].message, passed_on_b[n]),
            path=n.split("::", 1)[0],
            detail="not_collected",
        )
        for n in sorted(nodes)
        if n.split("::", 1)[0] in b_errored and passed_on_b[n]
    )
    broken = [f for f in sorted(errored) if f not in b_errored]
    if not broken:
        return False
    ladder.evidence.detect(
        Detection(
            DetectionKind.CRASH,
            "%s does not collect on C (%s); it does on B with the same tests" % (f, errored[f].message),
            path=f,
            detail="collection_error",
        )
        for f in broken
    )
    note = "test module(s) %s do not collect on C; they do on B with the same tests" % ", ".join(broken)
    ladder.tier(Tier.T4, TierStatus.FAILED, start, 0, 0, len(ladder.collected), note)
    return True


def _passed(suite: SuiteRun, test_id: str) -> bool:
    """B's stored run passed it (or passed it at times): only then is there evidence to lose."""
    result = suite.results.get(test_id)
    return result is not None and result.outcome in judge.B_PASSING


def _replaced(renamed: Sequence[str], suite: SuiteRun) -> dict[str, judge.Replaced]:
    """The renamed parametrizations of each function, for ``judge.silent_replacements``."""
    by_function: dict[str, list[str]] = {}
    for t in renamed:
        by_function.setdefault(t.partition("[")[0], []).append(t)
    found = {}
    for fn, ids in by_function.items():
        passing = tuple(t for t in ids if _passed(suite, t))
        if passing:
            found[fn] = judge.Replaced(passing, sum(1 for t in ids if not _passed(suite, t)))
    return found


def _doctests_kept(c_dir: pathlib.Path) -> Callable[[str], bool]:
    """Whether a doctest of a changed source file tested something C still defines: then its
    examples were taken out of a docstring -- a test deleted, though not from a test file. A
    doctest whose function, class or file is gone went with the code (a text file's doctests,
    ``--doctest-glob``, are not judged: a document, not code)."""
    trees: dict[str, ast.Module | None] = {}

    def kept(test_id: str) -> bool:
        path, _, name = test_id.partition("::")
        if not path.endswith(".py"):
            return False
        if path not in trees:
            source = c_dir / path
            trees[path] = pyscan.parse(source.read_bytes()) if source.is_file() else None
        tree = trees[path]
        return tree is not None and pyscan.doctest_owner(tree, path, name)

    return kept


def tampered_collection(ladder: Ladder) -> None:
    """What a tampering was for: does the candidate's own tree, as submitted, collect anything?"""
    if ladder.evidence.has(DetectionKind.TAMPER):
        own = ladder.sides.pytest(ladder.co.submitted_dir, None, answer=False, reruns=0, collect_only=True)
        if not own.content.collected:
            message = "as submitted, the candidate's suite collects no test; the tiers ran the trusted tests"
            ladder.evidence.detect([Detection(DetectionKind.EMPTY_COLLECTION, message)])


def _unmatched(ladder: Ladder, run: PytestRun, unknown: Sequence[str], abnormal: bool) -> dict[str, str]:
    """What became of each named test C's collection does not list; returns the ones pytest's
    collection broke down before (a crash: T3 fails), ``spec -> why``.

    Its module (or its class) does not collect: it runs at T3 all the same, that collection
    error its outcome on each side (``ladder.uncollected``). The tested tree defines it and pytest did not
    collect it for an ordinary reason (a module-level skip, a name pytest does not collect): not
    evidence either way (``unrunnable_test``, ``not_collected``). Only the candidate's tree as
    submitted defines it: the reapplied trusted tests removed it (``reproducer_lost_to_tamper``).
    Nobody wrote it: the caller named a test that does not exist -- bad input.
    """
    co, broken = ladder.co, {}
    errored = [n for n in run.content.collect_errors if n not in ("", ".")]
    for spec in unknown:
        if any(holds(n, spec) for n in errored):
            ladder.uncollected.append(spec)
        elif _defines(ladder, co.tested, spec):
            if abnormal:
                broken[spec] = "the collection ended abnormally (pytest exit %d: %s)" % (run.exit_code, run.said)
            else:
                message = "defined but not collected by pytest (a module-level skip, or a name it does not collect)"
                ladder.evidence.detect(
                    [Detection(DetectionKind.UNRUNNABLE_TEST, message, spec, detail="not_collected")]
                )
        elif _defines(ladder, co.candidate, spec):
            message = (
                "%s is in the candidate's tree but not in the tests that ran: the trusted tests laid back over "
                "its tampered file removed it" % spec
            )
            ladder.evidence.detect(
                [Detection(DetectionKind.REPRODUCER_LOST_TO_TAMPER, message, spec, spec.split("::", 1)[0])]
            )
        else:
            raise BadInput("no collected test matches %s" % spec)
    return broken


def _kills_collection(ladder: Ladder, path: str) -> bool:
    """Whether collecting ``path`` alone ends pytest before it reports what it collected."""
    alone = ladder.sides.pytest(ladder.co.c_dir, [path], answer=False, reruns=0, collect_only=True)
    return alone.content.collected is None


def _killed(
    ladder: Ladder, tier: Tier, start: float, killers: Sequence[str], named: Sequence[str], exit_code: int
) -> None:
    """The tier fails: a test module of the candidate's ends pytest's collection (``os._exit``,
    ``SystemExit``, a segfault at import); a reproducer in it is a ``crash``, never an unknown id."""
    ladder.evidence.detect(
        Detection(DetectionKind.CRASH, "%s ends pytest's collection at import (exit %d)" % (f, exit_code), None, f)
        for f in killers
    )
    ladder.evidence.detect(
        Detection(DetectionKind.CRASH, "%s: its module ends pytest's collection at import" % s, s, s.split("::")[0])
        for s in named
        if s.split("::", 1)[0] in killers
    )
    note = "the candidate's test module(s) %s end pytest's collection at import (exit %d)" % (
        ", ".join(killers),
        exit_code,
    )
    ladder.tier(tier, TierStatus.FAILED, start, len(killers), 0, None, note)


def _defines(ladder: Ladder, commit: str, spec: str) -> bool:
    """Whether ``commit`` (the candidate as submitted, or as tested) defines the test ``spec`` names."""
    path, names = overlay.split_test_id(spec)
    try:
        tree = pyscan.parse(gitops.show(str(ladder.co.repo), commit, path))
    except EvidenceError:
        return False
    return tree is not None and bool(names) and names in pyscan.definitions(tree)


def _data(ladder: Ladder, spec: str) -> bool:
    """Whether ``spec`` (``path::NAME``) names what a test module binds at module level in the
    tree tested -- its tests' data, which ``--expected-change`` may declare changed (the
    integrity check) -- rather than a test."""
    path, names = overlay.split_test_id(spec)
    try:
        tree = pyscan.parse(gitops.show(str(ladder.co.repo), ladder.co.tested, path))
    except EvidenceError:
        return False
    return tree is not None and len(names) == 1 and names[0] in pyscan.bindings(pyscan.module_level(tree))


def authored(ladder: Ladder) -> Callable[[str], bool]:
    """Whether the candidate itself added or changed a test, in the tree it submitted.

    The trusted tests laid over the candidate (``--tests-from``) run, but they are the harness's
    tests, not the candidate's evidence: a fix that brings no test of its own has no reproducer
    unless the harness designates one (``--reproducer``).
    """
    co = ladder.co
    blobs = gitops.blobs(str(co.repo), co.candidate)

    def read(path: str) -> bytes | None:
        return gitops.git(["cat-file", "blob", blobs[path]], cwd=str(co.repo)).stdout if path in blobs else None

    plan = overlay.plan_between(str(co.repo), co.baseline, co.candidate, ladder.test_modules)
    own = overlay.OriginResolver(str(co.repo), plan, "", read)
    return lambda test_id: own.origin(test_id) in (Origin.ADDED, Origin.CHANGED)


def reproducers(
    ladder: Ladder, diff: Diff, resolver: overlay.OriginResolver, baseline: Callable[[], SuiteRun | None]
) -> None:
    """T3, in a grouped session on C that collects ``t3_files`` only, and one on B beside it,
    both with the referee's marks changed (``Sides.first_box``): the first of C's code to run.
    ``baseline`` gives B's stored suite run, asked for only for declared expected changes."""
    start = ladder.enter(Tier.T3)
    invocation, sides = ladder.invocation, ladder.sides
    tampered_collection(ladder)
    files = t3_files(ladder)
    if not files:
        for spec in invocation.reproducers:  # its file is none the suite collects: no such test
            raise BadInput("no collected test matches %s" % spec)
        ladder.tier(Tier.T3, TierStatus.INCONCLUSIVE, start, 0, 0, None, no_reproducer(ladder, diff))
        return
    resolver.read_ahead(files)  # before T3's processes run anything: the texts the origins are judged from
    with contextlib.ExitStack() as sessions:
        session = sessions.enter_context(sides.first_session("C", files))
        # B's process starts and collects beside C's (``Sides.all_collected``): its tests wait for
        # C's groups (through the one that falsified the patch, if one did), and a T3 that ends
        # before B's turn ends B's process unused.
        b_session = sessions.enter_context(sides.first_session("B", files)) if sides.replayed else None
        resolver.parse_ahead()  # while the processes start and collect: their tests wait for none of it
        try:
            view = session.collected()
            abnormal = False
        except SessionEnded as ended:
            view, abnormal = ended.run, True
        c_suite = collection(ladder, Tier.T3, start, view, files)
        if c_suite is None:
            sides.checked(session.close(), ladder.co.c_dir, answer=False)
            return
        ladder.collected = c_suite
        named = (*invocation.reproducers, *(s for s in invocation.expected_changes if not _data(ladder, s)))
        broken = _unmatched(ladder, view, [s for s in named if not matches([s], c_suite)], abnormal)
        if broken:
            # pytest's collection ended early, before the reproducer: it crashed there.
            ladder.evidence.detect(
                Detection(DetectionKind.CRASH, "%s does not collect on C: %s" % (s, m), s, s.split("::", 1)[0])
                for s, m in broken.items()
            )
            note = "".join("reproducer %s does not collect on C (%s); " % i for i in broken.items()).rstrip("; ")
            ladder.tier(Tier.T3, TierStatus.FAILED, start, len(broken), 0, None, note)
            sides.checked(session.close(), ladder.co.c_dir, answer=False)
            return
        chosen = _chosen(ladder, resolver, c_suite)
        if not chosen.ids:
            sides.checked(session.close(), ladder.co.c_dir)
            note = no_reproducer(ladder, diff, view.content.collect_errors)
            ladder.tier(Tier.T3, TierStatus.INCONCLUSIVE, start, 0, 0, None, note)
            return
        groups = _groups(chosen)
        sides.all_collected([] if b_session is None else [b_session])  # before C's first group starts
        session.plan(groups)
        b_collected = set(b_session.view().content.collected or ()) if b_session is not None else set(c_suite)
        c_session = None if abnormal else session
        falsified = _first_runs(ladder, c_session, b_session, groups, chosen, b_collected)
        c_run = sides.checked(session.close(), ladder.co.c_dir)
        b_run = None if b_session is None else sides.checked(b_session.close(), sides.b_dir)
    cut = ""
    if falsified is not None and not invocation.full:
        ran = chosen.up_to([t for group in groups[: falsified + 1] for t in group])
        unrun, watched = len(chosen.ids) - len(ran.ids), len(chosen.watched) - len(ran.watched)
        among = " (%d reproducer(s) or expected change(s) among them)" % watched if watched else ""
        cut = "the %d other test(s) of the changed files did not run%s" % (unrun, among) if unrun else ""
        chosen = ran
    _judge(ladder, diff, start, chosen, files, resolver, c_run, b_run, baseline, steady=falsified is None, cut=cut)


def _first_runs(
    ladder: Ladder,
    c: GroupedSession | None,
    b: GroupedSession | None,
    groups: Sequence[Sequence[str]],
    chosen: _Chosen,
    b_collected: Collection[str],
) -> int | None:
    """T3's first runs, group by group: C's group, and -- when a watched test of it falsified the
    patch on C (``judge.falsifying``) -- B's groups through the same one, and then the question
    again (a reproducer flaky on B is quarantined on C too). The number of the group that
    falsified the patch, both sides having run through it and no further (no stability runs
    then: ``_judge``); None when none did, every group having run on each side whose process
    still lived. C runs its groups before B runs any: one process's tests at a time. ``c`` None:
    C's process ended while it collected, and B runs every group. Under ``--full`` every group
    runs on each side all the same (the climb goes on, and the tests a cut left out would reach
    T4-T7 without their T3 roles); the number is still the falsifying group's.

    When nothing falsified the patch, B runs after C knowing that the stability runs will repeat
    each fresh test C ran (``_judge``): those are run ``once`` on B, their failure -- what a
    reproducer does on B -- not rerun in process, as in the further runs (``Sides.steady``)."""
    sides, wanted = ladder.sides, set(chosen.watched)
    falsified: int | None = None
    b_ran = 0  # B's groups run so far
    view: PytestRun | None = None  # C's, at its last barrier

    def b_through(last: int, once: Sequence[str] = ()) -> None:
        nonlocal b_ran
        while b is not None and b_ran <= last and (b_ran == 0 or b.final is None):
            if b_ran == 0:
                sides.first_group(b, groups, "B", once)
            else:
                sides.group(b, b_ran, "B")
            b_ran += 1

    for number, group in enumerate(groups):
        if c is None or (number > 0 and c.final is not None):  # C's process ended: no group runs there
            break
        view = sides.group(c, number, "C")
        suspects = [t for t in group if t in wanted and judge.falsifying(view.observation(t), sides.held, b_collected)]
        if suspects and falsified is None:
            b_through(number)
            if any(judge.falsifying(view.observation(t), sides.held, b_collected) for t in suspects):
                falsified = number
                if not ladder.invocation.full:
                    return number
    b_through(len(groups) - 1, chosen.fresh(view) if view is not None and _steadied(ladder, falsified is None) else ())
    return falsified


def _steadied(ladder: Ladder, steady: bool) -> bool:
    """Whether T3's fresh tests get stability runs: when the first runs falsified nothing
    (``steady``) and more than one run per side is asked for."""
    return steady and ladder.invocation.stability_runs > 1


def _silenced_on_both(ladder: Ladder, typed: Typed, baseline: Callable[[], SuiteRun | None], size: int) -> None:
    """T3's B runs with C's tests, so a test the changed file itself silences (setting the flag
    its neighbour's ``skipif`` reads) is skipped on both sides; B's own full run says whether it
    passed before (``judge.Confirmation.silenced_on_both``). Asked once T3 passed: B's suite run
    is what T4 reads next anyway."""
    both = [r for r in typed.results if r.candidate_result in judge.C_SILENT and r.baseline_result in judge.C_SILENT]
    suite = baseline() if both else None
    if suite is None:
        return
    for r in both:
        full = suite.results.get(r.test_id)
        confirmed = judge.Confirmation(None if full is None else full.outcome, r.baseline_result, size, silent=True)
        ladder.evidence.detect(confirmed.lost(r.test_id, typed.annotations[r.test_id].origin))


#: At most this many of T3's groups end at a reproducer. Each barrier is a round trip between
#: the runner and the process, and a copy of everything the stream said so far (results of
#: thousands of tests): a candidate changing hundreds of test files would otherwise pay for
#: hundreds of them.
MOST_GROUPS = 8


def _groups(chosen: _Chosen) -> list[list[str]]:
    """T3's run order in groups: through the last reproducer or expected change of one test
    file, then through the last of the next file, and so on, then the rest of the changed files'
    tests. The order is the selection's own, unchanged (a test may depend on what ran before it);
    a barrier after each lets a patch its reproducers falsify stop there, on both sides, without
    running the tests after them: a no-fix whose first changed test file holds a failing
    reproducer pays for that file's tests only. Past ``MOST_GROUPS`` files, the rest of them up
    to the last reproducer are one group."""
    watched = set(chosen.watched)
    last = {t.split("::", 1)[0]: i for i, t in enumerate(chosen.ids) if t in watched}
    ends = sorted(set(last.values()))
    if len(ends) > MOST_GROUPS:  # the first files' barriers, then one through the last reproducer
        ends = [*ends[: MOST_GROUPS - 1], ends[-1]]
    groups: list[list[str]] = []
    start = 0
    for end in ends:
        groups.append(chosen.ids[start : end + 1])
        start = end + 1
    rest = chosen.ids[start:]
    return [*groups, rest] if rest else groups


@dataclass(frozen=True)
class _Chosen:
    """T3's selection: what runs, and what each test is to it."""

    ids: list[str]
    designated: list[str]
    expected: list[str]
    new: list[str]  # added or changed tests, not declared expected changes
    chosen: list[str]  # the reproducers: the designated ones, else the candidate's own new tests

    @property
    def watched(self) -> list[str]:
        """The tests whose failure on C fails T3 whatever B says: reproducers, expected changes."""
        return [*self.chosen, *self.expected]

    def fresh(self, c_run: PytestRun) -> list[str]:
        """The tests whose evidence counts only once stable: each designated or new one C ran."""
        counted = {*self.designated, *self.new}
        return [t for t in self.ids if t in counted and c_run.observation(t) is not None]

    def up_to(self, ran: Sequence[str]) -> _Chosen:
        """This selection cut to the tests that ran (``ran``: a prefix of ``ids``), when the
        reproducers falsified the patch before the rest ran."""
        keep = set(ran)

        def kept(ids: list[str]) -> list[str]:
            return [t for t in ids if t in keep]

        return _Chosen(list(ran), kept(self.designated), kept(self.expected), kept(self.new), kept(self.chosen))


def _chosen(ladder: Ladder, resolver: overlay.OriginResolver, c_suite: Sequence[str]) -> _Chosen:
    invocation, plan = ladder.invocation, ladder.sides.plan
    assert plan is not None
    designated = matches(invocation.reproducers, c_suite) + [
        s for s in invocation.reproducers if s in ladder.uncollected
    ]
    expected = matches(invocation.expected_changes, c_suite)
    expected += [s for s in invocation.expected_changes if s in ladder.uncollected]
    # Tests in changed test files, and tests that inherit a method a changed file defines:
    # their B result must come from B with C's test files, not from B's own suite.
    in_changed_files = [
        t
        for t in c_suite
        if t.split("::", 1)[0] in plan.changed or resolver.origin(t) in (Origin.ADDED, Origin.CHANGED)
    ]
    ids = list(dict.fromkeys([*designated, *expected, *in_changed_files]))
    new = [t for t in in_changed_files if resolver.origin(t) in (Origin.ADDED, Origin.CHANGED) and t not in expected]
    mine = authored(ladder)
    return _Chosen(ids, designated, expected, new, designated or [t for t in new if mine(t)])


def _judge(
    ladder: Ladder,
    diff: Diff,
    start: float,
    chosen: _Chosen,
    files: Sequence[str],
    resolver: overlay.OriginResolver,
    c_run: PytestRun,
    b_run: PytestRun | None,
    baseline: Callable[[], SuiteRun | None],
    steady: bool,
    cut: str = "",
) -> None:
    """T3's status from the reproducers' runs on C and on B (None: baseline replay ablated), each
    steadied when new (and ``steady``). ``cut``: what of the selection did not run, the patch
    falsified before it ("" when everything ran)."""
    invocation, sides = ladder.invocation, ladder.sides
    ids, designated, expected, new = chosen.ids, chosen.designated, chosen.expected, chosen.new
    # New evidence counts only once it is stable: each new or designated test runs again on each side.
    fresh = chosen.fresh(c_run)
    if fresh and _steadied(ladder, steady):
        # T3 passes now unless a further run disagrees: C's T4-T7 session starts with them.
        session = sides.suite_ahead()
        sides.steady(ids, files, fresh, c_run, b_run, beside=[session], then=lambda: ahead.start(ladder, diff, session))
    ladder.measure_baseline()
    b_obs: dict[str, Observation | None] | None = None
    if b_run is not None:
        b_obs = {t: b_run.observation(t) for t in ids}
        # A declared change is compared with the test B had, from B's suite run -- unless it is
        # designated too: a strengthened test that shows the bug is judged as C has it, on B.
        judged_as_b_had = [t for t in expected if t not in designated]
        if judged_as_b_had:
            suite = baseline()
            b_obs.update({t: None if suite is None else suite.results.get(t) for t in judged_as_b_had})
    typed, not_run, unstable = sides.type(
        ids, c_run, b_obs, resolver.origin, designated=designated, expected=expected, exclusive=bool(designated)
    )
    ladder.evidence.add(typed.results, typed.annotations, typed.detections)
    reproducing = chosen.chosen
    if not designated:  # a changed test of the candidate's that passes on B guards behaviour: not a reproducer
        regression = {r.test_id for r in typed.results if r.role is Role.REGRESSION}
        reproducing = [t for t in reproducing if t not in regression]
    lacking = judge.unrunnable(typed, reproducing, owns(ladder))
    ladder.evidence.detect(
        Detection(DetectionKind.UNRUNNABLE_TEST, UNRUNNABLE[why], t, detail=why) for t, why in lacking.items()
    )
    reproducing = [t for t in reproducing if t not in lacking]
    blind.scan(ladder, diff, [r.test_id for r in typed.results if r.bug_discriminating and r.test_id in reproducing])
    unrun = judge.unrun(not_run, c_run.budget_exhausted, sides.sandbox.tier_budget, c_run.exit_code)
    judged = judge.reproducer_tier(typed, reproducing, expected, fresh, ablation.bare(invocation))
    # Falsified (no stability runs then): T3 fails whatever else did not run after it.
    status, note = judged if not steady and judged[0] is TierStatus.FAILED else unrun or judged
    if status is TierStatus.PASSED:
        _silenced_on_both(ladder, typed, baseline, len(ids))
    if not reproducing and new and status is TierStatus.INCONCLUSIVE:
        note = (
            "no reproducer: the candidate added or changed no test; the %d new test(s) of the trusted tests ran "
            "and are recorded, and count as evidence only when designated with --reproducer" % len(new)
        )
    if cut:
        note += "; %s: the reproducers falsified the patch" % cut
    ladder.tier(
        Tier.T3,
        status,
        start,
        len(ids),
        len(ids) - len(not_run) - len(unstable),
        None,
        note,
        not_run=[*not_run, *unstable],
        group=("reproducers", 0),
    )
