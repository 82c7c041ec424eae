"""B and C as temporary git worktrees; the user's working tree and index are never touched.

A patch is applied onto B in C's worktree and committed there (a detached commit, reachable from
nothing), so C always has a sha. Everything lives in one scratch directory that is removed on
the way out -- also on Ctrl-C or SIGTERM, which are turned into ``KeyboardInterrupt`` while the
checkouts exist -- and, after a SIGKILL, by the next runner (``leases``).
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import secrets
import signal
import subprocess
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import FrameType
from typing import Any, TypeVar

from pytest_evidence import gitops, overlay
from pytest_evidence.errors import BadInput, EvidenceError, PatchDoesNotApply
from runner import leases
from runner.meanwhile import Meanwhile

T = TypeVar("T")

_EPOCH = "2000-01-01T00:00:00+00:00"  # the date of every neutral checkout commit
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
    trees: dict[str, pathlib.Path] = field(default_factory=dict)  # role -> worktree
    tested: str = ""  # the commit the tests run on: C with the trusted tests laid over it
    trusted: tuple[str, str] | None = None  # (commit, label) of the trusted tests, once resolved
    # ``baseline_with_tests`` being made in a thread (``lay_over_b_ahead``), for that plan
    _ahead: tuple[overlay.OverlayPlan, Meanwhile[pathlib.Path]] | None = field(default=None, init=False, repr=False)
    # held while a worktree is made: the one made ahead is made beside the climb's own
    _making: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    # other threads' work that may make a worktree (``beside``), waited for before the removal
    _beside: list[Meanwhile[Any]] = field(default_factory=list, init=False, repr=False)
    _laid: bool = field(default=False, init=False, repr=False)  # C's tests laid over B (``_with_tests``)

    def __post_init__(self) -> None:
        self.tested = self.tested or self.candidate

    def _tree(self, role: str, commit: str) -> pathlib.Path:
        """The worktree for ``role``, made on first use. Its path says nothing of the role -- a
        random name, which also keeps git from numbering its admin directory (``.git`` names it)
        in the order the worktrees were made -- so no test process can tell from its working
        directory whether it runs on B or on C."""
        with self._making:
            if role not in self.trees:
                dest = self.scratch / secrets.token_hex(6)
                self.made.append(dest)  # before git starts: one interrupted half way is removed too
                gitops.add_worktree(str(self.repo), commit, str(dest))
                self.trees[role] = dest
            return self.trees[role]

    def side(self, tree: pathlib.Path) -> str:
        """``B`` or ``C``: the side whose code runs in ``tree`` (B with C's tests is B)."""
        role = next(r for r, path in list(self.trees.items()) if path == tree)
        return "B" if role.startswith("B") else "C"

    @property
    def b_dir(self) -> pathlib.Path:
        return self._tree("B", self.baseline)

    @property
    def c_dir(self) -> pathlib.Path:
        fresh = "C" not in self.trees
        tree = self._tree("C", self.candidate)
        if fresh:
            self.neutral(tree)
        return tree

    @property
    def submitted_dir(self) -> pathlib.Path:
        """The candidate exactly as submitted, before the trusted tests were laid over it."""
        return self._tree("C-as-submitted", self.candidate)

    def read_candidate(self, path: str) -> bytes:
        return gitops.show(str(self.repo), self.tested, path)

    def read_baseline(self, path: str) -> bytes:
        return gitops.show(str(self.repo), self.baseline, path)

    def trusted_tests(self, source: str | None) -> tuple[str, str]:
        """``(commit, label)`` of the trusted tests: B, a revision, or a test patch applied to B.

        Resolved once (the runner asks before any tier, so a bad ``--tests-from`` is bad input).
        """
        if self.trusted is None:
            self.trusted = self._trusted(source)
        return self.trusted

    def _trusted(self, source: str | None) -> tuple[str, str]:
        if source is None:
            return self.baseline, "baseline"
        path = pathlib.Path(source)
        if path.is_file():
            tree = self._tree("T", self.baseline)
            return _apply(tree, path.resolve(), "--tests-from"), "patch:%s" % path.name
        try:
            return gitops.resolve_commit(str(self.repo), source), "revision:%s" % source
        except EvidenceError:
            raise BadInput("--tests-from %s: neither a patch file nor a revision of %s" % (source, self.repo)) from None

    def lay(self, files: Mapping[str, bytes | None]) -> None:
        """Write trusted contents (None: remove the file) over C's worktree and commit: ``tested``.

        The contents are whole files as the integrity check planned them: a trusted file, a
        trusted test file merged with the candidate's new tests, or the candidate's configuration
        file with its pytest settings laid back.
        """
        tree = self.c_dir
        for path, data in sorted(files.items()):
            dest = tree / path
            if data is None:
                dest.unlink(missing_ok=True)
                continue
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
        self.tested = _commit(tree, "candidate with the trusted tests laid over it")
        self.neutral(tree)

    def neutral(self, tree: pathlib.Path) -> None:
        """Make the worktree's HEAD one commit on B holding its files -- the same message, author
        and date on either side -- so that no test tells B with C's tests from C by ``git
        status`` (the overlay is not left dirty) or ``git log`` (the candidate's commits)."""
        env = dict(os.environ, **_IDENTITY, GIT_AUTHOR_DATE=_EPOCH, GIT_COMMITTER_DATE=_EPOCH)

        def git(*args: str) -> str:
            done = subprocess.run(
                ["git", *gitops.NO_HOOKS, *args], cwd=tree, capture_output=True, text=True, check=True, env=env
            )
            return done.stdout.strip()

        git("add", "-A")
        sha = git("-c", "commit.gpgsign=false", "commit-tree", git("write-tree"), "-p", self.baseline, "-m", "checkout")
        git("reset", "-q", "--soft", sha)

    def baseline_with_tests(self, plan: overlay.OverlayPlan) -> pathlib.Path:
        """A third worktree: B's source with C's test files laid over it ("run on B")."""
        ahead = self._ahead
        if ahead is not None and ahead[0] is plan:
            return ahead[1]()
        return self._with_tests(plan, self.c_dir)

    def lay_over_b_ahead(self, plan: overlay.OverlayPlan) -> None:
        """Start making ``baseline_with_tests(plan)`` in a thread, now that C's worktree and the
        plan exist. T3 starts B's process right after C's, and C's first test waits for B's
        collection: made on demand, the checkout (a worktree, the copies, a commit: git's work,
        about a quarter of a second on a loaded machine) delayed both sides' tests by as much.
        What it raises is raised to whoever asks for the tree."""
        c_dir = self.c_dir
        self._ahead = (plan, self.beside(Meanwhile("b-with-c-tests", lambda: self._with_tests(plan, c_dir))))

    def check_out_b_ahead(self) -> None:
        """Start making the worktree ``baseline_with_tests`` lays C's tests in, B's files alone,
        in a thread: the tests are laid once the climb's last static tier has passed (the plan
        is read from C's tree then), while git's checkout -- most of the work, a tenth of a
        second or more -- runs beside that tier."""
        self.beside(Meanwhile("b-checkout", lambda: self._tree("B-with-C-tests", self.baseline)))

    def _with_tests(self, plan: overlay.OverlayPlan, c_dir: pathlib.Path) -> pathlib.Path:
        dest = self._tree("B-with-C-tests", self.baseline)
        with self._making:
            laid, self._laid = self._laid, True
        if not laid:
            overlay.apply(plan, str(c_dir), str(dest))
            self.neutral(dest)
        return dest

    def beside(self, work: Meanwhile[T]) -> Meanwhile[T]:
        """``work``, run in another thread, that may make a worktree: ``settle`` waits for it."""
        self._beside.append(work)
        return work

    def settle(self) -> None:
        """Wait for the worktrees being made in other threads, if any: the checkouts are removed
        after them (a worktree made after the removal would outlive the climb)."""
        for work in self._beside:
            work.wait()


#: Set by a SIGTERM while the checkouts exist, whether or not its ``KeyboardInterrupt`` got through.
_INTERRUPTED = threading.Event()


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    _INTERRUPTED.set()
    raise KeyboardInterrupt


def raise_swallowed_interrupt() -> None:
    """Raise the ``KeyboardInterrupt`` of a SIGTERM that CPython swallowed: one landing in an
    at-fork hook, as a test process starts, is "ignored" there, and the climb went on to a
    verdict (an independent review, 3 of about 90 signals). Asked at each tier and after each
    test process, and once the climb is over."""
    if _INTERRUPTED.is_set():
        raise KeyboardInterrupt


@contextlib.contextmanager
def checkouts(
    repo_dir: pathlib.Path, baseline: str, candidate: str | None, patch: pathlib.Path | None
) -> Iterator[Checkouts]:
    try:
        repo = pathlib.Path(gitops.toplevel(str(repo_dir)))
        b_sha = gitops.resolve_commit(str(repo), baseline)
        c_sha = gitops.resolve_commit(str(repo), candidate) if candidate is not None else None
    except OSError as exc:
        raise BadInput(str(exc)) from None
    if patch is not None and not patch.is_file():
        raise BadInput(
            "--patch %s: %s" % (patch, "a directory, not a patch file" if patch.is_dir() else "no such file")
        )
    with leases.leased("evidence-runner-") as scratch:
        _INTERRUPTED.clear()
        previous = signal.signal(signal.SIGTERM, _raise_interrupt)
        co = Checkouts(repo, b_sha, c_sha or b_sha, scratch)
        try:
            if c_sha is None:
                assert patch is not None
                co.candidate = co.tested = _apply(co.c_dir, patch.resolve())
                co.neutral(co.c_dir)
            yield co
        finally:
            signal.signal(signal.SIGTERM, previous)
            co.settle()
            try:
                leases.settle()
            finally:  # a second interrupt there still leaves no worktree
                if co.made:
                    gitops.remove_worktree(str(repo), *map(str, co.made))


def _apply(tree: pathlib.Path, patch: pathlib.Path, option: str = "--patch") -> str:
    check = subprocess.run(
        ["git", *gitops.NO_HOOKS, "apply", "--check", str(patch)], cwd=tree, capture_output=True, text=True
    )
    if check.returncode != 0:
        lines = [ln for ln in check.stderr.splitlines() if ln.startswith("error:")] or [check.stderr.strip()]
        raise PatchDoesNotApply(
            "%s %s does not apply to the baseline: %s" % (option, patch, lines[0].removeprefix("error: "))
        )
    subprocess.run(["git", *gitops.NO_HOOKS, "apply", str(patch)], cwd=tree, capture_output=True, text=True, check=True)
    return _commit(tree, "%s %s" % (option, patch.name))


def _commit(tree: pathlib.Path, message: str) -> str:
    """Commit the worktree's state (a detached commit reachable from nothing) and return its sha."""
    env = dict(os.environ, **_IDENTITY)
    for cmd in (
        ["git", *gitops.NO_HOOKS, "add", "-A"],
        [
            "git",
            *gitops.NO_HOOKS,
            "-c",
            "commit.gpgsign=false",
            "commit",
            "-q",
            "--allow-empty",
            "--no-verify",
            "-m",
            message,
        ],
    ):
        subprocess.run(cmd, cwd=tree, capture_output=True, text=True, check=True, env=env)
    return gitops.git(["rev-parse", "HEAD"], cwd=str(tree)).stdout.decode().strip()
