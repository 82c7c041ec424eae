"""Pure logic of the runner: change attribution, the import graph, T6's scope, the verdict rules.

T4 and T5 selection: ``test_selection.py``.
"""

from __future__ import annotations

import pathlib
import sys
import tempfile
from importlib.util import cache_from_source

import pytest

from pytest_evidence import syntax
from pytest_evidence.model import (
    Detection,
    DetectionKind,
    Outcome,
    Role,
    Tier,
    TierRecord,
    TierStatus,
    ValidationResult,
    Verdict,
)
from runner import target as target_module
from runner.diff import Diff, FileChange, FileKind, _hunk_lines, attribute, definitions, insertions_held, kind_of
from runner.importgraph import ImportGraph, module_of
from runner.selection import integration_tests
from runner.target import Target
from runner.verdict import decide

SOURCE = """import os

LIMIT = 10


@decorator
def first(x):
    return x


class Box:
    size = 3

    def grow(self):
        return self.size + 1
"""


def test_definitions_include_decorators_and_nesting() -> None:
    spans = {s.qualname: (s.start, s.end) for s in definitions(SOURCE)}
    assert spans == {"first": (6, 8), "Box": (11, 15), "Box.grow": (14, 15)}


@pytest.mark.parametrize(
    ("lines", "names", "module_level"),
    [
        ({8}, ["first"], False),
        ({15}, ["Box.grow"], False),
        ({12}, ["Box"], False),
        ({3}, [], True),
        ({3, 15}, ["Box.grow"], True),
    ],
)
def test_changed_lines_go_to_the_innermost_definition(lines: set[int], names: list[str], module_level: bool) -> None:
    spans, module = attribute(lines, definitions(SOURCE))
    assert [s.qualname for s in spans] == names and module is module_level


@pytest.mark.parametrize(
    ("patch", "c_source", "lines", "held"),
    [
        # two lines appended to Box.grow (after B's line 15): Box.grow, not Box or the module
        ("@@ -15,0 +16,2 @@\n", SOURCE + "        # more\n        return 4\n", set(), ["Box.grow"]),
        # a class attribute after the method, at the class's level: the class
        ("@@ -15,0 +16,2 @@\n", SOURCE + "\n    depth = 2\n", set(), ["Box"]),
        # a new function at module level: the neighbours
        (
            "@@ -8,0 +9,3 @@\n",
            SOURCE.replace("    return x\n", "    return x\n\n\ndef added():\n    pass\n", 1),
            {8, 9},
            [],
        ),
        # a decorator inserted above a method is no line of its body: the class's body holds it
        ("@@ -13,0 +14 @@\n", SOURCE.replace("    def grow", "    @staticmethod\n    def grow"), set(), ["Box"]),
        # lines replaced: B's own lines
        ("@@ -15 +15 @@\n", SOURCE.replace("+ 1", "+ 2"), {15}, []),
        # a whole new helper before a class (mistune's fix, an independent check): Box did not change
        ("@@ -10,0 +11,4 @@\n", SOURCE.replace("class Box:", "def added():\n    pass\n\n\nclass Box:"), set(), []),
        (
            "@@ -10,0 +11,5 @@\n",
            SOURCE.replace("class Box:", "@cache\ndef added():\n    pass\n\n\nclass Box:"),
            set(),
            [],
        ),
        # beside a statement of the module, or named like one of B's definitions: the neighbours
        (
            "@@ -10,0 +11,5 @@\n",
            SOURCE.replace("class Box:", "X = 1\ndef added():\n    pass\n\n\nclass Box:"),
            {10, 11},
            [],
        ),
        ("@@ -10,0 +11,4 @@\n", SOURCE.replace("class Box:", "def first():\n    pass\n\n\nclass Box:"), {10, 11}, []),
    ],
    ids=[
        "appended-to-a-method",
        "class-attribute",
        "new-function",
        "decorator",
        "replaced",
        "new-helper",
        "new-decorated-helper",
        "beside-a-statement",
        "redefinition",
    ],
)
def test_a_pure_insertion_in_a_body_is_that_definitions_change(
    patch: str, c_source: str, lines: set[int], held: list[str]
) -> None:
    """Lines inserted into the body of a definition B has too change that definition only: the
    B lines around the insertion (a blank line of the class, the next method) stood for it, and
    made humanfriendly's whole test class changed for one appended assertion."""
    touched, spans = insertions_held(patch, definitions(SOURCE), syntax.parse(c_source))
    assert (touched, [s.qualname for s in spans]) == (lines, held)


def test_hunk_header_lines_both_sides() -> None:
    old, new = _hunk_lines("@@ -3,2 +3,0 @@\n@@ -9 +8,3 @@\n")
    assert old == {3, 4, 9} and new == {3, 4, 8, 9, 10}
    assert _hunk_lines("@@ -3,2 +3,0 @@\n@@ -9 +8,3 @@\n", neighbours=False) == ({3, 4, 9}, {8, 9, 10})


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("pkg/mod.py", FileKind.SOURCE),
        ("tests/test_mod.py", FileKind.TEST),
        ("tests/conftest.py", FileKind.CONFIG),
        ("pyproject.toml", FileKind.CONFIG),
        ("requirements-dev.txt", FileKind.MANIFEST),
        ("pkg/data.csv", FileKind.DATA),
        ("tests/data/input.json", FileKind.TEST),
    ],
)
def test_file_kinds(path: str, kind: FileKind) -> None:
    assert kind_of(path, ("test_*.py",)) is kind


def test_module_names_prefer_the_deeper_root() -> None:
    assert module_of("src/pkg/mod.py", ["", "src"]) == "pkg.mod"
    assert module_of("pkg/__init__.py", [""]) == "pkg"
    assert module_of("scripts/run-me.py", [""]) is None


def _tree(root: pathlib.Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_import_graph_is_transitive_and_counts_parent_packages(tmp_path: pathlib.Path) -> None:
    _tree(
        tmp_path,
        {
            "pkg/__init__.py": "from . import util\n",
            "pkg/util.py": "",
            "pkg/core.py": "from .helpers import thing\n",
            "pkg/helpers.py": "import json\n",
            "pkg/other.py": "",
            "tests/test_core.py": "def test():\n    from pkg.core import thing\n",
        },
    )
    graph = ImportGraph(tmp_path, [""])
    assert graph.closure(["tests/test_core.py"]) == {
        "tests/test_core.py",
        "pkg/core.py",
        "pkg/helpers.py",
        "pkg/__init__.py",
        "pkg/util.py",
    }


def test_integration_tests_are_scoped_to_touched_packages(tmp_path: pathlib.Path) -> None:
    _tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "",
            "other/__init__.py": "",
            "tests/integration/test_pkg.py": "import pkg\n",
            "tests/integration/test_other.py": "import other\n",
        },
    )
    diff = Diff((FileChange("pkg/a.py", "M", FileKind.SOURCE),))
    ids = ["tests/integration/test_pkg.py::t", "tests/integration/test_other.py::t", "tests/test_unit.py::t"]
    chosen = integration_tests(ids, {}, "integration", ("*integration*",), diff, ImportGraph(tmp_path, [""]), [""])
    assert chosen == ["tests/integration/test_pkg.py::t"]


def _tier(tier: Tier, status: TierStatus) -> TierRecord:
    return TierRecord(tier, status, 0.0, 0, 0, None, "note %s" % tier.value)


def _result(bug: bool) -> ValidationResult:
    return ValidationResult(
        "t",
        Role.BUG_REPRODUCTION,
        "c",
        Outcome.FAIL if bug else Outcome.PASS,
        Outcome.PASS,
        0.0,
        0,
        (),
        True,
        bug,
        "",
        None,
    )


def test_verdict_rules() -> None:
    passed = [_tier(t, TierStatus.PASSED) for t in Tier]
    assert decide(passed, [_result(True)], []).verdict is Verdict.CERTIFIED
    assert decide(passed, [_result(False)], []).verdict is Verdict.INCONCLUSIVE
    drift = Detection(DetectionKind.ENVIRONMENT_DRIFT, "x")
    assert decide(passed, [_result(True)], [drift]).verdict is Verdict.INCONCLUSIVE
    failed = [*passed[:3], _tier(Tier.T3, TierStatus.INCONCLUSIVE), _tier(Tier.T4, TierStatus.FAILED)]
    got = decide(failed, [_result(True)], [])
    assert (got.verdict, got.halted_at) == (Verdict.REJECTED, Tier.T4)


def _bytecode_missing(root: pathlib.Path) -> list[str]:
    """The modules under ``root`` with no bytecode for this interpreter next to them."""
    return sorted(
        str(p.relative_to(root)) for p in root.rglob("*.py") if not pathlib.Path(cache_from_source(str(p))).is_file()
    )


def _fake_guards(monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path, guards: dict[str, str]) -> pathlib.Path:
    """A fresh private copy of the plugin, and in place of the runner's guard copies one module
    per distribution named (``distribution -> module source``): ``pytest-timeout``, which this
    interpreter has, stands for a guard the target has installed."""
    monkeypatch.setattr(target_module, "_INJECTED", [])  # a fresh private copy, never imported
    monkeypatch.setattr(target_module, "_GUARD_COPIES", {})
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    modules = {d: d.replace("-", "_") for d in guards}
    monkeypatch.setattr(target_module, "GUARD_MODULES", modules)
    root = pathlib.Path(target_module.plugin_root())
    for distribution, source in guards.items():
        where = root / "guard-copies" / distribution
        (where / "pkg").mkdir(parents=True)
        (where / (modules[distribution] + ".py")).write_text(source)
        (where / "pkg" / "__init__.py").write_text("")
        (where / "pkg" / "unused.py").write_text("X = 1\n")
        target_module._GUARD_COPIES[distribution] = str(where)
    return root


def test_the_probe_tries_the_guard_copies_the_target_lacks_and_names_each_refusal(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The probe that meets an interpreter first also tries the runner's copy of each guard the
    target lacks, in the same start: a copy that does not import there is named with the
    target's own error, one that imports is not, and a guard the target has is not tried (its
    copy, which would fail, says nothing)."""
    _fake_guards(
        monkeypatch,
        tmp_path,
        {
            "guard-ok": "",
            "guard-bad": "raise ImportError('needs a newer\\npytest')\n",
            "pytest-timeout": "raise ImportError('never tried')\n",
        },
    )
    probed = Target(sys.executable, ("",), ())._probe()  # the out-of-process probe, as for a foreign interpreter
    assert probed.refused == {"guard_bad": "ImportError: needs a newer pytest"}
    assert probed.guards["pytest-timeout"] != "absent"


def test_the_probe_byte_compiles_the_plugins_private_copy_and_the_guard_copies(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A certify starts a dozen target processes, the first ones with ``PYTHONDONTWRITEBYTECODE``:
    the probe, which meets each interpreter first, compiles every module of the plugin's copy
    and of the guard copies for it, even one no test process imports."""
    root = _fake_guards(monkeypatch, tmp_path, {"guard-ok": ""})
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    Target(sys.executable, ("",), ())._probe()
    assert root.parent == tmp_path
    found = {str(p.relative_to(root)) for p in root.rglob("*.py")}
    assert {"pytest_evidence/plugin.py", "guard-copies/guard-ok/pkg/unused.py"} <= found
    assert _bytecode_missing(root) == []


@pytest.mark.parametrize(
    ("stderr", "said"),
    [
        (  # a repository's addopts the runner's own options make a usage error (a review's async-lru)
            "ERROR: usage: -c [options] [file_or_dir] [file_or_dir] [...]\n"
            "-c: error: unrecognized arguments: --cache-clear\n  inifile: /r/pyproject.toml\n  rootdir: /r\n",
            "unrecognized arguments: --cache-clear",
        ),
        (
            "ImportError while loading conftest '/r/conftest.py'.\nE   ModuleNotFoundError: No module named 'x'\n",
            "ModuleNotFoundError: No module named 'x'",
        ),
        ("Killed\n", "Killed"),
    ],
)
def test_what_pytest_said_is_its_own_complaint_not_its_usage_banner(stderr: str, said: str) -> None:
    from pytest_evidence.stream import StreamContent
    from runner.pytest_run import PytestRun

    assert PytestRun(StreamContent(), 4, 0.1, stderr, False, ()).said.endswith(said)
