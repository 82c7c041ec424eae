"""One errors module: every user-facing failure is an ``EvidenceError`` with a stable slug.

The slug names the cause (``docs/errors.md`` has one entry per slug) so a harness can branch on
it; the message is one line that names the thing involved. Nothing here imports pytest: the
plugin turns these into ``pytest.UsageError`` and the runner into an exit code.
"""

from __future__ import annotations


class EvidenceError(Exception):
    """Base of every error a user can cause and fix."""

    slug = "evidence-error"

    def __str__(self) -> str:
        return "%s [%s]" % (super().__str__(), self.slug)


class NotAGitRepository(EvidenceError):
    slug = "not-a-git-repo"


class UnknownRevision(EvidenceError):
    slug = "unknown-revision"


class OverlayConflict(EvidenceError):
    slug = "overlay-conflict"


class GitFailed(EvidenceError):
    slug = "git-failed"


class StoreCorrupt(EvidenceError):
    slug = "store-corrupt"


class StoreLocked(EvidenceError):
    slug = "store-locked"


class StoreVersionMismatch(EvidenceError):
    slug = "store-version"


class UnknownTestId(EvidenceError):
    slug = "unknown-test-id"


class StreamCorrupt(EvidenceError):
    slug = "stream-corrupt"
