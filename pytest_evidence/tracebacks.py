"""What a failure's traceback costs to format: bounded where only the runner reads it.

pytest's default style finds the statement of every frame by walking its module's whole syntax
tree (``getstatementrange_ast``), milliseconds a frame. A ``RecursionError`` has a thousand
frames: cachetools 7.3.1's reproducer took 1.4 s to format on B, in B's T3 run and again in
each of its stability runs, where nothing reads more than the outcome and the last lines of the
excerpt. Python's own formatter (``--tb=native``) reads one line a frame, and folds the repeated
ones. So a deep traceback is formatted natively in the runner's processes (record mode); what a
user's terminal shows stays pytest's choice.

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator, Optional

import pytest

#: Frames, pytest's and pluggy's own included (about twenty in a test's call), above which a
#: traceback is formatted natively.
DEEP = 100


@contextlib.contextmanager
def native(option: Any) -> Iterator[None]:
    """pytest's ``--tb=native`` while the block runs: every failure pytest formats in it is
    formatted by Python's own formatter."""
    style = getattr(option, "tbstyle", "auto")
    option.tbstyle = "native"
    try:
        yield
    finally:
        option.tbstyle = style


class DeepTracebacks:
    """Formats a failure natively when its traceback is deeper than ``DEEP`` frames.

    Not a wrapper around pytest's own report maker: a unittest case's failure reaches ``call``
    only in unittest support's ``tryfirst`` implementation, after every wrapper has started. This
    one runs after it and before pytest's default (registered later, not ``tryfirst``), and
    makes the report as the default does, only natively: pytest's wrappers (xfail) still see it.
    """

    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Optional[pytest.TestReport]:
        excinfo = call.excinfo
        if excinfo is None or len(excinfo.traceback) <= DEEP:
            return None
        with native(item.config.option):
            return pytest.TestReport.from_item_and_call(item, call)
