"""A benchmark's helper plugin (``bench_framework_watch.py``): the run-time check of the test
frameworks' objects taken apart -- without its per-test look, or without it at all -- to measure
what each part costs. Never a configuration of the product."""

from __future__ import annotations

from typing import Any

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--watch-off", choices=("per-test", "all"), required=True)


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    watch = config.pluginmanager.get_plugin("evidence-framework-watch")
    if watch is None:
        raise pytest.UsageError("_watch_off: no framework watch registered (is this record mode?)")
    if config.getoption("watch_off") == "all":
        config.pluginmanager.unregister(watch)
        return
    originals = watch.originals
    look = originals.look

    def everything_only(at: str, everything: bool = False) -> Any:
        return look(at, everything) if everything else None

    originals.look = everything_only
