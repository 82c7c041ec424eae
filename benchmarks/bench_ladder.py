"""The ladder on a generated 2,000-test repository, against the naive "run the whole suite once".

Usage: python benchmarks/bench_ladder.py [--runs N] [--candidates N] [--out FILE.json]

(a) time to a verdict for a T0-falsifiable patch (a syntax error) vs one plain full pytest run;
(b) a no-fix candidate (the new test, B's bug kept: "the test without the fix"), halted at T3;
(c) N honest candidates against one B with one store: the first pays for B's suite run (cold),
    the others reuse it (warm); amortised = total / N, against one plain full pytest run.
Every certify is ``evidence-runner`` of this checkout in its own process (``_suite.certify``:
wall, CPU of the runner and its test processes, peak RSS of the runner and of its largest test
process), as a harness would start it; the naive runs are interleaved with the certify runs.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import tempfile
from typing import Any

from _suite import PYTEST, Certified, certify, gaps, git, t5_fraction, timed

BUG = "def clamp(n, low, high):\n    return max(low, min(n, high - 1))\n"


def build(root: pathlib.Path, tests: int = 2000, per_file: int = 100) -> str:
    (root / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (root / "pkg" / "bounds.py").write_text(BUG)
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    # the naive runs compile in this tree: no candidate commits their bytecode (``compiled_code``)
    (root / ".gitignore").write_text("__pycache__/\n")
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


def certify_one(root: pathlib.Path, base: str, cand: str, out: pathlib.Path) -> Certified:
    args = ["certify", "--repo", str(root), "--baseline", base, "--candidate", cand, "--out", str(out)]
    return certify([*args, "--store", str(out.parent / "store.sqlite3")])


def verdict(doc: dict[str, Any]) -> str:
    v = doc["verdict"]
    return "%s at %s" % (v["verdict"], v["halted_at"]) if v["halted_at"] else v["verdict"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--candidates", type=int, default=10)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    work = pathlib.Path(tempfile.mkdtemp(prefix="bench-ladder-"))
    root = work / "repo"
    base = build(root)
    fixed = BUG.replace("high - 1", "high")
    plain = [*PYTEST, "-p", "no:evidence"]
    naive: list[tuple[float, float]] = []
    broken = candidate(root, base, "broken", fixed + "\ndef oops(:\n    pass\n")
    t0 = []
    for i in range(args.runs):
        naive.append(timed(plain, root))
        t0.append(certify_one(root, base, broken, work / ("t0-%d.json" % i)))
    naive_s = statistics.median(w for w, _ in naive)
    naive_cpu = statistics.median(c for _, c in naive)
    t0_s = statistics.median(r.wall for r in t0)
    print(
        "(a) T0-falsifiable: %s, %.3f s vs naive %.3f s: %.1fx faster"
        % (verdict(t0[0].record), t0_s, naive_s, naive_s / t0_s)
    )
    honest = [candidate(root, base, "fix-%d" % i, fixed + "\n# candidate %d\n" % i) for i in range(args.candidates)]
    runs = []
    for i, sha in enumerate(honest):
        runs.append(certify_one(root, base, sha, work / ("c%d.json" % i)))
        naive.append(timed(plain, root))
        r = runs[-1]
        sel, size = t5_fraction(r.record)
        print(
            "    candidate %d: %s, %.2f s wall, %.2f s CPU, T5 %s/%s, gaps %d, RSS runner %.0f MB, child %.0f MB"
            % (i, verdict(r.record), r.wall, r.cpu, sel, size, gaps(r.record), r.maxrss_runner_mb, r.maxrss_child_mb)
        )
    nofix = candidate(root, base, "no-fix", BUG)
    nf = [certify_one(root, base, nofix, work / ("nofix-%d.json" % i)) for i in range(args.runs)]
    naive_s = statistics.median(w for w, _ in naive)
    naive_cpu = statistics.median(c for _, c in naive)
    cold, warm = runs[0], runs[1:]
    warm_s = statistics.median(r.wall for r in warm)
    warm_cpu = statistics.median(r.cpu for r in warm)
    amortised = warm_s + (cold.wall - warm_s) / args.candidates
    amortised_cpu = warm_cpu + (cold.cpu - warm_cpu) / args.candidates
    nf_s = statistics.median(r.wall for r in nf)
    nf_cpu = statistics.median(r.cpu for r in nf)
    print("naive full run (median of %d): %.2f s wall, %.2f s CPU" % (len(naive), naive_s, naive_cpu))
    print(
        "(c) honest: cold %.2f s (CPU %.2f), warm median %.2f s (CPU %.2f), amortised over %d %.2f s: "
        "%.2fx naive (CPU %.2fx)"
        % (
            cold.wall,
            cold.cpu,
            warm_s,
            warm_cpu,
            args.candidates,
            amortised,
            amortised / naive_s,
            amortised_cpu / naive_cpu,
        )
    )
    print(
        "(b) no fix: %s, %.2f s (CPU %.2f): %.2fx naive (CPU %.2fx)"
        % (verdict(nf[0].record), nf_s, nf_cpu, nf_s / naive_s, nf_cpu / naive_cpu)
    )
    row = {
        "naive_s": naive_s,
        "naive_cpu": naive_cpu,
        "t0_s": t0_s,
        "t0": verdict(t0[0].record),
        "cold_s": cold.wall,
        "cold_cpu": cold.cpu,
        "warm_s": warm_s,
        "warm_cpu": warm_cpu,
        "amortised_s": amortised,
        "ratio": amortised / naive_s,
        "ratio_cpu": amortised_cpu / naive_cpu,
        "verdicts": sorted({verdict(r.record) for r in runs}),
        "t5": [t5_fraction(r.record) for r in runs],
        "gaps": sum(gaps(r.record) for r in runs),
        "no_fix": verdict(nf[0].record),
        "no_fix_s": nf_s,
        "no_fix_cpu": nf_cpu,
        "rss_runner_mb": max(r.maxrss_runner_mb for r in runs),
        "rss_child_cold_mb": cold.maxrss_child_mb,
        "rss_child_warm_mb": max(r.maxrss_child_mb for r in warm),
        "baseline_processes": (cold.record.get("baseline_run") or {}).get("processes"),
        "baseline_s": (cold.record.get("baseline_run") or {}).get("seconds"),  # in no tier's duration
        "cold_tiers": {t["tier"]: t["duration"] for t in cold.record["tiers"]},
        "warm_tiers": {t["tier"]: t["duration"] for t in warm[0].record["tiers"]},
        "no_fix_tiers": {t["tier"]: t["duration"] for t in nf[0].record["tiers"]},
    }
    if args.out:
        pathlib.Path(args.out).write_text(json.dumps(row, indent=1) + "\n")


if __name__ == "__main__":
    main()
