"""Session end: replay B, type the results, write the record and the store, set the exit code.

This is the only place where the concerns meet; each step is a call into the module that owns
it. Registered on the process that holds the ``Recorder`` (never on an xdist worker).

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import gc
import os
import tempfile
import uuid
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, TypeVar

import pytest

from pytest_evidence import environment, gitops, locate, summary
from pytest_evidence.assemble import empty_collection, flake_rows, network_detections, quarantine, type_evidence
from pytest_evidence.errors import EvidenceError, StoreError, ToolFailed, UnknownTestId
from pytest_evidence.model import Detection, DetectionKind, EvidenceRecord, Observation, Origin
from pytest_evidence.options import Settings
from pytest_evidence.recorder import Recorder
from pytest_evidence.store import Store
from pytest_evidence.stream import compact

if TYPE_CHECKING:  # imported where a baseline is asked for: a run without one never needs them
    from pytest_evidence import replay

T = TypeVar("T")

#: Exit status when evidence was asked for and the run proved nothing (nothing ran).
EXIT_NOTHING_PROVED = 5

_USAGE_ERROR = 4  # pytest.ExitCode.USAGE_ERROR: how the plugin reports every EvidenceError


def match_designated(specs: Sequence[str], test_ids: Sequence[str]) -> Dict[str, List[str]]:
    """Each ``--reproducer`` spec -> the test ids it names (exact, or a parametrized/child id)."""
    found: Dict[str, List[str]] = {}
    for spec in specs:
        found[spec] = [t for t in test_ids if t == spec or t.startswith(spec + "[") or t.startswith(spec + "::")]
    return found


def unknown_designated(specs: Sequence[str], test_ids: Sequence[str]) -> List[str]:
    return [spec for spec, ids in match_designated(specs, test_ids).items() if not ids]


class BaselinePlan:
    """B resolved and its overlay checked at configure time, so bad input fails before tests run."""

    def __init__(self, config: pytest.Config, settings: Settings) -> None:
        from pytest_evidence import overlay, replay

        assert settings.baseline is not None
        rootdir = str(config.rootpath)
        self.git_root = gitops.toplevel(rootdir)
        commit = gitops.resolve_commit(self.git_root, settings.baseline)
        self.prefix = replay.rootdir_prefix(self.git_root, rootdir)
        python_files = list(config.getini("python_files")) or ["test_*.py", "*_test.py"]
        self.plan = overlay.plan(self.git_root, commit, python_files)
        self.origins = overlay.OriginResolver(self.git_root, self.plan, self.prefix)
        self.reruns = settings.reruns

    def request(self, env_fingerprint: str) -> replay.BaselineRequest:
        from pytest_evidence import replay

        return replay.BaselineRequest(
            git_root=self.git_root,
            rootdir_prefix=self.prefix,
            plan=self.plan,
            env_fingerprint=env_fingerprint,
            reruns=self.reruns,
        )


def record_json(doc: Dict[str, Any], results: Sequence[str]) -> str:
    """``json.dumps(doc, separators=(",", ":"))`` of a record whose results are already encoded
    (``results``, in order): the same text, without encoding every result a second time."""
    parts = []
    for key, value in doc.items():
        text = "[%s]" % ",".join(results) if key == "results" else compact(value)
        parts.append("%s:%s" % (compact(key), text))
    return "{%s}" % ",".join(parts)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while the record is built: that allocates some objects
    per test (results, annotations, their dicts and their JSON) and creates no cycle, yet the
    allocations alone set off a full collection over everything the session holds -- pytest's
    items, the modules -- which cost 15-30 ms on 2,000 trivial tests, more than building the
    record itself. No test code runs here; the collector is on again when the record is written."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _write_atomically(path: str, text: str) -> None:
    """The record and a newline, as ``output.write_json`` writes one: a reader never sees half a
    record, and a failure leaves no temp file."""
    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=parent, prefix=".%s." % os.path.basename(path), suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.write("\n")
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)  # as open() would have made it, not mkstemp's 0600
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _why_incomplete(exitstatus: int, observed: int, collected: int) -> Optional[str]:
    """Why a session's record is incomplete (``incomplete_reason``), or None when it is not."""
    if exitstatus == pytest.ExitCode.INTERRUPTED:
        return "interrupted"
    if exitstatus == pytest.ExitCode.INTERNAL_ERROR:
        return "pytest's internal error"
    if exitstatus == pytest.ExitCode.USAGE_ERROR:
        return "pytest's usage error"
    if observed < collected:
        return "%d of %d collected test(s) reported no result" % (collected - observed, collected)
    return None


class _StoreSession:
    """The store at session end. A store that cannot be used costs the ledger, never the record.

    Reads answer ``default`` once the store has failed; the first failure is kept and reported
    (a ``store_unavailable`` detection, pytest's usage-error status and one line on stderr).
    """

    def __init__(self, settings: Settings) -> None:
        self.error: Optional[EvidenceError] = None
        self.store: Optional[Store] = None
        try:
            self.store = Store(settings.store, settings.store_timeout)
        except StoreError as exc:
            self.error = exc

    def call(self, action: Callable[[Store], T], default: T) -> T:
        if self.store is None:
            return default
        try:
            return action(self.store)
        except StoreError as exc:
            self.error = self.error or exc
            return default

    def close(self) -> None:
        if self.store is not None:
            self.store.close()


class Finisher:
    """Owns the session's end: everything after the last test report."""

    def __init__(
        self, config: pytest.Config, settings: Settings, recorder: Recorder, baseline: Optional[BaselinePlan]
    ) -> None:
        self.config = config
        self.settings = settings
        self.recorder = recorder
        self.baseline = baseline
        self.record: Optional[Dict[str, Any]] = None
        self.problem: Optional[str] = None  # one line for the terminal: why the status is not the tests'
        # The same, for pytest's closing line ("2 passed, 1 quarantined as flaky (exit 1)"): the
        # last thing a reader sees must not read green when the exit is not 0.
        self.closing: Optional[Tuple[str, List[str]]] = None
        self.refused = False
        self.run_id = uuid.uuid4().hex[:16]
        self.forgery: Optional[str] = None  # the first line of B's stream its plugin did not write

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        unknown = unknown_designated(self.settings.reproducers, [i.nodeid for i in session.items])
        if unknown:
            self.refused = True  # bad input: no test runs, no record, no stream left behind
            self.recorder.discard_stream()
            error = UnknownTestId("--reproducer names no collected test: %s" % ", ".join(unknown))
            raise pytest.UsageError(error.line("evidence"))

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.refused:
            return
        with _collector_paused():
            session.exitstatus = self._finish(int(exitstatus))

    def _finish(self, exitstatus: int) -> int:
        root = str(self.config.rootpath)  # what node ids are relative to: failures are located alike
        observations = locate.observations(self.recorder.observed.values(), root)
        collected = self.recorder.collected or []
        incomplete = _why_incomplete(exitstatus, len(observations), len(collected))
        complete = incomplete is None
        env = environment.capture()
        repo = os.path.realpath(str(self.config.rootpath))
        ledger = _StoreSession(self.settings)
        try:
            baseline, baseline_run = self._baseline(ledger, observations, env.fingerprint, complete)
        except (KeyboardInterrupt, ToolFailed) as exc:
            # What ran on C stands; what B would have said is unknown, and the record says why.
            why = "interrupted" if isinstance(exc, KeyboardInterrupt) else exc.line("evidence")
            baseline, baseline_run = {}, {"executed": 0, "cached": 0, "exit_code": None, "skipped": why}
            complete = False
            exitstatus = int(pytest.ExitCode.INTERRUPTED if isinstance(exc, KeyboardInterrupt) else _USAGE_ERROR)
            self.problem = incomplete = "the baseline replay did not finish: %s" % why
        now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        rows = flake_rows(self.run_id, "C", observations, now)
        rows += flake_rows(self.run_id, "B", (baseline or {}).values(), now)
        nothing: Dict[str, List[str]] = {}
        held = ledger.call(lambda s: s.quarantined(repo), nothing)  # before this run's flips join it
        history = ledger.call(lambda s: s.flake_history(repo, [o.test_id for o in observations]), nothing)
        if rows:
            ledger.call(lambda s: s.quarantine(repo, rows), None)
        if held:
            observations = [quarantine(o, held) or o for o in observations]
            if baseline is not None:
                baseline = {t: quarantine(o, held) for t, o in baseline.items()}
        designated = {
            t
            for ids in match_designated(self.settings.reproducers, [o.test_id for o in observations]).values()
            for t in ids
        }
        empty = empty_collection(
            len(collected) + self.recorder.deselected, len(collected), [o.outcome for o in observations]
        )
        if empty is not None and self.settings.proves_something and exitstatus == 0:
            exitstatus = EXIT_NOTHING_PROVED
        if exitstatus == 0 and held and any(o.test_id in held for o in observations):
            exitstatus = int(pytest.ExitCode.TESTS_FAILED)  # a quarantined test is never green
            quarantined = [o.test_id for o in observations if o.test_id in held]
            self.problem = "exit 1: %d test(s) quarantined as flaky, first %s" % (len(quarantined), quarantined[0])
            self.closing = ("quarantined as flaky (exit 1)", quarantined)
        forged = None
        if self.forgery is not None:
            forged = Detection(
                DetectionKind.TAMPER,
                "the baseline replay's result stream has a line its plugin did not write (%s); "
                "B's results from there on are not used" % self.forgery,
                detail="stream_forged",
            )
            if exitstatus == 0:  # what B said was tampered with: the run is not green
                exitstatus = int(pytest.ExitCode.TESTS_FAILED)
                self.problem = "exit 1: the baseline replay's result stream was forged (%s)" % self.forgery
                self.closing = ("forged baseline stream (exit 1)", [self.forgery])
        candidate_commit = self._candidate_commit()
        typed = type_evidence(
            candidate=observations,
            baseline=baseline,
            origin_of=self.baseline.origins.origin if self.baseline else (lambda _t: Origin.UNKNOWN),
            designated=designated,
            expected_change=(),
            candidate_commit=candidate_commit,
            exit_code=exitstatus,
            flaky_history=history,
            affected=lambda _t: None,
            exclusive=bool(self.settings.reproducers),
        )
        detections = ([empty] if empty is not None else []) + ([forged] if forged is not None else [])
        detections += list(typed.detections)
        detections += network_detections(self.recorder.network, "C")
        record = EvidenceRecord(
            run_id=self.run_id,
            created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            complete=complete,
            incomplete_reason=incomplete,
            repo=str(self.config.rootpath),
            baseline_commit=None if self.baseline is None else self.baseline.plan.baseline_commit,
            candidate_commit=candidate_commit,
            environment=env,
            results=typed.results,
            annotations=typed.annotations,
            detections=tuple(detections),
            exit_status=exitstatus,
            baseline_run=baseline_run,
            collected=len(collected),
            not_run=tuple(t for t in collected if t not in self.recorder.observed),
        )
        doc = record.to_dict()
        # Each result is encoded once: the store keeps it as its row, the record splices it in.
        encoded = [compact(r) for r in doc["results"]]
        ledger.call(
            lambda s: s.add_run(
                {
                    "run_id": self.run_id,
                    "created": record.created,
                    "repo": record.repo,
                    "baseline_commit": record.baseline_commit,
                    "candidate_commit": record.candidate_commit,
                    "env_fingerprint": env.fingerprint,
                    "complete": complete,
                    "exit_status": exitstatus,
                },
                doc["results"],
                encoded,
            ),
            None,
        )
        if ledger.error is not None:
            unavailable = Detection(
                DetectionKind.STORE_UNAVAILABLE,
                "%s: the flake ledger was not consulted or updated" % ledger.error.line("evidence"),
            )
            exitstatus = _USAGE_ERROR
            record = dataclasses.replace(record, detections=(*record.detections, unavailable), exit_status=exitstatus)
            self.problem = ledger.error.line("evidence") + "; the record was written without it"
            doc = record.to_dict()
        self.record = doc
        if self.settings.out:
            _write_atomically(self.settings.out, record_json(doc, encoded))
        ledger.close()
        self.recorder.finish_stream(exitstatus)
        return exitstatus

    def _baseline(
        self, ledger: _StoreSession, observations: Sequence[Observation], fingerprint: str, complete: bool
    ) -> Tuple[Optional[Dict[str, Optional[Observation]]], Optional[Dict[str, Any]]]:
        if self.baseline is None:
            return None, None
        from pytest_evidence import replay

        if not complete:
            return {}, {"executed": 0, "cached": 0, "exit_code": None, "skipped": "session incomplete"}
        request = self.baseline.request(fingerprint)
        key = request.cache_key()
        ids = [o.test_id for o in observations]
        uncached: Dict[str, Optional[Observation]] = {}
        cached = ledger.call(lambda s: s.baseline_lookup(key, ids), uncached)
        todo = replay.missing(ids, cached)
        fresh = replay.run_on_baseline(request, todo) if todo else None
        if fresh is not None and fresh.forgery is not None:
            self.forgery = fresh.forgery  # a tamper detection; what B said is not cached
        elif fresh is not None:
            ledger.call(lambda s: s.baseline_add(key, self.run_id, fresh.observed), None)
        info: Dict[str, Any] = {
            "cache_key": key,
            "executed": len(todo),
            "cached": len(ids) - len(todo),
            "exit_code": None if fresh is None else fresh.exit_code,
            "stderr_tail": "" if fresh is None else fresh.stderr_tail,
            "overlay": sorted(self.baseline.plan.changed),
            "overlay_deleted": list(self.baseline.plan.deleted),
        }
        return replay.merge_runs(cached, fresh), info

    def _candidate_commit(self) -> Optional[str]:
        root = self.baseline.git_root if self.baseline else str(self.config.rootpath)
        own = [p for p in (self.settings.out, self.settings.stream, self.settings.store) if p]
        own += [p + suffix for p in own for suffix in ("-wal", "-shm")]
        try:
            return gitops.head_state(root, own)
        except EvidenceError:
            return None

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.record is None:
            return
        terminalreporter.section("evidence")
        for text, warn in summary.lines(self.record, self.settings.out or ""):
            terminalreporter.write_line(text, yellow=warn, bold=warn)
        if self.problem:
            terminalreporter.write_line(self.problem, red=True, bold=True)
        if self.closing is not None:
            label, members = self.closing
            terminalreporter.stats.setdefault(label, []).extend(members)
