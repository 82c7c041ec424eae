"""A stamp of where a target interpreter's installed distributions are read from.

A record measures the candidate's environment again after its tests ran, because a test may have
installed or removed something (``environment_drift``). Asking the target costs an interpreter
start and a read of every distribution's metadata, about 0.4 s of every certify. What that
measurement can see is small: ``importlib.metadata`` finds distributions only as ``*.dist-info``
and ``*.egg-info`` entries (an ``.egg``'s ``EGG-INFO``) of the directories on ``sys.path``, and
that path grows at start-up only through ``.pth`` files and ``sitecustomize``/``usercustomize``
there. So the stamp is those entries' names and stats, with the metadata files inside, for every
path entry the target reported, plus the interpreter itself: where it has not moved, the
fingerprint is the one measured before; where anything in it moved, the target is asked again.
Other files (``__pycache__``, modules) are left out on purpose: they change without changing what
is installed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

#: Entries of a path directory that decide which distributions are found, and where.
_SUFFIXES = (".dist-info", ".egg-info", ".egg-link", ".pth")
_STARTUP = ("sitecustomize.py", "usercustomize.py")
#: The metadata file inside a distribution's directory that holds its name and version.
_METADATA = ("METADATA", "PKG-INFO")

Stamp = tuple[object, ...]


def stamp(executable: str, path: Sequence[str]) -> Stamp:
    """The stamp of an interpreter (``sys.executable``) and its ``sys.path`` (absolute entries)."""
    return (_stat(os.path.realpath(executable)), *((entry, _entry(entry)) for entry in path))


def _entry(entry: str) -> object:
    try:
        names = sorted(os.listdir(entry))
    except OSError:  # a zip archive on the path, or nothing there (yet): its own stat, or None
        return _stat(entry)
    egg = entry.lower().endswith(".egg")
    found = []
    for name in names:
        low = name.lower()
        if low.endswith(_SUFFIXES) or low in _STARTUP or (egg and low == "egg-info"):
            child = os.path.join(entry, name)
            found.append((name, _stat(child), *(_stat(os.path.join(child, m)) for m in _METADATA)))
    return tuple(found)


def _stat(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size
