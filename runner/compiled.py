"""The bytecode kept between certifies (``pytest_evidence.bytecode``): where it lies, and the
target processes that fill it from B's suite run and hand it to C's checkout.

Both run in the target interpreter -- its marshal format, its hash of a source -- started
isolated (``-I -S``): no ``PYTHONPATH``, no ``site``, so no ``.pth`` file a test process planted
in the target environment runs beside a directory the tests cannot reach; and on the runner's own
text of ``pytest_evidence.bytecode``, not the plugin's private copy the tests have on their path.
The kept bytecode only saves compiling: a process that fails, or finds nothing, costs the time it
took and changes no outcome (a later session compiles what it imports, as it always did).
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import subprocess
import tempfile

from pytest_evidence import bytecode
from pytest_evidence.store import default_store
from runner.target import Target

#: The target's command: ``pytest_evidence.bytecode``'s text, read from the runner's own install --
#: never the plugin's private copy, which every test process has on its path and could rewrite.
_LAUNCH = pathlib.Path(bytecode.__file__).read_text(encoding="utf-8") + "\nmain()\n"


def location(repo: pathlib.Path) -> str:
    """``bytecode`` beside the default store, in the repository's git directory: one place per
    repository, whatever store a certify names, made now (a directory is covered only if it is
    there)."""
    where = os.path.join(os.path.dirname(default_store(str(repo))), "bytecode")
    os.makedirs(where, exist_ok=True)
    return where


def harvest(target: Target, checkout: pathlib.Path, cache: str) -> None:
    """Keep what B's suite run compiled in ``checkout`` (which ran B's code and nothing else)."""
    _run(target, "harvest", str(checkout), cache)


def seed(target: Target, checkout: pathlib.Path, cache: str) -> None:
    """Write the kept bytecode of ``checkout``'s unchanged files into it, before a session there
    (no process when nothing is kept yet: B's run was stored before the directory was made)."""
    with contextlib.suppress(OSError), os.scandir(cache) as kept:
        if any(kept):
            _run(target, "seed", cache, str(checkout))


def _run(target: Target, *args: str) -> None:
    try:
        subprocess.run(
            [target.python, "-I", "-S", "-c", _LAUNCH, *args],
            capture_output=True,
            cwd=tempfile.gettempdir(),
            timeout=300,
        )
    except (OSError, subprocess.SubprocessError):
        pass  # compiling is what a session does without it
