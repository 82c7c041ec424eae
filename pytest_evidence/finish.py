"""Session end: replay B, type the results, write the record and the store, set the exit code.

This is the only place where the concerns meet; each step is a call into the module that owns
it. Registered on the process that holds the ``Recorder`` (never on an xdist worker).
"""

from __future__ import annotations

import datetime
import json
import os
import uuid
from typing import Any, Dict, List, Mapping, Optional, Sequence

import pytest

from pytest_evidence import environment, gitops, overlay, replay, summary
from pytest_evidence.assemble import empty_collection, flake_rows, network_detections, quarantine, type_evidence
from pytest_evidence.errors import EvidenceError, UnknownTestId
from pytest_evidence.model import EvidenceRecord, Observation, Origin
from pytest_evidence.options import Settings
from pytest_evidence.recorder import Recorder
from pytest_evidence.store import Store

#: Exit status when evidence was asked for and the run proved nothing (nothing ran).
EXIT_NOTHING_PROVED = 5

_INCOMPLETE_STATUSES = (2, 3, 4)  # interrupted, internal error, usage error


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
        return replay.BaselineRequest(
            git_root=self.git_root,
            rootdir_prefix=self.prefix,
            plan=self.plan,
            env_fingerprint=env_fingerprint,
            reruns=self.reruns,
        )


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
        self.run_id = uuid.uuid4().hex[:16]

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        unknown = unknown_designated(self.settings.reproducers, [i.nodeid for i in session.items])
        if unknown:
            raise pytest.UsageError(str(UnknownTestId("--reproducer names no collected test: %s" % ", ".join(unknown))))

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        try:
            self._finish(session, int(exitstatus))
        except EvidenceError as exc:
            self.recorder.finish_stream(int(session.exitstatus))
            pytest.exit("evidence: %s" % exc, returncode=4)

    def _finish(self, session: pytest.Session, exitstatus: int) -> None:
        observations = list(self.recorder.observed.values())
        collected = self.recorder.collected or []
        complete = exitstatus not in _INCOMPLETE_STATUSES and len(observations) >= len(collected)
        env = environment.capture()
        repo = os.path.realpath(str(self.config.rootpath))
        with Store(self.settings.store) as store:
            baseline, baseline_run = self._baseline(store, observations, env.fingerprint, complete)
            now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
            rows = flake_rows(self.run_id, "C", observations, now)
            rows += flake_rows(self.run_id, "B", (baseline or {}).values(), now)
            held = store.quarantined(repo)  # before this run's flips join it: they are flaky already
            history = store.flake_history(repo, [o.test_id for o in observations])
            if rows:
                store.quarantine(repo, rows)
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
            if exitstatus == 0 and any(o.test_id in held for o in observations):
                exitstatus = int(pytest.ExitCode.TESTS_FAILED)  # a quarantined test is never green
            session.exitstatus = exitstatus
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
            )
            detections = ([empty] if empty is not None else []) + list(typed.detections)
            detections += network_detections(self.recorder.network, "C")
            record = EvidenceRecord(
                run_id=self.run_id,
                created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                complete=complete,
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
            store.add_run(
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
            )
        self.record = doc
        if self.settings.out:
            _write_json(self.settings.out, doc)
        self.recorder.finish_stream(exitstatus)

    def _baseline(
        self, store: Store, observations: Sequence[Observation], fingerprint: str, complete: bool
    ) -> tuple[Optional[Dict[str, Optional[Observation]]], Optional[Dict[str, Any]]]:
        if self.baseline is None:
            return None, None
        if not complete:
            return {}, {"executed": 0, "cached": 0, "exit_code": None, "skipped": "session incomplete"}
        request = self.baseline.request(fingerprint)
        key = request.cache_key()
        ids = [o.test_id for o in observations]
        cached = store.baseline_lookup(key, ids)
        todo = replay.missing(ids, cached)
        fresh = replay.run_on_baseline(request, todo) if todo else None
        if fresh is not None:
            store.baseline_add(key, self.run_id, fresh.observed)
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
        try:
            return gitops.head_state(root)
        except EvidenceError:
            return None

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.record is None:
            return
        terminalreporter.section("evidence")
        for text, warn in summary.lines(self.record, self.settings.out or ""):
            terminalreporter.write_line(text, yellow=warn, bold=warn)


def _write_json(path: str, doc: Mapping[str, Any]) -> None:
    """Write atomically: a reader never sees half a record.

    Compact on purpose: ``indent`` forces json's pure-Python encoder, which alone cost more
    than the rest of the plugin on a 2,000-test suite (pretty-print with ``python -m json.tool``).
    """
    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(doc, separators=(",", ":")))
        fh.write("\n")
    os.replace(tmp, path)
