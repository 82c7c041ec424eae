"""The flake policy: a failing test is re-run at most N times, and a flip is quarantine.

Rerun-until-green turns flakiness into a way to win; here a rerun can only ever *lower* the
standing of a test. The cap is enforced by the option parser (``MAX_RERUNS``), so unlimited
reruns cannot be configured. Reruns happen in the same process, inside this hook, so they work
on xdist workers too; the logged reports carry every attempt's outcome (``evidence_attempts``).

Why not pytest-rerunfailures: it reruns *until green* and logs the last attempt as the result;
the plugin must also load in old target environments that have nothing but pytest.

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Iterator, List, Optional

import pytest
from _pytest.runner import runtestprotocol

from pytest_evidence.model import FAILING, Outcome
from pytest_evidence.options import MAX_RERUNS
from pytest_evidence.reports import ATTEMPTS_ATTR, merge
from pytest_evidence.tracebacks import native

_STATUS_PLUGIN = "evidence-flaky-status"

#: The attempts of a test that ran once, one shared tuple per outcome: every logged report keeps
#: its attempts as long as pytest keeps the report (the terminal's statistics: the whole
#: session), and a new list per report was three more objects per test for the cyclic garbage
#: collector to walk, over and over.
_ONE_ATTEMPT = {o: (o.value,) for o in Outcome}

#: Set on an item (``item.stash``) to run it once whatever the reruns: the runner repeats it in
#: further processes of its own (T3's stability runs), and each of those is a rerun already.
ONCE = pytest.StashKey[bool]()


class FlakyStatus:
    """The terminal's status of a flipped test: ``K``, ``FLAKY`` -- not ``F``.

    Not registered until it has something to say (``show_flaky``): asked about every report of
    every test, it would cost more than the rest of the flake policy on a suite that never flips.
    """

    @pytest.hookimpl(tryfirst=True)
    def pytest_report_teststatus(self, report: Any) -> Optional[Any]:
        attempts = getattr(report, ATTEMPTS_ATTR, None)
        if attempts and len(attempts) > 1 and report.failed and len(set(attempts)) > 1:
            return "flaky", "K", ("FLAKY", {"yellow": True})
        return None


def show_flaky(config: pytest.Config) -> None:
    """Register ``FlakyStatus`` on ``config`` (once): before the first flipped report is logged
    where tests run, at the session's start where reports arrive from xdist workers."""
    if not config.pluginmanager.has_plugin(_STATUS_PLUGIN):
        config.pluginmanager.register(FlakyStatus(), _STATUS_PLUGIN)


class FlakePolicy:
    """Runs each item, re-running a failure up to ``reruns`` times, and logs one attempt."""

    def __init__(self, reruns: int) -> None:
        self.reruns = min(reruns, MAX_RERUNS)
        # the subtests' failed call reports of the attempt running: pytest logs them itself as
        # they end, outside what ``runtestprotocol`` returns (``reports.merge``)
        self._subtests: Optional[List[Any]] = None

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: Any) -> None:
        if self._subtests is not None and report.when == "call" and report.failed:
            self._subtests.append(report)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: Optional[pytest.Item]) -> bool:
        ihook = item.ihook
        ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        attempts: List[Outcome] = []
        first_failing: Optional[List[Any]] = None
        reports: List[Any] = []
        while True:
            self._subtests = []
            try:
                reports = _attempt(item, nextitem, self._subtests.append if first_failing is not None else None)
            finally:
                subtests, self._subtests = self._subtests, None
            outcome = merge([*subtests, *reports])[0]
            attempts.append(outcome)
            if outcome in FAILING and first_failing is None:
                first_failing = reports
            if outcome not in FAILING or len(attempts) > self.reruns or item.stash.get(ONCE, False):
                break
        flipped = len(attempts) > 1 and len(set(attempts)) > 1
        if flipped:
            show_flaky(item.config)
        # The first failing attempt is logged, whatever followed: a flip counts as failed, never
        # as a pass, and only that attempt's failure was formatted in full.
        logged = first_failing if first_failing is not None else reports
        values = _ONE_ATTEMPT[attempts[0]] if len(attempts) == 1 else tuple(a.value for a in attempts)
        for rep in logged:
            setattr(rep, ATTEMPTS_ATTR, values)
            ihook.pytest_runtest_logreport(report=rep)
        ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        return True


def _attempt(item: pytest.Item, nextitem: Optional[pytest.Item], rerun: Optional[Callable[[Any], None]]) -> List[Any]:
    """One run of ``item``'s protocol, unlogged; ``rerun``: it runs again after a failure, and
    what is logged from inside it goes to ``rerun`` alone (``_RerunHooks``).

    Of a rerun only the outcome is read, so pytest formats its traceback natively
    (``--tb=native``: Python's own formatter). pytest's default style reparses the source of
    every frame; for a deep traceback (a ``RecursionError``: thousands of frames) that took
    seconds per attempt, paid again on every rerun though only the first failure is ever shown."""
    if rerun is None:
        return runtestprotocol(item, nextitem=nextitem, log=False)
    with native(item.config.option), _rerun_hooks(item.session, rerun):
        return runtestprotocol(item, nextitem=nextitem, log=False)


class _RerunHooks:
    """A node's hooks while its test runs again, but for ``pytest_runtest_logreport``.

    A subtest's report (``TestCase.subTest``, pytest's ``subtests``) is logged from inside the
    run, not by ``runtestprotocol``. Logged in every attempt, one failing subtest reached the
    terminal and junitxml once per attempt: three ``SUBFAILED`` lines and "3 failed" for one test
    under the default two reruns, where only the first failing attempt is ever logged. In a rerun
    it goes to the flake policy alone, which reads its outcome.
    """

    def __init__(self, hooks: Any, sink: Callable[[Any], None]) -> None:
        self._hooks = hooks
        self._sink = sink

    def __getattr__(self, name: str) -> Any:
        return getattr(self._hooks, name)

    def pytest_runtest_logreport(self, report: Any) -> None:
        self._sink(report)


@contextmanager
def _rerun_hooks(session: pytest.Session, sink: Callable[[Any], None]) -> Iterator[None]:
    """``item.ihook`` is ``session.gethookproxy(item.path)`` in every pytest this plugin loads in
    (7.0 on); shadowed on the session for the rerun, it is ``_RerunHooks`` for every node."""
    shadows = vars(session)
    own = shadows.get("gethookproxy")  # another plugin's shadow, put back after
    real = session.gethookproxy
    shadows["gethookproxy"] = lambda fspath: _RerunHooks(real(fspath), sink)
    try:
        yield
    finally:
        if own is None:
            del shadows["gethookproxy"]
        else:
            shadows["gethookproxy"] = own
