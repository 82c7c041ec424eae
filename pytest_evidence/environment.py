"""The environment fingerprint: two runs are comparable only when their fingerprints match.

Patch versions count (testmon drops them and misses upgrades, see docs/how-it-works.md), and so do
the interpreter and platform. Computed once per session, at its end: it reads the name and version
of every installed distribution. Only the header block of each metadata file is read -- the long
description after it is most of the text, and parsing it with the ``email`` package cost most of
the time -- and a block of plain ``Field: value`` lines is read here directly; anything else (a
folded line, a line that is no header) goes to the parser ``importlib.metadata`` uses. Either way
the values are the ones ``importlib.metadata`` gives.

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

import email
import hashlib
import json
import platform
import re
import sys
from importlib import metadata as _metadata
from typing import Dict, List, Optional, Tuple

from pytest_evidence.model import Environment

#: A header line as ``email.feedparser`` takes it, its field name not empty, no continuation.
_HEADER_LINE = re.compile(r"[\041-\071\073-\176]+:")


def _plain_headers(head: str) -> Optional[Dict[str, str]]:
    """The first ``name`` and ``version`` of a header block (keys lowercased), as compat32's
    ``message.get`` gives them; None for a block ``email.feedparser`` would read otherwise (an
    envelope line, a continuation, a line that is no header)."""
    found: Dict[str, str] = {}
    for line in head.split("\n"):
        if not line:
            break  # the blank line that ends the block, or the end of the text
        match = _HEADER_LINE.match(line)
        if match is None or line.startswith("From "):
            return None
        key = line[: match.end() - 1].lower()
        if key not in found and key in ("name", "version"):
            found[key] = line[match.end() :].lstrip(" \t")
    return found


def _headers(dist: _metadata.Distribution) -> Optional[Tuple[object, object]]:
    """``(Name, Version)`` from the header block of ``dist``'s metadata, as
    ``dist.metadata["Name"]`` and ``dist.version`` give them; None where only those can tell
    (a distribution class of its own, no metadata text, a folded value)."""
    cls = type(dist)
    if cls.metadata is not _metadata.Distribution.metadata or cls.version is not _metadata.Distribution.version:
        return None
    text = dist.read_text("METADATA") or dist.read_text("PKG-INFO") or dist.read_text("")
    if not isinstance(text, str):
        return None
    # read_text decodes with universal newlines: the header block ends at the first empty line.
    end = text.find("\n\n")
    head = text if end < 0 else text[: end + 1]
    plain = _plain_headers(head)
    if plain is not None:
        return plain.get("name"), plain.get("version")
    message = email.message_from_string(head)
    name, version = message["Name"], message["Version"]
    if any(isinstance(v, str) and "\n" in v for v in (name, version)):
        return None  # a folded value, which importlib.metadata's adapter re-indents
    return name, version


def _name_version(dist: _metadata.Distribution) -> Tuple[object, object]:
    found = _headers(dist)
    if found is None:
        return dist.metadata["Name"], dist.version
    return found


def distributions() -> List[Tuple[str, str]]:
    """Sorted ``(name, version)`` of every installed distribution the interpreter can see."""
    found = set()
    for dist in _metadata.distributions():
        name, version = _name_version(dist)
        if name:
            found.add((str(name).lower().replace("_", "-"), str(version)))
    return sorted(found)


def _version(name: str) -> str:
    """A distribution's version without importing it (the runner fingerprints without pytest)."""
    try:
        dist = _metadata.distribution(name)
    except _metadata.PackageNotFoundError:
        return "absent"
    return str(_name_version(dist)[1])


def versions(names: List[str]) -> Dict[str, str]:
    """Installed version of each named distribution, ``absent`` when it is not installed."""
    return {name: _version(name) for name in names}


def capture() -> Environment:
    """Fingerprint this interpreter: version, implementation, platform, every distribution."""
    dists = distributions()
    python = "%d.%d.%d" % sys.version_info[:3]
    impl = platform.python_implementation()
    plat = "%s-%s" % (sys.platform, platform.machine())
    payload = json.dumps([python, impl, plat, dists], separators=(",", ":"))
    return Environment(
        fingerprint=hashlib.sha256(payload.encode()).hexdigest(),
        python=python,
        implementation=impl,
        platform=plat,
        pytest=_version("pytest"),
        distributions=len(dists),
    )
