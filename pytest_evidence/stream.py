"""The JSONL stream: one line per event, flushed as it happens.

A result line is written the moment its test's teardown is reported, and flushed to the kernel,
so ``kill -9`` of pytest loses none of the finished tests (an OS crash may; fsync per line would
cost more than the whole plugin). Every line carries a ``type`` tag from a closed set; a reader
rejects anything else instead of guessing.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import IO, Any, Dict, List, Mapping, Optional, Tuple

from pytest_evidence.errors import StreamCorrupt
from pytest_evidence.model import Failure, Observation

STREAM_VERSION = 1

#: The closed set of line types.
LINE_TYPES = frozenset(
    {"session_start", "collected", "collect_error", "result", "deps", "modules", "network", "session_finish"}
)


class StreamWriter:
    """Appends tagged JSON lines to a file, flushing each one.

    The file is created by the first line, not before: a session refused as bad input while
    pytest starts leaves no empty stream behind, and ``discard`` removes what a refused session
    wrote.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._fh: Optional[IO[str]] = None

    def write(self, line_type: str, payload: Mapping[str, Any]) -> None:
        assert line_type in LINE_TYPES, line_type
        if self._fh is None:
            os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
            self._fh = open(self.path, "w", encoding="utf-8")
        doc = {"type": line_type}
        doc.update(payload)
        self._fh.write(json.dumps(doc, separators=(",", ":")) + "\n")
        self._fh.flush()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()

    def discard(self) -> None:
        """Close and remove the stream: the session it describes was refused."""
        self.close()
        if self._fh is not None and os.path.exists(self.path):
            os.remove(self.path)


@dataclass
class StreamContent:
    """What a stream says, parsed: the reader's view of one pytest process."""

    started: Optional[Dict[str, Any]] = None
    collected: Optional[List[str]] = None
    collect_errors: Dict[str, Failure] = field(default_factory=dict)
    results: Dict[str, Observation] = field(default_factory=dict)
    markers: Dict[str, List[str]] = field(default_factory=dict)
    functions: Dict[str, List[str]] = field(default_factory=dict)
    files: Dict[str, List[str]] = field(default_factory=dict)
    module_origins: Dict[str, Optional[str]] = field(default_factory=dict)
    network: List[Tuple[Optional[str], str]] = field(default_factory=list)  # (test id, address)
    exit_status: Optional[int] = None

    @property
    def finished(self) -> bool:
        return self.exit_status is not None


def read(path: str) -> StreamContent:
    """Parse a stream; a truncated last line (the writer was killed mid-line) is tolerated."""
    content = StreamContent()
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().split("\n")
    except FileNotFoundError:
        return content
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
        except ValueError:
            if number == len(lines):  # the half-written last line of a killed writer
                break
            raise StreamCorrupt("%s line %d is not JSON" % (path, number)) from None
        kind = doc.get("type")
        if kind not in LINE_TYPES:
            raise StreamCorrupt("%s line %d has unknown type %r" % (path, number, kind))
        if kind == "session_start":
            content.started = doc
        elif kind == "collected":
            content.collected = list(doc["test_ids"])
            content.markers = dict(doc.get("markers", {}))
        elif kind == "collect_error":
            content.collect_errors[doc["nodeid"]] = Failure.from_dict(doc["failure"])
        elif kind == "result":
            obs = Observation.from_dict(doc)
            content.results[obs.test_id] = obs
        elif kind == "deps":  # a test may have two lines: files as it ends, coverage lines at session end
            content.functions.setdefault(doc["test_id"], []).extend(doc["functions"])
            content.files.setdefault(doc["test_id"], []).extend(doc["files"])
        elif kind == "modules":
            content.module_origins = dict(doc["origins"])
        elif kind == "network":
            content.network.append((doc["test_id"], doc["address"]))
        else:
            content.exit_status = int(doc["exit_status"])
    return content
