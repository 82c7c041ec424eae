"""``steer_and_interpret``: the single learned step, off by default (spec §3.12, §4).

Inside a repair loop, once the deterministic ladder has produced a result that is not CERTIFIED,
a model may be asked *once* what to probe next and what the failure means against the issue's
intent. It steers; it never certifies. Everything around the call is deterministic so that the
learned part stays one bounded, auditable entry ("the L column contains at most one entry"):

* the prompt is assembled from the record in the spec's exact order (``SteeringInput``);
* the call is one completion at temperature 0 with a bounded token budget -- never a retry, never
  a re-prompt, whatever comes back (``steer``);
* the reply is admitted only if it parses, matches ``steering.schema.json`` exactly, does not
  claim green over a deterministic failure and does not ask to waive or re-run a tier or a test.
  Anything else is recorded as a violation, and the reply is dropped whole;
* the verdict is never an input to change: ``steer`` reads what was built from a record and
  returns a ``SteeringEntry`` to put beside it. A certification run does not call it at all.

The two text rules (``green_claim``, ``waiver``) are regular expressions over the reply, not
understanding: their limits are listed on each and in ``docs/steering.md``. They lean strict on
purpose -- a false alarm costs one discarded hint, while a missed one only lets a misleading
hypothesis through to a stage that still cannot change the verdict.

Standard library and jsonschema only: the HTTP client is urllib, and the tests never reach it
(``ScriptedModel``, or ``OpenAIClient`` with an injected transport).
"""

from __future__ import annotations

import enum
import functools
import http.client
import json
import os
import pathlib
import re
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import jsonschema

from pytest_evidence.errors import BadInput, ToolFailed
from pytest_evidence.model import FAILING, EvidenceRecord, Outcome, TierStatus, Verdict, bounded

SCHEMA_PATH = pathlib.Path(__file__).with_name("steering.schema.json")

#: Fixed, not configurable: the step is meant to be as repeatable as a model call can be.
TEMPERATURE = 0.0
DEFAULT_MAX_TOKENS = 512
#: The most a caller may grant one call: the reply is two short fields, not an essay.
MAX_TOKENS = 2048
DEFAULT_TIMEOUT = 60.0
#: An answer larger than this is not a chat completion of at most MAX_TOKENS tokens.
MAX_RESPONSE_BYTES = 1 << 20

# The payload is bounded too: a whole suite's failures, or a huge patch, would drown the hint.
PATCH_LIMIT = 16_000
INTENT_LIMIT = 4_000
MAX_RESULTS = 10
MAX_FINDINGS = 20
TEXT_LIMIT = 1_000

ENV_BASE_URL = "EVIDENCE_STEER_BASE_URL"
ENV_MODEL = "EVIDENCE_STEER_MODEL"
ENV_API_KEY = "EVIDENCE_STEER_API_KEY"
#: Optional: ``max_tokens`` (default, what most OpenAI-compatible servers take) or
#: ``max_completion_tokens`` (what OpenAI's newer models require).
ENV_TOKEN_FIELD = "EVIDENCE_STEER_TOKEN_FIELD"
TOKEN_FIELDS = ("max_tokens", "max_completion_tokens")

#: Tiers whose status is something to read: the patch was falsified, or could not be proved.
_NOT_PASSING_TIERS = frozenset({TierStatus.FAILED, TierStatus.INCONCLUSIVE, TierStatus.ERROR})
#: Non-passing results that show the code misbehaving come first when the list is cut.
_FIRST = FAILING | {Outcome.TIMEOUT, Outcome.CRASH, Outcome.FLAKY, Outcome.XPASSED}

SYSTEM_PROMPT = (
    "You are the steering step of a deterministic test harness. You steer only: you never certify, "
    "judge or author a verdict. The harness computed the verdict without you and it stands whatever "
    "you say.\n"
    "You are given, in this order: candidate_patch, issue_intent, failing_result (the deterministic "
    "result the harness just produced) and tier_state (each tier that ran and its status).\n"
    "Answer with exactly one JSON object and nothing else, with exactly these two keys:\n"
    '{"steering_action": <string or null>, "interpretation": <string>}\n'
    "steering_action: one concrete test or probe to run next against this candidate (a pytest node id, "
    "a python -c command), or null if nothing is worth probing. It must not re-run or retry anything, "
    "and must not skip, waive, ignore, deselect, disable or xfail any test or tier.\n"
    "interpretation: a hypothesis, in plain words, about what the failure means against the issue's "
    "intent. It must not say that the patch passes, works, is fixed, correct, certified or green, "
    "nor that a failure is spurious, flaky or can be ignored.\n"
    "A reply that breaks any of these rules is discarded, and you are not asked again."
)

Message = Mapping[str, str]


class ViolationKind(str, enum.Enum):
    """Why a reply was not admitted. Each is recorded; none leads to a second call."""

    PARSE_FAILURE = "parse_failure"  # empty, or not one JSON object
    SCHEMA_VIOLATION = "schema_violation"  # not exactly {steering_action, interpretation}
    CLAIMS_GREEN = "claims_green"  # the interpretation asserts green over a deterministic failure
    WAIVES_TIER = "waives_tier"  # the action skips, waives or re-runs a tier or a test
    CALL_FAILED = "call_failed"  # the model did not answer: HTTP error, timeout, bad envelope


@dataclass(frozen=True)
class Violation:
    kind: ViolationKind
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind.value, "message": self.message}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Violation:
        return cls(ViolationKind(data["kind"]), data["message"])


@dataclass(frozen=True)
class Completion:
    """One answer of a model. Token counts are None when the server did not report usage."""

    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    model: str


class Model(Protocol):
    """What ``steer`` needs of a model: a name for the record and one completion.

    ``complete`` raises ``ToolFailed`` when no answer came back; ``steer`` records that as
    ``call_failed``. Any other exception is a defect of the implementation and propagates.
    """

    @property
    def name(self) -> str: ...

    def complete(self, messages: Sequence[Message], *, temperature: float, max_tokens: int) -> Completion: ...


@dataclass(frozen=True)
class SteeringEntry:
    """The L column of a record: one call, what it cost, and what was admitted of it.

    ``steering_action`` and ``interpretation`` are None whenever ``violation`` is set: a reply
    that breaks a rule is dropped whole, never partly admitted.
    """

    model: str
    prompt_tokens: int | None
    completion_tokens: int | None
    steering_action: str | None
    interpretation: str | None
    violation: Violation | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "steering_action": self.steering_action,
            "interpretation": self.interpretation,
            "violation": None if self.violation is None else self.violation.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SteeringEntry:
        violation = data["violation"]
        return cls(
            model=data["model"],
            prompt_tokens=data["prompt_tokens"],
            completion_tokens=data["completion_tokens"],
            steering_action=data["steering_action"],
            interpretation=data["interpretation"],
            violation=None if violation is None else Violation.from_dict(violation),
        )


# --- the input -------------------------------------------------------------------------------


@dataclass(frozen=True)
class SteeringInput:
    """The prompt's four inputs, in the spec's exact order (§4), each bounded.

    ``failing_result`` is the deterministic result as the record states it: the verdict and its
    reasons, the tiers that failed, could not prove their point or errored (with their notes and
    findings), and the non-passing results as contract dicts. ``tier_state`` is every tier the
    ladder reached (status other than ``not_run``), so the model cannot re-argue one that failed.
    """

    candidate_patch: str
    issue_intent: str
    failing_result: Mapping[str, Any]
    tier_state: tuple[Mapping[str, str], ...]

    @classmethod
    def build(cls, candidate_patch: str, issue_intent: str, record: EvidenceRecord) -> SteeringInput:
        """Deterministic: the same patch, intent and record always give the same prompt."""
        verdict = record.verdict
        tiers = [
            {
                "tier": t.tier.value,
                "status": t.status.value,
                "note": bounded(t.note, TEXT_LIMIT),
                "findings": [f.to_dict() for f in t.findings[:MAX_FINDINGS]],
                "findings_omitted": max(0, len(t.findings) - MAX_FINDINGS),
            }
            for t in record.tiers
            if t.status in _NOT_PASSING_TIERS
        ]
        failing = [r for r in record.results if r.candidate_result is not Outcome.PASS]
        failing.sort(key=lambda r: r.candidate_result not in _FIRST)  # stable: record order otherwise
        shown = failing[:MAX_RESULTS]
        return cls(
            candidate_patch=bounded(candidate_patch, PATCH_LIMIT),
            issue_intent=bounded(issue_intent, INTENT_LIMIT),
            failing_result={
                "verdict": None if verdict is None else verdict.verdict.value,
                "halted_at": None if verdict is None or verdict.halted_at is None else verdict.halted_at.value,
                "reasons": [] if verdict is None else [bounded(r, TEXT_LIMIT) for r in verdict.reasons],
                "tiers": tiers,
                "results": [_result_dict(r.to_dict()) for r in shown],
                "results_omitted": len(failing) - len(shown),
            },
            tier_state=tuple(
                {"tier": t.tier.value, "status": t.status.value}
                for t in record.tiers
                if t.status is not TierStatus.NOT_RUN
            ),
        )

    @property
    def deterministic_failure(self) -> bool:
        """The ladder did not certify, or a tier failed: an interpretation may not claim green."""
        certified = self.failing_result.get("verdict") == Verdict.CERTIFIED.value
        failed = any(t.get("status") == TierStatus.FAILED.value for t in self.tier_state)
        return failed or not certified

    def to_dict(self) -> dict[str, Any]:
        return {
            "candidate_patch": self.candidate_patch,
            "issue_intent": self.issue_intent,
            "failing_result": dict(self.failing_result),
            "tier_state": [dict(t) for t in self.tier_state],
        }

    def prompt(self) -> str:
        """The user message: the four inputs as numbered sections, in the spec's order.

        Each is fenced with more backticks than it contains, so a patch cannot close its own
        section and pose as the next one.
        """
        sections = []
        for number, (key, value) in enumerate(self.to_dict().items(), start=1):
            text = value if isinstance(value, str) else json.dumps(value, indent=1, ensure_ascii=False)
            fence = "`" * max(3, _longest_backtick_run(text) + 1)
            sections.append("## %d. %s\n%s\n%s\n%s" % (number, key, fence, text, fence))
        sections.append(
            'Answer with exactly one JSON object: {"steering_action": <string or null>, "interpretation": <string>}'
        )
        return "\n\n".join(sections)

    def messages(self) -> tuple[dict[str, str], ...]:
        return ({"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": self.prompt()})


def _result_dict(result: dict[str, Any]) -> dict[str, Any]:
    result["stdout_summary"] = bounded(result["stdout_summary"], TEXT_LIMIT)
    failure = result["failure"]
    if failure is not None:
        failure["message"] = bounded(failure["message"], TEXT_LIMIT)
        failure["excerpt"] = bounded(failure["excerpt"], TEXT_LIMIT)
    return result


def _longest_backtick_run(text: str) -> int:
    return max((len(m) for m in re.findall(r"`+", text)), default=0)


def opportunity(record: EvidenceRecord) -> bool:
    """A steering opportunity: the ladder finished with a failing or inconclusive result to read.

    Never for CERTIFIED (nothing to steer, and nothing the model may add to it), and never for a
    record without a verdict (interrupted, or a defect: there is no deterministic result to read).
    """
    return record.verdict is not None and record.verdict.verdict is not Verdict.CERTIFIED


# --- the rules over the reply ----------------------------------------------------------------

# Phrases that assert the patch is good, or that a deterministic failure does not count. Over
# prose, so plain word boundaries. Each pair is (what it asserts, pattern).
_GREEN_RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (what, re.compile(pattern, re.IGNORECASE))
    for what, pattern in (
        ("the result is green", r"\bgreen\b"),
        (
            "everything passes",
            r"\b(?:all|every|each)\b[^.;:!?\n]{0,40}?\b(?:pass(?:es|ed)?|passing|succeed(?:s|ed)?)\b",
        ),
        (
            "everything passes",
            r"\b(?:suite|ladder|build|ci|battery|tiers)\s+(?:now\s+)?(?:pass(?:es|ed)?|succeed(?:s|ed)?|is\s+passing)\b",
        ),
        (
            "the patch works",
            r"\b(?:patch|fix|candidate|change)\s+(?:now\s+)?(?:works|passes|succeeds|is\s+working)"
            r"(?=\s*(?:[.;,!?\n]|$|(?:now|correctly|as\s+(?:intended|expected)|all|every|(?:the|its)\s+(?:tests?|reproducers?|suite|tiers?|checks?))\b))",
        ),
        (
            "the patch fixes the bug",
            r"\b(?:patch|fix|candidate|change)\s+(?:now\s+)?(?:resolves|fixes|solves)\s+(?:the\s+|this\s+)?"
            r"(?:bug|issue|problem|failure)\b",
        ),
        (
            "the patch is correct",
            r"\b(?:patch|fix|candidate|change|solution|implementation)\s+"
            r"(?:is|looks|seems|appears)\s+(?:to\s+be\s+)?(?:\w+\s+)?"
            r"(?:correct|valid|right|complete|sufficient|good|fine|working|acceptable)\b",
        ),
        (
            "the bug is fixed",
            r"\b(?:bug|issue|problem|regression|failure)\s+(?:is|are|was|has\s+been|have\s+been)\s+(?:\w+\s+)?"
            r"(?:fixed|resolved|solved|gone|addressed)\b",
        ),
        ("the patch is certified", r"\bcertif(?:y|ied|ies|iable|ying)\b"),
        (
            "the patch should be accepted",
            r"\b(?:patch|fix|candidate|change)\s+(?:should|can|could|may)\s+be\s+(?:accepted|merged|approved)\b",
        ),
        (
            "the failure does not count",
            r"\b(?:can|could|should|may|might)\s+(?:safely\s+)?be\s+(?:ignored|disregarded|waived|overridden|dismissed)\b",
        ),
        ("the failure does not count", r"\b(?:false\s+positive|spurious)\b"),
        (
            "the failure does not count",
            r"\b(?:is|was|looks|seems|probably|likely)\s+(?:\w+\s+)?(?:a\s+)?(?:flake|flaky)\b",
        ),
    )
)

#: Words that turn a green phrase around when they are in it or just before it, in its clause.
_NEGATIONS = frozenset(
    "not no never cannot can't isn't aren't wasn't weren't won't doesn't don't didn't hasn't haven't "
    "nor neither without unable refused refuses".split()
)
_NEGATION_WINDOW = 4  # words before the phrase
_CLAUSE_END = re.compile(r"[.;:!?\n]")


def green_claim(interpretation: str) -> str | None:
    """The first phrase claiming green (or dismissing the failure) that is not negated, quoted.

    A phrase counts unless a negation ("not", "cannot", "isn't"...) is inside it or among the four
    words before it in the same clause. Limits: a claim worded otherwise ("the behaviour now
    matches the issue") is not seen; a negation that belongs to a nearby verb hides a claim ("it
    does not hang, and all tests pass"), and one further away is not seen ("it is not true, as the
    log suggests, that all tests pass" is flagged); a statement about one side that uses the words
    ("every reproducer passes on B", "the test is green on B") is flagged although it claims
    nothing about C. The system prompt asks the model to avoid these words altogether, which
    makes both kinds of mistake rare.
    """
    text = interpretation.replace("\u2019", "'")
    for what, pattern in _GREEN_RULES:
        for match in pattern.finditer(text):
            clause_start = max((m.end() for m in _CLAUSE_END.finditer(text, 0, match.start())), default=0)
            before = _words(text[clause_start : match.start()])[-_NEGATION_WINDOW:]
            if _NEGATIONS.isdisjoint(before + _words(match.group(0))):
                return "%s: %r" % (what, match.group(0))
    return None


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z]+(?:'[a-z]+)?", text.lower())


# Over a command or a test id, so a keyword counts only as a word of its own: not inside a path
# segment (``tests/retry/``), a test name (``test_skip_empty``) or a parametrization (``[again]``).
# A dot before it is allowed (``pytest.skip``), one after only at the end of a sentence.
_WORD = r"(?<![\w/\[:])(?:%s)(?![\w/\]:]|\.\w)"
_WAIVER_RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (what, re.compile(pattern, re.IGNORECASE))
    for what, pattern in (
        (
            "re-runs a tier or a test",
            _WORD
            % r"re-?run\w*|retr(?:y|ies|ied|ying)|repeat\w*|again|--lf|--lfnf|--last-failed\w*|--ff|--failed-first"
            r"|--sw|--stepwise\w*|--count|--flake-finder\w*",
        ),
        ("re-runs until it passes", r"\buntil\b.{0,40}?\b(?:pass\w*|green|succeed\w*|works?)\b"),
        (
            "skips or waives a tier or a test",
            _WORD % r"skip(?:s|ped|ping|if)?|waiv\w*|ignor\w*|disabl\w*|deselect\w*|--deselect|xfail\w*|quarantin\w*"
            r"|--continue-on-collection-errors|--noconftest",
        ),
        ("deselects tests", r"(?<![\w-])-[km]\s*(?:'[^']*|\"[^\"]*|\S*)\bnot\b"),
        ("disables a plugin", r"(?<![\w-])-p\s*no:"),
        (
            "authors the verdict",
            _WORD % r"certif\w*|verdict"
            + r"|\b(?:mark|treat|count|consider|override|overrule)\w*\b.{0,30}?"
            + r"\b(?:pass(?:ed|ing)?|green|ok|success\w*)\b",
        ),
    )
)


def waiver(action: str) -> str | None:
    """The first way ``action`` waives, skips or re-runs a tier or a test, quoted; None if none.

    Limits: a keyword is matched as a word, whatever it means there, so a legitimate probe that
    selects tests by such a word (``pytest -k retry``) is flagged, and a re-run worded otherwise
    ("execute it once more") is not. Re-running the same test on this candidate is what the
    ladder's flake policy does and owns; a later round gets its own opportunity.
    """
    for what, pattern in _WAIVER_RULES:
        match = pattern.search(action)
        if match is not None:
            return "%s: %r" % (what, match.group(0))
    return None


# --- the call --------------------------------------------------------------------------------


@functools.cache
def output_schema() -> dict[str, Any]:
    """``steering.schema.json``: exactly ``{steering_action, interpretation}``."""
    loaded: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return loaded


def admit(text: str, deterministic_failure: bool) -> tuple[str | None, str | None, Violation | None]:
    """``(steering_action, interpretation, violation)`` for one reply; pure.

    Checked in the spec's order -- parse, schema, a green claim, an action that waives or re-runs
    -- and the first violation is the one recorded. A violating reply admits nothing.
    """
    if not text.strip():
        return None, None, Violation(ViolationKind.PARSE_FAILURE, "empty output")
    try:
        reply = json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except ValueError as exc:
        return None, None, Violation(ViolationKind.PARSE_FAILURE, "not one JSON object: %s" % exc)
    validator = jsonschema.Draft202012Validator(output_schema())
    error = jsonschema.exceptions.best_match(validator.iter_errors(reply))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "the reply"
        message = "%s: %s" % (where, bounded(error.message, 300))
        return None, None, Violation(ViolationKind.SCHEMA_VIOLATION, message)
    action: str | None = reply["steering_action"]
    interpretation: str = reply["interpretation"]
    claim = green_claim(interpretation) if deterministic_failure else None
    if claim is not None:
        message = "the interpretation asserts %s, over a deterministic failure" % claim
        return None, None, Violation(ViolationKind.CLAIMS_GREEN, message)
    waived = None if action is None else waiver(action)
    if waived is not None:
        return None, None, Violation(ViolationKind.WAIVES_TIER, "the action %s" % waived)
    return action, interpretation, None


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    duplicated = sorted({k for k in keys if keys.count(k) > 1})
    if duplicated:
        raise ValueError("duplicate key(s) %s" % ", ".join(map(repr, duplicated)))
    return dict(pairs)


def steer(model: Model, inp: SteeringInput, *, max_tokens: int = DEFAULT_MAX_TOKENS) -> SteeringEntry:
    """Exactly one call to ``model``, whatever it answers; never a retry, never a re-prompt.

    Returns the entry for the record. The verdict is not an input to change: the caller keeps
    its deterministic record as it was and puts this entry beside it.
    """
    if not 1 <= max_tokens <= MAX_TOKENS:
        raise BadInput("steering max_tokens must be between 1 and %d, not %d" % (MAX_TOKENS, max_tokens))
    try:
        completion = model.complete(inp.messages(), temperature=TEMPERATURE, max_tokens=max_tokens)
    except ToolFailed as exc:
        return SteeringEntry(model.name, None, None, None, None, Violation(ViolationKind.CALL_FAILED, str(exc)))
    action, interpretation, violation = admit(completion.text, inp.deterministic_failure)
    return SteeringEntry(
        model=completion.model,
        prompt_tokens=completion.prompt_tokens,
        completion_tokens=completion.completion_tokens,
        steering_action=action,
        interpretation=interpretation,
        violation=violation,
    )


# --- the models ------------------------------------------------------------------------------

Transport = Callable[[urllib.request.Request, float], bytes]
_HTTP_URL = re.compile(r"https?://[^/\s]+")


def _urlopen(request: urllib.request.Request, timeout: float) -> bytes:
    with urllib.request.urlopen(request, timeout=timeout) as response:
        body: bytes = response.read(MAX_RESPONSE_BYTES + 1)
        return body


@dataclass(frozen=True)
class OpenAIClient:
    """An OpenAI-compatible chat completions endpoint: one POST per call, nothing retried.

    ``transport`` sends the request and returns the body; the default is urllib. Whatever goes
    wrong on the way (no connection, a timeout, an HTTP error status, an answer that is not a
    completion) is raised as ``ToolFailed``, which ``steer`` records as ``call_failed``. The key
    is sent as a bearer token and appears in no message and no repr.
    """

    base_url: str
    model: str
    api_key: str = field(repr=False)
    timeout: float = DEFAULT_TIMEOUT
    token_field: str = "max_tokens"
    seed: int | None = None  # sent when set, for servers that honour it
    transport: Transport = field(default=_urlopen, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not _HTTP_URL.match(self.base_url):
            raise BadInput("steering base URL must be http:// or https://, not %r" % self.base_url)
        if self.token_field not in TOKEN_FIELDS:
            raise BadInput(
                "steering token field must be one of %s, not %r" % (", ".join(TOKEN_FIELDS), self.token_field)
            )
        if self.timeout <= 0:
            raise BadInput("steering timeout must be positive, not %r" % self.timeout)

    @classmethod
    def from_environment(
        cls,
        environ: Mapping[str, str] | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        seed: int | None = None,
        transport: Transport = _urlopen,
    ) -> OpenAIClient:
        """Base URL, model and key from ``EVIDENCE_STEER_*``; a missing or bad one is named."""
        env = os.environ if environ is None else environ
        values = {}
        for name in (ENV_BASE_URL, ENV_MODEL, ENV_API_KEY):
            value = env.get(name, "")
            if not value:
                raise BadInput("steering is not configured: %s is not set" % name)
            values[name] = value
        if not _HTTP_URL.match(values[ENV_BASE_URL]):
            raise BadInput("%s must be an http:// or https:// URL, not %r" % (ENV_BASE_URL, values[ENV_BASE_URL]))
        token_field = env.get(ENV_TOKEN_FIELD) or "max_tokens"
        if token_field not in TOKEN_FIELDS:
            raise BadInput("%s must be one of %s, not %r" % (ENV_TOKEN_FIELD, ", ".join(TOKEN_FIELDS), token_field))
        return cls(
            values[ENV_BASE_URL],
            values[ENV_MODEL],
            values[ENV_API_KEY],
            timeout=timeout,
            token_field=token_field,
            seed=seed,
            transport=transport,
        )

    @property
    def name(self) -> str:
        return self.model

    @property
    def url(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"

    def request(self, messages: Sequence[Message], *, temperature: float, max_tokens: int) -> urllib.request.Request:
        """The one POST a call sends (separate so that it can be inspected without sending it)."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [dict(m) for m in messages],
            "temperature": temperature,
            self.token_field: max_tokens,
            "response_format": {"type": "json_object"},
        }
        if self.seed is not None:
            body["seed"] = self.seed
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "Authorization": "Bearer %s" % self.api_key,
        }
        return urllib.request.Request(self.url, data=json.dumps(body).encode(), headers=headers, method="POST")

    def complete(self, messages: Sequence[Message], *, temperature: float, max_tokens: int) -> Completion:
        request = self.request(messages, temperature=temperature, max_tokens=max_tokens)
        try:
            raw = self.transport(request, self.timeout)
        except urllib.error.HTTPError as exc:
            raise ToolFailed(
                "steering model at %s answered HTTP %d: %s" % (self.url, exc.code, _error_body(exc))
            ) from None
        except (OSError, http.client.HTTPException, ValueError) as exc:
            raise ToolFailed("steering model at %s did not answer: %s" % (self.url, exc)) from None
        return _completion(raw, self.model, self.url)


def _error_body(exc: urllib.error.HTTPError) -> str:
    """The start of an error answer (servers explain themselves there), or the reason phrase."""
    try:
        body = exc.read(2000).decode("utf-8", "replace").strip()
    except (OSError, AttributeError, ValueError):
        body = ""
    finally:
        exc.close()
    return bounded(" ".join(body.split()), 300) or str(exc.reason)


def _completion(raw: bytes, model: str, url: str) -> Completion:
    """The text and usage of a chat completion envelope; anything else is ``ToolFailed``."""

    def bad(why: str) -> ToolFailed:
        return ToolFailed("steering model at %s answered with %s" % (url, why))

    if len(raw) > MAX_RESPONSE_BYTES:
        raise bad("more than %d bytes" % MAX_RESPONSE_BYTES)
    try:
        envelope = json.loads(raw.decode("utf-8"))
    except ValueError as exc:  # UnicodeDecodeError is one
        raise bad("no JSON envelope: %s" % exc) from None
    choices = envelope.get("choices") if isinstance(envelope, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        error = envelope.get("error") if isinstance(envelope, dict) else None
        raise bad("no choices%s" % ("" if error is None else ": %s" % bounded(json.dumps(error), 300)))
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if content is not None and not isinstance(content, str):
        raise bad("a message content that is not text")
    usage = envelope.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    answered = envelope.get("model")
    return Completion(
        text=content or "",  # null content (a refusal) is empty output: a parse failure, not a call failure
        prompt_tokens=_count(usage.get("prompt_tokens")),
        completion_tokens=_count(usage.get("completion_tokens")),
        model=answered if isinstance(answered, str) and answered else model,
    )


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


@dataclass
class ScriptedModel:
    """The tests' model: answers from a script, in order, and counts the calls.

    A reply that is an exception is raised instead (``ToolFailed`` to stand for a failed call).
    Running out of replies raises ``AssertionError``, which ``steer`` does not catch: a second
    call fails the test that made it.
    """

    replies: Sequence[str | Exception]
    usage: tuple[int, int] = (0, 0)
    model_name: str = "scripted"
    calls: int = 0
    received: list[dict[str, Any]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.model_name

    def complete(self, messages: Sequence[Message], *, temperature: float, max_tokens: int) -> Completion:
        self.calls += 1
        self.received.append(
            {"messages": [dict(m) for m in messages], "temperature": temperature, "max_tokens": max_tokens}
        )
        if self.calls > len(self.replies):
            raise AssertionError(
                "ScriptedModel: call %d, but the script has %d repl(ies)" % (self.calls, len(self.replies))
            )
        reply = self.replies[self.calls - 1]
        if isinstance(reply, Exception):
            raise reply
        return Completion(reply, self.usage[0], self.usage[1], self.model_name)
