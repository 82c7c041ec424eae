"""Exit codes of ``evidence-runner`` and the errors that map onto them (docs/runner.md).

The exit codes are the runner's interface to CI and never change meaning. Every user mistake is
a ``BadInput`` with one line naming the thing involved; a traceback is reserved for bugs.
"""

from __future__ import annotations

EXIT_CERTIFIED = 0
EXIT_REJECTED = 1
EXIT_BAD_INPUT = 2
EXIT_INCONCLUSIVE = 3
EXIT_INTERNAL = 4


class RunnerError(Exception):
    """Base of the runner's own errors; ``slug`` names the cause in docs/runner.md."""

    slug = "runner-error"
    exit_code = EXIT_INTERNAL


class BadInput(RunnerError):
    """The user asked for something that cannot be done as asked."""

    slug = "bad-input"
    exit_code = EXIT_BAD_INPUT


class PatchDoesNotApply(BadInput):
    slug = "patch-does-not-apply"


class MissingTool(BadInput):
    slug = "missing-tool"


class NotBuilt(RunnerError):
    """A feature that is specified but not built yet: said loudly, never a silent pass."""

    slug = "not-built"
