"""A referee that cannot be gamed, end to end on real repositories made in temp dirs.

Each test names the attack or the accident it covers: a flake that must stay quarantined across
runs, a runner killed during the baseline run, a test process that dies, a changed lock file,
a trusted test patch, network access, and the candidate's own test edits that equal the
trusted ones.
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

import pytest
from conftest import FIX, PKG, Repo, certify, interrupt

from runner import netns
from runner.cli import main

FLIP = """import pathlib

_STATE = pathlib.Path(__file__).with_name(".flip")


def test_flip_flop():
    n = int(_STATE.read_text()) if _STATE.exists() else 0
    _STATE.write_text(str(n + 1))
    assert n % 2 == 1
"""


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_a_quarantined_test_stays_flaky_across_runs_until_cleared(
    repo: Repo, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = repo.commit({**PKG, ".gitignore": ".flip\n"})
    flaky = repo.commit({**FIX, "tests/test_flip.py": FLIP})
    steady = repo.commit({"tests/test_flip.py": FLIP.replace("assert n % 2 == 1", "assert n >= 0")})
    code, first = certify(repo, tmp_path / "1.json", "--baseline", base, "--candidate", flaky)
    assert code == 3 and first is not None
    flip_id = "tests/test_flip.py::test_flip_flop"
    assert first["annotations"][flip_id]["reruns"] >= 1
    assert next(r for r in first["results"] if r["test_id"] == flip_id)["candidate_result"] == "flaky"

    code, out = _cli(capsys, "flaky", "list", "--repo", str(repo.path))
    assert code == 0 and flip_id in out and first["run_id"] in out

    # The test is steady now, but a quarantine is not lifted by a lucky run.
    code, second = certify(repo, tmp_path / "2.json", "--baseline", base, "--candidate", steady)
    assert code == 3 and second is not None
    res = next(r for r in second["results"] if r["test_id"] == flip_id)
    assert res["candidate_result"] == "flaky" and "flaky clear" in res["failure"]["message"]
    assert res["flaky_history"][0].startswith(first["run_id"] + ":")
    assert second["verdict"]["halted_at"] == "T3"
    # what the summary prints says which run quarantined it, and how to clear it (an independent
    # check: a quarantine by an earlier candidate read as this one's flake)
    said = [d["message"] for d in second["detections"] if d["kind"] == "flaky_quarantined" and d["test_id"] == flip_id]
    assert said and all(
        "not by this run: quarantined since run %s" % first["run_id"] in m and "evidence-runner flaky clear" in m
        for m in said
    ), said

    code, out = _cli(capsys, "flaky", "clear", flip_id, "--repo", str(repo.path))
    assert code == 0 and "cleared" in out
    code, third = certify(repo, tmp_path / "3.json", "--baseline", base, "--candidate", steady)
    assert code == 0 and third is not None
    res = next(r for r in third["results"] if r["test_id"] == flip_id)
    assert res["candidate_result"] == "pass" and res["flaky_history"][-1].startswith("cleared:")

    assert main(["flaky", "clear", flip_id, "--repo", str(repo.path)]) == 2  # no longer quarantined


def _store(repo: Repo) -> pathlib.Path:
    return repo.path / ".git" / "evidence" / "store.sqlite3"


def _wait_for_intent(store: pathlib.Path, kind: str) -> str:
    for _ in range(600):
        if store.exists():
            try:
                row = (
                    sqlite3.connect(store)
                    .execute("SELECT receipt FROM receipt_intents WHERE kind = ?", (kind,))
                    .fetchone()
                )
            except sqlite3.OperationalError:
                row = None
            if row:
                return str(row[0])
        time.sleep(0.1)
    raise AssertionError("no %s intent was written" % kind)


def test_kill_9_during_the_baseline_run_holds_the_receipt_until_reconciled(
    repo: Repo, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = tmp_path / "slow"
    gate.write_text("")
    log = tmp_path / "runs.log"
    beat = tmp_path / "beat"
    slow = (
        "import os\nimport time\n\n\ndef test_slow():\n"
        f"    with open({str(log)!r}, 'a') as fh:\n        fh.write('ran\\n')\n"
        f"    while os.path.exists({str(gate)!r}):\n"
        f"        open({str(beat)!r}, 'w').write(repr(time.time()))\n        time.sleep(0.1)\n"
    )
    base = repo.commit({**PKG, "tests/test_slow.py": slow})
    cand = repo.commit(FIX)
    out = tmp_path / "killed.json"
    cmd = [sys.executable, "-m", "runner.cli", "certify", "--repo", str(repo.path), "--baseline", base]
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    proc = subprocess.Popen(
        [*cmd, "--candidate", cand, "--out", str(out)],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=dict(os.environ, TMPDIR=str(temporary)),
    )
    try:
        held = _wait_for_intent(_store(repo), "suite")
        while not log.exists():  # the B suite is running test_slow now
            time.sleep(0.1)
        proc.send_signal(signal.SIGKILL)  # the runner alone: its pytest must die with it
        proc.wait()
        time.sleep(1)
        last = beat.read_text()
        time.sleep(1)
        assert beat.read_text() == last  # nothing is still running the B suite
    finally:
        gate.unlink()
    assert not out.exists()
    runs_before = log.read_text().count("ran")
    (left,) = temporary.glob("evidence-runner-*")  # the killed runner's worktrees, and nobody to remove them
    scratch = list(temporary.glob("evidence-pytest-*"))  # its test processes' scratch (HOME, lists of ids)
    assert scratch

    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    code, doc = certify(repo, tmp_path / "again.json", "--baseline", base, "--candidate", cand)
    assert not left.exists() and not any(s.exists() for s in scratch)  # the next runner removed them
    assert code == 3 and doc is not None
    detection = next(d for d in doc["detections"] if d["kind"] == "receipt_held")
    assert held in detection["message"] and "receipts reconcile %s" % held in detection["message"]
    assert [t["status"] for t in doc["tiers"] if t["tier"] in ("T4", "T5", "T6", "T7")] == ["inconclusive"] * 4
    assert log.read_text().count("ran") == runs_before  # B's suite was not replayed

    code, listed = _cli(capsys, "receipts", "list", "--repo", str(repo.path))
    assert code == 0 and held in listed and "held" in listed
    header = ["RECEIPT", "KIND", "REF", "HEAD", "CREATED", "STATE"]
    rows = [line.split() for line in listed.splitlines()]
    assert rows[rows.index(header) + 1][0] == held  # the header, then the receipts
    code, said = _cli(capsys, "receipts", "reconcile", held, "--rerun", "--repo", str(repo.path))
    assert code == 0 and "next certify" in said
    code, doc = certify(repo, tmp_path / "fresh.json", "--baseline", base, "--candidate", cand)
    assert code == 0 and doc is not None and doc["verdict"]["verdict"] == "CERTIFIED"
    ran = log.read_text().count("ran")
    code, doc = certify(repo, tmp_path / "reused.json", "--baseline", base, "--candidate", cand)
    assert code == 0 and log.read_text().count("ran") == ran + 1  # only C's run: B's completion reused
    assert main(["receipts", "reconcile", held, "--abandon", "--repo", str(repo.path)]) == 2  # not held now


def test_baseline_command_receipts_complete_hold_and_refuse_changed_bindings(
    repo: Repo, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = repo.commit(PKG)
    count = tmp_path / "count"
    command = f"echo ran >> {count}"
    args = ["baseline", "--repo", str(repo.path), "--ref", "main", "--timeout", "30"]
    code, out = _cli(capsys, *args, "--command", command)
    assert code == 0 and "GREEN" in out
    code, out = _cli(capsys, *args, "--command", command)
    assert code == 0 and "reused" in out and count.read_text().count("ran") == 1  # nothing ran again
    repo.commit({"README": "moved on\n"})
    code, out = _cli(capsys, *args, "--command", command)
    assert code == 0 and "head changed (%s" % base[:12] in out and count.read_text().count("ran") == 2
    code, out = _cli(capsys, *args, "--command", "exit 3")
    assert code == 1 and "RED" in out  # a red baseline is recorded, not an error
    assert main([*args[:-1], "1", "--command", "sleep 5"]) == 3  # outran 1 s: held
    code, out = _cli(capsys, *args, "--command", "true")
    assert code == 3 and "HELD" in out and "reconcile" in out  # the held intent blocks the slot
    assert main([*args[:-1], "121", "--command", "true"]) == 2  # limits are 1-120 s


def test_a_baseline_command_that_leaves_a_process_running_is_judged_on_its_own_end(
    repo: Repo, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A process the command starts in a session of its own keeps its output pipe: the command
    ended, green, and its receipt was held at the limit; the process is killed with it now."""
    if not netns.available():
        pytest.skip("no network namespace here")
    repo.commit(PKG)
    pid = tmp_path / "pid"
    command = "setsid sh -c 'echo $$ > %s; exec sleep 600' & while [ ! -s %s ]; do sleep 0.01; done" % (pid, pid)
    args = ["baseline", "--repo", str(repo.path), "--ref", "main", "--timeout", "60", "--command", command]
    try:
        code, out = _cli(capsys, *args)
        assert code == 0 and "GREEN" in out, out
        left = int(pid.read_text())
        assert not os.path.exists("/proc/%d" % left) or netns._zombie(left)
    finally:
        if pid.exists():
            with contextlib.suppress(OSError):
                os.kill(int(pid.read_text()), signal.SIGKILL)


@pytest.mark.parametrize(
    ("library", "call", "how"),
    [
        ("import os\n\n\ndef stop():\n    os._exit(0)\n", "ops.stop()", "exit code 0"),  # exit 0, fewer results
        ("import ctypes\n\n\ndef stop():\n    ctypes.string_at(0)\n", "ops.stop()", "signal 11"),  # a segfault
    ],
)
def test_a_test_process_that_dies_is_a_crash_and_the_rest_did_not_run(
    repo: Repo, tmp_path: pathlib.Path, library: str, call: str, how: str
) -> None:
    base = repo.commit(PKG)
    tests = (
        "from calc import ops\n\n\ndef test_a():\n    assert ops.half(4) == 2\n\n\n"
        f"def test_b():\n    {call}\n\n\ndef test_c():\n    assert ops.half(2) == 1\n"
    )
    cand = repo.commit({**FIX, "calc/ops.py": library + "\n\n" + FIX["calc/ops.py"], "tests/test_half.py": tests})
    # os._exit in library code is an attack the scan sees: --full climbs on to watch it crash a test
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand, "--full")
    assert code == 1 and doc is not None
    by_id = {r["test_id"].split("::")[-1]: r for r in doc["results"]}
    assert by_id["test_b"]["candidate_result"] == "crash" and how in by_id["test_b"]["failure"]["message"]
    t3 = next(t for t in doc["tiers"] if t["tier"] == "T3")
    assert t3["status"] == "failed" and t3["not_run"] == ["tests/test_half.py::test_c"]
    # climbing on (--full), the suite's session runs what T3's crash left, and not the crash again
    assert by_id["test_c"]["candidate_result"] == "pass"
    assert "crash" in doc["summary"]["detections"]


def test_a_changed_lock_file_is_environment_drift(repo: Repo, tmp_path: pathlib.Path) -> None:
    base = repo.commit({**PKG, "requirements.txt": "attrs==23.1.0\n"})
    cand = repo.commit({**FIX, "requirements.txt": "attrs==24.2.0\n"})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert code == 3 and doc is not None
    drift = next(d for d in doc["detections"] if d["kind"] == "environment_drift")
    assert "lockfiles" in drift["message"]
    assert doc["baseline_environment"]["lockfiles"] != doc["environment"]["lockfiles"]


def test_trusted_test_patch_is_laid_over_the_candidate(repo: Repo, tmp_path: pathlib.Path) -> None:
    """SWE-bench style: the hidden tests come from --tests-from; the candidate's copy of them is no tamper.

    The hidden tests are the harness's, not the candidate's evidence: a fix that brings no test of
    its own is certified on them only when the harness designates the reproducer (SWE-bench's
    FAIL_TO_PASS list); without one nothing the candidate brought proves the bug fixed.
    """
    base = repo.commit(PKG)
    tests_rev = repo.commit({"tests/test_half.py": FIX["tests/test_half.py"]})
    patch = tmp_path / "tests.patch"
    patch.write_text(repo.git("diff", base, tests_rev) + "\n")
    repo.git("checkout", "-q", base)
    source_only = repo.commit({"calc/ops.py": FIX["calc/ops.py"]})
    trusted = ("--baseline", base, "--candidate", source_only, "--tests-from", str(patch))
    code, doc = certify(repo, tmp_path / "d.json", *trusted)
    assert code == 3 and doc is not None and doc["verdict"]["halted_at"] == "T3"
    assert (
        "the candidate added or changed no test; the 1 new test(s) of the trusted tests ran"
        in (doc["verdict"]["reasons"][0])
    )
    ran = next(r for r in doc["results"] if r["test_id"] == "tests/test_half.py::test_half")
    assert (ran["baseline_result"], ran["candidate_result"]) == ("fail", "pass")  # recorded all the same
    code, doc = certify(repo, tmp_path / "e.json", *trusted, "--reproducer", "tests/test_half.py::test_half")
    assert code == 0 and doc is not None
    assert doc["integrity"]["trusted"] == "patch:tests.patch" and doc["integrity"]["reapplied"] == [
        "tests/test_half.py"
    ]
    assert not [d for d in doc["detections"] if d["kind"] == "tamper"]
    with_tests = repo.commit(FIX)  # the candidate wrote the same tests itself
    code, doc = certify(
        repo, tmp_path / "f.json", "--baseline", base, "--candidate", with_tests, "--tests-from", tests_rev
    )
    assert code == 0 and doc is not None and doc["integrity"]["reapplied"] == []
    assert main(["certify", "--repo", str(repo.path), "--baseline", base, "--candidate", with_tests,
                 "--tests-from", "no-such-rev", "--out", str(tmp_path / "g.json")]) == 2  # fmt: skip


def test_record_of_issue_4_reads_back(repo: Repo, tmp_path: pathlib.Path) -> None:
    from pytest_evidence.model import EvidenceRecord

    base = repo.commit(PKG)
    cand = repo.commit(FIX)
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert code == 0 and doc is not None
    again = EvidenceRecord.from_dict(doc).to_dict()
    assert json.dumps(again, sort_keys=True) == json.dumps(doc, sort_keys=True)


def test_a_guard_plugin_the_repository_disables_is_reported_missing(
    repo: Repo, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = PKG["pyproject.toml"] + 'addopts = "-p no:randomly"\n'
    base = repo.commit({**PKG, "pyproject.toml": config})
    cand = repo.commit(FIX)
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert code == 0 and doc is not None
    assert "pytest-randomly" not in doc["pinning"]["plugins"]
    assert [m for m in doc["pinning"]["missing"] if "-p no:randomly" in m]
    code, _ = certify(repo, tmp_path / "f.json", "--baseline", base, "--candidate", cand, "--pytest-arg=--no-such")
    assert code == 2 and "unrecognized arguments: --no-such" in capsys.readouterr().err


def test_a_repository_whose_addopts_distribute_the_session_is_judged_serially(
    repo: Repo, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``addopts = -n 2`` (pytest-xdist in the target) distributed the runner's sessions, whose
    groups run in order in one process: every candidate's test files failed to collect, and an
    honest fix was REJECTED at T3. Every session is now made serial (``-n 0``); the same
    distribution asked on the command line is the operator's mistake, said in one line."""
    pytest.importorskip("xdist")
    config = PKG["pyproject.toml"] + 'addopts = "-n 2"\n'
    base = repo.commit({**PKG, "pyproject.toml": config})
    cand = repo.commit(FIX)
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand)
    assert doc is not None and (code, doc["verdict"]["verdict"]) == (0, "CERTIFIED"), doc and doc["verdict"]
    capsys.readouterr()
    for asked in (["--", "-n", "2"], ["--pytest-arg=--numprocesses=2"], ["--", "-nauto"]):
        code, doc = certify(repo, tmp_path / "f.json", "--baseline", base, "--candidate", cand, *asked)
        said = capsys.readouterr().err.strip().splitlines()
        assert (code, doc) == (2, None) and len(said) == 1, said
        assert "the runner chooses its own processes" in said[0] and "leave pytest-xdist's options out" in said[0]


def test_bad_pytest_arguments_are_bad_input_even_when_a_static_tier_rejects_first(
    repo: Repo, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The arguments are checked beside the static tiers: a patch T0 rejects meanwhile does not
    turn the operator's mistake into a verdict, and nothing is written."""
    base = repo.commit(PKG)
    cand = repo.commit({**FIX, "calc/ops.py": "def double(x:\n"})
    out = tmp_path / "e.json"
    code, doc = certify(repo, out, "--baseline", base, "--candidate", cand, "--pytest-arg=--no-such")
    assert (code, doc) == (2, None)
    assert "unrecognized arguments: --no-such" in capsys.readouterr().err
    code, doc = certify(repo, out, "--baseline", base, "--candidate", cand)
    assert code == 1 and doc is not None and doc["verdict"]["halted_at"] == "T0"  # the same patch, good arguments


def test_b_and_c_run_with_the_same_seed_and_a_new_seed_reruns_b(repo: Repo, tmp_path: pathlib.Path) -> None:
    log = tmp_path / "draws.log"
    draw = (
        "import os\nimport random\n\n\ndef test_draw():\n"
        f"    with open({str(log)!r}, 'a') as fh:\n"
        "        fh.write('%s %s\\n' % (random.random(), os.environ['PYTHONHASHSEED']))\n"
    )
    base = repo.commit({**PKG, "tests/test_draw.py": draw})
    cand = repo.commit(FIX)
    for seed in ("1", "2"):
        code, doc = certify(repo, tmp_path / f"{seed}.json", "--baseline", base, "--candidate", cand, "--seed", seed)
        assert code == 0 and doc is not None and doc["pinning"]["seed"] == int(seed)
    draws = [line.split() for line in log.read_text().splitlines()]
    # B's suite run, then C's (no path tells the test which side it is on), per climb
    assert [hashseed for _, hashseed in draws] == ["1", "1", "2", "2"]
    assert draws[0][0] == draws[1][0] != draws[2][0] == draws[3][0]  # one seed per climb, B and C alike


def test_a_module_that_hangs_on_import_is_stopped_at_t2(repo: Repo, tmp_path: pathlib.Path) -> None:
    base = repo.commit(PKG)
    cand = repo.commit({**FIX, "calc/ops.py": "while True:\n    pass\n" + FIX["calc/ops.py"]})
    code, doc = certify(repo, tmp_path / "e.json", "--baseline", base, "--candidate", cand, "--test-timeout", "2")
    assert code == 1 and doc is not None and doc["verdict"]["halted_at"] == "T2"
    t2 = next(t for t in doc["tiers"] if t["tier"] == "T2")
    assert "calc/ops.py: the import probe did not finish in 2s while importing it" in t2["note"]


def test_an_interrupted_baseline_command_names_its_held_receipt_and_the_whole_reconcile_command(
    repo: Repo, tmp_path: pathlib.Path
) -> None:
    import shlex
    import signal
    import sys

    repo.commit(PKG)
    started = tmp_path / "started"
    store = tmp_path / "store.sqlite3"
    cmd = [sys.executable, "-m", "runner.cli", "baseline", "--repo", str(repo.path), "--ref", "HEAD"]
    cmd += ["--command", "touch %s; sleep 30" % started, "--timeout", "60", "--store", str(store)]
    code, _, err = interrupt(cmd, started, signal.SIGINT)
    (line,) = err.strip().splitlines()
    assert code == 4 and line.endswith("[interrupted]") and "is held" in line, err
    hint = line.split("reconcile it with: ", 1)[1].rsplit(" [interrupted]", 1)[0]
    assert "--store %s" % store in hint
    assert main(shlex.split(hint.replace("--rerun|--abandon", "--abandon"))[1:]) == 0
