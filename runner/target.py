"""The target environment: the interpreter the repository's tests run with.

Often old and never ours: nothing is installed into it. The plugin (and the shared model) are
made importable by ``PYTHONPATH`` and loaded with ``-p no:evidence -p pytest_evidence.plugin``
(the ``no:`` keeps an installed copy from registering twice). The checkout's own source roots
come first on the path so the code under test is the checkout's, not an installed copy.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass

import pytest_evidence
from pytest_evidence.environment import capture, versions
from pytest_evidence.model import Environment
from runner.errors import MissingTool

#: Directory that holds the ``pytest_evidence`` package, put on the target's PYTHONPATH.
PLUGIN_ROOT = str(pathlib.Path(pytest_evidence.__file__).resolve().parent.parent)

#: Distributions whose pytest plugins pin a test run (per-test timeout, seeded randomness).
GUARD_DISTRIBUTIONS = ["pytest-timeout", "pytest-randomly"]

#: One probe (fingerprint, guard plugin versions) per interpreter path for the life of the process.
_PROBED: dict[str, tuple[Environment, dict[str, str]]] = {}

_PROBE = (
    "import json, sys, pytest_evidence.environment as e; "
    "print(json.dumps([e.capture().to_dict(), e.versions(sys.argv[1:])]))"
)


@dataclass(frozen=True)
class Target:
    python: str
    pythonpath: tuple[str, ...]  # relative to a checkout; "" is the checkout root
    pytest_args: tuple[str, ...]

    def roots(self, checkout: pathlib.Path) -> list[pathlib.Path]:
        """The checkout's import roots, in order: the declared ones, or the root plus ``src/``."""
        if self.pythonpath:
            return [checkout / p if p else checkout for p in self.pythonpath]
        found = [checkout]
        if (checkout / "src").is_dir():
            found.append(checkout / "src")
        return found

    def env(self, checkout: pathlib.Path) -> dict[str, str]:
        env = dict(os.environ)
        for noisy in ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER", "PYTHONSTARTUP"):
            env.pop(noisy, None)
        paths = [str(r) for r in self.roots(checkout)] + [PLUGIN_ROOT]
        if env.get("PYTHONPATH"):
            paths.append(env["PYTHONPATH"])
        env["PYTHONPATH"] = os.pathsep.join(paths)
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        return env

    def check(self) -> None:
        """Fail fast, before any tier, on an interpreter that does not exist."""
        if shutil.which(self.python) is None:
            raise MissingTool("--python %s: no such interpreter" % self.python)

    def environment(self, fresh: bool = False) -> Environment:
        """Fingerprint of the target interpreter's installed environment (the checkout left out).

        Also proves the interpreter can run the plugin at all. The runner's own interpreter is
        fingerprinted in-process (tens of milliseconds instead of an interpreter start).
        ``fresh`` measures again: what the tests may have installed or removed since.
        """
        if fresh:
            _PROBED.pop(self.python, None)
        return self._probed()[0]

    def guard_versions(self) -> dict[str, str]:
        """The installed version of each guard plugin in the target, or ``absent``."""
        return self._probed()[1]

    def _probed(self) -> tuple[Environment, dict[str, str]]:
        if self.python not in _PROBED:
            if self.python == sys.executable:
                _PROBED[self.python] = (capture(), versions(GUARD_DISTRIBUTIONS))
            else:
                _PROBED[self.python] = self._probe()
        return _PROBED[self.python]

    def _probe(self) -> tuple[Environment, dict[str, str]]:
        env = dict(os.environ, PYTHONPATH=PLUGIN_ROOT)
        try:
            proc = subprocess.run(
                [self.python, "-c", _PROBE, *GUARD_DISTRIBUTIONS],
                capture_output=True,
                text=True,
                env=env,
                cwd=tempfile.gettempdir(),
                timeout=120,
            )
        except FileNotFoundError:
            raise MissingTool("--python %s: no such interpreter" % self.python) from None
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["exit %d" % proc.returncode])[-1]
            raise MissingTool(
                "--python %s cannot run the plugin (is pytest 7+ installed there?): %s" % (self.python, last)
            )
        env_doc, guards = json.loads(proc.stdout)
        return Environment.from_dict(env_doc), dict(guards)
