"""The baseline run, once per B: the whole suite on B with per-test dependencies.

Every candidate against the same B reuses it -- the key is B's tree, the target environment's
fingerprint, the pytest arguments, the rerun policy and the pinning (seed, per-test timeout,
network mechanism, guard plugins: B and C must run alike), so a changed environment or policy
refuses reuse rather than serving stale evidence. The run is receipted (``receipts``): its intent
is in the store before pytest starts, so a runner killed half-way leaves a held receipt, and no
later climb replays it until someone reconciles it.
"""

from __future__ import annotations

import hashlib
import pathlib
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pytest_evidence import gitops
from pytest_evidence.errors import ToolFailed
from pytest_evidence.model import Environment
from pytest_evidence.store import Store, SuiteRun
from runner import pytest_run, receipts
from runner.sandbox import Sandbox
from runner.target import Target


def cache_key(repo: pathlib.Path, baseline: str, env: Environment, target: Target, reruns: int, pinning: str) -> str:
    """B's tree, the environment, the pytest arguments, the policy and how runs are pinned (seed...)."""
    parts = [
        pinning,
        gitops.tree_of(str(repo), baseline),
        env.fingerprint,
        "\0".join(target.pytest_args),
        "\0".join(target.pythonpath),
        str(reruns),
        receipts.POLICY_VERSION,
    ]
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


@dataclass(frozen=True)
class BaselineSuite:
    """The outcome of asking for B's suite: the run (None when held) and how it was obtained."""

    suite: SuiteRun | None
    how: str  # "reused", "run now" or "held"
    note: str
    receipt: str | None


def baseline_suite(
    store: Store,
    key: str,
    binding: receipts.Binding,
    target: Target,
    b_dir: pathlib.Path,
    reruns: int,
    sandbox: Sandbox,
    on_intent: Callable[[str], None] = lambda _receipt: None,
    parallel: Sequence[str] = (),
) -> BaselineSuite:
    """B's suite, reused or run now (with the xdist arguments ``parallel``, which change how it
    runs, not what it finds: they are not part of the key); ``on_intent`` learns the receipt
    before pytest starts."""
    admission = receipts.admit(store, binding)
    if admission.action == "held":
        assert admission.receipt is not None
        return BaselineSuite(None, "held", admission.reason, admission.receipt["receipt"])
    found = store.suite_lookup(key) if admission.action == "reuse" else None
    if found is not None:
        assert admission.receipt is not None
        return BaselineSuite(found, "reused", admission.reason, admission.receipt["receipt"])
    receipt = receipts.begin(store, binding)
    on_intent(receipt)
    start = time.perf_counter()
    run = pytest_run.run(target, b_dir, None, sandbox=sandbox, reruns=reruns, deps=True, extra=parallel)
    if run.budget_exhausted:  # no completion: the receipt stays held
        return BaselineSuite(
            None,
            "held",
            "the baseline suite outran the budget of %ss; receipt %s is held; reconcile with: %s"
            % (sandbox.tier_budget, receipt, receipts.reconcile_hint(receipt, binding.repo, store.path)),
            receipt,
        )
    if run.content.forgery is not None:  # B's own code and tests: nothing of the candidate's ran
        raise ToolFailed("the stream of B's suite run has a line its plugin did not write (%s)" % run.content.forgery)
    collected = tuple(run.content.collected or ())
    suite = SuiteRun(
        run_id=uuid.uuid4().hex[:16],
        collected=collected,
        markers=run.content.markers,
        exit_code=run.exit_code,
        results={tid: run.observation(tid) for tid in collected},
        functions=run.content.functions,
        files=run.content.files,
        network=_loopback(run.content.network),
        replaced=tuple(dict.fromkeys(run.content.replaced)),
    )
    store.suite_add(key, suite)
    receipts.complete(store, receipt, run.exit_code, "", run.stderr_tail, False, time.perf_counter() - start)
    return BaselineSuite(suite, "run now", admission.reason, receipt)


def _loopback(attempts: Sequence[tuple[str | None, str, bool]]) -> dict[str | None, list[str]]:
    """The allowed (loopback) attempts per test, which C's are compared with."""
    found: dict[str | None, list[str]] = {}
    for test_id, address, blocked in attempts:
        if not blocked:
            found.setdefault(test_id, []).append(address)
    return found


def recorded(
    store: Store,
    repo_key: str,
    commit: str,
    target: Target,
    reruns: int,
    sandbox: Sandbox,
    checkout: pathlib.Path,
    on_intent: Callable[[str], None] = lambda _receipt: None,
    parallel: Sequence[str] = (),
) -> tuple[str, BaselineSuite]:
    """The suite run of ``commit`` (checked out at ``checkout``) with per-test dependencies, and
    its cache key: B's for a climb, a revision's own for ``evidence-runner audit``; receipted
    under the repository ``repo_key`` (its real path)."""
    env = target.environment()
    key = cache_key(pathlib.Path(repo_key), commit, env, target, reruns, sandbox.identity())
    binding = receipts.Binding(
        kind="suite",
        repo=repo_key,
        ref=commit,
        head=commit,
        checkout=repo_key,
        env_fingerprint=env.fingerprint,
        command="pytest suite on B, cache key %s" % key,
    )
    return key, baseline_suite(store, key, binding, target, checkout, reruns, sandbox, on_intent, parallel)
