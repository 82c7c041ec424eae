"""Overhead of ``-p evidence`` on 2,000 trivial tests, against plain pytest in the same run.

Usage: python benchmarks/bench_plugin_overhead.py [--runs N] [--bytecode {as-is,cached}]
       [--case ID [--corpus FILE]] [--before TREE]

``--case``: a real suite instead -- a corpus case's C checkout (``_corpus.py`` builds it), run
with the case's own interpreter and test command, the plugin taken from this checkout (no
baseline; the cached-B configuration needs the trivial suite's setup and is left out).

Prints the median wall time of each configuration and its ratio to plain pytest (the plugin
kept out with ``-p no:evidence``), then the spread of each configuration's runs. Where this
interpreter has the plugin installed, the trivial suite is also run with no option at all: the
session every user of the environment pays for, the plugin loaded by its entry point and inert. Targets: no
baseline <= 1.05x; ``--baseline`` on a cached B <= 1.15x. Configurations are interleaved so drift
of the machine hits them equally.

``--before TREE``: a checkout of an earlier commit (``git worktree add TREE REV``); its plugin,
put first on the path, runs as one more configuration, ``-p evidence, before``, interleaved with
the others -- a change's effect measured side by side in one run, not across two runs of a
drifting machine.

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
import importlib.metadata
import os
import pathlib
import statistics
import sys
import tempfile

from _corpus import cases, prepare
from _suite import PYTEST, ROOT, git, report, timed, trivial_suite


def case_suite(case_id: str, corpus: pathlib.Path | None) -> tuple[pathlib.Path, list[str], str]:
    """A corpus case's C checkout, the case's own pytest command in its own venv, and a title;
    this checkout's plugin goes on the path (the venv does not install it)."""
    case = next((c for c in cases(corpus) if c["id"] == case_id), None)
    if case is None:
        raise SystemExit("no case %s in the corpus" % case_id)
    repo = prepare(case, pathlib.Path(tempfile.mkdtemp(prefix="bench-overhead-case-")))
    git(repo.path, "checkout", "-q", repo.candidate)
    os.environ["PYTHONPATH"] = os.pathsep.join([str(repo.path / repo.pythonpath), str(ROOT)])
    return repo.path, [str(repo.python), "-m", "pytest", *repo.test_command], "%s's own suite" % case_id


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--bytecode", choices=("as-is", "cached"), default="as-is")
    parser.add_argument("--case", default=None, help="a corpus case id: its own suite, instead of 2,000 trivial tests")
    parser.add_argument("--corpus", default=None, help="a cases.jsonl (default: ../shared/corpus)")
    parser.add_argument("--before", default=None, help="a checkout of an earlier commit, measured beside this one")
    args = parser.parse_args()
    if args.bytecode == "cached":
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # inherited by every pytest run below
    if args.case:
        root, command, title = case_suite(args.case, pathlib.Path(args.corpus) if args.corpus else None)
        out = root.parent / "e.json"
        evidence = [*command, "-p", "pytest_evidence.plugin", f"--evidence-out={out}"]
        configs = {"plain pytest": command, "-p evidence": evidence}
        timed(configs["-p evidence"], root)  # a first run, unmeasured, as for the trivial suite
    else:
        root = pathlib.Path(tempfile.mkdtemp(prefix="bench-overhead-")) / "suite"
        base = trivial_suite(root)
        out = root.parent / "e.json"
        title = "2000 trivial tests"
        configs = {
            "plain pytest": [*PYTEST, "-p", "no:evidence"],
            **({"installed, not asked for": PYTEST} if _installed() else {}),
            "-p evidence": [*PYTEST, "-p", "evidence", f"--evidence-out={out}"],
            "-p evidence --baseline (cached B)": [
                *PYTEST,
                "-p",
                "evidence",
                f"--evidence-out={out}",
                f"--baseline={base}",
            ],
        }
        timed(configs["-p evidence --baseline (cached B)"], root)  # fills the B cache (and the bytecode cache)
    envs: dict[str, dict[str, str] | None] = {name: None for name in configs}
    if args.before:
        configs["-p evidence, before"] = configs["-p evidence"]
        envs["-p evidence, before"] = _before(pathlib.Path(args.before).resolve())
        timed(configs["-p evidence"], root, envs["-p evidence, before"])  # its bytecode, as for the others
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in configs}
    for _ in range(args.runs):
        for name, cmd in configs.items():
            times[name].append(timed(cmd, root, envs[name]))
    bytecode = "cached" if args.bytecode == "cached" else "as the environment says"
    if args.bytecode == "as-is":
        bytecode += " (PYTHONDONTWRITEBYTECODE=%s)" % (os.environ.get("PYTHONDONTWRITEBYTECODE") or "unset")
    report(
        "%s, median of %d interleaved runs each; Python %s, bytecode %s"
        % (title, args.runs, sys.version.split()[0], bytecode),
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


def _before(tree: pathlib.Path) -> dict[str, str]:
    """The environment of a run whose plugin is ``tree``'s: its checkout first on the path, ahead
    of this one's (``--case``) or of the installed one."""
    if not (tree / "pytest_evidence" / "plugin.py").is_file():
        raise SystemExit("--before %s: not a checkout of the project (no pytest_evidence/plugin.py)" % tree)
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and pathlib.Path(p) != ROOT]
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(tree), *paths]))


def _installed() -> bool:
    """Whether this interpreter's pytest loads the plugin by its entry point (an inert session)."""
    return any(ep.name == "evidence" for ep in importlib.metadata.entry_points(group="pytest11"))


def _spread(ratios: list[float]) -> str:
    return "%.3f [%.3f-%.3f]" % (statistics.median(ratios), ratios[0], ratios[-1])


if __name__ == "__main__":
    main()
