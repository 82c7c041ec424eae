"""Temporary directories that outlive a killed runner only until the next runner starts.

A runner killed with SIGKILL -- a harness's timeout, an out-of-memory kill -- cannot remove its
worktrees: whole checkouts, left in the temporary directory by every such kill. Each directory
made here holds a lock (``flock``) for as long as its process lives; the kernel releases it
however the process ends. The next runner that makes one removes those whose lock it can take:
their holder is gone. A process id would not do: ids are reused, and a temporary directory
shared between containers sees the ids of neither.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import functools
import os
import pathlib
import shutil
import tempfile
from collections.abc import Iterator

from runner.meanwhile import Meanwhile

#: The lock file in a leased directory; made under another name, locked, then renamed to this,
#: so that a directory whose lock is free was never held by a live process.
HELD = ".evidence-held"

#: Removals going on beside their holders (``leased(..., behind=True)``), until ``settle``.
_behind: list[Meanwhile[None]] = []


@contextlib.contextmanager
def leased(prefix: str, behind: bool = False) -> Iterator[pathlib.Path]:
    """A new temporary directory named ``prefix...``, removed when the block ends; first, the
    directories of that prefix whose holders died are removed. ``behind``: removed by a thread
    beside the holder, which goes on at once -- a test process's scratch, whose tests'
    directories took 0.08-0.15 s each to remove after click's stability runs, one after the
    other on the climb's path; ``settle`` waits for them."""
    where, fd = _take(prefix)
    try:
        yield where
    finally:
        if not (behind and _removing_behind(where, fd)):
            _release(where, fd)


def _removing_behind(where: pathlib.Path, fd: int) -> bool:
    """Whether ``where``'s removal started in a thread beside the caller: no thread to be had
    (``RuntimeError``), it is the caller's."""
    try:
        _behind.append(Meanwhile("lease-removal", functools.partial(_release, where, fd)))
    except RuntimeError:
        return False
    return True


def settle() -> None:
    """Until every directory released behind its holder is removed: a certify leaves nothing
    behind when it returns, and neither does the process when it exits. A removal leaves the
    list only once it is over: a settle interrupted (a second Ctrl-C) still leaves it to the
    next one, the process's exit included."""
    while _behind:
        removal = _behind[0]
        removal.wait()
        with contextlib.suppress(ValueError):  # another thread's settle took it meanwhile
            _behind.remove(removal)


atexit.register(settle)


def for_process(prefix: str) -> pathlib.Path:
    """As ``leased``, held until this process exits: removed then, or by the next holder of the
    prefix if the process is killed."""
    where, fd = _take(prefix)
    atexit.register(_release, where, fd)
    return where


def _take(prefix: str) -> tuple[pathlib.Path, int]:
    reap(prefix)
    where = pathlib.Path(tempfile.mkdtemp(prefix=prefix))
    fd = os.open(where / (HELD + ".new"), os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError:
        pass  # a file system without locks: the directory is only never reaped
    else:
        os.rename(where / (HELD + ".new"), where / HELD)
    return where, fd


def _release(where: pathlib.Path, fd: int) -> None:
    try:
        _remove(where)
    finally:
        os.close(fd)


def reap(prefix: str) -> None:
    """Remove the leased directories named ``prefix...`` whose holder is gone: directories this
    user owns, never a symbolic link (another user's, on a shared temporary directory, could
    point anywhere)."""
    for where in pathlib.Path(tempfile.gettempdir()).glob(prefix + "*"):
        try:
            if where.is_symlink() or where.lstat().st_uid != os.getuid():
                continue
            fd = os.open(where / HELD, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
        except OSError:
            continue  # not a leased directory, or not ours to read
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue  # held: its runner is alive
        try:
            _remove(where)
        finally:
            os.close(fd)


def _remove(where: pathlib.Path) -> None:
    """The directory with its lock file last: a removal cut short leaves one the next reap finds.

    As much as can go, and never an error: a test can make directories of its scratch read-only
    (its ``HOME`` is there), and what it leaves must fail neither this certify nor the next
    runner's reap. Directories are made writable first (a read-only one keeps its entries
    from ``rmtree``)."""
    with contextlib.suppress(OSError):
        os.chmod(where, 0o700)
        for root, dirs, _ in os.walk(where):  # top down: a directory is opened before it is walked
            for name in dirs:
                with contextlib.suppress(OSError):
                    if not os.path.islink(os.path.join(root, name)):
                        os.chmod(os.path.join(root, name), 0o700)
        for child in list(where.iterdir()):
            if child.name != HELD:
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child, ignore_errors=True)
                else:
                    child.unlink(missing_ok=True)
    shutil.rmtree(where, ignore_errors=True)
