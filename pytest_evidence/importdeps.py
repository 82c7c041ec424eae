"""What each checkout module's import ran: dependency recording of code run at import.

The per-test record (``deps``) holds what a test reached while it ran; code run when a module is
imported -- at collection, or earlier for what a conftest imports -- belongs to no test, and a
module imported once serves every test after it. The runner therefore follows that code by name
and, whenever a module's top-level code calls something that may reach changed code, runs every
test importing the module. This recorder answers the question instead: per checkout module, the
functions started while that module's top-level code was running -- anywhere below it on the
stack, so a module it imports, by any means, counts for it too -- and the data files checkout
code opened meanwhile. Functions started with no checkout module being imported (a conftest's
hook, a thread started at import) count for the test file being collected, if any (pytest
calling a ``parametrize`` ``ids`` function, a module's ``pytest_generate_tests``), else for the
entry ``""``: collection itself. On B that is what the code ran; the runner judges it as it
judges a test's record (``docs/selection.md``).

A module's own top-level code is keyed ``path:0``: its code object's first line is often a
definition's. Not recorded: class bodies (a class statement is its module's own code, which the
runner reads by name), and what the import system reads to import a module -- its source, its bytecode --
which is told apart by who opens the file (importlib getting a module's code, or pytest's
assertion rewriter), not by its name: a module reading a ``.py`` file as data
(``inspect.getsource``), or through a loader (``pkgutil.get_data``), opened it.

It runs from just before the first conftest is loaded (``plugin.pytest_load_initial_conftests``)
to the end of collection, with ``sys.settrace`` (and ``threading.settrace`` for threads started
meanwhile) on every Python version: one tracer over a short window, which takes no
``sys.monitoring`` tool id from the per-test recorder configured in the middle of it. If another
tracer replaces it, nothing is reported: a partial record would say "ran nothing changed" for
code it did not see.

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

import inspect
import sys
import threading
from types import FrameType
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

import pytest

from pytest_evidence.deps import CodeKeys, listen, source_of, unlisten

#: module path ("": collection outside any import) -> (keys its import ran, files it opened), each sorted
Imports = Dict[str, Tuple[List[str], List[str]]]

#: Where the import system reads a module's source or bytecode: a file opened below one of these,
#: with no checkout code in between, is no data read. importlib's own ``get_data`` is not one:
#: ``pkgutil.get_data`` reads data through it; ``get_code`` is the import.
_REWRITER = ("_pytest/assertion/rewrite.py", "_pytest\\assertion\\rewrite.py")
_IMPORTLIB = "<frozen importlib._bootstrap"


class ImportRecorder:
    def __init__(self, root: str) -> None:
        self._key = CodeKeys(root)
        self._found: Dict[str, Tuple[Set[str], Set[str]]] = {}
        self._collecting: List[str] = []  # the test files being collected, innermost last
        self._tracing = False
        self.emit: Optional[Callable[[str, List[str], List[str]], None]] = None

    def start(self) -> None:
        """Trace from now on; nothing, if another tracer owns the frames."""
        if sys.gettrace() is not None:
            return
        self._tracing = True
        sys.settrace(self.trace)
        threading.settrace(self.trace)
        listen(self.opened, ImportRecorder)

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
        threading.settrace(None)  # type: ignore[arg-type,unused-ignore]
        unlisten(self.opened)
        self._tracing = False
        found = {m: (sorted(keys), sorted(self._key.relative(opened))) for m, (keys, opened) in self._found.items()}
        return found if whole else None

    def _importers(self, frame: Optional[FrameType]) -> List[str]:
        """The checkout modules whose import is running ``frame``: each one's top-level frame on
        the stack; none: the test file being collected, or collection itself (``""``)."""
        found = []
        while frame is not None:
            code = frame.f_code
            if code.co_name == "<module>":
                key = self._key(code)
                if key is not None:
                    found.append(key.rpartition(":")[0])
            frame = frame.f_back
        if found:
            return found
        main = threading.current_thread() is threading.main_thread()
        return [self._collecting[-1]] if main and self._collecting else [""]

    def trace(self, frame: FrameType, event: str, arg: Any) -> None:
        code = frame.f_code
        if not self._tracing or not (code.co_flags & inspect.CO_NEWLOCALS or code.co_name == "<module>"):
            return  # a class body is its module's own code; a thread may outlive the window
        key = self._key(code)
        if key is None:
            return
        if code.co_name == "<module>":  # line 0: its first line may be a definition's, changed or not
            key = key.rpartition(":")[0] + ":0"
        for module in self._importers(frame):  # a module's own top-level code counts for itself
            self._found.setdefault(module, (set(), set()))[0].add(key)

    def opened(self, path: str) -> None:
        """Count ``path`` when checkout code opened it (itself, or through what it called), not the
        import system importing a module, nor pytest or a plugin with no checkout code involved."""
        frame: Optional[FrameType] = sys._getframe(1)
        while frame is not None:
            code = frame.f_code
            if code.co_filename.endswith(_REWRITER) or (
                code.co_name == "get_code" and code.co_filename.startswith(_IMPORTLIB)
            ):
                return
            if self._key(code) is not None:
                break
            frame = frame.f_back
        if frame is None:
            return
        for module in self._importers(frame):
            self._found.setdefault(module, (set(), set()))[1].add(source_of(path))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_make_collect_report(self, collector: pytest.Collector) -> Any:
        path = self._key.relative([str(collector.path)]) if isinstance(collector, pytest.File) else set()
        self._collecting.extend(path)
        yield
        del self._collecting[len(self._collecting) - len(path) :]

    @pytest.hookimpl(hookwrapper=True)
    def pytest_collection(self, session: pytest.Session) -> Any:
        yield
        found = self.stop()
        if found is not None and self.emit is not None:
            for module, (keys, files) in sorted(found.items()):
                self.emit(module, keys, files)

    def pytest_unconfigure(self) -> None:
        self.stop()  # a session that ended before collection did
