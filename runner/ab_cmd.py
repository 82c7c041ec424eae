"""``evidence-runner ab --corpus FILE --out DIR``: the battery against the naive judge, measured.

Exit 0 when the report was written (whatever it shows); 2 for bad input (a corpus line that is
not a case, an unknown mechanism to ablate); 4 when a case cannot be built (a download, a venv, a
clone failed), with the arm runs finished so far kept for the next start.
"""

from __future__ import annotations

import argparse
import pathlib
from collections.abc import Callable

from pytest_evidence.errors import BadInput
from pytest_evidence.output import write_json
from runner.ab import corpus, harness, measure, report


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--corpus", required=True, type=pathlib.Path, help="a cases.jsonl (sdist or commit cases)")
    parser.add_argument("--out", required=True, type=pathlib.Path, help="the run directory (resumable)")
    parser.add_argument("--cases", default="", metavar="ID,ID", help="only these case ids (default: all)")
    parser.add_argument(
        "--ablate",
        action="append",
        default=[],
        metavar="MECHANISM",
        help="also run the battery without MECHANISM (repeatable; %s; all)" % ", ".join(harness.MECHANISMS),
    )
    parser.add_argument("--audit", action="store_true", help="the battery arm runs the suite-strength audit")
    parser.add_argument(
        "--cache",
        type=pathlib.Path,
        default=pathlib.Path.home() / ".cache" / "pytest-evidence" / "ab",
        help="downloads and venvs, kept between runs (default ~/.cache/pytest-evidence/ab)",
    )


def run(args: argparse.Namespace, say: Callable[[str], None]) -> tuple[int, str]:
    cases = corpus.load(args.corpus)
    wanted = [c for c in args.cases.split(",") if c]
    unknown = sorted(set(wanted) - {c["id"] for c in cases})
    if unknown:
        raise BadInput("--cases %s: not in %s" % (", ".join(unknown), args.corpus))
    chosen = harness.arms(args.ablate, args.audit)
    args.out.mkdir(parents=True, exist_ok=True)
    for case in cases:
        if not wanted or case["id"] in wanted:
            harness.run_case(case, args.out, args.cache, chosen, args.audit, say)
    runs = [r for r in harness.finished(args.out) if not wanted or r["case"] in wanted]
    found = measure.measures(runs)
    decision = measure.decide_on(found)
    ablated = measure.ablation_on(found) if any(a.startswith("ablate:") for a in chosen) else []
    document = report.document(runs, found, decision, ablated)
    write_json(str(args.out / "ab.json"), document)
    (args.out / "ab.md").write_text(report.markdown(document), encoding="utf-8")
    unmet = [item.name for item in decision.items if not item.met]
    return 0, "%s on %s (%d case(s)): %s; report in %s" % (
        "BATTERY WINS" if decision.wins else "BATTERY DOES NOT WIN",
        decision.split,
        len({r["case"] for r in runs}),
        "every inequality met" if not unmet else "not met: " + ", ".join(unmet),
        args.out / "ab.md",
    )
