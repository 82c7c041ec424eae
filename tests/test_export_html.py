"""The HTML report, read back with the standard library's parser: what a person would see on it.

The records are real ones (the built-in example's candidates, certified once per session), so the
page is checked against what the runner actually writes, not against a hand-made record.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import pathlib
import re
from collections import Counter
from collections.abc import Iterator
from html.parser import HTMLParser

import pytest
from conftest import Record

from pytest_evidence.errors import EXIT_BAD_INPUT
from pytest_evidence.model import EvidenceRecord, Failure, FailureKind, Tier, TierRecord, TierStatus, ValidationResult
from runner.cli import main
from runner.exports import html

Records = dict[str, tuple[pathlib.Path, Record]]

#: A test id and a failure message written to break out of the page: markup, a script end tag.
HOSTILE_ID = "tests/test_x.py::t[</script><img src=x onerror=alert(1)>]"
HOSTILE_MESSAGE = "</script><script>alert('message')</script><!-- & \u2028"

VOID = frozenset({"meta", "link", "input", "br", "img", "hr", "wbr", "source", "area", "col", "base", "embed"})


class Node:
    """An element of the parsed page: enough of a DOM to ask what is on it."""

    def __init__(self, tag: str, attrs: dict[str, str | None]) -> None:
        self.tag, self.attrs = tag, attrs
        self.children: list[Node | str] = []

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def words(self) -> str:
        """The text with whitespace collapsed, as a browser shows it."""
        return " ".join(self.text().split())

    def iter(self) -> Iterator[Node]:
        yield self
        for child in self.children:
            if isinstance(child, Node):
                yield from child.iter()

    def all(self, tag: str | None = None, **attrs: str) -> list[Node]:
        """Elements by tag and attributes (``class_`` matches one class of an element)."""
        found = []
        for node in self.iter():
            if tag is not None and node.tag != tag:
                continue
            wanted = {k.rstrip("_").replace("_", "-"): v for k, v in attrs.items()}
            classes = (node.attrs.get("class") or "").split()
            if all((v in classes) if k == "class" else node.attrs.get(k) == v for k, v in wanted.items()):
                found.append(node)
        return found

    def one(self, tag: str | None = None, **attrs: str) -> Node:
        (node,) = self.all(tag, **attrs)
        return node


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, dict(attrs))
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack[-1].tag == tag, "unbalanced </%s> inside <%s>" % (tag, self.stack[-1].tag)
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse(page: str) -> Node:
    builder = _Builder()
    builder.feed(page)
    builder.close()
    assert builder.stack == [builder.root], "elements left open: %s" % [n.tag for n in builder.stack]
    return builder.root


def load(records: Records, name: str) -> tuple[EvidenceRecord, Record]:
    doc = records[name][1]
    return EvidenceRecord.from_dict(doc), doc


def hostile(record: EvidenceRecord) -> EvidenceRecord:
    """``record`` with its reproducer renamed to ``HOSTILE_ID`` and failing with ``HOSTILE_MESSAGE``."""
    index, victim = next((i, r) for i, r in enumerate(record.results) if r.role and r.role.value == "BUG_REPRODUCTION")
    failure = Failure(FailureKind.ASSERTION, HOSTILE_MESSAGE, HOSTILE_ID.split("::")[0], 3, HOSTILE_MESSAGE)
    renamed: ValidationResult = dataclasses.replace(victim, test_id=HOSTILE_ID, failure=failure)
    annotations = dict(record.annotations)
    annotations[HOSTILE_ID] = annotations.pop(victim.test_id)
    results = (*record.results[:index], renamed, *record.results[index + 1 :])
    return dataclasses.replace(record, results=results, annotations=annotations)


def rows(page: Node) -> list[Node]:
    return page.all("tr", class_="test")


def facts(dl: Node) -> dict[str, str]:
    """A ``<dl>``'s terms and what they say."""
    return {dt.words(): dd.words() for dt, dd in zip(dl.all("dt"), dl.all("dd"), strict=True)}


# -- the ladder and the verdict ---------------------------------------------------------------


def test_the_regression_halts_at_t4_and_the_page_marks_that_rung(example_records: Records) -> None:
    record, doc = load(example_records, "regression")
    page = parse(html.render(record))
    rungs = page.all("li", class_="rung")
    assert [r.attrs["data-tier"] for r in rungs] == ["T0", "T1", "T2", "T3", "T4", "T5", "T6", "T7"]
    assert [r.attrs["data-status"] for r in rungs] == [t["status"] for t in doc["tiers"]]
    assert [r.attrs["data-tier"] for r in page.all("li", class_="halted")] == ["T4"]
    t4 = page.one("li", data_tier="T4")
    assert t4.one("span", class_="halt-mark").words() == "halted here"
    assert t4.one("span", class_="status").words() == "failed"
    assert t4.one("span", class_="rung-counts").words() == "selected 4, run 4 of a suite of 6"
    assert t4.one("p", class_="rung-note").words() == doc["tiers"][4]["note"]
    assert "test_large_order_discount passes on B, fails on C" in t4.words()
    assert page.one("li", data_tier="T5").one("span", class_="status").words() == "not run"
    assert page.one(id="verdict-name").words() == "REJECTED"
    assert [li.words() for li in page.one("ul", id="reasons").all("li")] == doc["verdict"]["reasons"]
    assert "halted at T4; exit 1" in page.one(id="verdict").words()
    summary = doc["summary"]
    assert facts(page.one(id="counts").one("dl")) == {
        "results": str(len(doc["results"])),
        "bug-discriminating": str(summary["bug_discriminating"]),
        "typing failures": str(summary["typing_failures"]),
        "typing coverage": "%.0f%%" % (100 * summary["evidence_typing_coverage"]),
        "detections": str(len(doc["detections"])),
    }


def test_every_rung_shows_its_numbers_and_a_certified_climb_marks_no_rung(example_records: Records) -> None:
    record, doc = load(example_records, "honest-fix")
    page = parse(html.render(record))
    assert page.one(id="verdict-name").words() == "CERTIFIED"
    assert page.all("li", class_="halted") == [] and page.all(class_="halt-mark") == []
    for tier in doc["tiers"]:
        rung = page.one("li", data_tier=tier["tier"])
        counts = rung.one("span", class_="rung-counts").words()
        assert counts.startswith("selected %d, run %d" % (tier["selected"], tier["run"]))
        assert rung.one("span", class_="rung-seconds").words() == "%.2f s" % tier["duration"]
        # only a rung that ran pytest has a suite to measure its selection against
        assert bool(rung.all("div", class_="bar")) == bool(tier["suite_size"])
    t5 = page.one("li", data_tier="T5")
    assert t5.attrs["data-status"] == "skipped"
    assert t5.one("span", class_="rung-counts").words() == "selected 5, run 0 of a suite of 6"
    widths = [s.attrs["style"] for s in page.one("li", data_tier="T4").one("div", class_="bar").all("span")]
    assert widths == ["width: 66.7%", "width: 66.7%"]
    selected = page.one(class_="selection-selected")
    assert selected.one("h3").words() == "selected for T5 (5)"
    assert "tests/test_cart.py::test_cart_total" in selected.words()


def test_an_attack_stops_the_climb_with_no_rung_failed_and_its_detections_say_why(example_records: Records) -> None:
    record, doc = load(example_records, "conftest-tamper")
    page = parse(html.render(record))
    assert page.one(id="verdict-name").words() == "REJECTED"
    assert "no rung failed" in page.one(id="verdict").words()
    assert [r.attrs["data-status"] for r in page.all("li", class_="rung")] == ["passed"] + ["not_run"] * 7
    table = page.one("table", id="detections")
    got = [[td.words() for td in tr.all("td")] for tr in table.one("tbody").all("tr")]
    expected = [
        [d["kind"], d["detail"], "rejects", "", "%s:%d" % (d["path"], d["line"]), d["message"]]
        for d in doc["detections"]
    ]
    assert got == expected and len(got) == 2


def test_a_flaky_reproducer_is_shown_inconclusive_at_t3_with_its_attempts(example_records: Records) -> None:
    record, doc = load(example_records, "flaky-fix")
    page = parse(html.render(record))
    assert page.one(id="verdict-name").words() == "INCONCLUSIVE"
    assert [r.attrs["data-tier"] for r in page.all("li", class_="halted")] == ["T3"]
    flaky = page.one("tr", data_test="tests/test_boundary.py::test_flip_flop")
    assert (flaky.attrs["data-outcome"], flaky.attrs["data-bc"], flaky.attrs["data-tier"]) == (
        "flaky",
        "unclassified",
        "T3",
    )
    attempts = ", ".join(doc["annotations"]["tests/test_boundary.py::test_flip_flop"]["attempts"])
    assert facts(flaky.one("dl"))["attempts on C"] == attempts == "fail, pass, fail, pass"
    kinds = [tr.all("td")[0].words() for tr in page.one("table", id="detections").one("tbody").all("tr")]
    assert kinds == ["flaky_quarantined", "flaky_quarantined"]


# -- the tests, the B x C matrix --------------------------------------------------------------


@pytest.mark.parametrize("name", ["honest-fix", "regression", "no-fix", "conftest-tamper", "flaky-fix"])
def test_one_row_per_result_with_the_filters_values(example_records: Records, name: str) -> None:
    record, doc = load(example_records, name)
    page = parse(html.render(record))
    got = [
        (r.attrs["data-test"], r.attrs["data-role"], r.attrs["data-bc"], r.attrs["data-outcome"]) for r in rows(page)
    ]
    annotations = doc["annotations"]
    expected = [
        (
            r["test_id"],
            r["role"] or "untyped",
            (annotations.get(r["test_id"]) or {}).get("bc_class") or "unclassified",
            r["candidate_result"],
        )
        for r in doc["results"]
    ]
    assert got == expected
    assert [r.one("td", class_="test-id").words() for r in rows(page)] == [r["test_id"] for r in doc["results"]]
    # every value a row can be filtered by is offered, counted, and nothing else is
    for attribute, select in (("data-role", "role"), ("data-bc", "bc"), ("data-outcome", "outcome")):
        counts = Counter(r.attrs[attribute] for r in rows(page))
        options = page.one("select", id="filter-" + select).all("option")
        assert options[0].attrs["value"] == "" and options[0].words() == "all (%d)" % len(doc["results"])
        assert {o.attrs["value"]: o.words() for o in options[1:]} == {v: "%s (%d)" % (v, n) for v, n in counts.items()}


def test_each_result_is_given_the_rung_it_ran_at(example_records: Records) -> None:
    record, _doc = load(example_records, "honest-fix")
    tiers = {r.attrs["data-test"]: r.attrs["data-tier"] for r in rows(parse(html.render(record)))}
    assert tiers == {
        "T0::parse::shop/price.py": "T0",
        "T0::parse::tests/test_boundary.py": "T0",
        "T1::ruff::shop/price.py": "T1",
        "T1::ruff::tests/test_boundary.py": "T1",
        "T2::mypy::shop/price.py": "T2",
        "T2::import::shop/price.py": "T2",
        "tests/test_boundary.py::test_ten_items_get_discount": "T3",
        "tests/test_cart.py::test_cart_total": "T4",
        "tests/test_price.py::test_small_order_has_no_discount": "T4",
        "tests/test_price.py::test_large_order_discount": "T4",
        "tests/test_price.py::test_total_small": "T4",
        "tests/integration/test_cli.py::test_cli_prints_the_total": "T6",
    }


def test_a_record_without_a_ladder_names_only_the_static_gates_tiers(example_records: Records) -> None:
    """A plugin record has no rungs to count results against: pytest results are ``unknown``."""
    record, _doc = load(example_records, "regression")
    page = parse(html.render(dataclasses.replace(record, tiers=(), verdict=None)))
    tiers = Counter(r.attrs["data-tier"] for r in rows(page))
    assert tiers == {"T0": 2, "T1": 2, "T2": 2, "unknown": 5}
    assert page.one(id="verdict-name").words() == "no verdict"
    assert page.all("ol", class_="ladder") == []


def test_the_bc_matrix_counts_what_the_record_counts(example_records: Records) -> None:
    record, doc = load(example_records, "regression")
    page = parse(html.render(record))
    grid = page.one("table", id="bc-grid")
    shown = {
        cell.attrs["data-class"]: int(cell.words()) for cell in page.all(class_="count") if "data-class" in cell.attrs
    }
    assert shown == doc["summary"]["by_class"]
    assert shown == {"bug-discriminating": 1, "regression-only": 3, "no-fix": 0, "regression": 1, "unclassified": 6}
    body = [
        [(td.one("span", class_="bc-name").words(), td.one(class_="count").words()) for td in tr.all("td")]
        for tr in grid.one("tbody").all("tr")
    ]
    assert body == [[("bug-discriminating", "1"), ("no-fix", "0")], [("regression-only", "3"), ("regression", "1")]]
    # a count is a button that filters the rows to its class, only when there is something to show
    assert grid.all("button", data_value="regression")[0].attrs["data-set-filter"] == "bc"
    assert grid.all("button", data_value="no-fix") == []
    pairs = Counter((r["baseline_result"] or "none", r["candidate_result"]) for r in doc["results"])
    cross = page.one("table", id="crosstab")
    cells = {
        (td.attrs["data-b"], td.attrs["data-c"]): int(td.words()) for td in cross.all("td") if "data-b" in td.attrs
    }
    assert {k: v for k, v in cells.items() if v} == dict(pairs)
    assert sorted(cells) == sorted((b, c) for b in {"none", "pass", "fail"} for c in {"pass", "fail"})
    assert cross.one("tbody").all("tr")[-1].all("td")[-1].words() == str(len(doc["results"]))


def test_a_failure_is_folded_into_its_row_with_message_place_and_excerpt(example_records: Records) -> None:
    record, doc = load(example_records, "regression")
    page = parse(html.render(record))
    (failed,) = [r for r in doc["results"] if r["failure"] is not None]
    row = page.one("tr", data_test=failed["test_id"])
    details = row.one("details")
    assert details.one("summary").words() == "assertion: " + failed["failure"]["message"]
    failure = details.one("div", class_="failure")
    assert failure.one("h4").words() == "assertion on C at tests/test_price.py:9"
    assert failure.one("pre", class_="message").text() == failed["failure"]["message"]
    assert failure.one("pre", class_="excerpt").text() == failed["failure"]["excerpt"]
    flip = doc["annotations"][failed["test_id"]]["flip"]["rests_on"]
    assert facts(details.one("dl"))["flip rests on"] == flip
    assert page.one("tr", data_test="tests/test_cart.py::test_cart_total").all("details") == []


def test_an_audit_is_a_rung_and_its_survivors_are_shown(example_records: Records) -> None:
    record, _doc = load(example_records, "honest-fix")
    survivor = {"line": 7, "diff": "-    if qty >= 10:\n+    if qty > 10:\n", "why": "no test reaches qty == 10"}
    function = {
        "path": "shop/price.py",
        "function": "bulk_discount",
        "tests": 4,
        "mutants": 4,
        "run": 4,
        "killed": 3,
        "kill_rate": 0.75,
        "survivors": [survivor],
        "untested": 0,
    }
    suite = {
        "engine": "mutmut",
        "seed": 1,
        "max_mutants": 30,
        "budget": 300.0,
        "seconds": 2.5,
        "budget_exhausted": False,
        "mutants_run": 4,
        "killed": 3,
        "kill_rate": 0.75,
        "mutants_per_second": 1.6,
        "functions": [function],
        "modules": {"shop.price": {"run": 4, "killed": 3, "kill_rate": 0.75}},
    }
    rung = TierRecord(Tier.AUDIT, TierStatus.PASSED, 2.5, 4, 4, None, "kill rate 75%")
    tiers = tuple(sorted((*record.tiers, rung), key=lambda t: list(Tier).index(t.tier)))
    page = parse(html.render(dataclasses.replace(record, audit={"suite": suite, "reproducer": None}, tiers=tiers)))
    rungs = [r.attrs["data-tier"] for r in page.all("li", class_="rung")]
    assert rungs == ["T0", "T1", "T2", "T3", "T4", "T5", "audit", "T6", "T7"]
    # the audit runs mutants, not tests: the results keep their rungs
    assert Counter(r.attrs["data-tier"] for r in rows(page)) == {"T0": 2, "T1": 2, "T2": 2, "T3": 1, "T4": 4, "T6": 1}
    cells = page.one("table", id="audit-functions").one("tbody").one("tr").all("td")
    assert [c.words() for c in cells[:6]] == ["shop/price.py::bulk_discount", "4", "4", "4", "3", "75%"]
    assert cells[6].one("pre").text() == survivor["diff"]
    assert cells[6].one("p").words() == "line 7: no test reaches qty == 10"
    assert facts(page.one("section", id="audit").one("dl"))["kill_rate"] == "0.75"


# -- environment, the record itself, safety --------------------------------------------------


def test_environment_seeds_and_invocation_are_shown(example_records: Records) -> None:
    record, doc = load(example_records, "honest-fix")
    section = parse(html.render(record)).one("section", id="environment")
    panels = {p.one("h3").words(): p.one("dl") for p in section.all("div", class_="panel")}
    assert set(panels) == {
        "Environment of C",
        "Environment of B",
        "Pinning and seeds",
        "Invocation",
        "Integrity of the referee",
        "How B's results were obtained",
    }

    def fact(panel: str, key: str) -> str:
        return facts(panels[panel])[key]

    assert fact("Environment of C", "fingerprint") == doc["environment"]["fingerprint"]
    assert fact("Environment of C", "python") == doc["environment"]["python"]
    assert fact("Pinning and seeds", "seed") == str(doc["pinning"]["seed"])
    assert fact("Pinning and seeds", "hashseed") == str(doc["pinning"]["hashseed"])
    assert fact("Pinning and seeds", "network") == doc["pinning"]["network"]
    assert fact("Invocation", "seed") == str(doc["invocation"]["seed"])
    assert fact("Invocation", "reruns") == str(doc["invocation"]["reruns"])


@pytest.mark.parametrize("name", ["honest-fix", "conftest-tamper"])
def test_the_page_embeds_the_record_and_loads_nothing(example_records: Records, name: str) -> None:
    record, doc = load(example_records, name)
    text = html.render(record)
    page = parse(text)
    assert json.loads(page.one("script", id="evidence-record").text()) == record.to_dict() == doc
    assert [n.tag for n in page.iter() if "src" in n.attrs] == []
    assert [n.attrs["href"] for n in page.iter() if "href" in n.attrs] == ["data:,"]
    assert not re.search(r"https?://|url\(|@import", text)


def test_the_pages_own_script_is_the_one_its_policy_allows(example_records: Records) -> None:
    record, _doc = load(example_records, "regression")
    page = parse(html.render(record))
    policy = page.one("meta", http_equiv="Content-Security-Policy").attrs["content"] or ""
    assert "default-src 'none'" in policy
    (script,) = [s for s in page.all("script") if "type" not in s.attrs]
    digest = base64.b64encode(hashlib.sha256(script.text().encode()).digest()).decode()
    assert "script-src 'sha256-%s'" % digest in policy


def test_a_hostile_test_id_and_message_stay_text(example_records: Records) -> None:
    record = hostile(load(example_records, "regression")[0])
    text = html.render(record)
    page = parse(text)
    assert page.all("img") == []
    assert len(page.all("script")) == 2 and text.count("</script>") == 2
    assert "<!--" not in text
    row = page.one("tr", data_test=HOSTILE_ID)
    assert row.one("td", class_="test-id").text() == HOSTILE_ID
    failure, on_b = row.all("div", class_="failure")  # the reproducer failed on B: both are shown
    assert on_b.one("h4").words().startswith("assertion on B at tests/test_boundary.py:")
    assert failure.one("h4").words() == "assertion on C at tests/test_x.py:3"
    assert failure.one("pre", class_="message").text() == HOSTILE_MESSAGE
    assert failure.one("pre", class_="excerpt").text() == HOSTILE_MESSAGE
    embedded = json.loads(page.one("script", id="evidence-record").text())
    assert embedded == record.to_dict()
    assert HOSTILE_ID in [r["test_id"] for r in embedded["results"]]


# -- through the command line -----------------------------------------------------------------


def test_report_html_through_the_cli(example_records: Records, tmp_path: pathlib.Path) -> None:
    path, doc = example_records["regression"]
    out = tmp_path / "report.html"
    assert main(["report", str(path), "--html", str(out)]) == 0
    page = parse(out.read_text(encoding="utf-8"))
    assert page.one(id="verdict-name").words() == "REJECTED"
    assert json.loads(page.one("script", id="evidence-record").text()) == doc


def test_report_of_a_missing_record_is_bad_input_in_one_line(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.html"
    assert main(["report", str(tmp_path / "nowhere.json"), "--html", str(out)]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "nowhere.json" in err
    assert not out.exists()
