"""Mutants of the code under audit, made by mutmut's own operators.

mutmut generates; the runner runs. mutmut's runner copies the whole source tree into its own
``mutants/`` directory, imports the code under test in the interpreter mutmut itself runs in
(3.10 or newer) and drives pytest its own way -- none of which can be scoped to the changed
functions, the selected tests, the pinned sandbox or an old target interpreter (docs/audit.md).
Its mutation step can: ``create_mutations`` takes the lines to mutate, and each mutation is one
node replaced in the module, rendered here as a whole mutated file and a one-hunk diff.
"""

from __future__ import annotations

import difflib
import functools
import os
import random
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from types import ModuleType
from typing import Any

from pytest_evidence.errors import MissingTool


@dataclass(frozen=True)
class Mutant:
    """One mutation of a file, rendered only when asked: a sample of 30 out of hundreds renders 30."""

    path: str  # repository-relative file
    function: str  # the qualname of the definition holding the mutated line
    index: int  # its place among the mutations mutmut made for this definition
    original: str = field(repr=False)
    render: Callable[[], str] = field(repr=False, compare=False)

    @functools.cached_property
    def source(self) -> str:
        """The whole mutated file."""
        return self.render()

    @functools.cached_property
    def diff(self) -> str:
        """The mutation as a unified diff, for a reader."""
        lines = difflib.unified_diff(
            self.original.splitlines(), self.source.splitlines(), self.path, self.path, lineterm="", n=0
        )
        return "\n".join(list(lines)[2:])

    @property
    def line(self) -> int:
        hunk = self.diff.split("\n", 1)[0] if self.diff.startswith("@@") else "@@ -0 +0 @@"
        return int(hunk.split()[1].lstrip("-").split(",")[0])


def engine() -> str:
    """What made the mutants, for the record."""
    return "mutmut %s operators" % metadata.version("mutmut")


def require() -> None:
    """mutmut is there, or one line says what to install -- before any tier runs."""
    _mutmut()


def generate(path: str, source: str, function: str, lines: set[int]) -> list[Mutant]:
    """Every mutant mutmut's operators make on ``lines`` of ``source`` (the definition ``function``),
    unrendered. Code mutmut skips (docstrings, annotations, ``# pragma: no mutate``) stays unmutated."""
    file_mutation = _mutmut()
    try:
        module, mutations, _, _ = file_mutation.create_mutations(path, source, covered_lines=lines)
    except Exception:  # libcst cannot parse it (T0 reports syntax); nothing to mutate here
        return []

    def renderer(original: Any, mutated: Any) -> Callable[[], str]:
        return lambda: str(file_mutation.deep_replace(module, original, mutated).code)

    return [
        Mutant(path, function, n, source, renderer(m.original_node, m.mutated_node)) for n, m in enumerate(mutations)
    ]


def sample(by_function: Sequence[Sequence[Mutant]], limit: int, seed: int) -> list[Mutant]:
    """At most ``limit`` mutants, every function represented: each function's mutants shuffled
    with ``seed``, then taken round-robin -- a function with many mutants cannot crowd out one
    with few."""
    rng = random.Random(seed)
    queues = []
    for mutants in by_function:
        shuffled = list(mutants)
        rng.shuffle(shuffled)
        queues.append(shuffled)
    chosen: list[Mutant] = []
    while len(chosen) < limit and any(queues):
        for queue in queues:
            if queue and len(chosen) < limit:
                chosen.append(queue.pop(0))
    return chosen


_CONFIGURED = False


def _mutmut() -> ModuleType:
    """mutmut's mutation module, configured once. mutmut reads its configuration (the
    ``do_not_mutate_patterns`` among it) from the working directory's setup.cfg and guesses a
    source directory there; the runner's working directory is the user's, so mutmut is pointed
    at an empty one with a neutral configuration instead."""
    global _CONFIGURED
    try:
        from mutmut import configuration
        from mutmut.mutation import file_mutation
    except ImportError:
        raise MissingTool("the suite-strength audit needs mutmut: pip install 'pytest-evidence[runner]'") from None
    if not _CONFIGURED:
        here = os.getcwd()
        with tempfile.TemporaryDirectory(prefix="evidence-mutmut-") as scratch:
            with open(os.path.join(scratch, "setup.cfg"), "w") as cfg:
                cfg.write("[mutmut]\nsource_paths=.\n")
            os.chdir(scratch)
            try:
                configuration.reset_config()
                configuration.config()
            finally:
                os.chdir(here)
        _CONFIGURED = True
    return file_mutation
