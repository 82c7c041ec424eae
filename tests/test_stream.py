"""The stream reader: tolerant of a killed writer, strict about everything else."""

from __future__ import annotations

import pathlib

import pytest

from pytest_evidence.errors import StreamCorrupt
from pytest_evidence.model import Observation, Outcome
from pytest_evidence.stream import StreamWriter, read


def test_half_written_last_line_is_dropped(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "s.jsonl"
    writer = StreamWriter(str(path))
    writer.write("result", Observation("t::a", Outcome.PASS, 0.0, None, "", (Outcome.PASS,)).to_dict())
    writer.close()
    with path.open("a") as fh:
        fh.write('{"type": "result", "test_id": "t::b", "outc')
    content = read(str(path))
    assert list(content.results) == ["t::a"]
    assert not content.finished


def test_unknown_line_type_is_rejected(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text('{"type": "verdict", "green": true}\n{"type": "session_finish", "exit_status": 0}\n')
    with pytest.raises(StreamCorrupt, match="unknown type 'verdict'"):
        read(str(path))


def test_garbage_in_the_middle_is_rejected(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text('not json\n{"type": "session_finish", "exit_status": 0}\n')
    with pytest.raises(StreamCorrupt, match="line 1"):
        read(str(path))
