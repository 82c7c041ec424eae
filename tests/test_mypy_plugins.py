"""Which mypy plugins a candidate makes T2 load: the configuration read as mypy reads it.

Pure functions over file contents; the end-to-end threats are in ``test_attacks.py``.
"""

from __future__ import annotations

import pytest

from runner.diff import Diff, FileChange, FileKind
from runner.mypy_plugins import changed_plugins, named


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        ("mypy.ini", "[mypy]\nplugins = a.py, pkg.mod:entry ,\n", {"a.py", "pkg.mod"}),
        (".mypy.ini", "[mypy]\nplugins =\n    one,\n    two.py:make\n", {"one", "two.py"}),
        ("setup.cfg", "[metadata]\nname = x\n\n[mypy]\nplugins = sub/dir/p.py\n", {"sub/dir/p.py"}),
        ("setup.cfg", "[mypy-pkg.*]\nplugins = not_global.py\n", set()),  # global only, as mypy reads it
        ("pyproject.toml", "[tool.mypy]\nplugins = ['x.py', 'pydantic.mypy']\n", {"x.py", "pydantic.mypy"}),
        ("pyproject.toml", '[tool.mypy]\nplugins = "x.py, y"\n', {"x.py", "y"}),
        ("pyproject.toml", "[tool.mypy\nplugins = ['x.py']\n", set()),  # mypy cannot read it either
        ("mypy.ini", "plugins = x.py\n", set()),  # no section: configparser refuses, as mypy's does
    ],
)
def test_plugin_entries_are_read_as_mypy_reads_them(path: str, text: str, expected: set[str]) -> None:
    assert named(path, text.encode()) == expected


def _change(path: str, status: str = "M") -> FileChange:
    return FileChange(path, status, FileKind.SOURCE if path.endswith(".py") else FileKind.DATA)


def _scan(b: dict[str, str], c: dict[str, str], changes: list[FileChange]) -> list[tuple[str, str]]:
    return changed_plugins(Diff(tuple(changes)), list(b), lambda p: c[p].encode(), lambda p: b[p].encode())


def test_a_new_entry_is_found_and_one_moved_between_files_is_not() -> None:
    b = {"setup.cfg": "[mypy]\nplugins = own.py\n", "own.py": ""}
    moved = {"mypy.ini": "[mypy]\nplugins = own.py\n"}
    assert _scan(b, moved, [_change("mypy.ini", "A")]) == []
    added = {"mypy.ini": "[mypy]\nplugins = own.py, new.py\n"}
    found = _scan(b, added, [_change("mypy.ini", "A")])
    assert [config for config, _ in found] == ["mypy.ini"] and "'new.py'" in found[0][1]


def test_a_plugin_file_the_candidate_changed_is_found_through_an_unchanged_configuration() -> None:
    b = {"mypy.ini": "[mypy]\nplugins = tools/own.py:plugin\n", "tools/own.py": ""}
    found = _scan(b, {}, [_change("tools/own.py")])
    assert found == [("mypy.ini", "names the mypy plugin 'tools/own.py', which the candidate changed")]


def test_a_module_entry_and_unchanged_plugins_are_not_the_candidates() -> None:
    """A module name is found in the runner's environment, never the checkout: changing a file of
    that name loads nothing of the candidate's. Deleting the configuration names nothing."""
    b = {"pyproject.toml": "[tool.mypy]\nplugins = ['pkg.plug', 'own.py']\n"}
    assert _scan(b, {}, [_change("pkg/plug.py"), _change("other.py")]) == []
    assert _scan(b, {}, [_change("pyproject.toml", "D")]) == []
