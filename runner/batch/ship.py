"""The repository, shipped: one git bundle made once by the driver, cloned by each Ray task.

The bundle holds every ref of the repository, its HEAD, and a ref for each commit the batch names
(B, the candidate revisions), so a commit no ref reaches travels too and every revision certify's
options name resolves in a clone as it does in the repository. It is made in a bare clone sharing
the repository's objects, so the user's repository never gets a ref of ours. Each task clones it
into a directory of its own: two candidates never share a checkout.
"""

from __future__ import annotations

import pathlib
import tempfile
from collections.abc import Sequence

from pytest_evidence import gitops


def bundle(repo: pathlib.Path, commits: Sequence[str]) -> bytes:
    """The repository as one git bundle, with ``commits`` reachable from refs of their own."""
    with tempfile.TemporaryDirectory(prefix="evidence-bundle-") as tmp:
        bare, made = str(pathlib.Path(tmp) / "repo.git"), pathlib.Path(tmp) / "repo.bundle"
        gitops.git(["clone", "--quiet", "--bare", "--shared", str(repo), bare], cwd=tmp)
        gitops.git(["update-ref", "--no-deref", "HEAD", gitops.resolve_commit(str(repo), "HEAD")], cwd=bare)
        for number, commit in enumerate(commits):
            gitops.git(["update-ref", "refs/evidence-batch/%d" % number, commit], cwd=bare)
        gitops.git(["bundle", "create", "--quiet", str(made), "--all"], cwd=bare)
        return made.read_bytes()


def clone(data: bytes, dest: pathlib.Path) -> None:
    """A working clone of the bundle ``data`` at ``dest`` (new): every ref as in the repository."""
    dest.mkdir(parents=True)
    source = dest.parent / (dest.name + ".bundle")
    source.write_bytes(data)
    try:
        gitops.git(["clone", "--quiet", "--mirror", str(source), str(dest / ".git")], cwd=str(dest.parent))
        gitops.git(["config", "core.bare", "false"], cwd=str(dest))
        gitops.git(["reset", "--quiet", "--hard"], cwd=str(dest))
    finally:
        source.unlink()
