"""One errors module for the plugin and the runner: every failure has a slug and an exit code.

The slug names the cause (``docs/errors.md`` has one entry per slug) so a harness can branch on
it; the message is one line that names the thing involved and never repeats the slug. Each
entry point catches ``EvidenceError`` once and prints ``<program>: <message> [<slug>]``:

* the runner exits with the error's ``exit_code``;
* the plugin is pytest, so it reports every one of them as pytest's usage error (exit 4).

Three families, because a harness must treat them differently:

* ``BadInput`` -- the user asked for something that cannot be done as asked (exit 2). Nothing
  ran; fixing the command line fixes it.
* ``ToolFailed`` -- an engine (git, pytest, ruff, mypy, the import probe) ended without a usable
  answer. Inside a climb that makes its tier an ``error`` and the verdict INCONCLUSIVE; it is
  never a pass.
* everything else is internal (exit 4): a defect of pytest-evidence itself.

Nothing here imports pytest: the model and this module load in old target interpreters.

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

EXIT_CERTIFIED = 0
EXIT_REJECTED = 1
EXIT_BAD_INPUT = 2
EXIT_INCONCLUSIVE = 3
EXIT_INTERNAL = 4


class EvidenceError(Exception):
    """Base of every error pytest-evidence raises on purpose."""

    slug = "internal"
    exit_code = EXIT_INTERNAL

    def line(self, program: str) -> str:
        """The one line an entry point prints."""
        return "%s: %s [%s]" % (program, self, self.slug)


class BadInput(EvidenceError):
    slug = "bad-input"
    exit_code = EXIT_BAD_INPUT


class Usage(BadInput):
    """The command line itself is malformed (an unknown option, a missing argument)."""

    slug = "usage"


class NotAGitRepository(BadInput):
    slug = "not-a-git-repo"


class UnknownRevision(BadInput):
    slug = "unknown-revision"


class OverlayConflict(BadInput):
    slug = "overlay-conflict"


class UnknownTestId(BadInput):
    slug = "unknown-test-id"


class PatchDoesNotApply(BadInput):
    slug = "patch-does-not-apply"


class MissingTool(BadInput):
    """An engine is not there at all, found before anything ran."""

    slug = "missing-tool"


class StoreError(BadInput):
    """The store cannot be used; the message ends in the option that chose it."""


class StoreCorrupt(StoreError):
    slug = "store-corrupt"


class StoreLocked(StoreError):
    slug = "store-locked"


class StoreVersionMismatch(StoreError):
    slug = "store-version"


class ToolFailed(EvidenceError):
    """An engine ran and ended without a usable answer: its tier is an error, never a pass."""

    slug = "tool-failed"
    exit_code = EXIT_INCONCLUSIVE


class GitFailed(ToolFailed):
    slug = "git-failed"


class Interrupted(EvidenceError):
    """Ctrl-C or SIGTERM: what had run is recorded, and nothing is left running."""

    slug = "interrupted"


class InternalError(EvidenceError):
    """A defect of pytest-evidence; the message says where the traceback was written."""

    slug = "internal"
