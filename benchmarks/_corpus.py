"""Real bug-fix cases from ../shared/corpus: sdists of B and C, a git repository, a venv.

The repository has two commits: B's sdist as released, then C's fix laid over it -- C's changed
Python sources (packaging files left out) and C's test paths -- the shape of a real fix commit.
Downloads and venvs are cached under ``benchmarks/.cache`` (ignored by git); the package index is
the only network used.
"""

from __future__ import annotations

import argparse
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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from _suite import git

HERE = pathlib.Path(__file__).resolve().parent
CACHE = HERE / ".cache"
CORPUS = pathlib.Path(os.environ.get("EVIDENCE_CORPUS", HERE.parent.parent / "shared" / "corpus"))
RUNNER_FLAGS = {"-p", "no:cacheprovider", "-q", "-rA", "--continue-on-collection-errors"}


def cases(path: pathlib.Path | None = None) -> list[dict[str, Any]]:
    with open(path or CORPUS / "cases.jsonl") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def run_cli(measure: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """The command line every per-case benchmark shares: ``--corpus``, ``--cases``, ``--out``."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", default=None, help="a cases.jsonl (default: ../shared/corpus)")
    parser.add_argument("--cases", default="", help="comma-separated case ids (default: all)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    rows = measure_cases(args.cases, measure, pathlib.Path(args.corpus) if args.corpus else None)
    if args.out:
        pathlib.Path(args.out).write_text(json.dumps(rows, indent=1) + "\n")


def measure_cases(
    selection: str, measure: Callable[[dict[str, Any]], dict[str, Any]], corpus: pathlib.Path | None = None
) -> list[dict[str, Any]]:
    """``measure`` each case of ``corpus`` (default: the shared one) named in ``selection``
    (comma-separated ids; empty: all), printing rows."""
    wanted = [c for c in selection.split(",") if c]
    rows = []
    for case in cases(corpus):
        if wanted and case["id"] not in wanted:
            continue
        rows.append(measure(case))
        print(json.dumps(rows[-1]), flush=True)
    return rows


def _venv(case: dict[str, Any]) -> pathlib.Path:
    key = hashlib.sha256(json.dumps(sorted(case["pip_freeze"])).encode()).hexdigest()[:12]
    target = CACHE / ("venv-" + key)
    python = target / "bin" / "python"
    if not python.exists():
        venv.create(target, with_pip=True, clear=True)
        constraints = target / "constraints.txt"
        constraints.write_text("\n".join(case["pip_freeze"]) + "\n")
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "-c", str(constraints), *case["test_deps"], "coverage"],
            check=True,
        )
    return python


def _sdist(package: str, version: str) -> pathlib.Path:
    dest = CACHE / "sdists" / ("%s-%s" % (package, version))
    if not dest.exists() or not any(dest.iterdir()):
        dest.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "-q",
                "--no-binary",
                ":all:",
                "--no-deps",
                "-d",
                str(dest),
                "%s==%s" % (package, version),
            ],
            check=True,
        )
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


@dataclass(frozen=True)
class CaseRepo:
    case: dict[str, Any]
    path: pathlib.Path
    baseline: str
    candidate: str
    python: pathlib.Path
    pytest_args: tuple[str, ...]

    def certify_args(self, candidate: str, out: pathlib.Path, store: pathlib.Path) -> list[str]:
        """``evidence-runner certify`` of ``candidate`` against B, in the case's own interpreter."""
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
            self.case["pythonpath_root"],
            "--tests-from",  # the release's own tests are the trusted ones, as a harness's test patch is
            self.candidate,
            "--store",
            str(store),
            *["--pytest-arg=%s" % a for a in self.pytest_args],
        ]


def prepare(case: dict[str, Any], work: pathlib.Path) -> CaseRepo:
    python = _venv(case)
    b_tree = _unpack(_sdist(case["package"], case["baseline_version"]), work / "b-sdist")
    c_tree = _unpack(_sdist(case["package"], case["candidate_version"]), work / "c-sdist")
    repo = work / "repo"
    shutil.copytree(b_tree, repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A", "-f")  # -f: sdists ship generated files their .gitignore names
    git(repo, "commit", "-q", "-m", "B %s" % case["baseline_version"])
    base = git(repo, "rev-parse", "HEAD")
    fix = [
        f
        for f in case["changed_source_files"]
        if f.endswith(".py") and f != "setup.py" and not f.startswith(("docs/", "benchmark"))
    ]
    for rel in [*fix, *case["tests_dir"], *case.get("overlay_extra", [])]:
        src, dst = c_tree / rel, repo / rel
        if dst.is_dir():
            shutil.rmtree(dst)
        elif dst.exists():
            dst.unlink()
        if src.is_dir():
            shutil.copytree(src, dst)
        elif src.exists():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    git(repo, "add", "-A", "-f")
    git(repo, "commit", "-q", "-m", "C %s" % case["candidate_version"])
    cand = git(repo, "rev-parse", "HEAD")
    args = tuple(a for a in case["test_command"] if a not in RUNNER_FLAGS)
    return CaseRepo(case, repo, base, cand, python, args)


def commit_from(repo: CaseRepo, message: str, paths_from_c: list[str], edit: dict[str, str] | None = None) -> str:
    """B plus ``paths_from_c`` taken from C (and ``edit``: path -> new text), committed."""
    git(repo.path, "checkout", "-q", "--detach", repo.baseline)
    in_c = set(git(repo.path, "ls-tree", "-r", "--name-only", repo.candidate).split("\n"))
    for path in paths_from_c:
        if path in in_c:
            git(repo.path, "checkout", repo.candidate, "--", path)
        elif (repo.path / path).exists():
            git(repo.path, "rm", "-q", "--", path)  # C deleted it
    for path, text in (edit or {}).items():
        (repo.path / path).write_text(text)
    git(repo.path, "add", "-A", "-f")
    git(repo.path, "commit", "-q", "--allow-empty", "-m", message)
    sha = git(repo.path, "rev-parse", "HEAD")
    git(repo.path, "checkout", "-q", "main")
    return sha


def changed_paths(repo: CaseRepo) -> tuple[list[str], list[str]]:
    """C's changed paths, split into test paths (the case's ``tests_dir``) and the rest."""
    paths = [p for p in git(repo.path, "diff", "--name-only", repo.baseline, repo.candidate).split("\n") if p]
    is_test = [p for p in paths if under_tests(repo, p)]
    return is_test, [p for p in paths if p not in is_test]


def under_tests(repo: CaseRepo, path: str) -> bool:
    """A path of the case's test paths (a directory or a single file) or its overlay extras."""
    roots = [*repo.case["tests_dir"], *repo.case.get("overlay_extra", [])]
    return any(path == r.rstrip("/") or path.startswith(r.rstrip("/") + "/") for r in roots)
