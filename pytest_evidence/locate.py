"""Failures located in the repository, not in a temporary worktree that is gone by the time
anyone reads the record.

Both sides of a contrast run somewhere else than the reader: the plugin replays B in a temporary
worktree, the runner runs B and C in temporary checkouts, and pytest reports absolute paths. A
record's paths, messages and excerpts are made relative to the root the node ids are relative to
(the checkout, or pytest's rootdir), so a reader can open them, and B's and C's compare.

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Callable, Iterable, List, Optional

from pytest_evidence.model import Failure, Observation
from pytest_evidence.stream import StreamContent


def under(root: str) -> Callable[[Optional[Failure]], Optional[Failure]]:
    """A function taking a failure to its copy with ``root``'s prefix removed (either spelling of
    ``root``: as given, and with its symbolic links resolved, longest first)."""
    prefixes = sorted(
        {os.path.join(str(root), ""), os.path.join(os.path.realpath(str(root)), "")}, key=len, reverse=True
    )

    def strip(text: str) -> str:
        for prefix in prefixes:
            text = text.replace(prefix, "")
        return text

    def local(failure: Optional[Failure]) -> Optional[Failure]:
        if failure is None:
            return None
        return dataclasses.replace(
            failure,
            message=strip(failure.message),
            path=None if failure.path is None else strip(failure.path),
            excerpt=strip(failure.excerpt),
        )

    return local


def _located(obs: Observation, local: Callable[[Optional[Failure]], Optional[Failure]]) -> Observation:
    """``obs`` with its failure located by ``local``; ``obs`` itself when it has none (most tests:
    nothing to copy)."""
    return obs if obs.failure is None else dataclasses.replace(obs, failure=local(obs.failure))


def observations(found: Iterable[Observation], root: str) -> List[Observation]:
    """Each of ``found`` with its failure located under ``root``. ``under`` resolves ``root``'s
    symbolic links (a system call per path component): once here, not once per test."""
    local = under(root)
    return [_located(o, local) for o in found]


def content(found: StreamContent, root: str) -> StreamContent:
    """``found`` with every failure located under ``root`` (changed in place, and returned)."""
    local = under(root)
    found.results = {t: _located(o, local) for t, o in found.results.items()}
    relocated = ((n, local(f)) for n, f in found.collect_errors.items())
    found.collect_errors = {n: f for n, f in relocated if f is not None}
    return found
