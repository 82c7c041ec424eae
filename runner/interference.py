"""Source that fights the referee: the candidate's library code acting on the test run itself.

Only the lines the candidate wrote are scanned. Each finding is a ``source_interference``
detection with its file and line; the ones that can only be attacks (``ATTACKS``: reaching into
pytest's internals, writing onto a test framework's objects, ending the process with
``os._exit``, a mypy plugin of the candidate's that T2 would load, ``runner.mypy_plugins``,
compiled code in place of source; and, found as the tests run rather than read, a test
framework's object C's code replaced and B's did not, ``replaces_test_framework``)
reject the patch, the others are left for the reviewer, who may know the library ships a pytest
plugin or patches builtins on purpose.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection

from pytest_evidence.model import Detection, DetectionKind
from runner import blindness, mypy_plugins, pyscan
from runner.diff import Diff, FileKind

ATTACKS = frozenset(
    {
        "pytest_internals",
        "os_exit",
        "startup_hook",
        "shadows_module",
        "patches_test_framework",
        "replaces_test_framework",
        "mypy_plugin",
        "plugin_entry_point",
        "compiled_code",
    }
)

#: Shapes that are not attacks for sure but void what the tests say: code that asks whether it
#: runs under a test framework behaves differently there (a test tool's own code may ask too); a
#: test framework's object replaced on C where B's side cannot say whose code replaced it
#: (``judge.framework_replacements``).
BLINDING = frozenset({"detects_test_run", "framework_replaced_unattributed"})

#: Modules Python runs at start-up from anywhere on ``sys.path``: before pytest, before the
#: plugin reads its key -- in every test process, since the checkout is on the path.
STARTUP_MODULES = frozenset({"sitecustomize", "usercustomize"})

#: What the test process imports before, or instead of, the code under test: the standard
#: library, pytest and what it needs, the plugin and its guards. A checkout on ``sys.path`` that
#: gains a module of one of these names replaces it in every test process.
RESERVED = frozenset(sys.stdlib_module_names) | {
    "pytest",
    "_pytest",
    "pluggy",
    "iniconfig",
    "packaging",
    "exceptiongroup",
    "tomli",
    "py",
    "pytest_evidence",
    "pytest_timeout",
    "pytest_randomly",
}

_ROOTS = ("", "src/")

#: The entry-point group pytest loads a plugin from, for every distribution on the path.
PLUGIN_GROUP = "pytest11"
#: The directories ``importlib.metadata`` takes for a distribution's metadata (by suffix, any case).
_METADATA_DIRS = (".dist-info", ".egg-info")


def _top_level(path: str) -> str | None:
    """The top-level module a path defines at an import root (``hmac.py``, ``pytest/__init__.py``);
    None for anything else -- a directory without ``__init__.py`` is a namespace portion, which
    never shadows a module found anywhere on the path."""
    for root in _ROOTS:
        rest = path[len(root) :] if path.startswith(root) else None
        if rest is None:
            continue
        if "/" not in rest and rest.endswith(".py"):
            return rest[: -len(".py")]
        head, _, tail = rest.partition("/")
        if tail == "__init__.py":
            return head
    return None


def _module_hits(diff: Diff, baseline_paths: Collection[str]) -> list[Detection]:
    """Modules the candidate added at an import root under a start-up or reserved name."""
    existing = {_top_level(p) for p in baseline_paths}
    found: dict[str, Detection] = {}
    for change in diff.files:
        name = _top_level(change.path)
        if change.status == "D" or name is None or name in found:
            continue
        if name in STARTUP_MODULES:
            why = "startup_hook", "runs at interpreter start-up in every test process, before the test plugin"
        elif name in RESERVED and name not in existing:
            why = "shadows_module", "a new module %r replaces the one the test process imports under that name" % name
        else:
            continue
        detail, message = why
        found[name] = Detection(
            DetectionKind.SOURCE_INTERFERENCE, "%s: %s" % (change.path, message), None, change.path, None, detail
        )
    return list(found.values())


#: Files of compiled code Python imports: bytecode, and extension modules (``.so``: any of
#: ``importlib.machinery.EXTENSION_SUFFIXES`` on this platform or another ends so).
COMPILED = (".pyc", ".pyo", ".so", ".pyd", ".dylib")


def _compiled_hits(diff: Diff) -> list[Detection]:
    """Compiled code the candidate adds or changes: Python runs a ``.pyc`` in place of its source
    (an unchecked hash-based one in ``__pycache__`` whatever the source says, one with no source
    beside it as the module) and imports an extension module before a ``.py`` of its name, and no
    tier reads either -- reviews certified patches that changed no source this way, a ``.pyc`` and
    a ``.so``."""
    return [
        Detection(
            DetectionKind.SOURCE_INTERFERENCE,
            "%s: compiled code, which Python may run in place of the source every tier reads" % change.path,
            None,
            change.path,
            None,
            "compiled_code",
        )
        for change in diff.files
        if change.status != "D" and change.path.endswith(COMPILED)
    ]


def plugin_entries(data: bytes) -> frozenset[str]:
    """The entries of the ``pytest11`` group of an ``entry_points.txt``, read as
    ``importlib.metadata`` reads the file: ``[group]`` lines, and every other line not empty and
    not a ``#`` comment belonging to the group above it (``;inflection = _x`` is an entry there: a
    review's plugin loaded so)."""
    group, found = None, set()
    for raw in data.decode("utf-8", "replace").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):  # only "#": a ";" line is an entry to it (a review's)
            continue
        if line.startswith("[") and line.endswith("]"):
            group = line.strip("[]").strip()
        elif group == PLUGIN_GROUP:
            found.add(" ".join(line.split()))
    return frozenset(found)


def _entry_point_hits(
    diff: Diff, read: Callable[[str], bytes], read_baseline: Callable[[str], bytes], links: Collection[str]
) -> list[Detection]:
    """pytest plugins the candidate registers through distribution metadata in the checkout.

    A ``NAME.dist-info`` (or ``.egg-info``, an egg's ``EGG-INFO``) directory on a path entry is a
    distribution to ``importlib.metadata``, and pytest loads every ``pytest11`` entry point of
    every distribution it finds, before any conftest: a plugin of the candidate's, run in every
    test process -- one that switched the fix on there and nowhere else was certified (an
    independent check). Named: a ``pytest11`` entry the candidate adds to any file called
    ``entry_points.txt`` (in any directory, any case: ``importlib.metadata`` matches the
    directory's suffix without case, and a review renamed it ``.DIST-INFO``), and a symbolic link
    it adds or changes that is such a file or a metadata directory (``links``: C's symlinks; a
    review linked the directory to ``_meta/`` and the file to ``../plugins.cfg``), whatever it
    points at. No repository needs to add a pytest plugin this way."""
    found = []
    for change in diff.files:
        if change.status == "D":
            continue
        name = change.path.rpartition("/")[2].lower()
        if change.path in links and (name == "entry_points.txt" or name.endswith(_METADATA_DIRS) or name == "egg-info"):
            message = "a symbolic link to distribution metadata, which pytest reads for plugins to load"
        elif name == "entry_points.txt":
            before = plugin_entries(read_baseline(change.path)) if change.status == "M" else frozenset()
            added = plugin_entries(read(change.path)) - before
            if not added:
                continue
            message = (
                "registers the pytest plugin %s: pytest loads it from the checkout in every test process"
                % (sorted(added)[0])
            )
        else:
            continue
        found.append(
            Detection(
                DetectionKind.SOURCE_INTERFERENCE,
                "%s: %s" % (change.path, message),
                None,
                change.path,
                None,
                "plugin_entry_point",
            )
        )
    return found


def scan(
    read: Callable[[str], bytes],
    diff: Diff,
    baseline_paths: Collection[str],
    read_baseline: Callable[[str], bytes],
    links: Collection[str] = (),
) -> list[Detection]:
    """``links``: the candidate's symbolic links (``gitops.symlinks``)."""
    found = [
        *_module_hits(diff, baseline_paths),
        *_entry_point_hits(diff, read, read_baseline, links),
        *_compiled_hits(diff),
    ]
    for config, message in mypy_plugins.changed_plugins(diff, baseline_paths, read, read_baseline):
        found.append(
            Detection(
                DetectionKind.SOURCE_INTERFERENCE,
                "%s: %s: mypy would load it inside the referee at T2" % (config, message),
                None,
                config,
                None,
                "mypy_plugin",
            )
        )
    for change in diff.of_kind(FileKind.SOURCE):
        if change.status == "D" or not change.path.endswith(".py"):
            continue
        tree = pyscan.parse(read(change.path))
        if tree is None:  # T0 reports it
            continue
        hits = [*pyscan.interference(tree, set(change.c_lines)), *blindness.detects_test_run(tree, change.c_lines)]
        for hit in hits:
            found.append(
                Detection(
                    DetectionKind.SOURCE_INTERFERENCE,
                    "%s:%d: %s" % (change.path, hit.line, hit.message),
                    None,
                    change.path,
                    hit.line,
                    hit.detail,
                )
            )
    return found


def is_attack(detection: Detection) -> bool:
    return detection.kind is DetectionKind.SOURCE_INTERFERENCE and detection.detail in ATTACKS


def is_blinding(detection: Detection) -> bool:
    return detection.kind is DetectionKind.SOURCE_INTERFERENCE and detection.detail in BLINDING
