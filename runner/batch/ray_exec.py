"""Candidates as Ray tasks (``--executor ray [--address ADDR]``), on a local Ray or a cluster.

Shipped through the object store once: the repository as a git bundle (``ship``), and the rows of
the driver's store a climb in it reads -- B's recorded suite run, its receipt, the repository's
flake ledger and kill rates (``Store.repository_rows``). Each task clones the bundle into a
temporary directory of its own, lays those rows into a store of its own with the repository's
path mapped to its clone's, so its certify finds B's run and never builds B, and runs the
candidate's certify there as the local executor does (``local.certify_one``: a process with its
own worktrees, network namespace, HOME and seeds, killed at the timeout). It returns the record,
the log and every row its certify wrote, mapped back to the repository's path; the driver appends
those to the one store as each task ends. A task that fails, or whose worker dies, costs its own
candidate: no verdict, the Ray error in its log (tasks are not retried). Scheduling is Ray's.

Ray is optional (the ``ray`` extra): it is imported here only, and only when asked for.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import json
import logging
import os
import pathlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_evidence.errors import BadInput
from pytest_evidence.output import write_json
from pytest_evidence.store import Rows, Store
from runner import leases
from runner.batch import ship
from runner.batch.baseline import Baseline
from runner.batch.candidates import Candidate
from runner.batch.command import Certify
from runner.batch.local import Finished, certify_one

EXTRA = "pip install 'pytest-evidence[ray]'"


def require() -> None:
    """Ray's absence is bad input naming the extra. Found, not imported: importing Ray puts its
    vendored packages on ``sys.path``, and B's environment fingerprint, taken in this process,
    would not be the one each candidate's certify takes (B would be built again per candidate)."""
    if importlib.util.find_spec("ray") is None:
        raise BadInput("--executor ray needs Ray, which is not installed: %s" % EXTRA)


def _ray() -> Any:
    """The ``ray`` module, imported once B is built."""
    try:
        return importlib.import_module("ray")
    except ImportError as exc:
        raise BadInput("--executor ray needs Ray, which does not import (%s): %s" % (exc, EXTRA)) from None


@contextlib.contextmanager
def connected(address: str | None, jobs: int) -> Iterator[int]:
    """Ray, joined when this process has it already, else started: a local Ray of ``jobs`` CPUs,
    or the cluster at ``address``. Yields the CPUs it has (the tasks at once); one started here is
    shut down on the way out, its tasks with it."""
    ray = _ray()
    started = not ray.is_initialized()
    if started:
        quiet: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.ERROR}
        try:
            if address is None:
                ray.init(num_cpus=jobs, include_dashboard=False, **quiet)
            else:
                ray.init(address=address, **quiet)
        except (ConnectionError, TimeoutError, RuntimeError, ValueError) as exc:
            where = "the cluster at --address %s" % address if address else "a local Ray"
            raise BadInput("cannot start or join %s: %s" % (where, str(exc).strip().splitlines()[0])) from None
    try:
        yield int(ray.cluster_resources().get("CPU", 0))
    finally:
        if started:
            ray.shutdown()


@dataclass(frozen=True)
class Shipment:
    """What every task gets besides the two shipped objects (the bundle, B's rows)."""

    certify: Certify
    repo_key: str  # the repository's path as the driver's store names it
    cwd: str  # the driver's working directory: certify's relative paths mean the same
    timeout: float | None


@dataclass(frozen=True)
class Returned:
    """What a task hands back: how certify ended, its record and log, and its store writes."""

    finished: Finished
    record: dict[str, Any] | None  # None: certify wrote none (or not JSON: killed while writing it)
    log: str
    writes: Rows  # named by the driver's repository path


def certify_task(bundle: bytes, seed: Rows, shipment: Shipment, candidate: Candidate, patch: bytes | None) -> Returned:
    """One candidate, in a Ray worker: a clone and a store of its own, certify as a process.
    Leased (``runner.leases``): a worker killed mid-task leaves its clone only until the next
    task on that machine starts."""
    with leases.leased("evidence-ray-") as tmp:
        root = pathlib.Path(os.path.realpath(tmp))
        clone = root / "repo"
        ship.clone(bundle, clone)
        key = str(clone)  # its real path, as the climb's store keys name it
        store_path = str(root / "store.sqlite3")
        with Store(store_path, option="--store") as store:
            store.merge(seed.rekeyed({shipment.repo_key: key}))
            marks = store.marks()
        if candidate.patch is not None:
            assert patch is not None
            shipped = root / candidate.patch.name
            shipped.write_bytes(patch)
            candidate = Candidate(candidate.name, None, shipped)
        record, log = root / "record.json", root / "certify.log"
        command = shipment.certify.command(key, store_path, candidate.certify_args(), str(record))
        cwd = shipment.cwd if os.path.isdir(shipment.cwd) else str(root)
        finished = certify_one(command, log, shipment.timeout, cwd=cwd)
        with Store(store_path, option="--store") as store:
            writes = store.written_since(marks).rekeyed({key: shipment.repo_key})
        return Returned(finished, _record(record, key, shipment.repo_key), log.read_text("utf-8", "replace"), writes)


def _record(path: pathlib.Path, clone: str, repo: str) -> dict[str, Any] | None:
    """The record certify wrote, naming the repository rather than the clone, which goes with the task."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict):
        return None
    return {**doc, "repo": repo} if doc.get("repo") == clone else doc


def run(
    todo: Sequence[tuple[Candidate, pathlib.Path, pathlib.Path]],
    certify: Certify,
    built: Baseline,
    repo: pathlib.Path,
    timeout: float | None,
    done: Callable[[Candidate, Finished], None],
) -> None:
    """Certify every ``(candidate, record path, log path)`` as a Ray task; as each ends, its
    store writes are appended to the batch's store, its record and log written, ``done`` told."""
    ray = _ray()
    revisions = [c.revision for c, _record, _log in todo if c.revision]
    bundle = ray.put(ship.bundle(repo, [built.commit, *revisions]))
    with Store(str(built.store), option="--store") as store:
        seed = ray.put(store.repository_rows(built.repo_key, built.cache_key))
    shipment = Shipment(certify, built.repo_key, os.getcwd(), timeout)
    task = ray.remote(num_cpus=1, max_retries=0)(certify_task)
    pending = {
        task.options(name="certify %s" % cand.name).remote(
            bundle, seed, shipment, cand, None if cand.patch is None else cand.patch.read_bytes()
        ): (cand, record, log)
        for cand, record, log in todo
    }
    while pending:
        (ref,), _rest = ray.wait(list(pending), num_returns=1)
        cand, record, log = pending.pop(ref)
        try:
            got: Returned = ray.get(ref)
        except ray.exceptions.RayError as exc:
            why = "its Ray task was lost: %s" % (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            log.write_text(str(exc) + "\n", encoding="utf-8")
            done(cand, Finished(None, 0.0, why))
            continue
        with Store(str(built.store), option="--store") as store:
            store.merge(got.writes)
        log.write_text(got.log, encoding="utf-8")
        if got.record is not None:
            write_json(str(record), got.record)
        done(cand, got.finished)
