"""Pure logic of the referee: what counts as tampering, as interference, and how runs are pinned."""

from __future__ import annotations

import ast
import errno
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import replace
from types import SimpleNamespace
from typing import cast

import pytest
from conftest import GitRepo

import runner
from pytest_evidence.errors import BadInput
from pytest_evidence.model import Detection, DetectionKind, Tier, TierRecord, TierStatus, Verdict
from pytest_evidence.seedless_children import HASHSEED_NOT_INHERITED
from runner import config_policy, interference, netns, pyscan
from runner.diff import Diff, FileChange, FileKind
from runner.integrity import _own_modules, disabled_plugins, verify_test_integrity
from runner.interference import is_attack
from runner.sandbox import (
    GUARDS,
    SCRUBBED,
    WRITABLE,
    Guard,
    Sandbox,
    dies_with_parent,
    lockfile_digest,
    pin_environment,
    read_only_view,
    unpinned,
)
from runner.target import Target, plugin_root
from runner.verdict import decide

TESTS_B = """import pytest

from lib import f


@pytest.fixture
def value():
    return 2


def helper():
    return 1


def test_one(value):
    assert f(value) == 4
    assert f(0) == 0


def test_two():
    assert f(1) == 2
"""


def _details(repo: GitRepo, base: str, files: dict[str, str], expected: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    repo.git("checkout", "-q", base)
    cand = repo.commit("candidate", files)
    report = verify_test_integrity(str(repo.path), base, base, cand, ("test_*.py",), expected)
    return sorted((d.detail or "", d.path or "") for d in report.detections)


@pytest.fixture
def tests_repo(git_repo: GitRepo) -> tuple[GitRepo, str]:
    base = git_repo.commit(
        "B",
        {
            "lib.py": "def f(x):\n    return 2 * x\n",
            "tests/test_lib.py": TESTS_B,
            "tests/data/expected.txt": "4\n",
            "pyproject.toml": '[project]\nname = "x"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n',
        },
    )
    return git_repo, base


@pytest.mark.parametrize(
    ("edit", "detail"),
    [
        (TESTS_B.replace("def test_two():\n    assert f(1) == 2\n", ""), "deleted_test"),
        (TESTS_B.replace("    assert f(0) == 0\n", ""), "weakened_assertion"),
        (TESTS_B.replace("f(1) == 2", "f(1) == 2 or True"), "modified_test"),
        (TESTS_B.replace("def test_two", "@pytest.mark.xfail\ndef test_two"), "skip_marker"),
        (TESTS_B.replace("def test_two():\n", "def test_two():\n    pytest.skip('later')\n"), "skip_marker"),
        (TESTS_B + "\npytestmark = pytest.mark.skip\n", "skip_marker"),
        (TESTS_B.replace("return 2\n", "return 0\n"), "modified_fixture"),
        (TESTS_B.replace("return 1\n", "return 0\n"), "modified_helper"),
        (TESTS_B + "\n\ndef pytest_collection_modifyitems(items):\n    items.clear()\n", "hook"),
        (TESTS_B + "\nimport sys\nsys.modules['lib'] = None\n", "sys_modules"),
        (
            TESTS_B.replace("import pytest\n", "import pytest\nfrom unittest import TestCase as T\n", 1)
            + "\n\ndef test_three():\n    T.assertEqual = lambda *a: None\n",
            "patches_test_framework",
        ),
        (TESTS_B + "\npytest.approx = lambda expected, **kw: expected\n", "patches_pytest"),
    ],
)
def test_edits_of_an_existing_test_file_are_tamper(tests_repo: tuple[GitRepo, str], edit: str, detail: str) -> None:
    repo, base = tests_repo
    assert (detail, "tests/test_lib.py") in _details(repo, base, {"tests/test_lib.py": edit})


def test_new_tests_are_reproducers_not_tamper(tests_repo: tuple[GitRepo, str]) -> None:
    repo, base = tests_repo
    added = TESTS_B + "\n\ndef test_three():\n    assert f(2) == 4\n"
    assert _details(repo, base, {"tests/test_lib.py": added, "tests/test_new.py": "def test_new():\n    pass\n"}) == []


def test_a_declared_expected_change_may_edit_its_test(tests_repo: tuple[GitRepo, str]) -> None:
    repo, base = tests_repo
    edit = {"tests/test_lib.py": TESTS_B.replace("f(1) == 2", "f(1) == 3")}
    assert _details(repo, base, edit, ("tests/test_lib.py::test_two",)) == []
    assert _details(repo, base, edit) == [("modified_test", "tests/test_lib.py")]


@pytest.mark.parametrize(
    ("files", "detail"),
    [
        ({"tests/conftest.py": "import pytest\n"}, "new_conftest"),
        ({"tests/test_x.py": "import _pytest.runner\n\ndef test_x():\n    pass\n"}, "patches_pytest"),
        ({"tests/test_x.py": "pytest_plugins = ['evil']\n"}, "hook"),
        ({"tests/__init__.py": "import unittest\n\nunittest.TestCase.assertTrue = print\n"}, "patches_test_framework"),
        ({"tests/data/expected.txt": "5\n"}, "fixture_data"),
        (
            {"pyproject.toml": '[project]\nname = "x"\n\n[tool.pytest.ini_options]\naddopts = "-q -k not_one"\n'},
            "pytest_config",
        ),
        ({"pytest.ini": "[pytest]\ntestpaths = nowhere\n"}, "pytest_config"),
    ],
)
def test_referee_files_the_candidate_may_not_add_or_change(
    tests_repo: tuple[GitRepo, str], files: dict[str, str], detail: str
) -> None:
    repo, base = tests_repo
    assert detail in [d for d, _ in _details(repo, base, files)]


def test_non_pytest_parts_of_a_config_file_are_not_protected(tests_repo: tuple[GitRepo, str]) -> None:
    repo, base = tests_repo
    config = '[project]\nname = "x"\nversion = "2"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n'
    assert _details(repo, base, {"pyproject.toml": config}) == []


def test_pytest_settings_are_read_from_every_config_format() -> None:
    assert config_policy.read("setup.cfg", b"[tool:pytest]\naddopts = -x\n") == config_policy.Settings(
        {"addopts": "-x"}
    )
    assert config_policy.read("tox.ini", b"[tox]\nenvlist = py\n") is None
    toml = config_policy.read("pytest.toml", b'[pytest]\ntestpaths = ["t"]\n')
    assert toml is not None and dict(toml.values) == {"testpaths": ["t"]}
    unparseable = config_policy.read("pyproject.toml", b"[tool.pytest")
    assert unparseable is not None and unparseable.unparseable
    assert config_policy.addopts("setup.cfg", b"[tool:pytest]\naddopts = -x -p no:randomly\n") == [
        "-x",
        "-p",
        "no:randomly",
    ]


@pytest.mark.parametrize(
    ("source", "detail"),
    [
        ("import _pytest.main\n", "pytest_internals"),
        ("import pytest\n", "test_framework_import"),
        ("from unittest import mock\n", "test_framework_import"),
        ("import os\nos._exit(0)\n", "os_exit"),
        ("import sys\nsys.exit(1)\n", "exit_at_import"),
        ("import builtins\nbuiltins.len = lambda x: 0\n", "builtins_patch"),
        ("import unittest as _u\n_u.TestCase.assertEqual = lambda self, *a, **k: None\n", "patches_test_framework"),
        ("import asyncio as _a\n_a.Runner.run = lambda self, coro, **k: None\n", "patches_test_framework"),
    ],
)
def test_library_code_that_fights_the_referee_is_named(source: str, detail: str) -> None:
    tree = ast.parse(source)
    hits = list(pyscan.interference(tree, set(range(1, 10))))
    assert [h.detail for h in hits] == [detail]


@pytest.mark.parametrize(
    ("source", "written"),
    [
        ("from unittest import TestCase\nTestCase.assertEqual = None\n", "unittest.TestCase.assertEqual"),
        ("import unittest\nsetattr(unittest.TestCase, 'assertEqual', f)\n", "unittest.TestCase.assertEqual"),
        ("import unittest\nTC = unittest.TestCase\nT2 = TC\nT2.assertTrue = f\n", "unittest.TestCase.assertTrue"),
        ("import sys\nsys.modules['unittest'].TestCase.assertEqual = f\n", "unittest.TestCase.assertEqual"),
        ("import importlib\nimportlib.import_module('unittest').TestCase.run = f\n", "unittest.TestCase.run"),
        ("import unittest\nvars(unittest)['TestCase'] = X\n", "unittest.TestCase"),
        ("import unittest\ngetattr(unittest, 'TestCase').assertEqual = f\n", "unittest.TestCase.assertEqual"),
        ("import unittest\na, unittest.TestCase.assertIn = 1, f\n", "unittest.TestCase.assertIn"),
        (
            "def test_x(monkeypatch):\n    monkeypatch.setattr('unittest.TestCase.assertEqual', f)\n",
            "unittest.TestCase",
        ),
        ("from unittest import mock, TestCase\nmock.patch.object(TestCase, 'assertEqual', f).start()\n", "TestCase"),
        ("from unittest.mock import patch\npatch('unittest.TestCase.assertEqual').start()\n", "unittest.TestCase"),
        ("import doctest\ndoctest.OutputChecker.check_output = lambda *a: True\n", "doctest.OutputChecker"),
        ("import pytest\npytest.approx = lambda x, **k: x\n", "pytest.approx"),
        # an independent check's: the runner pytest-asyncio drives every async test through
        ("import asyncio as _a\n_a.Runner.run = swallowing\n", "asyncio.Runner.run"),
        # a review's: the loop pytest-asyncio makes is a subclass of the base event loop
        ("import asyncio\nasyncio.selector_events.BaseSelectorEventLoop.run_until_complete = f\n", "selector_events"),
        ("from asyncio import base_events\nbase_events.BaseEventLoop.run_until_complete = f\n", "asyncio.base_events"),
        ("import anyio._backends._asyncio as b\nb.TestRunner.run_test = f\n", "anyio._backends._asyncio.TestRunner"),
        # a review's probes: arguments by keyword, chained and unpacked aliases, a module's dict updated
        ("import unittest\nmp.setattr(target=unittest.TestCase, name='assertEqual', value=f)\n", "unittest.TestCase"),
        ("import unittest\nTC = X = unittest.TestCase\nX.assertEqual = f\n", "unittest.TestCase.assertEqual"),
        ("import unittest\nTC, _ = unittest.TestCase, 1\nTC.assertEqual = f\n", "unittest.TestCase.assertEqual"),
        ("import unittest.case\nvars(unittest.case).update(TestCase=F)\n", "unittest.case"),
        ("import doctest\ndoctest.__dict__.update(testmod=F)\n", "doctest"),
        ("from unittest import mock\nmock.Mock.assert_called_with = lambda *a, **k: None\n", "unittest.mock.Mock"),
        # what is not the framework's: its message settings, a test's own attribute, another module, a mock
        ("import unittest\nunittest.TestCase.maxDiff = None\nunittest.TestCase.longMessage = True\n", ""),
        ("import unittest\nclass T(unittest.TestCase):\n    def test(self):\n        self.assertEqual = f\n", ""),
        ("import os, lib\nos.environ['X'] = '1'\nlib.unittest = 3\n", ""),
        ("import asyncio\nasyncio.get_event_loop().slow_callback_duration = 1\n", ""),
        ("from unittest import mock\nm = mock.Mock()\nm.return_value = 3\nmock.sentinel.x\n", ""),
        # names that are no framework's: a parameter, a loop variable, a relative import; the diff length
        ("def render(doctest):\n    doctest.globs = {}\n", ""),
        ("def f(units):\n    for unittest in units:\n        unittest.done = True\n", ""),
        ("from . import unittest\nunittest.x = 1\n", ""),
        ("import unittest\nunittest.util._MAX_LENGTH = 2000\nunittest.y: int\n", ""),
    ],
)
def test_writes_onto_a_test_frameworks_objects_are_found_through_any_name(source: str, written: str) -> None:
    tree = ast.parse(source)
    hits = list(pyscan.framework_patches([tree], pyscan.framework_names(tree)))
    assert [h.detail for h in hits] == (
        [] if not written else ["patches_pytest" if "pytest" in written else "patches_test_framework"]
    )
    assert all(written in h.message for h in hits)


@pytest.mark.parametrize(
    ("source", "found"),
    [
        # undone when the test ends: the test that makes the patch is all it reaches
        ("from unittest import mock\n\n@mock.patch('pytest.main')\ndef test_cli(main):\n    run()\n", False),
        ("from unittest import mock\n\ndef test_cli():\n    with mock.patch('unittest.main'):\n        run()\n", False),
        ("import pytest\n\ndef test_x(monkeypatch):\n    monkeypatch.setattr(pytest, 'main', f)\n", False),
        ("import doctest\n\ndef test_x(mocker):\n    mocker.patch.object(doctest, 'testmod')\n", False),
        # in force past the test: started and never stopped, a MonkeyPatch of its own, an assignment
        (
            "from unittest import mock, TestCase\n\ndef test_x():\n    mock.patch.object(TestCase, 'run', f).start()\n",
            True,
        ),
        (
            "from unittest import mock\n\ndef test_x():\n    p = mock.patch('unittest.TestCase.run')\n    p.start()\n",
            True,
        ),
        ("import pytest, unittest\n\nmp = pytest.MonkeyPatch()\nmp.setattr(unittest.TestCase, 'run', f)\n", True),
        ("import unittest\n\ndef test_x():\n    unittest.TestCase.run = f\n", True),
        # the test class's own assertion written onto it; mock's objects in a test are the test's
        (
            "import unittest\n\nclass T(unittest.TestCase):\n    def setUp(self):\n        self.assertTrue = print\n",
            True,
        ),
        ("from unittest import mock\n\nwith mock.patch('a.b') as mock:\n    mock.get.return_value = 1\n", False),
    ],
)
def test_in_a_test_file_a_framework_patch_undone_with_its_test_is_no_finding(source: str, found: bool) -> None:
    tree = ast.parse(source)
    hits = list(pyscan.hostile(tree.body, top_level=True, aliases=pyscan.framework_names(tree)))
    assert bool(hits) is found, hits
    library = list(pyscan.framework_patches([tree], pyscan.framework_names(tree)))
    assert library or "self." in source or "mock.get" in source  # from library code, every one of a framework


def test_a_test_class_the_tests_had_gaining_its_own_assertion_is_tamper() -> None:
    """``def assertEqual(...)`` added to an existing base class of the tests, passing unless a
    flag the library sets says otherwise, was CERTIFIED with no fix (a review's probe). A custom
    assertion of the project's own (``assertValidJSON``) is no TestCase method."""
    tree = ast.parse(
        "import unittest\n\nclass Base(unittest.TestCase):\n"
        "    def assertEqual(self, a, b, msg=None):\n        pass\n\n"
        "    def assertValidJSON(self, text):\n        pass\n"
    )
    methods = tree.body[1].body  # type: ignore[attr-defined]
    hits = list(pyscan.hostile(methods, top_level=False, aliases=pyscan.framework_names(tree)))
    assert [(h.detail, h.line) for h in hits] == [("patches_test_framework", 4)]
    assert "assertEqual" in hits[0].message


def test_only_the_lines_the_candidate_wrote_are_scanned() -> None:
    tree = ast.parse("import pytest\nimport os\n")
    assert list(pyscan.interference(tree, {2})) == []
    assert not list(pyscan.interference(ast.parse("def stop():\n    import sys\n    sys.exit(0)\n"), {1, 2, 3}))
    main_guard = "import sys\n\nif __name__ == '__main__':\n    sys.exit(main())\n"
    assert not list(pyscan.interference(ast.parse(main_guard), {1, 2, 3, 4}))
    assert not list(
        pyscan.interference(
            ast.parse(main_guard.replace("__name__ == '__main__'", "'__main__' == __name__")), {1, 2, 3, 4}
        )
    )
    assert list(pyscan.interference(ast.parse(main_guard.replace("==", "!=")), {1, 2, 3, 4}))  # runs on import


def test_attacks_reject_and_tamper_rejects_even_when_every_tier_passed() -> None:
    passed = [TierRecord(Tier.T3, TierStatus.PASSED, 0.1, 1, 1, 1, "ok")]
    attack = Detection(DetectionKind.SOURCE_INTERFERENCE, "m", None, "a.py", 1, "os_exit")
    mere = Detection(DetectionKind.SOURCE_INTERFERENCE, "m", None, "a.py", 1, "test_framework_import")
    assert is_attack(attack) and not is_attack(mere)
    assert is_attack(Detection(DetectionKind.SOURCE_INTERFERENCE, "m", None, "a.py", 1, "patches_test_framework"))
    assert decide(passed, [], [attack]).verdict is Verdict.REJECTED
    assert decide(passed, [], [Detection(DetectionKind.TAMPER, "t")]).verdict is Verdict.REJECTED
    assert decide(passed, [], [Detection(DetectionKind.NETWORK_BLOCKED, "n")]).verdict is Verdict.INCONCLUSIVE


class _Installed:
    """A target with these distributions installed: with every guard installed, nothing is
    injected, and ``pin_environment`` asks it nothing more."""

    def __init__(self, versions: dict[str, str]) -> None:
        self.versions = versions

    def guard_versions(self) -> dict[str, str]:
        return dict(self.versions)

    def environment(self) -> SimpleNamespace:
        return SimpleNamespace(python="/nowhere/bin/python")

    def search_path(self) -> tuple[str, ...]:
        return ()

    executable = "/nowhere/bin/python"
    has_xdist = False


@pytest.mark.parametrize(
    ("hypothesis", "disabled", "seeded"),
    [("6.170.27", (), True), ("absent", (), False), ("6.170.27", ("hypothesispytest",), False)],
    ids=["installed", "absent", "switched-off-by-the-repository"],
)
def test_hypothesis_draws_the_same_examples_on_both_sides_where_the_target_has_it(
    tmp_path: pathlib.Path, hypothesis: str, disabled: tuple[str, ...], seeded: bool
) -> None:
    """Unseeded, Hypothesis drew other examples on B than on C and C's reruns replayed a failure
    from its example database: an honest fix REJECTED in two of five certifies (an independent
    check, hyperlink). ``--hypothesis-seed`` fixes the examples and leaves the database out;
    a target without Hypothesis has nothing to seed, and nothing is said missing."""
    versions = {"pytest-timeout": "2.3.1", "pytest-randomly": "3.16.0", "hypothesis": hypothesis}
    box = pin_environment(cast(Target, _Installed(versions)), seed=20261130, disabled=disabled)
    assert ("--hypothesis-seed=20261130" in box.pytest_args()) is seeded
    assert box.plugins.get("hypothesis") == ("installed 6.170.27" if seeded else None)
    assert "--randomly-seed=20261130" in box.pytest_args() and not box.injected
    assert not [m for m in box.missing if "property-based" in m]


@pytest.mark.parametrize("hides", [True, False], ids=["mount-namespace", "none"])
def test_the_store_is_hidden_from_test_processes_or_said_to_be_in_reach(
    monkeypatch: pytest.MonkeyPatch, hides: bool
) -> None:
    """An independent review forged B's stored suite run from a test process: where the machine
    allows a mount namespace, every test process sees the store's directory empty; where it
    does not, the record says the store is in reach -- never a silent gap."""
    monkeypatch.setattr(netns, "can_hide", lambda: hides)
    versions = {"pytest-timeout": "2.3.1", "pytest-randomly": "3.16.0"}
    box = pin_environment(cast(Target, _Installed(versions)), store="/repo/.git/evidence")
    assert box.hidden == (("/repo/.git/evidence",) if hides else ())
    said = [m for m in box.unmet if "evidence store" in m]
    assert box.to_dict()["missing"] == list(box.unmet)
    reach = "the evidence store's directory /repo/.git/evidence: test processes can reach it (no mount namespace)"
    assert said == ([] if hides else [reach])
    assert pin_environment(cast(Target, _Installed(versions))).hidden == ()


@pytest.mark.parametrize(
    ("hides", "store", "hidden", "kept"),
    [
        (True, "/repo/.git/evidence", ("/repo/.git/evidence",), True),
        (True, None, ("/repo/.git/evidence/bytecode",), True),
        (False, None, (), False),
    ],
    ids=["inside-the-default-stores-cover", "covered-on-its-own", "no-mount-namespace"],
)
def test_the_bytecode_kept_between_certifies_is_kept_only_where_no_test_can_reach_it(
    monkeypatch: pytest.MonkeyPatch, hides: bool, store: str | None, hidden: tuple[str, ...], kept: bool
) -> None:
    """A test that wrote an entry would choose the code later certifies run: the directory is
    covered in every test process -- by the default store's cover, or a cover of its own (a
    store named elsewhere is not covered) -- or the bytecode is not kept at all."""
    monkeypatch.setattr(netns, "can_hide", lambda: hides)
    versions = {"pytest-timeout": "2.3.1", "pytest-randomly": "3.16.0"}
    box = pin_environment(cast(Target, _Installed(versions)), store=store, bytecode="/repo/.git/evidence/bytecode")
    assert box.hidden == hidden
    assert box.bytecode == ("/repo/.git/evidence/bytecode" if kept else None)
    assert "bytecode" not in box.identity()  # B's stored run is the same run, kept or not


@pytest.mark.parametrize(
    ("xdist", "disabled", "serial"),
    [(True, (), True), (True, ("xdist",), False), (False, (), False)],
    ids=["xdist-loads", "repository-has-p-no-xdist", "no-xdist"],
)
def test_every_session_is_serial_where_xdist_loads(xdist: bool, disabled: tuple[str, ...], serial: bool) -> None:
    """A repository's ``addopts = -n auto`` must not distribute the runner's grouped sessions;
    ``-n 0`` where xdist is not loaded would be a usage error."""
    installed = _Installed({"pytest-timeout": "2.3.1", "pytest-randomly": "3.16.0"})
    installed.has_xdist = xdist
    box = pin_environment(cast(Target, installed), disabled=disabled)
    assert (box.pytest_args()[1:3] == ["-n", "0"]) is serial
    assert ("-n" in box.pytest_args()) is serial
    assert box.identity() == replace(box, serial=not serial).identity()  # B's stored run is the same run


@pytest.mark.parametrize(
    ("args", "refused"),
    [
        (("-n", "2"), "-n"),
        (("-n2",), "-n2"),
        (("-x", "--numprocesses=auto"), "--numprocesses=auto"),
        (("--dist", "loadfile"), "--dist"),
        (("-p", "no:xdist", "-x", "--no-header"), None),
    ],
)
def test_the_operators_pytest_arguments_may_not_distribute_the_session(
    tmp_path: pathlib.Path, args: tuple[str, ...], refused: str | None
) -> None:
    """Said before B's checkout is asked for (``where`` is not called) and before any tier."""
    target = Target(sys.executable, (), args)
    if refused is None:
        target.check_pytest_args(lambda: tmp_path)
        return
    with pytest.raises(BadInput, match="pytest argument %s: the runner chooses its own processes" % refused):
        target.check_pytest_args(lambda: pytest.fail("B's checkout asked for"))


class _Searched(_Installed):
    """A target whose import path and interpreter are these."""

    def __init__(self, path: tuple[str, ...], executable: str) -> None:
        super().__init__({"pytest-timeout": "2.3.1", "pytest-randomly": "3.16.0"})
        self.path, self.executable = path, executable

    def search_path(self) -> tuple[str, ...]:
        return self.path


def test_the_read_only_places_are_the_outermost_of_the_path_and_never_holds_where_tests_write(
    tmp_path: pathlib.Path,
) -> None:
    """A directory that holds the temporary directory (where each test process has its
    checkout, ``HOME`` and ``TMPDIR``) stays writable, or no test could run; of nested ones the
    outermost is bound, which carries the rest; what is not there is left out."""
    venv = tmp_path / "venv"
    site = venv / "lib" / "site-packages"
    site.mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (venv / "bin").mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    path = ("/", tempfile.gettempdir(), str(site), str(elsewhere / "missing"), str(elsewhere))
    found = read_only_view(cast(Target, _Searched(path, str(venv / "bin" / "python"))))
    assert str(venv) in found and str(elsewhere) in found  # the venv's root holds its site-packages
    assert not [p for p in found if p.startswith(str(venv) + os.sep)]
    assert "/" not in found and os.path.realpath(tempfile.gettempdir()) not in found
    own = os.path.dirname(os.path.dirname(os.path.abspath(runner.__file__)))
    assert [p for p in found if own == p or own.startswith(p + os.sep)]  # the runner's own packages


@pytest.mark.parametrize("protects", [True, False], ids=["mount-namespace", "none"])
def test_installed_code_is_read_only_in_test_processes_or_said_to_be_writable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path, protects: bool
) -> None:
    """A ``.pth`` file or a module a test planted in the target's or the runner's installed code
    ran in every later process of that interpreter, a later certify's included (reviews' probes,
    each a false CERTIFIED of a later candidate). Where the machine allows a mount namespace,
    they are read-only in every test process and no less writable here; where it does not, the
    record says they can be written. Comparable either way: B's stored run is the same run. No
    test process, root included, can take a binding or a cover (the store's) off: a review's
    probe unmounted the store's cover as root."""
    if protects and not netns.available():
        pytest.skip("no namespaces here")
    if not protects:
        monkeypatch.setattr(netns, "can_protect", lambda paths: False)
    target = Target(sys.executable, (), ())
    box = pin_environment(target)
    refused = "%s (the kernel refused to bind them read-only)" % WRITABLE
    assert [m for m in box.unmet if m.startswith(WRITABLE)] == ([] if protects else [refused])
    assert box.to_dict()["read_only"] == list(box.read_only)
    if not protects:
        assert box.read_only == ()
        return
    assert set(box.read_only) >= {plugin_root()} | set(read_only_view(target))
    probe = (
        "import ctypes, os, sys\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "for p in sys.argv[2:]:\n"
        "    print(p, bool(os.statvfs(p).f_flag & os.ST_RDONLY))\n"
        "for p in sys.argv[1:]:  # as root too: umount -l, mount -o remount,rw\n"
        "    print(libc.umount2(p.encode(), 2), libc.mount(None, p.encode(), None, 0x1020, None))\n"
        "try:\n"
        "    open(os.path.join(sys.argv[2], 'planted.pth'), 'w')\n"
        "except OSError as exc:\n"
        "    print(exc.errno)\n"
    )
    covered = replace(box, hidden=(str(tmp_path),))
    protected = (plugin_root(), *box.read_only)
    said = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path), *protected],
        preexec_fn=covered.preexec,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert said[: len(protected)] == ["%s True" % p for p in protected]
    assert said[len(protected) : -1] == ["-1 -1"] * (len(protected) + 1)  # no cover comes off
    assert said[-1] == str(errno.EROFS)
    assert not os.path.exists(os.path.join(plugin_root(), "planted.pth"))
    assert all(netns.writable_here(p) for p in box.read_only)  # the runner's own view is untouched
    unprotected = replace(box, read_only=(), writable="why")
    assert unprotected.identity() == box.identity()


def test_sandbox_environment_is_scrubbed_seeded_and_homeless(tmp_path: pathlib.Path) -> None:
    box = Sandbox(seed=2**32 + 7, test_timeout=60.0, tier_budget=None, network="socket_guard")
    shared = {"https_proxy": "http://p", "PYTEST_ADDOPTS": "-x", "PATH": "/bin", "HOME": "/root", "TMPDIR": "/tmp"}
    env = box.environ(shared, tmp_path)
    home, temporary = tmp_path / "home", tmp_path / "tmp"
    assert env == {"PATH": "/bin", "HOME": str(home), "TMPDIR": str(temporary), "PYTHONHASHSEED": "7"}
    assert home.is_dir() and temporary.is_dir()  # the process's own, made for it
    assert "https_proxy" in SCRUBBED
    said = subprocess.run(
        [sys.executable, "-c", "import os; print(os.readlink('/proc/self/ns/net'))"],
        preexec_fn=box.preexec,
        capture_output=True,
        text=True,
        check=True,
    )
    assert said.stdout.strip() == os.readlink("/proc/self/ns/net")  # no namespace to enter
    assert box.pytest_args() == ["--evidence-no-network"]  # no guard plugin loaded: nothing pretends to pin
    assert not box.test_timeout_held


def test_the_varied_sandbox_changes_the_referees_marks_and_nothing_else(tmp_path: pathlib.Path) -> None:
    """Another seed everywhere one is pinned (and not handed on to subprocesses), no parent-death
    signal asked of the kernel, the runner's temporary directory and no session of its own; the
    per-test timeout as it was."""
    timeout = Guard("pytest-timeout", "pytest_timeout", "timeout", "per-test timeout", GUARDS[0].args)
    randomly = Guard("pytest-randomly", "pytest_randomly", "randomly", "seeded", GUARDS[1].args)
    box = Sandbox(7, 60.0, 900.0, "socket_guard", loaded=(timeout, randomly))
    other = box.vary(12345)
    pinned = ["--evidence-no-network", "--timeout=60", "--timeout-method=signal", "--randomly-dont-reorganize"]
    assert box.pytest_args() == [*pinned[:3], "--randomly-seed=7", pinned[3]]
    assert other.pytest_args() == [*pinned[:3], "--randomly-seed=12345", pinned[3]]
    shared = {"TMPDIR": "/tmp"}
    varied, pinned_env = other.environ(shared, tmp_path / "v"), box.environ(shared, tmp_path / "p")
    assert (varied["PYTHONHASHSEED"], pinned_env["PYTHONHASHSEED"]) == ("12345", "7")
    # the runner's temporary directory, as a plain pytest has it; the plugin drops the seed for children
    assert (varied["TMPDIR"], pinned_env["TMPDIR"]) == ("/tmp", str(tmp_path / "p" / "tmp"))
    assert varied[HASHSEED_NOT_INHERITED] == "1" and HASHSEED_NOT_INHERITED not in pinned_env
    asked = (
        "import ctypes, os; s = ctypes.c_int(0); ctypes.CDLL(None).prctl(2, ctypes.byref(s)); "
        "print(s.value, os.getsid(0) == os.getpid(), os.getpgid(0) == os.getpid())"
    )
    said = [
        subprocess.run(
            [sys.executable, "-c", asked],
            preexec_fn=b.preexec,
            start_new_session=b.session_leader,
            capture_output=True,
            text=True,
        ).stdout
        for b in (box, other)
    ]
    # varied: no signal asked, and a process group of its own in the runner's session, as a shell's job
    assert said == ["%d True True\n" % signal.SIGKILL, "0 False True\n"]
    unpinned_box = unpinned(7, None)
    assert unpinned_box.vary(12345) == unpinned_box


def test_a_child_whose_starter_died_before_it_asked_to_die_with_it_ends_at_once(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``dies_with_parent`` is made in the process that starts the child. A child that finds
    another parent once it asked (the starter was killed between the fork and the ask, so the
    kernel will never signal it) ends before it runs anything; a child of its maker runs."""
    ran = tmp_path / "ran"
    cmd = [sys.executable, "-c", "open(%r, 'w').write('x')" % str(ran)]
    assert subprocess.run(cmd, preexec_fn=dies_with_parent(signal.SIGTERM)).returncode == 0 and ran.exists()
    ran.unlink()
    with monkeypatch.context() as m:
        m.setattr(os, "getpid", lambda: 1)  # made as if by another process: not this child's parent
        orphaned = dies_with_parent(signal.SIGTERM)
    assert subprocess.run(cmd, preexec_fn=orphaned).returncode == -signal.SIGKILL
    assert not ran.exists()


def test_lockfile_digest_follows_requirements_only(git_repo: GitRepo) -> None:
    one = git_repo.commit("1", {"requirements.txt": "a==1\n", "lib.py": "x = 1\n"})
    two = git_repo.commit("2", {"lib.py": "x = 2\n"})
    three = git_repo.commit("3", {"requirements.txt": "a==2\n"})
    digests = [lockfile_digest(str(git_repo.path), rev) for rev in (one, two, three)]
    assert digests[0] == digests[1] != digests[2]


def test_disabled_plugins_come_from_addopts_and_arguments(tmp_path: pathlib.Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -p no:randomly -pno:cacheprovider\n")
    assert disabled_plugins(tmp_path, ["-p", "no:timeout", "-p", "xdist"]) == {"randomly", "cacheprovider", "timeout"}


@pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("setpriv") or not os.access("/usr/bin/python3", os.X_OK),
    reason="needs root to switch to an unprivileged user, setpriv, and a system python3",
)
def test_network_namespace_as_an_unprivileged_user_keeps_the_uid() -> None:
    """Not root: a user namespace maps the user to itself; loopback works, the internet does not.

    The probe runs from a world-readable directory of its own: pytest's tmp_path is root-only.
    """
    where = pathlib.Path(tempfile.mkdtemp(prefix="evidence-netns-"))
    where.chmod(0o755)
    shutil.copy(netns.__file__, where / "netns.py")
    probe = (
        "import netns, subprocess, sys\n"
        'child = \'import os, socket; s = socket.socket(); print(os.getuid(), s.connect_ex(("192.0.2.1", 80)));'
        ' socket.socket().bind(("127.0.0.1", 0))\'\n'
        "print(netns.available(), subprocess.run([sys.executable, '-c', child], preexec_fn=netns.enter,"
        " capture_output=True, text=True).stdout.strip())\n"
    )
    try:
        proc = subprocess.run(
            ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", probe],
            cwd=where,
            capture_output=True,
            text=True,
        )
    finally:
        shutil.rmtree(where)
    assert proc.stdout.split() == ["True", "65534", str(errno.ENETUNREACH)], proc.stderr


def test_a_namespace_probe_answers_what_its_check_did_in_the_child() -> None:
    """The probes run their check between fork and exec, as every test process enters its
    namespaces: an exception there is a no, never a pass."""

    def refused() -> None:
        raise OSError("not permitted")

    assert netns._in_child(lambda: None) is True
    assert netns._in_child(refused) is False


def test_a_new_test_file_may_not_end_the_session(tests_repo: tuple[GitRepo, str]) -> None:
    repo, base = tests_repo
    files = {
        "tests/test_zz.py": "import os\n\nos._exit(0)\n",
        "tests/test_yy.py": "import pytest\npytest.exit('done')\n",
    }
    assert [d for d, _ in _details(repo, base, files)] == ["ends_session", "ends_session"]


def test_an_attack_is_the_first_reason_even_when_a_tier_failed_too() -> None:
    failed = [TierRecord(Tier.T4, TierStatus.FAILED, 0.1, 1, 1, 1, "regression: t")]
    verdict = decide(failed, [], [Detection(DetectionKind.TAMPER, "tests/t.py: skip added")])
    assert (verdict.verdict, verdict.halted_at) == (Verdict.REJECTED, Tier.T4)
    assert verdict.reasons == ("tamper: tests/t.py: skip added", "T4: regression: t")


def test_a_skip_on_a_test_only_the_trusted_source_has_is_tamper(git_repo: GitRepo) -> None:
    """xmltodict's shape: the release rewrote unittest methods as functions; the candidate skips one."""
    method = "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_root(self):\n        assert 1\n"
    base = git_repo.commit("B", {"tests/test_x.py": method})
    rewritten = "def test_root():\n    assert 1\n\n\ndef test_new():\n    assert 2\n"
    new_file = "def test_y():\n    assert 3\n"
    trusted = git_repo.commit("the release's tests", {"tests/test_x.py": rewritten, "tests/test_y.py": new_file})
    skipped = "import pytest\n\n\n" + rewritten.replace("def test_root", "@pytest.mark.skip\ndef test_root")
    own = "def test_y():\n    assert 3 == 3\n"  # the candidate's own test of the same name: not tamper
    y_skipped = "import pytest\n\n\n@pytest.mark.skipif(True, reason='x')\ndef test_y():\n    assert 3\n"
    for tests, details in (
        ({"tests/test_x.py": skipped, "tests/test_y.py": own}, ["skip_marker"]),
        ({"tests/test_x.py": rewritten, "tests/test_y.py": y_skipped}, ["skip_marker"]),
        ({"tests/test_x.py": rewritten, "tests/test_y.py": own}, []),
    ):
        git_repo.git("checkout", "-q", base)
        cand = git_repo.commit("candidate", tests)
        report = verify_test_integrity(str(git_repo.path), base, trusted, cand, ("test_*.py",))
        assert [d.detail for d in report.detections] == details, report.detections
        laid = {p for p, text in tests.items() if text not in (rewritten, new_file)}
        assert set(report.lay) == laid  # the trusted version runs wherever the candidate's differs


@pytest.mark.parametrize(
    ("path", "name", "kept"),
    [
        ("src/calc/ops.py", "calc.ops.Ops.half", True),
        ("src/calc/ops.py", "ops.Ops.half", True),  # imported by its basename (rootdir-relative, prepend)
        ("src/calc/ops.py", "calc.ops.double", True),
        ("src/calc/ops.py", "calc.ops", True),  # the module's own docstring: the module is there
        ("src/calc/ops.py", "calc.ops.gone", False),
        ("src/calc/ops.py", "calc.ops.Ops.gone", False),
        ("src/calc/ops.py", "calc.ops.half", False),  # a method's name at top level is not the method
        ("src/calc/__init__.py", "calc.double", True),
        ("src/calc/__init__.py", "calc.gone", False),
        ("src/calc/__init__.py", "calc", True),
        ("src/calc/ops.py", "other.double", False),
        ("src/calc/ops.py", "calc.ops.fast", True),  # defined in an ``except`` block
        ("src/calc/ops.py", "calc.ops.Ops.new", True),  # under ``if`` in a class
        ("src/calc/ops.py", "calc.ops.inner", False),  # a function's local is no attribute
        ("src/calc/ops.py", "calc.ops.__test__.odd", True),  # an entry of __test__: only ever a test
    ],
)
def test_a_doctest_is_kept_while_what_it_documents_is_defined(path: str, name: str, kept: bool) -> None:
    tree = ast.parse(
        "class Ops:\n    def half(self):\n        pass\n\n    if True:\n        def new(self):\n            pass\n\n\n"
        "def double():\n    def inner():\n        pass\n\n\ntry:\n    from _speedups import fast\n"
        "except ImportError:\n    def fast():\n        pass\n"
    )
    assert pyscan.doctest_owner(tree, path, name) is kept


@pytest.mark.parametrize(
    ("source", "line"),
    [
        ("from calc import ops\nops.double = lambda n: -1\n", 2),
        ("import calc.flags\ncalc.flags.ENABLED = False\n", 2),
        ("from calc import flags\ndel flags.ENABLED\n", 2),
        ("import calc.codecs as c\nc.CODECS['b'] = c.CODECS.pop('a')\n", 2),
        ("import calc.codecs as c\nc.CODECS.pop('a')\n", 2),
        ("from calc import ops\nsetattr(ops, 'double', None)\n", 2),
        ("from calc import ops\ntry:\n    ops.x = 1\nexcept Exception:\n    pass\n", 3),
        ("import os\nos.environ['X'] = '1'\n", None),  # not the project's
        ("from calc import registry\nregistry.add(1)\n", None),  # a module's own function, called
        ("from calc import ops\nx = ops.double\nops = None\n", None),  # rebinding names changes nothing
        ("from calc import ops\n\n\ndef f():\n    ops.double = 1\n", None),  # not at import
        ("from . import ops\nops.double = 1\n", None),  # a relative import: the tests' own package
    ],
)
def test_what_a_test_file_changes_of_the_code_under_test_at_import(source: str, line: int | None) -> None:
    tree = ast.parse(source)
    found = list(pyscan.patches_code_under_test(tree, tree.body, frozenset({"calc"})))
    assert [h.line for h in found] == ([] if line is None else [line])
    assert all(h.detail == "patches_code_under_test" for h in found)


def test_the_projects_own_modules_are_its_python_files_outside_the_tests() -> None:
    paths = ["src/calc/ops.py", "setup.py", "tests/test_x.py", "helper.py", "pkg/sub/m.py", "a/tests/t.py", "README"]
    assert _own_modules(paths) == {"calc", "setup", "helper", "pkg"}


def test_import_statements_are_found_wherever_they_stand_in_walk_order() -> None:
    """The import graph and the alias table read imports through ``import_statements``, which
    walks only what holds statements: every import of a function, a class, a branch, a
    handler, a ``with``, a loop and a match case is found, in ``ast.walk``'s order (a later
    binding of an alias wins in ``import_aliases``, as before)."""
    source = (
        "import a\n"
        "def f():\n    import b\n    def g():\n        from c import d\n"
        "class K:\n    import e\n"
        "if x:\n    import f1\nelse:\n    import f2\n"
        "try:\n    import g1\nexcept ImportError:\n    import g2\nfinally:\n    import g3\n"
        "with m:\n    import h\n"
        "for i in j:\n    import k\nelse:\n    import k2\n"
        "while w:\n    import l1\n"
        "match v:\n    case 1:\n        import m1\n"
        "y = lambda: __import__('not_a_statement')\n"
        "import a as z\n"
    )
    tree = ast.parse(source)
    walked = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    found = list(pyscan.import_statements(tree))
    assert found == walked
    assert len(found) == 15
    assert pyscan.import_aliases(tree)["z"] == "a" and pyscan.import_aliases(tree)["d"] == "c.d"


def test_a_pytest11_entry_point_added_to_metadata_in_the_checkout_is_an_attack() -> None:
    """``entry_points.txt`` is read as ``importlib.metadata`` reads it; only ``pytest11`` entries
    the candidate adds count, in any directory and any case of its name (a review's
    ``X.DIST-INFO``); a symbolic link that is such a file or a metadata directory counts whatever
    it points at (a review linked them to ``_meta/`` and ``../plugins.cfg``)."""
    assert interference.plugin_entries(
        b"# made by hand\n[console_scripts]\nrun = m:main\n\n[ pytest11 ]\n# note\nsw   =   _sw\n\n[other]\nx = y\n"
    ) == frozenset({"sw = _sw"})
    assert interference.plugin_entries(b"[pytest11]\n;hidden = _x\n") == frozenset({";hidden = _x"})  # a review's
    b_text = b"[pytest11]\nown = pkg.plugin\n"
    files = {
        "pkg.egg-info/entry_points.txt": b"[pytest11]\nown = pkg.plugin\nsneak = _sneak\n",  # one added to B's
        "lib/other-1.0.dist-info/entry_points.txt": b"[pytest11]\nown = pkg.plugin\n",  # as B had it
        "new-2.0.dist-info/entry_points.txt": b"[console_scripts]\nrun = m:main\n",  # no plugin
        "X-1.0.DIST-INFO/entry_points.txt": b"[pytest11]\ny = z\n",
        "_meta/entry_points.txt": b"[pytest11]\ny = z\n",  # the target of a linked directory
        "linked-1.0.dist-info": b"_meta",  # a symbolic link: its blob is the target
        "plain-1.0.dist-info/entry_points.txt": b"../plugins.cfg",  # a linked file
        "docs/entry_points.md": b"[pytest11]\ny = z\n",  # another name: not read for plugins
    }
    links = {"linked-1.0.dist-info", "plain-1.0.dist-info/entry_points.txt"}
    statuses = {"pkg.egg-info/entry_points.txt": "M", "lib/other-1.0.dist-info/entry_points.txt": "M"}
    diff = Diff(tuple(FileChange(p, statuses.get(p, "A"), FileKind.DATA) for p in files))
    found = interference.scan(files.__getitem__, diff, [], lambda _p: b_text, links)
    assert [(d.path, d.detail) for d in found] == [
        ("pkg.egg-info/entry_points.txt", "plugin_entry_point"),
        ("X-1.0.DIST-INFO/entry_points.txt", "plugin_entry_point"),
        ("_meta/entry_points.txt", "plugin_entry_point"),
        ("linked-1.0.dist-info", "plugin_entry_point"),
        ("plain-1.0.dist-info/entry_points.txt", "plugin_entry_point"),
    ]
    assert "registers the pytest plugin sneak = _sneak" in found[0].message and all(is_attack(d) for d in found)


#: A test process's stand-in: it starts a grandchild out of its process group, which writes its
#: pid and sleeps; the grandchild keeps the test process's stderr (``holds``) or lets it go.
DETACHES = """import os, subprocess, sys
sleeper = "import os, sys, time\\nprint(os.getpid(), flush=True)\\n%s\\ntime.sleep(600)"
nested = "import ctypes\\nassert ctypes.CDLL(None).unshare(0x10000000) == 0" if sys.argv[2] == "nested" else ""
err = None if sys.argv[1] == "holds" else subprocess.DEVNULL
child = subprocess.Popen([sys.executable, "-c", sleeper % nested], start_new_session=True,
                         stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL, text=True)
print(child.stdout.readline().strip(), flush=True)
"""


def _alive(pid: int) -> bool:
    return os.path.exists("/proc/%d" % pid) and not netns._zombie(pid)


@pytest.mark.timeout(120)  # without ``end_left``, the read waits for the sleeper's 600 s
@pytest.mark.parametrize("mounts", [False, True], ids=["network", "mounts"])
@pytest.mark.parametrize("nested", ["flat", "nested"])
def test_what_a_test_process_detached_ends_when_it_ends(mounts: bool, nested: str, tmp_path: pathlib.Path) -> None:
    """A process a test started with ``start_new_session`` is out of the test process's group,
    which a kill takes; it is in the namespace the test process entered, or a user namespace
    made inside it, and ``end_left`` finds it there. It holds the stderr the runner reads, so
    ``Confined.read`` ends it too, rather than waiting for it (600 s here)."""
    if not netns.available() or (mounts and not netns.can_hide()):
        pytest.skip("no network namespace here (or no mount namespace)")
    hidden = [os.fsencode(tmp_path)] if mounts else []

    def enter() -> None:
        netns.enter(hidden)

    proc = subprocess.Popen(
        [sys.executable, "-c", DETACHES, "holds", nested],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=enter,
    )
    confined = netns.Confined(proc, proc.kill, namespaced=True)
    assert confined.namespace is not None
    assert confined.namespace[0] == ("user" if mounts or os.geteuid() else "net")
    try:
        out, _err, exhausted = confined.read(120)
        grandchild = int(out.split()[0])
        assert not exhausted and proc.returncode == 0
        assert not _alive(grandchild)
    finally:
        confined.stop()


@pytest.mark.timeout(120)
def test_a_confined_process_that_outruns_its_budget_is_stopped_with_what_it_left() -> None:
    """Past its budget the process is killed (its own kill) and so is what it detached; what it
    wrote until then is read, and the read says it was exhausted."""
    if not netns.available():
        pytest.skip("no network namespace here")
    hangs = DETACHES + "import time\ntime.sleep(600)\n"
    proc = subprocess.Popen(
        [sys.executable, "-c", hangs, "lets-go", "flat"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=netns.enter,
    )
    confined = netns.Confined(proc, proc.kill, namespaced=True)
    try:
        out, _err, exhausted = confined.read(1)
        assert exhausted and proc.returncode == -signal.SIGKILL
        assert not _alive(int(out.split()[0]))
    finally:
        confined.stop()


def test_end_left_kills_nothing_outside_the_namespace() -> None:
    """Processes in other namespaces -- another test process's, the runner's own -- are left be."""
    if not netns.available():
        pytest.skip("no network namespace here")
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], preexec_fn=netns.enter)
    mine = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        ended = subprocess.Popen([sys.executable, "-c", ""], preexec_fn=netns.enter)
        namespace = netns.entered(ended.pid)
        ended.wait()
        assert namespace is not None and netns.end_left(namespace) == 0
        assert other.poll() is None and mine.poll() is None
        assert netns.end_left(netns.entered(other.pid)) == 1 and other.wait() == -signal.SIGKILL
    finally:
        for proc in (other, mine):
            proc.kill()
            proc.wait()
