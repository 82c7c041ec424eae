"""Overhead of ``-p evidence`` on 2,000 trivial tests, against plain pytest in the same run.

Usage: python benchmarks/bench_plugin_overhead.py [--runs N]

Prints the median wall time of each configuration and its ratio to plain pytest (the plugin
kept out with ``-p no:evidence``). Targets (issue 2): no baseline <= 1.10x; ``--baseline`` on a
cached B <= 1.15x. Configurations are interleaved so drift of the machine hits them equally.
"""

from __future__ import annotations

import argparse
import pathlib
import tempfile

from _suite import PYTEST, report, timed, trivial_suite


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    root = pathlib.Path(tempfile.mkdtemp(prefix="bench-overhead-")) / "suite"
    base = trivial_suite(root)
    out = root.parent / "e.json"
    configs = {
        "plain pytest": [*PYTEST, "-p", "no:evidence"],
        "-p evidence": [*PYTEST, "-p", "evidence", f"--evidence-out={out}"],
        "-p evidence --baseline (cached B)": [*PYTEST, "-p", "evidence", f"--evidence-out={out}", f"--baseline={base}"],
    }
    timed(configs["-p evidence --baseline (cached B)"], root)  # fills the B cache
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in configs}
    for _ in range(args.runs):
        for name, cmd in configs.items():
            times[name].append(timed(cmd, root))
    report("2000 trivial tests, median of %d interleaved runs each" % args.runs, times, "plain pytest")


if __name__ == "__main__":
    main()
