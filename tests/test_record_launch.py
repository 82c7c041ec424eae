"""How the runner's record-mode processes end (``pytest_evidence.quickexit``, started by
``inject.RECORD_LAUNCH``).

They skip the interpreter's teardown of its objects, and nothing else of a usual exit: the tests'
threads are joined, every ``atexit`` handler runs (a ``sitecustomize``'s too), files the tests
left open are closed as their finalizers would, and pytest's status is the exit status. Each test
runs the launch as the runner does -- the plugin's private copy and its subprocess carrier first
on ``PYTHONPATH`` -- on a suite written for it, and reads what the process left behind.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import pathlib
import subprocess
import sys
import textwrap

from conftest import FIX, PKG, Repo, certify

from pytest_evidence import quickexit
from pytest_evidence.inject import PYTEST_LAUNCH, RECORD_LAUNCH, private_copy

SUITE = """
    import atexit
    import gzip
    import io
    import os
    import threading
    import time

    OUT = os.environ["OUT"]


    class Teardown:
        def __del__(self, _open=open, _path=os.path.join(OUT, "del")):  # what teardown may have cleared
            with _open(_path, "w") as fh:
                fh.write("ran")


    class Text(io.TextIOWrapper):
        pass


    ALIVE = Teardown()  # alive until the interpreter tears its objects down


    def _late_thread():
        time.sleep(0.2)
        with open(os.path.join(OUT, "thread"), "w") as fh:
            fh.write("ran")


    def _at_exit():
        with open(os.path.join(OUT, "atexit"), "w") as fh:
            fh.write("ran")


    def test_leaves_work_for_the_exit():
        atexit.register(_at_exit)
        threading.Thread(target=_late_thread).start()  # not a daemon: the exit waits for it
        text = open(os.path.join(OUT, "text"), "w")  # left open, unflushed
        text.write("x" * 100)
        raw = open(os.path.join(OUT, "raw"), "wb")
        raw.write(b"y" * 100)
        own = Text(open(os.path.join(OUT, "own"), "wb"))
        own.write("z" * 100)
        packed = gzip.open(os.path.join(OUT, "packed.gz"), "wb")  # its trailer is written on close
        packed.write(b"w" * 100)
        under = open(os.path.join(OUT, "wrapped.gz"), "wb")
        wrapped = gzip.GzipFile(fileobj=under, mode="wb")  # closed first, or its trailer is lost
        wrapped.write(b"v" * 100)
        ALIVE.files = (text, raw, own, packed, under, wrapped)  # kept alive: only the exit can close them


    def test_status():
        assert os.environ.get("FAIL") != "1"
    """

#: A ``sitecustomize`` of the target's own, which registers a handler before the launch runs.
SITECUSTOMIZE = """
    import atexit
    import os


    def _at_exit():
        with open(os.path.join(os.environ["OUT"], "site"), "w") as fh:
            fh.write("ran")


    atexit.register(_at_exit)
    """


def _run(
    tmp_path: pathlib.Path, launch: tuple[str, ...], fail: bool = False, site_extra: str = ""
) -> tuple[int, pathlib.Path]:
    (tmp_path / "test_exit.py").write_text(textwrap.dedent(SUITE))
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(textwrap.dedent(SITECUSTOMIZE) + site_extra)
    plugin = private_copy(str(tmp_path / "plugin"))
    out = tmp_path / "out"
    out.mkdir()
    env = {
        **os.environ,
        "OUT": str(out),
        "FAIL": "1" if fail else "0",
        "PYTHONPATH": os.pathsep.join([plugin, str(site)]),
    }
    command = [sys.executable, *launch, "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "test_exit.py"]
    proc = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, out


#: What the suite leaves behind once its process has ended as a usual exit does, short of the
#: teardown (which adds ``del``); the gzip files read decompressed (a lost trailer raises).
EXIT_WORK = {
    "atexit": b"ran",
    "own": b"z" * 100,
    "packed.gz": b"w" * 100,
    "raw": b"y" * 100,
    "site": b"ran",
    "text": b"x" * 100,
    "thread": b"ran",
    "wrapped.gz": b"v" * 100,
}


def _left(out: pathlib.Path) -> dict[str, bytes]:
    return {
        p.name: gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes() for p in sorted(out.iterdir())
    }


def test_the_record_launch_skips_only_the_teardown_of_objects(tmp_path: pathlib.Path) -> None:
    code, out = _run(tmp_path, RECORD_LAUNCH)
    assert code == 0
    assert _left(out) == EXIT_WORK


def test_a_plain_launch_tears_objects_down(tmp_path: pathlib.Path) -> None:
    """What the record launch saves: the same suite, launched plainly, runs the ``__del__``."""
    code, out = _run(tmp_path, PYTEST_LAUNCH)
    assert code == 0
    assert _left(out)["del"] == b"ran"


def test_the_record_launch_exits_with_pytests_status(tmp_path: pathlib.Path) -> None:
    code, _ = _run(tmp_path, RECORD_LAUNCH, fail=True)
    assert code == 1


def test_without_the_private_exit_functions_the_exit_is_the_usual_one(tmp_path: pathlib.Path) -> None:
    """An interpreter whose ``atexit`` module has no ``_run_exitfuncs`` (its own exit calls the C
    function, not this name): the launch falls back to the usual exit, teardown included."""
    code, out = _run(tmp_path, RECORD_LAUNCH, site_extra="\ndel atexit._run_exitfuncs\n")
    assert code == 0
    assert _left(out) == {**EXIT_WORK, "del": b"ran"}


def test_a_file_is_closed_after_every_file_that_wraps_it(tmp_path: pathlib.Path) -> None:
    """Given innermost first, the order puts each wrapper before what it wraps: a C text file over
    its buffer over its raw file, and a ``GzipFile`` (which holds its file as an attribute)."""
    raw = io.FileIO(tmp_path / "text", "w")
    buffered = io.BufferedWriter(raw)
    text = io.TextIOWrapper(buffered)
    under = open(tmp_path / "packed.gz", "wb")
    packed = gzip.GzipFile(fileobj=under, mode="wb")
    loose = io.StringIO()
    try:
        order = quickexit._wrappers_first([raw, under, buffered, loose, packed, text])
        assert [id(f) for f in order] == [id(f) for f in (loose, packed, text, under, buffered, raw)]
    finally:
        packed.close()
        text.close()
        under.close()


LOADERS = """import json


def test_loaders(pytestconfig):
    import sys

    hook = pytestconfig.pluginmanager.rewrite_hook
    rewritten = sorted(
        name
        for name, module in list(sys.modules.items())
        if name.startswith("pytest_evidence") and type(getattr(module, "__loader__", None)) is type(hook)
    )
    with open(%r, "a") as fh:
        fh.write(json.dumps(["pytest_evidence" in hook._must_rewrite, rewritten]) + "\\n")
"""


def test_no_module_of_the_plugin_is_compiled_by_pytests_hook_in_a_test_process(
    repo: Repo, tmp_path: pathlib.Path
) -> None:
    """This project's venv has pytest-evidence installed, so pytest marks the private copy's
    modules for rewriting (each line says so: the check could fail); every process of a certify
    that ran the test -- a record-mode process, with the network guard and the dependency
    recorder on B -- had imported them all before the hook was in place."""
    seen = tmp_path / "loaders.jsonl"
    base = repo.commit({**PKG, "tests/test_loaders.py": LOADERS % str(seen)})
    cand = repo.commit(FIX)
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand, "--full")
    assert code == 0 and doc is not None, doc and doc["verdict"]
    lines = [json.loads(line) for line in seen.read_text().splitlines()]
    assert len(lines) >= 2 and all(line == [True, []] for line in lines), lines
