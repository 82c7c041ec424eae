"""The HTML report: one page a person reads to see what a record proved, and what it did not.

A record is read where it was copied to -- a CI artifact, an attachment -- so the page loads
nothing: no style sheet, script or font from anywhere. Its Content Security Policy forbids every
fetch and runs only the page's own script, pinned by its hash, so a test id or failure message
written to look like markup stays inert even if an escaping rule here were ever missed.

Everything the page shows is rendered here, escaped, and reads with scripting off; the script only
filters the per-test rows and saves the embedded record. The record is embedded whole, as JSON:
sending the page alone loses nothing.

The layout, style and script are ``report.html`` beside this module (``string.Template``
placeholders; the file holds no other ``$``).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
import string
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from typing import Any, Optional

from pytest_evidence.model import (
    Annotation,
    BCClass,
    EvidenceRecord,
    Failure,
    Outcome,
    Role,
    Tier,
    TierRecord,
    ValidationResult,
)
from runner.verdict import blocks, rejects

#: What each rung checks (README, "The runner"): a reader should not need the docs to read the ladder.
RUNG_LABELS = {
    Tier.T0: "parse",
    Tier.T1: "ruff",
    Tier.T2: "mypy and import",
    Tier.T3: "reproducers on B and C",
    Tier.T4: "tests reaching a changed function",
    Tier.T5: "the safe regression set",
    Tier.AUDIT: "suite-strength audit (mutants)",
    Tier.T6: "integration tests of the touched packages",
    Tier.T7: "the rest of the suite",
}

#: The rungs whose results are static gates: their test ids start with the tier (``T1::ruff::PATH``).
STATIC = frozenset({Tier.T0, Tier.T1, Tier.T2})

#: Filter values for what the record leaves empty: a null role, a null B/C class, no B result, and
#: a result whose tier cannot be told (``_result_tiers``).
UNTYPED, UNCLASSIFIED, NO_BASELINE, UNKNOWN = "untyped", "unclassified", "none", "unknown"

_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)


class Html(str):
    """Markup built here from escaped parts: the one kind of string ``_el`` does not escape."""


def _el(tag: str, *children: Optional[str], **attrs: object) -> Html:
    """``<tag ...>children</tag>``, every plain ``str`` child and every attribute value escaped.

    Keyword names become attribute names (``class_`` -> ``class``, ``data_tier`` -> ``data-tier``);
    None or False leaves an attribute out, True writes it bare. A None child is left out.
    """
    head = [tag]
    for name, value in attrs.items():
        if value is None or value is False:
            continue
        name = name.rstrip("_").replace("_", "-")
        head.append(name if value is True else '%s="%s"' % (name, html.escape(str(value))))
    inner = "".join(c if isinstance(c, Html) else html.escape(c) for c in children if c is not None)
    return Html("<%s>%s</%s>" % (" ".join(head), inner, tag))


def _join(parts: Iterable[Html]) -> Html:
    return Html("".join(parts))


def render(record: EvidenceRecord) -> str:
    """The report of ``record``: one self-contained HTML document."""
    template = _template()
    doc = record.to_dict()
    verdict = record.verdict.verdict.value if record.verdict is not None else "no verdict"
    return template.substitute(
        script_hash=_script_hash(template.template),
        title=html.escape("%s: %s" % (verdict, _short(record.candidate_commit))),
        header=_header(record),
        verdict=_verdict(record, doc["summary"]),
        ladder=_ladder(record),
        matrix=_matrix(record),
        tests=_tests(record, _result_tiers(record)),
        detections=_detections(record),
        environment=_environment(record),
        audit=_audit(record),
        record_json=_script_json(doc),
    )


def _template() -> string.Template:
    return string.Template(resources.files(__package__).joinpath("report.html").read_text(encoding="utf-8"))


def _script_hash(template: str) -> str:
    """The CSP hash of the page's one script: the template's only untyped ``<script>``, whose text
    no substitution touches, so hashing the template is hashing the page."""
    (script,) = _SCRIPT.findall(template)
    return base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")


def _script_json(doc: Mapping[str, Any]) -> str:
    """``doc`` as JSON that cannot end its ``<script>`` element: ``<``, ``>`` and ``&`` occur only
    inside JSON strings, where their ``\\u`` escapes mean the same, so ``</script>`` and ``<!--``
    never appear in the page's text (U+2028/9 too, for a reader that pastes it into JavaScript)."""
    text = json.dumps(doc, ensure_ascii=False, indent=1)
    for char in "<>&\u2028\u2029":
        text = text.replace(char, "\\u%04x" % ord(char))
    return text


def _result_tiers(record: EvidenceRecord) -> list[Optional[Tier]]:
    """The rung each of ``record.results`` ran at, in order; None where the record cannot tell.

    A result does not carry its tier, so it is derived from what the climb writes:

    * a static gate (role ``STATIC_GATE``) is named ``TIER::check::PATH``: the tier is its prefix;
    * the pytest results are appended in the order the rungs ran -- T3's reproducers, then T4 to
      T7, each running only tests no earlier rung ran -- and a rung's ``run`` is exactly how many
      results it added (a selected test that did not report is in its ``not_run`` instead, the
      audit adds none). Walking the pytest results in order, each rung takes its ``run`` of them.

    Results left over after the last counted rung (a climb cut short after typing a rung's results
    but before recording the rung) are None, and so is every pytest result of a record whose
    counts exceed its results, or that has no ladder (the plugin's): shown as ``unknown``, never
    guessed.
    """
    tiers: list[Optional[Tier]] = [None] * len(record.results)
    pytest_results: list[int] = []
    for index, result in enumerate(record.results):
        prefix = result.test_id.split("::", 1)[0]
        if result.role is Role.STATIC_GATE and prefix in {t.value for t in STATIC}:
            tiers[index] = Tier(prefix)
        else:
            pytest_results.append(index)
    rungs = [t for t in record.tiers if t.tier not in STATIC and t.tier is not Tier.AUDIT]
    if sum(t.run for t in rungs) > len(pytest_results):
        return tiers
    position = 0
    for rung in rungs:
        for index in pytest_results[position : position + rung.run]:
            tiers[index] = rung.tier
        position += rung.run
    return tiers


# -- the sections -------------------------------------------------------------------------------


def _header(record: EvidenceRecord) -> Html:
    facts: list[tuple[str, object]] = [
        ("repository", record.repo),
        ("baseline B", record.baseline_commit),
        ("candidate C", record.candidate_commit),
        ("run id", record.run_id),
        ("created", record.created),
        ("schema", record.schema_version),
        ("collected", record.collected),
        ("exit status", record.exit_status),
    ]
    return _facts(facts)


def _verdict(record: EvidenceRecord, summary: Mapping[str, Any]) -> Html:
    verdict = record.verdict
    name = "no verdict" if verdict is None else verdict.verdict.value
    badge = _el("p", name, class_="verdict-badge verdict-" + name.replace(" ", "-").lower(), id="verdict-name")
    if verdict is None:
        why = _el("p", "A plugin record: the runner's ladder did not judge it.")
        return _join([badge, why, _counts(summary)])
    halted = "halted at %s" % verdict.halted_at.value if verdict.halted_at is not None else "no rung failed"
    complete = "complete" if record.complete else "incomplete: %s" % (record.incomplete_reason or "no reason given")
    line = _el("p", "%s; exit %d; the record is %s." % (halted, record.exit_status, complete), class_="verdict-line")
    reasons = _el("ul", *(_el("li", reason) for reason in verdict.reasons), id="reasons", class_="reasons")
    return _join([badge, line, reasons, _counts(summary)])


def _counts(summary: Mapping[str, Any]) -> Html:
    """The record's own summary counts (as its model derives them), the figures a verdict rests on."""
    facts: list[tuple[str, object]] = [
        ("results", summary["results"]),
        ("bug-discriminating", summary["bug_discriminating"]),
        ("typing failures", summary["typing_failures"]),
        ("typing coverage", _rate(summary["evidence_typing_coverage"])),
        ("detections", sum(summary["detections"].values())),
    ]
    return _el("div", _facts(facts), id="counts", class_="counts")


def _ladder(record: EvidenceRecord) -> Html:
    if not record.tiers:
        return _el("p", "No ladder: the plugin wrote this record, not the runner.", class_="empty")
    halted_at = record.verdict.halted_at if record.verdict is not None else None
    rungs = [_rung(t, t.tier is halted_at) for t in record.tiers]
    ladder = _el("ol", *rungs, class_="ladder", id="ladder", aria_label="the ladder, climbed from T0 at the bottom")
    return _join([ladder, _selection(record)])


def _rung(tier: TierRecord, halted: bool) -> Html:
    status = tier.status.value
    head = _el(
        "div",
        _el("span", tier.tier.value, class_="rung-tier"),
        _el("span", RUNG_LABELS[tier.tier], class_="rung-label"),
        _el("span", status.replace("_", " "), class_="status status-" + status),
        _el("span", "halted here", class_="halt-mark") if halted else None,
        class_="rung-head",
    )
    size = "" if tier.suite_size is None else " of a suite of %d" % tier.suite_size
    numbers = _el(
        "div",
        _el("span", "selected %d, run %d%s" % (tier.selected, tier.run, size), class_="rung-counts"),
        _el("span", "%.2f s" % tier.duration, class_="rung-seconds"),
        class_="rung-numbers",
    )
    parts: list[Optional[Html]] = [head, numbers, _bar(tier), _el("p", tier.note, class_="rung-note")]
    if tier.not_run:
        parts.append(_expander("%d selected test(s) did not run" % len(tier.not_run), _list(tier.not_run)))
    if tier.findings:
        rows = [
            [f.check, _where(f.path, f.line), f.code or "", f.message, "hard" if f.hard else "warning"]
            for f in tier.findings
        ]
        table = _table(["check", "where", "code", "message", "weight"], rows, "findings")
        parts.append(_expander("%d finding(s)" % len(tier.findings), table))
    return _el(
        "li",
        *parts,
        class_="rung status-%s%s" % (status, " halted" if halted else ""),
        data_tier=tier.tier.value,
        data_status=status,
    )


def _bar(tier: TierRecord) -> Optional[Html]:
    """How much of the suite the rung selected and ran; only rungs that ran pytest have a suite."""
    if not tier.suite_size:
        return None
    selected = min(100.0, 100.0 * tier.selected / tier.suite_size)
    ran = min(100.0, 100.0 * tier.run / tier.suite_size)
    return _el(
        "div",
        _el("span", class_="bar-selected", style="width: %.1f%%" % selected),
        _el("span", class_="bar-run", style="width: %.1f%%" % ran),
        class_="bar",
        role="img",
        aria_label="selected %.0f%% and ran %.0f%% of the suite" % (selected, ran),
    )


def _selection(record: EvidenceRecord) -> Html:
    """Why T5 took what it took: each reason with its tests (the record's ``selection``)."""
    selection = record.selection
    if not selection:
        return Html("")
    groups: list[Html] = []
    for key, title in (("selected", "selected for T5"), ("left_out", "left out of T5")):
        reasons: Mapping[str, Sequence[str]] = selection.get(key) or {}
        items = [_expander("%d: %s" % (len(ids), reason), _list(ids)) for reason, ids in reasons.items()]
        total = sum(len(ids) for ids in reasons.values())
        groups.append(_el("div", _el("h3", "%s (%d)" % (title, total)), *items, class_="selection-" + key))
    whole = (
        " -- the whole suite (configuration, a conftest or a manifest changed)" if selection.get("whole_suite") else ""
    )
    caption = _el("p", "T5's selection from a suite of %s%s:" % (selection.get("suite_size"), whole))
    return _el("div", caption, *groups, class_="selection", id="selection")


def _matrix(record: EvidenceRecord) -> Html:
    classes = Counter(_bc(record, r) for r in record.results)
    cells = {
        c: _el(
            "td",
            _el("span", c.value, class_="bc-name"),
            _class_count(c.value, classes[c.value]),
            class_="bc-" + c.value,
        )
        for c in BCClass
    }
    grid = _el(
        "table",
        _el("thead", _el("tr", _el("th", "B \\ C"), _el("th", "C pass"), _el("th", "C fail/error"))),
        _el(
            "tbody",
            _el(
                "tr",
                _el("th", "B fail/error"),
                cells[BCClass.BUG_DISCRIMINATING],
                cells[BCClass.NO_FIX],
            ),
            _el("tr", _el("th", "B pass"), cells[BCClass.REGRESSION_ONLY], cells[BCClass.REGRESSION]),
        ),
        class_="bc-grid",
        id="bc-grid",
    )
    others = _el(
        "p",
        "unclassified (a static gate, no B result, or an outcome other than pass/fail/error): ",
        _class_count(UNCLASSIFIED, classes[UNCLASSIFIED]),
        class_="unclassified",
    )
    return _join([grid, others, _crosstab(record.results)])


def _class_count(name: str, count: int) -> Html:
    """The count of a B/C class; a button that filters the test rows to it when there is any."""
    if not count:
        return _el("span", "0", class_="count", data_class=name)
    return _el(
        "button",
        str(count),
        type="button",
        class_="count",
        data_class=name,
        data_set_filter="bc",
        data_value=name,
        title="show these tests",
    )


def _crosstab(results: Sequence[ValidationResult]) -> Html:
    """baseline_result x candidate_result, over the values that occur: the B/C grid's raw material."""
    if not results:
        return _el("p", "No result to cross-tabulate.", class_="empty")
    pairs = Counter((_baseline(r), r.candidate_result.value) for r in results)
    order = [NO_BASELINE, *(o.value for o in Outcome)]
    rows_b = [b for b in order if any(b == pb for pb, _ in pairs)]
    cols_c = [c for c in order if any(c == pc for _, pc in pairs)]
    head = _el("tr", _el("th", "B \\ C"), *(_el("th", "C " + c) for c in cols_c), _el("th", "total"))
    body = [
        _el(
            "tr",
            _el("th", "B " + b),
            *(_el("td", str(pairs[(b, c)]), data_b=b, data_c=c) for c in cols_c),
            _el("td", str(sum(pairs[(b, c)] for c in cols_c)), class_="total"),
        )
        for b in rows_b
    ]
    foot = _el(
        "tr",
        _el("th", "total"),
        *(_el("td", str(sum(pairs[(b, c)] for b in rows_b)), class_="total") for c in cols_c),
        _el("td", str(len(results)), class_="total"),
    )
    caption = _el("caption", "every result: its outcome on B (none: no B result) against its outcome on C")
    return _el("table", caption, _el("thead", head), _el("tbody", *body, foot), class_="crosstab", id="crosstab")


def _tests(record: EvidenceRecord, tiers: Sequence[Optional[Tier]]) -> Html:
    if not record.results:
        return _el("p", "No test result in this record.", class_="empty")
    rows = [_test_row(record, r, t) for r, t in zip(record.results, tiers, strict=True)]
    values = {
        "role": Counter(_role(r) for r in record.results),
        "bc": Counter(_bc(record, r) for r in record.results),
        "outcome": Counter(r.candidate_result.value for r in record.results),
        "tier": Counter(_tier(t) for t in tiers),
    }
    orders = {
        "role": [*(r.value for r in Role), UNTYPED],
        "bc": [*(c.value for c in BCClass), UNCLASSIFIED],
        "outcome": [o.value for o in Outcome],
        "tier": [*(t.value for t in Tier), UNKNOWN],
    }
    labels = {"role": "role", "bc": "B/C class", "outcome": "outcome on C", "tier": "tier"}
    selects = [_select(name, labels[name], values[name], orders[name]) for name in labels]
    search = _el(
        "label", "test id contains ", Html('<input type="search" id="filter-text" name="text" autocomplete="off">')
    )
    controls = _el(
        "form",
        *selects,
        search,
        _el("button", "show all", type="reset"),
        _el("output", "", id="shown", for_="filter-text"),
        id="filters",
        class_="filters",
        hidden=True,
    )
    head = _el(
        "tr", *(_el("th", h) for h in ("test", "tier", "role", "B/C class", "B", "C", "seconds", "origin", "evidence"))
    )
    table = _el("table", _el("thead", head), _el("tbody", *rows), id="tests", class_="tests")
    return _join([controls, table])


def _select(name: str, label: str, counts: Counter[str], order: Sequence[str]) -> Html:
    options = [_el("option", "all (%d)" % sum(counts.values()), value="")]
    options += [_el("option", "%s (%d)" % (v, counts[v]), value=v) for v in order if counts[v]]
    return _el("label", label + " ", _el("select", *options, id="filter-" + name, name=name, data_filter=name))


def _test_row(record: EvidenceRecord, result: ValidationResult, tier: Optional[Tier]) -> Html:
    annotation = record.annotations.get(result.test_id)
    role, bc, tier_name = _role(result), _bc(record, result), _tier(tier)
    outcome = result.candidate_result.value
    cells = [
        _el("td", _el("code", result.test_id), class_="test-id"),
        _el("td", tier_name),
        _el("td", role),
        _el("td", bc, class_="bc-" + bc),
        _el("td", _baseline(result), class_="outcome outcome-" + _baseline(result)),
        _el("td", outcome, class_="outcome outcome-" + outcome),
        _el("td", "%.3f" % result.duration, class_="num"),
        _el("td", annotation.origin.value if annotation is not None else ""),
        _el("td", _evidence(result, annotation)),
    ]
    return _el(
        "tr",
        *cells,
        class_="test",
        data_test=result.test_id,
        data_role=role,
        data_bc=bc,
        data_outcome=outcome,
        data_tier=tier_name,
    )


def _evidence(result: ValidationResult, annotation: Optional[Annotation]) -> Html:
    """What a row has beyond its columns -- failures, the flip's footing, attempts, output --
    folded away, one expander per row; empty for a plain pass."""
    parts: list[Html] = []
    summary = "details"
    if result.failure is not None:
        summary = "%s: %s" % (result.failure.kind.value, _first_line(result.failure.message))
        parts.append(_failure("on C", result.failure))
    if annotation is not None and annotation.baseline_failure is not None:
        parts.append(_failure("on B", annotation.baseline_failure))
    facts: list[tuple[str, object]] = []
    if annotation is not None:
        if annotation.typing_failure:
            facts.append(("untyped because", annotation.typing_failure))
        if annotation.flip:
            facts.append(("flip rests on", annotation.flip.get("rests_on")))
        if len(annotation.attempts) > 1:
            facts.append(("attempts on C", ", ".join(a.value for a in annotation.attempts)))
    if result.flaky_history:
        facts.append(("flaky history", ", ".join(result.flaky_history)))
    if result.exit_code is not None and result.candidate_result is not Outcome.PASS:
        facts.append(("exit code", result.exit_code))
    if facts:
        parts.append(_facts(facts))
    if result.stdout_summary:
        parts.append(_el("div", _el("h4", "output"), _el("pre", result.stdout_summary)))
    if not parts:
        return Html("")
    return _expander(summary, _join(parts), class_="evidence")


def _failure(side: str, failure: Failure) -> Html:
    where = _where(failure.path, failure.line)
    title = "%s %s%s" % (failure.kind.value, side, " at " + where if where else "")
    excerpt = _el("pre", failure.excerpt, class_="excerpt") if failure.excerpt else None
    return _el("div", _el("h4", title), _el("pre", failure.message, class_="message"), excerpt, class_="failure")


def _detections(record: EvidenceRecord) -> Html:
    if not record.detections:
        return _el("p", "No detection: nothing weakened or voided what the tests say.", class_="empty")
    rows = [
        [
            d.kind.value,
            d.detail or "",
            "rejects" if rejects(d) else "blocks certification" if blocks(d) else "recorded",
            d.test_id or "",
            _where(d.path, d.line),
            d.message,
        ]
        for d in record.detections
    ]
    return _table(["kind", "detail", "effect", "test", "where", "message"], rows, "detections")


def _environment(record: EvidenceRecord) -> Html:
    sections = [
        ("Environment of C", record.environment.to_dict()),
        ("Environment of B", None if record.baseline_environment is None else record.baseline_environment.to_dict()),
        ("Pinning and seeds", record.pinning),
        ("Invocation", record.invocation),
        ("Integrity of the referee", record.integrity),
        ("How B's results were obtained", record.baseline_run),
    ]
    parts = [
        _el("div", _el("h3", title), _facts(list(doc.items())), class_="panel")
        for title, doc in sections
        if doc is not None
    ]
    if record.not_run:
        parts.append(_el("div", _el("h3", "Collected, never ran (%d)" % len(record.not_run)), _list(record.not_run)))
    return _el("div", *parts, class_="panels")


def _audit(record: EvidenceRecord) -> Html:
    """The suite-strength audit, when the record has one: kill rates, and survivors as diffs."""
    if not record.audit:
        return Html("")
    suite = record.audit["suite"]
    summary = [(k, v) for k, v in suite.items() if k not in ("functions", "modules")]
    rows = []
    for fn in suite["functions"]:
        survivors = [
            _join([_el("p", "line %s: %s" % (s["line"], s.get("why") or "survived")), _el("pre", s["diff"])])
            for s in fn["survivors"]
        ]
        diffs = _expander("%d survivor(s)" % len(survivors), _join(survivors)) if survivors else Html("")
        name = "%s::%s" % (fn["path"], fn["function"])
        rows.append([name, fn["tests"], fn["mutants"], fn["run"], fn["killed"], _rate(fn["kill_rate"]), diffs])
    headers = ["function", "tests", "mutants", "run", "killed", "kill rate", "survivors"]
    reproducer = record.audit.get("reproducer")
    return _el(
        "section",
        _el("h2", "Suite-strength audit"),
        _facts(summary),
        _table(headers, rows, "audit-functions"),
        _el("h3", "Reproducer strength") if reproducer else None,
        _facts(list(reproducer.items())) if reproducer else None,
        id="audit",
    )


# -- small pieces -------------------------------------------------------------------------------


def _facts(pairs: Sequence[tuple[str, object]]) -> Html:
    return _el("dl", *(_join([_el("dt", key), _el("dd", _value(value))]) for key, value in pairs), class_="facts")


def _value(value: object) -> Html:
    """A record value for people: scalars as text, lists joined, anything nested as JSON."""
    if value is None:
        return _el("span", "null", class_="null")
    if isinstance(value, bool):
        return Html(html.escape(str(value).lower()))
    if isinstance(value, (list, tuple)) and all(isinstance(v, (str, int, float)) for v in value):
        return Html(html.escape(", ".join(str(v) for v in value))) if value else _el("span", "none", class_="null")
    if isinstance(value, (dict, list, tuple)):
        return _el("code", json.dumps(value, sort_keys=True))
    return Html(html.escape(str(value)))


def _table(headers: Sequence[str], rows: Sequence[Sequence[object]], name: str) -> Html:
    head = _el("tr", *(_el("th", h) for h in headers))
    body = [_el("tr", *(_el("td", c if isinstance(c, Html) else _value(c)) for c in row)) for row in rows]
    return _el("table", _el("thead", head), _el("tbody", *body), id=name, class_="grid")


def _expander(summary: str, body: Html, class_: Optional[str] = None) -> Html:
    return _el("details", _el("summary", summary), body, class_=class_)


def _list(items: Iterable[str]) -> Html:
    return _el("ul", *(_el("li", _el("code", item)) for item in items), class_="ids")


def _where(path: Optional[str], line: Optional[int]) -> str:
    if path is None:
        return ""
    return path if line is None else "%s:%d" % (path, line)


def _first_line(text: str, limit: int = 120) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "\u2026"


def _rate(rate: Optional[float]) -> str:
    return "n/a" if rate is None else "%.0f%%" % (100 * rate)


def _short(commit: Optional[str]) -> str:
    return "no commit" if commit is None else commit[:12]


def _role(result: ValidationResult) -> str:
    return UNTYPED if result.role is None else result.role.value


def _bc(record: EvidenceRecord, result: ValidationResult) -> str:
    annotation = record.annotations.get(result.test_id)
    if annotation is None or annotation.bc_class is None:
        return UNCLASSIFIED
    return annotation.bc_class.value


def _baseline(result: ValidationResult) -> str:
    return NO_BASELINE if result.baseline_result is None else result.baseline_result.value


def _tier(tier: Optional[Tier]) -> str:
    return UNKNOWN if tier is None else tier.value
