"""The ladder at the price of one pytest run: which processes a climb starts, and what each collects.

End to end on real git repositories made in a temp dir, with every pytest process the runner
starts observed (``PytestProcess``): a falsified patch never collects the suite, an honest one
collects it once on C, and the record carries each tier's group and every test's selection reason.
"""

from __future__ import annotations

import pathlib
from collections.abc import Sequence
from typing import Any

import jsonschema
import pytest
from conftest import FIX, PKG, Repo, certify

from runner import pytest_run
from runner.ladder.reproduce import MOST_GROUPS, _Chosen, _groups
from runner.ladder.sides import alone, through
from runner.pytest_session import GroupedSession

#: A suite with tests the fix cannot reach, so T5 has something to leave out.
UNRELATED = "def test_unrelated():\n    assert sum([1, 2]) == 3\n"


@pytest.fixture
def processes(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every pytest process the runner starts: its checkout, the files it collects, its options."""
    started: list[dict[str, Any]] = []
    real = pytest_run.PytestProcess.__init__

    def spied(self: pytest_run.PytestProcess, *args: Any, **kwargs: Any) -> None:
        launch: pytest_run.Launch = args[3] if len(args) > 3 else kwargs["launch"]
        started.append(
            {"checkout": args[1], "files": launch.files, "extra": list(launch.extra), "reruns": launch.reruns}
        )
        real(self, *args, **kwargs)

    monkeypatch.setattr(pytest_run.PytestProcess, "__init__", spied)
    return started


@pytest.mark.parametrize(
    "args",
    [(), ("--pytest-arg=tests",), ("--pytest-arg=--tb", "--pytest-arg=short", "--pytest-arg=tests/")],
    ids=["no-arguments", "the-suite-named", "the-suite-named-after-a-valued-option"],
)
def test_a_patch_falsified_at_t3_never_collects_the_suite(
    repo: Repo, tmp_path: pathlib.Path, schema: dict[str, Any], processes: list[dict[str, Any]], args: tuple[str, ...]
) -> None:
    """Not even when the operator's pytest arguments name the whole suite, as ``pytest tests``
    does: the sessions collect the reproducers' files only (``--evidence-collect``)."""
    base = repo.commit({**PKG, "tests/test_other.py": UNRELATED})
    no_fix = repo.commit({"tests/test_half.py": FIX["tests/test_half.py"]})  # the test, not the fix
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", no_fix, *args)
    assert doc is not None and code == 1
    jsonschema.validate(doc, schema)
    assert doc["verdict"]["verdict"] == "REJECTED" and doc["verdict"]["halted_at"] == "T3"
    assert processes, "T3 ran the reproducer"
    assert all(p["files"] == ["tests/test_half.py"] for p in processes), processes
    assert doc["collected"] == 1 and doc["baseline_run"] is None  # B's suite was never needed
    t3 = next(t for t in doc["tiers"] if t["tier"] == "T3")
    assert t3["group"] == {"session": "reproducers", "group": 0} and t3["suite_size"] is None


#: The fix's reproducer, noting each time it runs what ``half(4)`` gave: 3 on B, 2 on C.
COUNTED_HALF = """from calc.ops import half


def test_half():
    with open(%r, "a") as fh:
        fh.write("%%d\\n" %% half(4))
    assert half(4) == 2
"""


def test_stability_runs_repeat_the_reproducers_without_rerunning_failures_in_process(
    repo: Repo, tmp_path: pathlib.Path, processes: list[dict[str, Any]]
) -> None:
    """A failing reproducer on B is what a real fix's B looks like. The further stability runs
    are themselves the repeats: they rerun no failure in process, and neither does B's first run
    for the tests they will repeat (C's first run has shown nothing falsifies the patch)."""
    ran = tmp_path / "ran.txt"
    base = repo.commit({**PKG, "tests/test_other.py": UNRELATED})
    fix = repo.commit({**FIX, "tests/test_half.py": COUNTED_HALF % str(ran)})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", fix, "--reruns", "2")
    assert doc is not None and code == 0, doc and doc["verdict"]
    t3 = [p for p in processes if "--collect-only" not in p["extra"] and p["files"] == ["tests/test_half.py"]]
    # C's and B's first T3 sessions, then two more per side (--stability-runs 3, the default)
    assert [p["reruns"] for p in t3] == [2, 2, 0, 0, 0, 0], t3
    assert sorted(ran.read_text().split()) == ["2"] * 3 + ["3"] * 3  # three runs a side, one attempt each
    half = next(r for r in doc["results"] if r["test_id"] == "tests/test_half.py::test_half")
    assert (half["baseline_result"], half["candidate_result"]) == ("fail", "pass"), half  # steady on both sides


def test_a_reproducer_failing_on_c_in_every_attempt_is_refuted_by_two_runs(
    repo: Repo, tmp_path: pathlib.Path, schema: dict[str, Any], processes: list[dict[str, Any]]
) -> None:
    """No stability runs for a refutation: the reproducer failed on C in each of its attempts, so
    T3 fails whatever further runs would say."""
    base = repo.commit({**PKG, "tests/test_other.py": UNRELATED})
    no_fix = repo.commit({"tests/test_half.py": FIX["tests/test_half.py"]})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", no_fix, "--reruns", "2")
    assert doc is not None and code == 1
    jsonschema.validate(doc, schema)
    assert doc["verdict"]["verdict"] == "REJECTED" and doc["verdict"]["halted_at"] == "T3"
    runs = [p for p in processes if "--collect-only" not in p["extra"]]
    assert [p["reruns"] for p in runs] == [2, 2], runs  # C, then B, each with the flake policy's reruns
    half = next(r for r in doc["results"] if r["test_id"] == "tests/test_half.py::test_half")
    assert (half["baseline_result"], half["candidate_result"]) == ("fail", "fail"), half
    assert doc["annotations"]["tests/test_half.py::test_half"]["bc_class"] == "no-fix"
    t3 = next(t for t in doc["tiers"] if t["tier"] == "T3")
    assert t3["status"] == "failed" and "no-fix" in t3["note"], t3


class Conversation:
    """What the runner says to each grouped session, in order (``said``): ``("start", session,
    -1)``, ``("collected", session, -1)`` once it knows the session collected, then ``("run",
    session, group)`` as it asks for a group and ``("barrier", session, group)`` once the group is
    over; ``sessions`` in the order they started."""

    def __init__(self) -> None:
        self.said: list[tuple[str, int, int]] = []
        self.sessions: list[GroupedSession] = []
        self.files: list[Sequence[str] | None] = []  # what each collects (None: the whole suite)


@pytest.fixture
def conversation(monkeypatch: pytest.MonkeyPatch) -> Conversation:
    seen = Conversation()
    real_init, real_collected, real_group = GroupedSession.__init__, GroupedSession.collected, GroupedSession.group

    def init(self: GroupedSession, *args: Any, **kwargs: Any) -> None:
        real_init(self, *args, **kwargs)
        seen.sessions.append(self)
        seen.files.append(args[2] if len(args) > 2 else kwargs["files"])
        seen.said.append(("start", len(seen.sessions) - 1, -1))

    def collected(self: GroupedSession) -> pytest_run.PytestRun:
        view = real_collected(self)
        event = ("collected", seen.sessions.index(self), -1)
        if event not in seen.said:
            seen.said.append(event)
        return view

    def group(self: GroupedSession, number: int) -> pytest_run.PytestRun:
        seen.said.append(("run", seen.sessions.index(self), number))
        try:
            return real_group(self, number)
        finally:
            seen.said.append(("barrier", seen.sessions.index(self), number))

    monkeypatch.setattr(GroupedSession, "__init__", init)
    monkeypatch.setattr(GroupedSession, "collected", collected)
    monkeypatch.setattr(GroupedSession, "group", group)
    return seen


def test_b_collects_beside_c_and_runs_its_tests_only_once_c_is_at_its_barrier(
    repo: Repo, tmp_path: pathlib.Path, conversation: Conversation
) -> None:
    """B's T3 process starts with C's, so the two starts and collections overlap; C's first group
    runs once both collected, B's once C's reached its barrier: no test runs beside another
    process's tests or collection (a port or a file the sides share sees one side at a time)."""
    base = repo.commit({**PKG, "tests/test_other.py": UNRELATED})
    no_fix = repo.commit({"tests/test_half.py": FIX["tests/test_half.py"]})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", no_fix)
    assert doc is not None and code == 1 and doc["verdict"]["halted_at"] == "T3", doc and doc["verdict"]
    said = conversation.said
    # T3's sessions are the first two: C's, then B's, both started before any test ran
    assert said[:2] == [("start", 0, -1), ("start", 1, -1)], said
    assert said.index(("collected", 1, -1)) < said.index(("run", 0, 0)), said
    assert said.index(("barrier", 0, 0)) < said.index(("run", 1, 0)), said


def test_further_stability_runs_start_together_and_run_their_tests_one_at_a_time(
    repo: Repo, tmp_path: pathlib.Path, conversation: Conversation
) -> None:
    """The further runs of a new test (two per side by default) are four processes: they start
    and collect together -- with C's T4-T7 session, which T3's first runs did not rule out -- and
    once all five collected each further run runs its tests in turn, in the schedule's order, its
    process ended before the next begins; T4 comes after."""
    base = repo.commit({**PKG, "tests/test_other.py": UNRELATED})
    fix = repo.commit(FIX)
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", fix)
    assert doc is not None and code == 0, doc and doc["verdict"]
    said = conversation.said
    suite, further = 2, range(3, 7)  # after T3's first sessions on C and B
    assert len(conversation.sessions) == 7, said
    assert conversation.files[suite] is None  # the whole suite: T4-T7's
    first_test = said.index(("run", 3, 0))
    assert all(said.index(("start", k, -1)) < first_test for k in (suite, *further)), said
    assert all(said.index(("collected", k, -1)) < first_test for k in (suite, *further)), said
    turns = [e for e in said[first_test:] if e[1] in further]
    assert turns == [("run", k, 0) if i % 2 == 0 else ("barrier", k, 0) for k in further for i in range(2)], said
    assert said.index(("barrier", 6, 0)) < said.index(("run", suite, 0)), said
    assert all(s.process.proc.poll() is not None for s in conversation.sessions)


def test_a_suite_session_started_ahead_ends_with_a_climb_t3_halts(
    repo: Repo, tmp_path: pathlib.Path, conversation: Conversation
) -> None:
    """A new test that passes on C in its first run and fails in a further one is flaky: T3 is
    inconclusive, the climb halts, and C's T4-T7 session, started with the further runs, ran no
    test and is gone."""
    base = repo.commit({**PKG, "tests/test_other.py": UNRELATED})
    counter = tmp_path / "runs"
    flaky = (  # on C (where half is fixed), it fails its second run only
        "import pathlib\nfrom calc.ops import half\n\n\ndef test_half():\n"
        "    assert half(4) == 2\n    seen = pathlib.Path(%r)\n"
        "    seen.write_text(seen.read_text() + 'x' if seen.exists() else 'x')\n"
        "    assert seen.read_text() != 'xx'\n" % str(counter)
    )
    cand = repo.commit({**FIX, "tests/test_half.py": flaky})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand, "--reruns", "0")
    assert doc is not None and code == 3 and doc["verdict"]["verdict"] == "INCONCLUSIVE", doc and doc["verdict"]
    assert doc["verdict"]["halted_at"] == "T3", doc["verdict"]
    t3 = next(t for t in doc["tiers"] if t["tier"] == "T3")
    assert "flaky" in t3["note"], t3
    said = conversation.said
    assert conversation.files[2] is None  # T4-T7's, started ahead
    assert not [e for e in said if e[1] == 2 and e[0] in ("run", "barrier")], said
    assert all(s.process.proc.poll() is not None for s in conversation.sessions)


def test_a_t3_that_ends_before_b_s_turn_leaves_no_process_behind(
    repo: Repo, tmp_path: pathlib.Path, conversation: Conversation
) -> None:
    """A reproducer that matches no collected test is bad input, found once C collected: B's
    process, started beside C's, ran no test and is gone with it."""
    base = repo.commit({**PKG, "tests/test_other.py": UNRELATED})
    fix = repo.commit(FIX)
    code, doc = certify(
        repo, tmp_path / "e.json", "--baseline", base, "--candidate", fix, "--reproducer", "tests/test_half.py::nope"
    )
    assert (code, doc) == (2, None)
    assert [e for e in conversation.said if e[0] != "collected"] == [("start", 0, -1), ("start", 1, -1)]
    assert all(s.process.proc.poll() is not None for s in conversation.sessions)


#: The changed test file: the reproducer first, then a test it does not change.
HALF_THEN_DOUBLE = (
    "from calc.ops import double, half\n\n\ndef test_half():\n    assert half(4) == 2\n\n\n"
    "def test_double():\n    assert double(2) == 4\n"
)


@pytest.mark.parametrize("fixed", [False, True], ids=["no-fix", "honest-fix"])
def test_the_tests_after_the_last_reproducer_run_only_once_it_did_not_falsify_the_patch(
    repo: Repo, tmp_path: pathlib.Path, schema: dict[str, Any], processes: list[dict[str, Any]], fixed: bool
) -> None:
    """T3 runs the changed files' tests in their own order, in two groups on each side: up to the
    last reproducer, then the rest. A patch its reproducers falsify stops at the barrier, so it
    pays for them only; any other goes on, in the same process, to the rest."""
    base = repo.commit(PKG)
    change = {"tests/test_ops.py": HALF_THEN_DOUBLE, **({"calc/ops.py": FIX["calc/ops.py"]} if fixed else {})}
    cand = repo.commit(change)
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand, "--stability-runs", "1")
    assert doc is not None and code == (0 if fixed else 1), doc and doc["verdict"]
    jsonschema.validate(doc, schema)
    t3 = next(t for t in doc["tiers"] if t["tier"] == "T3")
    sessions = [p for p in processes if p["files"] == ["tests/test_ops.py"] and "--collect-only" not in p["extra"]]
    assert len(sessions) == 2, sessions  # one on C, one on B, each with both groups if any
    results = {r["test_id"]: r for r in doc["results"]}
    double = results.get("tests/test_ops.py::test_double")
    half = results["tests/test_ops.py::test_half"]
    if fixed:
        assert doc["verdict"]["verdict"] == "CERTIFIED" and t3["selected"] == 2, t3
        assert (half["baseline_result"], half["candidate_result"]) == ("fail", "pass")
        assert double is not None and (double["baseline_result"], double["candidate_result"]) == ("pass", "pass")
    else:
        assert (doc["verdict"]["verdict"], doc["verdict"]["halted_at"]) == ("REJECTED", "T3")
        assert t3["selected"] == 1 and "the 1 other test(s) of the changed files did not run" in t3["note"], t3
        assert (half["baseline_result"], half["candidate_result"]) == ("fail", "fail")
        assert double is None  # run on neither side


#: A second changed test file, after ``tests/test_half.py`` in collection order, with a new test.
LATER_FILE = {"tests/test_later.py": "from calc.ops import double\n\n\ndef test_triple():\n    assert double(3) == 6\n"}


@pytest.mark.parametrize("fixed", [False, True], ids=["no-fix", "honest-fix"])
def test_a_reproducer_that_falsifies_the_patch_stops_t3_before_the_next_changed_file(
    repo: Repo, tmp_path: pathlib.Path, schema: dict[str, Any], processes: list[dict[str, Any]], fixed: bool
) -> None:
    """T3's groups end at each changed test file's last reproducer: a reproducer of the first
    file that fails on C in every attempt stops both sides there, so the next file's tests -- a
    new test among them -- run on neither side; a patch they do not falsify runs them all."""
    base = repo.commit(PKG)
    change = {"tests/test_half.py": FIX["tests/test_half.py"], **LATER_FILE}
    cand = repo.commit({**change, **({"calc/ops.py": FIX["calc/ops.py"]} if fixed else {})})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand, "--stability-runs", "1")
    assert doc is not None and code == (0 if fixed else 1), doc and doc["verdict"]
    jsonschema.validate(doc, schema)
    t3 = next(t for t in doc["tiers"] if t["tier"] == "T3")
    files = ["tests/test_half.py", "tests/test_later.py"]
    sessions = [p for p in processes if p["files"] == files and "--collect-only" not in p["extra"]]
    assert len(sessions) == 2, sessions  # one on C, one on B: the groups are barriers in each
    results = {r["test_id"]: r for r in doc["results"]}
    triple = results.get("tests/test_later.py::test_triple")
    assert results["tests/test_half.py::test_half"]["candidate_result"] == ("pass" if fixed else "fail")
    if fixed:
        assert doc["verdict"]["verdict"] == "CERTIFIED" and t3["selected"] == 2, t3
        assert triple is not None and (triple["baseline_result"], triple["candidate_result"]) == ("pass", "pass")
    else:
        assert (doc["verdict"]["verdict"], doc["verdict"]["halted_at"]) == ("REJECTED", "T3")
        assert t3["selected"] == 1, t3
        assert "the 1 other test(s) of the changed files did not run (1 reproducer(s)" in t3["note"], t3
        assert triple is None  # run on neither side


def test_under_full_a_falsified_t3_still_runs_every_changed_file_on_both_sides(
    repo: Repo, tmp_path: pathlib.Path
) -> None:
    """``--full`` climbs on: the tests a cut would leave out would reach T4-T7 without their T3
    roles, so every group runs on each side, and T3 still fails on the first file's reproducer."""
    base = repo.commit(PKG)
    cand = repo.commit({"tests/test_half.py": FIX["tests/test_half.py"], **LATER_FILE})
    args = ("--full", "--stability-runs", "1")
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand, *args)
    assert doc is not None and code == 1, doc and doc["verdict"]
    t3 = next(t for t in doc["tiers"] if t["tier"] == "T3")
    assert t3["status"] == "failed" and t3["selected"] == 2 and "did not run" not in t3["note"], t3
    triple = {r["test_id"]: r for r in doc["results"]}["tests/test_later.py::test_triple"]
    assert (triple["baseline_result"], triple["candidate_result"]) == ("pass", "pass")


def test_t3_has_a_barrier_after_each_of_the_first_changed_files_and_a_bounded_number_in_all() -> None:
    """Each barrier reads the whole stream again: past ``MOST_GROUPS`` files, one group runs
    through the last reproducer, then the rest."""
    files = ["tests/test_%02d.py" % n for n in range(12)]
    ids = [f + "::" + name for f in files for name in ("test_new", "test_old")]
    new = [t for t in ids if t.endswith("test_new")]
    groups = _groups(_Chosen(ids, [], [], new, new))
    assert len(groups) == MOST_GROUPS + 1 and [t for g in groups for t in g] == ids  # same order, nothing left out
    assert [g[-1] for g in groups[: MOST_GROUPS - 1]] == new[: MOST_GROUPS - 1]  # the first files' ends
    assert groups[MOST_GROUPS - 1][-1] == new[-1] and groups[-1] == [ids[-1]]


#: A reproducer that fails without the fix, then a new test that never ends, then another.
HALF_THEN_STUCK = (
    "import time\n\nfrom calc.ops import half\n\n\ndef test_half():\n    assert half(4) == 2\n\n\n"
    "def test_stuck():\n    time.sleep(600)\n\n\ndef test_after():\n    assert half(2) == 1\n"
)


def test_a_falsified_patch_is_rejected_even_when_the_budget_ran_out_later_in_its_group(
    repo: Repo, tmp_path: pathlib.Path
) -> None:
    """The reproducer failed in every attempt on C and on B: T3 fails whatever did not run after
    it -- here a test that never ends, killed at the tier's budget, and one after it -- where the
    unrun tests used to make it INCONCLUSIVE."""
    base = repo.commit(PKG)
    cand = repo.commit({"tests/test_half.py": HALF_THEN_STUCK})
    args = ("--tier-budget", "4", "--test-timeout", "0", "--stability-runs", "1")
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand, *args)
    assert doc is not None and code == 1, doc and doc["verdict"]
    assert (doc["verdict"]["verdict"], doc["verdict"]["halted_at"]) == ("REJECTED", "T3")
    t3 = next(t for t in doc["tiers"] if t["tier"] == "T3")
    assert t3["status"] == "failed" and "tests/test_half.py::test_half" in t3["note"], t3
    assert "tests/test_half.py::test_after" in t3["not_run"], t3


def logged(log: pathlib.Path, name: str, body: str = "assert double(2) == 4") -> str:
    """A test that notes each run in ``log``: its name, and whether T3 (``--evidence-collect``)
    or the suite session ran it."""
    return (
        "\n\ndef %s():\n    import sys\n"
        "    where = 'T3' if any(a.startswith('--evidence-collect') for a in sys.argv) else 'suite'\n"
        "    open(%r, 'a').write('%s-' + where + '\\n')\n    %s\n" % (name, str(log), name, body)
    )


@pytest.mark.parametrize(
    ("fresh", "apart", "in_order"),
    [
        ({"b"}, ["b", "c"], ["a", "b", "c"]),
        ({"b", "c"}, ["b", "c", "d"], ["a", "b", "c", "d"]),
        ({"a", "d"}, ["a", "b", "d", "e"], ["a", "b", "c", "d", "e"]),
        ({"e"}, ["e"], ["a", "b", "c", "d", "e"]),
    ],
    ids=["one", "side-by-side", "apart", "the-last"],
)
def test_the_further_runs_selections(fresh: set[str], apart: list[str], in_order: list[str]) -> None:
    """Alone: each fresh test with the test after it; in order: through the test after the last."""
    ids = ["a", "b", "c", "d", "e"]
    assert (alone(ids, fresh), through(ids, fresh)) == (apart, in_order)


#: A module of two classes and a module beside it (a parametrization's brackets may hold ``::``).
IDS = ["t/a.py::A::x", "t/a.py::A::hung", "t/a.py::A::y", "t/a.py::B::z", "t/b.py::w[p::q]"]


@pytest.mark.parametrize(
    ("fresh", "waited", "apart"),
    [
        ({"t/a.py::A::x", "t/a.py::A::hung"}, {"t/a.py::A::hung"}, ["t/a.py::A::x", "t/a.py::A::y"]),
        ({"t/a.py::A::hung"}, {"t/a.py::A::hung"}, []),
        ({"t/a.py::A::x"}, {"t/a.py::A::hung", "t/a.py::A::y"}, ["t/a.py::A::x", "t/a.py::A::hung"]),
        ({"t/a.py::A::y"}, {"t/a.py::B::z"}, ["t/a.py::A::y", "t/a.py::B::z"]),
        ({"t/a.py::B::z"}, {"t/b.py::w[p::q]"}, ["t/a.py::B::z", "t/b.py::w[p::q]"]),
        (
            {"t/a.py::A::x", "t/a.py::B::z"},
            {"t/a.py::A::y"},
            ["t/a.py::A::x", "t/a.py::A::hung", "t/a.py::B::z", "t/b.py::w[p::q]"],
        ),
    ],
    ids=["a-stand-in-of-its-class", "left-out", "none-in-its-class", "no-stand-in", "the-last", "not-a-next"],
)
def test_a_test_that_waited_is_left_out_where_another_stands_in(
    fresh: set[str], waited: set[str], apart: list[str]
) -> None:
    """On B, a test that timed out in the first run is not run alone again; where it is a fresh
    test's next, the first test after it that did not time out stands in, if pytest keeps the
    same of the fresh test's parents (directories, module, classes) for it: else it stays."""
    assert alone(IDS, fresh, waited) == apart


def half_certified(repo: Repo, tmp_path: pathlib.Path, before: str, after: str) -> None:
    """Certify the fix of ``half`` with ``tests/test_ops.py`` changed from ``before`` to
    ``after``, whose new ``test_half`` fails on B and passes on C, steadily."""
    base = repo.commit({**PKG, "tests/test_ops.py": before})
    fix = repo.commit({"tests/test_ops.py": after, "calc/ops.py": FIX["calc/ops.py"]})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", fix, "--stability-runs", "3")
    assert doc is not None and code == 0, doc and doc["verdict"]
    result = next(r for r in doc["results"] if r["test_id"] == "tests/test_ops.py::test_half")
    assert (result["baseline_result"], result["candidate_result"], result["bug_discriminating"]) == (
        "fail",
        "pass",
        True,
    )


def test_stability_runs_repeat_each_new_test_with_the_test_after_it_only(repo: Repo, tmp_path: pathlib.Path) -> None:
    """The tests before a new one, and those after the next one, cannot make it flaky: the
    further runs leave them out. The next one stays, since pytest tears a test's fixtures down as
    the next test needs."""
    log = tmp_path / "runs.log"
    head = "from calc.ops import double, half\n"

    def tests(*middle: str) -> str:
        return head + logged(log, "test_first") + "".join(middle) + logged(log, "test_next") + logged(log, "test_last")

    half_certified(repo, tmp_path, tests(), tests(logged(log, "test_half", "assert half(4) == 2")))
    runs = log.read_text().split()
    assert runs.count("test_half-T3") == 6, runs  # T3's first run and two stability runs, per side
    assert runs.count("test_next-T3") == 6, runs
    assert runs.count("test_first-T3") == runs.count("test_last-T3") == 2, runs  # T3's first runs only


#: A new test that passes only after the test before it ran: in T3's order, on C, it passes.
AFTER_FIRST = "assert half(4) == 2 and SEEN"


def test_a_new_test_that_needs_the_tests_before_it_is_steadied_in_t3s_order(repo: Repo, tmp_path: pathlib.Path) -> None:
    """Alone, the new test fails on C: that is no flake, as T3's order -- which both first runs
    ran -- makes it pass every time. The further runs repeat T3's order, and those decide."""
    log = tmp_path / "runs.log"
    head = "from calc.ops import double, half\n\nSEEN = []\n"
    first = logged(log, "test_first", "SEEN.append(1)")
    half_certified(repo, tmp_path, head + first, head + first + logged(log, "test_half", AFTER_FIRST))
    runs = log.read_text().split()
    assert runs.count("test_half-T3") == 10, runs  # first runs, two alone and two in order, per side
    assert runs.count("test_first-T3") == 6, runs  # first runs and the two in order, per side


#: On B, alone, the new test passes (``half(4)`` is 3 there and nothing ran before it); on C it
#: passes whatever ran before it; in T3's order it fails on B, as a reproducer should.
ON_B_AFTER_FIRST = "assert (half(4) == 2) if (SEEN or half(4) != 3) else True"


def test_a_new_test_that_needs_the_tests_before_it_on_b_only_is_steadied_in_t3s_order(
    repo: Repo, tmp_path: pathlib.Path
) -> None:
    """B's runs alone ask for T3's order as C's do: without it the test would be flaky on B."""
    log = tmp_path / "runs.log"
    head = "from calc.ops import double, half\n\nSEEN = []\n"
    first = logged(log, "test_first", "SEEN.append(1)")
    half_certified(repo, tmp_path, head + first, head + first + logged(log, "test_half", ON_B_AFTER_FIRST))
    assert log.read_text().split().count("test_first-T3") == 6  # first runs and the two in order, per side


def test_a_new_test_whose_runs_alone_disagree_is_flaky_whatever_t3s_order_says(
    repo: Repo, tmp_path: pathlib.Path
) -> None:
    """Two new tests: one that needs the test before it (so T3's order runs again), and one that
    passes in T3's order every time but alone fails its first run only. Runs that disagree among
    themselves are a flake, not an order dependence."""
    log, alone = tmp_path / "runs.log", tmp_path / "alone"
    head = "import pathlib\n\nfrom calc.ops import double, half\n\nSEEN = []\n"
    first = logged(log, "test_first", "SEEN.append(1)")
    flaky = (
        "assert half(4) == 2\n    if not SEEN:\n        seen = pathlib.Path(%r)\n"
        "        seen.write_text(seen.read_text() + 'x' if seen.exists() else 'x')\n"
        "        assert seen.read_text() != 'x'" % str(alone)
    )
    new = logged(log, "test_half", AFTER_FIRST) + logged(log, "test_flaky", flaky)
    base = repo.commit({**PKG, "tests/test_ops.py": head + first})
    cand = repo.commit({"tests/test_ops.py": head + first + new, "calc/ops.py": FIX["calc/ops.py"]})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand, "--stability-runs", "3")
    assert doc is not None and code == 3 and doc["verdict"]["verdict"] == "INCONCLUSIVE", doc and doc["verdict"]
    results = {r["test_id"].split("::")[1]: r for r in doc["results"] if r["test_id"].startswith("tests/test_ops")}
    assert results["test_flaky"]["candidate_result"] == "flaky", results
    assert results["test_half"]["candidate_result"] == "pass", results  # steady in T3's order
    assert alone.read_text() == "xx"  # it ran alone twice on C
    assert log.read_text().split().count("test_first-T3") == 6  # and T3's order ran again, twice a side


def test_an_honest_fix_collects_the_suite_once_on_c_and_climbs_it_in_groups(
    repo: Repo, tmp_path: pathlib.Path, schema: dict[str, Any], processes: list[dict[str, Any]]
) -> None:
    base = repo.commit({**PKG, "tests/test_other.py": UNRELATED})
    fixed = repo.commit(FIX)
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", fixed, "--stability-runs", "1")
    assert doc is not None and code == 0, doc and doc["verdict"]
    jsonschema.validate(doc, schema)
    whole = [p for p in processes if p["files"] is None and "--collect-only" not in p["extra"]]
    # B's stored suite run (deps recorded) and C's one suite session; nothing else collects it all
    assert len(whole) == 2, whole
    assert sum("--evidence-deps=." in p["extra"] for p in whole) == 1
    tiers = {t["tier"]: t for t in doc["tiers"]}
    assert tiers["T3"]["group"] == {"session": "reproducers", "group": 0}
    assert tiers["T3"]["suite_size"] == doc["collected"] == 3
    ran = [t for t in ("T4", "T5", "T6", "T7") if tiers[t]["group"] is not None]
    assert [tiers[t]["group"] for t in ran] == [{"session": "suite", "group": n} for n in range(len(ran))]
    selection = doc["selection"]
    assert selection["suite_size"] == 3 and not selection["whole_suite"]
    placed = [t for ids in (*selection["selected"].values(), *selection["left_out"].values()) for t in ids]
    tests = [r["test_id"] for r in doc["results"] if r["test_id"].startswith("tests/")]
    assert sorted(placed) == sorted(tests)  # every test, exactly once
    left = {t: why for why, ids in selection["left_out"].items() for t in ids}
    assert "tests/test_other.py::test_unrelated" in left
    assert "tests/test_ops.py::test_double" in left  # imports calc.ops, reaches nothing changed


def test_each_test_runs_once_in_cs_session_whichever_tiers_select_it(repo: Repo, tmp_path: pathlib.Path) -> None:
    """T4, T5 and T7 all select a test reaching the fixed function; it runs in T4's group only.
    Running it again in each later group cost time and, for suites that are not safe to run twice
    in one process, crashed the session (freezegun's leaked time patch)."""
    log = tmp_path / "runs.log"
    counted = (
        "import os\nimport sys\n\nfrom calc.ops import half\n\n\ndef test_half_of_six():\n"
        "    with open(" + repr(str(log)) + ", 'a') as fh:\n"
        "        fh.write('ran ' + os.getcwd() + ' ' + ' '.join(sys.argv[-4:]) + '\\n')\n"
        "    assert half(6) == 3\n"
    )
    base = repo.commit({**PKG, "tests/test_six.py": counted})
    fix = repo.commit(FIX)
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", fix)
    assert doc is not None and code == 0, doc and doc["verdict"]
    selected = {t["tier"]: t["selected"] for t in doc["tiers"]}
    assert selected["T4"] >= 1 and selected["T7"] >= 2  # the later tiers select it too
    in_session = [line for line in log.read_text().splitlines() if "--evidence-control" in line]
    assert len(in_session) == 1, log.read_text()  # C's grouped session ran it once (T4's group)


def test_a_function_handed_on_and_run_by_a_test_modules_import_is_caught_at_t5(
    repo: Repo, tmp_path: pathlib.Path
) -> None:
    """A review's probe: ``partial`` hands ``half`` on at ``calc/thirds.py``'s import, and the
    test module's import calls it, where no test's record sees it. The name analysis makes the
    importers of ``calc/thirds.py`` run: the regression is found in T5, not left to T7."""
    thirds = "import functools\n\nfrom calc.ops import half\n\nhalf_of_eight = functools.partial(half, 8)\n"
    test = (
        "from calc.thirds import half_of_eight\n\nVALUE = half_of_eight()\n\n\n"
        "def test_value():\n    assert VALUE == 5\n"
    )
    base = repo.commit({**PKG, "calc/thirds.py": thirds, "tests/test_thirds.py": test})
    fixed = repo.commit(FIX)  # half(8) is 4 now: test_value, which pinned the bug, fails
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", fixed, "--stability-runs", "1")
    assert doc is not None and code == 1 and doc["verdict"]["verdict"] == "REJECTED", doc and doc["verdict"]
    assert doc["verdict"]["halted_at"] == "T5"
    t5 = next(t for t in doc["tiers"] if t["tier"] == "T5")
    assert "regression: tests/test_thirds.py::test_value" in t5["note"], t5
