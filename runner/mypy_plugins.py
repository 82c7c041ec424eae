"""The plugins a repository's mypy configuration loads: code mypy imports and runs in the referee.

T2 runs mypy in the runner's own process tree, before any test process and outside the sandbox
the tests get. mypy reads its configuration at the checkout's root (``mypy.ini``, ``.mypy.ini``,
``pyproject.toml``'s ``[tool.mypy]``, ``setup.cfg``'s ``[mypy]``), and its ``plugins`` setting
names modules, or ``.py`` files relative to the configuration file, each optionally with a
``:function``; mypy imports each and calls it. T2 starts mypy with the checkout off ``sys.path``,
so a module name is found in the runner's environment only -- but a ``.py`` file is the
checkout's. A plugin the candidate names, or a plugin file it writes, would run its code there:
``changed_plugins`` finds both, for the interference scan to reject.
"""

from __future__ import annotations

import configparser
import posixpath
import sys
from collections.abc import Callable, Collection

from runner.diff import Diff

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the runner supports 3.10
    import tomli as tomllib

#: Where mypy looks for its configuration, in its order; only the checkout's root is read.
CONFIG_FILES = ("mypy.ini", ".mypy.ini", "pyproject.toml", "setup.cfg")


def _entries(value: object) -> list[str]:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",")]
    if isinstance(value, list):
        return [str(part).strip() for part in value]
    return []


def named(path: str, data: bytes) -> frozenset[str]:
    """The plugin entries ``path``'s mypy section names, each without its ``:function``.

    A file that does not parse names none here: mypy cannot read it either, and T2 says so.
    """
    text = data.decode("utf-8", "replace")
    value: object = None
    if path == "pyproject.toml":
        try:
            tool = tomllib.loads(text).get("tool", {})
        except tomllib.TOMLDecodeError:
            return frozenset()
        value = tool.get("mypy", {}).get("plugins") if isinstance(tool, dict) else None
    else:
        parser = configparser.ConfigParser(interpolation=None, strict=False)
        try:
            parser.read_string(text)
        except configparser.Error:
            return frozenset()
        value = parser.get("mypy", "plugins", fallback=None)
    found = set()
    for entry in _entries(value):
        if ":" in posixpath.basename(entry.replace("\\", "/")):  # ``module:function``, as mypy splits it
            entry = entry.rsplit(":", 1)[0]
        if entry:
            found.add(entry)
    return frozenset(found)


def _file(entry: str) -> str | None:
    """The checkout file a ``.py`` entry loads (relative to the root, where the configuration is)."""
    if not entry.endswith(".py"):
        return None
    return posixpath.normpath(entry.replace("\\", "/"))


def changed_plugins(
    diff: Diff,
    baseline_paths: Collection[str],
    read: Callable[[str], bytes],
    read_baseline: Callable[[str], bytes],
) -> list[tuple[str, str]]:
    """``(configuration file, message)`` for each plugin the candidate makes mypy load: an entry
    B's configuration did not name, or a plugin file the candidate added or changed."""
    changed = {f.path: f.status for f in diff.files}
    on_b = {p: named(p, read_baseline(p)) for p in CONFIG_FILES if p in baseline_paths}

    def on_c(config: str) -> frozenset[str]:
        status = changed.get(config)
        if status is None:
            return on_b.get(config, frozenset())
        return frozenset() if status == "D" else named(config, read(config))

    known = frozenset().union(*on_b.values())
    found = []
    for config in CONFIG_FILES:
        for entry in sorted(on_c(config)):
            path = _file(entry)
            if entry not in known:
                found.append((config, "names the mypy plugin %r, which B's configuration does not" % entry))
            elif path is not None and changed.get(path) in ("A", "M"):
                found.append((config, "names the mypy plugin %r, which the candidate changed" % entry))
    return found
