"""The durable store: one SQLite file, WAL, append-only by construction.

Rows are inserted, never updated or deleted: triggers reject both, so a bug or a hostile plugin
cannot rewrite history. A result later contradicted stays; the newer one is added beside it and
readers take the newest row. Per-table concerns (runs, results, flake ledger, baseline cache)
are small functions over one connection rather than one god class.

Store format history (``STORE_VERSION``):

* ``1`` -- runs, results, flake_signatures, baseline_cache, meta, suite_runs, suite_tests.
* ``2`` -- the flake ledger is per repository and can be cleared (``flake_ledger``, replacing
  ``flake_signatures``, whose rows are carried over with the repository their run names);
  baseline receipts (``receipt_intents``, ``receipt_completions``, ``receipt_decisions``). A
  format-1 store is upgraded in place when opened: tables are added, nothing is rewritten.
* ``3`` -- ``suite_network``: the loopback addresses each test of a stored B suite run reached,
  which C's attempts are compared with. Older stores are upgraded by adding the table; their
  suite runs are not reused (the runner's policy version changed with it).
* ``4`` -- ``kill_rates``: the suite-strength audit's kill rate per function and commit, so a
  module whose kill rate falls over time shows it. Older stores are upgraded by adding the table.
* ``5`` -- ``suite_replaced``: the test frameworks' objects a stored B suite run found replaced
  (``originals``), which C's are compared with. Older stores are upgraded by adding the table;
  their suite runs are not reused (the runner's policy version changed with it).

One store hands rows to another (``Rows``): what a climb in a repository reads, or what was
written since a mark, merged elsewhere with the repository's path mapped -- so a climb in a clone
at another path (a Ray task of ``certify-batch``) reads and writes what the original repository's
store holds. The format is unchanged by it.

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple

from pytest_evidence import gitops
from pytest_evidence.errors import StoreCorrupt, StoreLocked, StoreVersionMismatch
from pytest_evidence.model import Observation
from pytest_evidence.stream import compact

STORE_VERSION = "5"
#: Formats this version opens (older ones are upgraded by adding tables).
READABLE_STORE_VERSIONS = ("1", "2", "3", "4", "5")

_TABLES = (
    "meta",
    "runs",
    "results",
    "flake_ledger",
    "baseline_cache",
    "suite_runs",
    "suite_tests",
    "suite_network",
    "suite_replaced",
    "receipt_intents",
    "receipt_completions",
    "receipt_decisions",
    "kill_rates",
)

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (          -- one row per key, written once
    key   TEXT NOT NULL,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (          -- one row per pytest session that typed results
    run_id           TEXT NOT NULL,
    created          TEXT NOT NULL,
    repo             TEXT NOT NULL,
    baseline_commit  TEXT,
    candidate_commit TEXT,
    env_fingerprint  TEXT NOT NULL,
    complete         INTEGER NOT NULL,
    exit_status      INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS results (       -- the typed results of a run, one JSON object each
    run_id  TEXT NOT NULL,
    test_id TEXT NOT NULL,
    payload TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS flake_ledger (  -- quarantines and clears, per repository
    repo           TEXT NOT NULL,
    test_id        TEXT NOT NULL,
    event          TEXT NOT NULL CHECK (event IN ('quarantine', 'clear')),
    run_id         TEXT NOT NULL,          -- the run that saw the flip; 'cli' or the run's id for a clear
    side           TEXT NOT NULL,          -- 'B' or 'C'; '' for a clear
    sequence       TEXT NOT NULL,          -- outcomes of the attempts, comma separated
    message_digest TEXT NOT NULL,          -- sha256 of the first failure message, 12 hex
    created        TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS flake_ledger_by_repo ON flake_ledger (repo, test_id);
CREATE TABLE IF NOT EXISTS baseline_cache (    -- B observations, keyed by tree+overlay+env
    cache_key TEXT NOT NULL,
    test_id   TEXT NOT NULL,
    payload   TEXT,                        -- Observation JSON; NULL: B did not report the test
    run_id    TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS baseline_by_key ON baseline_cache (cache_key, test_id);
CREATE TABLE IF NOT EXISTS suite_runs (        -- the runner's full B suite run, once per key
    cache_key TEXT NOT NULL,                   -- B tree + environment + pytest args + policy
    run_id    TEXT NOT NULL,
    collected TEXT NOT NULL,                   -- JSON list of node ids, in collection order
    markers   TEXT NOT NULL,                   -- JSON {node id: [marker names]}
    exit_code INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS suite_tests (       -- one row per test of a suite run
    cache_key TEXT NOT NULL,
    run_id    TEXT NOT NULL,
    test_id   TEXT NOT NULL,
    payload   TEXT,                            -- Observation JSON; NULL: not reported
    functions TEXT NOT NULL,                   -- JSON list of "path:first_line" reached on B
    files     TEXT NOT NULL                    -- JSON list of checkout files opened on B
);
CREATE INDEX IF NOT EXISTS suite_tests_by_key ON suite_tests (cache_key, run_id);
CREATE TABLE IF NOT EXISTS suite_network (     -- loopback addresses a test of a suite run reached
    cache_key TEXT NOT NULL,
    run_id    TEXT NOT NULL,
    test_id   TEXT,                            -- NULL: during collection
    address   TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS suite_replaced (    -- test frameworks' objects a suite run found replaced
    cache_key TEXT NOT NULL,
    run_id    TEXT NOT NULL,
    test_id   TEXT,                            -- NULL: by the end of collection
    name      TEXT NOT NULL                    -- dotted: asyncio.runners.Runner.run
);
CREATE TABLE IF NOT EXISTS receipt_intents (    -- written before a baseline command starts
    receipt         TEXT NOT NULL,
    kind            TEXT NOT NULL,             -- 'command' (evidence-runner baseline) or 'suite'
    repo            TEXT NOT NULL,
    ref             TEXT NOT NULL,
    head            TEXT NOT NULL,             -- full sha the ref named when the intent was written
    checkout        TEXT NOT NULL,
    env_fingerprint TEXT NOT NULL,
    command         TEXT NOT NULL,
    command_hash    TEXT NOT NULL,
    timeout         REAL,
    policy_version  TEXT NOT NULL,
    created         TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS receipt_completions ( -- written after it ended on its own
    receipt   TEXT NOT NULL,
    exit_code INTEGER NOT NULL,
    stdout    TEXT NOT NULL,                   -- bounded (head and tail)
    stderr    TEXT NOT NULL,
    truncated INTEGER NOT NULL,
    duration  REAL NOT NULL,
    created   TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS kill_rates (          -- the audit's result per function, per audited commit
    repo     TEXT NOT NULL,
    commit_  TEXT NOT NULL,
    path     TEXT NOT NULL,
    function TEXT NOT NULL,
    run      INTEGER NOT NULL,                 -- mutants run against the tests reaching it
    killed   INTEGER NOT NULL,
    seed     INTEGER NOT NULL,
    created  TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS receipt_decisions (   -- an operator's reconciliation of a held intent
    receipt  TEXT NOT NULL,
    decision TEXT NOT NULL CHECK (decision IN ('rerun', 'abandon')),
    created  TEXT NOT NULL
);
"""


RECEIPT_INTENT_FIELDS = (
    "receipt",
    "kind",
    "repo",
    "ref",
    "head",
    "checkout",
    "env_fingerprint",
    "command",
    "command_hash",
    "timeout",
    "policy_version",
    "created",
)
RECEIPT_COMPLETION_FIELDS = ("receipt", "exit_code", "stdout", "stderr", "truncated", "duration", "created")


#: The columns that name a repository by its real path, per table: ``Rows.rekeyed`` maps them.
_REPO_COLUMNS: Dict[str, Tuple[int, ...]] = {
    "runs": (2,),
    "flake_ledger": (0,),
    "receipt_intents": (2, 5),  # repo, checkout
    "kill_rates": (0,),
}


def _triggers() -> str:
    parts = []
    for table in _TABLES:
        for op in ("UPDATE", "DELETE"):
            parts.append(
                "CREATE TRIGGER IF NOT EXISTS %s_no_%s BEFORE %s ON %s "
                "BEGIN SELECT RAISE(ABORT, 'evidence store is append-only'); END;" % (table, op.lower(), op, table)
            )
    return "\n".join(parts)


def default_store(rootdir: str) -> str:
    """The store the plugin and the runner share by default: ``evidence/store.sqlite3`` in the
    repository's git directory (common to its worktrees, never committed), so ``evidence-runner
    flaky list`` finds the plugin's quarantine with no ``--store``. Outside a git repository:
    ``.pytest_cache/evidence/store.sqlite3``; the cache dir ignores itself, as pytest's does."""
    common = gitops.common_dir(rootdir)
    if common is not None:
        os.makedirs(os.path.join(common, "evidence"), exist_ok=True)
        return os.path.join(common, "evidence", "store.sqlite3")
    cache = os.path.join(rootdir, ".pytest_cache")
    os.makedirs(os.path.join(cache, "evidence"), exist_ok=True)
    ignore = os.path.join(cache, ".gitignore")
    if not os.path.exists(ignore):
        with open(ignore, "w", encoding="utf-8") as fh:
            fh.write("# Created by pytest automatically.\n*\n")
    return os.path.join(cache, "evidence", "store.sqlite3")


@dataclass(frozen=True)
class SuiteRun:
    """The whole suite on B with per-test dependencies: what every candidate against B reuses."""

    run_id: str
    collected: Tuple[str, ...]
    markers: Mapping[str, List[str]]
    exit_code: int
    results: Mapping[str, Optional[Observation]]
    functions: Mapping[str, List[str]]
    files: Mapping[str, List[str]]
    network: Mapping[Optional[str], List[str]] = field(default_factory=dict)  # test id (None: collection) -> loopback
    replaced: Tuple[Tuple[Optional[str], str], ...] = ()  # (test id, None: by collection's end; dotted name)


@dataclass(frozen=True)
class Rows:
    """Rows of a store, per table in the order they were written: what one store hands another.

    Plain tuples of SQLite values, so they travel pickled (a Ray object) or as JSON.
    """

    tables: Mapping[str, Tuple[Tuple[Any, ...], ...]]

    def count(self) -> int:
        return sum(len(rows) for rows in self.tables.values())

    def rekeyed(self, paths: Mapping[str, str]) -> Rows:
        """The same rows with every repository path that ``paths`` names replaced by its image."""

        def mapped(table: str, row: Tuple[Any, ...]) -> Tuple[Any, ...]:
            columns = _REPO_COLUMNS.get(table, ())
            return tuple(paths.get(v, v) if i in columns else v for i, v in enumerate(row))

        return Rows({t: tuple(mapped(t, row) for row in rows) for t, rows in self.tables.items()})


class Store:
    """An open store. Use as a context manager; every write is its own short transaction.

    ``option`` is the command-line option that chose ``path`` (the plugin's ``--evidence-store``,
    the runner's ``--store``): every error names it, so the user is told what to change.
    ``timeout`` bounds how long a write waits for another process's lock.
    """

    def __init__(self, path: str, timeout: float = 10.0, option: str = "--evidence-store") -> None:
        self.path = path
        self.option = option
        with self._translated():
            parent = os.path.dirname(os.path.abspath(path))
            os.makedirs(parent, exist_ok=True)
            self._db = sqlite3.connect(path, timeout=timeout, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.executescript(SCHEMA + _triggers())
            self._check_version()

    @contextlib.contextmanager
    def _translated(self) -> Iterator[None]:
        """The one place where SQLite's and the file system's complaints become ours."""
        try:
            yield
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise StoreLocked(
                    "evidence store %s is locked by another process; wait, or choose another with %s"
                    % (self.path, self.option)
                ) from None
            raise StoreCorrupt(
                "evidence store %s cannot be used (%s); choose another with %s" % (self.path, exc, self.option)
            ) from None
        except sqlite3.DatabaseError as exc:
            raise StoreCorrupt(
                "evidence store %s is corrupt (%s); move it aside or choose another with %s"
                % (self.path, exc, self.option)
            ) from None
        except OSError as exc:
            raise StoreCorrupt(
                "evidence store %s cannot be created (%s); choose another with %s"
                % (self.path, exc.strerror or exc, self.option)
            ) from None

    def check_writable(self) -> None:
        """Take the write lock once and let it go: a store another process holds fails now."""
        with self._translated():
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("ROLLBACK")

    def _read(self, sql: str, args: Sequence[Any] = ()) -> List[Tuple[Any, ...]]:
        with self._translated():
            return list(self._db.execute(sql, args))

    def _check_version(self) -> None:
        rows = list(self._db.execute("SELECT value FROM meta WHERE key = 'store_version' ORDER BY rowid DESC LIMIT 1"))
        row = rows[0] if rows else None
        if row is not None and row[0] not in READABLE_STORE_VERSIONS:
            raise StoreVersionMismatch(
                "evidence store %s has format %s; this version reads formats %s; choose another with %s"
                % (self.path, row[0], ", ".join(READABLE_STORE_VERSIONS), self.option)
            )
        if row is None or row[0] != STORE_VERSION:
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")
                if row is not None and row[0] == "1":
                    self._carry_over_flake_signatures()
                self._db.execute("INSERT INTO meta VALUES ('store_version', ?)", (STORE_VERSION,))

    def _carry_over_flake_signatures(self) -> None:
        """Format 1 kept flake signatures without a repository: take it from the run's row."""
        self._db.execute(
            "INSERT INTO flake_ledger SELECT"
            " COALESCE((SELECT repo FROM runs WHERE runs.run_id = f.run_id LIMIT 1), ''),"
            " f.test_id, 'quarantine', f.run_id, f.side, f.sequence, f.message_digest, f.created"
            " FROM flake_signatures AS f ORDER BY f.rowid"
        )

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    def _write(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        with self._translated(), self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany(sql, rows)

    # -- rows handed to another store ---------------------------------------------------------

    def marks(self) -> Dict[str, int]:
        """The last row of every table (but ``meta``) now: ``written_since`` takes what comes after."""
        return {t: self._read("SELECT COALESCE(MAX(rowid), 0) FROM %s" % t)[0][0] for t in _TABLES if t != "meta"}

    def written_since(self, marks: Mapping[str, int]) -> Rows:
        """Every row written after ``marks``, table by table, oldest first."""
        sql = "SELECT * FROM %s WHERE rowid > ? ORDER BY rowid"
        return Rows({t: tuple(self._read(sql % t, (n,))) for t, n in marks.items()})

    def repository_rows(self, repo: str, cache_key: str) -> Rows:
        """What a climb in ``repo`` against the B stored under ``cache_key`` reads: the
        repository's flake ledger, kill rates and receipts (with their completions and
        decisions), and the suite run stored under the key."""
        receipts = "receipt IN (SELECT receipt FROM receipt_intents WHERE repo = ?)"
        where = {
            "flake_ledger": ("repo = ?", repo),
            "kill_rates": ("repo = ?", repo),
            "receipt_intents": ("repo = ?", repo),
            "receipt_completions": (receipts, repo),
            "receipt_decisions": (receipts, repo),
            "suite_runs": ("cache_key = ?", cache_key),
            "suite_tests": ("cache_key = ?", cache_key),
            "suite_network": ("cache_key = ?", cache_key),
            "suite_replaced": ("cache_key = ?", cache_key),
        }
        return Rows(
            {
                t: tuple(self._read("SELECT * FROM %s WHERE %s ORDER BY rowid" % (t, cond), (arg,)))
                for t, (cond, arg) in where.items()
            }
        )

    def merge(self, rows: Rows) -> None:
        """Append ``rows`` (from another store) in one transaction: a reader sees all or none.

        Appending is all a merge does: rows merged twice are there twice."""
        with self._translated(), self._db:
            self._db.execute("BEGIN IMMEDIATE")
            for table, found in rows.tables.items():
                if table not in _TABLES or table == "meta":
                    raise ValueError("no table %r to merge into" % table)
                for row in found:
                    self._db.execute("INSERT INTO %s VALUES (%s)" % (table, ", ".join("?" * len(row))), row)

    # -- runs and results -------------------------------------------------------------------

    def add_run(
        self, row: Mapping[str, Any], results: Sequence[Mapping[str, Any]], encoded: Optional[Sequence[str]] = None
    ) -> None:
        """The run's row and its results' rows, in one transaction: a reader never sees a run
        without its results. ``encoded``: each result as ``json.dumps(r, separators=(",", ":"))``
        gives it, when the caller has that text already."""
        run = (
            row["run_id"],
            row["created"],
            row["repo"],
            row["baseline_commit"],
            row["candidate_commit"],
            row["env_fingerprint"],
            int(row["complete"]),
            row["exit_status"],
        )
        texts = [compact(r) for r in results] if encoded is None else encoded
        assert len(texts) == len(results)
        payloads = [(row["run_id"], r["test_id"], t) for r, t in zip(results, texts)]  # noqa: B905 - checked
        with self._translated(), self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?)", run)
            self._db.executemany("INSERT INTO results VALUES (?, ?, ?)", payloads)

    # -- kill rates -------------------------------------------------------------------------

    def add_kill_rates(self, repo: str, commit: str, rows: Sequence[Tuple[str, str, int, int, int, str]]) -> None:
        """Rows of ``(path, function, run, killed, seed, created)`` from one audit of ``commit``."""
        self._write("INSERT INTO kill_rates VALUES (?, ?, ?, ?, ?, ?, ?, ?)", [(repo, commit, *row) for row in rows])

    def kill_rates(self, repo: str, path: Optional[str] = None) -> List[Dict[str, Any]]:
        """Every audit result of ``repo`` (of one file), oldest first: a falling kill rate shows."""
        rows = self._read(
            "SELECT commit_, path, function, run, killed, seed, created FROM kill_rates WHERE repo = ?"
            + (" AND path = ?" if path is not None else "")
            + " ORDER BY rowid",
            (repo,) if path is None else (repo, path),
        )
        keys = ("commit", "path", "function", "run", "killed", "seed", "created")
        return [dict(zip(keys, row)) for row in rows]  # noqa: B905 - one key per column

    # -- flake ledger -----------------------------------------------------------------------

    def quarantine(self, repo: str, rows: Sequence[Tuple[str, str, str, str, str, str]]) -> None:
        """Rows of ``(test_id, run_id, side, sequence, message_digest, created)``: tests that flipped."""
        self._write(
            "INSERT INTO flake_ledger VALUES (?, ?, 'quarantine', ?, ?, ?, ?, ?)", [(repo, *row) for row in rows]
        )

    def clear_quarantine(self, repo: str, test_id: str, created: str, by: str = "cli") -> None:
        """End ``test_id``'s quarantine: ``by`` the operator (``cli``), or the run whose flips
        it was (their run id)."""
        self._write("INSERT INTO flake_ledger VALUES (?, ?, 'clear', ?, '', '', '', ?)", [(repo, test_id, by, created)])

    def _ledger(self, repo: str) -> List[Tuple[str, str, str, str, str, str, str]]:
        return self._read(
            "SELECT test_id, event, run_id, side, sequence, message_digest, created FROM flake_ledger "
            "WHERE repo = ? ORDER BY rowid",
            (repo,),
        )

    def quarantined(self, repo: str) -> Dict[str, List[str]]:
        """Tests quarantined in ``repo`` and not cleared since: their signatures, oldest first."""
        current: Dict[str, List[str]] = {}
        for test_id, event, run_id, side, seq, digest, _created in self._ledger(repo):
            if event == "clear":
                current.pop(test_id, None)
            else:
                current.setdefault(test_id, []).append("%s:%s:%s:%s" % (run_id, side, seq, digest))
        return current

    def flake_history(self, repo: str, test_ids: Iterable[str]) -> Dict[str, List[str]]:
        """Every signature ever recorded per test (cleared or not), oldest first, as
        ``run:side:sequence:digest`` strings; a clear appears as ``cleared:DATE``."""
        wanted = set(test_ids)
        history: Dict[str, List[str]] = {}
        for test_id, event, run_id, side, seq, digest, created in self._ledger(repo):
            if test_id in wanted:
                entry = "cleared:%s" % created if event == "clear" else "%s:%s:%s:%s" % (run_id, side, seq, digest)
                history.setdefault(test_id, []).append(entry)
        return history

    # -- baseline cache ---------------------------------------------------------------------

    def baseline_lookup(self, cache_key: str, test_ids: Iterable[str]) -> Dict[str, Optional[Observation]]:
        """Cached B observations for ``test_ids`` (newest row wins); absent ids are not cached."""
        wanted = set(test_ids)
        found: Dict[str, Optional[Observation]] = {}
        for test_id, payload in self._read(
            "SELECT test_id, payload FROM baseline_cache WHERE cache_key = ? ORDER BY rowid",
            (cache_key,),
        ):
            if test_id in wanted:
                found[test_id] = None if payload is None else Observation.from_dict(json.loads(payload))
        return found

    def baseline_add(self, cache_key: str, run_id: str, observed: Mapping[str, Optional[Observation]]) -> None:
        self._write(
            "INSERT INTO baseline_cache VALUES (?, ?, ?, ?)",
            [
                (cache_key, tid, None if obs is None else json.dumps(obs.to_dict()), run_id)
                for tid, obs in sorted(observed.items())
            ],
        )

    # -- the runner's baseline suite -------------------------------------------------------------

    def suite_lookup(self, cache_key: str) -> Optional[SuiteRun]:
        """The newest complete suite run stored under ``cache_key``, if any."""
        rows = self._read(
            "SELECT run_id, collected, markers, exit_code FROM suite_runs WHERE cache_key = ? "
            "ORDER BY rowid DESC LIMIT 1",
            (cache_key,),
        )
        if not rows:
            return None
        run_id, collected, markers, exit_code = rows[0]
        results: Dict[str, Optional[Observation]] = {}
        functions: Dict[str, List[str]] = {}
        files: Dict[str, List[str]] = {}
        for test_id, payload, funcs, opened in self._read(
            "SELECT test_id, payload, functions, files FROM suite_tests WHERE cache_key = ? AND run_id = ?",
            (cache_key, run_id),
        ):
            results[test_id] = None if payload is None else Observation.from_dict(json.loads(payload))
            functions[test_id] = json.loads(funcs)
            files[test_id] = json.loads(opened)
        network: Dict[Optional[str], List[str]] = {}
        for test_id, address in self._read(
            "SELECT test_id, address FROM suite_network WHERE cache_key = ? AND run_id = ?", (cache_key, run_id)
        ):
            network.setdefault(test_id, []).append(address)
        replaced = self._read(
            "SELECT test_id, name FROM suite_replaced WHERE cache_key = ? AND run_id = ? ORDER BY rowid",
            (cache_key, run_id),
        )
        return SuiteRun(
            run_id,
            tuple(json.loads(collected)),
            json.loads(markers),
            exit_code,
            results,
            functions,
            files,
            network,
            tuple((test_id, name) for test_id, name in replaced),
        )

    def suite_add(self, cache_key: str, suite: SuiteRun) -> None:
        """Tests first, then the run row: a reader never sees a run without its tests."""
        self._write(
            "INSERT INTO suite_network VALUES (?, ?, ?, ?)",
            [(cache_key, suite.run_id, t, a) for t, addresses in suite.network.items() for a in addresses],
        )
        self._write(
            "INSERT INTO suite_replaced VALUES (?, ?, ?, ?)",
            [(cache_key, suite.run_id, t, name) for t, name in suite.replaced],
        )
        self._write(
            "INSERT INTO suite_tests VALUES (?, ?, ?, ?, ?, ?)",
            [
                (
                    cache_key,
                    suite.run_id,
                    tid,
                    None if obs is None else json.dumps(obs.to_dict()),
                    json.dumps(list(suite.functions.get(tid, []))),
                    json.dumps(list(suite.files.get(tid, []))),
                )
                for tid, obs in suite.results.items()
            ],
        )
        self._write(
            "INSERT INTO suite_runs VALUES (?, ?, ?, ?, ?)",
            [
                (
                    cache_key,
                    suite.run_id,
                    json.dumps(list(suite.collected)),
                    json.dumps(dict(suite.markers)),
                    suite.exit_code,
                )
            ],
        )

    # -- baseline receipts -----------------------------------------------------------------------

    def receipt_intent(self, row: Mapping[str, Any]) -> None:
        """Committed before the command starts: a crash after this line leaves a held receipt."""
        self._write(
            "INSERT INTO receipt_intents VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [tuple(row[k] for k in RECEIPT_INTENT_FIELDS)],
        )

    def receipt_complete(self, row: Mapping[str, Any]) -> None:
        self._write(
            "INSERT INTO receipt_completions VALUES (?, ?, ?, ?, ?, ?, ?)",
            [tuple(row[k] for k in RECEIPT_COMPLETION_FIELDS)],
        )

    def receipt_decide(self, receipt: str, decision: str, created: str) -> None:
        self._write("INSERT INTO receipt_decisions VALUES (?, ?, ?)", [(receipt, decision, created)])

    def receipts(self, receipt: Optional[str] = None, repo: Optional[str] = None) -> List[Dict[str, Any]]:
        """Intents (newest last) with their ``completion`` and ``decision`` (None when absent)."""
        sql = "SELECT %s FROM receipt_intents" % ", ".join(RECEIPT_INTENT_FIELDS)
        where, args = [], []
        if receipt is not None:
            where.append("receipt = ?")
            args.append(receipt)
        if repo is not None:
            where.append("repo = ?")
            args.append(repo)
        if where:
            sql += " WHERE " + " AND ".join(where)
        found = []
        for values in self._read(sql + " ORDER BY rowid", args):
            intent = dict(zip(RECEIPT_INTENT_FIELDS, values))  # noqa: B905 - the SELECT names these fields
            done = next(
                iter(
                    self._read(
                        "SELECT %s FROM receipt_completions WHERE receipt = ? ORDER BY rowid LIMIT 1"
                        % ", ".join(RECEIPT_COMPLETION_FIELDS),
                        (intent["receipt"],),
                    )
                ),
                None,
            )
            decided = next(
                iter(
                    self._read(
                        "SELECT decision, created FROM receipt_decisions WHERE receipt = ? ORDER BY rowid LIMIT 1",
                        (intent["receipt"],),
                    )
                ),
                None,
            )
            intent["completion"] = None if done is None else dict(zip(RECEIPT_COMPLETION_FIELDS, done))  # noqa: B905
            intent["decision"] = None if decided is None else {"decision": decided[0], "created": decided[1]}
            found.append(intent)
        return found
