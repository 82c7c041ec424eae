"""The runner as users install it: from the wheel, judging a target environment that is not its own.

Defect class: with the plugin made importable by putting the directory that holds
``pytest_evidence`` on the target's path, an installed runner put its whole ``site-packages``
there -- the target ran the runner's pytest and plugins, an interpreter without pytest was
certified, and mypy refused to start. These tests run the installed runner against a target venv
that holds pytest and nothing else, so any leak shows as the runner's packages in the record.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess

import jsonschema
import pytest
from conftest import Record

from runner import example_repo


def _installed(
    runner: pathlib.Path, repo: example_repo.ExampleRepo, name: str, out: pathlib.Path, *extra: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(runner), "certify", *repo.certify_args(name, out, out.parent / "store.sqlite3"), *extra],
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )


def _ask(python: pathlib.Path, code: str, cwd: pathlib.Path | None = None) -> str:
    return subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True, cwd=cwd).stdout


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> example_repo.ExampleRepo:
    return example_repo.build(tmp_path_factory.mktemp("example") / "shop")


def test_the_record_describes_the_target_and_what_was_injected_into_it(
    installed_runner: pathlib.Path,
    bare_target: pathlib.Path,
    example: example_repo.ExampleRepo,
    tmp_path: pathlib.Path,
    schema: Record,
) -> None:
    proc = _installed(installed_runner, example, "honest-fix", tmp_path / "e.json", "--python", str(bare_target))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((tmp_path / "e.json").read_text())
    jsonschema.validate(doc, schema)
    env = doc["environment"]
    target = json.loads(
        _ask(
            bare_target,
            "import importlib.metadata as m, json, pytest, sys; "
            "print(json.dumps([len({d.metadata['Name'] for d in m.distributions()}), pytest.__version__,"
            " '%d.%d.%d' % sys.version_info[:3]]))",
        )
    )
    assert [env["distributions"], env["pytest"], env["python"]] == target  # the target's, not the runner's
    assert set(env["injected"]) == {"pytest-evidence", "pytest-timeout", "pytest-randomly"}
    assert all(v.startswith("injected ") for v in doc["pinning"]["plugins"].values())
    worktree = tmp_path / "candidate"
    subprocess.run(
        ["git", "worktree", "add", "-q", "--detach", str(worktree), example.candidates["honest-fix"]],
        cwd=example.path,
        check=True,
    )
    plain = subprocess.run(
        [str(bare_target), "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=worktree,
        capture_output=True,
        text=True,
    )
    assert doc["collected"] == sum(1 for line in plain.stdout.splitlines() if "::" in line)


def test_mypy_answers_for_the_installed_runner(
    installed_runner: pathlib.Path, bare_target: pathlib.Path, example: example_repo.ExampleRepo, tmp_path: pathlib.Path
) -> None:
    proc = _installed(installed_runner, example, "type-error", tmp_path / "e.json", "--python", str(bare_target))
    doc = json.loads((tmp_path / "e.json").read_text())
    t2 = next(t for t in doc["tiers"] if t["tier"] == "T2")
    assert (proc.returncode, t2["status"]) == (1, "failed"), t2
    assert [f["code"] for f in t2["findings"] if f["hard"]] == ["assignment"]


@pytest.mark.parametrize("kind", ["no-pytest", "not-python"])
def test_a_target_that_cannot_run_the_plugin_is_missing_tool_before_any_tier(
    installed_runner: pathlib.Path, example: example_repo.ExampleRepo, tmp_path: pathlib.Path, kind: str
) -> None:
    if kind == "no-pytest":
        subprocess.run(["python3", "-m", "venv", "--without-pip", str(tmp_path / "bare")], check=True)
        python, needle = tmp_path / "bare" / "bin" / "python", "has no pytest"
    else:
        python, needle = pathlib.Path("/bin/true"), "is not a Python that can run the plugin"
    proc = _installed(installed_runner, example, "honest-fix", tmp_path / "e.json", "--python", str(python))
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert needle in lines[0] and lines[0].endswith("[missing-tool]")
    assert not (tmp_path / "e.json").exists()
