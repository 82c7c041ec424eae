"""``evidence-runner``: the harness-side command line.

Exit codes (docs/runner.md) mean one thing each: 0 certified, 1 rejected, 3 inconclusive -- a
verdict, with a record -- 2 bad input (one line, one slug, nothing run), 4 an internal error or an
interrupt (one line; a traceback goes to a file the line names). For ``baseline``: 0 green, 1
red, 3 held. Every error is caught here, once.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import pathlib
import sys
from collections.abc import Sequence
from typing import NoReturn

from pytest_evidence.errors import EXIT_INTERNAL, EvidenceError, MissingTool, Usage
from runner import crash_report

PROGRAM = "evidence-runner"

#: Modules of the ``runner`` extra: without them, one line says what to install.
EXTRA = ("rich", "packaging", "jsonschema", "ruff", "mypy", "coverage", "pytest_timeout", "pytest_randomly")


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line with a slug like every other error."""

    def error(self, message: str) -> NoReturn:
        raise Usage("%s (see %s --help)" % (message, self.prog))


#: Every command: its name, help, usage (None: argparse's own), and the module and function that
#: add its arguments -- imported only for the command that runs: all of them together (the A/B
#: harness, the batch executors, the exports) cost most of a second of imports, paid by every
#: certify a harness starts.
_COMMANDS: tuple[tuple[str, str, str | None, str, str], ...] = (
    ("demo", "certify every candidate of the built-in example repository", None, "demo", "add_arguments"),
    (
        "certify",
        "climb the certification ladder T0-T7 and write the evidence record",
        "%(prog)s --repo DIR --baseline REV (--candidate REV | --patch FILE) --out FILE [options] [-- PYTEST_ARGS ...]",
        "certify",
        "add_arguments",
    ),
    (
        "certify-batch",
        "certify every candidate of a list against one baseline, in parallel, and rank them",
        "%(prog)s --repo DIR --baseline REV --candidates FILE|DIR --out DIR [--jobs N] "
        "[--executor ray [--address ADDR]] [certify's options] [-- PYTEST_ARGS ...]",
        "batch_cmd",
        "add_arguments",
    ),
    (
        "audit",
        "mutate the functions a revision changed (or --critical modules) and report the kill rate",
        "%(prog)s --repo DIR --rev REV [--critical MODULE ...] [--out FILE] [options]",
        "audit_cmd",
        "add_arguments",
    ),
    (
        "ab",
        "every case of a corpus through the battery and the naive judge: measures and the decision rule",
        None,
        "ab_cmd",
        "add_arguments",
    ),
    (
        "report",
        "render an evidence record: the terminal summary, or HTML, Markdown, JUnit XML, SWE-bench files",
        "%(prog)s RECORD [--html FILE] [--markdown FILE] [--junit FILE] [--swebench DIR [--instance-id ID]]",
        "report_cmd",
        "add_arguments",
    ),
    (
        "steer",
        "a repair loop's one steering call on a record that is not CERTIFIED (off unless asked for)",
        None,
        "steer_cmd",
        "add_arguments",
    ),
    (
        "baseline",
        "run the operator's baseline command once, with a durable receipt",
        None,
        "baseline_cmd",
        "add_arguments",
    ),
    ("flaky", "list or clear the tests quarantined as flaky", None, "ledgers", "add_flaky_arguments"),
    ("receipts", "list baseline receipts, or reconcile a held one", None, "ledgers", "add_receipts_arguments"),
)


def _parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; ``only``: the one command whose arguments are added (the others
    keep their name and help, enough for the top-level ``--help`` and for argparse to pick one)."""
    parser = _Parser(prog=PROGRAM, description="Certify or falsify a candidate patch.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, help_text, usage, module, adder in _COMMANDS:
        command = sub.add_parser(name, help=help_text, usage=usage)
        if only is None or only == name:
            getattr(importlib.import_module("runner." + module), adder)(command)
    return parser


def _command_word(words: Sequence[str]) -> str:
    """The command named: the first word that is not an option (the top level takes no value)."""
    return next((w for w in words if not w.startswith("-")), "")


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    passthrough: list[str] = []
    if "--" in words:  # everything after -- is pytest's, as with tox and nox
        cut = words.index("--")
        words, passthrough = words[:cut], words[cut + 1 :]
    try:
        missing = [m for m in EXTRA if importlib.util.find_spec(m) is None]
        if missing:
            raise MissingTool("the runner needs %s: pip install 'pytest-evidence[runner]'" % ", ".join(missing))
        try:
            args, rest = _parser(_command_word(words)).parse_known_args(words)
        except SystemExit as exc:  # --help
            return 0 if not exc.code else EXIT_INTERNAL
        if rest and args.command != "certify-batch":  # a batch hands certify's options to every certify
            raise Usage("unrecognized arguments: %s (see %s --help)" % (" ".join(rest), PROGRAM))
        args.certify_words = rest
        if passthrough and args.command not in ("certify", "certify-batch"):
            raise Usage("arguments after -- are pytest's, and only certify and certify-batch take them")
        args.passthrough = passthrough
        return _dispatch(args)
    except EvidenceError as exc:
        print(exc.line(PROGRAM), file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("%s: interrupted; temporary worktrees removed [interrupted]" % PROGRAM, file=sys.stderr)
        return EXIT_INTERNAL
    except Exception as exc:
        path = crash_report.write(exc)
        print(
            "%s: internal error: %s: %s; traceback in %s [internal]" % (PROGRAM, type(exc).__name__, exc, path),
            file=sys.stderr,
        )
        return EXIT_INTERNAL


def _dispatch(args: argparse.Namespace) -> int:
    from rich.console import Console

    console = Console(stderr=True, soft_wrap=True)  # a progress line is one line, in a CI log too
    if args.command == "demo":
        from runner import demo

        return demo.run(args.keep, Console(), demo.chosen(args.candidates))
    if args.command == "certify":
        from runner import certify
        from runner.terminal import live, summary

        with live.Display(console) as display:
            code, line, record = certify.run(args, display.event)
        if record is not None:
            summary.show(console, record, str(args.out))
        print(line)
        return code
    if args.command == "certify-batch":
        from runner import batch_cmd
        from runner.terminal import live

        code, line = batch_cmd.run(args, args.certify_words, lambda msg: live.say(console, msg))
        print(line)
        return code
    if args.command == "report":
        from runner import report_cmd
        from runner.terminal import summary

        code, line = report_cmd.run(args, lambda record, path: summary.show(Console(), record, str(path)))
        print(line)
        return code
    if args.command == "ab":
        from runner import ab_cmd

        code, line = ab_cmd.run(args, lambda msg: console.print("  " + msg, highlight=False, markup=False))
        print(line)
        return code
    if args.command == "steer":
        from runner import steer_cmd

        code, line = steer_cmd.run(args)
        print(line)
        return code
    from runner import baseline_cmd, ledgers
    from runner.certify import default_store

    store = args.store or default_store(pathlib.Path(baseline_cmd.repo_root(args.repo)))
    if args.command == "flaky":
        return ledgers.flaky(args, store, print)
    if args.command == "audit":
        from runner import audit_cmd

        code, line = audit_cmd.run(args, store, lambda msg: console.print("  " + msg, highlight=False, markup=False))
    elif args.command == "receipts":
        code, line = ledgers.receipts_command(args, store, print)
    else:
        code, line = baseline_cmd.run(args, store)
    print(line)
    return code


if __name__ == "__main__":
    sys.exit(main())
