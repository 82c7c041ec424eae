"""How the runner's record-mode processes end (``pytest_evidence.inject.RECORD_LAUNCH``).

They skip the interpreter's teardown of its objects, and nothing else of a usual exit: the tests'
threads are joined, ``atexit`` handlers run, files the tests left open are flushed, and pytest's
status is the exit status. Each test runs the launch on a suite written for it and reads what the
process left behind.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap

from pytest_evidence.inject import PYTEST_LAUNCH, RECORD_LAUNCH

SUITE = """
    import atexit
    import os
    import threading
    import time

    OUT = os.environ["OUT"]


    class Teardown:
        def __del__(self, _open=open, _path=os.path.join(OUT, "del")):  # what teardown may have cleared
            with _open(_path, "w") as fh:
                fh.write("ran")


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
        ALIVE.text, ALIVE.raw = text, raw  # kept alive: only the exit can flush them


    def test_status():
        assert os.environ.get("FAIL") != "1"
    """


def _run(tmp_path: pathlib.Path, launch: tuple[str, ...], fail: bool = False) -> tuple[int, pathlib.Path]:
    (tmp_path / "test_exit.py").write_text(textwrap.dedent(SUITE))
    out = tmp_path / "out"
    out.mkdir()
    env = {**os.environ, "OUT": str(out), "FAIL": "1" if fail else "0"}
    command = [sys.executable, *launch, "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "test_exit.py"]
    proc = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    return proc.returncode, out


def _left(out: pathlib.Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(out.iterdir())}


def test_the_record_launch_skips_only_the_teardown_of_objects(tmp_path: pathlib.Path) -> None:
    code, out = _run(tmp_path, RECORD_LAUNCH)
    assert code == 0
    assert _left(out) == {"atexit": "ran", "raw": "y" * 100, "text": "x" * 100, "thread": "ran"}


def test_a_plain_launch_tears_objects_down(tmp_path: pathlib.Path) -> None:
    """What the record launch saves: the same suite, launched plainly, runs the ``__del__``."""
    code, out = _run(tmp_path, PYTEST_LAUNCH)
    assert code == 0
    assert _left(out)["del"] == "ran"


def test_the_record_launch_exits_with_pytests_status(tmp_path: pathlib.Path) -> None:
    code, _ = _run(tmp_path, RECORD_LAUNCH, fail=True)
    assert code == 1
