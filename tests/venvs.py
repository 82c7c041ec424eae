"""Environments as users have them: the runner installed from its wheel, and bare target venvs.

An editable install hides packaging and path defects -- the runner's ``site-packages`` leaking
into the target was invisible in one. So the suite builds the wheel once per session
(``pip wheel --no-build-isolation``: offline) and installs it, not editable, into a fresh venv.

Tests never reach the network, so the wheel's dependencies are not downloaded: each required
distribution is taken from the environment running the tests, file by file as its ``RECORD``
lists them, into the fresh venv's ``site-packages`` (symlinked). The result is what pip would
have installed -- the same distributions, at the same versions, laid out the same way -- with
pytest-evidence itself coming from the wheel.
"""

from __future__ import annotations

import fcntl
import importlib.metadata
import os
import pathlib
import subprocess
import sys

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _site_packages(venv: pathlib.Path) -> pathlib.Path:
    return venv / "lib" / ("python%d.%d" % sys.version_info[:2]) / "site-packages"


def _requirements(name: str, extras: tuple[str, ...] = ()) -> set[str]:
    """Distribution names ``name[extras]`` needs in this interpreter, transitively."""
    seen: set[str] = set()
    todo = [(name, extras)]
    while todo:
        dist, wanted = todo.pop()
        for line in importlib.metadata.requires(dist) or []:
            req = Requirement(line)
            if req.marker is not None and not any(req.marker.evaluate({"extra": e}) for e in (*wanted, "")):
                continue
            dep = canonicalize_name(req.name)
            if dep == "pytest-evidence":  # an extra that names another extra of the same project
                todo.append((dep, tuple(req.extras)))
            elif dep not in seen:
                seen.add(dep)
                todo.append((dep, tuple(req.extras)))
    return seen


def _clone(dists: set[str], venv: pathlib.Path) -> None:
    """Lay each distribution's files into ``venv`` as pip laid them here (symlinks)."""
    site = _site_packages(venv)
    for name in sorted(dists):
        dist = importlib.metadata.distribution(name)
        base = pathlib.Path(str(dist.locate_file("")))
        for entry in dist.files or []:
            source = (base / entry).resolve()
            dest = pathlib.Path(os.path.normpath(site / entry))
            if not source.is_file() or dest.exists() or "__pycache__" in entry.parts:
                continue
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(source, dest)


def make_venv(where: pathlib.Path, dists: set[str]) -> pathlib.Path:
    """A fresh venv of this interpreter holding exactly ``dists``; returns its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    _clone(dists, where)
    return where / "bin" / "python"


def pytest_only(where: pathlib.Path) -> pathlib.Path:
    """A target venv with pytest and what pytest needs, and nothing else (no guard plugins)."""
    return make_venv(where, {"pytest", *_requirements("pytest")})


def installed_runner(shared: pathlib.Path) -> pathlib.Path:
    """The runner's wheel installed in a fresh venv under ``shared`` (built once across workers)."""
    venv = shared / "runner-venv"
    with open(shared / "runner-venv.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        script = venv / "bin" / "evidence-runner"
        if not script.exists():
            wheels = shared / "wheel"
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "wheel",
                    "-q",
                    "--no-deps",
                    "--no-build-isolation",
                    "-w",
                    str(wheels),
                    str(ROOT),
                ],
                check=True,
                capture_output=True,
            )
            (wheel,) = wheels.glob("pytest_evidence-*.whl")
            make_venv(venv, _requirements("pytest-evidence", ("runner",)))
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "--python",
                    str(venv / "bin" / "python"),
                    "install",
                    "-q",
                    "--no-deps",
                    "--no-index",
                    str(wheel),
                ],
                check=True,
                capture_output=True,
            )
        return script
