"""How the runner's test processes end: as the interpreter's own exit does, minus its teardown.

When pytest returns, a record-mode process has said all it has to say in its stream, yet the
interpreter would then tear down every object it holds: 0.75 s of a 6.5 s plain run of click's
suite, and the climb waits for each process's end before the next one's tests run. So ``main``
does what the interpreter's exit does before that teardown, in its order -- the threads the tests
left are joined, every ``atexit`` handler runs (a ``sitecustomize``'s too), last registered first
-- then closes every file object still open, as its finalizer would have, each before what it
wraps (a ``GzipFile`` gets its trailer, buffered writes reach the file a later process of the
climb may read), and ends the process with pytest's status.

What no longer runs: any other ``__del__`` of an object alive at exit (a ``ZipFile`` left open
gets no central directory), and C-level stdio buffers are not flushed. Where the interpreter
lacks the two private functions this relies on (``threading._shutdown``,
``atexit._run_exitfuncs``; Python 3.8 to 3.13 have both), or pytest's status is not a number,
the exit is the usual one.

The plugin's modules such a process uses are imported before ``pytest.main()`` puts pytest's
assertion-rewriting hook in place (``RECORD_MODE``). Where pytest-evidence is installed in the
target, pytest marks every module of its distribution for rewriting -- the private copy's too,
which has the same names -- and a marked module is compiled by the hook, from source, into a
cache beside it; the runner's test processes see the private copy read-only, so each of them
compiled the plugin again (about 0.1 s a process), or a pytest start before the climb wrote the
cache (0.8 s of every certify). Imported first, they are read from the bytecode the runner's probe
compiled, and pytest leaves them be (their docstrings say ``PYTEST_DONT_REWRITE``, so nothing is
warned of either). One missed here is compiled by the hook as before: slower, not wrong.

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

import atexit
import collections
import gc
import importlib
import io
import os
import sys
import threading
from typing import Any, Callable, Dict, List, Optional, Set, cast

import pytest

#: What a record-mode process of the runner imports of the plugin (``wiring.configure``'s record
#: mode, the network guards, the dependency recorder).
RECORD_MODE = (
    "plugin",
    "wiring",
    "options",
    "output",
    "recorder",
    "stream",
    "reports",
    "flake",
    "tracebacks",
    "groups",
    "scope",
    "select",
    "distinct_ids",
    "netguard",
    "sockguard",
    "seedless_children",
    "deps",
    "originals",
)


def main() -> None:
    """``pytest.main()``, then the exit."""
    for name in RECORD_MODE:
        importlib.import_module("pytest_evidence." + name)
    status = pytest.main()
    shutdown = cast(Optional[Callable[[], None]], getattr(threading, "_shutdown", None))
    handlers = cast(Optional[Callable[[], None]], getattr(atexit, "_run_exitfuncs", None))
    if not isinstance(status, int) or shutdown is None or handlers is None:
        raise SystemExit(status)
    shutdown()
    handlers()
    try:
        files = open_files()
    except Exception:
        files = []
    for f in files:
        try:
            f.close()
        except Exception:
            pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    os._exit(int(status))


def open_files() -> List[Any]:
    """Every file object alive but the standard streams, each before the files it wraps: closing
    a wrapper (a text file, a ``GzipFile``) writes into what it wraps, which must still be open."""
    streams = (sys.stdin, sys.stdout, sys.stderr, sys.__stdin__, sys.__stdout__, sys.__stderr__)
    standard = {id(s) for s in streams} | {id(getattr(s, "buffer", None)) for s in streams}
    is_file: Dict[type, bool] = {}
    files = []
    for obj in gc.get_objects():
        kind = type(obj)
        if kind not in is_file:
            is_file[kind] = _is_file(kind)
        if is_file[kind] and id(obj) not in standard:
            files.append(obj)
    return _wrappers_first(files)


def _is_file(kind: type) -> bool:
    try:
        return issubclass(kind, io.IOBase)
    except Exception:  # a class whose subclass check fails is not a file the tests wrote through
        return False


def _wrappers_first(files: List[Any]) -> List[Any]:
    """``files`` ordered so that no file comes before one that holds it (files holding each other
    in a cycle last, in the order found)."""
    by_id = {id(f): f for f in files}
    holds = {id(f): _held(f, by_id) for f in files}
    holders = dict.fromkeys(by_id, 0)
    for held in holds.values():
        for i in held:
            holders[i] += 1
    ready = collections.deque(f for f in files if not holders[id(f)])
    order = []
    while ready:
        f = ready.popleft()
        order.append(f)
        for i in holds[id(f)]:
            holders[i] -= 1
            if not holders[i]:
                ready.append(by_id[i])
    placed = {id(f) for f in order}
    return order + [f for f in files if id(f) not in placed]


def _held(f: Any, by_id: Dict[int, Any]) -> Set[int]:
    """The other files ``f`` holds: directly (a C wrapper's buffer or raw file) or as an attribute."""
    found: Set[int] = set()
    for ref in gc.get_referents(f):
        for r in gc.get_referents(ref) if isinstance(ref, dict) else (ref,):
            if id(r) in by_id and r is not f:
                found.add(id(r))
    return found
