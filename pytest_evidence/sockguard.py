"""The socket guard: loopback and Unix sockets only, and every attempt named. Standard library
only: it is loaded by the plugin in the test process and, through ``sitecustomize``, in every
Python subprocess a test starts (``pytest_evidence/carrier.py``).

A green obtained while the code under test talks to the internet proves something about the
internet. The runner puts each test process in a fresh network namespace where it can (that
holds for subprocesses and C extensions too); this guard is what *sees* an attempt, in either
case, and the only barrier where no namespace can be made. It refuses a connection, a datagram or
a name lookup that leaves the machine with ``OSError(ENETUNREACH)`` -- what offline code already
handles -- and reports the address against the test that was running. Allowed loopback attempts
are reported too (not blocked): the runner compares B's with C's.

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

import errno
import ipaddress
import json
import os
import socket
from typing import Any, Callable, List, Optional, Tuple

LOCAL_NAMES = frozenset({"", "localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})


def _is_local_host(host: Any) -> bool:
    if host is None:
        return True
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    name = str(host).strip("[]").lower()
    if name in LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(name.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


def _is_address(host: Any) -> bool:
    try:
        ipaddress.ip_address(str(host.decode("ascii", "replace") if isinstance(host, bytes) else host).strip("[]"))
    except ValueError:
        return False
    return True


def _describe(address: Any) -> Tuple[bool, Optional[str]]:
    """``(allowed, text)`` for a socket address of any family; text None: not a network address
    (a Unix socket path)."""
    if isinstance(address, (str, bytes)):  # AF_UNIX path
        return True, None
    if isinstance(address, tuple) and address:
        host = address[0]
        port = address[1] if len(address) > 1 else ""
        return _is_local_host(host), "%s:%s" % (host, port)
    return True, None


#: ``report(test_id, address, blocked)``: every connect or datagram to an internet address.
Report = Callable[[Optional[str], str, bool], None]


class SocketGuard:
    """Patches ``socket``; ``report`` hears every attempt -- a refused one, and an allowed
    loopback one too: code that quietly tries a local port where B did not is a change in
    behaviour the tests may not see. ``current`` names the test running (None: none)."""

    def __init__(self, report: Report) -> None:
        self.report = report
        self.current: Optional[str] = None
        self._saved: List[Tuple[Any, str, Any]] = []

    def _check(self, address: Any) -> Optional[str]:
        """Report an attempt to ``address``; the refused one's text, None when it may proceed."""
        allowed, text = _describe(address)
        if text is not None:
            self.report(self.current, text, not allowed)
        return None if allowed else text

    @staticmethod
    def _refusal(text: str) -> OSError:
        return OSError(errno.ENETUNREACH, "network access to %s blocked by pytest-evidence" % text)

    def install(self) -> None:
        guard = self
        real_connect = socket.socket.connect
        real_connect_ex = socket.socket.connect_ex
        real_sendto = socket.socket.sendto
        real_getaddrinfo = socket.getaddrinfo

        def connect(sock: socket.socket, address: Any) -> None:
            refused = guard._check(address)
            if refused is not None:
                raise guard._refusal(refused)
            real_connect(sock, address)

        def connect_ex(sock: socket.socket, address: Any) -> int:
            if guard._check(address) is not None:
                return errno.ENETUNREACH
            return real_connect_ex(sock, address)

        def sendto(sock: socket.socket, data: Any, *args: Any) -> int:
            refused = guard._check(args[-1]) if args else None
            if refused is not None:
                raise guard._refusal(refused)
            return real_sendto(sock, data, *args)

        def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
            if not _is_local_host(host) and not _is_address(host):  # an address needs no lookup
                guard.report(guard.current, "%s (name lookup)" % host, True)
                raise socket.gaierror(socket.EAI_NONAME, "name lookup of %s blocked by pytest-evidence" % host)
            return real_getaddrinfo(host, *args, **kwargs)

        for owner, name, replacement in (
            (socket.socket, "connect", connect),
            (socket.socket, "connect_ex", connect_ex),
            (socket.socket, "sendto", sendto),
            (socket, "getaddrinfo", getaddrinfo),
        ):
            self._saved.append((owner, name, getattr(owner, name)))
            setattr(owner, name, replacement)

    def uninstall(self) -> None:
        for owner, name, original in reversed(self._saved):
            setattr(owner, name, original)
        self._saved = []


#: Set by the runner on every test process: where Python subprocesses log their attempts.
LOG_VARIABLE = "PYTEST_EVIDENCE_NETLOG"

_carried: List[SocketGuard] = []  # the carrier's guard in this process, if it installed one


def carry(log_path: str) -> None:
    """Guard this process (a subprocess of a test), appending each attempt to ``log_path`` as a
    JSON line named by the test that started it (``PYTEST_CURRENT_TEST``, inherited)."""

    def report(test_id: Optional[str], address: str, blocked: bool) -> None:
        current = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0] or None
        line = json.dumps({"test_id": current, "address": address, "blocked": blocked, "pid": os.getpid()})
        with open(log_path, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")

    guard = SocketGuard(report)
    guard.install()
    _carried.append(guard)


def uninstall_carried() -> None:
    """The test process's own guard takes over: it reports through the stream."""
    while _carried:
        _carried.pop().uninstall()


def read_log(path: str) -> List[Tuple[Optional[str], str, bool]]:
    """The attempts Python subprocesses logged; lines that do not parse are skipped (a killed
    writer's half line). Written by code the test started: it can add attempts, and it can
    forge them -- evidence of a subprocess's behaviour, not an authenticated channel."""
    found: List[Tuple[Optional[str], str, bool]] = []
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return found
    for line in lines:
        try:
            doc = json.loads(line)
            found.append((doc["test_id"], "%s (in a subprocess)" % doc["address"], bool(doc["blocked"])))
        except (ValueError, KeyError, TypeError):
            continue
    return found
