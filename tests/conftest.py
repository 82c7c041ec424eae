"""Shared fixtures: run the plugin through pytester and parse (and validate) what it wrote."""

from __future__ import annotations

import fcntl
import json
import os
import pathlib
import signal
import subprocess
import time
from collections.abc import Callable
from typing import Any

import jsonschema
import pytest
import venvs

import pytest_evidence
from pytest_evidence.model import RESULT_FIELDS
from runner.cli import main

#: pytest-randomly (a dependency: the runner seeds with it) would shuffle every pytest this
#: suite starts; the suite's own runs keep their written order. The runner's runs set their own.
NO_SHUFFLE = "-p no:randomly"
os.environ["PYTEST_ADDOPTS"] = NO_SHUFFLE

#: The modules that certify real repositories, slowest first (worker seconds of a full run:
#: 270, 255, 112, 83, 82, 77, 47, 42, 37, 35, 34, 31). ``--dist loadfile`` hands whole files to
#: the workers in collection order once ``--no-loadscope-reorder`` keeps xdist from ordering them
#: by how many tests each has -- which sent these few-test, slow files last, and one worker idled
#: at the end while the other finished one. A stale list costs balance, never a result.
SLOWEST_FIRST = (
    "test_runner_e2e.py",
    "test_attacks.py",
    "test_ab.py",
    "test_referee_e2e.py",
    "test_runner_cli.py",
    "test_one_session.py",
    "test_gates_judge_the_candidate.py",
    "test_parallel.py",
    "test_audit.py",
    "test_ablation.py",
    "test_batch.py",
    "test_installed.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: each file's order kept


SCHEMA_PATH = pathlib.Path(pytest_evidence.__file__).parent / "evidence.schema.json"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Evidence Tests",
    "GIT_AUTHOR_EMAIL": "tests@example.invalid",
    "GIT_COMMITTER_NAME": "Evidence Tests",
    "GIT_COMMITTER_EMAIL": "tests@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}

Record = dict[str, Any]


@pytest.fixture(autouse=True)
def _no_shuffle_inside_pytester(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """pytester drops ``PYTEST_ADDOPTS`` when it starts; put it back for the runs it makes."""
    if "pytester" in request.fixturenames:
        request.getfixturevalue("pytester")
        monkeypatch.setenv("PYTEST_ADDOPTS", NO_SHUFFLE)


@pytest.fixture(scope="session")
def schema() -> Record:
    loaded: Record = json.loads(SCHEMA_PATH.read_text())
    return loaded


def validate(doc: Record, schema: dict[str, Any]) -> Record:
    """Every record a test reads is first checked against the shipped schema."""
    jsonschema.validate(doc, schema)
    for res in doc["results"]:
        assert tuple(res) == RESULT_FIELDS
    return doc


def by_name(doc: Record) -> dict[str, Record]:
    """Results keyed by the last part of their test id (``test_x`` or ``test_x[1]``)."""
    return {r["test_id"].split("::")[-1]: r for r in doc["results"]}


RunEvidence = Callable[..., tuple[pytest.RunResult, Record]]


@pytest.fixture
def run_evidence(pytester: pytest.Pytester, schema: dict[str, Any]) -> RunEvidence:
    """Run pytest with ``-p evidence`` in-process; return the result and the validated record."""

    def run(*args: str, out: str = "evidence.json", subprocess: bool = False) -> tuple[pytest.RunResult, Record]:
        path = pytester.path / out
        if path.exists():
            path.unlink()
        argv = ["-p", "evidence", f"--evidence-out={path}", *args]
        result = pytester.runpytest_subprocess(*argv) if subprocess else pytester.runpytest(*argv)
        assert path.exists(), result.stdout.str() + result.stderr.str()
        return result, validate(json.loads(path.read_text()), schema)

    return run


class GitRepo:
    """A real git repository in a temp dir: commits are made, never mocked."""

    def __init__(self, path: pathlib.Path) -> None:
        self.path = path
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str) -> str:
        proc = subprocess.run(["git", *args], cwd=self.path, capture_output=True, text=True, check=True)
        return proc.stdout.strip()

    def write(self, files: dict[str, str]) -> None:
        for name, text in files.items():
            target = self.path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)

    def commit(self, message: str, files: dict[str, str] | None = None) -> str:
        if files:
            self.write(files)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")


@pytest.fixture
def git_repo(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    return GitRepo(pytester.path)


BUGGY = '''
def bulk_discount(qty):
    """10% off from 10 items on."""
    if qty > 10:
        return 0.10
    return 0.0
'''

EXISTING_TESTS = """
from shop import bulk_discount

def test_small_order():
    assert bulk_discount(3) == 0.0

def test_large_order():
    assert bulk_discount(50) == 0.10
"""

NEW_TEST = """
from shop import bulk_discount

def test_ten_items_get_discount():
    assert bulk_discount(10) == 0.10
"""


@pytest.fixture
def shop_repo(git_repo: GitRepo) -> tuple[GitRepo, str]:
    """B: an off-by-one bug and two passing tests. Returns the repo and B's sha."""
    base = git_repo.commit(
        "B",
        {
            "shop.py": BUGGY,
            "tests/test_shop.py": EXISTING_TESTS,
            "pytest.ini": "[pytest]\ntestpaths = tests\npythonpath = .\n",
            # as a project ignores them: where Python writes bytecode, pytest's would make C dirty
            ".gitignore": "__pycache__/\n",
        },
    )
    return git_repo, base


def fix(repo: GitRepo) -> None:
    """C: the honest fix plus a new reproducer test, left uncommitted in the working tree."""
    repo.write({"shop.py": BUGGY.replace("qty > 10", "qty >= 10"), "tests/test_boundary.py": NEW_TEST})


# -- a small package with a bug at B, for the runner's end-to-end tests -------------------------

PKG = {
    "calc/__init__.py": "",
    "calc/ops.py": "def half(n):\n    return n // 2 + 1\n\n\ndef double(n):\n    return n * 2\n",
    "tests/test_ops.py": "from calc.ops import double\n\n\ndef test_double():\n    assert double(2) == 4\n",
    "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
}
FIX = {
    "calc/ops.py": PKG["calc/ops.py"].replace("n // 2 + 1", "n // 2"),
    "tests/test_half.py": "from calc.ops import half\n\n\ndef test_half():\n    assert half(4) == 2\n",
}


#: A conftest whose collector makes a test of every line of a ``.cases`` file, named by ``{name}``
#: (an expression of ``n``, the line's number): a case passes when its line, an expression, holds.
_CASES_CONFTEST = """import pytest


def pytest_collect_file(file_path, parent):
    if file_path.suffix == ".cases":
        return Cases.from_parent(parent, path=file_path)


class Cases(pytest.File):
    def collect(self):
        for n, line in enumerate(self.path.read_text().splitlines(), 1):
            yield Case.from_parent(self, name={name}, check=line)


class Case(pytest.Item):
    def __init__(self, *, check, **kw):
        super().__init__(**kw)
        self.check = check

    def runtest(self):
        assert eval(self.check), self.check
"""
#: Items that share an id: every case is ``case`` (docopt-ng's collector names each ``testcases(N)``).
SHARED_IDS_CONFTEST = _CASES_CONFTEST.format(name='"case"')
#: Every case its own test: ``case1``, ``case2``...
NUMBERED_CASES_CONFTEST = _CASES_CONFTEST.format(name='"case%d" % n')


class Repo:
    def __init__(self, path: pathlib.Path) -> None:
        self.path = path
        path.mkdir(parents=True)
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str) -> str:
        return subprocess.run(["git", *args], cwd=self.path, capture_output=True, text=True, check=True).stdout.strip()

    def commit(self, files: dict[str, str], message: str = "c", delete: tuple[str, ...] = ()) -> str:
        for name, text in files.items():
            (self.path / name).parent.mkdir(parents=True, exist_ok=True)
            (self.path / name).write_text(text)
        for name in delete:
            (self.path / name).unlink()
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)
        return self.git("rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> Repo:
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    return Repo(tmp_path / "repo")


def _default_sigint() -> None:
    """Ctrl-C must reach the child even when this suite runs where SIGINT is ignored (a background
    job of a non-interactive shell): Python installs its KeyboardInterrupt handler only over the
    default disposition."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interrupt(
    cmd: list[str], started: pathlib.Path, signum: int, cwd: pathlib.Path | None = None
) -> tuple[int, str, str]:
    """Run ``cmd``; once ``started`` exists (the point to interrupt), send ``signum``.

    Returns the exit code, stdout and stderr. A process that does not end within a minute of the
    signal is killed, so a failing test leaves nothing running.
    """
    with subprocess.Popen(  # the context closes the pipes however the wait ends
        cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_default_sigint
    ) as proc:
        try:
            deadline = time.monotonic() + 90
            while not started.exists() and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.1)
            assert started.exists(), "%s never appeared (exit %s)" % (started, proc.poll())
            proc.send_signal(signum)
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
    return proc.returncode, out, err


def certify(repo: Repo, out: pathlib.Path, *args: str) -> tuple[int, Record | None]:
    code = main(["certify", "--repo", str(repo.path), "--out", str(out), *args])
    return code, json.loads(out.read_text()) if out.exists() else None


@pytest.fixture(scope="session")
def shared_tmp(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """A temp dir every xdist worker of this session shares (what is built there is built once)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def installed_runner(shared_tmp: pathlib.Path) -> pathlib.Path:
    """``evidence-runner`` installed from this checkout's wheel in a fresh venv (see ``venvs``)."""
    return venvs.installed_runner(shared_tmp)


@pytest.fixture(scope="session")
def bare_target(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """A target interpreter whose venv has pytest and nothing else: no guard plugins, no coverage."""
    return venvs.pytest_only(tmp_path_factory.mktemp("target") / "venv")


#: Candidates of the built-in example whose records the export tests render: one per verdict and
#: halting tier that shows differently (a fix, a regression, a falsified fix, an attack, a flake).
EXPORTED = ("honest-fix", "regression", "no-fix", "conftest-tamper", "flaky-fix")


@pytest.fixture(scope="session")
def example_certified(shared_tmp: pathlib.Path) -> dict[str, tuple[int, pathlib.Path, Record]]:
    """Every candidate of the built-in example certified once per test session, across xdist
    workers (the first worker to ask certifies them, in order, into one store; the others wait on
    the lock and read): exit code, record path and record. The end-to-end tests and the export
    tests read the same real records, so the suite pays for the sixteen climbs once."""
    from runner import demo, example_repo

    work = shared_tmp / "example-certified"
    work.mkdir(exist_ok=True)
    codes = work / "codes.json"
    with open(work / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not codes.exists():
            repo = example_repo.build(work / "shop")
            got = {n: demo.certify_candidate(repo, n, work / f"{n}.json", None)[0] for n in example_repo.CANDIDATES}
            codes.write_text(json.dumps(got))
    return {
        name: (code, work / f"{name}.json", json.loads((work / f"{name}.json").read_text()))
        for name, code in json.loads(codes.read_text()).items()
    }


@pytest.fixture(scope="session")
def example_records(
    example_certified: dict[str, tuple[int, pathlib.Path, Record]],
) -> dict[str, tuple[pathlib.Path, Record]]:
    """Real records of the example's candidates: path and document."""
    return {name: (path, doc) for name, (_code, path, doc) in example_certified.items()}
