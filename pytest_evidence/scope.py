"""``--evidence-collect FILE``: collect the listed test files only, whatever else the command line names.

The runner's reproducer sessions (T3, its stability runs, a confirmation on B) name the few test
files they need, but the operator's own pytest arguments come along unchanged -- and they usually
name the whole suite (``pytest tests``). pytest collects every path it is given, so without this
a session meant for three files imported and collected every test module under ``tests``: a
falsified patch paid for the suite's collection, twice (C and B), which is what T3 exists to avoid.

Dropping the operator's paths from the command line instead would mean telling paths from option
values in arguments any plugin may define (``--cov src``, ``--junitxml out.xml``); pytest already
knows which is which, so the scope is applied where pytest asks whether to collect a path. A
directory is kept when it leads to a listed file, and so is a package's ``__init__.py`` on the
way; anything else is ignored, also what lies under a directory the operator named: an empty
list collects nothing. A file named on the command line itself is still collected: pytest does
not ask about the paths it was given.

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional, Sequence, Set

import pytest


class CollectionScope:
    def __init__(self, listed: Sequence[str], invocation_dir: str) -> None:
        self.files: Set[str] = set()
        self.leading: Set[str] = set()  # every directory above a listed file
        for name in listed:
            given = os.path.abspath(os.path.join(invocation_dir, name))
            for full in {given, os.path.realpath(given)}:
                self.files.add(full)
                parent = os.path.dirname(full)
                while parent not in self.leading and parent != os.path.dirname(parent):
                    self.leading.add(parent)
                    parent = os.path.dirname(parent)

    @pytest.hookimpl(tryfirst=True)
    def pytest_ignore_collect(self, collection_path: Path) -> Optional[bool]:
        where = str(collection_path)
        if where in self.files or where in self.leading:
            return None
        # A package's __init__.py on the way: pytest 7 builds the Package node (its
        # setup_module, its package-scoped fixtures) only when this file is not ignored.
        if collection_path.name == "__init__.py" and str(collection_path.parent) in self.leading:
            return None
        return True
