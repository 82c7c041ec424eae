"""The batch summary: every candidate, ranked on its typed evidence.

In the spirit of Agentless's patch selection, but on evidence rather than on votes: certified
first, then the fewest regressions, then the strongest evidence (most bug-discriminating tests,
then most tests kept passing), then the cheapest (seconds the ladder took). A candidate without a
verdict -- its certify crashed or ran out of time -- ranks last and says why. Pure: the records in,
the summary out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from runner.batch.candidates import Candidate

#: The summary's format (``batch.json``); a change to its members bumps it.
SUMMARY_VERSION = "1.0"

_ORDER = {"CERTIFIED": 0, "INCONCLUSIVE": 1, "REJECTED": 2}


@dataclass(frozen=True)
class Outcome:
    """How one candidate's certify ended: its record (None: no verdict), exit code and log."""

    candidate: Candidate
    record: Mapping[str, Any] | None
    exit_code: int | None  # None: killed at the batch's per-candidate timeout
    seconds: float
    log: str
    record_path: str
    error: str | None = None  # why there is no exit code, when not the timeout (a lost Ray task)

    def row(self) -> dict[str, Any]:
        doc = self.record
        verdict = (doc or {}).get("verdict")
        row: dict[str, Any] = {
            **self.candidate.to_dict(),
            "verdict": None if verdict is None else verdict["verdict"],
            "halted_at": None if verdict is None else verdict["halted_at"],
            "reason": _reason(self) if verdict is None else verdict["reasons"][0],
            "exit_code": self.exit_code,
            "seconds": round(self.seconds, 3),
            "record": self.record_path if doc is not None else None,
            "log": self.log,
        }
        row.update(_evidence(doc))
        return row


def _reason(outcome: Outcome) -> str:
    if outcome.error is not None:
        return "no verdict: %s (log: %s)" % (outcome.error, outcome.log)
    if outcome.exit_code is None:
        return "no verdict: killed at the batch's per-candidate timeout (log: %s)" % outcome.log
    return "no verdict: certify exited %d (log: %s)" % (outcome.exit_code, outcome.log)


def _evidence(doc: Mapping[str, Any] | None) -> dict[str, Any]:
    if doc is None or doc.get("verdict") is None:
        return {"regressions": None, "bug_discriminating": None, "kept_passing": None, "ladder_seconds": None}
    classes = doc["summary"]["by_class"]
    return {
        "regressions": classes.get("regression", 0),
        "bug_discriminating": classes.get("bug-discriminating", 0),
        "kept_passing": classes.get("regression-only", 0),
        "ladder_seconds": round(sum(t["duration"] for t in doc["tiers"]), 3),
    }


def rank_key(row: Mapping[str, Any]) -> tuple[Any, ...]:
    if row["verdict"] is None:
        return (len(_ORDER), 0, 0, 0, 0.0, row["name"])
    return (
        _ORDER[row["verdict"]],
        row["regressions"],
        -row["bug_discriminating"],
        -row["kept_passing"],
        row["ladder_seconds"],
        row["name"],
    )


def summary(
    baseline: str, outcomes: Sequence[Outcome], wall_seconds: float, jobs: int, executor: str
) -> dict[str, Any]:
    rows = sorted((o.row() for o in outcomes), key=rank_key)
    for place, row in enumerate(rows, 1):
        row["rank"] = place
    counts = {v: sum(1 for r in rows if r["verdict"] == v) for v in _ORDER}
    counts["no verdict"] = sum(1 for r in rows if r["verdict"] is None)
    return {
        "batch_version": SUMMARY_VERSION,
        "baseline_commit": baseline,
        "executor": executor,
        "jobs": jobs,
        "candidates": len(rows),
        "verdicts": counts,
        "wall_seconds": round(wall_seconds, 3),
        "certifications_per_hour": round(3600 * len(rows) / wall_seconds, 1) if wall_seconds > 0 else None,
        "ranking": rows,
    }


def markdown(doc: Mapping[str, Any]) -> str:
    counts = doc["verdicts"]
    lines = [
        "### certify-batch: %d candidate(s) against %s" % (doc["candidates"], doc["baseline_commit"][:12]),
        "",
        ", ".join("%s %d" % (k, v) for k, v in counts.items() if v)
        + " -- %.0f s on %d job(s), %s" % (doc["wall_seconds"], doc["jobs"], doc["executor"]),
        "",
        "| rank | candidate | verdict | regressions | bug-discriminating | kept passing | ladder s | reason |",
        "|---:|---|---|---:|---:|---:|---:|---|",
    ]
    for row in doc["ranking"]:
        verdict = row["verdict"] or "no verdict"
        if row["halted_at"]:
            verdict += " at " + row["halted_at"]
        cells = [str(row["rank"]), "`%s`" % row["name"], verdict]
        cells += ["-" if row[k] is None else str(row[k]) for k in ("regressions", "bug_discriminating", "kept_passing")]
        cells.append("-" if row["ladder_seconds"] is None else "%.1f" % row["ladder_seconds"])
        cells.append(row["reason"].replace("|", "\\|"))
        lines.append("| %s |" % " | ".join(cells))
    return "\n".join(lines) + "\n"
