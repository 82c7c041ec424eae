"""The terminal summary: one short block, worded so that green never overclaims."""

from __future__ import annotations

from typing import Any, List, Mapping, Tuple


def _counts(counts: Mapping[str, int]) -> str:
    parts = ["%s %d" % (k, v) for k, v in counts.items() if v]
    return ", ".join(parts) if parts else "none"


def lines(record: Mapping[str, Any], record_path: str) -> List[Tuple[str, bool]]:
    """``(text, is_warning)`` lines for the ``evidence`` section."""
    summary = record["summary"]
    out: List[Tuple[str, bool]] = []
    base = record["baseline_commit"]
    run = record.get("baseline_run") or {}
    if base:
        out.append(
            (
                "baseline %s: %d test(s) run on it now, %d served from the cache"
                % (base[:12], run.get("executed", 0), run.get("cached", 0)),
                False,
            )
        )
    else:
        out.append(("no baseline: results carry no B/C contrast (use --baseline=REV)", True))
    out.append(("roles: " + _counts(summary["by_role"]), False))
    out.append(("B/C classes: " + _counts(summary["by_class"]), False))
    passing = summary["by_outcome"].get("pass", 0)
    discriminating = summary["bug_discriminating"]
    if discriminating:
        out.append(("bug-discriminating: %d of %d passing result(s)" % (discriminating, passing), False))
    else:
        out.append(
            (
                "bug-discriminating: 0 -- %d passing result(s), none of them shows a bug fixed" % passing,
                True,
            )
        )
    out.append(("typing failures: %d" % summary["typing_failures"], summary["typing_failures"] > 0))
    detections = summary["detections"]
    out.append(("detections: " + _counts(detections), bool(detections)))
    for det in record["detections"]:
        if det["kind"] != "typing_failure":
            where = " [%s]" % det["test_id"] if det["test_id"] else ""
            out.append(("  %s: %s%s" % (det["kind"], det["message"], where), True))
    if not record["complete"]:
        out.append(("record INCOMPLETE: the session was interrupted or did not run every test", True))
    if record_path:
        out.append(("record: " + record_path, False))
    return out
