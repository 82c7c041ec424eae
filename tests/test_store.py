"""The store is append-only by construction, and a bad store is one clear error."""

from __future__ import annotations

import dataclasses
import json
import pathlib
import sqlite3
from typing import Any

import pytest

from pytest_evidence.errors import StoreCorrupt, StoreLocked, StoreVersionMismatch
from pytest_evidence.model import Observation, Outcome
from pytest_evidence.store import Store, SuiteRun
from runner import receipts
from runner.receipts import Binding


def _obs(tid: str) -> Observation:
    return Observation(tid, Outcome.PASS, 0.1, None, "", (Outcome.PASS,))


@pytest.mark.parametrize(
    "table",
    ["runs", "results", "flake_ledger", "baseline_cache", "meta", "receipt_intents", "receipt_completions"],
)
@pytest.mark.parametrize("statement", ["UPDATE {t} SET rowid = rowid", "DELETE FROM {t}"])
def test_rows_cannot_be_updated_or_deleted(tmp_path: pathlib.Path, table: str, statement: str) -> None:
    path = str(tmp_path / "s.sqlite3")
    with Store(path) as store:
        store.add_run(
            {
                "run_id": "r",
                "created": "now",
                "repo": "/",
                "baseline_commit": None,
                "candidate_commit": None,
                "env_fingerprint": "e",
                "complete": True,
                "exit_status": 0,
            },
            [{"test_id": "t"}],
        )
        store.quarantine("/repo", [("t", "r", "C", "fail,pass", "abc", "now")])
        store.baseline_add("k", "r", {"t": _obs("t")})
        binding = Binding("command", "/repo", "main", "a" * 40, "/repo", "e" * 64, "true")
        receipt = receipts.begin(store, binding)
        receipts.complete(store, receipt, 0, "", "", False, 0.1)
    db = sqlite3.connect(path)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute(statement.format(t=table))


def test_baseline_cache_newest_row_wins_and_absent_ids_are_misses(tmp_path: pathlib.Path) -> None:
    with Store(str(tmp_path / "s.sqlite3")) as store:
        store.baseline_add("k", "r1", {"a": _obs("a"), "b": None})
        store.baseline_add("k", "r2", {"a": Observation("a", Outcome.FAIL, 0.1, None, "", (Outcome.FAIL,))})
        got = store.baseline_lookup("k", ["a", "b", "c"])
    assert got["a"] is not None and got["a"].outcome is Outcome.FAIL
    assert "b" in got and got["b"] is None  # cached as "B did not report it"
    assert "c" not in got


def test_flake_ledger_is_per_repository_and_a_clear_ends_the_quarantine_not_the_history(
    tmp_path: pathlib.Path,
) -> None:
    with Store(str(tmp_path / "s.sqlite3")) as store:
        store.quarantine("/a", [("t", "r1", "C", "fail,pass", "aaa", "x"), ("u", "r1", "B", "pass", "b", "x")])
        store.quarantine("/a", [("t", "r2", "B", "error,pass", "ccc", "x")])
        store.quarantine("/b", [("v", "r3", "C", "fail,pass", "ddd", "x")])
        assert store.flake_history("/a", ["t"]) == {"t": ["r1:C:fail,pass:aaa", "r2:B:error,pass:ccc"]}
        assert sorted(store.quarantined("/a")) == ["t", "u"] and sorted(store.quarantined("/b")) == ["v"]
        store.clear_quarantine("/a", "t", "2026-11-30")
        assert sorted(store.quarantined("/a")) == ["u"]
        assert store.flake_history("/a", ["t"])["t"][-1] == "cleared:2026-11-30"


def test_format_1_store_is_upgraded_in_place_and_keeps_its_flake_signatures(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "s.sqlite3"
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE meta (key TEXT NOT NULL, value TEXT NOT NULL);"
        "INSERT INTO meta VALUES ('store_version', '1');"
        "CREATE TABLE runs (run_id TEXT, created TEXT, repo TEXT, baseline_commit TEXT, candidate_commit TEXT,"
        " env_fingerprint TEXT, complete INTEGER, exit_status INTEGER);"
        "INSERT INTO runs VALUES ('r1', 'x', '/a', NULL, NULL, 'e', 1, 0);"
        "CREATE TABLE flake_signatures (test_id TEXT, run_id TEXT, side TEXT, sequence TEXT,"
        " message_digest TEXT, created TEXT);"
        "INSERT INTO flake_signatures VALUES ('t', 'r1', 'C', 'fail,pass', 'aaa', 'x');"
    )
    db.commit()
    db.close()
    with Store(str(path)) as store:
        assert store.quarantined("/a") == {"t": ["r1:C:fail,pass:aaa"]}
    with Store(str(path)) as store:  # upgraded once: opening again adds nothing
        assert store.quarantined("/a") == {"t": ["r1:C:fail,pass:aaa"]}


def test_corrupt_store_is_one_clear_error(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "s.sqlite3"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreCorrupt, match="corrupt"):
        Store(str(path))


def test_store_of_another_format_is_refused_not_deleted(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "s.sqlite3"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE meta (key TEXT NOT NULL, value TEXT NOT NULL)")
    db.execute("INSERT INTO meta VALUES ('store_version', '99')")
    db.commit()
    db.close()
    with pytest.raises(StoreVersionMismatch, match="format 99"):
        Store(str(path))
    assert path.exists()


def test_locked_store_is_one_clear_error(tmp_path: pathlib.Path) -> None:
    path = str(tmp_path / "s.sqlite3")
    Store(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with Store(path, timeout=0.05) as store, pytest.raises(StoreLocked, match="locked"):
            store.quarantine("/a", [("t", "r", "C", "fail,pass", "d", "x")])
    finally:
        holder.execute("ROLLBACK")
        holder.close()


_RUN = {
    "run_id": "r",
    "created": "now",
    "repo": "/",
    "baseline_commit": None,
    "candidate_commit": "c",
    "env_fingerprint": "e",
    "complete": True,
    "exit_status": 0,
}


def test_a_run_and_its_results_are_one_transaction(tmp_path: pathlib.Path) -> None:
    """A result that cannot be stored takes the run's row with it: no run without its results."""
    path = str(tmp_path / "s.sqlite3")
    results: list[dict[str, Any]] = [{"test_id": "t::a", "duration": 0.5}, {"test_id": ["not", "a", "string"]}]
    with Store(path) as store, pytest.raises(StoreCorrupt):
        store.add_run(_RUN, results)
    db = sqlite3.connect(path)
    assert db.execute("SELECT COUNT(*) FROM runs").fetchone() == (0,)
    assert db.execute("SELECT COUNT(*) FROM results").fetchone() == (0,)


def test_results_are_stored_compact_or_as_the_caller_encoded_them(tmp_path: pathlib.Path) -> None:
    path = str(tmp_path / "s.sqlite3")
    results: list[dict[str, Any]] = [
        {"test_id": "t::a", "outcome": "pass", "duration": 1e-07},
        {"test_id": "t::\u00e9", "failure": None},
    ]
    with Store(path) as store:
        store.add_run(_RUN, results)
        store.add_run(dict(_RUN, run_id="r2"), results, [json.dumps(r, separators=(",", ":")) for r in results])
    db = sqlite3.connect(path)
    rows = db.execute("SELECT run_id, test_id, payload FROM results ORDER BY rowid").fetchall()
    expected = [(r["test_id"], json.dumps(r, separators=(",", ":"))) for r in results]
    assert [(t, p) for _, t, p in rows] == expected * 2
    assert [r for r, _, _ in rows] == ["r", "r", "r2", "r2"]
    runs = db.execute("SELECT run_id, candidate_commit, complete FROM runs").fetchall()
    assert runs == [("r", "c", 1), ("r2", "c", 1)]


def test_a_clone_elsewhere_reads_what_the_repository_holds_and_its_writes_merge_back(tmp_path: pathlib.Path) -> None:
    """What a Ray task of certify-batch relies on: the rows a climb in the repository reads,
    handed to a store of a clone at another path, and what the clone's climb wrote handed back."""
    replaced = ((None, "unittest.case.TestCase.assertEqual"),)
    suite = SuiteRun(
        "s1", ("t",), {"t": []}, 0, {"t": _obs("t")}, {"t": ["m.py:1"]}, {"t": ["m.py"]}, {"t": ["::1"]}, replaced
    )
    binding = Binding("suite", "/repo", "b" * 40, "b" * 40, "/repo", "e" * 64, "pytest suite on B, cache key k")
    with Store(str(tmp_path / "driver.sqlite3")) as driver:
        driver.suite_add("k", suite)
        driver.suite_add("other-b", dataclasses.replace(suite, run_id="s2"))
        receipts.complete(driver, receipts.begin(driver, binding), 0, "", "", False, 1.0)
        driver.quarantine("/repo", [("t", "r", "C", "fail,pass", "abc", "then")])
        driver.quarantine("/elsewhere", [("u", "r", "C", "fail,pass", "abc", "then")])
        seed = driver.repository_rows("/repo", "k")
    assert (
        seed.count() == 1 + 1 + 1 + 1 + 1 + 1 + 1
    )  # suite run, test, address, replaced; intent, completion; quarantine
    with Store(str(tmp_path / "task.sqlite3")) as task:
        task.merge(seed.rekeyed({"/repo": "/tmp/clone"}))
        mark = task.marks()
        assert task.suite_lookup("k") == suite and task.suite_lookup("other-b") is None
        assert receipts.admit(task, dataclasses.replace(binding, repo="/tmp/clone", checkout="/tmp/clone")).action == (
            "reuse"
        )
        assert list(task.quarantined("/tmp/clone")) == ["t"]
        task.quarantine("/tmp/clone", [("v", "r2", "C", "pass,fail", "def", "now")])  # the clone's climb writes
        written = task.written_since(mark)
    assert written.count() == 1  # only what came after the mark
    with Store(str(tmp_path / "driver.sqlite3")) as driver:
        driver.merge(written.rekeyed({"/tmp/clone": "/repo"}))
        assert sorted(driver.quarantined("/repo")) == ["t", "v"]
        assert driver.quarantined("/tmp/clone") == {}
