"""B, built once before any candidate: its recorded suite run, receipted in the shared store.

Every candidate's climb then finds B's run under the same cache key and reuses it. Built by the
candidates themselves, two of them would start it at once, and the second would find the first's
receipt held (INCONCLUSIVE). The certify options are the batch's, parsed by certify's own parser,
so the key is exactly the one each climb computes.
"""

from __future__ import annotations

import argparse
import pathlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pytest_evidence.errors import BadInput
from pytest_evidence.store import Store
from runner import certify, tools
from runner.checkout import checkouts
from runner.ladder import Ladder, regress


def certify_args(words: Sequence[str], passthrough: Sequence[str], candidate: Sequence[str]) -> argparse.Namespace:
    """The batch's certify options for one candidate, as ``certify`` parses them (bad input: one line)."""
    from runner.cli import _Parser

    parser = _Parser(prog="evidence-runner certify-batch")
    certify.add_arguments(parser)
    args = parser.parse_args([*words, *candidate, "--out", "record.json"])
    args.passthrough = list(passthrough)
    return args


@dataclass(frozen=True)
class Baseline:
    """B's suite run, built: where it is stored, and under what (a Ray task ships it in a clone)."""

    commit: str
    store: pathlib.Path
    cache_key: str  # the suite run's key in the store: B's tree, environment, policy -- no path
    repo_key: str  # the repository as the store names it (its real path): flake ledger, receipts


def build(args: argparse.Namespace, progress: Callable[[str], None]) -> Baseline:
    """Build (or find) B's recorded suite run."""
    how = certify.invocation(args)
    tools.require()
    how.target.check()
    with checkouts(args.repo, args.baseline, args.baseline, None) as co:
        co.trusted_tests(how.tests_from)
        how.target.check_pytest_args(lambda: co.b_dir)
        store_path = pathlib.Path(args.store or certify.default_store(co.repo)).resolve()
        with Store(str(store_path), option="--store") as store:
            store.check_writable()
            ladder = Ladder(co, store, how, progress)
            got = regress.suite_of_b(ladder, 0)
        if got.suite is None:
            raise BadInput("B's suite run has a held receipt (%s): reconcile it before the batch" % got.note)
        assert ladder.baseline_run is not None
        return Baseline(co.baseline, store_path, str(ladder.baseline_run["cache_key"]), ladder.sides.repo_key)
