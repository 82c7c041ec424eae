"""The JSONL stream: one line per event, flushed as it happens, and a reader that trusts nothing.

A result line is written the moment its test's teardown is reported, straight to the kernel
(``os.write``), so ``kill -9`` of pytest loses none of the finished tests (an OS crash may; fsync
per line would cost more than the whole plugin).

The line format (version 2). Each line is one ASCII JSON object, its members in this order::

    {"seq":N,"type":T,...the payload...,"tag":"<64 hex digits>"}

* ``seq`` numbers the lines from 0, consecutively;
* ``type`` is one of ``LINE_TYPES``; a ``result`` line also has ``repeat``, how many results this
  session already streamed for the same test (0: its first; a plugin that runs a test twice in one
  session, or items sharing an id where pytest's id cannot be told apart (``distinct_ids``), make a
  second result with ``repeat`` 1, and what failed stands: ``Observation.and_then``). The flake
  policy's reruns are not repeats: every attempt of a test is in its one result (``attempts``);
* ``tag``, present when the writer holds a key, is HMAC-SHA256 under that key of
  ``DOMAIN + b"<seq>\\0" + <the line up to the tag, closed with "}">`` -- the exact bytes written,
  so the check needs no canonical re-serialisation that could differ between Python versions.

The reader (``parse``) is strict: one ``session_start`` first, everything else after it, nothing
after ``session_finish``, the sequence unbroken, one result per test and repeat, every tag valid
when it holds the key. The first line that breaks a rule is a **forgery**: the reader stops there,
records which line and what was wrong (``StreamContent.forgery``) and returns what it read before
it. A half-written last line without its newline (a writer killed mid-line) is not a forgery; it
is ignored.

``PrivateChannel`` is the reading end of the result channel the runner (and the plugin's own
replay on B) gives a child pytest: an unnamed file passed as an inherited descriptor, and the key
through a pipe the child's plugin empties and closes before any conftest is imported
(``docs/referee.md``, "The result channel").

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
import mmap
import os
import re
import struct
import threading
import weakref
from dataclasses import dataclass, field, fields
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, Union

from pytest_evidence.model import Failure, Observation, Outcome

STREAM_VERSION = 2

#: The closed set of line types.
LINE_TYPES = frozenset(
    {
        "session_start",
        "collected",
        "collect_error",
        "result",
        "deps",
        "modules",
        "network",
        "replaced",
        "barrier",
        "session_finish",
    }
)

#: Bytes of key the runner generates for one process.
KEY_BYTES = 32

#: What every tag is computed over first: a tag of this stream means nothing anywhere else.
DOMAIN = b"pytest-evidence stream 2\0"

_TAG = re.compile(r',"tag":"([0-9a-f]{64})"\}\Z')


def _compact_encoder() -> Callable[[Any], str]:
    """``json.dumps(doc, separators=(",", ":"))``, as one function built once.

    ``JSONEncoder.encode`` builds json's C encoder anew on every call, which costs a third of
    encoding a result line. Here it is built once, with the arguments ``JSONEncoder`` passes it,
    less the check for circular references (what is encoded here is plain data the plugin built),
    and checked against the public encoder before it is used. Without the C accelerator, or where
    it does not give the same text, it is the public encoder.
    """
    public = json.JSONEncoder(separators=(",", ":"))
    try:
        from json import encoder

        c_make_encoder = getattr(encoder, "c_make_encoder", None)
        if c_make_encoder is None:
            return public.encode
        make = c_make_encoder(None, public.default, encoder.encode_basestring_ascii, None, ":", ",", False, False, True)
        join = "".join

        def encode(doc: Any) -> str:
            return join(make(doc, 0))

        probe = {"s": 'a"\\\n\u00e9\U0001f600', "n": [0, -1, 2.5, 1e100, -0.0, None, True, False], "d": {"": []}}
        if encode(probe) == public.encode(probe) and encode("x") == '"x"':
            return encode
    except Exception:  # an interpreter whose json works otherwise
        pass
    return public.encode


#: ``json.dumps(doc, separators=(",", ":"))``: every line, and the record and store rows too.
compact = _compact_encoder()
_QUOTED_TYPES = {t: compact(t) for t in LINE_TYPES}
_QUOTED_OUTCOMES = {o: compact(o.value) for o in Outcome}
_quoted = json.encoder.encode_basestring_ascii  # what ``compact`` does to a string

#: Whether the first result line ``_result_members`` spelled was ``compact``'s (empty: none yet).
_RESULT_TEXT_CHECKED: List[bool] = []


def _result_members(obs: Observation, repeat: int) -> Optional[str]:
    """The members of a result line after its type, as ``compact`` would encode
    ``{**obs.to_dict(), "repeat": repeat}``; None for a value this does not spell (the caller
    encodes the dictionary then).

    A result line is written as each test ends; building the dictionary and encoding it cost most
    of writing the line. The text is checked against ``compact`` of the dictionary for the first
    result of the process (``_RESULT_TEXT_CHECKED``): an ``Observation.to_dict`` that changes its
    members is noticed there, and every line is encoded from the dictionary after that.
    """
    if _RESULT_TEXT_CHECKED and not _RESULT_TEXT_CHECKED[0]:
        return None
    duration, failure, outcome, attempts = obs.duration, obs.failure, obs.outcome, obs.attempts
    if type(duration) is not float or duration - duration != 0.0 or type(repeat) is not int:
        return None  # not a finite float (json spells the others its own way), or a bool
    try:
        text = (
            ',"test_id":%s,"outcome":%s,"duration":%s,"failure":%s,"stdout_summary":%s,"attempts":[%s],"repeat":%d}'
            % (
                _quoted(obs.test_id),
                _QUOTED_OUTCOMES[outcome],
                float.__repr__(duration),
                "null" if failure is None else compact(failure.to_dict()),
                _quoted(obs.stdout_summary),
                _QUOTED_OUTCOMES[attempts[0]]
                if len(attempts) == 1
                else ",".join([_QUOTED_OUTCOMES[a] for a in attempts]),
                repeat,
            )
        )
    except (KeyError, TypeError):  # an outcome that is none, a string that is no str
        return None
    if not _RESULT_TEXT_CHECKED:
        payload = obs.to_dict()
        payload["repeat"] = repeat
        _RESULT_TEXT_CHECKED.append(text == "," + compact(payload)[1:])
        if not _RESULT_TEXT_CHECKED[0]:
            return None
    return text


_RESERVED = frozenset({"seq", "type", "tag"})

#: ``(seq, body) -> tag``: a key, held in a closure.
Signer = Callable[[int, bytes], str]


def line_tag(key: bytes, seq: int, body: bytes) -> str:
    """The tag of line ``seq`` whose JSON without the tag is ``body``."""
    return hmac.new(key, DOMAIN + b"%d\0" % seq + body, hashlib.sha256).hexdigest()


def signer(key: Union[bytes, bytearray]) -> Signer:
    """A function that tags lines with ``key``, which it keeps in its closure and nowhere else.

    Only the keyed HMAC state is kept (the key bytes themselves are not referenced after this
    returns). That hides the key from code that looks for it by name -- an attribute, the config,
    the environment -- not from code that walks the interpreter's objects or reads its memory.
    """
    if len(key) < 16:
        raise ValueError("a stream key has at least 16 bytes, not %d" % len(key))
    keyed = hmac.new(key, DOMAIN, hashlib.sha256)

    def sign(seq: int, body: bytes) -> str:
        mac = keyed.copy()
        mac.update(b"%d\0" % seq)
        mac.update(body)
        return mac.hexdigest()

    return sign


class _Shared:
    """The next sequence number and whether the stream is finished, shared with forked children.

    A test that forks (``multiprocessing``) leaves a copy of the writer in the child; a network
    attempt there is still streamed, and must take the next number, not a number the parent
    already used. Anonymous shared memory survives ``fork``.
    """

    _FORMAT = struct.Struct("<QQ")

    def __init__(self) -> None:
        self._map: Optional[mmap.mmap]
        self._local = (0, 0)
        try:
            self._map = mmap.mmap(-1, self._FORMAT.size)
        except (OSError, ValueError):  # no shared memory here: numbers are per process
            self._map = None

    def get(self) -> Tuple[int, int]:
        if self._map is None:
            return self._local
        seq, finished = self._FORMAT.unpack_from(self._map, 0)
        return seq, finished

    def set(self, seq: int, finished: int) -> None:
        if self._map is None:
            self._local = (seq, finished)
        else:
            self._FORMAT.pack_into(self._map, 0, seq, finished)


try:
    import fcntl

    _POSIX_LOCKS = True
except ImportError:  # not POSIX: no fork either
    _POSIX_LOCKS = False


def _process_lock(fd: int, lock: bool) -> None:
    """Exclude forked children while a line is written (POSIX locks are per process)."""
    if not _POSIX_LOCKS:
        return
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX if lock else fcntl.LOCK_UN)
    except OSError:  # a descriptor that takes no lock (a pipe on some systems)
        pass


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


class StreamWriter:
    """Appends numbered (and, given a ``sign``, tagged) JSON lines to a file or a descriptor.

    ``path``: the file is created by the first line, not before: a session refused as bad input
    while pytest starts leaves no empty stream behind, and ``discard`` removes what a refused
    session wrote. ``fd``: a descriptor the caller opened (the runner's private channel); it is
    written as it is and closed by ``close``. Lines are written whole, one ``os.write`` each,
    under a lock (the network guard reports from any thread) and, once the process has forked, a
    process lock (a forked child writes too). After ``session_finish`` nothing more is written,
    and ``close`` drops the key.
    """

    def __init__(self, path: Optional[str] = None, fd: Optional[int] = None, sign: Optional[Signer] = None) -> None:
        assert (path is None) != (fd is None), "a stream goes to a path or to a descriptor"
        self.path = path
        self._fd = fd
        self._created = False
        self._sign = sign
        self._broken = False
        self._lock = threading.Lock()
        self._shared = _Shared()
        # Until this process forks, no other process writes to the descriptor: a line needs no
        # process lock (two system calls per line) until then (``_fork_begins``).
        self._forked = False
        if hasattr(os, "register_at_fork"):
            ref = weakref.ref(self)
            os.register_at_fork(
                before=lambda: _fork_begins(ref),
                after_in_parent=lambda: _fork_ended(ref),
                after_in_child=lambda: _relock(ref),
            )

    def write(self, line_type: str, payload: Mapping[str, Any]) -> None:
        assert line_type in LINE_TYPES, line_type
        assert _RESERVED.isdisjoint(payload), sorted(payload)
        # The payload is encoded before any lock is taken; "seq" and "type" go in front of its
        # members, as ``json.dumps({"seq": seq, "type": line_type, **payload})`` puts them.
        encoded = compact(payload if type(payload) is dict else dict(payload))
        self._write_line(_QUOTED_TYPES[line_type], "}" if encoded == "{}" else "," + encoded[1:], line_type)

    def write_result(self, obs: Observation, repeat: int) -> None:
        """``write("result", {**obs.to_dict(), "repeat": repeat})``: the same line, its members
        encoded from ``obs`` directly (``_result_members``), one of them per finished test."""
        members = _result_members(obs, repeat)
        if members is None:
            payload = obs.to_dict()
            payload["repeat"] = repeat
            self.write("result", payload)
        else:
            self._write_line(_QUOTED_TYPES["result"], members, "result")

    def _write_line(self, quoted_type: str, members: str, line_type: str) -> None:
        """Number, tag and write one line: ``{"seq":N,"type":T`` and ``members`` (``,...}``)."""
        with self._lock:
            if self._broken:
                return
            fd = self._fd if self._created or self.path is None else self._open()
            if fd is None:
                return
            forked = self._forked
            if forked:
                _process_lock(fd, True)
            try:
                seq, finished = self._shared.get()
                if finished:  # the session is over: nothing may follow its last line
                    return
                body = '{"seq":%d,"type":%s%s' % (seq, quoted_type, members)
                line = body
                if self._sign is not None:
                    line = body[:-1] + ',"tag":"%s"}' % self._sign(seq, body.encode("ascii"))
                data = (line + "\n").encode("ascii")
                try:
                    written = os.write(fd, data)  # one call: the whole line, short of a full pipe
                    if written != len(data):
                        write_all(fd, data[written:])
                except OSError:
                    # A half line may be out there: keep it the last one, where it is tolerated.
                    self._broken = True
                    raise
                self._shared.set(seq + 1, 1 if line_type == "session_finish" else 0)
            finally:
                if forked:
                    _process_lock(fd, False)

    def _open(self) -> Optional[int]:
        if self._fd is None and self.path is not None and not self._created:
            os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o666)
            self._created = True
        return self._fd

    def close(self) -> None:
        """Close the descriptor and forget the key: whatever runs after this cannot write a line."""
        with self._lock:
            self._sign = None
            if self._fd is not None:
                try:
                    os.close(self._fd)
                except OSError:
                    pass
                self._fd = None
            self._broken = True

    def discard(self) -> None:
        """Close and remove the stream: the session it describes was refused."""
        created = self._created
        self.close()
        if created and self.path is not None and os.path.exists(self.path):
            os.remove(self.path)


def _fork_begins(ref: weakref.ReferenceType[StreamWriter]) -> None:
    """Before a fork: no line is half done across it (the lock is held until ``_fork_ended``, or
    replaced in the child), and every line from now on is written under the process lock."""
    writer = ref()
    if writer is not None:
        writer._lock.acquire()
        writer._forked = True


def _fork_ended(ref: weakref.ReferenceType[StreamWriter]) -> None:
    """In the parent, after a fork: lines may be written again."""
    writer = ref()
    if writer is not None:
        writer._lock.release()


def _relock(ref: weakref.ReferenceType[StreamWriter]) -> None:
    """In a forked child: the lock ``_fork_begins`` took is held by a thread the child does not
    have, and would never be released."""
    writer = ref()
    if writer is not None:
        writer._lock = threading.Lock()


@dataclass
class StreamContent:
    """What a stream says, parsed: the reader's view of one pytest process.

    ``forgery``: the first line that breaks the format (``"line N: what"``), or None. Everything
    from that line on is ignored; the fields hold what was read before it.
    """

    started: Optional[Dict[str, Any]] = None
    collected: Optional[List[str]] = None
    collect_errors: Dict[str, Failure] = field(default_factory=dict)
    results: Dict[str, Observation] = field(default_factory=dict)
    markers: Dict[str, List[str]] = field(default_factory=dict)
    functions: Dict[str, List[str]] = field(default_factory=dict)
    files: Dict[str, List[str]] = field(default_factory=dict)
    module_origins: Dict[str, Optional[str]] = field(default_factory=dict)
    network: List[Tuple[Optional[str], str, bool]] = field(default_factory=list)  # (test id, address, blocked)
    #: The test frameworks' objects found replaced (``originals``): (None if by the end of
    #: collection, else the test after which it was found; the dotted name).
    replaced: List[Tuple[Optional[str], str]] = field(default_factory=list)
    #: ... and where what was in each one's place when first found was written (None: unknown).
    replaced_from: Dict[str, Optional[str]] = field(default_factory=dict)
    barriers: List[int] = field(default_factory=list)  # the groups run so far, each the tests it ran
    exit_status: Optional[int] = None
    forgery: Optional[str] = None
    lines: int = 0  # lines accepted

    @property
    def finished(self) -> bool:
        return self.exit_status is not None


def read(path: str, key: Optional[bytes] = None) -> StreamContent:
    """Parse the stream at ``path`` (``parse``); a missing file is an empty stream."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        return StreamContent()
    return parse(data, key)


def parse(data: bytes, key: Optional[bytes] = None) -> StreamContent:
    """The content of a stream; ``key``: every line must carry its valid tag.

    Without a key (a stream a human asked for with ``--evidence-stream``) tags are not checked,
    and every other rule holds.
    """
    reader = Reader(key)
    reader.feed(data)
    return reader.content


class Reader:
    """One stream read again and again as it grows -- a grouped session's, at each barrier and
    when it ends -- parsing only the lines added since the last read. Parsing a stream of
    thousands of lines whole at every barrier cost more than anything else the runner did there.

    Each read hands back a copy of the whole content, the caller's to change. Each read also
    checks that the bytes already parsed are still there as they were: a test process that
    rewrites or cuts back what was read -- the tampering a whole parse would find again -- makes
    the stream a forgery."""

    def __init__(self, key: Optional[bytes] = None) -> None:
        self.content = StreamContent()
        self._key = key
        self._repeats: Dict[str, int] = {}
        self._offset = 0  # bytes of complete lines accepted
        self._consumed = b""  # those bytes

    def read_fd(self, fd: int) -> StreamContent:
        """The content of the file behind ``fd`` (whatever its offset) as it now stands."""
        content = self.content
        if content.forgery is None:
            data = _whole(fd)
            if data[: self._offset] != self._consumed:
                content.forgery = "line %d: bytes already read were rewritten, or the stream cut back" % _first_change(
                    self._consumed, data
                )
            else:
                self.feed(data[self._offset :])
                self._consumed = data[: self._offset]
        return StreamContent(**{f.name: _copied(getattr(content, f.name)) for f in fields(content)})

    def feed(self, data: bytes) -> None:
        """Accept the complete lines of ``data``, the stream's bytes after those already read."""
        content = self.content
        if content.forgery is not None:
            return
        *complete, tail = data.split(b"\n")
        for raw in complete:
            problem = _accept(content, raw, self._key, self._repeats)
            if problem is not None:
                content.forgery = "line %d: %s" % (content.lines + 1, problem)
                return
            content.lines += 1
            self._offset += len(raw) + 1
        if tail and content.finished:
            content.forgery = "line %d: bytes after session_finish" % (content.lines + 1)
        # Otherwise a non-empty tail is the half-written line of a killed writer, or of a writer
        # still writing: read again from its start next time.


def _whole(fd: int) -> bytes:
    """The whole file behind ``fd``, whatever its offset."""
    chunks: List[bytes] = []
    offset = 0
    while True:
        chunk = os.pread(fd, 1 << 20, offset)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        offset += len(chunk)


def _first_change(read: bytes, data: bytes) -> int:
    """The number of the line in which ``data`` first differs from ``read``, or ends before it."""
    limit = min(len(read), len(data))
    same = next((i for i in range(limit) if read[i] != data[i]), limit)
    return read[:same].count(b"\n") + 1


def _copied(value: Any) -> Any:
    """A field of ``StreamContent`` in containers of its own (observations are immutable;
    ``started``, a line's JSON, is copied whole)."""
    if isinstance(value, dict):
        return {k: copy.deepcopy(v) if isinstance(v, dict) else _copied(v) for k, v in value.items()}
    if isinstance(value, list):
        return list(value)
    return value


def _accept(content: StreamContent, raw: bytes, key: Optional[bytes], repeats: Dict[str, int]) -> Optional[str]:
    """Apply one complete line to ``content``; what is wrong with it, or None."""
    if content.finished:
        return "a line after session_finish"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return "not UTF-8 text"
    found = _TAG.search(text)
    body = text if found is None else text[: found.start()] + "}"
    try:
        doc = json.loads(body)
    except ValueError:
        return "not JSON"
    if not isinstance(doc, dict):
        return "not a JSON object"
    seq = doc.get("seq")
    if type(seq) is not int:
        return "no sequence number"
    if seq != content.lines:
        return "sequence number %d where %d was expected" % (seq, content.lines)
    if key is not None:
        if found is None:
            return "no authentication tag"
        if not hmac.compare_digest(found.group(1), line_tag(key, seq, body.encode("utf-8"))):
            return "bad authentication tag"
    kind = doc.get("type")
    if kind not in LINE_TYPES:
        return "unknown type %r" % (kind,)
    if kind == "session_start":
        if content.started is not None:
            return "a second session_start"
        content.started = doc
        return None
    if content.started is None:
        return "a %s line before session_start" % kind
    try:
        return _apply(content, kind, doc, repeats)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return "a malformed %s line (%s: %s)" % (kind, type(exc).__name__, exc)


def _apply(content: StreamContent, kind: str, doc: Dict[str, Any], repeats: Dict[str, int]) -> Optional[str]:
    if kind == "collected":
        content.collected = [str(t) for t in doc["test_ids"]]
        content.markers = {str(k): list(v) for k, v in dict(doc.get("markers", {})).items()}
    elif kind == "collect_error":
        content.collect_errors[str(doc["nodeid"])] = Failure.from_dict(doc["failure"])
    elif kind == "result":
        obs = Observation.from_dict(doc)
        repeat = doc.get("repeat", 0)
        seen = repeats.get(obs.test_id, 0)
        if type(repeat) is not int or repeat != seen:
            if isinstance(repeat, int) and repeat < seen:
                return "a second result for %s (repeat %d again)" % (obs.test_id, repeat)
            return "result for %s has repeat %r where %d was expected" % (obs.test_id, repeat, seen)
        repeats[obs.test_id] = seen + 1
        content.results[obs.test_id] = obs if seen == 0 else content.results[obs.test_id].and_then(obs)
    elif kind == "deps":  # a test may have two lines: files as it ends, coverage lines at session end
        content.functions.setdefault(str(doc["test_id"]), []).extend(str(f) for f in doc["functions"])
        content.files.setdefault(str(doc["test_id"]), []).extend(str(f) for f in doc["files"])
    elif kind == "modules":
        content.module_origins = dict(doc["origins"])
    elif kind == "barrier":
        if doc["group"] != len(content.barriers):
            return "barrier of group %r where group %d was expected" % (doc["group"], len(content.barriers))
        content.barriers.append(int(doc["ran"]))
    elif kind == "network":
        content.network.append((doc["test_id"], str(doc["address"]), bool(doc.get("blocked", True))))
    elif kind == "replaced":
        for name, at, origin in doc["found"]:
            content.replaced.append((None if at == "collection" else str(doc["test_id"]), str(name)))
            content.replaced_from.setdefault(str(name), None if origin is None else str(origin))
    else:
        content.exit_status = int(doc["exit_status"])
    return None
