"""The evidence model: the one currency shared by the plugin and the runner.

This module is a leaf. It imports only the standard library, and only syntax that Python 3.8
accepts, because it is loaded inside the target repository's interpreter (often old) as well as
inside the runner. Everything here is pure: no I/O, no clock, no randomness.

Format history of the evidence record (``SCHEMA_VERSION``):

* ``1.0`` -- first release: ``ValidationResult`` with the 12 contract fields, per-test
  ``annotations`` keyed by test id, named ``detections``, ``summary`` counts.
* ``1.1`` -- added ``verdict``, ``tiers`` and ``invocation`` (the runner's ladder and how it was
  started; null, empty and null in a plugin record) and the failure kinds ``syntax_error``,
  ``lint``, ``type_error``, ``import_error``. 1.0 records still read: the keys are optional.
* ``1.2`` -- the referee's own record: ``path``, ``line`` and ``detail`` on detections, the
  detection kind ``source_interference``, ``reruns`` on annotations, ``lockfiles`` on an
  environment, ``baseline_environment``, ``pinning`` (how the runs were sandboxed and seeded,
  and which guarantee is missing) and ``integrity`` (what was protected and reapplied) on the
  record, ``not_run`` on a tier. 1.0 and 1.1 records still read.
* ``1.3`` -- an engine that fails to answer is never a pass: the tier status ``error``, and
  ``incomplete_reason`` on the record (why ``complete`` is false); ``flip`` on annotations (what a
  suspected PASS->FAIL flip rests on: B's full run and B in the C run's own selection); the
  detection kinds ``order_dependent``, ``store_unavailable``, ``unstable_test_id`` and
  ``unrunnable_test``; ``injected`` on an environment
  (what the runner put on the target's path). The ``invocation`` object is typed in the schema.
  Earlier 1.x records still read.
* ``1.4`` -- every attack gets a verdict: the detection kinds ``reproducer_lost_to_tamper`` (a
  designated reproducer the trusted tests' reapplication removed), ``config_changed`` (a pytest
  setting the candidate tightened: recorded, allowed) and ``network_attempt`` (a connect attempt,
  loopback included, with its address and side); the ``tamper`` detail ``stream_forged`` (a
  result channel line the plugin did not write); ``stability_runs`` in the ``invocation``;
  ``kept`` and ``dropped`` in ``integrity`` (the candidate's new tests the test-level reapplication
  kept, and removed).
  Earlier 1.x records still read.
* ``1.5`` -- one session per side: ``group`` on a tier (the grouped session and group it ran
  as), the top-level ``selection`` (why each test was selected for T5 or left out),
  ``invocation.jobs`` and ``baseline_run.processes``. Earlier 1.x records still read.
* ``1.6`` -- is green worth anything: the tier ``audit`` (between T5 and T6, present only when
  asked for), the top-level ``audit`` (kill rates per changed function and module, survivors as
  diffs, the reproducer-strength check) and ``steering`` (the one learned call, or null); the
  detection kind ``weak_reproducer`` (details ``always_equal``, ``special_cased_input``,
  ``survives_mutants``); ``audit``, ``audit_mutants``, ``audit_budget``, ``min_kill_rate`` and
  ``critical`` in the ``invocation``. Earlier 1.x records still read.
* ``1.7`` -- no new member: without a baseline, ``summary.typing_failures`` is 0 and no
  ``typing_failure`` detection is written (nothing was asked to be typed; the results stay
  untyped, ``evidence_typing_coverage`` says so, and the plugin's summary says once that the B/C
  contrast needs ``--baseline``). With a baseline nothing changes. Earlier 1.x records still read.
* ``1.8`` -- ``invocation.ablate`` also names ``typing`` and ``baseline-replay`` (the A/B
  harness's ablations judged on C's bare outcomes: no result typed, or none with a B outcome).
  Earlier 1.x records still read.
* ``1.9`` -- no new member; three detection details that change a verdict: ``empty_collection``
  ``skipped_on_c`` (a test B passes, like for like or in its own full run, is skipped or xfailed
  on C; or a new parametrization replacing one B passed is) and
  ``not_collected`` (tests B collects with the same tests and C does not), ``crash``
  ``collection_error`` (a test module erroring on C only). ``flip`` on an annotation may now
  describe a PASS->skipped/xfailed suspect (``rests_on`` "evidence lost: ..."), not only a
  PASS->FAIL one. Earlier 1.x records still read.
* ``1.10`` -- no new member; ``empty_collection`` ``skipped_on_c`` is no longer raised for a test
  silenced on both sides in the C run's selection that passes on C run again on its own, the
  whole suite collected (``flip.rests_on`` "evidence found apart: ..."); and B's like-for-like
  run of a suspected flip replays the C session's earlier groups before the suspect's own.
  Earlier 1.x records still read.
* ``1.11`` -- no new member; a suspected flip that fails on B too in the C run's selection is run
  once more on each side, on its own with the whole suite collected: passing on B and failing on
  C so, it is a regression (``flip.rests_on`` "regression apart: ...", its ``baseline_result``
  B's outcome apart), no longer ``order_dependent``; and an annotation's ``origin`` is
  ``changed`` for a test whose own definition is as it was but reads a module-level or
  class-level name whose binding changed (a table of cases grown). Earlier 1.x records still read.
* ``1.12`` -- no new member; an ``order_dependent`` flip C does not pass on its own runs again on
  each side after the tests before it in its module: passing on B and failing on C there, it is
  a regression (``flip.rests_on`` "regression in B's order: ..."); no run showing C passing it,
  it is unsettled (``rests_on`` "order_dependent, unsettled: ...") and its tier inconclusive;
  an ``origin`` folds in only what a test reads from outside itself (a local named like a new
  module-level name no longer makes it ``changed``). Earlier 1.x records still read.
* ``1.13`` -- no new member; a flip B fails on its own is no longer settled by C passing it on
  its own: it runs after the tests before it in its module as well, and stays unsettled unless a
  run shows C passing it where B passes it; an ``origin`` follows Python's scopes (a method's
  ``parametrize`` over its class's table, its class's ``pytestmark``); a T4-T6 tier's group
  also runs the tests before its selected ones in their modules (its ``run`` may exceed its
  ``selected``), and a flip among those is a ``selection_gap``. Earlier 1.x records still read.
* ``1.14`` -- no new member; a flip passing on its own on both sides but coming after other
  tests is settled only by the run after the tests before it in B's full run (1.13: those of
  its module), where B passes it: C must pass it there too (``rests_on`` "regression in B's
  order: ..." otherwise); a test whose subtest failed is ``fail`` (on pytest 9 a ``TestCase``'s
  own report said passed). Earlier 1.x records still read.
* ``1.15`` -- ``seconds`` in the runner's ``baseline_run`` (how long obtaining B's suite run took:
  running it, or reading it from the store); a tier's ``duration`` no longer counts it (T4, or
  T3 when a declared expected change asked for it first, read as one tier at two prices).
  Earlier 1.x records still read.
* ``1.16`` -- no new member; detection details that change a verdict: ``source_interference``
  ``plugin_entry_point`` (a ``pytest11`` entry point the candidate adds: REJECTED),
  ``weak_reproducer`` ``value_equality`` and ``reads_caller_frame`` (INCONCLUSIVE), and
  ``detects_test_run`` naming the referee's own marks in a test process. Earlier 1.x records
  still read.
* ``1.17`` -- ``pinning.varied``: the seed and sides of the further stability runs (one per
  side) that change the referee's marks (another seed, no parent-death signal). A fresh test whose
  outcome only that run changed, and again when both were repeated, is ``flaky`` with a failure
  saying so, and makes T3 INCONCLUSIVE; it is not written to the flake ledger. Earlier 1.x records still read.
* ``1.18`` -- ``pinning.tmpdir``: each test process but the first of C's code has a temporary
  directory of its own, as it had a ``HOME``. ``pinning.varied`` now names where C's code runs
  first: T2's import probe and T3's first run on each side, with the marks changed (another seed, not inherited by
  subprocesses, no parent-death signal, no session of its own, the runner's ``TMPDIR``); every
  later run has them. Each test process sees the default evidence store's directory empty (a
  mount namespace); ``pinning.missing`` says when the store is in reach. A patch the
  marks switch on is off there, as in production, and cannot have left itself a note saying it
  was on. Earlier 1.x records still read.
* ``1.19`` -- no new member: in a runner record, and for B in a plugin record's annotations, a
  test's failure ``excerpt`` is the end of Python's own traceback (``--tb=native``), not pytest's
  style, without the frames of pytest and pluggy before the test's; its ``message``, ``path`` and
  ``line`` are as before. Earlier 1.x records still read.
* ``1.20`` -- no new member: items that share a node id (a collector naming every case of a data
  file alike) get ids of their own, the second and later ``ID[#N]`` in collection order, each run
  and judged by itself; before, only the last item's result stood. Two results of one id in a
  session (a plugin running a test twice) fold so that what failed stands
  (``Observation.and_then``). ``source_interference`` detail ``compiled_code``: compiled code
  the candidate adds or changes, bytecode or an extension module (REJECTED). Earlier 1.x records still read.
* ``1.21`` -- ``pinning.read_only``: the directories every test process saw read-only (the
  plugin's private copy, the target's import path, the runner's own packages, the user's
  repository); ``pinning.missing`` says when they could be written. Earlier 1.x records still read.
* ``1.22`` -- no new member: ``source_interference`` detail ``replaces_test_framework``, a test
  framework's object C's code replaced, found as the tests ran, and no B run found replaced
  (REJECTED; ``originals``). Earlier 1.x records still read.
* ``1.23`` -- no new member: ``source_interference`` detail ``framework_replaced_unattributed``, a
  test framework's object replaced on C where B's side cannot say whose code replaced it -- B's
  code replaces others of its module, or, with what was put in its place written in no file C
  added or changed (``authorship``), B's runs of C's tests replace it too or B could not compare
  (a test module of C's did not collect there, or the test it was found after never ran there)
  (INCONCLUSIVE). Earlier 1.x records still read.

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

import enum
import hashlib
from dataclasses import dataclass, replace
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

SCHEMA_VERSION = "1.23"

#: Record versions this model reads: same major version, every minor through its own.
READABLE_VERSIONS = tuple("1.%d" % minor for minor in range(int(SCHEMA_VERSION.split(".")[1]) + 1))

#: The exact field order of the contract; the JSON object of a result follows it.
RESULT_FIELDS = (
    "test_id",
    "role",
    "candidate_commit",
    "baseline_result",
    "candidate_result",
    "duration",
    "exit_code",
    "flaky_history",
    "affected_by_change",
    "bug_discriminating",
    "stdout_summary",
    "failure",
)

#: ``stdout_summary`` never holds a whole log: this many characters at most.
STDOUT_SUMMARY_LIMIT = 4096


class Role(str, enum.Enum):
    """The obligation a result discharged. Closed: a result that fits none has role ``None``."""

    BUG_REPRODUCTION = "BUG_REPRODUCTION"
    REGRESSION = "REGRESSION"
    EXPECTED_CHANGE = "EXPECTED_CHANGE"
    STATIC_GATE = "STATIC_GATE"


class Outcome(str, enum.Enum):
    """One test's merged outcome on one side (setup, call and teardown folded into one)."""

    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"
    SKIPPED = "skipped"
    XFAILED = "xfailed"
    XPASSED = "xpassed"
    TIMEOUT = "timeout"
    CRASH = "crash"
    FLAKY = "flaky"


#: Outcomes that count as "the test failed" in the B/C table. Deliberately narrow: a skip, a
#: quarantined flake or a timeout is not a demonstration that the code is wrong.
FAILING = frozenset({Outcome.FAIL, Outcome.ERROR})
#: Which of two results of one test id stands (``Observation.and_then``), first first: a failure,
#: then an ending that is neither pass nor failure, then a pass, then what did not run.
STANDING = (
    Outcome.FAIL,
    Outcome.ERROR,
    Outcome.CRASH,
    Outcome.TIMEOUT,
    Outcome.FLAKY,
    Outcome.XPASSED,
    Outcome.PASS,
    Outcome.XFAILED,
    Outcome.SKIPPED,
)


class BCClass(str, enum.Enum):
    """The four cells of the baseline/candidate table."""

    BUG_DISCRIMINATING = "bug-discriminating"
    REGRESSION_ONLY = "regression-only"
    NO_FIX = "no-fix"
    REGRESSION = "regression"


class Tier(str, enum.Enum):
    """The rungs of the certification ladder, cheapest first."""

    T0 = "T0"
    T1 = "T1"
    T2 = "T2"
    T3 = "T3"
    T4 = "T4"
    T5 = "T5"
    AUDIT = "audit"  # 1.6: the suite-strength audit, after T5, only when asked for
    T6 = "T6"
    T7 = "T7"


class Origin(str, enum.Enum):
    """Where a test comes from, relative to the baseline: the input of role assignment."""

    ADDED = "added"
    CHANGED = "changed"
    UNCHANGED = "unchanged"
    UNKNOWN = "unknown"


class DetectionKind(str, enum.Enum):
    """Named detections: each is counted in the record and never silent."""

    EMPTY_COLLECTION = "empty_collection"
    TAMPER = "tamper"
    FLAKY_QUARANTINED = "flaky_quarantined"
    TIMEOUT = "timeout"
    CRASH = "crash"
    NETWORK_BLOCKED = "network_blocked"
    ENVIRONMENT_DRIFT = "environment_drift"
    IMPORT_OUTSIDE_CHECKOUT = "import_outside_checkout"
    SELECTION_GAP = "selection_gap"
    TYPING_FAILURE = "typing_failure"
    REPRODUCER_NOT_FAILING_ON_BASELINE = "reproducer_not_failing_on_baseline"
    RECEIPT_HELD = "receipt_held"
    SOURCE_INTERFERENCE = "source_interference"
    ORDER_DEPENDENT = "order_dependent"
    STORE_UNAVAILABLE = "store_unavailable"
    UNSTABLE_TEST_ID = "unstable_test_id"
    UNRUNNABLE_TEST = "unrunnable_test"
    REPRODUCER_LOST_TO_TAMPER = "reproducer_lost_to_tamper"
    CONFIG_CHANGED = "config_changed"
    NETWORK_ATTEMPT = "network_attempt"
    WEAK_REPRODUCER = "weak_reproducer"


class FailureKind(str, enum.Enum):
    """What kind of non-pass a structured failure describes."""

    ASSERTION = "assertion"
    EXCEPTION = "exception"
    SETUP_ERROR = "setup_error"
    TEARDOWN_ERROR = "teardown_error"
    COLLECTION_ERROR = "collection_error"
    SKIPPED = "skipped"
    XFAILED = "xfailed"
    XPASSED = "xpassed"
    TIMEOUT = "timeout"
    CRASH = "crash"
    FLAKY = "flaky"
    NOT_REPORTED = "not_reported"
    SYNTAX_ERROR = "syntax_error"
    LINT = "lint"
    TYPE_ERROR = "type_error"
    IMPORT_ERROR = "import_error"


@dataclass(frozen=True)
class Failure:
    """A structured diagnostic: enough to locate and read a failure without the whole log."""

    kind: FailureKind
    message: str
    path: Optional[str] = None
    line: Optional[int] = None
    excerpt: str = ""

    def to_dict(self) -> Dict[str, Any]:
        return {
            "kind": self.kind.value,
            "message": self.message,
            "path": self.path,
            "line": self.line,
            "excerpt": self.excerpt,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Failure:
        return cls(
            kind=FailureKind(data["kind"]),
            message=data["message"],
            path=data.get("path"),
            line=data.get("line"),
            excerpt=data.get("excerpt", ""),
        )


@dataclass(frozen=True)
class ValidationResult:
    """One typed result. EXACTLY the 12 contract fields, in the contract's order."""

    test_id: str
    role: Optional[Role]
    candidate_commit: Optional[str]
    baseline_result: Optional[Outcome]
    candidate_result: Outcome
    duration: float
    exit_code: Optional[int]
    flaky_history: Tuple[str, ...]
    affected_by_change: Optional[bool]
    bug_discriminating: bool
    stdout_summary: str
    failure: Optional[Failure]

    def to_dict(self) -> Dict[str, Any]:
        return {
            "test_id": self.test_id,
            "role": None if self.role is None else self.role.value,
            "candidate_commit": self.candidate_commit,
            "baseline_result": None if self.baseline_result is None else self.baseline_result.value,
            "candidate_result": self.candidate_result.value,
            "duration": self.duration,
            "exit_code": self.exit_code,
            "flaky_history": list(self.flaky_history),
            "affected_by_change": self.affected_by_change,
            "bug_discriminating": self.bug_discriminating,
            "stdout_summary": self.stdout_summary,
            "failure": None if self.failure is None else self.failure.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ValidationResult:
        role = data["role"]
        baseline = data["baseline_result"]
        failure = data["failure"]
        return cls(
            test_id=data["test_id"],
            role=None if role is None else Role(role),
            candidate_commit=data["candidate_commit"],
            baseline_result=None if baseline is None else Outcome(baseline),
            candidate_result=Outcome(data["candidate_result"]),
            duration=float(data["duration"]),
            exit_code=data["exit_code"],
            flaky_history=tuple(data["flaky_history"]),
            affected_by_change=data["affected_by_change"],
            bug_discriminating=bool(data["bug_discriminating"]),
            stdout_summary=data["stdout_summary"],
            failure=None if failure is None else Failure.from_dict(failure),
        )


@dataclass(frozen=True)
class Observation:
    """What one side observed of one test: the plugin's stream record, before typing.

    The plugin streams these as tests finish; whoever holds both sides (the plugin's baseline
    replay, or the runner) turns pairs of them into ``ValidationResult`` objects.
    """

    test_id: str
    outcome: Outcome
    duration: float
    failure: Optional[Failure]
    stdout_summary: str
    attempts: Tuple[Outcome, ...]

    def to_dict(self) -> Dict[str, Any]:
        return {
            "test_id": self.test_id,
            "outcome": self.outcome.value,
            "duration": self.duration,
            "failure": None if self.failure is None else self.failure.to_dict(),
            "stdout_summary": self.stdout_summary,
            "attempts": [a.value for a in self.attempts],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Observation:
        failure = data["failure"]
        return cls(
            test_id=data["test_id"],
            outcome=Outcome(data["outcome"]),
            duration=float(data["duration"]),
            failure=None if failure is None else Failure.from_dict(failure),
            stdout_summary=data["stdout_summary"],
            attempts=tuple(Outcome(a) for a in data["attempts"]),
        )

    def and_then(self, later: Observation) -> Observation:
        """This test id's outcome once ``later``, a second result for it in the same session, is
        in: what failed stands. Two items may share an id -- a collector that names every case
        of a data file alike (docopt-ng's names each ``testcases(N)``) -- and a pass taken last
        covered a regression in the other, CERTIFIED by an independent check. So the id is a
        group: a failure in any item is the group's (``STANDING``; the earlier of two alike), a
        pass only when every item passed. The attempts are the standing item's own: two items'
        outcomes are no flip of one test."""
        standing = self if STANDING.index(self.outcome) <= STANDING.index(later.outcome) else later
        return replace(standing, duration=round(self.duration + later.duration, 6))


@dataclass(frozen=True)
class Detection:
    """A named finding that weakens or voids what the run proves.

    ``detail`` sub-classifies a kind (``deleted_test``, ``skip_marker``, ``os_exit``...) so a
    reader can count attacks by shape without parsing messages; ``path`` and ``line`` point at
    the offending source when there is one.
    """

    kind: DetectionKind
    message: str
    test_id: Optional[str] = None
    path: Optional[str] = None
    line: Optional[int] = None
    detail: Optional[str] = None

    def to_dict(self) -> Dict[str, Any]:
        return {
            "kind": self.kind.value,
            "message": self.message,
            "test_id": self.test_id,
            "path": self.path,
            "line": self.line,
            "detail": self.detail,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Detection:
        return cls(
            DetectionKind(data["kind"]),
            data["message"],
            data.get("test_id"),
            data.get("path"),
            data.get("line"),
            data.get("detail"),
        )


@dataclass(frozen=True)
class Annotation:
    """What the record knows about a result beyond the 12 contract fields.

    Kept apart so that the contract object stays exactly 12 fields while the reader can still
    see the B/C class, why a result is untyped, and every attempt the flake policy made.
    """

    origin: Origin
    bc_class: Optional[BCClass]
    typing_failure: Optional[str]
    attempts: Tuple[Outcome, ...]
    baseline_failure: Optional[Failure] = None
    flip: Optional[Mapping[str, Any]] = None  # what a suspected PASS->FAIL flip rests on (runner)

    @property
    def reruns(self) -> int:
        """How many times the flake policy re-ran the test on the candidate."""
        return len(self.attempts) - 1

    def to_dict(self) -> Dict[str, Any]:
        return {
            "origin": self.origin.value,
            "bc_class": None if self.bc_class is None else self.bc_class.value,
            "typing_failure": self.typing_failure,
            "attempts": [a.value for a in self.attempts],
            "reruns": self.reruns,
            "baseline_failure": None if self.baseline_failure is None else self.baseline_failure.to_dict(),
            "flip": None if self.flip is None else dict(self.flip),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Annotation:
        bc = data["bc_class"]
        bf = data.get("baseline_failure")
        return cls(
            origin=Origin(data["origin"]),
            bc_class=None if bc is None else BCClass(bc),
            typing_failure=data["typing_failure"],
            attempts=tuple(Outcome(a) for a in data["attempts"]),
            baseline_failure=None if bf is None else Failure.from_dict(bf),
            flip=data.get("flip"),
        )


@dataclass(frozen=True)
class Environment:
    """What the tests ran with; two runs are comparable only if fingerprints match.

    ``lockfiles`` is the digest of the checkout's lock and requirements files, folded into the
    fingerprint by ``with_lockfiles``: a patch that changes what CI would install cannot be
    certified against the environment that was actually installed.
    """

    fingerprint: str
    python: str
    implementation: str
    platform: str
    pytest: str
    distributions: int
    lockfiles: Optional[str] = None
    injected: Optional[Mapping[str, str]] = None  # what the runner put on the path, not installed

    def with_lockfiles(self, digest: str) -> Environment:
        combined = hashlib.sha256(("%s\0%s" % (self.fingerprint, digest)).encode()).hexdigest()
        return replace(self, fingerprint=combined, lockfiles=digest)

    def to_dict(self) -> Dict[str, Any]:
        return {
            "fingerprint": self.fingerprint,
            "python": self.python,
            "implementation": self.implementation,
            "platform": self.platform,
            "pytest": self.pytest,
            "distributions": self.distributions,
            "lockfiles": self.lockfiles,
            "injected": None if self.injected is None else dict(self.injected),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Environment:
        return cls(
            data["fingerprint"],
            data["python"],
            data["implementation"],
            data["platform"],
            data["pytest"],
            data["distributions"],
            data.get("lockfiles"),
            data.get("injected"),
        )


class Verdict(str, enum.Enum):
    CERTIFIED = "CERTIFIED"
    REJECTED = "REJECTED"
    INCONCLUSIVE = "INCONCLUSIVE"


class TierStatus(str, enum.Enum):
    PASSED = "passed"
    FAILED = "failed"  # the tier falsified the patch
    INCONCLUSIVE = "inconclusive"  # the tier could not prove what it exists to prove
    ERROR = "error"  # an engine ended without a usable answer: never a pass
    SKIPPED = "skipped"  # nothing to run at this tier
    NOT_RUN = "not_run"  # an earlier tier halted the ladder


@dataclass(frozen=True)
class Finding:
    """One diagnostic of a static gate (parser, linter, type checker, import)."""

    check: str
    path: str
    line: Optional[int]
    column: Optional[int]
    code: Optional[str]
    message: str
    hard: bool

    def to_dict(self) -> Dict[str, Any]:
        return {
            "check": self.check,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "code": self.code,
            "message": self.message,
            "hard": self.hard,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Finding:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__})


@dataclass(frozen=True)
class TierRecord:
    """What one rung of the ladder did: its status, cost, and how much of the suite it ran."""

    tier: Tier
    status: TierStatus
    duration: float
    selected: int
    run: int
    suite_size: Optional[int]
    note: str
    findings: Tuple[Finding, ...] = ()
    not_run: Tuple[str, ...] = ()  # selected tests the tier's time budget left unrun
    # 1.5: where the tier ran -- the grouped session (``reproducers`` or ``suite``) and its group
    group: Optional[Mapping[str, Any]] = None

    def to_dict(self) -> Dict[str, Any]:
        return {
            "tier": self.tier.value,
            "status": self.status.value,
            "duration": self.duration,
            "selected": self.selected,
            "run": self.run,
            "suite_size": self.suite_size,
            "note": self.note,
            "findings": [f.to_dict() for f in self.findings],
            "not_run": list(self.not_run),
            "group": None if self.group is None else dict(self.group),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TierRecord:
        return cls(
            tier=Tier(data["tier"]),
            status=TierStatus(data["status"]),
            duration=float(data["duration"]),
            selected=data["selected"],
            run=data["run"],
            suite_size=data["suite_size"],
            note=data["note"],
            findings=tuple(Finding.from_dict(f) for f in data["findings"]),
            not_run=tuple(data.get("not_run", ())),
            group=data.get("group"),
        )


@dataclass(frozen=True)
class VerdictRecord:
    """The ladder's conclusion, computed by rules (``runner.verdict``), never by a model."""

    verdict: Verdict
    halted_at: Optional[Tier]
    reasons: Tuple[str, ...]

    def to_dict(self) -> Dict[str, Any]:
        return {
            "verdict": self.verdict.value,
            "halted_at": None if self.halted_at is None else self.halted_at.value,
            "reasons": list(self.reasons),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> VerdictRecord:
        halted = data["halted_at"]
        return cls(Verdict(data["verdict"]), None if halted is None else Tier(halted), tuple(data["reasons"]))


@dataclass(frozen=True)
class EvidenceRecord:
    """Everything one run proved (and failed to prove), in one versioned document."""

    run_id: str
    created: str
    complete: bool
    repo: str
    baseline_commit: Optional[str]
    candidate_commit: Optional[str]
    environment: Environment
    results: Tuple[ValidationResult, ...]
    annotations: Mapping[str, Annotation]
    detections: Tuple[Detection, ...]
    exit_status: int
    baseline_run: Optional[Mapping[str, Any]] = None
    collected: int = 0
    not_run: Tuple[str, ...] = ()
    verdict: Optional[VerdictRecord] = None
    tiers: Tuple[TierRecord, ...] = ()
    invocation: Optional[Mapping[str, Any]] = None
    baseline_environment: Optional[Environment] = None
    pinning: Optional[Mapping[str, Any]] = None
    integrity: Optional[Mapping[str, Any]] = None
    incomplete_reason: Optional[str] = None
    # 1.5: the runner's T5 selection -- why each test of the suite was selected or left out
    selection: Optional[Mapping[str, Any]] = None
    # 1.6: the suite-strength audit, and the one steering call (null: none made)
    audit: Optional[Mapping[str, Any]] = None
    steering: Optional[Mapping[str, Any]] = None
    schema_version: str = SCHEMA_VERSION

    def to_dict(self) -> Dict[str, Any]:
        return {
            "schema_version": self.schema_version,
            "run_id": self.run_id,
            "created": self.created,
            "complete": self.complete,
            "incomplete_reason": self.incomplete_reason,
            "repo": self.repo,
            "baseline_commit": self.baseline_commit,
            "candidate_commit": self.candidate_commit,
            "baseline_run": None if self.baseline_run is None else dict(self.baseline_run),
            "environment": self.environment.to_dict(),
            "baseline_environment": None if self.baseline_environment is None else self.baseline_environment.to_dict(),
            "exit_status": self.exit_status,
            "collected": self.collected,
            "not_run": list(self.not_run),
            "results": [r.to_dict() for r in self.results],
            "annotations": {k: a.to_dict() for k, a in sorted(self.annotations.items())},
            "detections": [d.to_dict() for d in self.detections],
            "verdict": None if self.verdict is None else self.verdict.to_dict(),
            "tiers": [t.to_dict() for t in self.tiers],
            "invocation": None if self.invocation is None else dict(self.invocation),
            "pinning": None if self.pinning is None else dict(self.pinning),
            "integrity": None if self.integrity is None else dict(self.integrity),
            "selection": None if self.selection is None else dict(self.selection),
            "audit": None if self.audit is None else dict(self.audit),
            "steering": None if self.steering is None else dict(self.steering),
            "summary": summarize(self.results, self.annotations, self.detections, self.baseline_commit is not None),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EvidenceRecord:
        version = data.get("schema_version")
        if version not in READABLE_VERSIONS:
            raise ValueError(
                "evidence record schema_version %r is not one this version reads (%s)"
                % (version, ", ".join(READABLE_VERSIONS))
            )
        verdict = data.get("verdict")
        b_env = data.get("baseline_environment")
        results = tuple(ValidationResult.from_dict(r) for r in data["results"])
        annotations = {k: Annotation.from_dict(v) for k, v in data["annotations"].items()}
        detections = tuple(Detection.from_dict(d) for d in data["detections"])
        return cls(
            run_id=data["run_id"],
            created=data["created"],
            complete=data["complete"],
            incomplete_reason=data.get("incomplete_reason"),
            repo=data["repo"],
            baseline_commit=data["baseline_commit"],
            candidate_commit=data["candidate_commit"],
            baseline_run=data.get("baseline_run"),
            environment=Environment.from_dict(data["environment"]),
            results=results,
            annotations=annotations,
            detections=detections,
            exit_status=data["exit_status"],
            collected=data["collected"],
            not_run=tuple(data["not_run"]),
            verdict=None if verdict is None else VerdictRecord.from_dict(verdict),
            tiers=tuple(TierRecord.from_dict(t) for t in data.get("tiers", ())),
            invocation=data.get("invocation"),
            baseline_environment=None if b_env is None else Environment.from_dict(b_env),
            pinning=data.get("pinning"),
            integrity=data.get("integrity"),
            selection=data.get("selection"),
            audit=data.get("audit"),
            steering=data.get("steering"),
        )


def classify(baseline: Optional[Outcome], candidate: Outcome) -> Optional[BCClass]:
    """The B/C table, by lookup. ``None`` when either side is not a plain pass or failure."""
    if baseline is None:
        return None
    b_fail, c_fail = baseline in FAILING, candidate in FAILING
    b_pass, c_pass = baseline is Outcome.PASS, candidate is Outcome.PASS
    if b_fail and c_pass:
        return BCClass.BUG_DISCRIMINATING
    if b_pass and c_pass:
        return BCClass.REGRESSION_ONLY
    if b_fail and c_fail:
        return BCClass.NO_FIX
    if b_pass and c_fail:
        return BCClass.REGRESSION
    return None


def assign_role(
    origin: Origin,
    designated: bool,
    expected_change: bool,
    baseline: Optional[Outcome],
    replayed: bool,
    exclusive: bool = False,
) -> Tuple[Optional[Role], Optional[str]]:
    """Role from where the test comes from; returns ``(role, typing_failure_reason)``.

    ``replayed`` says whether a baseline run was asked for at all. Without one nothing carries a
    contrast, so nothing but a designated reproducer can be typed -- and it still proves nothing
    until a baseline shows it failing.

    ``exclusive``: reproducers were designated, so only those are reproducers. Otherwise a test
    the candidate added is one, and so is an existing test it changed whose new version fails on
    B (SWE-bench's FAIL_TO_PASS when it passes on C; no fix when it fails there too). A changed
    test that passes on B guards behaviour like any other test: a regression test -- an unchanged
    sibling parametrization of a changed function is not "a reproducer that passes on B". So is a
    test added beside designated reproducers that passes on B.
    """
    if replayed and baseline is None:
        return None, "no baseline result: the test did not run on the baseline"
    if designated:
        return Role.BUG_REPRODUCTION, None
    if expected_change:
        return Role.EXPECTED_CHANGE, None
    if not replayed:
        return None, "no baseline given: nothing to contrast the result with (use --baseline)"
    if origin is Origin.UNCHANGED:
        return Role.REGRESSION, None
    if origin is Origin.ADDED:
        return (Role.REGRESSION, None) if exclusive and baseline is Outcome.PASS else (Role.BUG_REPRODUCTION, None)
    if origin is Origin.CHANGED:
        if baseline is Outcome.PASS:
            return Role.REGRESSION, None
        if not exclusive:
            return Role.BUG_REPRODUCTION, None
        return None, (
            "existing test changed by the candidate, failing on B and not designated "
            "(name it with --reproducer, or as an expected change)"
        )
    return None, "origin of the test is unknown"


def is_bug_discriminating(baseline: Optional[Outcome], candidate: Outcome) -> bool:
    """True iff the baseline failed (or errored) and the candidate passed."""
    return classify(baseline, candidate) is BCClass.BUG_DISCRIMINATING


def summarize(
    results: Sequence[ValidationResult],
    annotations: Mapping[str, Annotation],
    detections: Sequence[Detection],
    contrasted: bool = True,
) -> Dict[str, Any]:
    """Counts the reader (and the runner) needs; derived, so it can never disagree.

    ``contrasted``: a baseline was given. Without one, no result was asked to be typed, so none
    failed to be: ``typing_failures`` is 0 and ``evidence_typing_coverage`` says nothing was typed.
    """
    by_role: Dict[str, int] = {r.value: 0 for r in Role}
    by_role["untyped"] = 0
    by_class: Dict[str, int] = {c.value: 0 for c in BCClass}
    by_class["unclassified"] = 0
    by_outcome: Dict[str, int] = {}
    for res in results:
        by_role["untyped" if res.role is None else res.role.value] += 1
        ann = annotations.get(res.test_id)
        bc = ann.bc_class if ann is not None else None
        by_class["unclassified" if bc is None else bc.value] += 1
        key = res.candidate_result.value
        by_outcome[key] = by_outcome.get(key, 0) + 1
    by_detection: Dict[str, int] = {}
    for det in detections:
        by_detection[det.kind.value] = by_detection.get(det.kind.value, 0) + 1
    total = len(results)
    typed = total - by_role["untyped"]
    passing = by_outcome.get(Outcome.PASS.value, 0)
    discriminating = sum(1 for r in results if r.bug_discriminating)
    return {
        "results": total,
        "by_outcome": dict(sorted(by_outcome.items())),
        "by_role": by_role,
        "by_class": by_class,
        "bug_discriminating": discriminating,
        "typing_failures": by_role["untyped"] if contrasted else 0,
        "evidence_typing_coverage": _ratio(typed, total),
        "bug_discriminating_rate": _ratio(discriminating, passing),
        "detections": by_detection,
    }


def _ratio(part: int, whole: int) -> Optional[float]:
    return None if whole == 0 else round(part / whole, 4)


def bounded(text: str, limit: int = STDOUT_SUMMARY_LIMIT) -> str:
    """Head and tail of ``text`` within ``limit`` characters: the end of a log matters most."""
    if len(text) <= limit:
        return text
    marker = "\n[... %d characters cut ...]\n" % (len(text) - limit)
    head = (limit - len(marker)) // 4
    tail = limit - len(marker) - head
    return text[:head] + marker + text[len(text) - tail :]
