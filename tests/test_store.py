"""The store is append-only by construction, and a bad store is one clear error."""

from __future__ import annotations

import pathlib
import sqlite3

import pytest

from pytest_evidence.errors import StoreCorrupt, StoreLocked, StoreVersionMismatch
from pytest_evidence.model import Observation, Outcome
from pytest_evidence.store import Store


def _obs(tid: str) -> Observation:
    return Observation(tid, Outcome.PASS, 0.1, None, "", (Outcome.PASS,))


@pytest.mark.parametrize("table", ["runs", "results", "flake_signatures", "baseline_cache", "meta"])
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
        store.add_flake_signatures([("t", "r", "C", "fail,pass", "abc", "now")])
        store.baseline_add("k", "r", {"t": _obs("t")})
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


def test_flake_history_is_ordered_per_test(tmp_path: pathlib.Path) -> None:
    with Store(str(tmp_path / "s.sqlite3")) as store:
        store.add_flake_signatures([("t", "r1", "C", "fail,pass", "aaa", "x"), ("u", "r1", "B", "pass", "b", "x")])
        store.add_flake_signatures([("t", "r2", "B", "error,pass", "ccc", "x")])
        assert store.flake_history(["t"]) == {"t": ["r1:C:fail,pass:aaa", "r2:B:error,pass:ccc"]}


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
            store.add_flake_signatures([("t", "r", "C", "fail,pass", "d", "x")])
    finally:
        holder.execute("ROLLBACK")
        holder.close()
