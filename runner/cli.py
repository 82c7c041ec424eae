"""``evidence-runner``: the harness-side command line.

Exit codes (docs/runner.md): 0 certified, 1 rejected, 3 inconclusive, 2 bad input, 4 internal
error. Every user mistake ends in one line on stderr; a traceback is reserved for bugs.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from rich.console import Console

from runner import certify, demo
from runner.errors import EXIT_BAD_INPUT, EXIT_INTERNAL, RunnerError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="evidence-runner", description="Certify or falsify a candidate patch.")
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("demo", help="certify every candidate of the built-in example repository")
    d.add_argument("--keep", action="store_true", help="keep the example repository and records")
    c = sub.add_parser("certify", help="climb the certification ladder T0-T7 and write the evidence record")
    certify.add_arguments(c)
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
        code, line = certify.run(args, lambda msg: console.print("  " + msg, highlight=False))
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
