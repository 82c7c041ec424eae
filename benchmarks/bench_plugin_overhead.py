"""Overhead of ``-p evidence`` on 2,000 trivial tests, against plain pytest in the same run.

Usage: python benchmarks/bench_plugin_overhead.py [--runs N] [--bytecode {as-is,cached}]

Prints the median wall time of each configuration and its ratio to plain pytest (the plugin
kept out with ``-p no:evidence``), then the spread of each configuration's runs. Targets: no
baseline <= 1.05x; ``--baseline`` on a cached B <= 1.15x. Configurations are interleaved so drift
of the machine hits them equally.

``--bytecode``: ``as-is`` (the default) runs pytest with this process's environment. Where that
sets ``PYTHONDONTWRITEBYTECODE`` (as the development machines do), nothing is cached: every run
compiles the plugin's modules from source through pytest's assertion rewriter, while pytest's
own modules load from the bytecode pip wrote when it installed them. ``cached`` lets pytest
write its bytecode cache and fills it with one run first, so the plugin loads as an installed
plugin does from its second run on; the suite's test files are cached alike in both
configurations.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import sys
import tempfile

from _suite import PYTEST, report, timed, trivial_suite


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--bytecode", choices=("as-is", "cached"), default="as-is")
    args = parser.parse_args()
    if args.bytecode == "cached":
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # inherited by every pytest run below
    root = pathlib.Path(tempfile.mkdtemp(prefix="bench-overhead-")) / "suite"
    base = trivial_suite(root)
    out = root.parent / "e.json"
    configs = {
        "plain pytest": [*PYTEST, "-p", "no:evidence"],
        "-p evidence": [*PYTEST, "-p", "evidence", f"--evidence-out={out}"],
        "-p evidence --baseline (cached B)": [*PYTEST, "-p", "evidence", f"--evidence-out={out}", f"--baseline={base}"],
    }
    timed(configs["-p evidence --baseline (cached B)"], root)  # fills the B cache (and the bytecode cache)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in configs}
    for _ in range(args.runs):
        for name, cmd in configs.items():
            times[name].append(timed(cmd, root))
    bytecode = "cached" if args.bytecode == "cached" else "as the environment says"
    if args.bytecode == "as-is":
        bytecode += " (PYTHONDONTWRITEBYTECODE=%s)" % (os.environ.get("PYTHONDONTWRITEBYTECODE") or "unset")
    report(
        "2000 trivial tests, median of %d interleaved runs each; Python %s, bytecode %s"
        % (args.runs, sys.version.split()[0], bytecode),
        times,
        "plain pytest",
    )
    print("spread: min-max of the runs; the ratio of each round's run to that round's plain run")
    plain = times["plain pytest"]
    for name, samples in times.items():
        walls = [w for w, _ in samples]
        cpus = [c for _, c in samples]
        wall_ratios = sorted(w / p for (w, _), (p, _) in zip(samples, plain, strict=True))
        cpu_ratios = sorted(c / p for (_, c), (_, p) in zip(samples, plain, strict=True))
        print(
            "%-40s wall %.3f-%.3f, ratio %s  CPU %.3f-%.3f, ratio %s"
            % (name, min(walls), max(walls), _spread(wall_ratios), min(cpus), max(cpus), _spread(cpu_ratios))
        )


def _spread(ratios: list[float]) -> str:
    return "%.3f [%.3f-%.3f]" % (statistics.median(ratios), ratios[0], ratios[-1])


if __name__ == "__main__":
    main()
