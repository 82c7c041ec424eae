"""The reading end of the result channel of one child pytest: a private stream and its key.

The runner (``runner.pytest_run``) and the plugin's own replay on B (``replay``) start pytest
with one of these. Only descriptors reach the child -- no path on its command line or in its
environment -- at numbers fixed from a base, the same on B and on C. See ``stream`` for the
line format and the strict reader, ``docs/referee.md`` for what the channel stops and what not.

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

import os
import tempfile
from typing import List, Tuple

from pytest_evidence.stream import KEY_BYTES, Reader, StreamContent, write_all


def fixed_number(fd: int) -> int:
    """``fd`` moved to the lowest free number from a fixed base, the same in every run.

    The numbers go on the child's command line; where they depended on what else the parent
    happened to have open, they would differ between the processes of B and of C.
    """
    try:
        import fcntl
        import resource

        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        base = 500 if soft < 0 or soft >= 1024 else max(3, soft // 2)
        moved = fcntl.fcntl(fd, getattr(fcntl, "F_DUPFD_CLOEXEC", fcntl.F_DUPFD), base)
    except (ImportError, OSError, ValueError):
        return fd
    os.set_inheritable(moved, False)
    os.close(fd)
    return int(moved)


class PrivateChannel:
    """The reading end of the result channel of one child pytest, and what the child needs.

    * the stream: a file created in a private temporary directory, opened twice -- read-only here,
      write-only and append-only for the child -- and then unlinked, directory and all. It has no
      name anyone could open, rename or replace, and no path on the child's command line or in its
      environment; ``kill -9`` of the child loses nothing it wrote.
    * the key: ``KEY_BYTES`` random bytes written into a pipe whose write end is closed at once;
      the child's plugin reads them and closes the pipe before any conftest is imported.

    ``args()`` goes on the child's command line, ``pass_fds`` to ``subprocess``; ``started()``
    once the child exists closes this process's copies of the child's ends; ``read()`` after it
    ended parses and checks the stream with the key (``StreamContent.forgery``).
    """

    def __init__(self) -> None:
        self.key = os.urandom(KEY_BYTES)
        self._reader = Reader(self.key)
        where = tempfile.mkdtemp(prefix="evidence-channel-")
        path = os.path.join(where, "stream")
        self._read_fd = -1
        self._child: List[int] = []
        try:
            self._read_fd = os.open(path, os.O_RDONLY | os.O_CREAT | os.O_EXCL, 0o600)
            self._child.append(os.open(path, os.O_WRONLY | os.O_APPEND))
            key_r, key_w = os.pipe()
            self._child.append(key_r)
            try:
                write_all(key_w, self.key)  # far below a pipe's buffer: never blocks
            finally:
                os.close(key_w)
            self._child = [fixed_number(fd) for fd in self._child]
        except BaseException:
            self.close()
            raise
        finally:
            if os.path.exists(path):
                os.unlink(path)
            os.rmdir(where)
        self.stream_fd, self.key_fd = self._child

    def args(self) -> List[str]:
        from pytest_evidence import options

        return ["%s=%d" % (options.STREAM_FD, self.stream_fd), "%s=%d" % (options.KEY_FD, self.key_fd)]

    @property
    def pass_fds(self) -> Tuple[int, ...]:
        return (self.stream_fd, self.key_fd)

    def started(self) -> None:
        """The child has its copies: close ours (an unread key must not linger here either)."""
        for fd in self._child:
            try:
                os.close(fd)
            except OSError:
                pass
        self._child = []

    def read(self) -> StreamContent:
        return self._reader.read_fd(self._read_fd)

    def fileno(self) -> int:
        """The reading end, for a progress display that counts lines as they arrive (-1 once closed)."""
        return self._read_fd

    def close(self) -> None:
        self.started()
        if self._read_fd >= 0:
            os.close(self._read_fd)
            self._read_fd = -1

    def __enter__(self) -> PrivateChannel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
