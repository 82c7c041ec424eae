"""A rung's duration leaves out obtaining B's suite run, which ``baseline_run.seconds`` reports."""

from __future__ import annotations

import pytest

from runner.ladder.climb import rung_seconds


@pytest.mark.parametrize(
    "started, now, aside, expected",
    [
        (10.0, 14.0, None, 4.0),  # no B suite asked for
        (10.0, 14.0, (11.0, 13.5), 1.5),  # B's suite run inside the rung (T4 asked for it)
        (10.0, 14.0, (2.0, 5.0), 4.0),  # B's suite run before the rung began (T3 asked for it)
        (10.0, 14.0, (8.0, 12.0), 2.0),  # begun before the rung, ended in it: only its part in it
        (20.0, 25.0, (11.0, 13.5), 5.0),  # a later rung (T5): B's run is none of its time
    ],
)
def test_a_rung_is_timed_without_bs_suite_run(
    started: float, now: float, aside: tuple[float, float] | None, expected: float
) -> None:
    assert rung_seconds(started, now, aside) == expected
