"""The durable ledgers a person reads and reconciles: quarantined flakes and baseline receipts.

``flaky list`` / ``flaky clear NODEID``: a test quarantined once stays quarantined for its
repository until someone clears it; the clear is a new row (the store is append-only), so the
test's ``flaky_history`` keeps every flip and the clear.

``receipts list`` / ``receipts reconcile ID --rerun|--abandon``: a held receipt is never
replayed by itself; the operator's decision is recorded. ``--rerun`` of an
``evidence-runner baseline`` receipt runs the command again now, under a new receipt;
``--rerun`` of the ladder's suite receipt lets the next certify against that baseline run the
suite again. ``--abandon`` gives the operation up; the next run starts afresh.
"""

from __future__ import annotations

import argparse
import pathlib
from collections.abc import Callable

from pytest_evidence.errors import EXIT_CERTIFIED, BadInput
from pytest_evidence.store import Store
from runner import baseline_cmd, receipts

Print = Callable[[str], None]


def add_flaky_arguments(flaky: argparse.ArgumentParser) -> None:
    fsub = flaky.add_subparsers(dest="action", required=True)
    _common(fsub.add_parser("list", help="tests quarantined in the repository"))
    clear = fsub.add_parser("clear", help="end a test's quarantine (its history stays)")
    clear.add_argument("nodeid", metavar="NODEID", help="the quarantined test's node id, as flaky list prints it")
    _common(clear)


def add_receipts_arguments(receipt: argparse.ArgumentParser) -> None:
    rsub = receipt.add_subparsers(dest="action", required=True)
    _common(rsub.add_parser("list", help="baseline receipts of the repository and their state"))
    rec = rsub.add_parser("reconcile", help="decide what a held receipt becomes")
    rec.add_argument("receipt", metavar="ID", help="the held receipt's id, as receipts list prints it")
    how = rec.add_mutually_exclusive_group(required=True)
    how.add_argument("--rerun", action="store_true", help="run the operation again")
    how.add_argument("--abandon", action="store_true", help="give the operation up")
    _common(rec)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repo", type=pathlib.Path, default=pathlib.Path("."), help="the git repository (default .)")
    parser.add_argument("--store", type=pathlib.Path, default=None, help="the evidence store")


def flaky(args: argparse.Namespace, store_path: pathlib.Path, out: Print) -> int:
    root = baseline_cmd.repo_root(args.repo)
    with Store(str(store_path), option="--store") as store:
        held = store.quarantined(root)
        if args.action == "list":
            if not held:
                out("no test is quarantined in %s" % root)
            for test_id, signatures in sorted(held.items()):
                out(
                    "%s  quarantined by run %s, %d flip(s) recorded"
                    % (test_id, signatures[0].split(":")[0], len(signatures))
                )
            return EXIT_CERTIFIED
        if args.nodeid not in held:
            raise BadInput("%s is not quarantined in %s (see: evidence-runner flaky list)" % (args.nodeid, root))
        store.clear_quarantine(root, args.nodeid, receipts.now())
    out("cleared %s; its flips stay in flaky_history" % args.nodeid)
    return EXIT_CERTIFIED


def receipts_command(args: argparse.Namespace, store_path: pathlib.Path, out: Print) -> tuple[int, str]:
    root = baseline_cmd.repo_root(args.repo)
    with Store(str(store_path), option="--store") as store:
        if args.action == "list":
            found = store.receipts(repo=root)
            row = "%-16s  %-7s %-24s %-12s  %-25s  %s"
            if found:
                out(row % ("RECEIPT", "KIND", "REF", "HEAD", "CREATED", "STATE"))
            for r in found:
                out(row % (r["receipt"], r["kind"], r["ref"][:24], r["head"][:12], r["created"], receipts.status(r)))
            held = [r for r in found if receipts.status(r) == "held"]
            return EXIT_CERTIFIED, "%d receipt(s), %d held" % (len(found), len(held))
        matches = store.receipts(receipt=args.receipt)
        if not matches:
            raise BadInput("no receipt %s in %s" % (args.receipt, store_path))
        receipt = matches[0]
        state = receipts.status(receipt)
        if state != "held":
            raise BadInput("receipt %s is not held: %s" % (args.receipt, state))
        decision = "rerun" if args.rerun else "abandon"
        store.receipt_decide(args.receipt, decision, receipts.now())
        if decision == "abandon":
            return EXIT_CERTIFIED, "receipt %s abandoned; the next run starts afresh" % args.receipt
        if receipt["kind"] == "suite":
            return (
                EXIT_CERTIFIED,
                "receipt %s: the next certify against this baseline runs its suite again" % args.receipt,
            )
        binding = baseline_cmd.bind(receipt["repo"], receipt["ref"], receipt["command"], receipt["timeout"], None)
        return baseline_cmd.execute(store, binding)
