"""The runner's own engines, checked before any tier: a missing one is bad input, not a verdict.

ruff (T1) and mypy (T2) run from the runner's environment -- the ``runner`` extra installs them.
Found missing up front, each is a ``missing-tool`` error (exit 2); one that fails to answer later,
mid-climb, makes its tier an error instead.
"""

from __future__ import annotations

import importlib.util
import shutil

from pytest_evidence.errors import MissingTool

ENGINES = {"ruff": "T1 (lint)", "mypy": "T2 (type check)"}


def require() -> None:
    if shutil.which("git") is None:
        raise MissingTool("git is not installed or not on PATH")
    for module, tier in ENGINES.items():
        if importlib.util.find_spec(module) is None:
            raise MissingTool(
                "%s, the engine of %s, is not installed with the runner: pip install 'pytest-evidence[runner]'"
                % (module, tier)
            )
