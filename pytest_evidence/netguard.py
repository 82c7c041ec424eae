"""The in-process network guard: loopback and Unix sockets only, and every other attempt named.

A green obtained while the code under test talks to the internet proves something about the
internet. The runner puts each test process in a fresh network namespace where it can (that
holds for subprocesses and C extensions too); this guard is what *sees* an attempt, in either
case, and the only barrier where no namespace can be made. It refuses a connection, a datagram or
a name lookup that leaves the machine with ``OSError(ENETUNREACH)`` -- what offline code already
handles -- and reports the address against the test that was running.
"""

from __future__ import annotations

import errno
import ipaddress
import socket
from typing import Any, Callable, List, Optional, Tuple

import pytest

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


def _describe(address: Any) -> Tuple[bool, str]:
    """``(allowed, text)`` for a socket address of any family."""
    if isinstance(address, (str, bytes)):  # AF_UNIX path
        return True, str(address)
    if isinstance(address, tuple) and address:
        host = address[0]
        port = address[1] if len(address) > 1 else ""
        return _is_local_host(host), "%s:%s" % (host, port)
    return True, repr(address)


class NetworkGuard:
    """Patches ``socket`` for the session; ``report(test_id, address)`` hears every refusal."""

    def __init__(self, report: Callable[[Optional[str], str], None]) -> None:
        self.report = report
        self.current: Optional[str] = None
        self._saved: List[Tuple[Any, str, Any]] = []

    def _refuse(self, address: str) -> OSError:
        self.report(self.current, address)
        return OSError(errno.ENETUNREACH, "network access to %s blocked by pytest-evidence" % address)

    def install(self) -> None:
        guard = self
        real_connect = socket.socket.connect
        real_connect_ex = socket.socket.connect_ex
        real_sendto = socket.socket.sendto
        real_getaddrinfo = socket.getaddrinfo

        def connect(sock: socket.socket, address: Any) -> None:
            allowed, text = _describe(address)
            if not allowed:
                raise guard._refuse(text)
            real_connect(sock, address)

        def connect_ex(sock: socket.socket, address: Any) -> int:
            allowed, text = _describe(address)
            if not allowed:
                guard._refuse(text)
                return errno.ENETUNREACH
            return real_connect_ex(sock, address)

        def sendto(sock: socket.socket, data: Any, *args: Any) -> int:
            allowed, text = _describe(args[-1]) if args else (True, "")
            if not allowed:
                raise guard._refuse(text)
            return real_sendto(sock, data, *args)

        def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
            if not _is_local_host(host) and not _is_address(host):  # an address needs no lookup
                guard.report(guard.current, "%s (name lookup)" % host)
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

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logstart(self, nodeid: str) -> None:
        self.current = nodeid

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        self.current = None

    def pytest_unconfigure(self) -> None:
        self.uninstall()
