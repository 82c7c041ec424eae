"""``evidence-runner report``, and the same exports on ``certify``: a record rendered for people
and for other tools.

``report RECORD`` alone prints the terminal summary ``certify`` printed; each of ``--html``,
``--markdown``, ``--junit`` and ``--swebench`` writes one more file (or directory), checked
writable before anything is rendered. The Markdown summary is also appended to
``$GITHUB_STEP_SUMMARY`` when that is set: by ``certify`` always (it is the CI job's step), by
``report`` when ``--markdown`` is asked for.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
from collections.abc import Callable

from pytest_evidence.errors import EXIT_CERTIFIED, BadInput
from pytest_evidence.model import EvidenceRecord
from pytest_evidence.output import check_writable, write_text
from runner.exports import load_record

STEP_SUMMARY = "GITHUB_STEP_SUMMARY"

#: The export options, by their ``args`` names.
EXPORTS = ("html", "markdown", "junit", "swebench")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("record", type=pathlib.Path, help="the evidence record (certify's --out) to render")
    add_export_arguments(parser)


def add_export_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("exports (each writes one more file; none is written on bad input)")
    group.add_argument(
        "--html", type=pathlib.Path, metavar="FILE", help="a self-contained HTML report (no network needed to open it)"
    )
    group.add_argument(
        "--markdown",
        type=pathlib.Path,
        metavar="FILE",
        help="a short Markdown summary (also appended to $%s when set)" % STEP_SUMMARY,
    )
    group.add_argument(
        "--junit",
        type=pathlib.Path,
        metavar="FILE",
        help="JUnit XML, each testcase carrying its role, B/C class and bug-discriminating as properties",
    )
    group.add_argument(
        "--swebench",
        type=pathlib.Path,
        metavar="DIR",
        help="SWE-bench's FAIL_TO_PASS / PASS_TO_PASS lists and report.json, written into DIR",
    )
    group.add_argument(
        "--instance-id",
        metavar="ID",
        help="the instance id report.json is keyed by (default: the candidate commit)",
    )


def check(args: argparse.Namespace) -> None:
    """Every export path can be written: a typo fails before the ladder, not after it."""
    for option in ("html", "markdown", "junit"):
        path = getattr(args, option)
        if path is not None:
            check_writable(str(path), "--" + option, create_parents=False)
    if args.swebench is not None:
        if args.swebench.exists() and not args.swebench.is_dir():
            raise BadInput("--swebench %s is a file, not a directory" % args.swebench)
        check_writable(str(args.swebench / "report.json"), "--swebench", create_parents=True)
    if args.instance_id is not None and args.swebench is None:
        raise BadInput("--instance-id needs --swebench")


def export(
    record: EvidenceRecord, args: argparse.Namespace, record_path: pathlib.Path, step_summary: bool
) -> list[str]:
    """Write the exports ``args`` asks for; returns what was written, for the closing lines.

    ``step_summary``: append the Markdown summary to ``$GITHUB_STEP_SUMMARY`` when it is set.
    Each renderer is imported only when asked for, not with the module: certify imports it for
    its options, and the JUnit renderer alone pulls in pytest's junitxml, a tenth of a second of
    every certify that writes no JUnit.
    """
    written = []
    if args.html is not None:
        from runner.exports import html

        write_text(str(args.html), html.render(record))
        written.append(str(args.html))
    summary = None
    if args.markdown is not None or (step_summary and os.environ.get(STEP_SUMMARY)):
        from runner.exports import markdown

        summary = markdown.render(record, str(record_path))
    if args.markdown is not None:
        assert summary is not None
        write_text(str(args.markdown), summary)
        written.append(str(args.markdown))
    if step_summary and summary is not None and os.environ.get(STEP_SUMMARY):
        with open(os.environ[STEP_SUMMARY], "a", encoding="utf-8") as fh:
            fh.write(summary.rstrip("\n") + "\n\n")
        written.append("$" + STEP_SUMMARY)
    if args.junit is not None:
        from runner.exports import junit

        write_text(str(args.junit), junit.render(record))
        written.append(str(args.junit))
    if args.swebench is not None:
        from runner.exports import swebench

        instance = args.instance_id or record.candidate_commit or "candidate"
        for name, doc in swebench.files(record, instance).items():
            target = args.swebench / name
            write_text(str(target), json.dumps(doc, indent=2) + "\n")
            written.append(str(target))
    return written


def asked(args: argparse.Namespace) -> str:
    """The export options given, as they were typed ("" for none)."""
    return " ".join("--" + o for o in EXPORTS if getattr(args, o) is not None)


def run(args: argparse.Namespace, show: Callable[[EvidenceRecord, pathlib.Path], None]) -> tuple[int, str]:
    """Render; ``show`` prints the terminal summary when no file export is asked for."""
    record = load_record(args.record, "record")
    check(args)
    if not asked(args):
        show(record, args.record)
        return EXIT_CERTIFIED, "rendered %s" % args.record
    written = export(record, args, args.record, step_summary=args.markdown is not None)
    return EXIT_CERTIFIED, "wrote %s" % ", ".join(written)
