"""The baseline run, once per B: the whole suite on B with per-test dependencies.

Every candidate against the same B reuses it -- the key is B's tree, the target environment's
fingerprint, the pytest arguments and the rerun policy, so a changed environment or policy
refuses reuse rather than serving stale evidence.
"""

from __future__ import annotations

import hashlib
import pathlib
import uuid

from pytest_evidence import gitops
from pytest_evidence.model import Environment
from pytest_evidence.store import Store, SuiteRun
from runner import pytest_run
from runner.target import Target

POLICY_VERSION = "1"


def cache_key(repo: pathlib.Path, baseline: str, env: Environment, target: Target, reruns: int) -> str:
    parts = [
        gitops.tree_of(str(repo), baseline),
        env.fingerprint,
        "\0".join(target.pytest_args),
        "\0".join(target.pythonpath),
        str(reruns),
        POLICY_VERSION,
    ]
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def baseline_suite(
    store: Store, key: str, target: Target, b_dir: pathlib.Path, reruns: int, timeout: float | None
) -> tuple[SuiteRun, bool]:
    """The stored suite run for ``key``, or a fresh one (stored); returns ``(run, reused)``."""
    found = store.suite_lookup(key)
    if found is not None:
        return found, True
    run = pytest_run.run(target, b_dir, None, reruns=reruns, deps=True, timeout=timeout)
    collected = tuple(run.content.collected or ())
    suite = SuiteRun(
        run_id=uuid.uuid4().hex[:16],
        collected=collected,
        markers=run.content.markers,
        exit_code=run.exit_code,
        results={tid: run.observation(tid) for tid in collected},
        functions=run.content.functions,
        files=run.content.files,
    )
    store.suite_add(key, suite)
    return suite, False
