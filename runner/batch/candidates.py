"""What a batch judges: one candidate per line of a file (a revision or a patch path), or the
``*.patch`` files of a directory.

Every candidate is checked before anything runs -- an unknown revision or a missing patch is bad
input naming its line -- and gets a name its record and log are filed under: the patch's stem, or
the revision's short id, made unique.
"""

from __future__ import annotations

import pathlib
import re
from dataclasses import dataclass

from pytest_evidence import gitops
from pytest_evidence.errors import BadInput, EvidenceError


@dataclass(frozen=True)
class Candidate:
    name: str
    revision: str | None  # a commit id (resolved), or None for a patch
    patch: pathlib.Path | None  # an absolute path, or None for a revision

    def certify_args(self) -> list[str]:
        return ["--candidate", self.revision] if self.revision else ["--patch", str(self.patch)]

    def to_dict(self) -> dict[str, str | None]:
        return {"name": self.name, "revision": self.revision, "patch": None if self.patch is None else str(self.patch)}


def read(source: pathlib.Path, repo: pathlib.Path) -> list[Candidate]:
    """The candidates ``source`` names, in its order (a directory: its patches by name)."""
    if source.is_dir():
        patches = sorted(source.glob("*.patch"))
        if not patches:
            raise BadInput("--candidates %s holds no *.patch file" % source)
        found = [_patch(p.resolve()) for p in patches]
    elif source.is_file():
        found = []
        for number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1):
            word = line.strip()
            if word and not word.startswith("#"):
                found.append(_one(word, source, number, repo))
        if not found:
            raise BadInput("--candidates %s names no candidate" % source)
    else:
        raise BadInput("--candidates %s: no such file or directory" % source)
    return _unique(found)


def _one(word: str, source: pathlib.Path, number: int, repo: pathlib.Path) -> Candidate:
    """A line is a patch when it names an existing file (relative to the list), else a revision."""
    path = (source.parent / word).resolve()
    if word.endswith((".patch", ".diff")) or path.is_file():
        if not path.is_file():
            raise BadInput("--candidates %s:%d: patch %s does not exist" % (source, number, word))
        return _patch(path)
    try:
        commit = gitops.resolve_commit(str(repo), word)
    except EvidenceError:
        raise BadInput(
            "--candidates %s:%d: %r is neither a patch file nor a revision of %s" % (source, number, word, repo)
        ) from None
    return Candidate(commit[:12], commit, None)


def _patch(path: pathlib.Path) -> Candidate:
    return Candidate(re.sub(r"[^A-Za-z0-9._-]+", "-", path.stem) or "patch", None, path)


def _unique(found: list[Candidate]) -> list[Candidate]:
    """Names made unique in order (``fix``, ``fix-2``...): two records never share a file."""
    seen: dict[str, int] = {}
    out = []
    for cand in found:
        count = seen.get(cand.name, 0) + 1
        seen[cand.name] = count
        out.append(cand if count == 1 else Candidate("%s-%d" % (cand.name, count), cand.revision, cand.patch))
    return out
