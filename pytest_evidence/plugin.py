"""The pytest plugin: ``pytest -p evidence``.

Installed as a pytest11 entry point, this module is imported into every session of its
environment, and it stays inert unless ``-p evidence`` or one of its own options asks for it. An
inert session imports this module, ``options`` and ``errors`` and nothing more: pytest compiles
every module of an entry point's package from source whenever it has no bytecode cache of its
own to read (see ``pytest_evidence/__init__.py``), and the model's dataclasses cost tens of ms
to build, so a session that does not ask for evidence must not pay for them. An active session's
objects are wired by ``wiring``, imported by ``pytest_configure`` once the session asks.

Before any of that -- before any conftest is imported, and before the plugins pytest loads after
this one -- the descriptors of a private result channel (``--evidence-stream-fd``,
``--evidence-key-fd``) are taken: the key is read from its pipe and the pipe closed, the stream
descriptor is checked and made non-inheritable (``_take_channel``).

It imports nothing but the standard library and pytest, in Python 3.8 syntax: it is loaded inside
old target environments.

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING, Optional, Sequence

import pytest

from pytest_evidence import options
from pytest_evidence.errors import BadInput, EvidenceError

if TYPE_CHECKING:
    from pytest_evidence.originals import Originals
    from pytest_evidence.stream import Signer


class TakenChannel:
    """The private channel's descriptors as ``_take_channel`` found them, until ``pytest_configure``.

    ``sign`` holds the key in its closure; ``error`` is raised as a usage error by
    ``pytest_configure`` (an error raised while pytest parses its command line would surface as a
    traceback).
    """

    def __init__(self) -> None:
        self.stream_fd: Optional[int] = None
        self.key_fd: Optional[int] = None
        self.sign: Optional[Signer] = None
        self.error: Optional[EvidenceError] = None


channel_key = pytest.StashKey[TakenChannel]()
#: Here, not in ``originals``: this module outlives the sessions of one process (pytester's), which
#: may import ``originals`` afresh.
originals_key: pytest.StashKey[Originals] = pytest.StashKey()


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_options(parser)


@pytest.hookimpl(tryfirst=True)
def pytest_plugin_registered(plugin: object) -> None:
    """The earliest point: the moment this plugin is registered, the config is replayed to it.

    pytest registers its ``Config`` before it imports any plugin, and this hook is historic, so
    it runs for the config as soon as this module is registered -- before the setuptools entry
    points (which may resolve into the checkout under test), before the plugins named after this
    one and long before any conftest. Options are not parsed yet: the raw command line is read.
    Here too, asked by the runner (``seedless_children``), ``PYTHONHASHSEED`` leaves the
    environment the tests' subprocesses inherit.
    """
    if isinstance(plugin, pytest.Config):
        args = plugin.invocation_params.args
        _take_channel(plugin, _raw_option(args, options.STREAM_FD), _raw_option(args, options.KEY_FD))
        if any(name.startswith("PYTEST_EVIDENCE_") for name in os.environ):  # the runner's process
            from pytest_evidence import seedless_children

            seedless_children.drop_inherited_seed(os.environ)


@pytest.hookimpl
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    """The second chance, before the first conftest: descriptors given in a form the raw scan
    does not read (``addopts``, an option split over two arguments). And, in a runner's test
    process, the test frameworks' objects as the plugins left them, before any code under test
    runs (``originals``): neither ``tryfirst`` nor ``trylast``, so after the ``tryfirst`` ones
    (pytest's ``legacypath`` adds properties to its classes there) and before pytest's own,
    ``trylast``, which imports the conftests (a ``trylast`` of a plugin registered after it
    would run after it: pluggy calls later ``trylast`` registrations last)."""
    namespace = early_config.known_args_namespace
    _take_channel(
        early_config, getattr(namespace, "evidence_stream_fd", None), getattr(namespace, "evidence_key_fd", None)
    )
    if getattr(namespace, "evidence_record_mode", False):  # a runner's test process: the referee looks
        from pytest_evidence.originals import Originals

        taken = early_config.stash[originals_key] = Originals()
        early_config.add_cleanup(taken.close)


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
    channel = config.stash[channel_key] = TakenChannel()
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


def _read_key(fd: int) -> Signer:
    """``KEY_BYTES`` from the pipe ``fd``, which is closed whatever happens; a signer of them."""
    key = bytearray()
    try:
        try:
            mode = os.fstat(fd).st_mode
        except OSError as exc:
            raise BadInput("%s %d: %s" % (options.KEY_FD, fd, exc.strerror)) from None
        if not stat.S_ISFIFO(mode):
            raise BadInput("%s %d is not a pipe" % (options.KEY_FD, fd))
        from pytest_evidence import stream  # a channel is the runner's record mode: wiring imports it anyway

        key.extend(bytes(stream.KEY_BYTES))
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
        try:
            os.close(fd)
        except OSError:  # not open: fstat said so above
            pass
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


def pytest_configure(config: pytest.Config) -> None:
    channel = config.stash.get(channel_key, None)
    if channel is not None:
        del config.stash[channel_key]  # the signer lives on in the recorder's stream only
    if not options.is_active(config):
        return
    from pytest_evidence import wiring  # only now: an inert session imports nothing more

    wiring.configure(config, channel)
