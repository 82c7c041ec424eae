"""The pytest plugin: ``pytest -p evidence``.

Module-level hooks only add options and, in ``pytest_configure``, register one object per
concern -- and only the ones this process needs:

* ``FlakePolicy`` where tests run (a serial session, or an xdist worker);
* ``Recorder`` and ``Finisher`` where every report arrives (a serial session, or the xdist
  controller), so the stream, the record and the store each have exactly one writer, and
  ``JunitProperties`` beside the ``Finisher`` (``--junitxml`` gains each test's role, B/C class
  and bug-discriminating once the record is typed);
* ``Selector`` where collection happens, when ``--evidence-select`` is given;
* ``NetworkGuard`` where tests run, when ``--evidence-no-network`` is given (its refusals are
  streamed by the recorder of the same process; an xdist worker blocks without reporting).

Before any of that -- before any conftest is imported, and before the plugins pytest loads after
this one -- the descriptors of a private result channel (``--evidence-stream-fd``,
``--evidence-key-fd``) are taken: the key is read from its pipe and the pipe closed, the stream
descriptor is checked and made non-inheritable (``_take_channel``).

Installed as a pytest11 entry point, the module is imported into every session of its
environment; it stays inert unless ``-p evidence`` or one of its options asks for it. It imports
nothing but the standard library and pytest, in Python 3.8 syntax: it is loaded inside old
target environments.

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

import os
import stat
from typing import List, Optional, Sequence, Tuple

import pytest

from pytest_evidence import options, stream
from pytest_evidence.deps import DependencyRecorder, choose_engine
from pytest_evidence.errors import BadInput, EvidenceError, StoreLocked
from pytest_evidence.finish import BaselinePlan, Finisher
from pytest_evidence.flake import FlakePolicy
from pytest_evidence.groups import GroupedRun, descriptors
from pytest_evidence.junit_properties import JunitProperties
from pytest_evidence.netguard import NetworkGuard, Report
from pytest_evidence.recorder import Recorder
from pytest_evidence.scope import CollectionScope
from pytest_evidence.select import Selector
from pytest_evidence.store import Store

settings_key = pytest.StashKey[options.Settings]()
recorder_key = pytest.StashKey[Recorder]()


class _Channel:
    """The private channel's descriptors as ``_take_channel`` found them, until ``pytest_configure``.

    ``sign`` holds the key in its closure; ``error`` is raised as a usage error by
    ``pytest_configure`` (an error raised while pytest parses its command line would surface as a
    traceback).
    """

    def __init__(self) -> None:
        self.stream_fd: Optional[int] = None
        self.key_fd: Optional[int] = None
        self.sign: Optional[stream.Signer] = None
        self.error: Optional[EvidenceError] = None


channel_key = pytest.StashKey[_Channel]()


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_options(parser)


@pytest.hookimpl(tryfirst=True)
def pytest_plugin_registered(plugin: object) -> None:
    """The earliest point: the moment this plugin is registered, the config is replayed to it.

    pytest registers its ``Config`` before it imports any plugin, and this hook is historic, so
    it runs for the config as soon as this module is registered -- before the setuptools entry
    points (which may resolve into the checkout under test), before the plugins named after this
    one and long before any conftest. Options are not parsed yet: the raw command line is read.
    """
    if isinstance(plugin, pytest.Config):
        args = plugin.invocation_params.args
        _take_channel(plugin, _raw_option(args, options.STREAM_FD), _raw_option(args, options.KEY_FD))


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    """The second chance, before the first conftest: descriptors given in a form the raw scan
    does not read (``addopts``, an option split over two arguments)."""
    namespace = early_config.known_args_namespace
    _take_channel(
        early_config, getattr(namespace, "evidence_stream_fd", None), getattr(namespace, "evidence_key_fd", None)
    )


def _raw_option(args: Sequence[str], option: str) -> Optional[str]:
    """The last value of ``option`` on a raw command line (``--opt=N`` or ``--opt N``), or None."""
    value = None
    for i, arg in enumerate(args):
        if arg == "--":
            break
        if arg.startswith(option + "="):
            value = arg[len(option) + 1 :]
        elif arg == option and i + 1 < len(args):
            value = args[i + 1]
    return value


def _take_channel(config: pytest.Config, stream_fd: Optional[str], key_fd: Optional[str]) -> None:
    """Read the key and close its pipe; check the stream descriptor and keep it from children."""
    if (stream_fd is None and key_fd is None) or config.stash.get(channel_key, None) is not None:
        return
    if os.environ.get("PYTEST_XDIST_WORKER"):  # a worker is given the options, never the descriptors
        return
    channel = config.stash[channel_key] = _Channel()
    try:
        stream_number, key_number = options.descriptors(stream_fd, key_fd)
        if key_number is not None:
            channel.key_fd = key_number
            channel.sign = _read_key(key_number)
        if stream_number is not None:
            _check_stream(stream_number)
            channel.stream_fd = stream_number
    except EvidenceError as exc:
        channel.error = exc


def _read_key(fd: int) -> stream.Signer:
    """``KEY_BYTES`` from the pipe ``fd``, which is closed whatever happens; a signer of them."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError as exc:
        raise BadInput("%s %d: %s" % (options.KEY_FD, fd, exc.strerror)) from None
    if not stat.S_ISFIFO(mode):
        raise BadInput("%s %d is not a pipe" % (options.KEY_FD, fd))
    key = bytearray(stream.KEY_BYTES)
    try:
        got = 0
        while got < len(key):
            n = os.readv(fd, [memoryview(key)[got:]])
            if n == 0:
                break
            got += n
        if got != len(key):
            raise BadInput("%s %d gave %d bytes of key, not %d" % (options.KEY_FD, fd, got, len(key)))
        return stream.signer(key)
    finally:
        os.close(fd)
        key[:] = bytes(len(key))


def _check_stream(fd: int) -> None:
    try:
        mode = os.fstat(fd).st_mode
        try:
            import fcntl
        except ImportError:  # not POSIX: trust the descriptor to be writable
            writable = True
        else:
            writable = fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE != os.O_RDONLY
    except OSError as exc:
        raise BadInput("%s %d: %s" % (options.STREAM_FD, fd, exc.strerror)) from None
    if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
        raise BadInput("%s %d is neither a file nor a pipe" % (options.STREAM_FD, fd))
    if not writable:
        raise BadInput("%s %d is not open for writing" % (options.STREAM_FD, fd))
    os.set_inheritable(fd, False)  # a subprocess a test starts gets no copy


def _signer(settings: options.Settings, channel: Optional[_Channel]) -> Optional[stream.Signer]:
    """The signer of the key ``_take_channel`` read, after checking it read the descriptors the
    parsed options name."""
    if channel is not None and channel.error is not None:
        raise channel.error
    if settings.key_fd is not None and (channel is None or channel.key_fd != settings.key_fd):
        raise BadInput("%s %d was not read before the conftests" % (options.KEY_FD, settings.key_fd))
    if settings.stream_fd is not None and (channel is None or channel.stream_fd != settings.stream_fd):
        raise BadInput("%s %d was not taken before the conftests" % (options.STREAM_FD, settings.stream_fd))
    return None if channel is None else channel.sign


def pytest_configure(config: pytest.Config) -> None:
    channel = config.stash.get(channel_key, None)
    if channel is not None:
        del config.stash[channel_key]  # the signer lives on in the recorder's stream only
    if not options.is_active(config):
        return
    is_worker = hasattr(config, "workerinput")
    try:
        settings = options.settings(config, writes=not is_worker)
        sign = None if is_worker else _signer(settings, channel)
        # Bad input fails here, before any test runs and before anything is written.
        baseline = BaselinePlan(config, settings) if settings.baseline and not settings.record_mode else None
        if not settings.record_mode and not is_worker:  # the controller checked it
            _check_store(settings)
        control = _control(settings, is_worker or config.pluginmanager.has_plugin("dsession"))
    except EvidenceError as exc:
        raise pytest.UsageError(exc.line("evidence")) from None
    config.stash[settings_key] = settings
    is_controller = config.pluginmanager.has_plugin("dsession")
    if settings.select:
        config.pluginmanager.register(Selector(settings.select), "evidence-selector")
    if settings.collect is not None:
        scope = CollectionScope(settings.collect, str(config.invocation_params.dir))
        config.pluginmanager.register(scope, "evidence-collection-scope")
    if not is_controller:
        config.pluginmanager.register(FlakePolicy(settings.reruns), "evidence-flake-policy")
    if is_worker:
        if settings.no_network:
            _guard(config, lambda _test_id, _address, _blocked: None)
        if settings.deps_root:  # per-test data must ride on the reports: only the tracer can
            config.pluginmanager.register(
                DependencyRecorder(settings.deps_root, choose_engine("tracer"), _no_emit), "evidence-deps"
            )
        return
    recorder = Recorder(settings.stream, settings.record_mode, settings.stream_fd, sign)
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
        if control is not None:
            config.pluginmanager.register(GroupedRun(recorder, *control), "evidence-groups")
        return
    finisher = Finisher(config, settings, recorder, baseline)
    config.pluginmanager.register(finisher, "evidence-finisher")
    config.pluginmanager.register(JunitProperties(finisher), "evidence-junit-properties")


def _control(settings: options.Settings, distributed: bool) -> Optional[Tuple[int, int]]:
    """``--evidence-control``'s descriptors, checked: the runner's grouped session only."""
    if settings.control is None:
        return None
    if not settings.record_mode:
        raise BadInput("%s is the runner's: it needs %s" % (options.CONTROL, options.RECORD_MODE))
    if distributed:
        raise BadInput("%s runs one process's tests in groups: it does not run under xdist" % options.CONTROL)
    return descriptors(options.CONTROL, settings.control)


def _check_store(settings: options.Settings) -> None:
    """A corrupt store, or one of another format, fails now rather than after the tests.

    A store that is only locked may be free by the session's end; if it is not, the record is
    written without it and the failure reported then.
    """
    try:
        Store(settings.store, settings.store_timeout).close()
    except StoreLocked:
        pass


def _guard(config: pytest.Config, report: Report) -> None:
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
