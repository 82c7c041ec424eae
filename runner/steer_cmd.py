"""``evidence-runner steer``: the one steering call of a repair loop, beside a finished record.

A certification never calls the model. A repair loop that holds a record which is not CERTIFIED
may ask, once, what to probe next and what the failure means (``runner.steering``). The answer
-- or the violation it was -- is written into a copy of the record as its ``steering`` entry;
the verdict, the tiers and every result stay what the ladder computed. A record that already
holds its one call is refused: a second call on the same opportunity is a re-prompt.
"""

from __future__ import annotations

import argparse
import json
import pathlib
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from pytest_evidence.errors import EXIT_CERTIFIED, BadInput
from pytest_evidence.model import EvidenceRecord
from pytest_evidence.output import check_writable, write_json
from runner import steering


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--record", required=True, type=pathlib.Path, help="the evidence record to read")
    parser.add_argument("--patch", required=True, type=pathlib.Path, help="the candidate patch under diagnosis")
    parser.add_argument("--intent", required=True, type=pathlib.Path, help="the issue's intent, as text")
    parser.add_argument("--out", required=True, type=pathlib.Path, help="where to write the record with its entry")
    parser.add_argument(
        "--max-tokens",
        type=int,
        default=steering.DEFAULT_MAX_TOKENS,
        metavar="N",
        help="the completion's token bound (1-%d, default %d)" % (steering.MAX_TOKENS, steering.DEFAULT_MAX_TOKENS),
    )


def run(args: argparse.Namespace, model: steering.Model | None = None) -> tuple[int, str]:
    """Steer once; ``model``: the model to ask (default: the configured HTTP client)."""
    record = _record(args.record)
    patch, intent = _text(args.patch, "--patch"), _text(args.intent, "--intent")
    if not 1 <= args.max_tokens <= steering.MAX_TOKENS:
        raise BadInput("--max-tokens must be between 1 and %d, not %d" % (steering.MAX_TOKENS, args.max_tokens))
    check_writable(str(args.out), "--out", create_parents=False)
    if record.steering is not None:
        raise BadInput("%s already holds its one steering call: a second one would be a re-prompt" % args.record)
    if not steering.opportunity(record):
        why = "the record has no verdict" if record.verdict is None else "the record is CERTIFIED"
        return EXIT_CERTIFIED, "no steering opportunity: %s; no call made" % why
    if model is None:
        seed = (record.invocation or {}).get("seed")
        model = steering.OpenAIClient.from_environment(seed=seed if isinstance(seed, int) else None)
    entry = steering.steer(model, steering.SteeringInput.build(patch, intent, record), max_tokens=args.max_tokens)
    write_json(str(args.out), replace(record, steering=entry.to_dict()).to_dict())
    return EXIT_CERTIFIED, _said(entry.to_dict())


def _said(entry: Mapping[str, Any]) -> str:
    tokens = "%s+%s tokens" % (entry["prompt_tokens"], entry["completion_tokens"])
    if entry["violation"] is not None:
        violation = entry["violation"]
        return "VIOLATION %s: %s; recorded, the deterministic verdict stands (%s)" % (
            violation["kind"],
            violation["message"],
            tokens,
        )
    return "STEERED: probe %s; interpretation: %s (%s)" % (
        entry["steering_action"] or "nothing",
        entry["interpretation"],
        tokens,
    )


def _record(path: pathlib.Path) -> EvidenceRecord:
    try:
        return EvidenceRecord.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except OSError as exc:
        raise BadInput("--record %s: %s" % (path, exc.strerror or exc)) from None
    except (ValueError, KeyError, TypeError) as exc:
        raise BadInput("--record %s is not an evidence record: %s" % (path, exc)) from None


def _text(path: pathlib.Path, option: str) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise BadInput("%s %s: %s" % (option, path, exc.strerror or exc)) from None
