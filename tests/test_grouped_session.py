"""The grouped session (``runner.pytest_session``, the plugin's ``groups``): one pytest process that
collects once and runs the runner's groups, a barrier after each, the climb deciding in between.

End to end: a small checkout made in a temp dir, the runner's own pinned pytest process, and what
the signed stream says. The plugin's option checks run through ``pytester``.
"""

from __future__ import annotations

import gc
import json
import os
import pathlib
import resource
import sys
import textwrap
from collections.abc import Iterator

import pytest
from conftest import SHARED_IDS_CONFTEST

from pytest_evidence import stream
from pytest_evidence.model import FailureKind, Outcome
from runner import gates, pytest_session
from runner.pytest_run import PytestRun
from runner.pytest_session import GroupedSession, SessionEnded
from runner.pytest_session import _readable as real_readable
from runner.sandbox import Sandbox
from runner.target import Target

SUITE = {
    "tests/conftest.py": """
        import os

        import pytest


        @pytest.fixture(scope="session")
        def once():
            with open(os.environ["SETUPS"], "a") as fh:
                fh.write("setup\\n")
            yield
            with open(os.environ["SETUPS"], "a") as fh:
                fh.write("teardown\\n")
        """,
    "tests/test_a.py": """
        def test_a1(once):
            pass


        def test_a2(once):
            assert 1 + 1 == 3
        """,
    "tests/test_b.py": """
        def test_b1(once):
            pass


        def test_b2(once):
            pass
        """,
}
A1, A2 = "tests/test_a.py::test_a1", "tests/test_a.py::test_a2"
B1, B2 = "tests/test_b.py::test_b1", "tests/test_b.py::test_b2"


def _checkout(tmp_path: pathlib.Path, files: dict[str, str]) -> pathlib.Path:
    root = tmp_path / "checkout"
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(textwrap.dedent(text))
    return root


_TARGET = Target(sys.executable, (), ("-p", "no:randomly"))


def _session(
    checkout: pathlib.Path, budget: float = 120.0, files: list[str] | None = None, reruns: int = 0
) -> GroupedSession:
    sandbox = Sandbox(seed=1, test_timeout=None, tier_budget=budget, network="socket_guard")
    return GroupedSession(_TARGET, checkout, files, sandbox=sandbox, reruns=reruns, watch=())


def _outcomes(run: PytestRun, ids: list[str]) -> dict[str, Outcome | None]:
    return {t: None if run.observation(t) is None else run.observation(t).outcome for t in ids}  # type: ignore[union-attr]


@pytest.fixture(autouse=True)
def setups(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> pathlib.Path:
    """Where the session fixture logs its setups and teardowns (the tests inherit the variable)."""
    path = tmp_path / "setups.txt"
    monkeypatch.setenv("SETUPS", str(path))
    return path


def test_a_test_planned_once_is_not_rerun_when_it_fails_and_the_others_are(tmp_path: pathlib.Path) -> None:
    """``once``: the runner will repeat the test in further processes, each a rerun already."""
    failing = {"tests/test_f.py": "def test_f1():\n    assert 0\n\n\ndef test_f2():\n    assert 0\n"}
    f1, f2 = "tests/test_f.py::test_f1", "tests/test_f.py::test_f2"
    with _session(_checkout(tmp_path, failing), reruns=2) as session:
        session.collected()
        session.plan([[f1, f2]], once=[f1])
        run = session.group(0)
    attempts = {t: run.observation(t).attempts for t in (f1, f2)}  # type: ignore[union-attr]
    assert attempts == {f1: (Outcome.FAIL,), f2: (Outcome.FAIL,) * 3}, attempts


class ExitWatch:
    """How the runner sees a session's process end, and the descriptors each of its waits watched."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.watched: list[int] = []

    def readable(self, fds: list[int], timeout: float) -> list[int]:
        self.watched.append(len(fds))
        return real_readable(fds, timeout)

    def check(self) -> None:
        """The session's waits watched its pidfd beside the wake pipe, or never did when polled."""
        assert max(self.watched) == (2 if self.mode == "pidfd" else 1), self.watched


@pytest.fixture(params=["pidfd", "polled"])
def exit_watch(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> ExitWatch:
    """Its pidfd where the system has one, else polling the process: both give the same session."""
    if request.param == "polled":
        monkeypatch.delattr(os, "pidfd_open", raising=False)
    elif not hasattr(os, "pidfd_open"):
        pytest.skip("no pidfd on this system")
    watch = ExitWatch(str(request.param))
    monkeypatch.setattr(pytest_session, "_readable", watch.readable)
    return watch


def test_groups_run_in_the_given_order_with_a_barrier_after_each(
    tmp_path: pathlib.Path, setups: pathlib.Path, exit_watch: ExitWatch
) -> None:
    with _session(_checkout(tmp_path, SUITE)) as session:
        collected = session.collected()
        assert collected.content.collected == [A1, A2, B1, B2]
        assert collected.content.results == {}  # nothing runs before the plan
        session.plan([[B2, A1], [A2], [B1]])
        first = session.group(0)
        assert _outcomes(first, [B2, A1, A2, B1]) == {B2: Outcome.PASS, A1: Outcome.PASS, A2: None, B1: None}
        assert first.content.barriers == [2] and first.exit_code == 0
        second = session.group(1)
        assert _outcomes(second, [A2, B1]) == {A2: Outcome.FAIL, B1: None}
        assert second.exit_code == 1  # as pytest would exit on this group alone
        third = session.group(2)
        assert third.content.barriers == [2, 1, 1]
        final = session.close()
    assert final.content.finished and final.content.forgery is None
    assert list(final.content.results) == [B2, A1, A2, B1]
    # a session fixture lives across the barriers, as in one plain run
    assert setups.read_text() == "setup\nteardown\n"
    exit_watch.check()


@pytest.fixture
def high_descriptors() -> Iterator[None]:
    """Every descriptor number below 1100 taken, so those a session opens are above 1024. An
    earlier test's file left for the collector is closed first: freed meanwhile, its number
    would be the session's."""
    gc.collect()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.skip("the hard limit on open files (%d) is below 1200" % hard)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200) if soft != resource.RLIM_INFINITY else soft, hard))
    taken = [os.open(os.devnull, os.O_RDONLY)]
    while taken[-1] < 1100:
        taken.append(os.open(os.devnull, os.O_RDONLY))
    try:
        yield
    finally:
        for fd in taken:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.mark.usefixtures("high_descriptors")
def test_a_session_waits_on_descriptors_numbered_above_1024(tmp_path: pathlib.Path) -> None:
    """``select`` cannot watch them (ValueError); a runner holding many files hands them out."""
    with _session(_checkout(tmp_path, SUITE)) as session:
        session.collected()
        session.plan([[A1], [B1]])
        assert _outcomes(session.group(0), [A1, B1]) == {A1: Outcome.PASS, B1: None}
        assert session._wake > 1024 and (session._exited > 1024 or session._exited == -1)
        assert _outcomes(session.group(1), [B1]) == {B1: Outcome.PASS}
        final = session.close()
    assert final.content.finished and final.content.barriers == [1, 1]


def test_stopping_at_a_barrier_leaves_the_later_groups_unrun_and_finishes_the_session(
    tmp_path: pathlib.Path, setups: pathlib.Path
) -> None:
    with _session(_checkout(tmp_path, SUITE)) as session:
        session.collected()
        session.plan([[A2], [A1, B1, B2]])
        assert _outcomes(session.group(0), [A2]) == {A2: Outcome.FAIL}
        final = session.close()  # the climb halts: no "go"
    assert final.content.finished and final.exit_code == 1
    assert list(final.content.results) == [A2]
    assert setups.read_text() == "setup\nteardown\n"  # torn down by pytest's own session end


def test_a_process_that_dies_in_a_group_ends_the_session_with_the_running_test_a_crash(
    tmp_path: pathlib.Path, exit_watch: ExitWatch
) -> None:
    files = {
        **SUITE,
        "tests/test_b.py": "import os\n\n\ndef test_b1():\n    os._exit(3)\n\n\ndef test_b2():\n    pass\n",
    }
    with _session(_checkout(tmp_path, files)) as session:
        session.collected()
        session.plan([[A1], [B1, B2]])
        session.group(0)
        with pytest.raises(SessionEnded) as ended:
            session.group(1)
        assert session.close() is ended.value.run
    run = ended.value.run
    assert _outcomes(run, [A1, B1, B2]) == {A1: Outcome.PASS, B1: Outcome.CRASH, B2: None}
    crash = run.observation(B1)
    assert crash is not None and crash.failure is not None and crash.failure.kind is FailureKind.CRASH
    assert not run.budget_exhausted and run.exit_code == 3
    exit_watch.check()


def test_a_group_that_outruns_the_tier_budget_is_killed(tmp_path: pathlib.Path) -> None:
    files = {**SUITE, "tests/test_b.py": "import time\n\n\ndef test_b1():\n    time.sleep(60)\n"}
    with _session(_checkout(tmp_path, files), budget=3.0) as session:
        session.collected()
        session.plan([[A1], [B1]])
        session.group(0)
        with pytest.raises(SessionEnded) as ended:
            session.group(1)
    run = ended.value.run
    assert run.budget_exhausted
    assert _outcomes(run, [A1, B1]) == {A1: Outcome.PASS, B1: Outcome.TIMEOUT}


def test_a_test_that_wakes_the_runner_early_is_a_forgery(tmp_path: pathlib.Path) -> None:
    """The wake pipe carries no evidence: a barrier the stream lacks is a forged wake-up."""
    waker = """
        import os
        import sys
        import time


        def test_wakes():
            control = next(a for a in sys.argv if a.startswith("--evidence-control="))
            os.write(int(control.split(",")[1]), b"barrier 0\\n")


        def test_slow():
            time.sleep(2)
        """
    files = {**SUITE, "tests/test_b.py": waker}
    with _session(_checkout(tmp_path, files)) as session:
        session.collected()
        session.plan([["tests/test_b.py::test_wakes", "tests/test_b.py::test_slow"]])
        woken = session.group(0)
        session.close()
    assert woken.content.forgery == "woken at the barrier of group 0, which the stream does not have"


def test_a_session_on_named_files_collects_only_them(tmp_path: pathlib.Path) -> None:
    with _session(_checkout(tmp_path, SUITE), files=["tests/test_b.py"]) as session:
        assert session.collected().content.collected == [B1, B2]
        session.plan([[B1]])
        session.group(0)
        final = session.close()
    assert list(final.content.results) == [B1]


def test_the_control_option_is_the_runners_only(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_x():\n    pass\n")
    r, w = os.pipe()
    try:
        result = pytester.runpytest_inprocess("-p", "evidence", "--evidence-control=%d,%d" % (r, w))
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.stderr.fnmatch_lines(["*--evidence-control is the runner's: it needs --evidence-record-mode*"])
        result = pytester.runpytest_inprocess("-p", "evidence", "--evidence-record-mode", "--evidence-control=x")
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.stderr.fnmatch_lines(["*--evidence-control expects two descriptor numbers R,W, not 'x'*"])
    finally:
        os.close(r)
        os.close(w)


def test_the_control_option_refuses_xdist_in_one_line(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The controller's own check: xdist's ``dsession`` is registered after this plugin is
    configured, and a check asking for it let the controller take the runner's groups, ending
    in an INTERNALERROR on the descriptors."""
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    pytester.makepyfile("def test_x():\n    pass\n")
    args = ("-p", "evidence", "--evidence-record-mode", "--evidence-stream=s.jsonl", "--evidence-control=0,1")
    result = pytester.runpytest_subprocess(*args, "-n", "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--evidence-control runs one process's tests in groups: it does not run under xdist*"]
    )
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


def test_a_barrier_out_of_order_is_a_forgery() -> None:
    lines = [
        {"seq": 0, "type": "session_start"},
        {"seq": 1, "type": "barrier", "group": 0, "ran": 2},
        {"seq": 2, "type": "barrier", "group": 2, "ran": 1},
    ]
    content = stream.parse(b"".join(json.dumps(doc).encode() + b"\n" for doc in lines))
    assert content.barriers == [2]
    assert content.forgery == "line 3: barrier of group 2 where group 1 was expected"


@pytest.mark.parametrize("one_budget", [False, True], ids=["a-budget-per-group", "one-budget-for-all"])
def test_groups_of_one_tier_share_its_budget(tmp_path: pathlib.Path, one_budget: bool) -> None:
    """T3's groups (one per changed test file) are one tier: together they get one budget, where
    the suite session's groups, each a tier, get one each."""
    slow = "import time\n\n\ndef test_%s():\n    time.sleep(2.5)\n"
    files = {**SUITE, "tests/test_a.py": slow % "a1", "tests/test_b.py": slow % "b1"}
    target = Target(sys.executable, (), ("-p", "no:randomly"))
    sandbox = Sandbox(seed=1, test_timeout=None, tier_budget=4.0, network="socket_guard")
    checkout = _checkout(tmp_path, files)
    with GroupedSession(target, checkout, None, sandbox=sandbox, reruns=0, watch=(), one_budget=one_budget) as session:
        session.collected()
        session.plan([[A1], [B1]])
        assert _outcomes(session.group(0), [A1]) == {A1: Outcome.PASS}
        if one_budget:
            with pytest.raises(SessionEnded) as ended:
                session.group(1)
            assert ended.value.run.budget_exhausted
            assert _outcomes(ended.value.run, [A1, B1]) == {A1: Outcome.PASS, B1: Outcome.TIMEOUT}
        else:
            assert _outcomes(session.group(1), [B1]) == {B1: Outcome.PASS}


def test_the_view_of_a_session_that_died_collecting_is_the_ended_process(tmp_path: pathlib.Path) -> None:
    """``collected`` raises, and ``view`` gives what the process said before it ended."""
    files = {**SUITE, "tests/conftest.py": "import os\n\nos._exit(4)\n"}
    with _session(_checkout(tmp_path, files)) as session:
        with pytest.raises(SessionEnded) as ended:
            session.collected()
        view = session.view()
    assert view is ended.value.run and view.exit_code == 4
    assert view.content.collected is None


def test_a_session_writes_bytecode_into_its_checkout_and_the_import_probe_does_not(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A certify's later sessions on a checkout read what its first one compiled, even where the
    runner's own environment asks for no bytecode; T2's import probe, which runs before either
    side's first session, leaves the tree as git made it."""
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    checkout = _checkout(tmp_path, {**SUITE, "pkg/__init__.py": "VALUE = 1\n"})
    sandbox = Sandbox(seed=1, test_timeout=None, tier_budget=120.0, network="socket_guard")
    answers, _code = gates._probe(checkout, [(str(checkout / "pkg/__init__.py"), "pkg")], _TARGET, sandbox)
    assert answers[str(checkout / "pkg/__init__.py")]["ok"]
    assert not list(checkout.rglob("*.pyc"))
    with _session(checkout, files=["tests/test_b.py"]) as session:
        session.collected()
        session.plan([[B1, B2]])
        session.group(0)
        final = session.close()
    assert _outcomes(final, [B1, B2]) == {B1: Outcome.PASS, B2: Outcome.PASS}
    rewritten = [p.name for p in (checkout / "tests" / "__pycache__").glob("test_b.*.pyc")]
    assert len(rewritten) == 1 and "-pytest-" in rewritten[0]  # pytest's assertion rewriting, cached


@pytest.mark.parametrize("cases", ["False True", "True False", "True True"])
def test_items_that_share_an_id_are_told_apart_and_each_runs(tmp_path: pathlib.Path, cases: str) -> None:
    """An independent check CERTIFIED a regression that only the first of two such items saw: the
    grouped session ran the last item of an id alone, and a pass read last stood. Each item now
    has an id of its own (the second ``[#2]``, in collection order), runs where it is planned,
    and is judged by itself."""
    files = {"tests/conftest.py": SHARED_IDS_CONFTEST, "tests/data.cases": cases.replace(" ", "\n") + "\n"}
    ids = ["tests/data.cases::case", "tests/data.cases::case[#2]"]
    with _session(_checkout(tmp_path, files)) as session:
        assert session.collected().content.collected == ids
        session.plan([ids])
        run = session.group(0)
    expected = {"True": Outcome.PASS, "False": Outcome.FAIL}
    assert _outcomes(run, ids) == dict(zip(ids, (expected[c] for c in cases.split()), strict=True))
