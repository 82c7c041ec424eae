"""Compiled modules kept between certifies: what B's suite run compiled, handed to later checkouts.

Every certify checks C out afresh, and a fresh worktree has no bytecode: C's suite session
compiled every module it imported, and pytest rewrote every test module again -- 1.2 s of a
generated 2,000-test suite's 2.2 s first run, 1.6 s of click's 6 s -- while the plain run the
referee is measured against reads its cache. Most of those files are B's, unchanged.

``harvest`` keeps, after B's suite run, each module that run compiled (CPython's ``.pyc`` and
pytest's rewritten ``-pytest-X.pyc``, valid for its source), keyed by the SHA-256 of the source's
bytes and the file's tag; ``seed`` writes into another checkout a ``.pyc`` for every file whose
bytes hash to a kept entry, with that checkout's path in its code (``co_filename``: pytest does
not fix it when it reads its own ``.pyc``, and tracebacks, assertion messages and the dependency
record read it) and a header naming the file's own size and time. The code is the same code:
the bytes it was compiled from are the same bytes.

Only what B's own suite run compiled is kept -- no candidate code runs in B's checkout -- and the
directory is covered in every test process (``runner.sandbox``): a test cannot write an entry.
Both run in the target interpreter (``main``: its marshal format and its hash of a source),
started isolated (``-I -S``: no ``.pth`` file a test could have planted runs beside the
directory) on the runner's own text of this module, not the plugin's private copy on every test
process's path (the runner's install is no more out of a test's reach than anything its user
can write: ``referee.md``); ``seed`` writes no file through a symbolic link and makes no
directory.

PYTEST_DONT_REWRITE: see ``pytest_evidence/__init__.py``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import marshal
import os
import struct
import sys
import types
from typing import Dict, Iterator, List, Optional, Tuple

#: A ``.pyc``'s header: magic number, flags (0: checked by the source's time and size), time, size.
HEADER = 16
#: Directories no module of the checkout's own lies in.
_SKIPPED = frozenset({".git", "__pycache__", ".tox", ".nox", ".venv", "venv", "node_modules", ".hg", ".mypy_cache"})


#: Bytes of kept code per interpreter, past which the entries used least lately go (``_bounded``):
#: every B a repository is certified against adds the files it changed.
KEPT_BYTES = 256 * 1024 * 1024


def harvest(checkout: str, cache: str, limit: int = KEPT_BYTES) -> int:
    """Keep in ``cache`` every ``.pyc`` under ``checkout`` whose header holds for its source as
    it is now (its time and size, or its hash: pytest 9 writes checked-hash files); the number
    newly kept. Each entry is the header and the code, named by the source's SHA-256 and the tag."""
    kept, settings = 0, _settings(checkout)
    for directory, source, pyc, tag in _compiled(checkout):
        path = os.path.join(os.path.dirname(directory), source)
        try:
            with open(os.path.join(directory, pyc), "rb") as fh:
                data = fh.read()
                written = os.fstat(fh.fileno()).st_mtime_ns
            with open(path, "rb") as fh:
                text = fh.read()
            changed = os.stat(path).st_mtime_ns
        except OSError:
            continue
        # A header of time and size holds for a text written again in the same second at the same
        # size (a test that edits a module and puts it back): only a .pyc written after its
        # source's last change is this text's.
        ours = data[:4] == importlib.util.MAGIC_NUMBER and (data[4:8] != b"\0\0\0\0" or changed <= written)
        if len(data) > HEADER and ours and data[4:HEADER] == _checks(data, text, changed // 10**9):
            entry = os.path.join(cache, data[:4].hex(), "%s.%s" % (_key(text, tag, settings), tag))
            if not os.path.exists(entry):
                _write(entry, data)
                kept += 1
    _bounded(os.path.join(cache, importlib.util.MAGIC_NUMBER.hex()), limit)
    return kept


def seed(cache: str, checkout: str) -> int:
    """Write into ``checkout`` the kept ``.pyc`` of each of its Python files whose bytes hash to
    an entry of ``cache`` for this interpreter; one already there is left. The number written."""
    where = os.path.join(cache, importlib.util.MAGIC_NUMBER.hex())
    kept: Dict[str, List[str]] = {}
    try:
        names = os.listdir(where)
    except OSError:
        return 0
    for name in names:
        key, _, tag = name.partition(".")
        if key:  # not a file being written (``_write``)
            kept.setdefault(key, []).append(tag)
    written, settings = 0, _settings(checkout)
    for directory, filename in _sources(os.path.realpath(checkout)):
        path = os.path.join(directory, filename)
        try:
            with open(path, "rb") as fh:
                text = fh.read()
            when = int(os.stat(path).st_mtime)
        except OSError:
            continue
        for tag in sorted({tag for kind in ("", _REWRITTEN) for tag in kept.get(_key(text, kind, settings), ())}):
            key = _key(text, tag, settings)
            if tag not in kept.get(key, ()):
                continue  # an entry of the other kind under this name
            pyc = os.path.join(directory, "__pycache__", "%s.%s.pyc" % (filename[:-3], tag))
            if os.path.lexists(pyc) or not _cache_dir(directory):
                continue  # no __pycache__ made: a test listing the directory sees what B's saw
            entry = os.path.join(where, "%s.%s" % (key, tag))
            data = _read(entry)
            code = _code(data[HEADER:])
            if code is not None:
                _used(entry)
                _write(pyc, data[:4] + _checks(data, text, when) + marshal.dumps(_moved(code, path)))
                written += 1
    return written


#: What pytest's tag for a module it rewrote holds (``m.cpython-311-pytest-8.3.5.pyc``).
_REWRITTEN = "-pytest-"
#: The files at a checkout's root where pytest's settings are read.
_SETTINGS = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")


def _key(text: bytes, tag: str, settings: bytes) -> str:
    """An entry's name: the SHA-256 of the source -- and, for a module pytest rewrote, of the
    checkout's pytest settings, which shape the rewritten code too (``enable_assertion_pass_hook``:
    a review's probe was REJECTED on a checkout that turned it on, its tests' hook never called)."""
    digest = hashlib.sha256(text)
    if _REWRITTEN in tag:
        digest.update(b"\0" + settings)
    return digest.hexdigest()


def _settings(root: str) -> bytes:
    """The digest of the files at ``root`` where pytest reads its settings, as they are."""
    digest = hashlib.sha256()
    for name in _SETTINGS:
        try:
            with open(os.path.join(root, name), "rb") as fh:
                digest.update(b"%s\0%s\0" % (name.encode(), fh.read()))
        except OSError:
            digest.update(b"%s\0-\0" % name.encode())
    return digest.digest()


def _checks(data: bytes, text: bytes, when: int) -> bytes:
    """The flags and check of a ``.pyc`` of the kind ``data`` is, for the source ``text`` last
    written at ``when``: its time and size, or (a hash-based one) its hash."""
    flags = data[4:8]
    if flags == b"\0\0\0\0":
        return flags + struct.pack("<II", when & 0xFFFFFFFF, len(text) & 0xFFFFFFFF)
    return flags + importlib.util.source_hash(text)


def _used(entry: str) -> None:
    """Mark ``entry`` used now: ``_bounded`` removes the entries used least lately first."""
    try:
        os.utime(entry)
    except OSError:
        pass


def _bounded(where: str, limit: int) -> None:
    """Remove the entries of ``where`` used least lately until the rest hold ``limit`` bytes."""
    entries = []
    try:
        with os.scandir(where) as found:
            for item in found:
                if item.is_file(follow_symlinks=False):
                    stat = item.stat(follow_symlinks=False)
                    entries.append((stat.st_mtime, stat.st_size, item.path))
    except OSError:
        return
    total = sum(size for _, size, _ in entries)
    for _, size, path in sorted(entries):
        if total <= limit:
            break
        try:
            os.unlink(path)
        except OSError:
            continue
        total -= size


def _compiled(checkout: str) -> Iterator[Tuple[str, str, str, str]]:
    """``(__pycache__ directory, source file name, .pyc name, tag)`` of each ``.pyc`` of a module
    file under ``checkout``: ``m.cpython-311.pyc`` and ``m.cpython-311-pytest-8.3.5.pyc`` have
    the tags ``cpython-311`` and ``cpython-311-pytest-8.3.5``. Optimised ones are left."""
    for directory, dirs, files in os.walk(checkout):
        dirs[:] = [d for d in dirs if d == "__pycache__" or d not in _SKIPPED]
        if os.path.basename(directory) != "__pycache__" or os.path.islink(directory):
            continue
        for name in files:
            stem, _, rest = name.partition(".")
            if not name.endswith(".pyc") or not stem.isidentifier() or ".opt-" in rest:
                continue
            source = os.path.join(os.path.dirname(directory), stem + ".py")
            if os.path.isfile(source) and not os.path.islink(source):
                yield directory, stem + ".py", name, rest[: -len(".pyc")]


def _sources(root: str) -> Iterator[Tuple[str, str]]:
    """``(directory, file name)`` of each module file under ``root`` that is no symbolic link."""
    for directory, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _SKIPPED]
        for name in files:
            if name.endswith(".py") and name[:-3].isidentifier() and not os.path.islink(os.path.join(directory, name)):
                yield directory, name


def _read(entry: str) -> bytes:
    try:
        with open(entry, "rb") as fh:
            return fh.read()
    except OSError:
        return b""


def _code(data: bytes) -> Optional[types.CodeType]:
    try:
        code = marshal.loads(data)
    except (ValueError, EOFError, TypeError):
        return None
    return code if isinstance(code, types.CodeType) else None


def _moved(code: types.CodeType, path: str) -> types.CodeType:
    """``code`` and every code object in it, compiled from ``path``."""
    consts = tuple(_moved(c, path) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return code.replace(co_filename=path, co_consts=consts)


def _cache_dir(directory: str) -> bool:
    """Whether ``directory`` has a ``__pycache__`` of its own already: one the checkout's first
    session made where it imported. Seeding makes none -- a test listing a package's directory
    before anything there was imported would see one on C that B's run had not."""
    where = os.path.join(directory, "__pycache__")
    return os.path.isdir(where) and not os.path.islink(where)


def _write(path: str, data: bytes) -> None:
    """``data`` in ``path``, whole or not at all, through no symbolic link at its end."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temporary = os.path.join(os.path.dirname(path), ".%s.%d" % (os.path.basename(path), os.getpid()))
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(temporary, path)
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass


def main() -> None:
    """``python -I -S -c ... harvest CHECKOUT CACHE`` or ``... seed CACHE CHECKOUT``: print the
    number of files written."""
    what, first, second = sys.argv[1:4]
    print(harvest(first, second) if what == "harvest" else seed(first, second))
