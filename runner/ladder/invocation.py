"""How a climb was asked for: the typed form of ``certify``'s options, and the record's ``invocation``.

One frozen value carries every choice the user made; the record's ``invocation`` object is its
serialisation and nothing else, so a key cannot drift from the value it names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from runner.audit import Limits
from runner.sandbox import DEFAULT_SEED, DEFAULT_TEST_TIMEOUT
from runner.target import Target


@dataclass(frozen=True)
class Invocation:
    python: str
    pytest_args: tuple[str, ...] = ()
    pythonpath: tuple[str, ...] = ()  # import roots relative to a checkout; "" is the root
    reproducers: tuple[str, ...] = ()
    expected_changes: tuple[str, ...] = ()
    full: bool = False
    reruns: int = 2
    stability_runs: int = 3
    tier_budget: float | None = 900.0
    test_timeout: float | None = DEFAULT_TEST_TIMEOUT
    seed: int = DEFAULT_SEED
    integration_marker: str = "integration"
    integration_globs: tuple[str, ...] = ("*integration*",)
    tests_from: str | None = None  # a revision or a test patch holding the trusted tests
    allow_new_network: bool = False  # a loopback attempt only C makes does not block (recorded)
    jobs: int = 1  # processes B's suite run may use (pytest-xdist, from ``parallel.MIN_TESTS`` tests)
    audit: bool = False  # the suite-strength audit tier after T5
    audit_mutants: int = 30  # at most this many mutants per question, a seeded sample
    audit_budget: float | None = 300.0  # seconds per question; what it leaves unrun is counted, not killed
    min_kill_rate: float | None = None  # under it the audit tier is inconclusive
    critical: tuple[str, ...] = ()  # modules audited whole, beside the changed functions
    ablate: tuple[str, ...] = ()  # mechanisms removed for the A/B harness's ablations (docs/ab.md)

    def ablated(self, mechanism: str) -> bool:
        return mechanism in self.ablate

    def limits(self, workers: int | None = None) -> Limits:
        """What one audit question may do (``workers``: None, the ``--jobs`` given)."""
        return Limits(self.seed, self.audit_mutants, self.audit_budget, self.jobs if workers is None else workers)

    @property
    def target(self) -> Target:
        return Target(self.python, self.pythonpath, self.pytest_args)

    def to_dict(self) -> dict[str, Any]:
        """The record's ``invocation``. ``timeout`` is the 1.1 name of ``tier_budget``, written
        for readers of schema 1.1 until the next major version (docs/evidence-record.md)."""
        return {
            "testexec": "17battery",
            "python": self.python,
            "pytest_args": list(self.pytest_args),
            "pythonpath": list(self.pythonpath),
            "reruns": self.reruns,
            "stability_runs": self.stability_runs,
            "tier_budget": self.tier_budget,
            "timeout": self.tier_budget,
            "test_timeout": self.test_timeout,
            "seed": self.seed,
            "reproducers": list(self.reproducers),
            "expected_changes": list(self.expected_changes),
            "full": self.full,
            "integration_marker": self.integration_marker,
            "integration_globs": list(self.integration_globs),
            "tests_from": self.tests_from,
            "allow_new_network": self.allow_new_network,
            "jobs": self.jobs,
            "audit": self.audit,
            "audit_mutants": self.audit_mutants,
            "audit_budget": self.audit_budget,
            "min_kill_rate": self.min_kill_rate,
            "critical": list(self.critical),
            "ablate": list(self.ablate),
        }
