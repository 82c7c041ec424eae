"""Cost of per-test dependency recording on B, against plain pytest in the same run.

Usage: python benchmarks/bench_recording.py [--runs N] [--case CORPUS_ID]

Configurations, interleaved, median of N runs:

* plain pytest (``-p no:evidence``);
* the plugin in record mode (the stream only, as the runner starts it);
* record mode with ``--evidence-deps`` and each engine: the plugin's tracer (``sys.settrace``,
  function level) and coverage.py (its C tracer, one context per test switched by the plugin),
  both with the ``open`` audit hook -- what the baseline suite run uses;
* plain coverage.py with its own per-test dynamic contexts (``dynamic_context = test_function``),
  for reference.

On the generated 2,000-test suite, and on the C tree of one real case from ../shared/corpus
(default cachetools-7.3.0-7.3.1). Target (issue 3): the recording run at most 2.0x plain pytest.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import tempfile

from _suite import report, timed, trivial_suite

INJECT = ["-p", "no:evidence", "-p", "pytest_evidence.plugin"]


def configs(python: str, root: pathlib.Path, tests: list[str], scratch: pathlib.Path) -> dict[str, list[str]]:
    rc = scratch / "coveragerc"
    rc.write_text("[run]\ndynamic_context = test_function\nsource = %s\ndata_file = %s\n" % (root, scratch / "cov"))
    base = [python, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider"]
    record = [*base, *INJECT, "--evidence-record-mode", f"--evidence-stream={scratch / 's.jsonl'}"]
    return {
        "plain pytest": [*base, "-p", "no:evidence", *tests],
        "record mode": [*record, *tests],
        "record mode + deps, own tracer": [*record, f"--evidence-deps={root}", "--evidence-deps-engine=tracer", *tests],
        "record mode + deps, coverage.py engine": [
            *record,
            f"--evidence-deps={root}",
            "--evidence-deps-engine=coverage",
            *tests,
        ],
        "coverage.py per-test contexts": [
            python,
            "-m",
            "coverage",
            "run",
            f"--rcfile={rc}",
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:randomly",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:evidence",
            *tests,
        ],
    }


def bench(title: str, python: str, root: pathlib.Path, tests: list[str], runs: int) -> None:
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="bench-recording-"))
    cmds = configs(python, root, tests, scratch)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in cmds}
    for _ in range(runs):
        for name, cmd in cmds.items():
            times[name].append(timed(cmd, root))
    report(title, times, "plain pytest")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--case", default="cachetools-7.3.0-7.3.1")
    parser.add_argument(
        "--python", default=None, help="run both suites with this interpreter (needs pytest and coverage installed)"
    )
    args = parser.parse_args()
    root = pathlib.Path(tempfile.mkdtemp(prefix="bench-recording-suite-")) / "suite"
    trivial_suite(root)
    import os

    os.environ["PYTHONPATH"] = str(pathlib.Path(__file__).resolve().parent.parent)
    python = args.python or sys.executable
    bench("generated suite, 2000 trivial tests (%s)" % python, python, root, [], args.runs)
    if args.case:
        from _corpus import cases, prepare

        case = next(c for c in cases() if c["id"] == args.case)
        repo = prepare(case, pathlib.Path(tempfile.mkdtemp(prefix="bench-recording-case-")))
        import subprocess

        subprocess.run(["git", "checkout", "-q", repo.candidate], cwd=repo.path, check=True)
        os.environ["PYTHONPATH"] = os.pathsep.join(
            [str(repo.path / repo.pythonpath), str(pathlib.Path(__file__).resolve().parent.parent)]
        )
        python = args.python or str(repo.python)
        bench("real case %s, C's suite (%s)" % (case["id"], python), python, repo.path, list(repo.tests), args.runs)


if __name__ == "__main__":
    main()
