"""Command-line and ini options, parsed once into a frozen ``Settings``.

Imported by every session of an environment the plugin is installed in, active or not: it
imports nothing of the package but ``errors``. Option names are constants here so the runner,
the replay and the docs name them one way. Every value is validated when pytest starts: a bad
value is a one-line ``pytest.UsageError`` (exit 4), never a traceback half-way through the
session.

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, Tuple

from pytest_evidence.errors import BadInput

if TYPE_CHECKING:  # the runner imports these names too, and needs no pytest of its own for them
    import pytest

OUT = "--evidence-out"
STREAM = "--evidence-stream"
STREAM_FD = "--evidence-stream-fd"
KEY_FD = "--evidence-key-fd"
BASELINE = "--baseline"
RERUNS = "--evidence-reruns"
REPRODUCER = "--reproducer"
STORE = "--evidence-store"
RECORD_MODE = "--evidence-record-mode"
SELECT = "--evidence-select"
COLLECT = "--evidence-collect"
CONTROL = "--evidence-control"
DEPS = "--evidence-deps"
DEPS_ENGINE = "--evidence-deps-engine"
WATCH = "--evidence-watch"
NO_NETWORK = "--evidence-no-network"
STORE_TIMEOUT = "--evidence-store-timeout"

DEFAULT_RERUNS = 2
#: Hard ceiling on reruns per failing test (``flake``); the option parser refuses anything above it.
MAX_RERUNS = 5
DEFAULT_STORE_TIMEOUT = 10.0
PLUGIN_NAMES = ("evidence", "pytest_evidence.plugin")


def reruns_type(value: str) -> int:
    """``--evidence-reruns``: a whole number from 0 to ``MAX_RERUNS`` -- never unlimited."""
    try:
        n = int(value)
    except ValueError:
        raise BadInput("%s takes a whole number, not %r" % (RERUNS, value)) from None
    if not 0 <= n <= MAX_RERUNS:
        raise BadInput("%s must be between 0 and %d, not %d" % (RERUNS, MAX_RERUNS, n))
    return n


def seconds_type(value: str) -> float:
    """``--evidence-store-timeout``: seconds, 0 or more."""
    try:
        seconds = float(value)
    except ValueError:
        raise BadInput("%s takes a number of seconds, not %r" % (STORE_TIMEOUT, value)) from None
    if seconds < 0:
        raise BadInput("%s cannot be negative, not %s" % (STORE_TIMEOUT, value))
    return seconds


def fd_type(option: str, value: str) -> int:
    """``--evidence-stream-fd``, ``--evidence-key-fd``: a descriptor number, not stdin/out/err."""
    try:
        fd = int(value)
    except ValueError:
        raise BadInput("%s takes a file descriptor number, not %r" % (option, value)) from None
    if fd < 3:
        raise BadInput("%s must name a descriptor other than stdin, stdout and stderr, not %d" % (option, fd))
    return fd


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("evidence", "typed evidence (pytest-evidence)")
    group.addoption(
        OUT, dest="evidence_out", metavar="PATH", default=None, help="write the evidence record (JSON) to PATH."
    )
    group.addoption(
        STREAM,
        dest="evidence_stream",
        metavar="PATH",
        default=None,
        help="stream one JSON line per finished test to PATH (default: the record's path with the suffix .jsonl).",
    )
    group.addoption(
        STREAM_FD,
        dest="evidence_stream_fd",
        metavar="N",
        default=None,
        help="internal: stream to the inherited descriptor N instead of a file (the runner's private channel).",
    )
    group.addoption(
        KEY_FD,
        dest="evidence_key_fd",
        metavar="N",
        default=None,
        help="internal: read the stream's authentication key from the inherited descriptor N (a pipe), "
        "and close it before any conftest is imported.",
    )
    group.addoption(
        BASELINE,
        dest="evidence_baseline",
        metavar="REV",
        default=None,
        help="replay the tests on the buggy baseline REV (the current tree's test "
        "files laid over it) and type every result against it.",
    )
    group.addoption(
        RERUNS,
        dest="evidence_reruns",
        metavar="N",
        default=None,
        help="re-run a failing test at most N times (0-%d, default %d); a test whose "
        "outcome changes is quarantined as flaky." % (MAX_RERUNS, DEFAULT_RERUNS),
    )
    group.addoption(
        REPRODUCER,
        dest="evidence_reproducers",
        metavar="NODEID",
        action="append",
        default=[],
        help="designate a test as a bug reproducer (repeatable).",
    )
    group.addoption(
        STORE,
        dest="evidence_store",
        metavar="PATH",
        default=None,
        help="the evidence store (SQLite; default evidence/store.sqlite3 in the repository's git directory, "
        "shared with evidence-runner; outside git .pytest_cache/evidence/store.sqlite3).",
    )
    group.addoption(
        STORE_TIMEOUT,
        dest="evidence_store_timeout",
        metavar="S",
        default=None,
        help="how long to wait for another process's lock on the store before giving up on it "
        "(default %g s); the record is written either way." % DEFAULT_STORE_TIMEOUT,
    )
    group.addoption(
        RECORD_MODE,
        dest="evidence_record_mode",
        action="store_true",
        default=False,
        help="internal: only stream observations (used for baseline runs).",
    )
    group.addoption(
        SELECT,
        dest="evidence_select",
        metavar="FILE",
        default=None,
        help="internal: run only the node ids listed in FILE, one per line.",
    )
    group.addoption(
        COLLECT,
        dest="evidence_collect",
        metavar="FILE",
        default=None,
        help="internal: collect only the test files listed in FILE, one per line, and nothing else under "
        "the directories the command line names.",
    )
    group.addoption(
        CONTROL,
        dest="evidence_control",
        metavar="R,W",
        default=None,
        help="internal: run the groups of node ids the runner sends on descriptor R, "
        "with a barrier after each, waking it on descriptor W (record mode only).",
    )
    group.addoption(
        DEPS,
        dest="evidence_deps",
        metavar="ROOT",
        default=None,
        help="internal: record the functions and files under ROOT that each test reaches.",
    )
    group.addoption(
        DEPS_ENGINE,
        dest="evidence_deps_engine",
        choices=("auto", "coverage", "tracer"),
        default="auto",
        help="internal: what records dependencies: coverage.py, the plugin's own tracer, or auto.",
    )
    group.addoption(
        WATCH,
        dest="evidence_watch",
        metavar="FILE",
        default=None,
        help="internal: report where the modules listed in FILE were imported from.",
    )
    group.addoption(
        NO_NETWORK,
        dest="evidence_no_network",
        action="store_true",
        default=False,
        help="refuse network access other than loopback, and record each attempt (network_blocked).",
    )
    parser.addini("evidence_out", "default for " + OUT, default=None)
    parser.addini("evidence_stream", "default for " + STREAM, default=None)
    parser.addini("evidence_baseline", "default for " + BASELINE, default=None)
    parser.addini("evidence_reruns", "default for " + RERUNS, default=None)
    parser.addini("evidence_reproducers", "default for " + REPRODUCER, type="linelist", default=[])
    parser.addini("evidence_store", "default for " + STORE, default=None)
    parser.addini("evidence_store_timeout", "default for " + STORE_TIMEOUT, default=None)


@dataclass(frozen=True)
class Settings:
    """The plugin's configuration for one session, after option/ini precedence."""

    out: Optional[str]
    stream: Optional[str]
    baseline: Optional[str]
    reruns: int
    reproducers: Tuple[str, ...]
    store: str
    record_mode: bool
    select: Optional[str]
    deps_root: Optional[str]
    deps_engine: str
    watch: Tuple[str, ...]
    no_network: bool = False
    store_timeout: float = DEFAULT_STORE_TIMEOUT
    stream_fd: Optional[int] = None  # the stream goes to this inherited descriptor, not to ``stream``
    key_fd: Optional[int] = None  # where the key came from (the key itself is never kept here)
    control: Optional[str] = None  # ``R,W``: the runner's command and wake descriptors (``groups``)
    collect: Optional[Tuple[str, ...]] = None  # the only test files to collect (``scope``)

    @property
    def proves_something(self) -> bool:
        """True when the user asked for evidence, so an empty run must not exit 0."""
        return bool(self.baseline or self.reproducers)


def _pick(config: pytest.Config, dest: str, ini: str) -> Any:
    value = config.getoption(dest)
    if value in (None, [], False):
        value = config.getini(ini) or value
    return value


def explicitly_loaded(config: pytest.Config) -> bool:
    """True when ``-p evidence`` (or the module path) was given, on the command line or addopts.

    The plugin is installed as a pytest11 entry point and so is imported into every session in
    that environment; it stays inert unless asked for, by ``-p`` or by one of its own options.
    """
    return any(name in PLUGIN_NAMES for name in (config.option.plugins or []))


def is_active(config: pytest.Config) -> bool:
    if explicitly_loaded(config):
        return True
    return any(
        config.getoption(dest) not in (None, [], False)
        for dest in (
            "evidence_out",
            "evidence_stream",
            "evidence_stream_fd",
            "evidence_key_fd",
            "evidence_baseline",
            "evidence_reruns",
            "evidence_reproducers",
            "evidence_store",
            "evidence_store_timeout",
            "evidence_record_mode",
            "evidence_select",
            "evidence_collect",
            "evidence_control",
            "evidence_deps",
            "evidence_watch",
            "evidence_no_network",
        )
    )


def settings(config: pytest.Config, writes: bool = True) -> Settings:
    """Every value checked now (``BadInput``), before any test runs.

    ``writes``: False in an xdist worker, which writes nothing: its probe file would appear and
    vanish inside the directory another worker is collecting, and pytest's collector asserts that
    every entry it listed is still a file. Nor does it keep a store: that is the controller's.

    Only an active session gets here: what it needs is imported now, not by an inert session's
    ``add_options`` (see ``plugin``), and the store's code only by a session that keeps one.
    """
    from pytest_evidence.output import check_writable

    out = _pick(config, "evidence_out", "evidence_out")
    stream = _pick(config, "evidence_stream", "evidence_stream")
    stream_fd, key_fd = descriptors(config.getoption("evidence_stream_fd"), config.getoption("evidence_key_fd"))
    if stream_fd is not None and config.getoption("evidence_stream"):
        raise BadInput("%s and %s name two streams: give one" % (STREAM, STREAM_FD))
    if stream_fd is not None:
        stream = None
    elif stream is None and out:
        stream = os.path.splitext(out)[0] + ".jsonl"
    # Validated here rather than by an argparse ``type=``: a UsageError raised while pytest 7
    # parses the command line surfaces as a pluggy warning with a traceback.
    raw = config.getoption("evidence_reruns") or config.getini("evidence_reruns")
    reruns = reruns_type(raw) if raw else DEFAULT_RERUNS
    raw_timeout = _pick(config, "evidence_store_timeout", "evidence_store_timeout")
    store_timeout = seconds_type(raw_timeout) if raw_timeout else DEFAULT_STORE_TIMEOUT
    record_mode = bool(config.getoption("evidence_record_mode"))
    # The runner's own processes (record mode) keep no store: naming one would touch the repository.
    # Nor does an xdist worker: the controller alone writes the store.
    store = _pick(config, "evidence_store", "evidence_store") or (
        "" if record_mode or not writes else _default_store(config)
    )
    reproducers = tuple(config.getoption("evidence_reproducers") or config.getini("evidence_reproducers"))
    here = str(config.invocation_params.dir)
    out, stream = _absolute(here, out), _absolute(here, stream)
    for option, path in ((OUT, out), (STREAM, stream)):
        if path and writes:
            check_writable(path, option, create_parents=True)
    return Settings(
        out=out,
        stream=stream,
        baseline=_pick(config, "evidence_baseline", "evidence_baseline"),
        reruns=reruns,
        reproducers=reproducers,
        store=_absolute(here, store) or store,
        record_mode=record_mode,
        select=_absolute(here, config.getoption("evidence_select")),
        deps_root=_absolute(here, config.getoption("evidence_deps")),
        deps_engine=config.getoption("evidence_deps_engine"),
        watch=_read_lines(_absolute(here, config.getoption("evidence_watch"))),
        no_network=bool(config.getoption("evidence_no_network")),
        store_timeout=store_timeout,
        stream_fd=stream_fd,
        key_fd=key_fd,
        control=config.getoption("evidence_control"),
        collect=_listed(COLLECT, _absolute(here, config.getoption("evidence_collect"))),
    )


def _default_store(config: pytest.Config) -> str:
    from pytest_evidence.store import default_store

    return default_store(str(config.rootpath))


def descriptors(stream_fd: Optional[str], key_fd: Optional[str]) -> Tuple[Optional[int], Optional[int]]:
    """The values of ``--evidence-stream-fd`` and ``--evidence-key-fd``, checked (``BadInput``)."""
    return (
        None if stream_fd is None else fd_type(STREAM_FD, stream_fd),
        None if key_fd is None else fd_type(KEY_FD, key_fd),
    )


def _read_lines(path: Optional[str]) -> Tuple[str, ...]:
    if not path:
        return ()
    with open(path, encoding="utf-8") as fh:
        return tuple(line.strip() for line in fh if line.strip())


def _listed(option: str, path: Optional[str]) -> Optional[Tuple[str, ...]]:
    """The lines of the file an option names, or None when not given (``BadInput`` if unreadable)."""
    if not path:
        return None
    try:
        return _read_lines(path)
    except OSError as exc:
        raise BadInput("%s %s: %s" % (option, path, exc.strerror)) from None


def _absolute(base: str, path: Optional[str]) -> Optional[str]:
    return None if not path else os.path.join(base, os.path.expanduser(path))
