"""certify-batch on Ray: a local Ray of two CPUs, joined by the batch at its address.

B is built once by the driver and reused by every task (none builds it again), a record from a
Ray task is the record of certifying the candidate alone, and a Ray worker killed mid-task costs
its own candidate only. The batch and the certify it is compared with run as processes of their
own: a process that imported Ray has its vendored packages on ``sys.path``, and an in-process
certify would fingerprint another environment.
"""

from __future__ import annotations

import difflib
import importlib.util
import json
import logging
import os
import pathlib
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
from test_batch import _comparable

from pytest_evidence import gitops
from pytest_evidence.errors import EXIT_CERTIFIED
from pytest_evidence.store import Store
from runner import example_repo

if importlib.util.find_spec("ray") is None:
    pytest.skip("the ray extra is not installed (pip install 'pytest-evidence[ray]')", allow_module_level=True)


def _doomed(repo: example_repo.ExampleRepo) -> str:
    """A candidate whose tests never end (its module sleeps as it is imported): the test kills its worker."""
    before = gitops.show(str(repo.path), repo.baseline, "shop/price.py").decode()
    after = "import time\n\ntime.sleep(600)\n" + before
    lines = difflib.unified_diff(before.splitlines(True), after.splitlines(True), "a/shop/price.py", "b/shop/price.py")
    return "".join(lines)


@pytest.fixture(scope="module")
def address() -> Iterator[str]:
    """A local Ray of two CPUs, started here for the module. Imported here, not at collection, and
    ``sys.path`` given back after: importing Ray puts its vendored packages there, and every
    in-process certify of this worker's later tests would fingerprint another environment."""
    path = list(sys.path)
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
    try:
        yield str(ray.get_runtime_context().gcs_address)
    finally:
        ray.shutdown()
        sys.path[:] = path


def _runner(*words: str) -> list[str]:
    return [sys.executable, "-m", "runner.cli", *words]


def _processes(word: bytes) -> list[int]:
    """The processes whose command line (or title) holds ``word``."""
    found = []
    for proc in pathlib.Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and word in (proc / "cmdline").read_bytes():
                found.append(int(proc.name))
        except OSError:
            continue
    return found


def _kill_worker_of(task: str, batch: subprocess.Popen[str]) -> None:
    """SIGKILL the Ray worker running the task named ``task`` (its process title), once it runs."""
    for _ in range(1200):  # at most about two minutes
        for pid in _processes(("ray::" + task).encode()):
            os.kill(pid, signal.SIGKILL)
            return
        assert batch.poll() is None, "the batch ended before the task ran"
        time.sleep(0.1)
    raise AssertionError("no Ray worker ran %s" % task)


def test_a_ray_batch_records_each_candidate_as_alone_and_a_killed_worker_costs_its_own(
    address: str, tmp_path: pathlib.Path
) -> None:
    repo = example_repo.build(tmp_path / "shop")
    store = tmp_path / "store.sqlite3"
    (tmp_path / "doomed.patch").write_text(_doomed(repo))
    listed = tmp_path / "candidates.txt"
    listed.write_text("%s\ndoomed.patch\n" % repo.candidates["honest-fix"])
    out = tmp_path / "out"
    batch = subprocess.Popen(
        _runner(
            "certify-batch",
            "--repo",
            str(repo.path),
            "--baseline",
            repo.baseline,
            "--candidates",
            str(listed),
            "--out",
            str(out),
            "--store",
            str(store),
            "--executor",
            "ray",
            "--address",
            address,
            "--candidate-timeout",
            "300",  # a safety net only: the doomed candidate's worker is killed long before
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    _kill_worker_of("certify doomed", batch)
    said, _ = batch.communicate(timeout=600)
    assert batch.returncode == EXIT_CERTIFIED, said
    doc: dict[str, Any] = json.loads((out / "batch.json").read_text())
    assert doc["executor"] == "ray" and doc["jobs"] == 2
    honest = repo.candidates["honest-fix"][:12]
    assert [(r["name"], r["verdict"]) for r in doc["ranking"]] == [(honest, "CERTIFIED"), ("doomed", None)]
    lost = doc["ranking"][1]
    assert lost["exit_code"] is None and lost["reason"].startswith("no verdict: its Ray task was lost"), lost
    for _ in range(300):  # its certify, if it had started, died with its worker (and its tests with it)
        if not _processes(b"doomed.patch"):
            break
        time.sleep(0.1)
    assert not _processes(b"doomed.patch")
    record = json.loads((out / "records" / (honest + ".json")).read_text())
    assert record["baseline_run"]["suite"] == "reused"  # B's run came through the object store
    with Store(str(store)) as found:
        assert len(found.receipts()) == 1  # B built once, by the driver
    alone = tmp_path / "alone.json"
    proc = subprocess.run(
        _runner("certify", *repo.certify_args("honest-fix", alone, store)), capture_output=True, text=True, check=False
    )
    assert proc.returncode == EXIT_CERTIFIED, proc.stdout + proc.stderr
    by_itself = json.loads(alone.read_text())
    assert _comparable(record) == _comparable(by_itself)
    assert record["repo"] == by_itself["repo"]  # the repository, not the task's clone (gone with the task)
