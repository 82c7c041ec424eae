"""The network guard as a pytest plugin: the socket guard, told which test is running.

See ``sockguard`` for what it refuses and reports. Where the test process itself was started with
the subprocess carrier on its path (the runner's test processes), the carrier's guard is replaced
by this one: the stream, not the carrier's log, reports what this process attempts.

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

import pytest

from pytest_evidence import sockguard
from pytest_evidence.sockguard import Report, SocketGuard

__all__ = ["NetworkGuard", "Report"]


class NetworkGuard(SocketGuard):
    """``SocketGuard`` for the session, with the running test's id kept current."""

    def install(self) -> None:
        sockguard.uninstall_carried()
        super().install()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logstart(self, nodeid: str) -> None:
        self.current = nodeid

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        self.current = None

    def pytest_unconfigure(self) -> None:
        self.uninstall()
