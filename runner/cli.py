"""``evidence-runner``: the harness-side command line.

Every user mistake ends in one line on stderr and a documented exit code (see ``runner.errors``);
a traceback is reserved for bugs of the runner itself.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from rich.console import Console

from runner import demo
from runner.errors import EXIT_BAD_INPUT, EXIT_INTERNAL, NotBuilt


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="evidence-runner", description="Certify or falsify a candidate patch.")
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("demo", help="run the evidence core on the built-in example repository")
    d.add_argument("--keep", action="store_true", help="keep the example repository and records")
    sub.add_parser("certify", help="climb the certification ladder T0-T7 (not built yet)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return EXIT_BAD_INPUT if exc.code else 0
    console = Console()
    try:
        if args.command == "demo":
            return demo.run(args.keep, console)
        raise NotBuilt(
            "certify: the certification ladder (T0-T7) is not built yet; "
            "use `pytest -p evidence --baseline=REV` for typed results"
        )
    except NotBuilt as exc:
        print("evidence-runner: not built: %s" % exc, file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
