"""What each checkout module's import ran: dependency recording of code run at import.

The per-test record (``deps``) holds what a test reached while it ran; code run when a module is
imported -- at collection, or earlier for what a conftest imports -- belongs to no test, and a
module imported once serves every test after it. The runner therefore follows that code by name
and, whenever a module's top-level code calls something that may reach changed code, runs every
test importing the module. This recorder answers the question instead: per checkout module, the
functions started while that module's top-level code was the innermost checkout module frame on
the stack (a module it imports has its own entry) and the data files it opened. On B that is
what the calls ran; the runner judges it as it judges a test's record (``docs/selection.md``).

It runs from just before the first conftest is loaded (``plugin.pytest_load_initial_conftests``)
to the end of collection, with ``sys.settrace`` on every Python version: one tracer over a short
window, which takes no ``sys.monitoring`` tool id from the per-test recorder configured in the
middle of it. If another tracer replaces it, nothing is reported: a partial record would say
"ran nothing changed" for code it did not see.

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

import sys
from types import FrameType
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

import pytest

from pytest_evidence.deps import CodeKeys, listen, source_of, unlisten

#: module path -> (keys its import ran, files it opened), each sorted
Imports = Dict[str, Tuple[List[str], List[str]]]


class ImportRecorder:
    def __init__(self, root: str) -> None:
        self._key = CodeKeys(root)
        self._keys = self._key.known
        self._found: Dict[str, Tuple[Set[str], Set[str]]] = {}
        self._tracing = False
        self.emit: Optional[Callable[[str, List[str], List[str]], None]] = None

    def start(self) -> None:
        """Trace from now on; nothing, if another tracer owns the frames."""
        if sys.gettrace() is not None:
            return
        sys.settrace(self.trace)
        listen(self.opened, ImportRecorder)
        self._tracing = True

    def owns(self, tracer: Any) -> bool:
        """Whether ``tracer`` (``sys.gettrace()``) is this recorder's."""
        return self._tracing and tracer == self.trace

    def stop(self) -> Optional[Imports]:
        """Stop tracing; what each module's import ran, or None when the trace was not whole."""
        if not self._tracing:
            return None
        whole = sys.gettrace() == self.trace
        if whole:
            sys.settrace(None)
        unlisten(self.opened)
        self._tracing = False
        modules = self._found.keys()
        # the files the import system read to import checkout modules are no data read
        return (
            {
                m: (sorted(keys), sorted(self._key.relative(opened) - modules))
                for m, (keys, opened) in self._found.items()
            }
            if whole
            else None
        )

    def _importer(self, frame: Optional[FrameType]) -> Optional[str]:
        """The checkout module whose import runs ``frame``: the innermost top-level frame of one."""
        while frame is not None:
            code = frame.f_code
            if code.co_name == "<module>":
                key = self._keys[code] if code in self._keys else self._key(code)
                if key is not None:
                    return key.rpartition(":")[0]
            frame = frame.f_back
        return None

    def trace(self, frame: FrameType, event: str, arg: Any) -> None:
        code = frame.f_code
        key = self._keys[code] if code in self._keys else self._key(code)
        if key is not None:
            module = self._importer(frame)  # a module's own top-level code counts for itself
            if module is not None:
                self._found.setdefault(module, (set(), set()))[0].add(key)

    def opened(self, path: str) -> None:
        module = self._importer(sys._getframe())
        if module is not None:
            self._found.setdefault(module, (set(), set()))[1].add(source_of(path))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_collection(self, session: pytest.Session) -> Any:
        yield
        found = self.stop()
        if found is not None and self.emit is not None:
            for module, (keys, files) in sorted(found.items()):
                self.emit(module, keys, files)

    def pytest_unconfigure(self) -> None:
        self.stop()  # a session that ended before collection did
