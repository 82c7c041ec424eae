"""Per-test dependency recording: which functions each test reached, which files it opened.

Two engines. Where the target environment has coverage.py and nothing is tracing already,
coverage's C tracer records the lines each test executed (one dynamic context per test, switched
by this plugin), emitted at session end as ``path:line`` keys. Otherwise the tracer below.

The runner selects tests from this (``select_impacted_tests``). It has to work inside the
target environment, which may have nothing but pytest, so it uses what the standard library
gives: ``sys.setprofile`` sees every Python function call (function granularity is what the
selection needs: a test reaches a changed function or it does not), and an audit hook sees every
``open`` (data files a test reads). Only code and files under the checkout root are kept.

The profile function is installed around each test's protocol and removed afterwards, so the
time between tests and the rest of the session run untraced. Keys are
``relative/path.py:first_line`` of the code object (the first decorator's line for a decorated
function), which the runner matches against the line ranges of changed definitions on B.

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

import os
import sys
import threading
from types import CodeType, FrameType
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

import pytest

from pytest_evidence.reports import DEPS_ATTR

#: The recorder the process-wide audit hook reports to; empty between sessions. An audit hook
#: cannot be removed once added, so there is one per process and it forwards to whoever
#: recorder is configured now (pytester runs several sessions in one process).
_AUDITED: List[DependencyRecorder] = []
_AUDIT_INSTALLED: List[bool] = []


def _audit(event: str, args: Tuple[Any, ...]) -> None:
    if _AUDITED:
        _AUDITED[0].opened(event, args)


def source_of(path: str) -> str:
    """The module a file under ``__pycache__`` is the bytecode of (``m.cpython-311.pyc``, pytest's
    ``m.cpython-311-pytest-8.3.5.pyc``, a write's temporary ``m.cpython-311.pyc.4711``); any other
    path itself. Whether a test's lazy import reads a module's source or its bytecode depends on
    what an earlier session -- or another xdist worker -- wrote: what the test is recorded to
    have opened must not."""
    head, name = os.path.split(path)
    if os.path.basename(head) != "__pycache__":
        return path
    return os.path.join(os.path.dirname(head), name.split(".", 1)[0] + ".py")


def choose_engine(requested: str) -> str:
    """The cheapest engine that stays safe here (``docs/benchmarks.md`` has the measurements).

    ``requested`` is ``auto``, ``tracer`` (this plugin's own) or ``coverage``. The plugin's own
    tracer is ``sys.monitoring`` on Python 3.12+ -- each function's first start in a test is
    recorded and then disabled, so a call-heavy test costs almost nothing -- and ``sys.settrace``
    before. ``auto`` takes ``sys.monitoring`` where it exists, else coverage.py's C tracer when the
    target environment has it and nothing is tracing already, else ``sys.settrace``.
    """
    own = "monitoring" if hasattr(sys, "monitoring") else "settrace"
    if requested == "tracer" or (requested == "auto" and own == "monitoring"):
        return own
    try:
        import coverage

        # per-test dynamic contexts came with coverage.py 5.0, data kept in memory with 5.0b2
        usable = tuple(getattr(coverage, "version_info", (0,))) >= (5, 0, 0, "beta", 2)
        why = "coverage.py %s is older than 5.0" % getattr(coverage, "__version__", "?")
    except ImportError:
        usable, why = False, "coverage.py is not installed here"
    if not usable:
        if requested == "coverage":
            raise pytest.UsageError("--evidence-deps-engine=coverage: %s" % why)
        return own
    if requested == "auto" and (coverage.Coverage.current() is not None or sys.gettrace() is not None):
        return own
    return "coverage"


class DependencyRecorder:
    def __init__(self, root: str, engine: str, emit: Callable[[str, List[str]], None]) -> None:
        self.root = os.path.realpath(root)
        self._prefix = self.root + os.sep
        #: each code object's file and key: code objects compare equal across files (``co_filename``
        #: is no part of it), so the same function in two files -- a vendored copy -- would
        #: otherwise be keyed by whichever ran first, and a change to the other not seen
        self._keys: Dict[CodeType, Tuple[str, Optional[str]]] = {}
        self._functions: Optional[Set[str]] = None
        self._files: Optional[Set[str]] = None
        self.engine = engine
        self._emit = emit
        self._coverage: Any = None
        self._tool: Optional[int] = None
        if engine == "monitoring":
            self._tool = self._claim_tool()
        if engine == "coverage":
            import coverage  # only in a target environment that has it (see choose_engine)

            # No data file: the data stay in memory, so a process killed mid-run (a hang's
            # timeout) leaves nothing behind in the temporary directory.
            self._coverage = coverage.Coverage(data_file=None, config_file=False, source=[self.root], branch=False)
        if not _AUDIT_INSTALLED:
            sys.addaudithook(_audit)
            _AUDIT_INSTALLED.append(True)
        _AUDITED[:] = [self]

    def _key(self, code: CodeType) -> Optional[str]:
        key = None
        path = "" if code.co_filename.startswith("<") else os.path.realpath(code.co_filename)
        if path.startswith(self._prefix):
            key = "%s:%d" % (path[len(self._prefix) :].replace(os.sep, "/"), code.co_firstlineno)
        self._keys[code] = (code.co_filename, key)
        return key

    def _trace(self, frame: FrameType, event: str, arg: Any) -> None:
        code = frame.f_code
        known = self._keys.get(code)
        key = known[1] if known is not None and known[0] == code.co_filename else self._key(code)
        if key is not None and self._functions is not None:
            self._functions.add(key)

    def opened(self, event: str, args: Tuple[Any, ...]) -> None:
        if event == "open" and self._files is not None and args and isinstance(args[0], str):
            self._files.add(source_of(args[0]))

    def pytest_unconfigure(self) -> None:
        """Give back what the session took: the audit hook's attention and the monitoring tool id."""
        if _AUDITED and _AUDITED[0] is self:
            _AUDITED.clear()
        if self._tool is not None:
            monitoring = sys.monitoring  # type: ignore[attr-defined,unused-ignore]
            monitoring.set_events(self._tool, 0)
            monitoring.register_callback(self._tool, monitoring.events.PY_START, None)
            monitoring.free_tool_id(self._tool)
            self._tool = None

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: Optional[pytest.Item]) -> Any:
        self._functions, self._files = set(), set()
        if self._coverage is not None:
            if not self._started:
                self._coverage.start()
                self._started = True
            self._coverage.switch_context(item.nodeid)
        # Re-arm what the previous test disabled: each test records its own first calls.
        if self._tool is not None:
            sys.monitoring.restart_events()  # type: ignore[attr-defined,unused-ignore]
        try:
            yield
        finally:
            self._functions = self._files = None
            if self._coverage is not None:
                self._coverage.switch_context("")

    _started = False

    def _claim_tool(self) -> int:
        monitoring = sys.monitoring  # type: ignore[attr-defined,unused-ignore]
        for tool in (3, 4):
            if monitoring.get_tool(tool) is None:
                monitoring.use_tool_id(tool, "pytest-evidence")
                monitoring.register_callback(tool, monitoring.events.PY_START, self._started_code)
                return tool
        raise pytest.UsageError("--evidence-deps: no free sys.monitoring tool id (3 and 4 are taken)")

    def _started_code(self, code: CodeType, offset: int) -> Any:
        known = self._keys.get(code)
        key = known[1] if known is not None and known[0] == code.co_filename else self._key(code)
        if key is not None and self._functions is not None:
            self._functions.add(key)
        return sys.monitoring.DISABLE  # type: ignore[attr-defined,unused-ignore]

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self) -> None:
        """coverage.py: per-test lines are known only now; emit them as ``path:line`` keys."""
        if self._coverage is None or not self._started:
            return
        self._coverage.stop()
        data = self._coverage.get_data()
        per_test: Dict[str, Set[str]] = {}
        for filename in data.measured_files():
            rel = self._relative({filename})
            if not rel:
                continue
            (path,) = rel
            for line, contexts in data.contexts_by_lineno(filename).items():
                for context in contexts:
                    if context:
                        per_test.setdefault(context, set()).add("%s:%d" % (path, line))
        for test_id, keys in sorted(per_test.items()):
            self._emit(test_id, sorted(keys))

    def _traced(self) -> Any:
        if self._coverage is not None:
            yield
            return
        if self._tool is not None:
            monitoring = sys.monitoring  # type: ignore[attr-defined,unused-ignore]
            monitoring.set_events(self._tool, monitoring.events.PY_START)
            try:
                yield
            finally:
                monitoring.set_events(self._tool, 0)
            return
        if sys.gettrace() is not None or self._functions is None:  # another tracer owns the frames
            self._functions = None
            yield
            return
        mine = self._trace
        threading.settrace(mine)
        sys.settrace(mine)
        try:
            yield
        finally:
            if sys.gettrace() != mine:  # someone replaced the tracer mid-test: the data is partial
                self._functions = None
            sys.settrace(None)
            threading.settrace(None)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Any:
        yield from self._traced()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Any:
        yield from self._traced()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item, nextitem: Optional[pytest.Item]) -> Any:
        yield from self._traced()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        outcome = yield
        if call.when == "teardown" and self._functions is not None and self._files is not None:
            report = outcome.get_result()
            setattr(report, DEPS_ATTR, [sorted(self._functions), sorted(self._relative(self._files))])

    def _relative(self, paths: Set[str]) -> Set[str]:
        found = set()
        for raw in paths:
            path = os.path.realpath(raw)
            if path.startswith(self._prefix):
                found.add(path[len(self._prefix) :].replace(os.sep, "/"))
        return found
