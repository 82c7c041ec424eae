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
import os
import random
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from types import ModuleType

from pytest_evidence.errors import MissingTool


@dataclass(frozen=True)
class Mutant:
    path: str  # repository-relative file
    function: str  # the qualname of the definition holding the mutated line
    line: int
    source: str  # the whole mutated file
    diff: str  # the mutation as a unified diff, for a reader

    @property
    def key(self) -> str:
        return "%s:%d:%s" % (self.path, self.line, self.diff.splitlines()[-1] if self.diff else "")


def engine() -> str:
    """What made the mutants, for the record."""
    return "mutmut %s operators" % metadata.version("mutmut")


def require() -> None:
    """mutmut is there, or one line says what to install -- before any tier runs."""
    _mutmut()


def generate(path: str, source: str, function: str, lines: set[int]) -> list[Mutant]:
    """Every mutant mutmut's operators make on ``lines`` of ``source`` (the definition ``function``).
    Code mutmut skips (docstrings, annotations, ``# pragma: no mutate``) stays unmutated."""
    file_mutation = _mutmut()
    try:
        module, mutations, _, _ = file_mutation.create_mutations(path, source, covered_lines=lines)
    except Exception:  # libcst cannot parse it (T0 reports syntax); nothing to mutate here
        return []
    found = []
    for mutation in mutations:
        mutated = file_mutation.deep_replace(module, mutation.original_node, mutation.mutated_node)
        code = mutated.code  # a node replaced by a node is a Module
        if code == source:
            continue
        diff = list(difflib.unified_diff(source.splitlines(), code.splitlines(), path, path, lineterm="", n=0))
        hunk = next((d for d in diff if d.startswith("@@")), "@@ -0 +0 @@")
        line = int(hunk.split()[1].lstrip("-").split(",")[0])
        found.append(Mutant(path, function, line, code, "\n".join(diff[2:])))
    return found


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
