"""An active session's wiring: one object per concern, and only the ones this process needs.

* ``FlakePolicy`` where tests run (a serial session, or an xdist worker), and there in record
  mode ``NativeTracebacks``;
* ``Recorder`` and ``Finisher`` where every report arrives (a serial session, or the xdist
  controller), so the stream, the record and the store each have exactly one writer, and
  ``JunitProperties`` beside the ``Finisher`` (``--junitxml`` gains each test's role, B/C class
  and bug-discriminating once the record is typed);
* ``DistinctIds`` where collection happens: items sharing a node id get distinct ones;
* ``FrameworkWatch`` where tests run in record mode: the test frameworks' objects something
  replaced since the first conftest (``originals``), on the reports;
* ``Selector`` where collection happens, when ``--evidence-select`` is given;
* ``NetworkGuard`` where tests run, when ``--evidence-no-network`` is given (its refusals are
  streamed by the recorder of the same process; an xdist worker blocks without reporting).

The modules of a concern are imported only when the concern is wired: the runner starts many
short record-mode sessions, which never assemble a record, keep a store or write JUnit XML and
mostly record no dependencies, and pytest may compile each module it imports from source (see
``pytest_evidence/__init__.py``).

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, List, Optional, Tuple

import pytest

from pytest_evidence import options
from pytest_evidence.distinct_ids import DistinctIds
from pytest_evidence.errors import BadInput, EvidenceError, StoreLocked
from pytest_evidence.flake import FlakePolicy

if TYPE_CHECKING:
    from pytest_evidence.netguard import Report
    from pytest_evidence.originals import HandOver
    from pytest_evidence.plugin import TakenChannel
    from pytest_evidence.recorder import Recorder
    from pytest_evidence.stream import Signer


def configure(config: pytest.Config, channel: Optional[TakenChannel]) -> None:
    """Check every value (bad input fails here, before any test runs and before anything is
    written), then register what this process needs."""
    is_worker = hasattr(config, "workerinput")
    is_controller = _distributing(config) and not is_worker
    try:
        settings = options.settings(config, writes=not is_worker)
        sign = None if is_worker else _signer(settings, channel)
        baseline = None
        if settings.baseline and not settings.record_mode:
            from pytest_evidence.finish import BaselinePlan

            baseline = BaselinePlan(config, settings)
        if not settings.record_mode and not is_worker:  # the controller checked it
            _check_store(settings)
        control = _control(settings, is_worker or is_controller)
    except EvidenceError as exc:
        raise pytest.UsageError(exc.line("evidence")) from None
    config.pluginmanager.register(DistinctIds(), "evidence-distinct-ids")
    if settings.select:
        from pytest_evidence.select import Selector

        config.pluginmanager.register(Selector(settings.select), "evidence-selector")
    if settings.collect is not None:
        from pytest_evidence.scope import CollectionScope

        scope = CollectionScope(settings.collect, str(config.invocation_params.dir))
        config.pluginmanager.register(scope, "evidence-collection-scope")
    if not is_controller:
        config.pluginmanager.register(FlakePolicy(settings.reruns), "evidence-flake-policy")
        if settings.record_mode:
            from pytest_evidence import tracebacks

            tracebacks.install(config)
    if is_worker:
        if settings.record_mode:
            from pytest_evidence.originals import on_the_report

            _watch_frameworks(config, on_the_report)
        if settings.no_network:
            _guard(config, lambda _test_id, _address, _blocked: None)
        if settings.deps_root:  # per-test data must ride on the reports: only the tracer can
            _record_deps(config, settings.deps_root, "tracer", _no_emit)
        return
    from pytest_evidence.recorder import Recorder

    recorder = Recorder(settings.stream, settings.stream_fd, sign, from_workers=is_controller)
    config.pluginmanager.register(recorder, "evidence-recorder")
    if settings.record_mode and not is_controller:
        _watch_frameworks(config, recorder.replaced)
    if settings.no_network and not is_controller:
        _guard(config, recorder.network_attempt)
    if settings.deps_root and not is_controller:
        _record_deps(config, settings.deps_root, settings.deps_engine, recorder.emit_deps)
    if settings.record_mode:
        config.pluginmanager.register(_RecordModeEnd(recorder, list(settings.watch)), "evidence-record-mode")
        if control is not None:
            from pytest_evidence.groups import GroupedRun

            config.pluginmanager.register(GroupedRun(recorder, *control), "evidence-groups")
        return
    from pytest_evidence.finish import Finisher
    from pytest_evidence.junit_properties import JunitProperties

    finisher = Finisher(config, settings, recorder, baseline)
    config.pluginmanager.register(finisher, "evidence-finisher")
    config.pluginmanager.register(JunitProperties(finisher), "evidence-junit-properties")


def _distributing(config: pytest.Config) -> bool:
    """Whether xdist will make this process its controller. Its ``dsession`` plugin is not there
    yet: xdist registers it in a ``trylast`` ``pytest_configure``, after this one -- by the
    condition read here, from the options its ``pytest_cmdline_main`` has settled (``-n N``
    turned into ``--dist load``)."""
    dist = getattr(config.option, "dist", "no")
    return dist != "no" and not config.getoption("collectonly", False)


def _signer(settings: options.Settings, channel: Optional[TakenChannel]) -> Optional[Signer]:
    """The signer of the key ``_take_channel`` read, after checking it read the descriptors the
    parsed options name."""
    if channel is not None and channel.error is not None:
        raise channel.error
    if settings.key_fd is not None and (channel is None or channel.key_fd != settings.key_fd):
        raise BadInput("%s %d was not read before the conftests" % (options.KEY_FD, settings.key_fd))
    if settings.stream_fd is not None and (channel is None or channel.stream_fd != settings.stream_fd):
        raise BadInput("%s %d was not taken before the conftests" % (options.STREAM_FD, settings.stream_fd))
    return None if channel is None else channel.sign


def _control(settings: options.Settings, distributed: bool) -> Optional[Tuple[int, int]]:
    """``--evidence-control``'s descriptors, checked: the runner's grouped session only."""
    if settings.control is None:
        return None
    if not settings.record_mode:
        raise BadInput("%s is the runner's: it needs %s" % (options.CONTROL, options.RECORD_MODE))
    if distributed:
        raise BadInput("%s runs one process's tests in groups: it does not run under xdist" % options.CONTROL)
    from pytest_evidence.groups import descriptors

    return descriptors(options.CONTROL, settings.control)


def _check_store(settings: options.Settings) -> None:
    """A corrupt store, or one of another format, fails now rather than after the tests.

    A store that is only locked may be free by the session's end; if it is not, the record is
    written without it and the failure reported then.
    """
    from pytest_evidence.store import Store

    try:
        Store(settings.store, settings.store_timeout).close()
    except StoreLocked:
        pass


def _watch_frameworks(config: pytest.Config, hand_over: HandOver) -> None:
    """Look for the test frameworks' objects replaced, from the snapshot taken before the first
    conftest (``plugin.pytest_load_initial_conftests``); none where record mode was not known
    then, and the session says so rather than looking at nothing."""
    from pytest_evidence.originals import FrameworkWatch
    from pytest_evidence.plugin import originals_key

    originals = config.stash.get(originals_key, None)
    if originals is None:
        raise pytest.UsageError(
            "evidence: %s was not given before the first conftest: the test frameworks' objects "
            "could not be looked at before the code under test ran" % options.RECORD_MODE
        )
    config.pluginmanager.register(FrameworkWatch(originals, hand_over), "evidence-framework-watch")


def _guard(config: pytest.Config, report: Report) -> None:
    from pytest_evidence.netguard import NetworkGuard

    guard = NetworkGuard(report)
    guard.install()
    config.pluginmanager.register(guard, "evidence-network-guard")


def _record_deps(config: pytest.Config, root: str, engine: str, emit: Callable[[str, List[str]], None]) -> None:
    from pytest_evidence.deps import DependencyRecorder, choose_engine

    config.pluginmanager.register(DependencyRecorder(root, choose_engine(engine), emit), "evidence-deps")


def _no_emit(test_id: str, keys: List[str]) -> None:
    """Workers stream nothing themselves."""


class _RecordModeEnd:
    """Record mode (a baseline run): close the stream with the exit status, nothing more."""

    def __init__(self, recorder: Recorder, watch: List[str]) -> None:
        self.recorder = recorder
        self.watch = watch

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.watch:
            self.recorder.emit_module_origins(self.watch)
        self.recorder.finish_stream(int(exitstatus))
