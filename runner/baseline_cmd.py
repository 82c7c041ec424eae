"""``evidence-runner baseline``: a bounded, receipted baseline command before any model work.

The operator declares the command; the runner never picks one. It runs in a temporary worktree
of ``--ref`` (the user's checkout is untouched) inside the same sandbox as the tests: no network,
scrubbed environment, temporary ``HOME``. The receipt's intent is committed before it starts and
its completion after it ends on its own; exit 0 with no output completes, a non-zero exit is a
red baseline (recorded, exit 1), and a time-out leaves the receipt held (exit 3) -- completion is
never inferred. This proves the command completed, not that any assertion ran.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from pytest_evidence import gitops
from pytest_evidence.errors import EXIT_CERTIFIED, EXIT_INCONCLUSIVE, EXIT_REJECTED, BadInput, Interrupted
from pytest_evidence.model import bounded
from pytest_evidence.store import Store
from runner import netns, receipts
from runner.sandbox import DEFAULT_SEED, Sandbox
from runner.target import Target

MIN_TIMEOUT, MAX_TIMEOUT = 1.0, 120.0
STREAM_LIMIT = 4096


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repo", required=True, type=pathlib.Path, help="the git repository")
    parser.add_argument("--ref", required=True, metavar="REV", help="the baseline to run the command on")
    parser.add_argument("--command", required=True, metavar="CMD", help="the operator's baseline command (shell)")
    parser.add_argument(
        "--timeout",
        required=True,
        type=float,
        metavar="S",
        help="time limit, 1 to 120 seconds; past it the receipt is held",
    )
    parser.add_argument("--python", default=None, metavar="PATH", help="interpreter whose environment is bound")
    parser.add_argument("--store", type=pathlib.Path, default=None, help="the evidence store")


def repo_root(repo: pathlib.Path) -> str:
    try:
        return os.path.realpath(gitops.toplevel(str(repo)))
    except OSError as exc:
        raise BadInput(str(exc)) from None


def run(args: argparse.Namespace, store_path: pathlib.Path) -> tuple[int, str]:
    if not MIN_TIMEOUT <= args.timeout <= MAX_TIMEOUT:
        raise BadInput("--timeout must be between 1 and 120 seconds, not %g" % args.timeout)
    root = repo_root(args.repo)
    binding = bind(root, args.ref, args.command, args.timeout, args.python)
    with Store(str(store_path), option="--store") as store:
        admission = receipts.admit(store, binding)
        if admission.action == "held":
            return EXIT_INCONCLUSIVE, "HELD: %s" % admission.reason
        if admission.action == "reuse":
            assert admission.receipt is not None and admission.receipt["completion"] is not None
            return _verdict(admission.receipt["completion"]["exit_code"], admission.reason)
        code, line = execute(store, binding)
        return code, "%s (%s)" % (line, admission.reason)


def bind(root: str, ref: str, command: str, timeout: float | None, python: str | None) -> receipts.Binding:
    head = gitops.resolve_commit(root, ref)
    target = Target(python or sys.executable, (), ())
    target.check()
    return receipts.Binding(
        kind="command",
        repo=root,
        ref=ref,
        head=head,
        checkout=root,
        env_fingerprint=target.environment().fingerprint,
        command=command,
        timeout=timeout,
    )


def _verdict(exit_code: int, why: str) -> tuple[int, str]:
    if exit_code == 0:
        return EXIT_CERTIFIED, "GREEN baseline: the command exited 0 (%s)" % why
    return EXIT_REJECTED, "RED baseline: the command exited %d (%s)" % (exit_code, why)


def execute(store: Store, binding: receipts.Binding) -> tuple[int, str]:
    """Intent, run, completion -- or a held receipt when the command outruns its limit."""
    receipt = receipts.begin(store, binding)
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="evidence-baseline-"))
    tree = scratch / "checkout"
    sandbox = Sandbox(DEFAULT_SEED, None, binding.timeout, "netns" if netns.available() else "socket_guard")
    start = time.perf_counter()
    try:
        gitops.add_worktree(binding.repo, binding.head, str(tree))
        with subprocess.Popen(
            binding.command,
            shell=True,
            cwd=tree,
            env=sandbox.environ(os.environ, scratch),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            start_new_session=True,
            preexec_fn=sandbox.preexec,
        ) as proc:
            # what it leaves running with its pipes let go ends with it
            confined = netns.Confined(proc, lambda: os.killpg(proc.pid, signal.SIGKILL), sandbox.network == "netns")
            try:
                out, err, exhausted = confined.read(binding.timeout)
            except KeyboardInterrupt:
                raise Interrupted(
                    "interrupted; baseline receipt %s is held, reconcile it with: %s"
                    % (receipt, receipts.reconcile_hint(receipt, binding.repo, store.path))
                ) from None
            if exhausted:
                return (
                    EXIT_INCONCLUSIVE,
                    "HELD: the command outran %gs; receipt %s has no completion; reconcile with: %s"
                    % (
                        binding.timeout or 0,
                        receipt,
                        receipts.reconcile_hint(receipt, binding.repo, store.path),
                    ),
                )
    finally:
        gitops.remove_worktree(binding.repo, str(tree))
        shutil.rmtree(scratch, ignore_errors=True)
    stdout, stderr = bounded(out, STREAM_LIMIT), bounded(err, STREAM_LIMIT)
    truncated = len(out) > STREAM_LIMIT or len(err) > STREAM_LIMIT
    receipts.complete(store, receipt, proc.returncode, stdout, stderr, truncated, time.perf_counter() - start)
    return _verdict(proc.returncode, "receipt %s" % receipt)
