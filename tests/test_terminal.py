"""What a person sees: the live progress, the closing summary at 80 columns, ``report`` alone."""

from __future__ import annotations

import dataclasses
import io
import os
import pathlib
import tempfile
import time

import pytest
from conftest import Record
from rich.console import Console

from pytest_evidence.model import BCClass, Detection, DetectionKind, EvidenceRecord
from runner.cli import main
from runner.exports import markdown
from runner.terminal import live, summary
from runner.terminal.activity import Activity, Snapshot


def _render(doc: Record, path: str, width: int = 80) -> str:
    console = Console(file=io.StringIO(), width=width, color_system=None)
    summary.show(console, EvidenceRecord.from_dict(doc), path)
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert isinstance(out, str)
    return out


def _fits(text: str, width: int = 80) -> None:
    """No line is wider than ``width`` unless it is one unbreakable word (a test id, a path)."""
    for line in text.splitlines():
        assert len(line.rstrip()) <= width or len(line.split()) == 1, line


def test_the_summary_of_a_regression_names_the_test_its_file_and_line(
    example_records: dict[str, tuple[pathlib.Path, Record]],
) -> None:
    path, doc = example_records["regression"]
    text = _render(doc, str(path))
    _fits(text)
    assert "T4 <" in text  # the rung that halted, marked
    assert "regressions (pass on B, fail on C):" in text
    assert "tests/test_price.py::test_large_order_discount (tests/test_price.py:" in text
    assert "bug-discriminating (fail on B, pass on C):" in text
    assert "tests/test_boundary.py::test_ten_items_get_discount" in text
    assert "record: %s" % path in " ".join(text.split())  # a long path goes whole onto a line of its own
    last = " ".join(text.split("record:")[1].split()[1:])
    assert last.startswith("REJECTED at T4: regression:") and "not run: T5, T6, T7" in last


def test_a_certified_summary_says_what_was_not_proved(example_records: dict[str, tuple[pathlib.Path, Record]]) -> None:
    path, doc = example_records["honest-fix"]
    text = " ".join(_render(doc, str(path)).split())
    assert "CERTIFIED: every tier passed" in text
    assert "proved: 1 test(s) fail on B and pass on C" in text
    assert "not proved: the suite's strength was not audited (--audit)" in text


def test_a_certified_record_carrying_a_detection_mentions_it(
    example_records: dict[str, tuple[pathlib.Path, Record]],
) -> None:
    """The sentence never lets a detection hide behind a green verdict."""
    drift = Detection(DetectionKind.ENVIRONMENT_DRIFT, "B ran in one environment, C in another")
    record = dataclasses.replace(EvidenceRecord.from_dict(example_records["honest-fix"][1]), detections=(drift,))
    assert "it carries 1 detection(s), listed above" in summary.sentence(record)
    assert summary.detection_line(drift) == "environment_drift: B ran in one environment, C in another"
    passing = Detection(DetectionKind.REPRODUCER_NOT_FAILING_ON_BASELINE, "passes on B too", "tests/t.py::test_x")
    assert summary.detection_line(passing) == "reproducer_not_failing_on_baseline: tests/t.py::test_x: passes on B too"


def test_a_certified_summary_names_the_tests_failing_on_both_sides(
    example_records: dict[str, tuple[pathlib.Path, Record]],
) -> None:
    """A test failing on B and on C neither proves the fix nor breaks it; under a green verdict
    it was said only in T5's note (an independent check's certify of Box: one test failing
    on both sides, "nothing left open")."""
    path, doc = example_records["honest-fix"]
    record = EvidenceRecord.from_dict(doc)
    kept = next(t for t, a in record.annotations.items() if a.bc_class is BCClass.REGRESSION_ONLY)
    failing = dataclasses.replace(record.annotations[kept], bc_class=BCClass.NO_FIX)
    record = dataclasses.replace(record, annotations={**record.annotations, kept: failing})
    assert "1 test(s) fail on B and on C, listed above" in summary.sentence(record)
    assert ("failing on B and on C (neither fixed nor broken by the patch):", [kept]) in summary.sections(record)
    assert "1 test(s) fail on B and on C" in markdown.render(record, str(path))


def test_summary_lists_are_capped() -> None:
    assert summary.capped([str(n) for n in range(12)], cap=10)[-1] == "and 2 more"
    assert summary.capped(["a", "b"]) == ["a", "b"]


def test_the_status_line_names_the_phase_and_the_tests_done() -> None:
    assert (
        live.describe(Snapshot("T5", 3.2, 40, 120), 61.0)
        == "T5 affected regression set | 40/120 tests | 3s (61s in all)"
    )
    assert (
        live.describe(Snapshot("B", 1.0, 7, None), 2.0) == "B: the baseline suite, recorded | 7 tests | 1s (2s in all)"
    )
    assert live.describe(Snapshot("", 0.0, 0, None), 0.4) == "starting (0s)"


def test_the_activity_counts_results_as_the_stream_grows() -> None:
    """The tally reads only what was appended, and a half-written line waits for its end."""
    activity = Activity()
    with tempfile.TemporaryFile() as fh:
        fd = fh.fileno()
        activity.phase("T7")
        activity.attach(fd)
        os.write(fd, b'{"seq":0,"type":"collected","test_ids":["a","b","c"]}\n{"seq":1,"type":"result"')
        assert (activity.snapshot().done, activity.snapshot().total) == (0, 3)
        os.write(fd, b',"test_id":"a"}\n{"seq":2,"type":"result","test_id":"b"}\n')
        assert activity.snapshot().done == 2
        activity.expect(2)  # a grouped session's plan replaces the collection's size
        assert activity.snapshot().total == 2
        activity.detach(fd)
        after = activity.snapshot()
        assert (after.phase, after.done, after.total) == ("T7", 0, None)


def test_off_a_terminal_phase_lines_start_with_the_first_event(monkeypatch: pytest.MonkeyPatch) -> None:
    """Until certify says its first event, a run may still end as bad input: one line, no phases."""
    monkeypatch.setattr(live, "TICK", 0.01)
    console = Console(file=io.StringIO(), width=80, color_system=None, force_terminal=False)
    activity = Activity()
    with live.Display(console, activity) as display:
        activity.phase("T1")
        time.sleep(0.3)  # thirty looks at the phase, none of them said
        assert console.file.getvalue() == ""  # type: ignore[attr-defined]
        display.event("T0 passed: 2 file(s) parsed")
        for _ in range(500):  # the next look says the phase (at most 5 s on a loaded machine)
            if "... T1 lint (ruff)" in console.file.getvalue():  # type: ignore[attr-defined]
                break
            time.sleep(0.01)
    lines = console.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert lines[0] == "  T0 passed: 2 file(s) parsed" and lines[1].startswith("  ... T1 lint (ruff) | ")


def test_events_wrap_between_words_at_the_console_width() -> None:
    console = Console(file=io.StringIO(), width=40, color_system=None)
    live.say(console, "T4 failed: regression: tests/test_price.py::test_large_order_discount passes on B")
    lines = console.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert lines[0] == "  T4 failed: regression:"
    assert lines[1] == "    tests/test_price.py::test_large_order_discount"  # whole, though wider than 40
    assert lines[2] == "    passes on B"


def test_report_alone_prints_the_summary_certify_printed(
    example_records: dict[str, tuple[pathlib.Path, Record]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, _doc = example_records["regression"]
    assert main(["report", str(path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out  # not a terminal: no control characters
    assert "tests/test_price.py::test_large_order_discount (tests/test_price.py:" in out
    assert out.rstrip().endswith("rendered %s" % path)


def test_certify_shows_progress_and_the_summary_and_ends_with_the_verdict_line(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from runner import example_repo

    repo = example_repo.build(tmp_path / "shop")
    out = tmp_path / "record.json"
    code = main(["certify", *repo.certify_args("no-fix", out, tmp_path / "store.sqlite3")])
    said = capsys.readouterr()
    assert code == 1, said.err
    assert said.out.splitlines() == [said.out.strip()] and said.out.startswith("REJECTED at T3")  # one line
    assert "\x1b" not in said.err
    assert "\n  T3 failed: no-fix:" in said.err and "record: %s" % out in " ".join(said.err.split())
    assert "no-fix (fail on B, fail on C)" not in said.err  # the sections name what the record holds
    _fits(said.err)
