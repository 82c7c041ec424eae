"""Which pytest settings a candidate may change: tightening is allowed, loosening is tamper.

Pure functions over file contents, used by ``runner.integrity``:

* :func:`read` -- the pytest settings a configuration file holds (wherever pytest reads them:
  ``pytest.toml``, ``.pytest.toml``, ``pytest.ini``, ``.pytest.ini``, ``pyproject.toml``'s
  ``[tool.pytest.ini_options]`` or pytest 9's native ``[tool.pytest]``, ``tox.ini [pytest]``,
  ``setup.cfg [tool:pytest]``), and :func:`effective`, the file pytest uses at a directory;
* :func:`classify` -- each changed setting, key by key, as ``tightened`` (the candidate asks more of
  the tests: allowed, recorded), ``loosened`` (it collects, runs or checks less: tamper) or
  ``unknown`` (laid back to the trusted setting and recorded);
* :func:`lay_back` -- the candidate's file with only its pytest settings replaced by the trusted
  ones: a version bump elsewhere in ``pyproject.toml`` stays the candidate's;
* :func:`collection` -- what the trusted configuration collects (``testpaths`` and the
  ``python_files`` / ``python_classes`` / ``python_functions`` patterns).
"""

from __future__ import annotations

import configparser
import enum
import fnmatch
import io
import posixpath
import re
import shlex
import sys
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from packaging.version import InvalidVersion, Version

from pytest_evidence import gitops

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the runner supports 3.10
    import tomli as tomllib

#: The files pytest reads its settings from, in pytest 9's order of precedence at one directory.
PRECEDENCE = ("pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
#: Files that are pytest configuration whole, even without a section (``[pytest]`` for the TOML ones).
DEDICATED = frozenset({"pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini"})
#: The ini section holding pytest's settings, per file name.
INI_SECTIONS = {"pytest.ini": "pytest", ".pytest.ini": "pytest", "tox.ini": "pytest", "setup.cfg": "tool:pytest"}
#: The TOML table holding pytest's settings (and its subtables), per file name.
TOML_TABLES = {"pyproject.toml": ("tool", "pytest"), "pytest.toml": ("pytest",), ".pytest.toml": ("pytest",)}

DEFAULT_PYTHON_FILES = ("test_*.py", "*_test.py")
DEFAULT_PYTHON_CLASSES = ("Test",)
DEFAULT_PYTHON_FUNCTIONS = ("test",)
DEFAULT_NORECURSEDIRS = ("*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}")

#: Pseudo-keys: a file that does not parse, and a pytest.ini without its ``[pytest]`` section.
UNPARSEABLE = "<unparseable>"


@dataclass(frozen=True)
class Settings:
    """The pytest settings of one file: raw values (strings in ini mode, native TOML types else)."""

    values: Mapping[str, object]
    toml: bool = False
    unparseable: bool = False


def is_config(path: str) -> bool:
    return posixpath.basename(path) in PRECEDENCE


def read(path: str, data: bytes | None) -> Settings | None:
    """The pytest settings ``data`` holds as the file ``path``; None where it holds none.

    A dedicated file (``pytest.ini``...) always holds pytest's settings, possibly none of them.
    """
    name = posixpath.basename(path)
    if data is None or name not in PRECEDENCE:
        return None
    text = data.decode("utf-8", "replace")
    if name in TOML_TABLES:
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            return Settings({UNPARSEABLE: text}, toml=True, unparseable=True)
        table = _toml_table(doc, TOML_TABLES[name])
        if table is None:
            return Settings({}, toml=True) if name in DEDICATED else None
        values = {k: v for k, v in table.items() if k != "ini_options"}
        ini = table.get("ini_options")
        if isinstance(ini, dict):
            values.update(ini)
        return Settings(values, toml=True)
    parser = _ini_parser()
    try:
        parser.read_string(text)
    except configparser.Error:
        return Settings({UNPARSEABLE: text}, unparseable=True)
    section = INI_SECTIONS[name]
    if not parser.has_section(section):
        return Settings({}) if name in DEDICATED else None
    return Settings(dict(parser.items(section)))


def _ini_parser() -> configparser.ConfigParser:
    return configparser.ConfigParser(interpolation=None, strict=False)


def _toml_table(doc: Mapping[str, object], keys: Sequence[str]) -> dict[str, object] | None:
    node: object = doc
    for key in keys:
        if not isinstance(node, dict) or not isinstance(node.get(key), dict):
            return None
        node = node[key]
    assert isinstance(node, dict)
    return node


def effective(read_file: Callable[[str], bytes | None], directory: str = "") -> tuple[str | None, Settings]:
    """The file pytest takes its settings from at ``directory`` (pytest 9's rules) and those settings.

    A ``pyproject.toml`` without pytest settings is the configuration file when no other is found.
    """
    fallback: str | None = None
    for name in PRECEDENCE:
        path = posixpath.join(directory, name) if directory else name
        data = read_file(path)
        if data is None:
            continue
        found = read(path, data)
        if found is not None:
            return path, found
        if name == "pyproject.toml":
            fallback = path
    return fallback, Settings({})


# -- what the trusted configuration collects -------------------------------------------------------


@dataclass(frozen=True)
class Collection:
    """``testpaths`` (empty: everything under the root) and the naming patterns pytest collects by."""

    testpaths: tuple[str, ...] = ()
    python_files: tuple[str, ...] = DEFAULT_PYTHON_FILES
    python_classes: tuple[str, ...] = DEFAULT_PYTHON_CLASSES
    python_functions: tuple[str, ...] = DEFAULT_PYTHON_FUNCTIONS
    #: Files pytest collects by their path whatever the patterns and ``testpaths`` say, each as
    #: ``/PATH`` (``overlay.named_by``): those named on its command line, and those ``testpaths`` lists.
    by_path: tuple[str, ...] = ()

    def under_testpaths(self, path: str) -> bool:
        """Whether pytest's default run (no arguments) reaches ``path``: under a ``testpaths`` entry."""
        if not self.testpaths:
            return True
        parts = path.split("/")
        prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        return any(fnmatch.fnmatchcase(prefix, root) for root in self.roots() for prefix in prefixes) or (
            "." in self.roots()
        )

    def near_testpaths(self, directory: str) -> bool:
        """Whether a test directory shares a tree with ``testpaths`` (``tests/data`` for ``tests/unit``)."""
        if not self.testpaths or self.under_testpaths(directory):
            return True
        return any(root == directory or root.startswith(directory + "/") for root in self.roots())

    def roots(self) -> list[str]:
        return [posixpath.normpath(p.strip().rstrip("/")).removeprefix("./") for p in self.testpaths if p.strip()]


def collection(settings: Settings | None, python_files: Sequence[str] = DEFAULT_PYTHON_FILES) -> Collection:
    """What ``settings`` collect; ``python_files`` where they do not say. A ``/PATH`` among
    ``python_files`` (``test_modules``: a file named on the command line) is collected by path
    whatever the settings say."""
    values = settings.values if settings is not None and not settings.unparseable else {}
    testpaths = tuple(_args(values.get("testpaths")))
    listed = ["/" + posixpath.normpath(p) for p in testpaths if p.endswith(".py")]
    return Collection(
        testpaths,
        tuple(_args(values.get("python_files"))) or tuple(p for p in python_files if not p.startswith("/")),
        tuple(_args(values.get("python_classes"))) or DEFAULT_PYTHON_CLASSES,
        tuple(_args(values.get("python_functions"))) or DEFAULT_PYTHON_FUNCTIONS,
        tuple(dict.fromkeys([*listed, *(p for p in python_files if p.startswith("/"))])),
    )


#: pytest options whose value may come as the next word (``--ignore x.py``): that word names no
#: file to collect.
_VALUED = frozenset(
    {"--ignore", "--ignore-glob", "--deselect", "-k", "-m", "-p", "-c", "--rootdir", "--confcutdir", "-o"}
)


def named_files(pytest_args: Sequence[str]) -> tuple[str, ...]:
    """The Python files ``pytest_args`` name (``tests.py``, ``./pkg/tests.py::Case::test_x``, as
    root-relative paths): pytest collects a file named on its command line whatever
    ``python_files`` and ``testpaths`` say."""
    found = []
    for i, word in enumerate(pytest_args):
        path = posixpath.normpath(word.split("::", 1)[0])
        if not word.startswith("-") and (i == 0 or pytest_args[i - 1] not in _VALUED) and path.endswith(".py"):
            found.append(path)
    return tuple(dict.fromkeys(found))


def test_modules(read_file: Callable[[str], bytes | None], pytest_args: Sequence[str]) -> tuple[str, ...]:
    """What pytest takes for a test module in the tree ``read_file`` reads, as ``python_files``
    patterns (``overlay.named_by``): its configuration's ``python_files`` (pytest's defaults where
    it sets none), and, each as its own path only (``/PATH``), every file pytest collects by name:
    those ``pytest_args`` name and the files its ``testpaths`` list."""
    named = ["/" + p for p in named_files(pytest_args)]
    collect = collection(effective(read_file)[1], [*DEFAULT_PYTHON_FILES, *named])
    return (*collect.python_files, *collect.by_path)


def test_modules_at(repo: str, commit: str, pytest_args: Sequence[str]) -> tuple[str, ...]:
    """``test_modules`` of ``commit``'s tree."""
    present = gitops.blobs(repo, commit)
    return test_modules(lambda p: gitops.show(repo, commit, p) if p in present else None, pytest_args)


def addopts(path: str, data: bytes | None) -> list[str]:
    """The ``addopts`` words of a configuration file (none where it holds no readable settings)."""
    return _addopts_of(read(path, data))


def doctest_modules(settings: Settings | None, pytest_args: Sequence[str]) -> bool:
    """Whether the suite runs the examples of the code's docstrings: ``--doctest-modules`` in
    ``settings``' addopts or in the operator's pytest arguments."""
    return "--doctest-modules" in [*_addopts_of(settings), *pytest_args]


def _addopts_of(settings: Settings | None) -> list[str]:
    return [] if settings is None or settings.unparseable else _args(settings.values.get("addopts"))


def _args(value: object) -> list[str]:
    """An ``args`` setting (``addopts``, ``testpaths``, ``python_files``...) as words."""
    if value is None:
        return []
    if isinstance(value, list):
        return [str(v) for v in value]
    try:
        return shlex.split(str(value))
    except ValueError:
        return str(value).split()


def _lines(value: object) -> list[str]:
    """A ``linelist`` setting (``filterwarnings``, ``markers``) as its non-empty lines."""
    if value is None:
        return []
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    return [line.strip() for line in str(value).splitlines() if line.strip()]


def _bool(value: object) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    word = str(value).strip().lower()
    if word in ("y", "yes", "t", "true", "on", "1"):
        return True
    if word in ("n", "no", "f", "false", "off", "0"):
        return False
    raise ValueError(word)


# -- classification ----------------------------------------------------------------------------------


class Change(enum.Enum):
    TIGHTENED = "tightened"
    LOOSENED = "loosened"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class KeyChange:
    """One changed setting: how it changed, and why, in words."""

    key: str
    change: Change
    reason: str


@dataclass(frozen=True)
class Classification:
    changes: tuple[KeyChange, ...] = field(default_factory=tuple)

    def reasons(self, change: Change) -> list[str]:
        return [c.reason for c in self.changes if c.change is change]

    @property
    def loosened(self) -> bool:
        return any(c.change is Change.LOOSENED for c in self.changes)

    @property
    def lay_back(self) -> bool:
        """Whether the trusted settings must be laid back: anything but tightening changed."""
        return any(c.change is not Change.TIGHTENED for c in self.changes)


#: addopts flags that make pytest stricter.
STRICT_FLAGS = frozenset({"--strict-markers", "--strict-config", "--strict"})
#: addopts options that take a value (in the next word unless attached).
SHORT_VALUE = frozenset("kmpWocnr")
LONG_VALUE = frozenset(
    {
        "--deselect",
        "--ignore",
        "--ignore-glob",
        "--pythonwarnings",
        "--override-ini",
        "--config-file",
        "--inifile",
        "--rootdir",
        "--confcutdir",
        "--maxfail",
        "--tb",
        "--durations",
        "--durations-min",
        "--basetemp",
        "--import-mode",
        "--capture",
        "--log-level",
        "--log-cli-level",
        "--log-format",
        "--log-file",
        "--junitxml",
        "--junit-xml",
        "--junit-prefix",
        "--cov",
        "--cov-report",
        "--cov-config",
        "--cov-fail-under",
        "--timeout",
        "--timeout-method",
        "--randomly-seed",
        "--dist",
        "--numprocesses",
        "--maxprocesses",
        "--reruns",
        "--reruns-delay",
        "--only-rerun",
        "--doctest-glob",
        "--color",
        "--code-highlight",
        "--last-failed-no-failures",
        "--lfnf",
        "--asyncio-mode",
        "--hypothesis-profile",
        "--hypothesis-seed",
        "--deselect-glob",
        "--keyword",
        "--markers-expression",
    }
)
#: addopts options that collect, run or check fewer tests, with what they do.
NARROWING = {
    "-k": "selects tests by keyword",
    "--keyword": "selects tests by keyword",
    "-m": "selects tests by marker",
    "--deselect": "deselects tests",
    "--deselect-glob": "deselects tests",
    "--ignore": "ignores a path",
    "--ignore-glob": "ignores paths",
    "--co": "only collects",
    "--collect-only": "only collects",
    "--collectonly": "only collects",
    "--noconftest": "ignores conftest files",
    "--confcutdir": "stops loading conftest files",
    "-c": "switches the configuration file",
    "--config-file": "switches the configuration file",
    "--inifile": "switches the configuration file",
    "--rootdir": "moves the rootdir",
    "-x": "stops at the first failure",
    "--exitfirst": "stops at the first failure",
    "--maxfail": "stops after failures",
    "--lf": "runs only the last failures",
    "--last-failed": "runs only the last failures",
    "--sw": "runs stepwise",
    "--stepwise": "runs stepwise",
    "--sw-skip": "runs stepwise",
    "--stepwise-skip": "runs stepwise",
    "--continue-on-collection-errors": "runs despite collection errors",
    "<arg>": "narrows the run to a path",
}
#: ini keys an ``-o key=value`` in addopts may not override.
GUARDED_KEYS = frozenset(
    {
        "testpaths",
        "python_files",
        "python_classes",
        "python_functions",
        "norecursedirs",
        "filterwarnings",
        "addopts",
        "xfail_strict",
        "strict",
        "strict_xfail",
        "strict_markers",
        "strict_config",
        "strict_parametrization_ids",
        "usefixtures",
        "empty_parameter_set_mark",
        "collect_ignore",
        "collect_ignore_glob",
    }
)
#: Boolean strictness settings; each ``strict_*`` falls back to ``strict`` when unset.
STRICT_KEYS = ("strict_xfail", "strict_markers", "strict_config", "strict_parametrization_ids")
BOOL_ALIASES = {"xfail_strict": "strict_xfail"}


def classify(old: Settings | None, new: Settings | None) -> Classification:
    """Each setting that differs between the trusted ``old`` and the candidate's ``new``, classified.

    A file that does not parse, and a key the policy does not know, are ``unknown``.
    """
    before = dict(old.values) if old is not None else {}
    after = dict(new.values) if new is not None else {}
    if (old is not None and old.unparseable) or (new is not None and new.unparseable):
        if before == after:
            return Classification()
        return Classification((KeyChange(UNPARSEABLE, Change.UNKNOWN, "the file does not parse"),))
    changes = []
    bools = {"strict", *STRICT_KEYS, *BOOL_ALIASES}
    for key in sorted(set(before) | set(after)):
        if _normal(key, before.get(key)) == _normal(key, after.get(key)) or key in bools:
            continue
        changes.append(_classify_key(key, before.get(key), after.get(key)))
    changes += _classify_strictness(before, after)
    return Classification(tuple(sorted(changes, key=lambda c: c.key)))


#: Settings pytest reads as shell-like words, and as lines.
ARGS_KEYS = frozenset(
    {"addopts", "testpaths", "python_files", "python_classes", "python_functions", "norecursedirs", "usefixtures"}
    | {"required_plugins", "pythonpath", "doctest_glob"}
)
LINELIST_KEYS = frozenset({"filterwarnings", "markers"})


def _normal(key: str, value: object) -> object:
    """A setting's value as pytest reads it: the same in ini mode and in TOML (``"a b"`` is ``["a", "b"]``)."""
    if key in ARGS_KEYS:
        return _args(value)
    if key in LINELIST_KEYS:
        return _lines(value)
    if isinstance(value, list):
        return [str(v) for v in value]
    return None if value is None else " ".join(str(value).split())


def _classify_key(key: str, old: object, new: object) -> KeyChange:
    if key == "addopts":
        return _addopts(_args(old), _args(new))
    if key == "filterwarnings":
        return _filterwarnings(_lines(old), _lines(new))
    if key == "testpaths":
        was, now = _args(old), _args(new)
        gone = [p for p in was if p not in now]
        if gone:
            return KeyChange(key, Change.LOOSENED, "testpaths no longer lists %s" % ", ".join(gone))
        if now and not was:
            return KeyChange(key, Change.LOOSENED, "testpaths narrows collection to %s" % ", ".join(now))
        return KeyChange(key, Change.UNKNOWN, "testpaths changed")
    defaults = {
        "python_files": DEFAULT_PYTHON_FILES,
        "python_classes": DEFAULT_PYTHON_CLASSES,
        "python_functions": DEFAULT_PYTHON_FUNCTIONS,
    }
    if key in defaults:
        was, now = _args(old) or list(defaults[key]), _args(new) or list(defaults[key])
        gone = [p for p in was if p not in now]
        if gone:
            return KeyChange(key, Change.LOOSENED, "%s no longer matches %s" % (key, ", ".join(gone)))
        return KeyChange(key, Change.UNKNOWN, "%s changed" % key)
    if key == "norecursedirs":
        was, now = _args(old) or list(DEFAULT_NORECURSEDIRS), _args(new) or list(DEFAULT_NORECURSEDIRS)
        added = [p for p in now if p not in was]
        if added:
            return KeyChange(key, Change.LOOSENED, "norecursedirs skips %s" % ", ".join(added))
        return KeyChange(key, Change.UNKNOWN, "norecursedirs changed")
    if key in ("collect_ignore", "collect_ignore_glob"):
        return KeyChange(key, Change.LOOSENED, "%s hides files from collection" % key)
    if key == "minversion":
        try:
            raised = old is not None and new is not None and Version(str(new)) > Version(str(old))
            raised = raised or (old is None and new is not None and Version(str(new)) > Version("0"))
        except InvalidVersion:
            raised = False
        if raised:
            return KeyChange(key, Change.TIGHTENED, "minversion raised to %s" % new)
        return KeyChange(key, Change.UNKNOWN, "minversion changed")
    if key == "markers":
        was, now = _lines(old), _lines(new)
        if all(m in now for m in was) and len(now) > len(was):
            added = [m.split(":", 1)[0].strip() for m in now if m not in was]
            return KeyChange(key, Change.TIGHTENED, "markers registered: %s" % ", ".join(added))
        return KeyChange(key, Change.UNKNOWN, "markers changed")
    return KeyChange(key, Change.UNKNOWN, "%s changed" % key)


def _classify_strictness(before: Mapping[str, object], after: Mapping[str, object]) -> list[KeyChange]:
    """``strict`` and the ``strict_*`` booleans (``xfail_strict`` an alias), by their effect."""

    def same(key: str) -> bool:
        try:
            return _bool(before.get(key)) == _bool(after.get(key))
        except ValueError:
            return before.get(key) == after.get(key)

    keys = sorted(k for k in ("strict", *STRICT_KEYS, *BOOL_ALIASES) if not same(k))
    if not keys:
        return []
    try:
        was, now = _strictness(before), _strictness(after)
    except ValueError:
        return [KeyChange(k, Change.UNKNOWN, "%s is not a boolean" % k) for k in keys]
    weaker = [k for k in was if was[k] and not now[k]]
    stronger = [k for k in was if now[k] and not was[k]]
    shown = {k: "%s = %s" % (k, str(after[k]).lower()) if k in after else "%s removed" % k for k in keys}
    if weaker:
        return [KeyChange(k, Change.LOOSENED, "%s (%s off)" % (shown[k], ", ".join(weaker))) for k in keys]
    if stronger:
        return [KeyChange(k, Change.TIGHTENED, "%s (%s on)" % (shown[k], ", ".join(stronger))) for k in keys]
    return [KeyChange(k, Change.UNKNOWN, "%s (no effect)" % shown[k]) for k in keys]


def _strictness(values: Mapping[str, object]) -> dict[str, bool]:
    strict = _bool(values.get("strict"))
    found = {}
    for key in STRICT_KEYS:
        own = _bool(values.get(key))
        for alias, target in BOOL_ALIASES.items():
            if target == key and own is None:
                own = _bool(values.get(alias))
        found[key] = bool(own if own is not None else strict)
    return found


def _filterwarnings(was: list[str], now: list[str]) -> KeyChange:
    key = "filterwarnings"
    added = list((Counter(now) - Counter(was)).elements())
    removed = list((Counter(was) - Counter(now)).elements())
    loosened = [f for f in added if _action(f) == "ignore"] + [f for f in removed if _action(f) == "error"]
    if loosened:
        return KeyChange(key, Change.LOOSENED, "filterwarnings hides warnings: %s" % "; ".join(loosened))
    tightened = [f for f in added if _action(f) == "error"] + [f for f in removed if _action(f) == "ignore"]
    if tightened and len(tightened) == len(added) + len(removed):
        return KeyChange(key, Change.TIGHTENED, "filterwarnings stricter: %s" % "; ".join(tightened))
    return KeyChange(key, Change.UNKNOWN, "filterwarnings changed")


def _action(entry: str) -> str:
    return entry.split(":", 1)[0].strip().lower()


def options(words: Sequence[str]) -> list[tuple[str, str | None]]:
    """``addopts`` words as ``(option, value)`` items; a positional argument is ``("<arg>", word)``."""
    items: list[tuple[str, str | None]] = []
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if word.startswith("--"):
            name, eq, value = word.partition("=")
            if not eq and name in LONG_VALUE and i < len(words):
                value, i = words[i], i + 1
            items.append((name, value if (eq or name in LONG_VALUE) else None))
        elif word.startswith("-") and len(word) > 1:
            for j, letter in enumerate(word[1:], start=1):
                if letter in SHORT_VALUE:
                    rest = word[j + 1 :]
                    if not rest and i < len(words):
                        rest, i = words[i], i + 1
                    items.append(("-" + letter, rest))
                    break
                items.append(("-" + letter, None))
        else:
            items.append(("<arg>", word))
    return items


def _addopts(was: list[str], now: list[str]) -> KeyChange:
    key = "addopts"
    before, after = Counter(options(was)), Counter(options(now))
    added, removed = list((after - before).elements()), list((before - after).elements())
    loosened, tightened, unknown = [], [], []
    for name, value in added:
        shown = name if value is None else "%s %s" % (name, value)
        if name in STRICT_FLAGS or (name in ("-W", "--pythonwarnings") and _action(value or "") == "error"):
            tightened.append(shown)
        elif name in NARROWING:
            loosened.append("%s (%s)" % (shown, NARROWING[name]))
        elif name == "-p" and (value or "").startswith("no:"):
            loosened.append("%s (disables a plugin)" % shown)
        elif name in ("-W", "--pythonwarnings") and _action(value or "") == "ignore":
            loosened.append("%s (hides warnings)" % shown)
        elif name in ("-o", "--override-ini") and (value or "").partition("=")[0].strip() in GUARDED_KEYS:
            loosened.append("%s (overrides a protected setting)" % shown)
        else:
            unknown.append(shown)
    for name, value in removed:
        shown = name if value is None else "%s %s" % (name, value)
        if name in STRICT_FLAGS or (name in ("-W", "--pythonwarnings") and _action(value or "") == "error"):
            loosened.append("%s removed (less strict)" % shown)
        else:
            unknown.append("%s removed" % shown)
    if loosened:
        return KeyChange(key, Change.LOOSENED, "addopts adds %s" % ", ".join(loosened))
    if unknown or not tightened:
        return KeyChange(key, Change.UNKNOWN, "addopts changed: %s" % (", ".join(unknown) or "reordered"))
    return KeyChange(key, Change.TIGHTENED, "addopts adds %s" % ", ".join(tightened))


# -- laying back the pytest settings of a shared file ----------------------------------------------

_INI_HEADER = re.compile(r"\[(?P<name>[^\]]*)\]")
_TOML_HEADER = re.compile(r"\s*\[\[?(?P<name>[^\[\]]+)\]\]?\s*(#.*)?$")


def _lines_of(text: str) -> list[str]:
    """Lines with their endings, split where Python and the parsers split (not on form feeds)."""
    return io.StringIO(text, newline="").readlines()


def _toml_name(raw: str) -> tuple[str, ...]:
    return tuple(part.strip().strip("\"'") for part in raw.split("."))


def _section_ranges(name: str, lines: Sequence[str]) -> list[tuple[int, int]] | None:
    """``[start, end)`` line ranges of the pytest section(s) in a shared file; None: cannot tell."""
    ranges: list[tuple[int, int]] = []
    start: int | None = None
    for i, line in enumerate(lines):
        if name in TOML_TABLES:
            match = _TOML_HEADER.match(line)
            is_header = match is not None
            prefix = TOML_TABLES[name]
            ours = match is not None and _toml_name(match["name"])[: len(prefix)] == prefix
        else:
            match = _INI_HEADER.match(line)
            is_header = match is not None
            ours = match is not None and match["name"].strip() == INI_SECTIONS[name]
        if not is_header:
            continue
        if start is not None:
            ranges.append((start, i))
            start = None
        if ours:
            start = i
    if start is not None:
        ranges.append((start, len(lines)))
    return ranges


def _splice(name: str, candidate: str, trusted: str | None) -> str | None:
    c_lines = _lines_of(candidate)
    t_lines = _lines_of(trusted) if trusted is not None else []
    c_ranges = _section_ranges(name, c_lines)
    t_ranges = _section_ranges(name, t_lines)
    if c_ranges is None or t_ranges is None:
        return None
    section = [line for start, end in t_ranges for line in _ended(t_lines[start:end])]
    while section and not section[-1].strip():
        section.pop()
    keep = [(i, line) for i, line in enumerate(c_lines) if not any(s <= i < e for s, e in c_ranges)]
    at = c_ranges[0][0] if c_ranges else len(c_lines)
    before = [line for i, line in keep if i < at]
    after = [line for i, line in keep if i >= at]
    if section:
        if before and before[-1].strip():
            section.insert(0, "\n")
        if after:
            section.append("\n")
    return "".join(_ended(before) + section + after)


def _ended(lines: list[str]) -> list[str]:
    """``lines`` whose last one ends with a newline (a file may end without one)."""
    if lines and not lines[-1].endswith(("\n", "\r")):
        return [*lines[:-1], lines[-1] + "\n"]
    return lines


def _others(name: str, text: str) -> object:
    """Everything in a shared file but its pytest settings, to check a splice kept it."""
    if name in TOML_TABLES:
        doc = tomllib.loads(text)
        tool = doc.get("tool")
        if isinstance(tool, dict):
            tool.pop("pytest", None)
            if not tool:
                doc.pop("tool")
        return doc
    parser = _ini_parser()
    parser.read_string(text)
    return {s: dict(parser.items(s)) for s in parser.sections() if s != INI_SECTIONS[name]}


def lay_back(path: str, candidate: bytes | None, trusted: bytes | None) -> tuple[bytes | None, bool]:
    """The candidate's ``path`` with its pytest settings laid back to the trusted ones.

    Returns the contents (None: remove the file) and whether only the pytest settings were
    replaced. A dedicated file is all pytest settings: it is laid whole. In a shared file the
    pytest section is spliced line by line (``[tool.pytest.ini_options]``, ``[tool.pytest]`` and
    its subtables, ``[pytest]``, ``[tool:pytest]``) and the result checked: the same pytest
    settings as the trusted file, the same everything else as the candidate's. Where that cannot
    be done the whole trusted file is laid, and the second value is False.
    """
    name = posixpath.basename(path)
    if name in DEDICATED:
        return trusted, True
    if candidate is None:
        return trusted, False
    try:
        c_text = candidate.decode("utf-8")
        t_text = trusted.decode("utf-8") if trusted is not None else None
        spliced = _splice(name, c_text, t_text)
        if spliced is not None:
            same_settings = read(path, spliced.encode()) == read(path, trusted)
            if same_settings and _others(name, spliced) == _others(name, c_text):
                return spliced.encode(), True
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, configparser.Error):
        pass
    return trusted, False
