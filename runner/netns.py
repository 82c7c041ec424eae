"""A fresh network namespace per test process: loopback only, enforced by the kernel.

Entered between ``fork`` and ``exec`` (``preexec_fn``), so it holds for everything the test
process starts -- subprocesses and C extensions included, which no in-process guard can see.
As root, ``unshare(CLONE_NEWNET)``; otherwise, and for root too where directories are covered,
a user namespace too, mapping the user to itself (not to root: a test that checks file
permissions must see the same uid as outside). Loopback
is brought up with the ``SIOCSIFFLAGS`` ioctl, so neither ``ip`` nor ``unshare(1)`` is needed.

Containers often forbid namespaces; ``available()`` tries once and the runner falls back to the
plugin's socket guard, saying so in the record.

``hidden`` directories are covered, for that process alone, by an empty file system of its own
(a mount namespace, entered with the network one): the evidence store, which a test process
could otherwise reach through its worktree's ``.git`` file and rewrite -- an independent review
forged B's stored suite run there, and a later regressing candidate was CERTIFIED.
``can_hide()`` tries once whether this machine allows it.

``read_only`` directories -- the target's and the runner's installed code -- are bound read-only
over themselves in the same mount namespace: a test that planted a ``.pth`` file or rewrote an
installed module (pytest's own, the plugin's private copy, the runner) there would run its code
in every later process of that interpreter, the next certify's test processes and probes
included, where no check of this one looks. ``can_protect()`` tries a list once.

Where it mounts, a test process runs in a user namespace of its own, root too (mapped to
itself), and without the capability that mounts (``CAP_SYS_ADMIN``, dropped from its bounding
set): it can take no cover off and make no binding writable (a review's probe unmounted the
store's cover as root), and ``/proc/<pid>/root`` of a process outside -- the runner's view of
the file system, uncovered and writable, which a root test process reached -- is refused it.
``can_hide()`` asks a program started so.

What a test process leaves running out of its process group (``start_new_session``) is still in
its namespaces: ``entered()`` names them once it runs, ``end_left()`` kills what is left there
when it ends, and ``Confined`` holds a process the runner started there: it reads its pipes
without waiting on such a process's end, and kills what is left once it ended or is stopped.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import functools
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
CLONE_NEWNS = 0x00020000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 0x2, 0x4, 0x8, 0x4000, 0x40000
MS_RDONLY, MS_REMOUNT, MS_BIND = 0x1, 0x20, 0x1000
PR_CAPBSET_DROP, CAP_SYS_ADMIN = 24, 21
#: A mount's flags a user namespace may not clear when it remounts a copy (the kernel locks
#: them): ``statvfs``'s flag, and the ``mount`` flag that keeps it.
_LOCKED = (
    (os.ST_NOSUID, MS_NOSUID),
    (os.ST_NODEV, MS_NODEV),
    (os.ST_NOEXEC, MS_NOEXEC),
    (os.ST_NOATIME, 0x400),
    (os.ST_NODIRATIME, 0x800),
    (os.ST_RELATIME, 0x200000),
)
SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1
IFREQ = "16sH22x"  # struct ifreq: the name, the flags, padding to 40 bytes

_AVAILABLE: list[bool] = []
_HIDES: list[bool] = []
_PROTECTS: dict[tuple[str, ...], bool] = {}

#: A directory to bind read-only over itself, as bytes, with the flags of its remount.
Protected = tuple[bytes, int]


def protected(path: str) -> Protected:
    """``path`` as ``enter`` takes it: the remount's flags keep those its mount has (read here,
    in the parent: nothing between fork and exec but the calls themselves)."""
    have = os.statvfs(path).f_flag
    kept = sum(flag for st, flag in _LOCKED if have & st)
    return os.fsencode(path), MS_BIND | MS_REMOUNT | MS_RDONLY | kept


def enter(hidden: Sequence[bytes] = (), read_only: Sequence[Protected] = ()) -> None:
    """Move the calling process into a new network namespace with loopback up, cover each of
    ``hidden`` (paths, as bytes: no encoding between fork and exec) with an empty tmpfs, and
    bind each of ``read_only`` read-only over itself."""
    libc = ctypes.CDLL(None, use_errno=True)
    uid, gid = os.geteuid(), os.getegid()
    mounts = hidden or read_only
    flags = CLONE_NEWNET | (CLONE_NEWNS | CLONE_NEWUSER if mounts else 0) | (0 if uid == 0 else CLONE_NEWUSER)
    if libc.unshare(flags) != 0:
        _failed("unshare")
    if flags & CLONE_NEWUSER:
        maps = (("setgroups", "deny"), ("uid_map", "%d %d 1" % (uid, uid)), ("gid_map", "%d %d 1" % (gid, gid)))
        for name, text in maps:
            with open("/proc/self/%s" % name, "w") as fh:
                fh.write(text)
    if mounts:  # private first: the covers must not reach the runner's own view of the tree
        if libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) != 0:
            _failed("mount --make-rprivate /")
        for path in hidden:
            if libc.mount(b"tmpfs", path, b"tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, b"size=64k,mode=0700") != 0:
                _failed("mount tmpfs on %s" % path.decode(errors="replace"))
        for path, remount in read_only:
            if libc.mount(path, path, None, MS_BIND | MS_REC, None) != 0:
                _failed("mount --bind %s" % path.decode(errors="replace"))
            if libc.mount(None, path, None, remount, None) != 0:
                _failed("mount -o remount,ro %s" % path.decode(errors="replace"))
        # The capability that mounts goes at exec: no cover comes off, no binding is made
        # writable. A user namespace a test makes cannot either: the mounts it copies are locked.
        if libc.prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0) != 0:
            _failed("prctl PR_CAPBSET_DROP CAP_SYS_ADMIN")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        current = struct.unpack(IFREQ, fcntl.ioctl(sock, SIOCGIFFLAGS, struct.pack(IFREQ, b"lo", 0)))[1]
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack(IFREQ, b"lo", current | IFF_UP))


def _failed(what: str) -> None:
    err = ctypes.get_errno()
    raise OSError(err, "%s: %s" % (what, os.strerror(err)))


def can_hide() -> bool:
    """Whether a directory can be covered here (tried once per process, in a child): a file in
    it must be gone from the child's view, and still there in ours; and the program the child
    becomes -- with a test process's capabilities -- must not take the cover off."""
    if not _HIDES:
        _HIDES.append(False)
        if available():
            with tempfile.TemporaryDirectory(prefix="evidence-hide-") as where:
                open(os.path.join(where, "seen"), "w").close()

                def covered() -> None:
                    enter([os.fsencode(where)])
                    if os.listdir(where):
                        raise OSError("%s is not covered" % where)

                stuck = [sys.executable, "-I", "-S", "-c", _STUCK, where]
                _HIDES[0] = _in_child(covered, stuck) and os.path.exists(os.path.join(where, "seen"))
    return _HIDES[0]


#: Exits 0 when no path named can have what is mounted there taken off (``umount -l``) or made
#: writable (``mount -o remount,rw``).
_STUCK = """import ctypes, sys
libc = ctypes.CDLL(None)
for path in sys.argv[1:]:
    if libc.umount2(path.encode(), 2) == 0 or libc.mount(None, path.encode(), None, 0x1020, None) == 0:
        sys.exit(1)
"""


def can_protect(paths: tuple[str, ...]) -> bool:
    """Whether ``paths`` can all be made read-only here (tried once per list and process, in a
    child): each must be read-only in the child's view, and stay writable in ours; what holds
    a cover holds a binding (``can_hide``). Tried before a climb uses them, so that a directory
    the kernel will not bind (another file system's rules) costs the guarantee, said in the
    record, and not every test process's start."""
    if paths not in _PROTECTS:
        _PROTECTS[paths] = False
        if can_hide():
            asked = [protected(p) for p in paths]

            def read_only() -> None:
                enter((), asked)
                if any(writable_here(p) is not False for p in paths):
                    raise OSError("not read-only")

            _PROTECTS[paths] = _in_child(read_only) and not any(writable_here(p) is False for p in paths)
    return _PROTECTS[paths]


def writable_here(path: str) -> bool | None:
    """Whether ``path``'s mount is writable in this process's view (None: not there to ask)."""
    try:
        return not os.statvfs(path).f_flag & os.ST_RDONLY
    except OSError:
        return None


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


def _in_child(check: Callable[[], None], argv: Sequence[str] = ()) -> bool:
    """Whether ``check`` runs without an exception in a forked child, between fork and exec,
    where every test process enters its namespaces, and the program the child then execs
    (``argv``; by default the smallest at hand: a probe that started an interpreter cost the
    climb about 80 ms on its path, once per probe) exits 0."""
    if not argv:
        program = shutil.which("true")
        argv = [program] if program is not None else [sys.executable, "-I", "-S", "-c", ""]
    try:
        return subprocess.run(argv, preexec_fn=check, capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


#: A namespace a test process entered, by which what it leaves running is found: its kind
#: (``user`` or ``net``), and the device and inode ``stat`` gives its ``/proc/PID/ns`` link.
Namespace = tuple[str, int, int]

NS_GET_PARENT = 0xB702  # _IO(0xb7, 0x2): the user namespace a user namespace was made in


def entered(pid: int) -> Namespace | None:
    """The namespace process ``pid`` entered (``enter``), asked once it runs: its user namespace
    where it made one, else its network one; None where it entered neither, or is gone."""
    for kind in ("user", "net"):
        try:
            theirs = os.stat("/proc/%d/ns/%s" % (pid, kind))
        except OSError:
            return None
        if (theirs.st_dev, theirs.st_ino) != _own(kind):
            return kind, theirs.st_dev, theirs.st_ino
    return None


@functools.cache
def _own(kind: str) -> tuple[int, int]:
    """The runner's own namespace of ``kind``: it enters none, so it is read once."""
    ours = os.stat("/proc/self/ns/%s" % kind)
    return ours.st_dev, ours.st_ino


def end_left(namespace: Namespace | None) -> int:
    """Kill every process still in ``namespace`` (or, for a user namespace, in one made inside
    it), once the test process that entered it has ended: what its tests detached
    (``start_new_session``: out of its process group, which a kill takes) and left running,
    which a review's test used to patch the next certify's checkout. Looked for again until a
    look finds none: a process that forked as it was killed is found on the next. Returns how
    many were killed."""
    if namespace is None:
        return 0
    killed: set[int] = set()
    for _ in range(100):
        found = [pid for pid in _pids() if _inside(pid, namespace)]
        if not found:
            break
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
        time.sleep(0.01)  # what was killed is gone, or a zombie, by the next look
    return len(killed)


class Confined:
    """A process started in the sandbox (``enter``, where ``namespaced``), and what it leaves
    running: ``stop`` kills it (``kill``: its process group, or the process alone where it leads
    none) and what is left in its namespace; ``read`` reads its pipes to their end and kills what
    is left once it ended. One owner of that order for every process the runner starts there."""

    def __init__(self, proc: subprocess.Popen[str], kill: Callable[[], None], namespaced: bool) -> None:
        self.proc = proc
        self.namespace = entered(proc.pid) if namespaced else None
        self._kill = kill

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):  # it may have ended on its own meanwhile
            self._kill()
        self.end_left()

    def end_left(self) -> None:
        """Kill what it left running out of its process group (``end_left``): such a process
        could write a later process's checkout, and it holds the pipes a reader waits on."""
        end_left(self.namespace)

    def read(self, budget: float | None, input: str | None = None) -> tuple[str, str, bool]:
        """Its stdout and stderr, read to their end, and whether it outran ``budget`` seconds
        (then it is stopped, and what it wrote until then is returned). Its pipes end only when
        every process holding them has: what it left running is killed once it ended, rather
        than waited for. Stopped on anything raised meanwhile too (Ctrl-C, SIGTERM): nothing it
        started outlives the runner."""
        try:
            read = self._read(budget, input)
        except BaseException:
            self.stop()
            raise
        self.end_left()
        return read

    def _read(self, budget: float | None, input: str | None) -> tuple[str, str, bool]:
        deadline = None if budget is None else time.monotonic() + budget
        while True:
            try:
                out, err = self.proc.communicate(input, timeout=_READ)
                return out or "", err or "", False
            except subprocess.TimeoutExpired:
                input = None  # sent with the first call
                if self.proc.poll() is not None:
                    self.end_left()
                elif deadline is not None and time.monotonic() > deadline:
                    self.stop()
                    out, err = self.proc.communicate()
                    return out or "", err or "", True


#: How long ``Confined.read`` reads before it looks whether the process ended or outran its budget.
_READ = 0.5


def _pids() -> list[int]:
    own = os.getpid()
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    return [int(n) for n in names if n.isdigit() and int(n) != own]


def _inside(pid: int, namespace: Namespace) -> bool:
    """Whether ``pid`` is alive (not a zombie) in ``namespace`` or a user namespace under it."""
    kind, dev, ino = namespace
    try:
        fd = os.open("/proc/%d/ns/%s" % (pid, kind), os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        for _ in range(40):  # the kernel nests user namespaces 32 deep at most
            seen = os.fstat(fd)
            if (seen.st_dev, seen.st_ino) == (dev, ino):
                return not _zombie(pid)
            if kind != "user":
                return False
            try:
                parent = fcntl.ioctl(fd, NS_GET_PARENT)
            except OSError:  # the initial namespace, or one outside the runner's reach
                return False
            os.close(fd)
            fd = parent
        return False
    finally:
        os.close(fd)


def _zombie(pid: int) -> bool:
    try:
        with open("/proc/%d/stat" % pid, "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X")
    except (OSError, IndexError):
        return True
