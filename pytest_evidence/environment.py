"""The environment fingerprint: two runs are comparable only when their fingerprints match.

Patch versions count (testmon drops them and misses upgrades, see docs/how-it-works.md), and so do
the interpreter and platform. Computed once per session: reading every distribution's metadata
costs tens of milliseconds.
"""

from __future__ import annotations

import hashlib
import json
import platform
import sys
from importlib import metadata as _metadata
from typing import Dict, List, Tuple

from pytest_evidence.model import Environment


def distributions() -> List[Tuple[str, str]]:
    """Sorted ``(name, version)`` of every installed distribution the interpreter can see."""
    found = set()
    for dist in _metadata.distributions():
        name = dist.metadata["Name"]
        if name:
            found.add((str(name).lower().replace("_", "-"), str(dist.version)))
    return sorted(found)


def _version(name: str) -> str:
    """A distribution's version without importing it (the runner fingerprints without pytest)."""
    try:
        return str(_metadata.version(name))
    except _metadata.PackageNotFoundError:
        return "absent"


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
