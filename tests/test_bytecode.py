"""The bytecode kept between certifies (``pytest_evidence.bytecode``): kept only where it holds for
its source, handed on only to the same bytes, with the new checkout's path in its code, through
no symbolic link -- and read by CPython and by pytest as their own."""

from __future__ import annotations

import hashlib
import importlib.util
import marshal
import os
import pathlib
import py_compile
import shutil
import subprocess
import sys

import pytest

from pytest_evidence import bytecode

MODULE = "def area(w, h):\n    return w * h\n\n\nclass Box:\n    def size(self):\n        return area(2, 3)\n"


def _compiled(root: pathlib.Path, name: str, text: str) -> pathlib.Path:
    """``root/pkg/<name>.py`` with the ``.pyc`` an import writes."""
    source = root / "pkg" / (name + ".py")
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_text(text)
    pyc = importlib.util.cache_from_source(str(source))
    py_compile.compile(str(source), cfile=pyc, doraise=True, invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP)
    return source


def _copy_sources(b: pathlib.Path, c: pathlib.Path, imported: bool = True) -> None:
    """``b``'s sources in ``c``, no bytecode; ``imported``: each ``__pycache__`` there, empty, as
    after a session imported something in each directory (seeding makes none)."""
    shutil.copytree(b, c, ignore=shutil.ignore_patterns("*.pyc"))
    for cache in c.rglob("__pycache__"):
        if not imported:
            cache.rmdir()


def _filenames(code: object) -> set[str]:
    assert isinstance(code, type(_filenames.__code__))
    found = {code.co_filename}
    for const in code.co_consts:
        if isinstance(const, type(code)):
            found |= _filenames(const)
    return found


def test_what_b_compiled_goes_to_the_same_bytes_in_another_checkout(tmp_path: pathlib.Path) -> None:
    """Kept by the source's hash and the file's tag; written beside C's file with C's path in every
    code object, and loaded from there by a fresh interpreter."""
    b, c, cache = tmp_path / "b", tmp_path / "c", str(tmp_path / "cache")
    _compiled(b, "shapes", MODULE)
    _copy_sources(b, c)
    assert bytecode.harvest(str(b), cache) == 1
    assert bytecode.harvest(str(b), cache) == 0  # kept once
    assert bytecode.seed(cache, str(c)) == 1
    pyc = pathlib.Path(importlib.util.cache_from_source(str(c / "pkg" / "shapes.py")))
    data = pyc.read_bytes()
    source = c / "pkg" / "shapes.py"
    assert data[:4] == importlib.util.MAGIC_NUMBER and int.from_bytes(data[4:8], "little") == 0
    assert int.from_bytes(data[8:12], "little") == int(source.stat().st_mtime) & 0xFFFFFFFF
    assert int.from_bytes(data[12:16], "little") == source.stat().st_size
    assert _filenames(marshal.loads(data[16:])) == {str(source)}
    loaded = subprocess.run(
        [sys.executable, "-v", "-c", "import pkg.shapes as s; print(s.Box().size())"],
        cwd=c,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert loaded.stdout.strip() == "6"
    assert "code object from '%s'" % pyc in loaded.stderr  # read, not compiled again
    assert bytecode.seed(cache, str(c)) == 0  # one already there is left


def test_other_bytes_get_nothing(tmp_path: pathlib.Path) -> None:
    """A file C changed, by one character, is compiled by the session as before."""
    b, c, cache = tmp_path / "b", tmp_path / "c", str(tmp_path / "cache")
    _compiled(b, "shapes", MODULE)
    _copy_sources(b, c)
    (c / "pkg" / "shapes.py").write_text(MODULE.replace("2, 3", "2, 4"))
    bytecode.harvest(str(b), cache)
    assert bytecode.seed(cache, str(c)) == 0
    assert not list((c / "pkg" / "__pycache__").iterdir())


def test_no_pycache_directory_is_made(tmp_path: pathlib.Path) -> None:
    """A test listing a package's directory before anything there was imported would see a
    ``__pycache__`` on C that B's run had not (a review's probe, REJECTED warm and CERTIFIED
    cold): only a directory a session already compiled into gets bytecode."""
    b, c, cache = tmp_path / "b", tmp_path / "c", str(tmp_path / "cache")
    _compiled(b, "shapes", MODULE)
    _copy_sources(b, c, imported=False)
    bytecode.harvest(str(b), cache)
    assert bytecode.seed(cache, str(c)) == 0 and sorted(os.listdir(c / "pkg")) == ["shapes.py"]


@pytest.mark.parametrize("again", [MODULE + "\nEXTRA = 1\n", MODULE], ids=["another-size", "written-again"])
def test_a_pyc_that_may_not_hold_for_its_source_is_not_kept(tmp_path: pathlib.Path, again: str) -> None:
    """A source written after its ``.pyc`` leaves the ``.pyc`` stale -- and a test that edits a
    module and puts it back within a second, at the same size, leaves one whose time and size
    still match (a review's probe: every later certify ran the edited code). Only a ``.pyc``
    written after its source's last change is kept."""
    b, cache = tmp_path / "b", str(tmp_path / "cache")
    source = _compiled(b, "shapes", MODULE)
    source.write_text(again)
    assert bytecode.harvest(str(b), cache) == 0


def test_no_file_is_written_through_a_symbolic_link(tmp_path: pathlib.Path) -> None:
    """A ``__pycache__`` that is a link (a candidate can commit one) is not written through, and a
    module file that is a link is not read."""
    b, c, cache = tmp_path / "b", tmp_path / "c", str(tmp_path / "cache")
    _compiled(b, "shapes", MODULE)
    _copy_sources(b, c, imported=False)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (c / "pkg" / "__pycache__").symlink_to(elsewhere, target_is_directory=True)
    bytecode.harvest(str(b), cache)
    assert bytecode.seed(cache, str(c)) == 0 and not list(elsewhere.iterdir())
    (c / "pkg" / "__pycache__").unlink()
    (c / "pkg" / "__pycache__").mkdir()
    (c / "pkg" / "shapes.py").unlink()
    (c / "pkg" / "shapes.py").symlink_to(b / "pkg" / "shapes.py")
    assert bytecode.seed(cache, str(c)) == 0


def test_bytecode_of_another_interpreter_is_not_handed_on(tmp_path: pathlib.Path) -> None:
    """Entries lie under their interpreter's magic number: another version's are never read."""
    b, c, cache = tmp_path / "b", tmp_path / "c", tmp_path / "cache"
    _compiled(b, "shapes", MODULE)
    _copy_sources(b, c)
    bytecode.harvest(str(b), str(cache))
    (kept,) = cache.iterdir()
    kept.rename(cache / "0d0d0d0a")
    assert bytecode.seed(str(cache), str(c)) == 0


def test_pytest_reads_a_rewritten_test_module_handed_on(
    pytester: pytest.Pytester, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pytest's own ``.pyc`` of a rewritten test module (a timestamp one before pytest 9, a
    checked-hash one from 9 on): found cached in the other checkout, its failure located there --
    not in the checkout it was compiled in (pytest before 9 does not fix a moved file's path)."""
    failing = "def test_area():\n    got = 2 * 3\n    assert got == 7\n"
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)  # the sessions write, as the runner's do
    b = pytester.mkdir("b")
    (b / "test_area.py").write_text(failing)
    pytester.chdir()
    first = pytester.runpytest_subprocess(str(b), "-p", "no:cacheprovider")
    first.assert_outcomes(failed=1)
    cache, c = str(tmp_path / "cache"), pytester.path / "c"
    _copy_sources(b, c)
    assert bytecode.harvest(str(b), cache) == 1
    assert bytecode.seed(cache, str(c)) == 1
    shutil.rmtree(b)  # nothing may still point there
    monkeypatch.setenv("PYTEST_DEBUG", "1")
    second = pytester.runpytest_subprocess(str(c), "-p", "no:cacheprovider")
    second.assert_outcomes(failed=1)
    assert "found cached rewritten pyc for %s" % (c / "test_area.py") in second.stderr.str()
    assert "c/test_area.py:3: AssertionError" in second.stdout.str()
    assert "b/test_area.py" not in second.stdout.str()


def test_the_entries_used_least_lately_go_first_past_the_bound(tmp_path: pathlib.Path) -> None:
    """Every B adds the files it changed: past the bound, what no checkout used lately goes."""
    cache, entries = tmp_path / "cache", {}
    for age, name in enumerate(["old", "used", "new"]):
        source = _compiled(tmp_path / name, name, MODULE + "\nNAME = %r\n" % name)
        bytecode.harvest(str(tmp_path / name), str(cache))
        key = hashlib.sha256(source.read_bytes()).hexdigest()
        (entries[name],) = (cache / importlib.util.MAGIC_NUMBER.hex()).glob(key + ".*")
        os.utime(entries[name], (1000.0 + age, 1000.0 + age))
    _copy_sources(tmp_path / "used", tmp_path / "c")
    assert bytecode.seed(str(cache), str(tmp_path / "c")) == 1  # used now: the latest of the three
    kept = entries["used"].stat().st_size + entries["new"].stat().st_size
    bytecode.harvest(str(tmp_path / "new"), str(cache), limit=kept)
    assert {name for name, entry in entries.items() if entry.exists()} == {"used", "new"}


def test_a_rewritten_module_goes_only_to_a_checkout_with_the_same_pytest_settings(tmp_path: pathlib.Path) -> None:
    """pytest's rewritten code depends on its settings too (``enable_assertion_pass_hook``): its
    entries are kept under the source and the checkout's pytest settings; CPython's under the
    source alone."""
    b, c, cache = tmp_path / "b", tmp_path / "c", str(tmp_path / "cache")
    source = _compiled(b, "shapes", MODULE)
    pyc = pathlib.Path(importlib.util.cache_from_source(str(source)))
    shutil.copy(pyc, pyc.with_name(pyc.name.replace(".pyc", "-pytest-9.9.9.pyc")))  # as pytest names its own
    (b / "pytest.ini").write_text("[pytest]\n")
    _copy_sources(b, c)
    assert bytecode.harvest(str(b), cache) == 2
    (c / "pytest.ini").write_text("[pytest]\nenable_assertion_pass_hook = true\n")
    assert bytecode.seed(cache, str(c)) == 1
    assert [p.name for p in (c / "pkg" / "__pycache__").iterdir()] == [pyc.name]
