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
import subprocess
from dataclasses import dataclass

import pytest_evidence
from pytest_evidence.model import Environment
from runner.errors import MissingTool

#: Directory that holds the ``pytest_evidence`` package, put on the target's PYTHONPATH.
PLUGIN_ROOT = str(pathlib.Path(pytest_evidence.__file__).resolve().parent.parent)

_PROBE = "import json, pytest_evidence.environment as e; print(json.dumps(e.capture().to_dict()))"


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

    def environment(self, checkout: pathlib.Path) -> Environment:
        """Fingerprint of the target interpreter; also proves it can run the plugin at all."""
        try:
            proc = subprocess.run(
                [self.python, "-c", _PROBE],
                capture_output=True,
                text=True,
                env=self.env(checkout),
                cwd=checkout,
                timeout=120,
            )
        except FileNotFoundError:
            raise MissingTool("--python %s: no such interpreter" % self.python) from None
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["exit %d" % proc.returncode])[-1]
            raise MissingTool(
                "--python %s cannot run the plugin (is pytest 7+ installed there?): %s" % (self.python, last)
            )
        return Environment.from_dict(json.loads(proc.stdout))
