"""The stamp that spares a record the target's second probe, and the drift it must still see.

The stamp decides whether the candidate's environment is measured again after its tests ran: a
stamp that misses a change would hide ``environment_drift``, so each kind of change an install
makes is shown to move it, a change to anything else not to, and a certify whose test installs a
distribution into the target still ends INCONCLUSIVE with the drift named.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
from collections.abc import Callable

import pytest
import venvs
from conftest import FIX, PKG, Repo, certify

from runner import dist_stamp, target


@pytest.fixture()
def site(tmp_path: pathlib.Path) -> pathlib.Path:
    where = tmp_path / "site-packages"
    (where / "pkg-1.0.dist-info").mkdir(parents=True)
    (where / "pkg-1.0.dist-info" / "METADATA").write_text("Name: pkg\nVersion: 1.0\n")
    (where / "pkg").mkdir()
    return where


def _stamp(site: pathlib.Path) -> dist_stamp.Stamp:
    return dist_stamp.stamp(os.__file__, [str(site), str(site.parent / "not-yet")])


def _add_dist(site: pathlib.Path) -> None:
    (site / "new-2.0.dist-info").mkdir()


def _rewrite_metadata(site: pathlib.Path) -> None:
    (site / "pkg-1.0.dist-info" / "METADATA").write_text("Name: pkg\nVersion: 1.0.post1\n")


def _remove_dist(site: pathlib.Path) -> None:
    (site / "pkg-1.0.dist-info" / "METADATA").unlink()
    (site / "pkg-1.0.dist-info").rmdir()


def _add_pth(site: pathlib.Path) -> None:
    (site / "extra.pth").write_text("/somewhere\n")


def _add_sitecustomize(site: pathlib.Path) -> None:
    (site / "sitecustomize.py").write_text("import sys\n")


def _path_entry_appears(site: pathlib.Path) -> None:
    (site.parent / "not-yet").mkdir()


@pytest.mark.parametrize(
    "change",
    [_add_dist, _rewrite_metadata, _remove_dist, _add_pth, _add_sitecustomize, _path_entry_appears],
)
def test_what_an_install_changes_moves_the_stamp(site: pathlib.Path, change: Callable[[pathlib.Path], None]) -> None:
    before = _stamp(site)
    change(site)
    assert _stamp(site) != before


def test_modules_and_bytecode_do_not_move_the_stamp(site: pathlib.Path) -> None:
    before = _stamp(site)
    (site / "pkg" / "__pycache__").mkdir()
    (site / "pkg" / "mod.py").write_text("x = 1\n")
    (site / "__pycache__").mkdir()
    (site / "module.py").write_text("y = 2\n")
    assert _stamp(site) == before


def _site_packages(python: pathlib.Path) -> pathlib.Path:
    out = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    )
    return pathlib.Path(out.stdout.strip())


def test_a_fresh_measure_asks_the_target_again_only_when_the_stamp_moved(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    python = venvs.pytest_only(tmp_path / "venv")
    site = _site_packages(python)
    monkeypatch.setattr(target, "_PROBED", {})
    probes: list[target.Probed] = []
    real_probe = target.Target._probe

    def counted(self: target.Target) -> target.Probed:
        probes.append(real_probe(self))
        return probes[-1]

    monkeypatch.setattr(target.Target, "_probe", counted)
    tgt = target.Target(str(python), (), ())
    first = tgt.environment()
    assert len(probes) == 1
    assert tgt.environment(fresh=True) == first and len(probes) == 1

    dist = site / "planted-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: planted\nVersion: 1.0\n")
    again = tgt.environment(fresh=True)
    assert len(probes) == 2
    assert again.distributions == first.distributions + 1 and again.fingerprint != first.fingerprint


INSTALLS = """import pathlib
import sysconfig


def test_installs_a_distribution():
    dist = pathlib.Path(sysconfig.get_paths()["purelib"]) / "planted-1.0.dist-info"
    dist.mkdir(exist_ok=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\\nName: planted\\nVersion: 1.0\\n")
"""


def test_a_test_that_installs_a_distribution_is_environment_drift(
    repo: Repo, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    python = venvs.pytest_only(tmp_path / "venv")
    monkeypatch.setattr(target, "_PROBED", {})
    base = repo.commit(PKG)
    cand = repo.commit({**FIX, "tests/test_install.py": INSTALLS})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand, "--python", str(python))
    assert (_site_packages(python) / "planted-1.0.dist-info").is_dir()  # the test did run, and install
    assert code == 3 and doc is not None and doc["verdict"]["verdict"] == "INCONCLUSIVE"
    drift = next(d for d in doc["detections"] if d["kind"] == "environment_drift")
    assert "distributions" in drift["message"]
    assert doc["environment"]["distributions"] == doc["baseline_environment"]["distributions"] + 1
