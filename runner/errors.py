"""Exit codes of ``evidence-runner``, documented in docs/runner.md.

They are the runner's interface to CI, so they never change meaning.
"""

from __future__ import annotations

EXIT_CERTIFIED = 0
EXIT_REJECTED = 1
EXIT_BAD_INPUT = 2
EXIT_INCONCLUSIVE = 3
EXIT_INTERNAL = 4


class NotBuilt(Exception):
    """A feature that is specified but not built yet: said loudly, never a silent pass."""
