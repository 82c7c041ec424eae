"""T5's impact, computed beside T3's stability runs: used only for the suite it was computed for,
and the selection it gives is the one the plan would have computed itself."""

from __future__ import annotations

import pathlib
import threading
import types
from typing import Any

import pytest
from conftest import FIX, PKG, Repo, certify

from runner import selection
from runner.impact import Impact
from runner.ladder import ahead
from runner.meanwhile import Meanwhile


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every computation of the impact from now on, by the name of the thread that made it."""
    calls: list[str] = []
    real = selection.impact_on

    def counted(*args: object, **kwargs: object) -> Impact:
        calls.append(threading.current_thread().name)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(selection, "impact_on", counted)
    monkeypatch.setattr(ahead, "impact_on", counted)
    return calls


def test_the_plan_takes_the_impact_computed_beside_the_stability_runs(
    repo: Repo, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = repo.commit(PKG)
    cand = repo.commit(FIX)
    args = ("--baseline", base, "--candidate", cand)
    code, before = certify(repo, tmp_path / "first.json", *args)
    assert code == 0 and before is not None
    calls = _counted(monkeypatch)
    code, after = certify(repo, tmp_path / "ahead.json", *args)
    assert code == 0 and after is not None
    assert calls == ["t5-impact"]  # once, beside the runs, and not again by the plan
    monkeypatch.setattr(ahead, "start", lambda *args: None)
    calls.clear()
    code, alone = certify(repo, tmp_path / "alone.json", *args)
    assert code == 0 and alone is not None
    assert calls == [threading.main_thread().name]
    assert after["selection"] == alone["selection"] and after["selection"]["left_out"]
    assert [(t["tier"], t["selected"], t["run"]) for t in after["tiers"]] == [
        (t["tier"], t["selected"], t["run"]) for t in alone["tiers"]
    ]


def test_an_impact_computed_for_other_files_is_not_taken() -> None:
    answer: Any = object()
    graph: Any = types.SimpleNamespace(files=["pkg/mod.py", "tests/test_a.py"])
    made: Any = types.SimpleNamespace(files=["pkg/mod.py", "pkg/made_by_a_test.py", "tests/test_a.py"])
    tests = frozenset({"tests/test_a.py"})
    ladder: Any = types.SimpleNamespace()

    def ahead_of_time() -> ahead.Ahead:
        return ahead.Ahead(tests, frozenset(graph.files), Meanwhile("t", lambda: answer))

    ladder.ahead = ahead_of_time()
    assert ahead.taken(ladder, ["tests/test_a.py::test_x", "tests/test_b.py::test_y"], graph) is None
    assert ladder.ahead is None
    ladder.ahead = ahead_of_time()
    assert ahead.taken(ladder, ["tests/test_a.py::test_x"], made) is None  # a test wrote a module meanwhile
    ladder.ahead = ahead_of_time()
    assert ahead.taken(ladder, ["tests/test_a.py::test_x", "tests/test_a.py::test_z"], graph) is answer


def test_work_beside_the_climb_is_waited_for_after_an_interrupted_wait() -> None:
    """Ctrl-C or SIGTERM (a ``KeyboardInterrupt`` while the checkouts exist) may land while the
    climb waits for work beside it; the removal of the checkouts waits for that work again. Before
    Python 3.13 a ``Thread.join`` once interrupted returned at once ever after, and a worktree
    made meanwhile outlived the climb (an independent review)."""
    import signal

    main, go, hit, release, done = (threading.get_ident(), *(threading.Event() for _ in range(4)))

    def work() -> None:
        go.wait()
        # The interruption, while the main thread waits: sent again until it lands, since one that
        # arrives just before the main thread blocks is only handled once the wait is over.
        while not hit.is_set():
            signal.pthread_kill(main, signal.SIGUSR1)
            hit.wait(0.05)
        release.wait()
        done.set()

    def interrupted(signum: int, frame: types.FrameType | None) -> None:
        if not hit.is_set():  # once: the repeats that crossed it in flight are no interruption
            hit.set()
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGUSR1, interrupted)
    try:
        beside = Meanwhile("work", work)
        with pytest.raises(KeyboardInterrupt):
            go.set()
            beside.wait()
        release.set()
        beside.wait()
        assert done.is_set()
    finally:
        signal.signal(signal.SIGUSR1, previous)
