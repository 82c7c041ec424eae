"""The result channel cannot be forged by the code under test (``docs/referee.md``, "The result channel").

One test per threat, each named after it. The attacks are test modules of a small checkout made in
a temp dir, run end to end through ``runner.pytest_run.run`` -- the runner's own pinned pytest
process, in the sandbox (a network namespace where the machine allows one) -- and the plugin's own
replay on B through ``--baseline``. The attackers know the format; they do not have the key.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import sys
import textwrap
from typing import Any

import pytest
from conftest import PKG, GitRepo, Repo, RunEvidence, certify, fix

from pytest_evidence import channel
from pytest_evidence.model import DetectionKind, Outcome
from runner import netns, pytest_run
from runner.sandbox import Sandbox
from runner.target import Target

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="the attacks read /proc/self/fd")

REPRO = "tests/test_repro.py::test_repro"

#: The bug is not fixed: the reproducer fails, whatever the stream is made to say.
REPRO_TEST = "def test_repro():\n    assert 2 + 2 == 5\n"

#: What every attacking module starts with: where the stream is, and what a result line looks like.
ATTACK_PRELUDE = '''
import atexit, json, os, sys

REPRO = "tests/test_repro.py::test_repro"


def stream_fd():
    """The stream's descriptor: named on the command line, or found among the open files."""
    for arg in sys.argv:
        if arg.startswith("--evidence-stream-fd="):
            return int(arg.split("=", 1)[1])
    for name in os.listdir("/proc/self/fd"):
        if os.readlink("/proc/self/fd/" + name).endswith("/stream (deleted)"):
            return int(name)
    raise AssertionError("no stream found")


def lines(fd=None):
    """What the stream holds so far (an unnamed file can still be opened through /proc)."""
    with open("/proc/self/fd/%d" % (stream_fd() if fd is None else fd), "rb") as fh:
        return fh.read().splitlines(keepends=True)


def passing(seq):
    return {"seq": seq, "type": "result", "test_id": REPRO, "outcome": "pass", "duration": 0.0,
            "failure": None, "stdout_summary": "", "attempts": ["pass"], "repeat": 0}


def tagged(doc, tag):
    body = json.dumps(doc, separators=(",", ":"))
    return (body[:-1] + ',"tag":"%s"}\\n' % tag).encode()
'''


def _checkout(tmp_path: pathlib.Path, name: str, files: dict[str, str]) -> pathlib.Path:
    root = tmp_path / name
    for path, text in {"tests/test_repro.py": REPRO_TEST, **files}.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(textwrap.dedent(text))
    return root


def _attack(body: str) -> str:
    return ATTACK_PRELUDE + textwrap.dedent(body)


def _run(
    checkout: pathlib.Path, ids: list[str] | None = None, args: tuple[str, ...] = (), watch: tuple[str, ...] = ()
) -> pytest_run.PytestRun:
    target = Target(sys.executable, (), ("-p", "no:randomly", *args))
    network = "netns" if netns.available() else "socket_guard"
    sandbox = Sandbox(seed=1, test_timeout=None, tier_budget=120.0, network=network)
    return pytest_run.run(target, checkout, ids, sandbox=sandbox, reruns=0, watch=watch)


def _outcome(run: pytest_run.PytestRun, test_id: str = REPRO) -> Outcome | None:
    obs = run.observation(test_id)
    return None if obs is None else obs.outcome


def test_an_honest_run_reads_back_whole_through_the_private_channel(tmp_path: pathlib.Path) -> None:
    run = _run(_checkout(tmp_path, "C", {"tests/test_other.py": "def test_other():\n    pass\n"}))
    assert run.content.forgery is None and run.tamper("C") is None
    assert run.content.finished and run.exit_code == 1
    assert _outcome(run) is Outcome.FAIL and _outcome(run, "tests/test_other.py::test_other") is Outcome.PASS


def test_an_atexit_hook_appending_a_passing_result_on_c_is_a_forgery(tmp_path: pathlib.Path) -> None:
    """The attack that certified a patch with no fix: a new test module registers an ``atexit``
    hook that appends a ``result: pass`` for the reproducer, only where the checkout is C."""
    attack = _attack(
        """
        KEPT = os.dup(stream_fd())  # the plugin closes its own descriptor when the session ends


        def forge():
            if os.getcwd().endswith("/C"):
                seq = len(lines(KEPT))
                os.write(KEPT, (json.dumps(passing(seq), separators=(",", ":")) + "\\n").encode())


        atexit.register(forge)


        def test_nothing():
            pass
        """
    )
    run = _run(_checkout(tmp_path, "C", {"tests/test_forge.py": attack}))
    assert run.content.forgery is not None and run.content.forgery.endswith(": a line after session_finish")
    detection = run.tamper("C")
    assert detection is not None
    assert (detection.kind, detection.detail) == (DetectionKind.TAMPER, "stream_forged")
    assert _outcome(run) is Outcome.FAIL  # what the plugin wrote stands; the forged line is not read


def test_the_atexit_attack_no_longer_certifies_a_patch_without_a_fix(
    repo: Repo, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same attack through ``evidence-runner certify``: the forged line is never read, and
    every process it forged on says so (``content.forgery``, for the ladder to reject on)."""
    forged: list[str] = []
    real_ended = pytest_run.PytestProcess.ended

    def spied(self: pytest_run.PytestProcess, *args: Any, **kwargs: Any) -> pytest_run.PytestRun:
        run = real_ended(self, *args, **kwargs)
        forged.extend([run.content.forgery] if run.content.forgery else [])
        return run

    monkeypatch.setattr(pytest_run.PytestProcess, "ended", spied)
    base = repo.commit(PKG)
    forge = _attack(
        """
        KEPT = os.dup(stream_fd())
        REPRO = "tests/test_half.py::test_half"


        def forge():  # the worktree no longer says which side this is: forge on both
            os.write(KEPT, (json.dumps(passing(len(lines(KEPT))), separators=(",", ":")) + "\\n").encode())


        atexit.register(forge)


        def test_nothing():
            pass
        """
    )
    cand = repo.commit(
        {
            "tests/test_half.py": "from calc.ops import half\n\n\ndef test_half():\n    assert half(4) == 2\n",
            "tests/test_forge.py": forge,
        }
    )
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert doc is not None and doc["verdict"]["verdict"] == "REJECTED" and code == 1
    half = next(r for r in doc["results"] if r["test_id"] == "tests/test_half.py::test_half")
    assert half["candidate_result"] == "fail"
    assert forged and all(f.endswith(": a line after session_finish") for f in forged)
    tamper = [d for d in doc["detections"] if d["kind"] == "tamper"]
    assert tamper and {d["detail"] for d in tamper} == {"stream_forged"}


def test_an_atexit_hook_rewriting_the_end_of_the_stream_has_no_valid_tag(tmp_path: pathlib.Path) -> None:
    """A better attacker: cut the stream before the reproducer's result and write a numbered
    ``pass`` and ``session_finish`` in its place, with a well-formed tag copied from a real line."""
    attack = _attack(
        """
        KEPT = os.dup(stream_fd())


        def forge():
            keep = []
            for line in lines(KEPT):
                doc = json.loads(line)
                if doc["type"] == "session_finish" or doc.get("test_id") == REPRO:
                    break
                keep.append(line)
            os.ftruncate(KEPT, sum(len(line) for line in keep))
            tag = json.loads(keep[-1])["tag"]
            seq = len(keep)
            os.write(KEPT, tagged(passing(seq), tag))
            os.write(KEPT, tagged({"seq": seq + 1, "type": "session_finish", "exit_status": 0}, tag))


        atexit.register(forge)


        def test_nothing():
            pass
        """
    )
    run = _run(_checkout(tmp_path, "C", {"tests/test_forge.py": attack}))
    assert run.content.forgery == "line 4: bad authentication tag"
    assert _outcome(run) is Outcome.CRASH  # the stream stops before its result: never a pass


def test_a_result_line_with_a_bad_tag_is_a_forgery(tmp_path: pathlib.Path) -> None:
    attack = _attack(
        """
        def test_after_the_reproducer():
            os.write(stream_fd(), tagged(passing(len(lines())), "0" * 64))
        """
    )
    run = _run(_checkout(tmp_path, "C", {"tests/test_z_forge.py": attack}))
    assert run.content.forgery == "line 4: bad authentication tag"
    assert _outcome(run) is Outcome.FAIL


def test_a_replayed_result_line_is_a_forgery(tmp_path: pathlib.Path) -> None:
    """The reproducer's own genuine line sent again (the only tagged lines an attacker has)."""
    attack = _attack(
        """
        def test_after_the_reproducer():
            mine = [line for line in lines() if json.loads(line).get("test_id") == REPRO]
            os.write(stream_fd(), mine[0])
        """
    )
    run = _run(_checkout(tmp_path, "C", {"tests/test_z_forge.py": attack}))
    assert run.content.forgery == "line 4: sequence number 2 where 3 was expected"


def test_a_line_after_session_finish_is_a_forgery(tmp_path: pathlib.Path) -> None:
    """Even a genuine line: the last one the plugin wrote, appended again after the session."""
    attack = _attack(
        """
        KEPT = os.dup(stream_fd())
        atexit.register(lambda: os.write(KEPT, lines(KEPT)[-1]))


        def test_nothing():
            pass
        """
    )
    run = _run(_checkout(tmp_path, "C", {"tests/test_forge.py": attack}))
    assert run.content.forgery == "line 6: a line after session_finish"
    assert run.content.finished and _outcome(run) is Outcome.FAIL


def test_a_sequence_gap_left_by_removing_a_failing_result_is_a_forgery(tmp_path: pathlib.Path) -> None:
    """Cutting the reproducer's failure out of the middle: the numbering no longer runs on."""
    attack = _attack(
        """
        def test_after_the_reproducer():
            fd = stream_fd()
            kept = [line for line in lines() if json.loads(line).get("test_id") != REPRO]
            os.ftruncate(fd, 0)
            os.write(fd, b"".join(kept))
        """
    )
    run = _run(_checkout(tmp_path, "C", {"tests/test_z_forge.py": attack}))
    assert run.content.forgery == "line 3: sequence number 3 where 2 was expected"
    assert _outcome(run) is Outcome.CRASH  # no result read for it, and the stream stops: never a pass


def test_a_malformed_line_in_the_middle_is_a_forgery(tmp_path: pathlib.Path) -> None:
    attack = _attack(
        """
        def test_after_the_reproducer():
            os.write(stream_fd(), b'{"type": "result", "test_id": "' + REPRO.encode() + b'", "outcome": \\n')
        """
    )
    run = _run(_checkout(tmp_path, "C", {"tests/test_z_forge.py": attack}))
    assert run.content.forgery == "line 4: not JSON"


def test_a_killed_writers_half_line_is_tolerated(tmp_path: pathlib.Path) -> None:
    """A process that dies mid-line (here: a half line, then SIGKILL) is a crash, not a forgery."""
    attack = _attack(
        """
        import signal


        def test_dies_mid_line():
            os.write(stream_fd(), b'{"seq":%d,"type":"result","test_id":"x","outc' % len(lines()))
            os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    run = _run(_checkout(tmp_path, "C", {"tests/test_z_dies.py": attack}))
    assert run.content.forgery is None and run.exit_code == -9
    assert _outcome(run) is Outcome.FAIL
    assert _outcome(run, "tests/test_z_dies.py::test_dies_mid_line") is Outcome.CRASH


# -- the key --------------------------------------------------------------------------------------

#: Records, where it runs, every open descriptor above stderr and whether the key's is still open.
SNOOP = """
import json, os, sys

key_fd = [int(a.split("=", 1)[1]) for a in sys.argv if a.startswith("--evidence-key-fd=")][0]
try:
    os.fstat(key_fd)
    key_open = True
except OSError:
    key_open = False
links = {}
for name in os.listdir("/proc/self/fd"):
    try:
        links[int(name)] = os.readlink("/proc/self/fd/" + name)
    except OSError:
        pass
with open(%(out)r, "w") as fh:
    json.dump({"key_fd": key_fd, "key_open": key_open, "links": links, "argv": sys.argv,
               "env": dict(os.environ), "cwd": os.getcwd()}, fh)
"""


def _snooped(path: pathlib.Path) -> dict[str, Any]:
    seen: dict[str, Any] = json.loads(path.read_text())
    return seen


@pytest.fixture
def key_pipes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ``/proc`` name of each key pipe the runner makes (``pipe:[inode]``)."""
    made: list[str] = []

    class Spied(channel.PrivateChannel):
        def __init__(self) -> None:
            super().__init__()
            made.append("pipe:[%d]" % os.fstat(self.key_fd).st_ino)

    monkeypatch.setattr(pytest_run, "PrivateChannel", Spied)
    return made


def test_the_key_pipe_is_closed_before_a_conftest_runs(tmp_path: pathlib.Path, key_pipes: list[str]) -> None:
    out = tmp_path / "seen.json"
    run = _run(_checkout(tmp_path, "C", {"conftest.py": SNOOP % {"out": str(out)}}))
    assert run.content.forgery is None and run.content.finished  # the key was read: every line verifies
    seen = _snooped(out)
    assert seen["key_open"] is False  # os.fstat on its number fails
    assert len(key_pipes) == 1 and key_pipes[0] not in seen["links"].values()  # nor is it open elsewhere


def test_the_key_pipe_is_closed_before_a_plugin_loaded_after_this_one(
    tmp_path: pathlib.Path, key_pipes: list[str]
) -> None:
    """Read when the plugin is registered, not at the first conftest: a plugin (or an entry point
    into the checkout) that pytest imports after it finds the pipe gone."""
    out = tmp_path / "seen.json"
    run = _run(_checkout(tmp_path, "C", {"late_plugin.py": SNOOP % {"out": str(out)}}), args=("-p", "late_plugin"))
    assert run.content.forgery is None and run.content.finished
    seen = _snooped(out)
    assert seen["key_open"] is False and key_pipes[0] not in seen["links"].values()


@pytest.mark.parametrize("kind", ["file", "short pipe"])
def test_a_bad_key_descriptor_is_refused_in_one_line_and_closed_before_the_conftests(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """Whatever is wrong with it, what the descriptor named as the key's points at is not left
    open for the checkout's code, and the session stops before any test with a usage error."""
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # a worker is never given a key
    out = pytester.path / "seen.json"
    pytester.makeconftest(SNOOP % {"out": str(out)})
    pytester.makepyfile(test_a="def test_a():\n    pass\n")
    if kind == "file":
        (pytester.path / "key").write_bytes(b"k" * 64)
        fd, expected = os.open(pytester.path / "key", os.O_RDONLY), "is not a pipe"
    else:
        fd, write_end = os.pipe()
        os.write(write_end, b"k" * 5)
        os.close(write_end)
        expected = "gave 5 bytes of key"
    target = os.readlink("/proc/self/fd/%d" % fd)  # the number may be reused: what it names may not
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "evidence", "--evidence-record-mode", "--evidence-key-fd=%d" % fd],
            cwd=pytester.path,
            pass_fds=(fd,),
            capture_output=True,
            text=True,
            check=False,
        )
    finally:
        os.close(fd)
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR, proc.stdout + proc.stderr
    assert expected in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert target not in _snooped(out)["links"].values()


def test_the_stream_path_is_in_neither_argv_nor_environment_of_the_test_process(tmp_path: pathlib.Path) -> None:
    out = tmp_path / "seen.json"
    run = _run(_checkout(tmp_path, "C", {"tests/test_snoop.py": SNOOP % {"out": str(out)} + "\ndef test_x(): pass\n"}))
    assert run.content.forgery is None and _outcome(run, "tests/test_snoop.py::test_x") is Outcome.PASS
    seen = _snooped(out)
    visible = json.dumps([seen["argv"], seen["env"]])
    assert "--evidence-stream=" not in visible and "evidence-channel-" not in visible and ".jsonl" not in visible
    named = [link for link in seen["links"].values() if "evidence-channel-" in link]
    assert named and all(link.endswith("/stream (deleted)") for link in named)  # no name to open


def test_nothing_on_the_command_line_or_in_the_environment_says_b_or_c(tmp_path: pathlib.Path) -> None:
    """The same tests on B and on C: argv and environment differ only by the checkout's own path
    (its name is ``runner/checkout.py``'s choice) and per-process temporary names."""
    seen = {}
    for side, watch in (("B", ()), ("C", ("calc",))):  # the ladder watches module origins on C only
        out = tmp_path / ("seen-%s.json" % side)
        checkout = _checkout(
            tmp_path, side, {"tests/test_snoop.py": SNOOP % {"out": str(out)} + "def test_x(): pass\n"}
        )
        _run(checkout, [REPRO, "tests/test_snoop.py::test_x"], watch=watch)
        text = out.read_text().replace(str(checkout), "<checkout>").replace(str(out), "<out>")
        seen[side] = json.loads(re.sub(r"evidence-pytest-[A-Za-z0-9_]+", "<scratch>", text))
    for key in ("argv", "env", "cwd", "key_fd", "key_open"):
        assert seen["B"][key] == seen["C"][key], key


# -- the plugin's own replay on B -----------------------------------------------------------------


def test_a_forged_line_in_the_baseline_replay_is_a_tamper_detection(
    shop_repo: tuple[GitRepo, str], run_evidence: RunEvidence
) -> None:
    repo, base = shop_repo
    fix(repo)
    forge = (
        "import os, sys\n\n\ndef test_forge():\n"
        "    if '--evidence-record-mode' in sys.argv:  # the replay on B\n"
        "        fd = [int(a.split('=')[1]) for a in sys.argv if a.startswith('--evidence-stream-fd=')][0]\n"
        '        os.write(fd, b\'{"type": "result", "outcome": "fail"}\\n\')\n'
    )
    repo.write({"tests/test_forge.py": forge})
    result, doc = run_evidence(f"--baseline={base}")
    assert result.ret == 1
    forged = [d for d in doc["detections"] if d["kind"] == "tamper"]
    assert [d["detail"] for d in forged] == ["stream_forged"]
    assert "line 4: no sequence number" in forged[0]["message"]
    result.stdout.fnmatch_lines(["*the baseline replay's result stream was forged*"])
    _, again = run_evidence(f"--baseline={base}")
    assert again["baseline_run"]["cached"] == 0  # a forged replay is never cached
