"""The certification ladder T0-T7, split by concern.

* ``climb`` -- the mechanism: sequences the rungs in cost order, stops at the first one that
  fails, and keeps the state an interrupted climb still records;
* ``static``, ``reproduce``, ``regress`` -- the rungs: T0-T2 with the integrity check, collection
  and T3, B's suite and T4-T7;
* ``judge`` -- the rules: pure functions from typed results to a rung's status;
* ``sides`` -- every pytest process of a climb, on C and on B, pinned alike;
* ``evidence`` -- what the climb has established so far;
* ``invocation`` and ``record`` -- how the climb was asked for, and what it writes.
"""

from runner.ladder.climb import Ladder
from runner.ladder.invocation import Invocation
from runner.ladder.record import write_record

__all__ = ["Invocation", "Ladder", "write_record"]
