"""Bug-fix cases, in two formats, each built into a git repository with B and the real fix C.

* ``sdist`` -- the format of ``../shared/corpus`` (its README): two consecutive releases of a
  package from the package index, the test dependencies (``test_deps``, pinned by ``pip_freeze``),
  the test paths (``tests_dir``) and the FAIL_TO_PASS ids. B is B's sdist as released; C is B
  with C's changed Python sources and C's test paths laid over it: the shape of a fix commit.
* ``commit`` -- one fix in a git repository, SWE-bench or BugsInPy style: ``repo`` (a URL or a
  local path), ``buggy`` and ``fixed`` commits, ``tests`` (the test paths of the fix),
  ``fail_to_pass``, and the environment: ``deps`` (requirements, installed into a cached venv)
  or ``python`` (an interpreter to use as it is); optional ``pythonpath`` and ``test_command``.

Every case may carry ``split``: ``tuning`` (the default: the project's own corpora, which its
thresholds were tuned on) or ``held-out``; reports state held-out figures apart. Downloads,
sdists and venvs are cached under ``cache``; a sdist case needs the package index once.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
import venv
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_evidence.errors import BadInput, ToolFailed

SPLITS = ("tuning", "held-out")
FORMATS = ("sdist", "commit")
REQUIRED = {
    "sdist": ("id", "package", "baseline_version", "candidate_version", "tests_dir", "test_command", "fail_to_pass"),
    "commit": ("id", "repo", "buggy", "fixed", "tests", "fail_to_pass"),
}
#: The corpus's own reporting flags, which the runner sets its own way.
RUNNER_FLAGS = ("-q", "-rA", "--continue-on-collection-errors")


def pytest_args(command: Sequence[str]) -> tuple[str, ...]:
    """A case's test command without the flags the runner sets its own way (``-p no:cacheprovider``
    as a pair; every other ``-p`` keeps its plugin name)."""
    kept: list[str] = []
    words = iter(command)
    for word in words:
        if word == "-p":
            name = next(words, "")
            if name != "no:cacheprovider":
                kept += [word, name]
        elif word not in RUNNER_FLAGS:
            kept.append(word)
    return tuple(kept)


def load(path: pathlib.Path) -> list[dict[str, Any]]:
    """The cases of a ``cases.jsonl``, each checked: a bad line is bad input naming its number."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise BadInput("--corpus %s: %s" % (path, exc.strerror or exc)) from None
    found, seen = [], set()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            case = json.loads(line)
        except ValueError as exc:
            raise BadInput("%s:%d: not JSON: %s" % (path, number, exc)) from None
        kind = case.get("format", "sdist") if isinstance(case, dict) else None
        if kind not in FORMATS:
            raise BadInput("%s:%d: format %r is not one of %s" % (path, number, kind, ", ".join(FORMATS)))
        missing = [k for k in REQUIRED[kind] if k not in case]
        if kind == "commit" and "deps" not in case and "python" not in case:
            missing.append("deps or python")
        if missing:
            raise BadInput("%s:%d: a %s case needs %s" % (path, number, kind, ", ".join(missing)))
        if case.get("split", "tuning") not in SPLITS:
            raise BadInput("%s:%d: split %r is not one of %s" % (path, number, case["split"], ", ".join(SPLITS)))
        if case["id"] in seen:
            raise BadInput("%s:%d: case id %s appears twice" % (path, number, case["id"]))
        seen.add(case["id"])
        found.append({**case, "format": kind, "split": case.get("split", "tuning")})
    if not found:
        raise BadInput("--corpus %s holds no case" % path)
    return found


@dataclass(frozen=True)
class Built:
    """A case's repository: B, the real fix C, and how its tests run."""

    case: Mapping[str, Any]
    path: pathlib.Path
    baseline: str
    candidate: str
    python: pathlib.Path
    pythonpath: str
    pytest_args: tuple[str, ...]  # the case's test command, less the flags the runner sets its own way
    tests: tuple[str, ...]  # the case's test paths (directories or files)

    @property
    def fail_to_pass(self) -> tuple[str, ...]:
        return tuple(self.case["fail_to_pass"])

    @property
    def test_command(self) -> tuple[str, ...]:
        """The pytest arguments of a plain run of the case's suite: its own test command, or (a
        ``commit`` case may name none) its test paths."""
        return tuple(self.case.get("test_command") or self.tests)

    @property
    def command(self) -> tuple[str, ...]:
        """The case's own test command, whole: what the naive judge runs."""
        return tuple(self.case.get("test_command", ()))

    def certify_args(
        self, candidate: str, out: pathlib.Path, store: pathlib.Path, pytest_args: Sequence[str] | None = None
    ) -> list[str]:
        """``evidence-runner certify`` of ``candidate`` against B, in the case's own interpreter,
        the real fix's tests trusted (as a harness keeps its test patch); ``pytest_args``: other
        than the runner's share of the case's command."""
        return [
            "certify",
            "--repo",
            str(self.path),
            "--baseline",
            self.baseline,
            "--candidate",
            candidate,
            "--out",
            str(out),
            "--python",
            str(self.python),
            "--pythonpath",
            self.pythonpath,
            "--tests-from",
            self.candidate,
            "--store",
            str(store),
            *["--pytest-arg=%s" % a for a in (self.pytest_args if pytest_args is None else pytest_args)],
        ]

    def under_tests(self, path: str) -> bool:
        """A path of the case's test paths (a directory or a single file)."""
        return any(path == r.rstrip("/") or path.startswith(r.rstrip("/") + "/") for r in self.tests)

    def changed_paths(self) -> tuple[list[str], list[str]]:
        """C's changed paths, split into test paths and the rest."""
        paths = [p for p in git(self.path, "diff", "--name-only", self.baseline, self.candidate).split("\n") if p]
        is_test = [p for p in paths if self.under_tests(p)]
        return is_test, [p for p in paths if p not in is_test]

    def commit_from(self, message: str, paths_from_c: Sequence[str], edit: Mapping[str, str] | None = None) -> str:
        """B plus ``paths_from_c`` taken from C (and ``edit``: path -> new text), committed."""
        git(self.path, "checkout", "-q", "--detach", self.baseline)
        in_c = set(git(self.path, "ls-tree", "-r", "--name-only", self.candidate).split("\n"))
        for path in paths_from_c:
            if path in in_c:
                git(self.path, "checkout", self.candidate, "--", path)
            elif (self.path / path).exists():
                git(self.path, "rm", "-q", "--", path)  # C deleted it
        for path, text in (edit or {}).items():
            (self.path / path).write_text(text)
        git(self.path, "add", "-A", "-f")
        git(self.path, "commit", "-q", "--allow-empty", "-m", message)
        sha = git(self.path, "rev-parse", "HEAD")
        git(self.path, "checkout", "-q", "main")
        return sha


def build(case: Mapping[str, Any], work: pathlib.Path, cache: pathlib.Path) -> Built:
    """The case's repository under ``work`` (its venv and downloads cached under ``cache``)."""
    return (_sdist_case if case.get("format", "sdist") == "sdist" else _commit_case)(case, work, cache)


def git(root: pathlib.Path, *args: str) -> str:
    """git in ``root``, as the harness's own identity (the cases' commits are the harness's)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({"GIT_%s_%s" % (who, what): value for who in ("AUTHOR", "COMMITTER") for what, value in _IDENTITY})
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise ToolFailed("git %s in %s: %s" % (" ".join(args), root, proc.stderr.strip()))
    return proc.stdout.strip()


_IDENTITY = (("NAME", "evidence-ab"), ("EMAIL", "evidence-ab@localhost"))

#: What some sdists ship by accident (bytecode, a patch's leftovers): never part of a case's B or C,
#: where it would be noise in every diff the ladder reads.
_JUNK = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo", "*.orig", "*.rej")


def _sdist_case(case: Mapping[str, Any], work: pathlib.Path, cache: pathlib.Path) -> Built:
    python = _venv(cache, [*case.get("test_deps", []), "coverage"], case.get("pip_freeze", ()))
    b_tree = _unpack(_sdist(cache, case["package"], case["baseline_version"]), work / "b-sdist")
    c_tree = _unpack(_sdist(cache, case["package"], case["candidate_version"]), work / "c-sdist")
    repo = work / "repo"
    shutil.copytree(b_tree, repo, ignore=_JUNK)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A", "-f")  # -f: sdists ship generated files their .gitignore names
    git(repo, "commit", "-q", "-m", "B %s" % case["baseline_version"])
    base = git(repo, "rev-parse", "HEAD")
    fix = [
        f
        for f in case.get("changed_source_files", [])
        if f.endswith(".py") and f != "setup.py" and not f.startswith(("docs/", "benchmark"))
    ]
    for rel in [*fix, *case["tests_dir"], *case.get("overlay_extra", [])]:
        src, dst = c_tree / rel, repo / rel
        if dst.is_dir():
            shutil.rmtree(dst)
        elif dst.exists():
            dst.unlink()
        if src.is_dir():
            shutil.copytree(src, dst, ignore=_JUNK)
        elif src.exists():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    git(repo, "add", "-A", "-f")
    git(repo, "commit", "-q", "-m", "C %s" % case["candidate_version"])
    cand = git(repo, "rev-parse", "HEAD")
    args = pytest_args(case["test_command"])
    tests = (*case["tests_dir"], *case.get("overlay_extra", []))
    return Built(case, repo, base, cand, python, case.get("pythonpath_root", "."), args, tests)


def _commit_case(case: Mapping[str, Any], work: pathlib.Path, cache: pathlib.Path) -> Built:
    repo = work / "repo"
    proc = subprocess.run(["git", "clone", "-q", str(case["repo"]), str(repo)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise ToolFailed("git clone %s: %s" % (case["repo"], proc.stderr.strip()))
    base = git(repo, "rev-parse", "--verify", case["buggy"] + "^{commit}")
    fixed = git(repo, "rev-parse", "--verify", case["fixed"] + "^{commit}")
    git(repo, "checkout", "-q", "-B", "main", fixed)
    # coverage.py as in an sdist case's venv: both formats record B's dependencies the same way.
    python = pathlib.Path(case["python"]) if "python" in case else _venv(cache, [*case["deps"], "coverage"], ())
    args = pytest_args(case.get("test_command", []))
    return Built(case, repo, base, fixed, python, case.get("pythonpath", "."), args, tuple(case["tests"]))


def _venv(cache: pathlib.Path, requirements: Sequence[str], constraints: Sequence[str]) -> pathlib.Path:
    """A venv with ``requirements`` (pinned by ``constraints``), made once per set. It counts as
    made only once its install finished (``complete``): a run interrupted while installing left
    a venv with an interpreter and no packages, which later runs took for a made one."""
    key = hashlib.sha256(json.dumps([sorted(requirements), sorted(constraints)]).encode()).hexdigest()[:12]
    target = cache / ("venv-" + key)
    python = target / "bin" / "python"
    complete = target / "complete"
    if not (python.exists() and complete.exists()):
        venv.create(target, with_pip=True, clear=True)
        pinned = ["-c", str(target / "constraints.txt")] if constraints else []
        (target / "constraints.txt").write_text("\n".join(constraints) + "\n")
        proc = subprocess.run(
            [str(python), "-m", "pip", "install", "-q", *pinned, *requirements], capture_output=True, text=True
        )
        if proc.returncode != 0:
            shutil.rmtree(target, ignore_errors=True)
            raise ToolFailed("pip install %s: %s" % (" ".join(requirements), proc.stderr.strip()[-500:]))
        complete.write_text("")
    return python


def _sdist(cache: pathlib.Path, package: str, version: str) -> pathlib.Path:
    dest = cache / "sdists" / ("%s-%s" % (package, version))
    if not dest.exists() or not any(dest.iterdir()):
        dest.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-binary", ":all:", "--no-deps", "-d", str(dest)]
        proc = subprocess.run([*cmd, "%s==%s" % (package, version)], capture_output=True, text=True)
        if proc.returncode != 0:
            raise ToolFailed("pip download %s==%s: %s" % (package, version, proc.stderr.strip()[-500:]))
    return next(dest.iterdir())


def _unpack(archive: pathlib.Path, dest: pathlib.Path) -> pathlib.Path:
    dest.mkdir(parents=True)
    if archive.suffix == ".zip":
        with zipfile.ZipFile(archive) as z:
            z.extractall(dest)
    else:
        with tarfile.open(archive) as t:
            t.extractall(dest, filter="data")
    (root,) = list(dest.iterdir())
    return root
