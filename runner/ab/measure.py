"""What each arm of the A/B proved and what it cost (spec 17 §7), and the rules that judge it.

Pure: no I/O, no clock, no model. The input is a list of *arm runs* -- one JSON object per case x
candidate x arm, written by the A/B driver -- and everything here is counted from those objects
and the evidence records inside them, never from what a model said about them (§7.1: the model
cannot be trusted to type its own results). Runs are put in one canonical order before anything
is summed, so the same runs give the same floats whatever order the files were read in.

Every measure is computed per arm three times: over all runs, over ``held-out`` and over
``tuning``, because held-out figures are reported apart and never mixed into one number without
the split shown (§8 invariant 9). The decision and the ablation are taken on held-out when the
runs have held-out cases, else on all runs, and say which.

Definitions where the spec leaves a choice (``docs/ab.md`` repeats them):

* A ratio with an empty denominator is 0 (``Ratio.value``): a run that typed nothing, or had no
  green result, proved nothing, and 0 never strictly beats 0.
* *Answered*: the arm's verdict is not null and it reported no error. *Refused*: answered and not
  accepted -- REJECTED and INCONCLUSIVE both stop a patch; a crash does not falsify anything.
* Cost-ordering efficiency: the wall seconds the arm spent on every candidate whose truth is
  ``reject`` (answered or not: the time was spent), divided by how many of them it refused. It is
  ``None`` (never infinity: JSON has none) when the arm refused none, and ``None`` never beats a
  number. The halting histogram counts every refusal, right or wrong, by ``halted_at`` (``none``
  when the arm names no tier, as the naive arm never does).
* Evidence-typing coverage counts a result as typed only with a role AND a baseline result AND a
  candidate result. A static gate (``STATIC_GATE``, ``baseline_result`` null by the record's
  design) is in the denominator and never in the numerator, so a battery that ran static gates
  stays below 1; ``static_gate_results`` says how many there were.
* Flake rate: results whose candidate outcome is ``flaky`` or whose test has a
  ``flaky_quarantined`` detection in the same record, over all results.
* Tokens and cost are per *instance* (per distinct case of the split), from ``record.steering``
  (prompt + completion tokens, 0 when null); cost prices them with ``Price`` (0 unless given: the
  deterministic stages are free, only model spend counts).
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

BATTERY = "17battery"
NAIVE = "pytestbool"
ABLATE = "ablate:"

HELD_OUT = "held-out"
TUNING = "tuning"
ALL = "all"
SPLITS = (HELD_OUT, TUNING)
#: Every arm is measured over these, in this order.
SCOPES = (ALL, HELD_OUT, TUNING)

ACCEPT = "accept"
REJECT = "reject"
#: An accept candidate whose truth this environment cannot confirm (``confirm``): not counted in
#: verdict accuracy either way.
UNKNOWN = "unknown"
#: The known candidates, in report order; any other name is accepted and sorts after them.
CANDIDATES = ("fix", "fix-without-test", "test-without-fix", "fix-plus-skip", "fix-plus-weakened-assert")
VERDICTS = ("CERTIFIED", "REJECTED", "INCONCLUSIVE")
#: Halting tiers in ladder order (the audit sits between T5 and T6); ``none``: no tier named.
HALTS = ("T0", "T1", "T2", "T3", "T4", "T5", "audit", "T6", "T7")
NO_HALT = "none"

#: Float slack for measures that are exact: equal rationals can differ in the last bit of a sum.
EXACT = 1e-9
#: §7.3: a continuous measure moved by at most this relative amount moved within noise.
NOISE = 0.05


def _arm_order(arm: str) -> tuple[int, str]:
    return ({BATTERY: 0, NAIVE: 1}.get(arm, 2 if arm.startswith(ABLATE) else 3), arm)


def _candidate_order(candidate: str) -> tuple[int, str]:
    return (CANDIDATES.index(candidate) if candidate in CANDIDATES else len(CANDIDATES), candidate)


@dataclass(frozen=True)
class ArmRun:
    """One arm's answer on one candidate of one case: the unit the driver writes to a file."""

    case: str
    split: str
    candidate: str
    truth: str
    tamper: bool
    arm: str
    verdict: str | None
    accepted: bool
    exit_code: int
    seconds: float
    halted_at: str | None
    fail_to_pass: tuple[str, ...]
    error: str | None
    record: Mapping[str, Any] | None

    @property
    def answered(self) -> bool:
        """The arm gave a verdict and reported no error: only then can it have refused anything."""
        return self.verdict is not None and self.error is None

    @property
    def refused(self) -> bool:
        return self.answered and not self.accepted

    @property
    def correct(self) -> bool | None:
        """Whether the verdict matches the truth; None when the truth is ``unknown``."""
        return None if self.truth == UNKNOWN else self.accepted == (self.truth == ACCEPT)

    @property
    def key(self) -> tuple[tuple[int, str], str, tuple[int, str], tuple[int, str]]:
        return (_arm_order(self.arm), self.case, _candidate_order(self.candidate), (0, self.split))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ArmRun:
        """Checks every field the measures read, naming the run: a bad file fails loudly here."""
        where = "arm run %s/%s/%s" % (data.get("case"), data.get("candidate"), data.get("arm"))

        def bad(what: str) -> ValueError:
            return ValueError("%s: %s" % (where, what))

        for name in ("case", "candidate", "arm"):
            if not isinstance(data.get(name), str) or not data[name]:
                raise bad("%s must be a non-empty string" % name)
        arm = data["arm"]
        if arm not in (BATTERY, NAIVE) and not (arm.startswith(ABLATE) and len(arm) > len(ABLATE)):
            raise bad("arm must be %s, %s or %s<mechanism>" % (BATTERY, NAIVE, ABLATE))
        if data.get("split") not in SPLITS:
            raise bad("split must be one of %s" % ", ".join(SPLITS))
        if data.get("truth") not in (ACCEPT, REJECT):
            raise bad("truth must be accept or reject")
        for name in ("tamper", "accepted"):
            if not isinstance(data.get(name), bool):
                raise bad("%s must be a boolean" % name)
        verdict = data.get("verdict")
        if verdict is not None and verdict not in VERDICTS:
            raise bad("verdict must be one of %s or null" % ", ".join(VERDICTS))
        if arm != NAIVE and data["accepted"] != (verdict == "CERTIFIED"):
            raise bad("accepted must be true exactly when the verdict is CERTIFIED")
        exit_code = data.get("exit_code")
        if not isinstance(exit_code, int) or isinstance(exit_code, bool):
            raise bad("exit_code must be an integer")
        seconds = data.get("seconds")
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds):
            raise bad("seconds must be a finite number")
        if seconds < 0:
            raise bad("seconds must not be negative")
        halted = data.get("halted_at")
        if halted is not None and halted not in HALTS:
            raise bad("halted_at must be one of %s or null" % ", ".join(HALTS))
        f2p = data.get("fail_to_pass", [])
        if not isinstance(f2p, list) or not all(isinstance(t, str) for t in f2p):
            raise bad("fail_to_pass must be a list of test ids")
        error = data.get("error")
        if error is not None and not isinstance(error, str):
            raise bad("error must be a string or null")
        record = data.get("record")
        if record is not None and not isinstance(record, Mapping):
            raise bad("record must be an object or null")
        return cls(
            case=data["case"],
            split=data["split"],
            candidate=data["candidate"],
            truth=data["truth"],
            tamper=data["tamper"],
            arm=arm,
            verdict=verdict,
            accepted=data["accepted"],
            exit_code=exit_code,
            seconds=float(seconds),
            halted_at=halted,
            fail_to_pass=tuple(f2p),
            error=error,
            record=record,
        )


def load_runs(runs: Iterable[Mapping[str, Any] | ArmRun]) -> tuple[ArmRun, ...]:
    """The runs checked and in canonical order; one arm answering one candidate twice is an error."""
    loaded = [r if isinstance(r, ArmRun) else ArmRun.from_dict(r) for r in runs]
    seen: dict[tuple[str, str, str], str] = {}
    for run in loaded:
        key = (run.arm, run.case, run.candidate)
        if key in seen:
            raise ValueError("arm run %s/%s/%s appears twice" % (run.case, run.candidate, run.arm))
        seen[key] = run.split
    splits: dict[str, str] = {}
    for run in loaded:
        if splits.setdefault(run.case, run.split) != run.split:
            raise ValueError("case %s is in both splits: held-out must stay held out" % run.case)
    unconfirmed = confirm(loaded)
    confirmed = [
        dataclasses.replace(r, truth=UNKNOWN) if r.case in unconfirmed and r.truth == ACCEPT else r for r in loaded
    ]
    return tuple(sorted(confirmed, key=lambda r: r.key))


#: Outcomes that fail a test, as the battery counts them on C (a hang is how some bugs fail).
_FAILS = ("fail", "error", "timeout", "crash")


def confirm(runs: Sequence[ArmRun]) -> dict[str, str]:
    """Cases whose real fix this environment does not confirm, and why: their ``accept`` truths
    become ``unknown``.

    The naive arm's records hold every test's outcome on the real fix (``fix``: C with its tests)
    and on B with the fix's tests (``test-without-fix``). The truth "the real fix is right" holds
    here only when no FAIL_TO_PASS test passes on B, every one passes on C, and nothing fails on
    C that did not fail on B: a test the fix added, or one B passed, failing under the real fix (a
    module this Python lacks, a platform difference) makes "accept" a claim the environment
    refutes, and a verdict on it is counted neither right nor wrong. A FAIL_TO_PASS test with no
    result on B failed to collect there (an import of what the fix adds), which is a failure. A
    case without both naive records, or whose naive runs recorded no result at all (pytest ended
    before running anything), keeps its truths: there is nothing to check them by.
    """
    naive = {(r.case, r.candidate): r.record for r in runs if r.arm == NAIVE and r.record is not None}
    found = {}
    for case in sorted({r.case for r in runs}):
        c, b = (_outcomes(naive.get((case, name))) for name in ("fix", "test-without-fix"))
        if not c or not b:
            continue
        f2p = next(r.fail_to_pass for r in runs if r.case == case)
        why = ["%s passes on B" % t for t in f2p if b.get(t) == "pass"]
        why += ["%s does not pass on the real fix (%s)" % (t, c.get(t, "not run")) for t in f2p if c.get(t) != "pass"]
        why += [
            "%s fails on the real fix (%s) and not on B (%s)" % (t, o, b.get(t, "not run"))
            for t, o in sorted(c.items())
            if o in _FAILS and b.get(t) not in _FAILS and t not in f2p
        ]
        if why:
            found[case] = "; ".join(why[:3]) + ("; and %d more" % (len(why) - 3) if len(why) > 3 else "")
    return found


def _outcomes(record: Mapping[str, Any] | None) -> dict[str, str]:
    results = (record or {}).get("results") or ()
    return {r["test_id"]: r["candidate_result"] for r in results if isinstance(r, Mapping)}


@dataclass(frozen=True)
class Ratio:
    """``part`` of ``whole``; kept as counts so a report can show what a fraction rests on."""

    part: int
    whole: int

    @property
    def value(self) -> float:
        return 0.0 if self.whole == 0 else self.part / self.whole

    def to_dict(self) -> dict[str, Any]:
        return {"part": self.part, "whole": self.whole, "value": self.value}


@dataclass(frozen=True)
class Price:
    """US dollars per million prompt and completion tokens of the one steering model."""

    prompt_per_mtok: float = 0.0
    completion_per_mtok: float = 0.0

    def usd(self, prompt: int, completion: int) -> float:
        return (prompt * self.prompt_per_mtok + completion * self.completion_per_mtok) / 1e6

    def to_dict(self) -> dict[str, Any]:
        return {"prompt_per_mtok": self.prompt_per_mtok, "completion_per_mtok": self.completion_per_mtok}


@dataclass(frozen=True)
class CostOrdering:
    """The companion (§7.2 1): budget spent per patch actually falsified, and where patches halted."""

    seconds_on_rejects: float  # wall seconds on every candidate whose truth is reject
    rejects: int  # candidates whose truth is reject
    falsified: int  # of those, how many the arm refused
    halted_at: tuple[tuple[str, int], ...]  # every refusal (right or wrong) by halting tier, ladder order
    seconds_total: float
    seconds_per_candidate: float  # 0 with no runs

    @property
    def seconds_per_falsified(self) -> float | None:
        """``None`` when nothing was falsified: not infinity, and never better than a number."""
        return None if self.falsified == 0 else self.seconds_on_rejects / self.falsified

    def to_dict(self) -> dict[str, Any]:
        return {
            "seconds_per_falsified": self.seconds_per_falsified,
            "seconds_on_rejects": self.seconds_on_rejects,
            "rejects": self.rejects,
            "falsified": self.falsified,
            "halted_at": dict(self.halted_at),
            "seconds_total": self.seconds_total,
            "seconds_per_candidate": self.seconds_per_candidate,
        }


@dataclass(frozen=True)
class Selection:
    """T5's precision (mean fraction of the suite selected) and safety (``selection_gap`` count)."""

    tiers: int  # T5 tiers that made a selection (not ``not_run``, with a suite size)
    mean_fraction: float | None
    gaps: int

    def to_dict(self) -> dict[str, Any]:
        return {"tiers": self.tiers, "mean_fraction": self.mean_fraction, "gaps": self.gaps}


@dataclass(frozen=True)
class Reruns:
    """Rerun counts over every annotated test: a rising count is p-hacking in progress."""

    total: int
    max: int
    distribution: tuple[tuple[int, int], ...]  # (reruns, tests), ascending

    def to_dict(self) -> dict[str, Any]:
        return {"total": self.total, "max": self.max, "distribution": {str(k): n for k, n in self.distribution}}


@dataclass(frozen=True)
class KillRate:
    """Mean suite kill rate over the records that carry an audit; ``None`` when none does."""

    audits: int
    mean: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"audits": self.audits, "mean": self.mean}


@dataclass(frozen=True)
class Spend:
    """Model spend: the steering entries' tokens, and their price, total and per instance."""

    calls: int
    prompt_tokens: int
    completion_tokens: int
    cases: int
    cost_usd: float

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def tokens_per_instance(self) -> float:
        return 0.0 if self.cases == 0 else self.tokens / self.cases

    @property
    def cost_per_instance(self) -> float:
        return 0.0 if self.cases == 0 else self.cost_usd / self.cases

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "tokens": self.tokens,
            "tokens_per_instance": self.tokens_per_instance,
            "cost_usd": self.cost_usd,
            "cost_per_instance": self.cost_per_instance,
        }


@dataclass(frozen=True)
class Miss:
    """A run whose verdict disagrees with the truth, or that did not answer."""

    case: str
    candidate: str
    truth: str
    verdict: str | None
    error: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "case": self.case,
            "candidate": self.candidate,
            "truth": self.truth,
            "verdict": self.verdict,
            "error": self.error,
        }


@dataclass(frozen=True)
class ArmMeasures:
    """Every instrument of §7.1-§7.2 for one arm over one scope (``all``, ``held-out``, ``tuning``)."""

    arm: str
    split: str
    runs: int
    cases: int
    corpus: tuple[tuple[str, str], ...]  # (case, candidate) pairs: the decision needs identical corpora
    evidence_typing_coverage: Ratio  # KEY
    static_gate_results: int
    bug_discriminating_rate: Ratio  # KEY
    cost_ordering: CostOrdering  # companion
    verdict_accuracy: Ratio
    mismatches: tuple[Miss, ...]
    baseline_replay_coverage: Ratio
    selection: Selection
    flake_rate: Ratio
    reruns: Reruns
    kill_rate: KillRate
    tamper_detection_rate: Ratio
    spend: Spend
    unanswered: tuple[Miss, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "arm": self.arm,
            "split": self.split,
            "runs": self.runs,
            "cases": self.cases,
            "evidence_typing_coverage": self.evidence_typing_coverage.to_dict(),
            "static_gate_results": self.static_gate_results,
            "bug_discriminating_rate": self.bug_discriminating_rate.to_dict(),
            "cost_ordering": self.cost_ordering.to_dict(),
            "verdict_accuracy": self.verdict_accuracy.to_dict(),
            "mismatches": [m.to_dict() for m in self.mismatches],
            "baseline_replay_coverage": self.baseline_replay_coverage.to_dict(),
            "selection": self.selection.to_dict(),
            "flake_rate": self.flake_rate.to_dict(),
            "reruns": self.reruns.to_dict(),
            "kill_rate": self.kill_rate.to_dict(),
            "tamper_detection_rate": self.tamper_detection_rate.to_dict(),
            "spend": self.spend.to_dict(),
            "unanswered": [m.to_dict() for m in self.unanswered],
        }


@dataclass(frozen=True)
class Measures:
    """Every arm over every scope, and the scope the decision and the ablation are taken on."""

    price: Price
    decision_split: str  # ``held-out`` when any run is held out, else ``all``
    arms: tuple[ArmMeasures, ...]  # arm order, then SCOPES order

    @property
    def arm_names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(a.arm for a in self.arms))

    def get(self, arm: str, split: str) -> ArmMeasures:
        for measured in self.arms:
            if measured.arm == arm and measured.split == split:
                return measured
        raise KeyError("no arm %r in the runs" % arm)

    def to_dict(self) -> dict[str, Any]:
        return {
            "price": self.price.to_dict(),
            "decision_split": self.decision_split,
            "arms": {name: {s: self.get(name, s).to_dict() for s in SCOPES} for name in self.arm_names},
        }


def _records(runs: Sequence[ArmRun]) -> list[tuple[ArmRun, Mapping[str, Any]]]:
    return [(r, r.record) for r in runs if r.record is not None]


def _results(record: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list(record.get("results") or ())


def _detections(record: Mapping[str, Any], kind: str) -> list[Mapping[str, Any]]:
    return [d for d in record.get("detections") or () if d.get("kind") == kind]


def _typing(runs: Sequence[ArmRun]) -> tuple[Ratio, int, Ratio]:
    typed = total = gates = green = discriminating = 0
    for _run, record in _records(runs):
        for res in _results(record):
            total += 1
            gates += res.get("role") == "STATIC_GATE"
            attached = res.get("baseline_result") is not None and res.get("candidate_result") is not None
            typed += res.get("role") is not None and attached
            if res.get("candidate_result") == "pass":
                green += 1
                discriminating += res.get("bug_discriminating") is True
    return Ratio(typed, total), gates, Ratio(discriminating, green)


def _cost_ordering(runs: Sequence[ArmRun]) -> CostOrdering:
    rejects = [r for r in runs if r.truth == REJECT]
    halts = Counter(r.halted_at or NO_HALT for r in runs if r.refused)
    total = math.fsum(r.seconds for r in runs)
    return CostOrdering(
        seconds_on_rejects=math.fsum(r.seconds for r in rejects),
        rejects=len(rejects),
        falsified=sum(1 for r in rejects if r.refused),
        halted_at=tuple((h, halts[h]) for h in (*HALTS, NO_HALT) if halts[h]),
        seconds_total=total,
        seconds_per_candidate=0.0 if not runs else total / len(runs),
    )


def _replay(runs: Sequence[ArmRun]) -> Ratio:
    replayed = whole = 0
    for run, record in _records(runs):
        wanted = set(run.fail_to_pass)
        for res in _results(record):
            if res.get("test_id") in wanted:
                whole += 1
                replayed += res.get("baseline_result") is not None
    return Ratio(replayed, whole)


def _selection(runs: Sequence[ArmRun]) -> Selection:
    fractions: list[float] = []
    gaps = 0
    for _run, record in _records(runs):
        gaps += len(_detections(record, "selection_gap"))
        for tier in record.get("tiers") or ():
            size = tier.get("suite_size")
            if tier.get("tier") == "T5" and tier.get("status") != "not_run" and size:
                fractions.append(tier.get("selected", 0) / size)
    mean = math.fsum(fractions) / len(fractions) if fractions else None
    return Selection(len(fractions), mean, gaps)


def _flakes(runs: Sequence[ArmRun]) -> tuple[Ratio, Reruns]:
    flaky = total = 0
    counts: list[int] = []
    for _run, record in _records(runs):
        quarantined = {d.get("test_id") for d in _detections(record, "flaky_quarantined")} - {None}
        for res in _results(record):
            total += 1
            flaky += res.get("candidate_result") == "flaky" or res.get("test_id") in quarantined
        for ann in (record.get("annotations") or {}).values():
            reruns = ann.get("reruns")
            counts.append(int(reruns) if reruns is not None else max(len(ann.get("attempts") or ()) - 1, 0))
    histogram = Counter(counts)
    reruns = Reruns(sum(counts), max(counts, default=0), tuple(sorted(histogram.items())))
    return Ratio(flaky, total), reruns


def _kill_rate(runs: Sequence[ArmRun]) -> KillRate:
    rates: list[float] = []
    for _run, record in _records(runs):
        suite = (record.get("audit") or {}).get("suite") or {}
        if suite.get("kill_rate") is not None:
            rates.append(float(suite["kill_rate"]))
    return KillRate(len(rates), math.fsum(rates) / len(rates) if rates else None)


def _tamper(runs: Sequence[ArmRun]) -> Ratio:
    """A tampering candidate whose arm wrote no record caught nothing: it stays in the denominator."""
    tampering = [r for r in runs if r.tamper]
    caught = sum(1 for r in tampering if r.record is not None and _detections(r.record, "tamper"))
    return Ratio(caught, len(tampering))


def _spend(runs: Sequence[ArmRun], price: Price) -> Spend:
    calls = prompt = completion = 0
    for _run, record in _records(runs):
        steering = record.get("steering")
        if steering is None:
            continue
        calls += 1
        prompt += steering.get("prompt_tokens") or 0
        completion += steering.get("completion_tokens") or 0
    cases = len({r.case for r in runs})
    return Spend(calls, prompt, completion, cases, price.usd(prompt, completion))


def _miss(run: ArmRun) -> Miss:
    return Miss(run.case, run.candidate, run.truth, run.verdict, run.error)


def arm_measures(arm: str, split: str, runs: Sequence[ArmRun], price: Price = Price()) -> ArmMeasures:
    """The instruments of one arm over ``runs`` (already that arm's, in that scope)."""
    typing, gates, discriminating = _typing(runs)
    flake_rate, reruns = _flakes(runs)
    return ArmMeasures(
        arm=arm,
        split=split,
        runs=len(runs),
        cases=len({r.case for r in runs}),
        corpus=tuple(sorted((r.case, r.candidate) for r in runs)),
        evidence_typing_coverage=typing,
        static_gate_results=gates,
        bug_discriminating_rate=discriminating,
        cost_ordering=_cost_ordering(runs),
        verdict_accuracy=Ratio(sum(1 for r in runs if r.correct), sum(1 for r in runs if r.correct is not None)),
        mismatches=tuple(_miss(r) for r in runs if r.correct is False),
        baseline_replay_coverage=_replay(runs),
        selection=_selection(runs),
        flake_rate=flake_rate,
        reruns=reruns,
        kill_rate=_kill_rate(runs),
        tamper_detection_rate=_tamper(runs),
        spend=_spend(runs, price),
        unanswered=tuple(_miss(r) for r in runs if not r.answered),
    )


def measures(runs: Iterable[Mapping[str, Any] | ArmRun], price: Price = Price()) -> Measures:
    """Every arm of ``runs`` over all runs, held-out and tuning; deterministic in the runs' content."""
    loaded = load_runs(runs)
    arms = sorted({r.arm for r in loaded}, key=_arm_order)
    measured = []
    for arm in arms:
        mine = [r for r in loaded if r.arm == arm]
        for scope in SCOPES:
            scoped = mine if scope == ALL else [r for r in mine if r.split == scope]
            measured.append(arm_measures(arm, scope, scoped, price))
    split = HELD_OUT if any(r.split == HELD_OUT for r in loaded) else ALL
    return Measures(price, split, tuple(measured))


# -- §7.4 the decision rule ------------------------------------------------------------------------


@dataclass(frozen=True)
class DecisionItem:
    """One inequality of §7.4 with both sides' values."""

    name: str
    battery: float | None
    baseline: float | None
    rule: str  # "> strictly", "< strictly", "<=", ">=", "<= 1.5x"
    met: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "battery": self.battery,
            "baseline": self.baseline,
            "rule": self.rule,
            "met": self.met,
        }


@dataclass(frozen=True)
class Decision:
    """§7.4: the battery wins iff every inequality holds, on an identical corpus."""

    battery: str
    baseline: str
    split: str
    cases: int
    items: tuple[DecisionItem, ...]
    identical_corpus: bool
    notes: tuple[str, ...]

    @property
    def wins(self) -> bool:
        """All seven met -- and both arms answered the same candidates, or nothing was compared."""
        return self.identical_corpus and all(i.met for i in self.items)

    def to_dict(self) -> dict[str, Any]:
        return {
            "battery": self.battery,
            "baseline": self.baseline,
            "split": self.split,
            "cases": self.cases,
            "wins": self.wins,
            "identical_corpus": self.identical_corpus,
            "items": [i.to_dict() for i in self.items],
            "notes": list(self.notes),
        }


def _strictly_lower(battery: float | None, baseline: float | None) -> bool:
    """Lower is better, and an arm that falsified nothing (``None``) cannot beat one that did."""
    if battery is None:
        return False
    return baseline is None or battery < baseline


def decide(battery: ArmMeasures, baseline: ArmMeasures) -> Decision:
    """The §7.4 rule: exactly the spec's seven inequalities, each with both values."""
    if battery.split != baseline.split:
        raise ValueError("the arms are measured over different splits: %s, %s" % (battery.split, baseline.split))
    b_co, n_co = battery.cost_ordering.seconds_per_falsified, baseline.cost_ordering.seconds_per_falsified
    b_flake, n_flake = battery.flake_rate.value, baseline.flake_rate.value
    b_tamper, n_tamper = battery.tamper_detection_rate.value, baseline.tamper_detection_rate.value
    b_cost, n_cost = battery.spend.cost_per_instance, baseline.spend.cost_per_instance
    b_tok, n_tok = battery.spend.tokens_per_instance, baseline.spend.tokens_per_instance
    b_typ, n_typ = battery.evidence_typing_coverage.value, baseline.evidence_typing_coverage.value
    b_bd, n_bd = battery.bug_discriminating_rate.value, baseline.bug_discriminating_rate.value
    items = (
        DecisionItem("evidence_typing_coverage", b_typ, n_typ, "> strictly", b_typ > n_typ),
        DecisionItem("bug_discriminating_rate", b_bd, n_bd, "> strictly", b_bd > n_bd),
        DecisionItem("cost_ordering", b_co, n_co, "< strictly", _strictly_lower(b_co, n_co)),
        DecisionItem("flake_rate", b_flake, n_flake, "<=", b_flake <= n_flake),
        DecisionItem("tamper_detection_rate", b_tamper, n_tamper, ">=", b_tamper >= n_tamper),
        DecisionItem("cost", b_cost, n_cost, "<= 1.5x", b_cost <= 1.5 * n_cost),
        DecisionItem("tokens", b_tok, n_tok, "<= 1.5x", b_tok <= 1.5 * n_tok),
    )
    identical = battery.corpus == baseline.corpus and battery.runs > 0
    return Decision(
        battery.arm, baseline.arm, battery.split, battery.cases, items, identical, _notes(battery, baseline, identical)
    )


def _notes(battery: ArmMeasures, baseline: ArmMeasures, identical: bool) -> tuple[str, ...]:
    notes = []
    if battery.split == HELD_OUT:
        notes.append("evaluated on the held-out split (%d cases)" % battery.cases)
    else:
        notes.append(
            "no held-out case in the runs: evaluated on all %d cases (scope %s), not a held-out result"
            % (battery.cases, battery.split)
        )
    if not identical:
        notes.append("the arms did not answer the same candidates: the comparison is void (§7.4: identical corpus)")
    for measured in (battery, baseline):
        if measured.cost_ordering.falsified == 0:
            notes.append("%s falsified no patch: its cost-ordering efficiency is undefined (null)" % measured.arm)
        if measured.unanswered:
            notes.append("%s did not answer %d run(s)" % (measured.arm, len(measured.unanswered)))
    tamper = battery.tamper_detection_rate
    if tamper.whole == 0:
        notes.append("no tampering candidate in the split: the tamper inequality holds vacuously")
    elif tamper.part == 0:
        notes.append("%s caught no tampering: check that the protection is installed (§7.2)" % battery.arm)
    return tuple(notes)


def decide_on(measures: Measures, battery: str = BATTERY, baseline: str = NAIVE) -> Decision:
    """``decide`` on the decision split: held-out when the runs have held-out cases, else all."""
    split = measures.decision_split
    return decide(measures.get(battery, split), measures.get(baseline, split))


# -- §7.3 the ablation rule ------------------------------------------------------------------------


@dataclass(frozen=True)
class Honest:
    """An honest measure as the ablation reads it: which way is better, and whether it is noisy."""

    name: str
    read: Callable[[ArmMeasures], float | None]
    higher_is_better: bool
    continuous: bool  # wall seconds and model spend vary between runs; everything else is counted


#: The measures an ablation is judged on, in report order. Continuous (±5% relative is noise):
#: cost-ordering seconds, tokens and cost per instance. Exact (Δ = 0 up to float rounding): the rest.
HONEST = (
    Honest("evidence_typing_coverage", lambda m: m.evidence_typing_coverage.value, True, False),
    Honest("bug_discriminating_rate", lambda m: m.bug_discriminating_rate.value, True, False),
    Honest("cost_ordering", lambda m: m.cost_ordering.seconds_per_falsified, False, True),
    Honest("verdict_accuracy", lambda m: m.verdict_accuracy.value, True, False),
    Honest("tamper_detection_rate", lambda m: m.tamper_detection_rate.value, True, False),
    Honest("flake_rate", lambda m: m.flake_rate.value, False, False),
    Honest("reruns", lambda m: float(m.reruns.total), False, False),
    Honest("kill_rate", lambda m: m.kill_rate.mean, True, False),
    Honest("baseline_replay_coverage", lambda m: m.baseline_replay_coverage.value, True, False),
    Honest("selection_fraction", lambda m: m.selection.mean_fraction, False, False),
    Honest("selection_gaps", lambda m: float(m.selection.gaps), False, False),
    Honest("unanswered", lambda m: float(len(m.unanswered)), False, False),
    Honest("tokens", lambda m: m.spend.tokens_per_instance, False, True),
    Honest("cost", lambda m: m.spend.cost_per_instance, False, True),
)


@dataclass(frozen=True)
class Delta:
    """One measure, full battery against the battery without one mechanism (Δ = ablated - full)."""

    measure: str
    full: float | None
    ablated: float | None
    higher_is_better: bool
    continuous: bool

    @property
    def delta(self) -> float | None:
        return None if self.full is None or self.ablated is None else self.ablated - self.full

    def _moved(self) -> float:
        """Signed improvement beyond noise: > 0 better without the mechanism, < 0 worse, 0 noise.

        Losing a measure the full battery had (``None`` after the ablation: nothing falsified, no
        kill rate) is a degradation; gaining one is an improvement.
        """
        if self.full is None and self.ablated is None:
            return 0.0
        if self.ablated is None:
            return -1.0
        if self.full is None:
            return 1.0
        delta = self.ablated - self.full
        noise = NOISE * abs(self.full) if self.continuous else EXACT
        if abs(delta) <= noise:
            return 0.0
        return delta if self.higher_is_better else -delta

    @property
    def degraded(self) -> bool:
        return self._moved() < 0

    @property
    def improved(self) -> bool:
        return self._moved() > 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "measure": self.measure,
            "full": self.full,
            "ablated": self.ablated,
            "delta": self.delta,
            "better": "higher" if self.higher_is_better else "lower",
            "continuous": self.continuous,
            "degraded": self.degraded,
            "improved": self.improved,
        }


@dataclass(frozen=True)
class AblationRow:
    """§7.3 for one mechanism: DELETED iff removing it degrades no honest measure beyond noise."""

    mechanism: str
    split: str
    deltas: tuple[Delta, ...]

    @property
    def degraded(self) -> tuple[str, ...]:
        return tuple(d.measure for d in self.deltas if d.degraded)

    @property
    def improved(self) -> tuple[str, ...]:
        return tuple(d.measure for d in self.deltas if d.improved)

    @property
    def delete(self) -> bool:
        return not self.degraded

    @property
    def harm(self) -> bool:
        """Removing it made things better and nothing worse: a demonstrated harm, removed outright."""
        return self.delete and bool(self.improved)

    def to_dict(self) -> dict[str, Any]:
        return {
            "mechanism": self.mechanism,
            "split": self.split,
            "delete": self.delete,
            "harm": self.harm,
            "degraded": list(self.degraded),
            "improved": list(self.improved),
            "deltas": [d.to_dict() for d in self.deltas],
        }


def mechanism(arm: str) -> str:
    return arm[len(ABLATE) :] if arm.startswith(ABLATE) else arm


def _mechanism_order(name: str) -> tuple[bool, str]:
    """The single L steering stub first -- the weakest a-priori case (§7.3) -- then by name."""
    return ("steer" not in name, name)


def ablation(full: ArmMeasures, ablated: Mapping[str, ArmMeasures]) -> list[AblationRow]:
    """One row per ablated mechanism (keys: ``ablate:<mechanism>`` or the bare mechanism)."""
    rows = []
    for key in sorted(ablated, key=lambda k: _mechanism_order(mechanism(k))):
        other = ablated[key]
        if other.split != full.split:
            raise ValueError(
                "ablation %s is measured over %s, the full battery over %s" % (key, other.split, full.split)
            )
        deltas = tuple(Delta(h.name, h.read(full), h.read(other), h.higher_is_better, h.continuous) for h in HONEST)
        rows.append(AblationRow(mechanism(key), full.split, deltas))
    return rows


def ablation_on(measures: Measures, full: str = BATTERY) -> list[AblationRow]:
    """``ablation`` of every ``ablate:`` arm against ``full``, on the decision split."""
    split = measures.decision_split
    ablated = {a: measures.get(a, split) for a in measures.arm_names if a.startswith(ABLATE)}
    return ablation(measures.get(full, split), ablated)
