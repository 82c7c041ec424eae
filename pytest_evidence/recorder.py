"""The recorder: where pytest's reports become observations, streamed as tests finish.

Registered on the process that sees every report -- the only process in a serial run, the
controller under xdist (workers ship their reports, with the flake policy's attempts attached).
It never writes on a worker, so the stream and the store have exactly one writer.

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

import sys
from typing import Any, Dict, FrozenSet, List, Optional, Set, Tuple

import pytest

from pytest_evidence.flake import show_flaky
from pytest_evidence.model import Failure, FailureKind, Observation
from pytest_evidence.reports import DEPS_ATTR, REPLACED_ATTR, failure_of, observe
from pytest_evidence.stream import Signer, StreamWriter


def _chain_names(node: Any, known: Dict[Any, FrozenSet[str]]) -> FrozenSet[str]:
    """The names of the markers on ``node`` and every node above it, each node's computed once."""
    if node is None:
        return frozenset()
    names = known.get(node)
    if names is None:
        names = known[node] = frozenset(m.name for m in node.own_markers) | _chain_names(node.parent, known)
    return names


def _marker_names(item: pytest.Item, known: Dict[Any, FrozenSet[str]]) -> Set[str]:
    """``{m.name for m in item.iter_markers()}``: pytest's ``iter_markers`` walks the item's own
    markers and then its parents', for every item again; the parents' names are shared here."""
    cls = type(item)
    if cls.iter_markers is not pytest.Item.iter_markers or (
        cls.iter_markers_with_node is not pytest.Item.iter_markers_with_node
    ):  # an item that says its markers its own way
        return {m.name for m in item.iter_markers()}
    return {m.name for m in item.own_markers} | _chain_names(item.parent, known)


class Recorder:
    """Collects phase reports per test and emits one ``Observation`` when the test is over."""

    def __init__(
        self,
        stream_path: Optional[str],
        stream_fd: Optional[int] = None,
        sign: Optional[Signer] = None,
        from_workers: bool = False,
    ) -> None:
        self.stream: Optional[StreamWriter] = None
        if stream_fd is not None:
            self.stream = StreamWriter(fd=stream_fd, sign=sign)
        elif stream_path:
            self.stream = StreamWriter(stream_path, sign=sign)
        self.collected: Optional[List[str]] = None
        self.deselected = 0
        self.collect_errors: Dict[str, Failure] = {}
        self.observed: Dict[str, Observation] = {}
        self.network: List[Tuple[Optional[str], str, bool]] = []  # attempts: (test id, address, blocked)
        self._pending: Dict[str, List[Any]] = {}
        self._repeats: Dict[str, int] = {}  # results streamed per test id: a result line's ``repeat``
        self._from_workers = from_workers  # an xdist controller: the workers' findings ride on reports

    def _emit(self, line_type: str, payload: Dict[str, Any]) -> None:
        if self.stream is not None:
            self.stream.write(line_type, payload)

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        if session.config.pluginmanager.has_plugin("dsession"):
            show_flaky(session.config)  # the workers' flips are logged here, with nothing before them
        payload: Dict[str, Any] = {"pytest": pytest.__version__, "python": sys.version.split()[0]}
        self._emit("session_start", payload)

    def pytest_deselected(self, items: List[pytest.Item]) -> None:
        self.deselected += len(items)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        markers = {}
        inherited: Dict[Any, FrozenSet[str]] = {}
        for item in session.items:
            names = sorted(_marker_names(item, inherited))
            if names:
                markers[item.nodeid] = names
        self._collected([item.nodeid for item in session.items], markers)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: List[str]) -> None:
        if self.collected is None:
            self._collected(list(ids), {})

    def _collected(self, ids: List[str], markers: Dict[str, List[str]]) -> None:
        """The collected test ids, each once (items ``distinct_ids`` could not tell apart fold:
        ``Observation.and_then``)."""
        ids = list(dict.fromkeys(ids))
        self.collected = ids
        self._emit("collected", {"test_ids": ids, "markers": markers})

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            failure = failure_of(report, FailureKind.COLLECTION_ERROR)
            self.collect_errors[report.nodeid] = failure
            self._emit("collect_error", {"nodeid": report.nodeid, "failure": failure.to_dict()})

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        nodeid = report.nodeid
        pending = self._pending.get(nodeid)
        if pending is None:
            pending = self._pending[nodeid] = []
        pending.append(report)
        if self._from_workers:
            found = getattr(report, REPLACED_ATTR, None)
            if found:
                self.replaced(report, found)
        if report.when in ("setup", "call"):
            return
        # teardown, or xdist's "???" for a crash: the test is over, and its line goes out now
        del self._pending[nodeid]
        obs = observe(nodeid, pending)
        earlier = self.observed.get(nodeid)
        self.observed[nodeid] = obs if earlier is None else earlier.and_then(obs)
        repeat = self._repeats.get(nodeid, 0)
        self._repeats[nodeid] = repeat + 1
        if self.stream is not None:
            self.stream.write_result(obs, repeat)
        deps = getattr(report, DEPS_ATTR, None)
        if deps is not None:
            self._emit("deps", {"test_id": nodeid, "functions": deps[0], "files": deps[1]})

    def replaced(self, report: pytest.TestReport, found: List[List[Optional[str]]]) -> None:
        """The test frameworks' objects found replaced by the time of this teardown report
        (``originals``): handed over in this process, or, where a worker ran the test, with
        its report."""
        self._emit("replaced", {"test_id": report.nodeid, "found": found})

    def emit_deps(self, test_id: str, keys: List[str]) -> None:
        """Dependency keys known only at session end (coverage.py's per-test lines)."""
        self._emit("deps", {"test_id": test_id, "functions": keys, "files": []})

    def network_attempt(self, test_id: Optional[str], address: str, blocked: bool) -> None:
        """The network guard saw an attempt on ``address`` while ``test_id`` ran (None: outside any
        test), and refused it (``blocked``) or let it through to loopback."""
        if (test_id, address, blocked) not in self.network:
            self.network.append((test_id, address, blocked))
            self._emit("network", {"test_id": test_id, "address": address, "blocked": blocked})

    def barrier(self, group: int, ran: int) -> None:
        """Group ``group`` of a grouped session (``groups``) is over, ``ran`` tests in it."""
        self._emit("barrier", {"group": group, "ran": ran})

    def emit_module_origins(self, names: List[str]) -> None:
        """Where each watched module was imported from during the session (None: not imported)."""
        origins = {}
        for name in names:
            module = sys.modules.get(name)
            origins[name] = getattr(module, "__file__", None) if module is not None else None
        self._emit("modules", {"origins": origins})

    def discard_stream(self) -> None:
        """The session was refused as bad input: what it streamed describes nothing."""
        if self.stream is not None:
            self.stream.discard()
            self.stream = None

    def finish_stream(self, exit_status: int) -> None:
        self._emit("session_finish", {"exit_status": exit_status})
        if self.stream is not None:
            self.stream.close()
            self.stream = None
