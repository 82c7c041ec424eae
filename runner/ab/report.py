"""The A/B report: one JSON document (format ``ab-2``, ``ab.schema.json``) and its Markdown reading.

The document is a function of the runs: no clock, no host name, nothing a rerun would change
unless the caller passes it (``generated``). The Markdown is written to be read in a minute, in
the order a reader needs it: the decision first -- each inequality of §7.4 with both values and
whether it held -- then the KEY measures per arm with held-out and tuning apart (never mixed into
one number: §8 invariant 9), the verdict of every arm on every candidate, the secondaries, and
the ablations.
"""

from __future__ import annotations

import functools
import json
import pathlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import jsonschema

from runner.ab.measure import (
    HELD_OUT,
    SPLITS,
    AblationRow,
    ArmRun,
    Decision,
    Measures,
    confirm,
    load_runs,
)

FORMAT = "ab-2"
SCHEMA_PATH = pathlib.Path(__file__).with_name("ab.schema.json")


@functools.cache
def schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA_PATH.read_text())
    return loaded


def validate(doc: Mapping[str, Any]) -> None:
    """Raises ``ValueError`` naming the first place where ``doc`` departs from ``ab.schema.json``."""
    validator = jsonschema.Draft202012Validator(schema())
    error = jsonschema.exceptions.best_match(validator.iter_errors(doc))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "the document"
        raise ValueError("A/B document does not match ab.schema.json at %s: %s" % (where, error.message))


def _case_rows(runs: Sequence[ArmRun]) -> list[dict[str, Any]]:
    """One row per case x candidate (held-out first), with every arm's answer on it."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    order = sorted(runs, key=lambda r: (SPLITS.index(r.split), r.key[1], r.key[2], r.key[0]))
    for run in order:
        row = rows.setdefault(
            (run.case, run.candidate),
            {
                "case": run.case,
                "split": run.split,
                "candidate": run.candidate,
                "truth": run.truth,
                "tamper": run.tamper,
                "arms": {},
            },
        )
        if row["truth"] != run.truth or row["tamper"] != run.tamper:
            raise ValueError("arms disagree on the truth of %s/%s" % (run.case, run.candidate))
        row["arms"][run.arm] = {
            "verdict": run.verdict,
            "accepted": run.accepted,
            "correct": run.correct,
            "seconds": run.seconds,
            "halted_at": run.halted_at,
            "exit_code": run.exit_code,
            "error": run.error,
        }
    return list(rows.values())


def document(
    runs: Iterable[Mapping[str, Any] | ArmRun],
    measures: Measures,
    decision: Decision,
    ablation: Sequence[AblationRow],
    generated: str | None = None,
) -> dict[str, Any]:
    """The ``ab-2`` JSON document, checked against its schema before it is returned."""
    loaded = load_runs(runs)
    doc = {
        "format": FORMAT,
        "generated": generated,
        "battery": decision.battery,
        "baseline": decision.baseline,
        "arms": list(measures.arm_names),
        "price": measures.price.to_dict(),
        "decision_split": measures.decision_split,
        "cases": _case_rows(loaded),
        "truth_unknown": confirm(loaded),
        "measures": measures.to_dict()["arms"],
        "decision": decision.to_dict(),
        "ablation": [row.to_dict() for row in ablation],
    }
    validate(doc)
    return doc


# -- Markdown ------------------------------------------------------------------------------------

#: How each inequality of §7.4 reads in the report.
LABELS = {
    "evidence_typing_coverage": "evidence-typing coverage (KEY)",
    "bug_discriminating_rate": "bug-discriminating rate (KEY)",
    "cost_ordering": "cost-ordering: seconds per falsified patch (companion)",
    "flake_rate": "flake rate",
    "tamper_detection_rate": "tamper-detection rate",
    "cost": "cost, $ per instance",
    "tokens": "tokens per instance",
}

#: The ablation deltas shown as columns; every other honest measure is named when it degrades.
ABLATION_COLUMNS = (
    ("evidence_typing_coverage", "typing"),
    ("bug_discriminating_rate", "bug-disc."),
    ("cost_ordering", "s/falsified"),
    ("verdict_accuracy", "accuracy"),
    ("tamper_detection_rate", "tamper"),
    ("flake_rate", "flake"),
    ("kill_rate", "kill rate"),
    ("tokens", "tokens"),
)


def _num(value: float | None, digits: int = 4) -> str:
    return "n/a" if value is None else "%.*f" % (digits, value)


def _signed(value: float | None) -> str:
    return "n/a" if value is None else "%+.4f" % value


def _ratio(ratio: Mapping[str, Any]) -> str:
    return "%.4f (%d/%d)" % (ratio["value"], ratio["part"], ratio["whole"])


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    lines = ["| %s |" % " | ".join(header), "|%s" % ("---|" * len(header))]
    lines.extend("| %s |" % " | ".join(_cell(c) for c in row) for row in rows)
    return lines


def _item_value(name: str, value: float | None) -> str:
    if name == "cost_ordering":
        return "n/a (falsified nothing)" if value is None else "%.2f s" % value
    if name == "cost":
        return "$%.4f" % (value or 0.0)
    if name == "tokens":
        return _num(value, 1)
    return _num(value)


def _decision(doc: Mapping[str, Any]) -> list[str]:
    decision = doc["decision"]
    met = sum(1 for i in decision["items"] if i["met"])
    outcome = "WINS" if decision["wins"] else "does NOT win"
    lines = [
        "## Decision: %s %s against %s" % (decision["battery"], outcome, decision["baseline"]),
        "",
        "Split: **%s** (%d cases); %d of %d inequalities met%s."
        % (
            decision["split"],
            decision["cases"],
            met,
            len(decision["items"]),
            "" if decision["identical_corpus"] else "; the arms did not answer the same candidates",
        ),
        "",
    ]
    rows = [
        (
            LABELS[i["name"]],
            i["rule"],
            _item_value(i["name"], i["battery"]),
            _item_value(i["name"], i["baseline"]),
            "yes" if i["met"] else "**no**",
        )
        for i in decision["items"]
    ]
    lines += _table(("inequality", "rule", decision["battery"], decision["baseline"], "met"), rows)
    price = doc["price"]
    lines += [""] + ["- %s" % n for n in decision["notes"]]
    lines.append(
        "- cost priced at $%g / $%g per million prompt / completion tokens"
        % (price["prompt_per_mtok"], price["completion_per_mtok"])
    )
    return lines


def _scopes(doc: Mapping[str, Any]) -> list[tuple[str, str, Mapping[str, Any]]]:
    """Every arm's held-out and tuning measures that rest on at least one run, arm by arm."""
    return [
        (arm, split, doc["measures"][arm][split])
        for arm in doc["arms"]
        for split in SPLITS
        if doc["measures"][arm][split]["runs"]
    ]


def _key(doc: Mapping[str, Any]) -> list[str]:
    rows = [
        (
            arm,
            split,
            str(m["runs"]),
            _ratio(m["evidence_typing_coverage"]),
            _ratio(m["bug_discriminating_rate"]),
            _item_value("cost_ordering", m["cost_ordering"]["seconds_per_falsified"]),
            "%d of %d" % (m["cost_ordering"]["falsified"], m["cost_ordering"]["rejects"]),
            _ratio(m["verdict_accuracy"]),
        )
        for arm, split, m in _scopes(doc)
    ]
    header = (
        "arm",
        "split",
        "runs",
        "evidence-typing coverage",
        "bug-discriminating rate",
        "s per falsified",
        "falsified",
        "verdict accuracy",
    )
    return ["## KEY measures (held-out and tuning apart)", "", *_table(header, rows)]


def _answer(answer: Mapping[str, Any] | None) -> str:
    if answer is None:
        return "-"
    if answer["verdict"] is None or answer["error"] is not None:
        text = "no answer: %s" % (answer["error"] or "no verdict")
    else:
        where = " at %s" % answer["halted_at"] if answer["halted_at"] else ""
        text = "%s%s" % (answer["verdict"], where)
    text += ", %.2f s" % answer["seconds"]
    return "%s **WRONG**" % text if answer["correct"] is False else text


def _cases(doc: Mapping[str, Any]) -> list[str]:
    arms = doc["arms"]
    rows = [
        (
            c["case"],
            c["split"],
            c["candidate"] + (" (tamper)" if c["tamper"] else ""),
            c["truth"],
            *(_answer(c["arms"].get(a)) for a in arms),
        )
        for c in doc["cases"]
    ]
    unknown = [
        "",
        "Truth unknown (the real fix is not confirmed in this environment; its accept candidates count "
        "in no accuracy):",
        "",
        *("- %s: %s" % item for item in sorted(doc["truth_unknown"].items())),
    ]
    table = _table(("case", "split", "candidate", "truth", *arms), rows)
    return ["## Verdicts per case", "", *table, *(unknown if doc["truth_unknown"] else [])]


def _secondaries(doc: Mapping[str, Any]) -> list[str]:
    rows = []
    for arm, split, m in _scopes(doc):
        halts = m["cost_ordering"]["halted_at"]
        rows.append(
            (
                arm,
                split,
                _ratio(m["baseline_replay_coverage"]),
                _num(m["selection"]["mean_fraction"]),
                str(m["selection"]["gaps"]),
                _ratio(m["flake_rate"]),
                "%d / %d" % (m["reruns"]["total"], m["reruns"]["max"]),
                _num(m["kill_rate"]["mean"]),
                _ratio(m["tamper_detection_rate"]),
                _num(m["spend"]["tokens_per_instance"], 1),
                "$%.4f" % m["spend"]["cost_per_instance"],
                str(len(m["unanswered"])),
                "%.2f" % m["cost_ordering"]["seconds_total"],
                ", ".join("%s: %d" % kv for kv in halts.items()) or "-",
            )
        )
    header = (
        "arm",
        "split",
        "baseline replay",
        "T5 selected (mean)",
        "selection gaps",
        "flake rate",
        "reruns total / max",
        "kill rate",
        "tamper detection",
        "tokens / instance",
        "$ / instance",
        "unanswered",
        "seconds",
        "refusals by tier",
    )
    return ["## Secondaries (report, do not gate)", "", *_table(header, rows)]


def _ablation(doc: Mapping[str, Any]) -> list[str]:
    lines = ["## Ablations (§7.3)", ""]
    if not doc["ablation"]:
        return [*lines, "No ablation arm in the runs."]
    rows = []
    for row in doc["ablation"]:
        deltas = {d["measure"]: d for d in row["deltas"]}
        verdict = ("DELETE (harm)" if row["harm"] else "DELETE") if row["delete"] else "KEEP"
        rows.append(
            (
                row["mechanism"],
                verdict,
                ", ".join(row["degraded"]) or "-",
                *(_signed(deltas[name]["delta"]) for name, _label in ABLATION_COLUMNS),
            )
        )
    header = ("mechanism", "rule", "degraded without it", *("Δ %s" % label for _name, label in ABLATION_COLUMNS))
    split = doc["ablation"][0]["split"]
    note = "Split %s; Δ = ablated - full. Continuous (±5%% relative is noise): s/falsified, tokens, cost." % split
    return [*lines, note, "", *_table(header, rows)]


def markdown(doc: Mapping[str, Any]) -> str:
    """The report, decision first; a function of ``doc`` alone (a timestamp only if it carries one)."""
    title = "# A/B: %s against %s" % (doc["battery"], doc["baseline"])
    head = [title, ""] + (["Generated: %s" % doc["generated"], ""] if doc["generated"] else [])
    if doc["decision_split"] != HELD_OUT:
        head += ["**No held-out case: every figure below is on tuning data.**", ""]
    sections = [_decision(doc), _key(doc), _cases(doc), _secondaries(doc), _ablation(doc)]
    body = [line for section in sections for line in [*section, ""]]
    return "\n".join(head + body).rstrip("\n") + "\n"
