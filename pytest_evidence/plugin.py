"""The pytest plugin: ``pytest -p evidence``.

Module-level hooks only add options and, in ``pytest_configure``, register one object per
concern -- and only the ones this process needs:

* ``FlakePolicy`` where tests run (a serial session, or an xdist worker);
* ``Recorder`` and ``Finisher`` where every report arrives (a serial session, or the xdist
  controller), so the stream, the record and the store each have exactly one writer;
* ``Selector`` where collection happens, when ``--evidence-select`` is given;
* ``NetworkGuard`` where tests run, when ``--evidence-no-network`` is given (its refusals are
  streamed by the recorder of the same process; an xdist worker blocks without reporting).

Installed as a pytest11 entry point, the module is imported into every session of its
environment; it stays inert unless ``-p evidence`` or one of its options asks for it. It imports
nothing but the standard library and pytest, in Python 3.8 syntax: it is loaded inside old
target environments.
"""

from __future__ import annotations

from typing import Callable, List, Optional

import pytest

from pytest_evidence import options
from pytest_evidence.deps import DependencyRecorder, choose_engine
from pytest_evidence.errors import EvidenceError, StoreLocked
from pytest_evidence.finish import BaselinePlan, Finisher
from pytest_evidence.flake import FlakePolicy
from pytest_evidence.netguard import NetworkGuard
from pytest_evidence.recorder import Recorder
from pytest_evidence.select import Selector
from pytest_evidence.store import Store

settings_key = pytest.StashKey[options.Settings]()
recorder_key = pytest.StashKey[Recorder]()


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    if not options.is_active(config):
        return
    try:
        settings = options.settings(config)
        # Bad input fails here, before any test runs and before anything is written.
        baseline = BaselinePlan(config, settings) if settings.baseline and not settings.record_mode else None
        if not settings.record_mode:
            _check_store(settings)
    except EvidenceError as exc:
        raise pytest.UsageError(exc.line("evidence")) from None
    config.stash[settings_key] = settings
    is_worker = hasattr(config, "workerinput")
    is_controller = config.pluginmanager.has_plugin("dsession")
    if settings.select:
        config.pluginmanager.register(Selector(settings.select), "evidence-selector")
    if not is_controller:
        config.pluginmanager.register(FlakePolicy(settings.reruns), "evidence-flake-policy")
    if is_worker:
        if settings.no_network:
            _guard(config, lambda _test_id, _address: None)
        if settings.deps_root:  # per-test data must ride on the reports: only the tracer can
            config.pluginmanager.register(
                DependencyRecorder(settings.deps_root, choose_engine("tracer"), _no_emit), "evidence-deps"
            )
        return
    recorder = Recorder(settings.stream, describe_environment=settings.record_mode)
    config.stash[recorder_key] = recorder
    config.pluginmanager.register(recorder, "evidence-recorder")
    if settings.no_network and not is_controller:
        _guard(config, recorder.network_attempt)
    if settings.deps_root and not is_controller:
        engine = choose_engine(settings.deps_engine)
        config.pluginmanager.register(
            DependencyRecorder(settings.deps_root, engine, recorder.emit_deps), "evidence-deps"
        )
    if settings.record_mode:
        config.pluginmanager.register(_RecordModeEnd(recorder, list(settings.watch)), "evidence-record-mode")
        return
    config.pluginmanager.register(Finisher(config, settings, recorder, baseline), "evidence-finisher")


def _check_store(settings: options.Settings) -> None:
    """A corrupt store, or one of another format, fails now rather than after the tests.

    A store that is only locked may be free by the session's end; if it is not, the record is
    written without it and the failure reported then.
    """
    try:
        Store(settings.store, settings.store_timeout).close()
    except StoreLocked:
        pass


def _guard(config: pytest.Config, report: Callable[[Optional[str], str], None]) -> None:
    guard = NetworkGuard(report)
    guard.install()
    config.pluginmanager.register(guard, "evidence-network-guard")


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
