"""The terminal summary: one short block, worded so that green never overclaims.

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Sequence, Tuple

#: Tests named per B/C class before "and N more".
NAMED = 5

#: The classes in the order a reader looks for them: what broke, what was fixed, what was not.
_CLASS_ORDER = ("regression", "bug-discriminating", "no-fix", "regression-only")


def _counts(counts: Mapping[str, int]) -> str:
    parts = ["%s %d" % (k, v) for k, v in counts.items() if v]
    return ", ".join(parts) if parts else "none"


def named(ids: Sequence[str], cap: int = NAMED) -> str:
    shown = ", ".join(ids[:cap])
    return shown if len(ids) <= cap else "%s and %d more" % (shown, len(ids) - cap)


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
        out.extend(_contrast(record))
    else:
        out.append(
            (
                "no baseline: %d result(s) recorded without B/C contrast; roles, B/C classes and "
                "bug-discriminating tests need --baseline=REV" % summary["results"],
                True,
            )
        )
    detections = {k: v for k, v in summary["detections"].items() if k != "typing_failure" or base}
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


def _contrast(record: Mapping[str, Any]) -> List[Tuple[str, bool]]:
    """Roles, then each B/C class with its tests named: a count sends the reader to the JSON."""
    summary = record["summary"]
    out = [("roles: " + _counts(summary["by_role"]), False)]
    members: Dict[str, List[str]] = {}
    for test_id, annotation in record["annotations"].items():
        if annotation["bc_class"] is not None:
            members.setdefault(annotation["bc_class"], []).append(test_id)
    out.append(("B/C classes: " + _counts(summary["by_class"]), False))
    for bc_class in _CLASS_ORDER:
        if members.get(bc_class):
            out.append(("  %s: %s" % (bc_class, named(members[bc_class])), bc_class in ("regression", "no-fix")))
    passing = summary["by_outcome"].get("pass", 0)
    discriminating = summary["bug_discriminating"]
    if discriminating:
        out.append(("bug-discriminating: %d of %d passing result(s)" % (discriminating, passing), False))
    else:
        out.append(("bug-discriminating: 0 -- %d passing result(s), none of them shows a bug fixed" % passing, True))
    out.append(("typing failures: %d" % summary["typing_failures"], summary["typing_failures"] > 0))
    return out
