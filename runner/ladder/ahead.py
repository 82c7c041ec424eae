"""T5's impact analysis, started while the climb waits on T3's stability runs.

The analysis reads B's Python files whole (on a large project, seconds of the runner's own
time), and the plan of T4-T7 needs it before C's suite session runs a test. It needs no test
outcome, only the files the suite's tests are in: once C's suite session (started beside the
stability runs) has collected, those are known, and the runner has nothing to do but wait for
one test process at a time. So it runs then, in a thread, and the plan takes its answer -- only
if the suite the plan is made for is in the same test files, and the checkout holds the same
Python files (a test may write one); otherwise the plan computes its own. B's suite, when it
runs now, waits for the analysis to end: a run that is stored for later certifies is not made
beside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from runner.diff import Diff
from runner.impact import Impact
from runner.importgraph import ImportGraph
from runner.meanwhile import Meanwhile
from runner.pytest_session import GroupedSession, SessionEnded
from runner.selection import impact_on, test_files

if TYPE_CHECKING:
    from collections.abc import Sequence

    from runner.ladder.climb import Ladder


@dataclass(frozen=True)
class Ahead:
    """The impact being computed for a suite whose tests are in ``files``."""

    files: frozenset[str]
    python_files: frozenset[str]
    impact: Meanwhile[Impact]


def start(ladder: Ladder, diff: Diff, suite: GroupedSession) -> None:
    """Start the impact analysis for C's suite session ``suite``, which has collected."""
    if diff.selects_everything:
        return  # T5 is the whole suite: nothing to analyse
    try:
        collected = suite.collected().content.collected
    except SessionEnded:
        return  # the plan will not be made from this session
    files = test_files(collected or ())
    c_dir = ladder.co.c_dir
    graph = ImportGraph(c_dir, ladder.target.relative_roots(c_dir))
    analysis = Meanwhile("t5-impact", lambda: impact_on(files, diff, graph))
    ladder.ahead = Ahead(files, frozenset(graph.files), analysis)


def settle(ladder: Ladder) -> None:
    """Wait for the analysis started ahead, if any, to end."""
    if ladder.ahead is not None:
        ladder.ahead.impact.wait()


def taken(ladder: Ladder, suite_ids: Sequence[str], graph: ImportGraph) -> Impact | None:
    """The impact started ahead, if it was for a suite in the files of ``suite_ids`` and a
    checkout with ``graph``'s Python files."""
    ahead, ladder.ahead = ladder.ahead, None
    if ahead is None or ahead.files != test_files(suite_ids) or ahead.python_files != frozenset(graph.files):
        return None
    return ahead.impact()
