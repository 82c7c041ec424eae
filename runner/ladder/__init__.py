"""The certification ladder T0-T7, split by concern.

* ``climb`` -- the mechanism: runs each rung's engine in cost order and stops at the first
  rung that fails;
* ``judge`` -- the rules: pure functions from typed results to a rung's status;
* ``sides`` -- every pytest process of a climb, on C and on B, pinned alike;
* ``evidence`` -- what the climb has established so far;
* ``invocation`` and ``record`` -- how the climb was asked for, and what it writes.
"""

from runner.ladder.climb import Ladder
from runner.ladder.invocation import Invocation
from runner.ladder.record import write_record

__all__ = ["Invocation", "Ladder", "write_record"]
