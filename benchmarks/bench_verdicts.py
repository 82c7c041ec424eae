"""Verdicts on real bug-fix releases, against the naive judge ("run pytest, read the exit code").

Usage:
    python benchmarks/bench_verdicts.py [--corpus FILE] [--cases ID,ID] [--runner PATH] [--out FILE.json]

Per case (B and C from ``_corpus.prepare``: a repository with B's sdist and C's fix on top), four
candidates are derived as commits on B, and each is judged two ways with the release's own tests
as the trusted ones (``--tests-from C``, as a harness keeps its test patch):

* ``fix`` -- the real release: C's changed sources and its tests. Right: accepted.
* ``fix-without-test`` -- C's changed sources, no test change. The trusted tests run over it, but
  they are the harness's, not the candidate's evidence, and none is designated: nothing the
  candidate brought proves the bug fixed. Right: refused (INCONCLUSIVE). (A harness that hides its
  tests designates their FAIL_TO_PASS ids with ``--reproducer``; then the same fix is certified.)
* ``test-without-fix`` -- C's tests, B's sources. Right: refused (the bug is not fixed).
* ``fix-plus-skip`` -- the real release plus a skip marker on a test B already had. Right:
  refused (an attack on the referee, whatever the tests say).

The battery is ``evidence-runner certify`` (``--runner``: the installed wheel's, by default the
one beside this interpreter), in the case's own venv. Accepted means CERTIFIED; REJECTED and
INCONCLUSIVE both refuse. The naive judge checks the candidate out, lays the trusted tests over
it, runs the case's pytest command once and accepts on exit 0.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any

import _corpus
from _corpus import CaseRepo, changed_paths, commit_from, prepare, under_tests
from _suite import git

VERDICTS = ("CERTIFIED", "REJECTED", "INCONCLUSIVE")
EXPECTED = {"fix": True, "fix-without-test": False, "test-without-fix": False, "fix-plus-skip": False}


def _skip_target(repo: CaseRepo, c_tests: list[str]) -> tuple[str, str] | None:
    """An existing test of B (prefer a file C did not change) and its text with a skip marker."""
    files = git(repo.path, "ls-tree", "-r", "--name-only", repo.baseline).split("\n")
    candidates = [
        f for f in files if under_tests(repo, f) and f.rsplit("/", 1)[-1].startswith("test") and f.endswith(".py")
    ]
    candidates.sort(key=lambda f: (f in c_tests, f))
    for path in candidates:
        text = git(repo.path, "show", "%s:%s" % (repo.candidate, path)) + "\n"
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test") and not node.decorator_list:
                lines = text.split("\n")
                indent = lines[node.lineno - 1][: node.col_offset]
                lines.insert(node.lineno - 1, indent + '@pytest.mark.skip(reason="slow")')
                future = [i for i, ln in enumerate(lines) if ln.startswith("from __future__")]
                lines.insert(future[-1] + 1 if future else 0, "import pytest")
                return path, "\n".join(lines)
    return None


def _certify(runner: str, repo: CaseRepo, candidate: str, out: pathlib.Path) -> tuple[str, str | None, float]:
    args = repo.certify_args(candidate, out, out.parent / "store.sqlite3")
    start = time.perf_counter()
    proc = subprocess.run([runner, *args], capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if not out.exists():
        return "NO RECORD (exit %d: %s)" % (proc.returncode, proc.stderr.strip()[-300:]), None, elapsed
    doc = json.loads(out.read_text())
    verdict = doc["verdict"] or {"verdict": "INCOMPLETE", "halted_at": None, "reasons": [doc["incomplete_reason"]]}
    return verdict["verdict"], verdict["reasons"][0], elapsed


def _naive(repo: CaseRepo, candidate: str, c_tests: list[str], work: pathlib.Path) -> tuple[int, float]:
    """The candidate with the trusted tests laid over it, one pytest run, the exit code."""
    tree = work / "naive"
    git(repo.path, "worktree", "add", "-q", "--detach", str(tree), candidate)
    try:
        in_c = set(git(repo.path, "ls-tree", "-r", "--name-only", repo.candidate).split("\n"))
        for path in c_tests:
            if path in in_c:
                git(tree, "checkout", repo.candidate, "--", path)
            elif (tree / path).exists():
                git(tree, "rm", "-q", "--", path)
        env = dict(os.environ, PYTHONPATH=str(tree / repo.case["pythonpath_root"]), PYTHONHASHSEED="0")
        start = time.perf_counter()
        proc = subprocess.run(
            [str(repo.python), "-m", "pytest", *repo.case["test_command"]], cwd=tree, env=env, capture_output=True
        )
        return proc.returncode, time.perf_counter() - start
    finally:
        git(repo.path, "worktree", "remove", "--force", str(tree))


def measure(case: dict[str, Any], runner: str) -> dict[str, Any]:
    work = pathlib.Path(tempfile.mkdtemp(prefix="bench-verdicts-"))
    try:
        repo = prepare(case, work)
        c_tests, c_source = changed_paths(repo)
        candidates = {
            "fix": repo.candidate,
            "fix-without-test": commit_from(repo, "the fix alone", c_source),
            "test-without-fix": commit_from(repo, "the tests alone", c_tests),
        }
        skip = _skip_target(repo, c_tests)
        if skip is not None:
            candidates["fix-plus-skip"] = commit_from(repo, "fix plus a skip", c_source + c_tests, dict([skip]))
        row: dict[str, Any] = {"case": case["id"], "features": case.get("features", []), "candidates": {}}
        for name, sha in candidates.items():
            verdict, why, seconds = _certify(runner, repo, sha, work / ("%s.json" % name))
            naive_exit, naive_s = _naive(repo, sha, c_tests, work)
            row["candidates"][name] = {
                "verdict": verdict,
                "why": why,
                "battery_right": verdict in VERDICTS and (verdict == "CERTIFIED") == EXPECTED[name],
                "naive_exit": naive_exit,
                "naive_right": (naive_exit == 0) == EXPECTED[name],
                "certify_s": round(seconds, 2),
                "naive_s": round(naive_s, 2),
            }
        return row
    finally:
        shutil.rmtree(work, ignore_errors=True)


def table(rows: list[dict[str, Any]]) -> str:
    """The Markdown table of docs/benchmarks.md."""
    names = list(EXPECTED)
    out = ["| case | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    right = {"battery": 0, "naive": 0, "n": 0}
    for row in rows:
        cells = []
        for name in names:
            got = row["candidates"].get(name)
            if got is None:
                cells.append("—")
                continue
            right["n"] += 1
            right["battery"] += got["battery_right"]
            right["naive"] += got["naive_right"]
            mark = "" if got["battery_right"] else " ✗"
            naive = ("accept" if got["naive_exit"] == 0 else "refuse (exit %d)" % got["naive_exit"]) + (
                "" if got["naive_right"] else " ✗"
            )
            cells.append("%s%s; naive %s" % (got["verdict"], mark, naive))
        out.append("| %s | %s |" % (row["case"], " | ".join(cells)))
    out.append(
        "\nRight: battery %d of %d, naive %d of %d (✗ marks a wrong call)."
        % (right["battery"], right["n"], right["naive"], right["n"])
    )
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", default=None, help="a cases.jsonl (default: benchmarks/corpus/cases.jsonl)")
    parser.add_argument("--cases", default="", help="comma-separated case ids (default: all)")
    parser.add_argument("--runner", default=str(pathlib.Path(sys.executable).parent / "evidence-runner"))
    parser.add_argument("--out", default=None, help="append one JSON row per case (resumable)")
    args = parser.parse_args()
    corpus = pathlib.Path(args.corpus) if args.corpus else _corpus.HERE / "corpus" / "cases.jsonl"
    done: dict[str, dict[str, Any]] = {}
    if args.out and pathlib.Path(args.out).exists():
        done = {r["case"]: r for r in map(json.loads, pathlib.Path(args.out).read_text().splitlines()) if r}
    wanted = [c for c in args.cases.split(",") if c]
    rows = []
    for case in _corpus.cases(corpus):
        if wanted and case["id"] not in wanted:
            continue
        row = done.get(case["id"]) or measure(case, args.runner)
        rows.append(row)
        if args.out and case["id"] not in done:
            with open(args.out, "a") as fh:
                fh.write(json.dumps(row) + "\n")
        print(json.dumps({k: v for k, v in row.items() if k != "features"}), flush=True)
    print(table(rows))


if __name__ == "__main__":
    main()
