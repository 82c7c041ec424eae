"""Work run beside the climb, in a thread, whose answer is waited for only where it is needed.

An interpreter start the climb would otherwise wait for before its first tier (the target's
probe, the operator's pytest arguments tried on B), or an analysis while the climb waits on test
processes (T5's impact, during T3's stability runs); what they raise is raised again to whoever
waits, so bad input found meanwhile is still bad input.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T", covariant=True)


class Meanwhile(Generic[T]):
    """Work run in a thread beside the climb; calling it waits for it, and returns what it
    returned or raises what it raised."""

    def __init__(self, name: str, work: Callable[[], T]) -> None:
        self._answer: list[T] = []
        self._raised: list[BaseException] = []
        # Waited on instead of the thread: before Python 3.13 a ``join`` that Ctrl-C or SIGTERM
        # interrupted leaves the thread marked as stopped, and every later ``join`` returns at
        # once -- the checkouts were then removed while a worktree was still being made.
        self._over = threading.Event()
        threading.Thread(target=self._run, args=(work,), name=name, daemon=True).start()

    def _run(self, work: Callable[[], T]) -> None:
        try:
            self._answer.append(work())
        except BaseException as exc:  # handed to the waiting thread, which raises it
            self._raised.append(exc)
        finally:
            self._over.set()

    def wait(self) -> None:
        """Until it is over, whatever it did."""
        self._over.wait()

    def __call__(self) -> T:
        self.wait()
        if self._raised:
            raise self._raised[0]
        return self._answer[0]

    def passed(self) -> bool:
        """Over, and nothing raised (without waiting)."""
        return bool(self._answer)
