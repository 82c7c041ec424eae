"""A fresh network namespace per test process: loopback only, enforced by the kernel.

Entered between ``fork`` and ``exec`` (``preexec_fn``), so it holds for everything the test
process starts -- subprocesses and C extensions included, which no in-process guard can see.
As root, ``unshare(CLONE_NEWNET)``; otherwise a user namespace too, mapping the user to itself
(not to root: a test that checks file permissions must see the same uid as outside). Loopback
is brought up with the ``SIOCSIFFLAGS`` ioctl, so neither ``ip`` nor ``unshare(1)`` is needed.

Containers often forbid namespaces; ``available()`` tries once and the runner falls back to the
plugin's socket guard, saying so in the record.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import socket
import struct
import subprocess
import sys

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1
IFREQ = "16sH22x"  # struct ifreq: the name, the flags, padding to 40 bytes

_AVAILABLE: list[bool] = []


def enter() -> None:
    """Move the calling process into a new network namespace with loopback up."""
    libc = ctypes.CDLL(None, use_errno=True)
    uid, gid = os.geteuid(), os.getegid()
    flags = CLONE_NEWNET if uid == 0 else CLONE_NEWUSER | CLONE_NEWNET
    if libc.unshare(flags) != 0:
        err = ctypes.get_errno()
        raise OSError(err, "unshare: %s" % os.strerror(err))
    if uid != 0:
        maps = (("setgroups", "deny"), ("uid_map", "%d %d 1" % (uid, uid)), ("gid_map", "%d %d 1" % (gid, gid)))
        for name, text in maps:
            with open("/proc/self/%s" % name, "w") as fh:
                fh.write(text)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        current = struct.unpack(IFREQ, fcntl.ioctl(sock, SIOCGIFFLAGS, struct.pack(IFREQ, b"lo", 0)))[1]
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack(IFREQ, b"lo", current | IFF_UP))


def available() -> bool:
    """Whether this machine lets us make one (tried once per process)."""
    if not _AVAILABLE:
        if not sys.platform.startswith("linux"):
            _AVAILABLE.append(False)
        else:
            try:
                proc = subprocess.run(
                    [sys.executable, "-c", "import socket; socket.create_connection(('127.0.0.1', 9), 1)"],
                    preexec_fn=enter,
                    capture_output=True,
                    timeout=30,
                )
                # Refused on loopback (nothing listens on port 9) proves loopback is up.
                _AVAILABLE.append(b"ConnectionRefused" in proc.stderr or proc.returncode == 0)
            except (OSError, subprocess.SubprocessError):
                _AVAILABLE.append(False)
    return _AVAILABLE[0]
