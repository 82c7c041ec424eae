"""Leased temporary directories: what a killed runner leaves goes with the next runner's start
(its worktrees, each test process's scratch, its private copy of the plugin).

Each case runs the holder in a process of its own, because the lock is the process's: killed
with SIGKILL, it can clean nothing up, and the next lease must find its directory free to take.
"""

from __future__ import annotations

import errno
import fcntl
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import typing

import pytest
from conftest import FIX, PKG, Repo, certify

from runner import leases, pytest_run
from runner.sandbox import Sandbox
from runner.target import Target

ROOT = pathlib.Path(__file__).resolve().parent.parent

HOLD = """
import sys, time
from runner import leases
with leases.leased(sys.argv[1]) as where:
    print(where, flush=True)
    time.sleep(120)
"""


@pytest.fixture()
def tmp(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> pathlib.Path:
    """The temporary directory of this process and of the holders it starts."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    return tmp_path


def _holder(prefix: str = "evidence-test-") -> tuple[subprocess.Popen[str], pathlib.Path]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-c", HOLD, prefix], stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    return proc, pathlib.Path(proc.stdout.readline().strip())


def test_a_killed_holders_directory_goes_with_the_next_lease_and_a_live_ones_stays(tmp: pathlib.Path) -> None:
    killed, dead_dir = _holder()
    alive, live_dir = _holder()
    try:
        (dead_dir / "worktree").mkdir()
        killed.send_signal(signal.SIGKILL)
        killed.wait()
        assert dead_dir.is_dir()  # nothing cleaned up after the kill
        with leases.leased("evidence-test-") as mine:
            assert mine.is_dir()
            assert not dead_dir.exists()
            assert live_dir.is_dir()
        assert not mine.exists()
    finally:
        for proc in (killed, alive):
            proc.kill()
            proc.wait()
            assert proc.stdout is not None
            proc.stdout.close()


def test_what_holds_no_lease_is_left_alone(tmp: pathlib.Path) -> None:
    """A directory of the prefix without the lock file: another tool's, or one being made now."""
    foreign = tmp / "evidence-test-foreign"
    foreign.mkdir()
    (foreign / "file").write_text("x")
    other = tmp / "other-prefix"
    other.mkdir()
    (other / leases.HELD).write_text("")
    with leases.leased("evidence-test-"):
        pass
    assert (foreign / "file").exists() and other.is_dir()


def test_where_locks_are_refused_a_lease_still_works_and_is_never_reaped(
    tmp: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = fcntl.flock

    def refused(fd: int, operation: int) -> None:
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", refused)
    with leases.leased("evidence-test-") as where:
        monkeypatch.setattr(fcntl, "flock", real)
        leases.reap("evidence-test-")
        assert where.is_dir()
    assert not where.exists()


PLUGIN = """
import sys, time
from runner import target
print(target.plugin_root(), flush=True)
if sys.argv[1] == "hold":
    time.sleep(120)
"""


def _plugin_root(how: str) -> tuple[subprocess.Popen[str], pathlib.Path]:
    """A runner process's private copy of the plugin: ``hold`` keeps the process alive."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-c", PLUGIN, how], stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    return proc, pathlib.Path(proc.stdout.readline().strip())


def test_a_runners_plugin_copy_goes_at_its_exit_or_with_the_next_runner_after_a_kill(tmp: pathlib.Path) -> None:
    ended, gone = _plugin_root("exit")
    killed, left = _plugin_root("hold")
    started = [ended, killed]
    try:
        assert ended.wait() == 0 and not gone.exists()  # removed at exit
        assert (left / "pytest_evidence" / "plugin.py").is_file()
        killed.send_signal(signal.SIGKILL)
        killed.wait()
        assert left.is_dir()  # nothing cleaned up after the kill
        after, fresh = _plugin_root("exit")
        started.append(after)
        assert after.wait() == 0
        assert not left.exists() and not fresh.exists()  # the next runner's took the dead one's too
    finally:
        for proc in started:
            proc.kill()
            proc.wait()
            assert proc.stdout is not None
            proc.stdout.close()


#: Leases a directory removed behind its holder, fills it, and exits at once.
BEHIND = """
import sys
from runner import leases
with leases.leased(sys.argv[1], behind=True) as where:
    for n in range(200):
        (where / "tmp" / str(n)).mkdir(parents=True)
    print(where, flush=True)
"""


def test_a_scratch_removed_behind_its_holder_is_gone_once_settled_and_at_exit(tmp: pathlib.Path) -> None:
    """A test process's scratch is removed beside the climb: ``settle`` (a certify's end) waits
    for it, and so does the process's exit."""
    with leases.leased("evidence-behind-", behind=True) as where:
        (where / "tmp" / "a" / "b").mkdir(parents=True)
        (where / "tmp" / "a" / "f").write_text("x")
        assert where.is_dir()
    leases.settle()
    assert not where.exists()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", BEHIND, "evidence-behind-"], capture_output=True, text=True, env=env, check=True
    )
    assert done.stdout.strip() and not pathlib.Path(done.stdout.strip()).exists()
    assert not list(tmp.glob("evidence-behind-*"))


def test_a_settle_cut_short_leaves_the_removal_to_the_next(monkeypatch: pytest.MonkeyPatch) -> None:
    """A second Ctrl-C while a certify waits for a removal: the removal stays listed, and the
    next settle (the process's exit) waits for it."""

    class Removal:
        waits = 0

        def wait(self) -> None:
            self.waits += 1
            if self.waits == 1:
                raise KeyboardInterrupt

    removal = Removal()
    monkeypatch.setattr(leases, "_behind", [removal])
    with pytest.raises(KeyboardInterrupt):
        leases.settle()
    assert [id(r) for r in leases._behind] == [id(removal)]
    leases.settle()
    assert removal.waits == 2 and leases._behind == []


def test_without_a_thread_to_remove_it_beside_a_scratch_is_removed_at_once(
    tmp: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_thread(*_args: object) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(leases, "Meanwhile", no_thread)
    with leases.leased("evidence-behind-", behind=True) as where:
        (where / "tmp").mkdir()
    assert not where.exists() and leases._behind == []


def test_what_a_test_left_unremovable_fails_neither_the_release_nor_the_next_reap(
    tmp: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A test can make its scratch read-only (its ``HOME`` is there): the certify still ends with
    its verdict, and the next runner's reap of what is left does not fail either."""
    with leases.leased("evidence-test-") as where:
        (where / "home" / "deep").mkdir(parents=True)
        (where / "home" / "deep" / "file").write_text("x")
        for path in (where / "home" / "deep", where / "home"):
            path.chmod(0o500)  # read-only, as the test left them
    assert not where.exists()  # made writable again, then removed

    dead = tmp / "evidence-test-dead"  # a killed holder's, with a file its user cannot remove
    dead.mkdir()
    (dead / leases.HELD).write_text("")
    (dead / "file").write_text("x")

    def refused(self: pathlib.Path, missing_ok: bool = False) -> None:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(pathlib.Path, "unlink", refused)
    with leases.leased("evidence-test-"):  # reaps first: no error
        pass
    leases.reap("evidence-test-")


def test_a_reap_follows_no_link_out_of_the_temporary_directory(
    tmp: pathlib.Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / leases.HELD).write_text("")  # looks leased, and nobody holds it
    (elsewhere / "precious").write_text("x")
    (tmp / "evidence-test-link").symlink_to(elsewhere, target_is_directory=True)
    leases.reap("evidence-test-")
    assert (elsewhere / "precious").exists()


def test_a_test_process_that_cannot_start_leaves_no_scratch_behind(
    tmp: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its channel cannot be made (no descriptors left, say): the scratch's lease goes at once,
    not when the exception is collected."""

    def exhausted() -> None:
        raise OSError(errno.EMFILE, "Too many open files")

    monkeypatch.setattr(pytest_run, "PrivateChannel", exhausted)
    launch = pytest_run.Launch(0, None)
    with pytest.raises(OSError) as raised:
        pytest_run.PytestProcess(typing.cast(Target, None), tmp, typing.cast(Sandbox, None), launch)
    assert raised.value.errno == errno.EMFILE
    leases.settle()  # its removal runs beside the caller
    assert not list(tmp.glob("evidence-pytest-*"))  # while the exception is still held


def test_what_a_killed_runners_import_probe_left_goes_with_the_next_runners(
    tmp: pathlib.Path, repo: Repo, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """T2's import probe runs in a leased scratch, as every test process does: what a removal
    cut short by a signal, or the candidate's own processes after it, left there (an independent
    review saw one on a SIGTERM) goes with the next runner's probe."""
    killed, dead_dir = _holder("evidence-import-")
    try:
        (dead_dir / "home").mkdir()
        killed.send_signal(signal.SIGKILL)
        killed.wait()
        base = repo.commit(PKG)
        cand = repo.commit(FIX)
        code, _ = certify(repo, tmp_path_factory.mktemp("out") / "e.json", "--baseline", base, "--candidate", cand)
        assert code == 0
        assert not list(tmp.glob("evidence-import-*"))
    finally:
        killed.kill()
        killed.wait()
        assert killed.stdout is not None
        killed.stdout.close()
