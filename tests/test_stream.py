"""The stream: numbered, tagged lines; a reader tolerant of a killed writer and strict about the rest.

Everything a reader refuses is a forgery (``StreamContent.forgery``: which line, what was wrong),
never an exception; what came before the line is kept.
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import threading
from collections.abc import Callable, Iterator

import pytest

from pytest_evidence import stream
from pytest_evidence.model import Failure, FailureKind, Observation, Outcome
from pytest_evidence.stream import KEY_BYTES, StreamWriter, compact, line_tag, parse, read, signer

KEY = bytes(range(KEY_BYTES))


def _result(test_id: str, outcome: Outcome = Outcome.PASS, repeat: int = 0) -> dict[str, object]:
    payload: dict[str, object] = Observation(test_id, outcome, 0.0, None, "", (outcome,)).to_dict()
    payload["repeat"] = repeat
    return payload


def _session(path: pathlib.Path, key: bytes | None = KEY, finish: bool = True) -> StreamWriter:
    writer = StreamWriter(str(path), sign=None if key is None else signer(key))
    writer.write("session_start", {"pytest": "9", "python": "3"})
    writer.write("collected", {"test_ids": ["t::a", "t::b"], "markers": {}})
    writer.write("result", _result("t::a"))
    writer.write("result", _result("t::b", Outcome.FAIL))
    if finish:
        writer.write("session_finish", {"exit_status": 1})
        writer.close()
    return writer


def _lines(path: pathlib.Path) -> list[str]:
    return path.read_text().splitlines()


# -- the line format -------------------------------------------------------------------------------


def test_every_line_is_numbered_and_tagged_over_its_number_and_its_bytes(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "s.jsonl"
    _session(path)
    lines = _lines(path)
    for seq, line in enumerate(lines):
        body, tag = line.rsplit(',"tag":"', 1)
        body += "}"
        assert tag == line_tag(KEY, seq, body.encode()) + '"}'
        doc = json.loads(line)
        assert list(doc)[:2] == ["seq", "type"] and list(doc)[-1] == "tag" and doc["seq"] == seq
        assert line.isascii()


_PAYLOADS: list[tuple[str, dict[str, object]]] = [
    ("session_start", {}),
    ("network", {"test_id": "t::a", "address": "[::1]:80", "blocked": False, "more": {"a": {"b": [1.5, None]}}}),
    ("collected", {"test_ids": ["t::a", 't::b[\u00e9-\\-"]'], "markers": {"t::a": ["slow"]}}),
    ("collect_error", {"nodeid": "t.py", "failure": Failure(FailureKind.COLLECTION_ERROR, "boom \u2603").to_dict()}),
    ("result", {**_result("t::a"), "duration": 1e-07}),
    ("result", Observation("t::b", Outcome.FLAKY, 0.5, None, "out\n\t\x00", (Outcome.FAIL, Outcome.PASS)).to_dict()),
    ("deps", {"test_id": "t::a", "functions": ["m.py:1"], "files": []}),
    ("modules", {"origins": {"m": None, "n": "/x/n.py"}}),
    ("network", {"test_id": None, "address": "10.0.0.1:80", "blocked": True}),
    ("session_finish", {"exit_status": 0}),
]


@pytest.mark.parametrize("key", [KEY, None], ids=["keyed", "unkeyed"])
def test_a_line_is_the_json_of_its_number_its_type_and_its_payload(tmp_path: pathlib.Path, key: bytes | None) -> None:
    """The writer builds the line's text itself (the payload encoded once, the number and the type
    put in front): byte for byte what ``json.dumps`` of the whole object gives, as before."""
    path = tmp_path / "s.jsonl"
    writer = StreamWriter(str(path), sign=None if key is None else signer(key))
    for line_type, payload in _PAYLOADS:
        writer.write(line_type, payload)
    for seq, (line, (line_type, payload)) in enumerate(zip(_lines(path), _PAYLOADS, strict=True)):
        body = json.dumps({"seq": seq, "type": line_type, **payload}, separators=(",", ":"))
        expected = body if key is None else body[:-1] + ',"tag":"%s"}' % line_tag(key, seq, body.encode())
        assert line == expected
    assert read(str(path), key).forgery is None


_OBSERVATIONS = [
    Observation("t::a", Outcome.PASS, 0.000623, None, "", (Outcome.PASS,)),
    Observation(
        't::b[\u00e9-\\-"-\U0001f600]',
        Outcome.FAIL,
        0.0,
        Failure(FailureKind.ASSERTION, "caf\u00e9"),
        "x",
        (Outcome.FAIL,),
    ),
    Observation(
        "t::c",
        Outcome.FLAKY,
        123456.789,
        Failure(FailureKind.FLAKY, "m", "p.py", 3, "e"),
        "\x00\n",
        (Outcome.FAIL, Outcome.PASS),
    ),
    Observation("t::d", Outcome.ERROR, 1e-07, None, "out" * 100, (Outcome.ERROR, Outcome.ERROR, Outcome.ERROR)),
    Observation("t::e", Outcome.SKIPPED, float("inf"), None, "", (Outcome.SKIPPED,)),  # spelled by compact
    Observation("t::f", Outcome.PASS, float("nan"), None, "", (Outcome.PASS,)),
    Observation("t::g", Outcome.PASS, 2, None, "", (Outcome.PASS,)),  # an int
]


@pytest.mark.parametrize("repeat", [0, 3])
def test_a_result_line_is_the_line_of_its_observation_s_dictionary(tmp_path: pathlib.Path, repeat: int) -> None:
    """``write_result`` spells a result's members itself; the line is the one ``write`` makes of
    ``obs.to_dict()`` and the repeat."""
    fast, slow = tmp_path / "fast.jsonl", tmp_path / "slow.jsonl"
    fast_writer = StreamWriter(str(fast), sign=signer(KEY))
    slow_writer = StreamWriter(str(slow), sign=signer(KEY))
    for obs in _OBSERVATIONS:
        fast_writer.write_result(obs, repeat)
        slow_writer.write("result", {**obs.to_dict(), "repeat": repeat})
    assert fast.read_bytes() == slow.read_bytes()
    assert stream._RESULT_TEXT_CHECKED == [True]


def test_a_result_dictionary_of_other_members_is_noticed_and_encoded_as_it_is(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def to_dict(self: Observation) -> dict[str, object]:
        return {"test_id": self.test_id, "outcome": self.outcome.value, "new": 1}

    monkeypatch.setattr(Observation, "to_dict", to_dict)
    monkeypatch.setattr(stream, "_RESULT_TEXT_CHECKED", [])
    path = tmp_path / "s.jsonl"
    StreamWriter(str(path)).write_result(_OBSERVATIONS[0], 0)
    assert _lines(path) == ['{"seq":0,"type":"result","test_id":"t::a","outcome":"pass","new":1,"repeat":0}']
    assert stream._RESULT_TEXT_CHECKED == [False]


def test_the_compact_encoder_is_json_dumps_compact() -> None:
    values: list[object] = [
        {},
        [],
        "",
        't::a[\u00e9\U0001f600\\"\n]',
        {"a": [1, -0.0, 2.5, 1e-07, 1e300, float("inf"), float("nan"), None, True, False]},
        {"outcome": Outcome.PASS, "kind": FailureKind.ASSERTION, "n": 10**30},
        _result("t::a"),
    ]
    for value in values:
        assert compact(value) == json.dumps(value, separators=(",", ":"))
    with pytest.raises(TypeError, match="not JSON serializable"):
        compact({"a": object()})


def test_without_json_s_c_encoder_the_public_one_encodes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("json.encoder.c_make_encoder", None)
    encode = stream._compact_encoder()
    assert encode({"a": [1.5, None]}) == '{"a":[1.5,null]}'
    assert encode.__self__.__class__ is json.JSONEncoder  # type: ignore[attr-defined]


def test_the_tag_binds_the_sequence_number(tmp_path: pathlib.Path) -> None:
    """The same bytes at another position do not verify: a line cannot be replayed elsewhere."""
    body = b'{"seq":3,"type":"session_finish","exit_status":0}'
    assert line_tag(KEY, 3, body) != line_tag(KEY, 4, body)
    assert line_tag(KEY, 3, body) != line_tag(bytes(KEY_BYTES), 3, body)


def test_a_signer_keeps_no_key_it_could_be_asked_for() -> None:
    sign = signer(bytearray(KEY))
    assert sign(0, b"{}") == line_tag(KEY, 0, b"{}")
    cells = [c.cell_contents for c in sign.__closure__ or ()]
    assert KEY not in cells and bytearray(KEY) not in cells  # only the keyed HMAC state
    with pytest.raises(ValueError, match="at least 16 bytes"):
        signer(b"short")


def test_a_keyed_stream_reads_back_whole(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "s.jsonl"
    _session(path)
    content = read(str(path), KEY)
    assert content.forgery is None and content.finished and content.lines == 5
    assert {t: o.outcome for t, o in content.results.items()} == {"t::a": Outcome.PASS, "t::b": Outcome.FAIL}


def test_a_stream_without_a_key_is_numbered_and_read_without_tags(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "s.jsonl"
    _session(path, key=None)
    assert all('"tag"' not in line for line in _lines(path))
    assert read(str(path)).forgery is None
    assert read(str(path), KEY).forgery == "line 1: no authentication tag"


def test_the_wrong_key_is_a_forgery_at_the_first_line(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "s.jsonl"
    _session(path)
    content = read(str(path), bytes(KEY_BYTES))
    assert content.forgery == "line 1: bad authentication tag"
    assert content.started is None and not content.results


def test_nothing_is_written_after_session_finish(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "s.jsonl"
    writer = _session(path, finish=False)
    writer.write("session_finish", {"exit_status": 0})
    writer.write("network", {"test_id": None, "address": "10.0.0.1:80"})  # an atexit hook's attempt
    assert len(_lines(path)) == 5
    writer.close()
    writer.write("result", _result("t::c"))  # closed: the key is gone, nothing is written
    assert len(_lines(path)) == 5 and read(str(path), KEY).forgery is None


def test_threads_writing_at_once_keep_the_numbering_whole(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "s.jsonl"
    writer = _session(path, finish=False)

    def attempts(n: int) -> None:
        for i in range(50):
            writer.write("network", {"test_id": "t::a", "address": "10.0.%d.%d:80" % (n, i)})

    threads = [threading.Thread(target=attempts, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    writer.write("session_finish", {"exit_status": 0})
    content = read(str(path), KEY)
    assert content.forgery is None and len(content.network) == 200


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_a_forked_child_continues_the_numbering(tmp_path: pathlib.Path) -> None:
    """A test's ``multiprocessing`` child that reaches for the network is still streamed, in order."""
    path = tmp_path / "s.jsonl"
    writer = _session(path, finish=False)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            writer.write("network", {"test_id": "t::b", "address": "10.0.0.2:80"})
        finally:
            os._exit(0)
    assert os.waitpid(pid, 0)[1] == 0
    writer.write("network", {"test_id": "t::b", "address": "10.0.0.3:80"})
    writer.write("session_finish", {"exit_status": 0})
    content = read(str(path), KEY)
    assert content.forgery is None
    assert [a for _, a, _ in content.network] == ["10.0.0.2:80", "10.0.0.3:80"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_a_fork_while_a_thread_writes_keeps_the_numbering_whole(tmp_path: pathlib.Path) -> None:
    """The process lock is taken only once the process has forked: a fork in the middle of
    another thread's lines, then parent and child writing at once, still make one numbering."""
    path = tmp_path / "s.jsonl"
    writer = _session(path, finish=False)

    def attempts(prefix: str) -> None:
        for i in range(100):
            writer.write("network", {"test_id": "t::a", "address": "%s.%d:80" % (prefix, i)})

    thread = threading.Thread(target=attempts, args=("10.1.0",))
    thread.start()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            attempts("10.2.0")
        finally:
            os._exit(0)
    attempts("10.3.0")
    thread.join()
    assert os.waitpid(pid, 0)[1] == 0
    writer.write("session_finish", {"exit_status": 0})
    content = read(str(path), KEY)
    assert content.forgery is None and len(content.network) == 300


def test_discard_removes_the_stream_a_refused_session_wrote(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "s.jsonl"
    writer = StreamWriter(str(path))
    writer.discard()
    assert not path.exists()  # nothing written: nothing created
    writer = StreamWriter(str(path))
    writer.write("session_start", {})
    writer.discard()
    assert not path.exists()


# -- what the reader refuses ------------------------------------------------------------------------


def test_half_written_last_line_is_dropped(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "s.jsonl"
    _session(path, finish=False).close()
    with path.open("a") as fh:
        fh.write('{"seq":4,"type":"result","test_id":"t::c","outc')
    content = read(str(path), KEY)
    assert content.forgery is None
    assert list(content.results) == ["t::a", "t::b"]
    assert not content.finished


def test_bytes_after_session_finish_are_a_forgery_even_without_a_newline(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "s.jsonl"
    _session(path)
    with path.open("a") as fh:
        fh.write('{"seq":5,"type":"result"')
    content = read(str(path), KEY)
    assert content.forgery == "line 6: bytes after session_finish"
    assert content.finished and len(content.results) == 2  # what came before stands


def test_unknown_line_type_is_a_forgery(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(
        '{"seq":0,"type":"session_start"}\n{"seq":1,"type":"verdict","green":true}\n'
        '{"seq":2,"type":"session_finish","exit_status":0}\n'
    )
    content = read(str(path))
    assert content.forgery == "line 2: unknown type 'verdict'"
    assert content.started is not None and not content.finished


def test_garbage_in_the_middle_is_a_forgery(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text('{"seq":0,"type":"session_start"}\nnot json\n{"seq":1,"type":"session_finish","exit_status":0}\n')
    assert read(str(path)).forgery == "line 2: not JSON"


def test_an_empty_line_in_the_middle_is_a_forgery(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text('{"seq":0,"type":"session_start"}\n\n{"seq":1,"type":"session_finish","exit_status":0}\n')
    assert read(str(path)).forgery == "line 2: not JSON"


@pytest.mark.parametrize(
    ("lines", "problem"),
    [
        (['{"seq":0,"type":"result"}'], "line 1: a result line before session_start"),
        (['{"type":"session_start"}'], "line 1: no sequence number"),
        (['{"seq":true,"type":"session_start"}'], "line 1: no sequence number"),
        (['{"seq":1,"type":"session_start"}'], "line 1: sequence number 1 where 0 was expected"),
        (['{"seq":0,"type":"session_start"}', '{"seq":1,"type":"session_start"}'], "line 2: a second session_start"),
        (
            ['{"seq":0,"type":"session_start"}', '{"seq":0,"type":"session_finish","exit_status":0}'],
            "line 2: sequence number 0 where 1 was expected",
        ),
        (['{"seq":0,"type":"session_start"}', "[1, 2]"], "line 2: not a JSON object"),
        (['{"seq":0,"type":"session_start"}', '{"seq":1,"type":"result","test_id":"t::a"}'], "line 2: a malformed"),
        (
            [
                '{"seq":0,"type":"session_start"}',
                '{"seq":1,"type":"session_finish","exit_status":0}',
                '{"seq":2,"type":"session_finish","exit_status":0}',
            ],
            "line 3: a line after session_finish",
        ),
    ],
)
def test_out_of_order_and_malformed_lines_are_forgeries(tmp_path: pathlib.Path, lines: list[str], problem: str) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n")
    forgery = read(str(path)).forgery
    assert forgery is not None
    assert forgery.startswith(problem), forgery


def test_a_second_result_for_a_test_is_a_forgery(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "s.jsonl"
    writer = _session(path, finish=False)
    writer.write("result", _result("t::b", Outcome.PASS))  # numbered and tagged: it came with the key
    writer.write("session_finish", {"exit_status": 0})
    content = read(str(path), KEY)
    assert content.forgery == "line 5: a second result for t::b (repeat 0 again)"
    assert content.results["t::b"].outcome is Outcome.FAIL


def test_a_declared_repeat_of_a_test_is_representable_and_its_failure_stands(tmp_path: pathlib.Path) -> None:
    """A plugin that runs one test twice in a session streams ``repeat`` 1; reruns of the flake
    policy are not repeats (every attempt is in the one result). The failure of the first stands."""
    path = tmp_path / "s.jsonl"
    writer = _session(path, finish=False)
    writer.write("result", _result("t::b", Outcome.PASS, repeat=1))
    writer.write("result", _result("t::b", Outcome.PASS, repeat=3))
    content = read(str(path), KEY)
    assert content.forgery == "line 6: result for t::b has repeat 3 where 2 was expected"
    assert content.results["t::b"].outcome is Outcome.FAIL


def test_reading_a_missing_stream_is_an_empty_one(tmp_path: pathlib.Path) -> None:
    content = read(str(tmp_path / "none.jsonl"), KEY)
    assert content.started is None and content.forgery is None
    assert parse(b"").forgery is None


# -- reading a growing stream ----------------------------------------------------------------------


@contextlib.contextmanager
def _reading(path: pathlib.Path) -> Iterator[Callable[[], stream.StreamContent]]:
    """Read ``path`` as a grouped session's channel reads its stream: again and again."""
    reader = stream.Reader(KEY)
    fd = os.open(str(path), os.O_RDONLY)
    try:
        yield lambda: reader.read_fd(fd)
    finally:
        os.close(fd)


def test_a_stream_read_as_it_grows_reads_as_the_whole_stream_parsed_once(tmp_path: pathlib.Path) -> None:
    """A grouped session's stream is read at every barrier: each read parses only what was added,
    a half-written line included once it is whole, and says what parsing the whole says."""
    path = tmp_path / "s.jsonl"
    _session(path)
    data = path.read_bytes()
    growing = tmp_path / "growing.jsonl"
    growing.write_bytes(b"")
    seen = []
    cuts = (0, 10, len(data) // 2, len(data) - 3, len(data))  # cuts fall inside lines
    with _reading(growing) as read:
        for cut in cuts:
            growing.write_bytes(data[:cut])
            seen.append(read())
    assert seen[-1] == parse(data, KEY)
    assert seen[-1].forgery is None and seen[-1].exit_status == 1 and len(seen[-1].results) == 2
    assert [c.lines for c in seen] == [data[:cut].count(b"\n") for cut in cuts]


def test_each_read_is_the_callers_own_copy(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "s.jsonl"
    _session(path)
    with _reading(path) as read:
        first = read()
        first.results.pop("t::a")
        assert first.collected is not None
        first.collected.append("t::x")
        first.exit_status = 0
        assert first.started is not None
        first.started["pytest"] = "0"
        again = read()
    assert again == parse(path.read_bytes(), KEY)
    assert "t::a" in again.results and again.exit_status == 1


def test_a_stream_cut_back_below_what_was_read_is_a_forgery(tmp_path: pathlib.Path) -> None:
    """Read whole, a stream cut back to before its failing result would read as a shorter, honest
    one; read as it grows, what was read stays read, and the cut itself is the forgery."""
    path = tmp_path / "s.jsonl"
    _session(path, finish=False)
    with _reading(path) as read:
        before = read()
        assert before.forgery is None and before.results["t::b"].outcome is Outcome.FAIL
        lines = path.read_bytes().splitlines(keepends=True)
        with open(path, "r+b") as fh:
            fh.truncate(sum(len(line) for line in lines[:-1]))
        after = read()
    assert after.forgery is not None and "cut back" in after.forgery
    assert after.results["t::b"].outcome is Outcome.FAIL


def test_a_line_after_session_finish_read_later_is_a_forgery(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "s.jsonl"
    _session(path)
    with _reading(path) as read:
        assert read().forgery is None
        with open(path, "ab") as fh:
            fh.write(b"half a line")
        assert read().forgery == "line 6: bytes after session_finish"  # five lines read


@pytest.mark.parametrize("how", ["rewritten", "cut and regrown"])
def test_bytes_already_read_changed_behind_the_reader_are_a_forgery(tmp_path: pathlib.Path, how: str) -> None:
    """Parsed whole again, a stream whose read lines were changed fails their tags or numbering;
    read as it grows, the lines already read are compared with what they were."""
    path = tmp_path / "s.jsonl"
    _session(path, finish=False)
    with _reading(path) as read:
        assert read().forgery is None
        data = path.read_bytes()
        fail = data.rindex(b'"fail"')
        if how == "rewritten":  # the failing result made a pass, in place
            path.write_bytes(data[:fail] + b'"pass"' + data[fail + 6 :])
        else:  # cut below the failing result, then padded back past it
            path.write_bytes(data[:fail] + b" " * (len(data) - fail + 10) + b"\n")
        after = read()
    assert after.forgery == "line 4: bytes already read were rewritten, or the stream cut back"
    assert after.results["t::b"].outcome is Outcome.FAIL


@pytest.mark.parametrize("order", [(Outcome.FAIL, Outcome.PASS), (Outcome.PASS, Outcome.FAIL)])
def test_a_second_result_of_one_test_id_never_covers_a_failure(
    tmp_path: pathlib.Path, order: tuple[Outcome, Outcome]
) -> None:
    """Two results of one id in a session (a test run twice): the failure stands, whichever came last."""
    path = tmp_path / "s.jsonl"
    writer = _session(path, finish=False)
    writer.write("result", _result("t::shared", order[0], repeat=0))
    writer.write("result", _result("t::shared", order[1], repeat=1))
    content = read(str(path), KEY)
    assert content.forgery is None and content.results["t::shared"].outcome is Outcome.FAIL
