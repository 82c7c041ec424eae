"""A check run beside the climb, in a thread, whose answer is waited for only where it is needed.

Each of these is an interpreter start the climb would otherwise wait for before its first tier
(the target's probe, the operator's pytest arguments tried on B); what they raise is raised again
to whoever waits, so bad input found meanwhile is still bad input.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class Meanwhile:
    """A check run in a thread beside the climb; calling it waits for it and raises what it raised."""

    def __init__(self, name: str, work: Callable[[], object]) -> None:
        self._outcome: list[BaseException | None] = []
        self._thread = threading.Thread(target=self._run, args=(work,), name=name, daemon=True)
        self._thread.start()

    def _run(self, work: Callable[[], object]) -> None:
        try:
            work()
        except BaseException as exc:  # handed to the waiting thread, which raises it
            self._outcome.append(exc)
        else:
            self._outcome.append(None)

    def __call__(self) -> None:
        self._thread.join()
        if self._outcome[0] is not None:
            raise self._outcome[0]

    def passed(self) -> bool:
        """Over, and nothing raised (without waiting)."""
        return self._outcome == [None]
