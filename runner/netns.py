"""A fresh network namespace per test process: loopback only, enforced by the kernel.

Entered between ``fork`` and ``exec`` (``preexec_fn``), so it holds for everything the test
process starts -- subprocesses and C extensions included, which no in-process guard can see.
As root, ``unshare(CLONE_NEWNET)``; otherwise a user namespace too, mapping the user to itself
(not to root: a test that checks file permissions must see the same uid as outside). Loopback
is brought up with the ``SIOCSIFFLAGS`` ioctl, so neither ``ip`` nor ``unshare(1)`` is needed.

Containers often forbid namespaces; ``available()`` tries once and the runner falls back to the
plugin's socket guard, saying so in the record.

``hidden`` directories are covered, for that process alone, by an empty file system of its own
(a mount namespace, entered with the network one): the evidence store, which a test process
could otherwise reach through its worktree's ``.git`` file and rewrite -- an independent review
forged B's stored suite run there, and a later regressing candidate was CERTIFIED.
``can_hide()`` tries once whether this machine allows it.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
CLONE_NEWNS = 0x00020000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 0x2, 0x4, 0x8, 0x4000, 0x40000
SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1
IFREQ = "16sH22x"  # struct ifreq: the name, the flags, padding to 40 bytes

_AVAILABLE: list[bool] = []
_HIDES: list[bool] = []


def enter(hidden: Sequence[bytes] = ()) -> None:
    """Move the calling process into a new network namespace with loopback up, and cover each
    of ``hidden`` (paths, as bytes: no encoding between fork and exec) with an empty tmpfs."""
    libc = ctypes.CDLL(None, use_errno=True)
    uid, gid = os.geteuid(), os.getegid()
    flags = CLONE_NEWNET | (CLONE_NEWNS if hidden else 0) | (0 if uid == 0 else CLONE_NEWUSER)
    if libc.unshare(flags) != 0:
        _failed("unshare")
    if uid != 0:
        maps = (("setgroups", "deny"), ("uid_map", "%d %d 1" % (uid, uid)), ("gid_map", "%d %d 1" % (gid, gid)))
        for name, text in maps:
            with open("/proc/self/%s" % name, "w") as fh:
                fh.write(text)
    if hidden:  # private first: the covers must not reach the runner's own view of the tree
        if libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) != 0:
            _failed("mount --make-rprivate /")
        for path in hidden:
            if libc.mount(b"tmpfs", path, b"tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, b"size=64k,mode=0700") != 0:
                _failed("mount tmpfs on %s" % path.decode(errors="replace"))
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        current = struct.unpack(IFREQ, fcntl.ioctl(sock, SIOCGIFFLAGS, struct.pack(IFREQ, b"lo", 0)))[1]
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack(IFREQ, b"lo", current | IFF_UP))


def _failed(what: str) -> None:
    err = ctypes.get_errno()
    raise OSError(err, "%s: %s" % (what, os.strerror(err)))


def can_hide() -> bool:
    """Whether a directory can be covered here (tried once per process, in a child): a file in
    it must be gone from the child's view, and still there in ours."""
    if not _HIDES:
        _HIDES.append(False)
        if available():
            with tempfile.TemporaryDirectory(prefix="evidence-hide-") as where:
                open(os.path.join(where, "seen"), "w").close()

                def covered() -> None:
                    enter([os.fsencode(where)])
                    if os.listdir(where):
                        raise OSError("%s is not covered" % where)

                _HIDES[0] = _in_child(covered) and os.path.exists(os.path.join(where, "seen"))
    return _HIDES[0]


def available() -> bool:
    """Whether this machine lets us make one (tried once per process)."""
    if not _AVAILABLE:
        _AVAILABLE.append(sys.platform.startswith("linux") and _in_child(_loopback_up))
    return _AVAILABLE[0]


def _loopback_up() -> None:
    """Enter a namespace and connect to loopback: refused (nothing listens on port 9) proves it
    is up; any other failure is an exception. A numeric address, connected to directly: no name
    lookup between fork and exec, where a threaded parent's resolver locks may be held."""
    enter()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(1)
        try:
            sock.connect(("127.0.0.1", 9))
        except ConnectionRefusedError:
            pass


def _in_child(check: Callable[[], None]) -> bool:
    """Whether ``check`` runs without an exception in a forked child, between fork and exec,
    where every test process enters its namespaces. The child then execs the smallest program
    at hand: a probe that started an interpreter cost the climb about 80 ms on its path, once per
    probe."""
    program = shutil.which("true")
    argv = [program] if program is not None else [sys.executable, "-I", "-S", "-c", ""]
    try:
        return subprocess.run(argv, preexec_fn=check, capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False
