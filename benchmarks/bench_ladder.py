"""The ladder on a generated 2,000-test repository, against the naive "run the whole suite once".

Usage: python benchmarks/bench_ladder.py [--runs N] [--candidates N]

(a) time to a verdict for a T0-falsifiable patch (a syntax error) vs one plain full pytest run;
(c) N candidates against one B (each an honest fix): total certify time vs N naive full runs.
Both measured in the same run; certify is called in-process, as a harness would call it.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import sys
import tempfile
import time

from _suite import PYTEST, git, timed

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from runner.cli import main as runner_main

BUG = "def clamp(n, low, high):\n    return max(low, min(n, high - 1))\n"


def build(root: pathlib.Path, tests: int = 2000, per_file: int = 100) -> str:
    (root / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (root / "pkg" / "bounds.py").write_text(BUG)
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    for f in range(tests // per_file):
        body = ["from pkg.calc import add\n"]
        body += ["\ndef test_%d_%d():\n    assert add(%d, 1) == %d\n" % (f, t, t, t + 1) for t in range(per_file)]
        (root / "tests" / ("test_gen_%02d.py" % f)).write_text("".join(body))
    (root / "tests" / "test_bounds.py").write_text(
        "from pkg.bounds import clamp\n\ndef test_inside():\n    assert clamp(5, 0, 10) == 5\n"
    )
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "B")
    return git(root, "rev-parse", "HEAD")


def candidate(root: pathlib.Path, base: str, name: str, source: str) -> str:
    git(root, "checkout", "-q", "-B", name, base)
    (root / "pkg" / "bounds.py").write_text(source)
    (root / "tests" / "test_clamp_top.py").write_text(
        "from pkg.bounds import clamp\n\ndef test_top():\n    assert clamp(10, 0, 10) == 10\n"
    )
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", name)
    sha = git(root, "rev-parse", "HEAD")
    git(root, "checkout", "-q", "main")
    return sha


def certify(root: pathlib.Path, base: str, cand: str, out: pathlib.Path) -> tuple[float, dict[str, object]]:
    start = time.perf_counter()
    runner_main(
        [
            "certify",
            "--repo",
            str(root),
            "--baseline",
            base,
            "--candidate",
            cand,
            "--out",
            str(out),
            "--store",
            str(out.parent / "store.sqlite3"),
        ]
    )
    return time.perf_counter() - start, json.loads(out.read_text())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--candidates", type=int, default=10)
    args = parser.parse_args()
    work = pathlib.Path(tempfile.mkdtemp(prefix="bench-ladder-"))
    root = work / "repo"
    base = build(root)
    fixed = BUG.replace("high - 1", "high")
    broken = candidate(root, base, "broken", fixed + "\ndef oops(:\n    pass\n")
    naive = statistics.median(timed([*PYTEST, "-p", "no:evidence"], root)[0] for _ in range(args.runs))
    t0 = statistics.median(certify(root, base, broken, work / "t0.json")[0] for _ in range(args.runs))
    print("(a) T0-falsifiable patch: certify %.3f s vs naive full run %.3f s: %.1fx faster" % (t0, naive, naive / t0))
    honest = [candidate(root, base, "fix-%d" % i, fixed + "\n# candidate %d\n" % i) for i in range(args.candidates)]
    total, verdicts = 0.0, []
    for i, sha in enumerate(honest):
        took, doc = certify(root, base, sha, work / ("c%d.json" % i))
        total += took
        verdicts.append(doc["verdict"]["verdict"])  # type: ignore[index]
    naive_total = sum(timed([*PYTEST, "-p", "no:evidence"], root)[0] for _ in range(args.candidates))
    print(
        "(c) %d candidates against one B: certify total %.1f s (verdicts: %s) vs %d naive full runs %.1f s: %.2fx"
        % (args.candidates, total, ",".join(sorted(set(verdicts))), args.candidates, naive_total, naive_total / total)
    )


if __name__ == "__main__":
    main()
