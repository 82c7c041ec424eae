"""B and C as temporary git worktrees; the user's working tree and index are never touched.

A patch is applied onto B in C's worktree and committed there (a detached commit, reachable from
nothing), so C always has a sha. Everything lives in one scratch directory that is removed on
the way out -- also on Ctrl-C or SIGTERM, which are turned into ``KeyboardInterrupt`` while the
checkouts exist.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import FrameType

from pytest_evidence import gitops, overlay
from pytest_evidence.errors import EvidenceError
from runner.errors import BadInput, PatchDoesNotApply

_IDENTITY = {
    "GIT_AUTHOR_NAME": "evidence-runner",
    "GIT_AUTHOR_EMAIL": "evidence-runner@localhost",
    "GIT_COMMITTER_NAME": "evidence-runner",
    "GIT_COMMITTER_EMAIL": "evidence-runner@localhost",
}


@dataclass
class Checkouts:
    """B and C; each worktree is made the first time a tier needs files on disk.

    A patch stopped by T0 never pays for a checkout: T0 reads C's files from git's objects.
    """

    repo: pathlib.Path
    baseline: str
    candidate: str
    scratch: pathlib.Path
    made: list[pathlib.Path] = field(default_factory=list)

    def _tree(self, name: str, commit: str) -> pathlib.Path:
        dest = self.scratch / name
        if not dest.exists():
            gitops.add_worktree(str(self.repo), commit, str(dest))
            self.made.append(dest)
        return dest

    @property
    def b_dir(self) -> pathlib.Path:
        return self._tree("B", self.baseline)

    @property
    def c_dir(self) -> pathlib.Path:
        return self._tree("C", self.candidate)

    def read_candidate(self, path: str) -> bytes:
        return gitops.show(str(self.repo), self.candidate, path)

    def baseline_with_tests(self, plan: overlay.OverlayPlan) -> pathlib.Path:
        """A third worktree: B's source with C's test files laid over it ("run on B")."""
        dest = self.scratch / "B-with-C-tests"
        if not dest.exists():
            self._tree(dest.name, self.baseline)
            overlay.apply(plan, str(self.c_dir), str(dest))
        return dest


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def checkouts(
    repo_dir: pathlib.Path, baseline: str, candidate: str | None, patch: pathlib.Path | None
) -> Iterator[Checkouts]:
    try:
        repo = pathlib.Path(gitops.toplevel(str(repo_dir)))
        b_sha = gitops.resolve_commit(str(repo), baseline)
        c_sha = gitops.resolve_commit(str(repo), candidate) if candidate is not None else None
    except (EvidenceError, FileNotFoundError, NotADirectoryError) as exc:
        raise BadInput(str(exc)) from None
    if patch is not None and not patch.is_file():
        raise BadInput("--patch %s: no such file" % patch)
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="evidence-runner-"))
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    co = Checkouts(repo, b_sha, c_sha or b_sha, scratch)
    try:
        if c_sha is None:
            assert patch is not None
            co.candidate = _apply(co.c_dir, patch.resolve())
        yield co
    finally:
        signal.signal(signal.SIGTERM, previous)
        for tree in co.made:
            gitops.remove_worktree(str(repo), str(tree))
        shutil.rmtree(scratch, ignore_errors=True)


def _apply(tree: pathlib.Path, patch: pathlib.Path) -> str:
    check = subprocess.run(["git", "apply", "--check", str(patch)], cwd=tree, capture_output=True, text=True)
    if check.returncode != 0:
        lines = [ln for ln in check.stderr.splitlines() if ln.startswith("error:")] or [check.stderr.strip()]
        raise PatchDoesNotApply(
            "--patch %s does not apply to the baseline: %s" % (patch, lines[0].removeprefix("error: "))
        )
    env = dict(os.environ, **_IDENTITY)
    for cmd in (
        ["git", "apply", str(patch)],
        ["git", "add", "-A"],
        ["git", "-c", "commit.gpgsign=false", "commit", "-q", "--no-verify", "-m", "candidate from %s" % patch.name],
    ):
        subprocess.run(cmd, cwd=tree, capture_output=True, text=True, check=True, env=env)
    return gitops.git(["rev-parse", "HEAD"], cwd=str(tree)).stdout.decode().strip()
