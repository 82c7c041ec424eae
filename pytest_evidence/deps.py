"""Per-test dependency recording: which functions each test reached, which files it opened.

The runner selects tests from this (``select_impacted_tests``). It has to work inside the
target environment, which may have nothing but pytest, so it uses what the standard library
gives: ``sys.setprofile`` sees every Python function call (function granularity is what the
selection needs: a test reaches a changed function or it does not), and an audit hook sees every
``open`` (data files a test reads). Only code and files under the checkout root are kept.

The profile function is installed around each test's protocol and removed afterwards, so the
time between tests and the rest of the session run untraced. Keys are
``relative/path.py:first_line`` of the code object (the first decorator's line for a decorated
function), which the runner matches against the line ranges of changed definitions on B.
"""

from __future__ import annotations

import os
import sys
import threading
from types import CodeType, FrameType
from typing import Any, Dict, Optional, Set, Tuple

import pytest

#: Attribute carrying ``(functions, files)`` on a test's teardown report (it survives xdist).
DEPS_ATTR = "evidence_deps"


class DependencyRecorder:
    def __init__(self, root: str) -> None:
        self.root = os.path.realpath(root)
        self._prefix = self.root + os.sep
        self._keys: Dict[CodeType, Optional[str]] = {}
        self._functions: Optional[Set[str]] = None
        self._files: Optional[Set[str]] = None
        sys.addaudithook(self._audit)

    def _key(self, code: CodeType) -> Optional[str]:
        key = None
        path = "" if code.co_filename.startswith("<") else os.path.realpath(code.co_filename)
        if path.startswith(self._prefix):
            key = "%s:%d" % (path[len(self._prefix) :].replace(os.sep, "/"), code.co_firstlineno)
        self._keys[code] = key
        return key

    def _trace(self, frame: FrameType, event: str, arg: Any) -> None:
        code = frame.f_code
        key = self._keys[code] if code in self._keys else self._key(code)
        if key is not None and self._functions is not None:
            self._functions.add(key)

    def _audit(self, event: str, args: Tuple[Any, ...]) -> None:
        if event == "open" and self._files is not None and args and isinstance(args[0], str):
            self._files.add(args[0])

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: Optional[pytest.Item]) -> Any:
        self._functions, self._files = set(), set()
        try:
            yield
        finally:
            self._functions = self._files = None

    def _traced(self) -> Any:
        if sys.gettrace() is not None or self._functions is None:  # another tracer owns the frames
            self._functions = None
            yield
            return
        threading.settrace(self._trace)
        sys.settrace(self._trace)
        try:
            yield
        finally:
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
