"""How the runner's test processes end: as the interpreter's own exit does, minus its teardown.

When pytest returns, a record-mode process has said all it has to say in its stream, yet the
interpreter would then tear down every object it holds: 0.75 s of a 6.5 s plain run of click's
suite, and the climb waits for each process's end before the next one's tests run. So ``main``
does what the interpreter's exit does before that teardown, in its order -- the threads the tests
left are joined, every ``atexit`` handler runs (a ``sitecustomize``'s too), last registered first
-- then closes every file object still open, as its finalizer would have (a ``GzipFile`` gets its
trailer, buffered writes reach the file a later process of the climb may read), and ends the
process with pytest's status.

What no longer runs: any other ``__del__`` of an object alive at exit (a ``ZipFile`` left open
gets no central directory), and C-level stdio buffers are not flushed. Where the interpreter
lacks the two private functions this relies on (``threading._shutdown``,
``atexit._run_exitfuncs``; Python 3.8 to 3.13 have both), or pytest's status is not a number,
the exit is the usual one.

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

import atexit
import gc
import io
import os
import sys
import threading
from typing import Any, Callable, Dict, List, Optional, Tuple, cast

import pytest


def main() -> None:
    """``pytest.main()``, then the exit."""
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
    """Every file object alive but the standard streams: text ones first, then buffered, then
    raw -- closing a text file flushes into its buffer, which must still be open."""
    streams = (sys.stdin, sys.stdout, sys.stderr, sys.__stdin__, sys.__stdout__, sys.__stderr__)
    standard = {id(s) for s in streams} | {id(getattr(s, "buffer", None)) for s in streams}
    ranks: Dict[type, int] = {}
    found: Tuple[List[Any], List[Any], List[Any]] = ([], [], [])
    for obj in gc.get_objects():
        kind = type(obj)
        if kind not in ranks:
            ranks[kind] = _rank(kind)
        if ranks[kind] and id(obj) not in standard:
            found[ranks[kind] - 1].append(obj)
    return [f for group in found for f in group]


def _rank(kind: type) -> int:
    """0: not a file; 1: text; 2: buffered; 3: raw or other."""
    try:
        if not issubclass(kind, io.IOBase):
            return 0
        return 1 if issubclass(kind, io.TextIOBase) else 2 if issubclass(kind, io.BufferedIOBase) else 3
    except Exception:  # a class whose subclass check fails is not a file the tests wrote through
        return 0
