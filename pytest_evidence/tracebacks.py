"""What a failure's traceback costs to format: bounded where only the runner reads it.

pytest's default style finds the statement of every frame by walking its module's whole syntax
tree (``getstatementrange_ast``), milliseconds a frame. A ``RecursionError`` has a thousand
frames: cachetools 7.3.1's reproducer took 1.4 s to format on B, in B's T3 run and again in
each of its stability runs. An ordinary failure pays it too, a frame at a time: thirteen
reproducers failing on click 8.3.2's B cost 0.35 s of a 1.6 s run, in B's T3 run and in each of
its stability runs, where nothing reads more than the failure's message (the same in every
style: pytest's ``reprcrash``) and the last lines of its excerpt. Python's own formatter
(``--tb=native``) reads one line a frame, and folds the repeated ones. So every failure of a test
is formatted natively in the runner's processes (record mode); what a user's terminal shows
stays pytest's choice.

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

import contextlib
from typing import Any, Generator, Iterator

import pytest


@contextlib.contextmanager
def restored(option: Any) -> Iterator[None]:
    """pytest's traceback style put back as it was when the block ends."""
    style = getattr(option, "tbstyle", "auto")
    try:
        yield
    finally:
        option.tbstyle = style


@contextlib.contextmanager
def native(option: Any) -> Iterator[None]:
    """pytest's ``--tb=native`` while the block runs: every failure pytest formats in it is
    formatted by Python's own formatter."""
    with restored(option):
        option.tbstyle = "native"
        yield


class NativeTracebacks:
    """Switches to native formatting when a test fails.

    It only switches, and returns nothing: ``pytest_runtest_makereport`` stops at the first
    answer, and a conftest's own implementation (pytest's "incremental" recipe) must still see
    every failure. It is a plain implementation, not a wrapper, because unittest support hands a
    TestCase's failure to ``call`` only in its own ``tryfirst`` implementation, after every
    wrapper has started; registered late, this one runs after it and before the others, pytest's
    default (which formats) included. ``RestoreStyle`` puts the style back.
    """

    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> None:
        if call.excinfo is not None:
            item.config.option.tbstyle = "native"


class RestoreStyle:
    """Around every report made: the style it started with, whatever ``NativeTracebacks`` did."""

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item) -> Generator[None, Any, None]:
        with restored(item.config.option):
            yield


def install(config: pytest.Config) -> None:
    """Both halves, on ``config``: where tests run, in record mode."""
    config.pluginmanager.register(NativeTracebacks(), "evidence-native-tracebacks")
    config.pluginmanager.register(RestoreStyle(), "evidence-native-tracebacks-restore")
