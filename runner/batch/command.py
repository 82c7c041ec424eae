"""The certify command every candidate of a batch gets, wherever it runs.

One place builds it, so a candidate judged by a local process and one judged in a Ray task (in a
clone of the repository, against a store of its own) run the same certify, and a record of either
is the record of certifying the candidate alone: only the repository and the store differ.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Certify:
    """The batch's certify: B, the options every candidate shares, pytest's arguments."""

    baseline: str
    options: tuple[str, ...]  # certify's, without --repo, --store, the candidate and --out
    pytest_args: tuple[str, ...]

    def command(self, repo: str, store: str, candidate: Sequence[str], record: str) -> list[str]:
        """``evidence-runner``'s words for one candidate (``candidate``: its --candidate or --patch)."""
        tail = ["--", *self.pytest_args] if self.pytest_args else []
        return [
            "certify",
            "--repo",
            repo,
            "--baseline",
            self.baseline,
            *self.options,
            "--store",
            store,
            *candidate,
            "--out",
            record,
            *tail,
        ]
