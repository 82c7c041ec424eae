"""``evidence-runner``: the harness-side command line.

Exit codes (docs/runner.md): 0 certified, 1 rejected, 3 inconclusive, 2 bad input, 4 internal
error; for ``baseline``, 0 green, 1 red, 3 held. Every user mistake ends in one line on stderr; a
traceback is reserved for bugs.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
from collections.abc import Sequence

from rich.console import Console

from runner import baseline_cmd, certify, demo, ledgers
from runner.errors import EXIT_BAD_INPUT, EXIT_INTERNAL, RunnerError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="evidence-runner", description="Certify or falsify a candidate patch.")
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("demo", help="certify every candidate of the built-in example repository")
    d.add_argument("--keep", action="store_true", help="keep the example repository and records")
    c = sub.add_parser("certify", help="climb the certification ladder T0-T7 and write the evidence record")
    certify.add_arguments(c)
    b = sub.add_parser("baseline", help="run the operator's baseline command once, with a durable receipt")
    baseline_cmd.add_arguments(b)
    ledgers.add_arguments(
        sub.add_parser("flaky", help="list or clear the tests quarantined as flaky"),
        sub.add_parser("receipts", help="list baseline receipts, or reconcile a held one"),
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return EXIT_BAD_INPUT if exc.code else 0
    console = Console(stderr=True)
    try:
        if args.command == "demo":
            return demo.run(args.keep, Console())
        if args.command == "certify":
            code, line = certify.run(args, lambda msg: console.print("  " + msg, highlight=False))
            print(line)
            return code
        store = args.store or certify.default_store(pathlib.Path(baseline_cmd.repo_root(args.repo)))
        if args.command == "flaky":
            return ledgers.flaky(args, store, print)
        if args.command == "receipts":
            code, line = ledgers.receipts_command(args, store, print)
        else:
            code, line = baseline_cmd.run(args, store)
        print(line)
        return code
    except RunnerError as exc:
        print("evidence-runner: %s [%s]" % (exc, exc.slug), file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("evidence-runner: interrupted; temporary worktrees removed", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
