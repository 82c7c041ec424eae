"""The stamp that spares a record the target's second probe, and the drift it must still see.

The stamp decides whether the candidate's environment is measured again after its tests ran: a
stamp that misses a change would hide ``environment_drift``, so each kind of change an install
makes is shown to move it, a change to anything else not to, and a certify whose test installs a
distribution into the target still ends INCONCLUSIVE with the drift named -- as does one whose
code uninstalls pytest from the target, which then cannot answer the probe at all: the
candidate's doing, a verdict, not a missing tool.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import subprocess
import sys
import tempfile
from collections.abc import Callable

import pytest
import venvs
from conftest import FIX, PKG, Record, Repo, certify

from pytest_evidence.environment import capture
from runner import dist_stamp, netns, target


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
    assert tgt.environment_after_tests() == (first, None) and len(probes) == 1

    dist = site / "planted-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: planted\nVersion: 1.0\n")
    again, unanswered = tgt.environment_after_tests()
    assert len(probes) == 2 and unanswered is None
    assert again.distributions == first.distributions + 1 and again.fingerprint != first.fingerprint


INSTALLS = """import pathlib
import sysconfig


def test_installs_a_distribution():
    dist = pathlib.Path(sysconfig.get_paths()["purelib"]) / "planted-1.0.dist-info"
    dist.mkdir(exist_ok=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\\nName: planted\\nVersion: 1.0\\n")
"""


def _drift(
    repo: Repo, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, fix: dict[str, str]
) -> tuple[pathlib.Path, Record, str]:
    """Certify ``fix`` over ``PKG`` in a venv of its own, its installed code writable (as where
    the machine allows no mount namespace), where it must end INCONCLUSIVE (exit 3) on drift: the
    venv's site-packages, the record, and the drift's message."""
    python = venvs.pytest_only(tmp_path / "venv")
    monkeypatch.setattr(target, "_PROBED", {})
    monkeypatch.setattr(netns, "can_protect", lambda paths: False)
    base = repo.commit(PKG)
    cand = repo.commit({**FIX, **fix})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand, "--python", str(python))
    assert code == 3 and doc is not None and doc["verdict"]["verdict"] == "INCONCLUSIVE"
    drift = next(d for d in doc["detections"] if d["kind"] == "environment_drift")
    return _site_packages(python), doc, drift["message"]


def test_a_test_that_installs_a_distribution_is_environment_drift(
    repo: Repo, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where installed code can be written (no mount namespace: ``pinning.missing`` says so)."""
    site, doc, drift = _drift(repo, tmp_path, monkeypatch, {"tests/test_install.py": INSTALLS})
    assert (site / "planted-1.0.dist-info").is_dir()  # the test did run, and install
    assert "distributions" in drift
    assert doc["environment"]["distributions"] == doc["baseline_environment"]["distributions"] + 1


@pytest.mark.parametrize("fix", ["installs", "uninstalls"])
def test_installed_code_read_only_leaves_the_target_as_it_was(
    repo: Repo, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, fix: str
) -> None:
    """Where test processes see installed code read-only, a test's install and candidate code's
    uninstall are refused: the target is what B ran in, and no drift is said. The test that
    installs fails on C (its write refused); the fix that tries to uninstall is certified."""
    if not netns.can_protect((str(tmp_path),)):
        pytest.skip("no mount namespace here: installed code can be written")
    python = venvs.pytest_only(tmp_path / "venv")
    site = _site_packages(python)
    monkeypatch.setattr(target, "_PROBED", {})
    base = repo.commit(PKG)
    change = (
        {"tests/test_install.py": INSTALLS} if fix == "installs" else {"calc/ops.py": UNINSTALLS + FIX["calc/ops.py"]}
    )
    cand = repo.commit({**FIX, **change})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand, "--python", str(python))
    assert doc is not None and not [d for d in doc["detections"] if d["kind"] == "environment_drift"]
    assert not (site / "planted-1.0.dist-info").exists() and list(site.glob("pytest-*.dist-info"))
    assert str(tmp_path / "venv") in doc["pinning"]["read_only"]
    expected = (1, "REJECTED") if fix == "installs" else (0, "CERTIFIED")
    assert (code, doc["verdict"]["verdict"]) == expected, doc["verdict"]


#: A fix whose module, once a process that imported it ends, uninstalls pytest from the target.
UNINSTALLS = """import atexit
import glob
import shutil
import sysconfig


def _uninstall_pytest():
    for found in glob.glob(sysconfig.get_paths()["purelib"] + "/*pytest*"):
        shutil.rmtree(found, ignore_errors=True)


atexit.register(_uninstall_pytest)


"""


def test_a_candidate_that_uninstalls_pytest_gets_a_verdict_not_bad_input(
    repo: Repo, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    site, doc, drift = _drift(repo, tmp_path, monkeypatch, {"calc/ops.py": UNINSTALLS + FIX["calc/ops.py"]})
    assert not list(site.glob("*pytest*"))  # C's code did run, and uninstall
    assert "after C's code ran" in drift and "has no pytest" in drift
    assert doc["environment"]["pytest"] != "absent"  # the environment last measured, pytest in it
    # The next certify in this process asks the target again: now it is a missing tool, said first.
    python = str(tmp_path / "venv" / "bin" / "python")  # _drift's target
    out = tmp_path / "next.json"
    base, cand = doc["baseline_commit"], doc["candidate_commit"]
    code, again = certify(repo, out, "--baseline", base, "--candidate", cand, "--python", python)
    assert code == 2 and again is None
    assert "has no pytest" in capsys.readouterr().err


def test_a_certify_forgets_a_moved_probe_before_anything_of_it_can_ask(monkeypatch: pytest.MonkeyPatch) -> None:
    """Dropped in the caller's thread as the certify starts, not by its probe thread: a climb that
    asked first would otherwise get the probe from before the target moved. One that did not
    move is kept."""
    kept = target.Probed.taken(capture(), {}, sys.executable, sys.path)
    moved = dataclasses.replace(kept, stamp=("not", "what", "the", "target", "is", "now"))
    monkeypatch.setattr(target, "_PROBED", {sys.executable: kept})
    target.Target(sys.executable, (), ())._forget_if_moved()
    assert target._PROBED == {sys.executable: kept}
    monkeypatch.setattr(target, "_PROBED", {sys.executable: moved})
    target.Target(sys.executable, (), ())._forget_if_moved()
    assert target._PROBED == {}


@pytest.mark.parametrize("safe_path", [False, True], ids=["plain", "PYTHONSAFEPATH"])
def test_the_probe_reads_nothing_from_its_working_directory(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, bare_target: pathlib.Path, safe_path: bool
) -> None:
    """It runs in the temporary directory: a ``pytest.py`` left there must not decide what the
    target is. With ``PYTHONSAFEPATH`` in the runner's environment, the working directory would
    not be on the path to drop, and dropping the first entry would lose the plugin's copy."""
    (tmp_path / "pytest.py").write_text("raise SystemExit('a stray pytest.py answered')\n")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(target, "_PROBED", {})
    if safe_path:
        monkeypatch.setenv("PYTHONSAFEPATH", "1")
    answered = target.Target(str(bare_target), (), ())
    answered.check()
    assert answered.environment().pytest == pytest.__version__  # the venv holds the runner's pytest
