"""Thin, typed wrappers over the git command line.

Git is driven as a subprocess (never a library) so that the plugin stays standard-library only in
old target environments. Every failure becomes an ``EvidenceError`` with one line naming the
command's complaint; nothing here ever writes to the user's working tree or index.

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Sequence, Tuple, TypeVar, cast

from pytest_evidence.errors import GitFailed, NotAGitRepository, UnknownRevision

T = TypeVar("T")


#: Every git command of ours runs no hook: a hook in the repository's git directory -- the user's,
#: or one a candidate's code planted there -- would run at each worktree made for a certify,
#: outside any sandbox (an independent check's ``post-checkout`` rewrote a later no-fix candidate's
#: checkout, which was CERTIFIED).
NO_HOOKS = ("-c", "core.hooksPath=/dev/null")


def git(
    args: Sequence[str], cwd: str, check: bool = True, stdin: Optional[bytes] = None
) -> subprocess.CompletedProcess[bytes]:
    """Run ``git ARGS`` in ``cwd`` (``stdin`` written to it), capturing bytes, with no hook
    (``NO_HOOKS``); raise ``GitFailed`` on a non-zero exit."""
    try:
        proc = subprocess.run(
            ["git", *NO_HOOKS, *args],
            cwd=cwd,
            input=stdin,
            capture_output=True,
            env=dict(os.environ, GIT_TERMINAL_PROMPT="0", LC_ALL="C"),
        )
    except FileNotFoundError:
        raise GitFailed("git is not installed or not on PATH") from None
    if check and proc.returncode != 0:
        raise GitFailed(
            "git %s failed: %s" % (" ".join(args[:2]), _first_line(proc.stderr) or "exit %d" % proc.returncode)
        )
    return proc


def _first_line(data: bytes) -> str:
    text = data.decode("utf-8", "replace").strip()
    return text.splitlines()[0] if text else ""


def toplevel(path: str) -> str:
    """The root of the git working tree holding ``path``."""
    if not os.path.isdir(path):  # else git's missing cwd would read as git itself missing
        raise NotAGitRepository("%s is not a directory" % path)
    proc = git(["rev-parse", "--show-toplevel"], cwd=path, check=False)
    if proc.returncode != 0:
        raise NotAGitRepository("%s is not inside a git repository" % path)
    return proc.stdout.decode().strip()


def common_dir(path: str) -> Optional[str]:
    """The git directory shared by every worktree of the repository holding ``path`` (absolute),
    or None outside a repository or without git: a caller with a fallback needs no error."""
    try:
        proc = git(["rev-parse", "--git-common-dir"], cwd=path, check=False)
    except GitFailed:
        return None
    if proc.returncode != 0:
        return None
    return os.path.realpath(os.path.join(path, proc.stdout.decode().strip()))


def resolve_commit(root: str, rev: str) -> str:
    """Full sha of the commit ``rev`` names."""
    proc = git(["rev-parse", "--verify", "--quiet", rev + "^{commit}"], cwd=root, check=False)
    if proc.returncode != 0 or not proc.stdout.strip():
        raise UnknownRevision("unknown revision %r in %s" % (rev, root))
    return proc.stdout.decode().strip()


def is_directory(root: str, commit: str, path: str) -> bool:
    """Whether ``path`` is a directory in ``commit``."""
    proc = git(["cat-file", "-t", "%s:%s" % (commit, path.strip("/"))], cwd=root, check=False)
    return proc.returncode == 0 and proc.stdout.strip() == b"tree"


def tree_of(root: str, commit: str) -> str:
    return git(["rev-parse", commit + "^{tree}"], cwd=root).stdout.decode().strip()


def head_state(root: str, own: Sequence[str] = ()) -> Optional[str]:
    """``HEAD``'s sha, suffixed ``+dirty`` when the working tree differs from it.

    ``own``: files this session writes itself (the record, the stream, the store); they are not
    the candidate's changes and do not make it dirty. One ``git status`` says both (porcelain v2
    heads its entries with ``branch.oid``): every session with a record pays for it, and a
    process start is most of its cost. ``--no-optional-locks``: status would otherwise refresh
    the user's index and take its lock while doing so.
    """
    args = ["--no-optional-locks", "status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all"]
    proc = git(args, cwd=root, check=False)
    if proc.returncode != 0:
        return None
    sha, paths = _status_v2(proc.stdout)
    if sha is None:
        return None  # no commit yet
    mine = {os.path.realpath(p) for p in own}
    dirty = [p for p in paths if os.path.realpath(os.path.join(root, p)) not in mine]
    return sha + "+dirty" if dirty else sha


def _status_v2(out: bytes) -> Tuple[Optional[str], List[str]]:
    """``(branch.oid, changed paths)`` of ``git status --porcelain=v2 --branch -z``: ordinary
    (``1``), renamed or copied (``2``: the original path follows as its own field), unmerged
    (``u``) and untracked (``?``) entries; the oid is None before the first commit."""
    sha: Optional[str] = None
    paths: List[str] = []
    fields = iter(out.split(b"\0"))
    for entry in fields:
        text = entry.decode("utf-8", "surrogateescape")
        if text.startswith("# branch.oid "):
            oid = text[len("# branch.oid ") :]
            sha = None if oid == "(initial)" else oid
        elif text[:2] in _PATH_AFTER:
            paths.append(text.split(" ", _PATH_AFTER[text[:2]])[-1])
            if text[:2] == "2 ":
                next(fields, None)  # the rename's original path
    return sha, paths


#: Space-separated fields before the path in each porcelain v2 entry that names one.
_PATH_AFTER = {"1 ": 8, "2 ": 9, "u ": 10, "? ": 1, "! ": 1}


def _blob_entries(root: str, commit: str) -> List[Tuple[str, str, str]]:
    """``(mode, sha, path)`` of every blob of ``commit`` (a file, or a symbolic link: 120000)."""
    return list(_named(_ls_tree, root, commit))


def _named(read: Callable[..., T], root: str, commit: str, *args: str) -> T:
    """``read(root, commit, *args)``, kept for a commit named by its full sha: what a sha names
    never changes, and a climb asks the same trees and files of git again and again (a process
    start each, about a tenth of a no-fix certify in all)."""
    if not _FULL_SHA.fullmatch(commit):
        return read(root, commit, *args)
    key = (read, root, commit, args)
    kept = _KEPT.get(key, _KEPT)  # the dict itself: not kept (one lookup, safe beside other threads)
    if kept is _KEPT:
        kept = read(root, commit, *args)
        if len(_KEPT) >= _MOST_KEPT:
            _KEPT.clear()
        _KEPT[key] = kept
    return cast(T, kept)


_FULL_SHA = re.compile("[0-9a-f]{40}")
_KEPT: Dict[Tuple[Callable[..., Any], str, str, Tuple[str, ...]], Any] = {}
_MOST_KEPT = 512


def _ls_tree(root: str, commit: str) -> Tuple[Tuple[str, str, str], ...]:
    out = git(["ls-tree", "-r", "-z", "--full-tree", commit], cwd=root).stdout
    found = []
    for entry in out.split(b"\0"):
        if not entry:
            continue
        meta, path = entry.split(b"\t", 1)
        mode, kind, sha = meta.split()
        if kind == b"blob":
            found.append((mode.decode(), sha.decode(), path.decode("utf-8", "surrogateescape")))
    return tuple(found)


def blobs(root: str, commit: str) -> Dict[str, str]:
    """``path -> blob sha`` of every file in ``commit``."""
    return {path: sha for _, sha, path in _blob_entries(root, commit)}


def symlinks(root: str, commit: str) -> FrozenSet[str]:
    """The paths of ``commit`` that are symbolic links (their blob holds the target)."""
    return frozenset(path for mode, _, path in _blob_entries(root, commit) if mode == "120000")


def worktree_files(root: str) -> List[str]:
    """Tracked and untracked-but-not-ignored files that exist in the working tree."""
    out = git(["ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root).stdout
    paths = sorted({p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p})
    return [p for p in paths if os.path.isfile(os.path.join(root, p))]


def show(root: str, commit: str, path: str) -> bytes:
    return _named(_show, root, commit, path)


def _show(root: str, commit: str, path: str) -> bytes:
    return git(["show", "%s:%s" % (commit, path)], cwd=root).stdout


def show_ahead(root: str, wanted: Sequence[Tuple[str, str]]) -> None:
    """Read each ``(commit, path)`` of ``wanted`` (commits named by full sha) in one ``git
    cat-file --batch``, for ``show`` to answer from: a diff reads both sides of every changed
    file, one process each otherwise. What this cannot read so (no such blob, a path with a line
    break) is left for ``show`` to ask, and to fail on, itself."""
    asked = [(c, p) for c, p in dict.fromkeys(wanted) if _FULL_SHA.fullmatch(c) and "\n" not in p]
    if not asked:
        return
    spec = "".join("%s:%s\n" % pair for pair in asked).encode("utf-8", "surrogateescape")
    out = git(["cat-file", "--batch"], cwd=root, check=False, stdin=spec).stdout
    at = 0
    for commit, path in asked:
        end = out.find(b"\n", at)
        if end < 0:
            return
        header = out[at:end].split()
        at = end + 1
        if len(header) != 3 or not header[2].isdigit():  # "<spec> missing", or worse: ``show`` asks
            continue
        size = int(header[2])
        if header[1] == b"blob":
            _KEPT[(_show, root, commit, (path,))] = out[at : at + size]
        at += size + 1


def patches(root: str, b: str, c: str, paths: Sequence[str]) -> Dict[str, str]:
    """``git diff -U0 B C -- PATH`` of each of ``paths`` (files both sides hold), in one git
    process. A path whose header git writes quoted is missing from the answer: the caller asks
    for it alone."""
    if not paths:
        return {}
    args = ["-U0", "--no-renames", "--src-prefix=a/", "--dst-prefix=b/", b, c, "--", *paths]
    text = diff(root, args).decode("utf-8", "replace")
    headers = {"diff --git a/%s b/%s" % (p, p): p for p in paths}
    found: Dict[str, List[str]] = {}
    for part in ("\n" + text).split("\ndiff --git ")[1:]:
        header, _, _ = part.partition("\n")
        path = headers.get("diff --git " + header)
        if path is not None:  # a file turned into a symbolic link has two sections: both are its
            found.setdefault(path, []).append("diff --git " + part)
    return {path: "\n".join(parts) for path, parts in found.items()}


def diff(root: str, args: Sequence[str]) -> bytes:
    """``git diff ARGS`` as a program reads it: paths taken literally (``a[1].py`` is no
    pattern that also matches ``a1.py``), unquoted, and no colour whatever the repository's
    configuration says (``color.ui=always`` hid every hunk header)."""
    return git(["--literal-pathspecs", "-c", "core.quotepath=off", "diff", "--no-color", *args], cwd=root).stdout


def blob_sha(data: bytes) -> str:
    """The sha git would give ``data`` as a blob, computed without a subprocess."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def add_worktree(root: str, commit: str, dest: str) -> None:
    """A detached worktree of ``commit`` at ``dest``; the user's checkout is not touched."""
    git(["worktree", "add", "--detach", "--quiet", dest, commit], cwd=root)


def remove_worktree(root: str, *dests: str) -> None:
    """Remove worktrees made by ``add_worktree``, then prune what is left of any of them once;
    tolerant, since it runs in cleanup paths. One that git does not know as a worktree (its
    ``add`` interrupted half way) is deleted as a directory, so that the prune forgets it too."""
    for dest in dests:
        git(["worktree", "remove", "--force", dest], cwd=root, check=False)
        shutil.rmtree(dest, ignore_errors=True)
    git(["worktree", "prune"], cwd=root, check=False)
