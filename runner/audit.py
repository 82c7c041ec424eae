"""``audit_suite_strength``: would the selected tests notice if the code under audit were wrong?

Each unit is one definition (a changed function, or every function of a ``--critical`` module)
and the tests that reach it. Its mutants (``mutants``: mutmut's operators) each replace the file
in a private copy of the checkout, and the unit's tests run against it in a pinned pytest
process that stops at the first failure (``-x``). A mutant is *killed* when a test fails, errors
or times out on it, or when the tests no longer collect; it *survives* when every test passes,
or when no test reaches the unit at all -- then nothing could have noticed. What the time budget
leaves unrun is counted as not run, never as killed. Kill rates are per unit and per module.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import os
import pathlib
import shutil
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_evidence.model import FAILING, FailureKind, Outcome
from runner import mutants, pytest_run
from runner.sandbox import Sandbox
from runner.target import Target

#: What a mutated test run can end in that counts as the tests noticing.
NOTICED = FAILING | {Outcome.TIMEOUT, Outcome.CRASH}

#: Survivors listed per unit in the record, the rest counted.
SURVIVORS_SHOWN = 20

#: Kills that are not a test's: the mutated code broke the tests' import, or outran the budget.
UNTESTED = ("collection", "time limit")


@dataclass(frozen=True)
class Unit:
    """A definition under audit and the tests that reach it (in the order they run)."""

    path: str
    function: str
    lines: frozenset[int]
    tests: tuple[str, ...]


@dataclass(frozen=True)
class Limits:
    """How much one audit may do: a seeded sample of at most ``mutants``, ``seconds`` of budget
    (None: none), ``workers`` mutants at once."""

    seed: int
    mutants: int
    seconds: float | None
    workers: int = 1


@dataclass(frozen=True)
class Verdict:
    """What became of one mutant."""

    mutant: mutants.Mutant
    status: str  # killed | survived | not_run
    by: str | None  # the test that killed it, "collection", "time limit", or why it survived
    seconds: float

    @property
    def by_test(self) -> bool:
        """Killed by a test failing on it -- not by the tests no longer importing, nor by the clock:
        those say nothing of what a test checks."""
        return self.status == "killed" and self.by not in UNTESTED


@dataclass(frozen=True)
class Strength:
    """One unit's kill rate."""

    path: str
    function: str
    tests: int
    generated: int
    run: int
    killed: int
    untested: int  # of the killed, those no test killed (the import broke, the clock ran out)
    survivors: tuple[Verdict, ...]

    @property
    def kill_rate(self) -> float | None:
        return None if not self.run else round(self.killed / self.run, 4)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "function": self.function,
            "tests": self.tests,
            "mutants": self.generated,
            "run": self.run,
            "killed": self.killed,
            "untested": self.untested,
            "kill_rate": self.kill_rate,
            "survivors": [
                {"line": v.mutant.line, "diff": v.mutant.diff, "why": v.by} for v in self.survivors[:SURVIVORS_SHOWN]
            ],
        }


@dataclass(frozen=True)
class Audit:
    engine: str
    limits: Limits
    seconds: float
    budget_exhausted: bool
    units: tuple[Strength, ...]

    @property
    def run(self) -> int:
        return sum(u.run for u in self.units)

    @property
    def killed(self) -> int:
        return sum(u.killed for u in self.units)

    @property
    def untested(self) -> int:
        return sum(u.untested for u in self.units)

    @property
    def kill_rate(self) -> float | None:
        return None if not self.run else round(self.killed / self.run, 4)

    def modules(self) -> dict[str, dict[str, Any]]:
        rolled: dict[str, list[int]] = {}
        for u in self.units:
            counts = rolled.setdefault(u.path, [0, 0])
            counts[0] += u.run
            counts[1] += u.killed
        return {
            path: {"run": run, "killed": killed, "kill_rate": None if not run else round(killed / run, 4)}
            for path, (run, killed) in sorted(rolled.items())
        }

    def survivors(self) -> list[Verdict]:
        return [v for u in self.units for v in u.survivors]

    def to_dict(self) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "seed": self.limits.seed,
            "max_mutants": self.limits.mutants,
            "budget": self.limits.seconds,
            "seconds": self.seconds,
            "budget_exhausted": self.budget_exhausted,
            "mutants_run": self.run,
            "killed": self.killed,
            "kill_rate": self.kill_rate,
            "mutants_per_second": None if not self.seconds else round(self.run / self.seconds, 3),
            "functions": [u.to_dict() for u in self.units],
            "modules": self.modules(),
        }


def mutants_of(checkout: pathlib.Path, units: Sequence[Unit]) -> list[list[mutants.Mutant]]:
    """Every unit's mutants, in the unit order."""
    return [
        mutants.generate(u.path, (checkout / u.path).read_text(encoding="utf-8"), u.function, set(u.lines))
        for u in units
    ]


class Lab:
    """Private copies of a checkout, one per worker, where mutants are laid and run."""

    def __init__(
        self, checkout: pathlib.Path, scratch: pathlib.Path, target: Target, sandbox: Sandbox, workers: int
    ) -> None:
        # A mutant can make code allocate without end (a loop whose exit it removed): each test
        # process gets a share of the machine's memory, so the kernel's global OOM killer never
        # has to choose -- the process hits its cap, the test errors, the mutant is killed.
        self.target, self.sandbox = target, dataclasses.replace(sandbox, memory=memory_share(workers))
        ignore = shutil.ignore_patterns(".git", "__pycache__", "*.pyc", ".pytest_cache")
        self.copies = []
        for n in range(max(1, workers)):
            copy = scratch / ("mutants-%d" % n)
            shutil.copytree(checkout, copy, symlinks=True, ignore=ignore)
            self.copies.append(copy)
        self._free = list(self.copies)
        self._lock = threading.Lock()

    def __enter__(self) -> Lab:
        return self

    def __exit__(self, *exc: object) -> None:
        for copy in self.copies:
            shutil.rmtree(copy, ignore_errors=True)

    def try_mutant(self, mutant: mutants.Mutant, tests: Sequence[str], budget: float | None) -> Verdict:
        """Lay ``mutant`` in a free copy, run ``tests`` on it, put the original back."""
        with self._lock:
            copy = self._free.pop()
        start = time.perf_counter()
        path = copy / mutant.path
        original = path.read_bytes()
        try:
            _lay(path, mutant.source.encode("utf-8"))
            status, by = self._run(copy, tests, budget)
        finally:
            _lay(path, original)
            with self._lock:
                self._free.append(copy)
        return Verdict(mutant, status, by, round(time.perf_counter() - start, 3))

    def _run(self, copy: pathlib.Path, tests: Sequence[str], budget: float | None) -> tuple[str, str | None]:
        sandbox = dataclasses.replace(self.sandbox, tier_budget=budget)
        run = pytest_run.run(self.target, copy, tests, sandbox=sandbox, reruns=0, extra=["-x"])
        for test_id in tests:
            observation = run.observation(test_id)
            if observation is not None and observation.outcome in NOTICED:
                failure = observation.failure
                if failure is not None and failure.kind is FailureKind.COLLECTION_ERROR:
                    return "killed", "collection"  # its module no longer imports: no test ran
                return "killed", test_id
        if run.budget_exhausted:
            return "killed", "time limit"  # the mutant made the tests hang past the audit's budget
        if not run.answered or any(run.observation(t) is None for t in tests):
            # The mutated code broke the tests' import (a class body, a module-level call): a test
            # module did not collect, or pytest never reported at all.
            return "killed", "collection"
        return "survived", "every test reaching it passed"


def memory_share(workers: int) -> int:
    """Bytes of address space per mutant's test process: the machine's memory over the workers
    and the runner (one share each), at least 1 GiB."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return max(1 << 30, total // (max(1, workers) + 1))


def _lay(path: pathlib.Path, data: bytes) -> None:
    """Write ``data`` and drop the file's cached bytecode: a mutant of the same size written in
    the same second as the last one would otherwise be run from the last one's ``.pyc``."""
    path.write_bytes(data)
    cache = path.parent / "__pycache__"
    if cache.is_dir():
        for pyc in cache.glob(path.stem + ".*.pyc"):
            pyc.unlink(missing_ok=True)


def audit(
    lab: Lab,
    units: Sequence[Unit],
    found: Sequence[Sequence[mutants.Mutant]],
    limits: Limits,
    progress: Callable[[str], None] = lambda _m: None,
    until_killed: bool = False,
) -> Audit:
    """Run a seeded sample of ``found`` (each unit's mutants) against each unit's tests.

    ``until_killed``: stop at the first mutant a test kills (the reproducer-strength question is
    only whether a test notices one)."""
    start, budget = time.perf_counter(), limits.seconds
    chosen = mutants.sample(found, limits.mutants, limits.seed)
    unit_of = {id(m): u for u, ms in zip(units, found, strict=True) for m in ms}
    verdicts: dict[int, Verdict] = {}
    stop = threading.Event()

    def one(mutant: mutants.Mutant) -> Verdict:
        unit = unit_of[id(mutant)]
        left = None if budget is None else budget - (time.perf_counter() - start)
        if stop.is_set() or (left is not None and left <= 0):
            return Verdict(mutant, "not_run", "the audit's time budget ran out" if not stop.is_set() else None, 0.0)
        if not unit.tests:
            return Verdict(mutant, "survived", "no selected test reaches it", 0.0)
        verdict = lab.try_mutant(mutant, unit.tests, left)
        if verdict.by_test and until_killed:
            stop.set()
        progress("mutant %s:%d %s (%s)" % (mutant.path, mutant.line, verdict.status, verdict.by))
        return verdict

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, limits.workers)) as pool:
        for mutant, verdict in zip(chosen, pool.map(one, chosen), strict=True):
            verdicts[id(mutant)] = verdict
    seconds = round(time.perf_counter() - start, 3)
    strengths = []
    for unit, ms in zip(units, found, strict=True):
        mine = [verdicts[id(m)] for m in ms if id(m) in verdicts]
        ran = [v for v in mine if v.status != "not_run"]
        strengths.append(
            Strength(
                unit.path,
                unit.function,
                len(unit.tests),
                len(ms),
                len(ran),
                sum(v.status == "killed" for v in ran),
                sum(v.status == "killed" and not v.by_test for v in ran),
                tuple(v for v in ran if v.status == "survived"),
            )
        )
    exhausted = any(v.status == "not_run" and v.by is not None for v in verdicts.values())
    return Audit(mutants.engine(), limits, seconds, exhausted, tuple(strengths))
